/* split.c - the fastest vs the slowest quarter of frames (report.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define MS(ns) ((double)(ns) / 1e6)

const double an_split_hist_edges[AN_SPLIT_HIST_BINS] = {
    0, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 3.0};

typedef struct ord {
    size_t pos;
    double key;
} ord;

static int ord_cmp(const void *a, const void *b)
{
    const ord *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static size_t hist_bin(double r)
{
    size_t b = 0;
    while (b + 1 < AN_SPLIT_HIST_BINS && r >= an_split_hist_edges[b + 1])
        b++;
    return b;
}

void an_split_free(an_split *s)
{
    if (!s)
        return;
    free(s->pop_frames[0]);
    free(s->pop_frames[1]);
    free(s->scopes);
    memset(s, 0, sizeof *s);
}

/* Both populations' summaries of every scope row, from a summarised
 * model: *out gets 2 x nscopes (fast, slow), owned by the caller. */
static cap_result approx_pops(const an_capture *m, const an_split *sp,
                              an_summary **out)
{
    size_t n = m->nframes, ns = m->nscopes;
    /* the load summarised the same populations already (split_hint) */
    int same = m->pop_of && !sp->by && !sp->by_work;
    for (int p = 0; p < 2 && same; p++)
        for (size_t i = 0; i < sp->quarter && same; i++)
            same = m->pop_of[sp->pop_frames[p][i]] == p;
    if (same) {
        *out = malloc((ns ? ns : 1) * 2 * sizeof **out);
        if (!*out)
            return CAP_E_NOMEM;
        for (size_t s = 0; s < ns; s++)
            for (int p = 0; p < 2; p++) {
                const an_hist *h = &m->scopes[s].pf_pop[p];
                size_t q = sp->quarter;
                (*out)[2 * s + p] = (an_summary){
                    q, MS(h->sum / (double)q), MS(an_hist_quantile(h, q, 0.5)),
                    MS(an_hist_quantile(h, q, 0.95))};
            }
        return CAP_OK;
    }
    uint32_t *group = malloc(n * sizeof *group);
    size_t *rows = malloc((ns ? ns : 1) * sizeof *rows);
    *out = malloc((ns ? ns : 1) * 2 * sizeof **out);
    cap_result rc = CAP_E_NOMEM;
    if (group && rows && *out) {
        for (size_t i = 0; i < n; i++)
            group[i] = UINT32_MAX;
        for (int p = 0; p < 2; p++)
            for (size_t i = 0; i < sp->quarter; i++)
                group[sp->pop_frames[p][i]] = (uint32_t)p;
        for (size_t s = 0; s < ns; s++)
            rows[s] = s;
        rc = an_series_summaries(m, group, 2, rows, ns, *out);
    }
    free(group);
    free(rows);
    if (rc != CAP_OK) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

/* The CPU work of every frame in ms (its order picks the populations):
 * the load's sums when the model is summarised, else the sum of every CPU
 * row that is not a wait, in row order as the load sums them. 0, or -1
 * when out of memory. */
static int work_per_frame(const an_capture *m, double *work)
{
    size_t n = m->nframes;
    if (m->approx) { /* ot_sums: an_split_compute checked */
        for (size_t i = 0; i < n; i++)
            work[i] = m->ot_cpu_ms ? m->ot_cpu_ms[i] : 0.0;
        return 0;
    }
    double *row = malloc((n ? n : 1) * sizeof *row);
    if (!row)
        return -1;
    for (size_t i = 0; i < n; i++)
        work[i] = 0.0;
    an_cpu_frame_sums(m, row, (double *const[2]){work, NULL});
    free(row);
    return 0;
}

/* What the frames are ordered by: split_by (NULL: frame time; a scope's
 * name, CPU first; AN_SPLIT_BY_WORK) into out->by or out->by_work.
 * CAP_E_MISUSE when there is no such scope, or no work per frame. */
static cap_result split_key(an_split *out, const an_capture *m,
                            const char *split_by)
{
    if (!split_by)
        return CAP_OK;
    if (strcmp(split_by, AN_SPLIT_BY_WORK) == 0) {
        if (m->approx && !m->ot_sums)
            return CAP_E_MISUSE;
        out->by_work = 1;
        return CAP_OK;
    }
    long by = an_find_scope(m, AN_CPU, split_by);
    if (by < 0)
        by = an_find_scope(m, AN_GPU, split_by);
    if (by < 0)
        return CAP_E_MISUSE;
    out->by = &m->scopes[by];
    return CAP_OK;
}

/* The split's scratch: frames in order, a frame's values, a population's
 * values, the scopes and their order (split_ctx_free frees them). */
typedef struct split_ctx {
    an_split *out;
    const an_capture *m;
    size_t n, ns, q;
    ord *o, *so;
    double *dense, *tmp;
    an_split_scope *sc;
} split_ctx;

static void split_ctx_free(split_ctx *c)
{
    free(c->o);
    free(c->dense);
    free(c->tmp);
    free(c->so);
    free(c->sc);
}

static cap_result split_alloc(split_ctx *c)
{
    an_split *out = c->out;
    size_t n = c->n, ns = c->ns, q = c->q;
    int keyed = out->by || out->by_work;
    c->o = malloc(n * sizeof *c->o);
    c->dense = malloc((keyed || !c->m->approx ? n : 1) * sizeof *c->dense);
    c->tmp = malloc(q * sizeof *c->tmp); /* a population at most */
    c->so = malloc((ns ? ns : 1) * sizeof *c->so);
    c->sc = calloc(ns ? ns : 1, sizeof *c->sc);
    out->pop_frames[0] = malloc(q * sizeof *out->pop_frames[0]);
    out->pop_frames[1] = malloc(q * sizeof *out->pop_frames[1]);
    if (!c->o || !c->dense || !c->tmp || !c->so || !c->sc ||
        !out->pop_frames[0] || !out->pop_frames[1])
        return CAP_E_NOMEM;
    out->quarter = q;
    return CAP_OK;
}

/* The frames ordered by the key, the fastest and slowest quarters taken
 * as the two populations. */
static cap_result frames_ordered(split_ctx *c)
{
    an_split *out = c->out;
    const an_capture *m = c->m;
    size_t n = c->n, q = c->q;
    if (out->by)
        an_scope_dense(m, out->by, c->dense);
    if (out->by_work && work_per_frame(m, c->dense) != 0)
        return CAP_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        c->o[i].pos = i;
        c->o[i].key = out->by || out->by_work
                          ? c->dense[i]
                          : (double)an_frame_ns(&m->frames[i]);
    }
    if (n > ((size_t)1 << 16))
        an_sort_in_place(c->o, n, sizeof *c->o, ord_cmp); /* qsort would
                                                copy o (16 B a frame) */
    else
        qsort(c->o, n, sizeof *c->o, ord_cmp);
    for (size_t i = 0; i < q; i++) {
        out->pop_frames[0][i] = c->o[i].pos;
        out->pop_frames[1][i] = c->o[n - q + i].pos;
    }
    return CAP_OK;
}

/* Population p's frame times, work (by_work) and frame/GPU ratios. */
static void pop_summary(split_ctx *c, int p)
{
    an_split *out = c->out;
    const an_capture *m = c->m;
    const size_t *pf = out->pop_frames[p];
    double *tmp = c->tmp;
    for (size_t i = 0; i < c->q; i++)
        tmp[i] = MS(an_frame_ns(&m->frames[pf[i]]));
    out->frame[p] = an_summarize(tmp, c->q);
    if (out->by_work) {
        for (size_t i = 0; i < c->q; i++)
            tmp[i] = c->dense[pf[i]];
        out->work[p] = an_summarize(tmp, c->q);
    }
    size_t k = 0;
    for (size_t i = 0; i < c->q; i++) {
        const an_frame *f = &m->frames[pf[i]];
        int64_t g = an_frame_gpu_ns(m, pf[i]);
        if (an_frame_has_gpu(m, pf[i]) && g > 0) {
            double r = (double)an_frame_ns(f) / (double)g;
            tmp[k++] = r;
            out->hist[p][hist_bin(r)]++;
        }
    }
    out->ratio[p] = an_summarize(tmp, k);
}

/* The slow quarter's frame median over the fast one's: a cap holds the
 * frames when it is within AN_SPLIT_HELD_PCT (frame time splits only). */
static void held_set(an_split *out)
{
    out->held_pct = NAN;
    if (!out->by && !out->by_work && out->frame[0].median > 0) {
        out->held_pct =
            (out->frame[1].median / out->frame[0].median - 1.0) * 100.0;
        out->held = out->held_pct < AN_SPLIT_HELD_PCT;
    }
}

/* Per-scope self time per frame in each population (a summarised model:
 * from histograms, reading the file again), then the scopes ordered by
 * |delta of the mean| into out->scopes. */
static cap_result scopes_split(split_ctx *c)
{
    an_split *out = c->out;
    const an_capture *m = c->m;
    an_summary *approx = NULL;
    cap_result rc;
    if (m->approx && (rc = approx_pops(m, out, &approx)) != CAP_OK)
        return rc;
    an_split_scope *sc = c->sc;
    for (size_t s = 0; s < c->ns; s++) {
        sc[s].scope = &m->scopes[s];
        if (approx) {
            sc[s].pop[0] = approx[2 * s];
            sc[s].pop[1] = approx[2 * s + 1];
        }
        for (int p = 0; !approx && p < 2; p++) {
            if (p == 0)
                an_scope_dense(m, &m->scopes[s], c->dense);
            for (size_t i = 0; i < c->q; i++)
                c->tmp[i] = MS(c->dense[out->pop_frames[p][i]]);
            sc[s].pop[p] = an_summarize(c->tmp, c->q);
        }
        c->so[s].pos = s;
        c->so[s].key = -fabs(sc[s].pop[1].mean - sc[s].pop[0].mean);
    }
    free(approx);
    qsort(c->so, c->ns, sizeof *c->so, ord_cmp);
    out->scopes = calloc(c->ns ? c->ns : 1, sizeof *out->scopes);
    if (!out->scopes)
        return CAP_E_NOMEM;
    for (size_t k = 0; k < c->ns; k++)
        out->scopes[k] = sc[c->so[k].pos];
    out->nscopes = c->ns;
    return CAP_OK;
}

cap_result an_split_compute(an_split *out, const an_capture *m,
                            const char *split_by)
{
    memset(out, 0, sizeof *out);
    out->nframes = m->nframes;
    cap_result rc = split_key(out, m, split_by);
    if (rc != CAP_OK || m->nframes / 4 == 0)
        return rc;
    split_ctx c = {out, m, m->nframes, m->nscopes, m->nframes / 4,
                   NULL, NULL, NULL, NULL, NULL};
    rc = split_alloc(&c);
    if (rc == CAP_OK)
        rc = frames_ordered(&c);
    if (rc == CAP_OK) {
        pop_summary(&c, 0);
        pop_summary(&c, 1);
        held_set(out);
        rc = scopes_split(&c);
    }
    split_ctx_free(&c);
    if (rc != CAP_OK)
        an_split_free(out);
    return rc;
}
