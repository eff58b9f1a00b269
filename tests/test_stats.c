/*
 * test_stats.c - analysis/stats.c: generator, selection, quantiles, the
 * Mann-Whitney test, the bootstrap interval and Holm's adjustment.
 *
 * Reference values: the generators' published known-answer outputs; hand
 * computation for quantiles and small tests; R 4.2.2 (quantile, wilcox.test,
 * p.adjust) for the rest, with the R commands and outputs recorded in
 * docs/STATISTICS.md; brute-force enumeration for the exact U law.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stats.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Fail unless |actual - expected| <= tol, printing both values in full.
 * Equal infinities pass; NaN never does (use assert_nan). */
#define assert_close(actual, expected, tol)                                    \
    assert_close_at((actual), (expected), (tol), __FILE__, __LINE__)
static void assert_close_at(double a, double e, double tol, const char *file,
                            int line)
{
    if (a == e || fabs(a - e) <= tol)
        return;
    print_error("got %.17g, expected %.17g (tolerance %g)\n", a, e, tol);
    _fail(file, line);
}

#define assert_nan(v) assert_true(isnan(v))

/* ---- generator ---------------------------------------------------------- */

static void splitmix64_from_zero_gives_the_published_outputs(void **state)
{
    (void)state;
    uint64_t s = 0;
    assert_int_equal(cap_splitmix64(&s), UINT64_C(0xE220A8397B1DCDAF));
    assert_int_equal(cap_splitmix64(&s), UINT64_C(0x6E789E6AA1B965F4));
    assert_int_equal(cap_splitmix64(&s), UINT64_C(0x06C45D188009454F));
    assert_int_equal(cap_splitmix64(&s), UINT64_C(0xF88BB8A8724C81EC));
}

static void xoshiro_from_state_1234_gives_the_published_outputs(void **state)
{
    (void)state;
    cap_rng rng = {{1, 2, 3, 4}};
    const uint64_t want[] = {UINT64_C(11520), UINT64_C(0),
                             UINT64_C(1509978240),
                             UINT64_C(1215971899390074240),
                             UINT64_C(1216172134540287360),
                             UINT64_C(607988272756665600)};
    for (size_t i = 0; i < ARRAY_LEN(want); i++)
        assert_int_equal(cap_rng_next(&rng), want[i]);
}

static void seeding_fills_the_state_with_splitmix64_outputs(void **state)
{
    (void)state;
    cap_rng rng;
    cap_rng_seed(&rng, 0);
    assert_int_equal(rng.s[0], UINT64_C(0xE220A8397B1DCDAF));
    assert_int_equal(rng.s[1], UINT64_C(0x6E789E6AA1B965F4));
    assert_int_equal(rng.s[2], UINT64_C(0x06C45D188009454F));
    assert_int_equal(rng.s[3], UINT64_C(0xF88BB8A8724C81EC));
}

static void the_same_seed_repeats_the_sequence_and_another_does_not(void **state)
{
    (void)state;
    cap_rng a, b, c;
    cap_rng_seed(&a, 42);
    cap_rng_seed(&b, 42);
    cap_rng_seed(&c, 43);
    int differs = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t va = cap_rng_next(&a);
        assert_int_equal(va, cap_rng_next(&b));
        differs += va != cap_rng_next(&c);
    }
    assert_int_equal(differs, 1000);
}

static void below_stays_in_range_and_is_uniform(void **state)
{
    (void)state;
    cap_rng rng;
    cap_rng_seed(&rng, 7);
    assert_int_equal(cap_rng_below(&rng, 0), 0);
    assert_int_equal(cap_rng_below(&rng, 1), 0);

    /* 60000 draws over 6 faces: each count has sd 91; 6 sd of slack. */
    unsigned counts[6] = {0};
    for (int i = 0; i < 60000; i++) {
        uint64_t v = cap_rng_below(&rng, 6);
        assert_true(v < 6);
        counts[v]++;
    }
    for (int f = 0; f < 6; f++)
        assert_in_range(counts[f], 10000 - 550, 10000 + 550);

    /* Above 2^32 the rejection path: in range, and both halves of the
     * range are reached about equally. */
    const uint64_t big = UINT64_C(3) << 40;
    unsigned upper = 0;
    for (int i = 0; i < 10000; i++) {
        uint64_t v = cap_rng_below(&rng, big);
        assert_true(v < big);
        upper += v >= big / 2;
    }
    assert_in_range(upper, 5000 - 300, 5000 + 300);
}

static void uniform_and_normal_have_the_right_moments(void **state)
{
    (void)state;
    cap_rng rng;
    cap_rng_seed(&rng, 11);
    const int n = 100000;
    double su = 0, sz = 0, szz = 0;
    for (int i = 0; i < n; i++) {
        double u = cap_rng_uniform(&rng);
        assert_true(u >= 0.0 && u < 1.0);
        su += u;
        double z = cap_rng_normal(&rng);
        sz += z;
        szz += z * z;
    }
    /* Standard errors: 0.0009 for the uniform's mean, 0.0032 for the
     * normal's mean, 0.0045 for its variance; 5 of them as slack. */
    assert_close(su / n, 0.5, 0.0046);
    assert_close(sz / n, 0.0, 0.016);
    assert_close(szz / n - (sz / n) * (sz / n), 1.0, 0.023);
}

/* ---- sorting and selection ---------------------------------------------- */

static void sort_orders_values_and_puts_nan_last(void **state)
{
    (void)state;
    double x[] = {3, NAN, -1, 2, 2, -INFINITY, 0};
    cap_stats_sort(x, ARRAY_LEN(x));
    const double want[] = {-INFINITY, -1, 0, 2, 2, 3};
    for (size_t i = 0; i < ARRAY_LEN(want); i++)
        assert_true(x[i] == want[i]);
    assert_nan(x[6]);
}

/* Check that x[k] is the k-th order statistic and x is partitioned
 * around it. */
static void check_selected(const double *x, const double *sorted, size_t n,
                           size_t k)
{
    assert_true(x[k] == sorted[k]);
    for (size_t i = 0; i < k; i++)
        assert_true(x[i] <= x[k]);
    for (size_t i = k + 1; i < n; i++)
        assert_true(x[i] >= x[k]);
}

static void select_finds_every_order_statistic(void **state)
{
    (void)state;
    cap_rng rng;
    cap_rng_seed(&rng, 3);
    enum { MAXN = 300 };
    double src[MAXN], sorted[MAXN], x[MAXN];
    const size_t sizes[] = {1, 2, 3, 16, 17, 100, 300};
    /* Three kinds of data: distinct values, few distinct values (many
     * ties), and already sorted / reversed. */
    for (int kind = 0; kind < 4; kind++) {
        for (size_t si = 0; si < ARRAY_LEN(sizes); si++) {
            size_t n = sizes[si];
            for (size_t i = 0; i < n; i++) {
                if (kind == 0)
                    src[i] = cap_rng_uniform(&rng);
                else if (kind == 1)
                    src[i] = (double)cap_rng_below(&rng, 3);
                else if (kind == 2)
                    src[i] = (double)i;
                else
                    src[i] = (double)(n - i);
            }
            memcpy(sorted, src, n * sizeof *src);
            cap_stats_sort(sorted, n);
            for (size_t k = 0; k < n; k++) {
                memcpy(x, src, n * sizeof *src);
                double v = cap_stats_select(x, n, k);
                assert_true(v == sorted[k]);
                check_selected(x, sorted, n, k);
            }
        }
    }
}

static void select_out_of_range_returns_nan_and_leaves_x_alone(void **state)
{
    (void)state;
    double x[] = {3, 1, 2};
    assert_nan(cap_stats_select(x, 3, 3));
    assert_true(x[0] == 3 && x[1] == 1 && x[2] == 2);
    assert_nan(cap_stats_select(NULL, 0, 0));
}

/* ---- quantiles and moments ----------------------------------------------- */

static void quantile_type7_matches_hand_computation(void **state)
{
    (void)state;
    /* h = 3p: p = .25 -> between 1 and 2 at 0.75; p = .5 -> 2.5. */
    const double x[] = {1, 2, 3, 4};
    assert_close(cap_stats_quantile_sorted(x, 4, 0.0), 1.0, 0);
    assert_close(cap_stats_quantile_sorted(x, 4, 0.25), 1.75, 0);
    assert_close(cap_stats_quantile_sorted(x, 4, 0.5), 2.5, 0);
    assert_close(cap_stats_quantile_sorted(x, 4, 1.0 / 3.0), 2.0, 1e-15);
    assert_close(cap_stats_quantile_sorted(x, 4, 0.9), 3.7, 1e-15);
    assert_close(cap_stats_quantile_sorted(x, 4, 1.0), 4.0, 0);
    /* One value: every quantile is that value. */
    const double one[] = {7.5};
    assert_close(cap_stats_quantile_sorted(one, 1, 0.0), 7.5, 0);
    assert_close(cap_stats_quantile_sorted(one, 1, 0.37), 7.5, 0);
    assert_close(cap_stats_quantile_sorted(one, 1, 1.0), 7.5, 0);
}

static void quantile_matches_r_quantile(void **state)
{
    (void)state;
    /* R: quantile(c(3.1, -1, 4, 1.5, 9, 2.6), c(0, .1, .25, .5, .9, 1))
     *    -1.000 0.250 1.775 2.850 6.500 9.000
     * R: quantile(1:10, 0.95) -> 9.5499999999999989 */
    double x[] = {3.1, -1, 4, 1.5, 9, 2.6};
    const double p[] = {0, 0.1, 0.25, 0.5, 0.9, 1};
    const double want[] = {-1.0, 0.25, 1.775, 2.85, 6.5, 9.0};
    double sorted[6];
    memcpy(sorted, x, sizeof x);
    cap_stats_sort(sorted, 6);
    for (size_t i = 0; i < ARRAY_LEN(p); i++) {
        assert_close(cap_stats_quantile_sorted(sorted, 6, p[i]), want[i],
                     1e-14);
        double y[6];
        memcpy(y, x, sizeof x);
        assert_close(cap_stats_quantile_select(y, 6, p[i]), want[i], 1e-14);
    }
    double ten[10];
    for (int i = 0; i < 10; i++)
        ten[i] = 10 - i; /* reversed, for the select version */
    assert_close(cap_stats_quantile_select(ten, 10, 0.95), 9.55, 1e-14);
}

static void quantile_is_undefined_for_no_data_or_a_bad_p(void **state)
{
    (void)state;
    double x[] = {2, 1};
    assert_nan(cap_stats_quantile_sorted(x, 0, 0.5));
    assert_nan(cap_stats_quantile_sorted(x, 2, -0.01));
    assert_nan(cap_stats_quantile_sorted(x, 2, 1.01));
    assert_nan(cap_stats_quantile_sorted(x, 2, NAN));
    assert_nan(cap_stats_quantile_select(x, 2, 2.0));
    assert_true(x[0] == 2 && x[1] == 1); /* untouched */
    assert_nan(cap_stats_median_select(x, 0));
}

static void quantile_next_to_an_infinity_is_that_infinity(void **state)
{
    (void)state;
    const double x[] = {-INFINITY, 1, 2, INFINITY};
    assert_true(cap_stats_quantile_sorted(x, 4, 0.1) == -INFINITY);
    assert_close(cap_stats_quantile_sorted(x, 4, 0.5), 1.5, 0);
    assert_true(cap_stats_quantile_sorted(x, 4, 0.9) == INFINITY);
    const double inf2[] = {1, INFINITY, INFINITY};
    assert_true(cap_stats_quantile_sorted(inf2, 3, 0.75) == INFINITY);
}

static void median_of_odd_and_even_counts(void **state)
{
    (void)state;
    double odd[] = {5, 1, 4, 2, 3};
    double even[] = {8, 1, 4, 2, 3, 100};
    assert_close(cap_stats_median_select(odd, 5), 3.0, 0);
    assert_close(cap_stats_median_select(even, 6), 3.5, 0);
    const double sorted[] = {1, 2, 3, 4, 8, 100};
    assert_close(cap_stats_median_sorted(sorted, 6), 3.5, 0);
}

static void mean_is_exact_on_simple_data_and_accurate_on_offsets(void **state)
{
    (void)state;
    const double x[] = {1, 2, 3, 4};
    assert_close(cap_stats_mean(x, 4), 2.5, 0);
    /* 1e9 + {0.1, 0.2, 0.3}: mean 1e9 + 0.2 to within the spacing of
     * doubles there (1.2e-7). */
    const double off[] = {1e9 + 0.1, 1e9 + 0.2, 1e9 + 0.3};
    assert_close(cap_stats_mean(off, 3), 1e9 + 0.2, 2.5e-7);
    assert_nan(cap_stats_mean(x, 0));
}

static void geomean_is_the_exponential_of_the_mean_log(void **state)
{
    (void)state;
    const double a[] = {1, 4, 16};
    assert_close(cap_stats_geomean(a, 3), 4.0, 1e-14);
    const double b[] = {2, 8};
    assert_close(cap_stats_geomean(b, 2), 4.0, 1e-14);
    const double r[] = {1.1, 1.0 / 1.1};
    assert_close(cap_stats_geomean(r, 2), 1.0, 1e-15);
    const double zero[] = {2, 0};
    assert_nan(cap_stats_geomean(zero, 2));
    const double neg[] = {2, -1};
    assert_nan(cap_stats_geomean(neg, 2));
    assert_nan(cap_stats_geomean(a, 0));
}

/* ---- Mann-Whitney ---------------------------------------------------------- */

/* mx(n) and my(n, off) of the R script in docs/STATISTICS.md: distinct
 * values from modular sequences, with the same arithmetic as in R. */
static void modular_x(double *x, int n)
{
    for (int i = 1; i <= n; i++)
        x[i - 1] = (double)((i * 37) % 101) / 10.0;
}
static void modular_y(double *y, int n, double offset)
{
    for (int j = 1; j <= n; j++)
        y[j - 1] = (double)((j * 53) % 103) / 10.0 + 0.05 + offset;
}

static void mw_matches_r_on_small_samples_without_ties(void **state)
{
    (void)state;
    cap_mw_result r;
    const double x1[] = {1, 2, 3}, y1[] = {4, 5, 6};
    assert_int_equal(cap_stats_mann_whitney(&r, x1, 3, y1, 3, CAP_MW_AUTO),
                     CAP_OK);
    assert_int_equal(r.method, CAP_MW_EXACT);
    assert_close(r.u, 0.0, 0);
    assert_close(r.p_value, 0.1, 1e-15); /* 2 / C(6, 3) */
    assert_int_equal(r.ties, 0);

    const double x2[] = {1.1, 2.3, 0.7, 4.5, 3.3, 5.9, 2.8};
    const double y2[] = {6.1, 3.9, 7.2, 5.0, 8.8, 4.4};
    assert_int_equal(cap_stats_mann_whitney(&r, x2, 7, y2, 6, CAP_MW_AUTO),
                     CAP_OK);
    assert_int_equal(r.method, CAP_MW_EXACT);
    assert_close(r.u, 5.0, 0);
    assert_close(r.p_value, 0.022144522144522144, 1e-14); /* 38 / 1716 */

    assert_int_equal(cap_stats_mann_whitney(&r, x2, 7, y2, 6, CAP_MW_NORMAL),
                     CAP_OK);
    assert_int_equal(r.method, CAP_MW_NORMAL);
    assert_close(r.u, 5.0, 0);
    assert_close(r.p_value, 0.026809130715595857, 1e-14);
    /* z = (5 - 21 + 0.5) / sqrt(42 * 14 / 12) = -15.5 / 7 */
    assert_close(r.z, -15.5 / 7.0, 1e-14);

    const double x7[] = {5}, y7[] = {1, 2, 3};
    assert_int_equal(cap_stats_mann_whitney(&r, x7, 1, y7, 3, CAP_MW_AUTO),
                     CAP_OK);
    assert_close(r.u, 3.0, 0);
    assert_close(r.p_value, 0.5, 1e-15); /* 2 P(U <= 0) = 2 / 4 */
}

static void mw_matches_r_with_ties(void **state)
{
    (void)state;
    cap_mw_result r;
    const double x3[] = {1, 2, 2, 3, 3, 3, 4}, y3[] = {3, 4, 4, 5, 5, 6};
    assert_int_equal(cap_stats_mann_whitney(&r, x3, 7, y3, 6, CAP_MW_AUTO),
                     CAP_OK);
    assert_int_equal(r.method, CAP_MW_NORMAL);
    assert_close(r.u, 3.5, 0);
    assert_int_equal(r.ties, 2 + 4 + 3 + 2); /* 2s, 3s, 4s, 5s */
    assert_close(r.p_value, 0.012999854364387303, 1e-14);

    const double x9[] = {1, 2, 2}, y9[] = {2, 3};
    assert_int_equal(cap_stats_mann_whitney(&r, x9, 3, y9, 2, CAP_MW_AUTO),
                     CAP_OK);
    assert_close(r.u, 1.0, 0);
    assert_close(r.p_value, 0.33292160806556598, 1e-14);

    /* Exact counting assumes no ties: asking for it is a misuse. */
    assert_int_equal(cap_stats_mann_whitney(&r, x3, 7, y3, 6, CAP_MW_EXACT),
                     CAP_E_MISUSE);
}

static void mw_matches_r_on_larger_samples(void **state)
{
    (void)state;
    cap_mw_result r;
    double x[60], y[55];

    /* 30 and 40: exact, by default. */
    modular_x(x, 30);
    modular_y(y, 40, 1.0);
    assert_int_equal(cap_stats_mann_whitney(&r, x, 30, y, 40, CAP_MW_AUTO),
                     CAP_OK);
    assert_int_equal(r.method, CAP_MW_EXACT);
    assert_close(r.u, 515.0, 0);
    assert_close(r.p_value, 0.3181059691434665, 1e-13);

    /* 49 and 49: the largest exact by default. */
    modular_x(x, 49);
    modular_y(y, 49, 0.5);
    assert_int_equal(cap_stats_mann_whitney(&r, x, 49, y, 49, CAP_MW_AUTO),
                     CAP_OK);
    assert_int_equal(r.method, CAP_MW_EXACT);
    assert_close(r.u, 1170.0, 0);
    assert_close(r.p_value, 0.83196111564280117, 1e-13);

    /* 49 and 49 far in the tail: U = 10 (one x above the ten smallest y,
     * the others below all). The counts of U = 0 .. 10 are the partitions
     * of u (every part at most 49, at most 49 parts), 139 in all, so
     * p = 2 * 139 / C(98, 49), C(98, 49) = 25477612258980856902730428600:
     * a relative error, not an absolute one, tells whether the counting
     * holds at both ends of its range. */
    for (size_t j = 0; j < 49; j++)
        y[j] = (double)(j + 1);
    for (size_t i = 0; i < 49; i++)
        x[i] = 0.5 + 0.001 * (double)i;
    x[48] = 10.5;
    assert_int_equal(cap_stats_mann_whitney(&r, x, 49, y, 49, CAP_MW_AUTO),
                     CAP_OK);
    assert_int_equal(r.method, CAP_MW_EXACT);
    assert_close(r.u, 10.0, 0);
    assert_close(r.p_value / 1.0911540578219021e-26, 1.0, 1e-14);

    /* 50 and 49: one past the limit, normal; exact asked for: misuse. */
    modular_x(x, 50);
    modular_y(y, 49, 0.5);
    assert_int_equal(cap_stats_mann_whitney(&r, x, 50, y, 49, CAP_MW_AUTO),
                     CAP_OK);
    assert_int_equal(r.method, CAP_MW_NORMAL);
    assert_close(r.u, 1186.0, 0);
    assert_close(r.p_value, 0.78758812928389366, 1e-13);
    assert_int_equal(cap_stats_mann_whitney(&r, x, 50, y, 49, CAP_MW_EXACT),
                     CAP_E_MISUSE);

    /* 60 and 55: normal. */
    modular_x(x, 60);
    modular_y(y, 55, 1.0);
    assert_int_equal(cap_stats_mann_whitney(&r, x, 60, y, 55, CAP_MW_AUTO),
                     CAP_OK);
    assert_int_equal(r.method, CAP_MW_NORMAL);
    assert_close(r.u, 1436.0, 0);
    assert_close(r.p_value, 0.23194230190286441, 1e-13);
}

/* The exact law by brute force: every way of choosing which m of the
 * N = m + n pooled positions hold x, U counted pair by pair. Compare the
 * p-value of every attainable U with the library's dynamic programming. */
static void mw_exact_p_agrees_with_brute_force_enumeration(void **state)
{
    (void)state;
    const size_t sizes[][2] = {{1, 1}, {2, 5}, {6, 7}, {7, 6}, {4, 12}};
    for (size_t s = 0; s < ARRAY_LEN(sizes); s++) {
        size_t m = sizes[s][0], n = sizes[s][1], big_n = m + n;
        size_t mn = m * n;
        double count[64 + 1] = {0}, total = 0;
        for (uint32_t mask = 0; mask < (1u << big_n); mask++) {
            if ((size_t)__builtin_popcount(mask) != m)
                continue;
            size_t u = 0, ys_below = 0;
            for (size_t pos = 0; pos < big_n; pos++) {
                if (mask & (1u << pos))
                    u += ys_below;
                else
                    ys_below++;
            }
            count[u]++;
            total++;
        }
        for (size_t u = 0; u <= mn; u++) {
            /* Samples whose U is u: x takes the values at the positions of
             * some mask with that U; build one directly. */
            double x[16], y[16];
            size_t nx = 0, ny = 0, need = u;
            /* Place x-values greedily: each x beats as many y as needed. */
            size_t beats[16] = {0};
            for (size_t i = m; i-- > 0;) {
                size_t b = need < n ? need : n;
                beats[i] = b;
                need -= b;
            }
            /* x[i] sits just above the beats[i]-th y (y's are 1..n). */
            for (size_t j = 0; j < n; j++)
                y[ny++] = (double)(j + 1);
            for (size_t i = 0; i < m; i++)
                x[nx++] = (double)beats[i] + 0.5 + 0.001 * (double)i;
            double lower = 0, upper = 0;
            for (size_t v = 0; v <= u; v++)
                lower += count[v];
            for (size_t v = u; v <= mn; v++)
                upper += count[v];
            double want = 2.0 * (lower < upper ? lower : upper) / total;
            if (want > 1.0)
                want = 1.0;
            cap_mw_result r;
            assert_int_equal(
                cap_stats_mann_whitney(&r, x, m, y, n, CAP_MW_EXACT), CAP_OK);
            assert_close(r.u, (double)u, 0);
            assert_close(r.p_value, want, 1e-14);
        }
    }
}

static void mw_swapping_the_samples_mirrors_u_and_keeps_p(void **state)
{
    (void)state;
    double x[30], y[40];
    modular_x(x, 30);
    modular_y(y, 40, 1.0);
    for (int method = CAP_MW_EXACT; method <= CAP_MW_NORMAL; method++) {
        cap_mw_result a, b;
        assert_int_equal(cap_stats_mann_whitney(&a, x, 30, y, 40,
                                                (cap_mw_method)method),
                         CAP_OK);
        assert_int_equal(cap_stats_mann_whitney(&b, y, 40, x, 30,
                                                (cap_mw_method)method),
                         CAP_OK);
        assert_close(a.u + b.u, 1200.0, 0);
        assert_close(a.p_value, b.p_value, 1e-14);
    }
}

static void mw_all_values_equal_gives_p_of_one(void **state)
{
    (void)state;
    const double x[] = {2, 2, 2}, y[] = {2, 2};
    cap_mw_result r;
    assert_int_equal(cap_stats_mann_whitney(&r, x, 3, y, 2, CAP_MW_AUTO),
                     CAP_OK);
    assert_int_equal(r.method, CAP_MW_NORMAL);
    assert_close(r.u, 3.0, 0);
    assert_close(r.p_value, 1.0, 0);
    assert_int_equal(r.ties, 5);
}

static void mw_rejects_bad_arguments(void **state)
{
    (void)state;
    const double x[] = {1, 2}, y[] = {3, NAN};
    cap_mw_result r = {.u = -1};
    assert_int_equal(cap_stats_mann_whitney(NULL, x, 2, x, 2, CAP_MW_AUTO),
                     CAP_E_MISUSE);
    assert_int_equal(cap_stats_mann_whitney(&r, NULL, 2, x, 2, CAP_MW_AUTO),
                     CAP_E_MISUSE);
    assert_int_equal(cap_stats_mann_whitney(&r, x, 0, x, 2, CAP_MW_AUTO),
                     CAP_E_MISUSE);
    assert_int_equal(cap_stats_mann_whitney(&r, x, 2, x, 0, CAP_MW_AUTO),
                     CAP_E_MISUSE);
    assert_int_equal(cap_stats_mann_whitney(&r, x, 2, y, 2, CAP_MW_AUTO),
                     CAP_E_MISUSE);
    assert_int_equal(
        cap_stats_mann_whitney(&r, x, 2, x, 2, (cap_mw_method)7),
        CAP_E_MISUSE);
    assert_close(r.u, -1.0, 0); /* untouched */
}

/* ---- the shifted test and the shift's interval ----------------------------- */

/* R (docs/STATISTICS.md, section 11, "shift"): y = my(ny, 0.5) against
 * x = mx(nx), wilcox.test(y, x, mu = 0.3) two-sided, "greater", "less",
 * and at mu = -0.2 "greater" and "less". */
static void mw_with_a_shift_matches_r(void **state)
{
    (void)state;
    static const struct {
        int nx, ny;
        double w, p, pg, pl, pg2, pl2, tol;
    } ref[] = {
        {7, 6, 15, 0.44522144522144519, 0.81701631701631705,
         0.22261072261072259, 0.6858974358974359, 0.36538461538461536, 1e-14},
        {30, 40, 596, 0.96708771434870933, 0.52115403067806776,
         0.48354385717435466, 0.27171933814763494, 0.73218660917244538, 1e-13},
        {49, 49, 1161, 0.78265843931134882, 0.61138523222619234,
         0.39132921965567441, 0.2929373343249525, 0.70949364604126142, 1e-13},
        {60, 55, 1615, 0.84683138027440463, 0.57877547673091856,
         0.42341569013720232, 0.24816694788019775, 0.75360192732732645, 1e-14},
        {300, 280, 44450, 0.22450600139012847, 0.11225300069506423,
         0.88784157559973942, 0.00083734313120926974, 0.99916407410142305,
         1e-14},
    };
    double x[300], y[300];
    for (size_t c = 0; c < ARRAY_LEN(ref); c++) {
        modular_x(x, ref[c].nx);
        modular_y(y, ref[c].ny, 0.5);
        cap_mw_result r, q;
        assert_int_equal(cap_stats_mann_whitney_mu(&r, y, ref[c].ny, x,
                                                   ref[c].nx, 0.3, CAP_MW_AUTO),
                         CAP_OK);
        assert_close(r.u, ref[c].w, 0);
        assert_close(r.p_value, ref[c].p, ref[c].tol);
        assert_close(r.p_greater, ref[c].pg, ref[c].tol);
        assert_close(r.p_less, ref[c].pl, ref[c].tol);
        assert_int_equal(cap_stats_mann_whitney_mu(&q, y, ref[c].ny, x,
                                                   ref[c].nx, -0.2,
                                                   CAP_MW_AUTO),
                         CAP_OK);
        assert_close(q.p_greater, ref[c].pg2, ref[c].tol);
        assert_close(q.p_less, ref[c].pl2, ref[c].tol);
    }
    /* mu = 0 is the plain test, one-sided p-values included. */
    cap_mw_result a, b;
    modular_x(x, 30);
    modular_y(y, 40, 1.0);
    assert_int_equal(cap_stats_mann_whitney(&a, x, 30, y, 40, CAP_MW_AUTO),
                     CAP_OK);
    assert_int_equal(cap_stats_mann_whitney_mu(&b, x, 30, y, 40, 0.0,
                                               CAP_MW_AUTO),
                     CAP_OK);
    assert_true(a.p_value == b.p_value && a.p_less == b.p_less &&
                a.p_greater == b.p_greater);
    assert_int_equal(cap_stats_mann_whitney_mu(&b, x, 30, y, 40, NAN,
                                               CAP_MW_AUTO),
                     CAP_E_MISUSE);
    assert_int_equal(cap_stats_mann_whitney_mu(&b, x, 30, y, 40, INFINITY,
                                               CAP_MW_AUTO),
                     CAP_E_MISUSE);
}

static void qnorm_matches_r(void **state)
{
    (void)state;
    /* R: qnorm(0.05), qnorm(0.025), qnorm(1e-10), qnorm(0.5) */
    assert_close(cap_stats_qnorm(0.05), -1.6448536269514726, 1e-15);
    assert_close(cap_stats_qnorm(0.025), -1.9599639845400538, 1e-15);
    assert_close(cap_stats_qnorm(1e-10), -6.3613409024040557, 1e-14);
    assert_close(cap_stats_qnorm(0.5), 0.0, 1e-16);
    assert_close(cap_stats_qnorm(0.975), 1.9599639845400538, 1e-15);
    assert_true(cap_stats_qnorm(0.0) == -INFINITY);
    assert_true(cap_stats_qnorm(1.0) == INFINITY);
    assert_true(isnan(cap_stats_qnorm(1.5)));
    assert_true(isnan(cap_stats_qnorm(NAN)));
}

static void student_t_matches_r(void **state)
{
    (void)state;
    /* R 4.2.2 (docs/STATISTICS.md section 13): qt(0.95, 1), qt(0.95, 2),
     * qt(0.95, 4), qt(1 - 0.05 / 60, 4); pt(2.5, 4), pt(30, 2) and
     * pt(-1.5, 7.5), upper tails */
    assert_close(cap_stats_qt(0.95, 1), 6.3137515146750376, 1e-13);
    assert_close(cap_stats_qt(0.95, 2), 2.9199855803537238, 1e-14);
    assert_close(cap_stats_qt(0.95, 4), 2.131846786326649, 1e-14);
    assert_close(cap_stats_qt(1 - 0.05 / 60, 4), 7.5286714129860544, 1e-13);
    assert_close(cap_stats_qt(0.05, 4), -2.131846786326649, 1e-14);
    assert_close(cap_stats_pt_upper(2.5, 4), 0.033383272405994063, 1e-16);
    assert_close(cap_stats_pt_upper(30, 2), 0.00055463134097982942, 1e-18);
    assert_close(cap_stats_pt_upper(-1.5, 7.5), 0.91275971470676787, 1e-15);
    /* by hand: df 1 is Cauchy, P(T > 1) = 1/4; df 2 has
     * P(T > t) = (1 - t / sqrt(2 + t^2)) / 2, 1/2 - 1/sqrt(12) at t = 1 */
    assert_close(cap_stats_pt_upper(1, 1), 0.25, 1e-16);
    assert_close(cap_stats_pt_upper(1, 2), 0.5 - 1 / sqrt(12.0), 1e-16);
    assert_close(cap_stats_pt_upper(0, 3), 0.5, 0);
    assert_true(cap_stats_pt_upper(INFINITY, 3) == 0.0);
    assert_true(cap_stats_pt_upper(-INFINITY, 3) == 1.0);
    assert_close(cap_stats_pt_upper(1.5, INFINITY), 0.5 * erfc(1.5 / sqrt(2)),
                 1e-16);
    assert_true(isnan(cap_stats_pt_upper(1, 0)));
    assert_true(isnan(cap_stats_pt_upper(NAN, 3)));
    assert_true(cap_stats_qt(0.5, 3) == 0.0);
    assert_true(cap_stats_qt(0.0, 3) == -INFINITY);
    assert_true(cap_stats_qt(1.0, 3) == INFINITY);
    assert_true(isnan(cap_stats_qt(1.5, 3)));
    assert_true(isnan(cap_stats_qt(0.9, -1)));
    /* the quantile inverts the tail */
    for (double df = 1; df <= 30; df *= 1.7)
        for (double p = 0.6; p < 1; p += 0.05)
            assert_close(cap_stats_pt_upper(cap_stats_qt(p, df), df), 1 - p,
                         1e-14);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Every order statistic of the differences, against sorting them all:
 * samples with many ties, negative shifts and sizes of 1 included. */
static void kth_difference_agrees_with_sorting_every_difference(void **state)
{
    (void)state;
    cap_rng rng;
    cap_rng_seed(&rng, 5);
    static const size_t sizes[][2] = {{1, 1}, {1, 7}, {9, 1}, {13, 17},
                                      {40, 25}};
    for (size_t c = 0; c < ARRAY_LEN(sizes); c++) {
        for (int ties = 0; ties < 2; ties++) {
            size_t nx = sizes[c][0], ny = sizes[c][1];
            double x[40], y[25], d[1000];
            for (size_t i = 0; i < nx; i++)
                x[i] = ties ? (double)cap_rng_below(&rng, 5)
                            : cap_rng_uniform(&rng) * 3.0;
            for (size_t j = 0; j < ny; j++)
                y[j] = ties ? (double)cap_rng_below(&rng, 5) * 0.5
                            : cap_rng_uniform(&rng) * 2.0 + 0.5;
            cap_stats_sort(x, nx);
            cap_stats_sort(y, ny);
            size_t k = 0;
            for (size_t i = 0; i < nx; i++)
                for (size_t j = 0; j < ny; j++)
                    d[k++] = x[i] - y[j];
            qsort(d, k, sizeof *d, cmp_d);
            for (size_t q = 0; q < k; q++) {
                double v = NAN;
                assert_int_equal(
                    cap_stats_kth_difference(&v, x, nx, y, ny, q), CAP_OK);
                assert_true(v == d[q]);
            }
            double v;
            assert_int_equal(cap_stats_kth_difference(&v, x, nx, y, ny, k),
                             CAP_E_MISUSE);
        }
    }
}

/* Samples big enough for the sampling rounds (not only the final gather):
 * chosen ranks against a sort of all 84000 differences, with and without
 * ties. */
static void kth_difference_agrees_with_sorting_on_large_samples(void **state)
{
    (void)state;
    enum { NX = 300, NY = 280 };
    double *x = malloc(NX * sizeof *x), *y = malloc(NY * sizeof *y);
    double *d = malloc((size_t)NX * NY * sizeof *d);
    assert_non_null(x);
    assert_non_null(y);
    assert_non_null(d);
    cap_rng rng;
    cap_rng_seed(&rng, 11);
    for (int ties = 0; ties < 2; ties++) {
        if (ties) {
            modular_x(x, NX);
            modular_y(y, NY, 0.5);
        } else {
            for (int i = 0; i < NX; i++)
                x[i] = exp(0.3 * cap_rng_normal(&rng));
            for (int j = 0; j < NY; j++)
                y[j] = exp(0.3 * cap_rng_normal(&rng)) * 0.9;
        }
        cap_stats_sort(x, NX);
        cap_stats_sort(y, NY);
        size_t k = 0;
        for (int i = 0; i < NX; i++)
            for (int j = 0; j < NY; j++)
                d[k++] = x[i] - y[j];
        qsort(d, k, sizeof *d, cmp_d);
        const uint64_t ranks[] = {0, 1, 17, 3000, 38682, 41999, 42000,
                                  45317, 83000, 83998, 83999};
        for (size_t r = 0; r < ARRAY_LEN(ranks); r++) {
            double v = NAN;
            assert_int_equal(
                cap_stats_kth_difference(&v, x, NX, y, NY, ranks[r]), CAP_OK);
            assert_true(v == d[ranks[r]]);
        }
    }
    free(x);
    free(y);
    free(d);
}

/* R: wilcox.test(my(ny, 0.5), mx(nx), conf.int = TRUE, conf.level = 0.9,
 * exact = TRUE): estimate and bounds; qwilcox(0.05, ny, nx). */
static void shift_interval_matches_r(void **state)
{
    (void)state;
    static const struct {
        int nx, ny;
        double est, lo, hi;
        uint64_t qu;
        cap_mw_method method;
    } ref[] = {
        {7, 6, -1.05, -4.25, 2.1499999999999995, 9, CAP_MW_EXACT},
        {30, 40, 0.25, -1.0499999999999998, 1.5499999999999998, 461,
         CAP_MW_EXACT},
        {49, 49, 0.14999999999999991, -0.94999999999999996,
         1.1499999999999999, 969, CAP_MW_EXACT},
        /* over 49 a side: qu from the normal approximation, which equals
         * R's exact qwilcox here, so the bounds are R's exact ones */
        {60, 55, 0.15000000000000036, -0.75, 1.1499999999999995, 1356,
         CAP_MW_NORMAL},
    };
    double x[60], y[60];
    for (size_t c = 0; c < ARRAY_LEN(ref); c++) {
        modular_x(x, ref[c].nx);
        modular_y(y, ref[c].ny, 0.5);
        cap_shift_ci ci;
        assert_int_equal(cap_stats_shift_ci(&ci, y, ref[c].ny, x, ref[c].nx,
                                            0.1, CAP_MW_AUTO),
                         CAP_OK);
        assert_close(ci.estimate, ref[c].est, 1e-15);
        assert_close(ci.low, ref[c].lo, 1e-15);
        assert_close(ci.high, ref[c].hi, 1e-15);
        assert_int_equal(ci.rank, ref[c].qu);
        assert_int_equal(ci.method, ref[c].method);
        assert_true(ci.full_level);
    }
    /* Two against two: qwilcox(0.05, 2, 2) is 0, so R takes D(1) and D(4),
     * whose level is 1 - 2 / 6; we say so. */
    {
        const double a2[] = {1.0, 3.0}, b2[] = {0.5, 2.5};
        cap_shift_ci s2;
        assert_int_equal(cap_stats_shift_ci(&s2, a2, 2, b2, 2, 0.1,
                                            CAP_MW_AUTO),
                         CAP_OK);
        assert_int_equal(s2.rank, 1);
        assert_false(s2.full_level);
        assert_close(s2.low, -1.5, 0);
        assert_close(s2.high, 2.5, 0);
    }
    /* 300 against 280 values, with ties: R's qwilcox(0.05, 280, 300) is
     * 38683 and so is the normal approximation; the bounds are the order
     * statistics (R's uniroot gives 0.1500042 and 1.0499330). */
    double bx[300], by[280];
    modular_x(bx, 300);
    modular_y(by, 280, 0.5);
    cap_shift_ci ci;
    assert_int_equal(cap_stats_shift_ci(&ci, by, 280, bx, 300, 0.1,
                                        CAP_MW_AUTO),
                     CAP_OK);
    assert_int_equal(ci.rank, 38683);
    double lo, hi;
    double sx[300], sy[280];
    memcpy(sx, bx, sizeof sx);
    memcpy(sy, by, sizeof sy);
    cap_stats_sort(sx, 300);
    cap_stats_sort(sy, 280);
    assert_int_equal(cap_stats_kth_difference(&lo, sy, 280, sx, 300, 38682),
                     CAP_OK);
    assert_int_equal(
        cap_stats_kth_difference(&hi, sy, 280, sx, 300, 84000 - 38683), CAP_OK);
    assert_true(ci.low == lo && ci.high == hi);
    assert_close(ci.low, 0.15, 1e-12);
    assert_close(ci.high, 1.05, 1e-12);
    /* Exact refused with ties; bad arguments. */
    assert_int_equal(cap_stats_shift_ci(&ci, by, 280, bx, 300, 0.1,
                                        CAP_MW_EXACT),
                     CAP_E_MISUSE);
    const double bad[] = {1, INFINITY};
    assert_int_equal(cap_stats_shift_ci(&ci, bad, 2, bx, 3, 0.1, CAP_MW_AUTO),
                     CAP_E_MISUSE);
    assert_int_equal(cap_stats_shift_ci(&ci, by, 0, bx, 3, 0.1, CAP_MW_AUTO),
                     CAP_E_MISUSE);
    assert_int_equal(cap_stats_shift_ci(&ci, by, 3, bx, 3, 1.0, CAP_MW_AUTO),
                     CAP_E_MISUSE);
    assert_int_equal(cap_stats_shift_ci(NULL, by, 3, bx, 3, 0.1, CAP_MW_AUTO),
                     CAP_E_MISUSE);
}

/* Distribution-free: over seeded repetitions of a pure shift of skewed
 * data, the 90 % interval covers the true shift at about its level. */
/* The estimate is the median of every difference, the mean of the two
 * middle ones when there are an even number: checked by sorting them all,
 * on samples full of ties (values from a set of five, zeros most), where
 * the two middle differences are often equal and often not. */
static void shift_estimate_is_the_median_of_every_difference_with_ties(
    void **state)
{
    (void)state;
    static const double set[] = {0.0, 0.0, 0.0, 0.25, 1.5, 3.0, 7.75};
    cap_rng rng;
    cap_rng_seed(&rng, 77);
    double x[40], y[40], d[1600];
    for (int c = 0; c < 300; c++) {
        size_t nx = 1 + (size_t)cap_rng_below(&rng, 40);
        size_t ny = 1 + (size_t)cap_rng_below(&rng, 40);
        for (size_t i = 0; i < nx; i++)
            x[i] = set[cap_rng_below(&rng, ARRAY_LEN(set))] + (c % 3) * 0.5;
        for (size_t j = 0; j < ny; j++)
            y[j] = set[cap_rng_below(&rng, ARRAY_LEN(set))];
        size_t n = 0;
        for (size_t i = 0; i < nx; i++)
            for (size_t j = 0; j < ny; j++)
                d[n++] = x[i] - y[j];
        cap_stats_sort(d, n);
        double want = n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2.0;
        cap_shift_ci ci;
        assert_int_equal(
            cap_stats_shift_ci(&ci, x, nx, y, ny, 0.1, CAP_MW_AUTO), CAP_OK);
        assert_true(ci.estimate == want);
        assert_true(ci.low == d[ci.rank - 1]);
        assert_true(ci.high == d[n - ci.rank]);
    }
}

static void shift_interval_covers_at_about_its_level(void **state)
{
    (void)state;
    cap_rng rng;
    cap_rng_seed(&rng, 77);
    int covered = 0;
    enum { REPS = 400, N = 80 };
    for (int rep = 0; rep < REPS; rep++) {
        double b[N], n[N];
        for (int i = 0; i < N; i++) {
            b[i] = exp(0.5 * cap_rng_normal(&rng));
            n[i] = exp(0.5 * cap_rng_normal(&rng)) + 0.25;
        }
        cap_shift_ci ci;
        assert_int_equal(cap_stats_shift_ci(&ci, n, N, b, N, 0.1, CAP_MW_AUTO),
                         CAP_OK);
        covered += ci.low <= 0.25 && 0.25 <= ci.high;
    }
    /* binomial(400, 0.9): sd 6; 346..374 is about +-2.3 sd */
    assert_in_range(covered, 346, 374);
}

/* ---- bootstrap ------------------------------------------------------------ */

/* n lognormal values with median `median` and log-sd `sigma`. */
static void lognormal(double *x, size_t n, double median, double sigma,
                      cap_rng *rng)
{
    for (size_t i = 0; i < n; i++)
        x[i] = median * exp(sigma * cap_rng_normal(rng));
}

static void rel_change_guards_a_zero_base(void **state)
{
    (void)state;
    assert_close(cap_stats_rel_change_pct(4.0, 5.0), 25.0, 1e-13);
    assert_close(cap_stats_rel_change_pct(4.0, 3.0), -25.0, 1e-13);
    assert_close(cap_stats_rel_change_pct(0.0, 0.0), 0.0, 0);
    assert_true(cap_stats_rel_change_pct(0.0, 1.0) == INFINITY);
    assert_nan(cap_stats_rel_change_pct(NAN, 1.0));
}

static void bootstrap_is_reproducible_for_a_seed(void **state)
{
    (void)state;
    cap_rng rng;
    cap_rng_seed(&rng, 100);
    double b[200], n[150];
    lognormal(b, 200, 10.0, 0.3, &rng);
    lognormal(n, 150, 11.0, 0.3, &rng);
    cap_boot_ci c1, c2, c3;
    assert_int_equal(
        cap_stats_bootstrap_median_change(&c1, b, 200, n, 150, 2000, 0.05, 9),
        CAP_OK);
    assert_int_equal(
        cap_stats_bootstrap_median_change(&c2, b, 200, n, 150, 2000, 0.05, 9),
        CAP_OK);
    assert_true(c1.estimate_pct == c2.estimate_pct);
    assert_true(c1.low_pct == c2.low_pct);
    assert_true(c1.high_pct == c2.high_pct);
    /* Another seed moves the bounds (a little). */
    assert_int_equal(
        cap_stats_bootstrap_median_change(&c3, b, 200, n, 150, 2000, 0.05, 10),
        CAP_OK);
    assert_true(c3.estimate_pct == c1.estimate_pct);
    assert_true(c3.low_pct != c1.low_pct || c3.high_pct != c1.high_pct);
    assert_close(c3.low_pct, c1.low_pct, 2.0);
    assert_close(c3.high_pct, c1.high_pct, 2.0);
}

/* The documented procedure, spelt out naively: sorted copies, indices drawn
 * with cap_rng_below (base then new, per replicate), medians by quickselect
 * on the drawn values, type-7 quantiles of the sorted replicates. The
 * library must give the same bits: this pins the reproducibility contract. */
static void bootstrap_follows_the_documented_procedure_bit_for_bit(void **state)
{
    (void)state;
    enum { NB = 37, NN = 24, B = 301 };
    cap_rng rng;
    cap_rng_seed(&rng, 8);
    double b[NB], n[NN];
    lognormal(b, NB, 2.0, 0.5, &rng);
    lognormal(n, NN, 2.2, 0.5, &rng);
    b[3] = b[4]; /* a tie, for good measure */

    double sb[NB], sn[NN], wb[NB], wn[NN], reps[B];
    memcpy(sb, b, sizeof b);
    memcpy(sn, n, sizeof n);
    cap_stats_sort(sb, NB);
    cap_stats_sort(sn, NN);
    cap_rng_seed(&rng, 99);
    for (int r = 0; r < B; r++) {
        for (int i = 0; i < NB; i++)
            wb[i] = sb[cap_rng_below(&rng, NB)];
        for (int i = 0; i < NN; i++)
            wn[i] = sn[cap_rng_below(&rng, NN)];
        reps[r] = cap_stats_rel_change_pct(cap_stats_median_select(wb, NB),
                                           cap_stats_median_select(wn, NN));
    }
    cap_stats_sort(reps, B);

    cap_boot_ci c;
    assert_int_equal(
        cap_stats_bootstrap_median_change(&c, b, NB, n, NN, B, 0.2, 99),
        CAP_OK);
    assert_true(c.estimate_pct ==
                cap_stats_rel_change_pct(cap_stats_median_sorted(sb, NB),
                                         cap_stats_median_sorted(sn, NN)));
    assert_true(c.low_pct == cap_stats_quantile_sorted(reps, B, 0.1));
    assert_true(c.high_pct == cap_stats_quantile_sorted(reps, B, 0.9));
}

static void bootstrap_does_not_depend_on_the_order_of_frames(void **state)
{
    (void)state;
    cap_rng rng;
    cap_rng_seed(&rng, 5);
    double b[101], n[80], rb[101], rn[80];
    lognormal(b, 101, 3.0, 0.4, &rng);
    lognormal(n, 80, 3.0, 0.4, &rng);
    for (size_t i = 0; i < 101; i++)
        rb[i] = b[100 - i];
    for (size_t i = 0; i < 80; i++)
        rn[i] = n[79 - i];
    cap_boot_ci c1, c2;
    assert_int_equal(
        cap_stats_bootstrap_median_change(&c1, b, 101, n, 80, 500, 0.1, 1),
        CAP_OK);
    assert_int_equal(
        cap_stats_bootstrap_median_change(&c2, rb, 101, rn, 80, 500, 0.1, 1),
        CAP_OK);
    assert_true(c1.low_pct == c2.low_pct && c1.high_pct == c2.high_pct);
}

static void bootstrap_ci_contains_the_true_change_of_a_clear_shift(void **state)
{
    (void)state;
    /* Independent samples from medians 10 and 12: the true change is +20%. */
    cap_rng rng;
    cap_rng_seed(&rng, 2024);
    double b[400], n[400];
    lognormal(b, 400, 10.0, 0.25, &rng);
    lognormal(n, 400, 12.0, 0.25, &rng);
    cap_boot_ci c;
    assert_int_equal(
        cap_stats_bootstrap_median_change(&c, b, 400, n, 400, 2000, 0.05, 1),
        CAP_OK);
    assert_true(c.low_pct < 20.0 && 20.0 < c.high_pct);
    assert_true(c.low_pct <= c.estimate_pct && c.estimate_pct <= c.high_pct);
    /* Median sd about 1.25 * 0.25 / sqrt(400) = 1.6% per side: the 95%
     * interval is near 2 * 1.96 * 2.2% = 9 points wide, clear of 0. */
    assert_true(c.low_pct > 10.0);
    assert_true(c.high_pct - c.low_pct > 4.0 && c.high_pct - c.low_pct < 16.0);
}

static void bootstrap_interval_covers_at_about_its_level(void **state)
{
    (void)state;
    /* 200 repetitions, 90% intervals: coverage has sd 2.1 points; accept
     * 80% .. 97%. (It was 184 of 200 when written.) */
    cap_rng rng;
    cap_rng_seed(&rng, 77);
    double b[100], n[100];
    int covered = 0;
    for (int rep = 0; rep < 200; rep++) {
        lognormal(b, 100, 5.0, 0.3, &rng);
        lognormal(n, 100, 5.5, 0.3, &rng);
        cap_boot_ci c;
        assert_int_equal(cap_stats_bootstrap_median_change(
                             &c, b, 100, n, 100, 400, 0.10, (uint64_t)rep),
                         CAP_OK);
        covered += c.low_pct <= 10.0 && 10.0 <= c.high_pct;
    }
    assert_in_range(covered, 160, 194);
}

static void bootstrap_with_a_zero_median_base(void **state)
{
    (void)state;
    const double zeros[] = {0, 0, 0, 0, 0};
    const double pos[] = {1, 2, 3, 4, 5};
    cap_boot_ci c;
    assert_int_equal(
        cap_stats_bootstrap_median_change(&c, zeros, 5, zeros, 5, 100, 0.05, 1),
        CAP_OK);
    assert_close(c.estimate_pct, 0.0, 0);
    assert_close(c.low_pct, 0.0, 0);
    assert_close(c.high_pct, 0.0, 0);
    assert_int_equal(
        cap_stats_bootstrap_median_change(&c, zeros, 5, pos, 5, 100, 0.05, 1),
        CAP_OK);
    assert_true(c.estimate_pct == INFINITY);
    assert_true(c.low_pct == INFINITY && c.high_pct == INFINITY);
}

static void bootstrap_rejects_bad_arguments(void **state)
{
    (void)state;
    const double ok[] = {1, 2, 3};
    const double neg[] = {1, -2, 3}, nan[] = {1, NAN, 3};
    const double inf[] = {1, INFINITY, 3};
    cap_boot_ci c = {.low_pct = 123};
    assert_int_equal(
        cap_stats_bootstrap_median_change(NULL, ok, 3, ok, 3, 10, 0.05, 1),
        CAP_E_MISUSE);
    assert_int_equal(
        cap_stats_bootstrap_median_change(&c, ok, 0, ok, 3, 10, 0.05, 1),
        CAP_E_MISUSE);
    assert_int_equal(
        cap_stats_bootstrap_median_change(&c, ok, 3, NULL, 3, 10, 0.05, 1),
        CAP_E_MISUSE);
    assert_int_equal(
        cap_stats_bootstrap_median_change(&c, ok, 3, ok, 3, 0, 0.05, 1),
        CAP_E_MISUSE);
    assert_int_equal(
        cap_stats_bootstrap_median_change(&c, ok, 3, ok, 3, 10, 0.0, 1),
        CAP_E_MISUSE);
    assert_int_equal(
        cap_stats_bootstrap_median_change(&c, ok, 3, ok, 3, 10, 1.0, 1),
        CAP_E_MISUSE);
    assert_int_equal(
        cap_stats_bootstrap_median_change(&c, neg, 3, ok, 3, 10, 0.05, 1),
        CAP_E_MISUSE);
    assert_int_equal(
        cap_stats_bootstrap_median_change(&c, ok, 3, nan, 3, 10, 0.05, 1),
        CAP_E_MISUSE);
    assert_int_equal(
        cap_stats_bootstrap_median_change(&c, inf, 3, ok, 3, 10, 0.05, 1),
        CAP_E_MISUSE);
    assert_close(c.low_pct, 123.0, 0); /* untouched */
}

/* ---- Holm ----------------------------------------------------------------- */

static void holm_matches_the_worked_example(void **state)
{
    (void)state;
    /* Sorted: .005 * 4 = .02; .01 * 3 = .03; .03 * 2 = .06; .04 * 1 = .04,
     * raised to the running maximum .06. R's p.adjust agrees. */
    const double p[] = {0.01, 0.04, 0.03, 0.005};
    double adj[4];
    assert_int_equal(cap_stats_holm(adj, p, 4), CAP_OK);
    assert_close(adj[0], 0.03, 1e-15);
    assert_close(adj[1], 0.06, 1e-15);
    assert_close(adj[2], 0.06, 1e-15);
    assert_close(adj[3], 0.02, 1e-15);
}

static void holm_caps_at_one_handles_ties_and_may_work_in_place(void **state)
{
    (void)state;
    /* R: p.adjust(c(0.2, 0.5, 0.01, 0.6, 0.02, 0.01), "holm")
     *    0.6 1.0 0.06 1.0 0.08 0.06 */
    double p[] = {0.2, 0.5, 0.01, 0.6, 0.02, 0.01};
    const double want[] = {0.6, 1.0, 0.06, 1.0, 0.08, 0.06};
    assert_int_equal(cap_stats_holm(p, p, 6), CAP_OK);
    for (size_t i = 0; i < 6; i++)
        assert_close(p[i], want[i], 1e-15);
    /* 2 * 0.6 = 1.2 is capped at 1; 0.9 then rises to the running 1. */
    double big[] = {0.9, 0.6};
    assert_int_equal(cap_stats_holm(big, big, 2), CAP_OK);
    assert_close(big[0], 1.0, 0);
    assert_close(big[1], 1.0, 0);
    /* One value: unchanged. */
    double one = 0.3;
    assert_int_equal(cap_stats_holm(&one, &one, 1), CAP_OK);
    assert_close(one, 0.3, 0);
    assert_int_equal(cap_stats_holm(NULL, NULL, 0), CAP_OK);
}

static void holm_rejects_values_outside_zero_one(void **state)
{
    (void)state;
    const double bad[] = {0.1, 1.5};
    const double nan[] = {0.1, NAN};
    double adj[2] = {-1, -1};
    assert_int_equal(cap_stats_holm(adj, bad, 2), CAP_E_MISUSE);
    assert_int_equal(cap_stats_holm(adj, nan, 2), CAP_E_MISUSE);
    assert_int_equal(cap_stats_holm(NULL, bad, 2), CAP_E_MISUSE);
    assert_close(adj[0], -1.0, 0);
    assert_close(adj[1], -1.0, 0);
}

/* ---- weighted samples against their expanded samples ------------------- */

/* A random weighted sample into v, w (k entries, ascending, some equal
 * neighbours) and its expansion into x (returns its size). Values on a
 * coarse grid when `grid` (many ties), else continuous. */
static size_t random_wsample(double *v, uint64_t *w, size_t k, double *x,
                             int grid, int ones, cap_rng *rng)
{
    for (size_t i = 0; i < k; i++) {
        v[i] = grid ? (double)cap_rng_below(rng, 12) * 0.25
                    : 0.5 + 3.0 * cap_rng_uniform(rng);
        w[i] = ones ? 1 : 1 + cap_rng_below(rng, 6);
    }
    cap_stats_sort(v, k);
    size_t n = 0;
    for (size_t i = 0; i < k; i++)
        for (uint64_t c = 0; c < w[i]; c++)
            x[n++] = v[i];
    return n;
}

static void weighted_samples_give_the_expanded_samples_results(void **state)
{
    (void)state;
    cap_rng rng;
    cap_rng_seed(&rng, 2026);
    double vx[64], vy[64], ex[400], ey[400], all[160000];
    uint64_t wx[64], wy[64];
    for (int trial = 0; trial < 300; trial++) {
        int grid = trial % 3 == 0, ones = trial % 4 == 1;
        size_t kx = 1 + cap_rng_below(&rng, 60), ky = 1 + cap_rng_below(&rng, 60);
        if (trial % 5 == 2) { /* small: the exact method where allowed */
            kx = 1 + cap_rng_below(&rng, 20);
            ky = 1 + cap_rng_below(&rng, 20);
        }
        size_t nx = random_wsample(vx, wx, kx, ex, grid, ones, &rng);
        size_t ny = random_wsample(vy, wy, ky, ey, grid, ones, &rng);
        cap_wsample x = {vx, wx, kx}, y = {vy, wy, ky};
        assert_int_equal(cap_wsample_size(&x), nx);
        static const double ps[] = {0.0, 0.1, 0.5, 0.95, 1.0};
        for (size_t i = 0; i < ARRAY_LEN(ps); i++)
            assert_true(cap_stats_wquantile(&x, ps[i]) ==
                        cap_stats_quantile_sorted(ex, nx, ps[i]));
        assert_true(fabs(cap_stats_wmean(&x) - cap_stats_mean(ex, nx)) <=
                    1e-12);
        /* the U test, shifted or not: the same result to the bit */
        double mus[] = {0.0, 0.25, -0.5, 0.1};
        for (size_t i = 0; i < ARRAY_LEN(mus); i++) {
            cap_mw_result a, b;
            memset(&a, 0, sizeof a);
            memset(&b, 0, sizeof b);
            assert_int_equal(cap_stats_mann_whitney_mu_w(&a, &x, &y, mus[i],
                                                         CAP_MW_AUTO),
                             CAP_OK);
            assert_int_equal(cap_stats_mann_whitney_mu(&b, ex, nx, ey, ny,
                                                       mus[i], CAP_MW_AUTO),
                             CAP_OK);
            assert_memory_equal(&a, &b, sizeof a);
        }
        /* every difference's rank, against a brute force sort */
        size_t nd = 0;
        for (size_t i = 0; i < nx; i++)
            for (size_t j = 0; j < ny; j++)
                all[nd++] = ex[i] - ey[j];
        cap_stats_sort(all, nd);
        for (int t = 0; t < 8; t++) {
            uint64_t k = t == 0 ? 0 : t == 1 ? nd - 1 : cap_rng_below(&rng, nd);
            double d;
            assert_int_equal(cap_stats_kth_difference_w(&d, &x, &y, k), CAP_OK);
            assert_true(d == all[k]);
            assert_false(signbit(d) && d == 0.0);
        }
        /* the interval and the estimate */
        cap_shift_ci a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        assert_int_equal(cap_stats_shift_ci_w(&a, &x, &y, 0.1, CAP_MW_AUTO),
                         CAP_OK);
        assert_int_equal(cap_stats_shift_ci(&b, ex, nx, ey, ny, 0.1,
                                            CAP_MW_AUTO),
                         CAP_OK);
        assert_memory_equal(&a, &b, sizeof a);
    }
}

static void weighted_samples_reject_bad_input(void **state)
{
    (void)state;
    double v[3] = {1.0, 0.5, 2.0}, u[2] = {1.0, 2.0};
    uint64_t w[3] = {1, 1, 1}, z[2] = {1, 0};
    cap_wsample down = {v, w, 3}, zero_w = {u, z, 2}, ok = {u, w, 2},
                empty = {u, w, 0};
    cap_mw_result r;
    cap_shift_ci ci;
    double d;
    assert_int_equal(cap_stats_mann_whitney_mu_w(&r, &down, &ok, 0, 0),
                     CAP_E_MISUSE);
    assert_int_equal(cap_stats_mann_whitney_mu_w(&r, &ok, &zero_w, 0, 0),
                     CAP_E_MISUSE);
    assert_int_equal(cap_stats_mann_whitney_mu_w(&r, &ok, &empty, 0, 0),
                     CAP_E_MISUSE);
    assert_int_equal(cap_stats_kth_difference_w(&d, &ok, &ok, 4),
                     CAP_E_MISUSE);
    assert_int_equal(cap_stats_kth_difference_w(&d, &ok, &ok, 3), CAP_OK);
    assert_true(d == 1.0);
    assert_int_equal(cap_stats_shift_ci_w(&ci, &ok, &down, 0.1, 0),
                     CAP_E_MISUSE);
    assert_true(isnan(cap_stats_wquantile(&empty, 0.5)));
    assert_true(isnan(cap_stats_wmean(&empty)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(splitmix64_from_zero_gives_the_published_outputs),
        cmocka_unit_test(xoshiro_from_state_1234_gives_the_published_outputs),
        cmocka_unit_test(seeding_fills_the_state_with_splitmix64_outputs),
        cmocka_unit_test(the_same_seed_repeats_the_sequence_and_another_does_not),
        cmocka_unit_test(below_stays_in_range_and_is_uniform),
        cmocka_unit_test(uniform_and_normal_have_the_right_moments),
        cmocka_unit_test(sort_orders_values_and_puts_nan_last),
        cmocka_unit_test(select_finds_every_order_statistic),
        cmocka_unit_test(select_out_of_range_returns_nan_and_leaves_x_alone),
        cmocka_unit_test(quantile_type7_matches_hand_computation),
        cmocka_unit_test(quantile_matches_r_quantile),
        cmocka_unit_test(quantile_is_undefined_for_no_data_or_a_bad_p),
        cmocka_unit_test(quantile_next_to_an_infinity_is_that_infinity),
        cmocka_unit_test(median_of_odd_and_even_counts),
        cmocka_unit_test(mean_is_exact_on_simple_data_and_accurate_on_offsets),
        cmocka_unit_test(geomean_is_the_exponential_of_the_mean_log),
        cmocka_unit_test(mw_matches_r_on_small_samples_without_ties),
        cmocka_unit_test(mw_matches_r_with_ties),
        cmocka_unit_test(mw_matches_r_on_larger_samples),
        cmocka_unit_test(mw_exact_p_agrees_with_brute_force_enumeration),
        cmocka_unit_test(mw_swapping_the_samples_mirrors_u_and_keeps_p),
        cmocka_unit_test(mw_all_values_equal_gives_p_of_one),
        cmocka_unit_test(mw_rejects_bad_arguments),
        cmocka_unit_test(mw_with_a_shift_matches_r),
        cmocka_unit_test(qnorm_matches_r),
        cmocka_unit_test(student_t_matches_r),
        cmocka_unit_test(kth_difference_agrees_with_sorting_every_difference),
        cmocka_unit_test(kth_difference_agrees_with_sorting_on_large_samples),
        cmocka_unit_test(shift_interval_matches_r),
        cmocka_unit_test(shift_estimate_is_the_median_of_every_difference_with_ties),
        cmocka_unit_test(shift_interval_covers_at_about_its_level),
        cmocka_unit_test(rel_change_guards_a_zero_base),
        cmocka_unit_test(bootstrap_is_reproducible_for_a_seed),
        cmocka_unit_test(bootstrap_follows_the_documented_procedure_bit_for_bit),
        cmocka_unit_test(bootstrap_does_not_depend_on_the_order_of_frames),
        cmocka_unit_test(bootstrap_ci_contains_the_true_change_of_a_clear_shift),
        cmocka_unit_test(bootstrap_interval_covers_at_about_its_level),
        cmocka_unit_test(bootstrap_with_a_zero_median_base),
        cmocka_unit_test(bootstrap_rejects_bad_arguments),
        cmocka_unit_test(holm_matches_the_worked_example),
        cmocka_unit_test(holm_caps_at_one_handles_ties_and_may_work_in_place),
        cmocka_unit_test(holm_rejects_values_outside_zero_one),
        cmocka_unit_test(weighted_samples_give_the_expanded_samples_results),
        cmocka_unit_test(weighted_samples_reject_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
