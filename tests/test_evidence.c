/*
 * test_evidence - the device's evidence early and late in a capture and the
 * cause it points to: thermal throttling, a power or governor limit, growing
 * work, steady; from hand-made counters, from the device sampler reading a
 * scripted fake sysfs tree, and from the H200 capture.
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

#include "evidence.h"
#include "fake_sysfs.h"
#include "model.h"
#include "producer/sampler.h"

#define SEC 1000000000ll

/* ---- counters made by hand ---------------------------------------------- */

typedef struct set {
    an_counter c[16];
    an_sample s[16][64];
    char names[16][96];
    size_t n;
} set;

/* Counter name: `early` at t = 0..4 s, `late` at t = 5..9 s. */
static void two_phase(set *k, const char *name, double early, double late)
{
    size_t i = k->n++;
    snprintf(k->names[i], sizeof k->names[i], "%s", name);
    k->c[i].name = k->names[i];
    k->c[i].s = k->s[i];
    for (int t = 0; t < 10; t++)
        k->s[i][t] = (an_sample){t * SEC, t < 5 ? early : late};
    k->c[i].n = 10;
}

static void windows(const set *k, double growth, an_evidence *e)
{
    an_evidence_compute(k->c, k->n, 0, 5 * SEC, 5 * SEC, 9 * SEC, growth, e);
}

static void text_is(const an_evidence *e, const char *want)
{
    char buf[512];
    size_t n = an_evidence_text(e, buf, sizeof buf);
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
}

static void clocks_fell_while_the_soc_heated_is_thermal_throttling(void **state)
{
    (void)state;
    set k = {0};
    two_phase(&k, "cpu0.freq_mhz", 2900, 2000);
    two_phase(&k, "thermal.soc.temp_c", 52, 81);
    two_phase(&k, "power.battery.power_w", 4.0, 4.1);
    two_phase(&k, "proc.rss_mib", 120, 120);
    an_evidence e;
    windows(&k, 1.46, &e);
    assert_int_equal(e.cause, AN_CAUSE_THERMAL);
    assert_true(e.cpu_fell && e.heated && !e.gpu_fell);
    assert_string_equal(e.cpu_clock.name, "cpu0.freq_mhz");
    assert_float_equal(e.cpu_clock.from, 2900, 0);
    assert_float_equal(e.cpu_clock.to, 2000, 0);
    assert_float_equal(e.temp.from, 52, 0);
    assert_float_equal(e.temp.to, 81, 0);
    assert_float_equal(e.power.to, 4.1, 0);
    assert_string_equal(an_cause_name(e.cause), "thermal throttling");
    text_is(&e, "the CPU clock fell from 2.90 to 2.00 GHz (cpu0.freq_mhz) and "
                "the temperature rose from 52 to 81 °C (thermal.soc.temp_c): "
                "thermal throttling");
}

static void clocks_fell_without_heat_is_a_power_or_governor_limit(void **state)
{
    (void)state;
    set k = {0};
    two_phase(&k, "cpu0.freq_mhz", 2900, 2000);
    two_phase(&k, "thermal.soc.temp_c", 45, 49.9); /* under 5 degrees */
    two_phase(&k, "power.battery.power_w", 6.0, 3.0);
    an_evidence e;
    windows(&k, 1.45, &e);
    assert_int_equal(e.cause, AN_CAUSE_POWER);
    assert_false(e.heated);
    text_is(&e, "the CPU clock fell from 2.90 to 2.00 GHz (cpu0.freq_mhz) and "
                "the temperature rose from 45 to 50 °C (thermal.soc.temp_c), "
                "power 6.0 to 3.0 W (power.battery.power_w): a power or "
                "governor limit (the clock fell without heat)");
}

static void growth_with_flat_clocks_is_growing_work(void **state)
{
    (void)state;
    set k = {0};
    two_phase(&k, "cpu0.freq_mhz", 2900, 2900);
    two_phase(&k, "cpu4.freq_mhz", 1800, 1750); /* 0.97: did not fall */
    two_phase(&k, "thermal.soc.temp_c", 50, 56);
    an_evidence e;
    windows(&k, 1.46, &e);
    assert_int_equal(e.cause, AN_CAUSE_WORK_GREW);
    /* the cluster that fell most is the one cited */
    assert_string_equal(e.cpu_clock.name, "cpu4.freq_mhz");
    text_is(&e, "the CPU clock went from 1.80 to 1.75 GHz (cpu4.freq_mhz) and "
                "the temperature rose from 50 to 56 °C (thermal.soc.temp_c): "
                "the clocks did not fall, so the work grew");
}

static void no_growth_is_steady_whatever_the_clocks_do(void **state)
{
    (void)state;
    set k = {0};
    two_phase(&k, "cpu0.freq_mhz", 2900, 2900);
    two_phase(&k, "thermal.soc.temp_c", 52, 52.4);
    an_evidence e;
    windows(&k, 1.02, &e);
    assert_int_equal(e.cause, AN_CAUSE_STEADY);
    text_is(&e, "the CPU clock stayed at 2.90 GHz (cpu0.freq_mhz) and the "
                "temperature stayed at 52 °C (thermal.soc.temp_c): the work "
                "did not slow down");
    windows(&k, NAN, &e); /* growth unknown */
    assert_int_equal(e.cause, AN_CAUSE_STEADY);
}

static void clock_fell_without_a_slowdown_contradicts_the_scopes(void **state)
{
    (void)state;
    set k = {0};
    two_phase(&k, "cpu0.freq_mhz", 2900, 2000);
    two_phase(&k, "thermal.soc.temp_c", 52, 81);
    two_phase(&k, "power.battery.power_w", 4.2, 3.4);
    an_evidence e;
    windows(&k, 1.02, &e);
    assert_int_equal(e.cause, AN_CAUSE_UNFELT);
    assert_true(e.cpu_fell && e.heated);
    assert_string_equal(an_cause_name(e.cause), "clock fell, work did not slow");
    text_is(&e, "the CPU clock fell from 2.90 to 2.00 GHz (cpu0.freq_mhz) and "
                "the temperature rose from 52 to 81 °C (thermal.soc.temp_c), "
                "power 4.2 to 3.4 W (power.battery.power_w), yet the work did "
                "not slow down (1.02x): the clock did not limit it");
    windows(&k, NAN, &e); /* growth unknown: nothing to contradict */
    assert_int_equal(e.cause, AN_CAUSE_STEADY);
    two_phase(&k, "power.gpu0.power_w", 300, 300); /* the larger late draw */
    windows(&k, 1.46, &e);
    assert_int_equal(e.cause, AN_CAUSE_THERMAL);
    windows(&k, 1.0, &e);
    text_is(&e, "the CPU clock fell from 2.90 to 2.00 GHz (cpu0.freq_mhz) and "
                "the temperature rose from 52 to 81 °C (thermal.soc.temp_c), "
                "power stayed at 300.0 W (power.gpu0.power_w), yet the work "
                "did not slow down (1.00x): the clock did not limit it");
}

static void without_device_counters_there_is_no_evidence(void **state)
{
    (void)state;
    set k = {0};
    two_phase(&k, "proc.rss_mib", 100, 100);
    two_phase(&k, "gpu0.power_limit_w", 700, 700);
    an_evidence e;
    windows(&k, 1.5, &e);
    assert_int_equal(e.cause, AN_CAUSE_NONE);
    assert_false(e.power.present); /* a limit is not a draw */
    text_is(&e, "");
    set t = {0};
    two_phase(&t, "thermal.soc.temp_c", 40, 70);
    windows(&t, 1.5, &e);
    assert_int_equal(e.cause, AN_CAUSE_NO_CLOCK);
}

static void nvml_flags_count_as_heat_and_power_cap(void **state)
{
    (void)state;
    set k = {0};
    two_phase(&k, "gpu0.sm_freq_mhz", 1980, 1410);
    two_phase(&k, "gpu0.temp_c", 60, 62);
    two_phase(&k, "gpu0.throttle_thermal_flag", 0, 1);
    two_phase(&k, "gpu0.throttle_power_flag", 0, 0);
    an_evidence e;
    windows(&k, 1.40, &e);
    assert_int_equal(e.cause, AN_CAUSE_THERMAL);
    assert_false(e.power_capped);
    text_is(&e, "the GPU clock fell from 1.98 to 1.41 GHz (gpu0.sm_freq_mhz) "
                "and the temperature rose from 60 to 62 °C (gpu0.temp_c), "
                "NVML reporting thermal slowdown in 100% of the late samples: "
                "thermal throttling");
    set p = {0};
    two_phase(&p, "gpu0.sm_freq_mhz", 1980, 1500);
    two_phase(&p, "gpu0.temp_c", 60, 61);
    two_phase(&p, "gpu0.power_w", 690, 700);
    two_phase(&p, "gpu0.throttle_power_flag", 0, 0.8);
    windows(&p, 1.30, &e);
    assert_int_equal(e.cause, AN_CAUSE_POWER);
    assert_true(e.power_capped);
    text_is(&e, "the GPU clock fell from 1.98 to 1.50 GHz (gpu0.sm_freq_mhz) "
                "and the temperature rose from 60 to 61 °C (gpu0.temp_c), "
                "power 690.0 to 700.0 W (gpu0.power_w), NVML reporting the "
                "power cap in 80% of the late samples: a power or governor "
                "limit (the clock fell without heat)");
}

/* ---- the sampler on a scripted fake tree, then the evidence --------------- */

typedef struct rec {
    set k;
    int64_t now;
} rec;

static void on_sample(void *user, const char *name, uint32_t *id, double v)
{
    (void)id;
    rec *r = user;
    size_t i = 0;
    while (i < r->k.n && strcmp(r->k.names[i], name) != 0)
        i++;
    if (i == r->k.n) {
        assert_true(r->k.n < 16);
        r->k.n++;
        snprintf(r->k.names[i], sizeof r->k.names[i], "%s", name);
        r->k.c[i].name = r->k.names[i];
        r->k.c[i].s = r->k.s[i];
    }
    assert_true(r->k.c[i].n < 64);
    r->k.s[i][r->k.c[i].n++] = (an_sample){r->now, v};
}

/* Ten samples a second apart: the first five with the early values, the
 * rest with the late ones (the test rewrites the tree in between). */
static void scripted_run(rec *r, double cpu0, double soc0, double w0,
                         double cpu1, double soc1, double w1)
{
    char buf[64];
    const char *root = fake_root(buf, sizeof buf);
    assert_non_null(root);
    assert_int_equal(fake_device(root, cpu0, soc0, w0), 0);
    memset(r, 0, sizeof *r);
    cap__sampler *s = cap__sampler_new(root, 0, NULL, NULL);
    for (int t = 0; t < 10; t++) {
        if (t == 5)
            assert_int_equal(fake_device(root, cpu1, soc1, w1), 0);
        r->now = t * SEC;
        assert_int_equal(cap__sampler_sample(s, (uint64_t)(t + 1) * SEC,
                                             on_sample, r),
                         5);
    }
    cap__sampler_free(s);
    fake_remove_tree(root);
}

static void fake_tree_throttling_power_limit_and_steady_runs(void **state)
{
    (void)state;
    rec r;
    an_evidence e;
    char buf[512];
    scripted_run(&r, 2900, 52, 4.0, 2000, 81, 4.0);
    windows(&r.k, 1.46, &e);
    assert_int_equal(e.cause, AN_CAUSE_THERMAL);
    assert_float_equal(e.cpu_clock.from, 2900, 0);
    assert_float_equal(e.cpu_clock.to, 2000, 0);
    assert_float_equal(e.temp.from, 52, 0);
    assert_float_equal(e.temp.to, 81, 0);
    an_evidence_text(&e, buf, sizeof buf);
    assert_string_equal(buf, "the CPU clock fell from 2.90 to 2.00 GHz "
                             "(cpu0.freq_mhz) and the temperature rose from 52 "
                             "to 81 °C (thermal.soc.temp_c): thermal "
                             "throttling");

    scripted_run(&r, 2900, 45, 6.0, 2000, 46, 3.5);
    windows(&r.k, 1.45, &e);
    assert_int_equal(e.cause, AN_CAUSE_POWER);
    assert_float_equal(e.power.from, 6.0, 0);
    assert_float_equal(e.power.to, 3.5, 0);

    scripted_run(&r, 2900, 45, 4.0, 2900, 45, 4.0);
    windows(&r.k, 1.0, &e);
    assert_int_equal(e.cause, AN_CAUSE_STEADY);
    windows(&r.k, 1.46, &e);
    assert_int_equal(e.cause, AN_CAUSE_WORK_GREW);
}

/* ---- the H200 run ----------------------------------------------------------- */

static void h200_capture_held_its_clock(void **state)
{
    (void)state;
    an_capture *m;
    char d[256];
    an_options o = {0};
    assert_int_equal(an_load(&m, "fixtures/gpu/h200_sampled.cap", &o, d, sizeof d),
                     CAP_OK);
    an_evidence e;
    an_evidence_of_capture(m, 0.1, 1.0, &e);
    assert_int_equal(e.cause, AN_CAUSE_STEADY);
    assert_string_equal(e.gpu_clock.name, "gpu0.sm_freq_mhz");
    assert_float_equal(e.gpu_clock.from, 1980, 0);
    assert_float_equal(e.gpu_clock.to, 1980, 0);
    assert_false(e.cpu_clock.present); /* a VM: no cpufreq */
    assert_string_equal(e.temp.name, "gpu0.temp_c");
    assert_true(e.temp.from >= 40 && e.temp.to <= 60);
    assert_false(e.power_capped);
    assert_false(e.heated);
    an_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clocks_fell_while_the_soc_heated_is_thermal_throttling),
        cmocka_unit_test(clocks_fell_without_heat_is_a_power_or_governor_limit),
        cmocka_unit_test(growth_with_flat_clocks_is_growing_work),
        cmocka_unit_test(no_growth_is_steady_whatever_the_clocks_do),
        cmocka_unit_test(clock_fell_without_a_slowdown_contradicts_the_scopes),
        cmocka_unit_test(without_device_counters_there_is_no_evidence),
        cmocka_unit_test(nvml_flags_count_as_heat_and_power_cap),
        cmocka_unit_test(fake_tree_throttling_power_limit_and_steady_runs),
        cmocka_unit_test(h200_capture_held_its_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
