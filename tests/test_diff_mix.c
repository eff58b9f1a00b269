/*
 * test_diff_mix - capture_diff's "(heavy frames)" row (analysis/diff_mix.c,
 * docs/STATISTICS.md section 17) on captures written through cap_writer.h
 * whose frames alternate light and heavy stretches of known lengths: the
 * shares, the change of the mean frame the mix makes, its verdict, and the
 * cases where nothing is compared. Also checks that the rows' shift alone
 * misses a change of the mix (why the row exists) and that the report
 * shows the row and gates on it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/cap_writer.h"
#include "diff.h"
#include "model.h"

#include "assert_near.h"

enum { N_WORK = 1, N_IDLE };

/* A game loop on one thread: in each cycle of `cycle` frames the first
 * cycle - heavy are light (work light_ms), the rest heavy (heavy_ms);
 * heavy < 0: every frame light. Each frame's work is jittered by +-1 %
 * (a fixed sequence from seed). cap_ms > 0 holds each frame at cap_ms
 * (the rest idle, unscoped); else 0.5 ms of scoped idle follows. */
typedef struct mix_sim {
    int frames, cycle, heavy;
    double light_ms, heavy_ms, cap_ms;
    unsigned seed;
    int odd_frames;      /* the first odd_frames frames' heavy work is */
    double odd_heavy_ms; /* odd_heavy_ms instead */
} mix_sim;

static uint64_t ns(double ms)
{
    return (uint64_t)llround(ms * 1e6);
}

/* Write the capture of s to a new temporary file, its name in path. */
static void write_sim(const mix_sim *s, char path[64])
{
    snprintf(path, 64, "/tmp/cap_test_diff_mix_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, NULL), CAP_OK);
    assert_int_equal(cap_writer_name(w, N_WORK, "work", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_name(w, N_IDLE, "idle", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    uint64_t t = 1000000, x = s->seed * 2654435761u + 1;
    for (int i = 0; i < s->frames; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        double j = 1.0 + 0.02 * ((double)(x >> 11) / 9007199254740992.0 - 0.5);
        int heavy = s->heavy >= 0 && i % s->cycle >= s->cycle - s->heavy;
        double hv = i < s->odd_frames ? s->odd_heavy_ms : s->heavy_ms;
        double work = (heavy ? hv : s->light_ms) * j;
        uint64_t begin = t;
        assert_int_equal(cap_writer_scope_begin(w, 0, N_WORK, t), CAP_OK);
        t += ns(work);
        assert_int_equal(cap_writer_scope_end(w, 0, t), CAP_OK);
        if (s->cap_ms > 0) {
            t = begin + ns(s->cap_ms);
        } else {
            assert_int_equal(cap_writer_scope_begin(w, 0, N_IDLE, t), CAP_OK);
            t += ns(0.5);
            assert_int_equal(cap_writer_scope_end(w, 0, t), CAP_OK);
        }
        assert_int_equal(cap_writer_frame(w, (uint64_t)i, begin, t), CAP_OK);
    }
    assert_int_equal(cap_writer_close(w), CAP_OK);
}

static an_capture *run_sim(const mix_sim *s)
{
    char path[64];
    write_sim(s, path);
    an_capture *m;
    char d[256];
    assert_int_equal(an_load(&m, path, NULL, d, sizeof d), CAP_OK);
    unlink(path);
    return m;
}

static an_diff_mix mix_of(const mix_sim *b, const mix_sim *n)
{
    const an_capture *run[2] = {run_sim(b), run_sim(n)};
    an_diff_mix mix;
    assert_int_equal(an_diff_mix_compute(&mix, run, 1, 1, 0, NULL), CAP_OK);
    an_free((an_capture *)run[0]);
    an_free((an_capture *)run[1]);
    return mix;
}

/* 25 light and 25 heavy frames (4.5 and 6.5 ms with the idle) against 15
 * and 35: the shares are exact, every batch of 50 frames holds one cycle,
 * so the shares' error is 0, and the mean frame grows by 0.2 x 2 ms. */
static void a_heavier_mix_regresses_by_the_share_times_the_gap(void **state)
{
    (void)state;
    mix_sim b = {600, 50, 25, 4.0, 6.0, 0, 1, 0, 0};
    mix_sim n = {600, 50, 35, 4.0, 6.0, 0, 2, 0, 0};
    an_diff_mix m = mix_of(&b, &n);
    assert_int_equal(m.found, 1);
    assert_int_equal(m.by_work, 0);
    assert_int_equal(m.crowded, 0);
    assert_int_equal(m.base.split, 1);
    assert_int_equal(m.new_.split, 1);
    assert_int_equal(m.base.frames, 600);
    assert_int_equal(m.base.heavy, 300);
    assert_int_equal(m.new_.heavy, 420);
    assert_int_equal(m.batch, 50);
    assert_int_equal(m.base.batches, 12);
    assert_int_equal(m.new_.batches, 12);
    assert_near(m.base.share_se, 0, 1e-12);
    assert_near(m.new_.share_se, 0, 1e-12);
    assert_near(m.light_ms, 4.5, 0.02);
    assert_near(m.heavy_ms, 6.5, 0.04);
    assert_near(m.d.base_median, 50.0, 1e-9);
    assert_near(m.d.new_median, 70.0, 1e-9);
    double gap = m.heavy_ms - m.light_ms;
    assert_near(m.d.delta_ms, 0.2 * gap, 1e-9);
    assert_near(m.base_level_ms, m.light_ms + 0.5 * gap, 1e-9);
    assert_near(m.d.delta_pct, 100 * 0.2 * gap / m.base_level_ms, 1e-9);
    assert_near(m.d.ci_low_ms, m.d.delta_ms, 1e-12);
    assert_near(m.d.ci_high_ms, m.d.delta_ms, 1e-12);
    assert_near(m.d.band_ms, 0.05 * m.base_level_ms, 1e-9);
    assert_int_equal(m.d.verdict, CAP_VERDICT_REGRESSED);
    assert_near(m.d.p_value, 0, 0);
    /* and the other way round: lighter */
    m = mix_of(&n, &b);
    assert_int_equal(m.d.verdict, CAP_VERDICT_IMPROVED);
    assert_near(m.d.delta_ms, -0.2 * (m.heavy_ms - m.light_ms), 1e-9);
}

/* The same mix on both sides (other jitter): unchanged, 0 change. */
static void the_same_mix_is_unchanged(void **state)
{
    (void)state;
    mix_sim b = {600, 50, 25, 4.0, 6.0, 0, 3, 0, 0};
    mix_sim n = {600, 50, 25, 4.0, 6.0, 0, 4, 0, 0};
    an_diff_mix m = mix_of(&b, &n);
    assert_int_equal(m.found, 1);
    assert_near(m.d.delta_ms, 0, 1e-12);
    assert_int_equal(m.d.verdict, CAP_VERDICT_UNCHANGED);
}

/* Stretches of uneven lengths: the batches' shares vary, the interval has
 * a width, and a small change of the mix is not past the band. */
static void uneven_stretches_give_an_interval(void **state)
{
    (void)state;
    mix_sim b = {600, 30, 14, 4.0, 6.0, 0, 5, 0, 0};  /* 46.7 % heavy */
    mix_sim n = {600, 40, 21, 4.0, 6.0, 0, 6, 0, 0};  /* 52.5 % heavy */
    an_diff_mix m = mix_of(&b, &n);
    assert_int_equal(m.found, 1);
    assert_int_equal(m.batch, 40); /* 2 x the new side's 20 */
    assert_true(m.d.ci_low_ms < m.d.delta_ms);
    assert_true(m.d.ci_high_ms > m.d.delta_ms);
    assert_near(m.d.base_median, 100.0 * 280 / 600, 1e-9);
    assert_near(m.d.new_median, 100.0 * 315 / 600, 1e-9);
    assert_true(m.d.verdict == CAP_VERDICT_UNCHANGED ||
                m.d.verdict == CAP_VERDICT_INCONCLUSIVE);
}

/* A base of light frames only against a new run of 50 % heavy ones: the
 * base, which does not split, is classed at the new run's cut (all light,
 * share 0 in every batch), batches from the new side's stretches. */
static void heavy_frames_appearing_are_a_regression(void **state)
{
    (void)state;
    mix_sim b = {600, 50, -1, 4.0, 6.0, 0, 7, 0, 0};
    mix_sim n = {600, 50, 25, 4.0, 6.0, 0, 8, 0, 0};
    an_diff_mix m = mix_of(&b, &n);
    assert_int_equal(m.found, 1);
    assert_int_equal(m.base.split, 0);
    assert_int_equal(m.new_.split, 1);
    assert_int_equal(m.base.heavy, 0);
    assert_int_equal(m.batch, 50);
    assert_int_equal(m.base.batches, 12);
    assert_near(m.d.delta_ms, 0.5 * (m.heavy_ms - m.light_ms), 1e-9);
    assert_int_equal(m.d.verdict, CAP_VERDICT_REGRESSED);
    assert_true(isnan(m.new_.heavy_ms) == 0 && isnan(m.base.heavy_ms));
}

/* A run whose frames sit between the groups (5 ms against 4.5 and 6.5)
 * holds neither: nothing is compared. */
static void frames_between_the_groups_are_not_compared(void **state)
{
    (void)state;
    mix_sim b = {600, 50, 25, 4.0, 6.0, 0, 9, 0, 0};
    mix_sim n = {600, 50, -1, 4.9, 6.0, 0, 10, 0, 0};
    an_diff_mix m = mix_of(&b, &n);
    assert_int_equal(m.found, 0);
    assert_int_equal(m.crowded, 1);
}

/* A run that alternates as the other does, but whose first 200 frames'
 * heavy frames are heavier (8 ms): its windows' gaps differ, it does not
 * split itself, and its frames are classed at the other run's cut. Half
 * its frames are heavy, so its median lies between the groups: each
 * class's median, not the run's, is held against its group's level. */
static void a_run_that_does_not_split_is_classed_at_the_cut(void **state)
{
    (void)state;
    mix_sim b = {600, 50, 25, 4.0, 6.0, 0, 23, 0, 0};
    mix_sim n = {600, 50, 25, 4.0, 6.0, 0, 24, 200, 8.0};
    an_diff_mix m = mix_of(&b, &n);
    assert_int_equal(m.found, 1);
    assert_int_equal(m.crowded, 0);
    assert_int_equal(m.base.split, 1);
    assert_int_equal(m.new_.split, 0);
    assert_int_equal(m.new_.heavy, 300);
    assert_near(m.d.new_median, 50.0, 1e-9);
    assert_int_equal(m.d.verdict, CAP_VERDICT_UNCHANGED);
}

/* One group only on both sides: nothing found, nothing compared. */
static void one_group_finds_nothing(void **state)
{
    (void)state;
    mix_sim b = {600, 50, -1, 4.0, 6.0, 0, 11, 0, 0};
    mix_sim n = {600, 50, -1, 4.4, 6.0, 0, 12, 0, 0};
    an_diff_mix m = mix_of(&b, &n);
    assert_int_equal(m.found, 0);
    assert_int_equal(m.crowded, 0);
}

/* Stretches as long as a quarter of the run: four batches a side at
 * most, too few to say how often frames are heavy. */
static void too_few_stretches_are_not_compared(void **state)
{
    (void)state;
    mix_sim b = {600, 300, 150, 4.0, 6.0, 0, 13, 0, 0};
    mix_sim n = {600, 300, 200, 4.0, 6.0, 0, 14, 0, 0};
    an_diff_mix m = mix_of(&b, &n);
    assert_int_equal(m.found, 0);
}

/* Under a cap every frame lasts 16 ms: the frame times do not split, the
 * CPU work per frame does (4 and 6 ms). */
static void under_a_cap_the_work_splits(void **state)
{
    (void)state;
    mix_sim b = {600, 50, 25, 4.0, 6.0, 16.0, 15, 0, 0};
    mix_sim n = {600, 50, 35, 4.0, 6.0, 16.0, 16, 0, 0};
    an_diff_mix m = mix_of(&b, &n);
    assert_int_equal(m.found, 1);
    assert_int_equal(m.by_work, 1);
    assert_near(m.light_ms, 4.0, 0.02);
    assert_near(m.heavy_ms, 6.0, 0.04);
    assert_near(m.d.delta_ms, 0.2 * (m.heavy_ms - m.light_ms), 1e-9);
    assert_int_equal(m.d.verdict, CAP_VERDICT_REGRESSED);
}

/* Summarised loads (past a budget of 1 value) keep each frame's CPU work
 * during the load (an_options.frame_work): under a cap the row is the
 * exact loads', the same frames heavy, the levels within the rounding of
 * the floats the load sums in. */
static void summarised_runs_find_the_same_work_groups(void **state)
{
    (void)state;
    mix_sim s[2] = {{600, 50, 25, 4.0, 6.0, 16.0, 25, 0, 0},
                    {600, 50, 35, 4.0, 6.0, 16.0, 26, 0, 0}};
    char path[2][64];
    const char *paths[2] = {path[0], path[1]};
    for (int i = 0; i < 2; i++)
        write_sim(&s[i], path[i]);
    an_diff d[2];
    for (int k = 0; k < 2; k++) {
        an_capture *m[2];
        an_diff_sums *sums[2];
        an_options lo = {.series_budget = k ? 1 : 0};
        size_t failed;
        char detail[400];
        assert_int_equal(an_diff_load(m, sums, paths, 2, &lo, NULL, 1,
                                      &failed, detail, sizeof detail),
                         CAP_OK);
        assert_int_equal(m[0]->approx, k);
        const an_capture *b[1] = {m[0]}, *n[1] = {m[1]};
        const an_diff_sums *bs[1] = {sums[0]}, *ns[1] = {sums[1]};
        assert_int_equal(an_diff_runs_sums(&d[k], b, bs, 1, n, ns, 1, NULL),
                         CAP_OK);
        for (int i = 0; i < 2; i++) {
            an_diff_sums_free(sums[i]);
            an_free(m[i]);
        }
    }
    for (int i = 0; i < 2; i++)
        unlink(path[i]);
    assert_int_equal(d[0].approx, 0);
    assert_int_equal(d[1].approx, 1);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(d[k].mix.found, 1);
        assert_int_equal(d[k].mix.by_work, 1);
        assert_int_equal(d[k].mix.d.verdict, CAP_VERDICT_REGRESSED);
    }
    assert_int_equal(d[1].mix.base.heavy, d[0].mix.base.heavy);
    assert_int_equal(d[1].mix.new_.heavy, d[0].mix.new_.heavy);
    /* the summarised load sums in floats: within their rounding */
    assert_near(d[1].mix.light_ms, d[0].mix.light_ms, 1e-6 * 4.0);
    assert_near(d[1].mix.heavy_ms, d[0].mix.heavy_ms, 1e-6 * 6.0);
    assert_near(d[1].mix.d.delta_ms, d[0].mix.d.delta_ms, 1e-6);
    an_diff_free(&d[0]);
    an_diff_free(&d[1]);
}

/* Several runs a side: shares and batches pooled over each side's runs. */
static void runs_are_pooled_per_side(void **state)
{
    (void)state;
    mix_sim s[4] = {{400, 50, 25, 4.0, 6.0, 0, 17, 0, 0},
                    {400, 50, 25, 4.0, 6.0, 0, 18, 0, 0},
                    {400, 50, 35, 4.0, 6.0, 0, 19, 0, 0},
                    {400, 50, 35, 4.0, 6.0, 0, 20, 0, 0}};
    const an_capture *run[4];
    for (int i = 0; i < 4; i++)
        run[i] = run_sim(&s[i]);
    an_diff_mix m;
    assert_int_equal(an_diff_mix_compute(&m, run, 2, 2, 0, NULL), CAP_OK);
    assert_int_equal(m.found, 1);
    assert_int_equal(m.base.split, 2);
    assert_int_equal(m.new_.frames, 800);
    assert_int_equal(m.new_.heavy, 560);
    assert_int_equal(m.base.batches, 16);
    assert_int_equal(m.d.verdict, CAP_VERDICT_REGRESSED);
    assert_int_equal(an_diff_mix_compute(NULL, run, 2, 2, 0, NULL),
                     CAP_E_MISUSE);
    assert_int_equal(an_diff_mix_compute(&m, run, 0, 2, 0, NULL),
                     CAP_E_MISUSE);
    for (int i = 0; i < 4; i++)
        an_free((an_capture *)run[i]);
}

/* Why the row exists: every row's shift calls the heavier mix unchanged,
 * and the comparison regresses (gating) only through the row, which the
 * report prints. */
static void the_rows_shift_misses_the_mix_and_the_row_gates(void **state)
{
    (void)state;
    mix_sim b = {600, 50, 25, 4.0, 6.0, 0, 21, 0, 0};
    mix_sim n = {600, 50, 35, 4.0, 6.0, 0, 22, 0, 0};
    an_capture *mb = run_sim(&b), *mn = run_sim(&n);
    an_diff d;
    assert_int_equal(an_diff_run_opts(&d, mb, mn, NULL), CAP_OK);
    for (size_t i = 0; i < d.n; i++)
        if (strcmp(d.rows[i].name, "work") == 0 || d.rows[i].is_frame)
            assert_int_not_equal(d.rows[i].d.verdict,
                                 CAP_VERDICT_REGRESSED);
    assert_int_equal(d.mix.found, 1);
    assert_int_equal(d.mix.gates, 1);
    /* the summary over the means: "work" x (0.3 x 4 + 0.7 x 6) / (0.5 x 4
       + 0.5 x 6) = 1.08, "idle" the same 0.5 ms in every frame */
    assert_int_equal(d.geomean_of_means, 1);
    assert_int_equal(d.level_of_means, 1);
    assert_int_equal(d.geomean_used, 2);
    assert_near(d.geomean_pct, 100 * (sqrt(5.4 / 5.0) - 1), 0.3);
    assert_int_equal(d.regressed, 1);
    assert_int_equal(d.gating, 1);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(an_diff_report(f, &d, NULL, 0, 0, 0), 0);
    fclose(f);
    assert_non_null(strstr(text, "(heavy frames)                       600"
                                 "     600 50.0% heavy 70.0% heavy"));
    assert_non_null(strstr(text, "Heavy: base 50.0 % of 600 frames, new "
                                 "70.0 % of 600"));
    assert_non_null(strstr(text, "geometric mean of the changes of the mean "
                                 "self time per frame over 2 scopes"));
    /* the level columns hold the means, 0.5 x 4 + 0.5 x 6 and 0.3 x 4 +
       0.7 x 6 ms of work a frame (less the jitter's 0.04 %), not medians
       that land on either group */
    assert_non_null(strstr(text, "  base mean    new mean "));
    assert_non_null(strstr(text, "cpu   work                                 "
                                 "600     600    4.998 ms    5.395 ms "));
    assert_null(strstr(text, "nan"));
    free(text);
    f = open_memstream(&text, &len);
    assert_int_equal(an_diff_report(f, &d, NULL, 1, 0, 0), 0);
    fclose(f);
    assert_non_null(strstr(text, "\n,(heavy frames),600,600,50.000000,"
                                 "70.000000,,,,,"));
    free(text);
    an_diff_free(&d);
    an_free(mb);
    an_free(mn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_heavier_mix_regresses_by_the_share_times_the_gap),
        cmocka_unit_test(the_same_mix_is_unchanged),
        cmocka_unit_test(uneven_stretches_give_an_interval),
        cmocka_unit_test(heavy_frames_appearing_are_a_regression),
        cmocka_unit_test(frames_between_the_groups_are_not_compared),
        cmocka_unit_test(a_run_that_does_not_split_is_classed_at_the_cut),
        cmocka_unit_test(one_group_finds_nothing),
        cmocka_unit_test(too_few_stretches_are_not_compared),
        cmocka_unit_test(under_a_cap_the_work_splits),
        cmocka_unit_test(summarised_runs_find_the_same_work_groups),
        cmocka_unit_test(runs_are_pooled_per_side),
        cmocka_unit_test(the_rows_shift_misses_the_mix_and_the_row_gates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
