/* diff.c - match scopes across two captures and compare their samples. */
#include "diff.h"

#include <fnmatch.h>
#include <pthread.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keytab.h"
#include "report.h"
#include "stats.h"

/* Mean of dense[0..n) over `nb` blocks of consecutive values that cover
 * them all (block k is [k n / nb, (k + 1) n / nb)), scaled by `unit`, into
 * out[0..nb). */
static void block_means(double *out, const double *dense, size_t n, size_t nb,
                        double unit)
{
    for (size_t k = 0; k < nb; k++) {
        size_t a = k * n / nb, b = (k + 1) * n / nb;
        double sum = 0;
        for (size_t i = a; i < b; i++)
            sum += dense[i];
        out[k] = sum / (double)(b - a) * unit;
    }
}

/* Frames where scope s ran (its sparse per-frame entries inside m's
 * frames). */
static size_t frames_ran(const an_capture *m, const an_scope *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->pf_n; i++)
        k += s->pf_frame[i] < m->nframes;
    return k;
}

/* Samples (ms): scope s's self time per frame (zeros where it did not
 * run), or the frame durations when s is NULL, averaged over blocks of
 * `block` frames. NULL when out of memory. */
static double *block_samples(const an_capture *m, const an_scope *s,
                             size_t block, size_t *n)
{
    size_t nb = m->nframes / block;
    double *dense = malloc((m->nframes ? m->nframes : 1) * sizeof *dense);
    double *v = malloc((nb ? nb : 1) * sizeof *v);
    if (!dense || !v) {
        free(dense);
        free(v);
        return NULL;
    }
    if (s)
        an_scope_dense(m, s, dense);
    else
        for (size_t i = 0; i < m->nframes; i++)
            dense[i] = (double)an_frame_ns(&m->frames[i]);
    block_means(v, dense, m->nframes, nb, 1e-6);
    free(dense);
    *n = nb;
    return v;
}

/* Samples (ms) of scope s: its self time per frame, zeros where it did not
 * run, averaged over blocks of `block` frames. A scope that ran in fewer
 * than min_frames frames gets its per-frame values where it ran instead:
 * too few samples, judged insufficient. NULL when out of memory. */
static double *scope_samples(const an_capture *m, const an_scope *s,
                             size_t block, size_t min_frames, size_t *n)
{
    size_t ran = frames_ran(m, s);
    if (ran < min_frames) {
        double *v = malloc((ran ? ran : 1) * sizeof *v);
        if (!v)
            return NULL;
        size_t k = 0;
        for (size_t i = 0; i < s->pf_n; i++)
            if (s->pf_frame[i] < m->nframes)
                v[k++] = (double)s->pf_self[i] / 1e6;
        *n = k;
        return v;
    }
    return block_samples(m, s, block, n);
}

/* The frame durations (ms), per frame. */
static double *frame_samples(const an_capture *m, size_t *n)
{
    return block_samples(m, NULL, 1, n);
}

/* Self time (ms) of s inside m's frames. */
static double scope_frame_total_ms(const an_capture *m, const an_scope *s)
{
    double t = 0;
    for (size_t i = 0; i < s->pf_n; i++)
        if (s->pf_frame[i] < m->nframes)
            t += (double)s->pf_self[i];
    return t / 1e6;
}

static const char *key_of(const an_scope *s)
{
    return s->path ? s->path : s->name;
}

/* Each run's scopes by (kind, key), the first of each key kept: tab[q]
 * for run[q]. Returns 0, or -1 when out of memory. */
static int index_runs(an_keytab *tab, const an_capture *const *run,
                      size_t nruns)
{
    for (size_t q = 0; q < nruns; q++)
        for (size_t i = 0; i < run[q]->nscopes; i++) {
            const an_scope *s = &run[q]->scopes[i];
            if (an_keytab_put(&tab[q], s->kind, key_of(s), i) < 0)
                return -1;
        }
    return 0;
}

/* The index of the scope of m (indexed in tab) with s's kind and key, or
 * -1 when m has none. */
static long find_match(const an_keytab *tab, const an_scope *s)
{
    return an_keytab_find(tab, s->kind, key_of(s));
}

/* ---- summarised captures: block sums, weighted samples, loading -------- */

/* Frames per sample for a shortest run of `shorter` frames: `block`
 * (0: the default), fewer when that would give under min_frames
 * samples. */
static size_t plan_block(size_t block, size_t min_frames, size_t shorter)
{
    if (!block)
        block = AN_DIFF_DEFAULT_BLOCK;
    if (block > 1 && shorter / block < min_frames)
        block = shorter / min_frames > 1 ? shorter / min_frames : 1;
    return block;
}

/* One row's self time summed over each block of frames: the block being
 * summed, then the sums of closed blocks in a histogram by block length
 * (len or len + 1 frames). */
typedef struct blk_row {
    uint64_t cur;
    uint64_t lo, hi;  /* its frames: [lo, hi) */
    int64_t sum;
    int open;
    an_hist h[2];
} blk_row;

struct an_diff_sums {
    size_t block0, min_frames; /* what the block size is planned from */
    size_t block;              /* 0 until the first value */
    uint64_t n, nb, len;       /* frames, blocks, the shorter length */
    blk_row *rows;
    size_t nrows;
    uint64_t late;             /* pieces of a block already closed */
    int failed;                /* out of memory */
};

static an_diff_sums *sums_new(size_t block0, size_t min_frames)
{
    an_diff_sums *s = calloc(1, sizeof *s);
    if (s) {
        s->block0 = block0;
        s->min_frames = min_frames;
    }
    return s;
}

/* Forget every value, keeping what the block size is planned from. */
static void sums_clear(an_diff_sums *s)
{
    for (size_t i = 0; i < s->nrows; i++) {
        an_hist_free(&s->rows[i].h[0]);
        an_hist_free(&s->rows[i].h[1]);
    }
    free(s->rows);
    *s = (an_diff_sums){.block0 = s->block0, .min_frames = s->min_frames};
}

/* an_options.summary_reset: the load starts again. */
static void sums_reset(void *ctx)
{
    sums_clear(ctx);
}

void an_diff_sums_free(an_diff_sums *s)
{
    if (!s)
        return;
    sums_clear(s);
    free(s);
}

/* First frame of block k. */
static uint64_t blk_start(const an_diff_sums *s, uint64_t k)
{
    return k * s->n / s->nb;
}

/* Block k's sum into the row's histogram of its length (len frames). */
static void blk_put(an_diff_sums *s, blk_row *r, uint64_t len, int64_t sum)
{
    if (an_hist_add(&r->h[len > s->len], sum) != 0)
        s->failed = 1;
}

/* sums_add past its usual case (out of line: a new block, a new row, the
 * first value, a late one; never a frame of the row's open block). */
__attribute__((noinline)) static void
sums_add_rest(an_diff_sums *s, uint64_t nframes, size_t row, uint64_t frame,
              int64_t v)
{
    if (s->failed)
        return;
    if (!s->block) {
        s->n = nframes;
        s->block = plan_block(s->block0, s->min_frames, (size_t)nframes);
        s->nb = nframes / s->block;
        s->len = s->nb ? nframes / s->nb : 0;
    }
    if (!s->nb || frame >= s->n)
        return;
    if (row >= s->nrows) {
        size_t n = s->nrows ? s->nrows : 64;
        while (n <= row)
            n *= 2;
        blk_row *p = realloc(s->rows, n * sizeof *p);
        if (!p) {
            s->failed = 1;
            return;
        }
        memset(p + s->nrows, 0, (n - s->nrows) * sizeof *p);
        s->rows = p;
        s->nrows = n;
    }
    blk_row *r = &s->rows[row];
    uint64_t k = ((frame + 1) * s->nb - 1) / s->n;
    if (r->open && k < r->cur) { /* its block is closed: a block alone */
        s->late++;
        blk_put(s, r, blk_start(s, k + 1) - blk_start(s, k), v);
        return;
    }
    if (r->open)
        blk_put(s, r, r->hi - r->lo, r->sum);
    /* the next block starts where the row's last one ended */
    r->lo = r->open && k == r->cur + 1 ? r->hi : blk_start(s, k);
    r->hi = blk_start(s, k + 1);
    r->cur = k;
    r->sum = v;
    r->open = 1;
}

/* Frame `frame` of nframes: row's value v (the usual case, a frame of the
 * row's open block, inline; sums_add_rest the others). */
static inline void sums_add(an_diff_sums *s, uint64_t nframes, size_t row,
                            uint64_t frame, int64_t v)
{
    if (row < s->nrows && !s->failed) {
        blk_row *r = &s->rows[row];
        if (r->open && frame >= r->lo && frame < r->hi) {
            cap_stats_sat_add(&r->sum, v);
            return;
        }
    }
    sums_add_rest(s, nframes, row, frame, v);
}

/* Close every row's open block. */
static void sums_finish(an_diff_sums *s)
{
    for (size_t i = 0; i < s->nrows && !s->failed; i++)
        if (s->rows[i].open) {
            blk_put(s, &s->rows[i], s->rows[i].hi - s->rows[i].lo,
                    s->rows[i].sum);
            s->rows[i].open = 0;
        }
}

static void sums_hook(void *ctx, const an_capture *m, size_t row,
                      size_t frame, int64_t v)
{
    sums_add(ctx, m->nframes, row, frame, v);
}

typedef struct scan_ctx {
    an_diff_sums *s;
    uint64_t nframes;
} scan_ctx;

static void sums_visit(void *ctx, size_t row, size_t frame, int64_t v)
{
    scan_ctx *c = ctx;
    sums_add(c->s, c->nframes, row, frame, v);
}

/* Block sums of `block` frames for summarised model m, read from its file
 * again (an_series_scan): for a model loaded without them, or with
 * another block size. NULL when out of memory or the file cannot be read
 * again. */
static an_diff_sums *sums_scan(const an_capture *m, size_t block)
{
    an_diff_sums *s = sums_new(block, 1);
    if (!s)
        return NULL;
    scan_ctx c = {s, m->nframes};
    if (an_series_scan(m, sums_visit, &c) != CAP_OK || s->failed) {
        an_diff_sums_free(s);
        return NULL;
    }
    sums_finish(s);
    if (s->failed) {
        an_diff_sums_free(s);
        return NULL;
    }
    return s;
}

/* A run's weighted sample of one row, being built: values (ms), counts. */
typedef struct wbuf {
    double *v;
    uint64_t *w;
    size_t k, cap;
} wbuf;

/* Room in b for `need` entries. Returns 0, or -1 when out of memory. */
static int wb_reserve(wbuf *b, size_t need)
{
    if (need <= b->cap)
        return 0;
    size_t n = b->cap ? b->cap * 2 : 64;
    if (n < need)
        n = need;
    double *v2 = realloc(b->v, n * sizeof *v2);
    if (!v2)
        return -1;
    b->v = v2;
    uint64_t *w2 = realloc(b->w, n * sizeof *w2);
    if (!w2)
        return -1;
    b->w = w2;
    b->cap = n;
    return 0;
}

static int wb_put(wbuf *b, double v, uint64_t w)
{
    if (!w)
        return 0;
    if (wb_reserve(b, b->k + 1) != 0)
        return -1;
    b->v[b->k] = v;
    b->w[b->k++] = w;
    return 0;
}

/* Histogram h's values over `div` (ns to ms per frame). */
static int wb_hist(wbuf *b, const an_hist *h, double div)
{
    size_t k = an_hist_buckets(h, NULL, NULL, 0);
    if (wb_reserve(b, b->k + k) != 0)
        return -1;
    an_hist_buckets(h, b->v + b->k, b->w + b->k, k);
    for (size_t i = 0; i < k; i++)
        b->v[b->k + i] = b->v[b->k + i] / div;
    b->k += k;
    return 0;
}

typedef struct vw {
    double v;
    uint64_t w;
} vw;

static int vw_cmp(const void *a, const void *b)
{
    double x = ((const vw *)a)->v, y = ((const vw *)b)->v;
    return x < y ? -1 : x > y;
}

/* Sort b by value and merge equal values. Returns 0, or -1 when out of
 * memory. */
static int wb_sort(wbuf *b)
{
    int sorted = 1;
    for (size_t i = 1; i < b->k && sorted; i++)
        sorted = b->v[i - 1] < b->v[i];
    if (sorted)
        return 0;
    vw *t = malloc((b->k ? b->k : 1) * sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < b->k; i++)
        t[i] = (vw){b->v[i], b->w[i]};
    qsort(t, b->k, sizeof *t, vw_cmp);
    size_t k = 0;
    for (size_t i = 0; i < b->k; i++) {
        if (k && b->v[k - 1] == t[i].v) {
            b->w[k - 1] += t[i].w;
            continue;
        }
        b->v[k] = t[i].v;
        b->w[k++] = t[i].w;
    }
    b->k = k;
    free(t);
    return 0;
}

/* Plain samples x[0..n) (owned: freed here) into b. */
static int wb_plain(wbuf *b, double *x, size_t n)
{
    if (!x)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = wb_put(b, x[i], 1);
    free(x);
    return rc;
}

static cap_wsample wb_sample(const wbuf *b)
{
    return (cap_wsample){b->v, b->w, b->k};
}

static void wb_free(wbuf *b)
{
    free(b->v);
    free(b->w);
    memset(b, 0, sizeof *b);
}

/* Frames where scope s ran, as the row's samples count them: on a
 * summarised model the frames where its self time was not 0. */
static uint64_t ran_of(const an_capture *m, const an_scope *s)
{
    if (!m->approx)
        return frames_ran(m, s);
    return s->pf_hist.count < m->nframes ? s->pf_hist.count : m->nframes;
}

/* Run m's samples of scope t (blocks of rb frames; sums: m's block sums
 * of rb frames when m is summarised and rb > 1) as a weighted sample:
 * what scope_samples gives, and on a summarised model the same read back
 * from histograms. Returns 0, or -1 when out of memory. */
static int scope_wsample(wbuf *b, const an_capture *m, const an_scope *t,
                         size_t row, size_t rb, size_t min_frames,
                         const an_diff_sums *sums)
{
    if (!m->approx) {
        size_t cnt = 0;
        double *x = scope_samples(m, t, rb, min_frames, &cnt);
        return wb_plain(b, x, cnt) == 0 ? wb_sort(b) : -1;
    }
    uint64_t ran = ran_of(m, t);
    int rc = 0;
    if (ran < min_frames) { /* where it ran */
        rc = wb_hist(b, &t->pf_hist, 1e6);
    } else if (rb == 1) {
        uint64_t c = t->pf_hist.count;
        rc = wb_put(b, 0.0, m->nframes > c ? m->nframes - c : 0);
        if (rc == 0)
            rc = wb_hist(b, &t->pf_hist, 1e6);
    } else {
        const blk_row *r = row < sums->nrows ? &sums->rows[row] : NULL;
        uint64_t held = r ? r->h[0].count + r->h[1].count : 0;
        rc = wb_put(b, 0.0, sums->nb > held ? sums->nb - held : 0);
        if (rc == 0 && r)
            rc = wb_hist(b, &r->h[0], 1e6 * (double)sums->len);
        if (rc == 0 && r)
            rc = wb_hist(b, &r->h[1], 1e6 * (double)(sums->len + 1));
    }
    return rc == 0 ? wb_sort(b) : -1;
}

/* Run m's frame times (ms) as a weighted sample: exact, or on a
 * summarised model read back from a histogram of them. */
static int frame_wsample(wbuf *b, const an_capture *m)
{
    if (!m->approx) {
        size_t k = 0;
        double *x = frame_samples(m, &k);
        return wb_plain(b, x, k) == 0 ? wb_sort(b) : -1;
    }
    an_hist h;
    memset(&h, 0, sizeof h);
    uint64_t zeros = 0;
    int rc = 0;
    for (size_t i = 0; i < m->nframes && rc == 0; i++) {
        int64_t d = an_frame_ns(&m->frames[i]);
        if (d == 0)
            zeros++;
        else
            rc = an_hist_add(&h, d);
    }
    if (rc == 0)
        rc = wb_put(b, 0.0, zeros);
    if (rc == 0)
        rc = wb_hist(b, &h, 1e6);
    an_hist_free(&h);
    return rc == 0 ? wb_sort(b) : -1;
}

/* The runs' samples of one row, each side pooled, compared. run_b[q] holds
 * run q's sample (base runs first). */
static cap_result compare_w(cap_diffstat *res, wbuf *run_b, size_t nbase,
                            size_t nnew, double floor_ms,
                            const cap_diff_options *so)
{
    size_t nruns = nbase + nnew;
    wbuf pool[2];
    memset(pool, 0, sizeof pool);
    cap_wsample *rs = calloc(nruns, sizeof *rs);
    cap_result r = rs ? CAP_OK : CAP_E_NOMEM;
    for (size_t q = 0; q < nruns && r == CAP_OK; q++) {
        wbuf *p = &pool[q >= nbase];
        rs[q] = wb_sample(&run_b[q]);
        for (size_t i = 0; i < run_b[q].k && r == CAP_OK; i++)
            if (wb_put(p, run_b[q].v[i], run_b[q].w[i]) != 0)
                r = CAP_E_NOMEM;
    }
    if (r == CAP_OK && (wb_sort(&pool[0]) != 0 || wb_sort(&pool[1]) != 0))
        r = CAP_E_NOMEM;
    if (r == CAP_OK) {
        cap_diff_winput in = {.base = wb_sample(&pool[0]),
                              .new_ = wb_sample(&pool[1]),
                              .base_run = rs, .base_runs = nbase,
                              .new_run = rs + nbase, .new_runs = nnew,
                              .floor_ms = floor_ms};
        r = cap_diff_compare_w(res, &in, so);
    }
    wb_free(&pool[0]);
    wb_free(&pool[1]);
    free(rs);
    return r;
}

/* Display order: the frame row, regressions that gate, other decided
 * changes, changes within run-to-run spread, then the rest; each group by
 * sort_key. */
static int row_group(const an_diff_row *r)
{
    if (r->is_frame)
        return 0;
    if (r->d.verdict == CAP_VERDICT_REGRESSED && r->gates)
        return 1;
    if (r->d.verdict == CAP_VERDICT_REGRESSED ||
        r->d.verdict == CAP_VERDICT_IMPROVED)
        return 2;
    if (r->d.within_spread)
        return 3;
    return 4;
}

static int row_cmp(const void *a, const void *b)
{
    const an_diff_row *x = a, *y = b;
    int gx = row_group(x), gy = row_group(y);
    if (gx != gy)
        return gx < gy ? -1 : 1;
    if (x->sort_key != y->sort_key)
        return x->sort_key > y->sort_key ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int matches_any(const char *name, const char *const *pat, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (pat[i] && fnmatch(pat[i], name, 0) == 0)
            return 1;
    return 0;
}

/* The median frame time (ms) over every frame of the runs m[0..k). */
static double median_frame_ms(const an_capture *const *m, size_t k)
{
    size_t n = 0;
    for (size_t r = 0; r < k; r++)
        n += m[r]->nframes;
    if (n == 0)
        return 0.0;
    double *v = malloc(n * sizeof *v);
    if (!v)
        return NAN;
    size_t at = 0;
    for (size_t r = 0; r < k; r++)
        for (size_t i = 0; i < m[r]->nframes; i++)
            v[at++] = (double)an_frame_ns(&m[r]->frames[i]) / 1e6;
    double med = cap_stats_median_select(v, n);
    free(v);
    return med;
}

/* One side of one row: the pooled samples of every run, and each run's
 * count. */
typedef struct side_samples {
    double *v;
    size_t n;
    size_t *run_n;
} side_samples;

/* Append run samples x[0..k) (owned: freed here) to side s. Returns 0, or
 * -1 when out of memory (x freed all the same). */
static int side_append(side_samples *s, size_t run, double *x, size_t k)
{
    if (!x)
        return -1;
    double *v = realloc(s->v, (s->n + k ? s->n + k : 1) * sizeof *v);
    if (!v) {
        free(x);
        return -1;
    }
    s->v = v;
    if (k)
        memcpy(s->v + s->n, x, k * sizeof *x);
    s->n += k;
    s->run_n[run] = k;
    free(x);
    return 0;
}

/* The two sides of a new row, taken from owned[*nowned...], with run
 * counts for nbase and nnew runs. Returns 0, or -1 when out of memory (the
 * sides stay in owned, to be freed with it). */
static int sides_new(side_samples **sb, side_samples **sn, side_samples *owned,
                     size_t *nowned, size_t nbase, size_t nnew)
{
    *sb = &owned[(*nowned)++];
    *sn = &owned[(*nowned)++];
    (*sb)->run_n = calloc(nbase, sizeof *(*sb)->run_n);
    (*sn)->run_n = calloc(nnew, sizeof *(*sn)->run_n);
    return (*sb)->run_n && (*sn)->run_n ? 0 : -1;
}

/* The statistics' input for a row's two sides. */
static cap_diff_input input_of(const side_samples *sb, size_t nbase,
                               const side_samples *sn, size_t nnew,
                               double floor_ms)
{
    return (cap_diff_input){.base_ms = sb->v, .base_n = sb->n,
                            .new_ms = sn->v, .new_n = sn->n,
                            .floor_ms = floor_ms,
                            .base_run_n = sb->run_n, .base_runs = nbase,
                            .new_run_n = sn->run_n, .new_runs = nnew};
}

/* A row being built: a scope key and where it is in each run. */
typedef struct row_key {
    an_kind kind;
    const char *key;       /* path or name, borrowed */
    const an_scope *first; /* the first scope met with this key */
} row_key;

/* The CPU count every run's machine names (an_machine_cpus), or 0 when
 * one names none or they differ. */
static unsigned machine_cpus(const an_capture *const *run, size_t nruns)
{
    unsigned cpus = 0;
    for (size_t q = 0; q < nruns; q++) {
        unsigned c = an_machine_cpus(run[q]);
        if (c == 0 || (cpus && c != cpus))
            return 0;
        cpus = c;
    }
    return cpus;
}

/* ---- the comparison, step by step ---------------------------------------- */

/* A comparison under way: the runs, the options resolved, and the rows and
 * buffers an_diff_runs_sums fills (diff_free frees them). */
typedef struct diff_ctx {
    const an_capture **run; /* base runs, then new runs */
    size_t nbase, nnew, nruns;
    an_diff_options ao;
    cap_diff_options so;
    double floor_ms;
    size_t block;
    size_t base_frames, new_frames;
    int weighted; /* a run is summarised: rows compared one at a time */
    an_diff_row *rows;
    cap_diff_input *in;   /* each row's input (not weighted) */
    side_samples *owned;  /* the inputs' samples */
    cap_diffstat *res;
    row_key *keys;
    long *at;             /* the row's scope in each run, or -1 */
    wbuf *wb;             /* the row's weighted sample of each run */
    const an_diff_sums **sums;
    an_diff_sums **scanned; /* block sums made here, of other sizes */
    an_keytab *tab;       /* each run's scopes by key, then every key */
    size_t n, nowned, nkeys;
} diff_ctx;

/* CAP_OK when every run is given, else CAP_E_MISUSE. */
static cap_result runs_given(const an_capture *const *base, size_t nbase,
                             const an_capture *const *new_, size_t nnew)
{
    if (!base || !new_ || nbase == 0 || nnew == 0)
        return CAP_E_MISUSE;
    for (size_t r = 0; r < nbase; r++)
        if (!base[r])
            return CAP_E_MISUSE;
    for (size_t r = 0; r < nnew; r++)
        if (!new_[r])
            return CAP_E_MISUSE;
    return CAP_OK;
}

/* opt (NULL: the defaults) resolved into c->ao and c->so; CAP_E_MISUSE
 * when out of range. */
static cap_result options_resolve(diff_ctx *c, const an_diff_options *opt)
{
    if (opt)
        c->ao = *opt;
    else
        memset(&c->ao, 0, sizeof c->ao);
    if (c->ao.floor_share_pct == 0.0)
        c->ao.floor_share_pct = AN_DIFF_DEFAULT_FLOOR_SHARE_PCT;
    if (cap_diff_options_resolve(&c->so, &c->ao.stat) != CAP_OK ||
        !(c->ao.floor_us >= 0.0 && c->ao.floor_us < INFINITY) ||
        !(c->ao.floor_share_pct > 0.0 && c->ao.floor_share_pct < INFINITY))
        return CAP_E_MISUSE;
    return CAP_OK;
}

/* The floor (ms a frame): floor_us, or floor_share_pct of the base runs'
 * median frame time when larger. CAP_E_NOMEM when out of memory. */
static cap_result floor_set(an_diff *out, diff_ctx *c,
                            const an_capture *const *base)
{
    double frame_med = median_frame_ms(base, c->nbase);
    if (isnan(frame_med))
        return CAP_E_NOMEM;
    double floor_ms = c->ao.floor_us / 1000.0;
    if (c->ao.floor_share_pct / 100.0 * frame_med > floor_ms)
        floor_ms = c->ao.floor_share_pct / 100.0 * frame_med;
    out->floor_ms = c->floor_ms = floor_ms;
    out->frame_ms = frame_med;
    out->floor_share_pct = floor_ms > c->ao.floor_us / 1000.0
                               ? c->ao.floor_share_pct
                               : 0.0;
    return CAP_OK;
}

/* c->run: the base runs then the new ones; the block size (fewer frames
 * when the shortest run would not give min_frames blocks; the same on
 * both sides), frames a side, and whether any run is summarised. Returns
 * the scopes of every run, or (size_t)-1 when out of memory. */
static size_t runs_gather(an_diff *out, diff_ctx *c,
                          const an_capture *const *base,
                          const an_capture *const *new_)
{
    c->run = calloc(c->nruns, sizeof *c->run);
    if (!c->run)
        return (size_t)-1;
    for (size_t r = 0; r < c->nbase; r++)
        c->run[r] = base[r];
    for (size_t r = 0; r < c->nnew; r++)
        c->run[c->nbase + r] = new_[r];
    size_t block = c->ao.block ? c->ao.block : AN_DIFF_DEFAULT_BLOCK;
    size_t shorter = c->run[0]->nframes, scopes = 0;
    for (size_t r = 0; r < c->nruns; r++) {
        const an_capture *m = c->run[r];
        if (m->nframes < shorter)
            shorter = m->nframes;
        scopes += m->nscopes;
        *(r < c->nbase ? &c->base_frames : &c->new_frames) += m->nframes;
        c->weighted |= m->approx;
        out->late_values += m->late_values;
    }
    if (block > 1 && shorter / block < c->so.min_frames)
        block = shorter / c->so.min_frames > 1 ? shorter / c->so.min_frames
                                               : 1;
    out->block = c->block = block;
    out->approx = c->weighted;
    return scopes;
}

/* The rows' and buffers' memory for `scopes` scopes at most, each run's
 * block sums, and each run indexed by key. CAP_E_NOMEM when out of
 * memory. */
static cap_result ctx_alloc(diff_ctx *c, size_t scopes,
                            const an_diff_sums *const *base_sums,
                            const an_diff_sums *const *new_sums)
{
    size_t cap = 1 + scopes, nruns = c->nruns;
    c->rows = calloc(cap, sizeof *c->rows);
    c->in = calloc(c->weighted ? 1 : cap, sizeof *c->in);
    c->owned = calloc(c->weighted ? 2 : 2 * cap, sizeof *c->owned);
    c->res = calloc(cap, sizeof *c->res);
    c->keys = calloc(cap, sizeof *c->keys);
    c->at = calloc(nruns, sizeof *c->at);
    c->wb = calloc(nruns, sizeof *c->wb);
    c->sums = calloc(nruns, sizeof *c->sums);
    c->scanned = calloc(nruns, sizeof *c->scanned);
    c->tab = calloc(nruns + 1, sizeof *c->tab); /* each run's, all */
    if (!c->rows || !c->in || !c->owned || !c->res || !c->keys || !c->at ||
        !c->wb || !c->sums || !c->scanned || !c->tab ||
        index_runs(c->tab, c->run, nruns) != 0)
        return CAP_E_NOMEM;
    for (size_t q = 0; q < nruns; q++)
        c->sums[q] = q < c->nbase ? (base_sums ? base_sums[q] : NULL)
                                  : (new_sums ? new_sums[q - c->nbase] : NULL);
    return CAP_OK;
}

/* Frees what ctx_alloc and runs_gather took, but the rows handed out. */
static void ctx_free(diff_ctx *c)
{
    if (c->owned)
        for (size_t i = 0; i < c->nowned; i++) {
            free(c->owned[i].v);
            free(c->owned[i].run_n);
        }
    free(c->owned);
    free(c->in);
    free(c->res);
    free(c->rows);
    free(c->keys);
    free(c->at);
    if (c->wb)
        for (size_t q = 0; q < c->nruns; q++)
            wb_free(&c->wb[q]);
    free(c->wb);
    free(c->sums);
    if (c->scanned)
        for (size_t q = 0; q < c->nruns; q++)
            an_diff_sums_free(c->scanned[q]);
    free(c->scanned);
    if (c->tab)
        for (size_t q = 0; q <= c->nruns; q++)
            an_keytab_free(&c->tab[q]);
    free(c->tab);
    free(c->run);
}

/* Every scope key of every run, in the order first met (base runs first):
 * the order does not matter, rows are sorted at the end. */
static cap_result keys_collect(diff_ctx *c)
{
    for (size_t q = 0; q < c->nruns; q++)
        for (size_t i = 0; i < c->run[q]->nscopes; i++) {
            const an_scope *s = &c->run[q]->scopes[i];
            int added =
                an_keytab_put(&c->tab[c->nruns], s->kind, key_of(s), 0);
            if (added < 0)
                return CAP_E_NOMEM;
            if (added)
                c->keys[c->nkeys++] = (row_key){s->kind, key_of(s), s};
        }
    return CAP_OK;
}

/* Adds run q's `ms` to row's total on q's side. */
static void total_add(const diff_ctx *c, an_diff_row *row, size_t q,
                      double ms)
{
    *(q < c->nbase ? &row->base_total_ms : &row->new_total_ms) += ms;
}

/* Compares the row's weighted samples (c->wb, one per run), into res, and
 * empties them. */
static cap_result row_compare_w(diff_ctx *c, cap_diffstat *res,
                                cap_result r)
{
    if (r == CAP_OK)
        r = compare_w(res, c->wb, c->nbase, c->nnew, c->floor_ms, &c->so);
    for (size_t q = 0; q < c->nruns; q++)
        wb_free(&c->wb[q]);
    return r;
}

/* The "(frame)" row, rows[0]: the frame times of every run. */
static cap_result frame_row(diff_ctx *c)
{
    an_diff_row *row = &c->rows[0];
    row->is_frame = 1;
    row->name = "(frame)";
    row->block = 1;
    cap_result r = CAP_OK;
    if (c->weighted) {
        for (size_t q = 0; q < c->nruns && r == CAP_OK; q++) {
            if (frame_wsample(&c->wb[q], c->run[q]) != 0)
                r = CAP_E_NOMEM;
            total_add(c, row, q, (double)an_total_frame_ns(c->run[q]) / 1e6);
        }
        return row_compare_w(c, &c->res[0], r);
    }
    side_samples *sb, *sn;
    if (sides_new(&sb, &sn, c->owned, &c->nowned, c->nbase, c->nnew) != 0)
        return CAP_E_NOMEM;
    for (size_t q = 0; q < c->nruns; q++) {
        size_t k = 0;
        double *x = frame_samples(c->run[q], &k);
        if (side_append(q < c->nbase ? sb : sn,
                        q < c->nbase ? q : q - c->nbase, x, k) != 0)
            return CAP_E_NOMEM;
        total_add(c, row, q, (double)an_total_frame_ns(c->run[q]) / 1e6);
    }
    c->in[0] = input_of(sb, c->nbase, sn, c->nnew, c->floor_ms);
    return CAP_OK;
}

/* Whether scope s makes a row: 0 when only_scope names another, -1 when
 * an exclude pattern drops it (counted in out->excluded), 1 when it does. */
static int row_wanted(an_diff *out, const diff_ctx *c, const an_scope *s)
{
    const an_diff_options *ao = &c->ao;
    if (ao->only_scope && strcmp(s->name, ao->only_scope) != 0)
        return 0;
    if (matches_any(key_of(s), ao->exclude, ao->nexclude) ||
        (s->path && matches_any(s->name, ao->exclude, ao->nexclude))) {
        out->excluded++;
        return -1;
    }
    return 1;
}

/* Where the row's scope is in each run (c->at) and its frames per sample:
 * frame by frame when it ran in nearly every frame of every run, over
 * blocks otherwise, and frame by frame when one side lacks it (added or
 * removed). Marks the row a wait when a run tagged it one. */
static size_t row_locate(diff_ctx *c, an_diff_row *row, const an_scope *s)
{
    int in_base = 0, in_new = 0, every = 1;
    for (size_t q = 0; q < c->nruns; q++) {
        c->at[q] = find_match(&c->tab[q], s);
        if (c->at[q] < 0) {
            every = 0;
            continue;
        }
        const an_scope *t = &c->run[q]->scopes[c->at[q]];
        row->is_wait |= t->is_wait;
        *(q < c->nbase ? &in_base : &in_new) = 1;
        if (ran_of(c->run[q], t) * 10 < c->run[q]->nframes * 9)
            every = 0;
    }
    return in_base && in_new && !every ? c->block : 1;
}

/* Run q's block sums of rb frames for scope t when q is summarised and
 * its samples are blocks (made here when the load's are of another size),
 * else NULL; *r CAP_E_NOMEM when out of memory. */
static const an_diff_sums *row_sums(diff_ctx *c, size_t q,
                                   const an_scope *t, size_t rb,
                                   cap_result *r)
{
    const an_capture *m = c->run[q];
    if (!(m->approx && rb > 1 && ran_of(m, t) >= c->so.min_frames))
        return NULL;
    if (!c->sums[q] || c->sums[q]->block != rb) {
        if (!c->scanned[q] && !(c->scanned[q] = sums_scan(m, rb)))
            *r = CAP_E_NOMEM;
        c->sums[q] = c->scanned[q];
    }
    return c->sums[q];
}

/* Row n's samples as weighted samples, compared at once. */
static cap_result scope_row_w(diff_ctx *c, an_diff_row *row, size_t rb)
{
    cap_result r = CAP_OK;
    for (size_t q = 0; q < c->nruns && r == CAP_OK; q++) {
        if (c->at[q] < 0)
            continue;
        const an_capture *m = c->run[q];
        const an_scope *t = &m->scopes[c->at[q]];
        const an_diff_sums *sm = row_sums(c, q, t, rb, &r);
        if (r == CAP_OK &&
            scope_wsample(&c->wb[q], m, t, (size_t)c->at[q], rb,
                          c->so.min_frames, sm) != 0)
            r = CAP_E_NOMEM;
        total_add(c, row, q,
                  m->approx ? t->pf_hist.sum / 1e6
                            : scope_frame_total_ms(m, t));
    }
    return row_compare_w(c, &c->res[c->n], r);
}

/* Row n's samples, each side pooled, into c->in[n] (compared later,
 * every row at once). */
static cap_result scope_row_exact(diff_ctx *c, an_diff_row *row, size_t rb)
{
    side_samples *sb, *sn;
    if (sides_new(&sb, &sn, c->owned, &c->nowned, c->nbase, c->nnew) != 0)
        return CAP_E_NOMEM;
    for (size_t q = 0; q < c->nruns; q++) {
        size_t cnt = 0;
        double *x;
        if (c->at[q] >= 0) {
            const an_scope *t = &c->run[q]->scopes[c->at[q]];
            x = scope_samples(c->run[q], t, rb, c->so.min_frames, &cnt);
            total_add(c, row, q, scope_frame_total_ms(c->run[q], t));
        } else {
            x = calloc(1, sizeof *x);
        }
        if (side_append(q < c->nbase ? sb : sn,
                        q < c->nbase ? q : q - c->nbase, x, cnt) != 0)
            return CAP_E_NOMEM;
    }
    c->in[c->n] = input_of(sb, c->nbase, sn, c->nnew, c->floor_ms);
    return CAP_OK;
}

/* A row for each key that is wanted, after the frame row. */
static cap_result scope_rows(an_diff *out, diff_ctx *c)
{
    const an_diff_options *ao = &c->ao;
    for (size_t k = 0; k < c->nkeys; k++) {
        const an_scope *s = c->keys[k].first;
        if (row_wanted(out, c, s) <= 0)
            continue;
        an_diff_row *row = &c->rows[c->n];
        row->kind = s->kind;
        row->name = key_of(s);
        row->is_wait = matches_any(key_of(s), ao->wait, ao->nwait) ||
                       (s->path && matches_any(s->name, ao->wait, ao->nwait));
        size_t rb = row_locate(c, row, s);
        row->block = rb;
        cap_result r = c->weighted ? scope_row_w(c, row, rb)
                                   : scope_row_exact(c, row, rb);
        if (r != CAP_OK)
            return r;
        c->n++;
    }
    return CAP_OK;
}

/* Values past the budget the block sums met, added to out->late_values. */
static void late_values_add(an_diff *out, const diff_ctx *c)
{
    for (size_t q = 0; q < c->nruns; q++)
        if (c->scanned[q])
            out->late_values += c->scanned[q]->late;
        else if (c->run[q]->approx && c->sums[q])
            out->late_values += c->sums[q]->late;
}

/* Each row's statistics, means, order and gating, and out's counts. */
static void rows_finish(an_diff *out, const diff_ctx *c)
{
    const an_diff_options *ao = &c->ao;
    for (size_t i = 0; i < c->n; i++) {
        an_diff_row *row = &c->rows[i];
        const cap_diffstat *d = &c->res[i];
        row->d = *d;
        /* mean self time per frame over all frames of each side's runs */
        double bm = row->base_total_ms /
                    (double)(c->base_frames ? c->base_frames : 1);
        double nm = row->new_total_ms /
                    (double)(c->new_frames ? c->new_frames : 1);
        row->base_mean_ms = bm;
        row->new_mean_ms = nm;
        row->sort_key = fabs(nm - bm);
        if (isnan(row->sort_key))
            row->sort_key = 0;
        row->gates = row->is_frame  ? ao->gate_frame
                     : row->is_wait ? ao->gate_waits
                                    : 1;
        out->waits += (size_t)row->is_wait;
        out->waits_gate |= row->is_wait && row->gates;
        out->tested += !isnan(d->p_adjusted);
        out->within_spread += (size_t)d->within_spread;
        if (d->verdict == CAP_VERDICT_REGRESSED) {
            out->regressed++;
            out->gating += (size_t)row->gates;
        }
        if (d->verdict == CAP_VERDICT_IMPROVED)
            out->improved++;
    }
}

/* How busy the threads kept the machine's CPUs in scopes that are not
 * waits: near 1 a thread waits for a core inside its scopes, and they
 * stretch with where the scheduler put it (section 11). */
static void busy_share(an_diff *out, const diff_ctx *c)
{
    const an_diff_row *rows = c->rows;
    out->cpus = machine_cpus(c->run, c->nruns);
    out->base_busy = out->new_busy = NAN;
    if (!(out->cpus && !c->ao.only_scope && c->n > 0 && rows[0].is_frame &&
          rows[0].base_total_ms > 0 && rows[0].new_total_ms > 0))
        return;
    double bb = 0, nb = 0;
    int waits = 0;
    for (size_t i = 1; i < c->n; i++)
        if (rows[i].kind == AN_CPU && !rows[i].is_wait) {
            bb += rows[i].base_total_ms;
            nb += rows[i].new_total_ms;
        } else if (rows[i].kind == AN_CPU) {
            waits = 1;
        }
    /* with no wait known every blocked thread counts as busy (199 % on
       game_sim's format 1.0 fixtures, whose names carry no flag) */
    if (waits) {
        out->base_busy = bb / (rows[0].base_total_ms * out->cpus);
        out->new_busy = nb / (rows[0].new_total_ms * out->cpus);
    }
}

/* The frames' mix of a light and a heavy group, which no row's shift sees
 * (analysis/diff_mix.c); frame-level, so not with only_scope. */
static cap_result mix_row(an_diff *out, const diff_ctx *c)
{
    cap_result r = an_diff_mix_compute(&out->mix, c->run, c->nbase, c->nnew,
                                       c->floor_ms, &c->so);
    if (r != CAP_OK)
        return r;
    /* a row's median lands on either group of frames and can jump
     * between them (x1.6 in game_sim --bimodal): its mean is shown */
    out->level_of_means = out->mix.found;
    if (out->mix.found) {
        out->mix.gates = !c->ao.only_scope;
        if (out->mix.d.verdict == CAP_VERDICT_REGRESSED) {
            out->regressed++;
            out->gating += (size_t)out->mix.gates;
        }
        if (out->mix.d.verdict == CAP_VERDICT_IMPROVED)
            out->improved++;
    }
    return CAP_OK;
}

/* The one-number summary, over the work that gates: waits (unless
 * gate_waits) shrink and grow with what other threads do, and a median
 * under the floor is timer noise whose ratio can be 20x between two runs
 * of the same program (wait_render in game_sim: 0.2 us -> 0.01 us moved
 * the mean of 56 scopes by -9 %). */
static cap_result geomean_set(an_diff *out, const diff_ctx *c)
{
    if (c->n <= 1)
        return CAP_OK;
    cap_diffstat *g = malloc((c->n - 1) * sizeof *g);
    if (!g)
        return CAP_E_NOMEM;
    /* Frames in two groups: a row's median lands on either group and can
     * jump between them from run to run (x1.6 in game_sim --bimodal), its
     * mean moves with the mix; the summary is then over the means. */
    size_t ng = 0;
    out->geomean_of_means = out->mix.found;
    for (size_t i = 1; i < c->n; i++) {
        cap_diffstat x = c->res[i];
        if (out->geomean_of_means) {
            x.base_median = c->rows[i].base_mean_ms;
            x.new_median = c->rows[i].new_mean_ms;
        }
        if (c->rows[i].gates && x.base_median >= c->floor_ms &&
            x.new_median >= c->floor_ms)
            g[ng++] = x;
    }
    (void)cap_diff_geomean_pct(&out->geomean_pct, &out->geomean_used, g, ng,
                               &c->so);
    free(g);
    return CAP_OK;
}

/* The rows made and compared, each a step. */
static cap_result diff_steps(an_diff *out, diff_ctx *c)
{
    cap_result r;
    if ((r = keys_collect(c)) != CAP_OK || (r = frame_row(c)) != CAP_OK)
        return r;
    c->n = 1;
    if ((r = scope_rows(out, c)) != CAP_OK)
        return r;
    r = c->weighted ? cap_diff_adjust(c->res, c->n, &c->so)
                    : cap_diff_compare_all(c->res, c->in, c->n, &c->so);
    if (r != CAP_OK)
        return r;
    late_values_add(out, c);
    rows_finish(out, c);
    busy_share(out, c);
    if ((r = mix_row(out, c)) != CAP_OK || (r = geomean_set(out, c)) != CAP_OK)
        return r;
    qsort(c->rows, c->n, sizeof *c->rows, row_cmp);
    out->rows = c->rows;
    out->n = c->n;
    c->rows = NULL;
    return CAP_OK;
}

cap_result an_diff_runs_sums(an_diff *out, const an_capture *const *base,
                             const an_diff_sums *const *base_sums,
                             size_t nbase, const an_capture *const *new_,
                             const an_diff_sums *const *new_sums, size_t nnew,
                             const an_diff_options *opt)
{
    diff_ctx c;
    memset(&c, 0, sizeof c);
    c.nbase = nbase;
    c.nnew = nnew;
    c.nruns = nbase + nnew;
    if (!out || runs_given(base, nbase, new_, nnew) != CAP_OK ||
        options_resolve(&c, opt) != CAP_OK)
        return CAP_E_MISUSE;
    memset(out, 0, sizeof *out);
    out->geomean_pct = NAN;
    out->base_runs = nbase;
    out->new_runs = nnew;
    cap_result r = floor_set(out, &c, base);
    if (r != CAP_OK)
        return r;
    size_t scopes = runs_gather(out, &c, base, new_);
    if (scopes == (size_t)-1)
        return CAP_E_NOMEM;
    r = ctx_alloc(&c, scopes, base_sums, new_sums);
    if (r == CAP_OK)
        r = diff_steps(out, &c);
    ctx_free(&c);
    return r;
}

cap_result an_diff_runs(an_diff *out, const an_capture *const *base,
                        size_t nbase, const an_capture *const *new_,
                        size_t nnew, const an_diff_options *opt)
{
    return an_diff_runs_sums(out, base, NULL, nbase, new_, NULL, nnew, opt);
}

cap_result an_diff_run_opts(an_diff *out, const an_capture *base,
                            const an_capture *new_, const an_diff_options *opt)
{
    return an_diff_runs(out, &base, 1, &new_, 1, opt);
}

cap_result an_diff_run(an_diff *out, const an_capture *base,
                       const an_capture *new_, const cap_diff_options *opt,
                       const char *only_scope)
{
    an_diff_options ao;
    memset(&ao, 0, sizeof ao);
    if (opt)
        ao.stat = *opt;
    ao.only_scope = only_scope;
    return an_diff_run_opts(out, base, new_, &ao);
}

void an_diff_free(an_diff *d)
{
    if (d)
        free(d->rows);
}

/* ---- loading the runs, several at once --------------------------------- */

typedef struct load_job {
    const char *const *paths;
    size_t n;
    an_options lo;
    size_t block0, min_frames;
    an_capture **m;
    an_diff_sums **sums;
    cap_result *rc;
    char (*detail)[400];
    size_t next;
    pthread_mutex_t mu;
} load_job;

static void load_one(load_job *j, size_t i)
{
    an_options o = j->lo;
    j->sums[i] = sums_new(j->block0, j->min_frames);
    if (!j->sums[i]) {
        j->rc[i] = CAP_E_NOMEM;
        snprintf(j->detail[i], sizeof j->detail[i], "out of memory");
        return;
    }
    o.summary_fn = sums_hook;
    o.frame_work = 1; /* the (heavy frames) row's CPU work under a cap */
    o.summary_reset = sums_reset;
    o.summary_ctx = j->sums[i];
    j->rc[i] = an_load(&j->m[i], j->paths[i], &o, j->detail[i],
                       sizeof j->detail[i]);
    if (j->rc[i] == CAP_OK) {
        sums_finish(j->sums[i]);
        if (j->sums[i]->failed) {
            j->rc[i] = CAP_E_NOMEM;
            snprintf(j->detail[i], sizeof j->detail[i], "out of memory");
        }
    }
}

static void *load_worker(void *p)
{
    load_job *j = p;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        size_t i = j->next++;
        pthread_mutex_unlock(&j->mu);
        if (i >= j->n)
            return NULL;
        load_one(j, i);
    }
}

cap_result an_diff_load(an_capture **m, an_diff_sums **sums,
                        const char *const *paths, size_t n,
                        const an_options *lo, const an_diff_options *opt,
                        size_t threads, size_t *failed, char *detail,
                        size_t detail_size)
{
    if (!m || !sums || !paths || !failed)
        return CAP_E_MISUSE;
    an_diff_options ao;
    if (opt)
        ao = *opt;
    else
        memset(&ao, 0, sizeof ao);
    cap_diff_options so;
    if (cap_diff_options_resolve(&so, &ao.stat) != CAP_OK) /* an_diff_runs */
        cap_diff_options_resolve(&so, NULL); /* will say so: plan with the
                                                defaults meanwhile */
    if (!threads) {
        const char *e = getenv("CAP_READ_THREADS");
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = e && strcmp(e, "1") == 0 ? 1 : cores > 1 ? (size_t)cores : 1;
    }
    if (threads > n)
        threads = n;
    load_job j;
    memset(&j, 0, sizeof j);
    if (lo)
        j.lo = *lo;
    if (threads > 1 && j.lo.threads == 0) { /* the cores shared out */
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        const char *e = getenv("CAP_READ_THREADS");
        if (e && atoi(e) > 0)
            cores = atoi(e);
        size_t each = cores > 0 ? (size_t)cores / threads : 1;
        j.lo.threads = each > 2 ? (int)each : 2; /* chunks (model.h) */
    }
    j.paths = paths;
    j.n = n;
    j.block0 = ao.block;
    j.min_frames = so.min_frames;
    j.m = m;
    j.sums = sums;
    j.rc = calloc(n ? n : 1, sizeof *j.rc);
    j.detail = calloc(n ? n : 1, sizeof *j.detail);
    pthread_t *tid = calloc(threads ? threads : 1, sizeof *tid);
    if (!j.rc || !j.detail || !tid) {
        free(j.rc);
        free(j.detail);
        free(tid);
        *failed = 0;
        if (detail_size)
            snprintf(detail, detail_size, "out of memory");
        return CAP_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        m[i] = NULL;
        sums[i] = NULL;
    }
    pthread_mutex_init(&j.mu, NULL);
    size_t started = 0;
    for (size_t t = 1; t < threads; t++) {
        if (pthread_create(&tid[t], NULL, load_worker, &j) != 0)
            break;
        started++;
    }
    load_worker(&j); /* the calling thread is one of them */
    for (size_t t = 1; t <= started; t++)
        pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&j.mu);
    cap_result r = CAP_OK;
    for (size_t i = 0; i < n && r == CAP_OK; i++)
        if (j.rc[i] != CAP_OK) {
            r = j.rc[i];
            *failed = i;
            if (detail_size)
                snprintf(detail, detail_size, "%s", j.detail[i]);
        }
    if (r != CAP_OK)
        for (size_t i = 0; i < n; i++) {
            an_free(m[i]);
            an_diff_sums_free(sums[i]);
            m[i] = NULL;
            sums[i] = NULL;
        }
    free(j.rc);
    free(j.detail);
    free(tid);
    return r;
}
