/*
 * folded_out.c - capture -> folded stacks (cvt_cap_to_folded).
 *
 * One line per distinct stack, "frame;frame;...;leaf WEIGHT", sorted by the
 * stack's bytes, for flamegraph.pl, inferno and speedscope:
 *   - the first frame is the thread's name (a GPU span's: its track's);
 *   - WEIGHT is, with "self-us" (the default), the stack's self time summed
 *     over every occurrence, in microseconds rounded to the nearest integer
 *     (half away from zero), lines that round to 0 left out; with "calls",
 *     the number of occurrences;
 *   - ';' in a name becomes ':', and line breaks become spaces, so that a
 *     name stays one frame; a name id without text is written
 *     "[unnamed #ID]".
 * GPU spans that were measured are included (their self time excludes the
 * union of their measured children, as the reader computes it).
 */
#include "cvt.h"
#include "cvt_util.h"

#include <capture/cap_reader.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { W_DAMAGE, W_UNNAMED };

/* A name's frame text (put's rewriting done), made at its first scope:
 * the text of a name id never changes (its first definition wins). */
typedef struct frame_text {
    char *s; /* NULL: not made yet */
    size_t n;
} frame_text;

typedef struct folded {
    cvt_diag d;
    cap_reader *r;
    cvt_strtab stacks;   /* stack text -> id */
    int64_t *w;          /* weight by id - 1 */
    size_t wcap;
    char *buf;           /* the stack being built */
    size_t len, cap;
    uint64_t unnamed;
    frame_text *names;   /* by name id */
    size_t names_cap;
} folded;

static int sep(folded *f)
{
    if (cvt_grow((void **)&f->buf, &f->cap, f->len + 2, 1))
        return -1;
    f->buf[f->len++] = ';';
    f->buf[f->len] = '\0';
    return 0;
}

/* Append a frame: ';' becomes ':' and line breaks spaces inside it. */
static int put(folded *f, const char *s)
{
    size_t n = strlen(s);
    if (cvt_grow((void **)&f->buf, &f->cap, f->len + n + 2, 1))
        return -1;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == ';')
            ch = ':';
        else if (ch == '\n' || ch == '\r')
            ch = ' ';
        f->buf[f->len++] = ch;
    }
    f->buf[f->len] = '\0';
    return 0;
}

static int put_name(folded *f, uint32_t id)
{
    const char *s = cap_reader_name(f->r, id);
    if (s) {
        if (id >= f->names_cap) {
            size_t old = f->names_cap;
            if (cvt_grow((void **)&f->names, &f->names_cap, (size_t)id + 1,
                         sizeof *f->names))
                return -1;
            memset(f->names + old, 0,
                   (f->names_cap - old) * sizeof *f->names);
        }
        frame_text *t = &f->names[id];
        if (!t->s) { /* put's text, kept */
            size_t at = f->len;
            if (put(f, s))
                return -1;
            t->n = f->len - at;
            if (!(t->s = malloc(t->n ? t->n : 1)))
                return -1;
            memcpy(t->s, f->buf + at, t->n);
            return 0;
        }
        if (cvt_grow((void **)&f->buf, &f->cap, f->len + t->n + 2, 1))
            return -1;
        memcpy(f->buf + f->len, t->s, t->n);
        f->len += t->n;
        f->buf[f->len] = '\0';
        return 0;
    }
    char tmp[40];
    snprintf(tmp, sizeof tmp, "[unnamed #%u]", id);
    f->unnamed++;
    return put(f, tmp);
}

static int add(folded *f, const char *first, const uint32_t *stack,
               uint32_t depth, uint32_t leaf, int64_t weight)
{
    f->len = 0;
    if (put(f, first))
        return -1;
    for (uint32_t i = 0; i < depth; i++)
        if (sep(f) || put_name(f, stack[i]))
            return -1;
    if (sep(f) || put_name(f, leaf))
        return -1;
    uint32_t id = cvt_strtab_intern(&f->stacks, f->buf, f->len);
    if (!id)
        return -1;
    if (id > f->wcap) {
        size_t old = f->wcap;
        if (cvt_grow((void **)&f->w, &f->wcap, id, sizeof *f->w))
            return -1;
        memset(f->w + old, 0, (f->wcap - old) * sizeof *f->w);
    }
    if (__builtin_add_overflow(f->w[id - 1], weight, &f->w[id - 1]))
        f->w[id - 1] = INT64_MAX; /* weights are >= 0: only upwards */
    return 0;
}

typedef struct line {
    const char *stack;
    int64_t weight;
} line;

static int cmp_line(const void *a, const void *b)
{
    return strcmp(((const line *)a)->stack, ((const line *)b)->stack);
}

cap_result cvt_cap_to_folded(const char *in, const char *out, const cvt_options *o)
{
    folded f = {0};
    f.d.out = o ? o->diag : NULL;
    f.d.file = in;
    int calls = o && o->weight && strcmp(o->weight, "calls") == 0;
    char detail[256] = "";
    cap_result res = cap_reader_open(&f.r, in, detail, sizeof detail);
    if (res != CAP_OK) {
        cvt_error(&f.d, "%s", detail[0] ? detail : cap_result_message(res));
        return res;
    }
    cap_result rc = CAP_OK;
    for (;;) {
        cap_event ev;
        res = cvt_next_event(&f.d, f.r, &ev, W_DAMAGE, "folding");
        if (res == CAP_DONE)
            break;
        if (res != CAP_OK) {
            rc = res;
            break;
        }
        char tmp[40];
        int r = 0;
        if (ev.kind == CAP_EV_SCOPE) {
            const cap_ev_scope *s = &ev.u.scope;
            const char *tn = cap_reader_thread_name(f.r, s->tid);
            if (!tn) {
                snprintf(tmp, sizeof tmp, "thread %u", s->tid);
                tn = tmp;
            }
            int64_t w = calls ? 1 : cap_self_ns(s->begin_ns, s->end_ns, s->children_ns);
            r = add(&f, tn, s->stack, s->depth, s->name, w);
        } else if (ev.kind == CAP_EV_GPU_SPAN && ev.u.gpu_span.measured) {
            const cap_ev_gpu_span *g = &ev.u.gpu_span;
            const char *tn = cap_reader_track_name(f.r, g->track);
            if (!tn) {
                snprintf(tmp, sizeof tmp, "GPU track %u", g->track);
                tn = tmp;
            }
            /* the reader's self time (cap_self_ns); a crafted span's is
             * never negative weight */
            r = add(&f, tn, g->stack, g->depth, g->name,
                    calls ? 1 : g->self_ns > 0 ? g->self_ns : 0);
        }
        if (r) {
            cvt_error(&f.d, "out of memory");
            rc = CAP_E_NOMEM;
            break;
        }
    }
    cap_reader_close(f.r);
    for (size_t i = 0; i < f.names_cap; i++)
        free(f.names[i].s);
    free(f.names);
    if (rc == CAP_OK) {
        line *order = malloc((f.stacks.n ? f.stacks.n : 1) * sizeof *order);
        int to_stdout = strcmp(out, "-") == 0;
        FILE *fp = NULL;
        if (!order) {
            cvt_error(&f.d, "out of memory");
            rc = CAP_E_NOMEM;
        } else if (!(fp = to_stdout ? stdout : fopen(out, "w"))) {
            f.d.file = out;
            cvt_error(&f.d, "cannot create: %s", strerror(errno));
            rc = CAP_E_IO;
        } else {
            for (size_t i = 0; i < f.stacks.n; i++)
                order[i] = (line){f.stacks.str[i], f.w[i]};
            cvt_sort(order, f.stacks.n, sizeof *order, cmp_line);
            for (size_t i = 0; i < f.stacks.n; i++) {
                int64_t w = order[i].weight;
                if (!calls)
                    w = w / 1000 + (w % 1000 >= 500); /* ns to us, w >= 0 */
                if (w == 0)
                    continue;
                fprintf(fp, "%s %lld\n", order[i].stack, (long long)w);
            }
            int werr = ferror(fp) != 0;
            if (to_stdout ? fflush(fp) != 0 : fclose(fp) != 0)
                werr = 1;
            if (werr) {
                f.d.file = out;
                cvt_error(&f.d, "write failed: %s", strerror(errno));
                rc = CAP_E_IO;
            }
        }
        free(order);
        if (f.unnamed)
            cvt_warn(&f.d, W_UNNAMED, "%llu scope(s) use name ids that the "
                     "capture never named (a damaged or foreign capture); "
                     "shown as [unnamed #ID]", (unsigned long long)f.unnamed);
    }
    cvt_warn_summary(&f.d);
    cvt_strtab_free(&f.stacks);
    free(f.w);
    free(f.buf);
    return rc;
}
