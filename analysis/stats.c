/*
 * stats.c - the statistics toolbox behind capture_diff (see stats.h).
 *
 * Summary of the methods (docs/STATISTICS.md has the long form):
 *   rng        xoshiro256**, seeded by splitmix64
 *   select     three-way quickselect, median-of-three pivot, sort fallback
 *   quantile   type 7 (R's default): interpolate between order statistics
 *   U test     mid-ranks; exact null counts by DP without ties, else normal
 *              approximation with tie and continuity corrections
 *   bootstrap  independent resampling of both samples, percentile interval
 *   Holm       step-down, running maximum, capped at 1
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- pseudo-random numbers ------------------------------------------ */

uint64_t cap_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

void cap_rng_seed(cap_rng *rng, uint64_t seed)
{
    uint64_t sm = seed;
    for (int i = 0; i < 4; i++)
        rng->s[i] = cap_splitmix64(&sm);
}

static uint64_t rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t cap_rng_next(cap_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t out = rotl64(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl64(s[3], 45);
    return out;
}

uint64_t cap_rng_below(cap_rng *rng, uint64_t n)
{
    if (n == 0)
        return 0;
    if (n <= UINT32_MAX) {
        /* Lemire: the high half of a 32x32-bit product is uniform in
         * [0, n) once products whose low half falls below 2^32 mod n are
         * rejected. The division only runs in the rare suspect case. */
        uint32_t n32 = (uint32_t)n;
        uint64_t m = (cap_rng_next(rng) >> 32) * n32;
        if ((uint32_t)m < n32) {
            uint32_t reject_below = (uint32_t)(0u - n32) % n32;
            while ((uint32_t)m < reject_below)
                m = (cap_rng_next(rng) >> 32) * n32;
        }
        return m >> 32;
    }
    /* Reject the top partial copy of [0, n) in [0, 2^64). */
    uint64_t reject_below = (0 - n) % n;
    uint64_t r;
    do {
        r = cap_rng_next(rng);
    } while (r < reject_below);
    return r % n;
}

double cap_rng_uniform(cap_rng *rng)
{
    return (double)(cap_rng_next(rng) >> 11) * 0x1.0p-53;
}

double cap_rng_normal(cap_rng *rng)
{
    const double two_pi = 6.283185307179586476925286766559;
    double u1 = 1.0 - cap_rng_uniform(rng); /* (0, 1]: log is finite */
    double u2 = cap_rng_uniform(rng);
    return sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
}

/* ---- sorting and selection ------------------------------------------ */

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    if (a < b)
        return -1;
    if (a > b)
        return 1;
    /* Equal, or unordered: order NaN after every number. */
    return (isnan(a) != 0) - (isnan(b) != 0);
}

/* LSD radix sort of x[0..n) when no value has its sign bit set: the bit
 * patterns of such doubles (NaN included, after +inf) order as integers,
 * so the result is the array qsort with cmp_double gives, in O(n). 0 when
 * done; -1 (x untouched) when a value is negative or -0.0, or no memory. */
static int radix_sort_unsigned(double *x, size_t n)
{
    uint64_t *a = malloc(2 * n * sizeof *a);
    size_t(*count)[256] = calloc(8, sizeof *count);
    if (!a || !count) {
        free(a);
        free(count);
        return -1;
    }
    uint64_t *b = a + n;
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, &x[i], sizeof u);
        if (u >> 63) {
            free(a);
            free(count);
            return -1;
        }
        a[i] = u;
        for (int d = 0; d < 8; d++)
            count[d][(u >> (8 * d)) & 0xff]++;
    }
    for (int d = 0; d < 8; d++) {
        size_t *c = count[d];
        if (c[(a[0] >> (8 * d)) & 0xff] == n)
            continue; /* every key has the same digit here */
        size_t sum = 0;
        for (int v = 0; v < 256; v++) {
            size_t t = c[v];
            c[v] = sum;
            sum += t;
        }
        for (size_t i = 0; i < n; i++)
            b[c[(a[i] >> (8 * d)) & 0xff]++] = a[i];
        uint64_t *t = a;
        a = b;
        b = t;
    }
    for (size_t i = 0; i < n; i++)
        memcpy(&x[i], &a[i], sizeof a[i]);
    free(a < b ? a : b);
    free(count);
    return 0;
}

void cap_stats_sort(double *x, size_t n)
{
    if (n > 1 && (n < 256 || radix_sort_unsigned(x, n) != 0))
        qsort(x, n, sizeof *x, cmp_double);
}

static void swap_d(double *x, size_t i, size_t j)
{
    double t = x[i];
    x[i] = x[j];
    x[j] = t;
}

static void insertion_sort(double *x, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        double v = x[i];
        size_t j = i;
        while (j > 0 && x[j - 1] > v) {
            x[j] = x[j - 1];
            j--;
        }
        x[j] = v;
    }
}

static double median_of_three(double a, double b, double c)
{
    if (a < b) {
        if (b < c)
            return b;
        return a < c ? c : a;
    }
    if (a < c)
        return a;
    return b < c ? c : b;
}

double cap_stats_select(double *x, size_t n, size_t k)
{
    if (k >= n)
        return NAN;
    /* Rounds allowed before the sort fallback: twice the bits of n, plus
     * slack; a well-behaved run shrinks the range by a constant factor per
     * round and never gets near it. */
    unsigned budget = 8;
    for (size_t m = n; m > 0; m >>= 1)
        budget += 2;

    size_t lo = 0, hi = n; /* k lies in [lo, hi) */
    while (hi - lo > 1) {
        if (hi - lo <= 16) {
            insertion_sort(x + lo, hi - lo);
            break;
        }
        if (budget-- == 0) {
            cap_stats_sort(x + lo, hi - lo);
            break;
        }
        double pivot =
            median_of_three(x[lo], x[lo + (hi - lo) / 2], x[hi - 1]);
        /* Three-way partition: [lo, lt) < pivot, [lt, gt) == pivot,
         * [gt, hi) > pivot. The pivot is one of the values, so the middle
         * part is never empty (NaN compares neither way and stays there):
         * every round makes progress. */
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            if (x[i] < pivot)
                swap_d(x, lt++, i++);
            else if (x[i] > pivot)
                swap_d(x, i, --gt);
            else
                i++;
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            break;
    }
    return x[k];
}

/* ---- descriptive statistics ----------------------------------------- */

/* Linear interpolation a + f (b - a) for a <= b, f in [0, 1), defined
 * with infinite ends (the infinite end wins once f > 0). */
static double interpolate(double a, double b, double f)
{
    if (f == 0.0 || a == b)
        return a;
    if (isinf(a))
        return a;
    if (isinf(b))
        return b;
    return a + f * (b - a);
}

/* Split h = (n - 1) p into its integer part j and fraction; false when the
 * quantile is undefined. */
static int quantile_position(size_t n, double p, size_t *j, double *frac)
{
    if (n == 0 || !(p >= 0.0 && p <= 1.0))
        return 0;
    double h = (double)(n - 1) * p;
    double fl = floor(h);
    *j = (size_t)fl;
    *frac = h - fl;
    if (*j >= n - 1) { /* p == 1 */
        *j = n - 1;
        *frac = 0.0;
    }
    return 1;
}

double cap_stats_quantile_sorted(const double *sorted, size_t n, double p)
{
    size_t j;
    double f;
    if (!quantile_position(n, p, &j, &f))
        return NAN;
    if (f == 0.0)
        return sorted[j];
    return interpolate(sorted[j], sorted[j + 1], f);
}

double cap_stats_quantile_select(double *x, size_t n, double p)
{
    size_t j;
    double f;
    if (!quantile_position(n, p, &j, &f))
        return NAN;
    double a = cap_stats_select(x, n, j);
    if (f == 0.0)
        return a;
    /* After selection everything past j is >= x[j]: the next order
     * statistic is their minimum. */
    double b = x[j + 1];
    for (size_t i = j + 2; i < n; i++)
        if (x[i] < b)
            b = x[i];
    return interpolate(a, b, f);
}

double cap_stats_median_sorted(const double *sorted, size_t n)
{
    return cap_stats_quantile_sorted(sorted, n, 0.5);
}

double cap_stats_median_select(double *x, size_t n)
{
    return cap_stats_quantile_select(x, n, 0.5);
}

double cap_stats_mean(const double *x, size_t n)
{
    if (n == 0)
        return NAN;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += x[i];
    double m = sum / (double)n;
    if (!isfinite(m))
        return m;
    /* Second pass: the residuals' sum corrects the first pass's rounding. */
    double r = 0.0;
    for (size_t i = 0; i < n; i++)
        r += x[i] - m;
    return m + r / (double)n;
}

double cap_stats_geomean(const double *x, size_t n)
{
    if (n == 0)
        return NAN;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] > 0.0))
            return NAN;
        sum += log(x[i]);
    }
    return exp(sum / (double)n);
}

/* ---- Mann-Whitney U -------------------------------------------------- */

/* Unsigned 128-bit integers as two limbs (portable C11): the counts of the
 * exact U law reach C(98, 49) ~ 2.5e28, past a double's 2^53 integers. */
typedef struct mw_u128 {
    uint64_t lo, hi;
} mw_u128;

static void mw_add(mw_u128 *a, mw_u128 b)
{
    uint64_t lo = a->lo + b.lo;
    a->hi += b.hi + (lo < a->lo);
    a->lo = lo;
}

static void mw_sub(mw_u128 *a, mw_u128 b)
{
    uint64_t lo = a->lo - b.lo;
    a->hi -= b.hi + (a->lo < b.lo);
    a->lo = lo;
}

/* The nearest double but for the rounding of one addition (2^-52
 * relative at most). */
static double mw_double(mw_u128 a)
{
    return (double)a.hi * 18446744073709551616.0 + (double)a.lo;
}

/* The null distribution of U without ties, for samples of m and n values:
 * counts[u] for u <= c of the arrangements of the pooled order whose U is
 * u, and their total C(m + n, m) in *total_out, each counted exactly and
 * then rounded to a double. The counts are the coefficients of the
 * Gaussian binomial [m + n, m] in q, the product over i = 1 .. m of
 * (1 - q^(n + i)) / (1 - q^i): each step divides by (1 - q^i) (running
 * sums with stride i) and multiplies by (1 - q^(n + i)); after step i the
 * polynomial is [n + i, i], so every value stays a count, at most
 * C(97, 48) < 2^94 between the two halves of a step. O(m c) additions,
 * against O(m (m + n) c) for the placement recursion. Coefficients up to
 * c depend on none above it: a table made up to a smaller c holds the
 * same values. */
static cap_result mw_exact_counts(double *counts, double *total_out,
                                  size_t m, size_t n, size_t c)
{
    if (n < m) { /* the law is symmetric in m and n: keep steps few */
        size_t t = m;
        m = n;
        n = t;
    }
    size_t width = c + 1;
    mw_u128 *poly = calloc(width > m + 1 ? width : m + 1, sizeof *poly);
    if (!poly)
        return CAP_E_NOMEM;
    poly[0].lo = 1;
    for (size_t i = 1; i <= m; i++) {
        for (size_t u = i; u <= c; u++)
            mw_add(&poly[u], poly[u - i]);
        for (size_t u = c + 1; u-- > n + i;) /* from the top down */
            mw_sub(&poly[u], poly[u - n - i]);
    }
    for (size_t u = 0; u <= c; u++)
        counts[u] = mw_double(poly[u]);
    /* C(m + n, m) exactly: row m + n of Pascal's triangle, its first m + 1
     * entries (every entry at most C(m + n, m)) */
    memset(poly, 0, (m + 1) * sizeof *poly);
    poly[0].lo = 1;
    for (size_t row = 1; row <= m + n; row++)
        for (size_t k = row < m ? row : m; k > 0; k--)
            mw_add(&poly[k], poly[k - 1]);
    *total_out = mw_double(poly[m]);
    free(poly);
    return CAP_OK;
}

/* P(U' <= c[i]) into out[i] for i < k: the counts of u <= c[i] over
 * C(m + n, m), from one table made up to the largest c[i] (its counts up
 * to a smaller bound are those a table made up to that bound holds, bit
 * for bit: the same additions in the same order). */
static cap_result mw_exact_cdfs(double *out, size_t m, size_t n,
                                const size_t *c, size_t k)
{
    size_t cmax = 0;
    for (size_t i = 0; i < k; i++)
        cmax = c[i] > cmax ? c[i] : cmax;
    double *counts = malloc((cmax + 1) * sizeof *counts), total = 1.0;
    if (!counts)
        return CAP_E_NOMEM;
    cap_result rc = mw_exact_counts(counts, &total, m, n, cmax);
    for (size_t i = 0; rc == CAP_OK && i < k; i++) {
        double below = 0.0;
        for (size_t u = 0; u <= c[i]; u++)
            below += counts[u];
        out[i] = below / total;
    }
    free(counts);
    return rc;
}

/* Lower tail of the standard normal, Phi(z), accurate far into both
 * tails. */
static double pnorm_lower(double z)
{
    return 0.5 * erfc(-z / 1.4142135623730950488016887242097);
}

/* The normal approximation of the U test from x's mid-rank sum and the
 * tie correction's sum (every field of *out but ties). */
static void mw_normal(cap_mw_result *out, double rank_sum_x, double tie_sum,
                      double dnx, double dny)
{
    double dn = dnx + dny, mn = dnx * dny;
    double u = rank_sum_x - dnx * (dnx + 1.0) / 2.0;
    double z = 0.0, p, p_greater, p_less;
    double var = mn / 12.0 * ((dn + 1.0) - tie_sum / (dn * (dn - 1.0)));
    double d = u - mn / 2.0;
    if (var > 0.0) {
        double sd = sqrt(var);
        double corr = d > 0.0 ? 0.5 : (d < 0.0 ? -0.5 : 0.0);
        z = (d - corr) / sd;
        /* 2 (1 - Phi(|z|)) = erfc(|z| / sqrt 2), accurate in the tail */
        p = erfc(fabs(z) / 1.4142135623730950488016887242097);
        /* one-sided: R's continuity correction of 0.5 towards the
         * alternative's side */
        p_greater = pnorm_lower(-(d - 0.5) / sd);
        p_less = pnorm_lower((d + 0.5) / sd);
    } else {
        p = p_greater = p_less = 1.0; /* every value equal */
    }
    out->u = u;
    out->z = z;
    out->p_value = p > 1.0 ? 1.0 : p;
    out->p_greater = p_greater > 1.0 ? 1.0 : p_greater;
    out->p_less = p_less > 1.0 ? 1.0 : p_less;
    out->method = CAP_MW_NORMAL;
}

/* The groups of equal values of x - mu and y pooled (both ascending; a
 * sample with w NULL counts each value once): x's mid-rank sum, the tie
 * correction's sum of t^3 - t and the count of tied values. One merge of
 * the two sorted samples gives the same groups, in the same order, as
 * sorting the pooled values, so the same sums; the weighted walk gives
 * the unweighted one's on the expanded samples. A group of t equal values
 * at 0-based positions [i, j) shares the mid-rank (i + 1 + j) / 2. */
static void wgroups(const cap_wsample *x, const cap_wsample *y, double mu,
                    double *rank_sum_x, double *tie_sum, uint64_t *ties)
{
    *rank_sum_x = *tie_sum = 0.0;
    *ties = 0;
    size_t a = 0, b = 0;
    for (uint64_t i = 0; a < x->k || b < y->k;) {
        double v = a < x->k && (b >= y->k || x->v[a] - mu <= y->v[b])
                       ? x->v[a] - mu
                       : y->v[b];
        uint64_t in_x = 0, in_y = 0;
        while (a < x->k && x->v[a] - mu == v)
            in_x += x->w ? x->w[a++] : (a++, 1);
        while (b < y->k && y->v[b] == v)
            in_y += y->w ? y->w[b++] : (b++, 1);
        uint64_t j = i + in_x + in_y;
        double rank = (double)(i + 1 + j) / 2.0;
        *rank_sum_x += rank * (double)in_x;
        uint64_t t = j - i;
        if (t > 1) {
            *ties += t;
            *tie_sum += ((double)t * (double)t - 1.0) * (double)t;
        }
        i = j;
    }
}

cap_result cap_stats_mann_whitney_mu(cap_mw_result *out, const double *x,
                                     size_t nx, const double *y, size_t ny,
                                     double mu, cap_mw_method method)
{
    if (!out || !x || !y || nx == 0 || ny == 0 || !isfinite(mu))
        return CAP_E_MISUSE;
    if (method != CAP_MW_AUTO && method != CAP_MW_EXACT &&
        method != CAP_MW_NORMAL)
        return CAP_E_MISUSE;
    size_t total_n = nx + ny;
    if (total_n < nx || total_n > SIZE_MAX / sizeof(double))
        return CAP_E_MISUSE;
    for (size_t i = 0; i < nx; i++)
        if (isnan(x[i]))
            return CAP_E_MISUSE;
    for (size_t i = 0; i < ny; i++)
        if (isnan(y[i]))
            return CAP_E_MISUSE;

    /* Each sample sorted on its own (a radix sort for durations), then
     * one merge gives the tie groups of the pooled order: the same groups,
     * in the same order, as sorting the pooled values, so the same sums. */
    double *xs = malloc(total_n * sizeof *xs);
    if (!xs)
        return CAP_E_NOMEM;
    double *ys = xs + nx;
    memcpy(xs, x, nx * sizeof *xs);
    memcpy(ys, y, ny * sizeof *ys);
    cap_stats_sort(xs, nx);
    cap_stats_sort(ys, ny);
    /* R ranks c(x - mu, y): the first sample is shifted, in double; the
     * rounding of x - mu is monotone, so the shifted sample stays sorted. */
    if (mu != 0.0)
        for (size_t i = 0; i < nx; i++)
            xs[i] -= mu;

    double rank_sum_x, tie_sum;
    uint64_t ties;
    wgroups(&(cap_wsample){xs, NULL, nx}, &(cap_wsample){ys, NULL, ny}, 0.0,
            &rank_sum_x, &tie_sum, &ties);
    free(xs);

    double dnx = (double)nx, dny = (double)ny;
    double u = rank_sum_x - dnx * (dnx + 1.0) / 2.0;

    int exact_ok = ties == 0 && nx <= CAP_MW_EXACT_MAX && ny <= CAP_MW_EXACT_MAX;
    if (method == CAP_MW_EXACT && !exact_ok)
        return CAP_E_MISUSE;
    cap_mw_method used =
        (method == CAP_MW_NORMAL || !exact_ok) ? CAP_MW_NORMAL : CAP_MW_EXACT;

    double z = 0.0, p, p_greater, p_less;
    if (used == CAP_MW_EXACT) {
        /* Without ties U is an integer; the null law is symmetric about
         * mn / 2, so the two-sided p is twice the lower tail at the
         * smaller of U and mn - U, and P(U' >= U) = P(U' <= mn - U). */
        size_t ui = (size_t)u;
        size_t mn_i = nx * ny;
        size_t c = ui <= mn_i - ui ? ui : mn_i - ui;
        const size_t cs[3] = {c, ui, mn_i - ui};
        double cdf[3];
        cap_result rc = mw_exact_cdfs(cdf, nx, ny, cs, 3);
        if (rc != CAP_OK)
            return rc;
        p = 2.0 * cdf[0];
        p_less = cdf[1];
        p_greater = cdf[2];
    } else {
        mw_normal(out, rank_sum_x, tie_sum, dnx, dny);
        out->ties = ties;
        return CAP_OK;
    }
    out->u = u;
    out->z = z;
    out->p_value = p > 1.0 ? 1.0 : p;
    out->p_greater = p_greater > 1.0 ? 1.0 : p_greater;
    out->p_less = p_less > 1.0 ? 1.0 : p_less;
    out->method = used;
    out->ties = ties;
    return CAP_OK;
}

cap_result cap_stats_mann_whitney(cap_mw_result *out, const double *x,
                                  size_t nx, const double *y, size_t ny,
                                  cap_mw_method method)
{
    return cap_stats_mann_whitney_mu(out, x, nx, y, ny, 0.0, method);
}

/* ---- the shift of location: Hodges-Lehmann and its interval ------------ */

double cap_stats_qnorm(double p)
{
    if (!(p > 0.0 && p < 1.0))
        return p == 0.0 ? -INFINITY : p == 1.0 ? INFINITY : NAN;
    /* Acklam's rational approximation (relative error < 1.2e-9), then one
     * Halley step on Phi(x) - p, which brings it to double precision. */
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549732539343734e+00,
                               4.374664141464968e+00, 2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                               2.445134137142996e+00, 3.754408661907416e+00};
    const double plow = 0.02425;
    double q, r, x;
    if (p < plow) {
        q = sqrt(-2.0 * log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q +
             c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    } else if (p <= 1.0 - plow) {
        q = p - 0.5;
        r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r +
             a[5]) *
            q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r +
             1.0);
    } else {
        q = sqrt(-2.0 * log(1.0 - p));
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q +
              c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    }
    double e = pnorm_lower(x) - p;
    double u = e * 2.5066282746310002 * exp(x * x / 2.0);
    return x - u / (1.0 + x * u / 2.0);
}

/* Pairs (i, j) with fl(x[i] - y[j]) <= t (strict: < t), x and y sorted
 * ascending. For a fixed i the difference falls as j grows, so the pairs
 * form a suffix of j; that suffix starts later as i grows (two pointers). */
static uint64_t pairs_le(const double *x, size_t nx, const double *y,
                         size_t ny, double t, int strict)
{
    uint64_t count = 0;
    size_t j = 0;
    for (size_t i = 0; i < nx; i++) {
        while (j < ny && (strict ? !(x[i] - y[j] < t) : x[i] - y[j] > t))
            j++;
        count += ny - j;
    }
    return count;
}

/* The difference of 0-based rank k, given t, the one of rank k - 1 (x and
 * y sorted ascending): t again when more than k differences are <= t,
 * else the smallest difference above t. One sweep instead of a selection. */
static double next_difference(const double *x, size_t nx, const double *y,
                              size_t ny, double t, uint64_t k)
{
    if (pairs_le(x, nx, y, ny, t, 0) > k)
        return t;
    /* in row i the differences fall as j grows: the smallest one above t
     * is just before the first j whose difference is <= t */
    double best = INFINITY;
    size_t j = 0;
    for (size_t i = 0; i < nx; i++) {
        while (j < ny && x[i] - y[j] > t)
            j++;
        if (j > 0 && x[i] - y[j - 1] > t && x[i] - y[j - 1] < best)
            best = x[i] - y[j - 1];
    }
    return best;
}

/* The window of cap_stats_kth_difference: the differences x[i] - y[j]
 * strictly between lo and hi, below_lo of them at or under lo. */
typedef struct kth_window {
    const double *x, *y;
    size_t nx, ny;
    double lo, hi;
    uint64_t below_lo;
} kth_window;

/* Row i's differences in the window are y[*jh..*jl): the sweep moves the
 * two cursors on as i grows (x and y sorted). */
static void window_row(const kth_window *w, size_t i, size_t *jh, size_t *jl)
{
    while (*jh < w->ny && !(w->x[i] - w->y[*jh] < w->hi))
        (*jh)++;
    while (*jl < w->ny && w->x[i] - w->y[*jl] > w->lo)
        (*jl)++;
}

/* The differences in the window. */
static uint64_t window_count(const kth_window *w)
{
    uint64_t total = 0;
    size_t jh = 0, jl = 0;
    for (size_t i = 0; i < w->nx; i++) {
        window_row(w, i, &jh, &jl);
        total += jl - jh;
    }
    return total;
}

/* The window's differences into vals; returns how many. */
static size_t window_gather(const kth_window *w, double *vals)
{
    size_t n = 0, jh = 0, jl = 0;
    for (size_t i = 0; i < w->nx; i++) {
        window_row(w, i, &jh, &jl);
        for (size_t j = jh; j < jl; j++)
            vals[n++] = w->x[i] - w->y[j];
    }
    return n;
}

/* m ranks below total, one drawn uniformly in each of m equal strata (so
 * they come sorted). */
static void ranks_draw(uint64_t *ranks, size_t m, uint64_t total,
                       cap_rng *rng)
{
    for (size_t q = 0; q < m; q++) {
        uint64_t a = (uint64_t)((double)total * (double)q / (double)m);
        uint64_t b = (uint64_t)((double)total * (double)(q + 1) / (double)m);
        if (b > total)
            b = total;
        if (a < (q ? ranks[q - 1] : 0))
            a = ranks[q - 1];
        ranks[q] = b > a ? a + cap_rng_below(rng, b - a) : a;
        if (ranks[q] >= total)
            ranks[q] = total - 1;
    }
}

/* The window's differences of ranks[0..m) (sorted), in one sweep, into
 * vals. */
static void ranks_values(const kth_window *w, const uint64_t *ranks,
                         size_t m, double *vals)
{
    uint64_t seen = 0;
    size_t q = 0, jh = 0, jl = 0;
    for (size_t i = 0; i < w->nx && q < m; i++) {
        window_row(w, i, &jh, &jl);
        uint64_t row = jl - jh;
        while (q < m && ranks[q] < seen + row) {
            vals[q] = w->x[i] - w->y[jh + (size_t)(ranks[q] - seen)];
            q++;
        }
        seen += row;
    }
}

/* Two of the m sampled differences (vals, reordered) that bracket rank
 * f of the window with a wide margin: the sample order statistics, by
 * selection. */
static void pivots_pick(double pivots[2], double *vals, size_t m, double f)
{
    double d = 3.0 * sqrt(f * (1.0 - f) / (double)m) + 2.0 / (double)m;
    double fl = (f - d) * (double)m, fh = (f + d) * (double)m;
    size_t il = fl <= 0.0 ? 0 : (size_t)fl;
    size_t ih = fh >= (double)(m - 1) ? m - 1 : (size_t)ceil(fh);
    pivots[0] = cap_stats_select(vals, m, il);
    pivots[1] = ih > il ? cap_stats_select(vals + il + 1, m - il - 1,
                                           ih - il - 1)
                        : pivots[0];
}

/* Where the pivots stand: 1 with *out when one is the difference of rank
 * k, else 0 with the window's bounds moved past them. */
static int window_narrow(kth_window *w, const double pivots[2], uint64_t k,
                         double *out)
{
    for (int t = 0; t < 2; t++) {
        double p = pivots[t];
        if (!(p > w->lo && p < w->hi))
            continue; /* already outside the window (the other pivot
                         moved a bound past it) */
        uint64_t below = pairs_le(w->x, w->nx, w->y, w->ny, p, 1);
        uint64_t upto = pairs_le(w->x, w->nx, w->y, w->ny, p, 0);
        if (below <= k && k < upto) {
            *out = p;
            return 1;
        }
        if (k < below) {
            w->hi = p;
        } else {
            w->lo = p;
            w->below_lo = upto;
        }
    }
    return 0;
}

/* The selection's rounds (cap_stats_kth_difference), with vals of
 * gather_max doubles (and at least m) and ranks of m. */
static cap_result kth_rounds(double *out, kth_window *w, uint64_t k,
                             double *vals, uint64_t gather_max,
                             uint64_t *ranks, size_t m)
{
    cap_rng rng;
    cap_rng_seed(&rng, k);
    for (;;) {
        uint64_t total = window_count(w);
        if (total == 0 || k < w->below_lo) /* cannot happen */
            return CAP_E_MISUSE;
        if (total <= gather_max) {
            size_t n = window_gather(w, vals);
            *out = cap_stats_select(vals, n, (size_t)(k - w->below_lo));
            return CAP_OK;
        }
        ranks_draw(ranks, m, total, &rng);
        ranks_values(w, ranks, m, vals);
        double pivots[2];
        pivots_pick(pivots, vals, m,
                    (double)(k - w->below_lo) / (double)total);
        if (window_narrow(w, pivots, k, out))
            return CAP_OK;
    }
}

cap_result cap_stats_kth_difference(double *out, const double *x, size_t nx,
                                    const double *y, size_t ny, uint64_t k)
{
    if (!out || !x || !y || nx == 0 || ny == 0 ||
        (uint64_t)nx > UINT64_MAX / (uint64_t)ny ||
        k >= (uint64_t)nx * (uint64_t)ny)
        return CAP_E_MISUSE;
    /* Selection over the implicit matrix of differences, Floyd-Rivest
     * style: the answer lies strictly between lo and hi (below_lo
     * differences are <= lo). Each round draws m differences uniformly from
     * the window, takes two of them that bracket the answer's rank with a
     * wide margin, counts where they stand, and moves the bounds past
     * them; the window shrinks by a factor of about sqrt(m) / 6 a round.
     * Once it holds few enough differences, they are gathered and the
     * answer selected among them. Every pivot is a difference in the
     * window, so every round makes progress whatever the draws: the
     * generator only decides how fast, never what. */
    uint64_t gather_max = 4 * ((uint64_t)nx + (uint64_t)ny) + 256;
    size_t m = 2 * (nx + ny) < 64 ? 64 : 2 * (nx + ny);
    if (gather_max > SIZE_MAX / sizeof(double) ||
        m > SIZE_MAX / sizeof(uint64_t))
        return CAP_E_NOMEM;
    double *vals = malloc((size_t)gather_max * sizeof *vals);
    uint64_t *ranks = malloc(m * sizeof *ranks);
    cap_result rc = CAP_E_NOMEM;
    if (vals && ranks) {
        kth_window w = {x, y, nx, ny, -INFINITY, INFINITY, 0};
        rc = kth_rounds(out, &w, k, vals, gather_max, ranks, m);
    }
    free(vals);
    free(ranks);
    return rc;
}

static int finite_all(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

/* qu of the shift's interval by the normal approximation: the
 * tie-corrected variance and the continuity correction (0 when even the
 * smallest difference is inside the level). */
static uint64_t shift_rank_normal(double alpha, double dn, double dmn,
                                  double tie_sum)
{
    double var = dmn / 12.0 * ((dn + 1.0) - tie_sum / (dn * (dn - 1.0)));
    double q = ceil(dmn / 2.0 - 0.5 + cap_stats_qnorm(alpha / 2.0) *
                                          sqrt(var > 0.0 ? var : 0.0));
    return q > 0.0 ? (uint64_t)q : 0;
}

cap_result cap_stats_shift_ci(cap_shift_ci *out, const double *x, size_t nx,
                              const double *y, size_t ny, double alpha,
                              cap_mw_method method)
{
    if (!out || !x || !y || nx == 0 || ny == 0 || !(alpha > 0.0 && alpha < 1.0))
        return CAP_E_MISUSE;
    if (method != CAP_MW_AUTO && method != CAP_MW_EXACT &&
        method != CAP_MW_NORMAL)
        return CAP_E_MISUSE;
    if (!finite_all(x, nx) || !finite_all(y, ny))
        return CAP_E_MISUSE;
    size_t total_n = nx + ny;
    if (total_n < nx || total_n > SIZE_MAX / sizeof(double) ||
        (uint64_t)nx > UINT64_MAX / (uint64_t)ny / 4)
        return CAP_E_MISUSE;
    double *sx = malloc(total_n * sizeof *sx);
    if (!sx)
        return CAP_E_NOMEM;
    double *sy = sx + nx;
    memcpy(sx, x, nx * sizeof *sx);
    memcpy(sy, y, ny * sizeof *sy);
    cap_stats_sort(sx, nx);
    cap_stats_sort(sy, ny);

    /* Ties in the pooled sample and their variance correction, as in the
     * U test. */
    double rank_sum_x, tie_sum;
    uint64_t ties;
    wgroups(&(cap_wsample){sx, NULL, nx}, &(cap_wsample){sy, NULL, ny}, 0.0,
            &rank_sum_x, &tie_sum, &ties);
    int exact_ok = ties == 0 && nx <= CAP_MW_EXACT_MAX && ny <= CAP_MW_EXACT_MAX;
    if (method == CAP_MW_EXACT && !exact_ok) {
        free(sx);
        return CAP_E_MISUSE;
    }
    cap_mw_method used =
        (method == CAP_MW_NORMAL || !exact_ok) ? CAP_MW_NORMAL : CAP_MW_EXACT;

    uint64_t mn = (uint64_t)nx * (uint64_t)ny;
    /* qu: R's qwilcox(alpha / 2, nx, ny), the smallest q with
     * P(U' <= q) >= alpha / 2 (exact), or its normal approximation with
     * the tie-corrected variance and the continuity correction. */
    uint64_t qu = 0;
    if (used == CAP_MW_EXACT) {
        size_t c = (size_t)(mn / 2);
        double *counts = malloc((c + 1) * sizeof *counts), total = 1.0;
        cap_result rc = counts ? mw_exact_counts(counts, &total, nx, ny, c)
                               : CAP_E_NOMEM;
        if (rc != CAP_OK) {
            free(counts);
            free(sx);
            return rc;
        }
        double cum = 0.0;
        qu = c;
        for (size_t q = 0; q <= c; q++) {
            cum += counts[q];
            if (cum / total >= alpha / 2.0) {
                qu = q;
                break;
            }
        }
        free(counts);
    } else {
        qu = shift_rank_normal(alpha, (double)total_n, (double)mn, tie_sum);
    }
    int full_level = qu > 0;
    if (qu == 0)
        qu = 1;
    if (qu > (mn + 1) / 2)
        qu = (mn + 1) / 2;
    /* 1-based order statistics qu and mn - qu + 1 of x[i] - y[j]; the
     * estimate is the median of all of them. */
    double lo_v = 0, hi_v = 0, m1 = 0, m2; /* m1 copied before rc is known */
    cap_result rc = cap_stats_kth_difference(&lo_v, sx, nx, sy, ny, qu - 1);
    if (rc == CAP_OK)
        rc = cap_stats_kth_difference(&hi_v, sx, nx, sy, ny, mn - qu);
    if (rc == CAP_OK)
        rc = cap_stats_kth_difference(&m1, sx, nx, sy, ny, (mn - 1) / 2);
    m2 = m1;
    if (rc == CAP_OK && mn % 2 == 0)
        m2 = next_difference(sx, nx, sy, ny, m1, mn / 2);
    free(sx);
    if (rc != CAP_OK)
        return rc;
    out->estimate = m1 == m2 ? m1 : (m1 + m2) / 2.0;
    out->low = lo_v;
    out->high = hi_v;
    out->rank = qu;
    out->full_level = full_level;
    out->method = used;
    return CAP_OK;
}

/* ---- weighted samples ------------------------------------------------- */

uint64_t cap_wsample_size(const cap_wsample *s)
{
    uint64_t n = 0;
    for (size_t i = 0; s && i < s->k; i++)
        n += s->w[i];
    return n;
}

/* s holds ascending values (finite ones when `finite`), weights >= 1. */
static int wsample_ok(const cap_wsample *s, int finite)
{
    if (!s || (s->k && (!s->v || !s->w)))
        return 0;
    for (size_t i = 0; i < s->k; i++) {
        if (s->w[i] == 0 || isnan(s->v[i]) || (finite && !isfinite(s->v[i])))
            return 0;
        if (i && !(s->v[i - 1] <= s->v[i]))
            return 0;
    }
    return 1;
}

/* The r-th smallest (0-based) value of the expanded sample, r < size. */
static double wstat(const cap_wsample *s, uint64_t r)
{
    uint64_t seen = 0;
    for (size_t i = 0; i < s->k; i++) {
        seen += s->w[i];
        if (r < seen)
            return s->v[i];
    }
    return s->k ? s->v[s->k - 1] : NAN;
}

double cap_stats_wquantile(const cap_wsample *s, double p)
{
    uint64_t n = cap_wsample_size(s);
    if (n == 0 || !(p >= 0.0 && p <= 1.0))
        return NAN;
    double h = (double)(n - 1) * p;
    double fl = floor(h);
    uint64_t j = (uint64_t)fl;
    double f = h - fl;
    if (j >= n - 1) {
        j = n - 1;
        f = 0.0;
    }
    double a = wstat(s, j);
    if (f == 0.0)
        return a;
    return interpolate(a, wstat(s, j + 1), f);
}

double cap_stats_wmean(const cap_wsample *s)
{
    uint64_t n = cap_wsample_size(s);
    if (n == 0)
        return NAN;
    double sum = 0.0;
    for (size_t i = 0; i < s->k; i++)
        sum += s->v[i] * (double)s->w[i];
    double m = sum / (double)n;
    if (!isfinite(m))
        return m;
    double r = 0.0;
    for (size_t i = 0; i < s->k; i++)
        r += (s->v[i] - m) * (double)s->w[i];
    return m + r / (double)n;
}

/* The expanded sample of s (size n) in a new array; NULL when out of
 * memory. */
static double *wexpand(const cap_wsample *s, uint64_t n)
{
    double *x = malloc((n ? n : 1) * sizeof *x);
    if (!x)
        return NULL;
    size_t at = 0;
    for (size_t i = 0; i < s->k; i++)
        for (uint64_t c = 0; c < s->w[i]; c++)
            x[at++] = s->v[i];
    return x;
}

/* Both samples within CAP_MW_EXACT_MAX and no value shared: the
 * unweighted function, on the expanded samples, uses the exact method. */
static int wsmall(uint64_t nx, uint64_t ny)
{
    return nx <= CAP_MW_EXACT_MAX && ny <= CAP_MW_EXACT_MAX;
}

cap_result cap_stats_mann_whitney_mu_w(cap_mw_result *out,
                                       const cap_wsample *x,
                                       const cap_wsample *y, double mu,
                                       cap_mw_method method)
{
    if (!out || !wsample_ok(x, 0) || !wsample_ok(y, 0) || !isfinite(mu))
        return CAP_E_MISUSE;
    if (method != CAP_MW_AUTO && method != CAP_MW_EXACT &&
        method != CAP_MW_NORMAL)
        return CAP_E_MISUSE;
    uint64_t nx = cap_wsample_size(x), ny = cap_wsample_size(y);
    if (nx == 0 || ny == 0)
        return CAP_E_MISUSE;
    double rank_sum_x, tie_sum;
    uint64_t ties;
    wgroups(x, y, mu, &rank_sum_x, &tie_sum, &ties);
    if (method != CAP_MW_NORMAL && ties == 0 && wsmall(nx, ny)) {
        double *ex = wexpand(x, nx), *ey = wexpand(y, ny);
        cap_result rc = ex && ey ? cap_stats_mann_whitney_mu(
                                       out, ex, (size_t)nx, ey, (size_t)ny,
                                       mu, method)
                                 : CAP_E_NOMEM;
        free(ex);
        free(ey);
        return rc;
    }
    if (method == CAP_MW_EXACT)
        return CAP_E_MISUSE;
    mw_normal(out, rank_sum_x, tie_sum, (double)nx, (double)ny);
    out->ties = (size_t)ties;
    return CAP_OK;
}

/* Differences x - y (weighted) <= t (strict: < t); ysuf[j] is the weight
 * of y[j..). As pairs_le. */
static uint64_t wpairs_le(const cap_wsample *x, const cap_wsample *y,
                          const uint64_t *ysuf, double t, int strict)
{
    uint64_t count = 0;
    size_t j = 0;
    for (size_t i = 0; i < x->k; i++) {
        while (j < y->k &&
               (strict ? !(x->v[i] - y->v[j] < t) : x->v[i] - y->v[j] > t))
            j++;
        count += x->w[i] * ysuf[j];
    }
    return count;
}

/* Doubles as unsigned keys in the same order (-0 just below +0). */
static uint64_t dkey(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b >> 63 ? ~b : b | (UINT64_C(1) << 63);
}

static double dval(uint64_t key)
{
    uint64_t b = key >> 63 ? key & ~(UINT64_C(1) << 63) : ~key;
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* The k-th difference with ysuf given: the smallest double t with more
 * than k differences <= t, by bisection over the doubles between the
 * smallest and the largest difference (at most 64 passes). That t is a
 * difference: the same double the unweighted selection returns. */
static double wkth(const cap_wsample *x, const cap_wsample *y,
                   const uint64_t *ysuf, uint64_t k)
{
    uint64_t lo = dkey(x->v[0] - y->v[y->k - 1]);
    uint64_t hi = dkey(x->v[x->k - 1] - y->v[0]);
    if (wpairs_le(x, y, ysuf, dval(lo), 0) > k)
        hi = lo;
    while (hi - lo > 1) { /* count(lo) <= k < count(hi) */
        uint64_t mid = lo + (hi - lo) / 2;
        if (wpairs_le(x, y, ysuf, dval(mid), 0) > k)
            hi = mid;
        else
            lo = mid;
    }
    double d = dval(hi);
    return d == 0.0 ? 0.0 : d; /* +0, as x - y gives */
}

/* Suffix weights of y: ysuf[j] = w[j] + ... + w[k - 1], ysuf[k] = 0. */
static uint64_t *wsuffix(const cap_wsample *y)
{
    uint64_t *s = malloc((y->k + 1) * sizeof *s);
    if (!s)
        return NULL;
    s[y->k] = 0;
    for (size_t j = y->k; j-- > 0;)
        s[j] = s[j + 1] + y->w[j];
    return s;
}

cap_result cap_stats_kth_difference_w(double *out, const cap_wsample *x,
                                      const cap_wsample *y, uint64_t k)
{
    if (!out || !wsample_ok(x, 1) || !wsample_ok(y, 1))
        return CAP_E_MISUSE;
    uint64_t nx = cap_wsample_size(x), ny = cap_wsample_size(y);
    if (nx == 0 || ny == 0 || nx > UINT64_MAX / ny || k >= nx * ny)
        return CAP_E_MISUSE;
    uint64_t *ysuf = wsuffix(y);
    if (!ysuf)
        return CAP_E_NOMEM;
    *out = wkth(x, y, ysuf, k);
    free(ysuf);
    return CAP_OK;
}

cap_result cap_stats_shift_ci_w(cap_shift_ci *out, const cap_wsample *x,
                                const cap_wsample *y, double alpha,
                                cap_mw_method method)
{
    if (!out || !wsample_ok(x, 1) || !wsample_ok(y, 1) ||
        !(alpha > 0.0 && alpha < 1.0))
        return CAP_E_MISUSE;
    if (method != CAP_MW_AUTO && method != CAP_MW_EXACT &&
        method != CAP_MW_NORMAL)
        return CAP_E_MISUSE;
    uint64_t nx = cap_wsample_size(x), ny = cap_wsample_size(y);
    if (nx == 0 || ny == 0 || nx > UINT64_MAX / ny / 4)
        return CAP_E_MISUSE;
    double rank_sum_x, tie_sum;
    uint64_t ties;
    wgroups(x, y, 0.0, &rank_sum_x, &tie_sum, &ties);
    if (method != CAP_MW_NORMAL && ties == 0 && wsmall(nx, ny)) {
        double *ex = wexpand(x, nx), *ey = wexpand(y, ny);
        cap_result rc = ex && ey ? cap_stats_shift_ci(out, ex, (size_t)nx, ey,
                                                      (size_t)ny, alpha,
                                                      method)
                                 : CAP_E_NOMEM;
        free(ex);
        free(ey);
        return rc;
    }
    if (method == CAP_MW_EXACT)
        return CAP_E_MISUSE;
    uint64_t mn = nx * ny;
    uint64_t qu = shift_rank_normal(alpha, (double)(nx + ny), (double)mn,
                                    tie_sum);
    int full_level = qu > 0;
    if (qu == 0)
        qu = 1;
    if (qu > (mn + 1) / 2)
        qu = (mn + 1) / 2;
    uint64_t *ysuf = wsuffix(y);
    if (!ysuf)
        return CAP_E_NOMEM;
    double lo_v = wkth(x, y, ysuf, qu - 1);
    double hi_v = wkth(x, y, ysuf, mn - qu);
    double m1 = wkth(x, y, ysuf, (mn - 1) / 2), m2 = m1;
    if (mn % 2 == 0 && wpairs_le(x, y, ysuf, m1, 0) <= mn / 2) {
        /* the next difference above m1: in row i, just before the first
           j whose difference is <= m1 (as next_difference) */
        double best = INFINITY;
        size_t j = 0;
        for (size_t i = 0; i < x->k; i++) {
            while (j < y->k && x->v[i] - y->v[j] > m1)
                j++;
            if (j > 0 && x->v[i] - y->v[j - 1] > m1 &&
                x->v[i] - y->v[j - 1] < best)
                best = x->v[i] - y->v[j - 1];
        }
        m2 = best;
    }
    free(ysuf);
    out->estimate = m1 == m2 ? m1 : (m1 + m2) / 2.0;
    out->low = lo_v;
    out->high = hi_v;
    out->rank = qu;
    out->full_level = full_level;
    out->method = CAP_MW_NORMAL;
    return CAP_OK;
}

/* ---- bootstrap -------------------------------------------------------- */

double cap_stats_rel_change_pct(double base_median, double new_median)
{
    if (isnan(base_median) || isnan(new_median))
        return NAN;
    if (base_median == 0.0) {
        if (new_median == 0.0)
            return 0.0;
        return new_median > 0.0 ? INFINITY : -INFINITY;
    }
    return (new_median / base_median - 1.0) * 100.0;
}

static int durations_ok(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(x[i] >= 0.0 && x[i] < INFINITY))
            return 0;
    return 1;
}

/* Median of n draws with replacement from sorted[0..n), with counts[0..n)
 * as scratch. As sorted is ascending, the resample's r-th smallest value is
 * sorted[j] for the r-th smallest drawn index j: counting how often each
 * index is drawn and scanning the counts (a counting sort of the indices)
 * finds the resample's median exactly, in O(n), without moving values. It
 * equals quickselect on the drawn values, about five times faster. */
static double resample_median(size_t *counts, const double *sorted, size_t n,
                              cap_rng *rng)
{
    memset(counts, 0, n * sizeof *counts);
    for (size_t i = 0; i < n; i++)
        counts[cap_rng_below(rng, n)]++;
    /* 0-based ranks of the middle value(s): equal when n is odd. */
    size_t lo_rank = (n - 1) / 2, hi_rank = n / 2;
    size_t seen = 0, j = 0;
    while (seen + counts[j] <= lo_rank)
        seen += counts[j++];
    double lo = sorted[j];
    while (seen + counts[j] <= hi_rank)
        seen += counts[j++];
    return interpolate(lo, sorted[j], lo_rank == hi_rank ? 0.0 : 0.5);
}

cap_result cap_stats_bootstrap_median_change(cap_boot_ci *out,
                                             const double *base,
                                             size_t base_n,
                                             const double *new_ms,
                                             size_t new_n, size_t resamples,
                                             double alpha, uint64_t seed)
{
    if (!out || !base || !new_ms || base_n == 0 || new_n == 0 ||
        resamples == 0 || !(alpha > 0.0 && alpha < 1.0))
        return CAP_E_MISUSE;
    if (!durations_ok(base, base_n) || !durations_ok(new_ms, new_n))
        return CAP_E_MISUSE;
    size_t count_n = base_n > new_n ? base_n : new_n;
    size_t cells = base_n + new_n;
    if (cells < base_n || cells > SIZE_MAX - resamples ||
        cells + resamples > SIZE_MAX / sizeof(double) ||
        count_n > SIZE_MAX / sizeof(size_t))
        return CAP_E_MISUSE;
    cells += resamples;

    double *mem = malloc(cells * sizeof *mem);
    size_t *counts = malloc(count_n * sizeof *counts);
    if (!mem || !counts) {
        free(mem);
        free(counts);
        return CAP_E_NOMEM;
    }
    double *sb = mem, *sn = sb + base_n, *reps = sn + new_n;
    memcpy(sb, base, base_n * sizeof *sb);
    memcpy(sn, new_ms, new_n * sizeof *sn);
    cap_stats_sort(sb, base_n);
    cap_stats_sort(sn, new_n);

    double estimate = cap_stats_rel_change_pct(
        cap_stats_median_sorted(sb, base_n), cap_stats_median_sorted(sn, new_n));

    cap_rng rng;
    cap_rng_seed(&rng, seed);
    for (size_t r = 0; r < resamples; r++) {
        double mb = resample_median(counts, sb, base_n, &rng);
        double mn = resample_median(counts, sn, new_n, &rng);
        reps[r] = cap_stats_rel_change_pct(mb, mn);
    }
    cap_stats_sort(reps, resamples);
    out->estimate_pct = estimate;
    out->low_pct = cap_stats_quantile_sorted(reps, resamples, alpha / 2.0);
    out->high_pct =
        cap_stats_quantile_sorted(reps, resamples, 1.0 - alpha / 2.0);
    free(counts);
    free(mem);
    return CAP_OK;
}

/* ---- Holm-Bonferroni ------------------------------------------------- */

typedef struct holm_item {
    double p;
    size_t idx;
} holm_item;

static int cmp_holm_item(const void *pa, const void *pb)
{
    const holm_item *a = pa, *b = pb;
    if (a->p < b->p)
        return -1;
    if (a->p > b->p)
        return 1;
    return (a->idx > b->idx) - (a->idx < b->idx); /* deterministic */
}

cap_result cap_stats_holm(double *adjusted, const double *p, size_t n)
{
    if (n == 0)
        return CAP_OK;
    if (!adjusted || !p || n > SIZE_MAX / sizeof(holm_item))
        return CAP_E_MISUSE;
    for (size_t i = 0; i < n; i++)
        if (!(p[i] >= 0.0 && p[i] <= 1.0))
            return CAP_E_MISUSE;
    holm_item *items = malloc(n * sizeof *items);
    if (!items)
        return CAP_E_NOMEM;
    for (size_t i = 0; i < n; i++)
        items[i] = (holm_item){p[i], i};
    qsort(items, n, sizeof *items, cmp_holm_item);
    /* Copies of p are in items, so adjusted may alias p. */
    double running = 0.0;
    for (size_t i = 0; i < n; i++) {
        double v = (double)(n - i) * items[i].p;
        if (v > 1.0)
            v = 1.0;
        if (v > running)
            running = v;
        adjusted[items[i].idx] = running;
    }
    free(items);
    return CAP_OK;
}

/* ---- Student's t ----------------------------------------------------- */

/* The continued fraction of the regularised incomplete beta function
 * I_x(a, b) (modified Lentz), y = 1 - x given apart; it converges fast
 * for x < (a + 1) / (a + b + 2). Returns I_x(a, b) without its front
 * factor x^a y^b / (a B(a, b)). */
/* One step of the modified Lentz method with partial numerator aa:
 * updates c and d and returns the factor the fraction is multiplied by. */
static double lentz_step(double *c, double *d, double aa)
{
    const double tiny = 1e-300;
    *d = 1.0 + aa * *d;
    if (fabs(*d) < tiny)
        *d = tiny;
    *c = 1.0 + aa / *c;
    if (fabs(*c) < tiny)
        *c = tiny;
    *d = 1.0 / *d;
    return *d * *c;
}

static double beta_cf(double a, double b, double x)
{
    double qab = a + b, qap = a + 1.0, qam = a - 1.0;
    double c = 1.0, d = 1.0 - qab * x / qap;
    if (fabs(d) < 1e-300)
        d = 1e-300;
    d = 1.0 / d;
    double h = d;
    for (int m = 1; m <= 100000; m++) {
        double m2 = 2.0 * m;
        h *= lentz_step(&c, &d, m * (b - m) * x / ((qam + m2) * (a + m2)));
        double del = lentz_step(
            &c, &d, -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)));
        h *= del;
        if (fabs(del - 1.0) < 1e-16)
            break;
    }
    return h;
}

/* I_x(a, b) with y = 1 - x computed by the caller (both in [0, 1]). */
static double beta_reg(double x, double y, double a, double b)
{
    if (x <= 0.0)
        return 0.0;
    if (y <= 0.0)
        return 1.0;
    double lfront = a * log(x) + b * log(y) - (lgamma(a) + lgamma(b) -
                                               lgamma(a + b));
    if (x < (a + 1.0) / (a + b + 2.0))
        return exp(lfront) * beta_cf(a, b, x) / a;
    return 1.0 - exp(lfront) * beta_cf(b, a, y) / b;
}

double cap_stats_pt_upper(double t, double df)
{
    if (isnan(t) || !(df > 0.0))
        return NAN;
    if (isinf(df))
        return 0.5 * erfc(t / sqrt(2.0));
    if (isinf(t))
        return t > 0 ? 0.0 : 1.0;
    double t2 = t * t;
    /* P(|T| > |t|) = I_x(df / 2, 1 / 2), x = df / (df + t^2) */
    double two = beta_reg(df / (df + t2), t2 / (df + t2), df / 2.0, 0.5);
    return t >= 0.0 ? two / 2.0 : 1.0 - two / 2.0;
}

double cap_stats_qt(double p, double df)
{
    if (isnan(p) || !(df > 0.0) || p < 0.0 || p > 1.0)
        return NAN;
    if (p == 0.0 || p == 1.0)
        return p == 0.0 ? -INFINITY : INFINITY;
    if (p == 0.5)
        return 0.0;
    double q = p < 0.5 ? p : 1.0 - p; /* the upper tail to reach, < 0.5 */
    double lo = 0.0, hi = 1.0;
    while (cap_stats_pt_upper(hi, df) > q) {
        lo = hi;
        hi *= 2.0;
        if (isinf(hi))
            return p < 0.5 ? -INFINITY : INFINITY;
    }
    /* the upper tail falls as t grows: keep P(T > lo) > q >= P(T > hi) */
    for (;;) {
        double mid = lo + (hi - lo) / 2.0;
        if (!(mid > lo && mid < hi))
            break;
        if (cap_stats_pt_upper(mid, df) > q)
            lo = mid;
        else
            hi = mid;
    }
    return p < 0.5 ? -hi : hi;
}
