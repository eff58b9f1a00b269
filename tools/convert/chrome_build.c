/*
 * chrome_build.c - the Chrome JSON importer's second half: each thread's
 * B/E and X events nested into scopes (with the repairs of
 * docs/CHROME-TRACE.md), then every thread, frame, counter and GPU track
 * written to the capture in time order. The JSON walk that fills `imp` is
 * chrome_in.c's.
 */
#include "chrome_in.h"

#include <capture/cap_writer.h>

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* ---- nesting ----------------------------------------------------------- */

typedef struct ival {
    int64_t start, end;  /* end as given (or repaired for B/E) */
    uint64_t seq;        /* file order of the B or X event */
    uint64_t open_ord, close_ord; /* B/E only: order of the stack moves */
    uint32_t name;
    uint8_t be;          /* from a B/E pair */
} ival;

static int cmp_rec(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const char *nm(const imp *m, uint32_t id)
{
    const char *s = cvt_strtab_get(&m->names, id);
    return s ? s : "(unnamed)";
}

static double us(int64_t ns)
{
    return (double)ns / 1000.0;
}

typedef struct be_ctx {
    imp *m;
    const char *tname;
    ival *iv;            /* intervals of the thread being resolved */
    size_t niv, ivcap;
    size_t *stack;       /* indices into iv of open B events */
    size_t nstack, stcap;
    uint64_t ord;
} be_ctx;

static void be_close_top(be_ctx *c, int64_t ts)
{
    ival *v = &c->iv[c->stack[--c->nstack]];
    v->end = ts;
    v->close_ord = c->ord++;
}

/* Match one E event against the open B events (see the repairs in
 * docs/CHROME-TRACE.md): a nameless E or one naming the innermost scope
 * closes it; one naming a scope deeper in the stack closes every scope
 * above that one too; one naming no open scope is ignored. */
static void be_end(be_ctx *c, const rec *e)
{
    imp *m = c->m;
    if (!c->nstack) {
        cvt_warn(&m->d, W_E_UNMATCHED,
                 "thread '%s': E event '%s' at %.3f us has no open B event; "
                 "ignored", c->tname, e->name ? nm(m, e->name) : "",
                 us(e->ts));
        return;
    }
    if (!e->name || c->iv[c->stack[c->nstack - 1]].name == e->name) {
        be_close_top(c, e->ts);
        return;
    }
    size_t k = c->nstack;
    while (k > 0 && c->iv[c->stack[k - 1]].name != e->name)
        k--;
    if (k == 0) {
        cvt_warn(&m->d, W_E_UNMATCHED,
                 "thread '%s': E event '%s' at %.3f us matches no open scope "
                 "(innermost is '%s'); ignored", c->tname, nm(m, e->name),
                 us(e->ts), nm(m, c->iv[c->stack[c->nstack - 1]].name));
        return;
    }
    cvt_warn(&m->d, W_E_DEEPER,
             "thread '%s': E event '%s' at %.3f us ends a scope that is not "
             "the innermost; %zu scope(s) above it ('%s' innermost) closed "
             "at the same time", c->tname, nm(m, e->name), us(e->ts),
             c->nstack - k, nm(m, c->iv[c->stack[c->nstack - 1]].name));
    while (c->nstack >= k)
        be_close_top(c, e->ts);
}

/* Turn the thread's B/E records (sorted) into intervals in c->iv. */
static int resolve_be(be_ctx *c, thread *th)
{
    rec *r = th->r;
    size_t n = th->nr;
    for (size_t i = 0; i < n;) {
        if (r[i].ph == 'B') {
            if (cvt_grow((void **)&c->iv, &c->ivcap, c->niv + 1, sizeof *c->iv) ||
                cvt_grow((void **)&c->stack, &c->stcap, c->nstack + 1,
                         sizeof *c->stack))
                return -1;
            c->iv[c->niv] = (ival){r[i].ts, r[i].ts, r[i].seq, c->ord++, 0,
                                   r[i].name, 1};
            c->stack[c->nstack++] = c->niv++;
            i++;
            continue;
        }
        if (r[i].ph != 'E') {
            i++;
            continue;
        }
        /* a run of E events at one timestamp closes scopes in stack order,
         * each taking the E that names it if there is one */
        size_t j = i;
        while (j < n && r[j].ph == 'E' && r[j].ts == r[i].ts)
            j++;
        size_t left = j - i;
        rec *run = r + i; /* reordered in place */
        while (left) {
            size_t pick = 0;
            if (c->nstack) {
                uint32_t top = c->iv[c->stack[c->nstack - 1]].name;
                size_t named = left, nameless = left;
                for (size_t q = 0; q < left; q++) {
                    if (run[q].name == top && top) {
                        named = q;
                        break;
                    }
                    if (!run[q].name && nameless == left)
                        nameless = q;
                }
                pick = named < left ? named : nameless < left ? nameless : 0;
            }
            rec e = run[pick];
            memmove(run + pick, run + pick + 1, (left - pick - 1) * sizeof *run);
            left--;
            be_end(c, &e);
        }
        i = j;
    }
    if (c->nstack) {
        cvt_warn(&c->m->d, W_UNCLOSED,
                 "thread '%s': %zu B event(s) never ended ('%s' innermost); "
                 "closed at the thread's last timestamp %.3f us",
                 c->tname, c->nstack, nm(c->m, c->iv[c->stack[c->nstack - 1]].name),
                 us(th->last_ts));
        while (c->nstack)
            be_close_top(c, th->last_ts);
    }
    return 0;
}

static int cmp_x(const void *a, const void *b)
{
    const ival *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1; /* longer first */
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Nest the thread's intervals into th->nodes (pre-order, with depth).
 * Order: the B/E intervals stay in the order they were opened (their stack
 * order); the X intervals are sorted by (start, longer first, file order);
 * the two lists are merged by the same rule, B/E first on a full tie only
 * when it came first in the file. */
static int nest(be_ctx *c, thread *th)
{
    imp *m = c->m;
    size_t nb = c->niv;
    for (size_t i = 0; i < th->nr; i++) {
        const rec *r = &th->r[i];
        if (r->ph != 'X')
            continue;
        if (cvt_grow((void **)&c->iv, &c->ivcap, c->niv + 1, sizeof *c->iv))
            return -1;
        int64_t end = r->dur != DUR_UNFINISHED ? r->ts + r->dur
                      : th->last_ts > r->ts ? th->last_ts : r->ts;
        c->iv[c->niv++] = (ival){r->ts, end, r->seq, 0, 0, r->name, 0};
    }
    if (c->niv > nb) /* c->iv is NULL when the thread has no interval */
        cvt_sort(c->iv + nb, c->niv - nb, sizeof *c->iv, cmp_x);
    size_t *order = malloc((c->niv ? c->niv : 1) * sizeof *order);
    if (!order)
        return -1;
    for (size_t i = 0, a = 0, b = nb; i < c->niv; i++) {
        if (a < nb && (b >= c->niv || cmp_x(&c->iv[a], &c->iv[b]) <= 0))
            order[i] = a++;
        else
            order[i] = b++;
    }
    th->nodes = malloc((c->niv ? c->niv : 1) * sizeof *th->nodes);
    if (!th->nodes) {
        free(order);
        return -1;
    }
    /* the stack holds indices into iv; iv[].end is clipped in place */
    c->nstack = 0;
    if (cvt_grow((void **)&c->stack, &c->stcap, c->niv + 1, sizeof *c->stack))
        return -1;
    size_t out = 0;
    uint64_t deep = 0, clipped = 0;
    int64_t clipped_ns = 0;
    for (size_t oi = 0; oi < c->niv; oi++) {
        size_t i = order[oi];
        ival *v = &c->iv[i];
        while (c->nstack) {
            const ival *t = &c->iv[c->stack[c->nstack - 1]];
            if (v->start < t->end)
                break;
            if (v->start == t->end && v->be && t->be &&
                t->open_ord < v->open_ord && v->close_ord < t->close_ord)
                break; /* an empty B/E pair at the very end of its parent */
            c->nstack--;
        }
        if (c->nstack) {
            const ival *t = &c->iv[c->stack[c->nstack - 1]];
            if (v->end > t->end) {
                cvt_warn(&m->d, W_CLIP,
                         "thread '%s': '%s' [%.3f, %.3f] us overlaps the end "
                         "of its parent '%s' at %.3f us; clipped to end "
                         "there", c->tname, nm(m, v->name), us(v->start),
                         us(v->end), nm(m, t->name), us(t->end));
                clipped++;
                if (__builtin_add_overflow(clipped_ns, v->end - t->end,
                                           &clipped_ns))
                    clipped_ns = INT64_MAX;
                v->end = t->end;
            }
        }
        if (c->nstack >= CAP_MAX_DEPTH) {
            deep++;
            continue;
        }
        th->nodes[out++] = (node){v->start, v->end, v->name,
                                  (uint32_t)c->nstack};
        c->stack[c->nstack++] = i;
    }
    free(order);
    if (clipped)
        cvt_warn(&m->d, W_CLIPSUM,
                 "thread '%s': %llu overlapping scope(s) clipped, %.3f ms "
                 "of their time removed in all", c->tname,
                 (unsigned long long)clipped, (double)clipped_ns / 1e6);
    if (deep)
        cvt_warn(&m->d, W_DEPTH,
                 "thread '%s': %llu scope(s) nested deeper than %u levels "
                 "left out", c->tname, (unsigned long long)deep,
                 CAP_MAX_DEPTH);
    th->nnodes = out;
    return 0;
}

/* ---- thread names ------------------------------------------------------ */

/* "process/thread" from metadata; see docs/CHROME-TRACE.md. */
static char *display_name(const imp *m, const thread *th)
{
    const char *pn = m->pname[th->pid - 1];
    const char *tn = th->tname && th->tname[0] ? th->tname : NULL;
    if (pn && !pn[0])
        pn = NULL; /* an empty name is no name: the pid and tid are kept */
    size_t len = (pn ? strlen(pn) : strlen(th->pid_txt)) +
                 (tn ? strlen(tn) : strlen(th->tid_txt)) + 2;
    char *s = malloc(len);
    if (!s)
        return NULL;
    if (pn && tn)
        snprintf(s, len, "%s/%s", pn, tn);
    else if (tn)
        snprintf(s, len, "%s", tn);
    else
        snprintf(s, len, "%s/%s", pn ? pn : th->pid_txt, th->tid_txt);
    if (strlen(s) > CVT_NAME_MAX) {
        int cut;
        char *c = malloc(CVT_NAME_MAX + 1);
        if (!c) {
            free(s);
            return NULL;
        }
        cvt_name_clean(c, s, strlen(s), &cut);
        free(s);
        s = c;
    }
    return s;
}

/* ---- writing ----------------------------------------------------------- */

typedef struct cursor {  /* walks one thread's nodes as begin/end events */
    const thread *th;
    size_t next;         /* next node to begin */
    size_t *open;        /* indices of open nodes */
    size_t nopen, cap;
} cursor;

/* time and class of the cursor's next event; class 0 end, 4 begin */
static int cursor_peek(const cursor *c, int64_t *t, int *cls)
{
    const node *nd = c->th->nodes;
    if (c->nopen &&
        (c->next >= c->th->nnodes || nd[c->next].depth < c->nopen)) {
        *t = nd[c->open[c->nopen - 1]].end;
        *cls = 0;
        return 1;
    }
    if (c->next < c->th->nnodes) {
        *t = nd[c->next].begin;
        *cls = 4;
        return 1;
    }
    return 0;
}

typedef struct heap_ent {
    int64_t t;
    int cls;
    uint32_t idx;
} heap_ent;

static int heap_less(const heap_ent *a, const heap_ent *b)
{
    if (a->t != b->t)
        return a->t < b->t;
    if (a->cls != b->cls)
        return a->cls < b->cls;
    return a->idx < b->idx;
}

static void heap_push(heap_ent *h, size_t *n, heap_ent e)
{
    size_t i = (*n)++;
    while (i) {
        size_t p = (i - 1) / 2;
        if (!heap_less(&e, &h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

static heap_ent heap_pop(heap_ent *h, size_t *n)
{
    heap_ent top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, s = i;
        const heap_ent *best = &last;
        if (l < *n && heap_less(&h[l], best))
            s = l, best = &h[l];
        if (r < *n && heap_less(&h[r], best))
            s = r;
        if (s == i)
            break;
        h[i] = h[s];
        i = s;
    }
    if (*n)
        h[i] = last;
    return top;
}

static int cmp_counter(const void *a, const void *b)
{
    const counter_rec *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_frame(const void *a, const void *b)
{
    const frame_rec *x = a, *y = b;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

typedef struct gpu_batch {
    uint32_t track;      /* index in wctx.gpus */
    size_t first, n;     /* nodes of that GPU thread */
    uint64_t frame;
    int64_t t;
} gpu_batch;

typedef struct wctx {
    imp *m;
    cap_writer *w;
    const char *out;
    uint32_t *remap;     /* interned id -> capture id (0: unused) */
    uint32_t unnamed;    /* the capture id of nameless scopes */
    int64_t shift;       /* added to every time (0 unless some ts < 0) */
    thread *gpus[16];    /* --gpu-thread threads, track = index */
    size_t ngpu;
    gpu_batch *gb;
    size_t ngb;
    frame_rec *frames;   /* the frames to write */
    size_t nframes;
    cap_gpu_span *spans;
} wctx;

static int wfail(wctx *x, cap_result r, const char *what)
{
    if (r == CAP_E_IO || r == CAP_E_STOPPED)
        cvt_error(&x->m->d, "cannot write %s: %s (%s)", x->out,
                  strerror(cap_writer_errno(x->w) ? cap_writer_errno(x->w) : EIO),
                  what);
    else
        cvt_error(&x->m->d, "cannot write %s: %s (%s)", x->out,
                  cap_result_message(r), what);
    return CAP_E_IO;
}

static uint32_t out_name(const wctx *x, uint32_t id)
{
    return id ? x->remap[id] : x->unnamed;
}

static uint64_t tick(const wctx *x, int64_t ns)
{
    return (uint64_t)(ns + x->shift);
}

static int write_gpu_batch(wctx *x, const gpu_batch *b)
{
    const node *nd = x->gpus[b->track]->nodes + b->first;
    int32_t parent_at[CAP_MAX_DEPTH];
    for (size_t i = 0; i < b->n; i++) {
        uint32_t d = nd[i].depth;
        x->spans[i] = (cap_gpu_span){out_name(x, nd[i].name),
                                     d ? parent_at[d - 1] : -1,
                                     tick(x, nd[i].begin), tick(x, nd[i].end),
                                     1};
        parent_at[d] = (int32_t)i;
    }
    cap_result r = cap_writer_gpu_frame(x->w, b->track, b->frame, x->spans,
                                        b->n);
    return r == CAP_OK ? 0 : wfail(x, r, "GPU spans");
}

/* The index of the frame in progress at t (the last one begun), 0 when
 * there are no frames; *f is a cursor that only moves forward. */
static uint64_t frame_at(const wctx *x, size_t *f, int64_t t)
{
    if (!x->nframes)
        return 0;
    while (*f + 1 < x->nframes && x->frames[*f + 1].begin <= t)
        (*f)++;
    return x->frames[*f].index;
}

/* Split the GPU thread's nodes into batches: whole span trees, one CPU
 * frame per batch (the frame in progress when the tree's root began), at
 * most CAP_MAX_GPU_SPANS spans each. A single tree larger than that is cut,
 * and the spans after the cut lose their parents (with a warning). */
/* GPU batches of several tracks in the order they are written: by time,
 * then track, then position (each track's own order is kept). */
static int cmp_batch(const void *a, const void *b)
{
    const gpu_batch *p = a, *q = b;
    if (p->t != q->t)
        return p->t < q->t ? -1 : 1;
    if (p->track != q->track)
        return p->track < q->track ? -1 : 1;
    return p->first < q->first ? -1 : p->first > q->first;
}

static int plan_gpu(wctx *x, uint32_t track, size_t *cap)
{
    thread *g = x->gpus[track];
    size_t f = 0;
    for (size_t i = 0; i < g->nnodes;) {
        uint64_t frame = frame_at(x, &f, g->nodes[i].begin);
        size_t j = i;
        while (j < g->nnodes) {
            size_t e = j + 1; /* the tree rooted at j is [j, e) */
            while (e < g->nnodes && g->nodes[e].depth > 0)
                e++;
            if (j > i) {
                size_t f2 = f;
                if (frame_at(x, &f2, g->nodes[j].begin) != frame ||
                    e - i > CAP_MAX_GPU_SPANS)
                    break;
            } else if (e - j > CAP_MAX_GPU_SPANS) {
                cvt_warn(&x->m->d, W_GPU,
                         "GPU thread: a span tree holds more than %u spans; "
                         "it is cut and the spans after the cut lose their "
                         "parents", CAP_MAX_GPU_SPANS);
                e = j + CAP_MAX_GPU_SPANS;
                uint32_t base = g->nodes[e].depth;
                for (size_t k = e; k < g->nnodes && g->nodes[k].depth > 0; k++) {
                    if (g->nodes[k].depth < base)
                        base = g->nodes[k].depth;
                    g->nodes[k].depth -= base;
                }
                j = e;
                break;
            }
            j = e;
        }
        /* written once its last span and its CPU frame have ended, as a
         * live producer would */
        int64_t t = g->nodes[i].begin;
        for (size_t k = i; k < j; k++)
            if (g->nodes[k].end > t)
                t = g->nodes[k].end;
        if (x->nframes && x->frames[f].index == frame && x->frames[f].end > t)
            t = x->frames[f].end;
        if (cvt_grow((void **)&x->gb, cap, x->ngb + 1, sizeof *x->gb))
            return -1;
        x->gb[x->ngb++] = (gpu_batch){track, i, j - i, frame, t};
        i = j;
    }
    return 0;
}

static int write_all(wctx *x)
{
    imp *m = x->m;
    size_t nth = 0;
    for (size_t i = 0; i < m->nth; i++)
        nth += m->th[i].declared;
    cursor *cur = calloc(nth ? nth : 1, sizeof *cur);
    heap_ent *heap = malloc((nth ? nth : 1) * sizeof *heap);
    size_t nh = 0;
    int rc = 0;
    if (!cur || !heap) {
        rc = CAP_E_NOMEM;
        goto done;
    }
    for (size_t i = 0, k = 0; i < m->nth; i++) {
        if (!m->th[i].declared)
            continue;
        cur[k].th = &m->th[i];
        int64_t t;
        int cls;
        if (cursor_peek(&cur[k], &t, &cls))
            heap_push(heap, &nh, (heap_ent){t, cls, (uint32_t)k});
        k++;
    }
    size_t fi = 0, ci = 0, gi = 0;
    for (;;) {
        /* candidates: heap top, next frame (at its end, class 1), next GPU
         * batch (class 2), next counter (class 3) */
        heap_ent best = {0, 99, 0};
        int src = -1;
        if (nh)
            best = heap[0], src = 0;
        heap_ent c;
        if (fi < x->nframes) {
            c = (heap_ent){x->frames[fi].end, 1, 0};
            if (src < 0 || heap_less(&c, &best))
                best = c, src = 1;
        }
        if (gi < x->ngb) {
            c = (heap_ent){x->gb[gi].t, 2, 0};
            if (src < 0 || heap_less(&c, &best))
                best = c, src = 2;
        }
        if (ci < m->nctr) {
            c = (heap_ent){m->ctr[ci].ts, 3, 0};
            if (src < 0 || heap_less(&c, &best))
                best = c, src = 3;
        }
        if (src < 0)
            break;
        cap_result r = CAP_OK;
        if (src == 1) {
            const frame_rec *f = &x->frames[fi++];
            r = cap_writer_frame(x->w, f->index, tick(x, f->begin),
                                 tick(x, f->end));
            if (r != CAP_OK) {
                rc = wfail(x, r, "frame");
                goto done;
            }
        } else if (src == 2) {
            if ((rc = write_gpu_batch(x, &x->gb[gi++])) != 0)
                goto done;
        } else if (src == 3) {
            const counter_rec *k = &m->ctr[ci++];
            r = cap_writer_counter(x->w, out_name(x, k->name), tick(x, k->ts),
                                   k->value);
            if (r != CAP_OK) {
                rc = wfail(x, r, "counter");
                goto done;
            }
        } else {
            heap_ent e = heap_pop(heap, &nh);
            cursor *cu = &cur[e.idx];
            const node *nd = cu->th->nodes;
            uint32_t tid = cu->th->out_tid;
            if (e.cls == 0) {
                cu->nopen--;
                r = cap_writer_scope_end(x->w, tid, tick(x, e.t));
            } else {
                if (cvt_grow((void **)&cu->open, &cu->cap, cu->nopen + 1,
                             sizeof *cu->open)) {
                    rc = CAP_E_NOMEM;
                    goto done;
                }
                cu->open[cu->nopen++] = cu->next;
                r = cap_writer_scope_begin(x->w, tid,
                                           out_name(x, nd[cu->next].name),
                                           tick(x, e.t));
                cu->next++;
            }
            if (r != CAP_OK) {
                rc = wfail(x, r, "scope");
                goto done;
            }
            int64_t t;
            int cls;
            if (cursor_peek(cu, &t, &cls))
                heap_push(heap, &nh, (heap_ent){t, cls, e.idx});
        }
    }
done:
    if (cur)
        for (size_t i = 0; i < nth; i++)
            free(cur[i].open);
    free(cur);
    free(heap);
    return rc;
}

/* Choose the frames: --frame-scope NAME wins over libcapture.frame events. */
static int plan_frames(wctx *x)
{
    imp *m = x->m;
    const char *fs = m->o ? m->o->frame_scope : NULL;
    if (!fs) {
        cvt_sort(m->fr, m->nfr, sizeof *m->fr, cmp_frame);
        size_t k = 0;
        for (size_t i = 0; i < m->nfr; i++) {
            if (k && m->fr[i].index == m->fr[k - 1].index) {
                cvt_warn(&m->d, W_FRAME, "frame %llu given twice; the second "
                         "is ignored", (unsigned long long)m->fr[i].index);
                continue;
            }
            m->fr[k++] = m->fr[i];
        }
        x->frames = m->fr;
        x->nframes = k;
        return 0;
    }
    if (m->nfr)
        cvt_warn(&m->d, W_FRAME, "%zu libcapture.frame event(s) ignored: "
                 "--frame-scope gives the frames", m->nfr);
    /* which names are frames: NAME exactly, or every name the glob NAME
     * matches (numbered steps such as ProfilerStep#12) */
    int cut;
    size_t fl = cvt_name_clean(m->namebuf, fs, strlen(fs), &cut);
    uint32_t exact = cvt_strtab_find(&m->names, m->namebuf, fl);
    unsigned char *is_frame = calloc(m->names.n + 1, 1);
    if (!is_frame)
        return -1;
    size_t nmatch = 0;
    for (uint32_t id = 1; id <= m->names.n; id++)
        if (id == exact || fnmatch(fs, m->names.str[id - 1], 0) == 0)
            is_frame[id] = 1, nmatch++;
#define IS_FRAME(id) ((id) != 0 && is_frame[(id)])
    size_t best = SIZE_MAX, bestn = 0, total = 0;
    for (size_t i = 0; nmatch && i < m->nth; i++) {
        const thread *th = &m->th[i];
        if (!th->declared)
            continue;
        size_t n = 0;
        long inside = -1;
        for (size_t k = 0; k < th->nnodes; k++) {
            if (inside >= 0 && th->nodes[k].depth <= (uint32_t)inside)
                inside = -1;
            if (inside < 0 && IS_FRAME(th->nodes[k].name)) {
                n++;
                inside = th->nodes[k].depth;
            }
        }
        total += n;
        if (n > bestn)
            best = i, bestn = n;
    }
    if (!bestn) {
        free(is_frame);
        cvt_warn(&m->d, W_FRAME, "no scope named '%s' on a CPU thread; the "
                 "capture has no frames", fs);
        x->nframes = 0;
        return 0;
    }
    const thread *th = &m->th[best];
    free(m->fr);
    m->fr = malloc(bestn * sizeof *m->fr);
    if (!m->fr) {
        free(is_frame);
        return -1;
    }
    m->frcap = bestn;
    size_t n = 0;
    long inside = -1;
    for (size_t k = 0; k < th->nnodes; k++) {
        const node *nd = &th->nodes[k];
        if (inside >= 0 && nd->depth <= (uint32_t)inside)
            inside = -1;
        if (inside < 0 && IS_FRAME(nd->name)) {
            m->fr[n] = (frame_rec){nd->begin, nd->end, n, 0};
            n++;
            inside = nd->depth;
        }
    }
#undef IS_FRAME
    free(is_frame);
    m->nfr = n;
    x->frames = m->fr;
    x->nframes = n;
    if (total > bestn) {
        char *dn = display_name(m, th);
        cvt_warn(&m->d, W_FRAME, "'%s' occurs on several threads: frames "
                 "taken from thread '%s' (%zu occurrences), %zu elsewhere "
                 "ignored", fs, dn ? dn : "?", bestn, total - bestn);
        free(dn);
    }
    return 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Which threads become what: the --gpu-thread ones GPU tracks (in
 * x->gpus), the others with scopes capture threads (declared, out_tid).
 * dn: the threads' display names. Returns 0, or an error after a line. */
static int assign_threads(wctx *x, char **dn)
{
    imp *m = x->m;
    size_t ngname = m->o ? m->o->n_gpu_threads : 0;
    for (size_t g = 0; g < ngname && g < sizeof x->gpus / sizeof *x->gpus;
         g++) {
        const char *gname = m->o->gpu_threads[g];
        thread *found = NULL;
        for (size_t i = 0; i < m->nth && !found; i++)
            if (strcmp(dn[i], gname) == 0 ||
                (m->th[i].tname && strcmp(m->th[i].tname, gname) == 0))
                found = &m->th[i];
        if (!found) {
            cvt_error(&m->d, "no thread named '%s' for --gpu-thread", gname);
            return CAP_E_MISUSE;
        }
        if (found->gpu_track >= 0) {
            cvt_error(&m->d, "--gpu-thread '%s' names the same thread as "
                      "an earlier --gpu-thread", gname);
            return CAP_E_MISUSE;
        }
        found->gpu_track = (int)x->ngpu;
        x->gpus[x->ngpu++] = found;
    }
    uint32_t ntid = 0;
    for (size_t i = 0; i < m->nth; i++) {
        thread *th = &m->th[i];
        if (th->gpu_track >= 0 || (th->frame_events && !th->nr))
            continue;
        if (ntid >= CAP_MAX_THREADS) {
            cvt_error(&m->d, "more than %u threads: the capture format "
                      "cannot hold them", CAP_MAX_THREADS);
            return CAP_E_LIMIT;
        }
        th->declared = 1;
        th->out_tid = ntid++;
    }
    return 0;
}

/* Names: dense ids for the names in use (x->remap), one more for
 * nameless scopes (x->unnamed); and the shift that makes the earliest time
 * 0 (x->shift). Returns 0 or CAP_E_NOMEM. */
static int remap_names(wctx *x)
{
    imp *m = x->m;
    x->remap = calloc(m->names.n + 1, sizeof *x->remap);
    if (!x->remap)
        return CAP_E_NOMEM;
    int64_t tmin = 0;
    int any_unnamed = 0;
    for (size_t i = 0; i < m->nth; i++) {
        const thread *th = &m->th[i];
        if (!th->declared && th->gpu_track < 0)
            continue;
        for (size_t k = 0; k < th->nnodes; k++) {
            if (th->nodes[k].name)
                x->remap[th->nodes[k].name] = 1;
            else
                any_unnamed = 1;
            if (th->nodes[k].begin < tmin)
                tmin = th->nodes[k].begin;
        }
    }
    for (size_t i = 0; i < m->nctr; i++) {
        x->remap[m->ctr[i].name] = 1;
        if (m->ctr[i].ts < tmin)
            tmin = m->ctr[i].ts;
    }
    for (size_t i = 0; i < x->nframes; i++)
        if (x->frames[i].begin < tmin)
            tmin = x->frames[i].begin;
    if (tmin < 0) {
        x->shift = -tmin;
        cvt_warn(&m->d, W_NEGATIVE, "timestamps before 0 us: every time is "
                 "shifted by %.3f us so that the earliest is 0", us(x->shift));
    }
    uint32_t nid = 0;
    for (size_t i = 1; i <= m->names.n; i++)
        if (x->remap[i])
            x->remap[i] = ++nid;
    x->unnamed = any_unnamed ? nid + 1 : 0;
    return 0;
}

/* Open the writer on out (x->w) and declare the names and threads.
 * Returns 0, or an error after a line. */
static int open_writer(wctx *x, const char *in, const char *out, char **dn)
{
    imp *m = x->m;
    cap_meta_kv meta[4];
    size_t nmeta = 0;
    meta[nmeta++] = (cap_meta_kv){"source", "chrome-trace"};
    meta[nmeta++] = (cap_meta_kv){"source_file", base_name(in)};
    if (m->dtu)
        meta[nmeta++] = (cap_meta_kv){"chrome.displayTimeUnit", m->dtu};
    cap_writer_options wo = {0};
    wo.meta = meta;
    wo.meta_count = nmeta;
    wo.clock_source = "imported";
    wo.tick_period_ns = 1.0;
    wo.format_major = m->o ? m->o->format_major : 0;
    wo.format_minor = wo.format_major == 1; /* 1.1: name flags */
    wo.no_frame_list = m->o ? m->o->no_frame_list : 0;
    cap_result r = cap_writer_open_path(&x->w, out, &wo);
    if (r != CAP_OK) {
        cvt_error(&m->d, "cannot write %s: %s", out,
                  r == CAP_E_IO ? strerror(errno) : cap_result_message(r));
        x->w = NULL;
        return CAP_E_IO;
    }
    for (size_t i = 1; i <= m->names.n; i++) {
        if (!x->remap[i])
            continue;
        if ((r = cap_writer_name(x->w, x->remap[i], m->names.str[i - 1], NULL,
                                 0)) != CAP_OK)
            return wfail(x, r, "names");
    }
    for (size_t i = 0; i < m->nth; i++) {
        if (!m->th[i].declared)
            continue;
        if ((r = cap_writer_thread(x->w, m->th[i].out_tid, dn[i])) != CAP_OK)
            return wfail(x, r, "threads");
    }
    return 0;
}

/* Declare the GPU tracks, repair their spans (zero length: 1 ns) and plan
 * their batches. Returns 0, or an error after a line (CAP_E_NOMEM:
 * none). */
static int gpu_tracks(wctx *x, char **dn)
{
    imp *m = x->m;
    if (x->ngpu) {
        x->spans = malloc(CAP_MAX_GPU_SPANS * sizeof *x->spans);
        if (!x->spans)
            return CAP_E_NOMEM;
    }
    size_t gbcap = 0;
    for (uint32_t g = 0; g < x->ngpu; g++) {
        thread *gt = x->gpus[g];
        size_t gi = (size_t)(gt - m->th);
        cap_result r;
        if ((r = cap_writer_gpu_track(x->w, g, dn[gi], 1.0)) != CAP_OK ||
            (r = cap_writer_gpu_calibration(x->w, g, 0, 0, 0)) != CAP_OK)
            return wfail(x, r, "GPU track");
        size_t zero = 0, longer = 0;
        for (size_t k = 0; k < gt->nnodes; k++) {
            node *nd = &gt->nodes[k];
            if (nd->end <= nd->begin) {
                /* a kernel shorter than the trace's resolution: the
                 * format's shortest measured span is one tick (1 ns) */
                nd->end = nd->begin + 1;
                zero++;
            } else if (nd->end - nd->begin > 1000000000) {
                longer++;
            }
        }
        if (zero)
            cvt_warn(&m->d, W_GPU, "GPU thread '%s': %zu span(s) of zero "
                     "length (shorter than the trace's resolution) are "
                     "recorded as 1 ns", dn[gi], zero);
        if (longer)
            cvt_warn(&m->d, W_GPU, "GPU thread '%s': %zu span(s) longer "
                     "than 1 s are dropped by the capture format (counted "
                     "as invalid)", dn[gi], longer);
        if (plan_gpu(x, g, &gbcap) != 0)
            return CAP_E_NOMEM;
    }
    return 0;
}

int chrome_write_capture(imp *m, const char *in, const char *out)
{
    wctx x = {0};
    x.m = m;
    x.out = out;
    int rc = 0;
    char **dn = calloc(m->nth ? m->nth : 1, sizeof *dn);
    if (!dn)
        return CAP_E_NOMEM;
    for (size_t i = 0; i < m->nth && rc == 0; i++) {
        m->th[i].gpu_track = -1;
        dn[i] = display_name(m, &m->th[i]);
        if (!dn[i])
            rc = CAP_E_NOMEM;
    }
    if (rc == 0)
        rc = assign_threads(&x, dn);
    if (rc == 0 && plan_frames(&x) != 0)
        rc = CAP_E_NOMEM;
    if (rc == 0)
        rc = remap_names(&x);
    if (rc == 0)
        rc = open_writer(&x, in, out, dn);
    if (rc == 0)
        rc = gpu_tracks(&x, dn);
    if (rc == 0) {
        if (x.ngpu > 1)
            cvt_sort(x.gb, x.ngb, sizeof *x.gb, cmp_batch);
        cvt_sort(m->ctr, m->nctr, sizeof *m->ctr, cmp_counter);
        rc = write_all(&x);
    }
    if (rc == 0) {
        cap_result r = cap_writer_close(x.w);
        x.w = NULL;
        if (r != CAP_OK) {
            cvt_error(&m->d, "cannot write %s: %s", out,
                      r == CAP_E_IO ? "write failed" : cap_result_message(r));
            rc = CAP_E_IO;
        }
    }
    if (x.w)
        cap_writer_abandon(x.w);
    for (size_t i = 0; i < m->nth; i++)
        free(dn[i]);
    free(dn);
    free(x.remap);
    free(x.gb);
    free(x.spans);
    return rc;
}

int chrome_build_threads(imp *m)
{
    be_ctx c = {0};
    c.m = m;
    int rc = 0;
    for (size_t i = 0; i < m->nth && rc == 0; i++) {
        thread *th = &m->th[i];
        char *dn = display_name(m, th);
        if (!dn) {
            rc = CAP_E_NOMEM;
            break;
        }
        c.tname = dn;
        c.niv = c.nstack = 0;
        c.ord = 0;
        /* B/E first (X are kept in th->r and picked up by nest) */
        cvt_sort(th->r, th->nr, sizeof *th->r, cmp_rec);
        int r = resolve_be(&c, th);
        if (!r)
            r = nest(&c, th);
        free(dn);
        free(th->r);
        th->r = NULL;
        if (r)
            rc = CAP_E_NOMEM;
    }
    free(c.iv);
    free(c.stack);
    return rc;
}
