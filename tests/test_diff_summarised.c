/*
 * test_diff_summarised.c - capture_diff past its budget (issue 12): the
 * comparison read back from log histograms against the exact one, on the
 * A/B fixtures (ab-*, demo, and game_sim's runs), one and several runs a
 * side, by name and by blocks; and the loads on one thread against
 * several (the same results, bit for bit).
 *
 * What must hold (docs/STATISTICS.md section 16): the same verdict for
 * every row, the same rows that gate, the same sample counts; medians
 * and p95 within 2^-8 of the exact ones (a value read back is within
 * 2^-8 of one that was added); the shift and its bounds within 2^-8 of
 * base p95 + new p95 (each pairwise difference moves by at most 2^-8 of
 * the two values) plus the shift of rank that the ties of the buckets
 * make in the interval (at most 1 % of the same sum: measured 0.3 %).
 *
 * Run from the repository root (it reads fixtures/).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "diff.h"

#define EPS (1.0 / 256.0)

typedef struct loaded {
    an_capture *m[8];
    an_diff_sums *s[8];
    size_t n;
} loaded;

/* Load paths[0..n) with a budget (0: exact) on `threads` threads. */
static an_options load_opt; /* skip_seconds, by_path of the next loads */

static void load(loaded *l, const char *const *paths, size_t n, size_t budget,
                 size_t threads, const an_diff_options *o)
{
    an_options lo = load_opt;
    lo.series_budget = budget;
    char detail[400];
    size_t failed = 0;
    l->n = n;
    cap_result r = an_diff_load(l->m, l->s, paths, n, &lo, o, threads,
                                &failed, detail, sizeof detail);
    if (r != CAP_OK)
        fail_msg("%s: %s", paths[failed], detail);
}

static void unload(loaded *l)
{
    for (size_t i = 0; i < l->n; i++) {
        an_free(l->m[i]);
        an_diff_sums_free(l->s[i]);
    }
}

static void run(an_diff *d, const loaded *l, size_t nbase,
                const an_diff_options *o)
{
    cap_result r = an_diff_runs_sums(
        d, (const an_capture *const *)l->m,
        (const an_diff_sums *const *)l->s, nbase,
        (const an_capture *const *)l->m + nbase,
        (const an_diff_sums *const *)l->s + nbase, l->n - nbase, o);
    assert_int_equal(r, CAP_OK);
}

static const an_diff_row *row_named(const an_diff *d, const an_diff_row *r)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->rows[i].kind == r->kind && d->rows[i].is_frame == r->is_frame &&
            strcmp(d->rows[i].name, r->name) == 0)
            return &d->rows[i];
    return NULL;
}

static double worst_shift_err; /* largest error seen, over p95 sums */
static size_t borderline;      /* verdicts that differ at the band's edge */

static void close_rel(double a, double e, double rel, const char *what,
                      const char *name)
{
    if (isnan(a) && isnan(e))
        return;
    if (fabs(a - e) <= rel * fabs(e) + 1e-12)
        return;
    fail_msg("%s: %s %.9g, exact %.9g (allowed %g relative)", name, what, a,
             e, rel);
}

static void close_abs(double a, double e, double tol, const char *what,
                      const char *name)
{
    if (isnan(a) && isnan(e))
        return;
    if (!isnan(a) && !isnan(e) && fabs(a - e) <= tol + 1e-12)
        return;
    fail_msg("%s: %s %.9g, exact %.9g (allowed %g)", name, what, a, e, tol);
}

/* The case base runs paths[0..nbase) against the rest, exact against
 * summarised. */
static void check_case_mixed(const char *const *paths, size_t n,
                             size_t nbase, const an_diff_options *o,
                             int exact_first)
{
    loaded ex, ap;
    load(&ex, paths, n, 0, 1, o);
    if (exact_first) { /* the first capture exact, the others summarised */
        loaded one;
        load(&one, paths, 1, 0, 1, o);
        load(&ap, paths + 1, n - 1, 1, 2, o);
        memmove(ap.m + 1, ap.m, (n - 1) * sizeof *ap.m);
        memmove(ap.s + 1, ap.s, (n - 1) * sizeof *ap.s);
        ap.m[0] = one.m[0];
        ap.s[0] = one.s[0];
        ap.n = n;
    } else {
        load(&ap, paths, n, 1, 2, o);
    }
    for (size_t i = 0; i < n; i++) {
        assert_false(ex.m[i]->approx);
        assert_int_equal(ap.m[i]->approx, !(exact_first && i == 0));
    }
    an_diff de, da;
    run(&de, &ex, nbase, o);
    run(&da, &ap, nbase, o);
    assert_false(de.approx);
    assert_true(da.approx);
    assert_int_equal(de.n, da.n);
    assert_int_equal(de.gating, da.gating);
    assert_int_equal(de.regressed, da.regressed);
    assert_int_equal(de.improved, da.improved);
    assert_int_equal(de.block, da.block);
    for (size_t i = 0; i < de.n; i++) {
        const an_diff_row *e = &de.rows[i], *a = row_named(&da, e);
        assert_non_null(a);
        const cap_diffstat *x = &e->d, *y = &a->d;
        double scale = fabs(x->base_p95) + fabs(x->new_p95);
        double tol = EPS * scale + 0.01 * scale;
        /* the same verdict, unless an exact bound lies within the error
           of the band's edge (then either verdict is as right) */
        double edge = INFINITY;
        double ends[2] = {x->ci_low_ms, x->ci_high_ms};
        for (int k = 0; k < 2; k++)
            for (int sgn = -1; sgn <= 1; sgn += 2)
                if (fabs(ends[k] - sgn * x->band_ms) < edge)
                    edge = fabs(ends[k] - sgn * x->band_ms);
        if (x->verdict != y->verdict) {
            if (!(edge <= tol))
                fail_msg("%s: verdict %s, exact %s", e->name,
                         cap_verdict_name(y->verdict),
                         cap_verdict_name(x->verdict));
            borderline++;
        }
        assert_int_equal(e->gates, a->gates);
        assert_int_equal(e->block, a->block);
        assert_int_equal(x->base_n, y->base_n);
        assert_int_equal(x->new_n, y->new_n);
        close_rel(y->base_median, x->base_median, EPS, "base median", e->name);
        close_rel(y->new_median, x->new_median, EPS, "new median", e->name);
        close_rel(y->base_p95, x->base_p95, EPS, "base p95", e->name);
        close_rel(y->new_p95, x->new_p95, EPS, "new p95", e->name);
        close_rel(a->base_mean_ms, e->base_mean_ms, 1e-9, "base mean",
                  e->name);
        double v[3][2] = {{y->delta_ms, x->delta_ms},
                          {y->ci_low_ms, x->ci_low_ms},
                          {y->ci_high_ms, x->ci_high_ms}};
        static const char *what[3] = {"shift", "low bound", "high bound"};
        for (int k = 0; k < 3; k++) {
            close_abs(v[k][0], v[k][1], tol, what[k], e->name);
            if (scale > 0 && !isnan(v[k][0]) &&
                fabs(v[k][0] - v[k][1]) / scale > worst_shift_err)
                worst_shift_err = fabs(v[k][0] - v[k][1]) / scale;
        }
        close_rel(y->band_ms, x->band_ms, EPS, "band", e->name);
    }
    an_diff_free(&de);
    an_diff_free(&da);
    unload(&ex);
    unload(&ap);
}

static void check_case(const char *const *paths, size_t n, size_t nbase,
                       const an_diff_options *o)
{
    check_case_mixed(paths, n, nbase, o, 0);
}

/* One run exact (it fits), the other summarised: every row's samples are
 * weighted samples, the exact run's exact values among them. */
static void test_mixed(void **state)
{
    (void)state;
    static const char *pair[2] = {"fixtures/ab-base.cap",
                                  "fixtures/ab-regressed.cap"};
    check_case_mixed(pair, 2, 1, NULL, 1);
    static const char *runs[4] = {
        "fixtures/ab-runs-base-1.cap", "fixtures/ab-runs-base-2.cap",
        "fixtures/ab-runs-slow-1.cap", "fixtures/ab-runs-slow-2.cap"};
    check_case_mixed(runs, 4, 2, NULL, 1);
}

static void test_ab_pairs(void **state)
{
    (void)state;
    static const char *pairs[][2] = {
        {"fixtures/ab-base.cap", "fixtures/ab-regressed.cap"},
        {"fixtures/ab-base.cap", "fixtures/ab-same.cap"},
        {"fixtures/demo.cap", "fixtures/demo-truncated.cap"},
        {"fixtures/demo.cap", "fixtures/ab-base.cap"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        check_case(pairs[i], 2, 1, NULL);
    /* options that change the samples: a block, a skip, a threshold */
    an_diff_options o;
    memset(&o, 0, sizeof o);
    o.block = 4;
    check_case(pairs[2], 2, 1, &o);
    memset(&o, 0, sizeof o);
    o.stat.threshold_pct = 3;
    o.floor_share_pct = 0.05;
    check_case(pairs[0], 2, 1, &o);
    /* by call path; without the first second */
    load_opt.by_path = 1;
    check_case(pairs[0], 2, 1, NULL);
    load_opt.by_path = 0;
    load_opt.skip_seconds = 1;
    check_case(pairs[0], 2, 1, NULL);
    load_opt.skip_seconds = 0;
}

static void test_game_sim_pair(void **state)
{
    (void)state;
    static const char *pair[2] = {"fixtures/game-sim-base.cap",
                                  "fixtures/game-sim-slow.cap"};
    static const char *waits[] = {"wait_*", "worker_wait", "submit_jobs"};
    an_diff_options o;
    memset(&o, 0, sizeof o);
    o.wait = waits;
    o.nwait = 3;
    check_case(pair, 2, 1, &o);
    /* by blocks of 4 frames, as the CLI case diff-game-sim-blocks */
    memset(&o, 0, sizeof o);
    o.stat.min_frames = 4;
    o.block = 4;
    check_case(pair, 2, 1, &o);
}

static void test_runs(void **state)
{
    (void)state;
    static const char *slow[6] = {
        "fixtures/ab-runs-base-1.cap", "fixtures/ab-runs-base-2.cap",
        "fixtures/ab-runs-base-3.cap", "fixtures/ab-runs-slow-1.cap",
        "fixtures/ab-runs-slow-2.cap", "fixtures/ab-runs-slow-3.cap"};
    static const char *spread[6] = {
        "fixtures/ab-runs-base-1.cap", "fixtures/ab-runs-spread-b2.cap",
        "fixtures/ab-runs-spread-b3.cap", "fixtures/ab-runs-spread-n1.cap",
        "fixtures/ab-runs-spread-n2.cap", "fixtures/ab-runs-spread-n3.cap"};
    static const char *waits[] = {"submit_jobs", "handoff"};
    an_diff_options o;
    memset(&o, 0, sizeof o);
    o.wait = waits;
    o.nwait = 2;
    check_case(slow, 6, 3, &o);
    check_case(spread, 6, 3, &o);
}

/* The loads on one thread and on several give the same comparison. */
static void test_threads_same(void **state)
{
    (void)state;
    static const char *paths[4] = {
        "fixtures/ab-runs-base-1.cap", "fixtures/ab-runs-base-2.cap",
        "fixtures/ab-runs-slow-1.cap", "fixtures/ab-runs-slow-2.cap"};
    for (size_t budget = 0; budget < 2; budget++) {
        loaded one, many;
        load(&one, paths, 4, budget, 1, NULL);
        load(&many, paths, 4, budget, 3, NULL);
        an_diff d1, d2;
        run(&d1, &one, 2, NULL);
        run(&d2, &many, 2, NULL);
        assert_int_equal(d1.n, d2.n);
        for (size_t i = 0; i < d1.n; i++) {
            assert_string_equal(d1.rows[i].name, d2.rows[i].name);
            assert_memory_equal(&d1.rows[i].d, &d2.rows[i].d,
                                sizeof d1.rows[i].d);
        }
        an_diff_free(&d1);
        an_diff_free(&d2);
        unload(&one);
        unload(&many);
    }
}

/* A summarised run without its block sums (an_diff_runs): its blocked
 * rows are read again from the file, with the same result. */
static void test_without_sums(void **state)
{
    (void)state;
    static const char *pair[2] = {"fixtures/game-sim-base.cap",
                                  "fixtures/game-sim-slow.cap"};
    an_diff_options o;
    memset(&o, 0, sizeof o);
    o.stat.min_frames = 4;
    o.block = 4;
    loaded l;
    load(&l, pair, 2, 1, 1, &o);
    an_diff d1, d2;
    run(&d1, &l, 1, &o);
    assert_int_equal(an_diff_runs(&d2, (const an_capture *const *)l.m, 1,
                                  (const an_capture *const *)l.m + 1, 1,
                                  &o),
                     CAP_OK);
    assert_int_equal(d1.n, d2.n);
    size_t blocked = 0;
    for (size_t i = 0; i < d1.n; i++) {
        blocked += d1.rows[i].block > 1;
        assert_string_equal(d1.rows[i].name, d2.rows[i].name);
        assert_memory_equal(&d1.rows[i].d, &d2.rows[i].d,
                            sizeof d1.rows[i].d);
    }
    assert_true(blocked > 0);
    an_diff_free(&d1);
    an_diff_free(&d2);
    unload(&l);
}

static int report_worst(void **state)
{
    (void)state;
    if (getenv("DIFF_SUMMARISED_VERBOSE"))
        fprintf(stderr, "largest shift or bound error: %.4f %% of base p95 "
                        "+ new p95; %zu verdicts differ at the band's edge\n",
                worst_shift_err * 100, borderline);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ab_pairs),
        cmocka_unit_test(test_game_sim_pair),
        cmocka_unit_test(test_runs),
        cmocka_unit_test(test_threads_same),
        cmocka_unit_test(test_mixed),
        cmocka_unit_test(test_without_sums),
    };
    return cmocka_run_group_tests(tests, NULL, report_worst);
}
