/*
 * device_fixture_gen - record the device fixtures: a game loop whose
 * (fake) device behaves as a scripted case says, with the producer's
 * device sampler reading a scripted fake sysfs/procfs tree.
 *
 *   device_fixture_gen [CASE] OUT.cap
 *
 * Every case runs 8 s: the device holds its first state for 1.6 s, moves
 * linearly to its last over 4.8 s, then holds. Each frame runs simulate
 * 3 ms, render 2 ms with shadows 2 ms inside, post 1.5 ms (slept), each
 * times the case's work factor. The sampler reads the tree every 50 ms.
 *
 *   throttling (the default; fixtures/device-throttling.cap): the CPU
 *     clock falls from 2.9 to 2.0 GHz while the SoC heats from 52 to 81 °C
 *     and the battery's draw falls from 4.2 to 3.4 W; the work is fixed,
 *     so each scope lasts its base time x 2900 / clock (about 1.45x).
 *   power-limit (fixtures/device-power-limit.cap): the clock falls the
 *     same way while the SoC stays at 45-46 °C and the draw falls from 6.0
 *     to 3.5 W (a power cap or the governor); the scopes grow as above.
 *   work-grew (fixtures/device-work-grew.cap): the clock holds 2.9 GHz and
 *     the SoC 52-53 °C while every scope grows 1.45x (the program does
 *     more work: the growth is as even as throttling's).
 *   clock-unfelt (fixtures/device-clock-unfelt.cap): the clock falls from
 *     2.9 to 2.0 GHz and the SoC heats from 52 to 81 °C, but the scopes do
 *     not grow (the evidence contradicts the scopes).
 *
 * The captures hold live timings, so they are made once and committed
 * (the CLI cases named after them read them); docs/EVIDENCE.md says how.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

typedef struct script {
    const char *name;
    double mhz0, mhz1;   /* CPU clock, first and last */
    double soc0, soc1;   /* SoC temperature, °C */
    double w0, w1;       /* battery draw, W */
    int scale_by_clock;  /* the work is fixed: scopes last x mhz0 / clock */
    double grow;         /* else the scopes' own factor at the end */
} script;

static const script scripts[] = {
    {"throttling", 2900, 2000, 52, 81, 4.2, 3.4, 1, 1.0},
    {"power-limit", 2900, 2000, 45, 46, 6.0, 3.5, 1, 1.0},
    {"work-grew", 2900, 2900, 52, 53, 4.2, 4.2, 0, 1.45},
    {"clock-unfelt", 2900, 2000, 52, 81, 4.2, 3.4, 0, 1.0},
};

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: device_fixture_gen [CASE] OUT.cap (CASE: "
                        "throttling, power-limit, work-grew, clock-unfelt)\n");
        return 2;
    }
    const script *sc = NULL;
    const char *name = argc == 3 ? argv[1] : "throttling";
    for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++)
        if (strcmp(scripts[i].name, name) == 0)
            sc = &scripts[i];
    if (!sc) {
        fprintf(stderr, "device_fixture_gen: no case named '%s'\n", name);
        return 2;
    }
    const char *out = argv[argc - 1];
    char buf[64];
    const char *root = fake_root(buf, sizeof buf);
    if (!root || fake_device(root, sc->mhz0, sc->soc0, sc->w0) != 0) {
        fprintf(stderr, "device_fixture_gen: cannot make a fake tree\n");
        return 1;
    }
    setenv("CAP__SAMPLE_ROOT", root, 1);
    char program[64];
    snprintf(program, sizeof program, "device_%s", sc->name);
    cap_meta_kv meta[] = {{"program", strcmp(sc->name, "throttling") == 0
                                          ? "device_throttle"
                                          : program},
                          {"machine", "fake sysfs tree (tests/fake_sysfs.h)"}};
    cap_capture_options o = {.meta = meta,
                             .meta_count = 2,
                             .sample_device = 1,
                             .sample_period_ms = 50};
    if (cap_open(out, &o) != CAP_OK)
        return 1;
    CAP_THREAD("main");
    double t0 = now_s(), t, last = -1;
    double clock = sc->mhz0, f = 1;
    while ((t = now_s() - t0) < 8.0) {
        if (t - last >= 0.02) { /* the device moves every 20 ms */
            double k = ramp(t, 1.6, 6.4);
            clock = sc->mhz0 + (sc->mhz1 - sc->mhz0) * k;
            fake_device(root, clock, sc->soc0 + (sc->soc1 - sc->soc0) * k,
                        sc->w0 + (sc->w1 - sc->w0) * k);
            f = sc->scale_by_clock ? sc->mhz0 / clock
                                   : 1 + (sc->grow - 1) * k;
            last = t;
        }
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
