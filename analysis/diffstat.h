/*
 * diffstat.h - compare one scope's frame times between two runs, and a set
 * of scopes at once: the statistics core of capture_diff.
 *
 * Input, per scope: the scope's self time in each frame of the base run
 * and of the new run, in milliseconds (non-negative, finite; which frames
 * count, and whether a frame without the scope counts as 0, is the
 * caller's choice), and optionally an absolute floor. Output: descriptive
 * statistics of both sides, the shift of the new run against the base one
 * with a distribution-free interval, the raw and family-adjusted p-values
 * of a minimum-effect test, and a verdict that a CI job can gate on.
 *
 * The method, in short (docs/STATISTICS.md has it in full):
 *   delta_ms    = Hodges-Lehmann shift: the median of the differences
 *                 new[i] - base[j] over every pair;
 *   ci_*_ms     = its order-statistic interval at level 1 - 2 alpha
 *                 (stats.h, cap_stats_shift_ci): no resampling, no seed;
 *   band_ms     = the smallest change that matters for this scope:
 *                 max(threshold_pct % of the base median, floor_ms);
 *   *_pct       = the same values relative to the base median (0 when
 *                 both are 0, +-inf when only the base median is);
 *   p_value     = min(1, 2 min(p_up, p_down)): p_up tests "the shift is
 *                 at most +band" (U test of new - band against base,
 *                 one-sided), p_down "at least -band";
 *   p_adjusted  = Holm-Bonferroni across the scopes compared together
 *                 (just p_value for a scope compared alone).
 * Verdict, the first rule that applies:
 *   ADDED          no base frames, some new ones;
 *   REMOVED        base frames, no new ones;
 *   INSUFFICIENT   either side has fewer than min_frames frames (both
 *                  sides empty included), or, with several runs a side,
 *                  a run has;
 *   REGRESSED      p_adjusted < alpha and ci_low_ms > +band_ms;
 *   IMPROVED       p_adjusted < alpha and ci_high_ms < -band_ms;
 *   UNCHANGED      -band_ms <= ci_low_ms and ci_high_ms <= +band_ms
 *                  (equivalence: two one-sided tests at level alpha);
 *   INCONCLUSIVE   none of the above (and whenever a p-value, a bound or
 *                  the band is NaN).
 * A regression must thus be both statistically significant after the
 * family-wise correction and practically large: the whole interval lies
 * past the band. UNCHANGED is a positive claim too: the interval rules out
 * any change larger than the band.
 *
 * Several runs a side (cap_diff_compare_runs): the frames of each side's
 * runs are pooled for the statistics above, and the run medians are also
 * compared by a pooled two-sample t test; the interval reported is the
 * hull of both intervals and p_value the larger p, so that a change
 * within the spread of repeated runs is not called a regression
 * (docs/STATISTICS.md section 15).
 *
 * Pure computation: no I/O, no global state, no random numbers: the same
 * inputs give the same bits. Thread safety: reentrant.
 */
#ifndef CAP_DIFFSTAT_H
#define CAP_DIFFSTAT_H

#include <stddef.h>
#include <stdint.h>

#include "capture/cap_result.h"
#include "stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(enumerator, label, meaning): labels and meanings come from this one
 * list, so they cannot drift from the enum. */
#define CAP_VERDICT_LIST(X)                                                    \
    X(CAP_VERDICT_UNCHANGED, "unchanged",                                      \
      "the confidence interval lies within the band")                          \
    X(CAP_VERDICT_REGRESSED, "regressed",                                      \
      "significantly slower, by more than the band")                           \
    X(CAP_VERDICT_IMPROVED, "improved",                                        \
      "significantly faster, by more than the band")                           \
    X(CAP_VERDICT_INCONCLUSIVE, "inconclusive",                                \
      "neither a change past the band nor its absence is shown")               \
    X(CAP_VERDICT_INSUFFICIENT, "insufficient",                                \
      "too few frames on a side to compare")                                   \
    X(CAP_VERDICT_ADDED, "added", "only in the new run")                       \
    X(CAP_VERDICT_REMOVED, "removed", "only in the base run")

typedef enum cap_verdict {
#define CAP__VERDICT_ENUM(name, label, meaning) name,
    CAP_VERDICT_LIST(CAP__VERDICT_ENUM)
#undef CAP__VERDICT_ENUM
    CAP_VERDICT_COUNT
} cap_verdict;

/* The verdict's label ("regressed"), or "unknown" for a value outside the
 * list. Static string: never free it. */
const char *cap_verdict_name(cap_verdict v);

/* A one-line meaning of the verdict, lower case, no trailing period, or
 * "unknown verdict". Static string: never free it. */
const char *cap_verdict_message(cap_verdict v);

/* Defaults of cap_diff_options. */
#define CAP_DIFF_DEFAULT_THRESHOLD_PCT 5.0
#define CAP_DIFF_DEFAULT_ALPHA 0.05
#define CAP_DIFF_DEFAULT_MIN_FRAMES 10
#define CAP_DIFF_DEFAULT_RESAMPLES 2000

/* How to compare. Zero-initialise, then set what you need; a zero field
 * takes the default named beside it (a threshold of exactly 0 cannot be
 * asked for: use a tiny one). A NULL options pointer means all defaults. */
typedef struct cap_diff_options {
    double threshold_pct; /* smallest relative change that matters, percent
                             of the base median, > 0; default 5.0 */
    double alpha;         /* significance level of the tests; the interval's
                             level is 1 - 2 alpha; in (0, 0.5); default
                             0.05 */
    size_t min_frames;    /* frames each side needs; default 10 */
    size_t resamples;     /* unused since the interval stopped resampling;
                             kept so that callers that set it compile */
    uint64_t seed;        /* unused, as resamples */
} cap_diff_options;

/* The comparison of one scope. Values not computed are NaN (see
 * cap_diff_compare for which). */
typedef struct cap_diffstat {
    size_t base_n, new_n;        /* frames on each side */
    double base_median, new_median;
    double base_mean, new_mean;
    double base_p95, new_p95;    /* type-7 quantile 0.95 */
    double delta_ms;             /* Hodges-Lehmann shift, new - base */
    double ci_low_ms;            /* its interval, level 1 - 2 alpha */
    double ci_high_ms;
    double band_ms;              /* smallest shift that matters */
    double delta_pct;            /* the four above relative to the base */
    double ci_low_pct;           /* median, % (see the header's prose) */
    double ci_high_pct;
    double band_pct;
    double p_value;              /* minimum-effect p, 2 min(p_up, p_down) */
    double p_adjusted;           /* Holm across the set compared */
    cap_verdict verdict;
    /* Several runs a side (cap_diff_compare_runs; docs/STATISTICS.md
     * section 15). With one run a side: runs 1 and 1, min_run_n the
     * smaller count, the run_* values NaN, within_spread 0, and the
     * frame_* values equal to ci_low_ms, ci_high_ms and p_value. */
    size_t base_runs, new_runs;  /* runs on each side */
    size_t min_run_n;            /* fewest samples of any run, either side */
    double base_run_sd;          /* SD of the base runs' medians, ms (NaN
                                    with fewer than 2 base runs) */
    double new_run_sd;           /* the same for the new runs */
    double run_sd_ms;            /* pooled between-run SD, ms: the run
                                    medians' squared deviations from their
                                    side's mean over run_df */
    double run_sd_pct;           /* run_sd_ms over the base median, %
                                    (the zero guard of delta_pct) */
    double run_df;               /* base_runs + new_runs - 2 (0: no
                                    between-run test) */
    double run_delta_ms;         /* mean of the new runs' medians minus
                                    that of the base runs' */
    double run_ci_low_ms;        /* its t interval, level 1 - 2 alpha */
    double run_ci_high_ms;
    double run_p_value;          /* minimum-effect t tests on run medians */
    double frame_ci_low_ms;      /* the pooled frames' interval alone */
    double frame_ci_high_ms;
    double frame_p_value;        /* the pooled frames' p alone */
    int within_spread;           /* the frames' interval lies wholly past
                                    the band, the run interval does not:
                                    the change is within run-to-run
                                    spread */
} cap_diffstat;

/* One scope's samples, for cap_diff_compare_all. A side with no frames
 * (count 0, pointer then ignored and may be NULL) means the scope is
 * absent from that run. */
typedef struct cap_diff_input {
    const double *base_ms;
    size_t base_n;
    const double *new_ms;
    size_t new_n;
    double floor_ms; /* smallest shift (ms per sample) that matters for this
                        scope whatever its relative size; 0: none. The band
                        is max(threshold_pct % of the base median,
                        floor_ms) */
    /* Several runs a side; zero (the default) means one run a side. With
     * base_runs > 0, base_ms holds the base runs' samples one run after
     * the other, base_run_n[r] of them for run r (a run may have 0: the
     * scope did not run there), summing to base_n. The same for new. */
    const size_t *base_run_n;
    size_t base_runs;
    const size_t *new_run_n;
    size_t new_runs;
} cap_diff_input;

/* Copy opt (all zero if NULL) to *resolved with every zero field replaced
 * by its default, and check it.
 * Errors: CAP_E_MISUSE (resolved NULL; threshold_pct negative, infinite or
 * NaN; alpha outside (0, 0.5) or NaN; *resolved untouched). */
cap_result cap_diff_options_resolve(cap_diff_options *resolved,
                                    const cap_diff_options *opt);

/* Compare one scope: base_ms[0..base_n) against new_ms[0..new_n), with a
 * band of max(threshold_pct % of the base median, floor_ms) (floor_ms >= 0,
 * 0 for none). Neither array is modified.
 * Fills every field of *out:
 *   - counts always; median, mean and p95 of each side with frames (NaN
 *     for an empty side);
 *   - the shift, its interval, the band (ms and %) and p_value only when
 *     both sides have at least min_frames frames (NaN otherwise);
 *   - p_adjusted = p_value (a family of one: cap_diff_adjust revises it
 *     when scopes are compared together) and the verdict from the rule in
 *     the header's prose.
 * Errors: CAP_E_MISUSE (out NULL, invalid options as for
 * cap_diff_options_resolve, a NULL array with a count above 0, a value
 * negative, infinite or NaN, a floor negative or not finite),
 * CAP_E_NOMEM. On error *out is untouched. */
cap_result cap_diff_compare_floor(cap_diffstat *out, const double *base_ms,
                                  size_t base_n, const double *new_ms,
                                  size_t new_n, double floor_ms,
                                  const cap_diff_options *opt);

/* cap_diff_compare_floor with no floor. */
cap_result cap_diff_compare(cap_diffstat *out, const double *base_ms,
                            size_t base_n, const double *new_ms,
                            size_t new_n, const cap_diff_options *opt);

/* Compare one scope recorded in several runs a side (in->base_runs,
 * in->new_runs; 0 means one). The frame-level statistics are those of
 * cap_diff_compare_floor on the pooled samples (every run's samples of a
 * side together), kept in frame_ci_low_ms, frame_ci_high_ms and
 * frame_p_value. With at least three runs in all (run_df =
 * base_runs + new_runs - 2 >= 1), each run is also summarised by the
 * median of its samples, and the run medians are compared by a pooled
 * two-sample t test: run_delta_ms, its t interval at level 1 - 2 alpha
 * (run_ci_*), and the minimum-effect p-value of the two one-sided t
 * tests against the band (run_p_value). The reported interval is then
 * the hull of the two intervals and p_value the larger of the two
 * p-values: a change must clear the band against both the frames' and
 * the runs' spread. With one run a side nothing is added and the result
 * is cap_diff_compare_floor's. Every run needs min_frames samples (a run
 * with fewer makes the scope INSUFFICIENT, when both sides have some).
 * Errors: as cap_diff_compare_floor; CAP_E_MISUSE also for in NULL, runs
 * given with a NULL count array, or run counts that do not sum to base_n
 * or new_n. On error *out is untouched. */
cap_result cap_diff_compare_runs(cap_diffstat *out, const cap_diff_input *in,
                                 const cap_diff_options *opt);

/* One scope's samples as weighted samples (stats.h: values ascending,
 * each counted w times), for samples read back from histograms: each
 * side's runs pooled (base, new_), and with several runs a side each
 * run's own (base_run[0..base_runs), sizes summing to base's; runs 0:
 * one run). */
typedef struct cap_diff_winput {
    cap_wsample base, new_;
    const cap_wsample *base_run;
    size_t base_runs;
    const cap_wsample *new_run;
    size_t new_runs;
    double floor_ms; /* as cap_diff_input */
} cap_diff_winput;

/* cap_diff_compare_runs on the expanded samples: the same statistics
 * (stats.h's weighted functions give the unweighted ones' results on the
 * expanded samples), in time and memory that grow with the distinct
 * values, not the samples. Errors: as cap_diff_compare_runs (values not
 * ascending included). */
cap_result cap_diff_compare_w(cap_diffstat *out, const cap_diff_winput *in,
                              const cap_diff_options *opt);

/* Apply the correction for multiple comparisons to a set of scopes
 * compared separately (cap_diff_compare), then assign their verdicts.
 * The family is the results whose sides both have at least min_frames
 * frames and whose p_value is in [0, 1]: their p_adjusted becomes Holm's
 * adjustment within the family; every other result gets p_adjusted NaN.
 * Then every verdict is recomputed by the rule. Only p_adjusted and
 * verdict are written. n of 0 does nothing and succeeds.
 * Errors: CAP_E_MISUSE (results NULL with n > 0, invalid options; results
 * untouched), CAP_E_NOMEM (results untouched). */
cap_result cap_diff_adjust(cap_diffstat *results, size_t n,
                           const cap_diff_options *opt);

/* Compare n scopes (cap_diff_compare_runs on each in[i] into out[i]), then
 * cap_diff_adjust them as one family.
 * Errors: as cap_diff_compare, for the first input that fails (out may
 * then hold the results of the inputs before it), and CAP_E_MISUSE for in
 * or out NULL with n > 0. */
cap_result cap_diff_compare_all(cap_diffstat *out, const cap_diff_input *in,
                                size_t n, const cap_diff_options *opt);

/* The verdict the rule gives *r under opt (zero fields take defaults),
 * from r's counts, interval, band_ms and p_adjusted. cap_diff_compare and
 * cap_diff_adjust use it; it is public so that a caller can re-judge
 * stored results under another alpha or min_frames (the band, and the
 * p-values tested against it, come from the comparison: another threshold
 * needs cap_diff_compare again).
 * Errors: CAP_E_MISUSE (out or r NULL, invalid options; *out untouched). */
cap_result cap_diff_verdict(cap_verdict *out, const cap_diffstat *r,
                            const cap_diff_options *opt);

/* A one-number summary of a set: the geometric mean over scopes of
 * new_median / base_median, as a change in percent:
 *     (exp(mean(log(new_median / base_median))) - 1) * 100.
 * Only scopes with at least min_frames frames on both sides and both
 * medians > 0 take part (a zero median has no finite ratio). *used, when
 * not NULL, receives how many did; with none, *out_pct is NaN.
 * Errors: CAP_E_MISUSE (out_pct NULL, results NULL with n > 0, invalid
 * options; outputs untouched). */
cap_result cap_diff_geomean_pct(double *out_pct, size_t *used,
                                const cap_diffstat *results, size_t n,
                                const cap_diff_options *opt);

#ifdef __cplusplus
}
#endif
#endif
