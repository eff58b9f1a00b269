/* diff.c - match scopes across two captures and compare their samples. */
#include "diff.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

static long find_match(const an_capture *m, const an_scope *s)
{
    for (size_t i = 0; i < m->nscopes; i++)
        if (m->scopes[i].kind == s->kind &&
            strcmp(key_of(&m->scopes[i]), key_of(s)) == 0)
            return (long)i;
    return -1;
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

cap_result an_diff_runs(an_diff *out, const an_capture *const *base,
                        size_t nbase, const an_capture *const *new_,
                        size_t nnew, const an_diff_options *opt)
{
    if (!out || !base || !new_ || nbase == 0 || nnew == 0)
        return CAP_E_MISUSE;
    for (size_t r = 0; r < nbase; r++)
        if (!base[r])
            return CAP_E_MISUSE;
    for (size_t r = 0; r < nnew; r++)
        if (!new_[r])
            return CAP_E_MISUSE;
    an_diff_options ao;
    if (opt)
        ao = *opt;
    else
        memset(&ao, 0, sizeof ao);
    if (ao.floor_share_pct == 0.0)
        ao.floor_share_pct = AN_DIFF_DEFAULT_FLOOR_SHARE_PCT;
    cap_diff_options so;
    if (cap_diff_options_resolve(&so, &ao.stat) != CAP_OK ||
        !(ao.floor_us >= 0.0 && ao.floor_us < INFINITY) ||
        !(ao.floor_share_pct > 0.0 && ao.floor_share_pct < INFINITY))
        return CAP_E_MISUSE;
    memset(out, 0, sizeof *out);
    out->geomean_pct = NAN;
    out->base_runs = nbase;
    out->new_runs = nnew;
    double frame_med = median_frame_ms(base, nbase);
    if (isnan(frame_med))
        return CAP_E_NOMEM;
    double floor_ms = ao.floor_us / 1000.0;
    if (ao.floor_share_pct / 100.0 * frame_med > floor_ms)
        floor_ms = ao.floor_share_pct / 100.0 * frame_med;
    out->floor_ms = floor_ms;
    /* Blocks of `block` frames, fewer when the shortest run would not give
     * min_frames of them; the same size on both sides. */
    size_t nruns = nbase + nnew;
    const an_capture **run = calloc(nruns, sizeof *run);
    if (!run)
        return CAP_E_NOMEM;
    for (size_t r = 0; r < nbase; r++)
        run[r] = base[r];
    for (size_t r = 0; r < nnew; r++)
        run[nbase + r] = new_[r];
    size_t block = ao.block ? ao.block : AN_DIFF_DEFAULT_BLOCK;
    size_t shorter = run[0]->nframes;
    size_t scopes = 0, base_frames = 0, new_frames = 0;
    for (size_t r = 0; r < nruns; r++) {
        if (run[r]->nframes < shorter)
            shorter = run[r]->nframes;
        scopes += run[r]->nscopes;
        *(r < nbase ? &base_frames : &new_frames) += run[r]->nframes;
    }
    if (block > 1 && shorter / block < so.min_frames)
        block = shorter / so.min_frames > 1 ? shorter / so.min_frames : 1;
    out->block = block;
    out->frame_ms = frame_med;
    out->floor_share_pct = floor_ms > ao.floor_us / 1000.0 ? ao.floor_share_pct
                                                           : 0.0;
    size_t cap = 1 + scopes;
    an_diff_row *rows = calloc(cap, sizeof *rows);
    cap_diff_input *in = calloc(cap, sizeof *in);
    side_samples *owned = calloc(2 * cap, sizeof *owned);
    cap_diffstat *res = calloc(cap, sizeof *res);
    row_key *keys = calloc(cap, sizeof *keys);
    long *at = calloc(nruns, sizeof *at);
    size_t n = 0, nowned = 0, nkeys = 0;
    cap_result r = CAP_OK;
    if (!rows || !in || !owned || !res || !keys || !at) {
        r = CAP_E_NOMEM;
        goto done;
    }
    /* every scope key of every run, in the order first met (base runs
     * first): the order does not matter, rows are sorted at the end */
    for (size_t q = 0; q < nruns; q++)
        for (size_t i = 0; i < run[q]->nscopes; i++) {
            const an_scope *s = &run[q]->scopes[i];
            int seen = 0;
            for (size_t k = 0; k < nkeys && !seen; k++)
                seen = keys[k].kind == s->kind &&
                       strcmp(keys[k].key, key_of(s)) == 0;
            if (!seen)
                keys[nkeys++] = (row_key){s->kind, key_of(s), s};
        }
    /* the frame row */
    rows[0].is_frame = 1;
    rows[0].name = "(frame)";
    rows[0].block = 1;
    {
        side_samples *sb, *sn;
        if (sides_new(&sb, &sn, owned, &nowned, nbase, nnew) != 0) {
            r = CAP_E_NOMEM;
            goto done;
        }
        for (size_t q = 0; q < nruns; q++) {
            size_t k = 0;
            double *x = frame_samples(run[q], &k);
            if (side_append(q < nbase ? sb : sn, q < nbase ? q : q - nbase,
                            x, k) != 0) {
                r = CAP_E_NOMEM;
                goto done;
            }
            *(q < nbase ? &rows[0].base_total_ms : &rows[0].new_total_ms) +=
                (double)an_total_frame_ns(run[q]) / 1e6;
        }
        in[0] = input_of(sb, nbase, sn, nnew, floor_ms);
    }
    n = 1;
    for (size_t k = 0; k < nkeys; k++) {
        const an_scope *s = keys[k].first;
        if (ao.only_scope && strcmp(s->name, ao.only_scope) != 0)
            continue;
        if (matches_any(key_of(s), ao.exclude, ao.nexclude) ||
            (s->path && matches_any(s->name, ao.exclude, ao.nexclude))) {
            out->excluded++;
            continue;
        }
        an_diff_row *row = &rows[n];
        row->kind = s->kind;
        row->name = key_of(s);
        row->is_wait = matches_any(key_of(s), ao.wait, ao.nwait) ||
                       (s->path && matches_any(s->name, ao.wait, ao.nwait));
        /* where the scope is in each run; frame by frame when it ran in
         * nearly every frame of every run, over blocks otherwise, and
         * frame by frame when one side lacks it (added or removed) */
        int in_base = 0, in_new = 0, every = 1;
        for (size_t q = 0; q < nruns; q++) {
            at[q] = find_match(run[q], s);
            if (at[q] < 0) {
                every = 0;
                continue;
            }
            const an_scope *t = &run[q]->scopes[at[q]];
            row->is_wait |= t->is_wait;
            *(q < nbase ? &in_base : &in_new) = 1;
            if (frames_ran(run[q], t) * 10 < run[q]->nframes * 9)
                every = 0;
        }
        size_t rb = in_base && in_new && !every ? block : 1;
        row->block = rb;
        side_samples *sb, *sn;
        if (sides_new(&sb, &sn, owned, &nowned, nbase, nnew) != 0) {
            r = CAP_E_NOMEM;
            goto done;
        }
        for (size_t q = 0; q < nruns; q++) {
            size_t cnt = 0;
            double *x;
            if (at[q] >= 0) {
                const an_scope *t = &run[q]->scopes[at[q]];
                x = scope_samples(run[q], t, rb, so.min_frames, &cnt);
                *(q < nbase ? &row->base_total_ms : &row->new_total_ms) +=
                    scope_frame_total_ms(run[q], t);
            } else {
                x = calloc(1, sizeof *x);
            }
            if (side_append(q < nbase ? sb : sn, q < nbase ? q : q - nbase,
                            x, cnt) != 0) {
                r = CAP_E_NOMEM;
                goto done;
            }
        }
        in[n] = input_of(sb, nbase, sn, nnew, floor_ms); /* per frame */
        n++;
    }
    r = cap_diff_compare_all(res, in, n, &so);
    if (r != CAP_OK)
        goto done;
    for (size_t i = 0; i < n; i++) {
        rows[i].d = res[i];
        /* mean self time per frame over all frames of each side's runs */
        double bm = rows[i].base_total_ms /
                    (double)(base_frames ? base_frames : 1);
        double nm = rows[i].new_total_ms /
                    (double)(new_frames ? new_frames : 1);
        rows[i].base_mean_ms = bm;
        rows[i].new_mean_ms = nm;
        rows[i].sort_key = fabs(nm - bm);
        if (isnan(rows[i].sort_key))
            rows[i].sort_key = 0;
        rows[i].gates = rows[i].is_frame  ? ao.gate_frame
                        : rows[i].is_wait ? ao.gate_waits
                                          : 1;
        out->waits += (size_t)rows[i].is_wait;
        out->waits_gate |= rows[i].is_wait && rows[i].gates;
        out->tested += !isnan(res[i].p_adjusted);
        out->within_spread += (size_t)res[i].within_spread;
        if (res[i].verdict == CAP_VERDICT_REGRESSED) {
            out->regressed++;
            out->gating += (size_t)rows[i].gates;
        }
        if (res[i].verdict == CAP_VERDICT_IMPROVED)
            out->improved++;
    }
    if (n > 1)
        (void)cap_diff_geomean_pct(&out->geomean_pct, &out->geomean_used,
                                   res + 1, n - 1, &so);
    qsort(rows, n, sizeof *rows, row_cmp);
    out->rows = rows;
    out->n = n;
    rows = NULL;
done:
    if (owned)
        for (size_t i = 0; i < nowned; i++) {
            free(owned[i].v);
            free(owned[i].run_n);
        }
    free(owned);
    free(in);
    free(res);
    free(rows);
    free(keys);
    free(at);
    free(run);
    return r;
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
