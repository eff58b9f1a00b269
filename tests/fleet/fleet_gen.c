/*
 * fleet_gen.c - a farm's worth of small captures with a known answer.
 *
 *   fleet_gen OUTDIR PER_CELL
 *
 * Writes PER_CELL captures for every (build, GPU, machine) of builds
 * 1.0 and 1.1, GPUs "vendorA" and "vendorB", machines m1 and m2, named
 * MACHINE-BUILD-GPU-K.cap, each 120 frames of a main thread
 *   frame > update > (physics, ai), render > (shadows, lights, post)
 * with durations drawn around each scope's own mean (seeded by the file's
 * position, so the output is the same every time). The known truth: build
 * 1.1 on vendorB makes `shadows` 25 % slower; nothing else differs between
 * builds. Used by tests/fleet/ (the DuckDB round trip and --summary over
 * many files).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capture/cap_writer.h>

#define FRAMES 120

static uint64_t rng;

static uint64_t next_u64(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* mean_us +/- 10 %, in ns */
static uint64_t around(double mean_us)
{
    double u = (double)(next_u64() >> 11) / 9007199254740992.0;
    return (uint64_t)(mean_us * 1000.0 * (0.9 + 0.2 * u));
}

enum { N_FRAME = 1, N_UPDATE, N_PHYSICS, N_AI, N_RENDER, N_SHADOWS, N_LIGHTS,
       N_POST, N_RSS };
static const char *const names[] = {NULL,     "frame",   "update", "physics",
                                    "ai",     "render",  "shadows", "lights",
                                    "post",   "rss_mib"};

#define CHECK(x)                                                               \
    do {                                                                       \
        cap_result r_ = (x);                                                   \
        if (r_ != CAP_OK) {                                                    \
            fprintf(stderr, "fleet_gen: %s: %s\n", #x, cap_result_message(r_)); \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static void scope(cap_writer *w, uint32_t name, uint64_t *t, uint64_t len)
{
    CHECK(cap_writer_scope_begin(w, 0, name, *t));
    *t += len;
    CHECK(cap_writer_scope_end(w, 0, *t));
}

static void one(const char *dir, const char *machine, const char *build,
                const char *gpu, int k, uint64_t seed)
{
    char path[1024], start[32];
    snprintf(path, sizeof path, "%s/%s-%s-%s-%d.cap", dir, machine, build, gpu,
             k);
    snprintf(start, sizeof start, "2026-11-%02dT12:00:00Z", 1 + (int)(seed % 28));
    cap_meta_kv meta[] = {{"program", "fleet-game"}, {"build", build},
                          {"machine", machine},      {"gpu", gpu},
                          {"start_time", start},     {"route", "level3"}};
    cap_writer_options o = {.meta = meta,
                            .meta_count = 6,
                            .clock_source = "monotonic",
                            .tick_period_ns = 1.0,
                            .origin_tick = 1000000000,
                            .origin_mono_ns = 1000000000,
                            .origin_unix_ns = 1796040000000000000ll +
                                              (int64_t)seed * 1000000000ll,
                            .block_bytes = 16384};
    cap_writer *w;
    CHECK(cap_writer_open_path(&w, path, &o));
    for (uint32_t i = 1; i <= N_RSS; i++)
        CHECK(cap_writer_name(w, i, names[i], "game/loop.c", 10 + i));
    CHECK(cap_writer_thread(w, 0, "main"));
    rng = seed;
    double shadows_us = 2000.0 * (build[2] == '1' && gpu[6] == 'B' ? 1.25 : 1.0);
    uint64_t t = 1000000000;
    for (uint64_t f = 0; f < FRAMES; f++) {
        uint64_t b = t;
        CHECK(cap_writer_scope_begin(w, 0, N_FRAME, t));
        t += 10000;
        CHECK(cap_writer_scope_begin(w, 0, N_UPDATE, t));
        scope(w, N_PHYSICS, &t, around(1500));
        scope(w, N_AI, &t, around(800));
        CHECK(cap_writer_scope_end(w, 0, t));
        CHECK(cap_writer_scope_begin(w, 0, N_RENDER, t));
        scope(w, N_SHADOWS, &t, around(shadows_us));
        scope(w, N_LIGHTS, &t, around(1200));
        scope(w, N_POST, &t, around(600));
        CHECK(cap_writer_scope_end(w, 0, t));
        t += 20000;
        CHECK(cap_writer_scope_end(w, 0, t));
        CHECK(cap_writer_frame(w, f, b, t));
        CHECK(cap_writer_counter(w, N_RSS, t, 100.0 + (double)(f % 7)));
    }
    CHECK(cap_writer_close(w));
}

/* --long PATH FRAMES: one capture of FRAMES frames, each LONG_NAMES leaf
 * scopes named long_0 .. long_<LONG_NAMES-1> on the main thread, scope k
 * of frame f lasting long_ns(k, f) (what fleet_many.py checks each
 * scopes.csv.gz row against): past the per-frame values' budget, for the
 * bounded-memory checks. */
#define LONG_NAMES 40

static uint64_t long_ns(unsigned k, unsigned long f)
{
    return 1000 + (k * 7919u + f * 104729u) % 5000u;
}

static int long_capture(const char *path, unsigned long frames)
{
    cap_writer_options o = {0};
    o.clock_source = "monotonic";
    o.tick_period_ns = 1.0;
    cap_writer *w;
    CHECK(cap_writer_open_path(&w, path, &o));
    CHECK(cap_writer_thread(w, 0, "main"));
    for (unsigned k = 0; k < LONG_NAMES; k++) {
        char nm[32];
        snprintf(nm, sizeof nm, "long_%u", k);
        CHECK(cap_writer_name(w, 1 + k, nm, "fleet_gen.c", 1 + (int)k));
    }
    uint64_t t = 1000;
    for (unsigned long f = 0; f < frames; f++) {
        uint64_t b = t;
        for (unsigned k = 0; k < LONG_NAMES; k++) {
            t += 10;
            scope(w, 1 + k, &t, long_ns(k, f));
        }
        t += 100;
        CHECK(cap_writer_frame(w, f, b, t));
    }
    CHECK(cap_writer_close(w));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--long") == 0 && atol(argv[3]) > 0)
        return long_capture(argv[2], (unsigned long)atol(argv[3]));
    if (argc != 3 || atoi(argv[2]) < 1) {
        fprintf(stderr, "usage: fleet_gen OUTDIR PER_CELL\n"
                        "       fleet_gen --long PATH FRAMES\n");
        return 2;
    }
    int per = atoi(argv[2]);
    const char *builds[] = {"1.0", "1.1"}, *gpus[] = {"vendorA", "vendorB"},
               *machines[] = {"m1", "m2"};
    uint64_t seed = 1;
    for (int b = 0; b < 2; b++)
        for (int g = 0; g < 2; g++)
            for (int m = 0; m < 2; m++)
                for (int k = 0; k < per; k++)
                    one(argv[1], machines[m], builds[b], gpus[g], k, seed++);
    return 0;
}
