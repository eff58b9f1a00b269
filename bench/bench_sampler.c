/*
 * bench_sampler.c - what the device sampler (sample_device) costs.
 *
 * 1. The sampler's own CPU time: cap__sampler_sample timed with the
 *    thread's CPU clock, on a fake tree shaped like a phone (3 CPU
 *    clusters, 24 thermal zones, a battery and a USB supply, a GPU devfreq,
 *    the process's statm and stat: 34 counters) and on this machine's real
 *    /sys and /proc. Per second at the default period (100 ms) it is ten
 *    samples. (Real sysfs reads call into drivers; a slow thermal sensor
 *    costs more than a file under /tmp. The real-tree figure is that
 *    machine's.)
 * 2. Its effect on the recording threads: the per-scope cost of bench_record's
 *    workload (four nested CAP_SCOPEs, a frame every 1,000 scopes; thread CPU
 *    time) in captures opened without the sampler and with it reading the
 *    phone tree every 1 ms (100 times the default rate), passes interleaved.
 *
 * Figures: sampler_counters_phone, sampler_us_per_sample_phone,
 * sampler_cpu_ms_per_s_phone, sampler_counters_real,
 * sampler_us_per_sample_real, sampler_cpu_ms_per_s_real,
 * raw_two_reads_ns, record_ns_per_scope_sampler_off,
 * record_ns_per_scope_sampler_on, record_ratio_sampler_off,
 * record_ratio_sampler_on, sampler_record_ratio (on / off; target: no
 * measurable change, 1.00 within the passes' spread, printed as
 * sampler_record_spread).
 *
 * Usage: bench_sampler [--scopes N] [--reps R]
 */
#include "bench_common.h"
#include "../tests/fake_sysfs.h"
#include "producer/sampler.h"

static volatile uint64_t g_sink;
static size_t g_emitted;

static void on_sample(void *user, const char *name, uint32_t *id, double v)
{
    (void)user;
    (void)name;
    (void)id;
    g_emitted += v == v;
}

static void quiet(void *user, const char *line)
{
    (void)user;
    (void)line;
}

static void make_phone(const char *root)
{
    static const char *const zones[] = {
        "cpu-0-0", "cpu-0-1", "cpu-0-2", "cpu-0-3", "cpu-1-0", "cpu-1-1",
        "cpu-1-2", "cpu-1-3", "gpu0",    "gpu1",    "soc",     "battery",
        "skin",    "modem0",  "modem1",  "camera",  "video",   "ddr",
        "npu",     "pmic",    "usb",     "xo",      "pa",      "quiet"};
    char rel[128];
    fake_device(root, 2900, 52, 4.0);
    fake_set(root, "sys/devices/system/cpu/cpufreq/policy4/scaling_cur_freq",
             "2400000");
    fake_set(root, "sys/devices/system/cpu/cpufreq/policy7/scaling_cur_freq",
             "3100000");
    for (int i = 1; i < 24; i++) {
        snprintf(rel, sizeof rel, "sys/class/thermal/thermal_zone%d/type", i);
        fake_set(root, rel, "%s", zones[i]);
        snprintf(rel, sizeof rel, "sys/class/thermal/thermal_zone%d/temp", i);
        fake_set(root, rel, "%d", 40000 + 500 * i);
    }
    fake_set(root, "sys/class/power_supply/battery/capacity", "80");
    fake_set(root, "sys/class/power_supply/battery/temp", "305");
    fake_set(root, "sys/class/power_supply/usb/current_now", "500000");
    fake_set(root, "sys/class/power_supply/usb/voltage_now", "5000000");
    fake_set(root, "sys/class/devfreq/kgsl-3d0/cur_freq", "587000000");
}

static double us_per_sample(const char *root, size_t *counters)
{
    cap__sampler *s = cap__sampler_new(root, bench_mono_ns(), NULL, NULL);
    if (!s)
        BENCH_DIE("out of memory");
    *counters = cap__sampler_count(s);
    enum { N = 500 };
    double per[5];
    for (int r = 0; r < 5; r++) {
        uint64_t c0 = bench_thread_cpu_ns();
        for (int i = 0; i < N; i++)
            cap__sampler_sample(s, bench_mono_ns(), on_sample, NULL);
        per[r] = (double)(bench_thread_cpu_ns() - c0) / N / 1000.0;
    }
    cap__sampler_free(s);
    return bench_median(per, 5);
}

/* One capture: warm up, then the workload timed on this thread's CPU clock;
 * returns ns per scope. */
static double record_pass(uint64_t frames, int sampler)
{
    const char *path = "bench-sampler.cap";
    uint64_t scopes = frames * BENCH_SCOPES_PER_FRAME;
    cap_capture_options o = {0};
    o.buffer_events = 1u << 20;
    o.buffers_per_thread = (unsigned)(2 * 2 * scopes / (1u << 20) + 2);
    o.flush_interval_ms = 20;
    o.sample_device = sampler;
    o.sample_period_ms = 1;
    if (cap_open(path, &o) != CAP_OK)
        BENCH_DIE("cannot open %s", path);
    CAP_THREAD("main");
    bench_record_frames(frames, 1); /* warm-up: map the pool */
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL); /* the writer drains it, the sampler starts */
    uint64_t c0 = bench_thread_cpu_ns();
    bench_record_frames(frames, 1);
    uint64_t c1 = bench_thread_cpu_ns();
    cap_close();
    cap_thread_unregister();
    unlink(path);
    return (double)(c1 - c0) / (double)scopes;
}

int main(int argc, char **argv)
{
    uint64_t scopes = 2000000;
    int reps = 7;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--scopes") == 0 && i + 1 < argc)
            scopes = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else
            BENCH_DIE("usage: bench_sampler [--scopes N] [--reps R]");
    }
    if (reps < 1 || reps > 100 || scopes < BENCH_SCOPES_PER_FRAME)
        BENCH_DIE("bad --scopes or --reps");
    uint64_t frames = scopes / BENCH_SCOPES_PER_FRAME;
    bench_put_machine();

    char buf[64];
    const char *root = fake_root(buf, sizeof buf);
    if (!root)
        BENCH_DIE("cannot make a fake tree");
    make_phone(root);
    size_t n;
    double us = us_per_sample(root, &n);
    bench_put("sampler_counters_phone", (double)n);
    bench_put("sampler_us_per_sample_phone", us);
    bench_put("sampler_cpu_ms_per_s_phone", us * 10 / 1000);
    us = us_per_sample(NULL, &n);
    bench_put("sampler_counters_real", (double)n);
    bench_put("sampler_us_per_sample_real", us);
    bench_put("sampler_cpu_ms_per_s_real", us * 10 / 1000);

    setenv("CAP__SAMPLE_ROOT", root, 1);
    cap_set_log(quiet, NULL); /* the sampler's start line, once a pass */
    double *off = calloc((size_t)reps, sizeof *off);
    double *on = calloc((size_t)reps, sizeof *on);
    double *raw = calloc((size_t)reps, sizeof *raw);
    if (!off || !on || !raw)
        BENCH_DIE("out of memory");
    for (int r = 0; r < reps; r++) {
        uint64_t c0 = bench_thread_cpu_ns();
        g_sink += bench_raw_frames(frames);
        raw[r] = (double)(bench_thread_cpu_ns() - c0) /
                 (double)(frames * BENCH_SCOPES_PER_FRAME);
        off[r] = record_pass(frames, 0);
        on[r] = record_pass(frames, 1);
    }
    unsetenv("CAP__SAMPLE_ROOT");
    double raw_m = bench_median(raw, (size_t)reps);
    double off_m = bench_median(off, (size_t)reps);
    double on_m = bench_median(on, (size_t)reps);
    /* the spread of the passes without the sampler: a change inside it is
     * not measurable */
    double lo = off[0], hi = off[0];
    for (int r = 1; r < reps; r++) {
        lo = off[r] < lo ? off[r] : lo;
        hi = off[r] > hi ? off[r] : hi;
    }
    bench_put("scopes_per_pass", (double)(frames * BENCH_SCOPES_PER_FRAME));
    bench_put("sample_period_ms_in_passes", 1);
    bench_put("raw_two_reads_ns", raw_m);
    bench_put("record_ns_per_scope_sampler_off", off_m);
    bench_put("record_ns_per_scope_sampler_on", on_m);
    bench_put("record_ratio_sampler_off", off_m / raw_m);
    bench_put("record_ratio_sampler_on", on_m / raw_m);
    bench_put("sampler_record_ratio", on_m / off_m);
    bench_put("sampler_record_spread", (hi - lo) / off_m);
    cap_set_log(NULL, NULL);
    fake_remove_tree(root);
    free(off);
    free(on);
    free(raw);
    return 0;
}
