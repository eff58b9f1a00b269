/*
 * diffstat.c - per-scope A/B comparison and verdicts (see diffstat.h).
 *
 * Flow: cap_diff_compare describes both sides, measures the shift with its
 * order-statistic interval, and tests it against the band (two one-sided,
 * shifted Mann-Whitney tests); then cap_diff_adjust corrects the p-values
 * of the scopes compared together (Holm) and judges each scope by the
 * verdict rule. The statistics
 * themselves live in stats.c.
 */
#include "diffstat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* ---- verdict names -------------------------------------------------- */

const char *cap_verdict_name(cap_verdict v)
{
    switch (v) {
#define CAP__VERDICT_NAME(name, label, meaning)                                \
    case name:                                                                 \
        return label;
        CAP_VERDICT_LIST(CAP__VERDICT_NAME)
#undef CAP__VERDICT_NAME
    case CAP_VERDICT_COUNT:
        break;
    }
    return "unknown";
}

const char *cap_verdict_message(cap_verdict v)
{
    switch (v) {
#define CAP__VERDICT_MESSAGE(name, label, meaning)                             \
    case name:                                                                 \
        return meaning;
        CAP_VERDICT_LIST(CAP__VERDICT_MESSAGE)
#undef CAP__VERDICT_MESSAGE
    case CAP_VERDICT_COUNT:
        break;
    }
    return "unknown verdict";
}

/* ---- options --------------------------------------------------------- */

cap_result cap_diff_options_resolve(cap_diff_options *resolved,
                                    const cap_diff_options *opt)
{
    if (!resolved)
        return CAP_E_MISUSE;
    cap_diff_options o;
    if (opt)
        o = *opt;
    else
        memset(&o, 0, sizeof o);
    if (o.threshold_pct == 0.0)
        o.threshold_pct = CAP_DIFF_DEFAULT_THRESHOLD_PCT;
    if (o.alpha == 0.0)
        o.alpha = CAP_DIFF_DEFAULT_ALPHA;
    if (o.min_frames == 0)
        o.min_frames = CAP_DIFF_DEFAULT_MIN_FRAMES;
    if (o.resamples == 0)
        o.resamples = CAP_DIFF_DEFAULT_RESAMPLES;
    if (!(o.threshold_pct > 0.0 && o.threshold_pct < INFINITY))
        return CAP_E_MISUSE;
    if (!(o.alpha > 0.0 && o.alpha < 0.5))
        return CAP_E_MISUSE;
    *resolved = o;
    return CAP_OK;
}

/* ---- the verdict rule ------------------------------------------------ */

/* Enough samples on each side, and in each run when there are several. */
static int has_enough(const cap_diffstat *r, const cap_diff_options *o)
{
    return r->base_n >= o->min_frames && r->new_n >= o->min_frames &&
           (r->base_runs + r->new_runs <= 2 || r->min_run_n >= o->min_frames);
}

/* The rule of diffstat.h, under resolved options. */
static cap_verdict judge(const cap_diffstat *r, const cap_diff_options *o)
{
    if (r->base_n == 0 && r->new_n == 0)
        return CAP_VERDICT_INSUFFICIENT;
    if (r->base_n == 0)
        return CAP_VERDICT_ADDED;
    if (r->new_n == 0)
        return CAP_VERDICT_REMOVED;
    if (!has_enough(r, o))
        return CAP_VERDICT_INSUFFICIENT;
    double p = r->p_adjusted, lo = r->ci_low_ms, hi = r->ci_high_ms;
    double thr = r->band_ms;
    if (isnan(p) || isnan(lo) || isnan(hi) || isnan(thr))
        return CAP_VERDICT_INCONCLUSIVE;
    if (p < o->alpha && lo > thr)
        return CAP_VERDICT_REGRESSED;
    if (p < o->alpha && hi < -thr)
        return CAP_VERDICT_IMPROVED;
    if (-thr <= lo && hi <= thr)
        return CAP_VERDICT_UNCHANGED;
    return CAP_VERDICT_INCONCLUSIVE;
}

cap_result cap_diff_verdict(cap_verdict *out, const cap_diffstat *r,
                            const cap_diff_options *opt)
{
    cap_diff_options o;
    if (!out || !r || cap_diff_options_resolve(&o, opt) != CAP_OK)
        return CAP_E_MISUSE;
    *out = judge(r, &o);
    return CAP_OK;
}

/* ---- one scope ------------------------------------------------------- */

static int durations_ok(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(x[i] >= 0.0 && x[i] < INFINITY))
            return 0;
    return 1;
}

/* One side of a comparison: plain samples x[0..n) in runs of run_n[]
 * (runs 0: one run), or, with w set, a weighted sample (w: every run's
 * pooled; wrun[0..runs): each run's, runs 0: one run). */
typedef struct side {
    const double *x;
    size_t n;
    const size_t *run_n;
    size_t runs;
    const cap_wsample *w;
    const cap_wsample *wrun;
} side;

/* Values of a side that are durations (>= 0, finite). */
static int side_ok(const side *s)
{
    if (!s->w)
        return durations_ok(s->x, s->n);
    for (size_t i = 0; i < s->w->k; i++)
        if (!(s->w->v[i] >= 0.0 && s->w->v[i] < INFINITY))
            return 0;
    return 1;
}

/* Run counts of one side: `runs` runs of run_n[] samples (runs 0: one
 * run of n). Returns 0 when they do not add up to n. */
static int runs_ok(const side *s)
{
    if (s->runs == 0)
        return 1;
    if (!s->w && !s->run_n)
        return 0;
    if (s->w && !s->wrun)
        return 0;
    size_t sum = 0;
    for (size_t i = 0; i < s->runs; i++) {
        size_t m = s->w ? (size_t)cap_wsample_size(&s->wrun[i]) : s->run_n[i];
        if (m > s->n - sum)
            return 0;
        sum += m;
    }
    return sum == s->n;
}

/* Samples in run i of a side. */
static size_t run_size(const side *s, size_t i)
{
    if (s->runs == 0)
        return s->n;
    return s->w ? (size_t)cap_wsample_size(&s->wrun[i]) : s->run_n[i];
}

/* Median, mean and p95 of a side (NaN when it is empty), sorting a copy
 * of plain samples in scratch. */
static void describe(const side *s, double *scratch, double *median,
                     double *mean, double *p95)
{
    if (s->n == 0) {
        *median = *mean = *p95 = NAN;
        return;
    }
    if (s->w) {
        *median = cap_stats_wquantile(s->w, 0.5);
        *p95 = cap_stats_wquantile(s->w, 0.95);
        *mean = cap_stats_wmean(s->w);
        return;
    }
    memcpy(scratch, s->x, s->n * sizeof *scratch);
    cap_stats_sort(scratch, s->n);
    *median = cap_stats_median_sorted(scratch, s->n);
    *p95 = cap_stats_quantile_sorted(scratch, s->n, 0.95);
    *mean = cap_stats_mean(s->x, s->n);
}

/* v relative to the base median, in percent, with the zero guard. */
static double rel_pct(double v, double base_median)
{
    if (isnan(v) || isnan(base_median))
        return NAN;
    if (base_median == 0.0)
        return v == 0.0 ? 0.0 : v > 0.0 ? INFINITY : -INFINITY;
    return v / base_median * 100.0;
}

/* Medians of each run of a side into med[], plain samples in scratch. */
static void run_medians(double *med, const side *s, double *scratch)
{
    size_t k = s->runs ? s->runs : 1, at = 0;
    for (size_t i = 0; i < k; i++) {
        size_t m = run_size(s, i);
        if (s->w) {
            med[i] = m ? cap_stats_wquantile(s->runs ? &s->wrun[i] : s->w,
                                             0.5)
                       : NAN;
            continue;
        }
        memcpy(scratch, s->x + at, m * sizeof *scratch);
        med[i] = m ? cap_stats_median_select(scratch, m) : NAN;
        at += m;
    }
}

/* The smallest run count of a side. */
static size_t min_run(const side *s)
{
    size_t k = s->runs ? s->runs : 1, m = run_size(s, 0);
    for (size_t i = 1; i < k; i++)
        if (run_size(s, i) < m)
            m = run_size(s, i);
    return m;
}

/* Sum of squared deviations of v[0..k) from their mean, and the mean. */
static double sum_sq(const double *v, size_t k, double *mean)
{
    double s = 0;
    for (size_t i = 0; i < k; i++)
        s += v[i];
    *mean = s / (double)k;
    double q = 0;
    for (size_t i = 0; i < k; i++)
        q += (v[i] - *mean) * (v[i] - *mean);
    return q;
}

/* The between-run test of section 15 of docs/STATISTICS.md on the run
 * medians mb[0..kb) and mn[0..kn) (kb + kn >= 3), against `band`, at
 * level alpha: fills r's run_* fields. */
static void run_test(cap_diffstat *r, const double *mb, size_t kb,
                     const double *mn, size_t kn, double band, double alpha)
{
    double mean_b, mean_n;
    double ss_b = sum_sq(mb, kb, &mean_b), ss_n = sum_sq(mn, kn, &mean_n);
    double df = (double)(kb + kn - 2);
    r->base_run_sd = kb > 1 ? sqrt(ss_b / (double)(kb - 1)) : NAN;
    r->new_run_sd = kn > 1 ? sqrt(ss_n / (double)(kn - 1)) : NAN;
    r->run_df = df;
    r->run_sd_ms = sqrt((ss_b + ss_n) / df);
    double se = r->run_sd_ms * sqrt(1.0 / (double)kb + 1.0 / (double)kn);
    double d = mean_n - mean_b;
    double tq = cap_stats_qt(1.0 - alpha, df);
    r->run_delta_ms = d;
    r->run_ci_low_ms = d - tq * se;
    r->run_ci_high_ms = d + tq * se;
    /* p_up tests "shift <= +band", p_down "shift >= -band" */
    double p_up, p_down;
    if (se > 0.0) {
        p_up = cap_stats_pt_upper((d - band) / se, df);
        p_down = cap_stats_pt_upper(-(d + band) / se, df);
    } else { /* every run median equal within its side */
        p_up = d > band ? 0.0 : 1.0;
        p_down = d < -band ? 0.0 : 1.0;
    }
    double p = p_up < p_down ? p_up : p_down;
    r->run_p_value = p < 0.5 ? 2.0 * p : 1.0;
}

/* The smaller (hi 0) or larger (hi 1) of two bounds; NaN if either is. */
static double hull(double a, double b, int hi)
{
    if (isnan(a) || isnan(b))
        return NAN;
    return hi ? (a > b ? a : b) : (a < b ? a : b);
}

/* The U test of the new side shifted by mu against the base side. */
static cap_result side_mw(cap_mw_result *out, const side *ns, const side *bs,
                          double mu)
{
    if (ns->w)
        return cap_stats_mann_whitney_mu_w(out, ns->w, bs->w, mu,
                                           CAP_MW_AUTO);
    return cap_stats_mann_whitney_mu(out, ns->x, ns->n, bs->x, bs->n, mu,
                                     CAP_MW_AUTO);
}

/* CAP_OK when both sides and the floor are usable, else CAP_E_MISUSE. */
static cap_result inputs_ok(const side *bs, const side *ns, double floor_ms)
{
    if ((bs->n > 0 && !bs->x && !bs->w) || (ns->n > 0 && !ns->x && !ns->w))
        return CAP_E_MISUSE;
    if (!side_ok(bs) || !side_ok(ns))
        return CAP_E_MISUSE;
    if (!(floor_ms >= 0.0 && floor_ms < INFINITY))
        return CAP_E_MISUSE;
    if (!runs_ok(bs) || !runs_ok(ns))
        return CAP_E_MISUSE;
    return CAP_OK;
}

/* A result with the counts and every statistic not yet known (NaN). */
static void stat_init(cap_diffstat *r, const side *bs, const side *ns)
{
    memset(r, 0, sizeof *r);
    r->base_n = bs->n;
    r->new_n = ns->n;
    r->delta_ms = r->ci_low_ms = r->ci_high_ms = r->band_ms = NAN;
    r->delta_pct = r->ci_low_pct = r->ci_high_pct = r->band_pct = NAN;
    r->p_value = r->p_adjusted = NAN;
    r->base_runs = bs->runs ? bs->runs : 1;
    r->new_runs = ns->runs ? ns->runs : 1;
    size_t mb_ = min_run(bs);
    size_t mn_ = min_run(ns);
    r->min_run_n = mb_ < mn_ ? mb_ : mn_;
    r->base_run_sd = r->new_run_sd = r->run_sd_ms = r->run_sd_pct = NAN;
    r->run_delta_ms = r->run_ci_low_ms = r->run_ci_high_ms = NAN;
    r->run_p_value = NAN;
    r->frame_ci_low_ms = r->frame_ci_high_ms = r->frame_p_value = NAN;
}

/* Each side's median, mean and p95 (copies into scratch unless both
 * sides are weighted). */
static cap_result sides_describe(cap_diffstat *r, const side *bs,
                                 const side *ns)
{
    size_t scratch_n = bs->n > ns->n ? bs->n : ns->n;
    if (bs->w && ns->w)
        scratch_n = 0; /* weighted: no copies */
    if (scratch_n > SIZE_MAX / sizeof(double))
        return CAP_E_MISUSE;
    double *scratch = NULL;
    if (scratch_n > 0) {
        scratch = malloc(scratch_n * sizeof *scratch);
        if (!scratch)
            return CAP_E_NOMEM;
    }
    describe(bs, scratch, &r->base_median, &r->base_mean, &r->base_p95);
    describe(ns, scratch, &r->new_median, &r->new_mean, &r->new_p95);
    free(scratch);
    return CAP_OK;
}

/* The frames' test: the interval at 1 - 2 alpha (its bounds are the two
 * one-sided tests at alpha each, equivalence, and past the band they
 * agree with the minimum-effect tests), and the U tests against the
 * band; *estimate the shift. */
static cap_result frames_test(cap_diffstat *r, const side *bs,
                              const side *ns, double band, double *estimate,
                              const cap_diff_options *o)
{
    cap_shift_ci ci;
    cap_result rc =
        ns->w ? cap_stats_shift_ci_w(&ci, ns->w, bs->w, 2.0 * o->alpha,
                                     CAP_MW_AUTO)
              : cap_stats_shift_ci(&ci, ns->x, ns->n, bs->x, bs->n,
                                   2.0 * o->alpha, CAP_MW_AUTO);
    if (rc != CAP_OK)
        return rc;
    cap_mw_result up, down;
    rc = side_mw(&up, ns, bs, band);
    if (rc == CAP_OK)
        rc = side_mw(&down, ns, bs, -band);
    if (rc != CAP_OK)
        return rc;
    double p = up.p_greater < down.p_less ? up.p_greater : down.p_less;
    r->p_value = p < 0.5 ? 2.0 * p : 1.0;
    if (!ci.full_level) /* too few samples for the level: no interval */
        ci.low = ci.high = NAN;
    r->delta_ms = ci.estimate;
    r->ci_low_ms = r->frame_ci_low_ms = ci.low;
    r->ci_high_ms = r->frame_ci_high_ms = ci.high;
    r->frame_p_value = r->p_value;
    *estimate = ci.estimate;
    return CAP_OK;
}

/* Three runs or more: the between-run test on the run medians, its
 * interval hulled with the frames', its p the larger. */
static cap_result runs_test(cap_diffstat *r, const side *bs, const side *ns,
                            double band, double alpha)
{
    size_t k = r->base_runs > r->new_runs ? r->base_runs : r->new_runs;
    size_t biggest = bs->n > ns->n ? bs->n : ns->n;
    if (bs->w && ns->w)
        biggest = 1;
    double *med = malloc(2 * k * sizeof *med);
    double *tmp = malloc(biggest * sizeof *tmp);
    if (!med || !tmp) {
        free(med);
        free(tmp);
        return CAP_E_NOMEM;
    }
    run_medians(med, bs, tmp);
    run_medians(med + k, ns, tmp);
    run_test(r, med, r->base_runs, med + k, r->new_runs, band, alpha);
    free(med);
    free(tmp);
    double flo = r->ci_low_ms, fhi = r->ci_high_ms;
    r->within_spread = (flo > band && !(r->run_ci_low_ms > band)) ||
                       (fhi < -band && !(r->run_ci_high_ms < -band));
    r->ci_low_ms = hull(flo, r->run_ci_low_ms, 0);
    r->ci_high_ms = hull(fhi, r->run_ci_high_ms, 1);
    if (r->run_p_value > r->p_value)
        r->p_value = r->run_p_value;
    return CAP_OK;
}

/* The tests, where there are samples enough: the band (the relative
 * threshold or the floor, the larger), the frames' test, the runs'. */
static cap_result tests_run(cap_diffstat *r, const side *bs, const side *ns,
                            double floor_ms, const cap_diff_options *o)
{
    double band = o->threshold_pct / 100.0 * r->base_median;
    if (floor_ms > band)
        band = floor_ms;
    double estimate;
    cap_result rc = frames_test(r, bs, ns, band, &estimate, o);
    if (rc == CAP_OK && r->base_runs + r->new_runs >= 3)
        rc = runs_test(r, bs, ns, band, o->alpha);
    if (rc != CAP_OK)
        return rc;
    r->band_ms = band;
    r->delta_pct = rel_pct(estimate, r->base_median);
    r->ci_low_pct = rel_pct(r->ci_low_ms, r->base_median);
    r->ci_high_pct = rel_pct(r->ci_high_ms, r->base_median);
    r->band_pct = rel_pct(band, r->base_median);
    r->run_sd_pct = rel_pct(r->run_sd_ms, r->base_median);
    return CAP_OK;
}

/* One scope, one or several runs a side (see cap_diff_compare_runs). */
static cap_result compare_impl(cap_diffstat *out, const side *bs,
                               const side *ns, double floor_ms,
                               const cap_diff_options *opt)
{
    cap_diff_options o;
    if (!out || cap_diff_options_resolve(&o, opt) != CAP_OK ||
        inputs_ok(bs, ns, floor_ms) != CAP_OK)
        return CAP_E_MISUSE;
    cap_diffstat r;
    stat_init(&r, bs, ns);
    cap_result rc = sides_describe(&r, bs, ns);
    if (rc != CAP_OK)
        return rc;
    if (has_enough(&r, &o) &&
        (rc = tests_run(&r, bs, ns, floor_ms, &o)) != CAP_OK)
        return rc;
    r.p_adjusted = r.p_value;
    r.verdict = judge(&r, &o);
    *out = r;
    return CAP_OK;
}

cap_result cap_diff_compare_floor(cap_diffstat *out, const double *base_ms,
                                  size_t base_n, const double *new_ms,
                                  size_t new_n, double floor_ms,
                                  const cap_diff_options *opt)
{
    side b = {.x = base_ms, .n = base_n}, n = {.x = new_ms, .n = new_n};
    return compare_impl(out, &b, &n, floor_ms, opt);
}

cap_result cap_diff_compare_runs(cap_diffstat *out, const cap_diff_input *in,
                                 const cap_diff_options *opt)
{
    if (!in)
        return CAP_E_MISUSE;
    side b = {.x = in->base_ms, .n = in->base_n, .run_n = in->base_run_n,
              .runs = in->base_runs};
    side n = {.x = in->new_ms, .n = in->new_n, .run_n = in->new_run_n,
              .runs = in->new_runs};
    return compare_impl(out, &b, &n, in->floor_ms, opt);
}

cap_result cap_diff_compare_w(cap_diffstat *out, const cap_diff_winput *in,
                              const cap_diff_options *opt)
{
    if (!in)
        return CAP_E_MISUSE;
    uint64_t bn = cap_wsample_size(&in->base), nn = cap_wsample_size(&in->new_);
    if (bn > SIZE_MAX || nn > SIZE_MAX)
        return CAP_E_MISUSE;
    side b = {.n = (size_t)bn, .runs = in->base_runs, .w = &in->base,
              .wrun = in->base_run};
    side n = {.n = (size_t)nn, .runs = in->new_runs, .w = &in->new_,
              .wrun = in->new_run};
    return compare_impl(out, &b, &n, in->floor_ms, opt);
}

cap_result cap_diff_compare(cap_diffstat *out, const double *base_ms,
                            size_t base_n, const double *new_ms,
                            size_t new_n, const cap_diff_options *opt)
{
    return cap_diff_compare_floor(out, base_ms, base_n, new_ms, new_n, 0.0,
                                  opt);
}

/* ---- a set of scopes ------------------------------------------------- */

static int in_family(const cap_diffstat *r, const cap_diff_options *o)
{
    return has_enough(r, o) && r->p_value >= 0.0 && r->p_value <= 1.0;
}

cap_result cap_diff_adjust(cap_diffstat *results, size_t n,
                           const cap_diff_options *opt)
{
    cap_diff_options o;
    if (cap_diff_options_resolve(&o, opt) != CAP_OK)
        return CAP_E_MISUSE;
    if (n == 0)
        return CAP_OK;
    if (!results || n > SIZE_MAX / sizeof(double))
        return CAP_E_MISUSE;

    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += (size_t)in_family(&results[i], &o);
    double *p = NULL;
    if (m > 0) {
        p = malloc(m * sizeof *p);
        if (!p)
            return CAP_E_NOMEM;
        for (size_t i = 0, k = 0; i < n; i++)
            if (in_family(&results[i], &o))
                p[k++] = results[i].p_value;
        cap_result rc = cap_stats_holm(p, p, m);
        if (rc != CAP_OK) { /* cannot be a misuse: values checked above */
            free(p);
            return rc;
        }
    }
    for (size_t i = 0, k = 0; i < n; i++) {
        cap_diffstat *r = &results[i];
        r->p_adjusted = in_family(r, &o) ? p[k++] : NAN;
        r->verdict = judge(r, &o);
    }
    free(p);
    return CAP_OK;
}

cap_result cap_diff_compare_all(cap_diffstat *out, const cap_diff_input *in,
                                size_t n, const cap_diff_options *opt)
{
    cap_diff_options o;
    if (cap_diff_options_resolve(&o, opt) != CAP_OK)
        return CAP_E_MISUSE;
    if (n > 0 && (!out || !in))
        return CAP_E_MISUSE;
    for (size_t i = 0; i < n; i++) {
        cap_result rc = cap_diff_compare_runs(&out[i], &in[i], &o);
        if (rc != CAP_OK)
            return rc;
    }
    return cap_diff_adjust(out, n, &o);
}

cap_result cap_diff_geomean_pct(double *out_pct, size_t *used,
                                const cap_diffstat *results, size_t n,
                                const cap_diff_options *opt)
{
    cap_diff_options o;
    if (!out_pct || (n > 0 && !results) ||
        cap_diff_options_resolve(&o, opt) != CAP_OK)
        return CAP_E_MISUSE;
    double sum_log = 0.0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const cap_diffstat *r = &results[i];
        if (!has_enough(r, &o) || !(r->base_median > 0.0) ||
            !(r->new_median > 0.0))
            continue;
        sum_log += log(r->new_median / r->base_median);
        k++;
    }
    *out_pct = k > 0 ? (exp(sum_log / (double)k) - 1.0) * 100.0 : NAN;
    if (used)
        *used = k;
    return CAP_OK;
}
