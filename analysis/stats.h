/*
 * stats.h - the statistics toolbox behind capture_diff.
 *
 * Pure computation: no I/O, no printing, no global state. Every function
 * works on arrays the caller owns; the few that need scratch memory
 * allocate it themselves and free it before they return.
 *
 * Contents, under the banners below:
 *   - a seeded pseudo-random generator (xoshiro256**, seeded by
 *     splitmix64), its state passed explicitly;
 *   - sorting and selection (quickselect) of doubles;
 *   - descriptive statistics: quantile (type 7), median, mean, geometric
 *     mean;
 *   - the Mann-Whitney U test, two- and one-sided, optionally shifted (exact
 *     or normal approximation);
 *   - the Hodges-Lehmann shift and its order-statistic interval;
 *   - a bootstrap percentile interval for the relative change of a median;
 *   - the Holm-Bonferroni adjustment of p-values.
 *
 * docs/STATISTICS.md states every definition and default, and how the
 * reference values in tests/test_stats.c were obtained.
 *
 * Conventions:
 *   - Functions that compute one number return it as a double, and return
 *     NaN where the number is undefined (an empty array, a probability out
 *     of [0, 1]). Each says when.
 *   - Functions that can fail for another reason (a bad argument, no
 *     memory) return a cap_result and write their results through out
 *     parameters, which come first. On error the out parameters are left
 *     untouched unless stated otherwise.
 *   - Inputs must not contain NaN unless a function says otherwise: the
 *     ordering of NaN is undefined, so are the results (memory safety is
 *     kept either way).
 *
 * Thread safety: every function is reentrant; distinct calls share
 * nothing. A cap_rng must not be used by two threads at once.
 */
#ifndef CAP_STATS_H
#define CAP_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "capture/cap_result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Add v to *acc, saturating at INT64_MIN and INT64_MAX: a crafted file can
 * hold times whose sums do not fit 64 bits, and a report must still not
 * overflow. */
static inline void cap_stats_sat_add(int64_t *acc, int64_t v)
{
    if (__builtin_add_overflow(*acc, v, acc))
        *acc = v > 0 ? INT64_MAX : INT64_MIN;
}

/* ======================================================================
 * Pseudo-random numbers
 *
 * xoshiro256** (Blackman and Vigna), 256 bits of state, period 2^256 - 1.
 * The state is filled from a 64-bit seed by splitmix64, so every seed,
 * 0 included, gives a valid (never all-zero) state. The same seed gives
 * the same sequence on every platform: results that depend on it are
 * reproducible.
 * ====================================================================== */

typedef struct cap_rng {
    uint64_t s[4];
} cap_rng;

/* One step of splitmix64: advance *state by the golden-ratio increment and
 * return the mixed value. Used to seed cap_rng; usable on its own as a
 * small generator whose state is one uint64_t. */
uint64_t cap_splitmix64(uint64_t *state);

/* Seed rng from `seed` (four splitmix64 outputs). Any seed is valid. */
void cap_rng_seed(cap_rng *rng, uint64_t seed);

/* The next 64 uniformly distributed bits. */
uint64_t cap_rng_next(cap_rng *rng);

/* A uniform integer in [0, n), without modulo bias (Lemire's multiply and
 * reject for n < 2^32, plain rejection above). Returns 0 when n is 0. */
uint64_t cap_rng_below(cap_rng *rng, uint64_t n);

/* A uniform double in [0, 1): the top 53 bits of cap_rng_next, scaled. */
double cap_rng_uniform(cap_rng *rng);

/* A standard normal variate (mean 0, variance 1), by the Box-Muller
 * transform; consumes two cap_rng_next values per call. For simulations
 * and tests. */
double cap_rng_normal(cap_rng *rng);

/* ======================================================================
 * Sorting and selection
 * ====================================================================== */

/* Sort x[0..n) in ascending order, in place. NaN values, if any, are put
 * last (so the function is safe on any input). O(n log n). */
void cap_stats_sort(double *x, size_t n);

/* Quickselect: reorder x[0..n) so that x[k] holds the value that would be
 * at index k if x were sorted, every element before it is <= x[k] and
 * every element after it is >= x[k]; return x[k]. Three-way partitioning
 * keeps it linear on inputs with many equal values; a depth limit falls
 * back to sorting the remaining range, so the worst case is O(n log n).
 * Returns NaN (and leaves x untouched) when k >= n. */
double cap_stats_select(double *x, size_t n, size_t k);

/* ======================================================================
 * Descriptive statistics
 *
 * Quantiles use the definition of type 7 in Hyndman and Fan (1996), R's
 * default for quantile(): with x(1) <= ... <= x(n) the order statistics
 * and p in [0, 1], let h = (n - 1) p, j = floor(h):
 *
 *     Q(p) = x(j+1) + (h - j) (x(j+2) - x(j+1))
 *
 * that is, linear interpolation between the two order statistics around
 * position h (0-based); Q(0) is the minimum, Q(1) the maximum, Q(0.5) the
 * usual median (the mean of the middle two values when n is even). An
 * infinite neighbour makes the result that infinity.
 * ====================================================================== */

/* Q(p) of a sample already sorted in ascending order. Returns NaN when n is
 * 0 or p is not in [0, 1] (NaN included). */
double cap_stats_quantile_sorted(const double *sorted, size_t n, double p);

/* Q(p) of an unsorted sample, found by quickselect in O(n): x is reordered
 * (as cap_stats_select leaves it). Returns NaN when n is 0 or p is not in
 * [0, 1], leaving x untouched. */
double cap_stats_quantile_select(double *x, size_t n, double p);

/* The median, Q(0.5): same contracts as the quantile functions above. */
double cap_stats_median_sorted(const double *sorted, size_t n);
double cap_stats_median_select(double *x, size_t n);

/* The arithmetic mean (summed with a second, correcting pass). NaN when
 * n is 0. */
double cap_stats_mean(const double *x, size_t n);

/* The geometric mean, exp(mean(log x)). NaN when n is 0 or any value is
 * not > 0 (the geometric mean of ratios is only defined for positive
 * values). */
double cap_stats_geomean(const double *x, size_t n);

/* ======================================================================
 * Mann-Whitney U test (Wilcoxon rank-sum test), two-sided
 *
 * U is the statistic of the first sample x: the number of pairs
 * (x[i], y[j]) with x[i] > y[j], plus half the pairs with x[i] == y[j];
 * equivalently the sum of x's mid-ranks in the pooled sample minus
 * nx (nx + 1) / 2. It is R's W in wilcox.test(x, y).
 *
 * Exact p-value: the null distribution of U without ties, counted by
 * dynamic programming over the pooled order (C(nx+ny, nx) equally likely
 * arrangements). Two-sided p = min(1, 2 P(U' <= U)) when U <= nx ny / 2,
 * min(1, 2 P(U' >= U)) otherwise.
 *
 * Normal approximation: mean nx ny / 2, variance
 *     nx ny / 12 * ((N + 1) - sum(t^3 - t) / (N (N - 1))),  N = nx + ny,
 * summing over the groups of t tied values (tie correction), and a
 * continuity correction of 0.5 towards the mean:
 *     z = (U - nx ny / 2 - 0.5 sign(U - nx ny / 2)) / sd,
 *     p = 2 (1 - Phi(|z|)).
 * When every value is equal (variance 0) p is 1.
 *
 * CAP_MW_AUTO uses the exact p-value when there are no ties and both
 * samples have at most CAP_MW_EXACT_MAX (49) values, the normal
 * approximation otherwise: the same choice as R's wilcox.test(x, y) with
 * its defaults (exact when both sizes are below 50 and nothing is tied).
 * ====================================================================== */

#define CAP_MW_EXACT_MAX 49

typedef enum cap_mw_method {
    CAP_MW_AUTO = 0, /* exact when allowed (see above), normal otherwise */
    CAP_MW_EXACT,    /* exact; only without ties and within
                        CAP_MW_EXACT_MAX */
    CAP_MW_NORMAL    /* normal approximation, tie and continuity
                        corrected */
} cap_mw_method;

typedef struct cap_mw_result {
    double u;             /* U of the first sample, in [0, nx ny] */
    double z;             /* corrected z score (normal method); 0 when the
                             exact method was used */
    double p_value;       /* two-sided, in [0, 1] */
    double p_greater;     /* one-sided, alternative: x is shifted above y
                             (R's alternative = "greater"), in [0, 1] */
    double p_less;        /* one-sided, alternative: x below y ("less") */
    cap_mw_method method; /* CAP_MW_EXACT or CAP_MW_NORMAL: what was used */
    size_t ties;          /* values that share their value with another
                             (0: no ties) */
} cap_mw_result;

/* Run the two-sided Mann-Whitney U test of x[0..nx) against y[0..ny).
 * Neither array is modified; scratch memory is allocated and freed.
 * Errors: CAP_E_MISUSE (out, x or y NULL, nx or ny 0, a NaN value, an
 * unknown method, or CAP_MW_EXACT asked for samples with ties or over
 * CAP_MW_EXACT_MAX), CAP_E_NOMEM. */
cap_result cap_stats_mann_whitney(cap_mw_result *out, const double *x,
                                  size_t nx, const double *y, size_t ny,
                                  cap_mw_method method);

/* The same test of the hypothesis that x is y shifted by mu: the ranks are
 * those of x[i] - mu (computed in double) among the y values, as R's
 * wilcox.test(x, y, mu = mu). One-sided p-values: exact P(U' >= U) and
 * P(U' <= U); normal, z = (U - nx ny / 2 -+ 0.5) / sd with the continuity
 * correction towards the alternative, as R. mu = 0 is
 * cap_stats_mann_whitney.
 * Errors: as cap_stats_mann_whitney, and CAP_E_MISUSE for a mu that is not
 * finite. */
cap_result cap_stats_mann_whitney_mu(cap_mw_result *out, const double *x,
                                     size_t nx, const double *y, size_t ny,
                                     double mu, cap_mw_method method);

/* ======================================================================
 * The shift of location and its distribution-free interval
 *
 * With D the nx ny differences x[i] - y[j] (each computed in double), the
 * Hodges-Lehmann estimate of the shift of x against y is the median of D,
 * and the interval at level 1 - alpha is [D(qu), D(nx ny - qu + 1)] (1-
 * based order statistics), where qu is the smallest q with
 * P(U' <= q) >= alpha / 2 under the null law of the U statistic
 * (qwilcox(alpha / 2, nx, ny) in R; 1 if that is 0). It inverts the U
 * test: it holds the shifts mu that cap_stats_mann_whitney_mu does not
 * reject. Exact when the pooled sample has no ties and both sizes are at
 * most CAP_MW_EXACT_MAX (CAP_MW_AUTO): then it is R's
 *     wilcox.test(x, y, conf.int = TRUE, conf.level = 1 - alpha)
 * interval and estimate. Otherwise qu comes from the normal approximation
 * with the tie-corrected variance and a continuity correction,
 *     qu = ceil(nx ny / 2 - 0.5 + qnorm(alpha / 2) sd),
 * and the bounds stay order statistics of D (R instead solves for the
 * bounds with uniroot there; docs/STATISTICS.md compares the two).
 * Distribution-free: the level holds for any continuous law when the new
 * run is the base one shifted, with no resampling and no seed.
 * Cost: a few rounds of O(nx + ny) (section 3 of docs/STATISTICS.md), and
 * O(nx + ny) memory; the
 * differences are never stored.
 * ====================================================================== */

/* The standard normal quantile: Phi^-1(p); -inf at 0, +inf at 1, NaN
 * outside [0, 1]. Accurate to a few ulps (Acklam's approximation refined
 * by one Halley step). */
double cap_stats_qnorm(double p);

/* The k-th smallest (0-based) of the nx ny differences x[i] - y[j], x and
 * y sorted ascending (not checked; unsorted input gives an unspecified
 * value of D). Deterministic: the randomised pivots only change the time.
 * Errors: CAP_E_MISUSE (out, x or y NULL, a size of 0, k >= nx ny). */
cap_result cap_stats_kth_difference(double *out, const double *x, size_t nx,
                                    const double *y, size_t ny, uint64_t k);

typedef struct cap_shift_ci {
    double estimate;      /* Hodges-Lehmann: the median of D */
    double low, high;     /* D(qu) and D(nx ny - qu + 1) */
    uint64_t rank;        /* qu */
    int full_level;       /* 0 when even D(1) and D(nx ny) do not reach
                             the level (P(U' <= 0) >= alpha / 2: samples
                             too small); the bounds are then R's, D(1)
                             and D(nx ny), at a lower level */
    cap_mw_method method; /* how qu was found: exact or normal */
} cap_shift_ci;

/* Estimate and interval of the shift of x against y (see above). Neither
 * array is modified. method as for the U test (CAP_MW_EXACT refuses ties
 * and samples over CAP_MW_EXACT_MAX).
 * Errors: CAP_E_MISUSE (out, x or y NULL, a size of 0, alpha outside
 * (0, 1), a value not finite, an unknown method, CAP_MW_EXACT not
 * allowed), CAP_E_NOMEM. */
cap_result cap_stats_shift_ci(cap_shift_ci *out, const double *x, size_t nx,
                              const double *y, size_t ny, double alpha,
                              cap_mw_method method);

/* ======================================================================
 * Weighted samples: the same statistics over values with counts
 *
 * A cap_wsample stands for the sample in which v[i] occurs w[i] times:
 * v[0..k) ascending (equal neighbours allowed), every w[i] >= 1; its size
 * is the sum of the weights. capture_diff uses them for samples read back
 * from log histograms (a bucket's middle and its count), where the
 * expanded sample would take memory that grows with frames. Every
 * function below gives what the unweighted one gives on the expanded
 * sample, bit for bit where they share a method (tests/test_stats.c):
 * the U test's groups of equal values and their tie correction are the
 * same; the k-th difference is the same order statistic of the same
 * doubles; the exact method is used where the unweighted one would use
 * it (no ties, both sizes at most CAP_MW_EXACT_MAX), by expanding.
 * Cost: O(k) per pass instead of O(size); the k-th difference takes at
 * most 64 passes (a bisection over the doubles), whatever the weights.
 * ====================================================================== */

typedef struct cap_wsample {
    const double *v;   /* ascending */
    const uint64_t *w; /* each >= 1 */
    size_t k;
} cap_wsample;

/* The size of s: the sum of its weights. */
uint64_t cap_wsample_size(const cap_wsample *s);

/* Q(p) (type 7) of the expanded sample; NaN when it is empty or p is not
 * in [0, 1]. */
double cap_stats_wquantile(const cap_wsample *s, double p);

/* The mean of the expanded sample; NaN when it is empty. */
double cap_stats_wmean(const cap_wsample *s);

/* cap_stats_mann_whitney_mu on the expanded samples x and y.
 * Errors: as cap_stats_mann_whitney_mu (an empty sample, a NaN value, a
 * mu not finite, ...), and CAP_E_MISUSE for values not ascending. */
cap_result cap_stats_mann_whitney_mu_w(cap_mw_result *out,
                                       const cap_wsample *x,
                                       const cap_wsample *y, double mu,
                                       cap_mw_method method);

/* cap_stats_kth_difference on the expanded samples: the k-th smallest
 * (0-based) of the size(x) size(y) differences x - y.
 * Errors: CAP_E_MISUSE (out, x or y NULL, an empty sample, k past the
 * last difference, a value not finite), CAP_E_NOMEM. */
cap_result cap_stats_kth_difference_w(double *out, const cap_wsample *x,
                                      const cap_wsample *y, uint64_t k);

/* cap_stats_shift_ci on the expanded samples.
 * Errors: as cap_stats_shift_ci. */
cap_result cap_stats_shift_ci_w(cap_shift_ci *out, const cap_wsample *x,
                                const cap_wsample *y, double alpha,
                                cap_mw_method method);

/* ======================================================================
 * Bootstrap interval for the relative change of the median
 *
 * The change from a base sample b to a new sample a is, in percent,
 *     delta = (median(a) / median(b) - 1) * 100
 * with median(b) == 0 guarded: delta is 0 when median(a) is also 0 (no
 * change), +infinity when median(a) > 0. Samples are durations: every
 * value must be finite and >= 0.
 *
 * Each of the `resamples` replicates draws base_n values from the base
 * sample and new_n values from the new one, independently and with
 * replacement, and computes delta on them. The interval is the percentile
 * interval at level 1 - alpha: the type-7 quantiles alpha/2 and
 * 1 - alpha/2 of the replicates.
 *
 * Reproducibility: one cap_rng seeded with `seed` drives every draw. Each
 * draw is an index, cap_rng_below(rng, count), into a private copy of the
 * sample sorted ascending; a replicate draws all its base indices, then
 * all its new ones. So the interval depends only on the two multisets of
 * values, resamples, alpha and seed, never on the order of the frames.
 *
 * Cost: O(base_n + new_n) per replicate. A replicate's median is found by
 * counting how often each index was drawn (the sample being sorted, the
 * median index gives the median value): the same value quickselect on the
 * drawn values would give, about five times faster.
 * ====================================================================== */

/* The relative change of the medians, in percent, as defined above (with
 * the zero guard). NaN when either median is NaN. */
double cap_stats_rel_change_pct(double base_median, double new_median);

typedef struct cap_boot_ci {
    double estimate_pct; /* delta on the full samples */
    double low_pct;      /* lower bound, Q(alpha / 2) of the replicates */
    double high_pct;     /* upper bound, Q(1 - alpha / 2) */
} cap_boot_ci;

/* Bootstrap percentile interval for delta (see above). resamples must be at
 * least 1 (2000 is the usual choice) and alpha in (0, 1).
 * Errors: CAP_E_MISUSE (out, base or new_ms NULL, a count of 0, resamples
 * of 0, alpha outside (0, 1), a value negative, infinite or NaN),
 * CAP_E_NOMEM. */
cap_result cap_stats_bootstrap_median_change(cap_boot_ci *out,
                                             const double *base,
                                             size_t base_n,
                                             const double *new_ms,
                                             size_t new_n, size_t resamples,
                                             double alpha, uint64_t seed);

/* ======================================================================
 * Holm-Bonferroni step-down adjustment
 *
 * With the m p-values sorted ascending, p(1) <= ... <= p(m), the adjusted
 * value of p(i) is
 *     max over j <= i of min(1, (m - j + 1) p(j)),
 * which is monotone in p and capped at 1; each adjusted value goes back to
 * its p-value's position. Rejecting where the adjusted value is < alpha
 * controls the family-wise error rate at alpha. Same as R's
 * p.adjust(p, "holm").
 * ====================================================================== */

/* Write the Holm-adjusted p-values of p[0..n) to adjusted[0..n), in the
 * same order. adjusted may be p itself. n of 0 does nothing and succeeds.
 * Errors: CAP_E_MISUSE (adjusted or p NULL with n > 0, a value outside
 * [0, 1] or NaN; adjusted untouched), CAP_E_NOMEM. */
cap_result cap_stats_holm(double *adjusted, const double *p, size_t n);

/* ======================================================================
 * Student's t distribution (for the between-run test of several runs a
 * side, docs/STATISTICS.md section 15)
 *
 * P(T > t) = I_x(df / 2, 1 / 2) / 2 for t >= 0, with x = df / (df + t^2)
 * and I the regularised incomplete beta function, evaluated by its
 * continued fraction (modified Lentz) on whichever side of the mean the
 * fraction converges fast, with 1 - x computed as t^2 / (df + t^2), so
 * that both tails keep their relative precision. The quantile is found by
 * bisection on that tail probability down to adjacent doubles. Agrees with
 * R's pt and qt to about 1e-14 relative in the tests.
 * ====================================================================== */

/* P(T > t) for Student's t with df degrees of freedom (df > 0, not
 * necessarily an integer): 0.5 at t = 0, 0 at +inf, 1 at -inf. NaN for t
 * NaN or df not > 0 (or NaN); df = +inf gives the normal tail. */
double cap_stats_pt_upper(double t, double df);

/* The quantile of Student's t: the t with P(T <= t) = p, for p in (0, 1)
 * and df > 0; -inf at 0, +inf at 1, NaN for p outside [0, 1] or NaN, or df
 * not > 0. */
double cap_stats_qt(double p, double df);

#ifdef __cplusplus
}
#endif
#endif
