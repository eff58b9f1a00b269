/* tables.c - the ranking, the call tree, frame statistics, the per-frame
 * table and the totals every share divides by (report.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "stats.h"

#define MS(ns) ((double)(ns) / 1e6)

an_summary an_summarize(double *v, size_t n)
{
    an_summary s = {n, NAN, NAN, NAN};
    if (!n)
        return s;
    cap_stats_sort(v, n);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    s.mean = sum / (double)n;
    s.median = cap_stats_quantile_sorted(v, n, 0.5);
    s.p95 = cap_stats_quantile_sorted(v, n, 0.95);
    return s;
}

typedef struct sum_ctx {
    const uint32_t *group_of;
    size_t ngroups;
    const size_t *slot_of; /* row -> index in rows, or SIZE_MAX */
    an_hist *h;            /* nrows x ngroups */
    int failed;
} sum_ctx;

static void sum_visit(void *p, size_t row, size_t frame, int64_t v)
{
    sum_ctx *c = p;
    size_t k = c->slot_of[row];
    uint32_t g = c->group_of[frame];
    if (k == SIZE_MAX || g >= c->ngroups)
        return;
    if (an_hist_add(&c->h[k * c->ngroups + g], v) != 0)
        c->failed = 1;
}

cap_result an_series_summaries(const an_capture *m, const uint32_t *group_of,
                               size_t ngroups, const size_t *rows,
                               size_t nrows, an_summary *out)
{
    size_t nf = m->nframes;
    size_t *gn = calloc(ngroups ? ngroups : 1, sizeof *gn);
    if (!gn)
        return CAP_E_NOMEM;
    for (size_t f = 0; f < nf; f++)
        if (group_of[f] < ngroups)
            gn[group_of[f]]++;
    cap_result rc = CAP_E_NOMEM;
    if (!m->approx) {
        double *dense = malloc((nf ? nf : 1) * sizeof *dense);
        double *tmp = malloc((nf ? nf : 1) * sizeof *tmp);
        if (dense && tmp) {
            for (size_t r = 0; r < nrows; r++) {
                an_scope_dense(m, &m->scopes[rows[r]], dense);
                for (size_t g = 0; g < ngroups; g++) {
                    size_t k = 0;
                    for (size_t f = 0; f < nf; f++)
                        if (group_of[f] == g)
                            tmp[k++] = MS(dense[f]);
                    out[r * ngroups + g] = an_summarize(tmp, k);
                }
            }
            rc = CAP_OK;
        }
        free(dense);
        free(tmp);
        free(gn);
        return rc;
    }
    size_t *slot_of = malloc((m->nscopes ? m->nscopes : 1) * sizeof *slot_of);
    size_t nh = nrows * ngroups;
    an_hist *h = calloc(nh ? nh : 1, sizeof *h);
    if (slot_of && h) {
        for (size_t r = 0; r < m->nscopes; r++)
            slot_of[r] = SIZE_MAX;
        for (size_t r = 0; r < nrows; r++)
            slot_of[rows[r]] = r;
        sum_ctx c = {group_of, ngroups, slot_of, h, 0};
        rc = an_series_scan(m, sum_visit, &c);
        if (rc == CAP_OK && c.failed)
            rc = CAP_E_NOMEM;
        for (size_t r = 0; rc == CAP_OK && r < nrows; r++)
            for (size_t g = 0; g < ngroups; g++) {
                const an_hist *x = &h[r * ngroups + g];
                an_summary sm = {gn[g], NAN, NAN, NAN};
                if (gn[g]) {
                    sm.mean = MS((double)x->sum / (double)gn[g]);
                    sm.median = MS(an_hist_quantile(x, gn[g], 0.5));
                    sm.p95 = MS(an_hist_quantile(x, gn[g], 0.95));
                }
                out[r * ngroups + g] = sm;
            }
    }
    for (size_t i = 0; h && i < nrows * ngroups; i++)
        an_hist_free(&h[i]);
    free(h);
    free(slot_of);
    free(gn);
    return rc;
}

void an_totals_compute(const an_capture *m, an_totals *t)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < m->nscopes; i++)
        cap_stats_sat_add(m->scopes[i].kind == AN_CPU ? &t->cpu_ns
                                                      : &t->gpu_ns,
                          m->scopes[i].self_ns);
    t->frame_ns = an_total_frame_ns(m);
    t->before_ns = m->outside_ns[0];
    t->between_ns = m->outside_ns[1];
    t->after_ns = m->outside_ns[2];
    for (int k = 0; k < 3; k++)
        cap_stats_sat_add(&t->outside_ns, m->outside_ns[k]);
    t->threads = m->nthreads;
    double permille = t->cpu_ns > 0 ? (double)t->outside_ns * 1000.0 /
                                          (double)t->cpu_ns
                                    : 1000.0;
    t->outside_shown = t->outside_ns > 0 &&
                       (m->noutside_threads ||
                        permille >= AN_OUTSIDE_SHOWN_PERMILLE);
    t->outside_warned = t->outside_ns > 0 &&
                        (m->noutside_threads ||
                         permille >= AN_OUTSIDE_WARNED_PERMILLE);
}

/* ---- frame statistics -------------------------------------------------- */

int an_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void an_sort_in_place(void *base, size_t n, size_t size,
                      int (*cmp)(const void *, const void *))
{
    unsigned char x[AN_SORT_MAX_SIZE], *v = base;
    if (size > sizeof x) {
        qsort(base, n, size, cmp);
        return;
    }
    /* heapsort: each element sifted down from x, moved by memcpy */
    for (size_t end = n, start = n / 2;;) {
        size_t root;
        if (start > 0) {
            root = --start;
            memcpy(x, v + root * size, size);
        } else {
            if (--end == 0)
                break;
            memcpy(x, v + end * size, size);
            memcpy(v + end * size, v, size);
            root = 0;
        }
        for (size_t c; (c = 2 * root + 1) < end; root = c) {
            if (c + 1 < end && cmp(v + (c + 1) * size, v + c * size) > 0)
                c++;
            if (cmp(v + c * size, x) <= 0)
                break;
            memcpy(v + root * size, v + c * size, size);
        }
        memcpy(v + root * size, x, size);
    }
}

/* Insert x into the sorted w[0..*k). */
static void win_insert(double *w, size_t *k, double x)
{
    size_t i = *k;
    while (i > 0 && w[i - 1] > x) {
        w[i] = w[i - 1];
        i--;
    }
    w[i] = x;
    (*k)++;
}

/* Remove one x from the sorted w[0..*k). */
static void win_remove(double *w, size_t *k, double x)
{
    size_t i = 0;
    while (i < *k && w[i] != x)
        i++;
    if (i == *k)
        return;
    memmove(w + i, w + i + 1, (*k - i - 1) * sizeof *w);
    (*k)--;
}

cap_result an_frame_stats_compute(an_frame_stats *fs, const an_capture *m)
{
    memset(fs, 0, sizeof *fs);
    size_t n = m->nframes;
    if (!n)
        return CAP_OK;
    double *v = malloc(n * sizeof *v);
    double *w = malloc(31 * sizeof *w);
    if (!v || !w) {
        free(v);
        free(w);
        return CAP_E_NOMEM;
    }
    fs->n = n;
    /* stutters: longer than 2.5x the median of the 31 frames centred on
     * the frame (fewer at the ends); the window kept sorted as it slides */
    size_t k = 0, clo = 0, chi = 0;
    for (size_t i = 0; i < n; i++) {
        size_t lo = i >= 15 ? i - 15 : 0;
        size_t hi = i + 16 < n ? i + 16 : n;
        for (; clo < lo; clo++)
            win_remove(w, &k, MS(an_frame_ns(&m->frames[clo])));
        for (; chi < hi; chi++)
            win_insert(w, &k, MS(an_frame_ns(&m->frames[chi])));
        double med = cap_stats_quantile_sorted(w, k, 0.5);
        if (MS(an_frame_ns(&m->frames[i])) > 2.5 * med)
            fs->stutters++;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = MS(an_frame_ns(&m->frames[i]));
    /* a light and a heavy group of frames all along (an_frame_split) */
    fs->groups = 1;
    {
        uint8_t *heavy = malloc(n);
        int g = heavy ? an_frame_split(v, n, heavy, fs->group_ms,
                                       fs->group_share)
                      : -1;
        free(heavy);
        if (g < 0) {
            free(v);
            free(w);
            return CAP_E_NOMEM;
        }
        fs->groups = g == 1 ? 2 : 1;
    }
    if (n > ((size_t)1 << 16))
        an_sort_in_place(v, n, sizeof *v, an_cmp_double);
    else
        cap_stats_sort(v, n);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    fs->mean = sum / (double)n;
    fs->median = cap_stats_quantile_sorted(v, n, 0.5);
    fs->p95 = cap_stats_quantile_sorted(v, n, 0.95);
    fs->p99 = cap_stats_quantile_sorted(v, n, 0.99);
    fs->p999 = cap_stats_quantile_sorted(v, n, 0.999);
    fs->max = v[n - 1];
    k = (n + 99) / 100; /* the slowest 1 %, at least one frame */
    double s = 0;
    for (size_t i = n - k; i < n; i++)
        s += v[i];
    fs->low1 = s / (double)k;
    fs->low1_frames = k;
    free(v);
    free(w);
    return CAP_OK;
}

/* ---- ranking ----------------------------------------------------------- */

static int rank_cmp(const void *a, const void *b)
{
    const an_rank_row *x = a, *y = b;
    if (x->scope->kind != y->scope->kind)
        return x->scope->kind < y->scope->kind ? -1 : 1;
    if (x->scope->self_ns != y->scope->self_ns)
        return x->scope->self_ns > y->scope->self_ns ? -1 : 1;
    return strcmp(x->scope->name, y->scope->name);
}

static double share_of(int64_t part, int64_t whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : NAN;
}

void an_ranking_free(an_ranking *r)
{
    if (!r)
        return;
    free(r->rows);
    memset(r, 0, sizeof *r);
}

cap_result an_ranking_compute(an_ranking *out, const an_capture *m)
{
    memset(out, 0, sizeof *out);
    size_t n = m->nscopes;
    an_rank_row *rows = calloc(n ? n : 1, sizeof *rows);
    double *dense = malloc((m->nframes ? m->nframes : 1) * sizeof *dense);
    if (!rows || !dense) {
        free(rows);
        free(dense);
        return CAP_E_NOMEM;
    }
    an_totals_compute(m, &out->totals);
    for (size_t i = 0; i < n; i++) {
        const an_scope *s = &m->scopes[i];
        rows[i].scope = s;
        rows[i].pf_mean = rows[i].pf_p95 = NAN;
        if (m->nframes && m->approx) {
            /* summarised: the mean from the exact sum, p95 from the
               histogram */
            rows[i].pf_mean = MS((double)s->pf_hist.sum / (double)m->nframes);
            rows[i].pf_p95 = MS(an_hist_quantile(&s->pf_hist, m->nframes,
                                                 0.95));
        } else if (m->nframes) {
            an_scope_dense(m, s, dense);
            an_summary sm = an_summarize(dense, m->nframes);
            rows[i].pf_mean = MS(sm.mean);
            rows[i].pf_p95 = MS(sm.p95);
        }
        rows[i].share_pct = share_of(s->self_ns, s->kind == AN_CPU
                                                     ? out->totals.cpu_ns
                                                     : out->totals.gpu_ns);
        out->ncpu += s->kind == AN_CPU;
        if (s->kind == AN_CPU && s->is_wait) {
            out->nwait++;
            cap_stats_sat_add(&out->wait_ns, s->self_ns);
        }
    }
    /* how busy the threads kept the CPUs in scopes that are not waits */
    out->cpus = an_machine_cpus(m);
    out->busy = NAN;
    if (m->nframes && out->cpus && out->nwait) {
        double work_ms = 0, frames_ms = 0;
        for (size_t i = 0; i < n; i++)
            if (rows[i].scope->kind == AN_CPU && !rows[i].scope->is_wait &&
                !isnan(rows[i].pf_mean))
                work_ms += rows[i].pf_mean;
        for (size_t f = 0; f < m->nframes; f++)
            frames_ms += MS(m->frames[f].end_ns - m->frames[f].begin_ns);
        if (frames_ms > 0)
            out->busy = work_ms * (double)m->nframes /
                        (frames_ms * (double)out->cpus);
    }
    qsort(rows, n, sizeof *rows, rank_cmp);
    free(dense);
    out->rows = rows;
    out->n = n;
    return CAP_OK;
}

/* ---- tree -------------------------------------------------------------- */

typedef struct tree_ctx {
    const an_capture *m;
    an_tree *t;
    size_t rows_cap, paths_len, paths_cap;
    int max_depth;
    double min_share;
} tree_ctx;

static int64_t node_total(const an_capture *m, uint32_t i)
{
    const an_node *n = &m->nodes[i];
    if (!n->is_root)
        return n->total_ns;
    int64_t t = 0;
    for (uint32_t c = n->first_child; c != UINT32_MAX;
         c = m->nodes[c].next_sibling)
        cap_stats_sat_add(&t, m->nodes[c].total_ns);
    return t;
}

static int node_cmp(const void *a, const void *b, void *ctx)
{
    const an_capture *m = ctx;
    int64_t x = node_total(m, *(const uint32_t *)a);
    int64_t y = node_total(m, *(const uint32_t *)b);
    if (x != y)
        return x > y ? -1 : 1;
    return strcmp(m->nodes[*(const uint32_t *)a].name,
                  m->nodes[*(const uint32_t *)b].name);
}


/* Append node's row (and its subtree's) under the path at parent_off
 * (SIZE_MAX for none). */
static cap_result tree_walk(tree_ctx *c, uint32_t node, size_t parent_off)
{
    const an_capture *m = c->m;
    const an_node *n = &m->nodes[node];
    int64_t total = node_total(m, node);
    double denom = c->t->denom_ns[n->kind];
    double share = denom > 0 ? 100.0 * (double)total / denom : NAN;
    int depth = (int)n->depth - 1; /* roots -1, top scopes 0 */
    if (!n->is_root) {
        if (c->max_depth >= 0 && depth > c->max_depth)
            return CAP_OK;
        if ((isnan(share) ? 0 : share) < c->min_share)
            return CAP_OK;
    }
    size_t plen = parent_off == SIZE_MAX ? 0 : strlen(c->t->paths + parent_off);
    size_t nl = strlen(n->name);
    size_t off = c->paths_len;
    if (an_grow((void **)&c->t->paths, &c->paths_cap, off + plen + nl + 2, 1) ||
        an_grow((void **)&c->t->rows, &c->rows_cap, c->t->n + 1,
             sizeof *c->t->rows))
        return CAP_E_NOMEM;
    char *p = c->t->paths + off;
    if (plen) {
        memcpy(p, c->t->paths + parent_off, plen);
        p[plen++] = ';';
    }
    memcpy(p + plen, n->name, nl + 1);
    c->paths_len = off + plen + nl + 1;
    c->t->rows[c->t->n++] = (an_tree_row){n, depth, total, share, off};
    /* children sorted by total */
    size_t k = 0;
    for (uint32_t ch = n->first_child; ch != UINT32_MAX;
         ch = m->nodes[ch].next_sibling)
        k++;
    if (!k)
        return CAP_OK;
    uint32_t *kids = malloc(k * sizeof *kids);
    if (!kids)
        return CAP_E_NOMEM;
    k = 0;
    for (uint32_t ch = n->first_child; ch != UINT32_MAX;
         ch = m->nodes[ch].next_sibling)
        kids[k++] = ch;
    qsort_r(kids, k, sizeof *kids, node_cmp, (void *)m);
    cap_result rc = CAP_OK;
    for (size_t i = 0; i < k && rc == CAP_OK; i++)
        rc = tree_walk(c, kids[i], off);
    free(kids);
    return rc;
}

void an_tree_free(an_tree *t)
{
    if (!t)
        return;
    free(t->rows);
    free(t->paths);
    memset(t, 0, sizeof *t);
}

cap_result an_tree_compute(an_tree *out, const an_capture *m, int max_depth,
                           double min_share_pct)
{
    memset(out, 0, sizeof *out);
    an_totals tot;
    an_totals_compute(m, &tot);
    out->denom_ns[AN_CPU] = (double)tot.cpu_ns;
    out->denom_ns[AN_GPU] = (double)tot.gpu_ns;
    tree_ctx c = {m, out, 0, 0, 0, max_depth, min_share_pct};
    cap_result rc = CAP_OK;
    /* roots: CPU threads in the header's order (m->threads: as the
     * threads were declared), then any other CPU root and the GPU tracks
     * in order of appearance. Appearance alone follows the first scope to
     * end, which in a game is a worker's job, not the main thread's frame
     * (the main thread came last of six in game_sim). */
    size_t nroots = 0;
    for (size_t i = 0; i < m->nnodes; i++)
        nroots += (size_t)m->nodes[i].is_root;
    uint32_t *roots = malloc((nroots ? nroots : 1) * sizeof *roots);
    if (!roots)
        return CAP_E_NOMEM;
    size_t nr = 0;
    for (int k = AN_CPU; k <= AN_GPU; k++)
        for (size_t i = 0; i < m->nnodes; i++)
            if (m->nodes[i].is_root && (int)m->nodes[i].kind == k)
                roots[nr++] = (uint32_t)i;
    size_t placed = 0; /* roots[0 .. placed) are in their final order */
    for (size_t t = 0; t < m->nthreads; t++)
        for (size_t j = placed; j < nr; j++) {
            const an_node *r = &m->nodes[roots[j]];
            if (r->kind == AN_CPU && strcmp(r->name, m->threads[t]) == 0) {
                uint32_t x = roots[j]; /* move it to `placed`, keeping the
                                          others' order */
                memmove(roots + placed + 1, roots + placed,
                        (j - placed) * sizeof *roots);
                roots[placed++] = x;
                break;
            }
        }
    for (size_t j = 0; j < nr && rc == CAP_OK; j++)
        rc = tree_walk(&c, roots[j], SIZE_MAX);
    free(roots);
    if (rc != CAP_OK)
        an_tree_free(out);
    return rc;
}

/* ---- frames ------------------------------------------------------------ */

void an_frames_free(an_frames *f)
{
    if (f)
        memset(f, 0, sizeof *f);
}

static long find_any(const an_capture *m, const char *name)
{
    long i = an_find_scope(m, AN_CPU, name);
    return i >= 0 ? i : an_find_scope(m, AN_GPU, name);
}

cap_result an_frames_compute(an_frames *out, const an_capture *m,
                             const char *scope)
{
    memset(out, 0, sizeof *out);
    size_t ns = m->nscopes;
    if (scope) {
        long i = find_any(m, scope);
        if (i < 0)
            return CAP_E_MISUSE;
        out->only = &m->scopes[i];
        out->cols[out->ncols++] = out->only;
    } else {
        size_t idx[AN_FRAMES_MAX_COLS];
        for (size_t k = 0; k < AN_FRAMES_MAX_COLS; k++) {
            long best = -1;
            for (size_t s = 0; s < ns; s++) {
                int taken = 0;
                for (size_t j = 0; j < out->ncols; j++)
                    taken |= idx[j] == s;
                if (!taken && (best < 0 || m->scopes[s].self_ns >
                                               m->scopes[best].self_ns))
                    best = (long)s;
            }
            if (best < 0)
                break;
            idx[out->ncols] = (size_t)best;
            out->cols[out->ncols++] = &m->scopes[best];
        }
    }
    out->nframes = m->nframes;
    return CAP_OK;
}

/* an_series_walk's values, in frame order, turned into the sink's calls:
 * each frame ended once its values are in (or a later frame's come), the
 * one scope of `only` handed on at the frame's end, 0 when it did not
 * run. */
typedef struct frames_walk {
    const an_capture *m;
    const an_frames_sink *sink;
    size_t only;        /* row of f->only, or SIZE_MAX */
    size_t next;        /* the first frame not ended */
    int64_t only_v;
    int bad;            /* a frame's value came after the frame ended */
} frames_walk;

static void frames_end_to(frames_walk *w, size_t to)
{
    for (; w->next < to; w->next++) {
        if (w->only != SIZE_MAX) {
            w->sink->value(w->sink->ctx, w->next, &w->m->scopes[w->only],
                           w->only_v);
            w->only_v = 0;
        }
        w->sink->frame_end(w->sink->ctx, w->next);
    }
}

static void frames_visit(void *p, size_t row, size_t frame, int64_t v)
{
    frames_walk *w = p;
    if (frame < w->next) { /* cannot happen with the walk's order */
        w->bad = 1;
        return;
    }
    frames_end_to(w, frame);
    if (w->only == SIZE_MAX)
        w->sink->value(w->sink->ctx, frame, &w->m->scopes[row], v);
    else if (row == w->only)
        w->only_v = v;
}

cap_result an_frames_walk(const an_capture *m, const an_frames *f,
                          const an_frames_sink *sink)
{
    frames_walk w = {m, sink, f->only ? (size_t)(f->only - m->scopes)
                                      : SIZE_MAX, 0, 0, 0};
    cap_result rc = an_series_walk(m, frames_visit, &w);
    if (rc == CAP_OK && w.bad)
        rc = CAP_E_CORRUPT;
    if (rc == CAP_OK)
        frames_end_to(&w, m->nframes);
    return rc;
}
