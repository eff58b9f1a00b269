/*
 * diffstat.h - compare one scope's frame times between two runs, and a set
 * of scopes at once: the statistics core of capture_diff.
 *
 * Input, per scope: the scope's self time in each frame of the base run
 * and of the new run, in milliseconds (non-negative, finite; which frames
 * count, and whether a frame without the scope counts as 0, is the
 * caller's choice). Output: descriptive statistics of both sides, the
 * relative change of the median with a bootstrap confidence interval, the
 * raw and family-adjusted p-values of a Mann-Whitney U test, and a
 * verdict that a CI job can gate on.
 *
 * The method, in short (docs/STATISTICS.md has it in full):
 *   delta_pct   = (median(new) / median(base) - 1) * 100, with
 *                 median(base) == 0 guarded (0 if both are 0, +inf if only
 *                 the base is);
 *   ci_*_pct    = bootstrap percentile interval of delta_pct at level
 *                 1 - alpha (resamples replicates, seeded);
 *   p_value     = two-sided Mann-Whitney U test (stats.h);
 *   p_adjusted  = Holm-Bonferroni across the scopes compared together
 *                 (just p_value for a scope compared alone).
 * Verdict, the first rule that applies:
 *   ADDED          no base frames, some new ones;
 *   REMOVED        base frames, no new ones;
 *   INSUFFICIENT   either side has fewer than min_frames frames (both
 *                  sides empty included);
 *   REGRESSED      p_adjusted < alpha and ci_low_pct > +threshold_pct;
 *   IMPROVED       p_adjusted < alpha and ci_high_pct < -threshold_pct;
 *   UNCHANGED      -threshold_pct <= ci_low_pct and
 *                  ci_high_pct <= +threshold_pct;
 *   INCONCLUSIVE   none of the above (and whenever a p-value or a bound is
 *                  NaN).
 * A regression must thus be both statistically significant after the
 * family-wise correction and practically large: the whole interval lies
 * past the threshold. UNCHANGED is a positive claim too: the interval
 * rules out any change larger than the threshold.
 *
 * Pure computation: no I/O, no global state; results are reproducible for
 * a given seed. Thread safety: reentrant.
 */
#ifndef CAP_DIFFSTAT_H
#define CAP_DIFFSTAT_H

#include <stddef.h>
#include <stdint.h>

#include "capture/cap_result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(enumerator, label, meaning): labels and meanings come from this one
 * list, so they cannot drift from the enum. */
#define CAP_VERDICT_LIST(X)                                                    \
    X(CAP_VERDICT_UNCHANGED, "unchanged",                                      \
      "the confidence interval lies within the threshold")                     \
    X(CAP_VERDICT_REGRESSED, "regressed",                                      \
      "significantly slower, by more than the threshold")                      \
    X(CAP_VERDICT_IMPROVED, "improved",                                        \
      "significantly faster, by more than the threshold")                      \
    X(CAP_VERDICT_INCONCLUSIVE, "inconclusive",                                \
      "neither a change past the threshold nor its absence is shown")          \
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
#define CAP_DIFF_DEFAULT_THRESHOLD_PCT 2.0
#define CAP_DIFF_DEFAULT_ALPHA 0.05
#define CAP_DIFF_DEFAULT_MIN_FRAMES 10
#define CAP_DIFF_DEFAULT_RESAMPLES 2000

/* How to compare. Zero-initialise, then set what you need; a zero field
 * takes the default named beside it (a threshold of exactly 0 cannot be
 * asked for: use a tiny one). A NULL options pointer means all defaults. */
typedef struct cap_diff_options {
    double threshold_pct; /* smallest change that matters, percent, >= 0;
                             default 2.0 */
    double alpha;         /* significance level, and 1 - alpha is the
                             interval's level; in (0, 1); default 0.05 */
    size_t min_frames;    /* frames each side needs; default 10 */
    size_t resamples;     /* bootstrap replicates; default 2000 */
    uint64_t seed;        /* bootstrap seed, used as given (0 is valid).
                             Every scope is resampled from this same seed,
                             so a scope's interval does not depend on which
                             other scopes are compared with it */
} cap_diff_options;

/* The comparison of one scope. Values not computed are NaN (see
 * cap_diff_compare for which). */
typedef struct cap_diffstat {
    size_t base_n, new_n;        /* frames on each side */
    double base_median, new_median;
    double base_mean, new_mean;
    double base_p95, new_p95;    /* type-7 quantile 0.95 */
    double delta_pct;            /* relative change of the median, % */
    double ci_low_pct;           /* bootstrap interval of delta_pct, at */
    double ci_high_pct;          /* level 1 - alpha */
    double p_value;              /* raw two-sided Mann-Whitney p */
    double p_adjusted;           /* Holm across the set compared */
    cap_verdict verdict;
} cap_diffstat;

/* One scope's samples, for cap_diff_compare_all. A side with no frames
 * (count 0, pointer then ignored and may be NULL) means the scope is
 * absent from that run. */
typedef struct cap_diff_input {
    const double *base_ms;
    size_t base_n;
    const double *new_ms;
    size_t new_n;
} cap_diff_input;

/* Copy opt (all zero if NULL) to *resolved with every zero field replaced
 * by its default, and check it.
 * Errors: CAP_E_MISUSE (resolved NULL; threshold_pct negative, infinite or
 * NaN; alpha outside (0, 1) or NaN; *resolved untouched). */
cap_result cap_diff_options_resolve(cap_diff_options *resolved,
                                    const cap_diff_options *opt);

/* Compare one scope: base_ms[0..base_n) against new_ms[0..new_n). Neither
 * array is modified.
 * Fills every field of *out:
 *   - counts always; median, mean and p95 of each side with frames (NaN
 *     for an empty side); delta_pct when both sides have frames;
 *   - ci_low_pct, ci_high_pct and p_value only when both sides have at
 *     least min_frames frames (NaN otherwise);
 *   - p_adjusted = p_value (a family of one: cap_diff_adjust revises it
 *     when scopes are compared together) and the verdict from the rule in
 *     the header's prose.
 * Errors: CAP_E_MISUSE (out NULL, invalid options as for
 * cap_diff_options_resolve, a NULL array with a count above 0, a value
 * negative, infinite or NaN), CAP_E_NOMEM. On error *out is untouched. */
cap_result cap_diff_compare(cap_diffstat *out, const double *base_ms,
                            size_t base_n, const double *new_ms,
                            size_t new_n, const cap_diff_options *opt);

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

/* Compare n scopes (cap_diff_compare on each in[i] into out[i]), then
 * cap_diff_adjust them as one family.
 * Errors: as cap_diff_compare, for the first input that fails (out may
 * then hold the results of the inputs before it), and CAP_E_MISUSE for in
 * or out NULL with n > 0. */
cap_result cap_diff_compare_all(cap_diffstat *out, const cap_diff_input *in,
                                size_t n, const cap_diff_options *opt);

/* The verdict the rule gives *r under opt (zero fields take defaults),
 * from r's counts, interval and p_adjusted. cap_diff_compare and
 * cap_diff_adjust use it; it is public so that a caller can re-judge
 * stored results under another threshold or alpha.
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
