/* csv.c - RFC 4180 CSV through libcsv: renders report.h's results. */
#include <csv.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/render.h"

#define MS(ns) ((double)(ns) / 1e6)

void an_csv_field(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\r\n") || (s[0] == ' ') ||
        (s[0] && s[strlen(s) - 1] == ' '))
        csv_fwrite(f, s, strlen(s));
    else
        fputs(s, f);
}

static void num(FILE *f, double v)
{
    if (isnan(v))
        return; /* empty field */
    fprintf(f, "%.6f", v);
}

static void ratio(FILE *f, an_ratio r)
{
    if (r.state == AN_RATIO_VALUE)
        num(f, r.value);
}

static const char *kind_name(an_kind k)
{
    return k == AN_CPU ? "cpu" : "gpu";
}

void an_csv_ranking(FILE *out, const an_ranking *r)
{
    fputs("track,name,calls,total_ms,self_ms,self_ms_per_frame_mean,"
          "self_ms_per_frame_p95,share_pct,wait\n",
          out);
    for (size_t i = 0; i < r->n; i++) {
        const an_rank_row *row = &r->rows[i];
        const an_scope *s = row->scope;
        fprintf(out, "%s,", kind_name(s->kind));
        an_csv_field(out, s->name);
        fprintf(out, ",%llu,", (unsigned long long)s->calls);
        num(out, MS(s->total_ns));
        fputc(',', out);
        num(out, MS(s->self_ns));
        fputc(',', out);
        num(out, row->pf_mean);
        fputc(',', out);
        num(out, row->pf_p95);
        fputc(',', out);
        num(out, row->share_pct);
        fputs(s->is_wait ? ",1\n" : ",0\n", out);
    }
}

void an_csv_tree(FILE *out, const an_tree *t)
{
    fputs("path,depth,track,calls,total_ms,self_ms,share_pct,wait\n", out);
    for (size_t i = 0; i < t->n; i++) {
        const an_tree_row *r = &t->rows[i];
        if (r->depth < 0)
            continue;
        an_csv_field(out, t->paths + r->path_off);
        fprintf(out, ",%d,%s,%llu,", r->depth, kind_name(r->node->kind),
                (unsigned long long)r->node->calls);
        num(out, MS(r->node->total_ns));
        fputc(',', out);
        num(out, MS(r->node->self_ns));
        fputc(',', out);
        num(out, r->share_pct);
        fputs(r->node->is_wait ? ",1\n" : ",0\n", out);
    }
}

static void summary3(FILE *out, const an_summary *s)
{
    num(out, s->mean);
    fputc(',', out);
    num(out, s->median);
    fputc(',', out);
    num(out, s->p95);
    fputc('\n', out);
}

void an_csv_split(FILE *out, const an_split *s)
{
    static const char *pop_name[2] = {"fast", "slow"};
    fputs("population,kind,track,name,frames,mean_ms,median_ms,p95_ms\n", out);
    if (!s->quarter)
        return;
    for (int p = 0; p < 2; p++) {
        fprintf(out, "%s,frame,,(frame),%zu,", pop_name[p], s->quarter);
        summary3(out, &s->frame[p]);
        fprintf(out, "%s,frame_gpu_ratio,gpu,(frame/gpu),%zu,", pop_name[p],
                s->ratio[p].n);
        summary3(out, &s->ratio[p]);
        for (size_t k = 0; k < s->nscopes; k++) {
            const an_split_scope *x = &s->scopes[k];
            fprintf(out, "%s,scope,%s,", pop_name[p],
                    kind_name(x->scope->kind));
            an_csv_field(out, x->scope->name);
            fprintf(out, ",%zu,", s->quarter);
            summary3(out, &x->pop[p]);
        }
    }
}

void an_csv_over_time(FILE *out, const an_over_time *ot)
{
    fputs("bin,start_s,end_s,kind,track,name,frames,median_ms,p95_ms,mean,"
          "growth,groups_by,light_frames,light_median_ms,heavy_frames,"
          "heavy_median_ms\n",
          out);
    for (int b = 0; b < ot->nbins; b++) {
        const an_ot_bin *B = &ot->bins[b];
        fprintf(out, "%d,%.6f,%.6f,frame,,(frame),%zu,", b, B->start_s,
                B->end_s, B->frames);
        num(out, B->level);
        fputc(',', out);
        num(out, B->frame.p95);
        fputc(',', out);
        num(out, B->frame.mean);
        fputc(',', out);
        ratio(out, B->growth);
        if (ot->groups == 2) {
            fprintf(out, ",%s,%zu,", ot->group_by_work ? "work" : "frame",
                    B->group_frames[0]);
            num(out, B->group_median[0]);
            fprintf(out, ",%zu,", B->group_frames[1]);
            num(out, B->group_median[1]);
            fputc('\n', out);
        } else
            fputs(",,,,,\n", out);
        for (size_t j = 0; j < ot->nscopes; j++) {
            const an_ot_scope *S = &ot->scopes[j];
            fprintf(out, "%d,%.6f,%.6f,scope,%s,", b, B->start_s, B->end_s,
                    kind_name(S->scope->kind));
            an_csv_field(out, S->scope->name);
            fprintf(out, ",%zu,", B->frames);
            num(out, S->median[b]);
            fputc(',', out);
            num(out, S->p95[b]);
            fputs(",,", out);
            /* growth of this bin over the reference */
            ratio(out, an_ratio_of(S->median[b], S->median[ot->ref],
                                   AN_OT_ZERO_MS));
            fputs(",,,,,\n", out);
        }
        for (size_t c = 0; c < ot->ncounters; c++) {
            const an_ot_counter *C = &ot->counters[c];
            fprintf(out, "%d,%.6f,%.6f,counter,,", b, B->start_s, B->end_s);
            an_csv_field(out, C->name);
            fprintf(out, ",%zu,,,", C->samples[b]);
            num(out, C->mean[b]);
            fputc(',', out);
            ratio(out, an_ratio_of(C->mean[b], C->mean[ot->ref], 0));
            fputs(",,,,,\n", out);
        }
    }
}

/* --frames: rows built in a buffer of their own, written 64 KiB at a
 * time (a capture of 10 M scopes lists about 9 M rows); each field has
 * the bytes the stream writers above give it. */
typedef struct frames_out {
    FILE *out;
    const an_capture *m;
    const an_frame_counters *fc;
    int64_t t0;
    char pre[160];          /* the current frame's first four fields */
    size_t pre_n;
    size_t pre_frame;       /* the frame pre is for; SIZE_MAX: none */
    char **name;            /* per row: ",cpu,NAME," quoted as
                               an_csv_field quotes; NULL until used */
    size_t *name_n;
    int nomem;
    size_t n;
    char buf[1 << 16];
} frames_out;

static void fo_flush(frames_out *o)
{
    if (o->n)
        fwrite(o->buf, 1, o->n, o->out);
    o->n = 0;
}

static void fo_put(frames_out *o, const char *s, size_t n)
{
    if (o->n + n > sizeof o->buf) {
        fo_flush(o);
        if (n > sizeof o->buf) {
            fwrite(s, 1, n, o->out);
            return;
        }
    }
    memcpy(o->buf + o->n, s, n);
    o->n += n;
}

/* A --frames row's first four fields (frame, start_s, frame_ms, gpu_ms),
 * as frame_prefix prints them, into o->pre. */
static void fo_make_prefix(frames_out *o, size_t fi)
{
    const an_frame *fr = &o->m->frames[fi];
    int k = snprintf(o->pre, sizeof o->pre, "%llu,%.6f,",
                     (unsigned long long)an_frame_index(o->m, fi),
                     an_elapsed_ns(o->t0, fr->begin_ns) / 1e9);
    size_t n = k > 0 && (size_t)k < sizeof o->pre ? (size_t)k : 0;
    double ms = MS(an_frame_ns(fr));
    k = isnan(ms) ? 0 : snprintf(o->pre + n, sizeof o->pre - n, "%.6f", ms);
    n += k > 0 && (size_t)k < sizeof o->pre - n ? (size_t)k : 0;
    if (n < sizeof o->pre)
        o->pre[n++] = ',';
    if (an_frame_has_gpu(o->m, fi)) {
        k = snprintf(o->pre + n, sizeof o->pre - n, "%.6f",
                     MS(an_frame_gpu_ns(o->m, fi)));
        n += k > 0 && (size_t)k < sizeof o->pre - n ? (size_t)k : 0;
    }
    o->pre_n = n;
    o->pre_frame = fi;
}

static void fo_prefix(frames_out *o, size_t fi)
{
    if (o->pre_frame != fi)
        fo_make_prefix(o, fi);
    fo_put(o, o->pre, o->pre_n);
}

/* Bytes past a row's name that fo_value may copy with it (the names are
 * allocated that much longer), and that it keeps free in buf. */
#define FO_PAD 64

/* ",cpu,NAME," for row r, made once. */
static int fo_name(frames_out *o, size_t r)
{
    if (o->name[r])
        return 0;
    const an_scope *sc = &o->m->scopes[r];
    char *p = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&p, &n);
    if (!f)
        return -1;
    fprintf(f, ",%s,", kind_name(sc->kind));
    an_csv_field(f, sc->name);
    fputc(',', f);
    if (fclose(f) != 0) {
        free(p);
        return -1;
    }
    char *q = realloc(p, n + FO_PAD); /* fo_value copies FO_PAD at once */
    if (!q) {
        free(p);
        return -1;
    }
    memset(q + n, 0, FO_PAD);
    o->name[r] = q;
    o->name_n[r] = n;
    return 0;
}

/* n bytes from src to dst, where FO_PAD bytes may be read from src and
 * written to dst whatever n (a fixed-size copy for the usual short
 * fields, not a call). */
static inline void fo_copy(char *dst, const char *src, size_t n)
{
    if (n <= 32)
        memcpy(dst, src, 32);
    else if (n <= FO_PAD)
        memcpy(dst, src, FO_PAD);
    else
        memcpy(dst, src, n);
}

static const char fo_digits2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "6869707172737475767778798081828384858687888990919293949596979899";

static void fo_value(void *ctx, size_t fi, const an_scope *sc, int64_t v)
{
    frames_out *o = ctx;
    size_t r = (size_t)(sc - o->m->scopes);
    if (fo_name(o, r) != 0) {
        o->nomem = 1;
        return;
    }
    if (o->pre_frame != fi)
        fo_make_prefix(o, fi);
    size_t nn = o->name_n[r];
    /* num(MS(v))'s bytes without printf for the usual sizes: below 2^52
       ns, v / 1e6 as a double lies within half a unit of the 6th decimal
       of v / 10^6 exactly, so "%.6f" prints v's digits */
    if (v <= -(INT64_C(1) << 52) || v >= (INT64_C(1) << 52) ||
        o->pre_n > sizeof o->pre - FO_PAD) {
        fo_put(o, o->pre, o->pre_n);
        fo_put(o, o->name[r], nn);
        char b[40];
        int k = snprintf(b, sizeof b - 1, "%.6f", MS(v));
        if (k > 0 && (size_t)k < sizeof b - 1) {
            b[k] = '\n';
            fo_put(o, b, (size_t)k + 1);
        }
        return;
    }
    /* the row whole in buf: prefix, name, at most 24 bytes of number
       ("-" 10 digits "." 6 digits "\n"), and FO_PAD for the copies */
    int whole = 1;
    if (o->n + o->pre_n + nn + 24 + FO_PAD > sizeof o->buf) {
        fo_flush(o);
        if (o->pre_n + nn + 24 + FO_PAD > sizeof o->buf) { /* a long name */
            fo_put(o, o->pre, o->pre_n);
            fo_put(o, o->name[r], nn);
            fo_flush(o);
            whole = 0;
        }
    }
    char *d = o->buf + o->n;
    if (whole) {
        fo_copy(d, o->pre, o->pre_n);
        d += o->pre_n;
        fo_copy(d, o->name[r], nn);
        d += nn;
    }
    /* the digits straight into buf, from the end (built elsewhere and
       copied, the copy's load waited on the digits' stores: 44 % of this
       function's time) */
    uint64_t a = v < 0 ? (uint64_t)-v : (uint64_t)v;
    uint64_t ip = a / 1000000;
    uint32_t fr = (uint32_t)(a - ip * 1000000);
    size_t nd = 1;
    for (uint64_t x = ip; x >= 10; x /= 10)
        nd++;
    size_t k = (v < 0) + nd + 8; /* "." 6 digits "\n": at most 19 */
    char *p = d + k;
    *--p = '\n';
    for (int i = 0; i < 3; i++, fr /= 100) {
        p -= 2;
        memcpy(p, fo_digits2 + 2 * (fr % 100), 2);
    }
    *--p = '.';
    while (ip >= 100) {
        p -= 2;
        memcpy(p, fo_digits2 + 2 * (ip % 100), 2);
        ip /= 100;
    }
    if (ip >= 10) {
        p -= 2;
        memcpy(p, fo_digits2 + 2 * ip, 2);
    } else {
        *--p = (char)('0' + ip);
    }
    if (v < 0)
        *--p = '-';
    o->n = (size_t)(d - o->buf) + k;
}

/* The counters: the frame's value, in the counter's own unit */
static void fo_frame_end(void *ctx, size_t fi)
{
    frames_out *o = ctx;
    const an_frame_counters *fc = o->fc;
    for (size_t k = 0; fc && k < fc->n; k++) {
        const an_frame_counter *c = &fc->c[k];
        if (c->state[fi] == AN_FC_NONE)
            continue;
        fo_flush(o);
        fo_prefix(o, fi);
        fo_flush(o);
        fputs(c->state[fi] == AN_FC_CARRIED ? ",counter-carried,"
                                            : ",counter,",
              o->out);
        an_csv_field(o->out, c->name);
        fputc(',', o->out);
        num(o->out, c->value[fi]);
        fputc('\n', o->out);
    }
}

cap_result an_csv_frames(FILE *out, const an_capture *m, const an_frames *f,
                         const an_frame_counters *fc)
{
    fputs("frame,start_s,frame_ms,gpu_ms,track,name,self_ms\n", out);
    frames_out *o = calloc(1, sizeof *o);
    size_t ns = m->nscopes ? m->nscopes : 1;
    if (!o || !(o->name = calloc(ns, sizeof *o->name)) ||
        !(o->name_n = calloc(ns, sizeof *o->name_n))) {
        if (o)
            free(o->name);
        free(o);
        return CAP_E_NOMEM;
    }
    o->out = out;
    o->m = m;
    o->fc = fc;
    o->t0 = m->nframes ? m->frames[0].begin_ns : 0;
    o->pre_frame = SIZE_MAX;
    an_frames_sink sink = {fo_value, fo_frame_end, o};
    cap_result rc = an_frames_walk(m, f, &sink);
    fo_flush(o);
    if (rc == CAP_OK && o->nomem)
        rc = CAP_E_NOMEM;
    for (size_t r = 0; r < m->nscopes; r++)
        free(o->name[r]);
    free(o->name);
    free(o->name_n);
    free(o);
    return rc;
}
