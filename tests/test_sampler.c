/*
 * test_sampler - the device sampler reads a fake sysfs/procfs tree with
 * scripted values (exact names, units and values; rewritten values are read
 * again; a file that vanishes is logged once and skipped; an empty tree logs
 * each family once), runs on this machine's real /proc and /sys, and, in the
 * producer, lands as ordinary counters in the file (option and environment).
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
#include <time.h>
#include <unistd.h>

#include "capture/cap_reader.h"
#include "capture/capture.h"
#include "fake_sysfs.h"
#include "producer/sampler.h"

/* ---- what the sampler passed and logged -------------------------------- */

typedef struct got {
    char name[64][96];
    double value[64];
    size_t n;
    char log[32][512];
    size_t nlog;
} got;

static void on_sample(void *user, const char *name, uint32_t *id, double v)
{
    got *g = user;
    assert_true(g->n < 64);
    assert_int_equal(*id, 0); /* nobody cached an id here */
    snprintf(g->name[g->n], sizeof g->name[0], "%s", name);
    g->value[g->n++] = v;
}

static void on_log(void *user, const char *line)
{
    got *g = user;
    if (g->nlog < 32)
        snprintf(g->log[g->nlog], sizeof g->log[0], "%s", line);
    g->nlog++;
}

static double value_of(const got *g, const char *name)
{
    for (size_t i = 0; i < g->n; i++)
        if (strcmp(g->name[i], name) == 0)
            return g->value[i];
    fail_msg("no sample named %s", name);
    return NAN;
}

static int logged(const got *g, const char *needle)
{
    int k = 0;
    for (size_t i = 0; i < g->nlog && i < 32; i++)
        k += strstr(g->log[i], needle) != NULL;
    return k;
}

#define SEC 1000000000ull

/* ---- cases --------------------------------------------------------------- */

static void sampler_reads_every_family_of_a_fake_tree_exactly(void **state)
{
    (void)state;
    char buf[64];
    const char *root = fake_root(buf, sizeof buf);
    assert_non_null(root);
    assert_int_equal(fake_device(root, 2900, 52, 3.5), 0);
    /* a second cluster, numbered past 9 to check the natural order */
    fake_set(root, "sys/devices/system/cpu/cpufreq/policy10/scaling_cur_freq",
             "1800000");
    fake_set(root, "sys/devices/system/cpu/cpufreq/policy4/scaling_cur_freq",
             "2400000");
    fake_set(root, "sys/class/thermal/thermal_zone1/type", "Battery Temp");
    fake_set(root, "sys/class/thermal/thermal_zone1/temp", "30500");
    fake_set(root, "sys/class/thermal/thermal_zone2/type", "soc");
    fake_set(root, "sys/class/thermal/thermal_zone2/temp", "50000");
    fake_set(root, "sys/class/power_supply/battery/capacity", "80");
    fake_set(root, "sys/class/power_supply/battery/temp", "305");
    fake_set(root, "sys/class/power_supply/usb/current_now", "-500000");
    fake_set(root, "sys/class/power_supply/usb/voltage_now", "5000000");
    fake_set(root, "sys/class/hwmon/hwmon0/name", "amdgpu");
    fake_set(root, "sys/class/hwmon/hwmon0/temp1_input", "65000");
    fake_set(root, "sys/class/hwmon/hwmon0/power1_average", "150000000");
    fake_set(root, "sys/class/hwmon/hwmon0/freq1_input", "1800000000");
    fake_set(root, "sys/class/hwmon/hwmon1/name", "coretemp");
    fake_set(root, "sys/class/hwmon/hwmon1/temp1_input", "70000");
    fake_set(root, "sys/class/devfreq/kgsl-3d0/cur_freq", "587000000");
    fake_set(root, "sys/class/devfreq/soc:bus/cur_freq", "100000000");
    fake_set(root, "sys/class/drm/card0/gt_act_freq_mhz", "1100");
    fake_set(root, "sys/class/drm/card0-HDMI-A-1/gt_act_freq_mhz", "1");

    got g = {0};
    cap__sampler *s = cap__sampler_new(root, 10 * SEC, on_log, &g);
    assert_non_null(s);
    assert_int_equal(cap__sampler_sample(s, 11 * SEC, on_sample, &g), 18);
    const char *names[] = {
        "cpu0.freq_mhz",         "cpu4.freq_mhz",         "cpu10.freq_mhz",
        "thermal.soc.temp_c",    "thermal.battery_temp.temp_c",
        "thermal.soc_2.temp_c",  "power.battery.power_w",
        "power.battery.capacity_pct", "power.battery.temp_c",
        "power.usb.power_w",     "gpu.amdgpu.temp_c",     "gpu.amdgpu.power_w",
        "gpu.amdgpu.freq_mhz",   "hwmon.coretemp.temp_c",
        "gpu.kgsl_3d0.freq_mhz", "gpu.card0.freq_mhz",    "proc.rss_mib",
        "proc.cpu_pct"};
    const double want[] = {2900, 2400, 1800, 52,  30.5, 50,   3.5,
                           80,   30.5, 2.5,  65,  150,  1800, 70,
                           587,  1100};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_float_equal(value_of(&g, names[i]), want[i], 1e-9);
    /* 12800 resident pages; the CPU time did not move in that second */
    double page = (double)sysconf(_SC_PAGESIZE);
    assert_float_equal(value_of(&g, "proc.rss_mib"), 12800 * page / 1048576.0,
                       1e-9);
    assert_float_equal(value_of(&g, "proc.cpu_pct"), 0, 1e-12);
    assert_string_equal(g.name[0], "cpu0.freq_mhz");
    assert_string_equal(g.name[1], "cpu4.freq_mhz");
    assert_string_equal(g.name[2], "cpu10.freq_mhz");
    /* the 18 named above: not the bus devfreq, not the connector */
    assert_int_equal(g.n, 18);
    assert_int_equal(logged(&g, "NVML not loaded (a test root is set)"), 1);
    assert_int_equal(logged(&g, "device sampler: 18 counters (CPU clocks 3, "
                                "thermal 3, power 4, GPU sysfs 6, process 2, "
                                "NVML 0)"),
                     1);
    assert_int_equal(g.nlog, 2);
    cap__sampler_free(s);
    fake_remove_tree(root);
}

static void sampler_reads_rewritten_values_at_each_sample(void **state)
{
    (void)state;
    char buf[64];
    const char *root = fake_root(buf, sizeof buf);
    assert_int_equal(fake_device(root, 2900, 52, 4.0), 0);
    got g = {0};
    cap__sampler *s = cap__sampler_new(root, 1 * SEC, on_log, &g);
    assert_int_equal(cap__sampler_sample(s, 2 * SEC, on_sample, &g), 5);
    assert_float_equal(value_of(&g, "cpu0.freq_mhz"), 2900, 0);
    assert_float_equal(value_of(&g, "thermal.soc.temp_c"), 52, 0);
    /* throttled: the clock fell, the SoC heated; the process used 0.5 s of
     * CPU (50 ticks at 100 Hz, whatever the clock tick is) in 2 s */
    fake_device(root, 2000, 81, 4.0);
    long hz = sysconf(_SC_CLK_TCK);
    fake_set(root, "proc/self/stat",
             "4242 (game (main)) S 1 4242 4242 0 -1 4194560 100 0 0 0 "
             "%ld %ld 0 0 20 0 3 0 100 1000000 12800",
             250 + hz / 2, 50L);
    g.n = 0;
    assert_int_equal(cap__sampler_sample(s, 4 * SEC, on_sample, &g), 5);
    assert_float_equal(value_of(&g, "cpu0.freq_mhz"), 2000, 0);
    assert_float_equal(value_of(&g, "thermal.soc.temp_c"), 81, 0);
    assert_float_equal(value_of(&g, "power.battery.power_w"), 4.0, 0);
    assert_float_equal(value_of(&g, "proc.cpu_pct"),
                       (double)(hz / 2) / (double)hz / 2.0 * 100.0, 1e-9);
    cap__sampler_free(s);
    fake_remove_tree(root);
}

static void sampler_logs_a_source_that_stops_reading_once(void **state)
{
    (void)state;
    char buf[64], p[256];
    const char *root = fake_root(buf, sizeof buf);
    fake_device(root, 2900, 52, 4.0);
    got g = {0};
    cap__sampler *s = cap__sampler_new(root, 0, on_log, &g);
    assert_int_equal(cap__sampler_count(s), 5);
    size_t before = g.nlog;
    snprintf(p, sizeof p, "%s/sys/class/thermal/thermal_zone0/temp", root);
    assert_int_equal(unlink(p), 0);
    assert_int_equal(cap__sampler_sample(s, 1 * SEC, on_sample, &g), 4);
    assert_int_equal(cap__sampler_sample(s, 2 * SEC, on_sample, &g), 4);
    fake_set(root, "sys/class/thermal/thermal_zone0/temp", "60000");
    assert_int_equal(cap__sampler_sample(s, 3 * SEC, on_sample, &g), 4);
    assert_int_equal(g.nlog - before, 1);
    assert_non_null(strstr(g.log[before], "cannot read "));
    assert_non_null(strstr(g.log[before], "/sys/class/thermal/thermal_zone0/temp: "
                                          "No such file or directory; "
                                          "thermal.soc.temp_c skipped from "
                                          "now on"));
    assert_int_equal(cap__sampler_count(s), 4);
    cap__sampler_free(s);
    fake_remove_tree(root);
}

static void sampler_on_an_empty_tree_logs_each_family_once(void **state)
{
    (void)state;
    char buf[64];
    const char *root = fake_root(buf, sizeof buf);
    got g = {0};
    cap__sampler *s = cap__sampler_new(root, 0, on_log, &g);
    assert_int_equal(cap__sampler_sample(s, SEC, on_sample, &g), 0);
    assert_int_equal(cap__sampler_sample(s, 2 * SEC, on_sample, &g), 0);
    assert_int_equal(g.nlog, 8);
    assert_int_equal(logged(&g, "no CPU clock under"), 1);
    assert_int_equal(logged(&g, "no thermal zone under"), 1);
    assert_int_equal(logged(&g, "no battery or power reading under"), 1);
    assert_int_equal(logged(&g, "no GPU clock or temperature under"), 1);
    assert_int_equal(logged(&g, "/proc/self/statm: No such file or directory; "
                                "proc.rss_mib skipped"),
                     1);
    assert_int_equal(logged(&g, "/proc/self/stat: No such file or directory; "
                                "proc.cpu_pct skipped"),
                     1);
    assert_int_equal(logged(&g, "NVML not loaded"), 1);
    assert_int_equal(logged(&g, "device sampler: 0 counters"), 1);
    for (size_t i = 0; i < g.nlog; i++)
        assert_int_equal(strncmp(g.log[i], "device sampler: ", 16), 0);
    cap__sampler_free(s);
    fake_remove_tree(root);
}

/* The real /proc and /sys: what exists is recorded, the rest is logged
 * once; the process's own counters exist on any Linux. */
static void sampler_runs_on_this_machines_real_tree(void **state)
{
    (void)state;
    got g = {0};
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t t0 = (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
    cap__sampler *s = cap__sampler_new(NULL, t0, on_log, &g);
    assert_non_null(s);
    size_t nlog = g.nlog;
    size_t k = cap__sampler_sample(s, t0 + SEC / 10, on_sample, &g);
    assert_int_equal(k, cap__sampler_count(s));
    assert_true(value_of(&g, "proc.rss_mib") > 0);
    assert_true(value_of(&g, "proc.cpu_pct") >= 0);
    g.n = 0;
    assert_int_equal(cap__sampler_sample(s, t0 + SEC / 5, on_sample, &g), k);
    assert_int_equal(g.nlog, nlog); /* nothing logged twice */
    for (size_t i = 0; i < g.nlog && i < 32; i++) {
        assert_int_equal(strncmp(g.log[i], "device sampler: ", 16), 0);
        print_message("  %s\n", g.log[i]);
    }
    cap__sampler_free(s);
}

/* ---- in the producer ------------------------------------------------------ */

typedef struct series {
    double v[512];
    int64_t t[512];
    size_t n;
} series;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Counter `name`'s samples in file path, in file order. */
static void read_series(const char *path, const char *name, series *out,
                        size_t *other)
{
    cap_reader *r;
    char d[256];
    assert_int_equal(cap_reader_open(&r, path, d, sizeof d), CAP_OK);
    cap_event ev;
    cap_result res;
    out->n = 0;
    *other = 0;
    while ((res = cap_reader_next(r, &ev)) == CAP_OK) {
        if (ev.kind != CAP_EV_COUNTER)
            continue;
        const char *n = cap_reader_name(r, ev.u.counter.name);
        assert_non_null(n);
        if (strcmp(n, name) == 0 && out->n < 512) {
            out->t[out->n] = ev.u.counter.time_ns;
            out->v[out->n++] = ev.u.counter.value;
        } else {
            ++*other;
        }
    }
    assert_int_equal(res, CAP_DONE);
    cap_reader_close(r);
}

static void producer_records_the_scripted_throttle_as_counters(void **state)
{
    (void)state;
    char buf[64], path[64];
    const char *root = fake_root(buf, sizeof buf);
    fake_device(root, 2900, 52, 4.0);
    setenv("CAP__SAMPLE_ROOT", root, 1);
    snprintf(path, sizeof path, "/tmp/cap_test_sampler_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    got g = {0};
    cap_set_log(on_log, &g);
    cap_capture_options o = {.sample_device = 1, .sample_period_ms = 20};
    assert_int_equal(cap_open(path, &o), CAP_OK);
    CAP_THREAD("main");
    for (int i = 0; i < 15; i++) {
        CAP_FRAME_MARK();
        sleep_ms(20);
    }
    fake_device(root, 2000, 81, 4.0);
    for (int i = 0; i < 15; i++) {
        CAP_FRAME_MARK();
        sleep_ms(20);
    }
    assert_int_equal(cap_close(), CAP_OK);
    cap_set_log(NULL, NULL);
    unsetenv("CAP__SAMPLE_ROOT");

    series s;
    size_t other;
    read_series(path, "cpu0.freq_mhz", &s, &other);
    /* about 600 ms at 20 ms: the writer thread may be late on a busy
     * machine, never early */
    assert_true(s.n >= 5 && s.n <= 32);
    assert_float_equal(s.v[0], 2900, 0);
    assert_float_equal(s.v[s.n - 1], 2000, 0);
    size_t falls = 0;
    for (size_t i = 0; i < s.n; i++) {
        assert_true(s.v[i] == 2900 || s.v[i] == 2000);
        if (i) {
            assert_true(s.t[i] > s.t[i - 1]);
            falls += s.v[i] != s.v[i - 1];
        }
    }
    assert_int_equal(falls, 1);
    read_series(path, "thermal.soc.temp_c", &s, &other);
    assert_float_equal(s.v[0], 52, 0);
    assert_float_equal(s.v[s.n - 1], 81, 0);
    assert_true(other > 0);
    assert_int_equal(logged(&g, "device sampler: 5 counters"), 1);
    assert_int_equal(g.nlog, 3); /* no GPU in the tree, no NVML, summary */
    assert_int_equal(logged(&g, "no GPU clock or temperature under"), 1);
    unlink(path);
    fake_remove_tree(root);
}

static void producer_samples_when_the_environment_asks(void **state)
{
    (void)state;
    char buf[64], path[64];
    const char *root = fake_root(buf, sizeof buf);
    fake_device(root, 1200, 40, 2.0);
    setenv("CAP__SAMPLE_ROOT", root, 1);
    setenv("CAP_SAMPLE_DEVICE", "1", 1);
    setenv("CAP_SAMPLE_PERIOD_MS", "10", 1);
    snprintf(path, sizeof path, "/tmp/cap_test_sampler_XXXXXX");
    int fd = mkstemp(path);
    close(fd);
    got g = {0};
    cap_set_log(on_log, &g);
    assert_int_equal(cap_open(path, NULL), CAP_OK);
    sleep_ms(100);
    assert_int_equal(cap_close(), CAP_OK);
    /* and CAP_SAMPLE_DEVICE=0 wins over the option */
    setenv("CAP_SAMPLE_DEVICE", "0", 1);
    char path2[64];
    snprintf(path2, sizeof path2, "/tmp/cap_test_sampler_XXXXXX");
    fd = mkstemp(path2);
    close(fd);
    cap_capture_options o = {.sample_device = 1};
    assert_int_equal(cap_open(path2, &o), CAP_OK);
    sleep_ms(30);
    assert_int_equal(cap_close(), CAP_OK);
    cap_set_log(NULL, NULL);
    unsetenv("CAP__SAMPLE_ROOT");
    unsetenv("CAP_SAMPLE_DEVICE");
    unsetenv("CAP_SAMPLE_PERIOD_MS");

    series s;
    size_t other;
    read_series(path, "power.battery.power_w", &s, &other);
    assert_true(s.n >= 2);
    for (size_t i = 0; i < s.n; i++)
        assert_float_equal(s.v[i], 2.0, 0);
    read_series(path2, "power.battery.power_w", &s, &other);
    assert_int_equal(s.n, 0);
    assert_int_equal(other, 0);
    assert_int_equal(logged(&g, "device sampler: 5 counters"), 1);
    unlink(path);
    unlink(path2);
    fake_remove_tree(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sampler_reads_every_family_of_a_fake_tree_exactly),
        cmocka_unit_test(sampler_reads_rewritten_values_at_each_sample),
        cmocka_unit_test(sampler_logs_a_source_that_stops_reading_once),
        cmocka_unit_test(sampler_on_an_empty_tree_logs_each_family_once),
        cmocka_unit_test(sampler_runs_on_this_machines_real_tree),
        cmocka_unit_test(producer_records_the_scripted_throttle_as_counters),
        cmocka_unit_test(producer_samples_when_the_environment_asks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
