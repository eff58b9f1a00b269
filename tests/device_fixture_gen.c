/*
 * device_fixture_gen - record fixtures/device-throttling.cap: a game loop
 * that slows down because the (fake) device throttles, with the producer's
 * device sampler reading a scripted fake sysfs/procfs tree.
 *
 *   device_fixture_gen OUT.cap
 *
 * The script (8 s): the CPU clock holds 2.9 GHz and the SoC 52 °C for the
 * first 1.6 s, then over 4.8 s the clock falls to 2.0 GHz while the SoC
 * heats to 81 °C and the battery's draw falls from 4.2 to 3.4 W, then both
 * hold. Each frame's scopes last their base time x 2900 / clock (the work
 * is fixed; the device runs it slower), so every scope grows by about
 * 1.45x. The sampler reads the tree every 50 ms.
 *
 * The capture holds live timings, so it is made once and committed (the
 * CLI case `device-throttling` reads it); docs/EVIDENCE.md says how.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "capture/capture.h"
#include "fake_sysfs.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void work(double ms)
{
    struct timespec ts = {0, (long)(ms * 1e6)};
    nanosleep(&ts, NULL);
}

/* 0 before a, 1 after b, linear between */
static double ramp(double t, double a, double b)
{
    return t <= a ? 0 : t >= b ? 1 : (t - a) / (b - a);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: device_fixture_gen OUT.cap\n");
        return 2;
    }
    char buf[64];
    const char *root = fake_root(buf, sizeof buf);
    if (!root || fake_device(root, 2900, 52, 4.2) != 0) {
        fprintf(stderr, "device_fixture_gen: cannot make a fake tree\n");
        return 1;
    }
    setenv("CAP__SAMPLE_ROOT", root, 1);
    cap_meta_kv meta[] = {{"program", "device_throttle"},
                          {"machine", "fake sysfs tree (tests/fake_sysfs.h)"}};
    cap_capture_options o = {.meta = meta,
                             .meta_count = 2,
                             .sample_device = 1,
                             .sample_period_ms = 50};
    if (cap_open(argv[1], &o) != CAP_OK)
        return 1;
    CAP_THREAD("main");
    double t0 = now_s(), t, last = -1;
    double clock = 2900;
    while ((t = now_s() - t0) < 8.0) {
        if (t - last >= 0.02) { /* the device moves every 20 ms */
            double k = ramp(t, 1.6, 6.4);
            clock = 2900 - 900 * k;
            fake_device(root, clock, 52 + 29 * k, 4.2 - 0.8 * k);
            last = t;
        }
        double f = 2900 / clock;
        CAP_FRAME_MARK();
        {
            CAP_SCOPE("simulate");
            work(3.0 * f);
        }
        {
            CAP_SCOPE("render");
            work(2.0 * f);
            {
                CAP_SCOPE("shadows");
                work(2.0 * f);
            }
        }
        {
            CAP_SCOPE("post");
            work(1.5 * f);
        }
    }
    CAP_FRAME_MARK();
    cap_result r = cap_close();
    fake_remove_tree(root);
    return r == CAP_OK ? 0 : 1;
}
