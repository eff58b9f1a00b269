/*
 * fixture_gen - build the committed capture fixtures from known values.
 *
 *   fixture_gen OUTDIR
 *
 * writes, deterministically (a seeded generator, explicit timestamps):
 *   demo.cap            2 CPU threads, 1 GPU track, counters; 240 frames in
 *                       two populations: the GPU does ~10 ms of work per
 *                       frame and a frame takes either ~10.5 ms (the GPU is
 *                       the wall) or ~21 ms (waiting for it twice)
 *   demo-truncated.cap  demo.cap cut in the middle of a block (a crash)
 *   demo-corrupt.cap    demo.cap with one byte flipped in the second block
 *   unnamed.cap         scopes whose ids have no name (a lost name table)
 *   throttling.cap      a still scene that gets uniformly 46 % slower over
 *                       two minutes with flat memory counters
 *   warmup.cap          the first seconds faster than the settled rest
 *   ab-base.cap, ab-regressed.cap, ab-same.cap
 *                       an A/B set: 20 noisy scopes; system_07 is 10 %
 *                       slower in ab-regressed; ab-same is drawn from the
 *                       same law as ab-base
 *   counted-losses.cap  dropped scopes, invalid, unmeasured and untimed GPU
 *                       spans, a timestamp that went backwards
 *   waits-and-strays.cap  format 1.1: names tagged as waits, ends with no
 *                       scope open, a scope still open at close
 *   outside-frames.cap  20 frames on "main"; loading before the first frame
 *                       and shutdown after the last, a "loader" thread that
 *                       ran only before the frames, an "audio" thread
 *                       declared with no scope
 *   capped-ramp.cap     60 fps held by a cap for 10 s while the work inside
 *                       grows 1.3x and the wait before present shrinks; a
 *                       scope only in the second half, one of 0.0002 ms
 *   ramp.cap            the same game uncapped: frame time ramps 1.3x,
 *                       memory flat, a wait of constant length
 *
 * The test suite runs it again and checks the bytes did not change, so a
 * format change cannot slip in without new fixtures and a spec entry.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cap_writer.h"
#include "writer/writer_records.h" /* cap__writer_hurry */

static uint64_t rng_state;

static uint64_t next_u64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* uniform integer in [lo, hi] */
static uint64_t uni(uint64_t lo, uint64_t hi)
{
    return lo + next_u64() % (hi - lo + 1);
}

#define CHECK(x)                                                               \
    do {                                                                       \
        cap_result r_ = (x);                                                   \
        if (r_ != CAP_OK) {                                                    \
            fprintf(stderr, "fixture_gen: %s:%d: %s -> %s\n", __FILE__,        \
                    __LINE__, #x, cap_result_name(r_));                        \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

enum {
    N_FRAME = 1, N_UPDATE, N_PHYSICS, N_ANIM, N_RENDER, N_CULL, N_SUBMIT,
    N_ACQUIRE, N_JOB, N_DECODE, N_GPU_FRAME, N_SHADOWS, N_RASTER, N_POST,
    N_RSS, N_TEMP, N_VRAM
};

static const char *const names[] = {
    NULL, "frame", "update", "physics", "animation", "render", "cull",
    "submit", "vkAcquireNextImageKHR", "job", "decode", "gpu frame",
    "shadows", "raster", "post", "rss_mib", "gpu_temp_c", "vram_mib"};

static cap_writer *open_w_version(const char *dir, const char *file,
                                 const char *prog, unsigned major,
                                 unsigned minor);
static cap_writer *open_w_minor(const char *dir, const char *file,
                               const char *prog, unsigned minor)
{
    return open_w_version(dir, file, prog, 1, minor);
}

static cap_writer *open_w(const char *dir, const char *file, const char *prog)
{
    return open_w_minor(dir, file, prog, 0);
}

/* Every fixture but the scope-residuals ones of 2.0, 3.0 and 3.1 is a 1.x
 * file (major 1). With major 3, minor 0 writes 3.0 (no frame list in the
 * footer) and 1 writes 3.1. */
static cap_writer *open_w_version(const char *dir, const char *file,
                                 const char *prog, unsigned major,
                                 unsigned minor)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    cap_meta_kv meta[] = {{"program", prog},
                          {"build", "1.4.2-fixture"},
                          {"machine", "fixture-box (8 cores)"},
                          {"start_time", "2026-11-30T12:00:00Z"}};
    cap_writer_options o = {.meta = meta,
                            .meta_count = 4,
                            .clock_source = "monotonic",
                            .tick_period_ns = 1.0,
                            .origin_tick = 1000000000,
                            .origin_mono_ns = 1000000000,
                            .origin_unix_ns = 1796040000000000000ll,
                            .block_bytes = 4096,
                            .format_minor = major == 1 ? minor : 0,
                            .format_major = major,
                            .no_frame_list = major == 3 && minor == 0,
                            .group_max_ms = 1000}; /* 4.0: as written */
    cap_writer *w;
    CHECK(cap_writer_open_path(&w, path, &o));
    return w;
}

static void define_names(cap_writer *w, int upto)
{
    for (int i = 1; i <= upto; i++)
        CHECK(cap_writer_name(w, (uint32_t)i, names[i], "game/loop.c",
                              (uint32_t)(100 + i)));
}

static void demo(const char *dir)
{
    rng_state = 42;
    cap_writer *w = open_w(dir, "demo.cap", "demo-game");
    define_names(w, N_VRAM);
    CHECK(cap_writer_thread(w, 0, "main"));
    CHECK(cap_writer_thread(w, 1, "worker"));
    CHECK(cap_writer_gpu_track(w, 0, "graphics queue", 1.0));
    uint64_t t = 1000000000;
    /* GPU clock: an offset of 5 s from the CPU clock, calibrated */
    CHECK(cap_writer_gpu_calibration(w, 0, t + 5000000000ull, t, 0));
    for (uint64_t f = 0; f < 240; f++) {
        int slow = (next_u64() % 3) == 0; /* a third of the frames */
        uint64_t gpu_work = uni(9800000, 10200000);
        uint64_t frame_len = slow ? 2 * gpu_work + uni(600000, 1000000)
                                  : gpu_work + uni(300000, 700000);
        uint64_t b = t;
        CHECK(cap_writer_scope_begin(w, 0, N_FRAME, b));
        uint64_t x = b + uni(10000, 20000);
        CHECK(cap_writer_scope_begin(w, 0, N_UPDATE, x));
        CHECK(cap_writer_scope_begin(w, 0, N_PHYSICS, x + 5000));
        x += 5000 + uni(300000, 400000);
        CHECK(cap_writer_scope_end(w, 0, x));
        CHECK(cap_writer_scope_begin(w, 0, N_ANIM, x));
        x += uni(150000, 250000);
        CHECK(cap_writer_scope_end(w, 0, x));
        x += uni(20000, 40000);
        CHECK(cap_writer_scope_end(w, 0, x));
        CHECK(cap_writer_scope_begin(w, 0, N_RENDER, x));
        CHECK(cap_writer_scope_begin(w, 0, N_CULL, x + 1000));
        x += 1000 + uni(200000, 300000);
        CHECK(cap_writer_scope_end(w, 0, x));
        CHECK(cap_writer_scope_begin(w, 0, N_SUBMIT, x));
        x += uni(80000, 120000);
        CHECK(cap_writer_scope_end(w, 0, x));
        /* waiting for the swapchain takes the rest of the frame */
        uint64_t end = b + frame_len;
        CHECK(cap_writer_scope_begin(w, 0, N_ACQUIRE, x));
        CHECK(cap_writer_scope_end(w, 0, end - 2000));
        CHECK(cap_writer_scope_end(w, 0, end - 1000));
        CHECK(cap_writer_scope_end(w, 0, end));
        CHECK(cap_writer_frame(w, f, b, end));
        /* the worker: two jobs, a decode inside the second */
        uint64_t y = b + uni(50000, 100000);
        for (int j = 0; j < 2; j++) {
            CHECK(cap_writer_scope_begin(w, 1, N_JOB, y));
            uint64_t len = uni(400000, 600000);
            if (j == 1) {
                CHECK(cap_writer_scope_begin(w, 1, N_DECODE, y + 10000));
                CHECK(cap_writer_scope_end(w, 1, y + 10000 + len / 2));
            }
            y += len;
            CHECK(cap_writer_scope_end(w, 1, y));
            y += uni(100000, 200000);
        }
        /* the GPU work this frame recorded: gpu frame > (shadows, raster >
         * (post)) */
        uint64_t g = b + 5000000000ull + uni(400000, 600000);
        uint64_t sh = gpu_work / 5, ra = gpu_work - sh - 200000;
        cap_gpu_span spans[4] = {
            {N_GPU_FRAME, -1, g, g + gpu_work, 1},
            {N_SHADOWS, 0, g + 50000, g + 50000 + sh, 1},
            {N_RASTER, 0, g + 100000 + sh, g + 100000 + sh + ra, 1},
            {N_POST, 2, g + 100000 + sh + ra / 2, g + 100000 + sh + ra, 1},
        };
        CHECK(cap_writer_gpu_frame(w, 0, f, spans, 4));
        CHECK(cap_writer_counter(w, N_RSS, end, 512.0 + (double)(f % 4)));
        CHECK(cap_writer_counter(w, N_TEMP, end, 61.0 + (double)(f / 60)));
        t = end;
    }
    CHECK(cap_writer_close(w));
}

/* A capture whose scope ids have no name: a writer that lost its table. */
static void unnamed(const char *dir)
{
    rng_state = 7;
    cap_writer *w = open_w(dir, "unnamed.cap", "lost-names");
    CHECK(cap_writer_name(w, N_FRAME, "frame", NULL, 0));
    CHECK(cap_writer_thread(w, 0, "main"));
    uint64_t t = 1000000000;
    for (uint64_t f = 0; f < 20; f++) {
        uint64_t b = t;
        CHECK(cap_writer_scope_begin(w, 0, N_FRAME, b));
        CHECK(cap_writer_scope_begin(w, 0, 67, b + 1000)); /* no name */
        CHECK(cap_writer_scope_end(w, 0, b + 1000 + uni(4000000, 5000000)));
        CHECK(cap_writer_scope_begin(w, 0, 137, b + 6000000)); /* no name */
        CHECK(cap_writer_scope_end(w, 0, b + 6000000 + uni(2000000, 3000000)));
        t = b + 10000000;
        CHECK(cap_writer_scope_end(w, 0, t));
        CHECK(cap_writer_frame(w, f, b, t));
    }
    CHECK(cap_writer_close(w));
}

/* 120 s at ~30 fps: every pass grows by the same factor (1.0 -> 1.46) as
 * the device leaves its boost clock, while memory stays flat. */
static void throttling(const char *dir, int warm)
{
    rng_state = warm ? 11 : 99;
    cap_writer *w = open_w(dir, warm ? "warmup.cap" : "throttling.cap",
                           "handheld");
    define_names(w, N_VRAM);
    CHECK(cap_writer_thread(w, 0, "main"));
    uint64_t t = 1000000000;
    const uint64_t total = warm ? 60000000000ull : 120000000000ull;
    uint64_t f = 0;
    while (t - 1000000000 < total) {
        double p = (double)(t - 1000000000) / (double)total; /* 0..1 */
        double k;
        if (warm)
            k = p < 0.1 ? 0.75 : 1.0; /* the first 6 s run boosted */
        else
            k = 1.0 + 0.46 * (p < 0.6 ? p / 0.6 : 1.0);
        uint64_t b = t;
        uint64_t sky = (uint64_t)(15000000 * k) + uni(0, 200000);
        uint64_t shade = (uint64_t)(9000000 * k) + uni(0, 200000);
        uint64_t shadow = (uint64_t)(3000000 * k) + uni(0, 100000);
        CHECK(cap_writer_scope_begin(w, 0, N_FRAME, b));
        CHECK(cap_writer_scope_begin(w, 0, N_SHADOWS, b + 1000));
        CHECK(cap_writer_scope_end(w, 0, b + 1000 + shadow));
        uint64_t x = b + 1000 + shadow;
        CHECK(cap_writer_scope_begin(w, 0, N_RASTER, x));
        x += sky;
        CHECK(cap_writer_scope_end(w, 0, x));
        CHECK(cap_writer_scope_begin(w, 0, N_POST, x));
        x += shade;
        CHECK(cap_writer_scope_end(w, 0, x));
        t = x + 1000;
        CHECK(cap_writer_scope_end(w, 0, t));
        CHECK(cap_writer_frame(w, f, b, t));
        CHECK(cap_writer_counter(w, N_RSS, t, 812.0 + (double)(f % 3)));
        CHECK(cap_writer_counter(w, N_VRAM, t, 1530.0));
        f++;
    }
    CHECK(cap_writer_close(w));
}

/* Time outside frames: scopes before the first frame, after the last, on a
 * thread that ran only before the frames, and a thread with no scope. */
static void outside_frames(const char *dir)
{
    static const char *const nm[] = {NULL, "frame", "simulate", "loading",
                                     "shutdown", "stream_assets"};
    cap_writer *w = open_w(dir, "outside-frames.cap", "client");
    for (uint32_t i = 1; i <= 5; i++)
        CHECK(cap_writer_name(w, i, nm[i], "client/main.c", 10 + i));
    CHECK(cap_writer_thread(w, 0, "main"));
    CHECK(cap_writer_thread(w, 1, "loader"));
    CHECK(cap_writer_thread(w, 2, "audio"));
    uint64_t t = 1000000000;
    CHECK(cap_writer_scope_begin(w, 0, 3, t)); /* loading: 50 ms */
    CHECK(cap_writer_scope_begin(w, 1, 5, t + 1000000));
    CHECK(cap_writer_scope_end(w, 1, t + 41000000)); /* 40 ms on loader */
    t += 50000000;
    CHECK(cap_writer_scope_end(w, 0, t));
    for (uint64_t f = 0; f < 20; f++) {
        uint64_t b = t;
        CHECK(cap_writer_scope_begin(w, 0, 1, b));
        CHECK(cap_writer_scope_begin(w, 0, 2, b + 100000));
        CHECK(cap_writer_scope_end(w, 0, b + 100000 + 8000000 + f * 10000));
        t = b + 10000000;
        CHECK(cap_writer_scope_end(w, 0, t));
        CHECK(cap_writer_frame(w, f, b, t));
    }
    CHECK(cap_writer_scope_begin(w, 0, 4, t + 500000)); /* shutdown: 20 ms */
    CHECK(cap_writer_scope_end(w, 0, t + 20500000));
    CHECK(cap_writer_close(w));
}

/* A game loop with work that ramps 1.3x over 10 s: held at 60 fps by a cap
 * (the wait before present absorbs the growth), or uncapped. */
static void game_loop(const char *dir, int capped)
{
    static const char *const nm[] = {NULL, "simulate", "render",
                                     "present_wait", "rss_mib", "spark",
                                     "tiny"};
    rng_state = capped ? 7 : 8;
    cap_writer *w = open_w(dir, capped ? "capped-ramp.cap" : "ramp.cap",
                           "game");
    for (uint32_t i = 1; i <= 6; i++)
        CHECK(cap_writer_name(w, i, nm[i], "game/loop.c", 20 + i));
    CHECK(cap_writer_thread(w, 0, "main"));
    const int frames = 600;
    const uint64_t cap = 16666667;
    uint64_t t = 1000000000;
    for (int f = 0; f < frames; f++) {
        double x = (double)f / (frames - 1), k = 1.0 + 0.3 * x;
        uint64_t b = t;
        uint64_t sim = (uint64_t)(4000000 * k) + uni(0, 50000);
        uint64_t ren = (uint64_t)(5000000 * k) + uni(0, 50000);
        CHECK(cap_writer_scope_begin(w, 0, 1, t));
        t += sim;
        CHECK(cap_writer_scope_end(w, 0, t));
        CHECK(cap_writer_scope_begin(w, 0, 2, t));
        t += ren;
        CHECK(cap_writer_scope_end(w, 0, t));
        if (capped && x >= 0.5) {
            CHECK(cap_writer_scope_begin(w, 0, 5, t));
            t += 300000;
            CHECK(cap_writer_scope_end(w, 0, t));
        }
        if (capped) {
            CHECK(cap_writer_scope_begin(w, 0, 6, t));
            t += 200 + (uint64_t)(200 * x);
            CHECK(cap_writer_scope_end(w, 0, t));
        }
        CHECK(cap_writer_scope_begin(w, 0, 3, t));
        t = capped ? b + cap : t + 2000000 + uni(0, 20000);
        CHECK(cap_writer_scope_end(w, 0, t));
        CHECK(cap_writer_frame(w, (uint64_t)f, b, t));
        CHECK(cap_writer_counter(w, 4, t, 640.0 + (double)(f % 2)));
    }
    CHECK(cap_writer_close(w));
}

/* A standard normal variate (Box-Muller) from the fixture generator. */
static double normal(void)
{
    double u1 = ((double)(next_u64() >> 11) + 1.0) / 9007199254740993.0;
    double u2 = (double)(next_u64() >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* An A/B pair: 20 scopes with lognormal noise (sigma 0.15) over 300
 * frames; `slow_scope` (1-based, 0: none) is 10 % slower. */
static void ab(const char *dir, const char *file, uint64_t seed, int slow_scope)
{
    rng_state = seed;
    cap_writer *w = open_w(dir, file, "ab-game");
    CHECK(cap_writer_name(w, 1, "frame", NULL, 0));
    char nm[32];
    for (uint32_t k = 0; k < 20; k++) {
        snprintf(nm, sizeof nm, "system_%02u", k + 1);
        CHECK(cap_writer_name(w, 2 + k, nm, NULL, 0));
    }
    CHECK(cap_writer_thread(w, 0, "main"));
    uint64_t t = 1000000000;
    for (uint64_t f = 0; f < 300; f++) {
        uint64_t b = t;
        CHECK(cap_writer_scope_begin(w, 0, 1, b));
        uint64_t x = b + 1000;
        for (uint32_t k = 0; k < 20; k++) {
            double med = 200000.0 + 20000.0 * k; /* 0.2 .. 0.58 ms */
            if ((int)k + 1 == slow_scope)
                med *= 1.10;
            uint64_t len = (uint64_t)(med * exp(0.15 * normal()));
            CHECK(cap_writer_scope_begin(w, 0, 2 + k, x));
            x += len;
            CHECK(cap_writer_scope_end(w, 0, x));
        }
        t = x + 1000;
        CHECK(cap_writer_scope_end(w, 0, t));
        CHECK(cap_writer_frame(w, f, b, t));
    }
    CHECK(cap_writer_close(w));
}

/* Everything a report must warn about that is counted, not lost: dropped
 * scopes, invalid / unmeasured / untimed GPU spans, a clock that went back. */
static void counted_losses(const char *dir)
{
    rng_state = 5;
    cap_writer *w = open_w(dir, "counted-losses.cap", "lossy");
    define_names(w, N_VRAM);
    CHECK(cap_writer_thread(w, 0, "main"));
    CHECK(cap_writer_gpu_track(w, 0, "graphics queue", 1.0));
    uint64_t t = 1000000000;
    for (uint64_t f = 0; f < 12; f++) {
        uint64_t b = t;
        CHECK(cap_writer_scope_begin(w, 0, N_FRAME, b));
        CHECK(cap_writer_scope_begin(w, 0, N_UPDATE, b + 1000));
        CHECK(cap_writer_scope_end(w, 0, b + 2000000));
        /* one timestamp 500 ns behind the last: recorded as no time */
        CHECK(cap_writer_scope_begin(w, 0, N_RENDER, b + 1999500));
        CHECK(cap_writer_scope_end(w, 0, b + 5000000));
        t = b + 10000000;
        CHECK(cap_writer_scope_end(w, 0, t));
        CHECK(cap_writer_frame(w, f, b, t));
        cap_gpu_span sp[3] = {
            {N_GPU_FRAME, -1, b + 100000, b + 4100000, 1},
            {N_SHADOWS, 0, 0, 0, 0},                      /* not measured */
            {N_RASTER, 0, b + 900000, b + 800000, 1},     /* invalid */
        };
        CHECK(cap_writer_gpu_frame(w, 0, f, sp, 3));
    }
    CHECK(cap_writer_dropped(w, 0, 37));
    CHECK(cap_writer_gpu_dropped(w, 0, 2, 0));
    CHECK(cap_writer_close(w));
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len);
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return b;
}

static void spit(const char *path, const unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "fixture_gen: cannot write %s\n", path);
        exit(1);
    }
}

/* Offsets of the chunk headers after the file header. */
static size_t chunks(const unsigned char *b, size_t n, size_t *off, size_t max)
{
    size_t k = 0, p = 16;
    while (p + 24 <= n && k < max && memcmp(b + p, "CHNK", 4) == 0) {
        off[k++] = p;
        uint32_t stored = (uint32_t)b[p + 8] | (uint32_t)b[p + 9] << 8 |
                          (uint32_t)b[p + 10] << 16 | (uint32_t)b[p + 11] << 24;
        p += 24 + stored;
    }
    return k;
}

static void damaged(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/demo.cap", dir);
    size_t n;
    unsigned char *b = slurp(path, &n);
    if (!b) {
        fprintf(stderr, "fixture_gen: cannot read %s\n", path);
        exit(1);
    }
    size_t off[4096];
    size_t k = chunks(b, n, off, 4096);
    if (k < 6) {
        fprintf(stderr, "fixture_gen: demo.cap has too few chunks\n");
        exit(1);
    }
    /* cut in the middle of the block that starts at chunk k/2 */
    size_t cut = off[k / 2] + 24 + 10;
    snprintf(path, sizeof path, "%s/demo-truncated.cap", dir);
    spit(path, b, cut);
    /* flip one payload byte of the second block (chunk 2; 0 is META) */
    b[off[2] + 24 + 5] ^= 0x40;
    snprintf(path, sizeof path, "%s/demo-corrupt.cap", dir);
    spit(path, b, n);
    free(b);
}

/* Format 1.1: 30 frames of 10 ms on "main" with two wait-tagged names
 * (wait_gpu 2-3 ms, wait_vsync the rest of the frame), two stray ends on
 * "main" and one on "loader" (its scope began before the capture), and a
 * "stream" scope on "loader" still open at close: ended with the last
 * frame, 45 ms long, counted as closed at end. */
static void waits_and_strays(const char *dir)
{
    enum { W_FRAME = 1, W_SIMULATE, W_WAIT_GPU, W_PRESENT, W_WAIT_VSYNC,
           W_STREAM };
    static const char *const wn[] = {NULL, "frame", "simulate", "wait_gpu",
                                     "present", "wait_vsync", "stream"};
    rng_state = 1111;
    cap_writer *w = open_w_minor(dir, "waits-and-strays.cap", "waiting-game", 1);
    for (uint32_t i = 1; i <= W_STREAM; i++)
        CHECK(cap_writer_name(w, i, wn[i], "game/wait.c", 10 + i));
    CHECK(cap_writer_name_flags(w, W_WAIT_GPU, CAP_NAME_WAIT));
    CHECK(cap_writer_name_flags(w, W_WAIT_VSYNC, CAP_NAME_WAIT));
    CHECK(cap_writer_thread(w, 0, "main"));
    CHECK(cap_writer_thread(w, 1, "loader"));
    uint64_t t = 1000000000;
    if (cap_writer_scope_end(w, 1, t) != CAP_E_MISUSE)
        exit(1);
    for (uint64_t f = 0; f < 30; f++) {
        uint64_t b = t, e = t + 10000000;
        uint64_t sim = uni(4000000, 5000000), gpu = uni(2000000, 3000000);
        CHECK(cap_writer_scope_begin(w, 0, W_FRAME, b));
        CHECK(cap_writer_scope_begin(w, 0, W_SIMULATE, b));
        CHECK(cap_writer_scope_end(w, 0, b + sim));
        CHECK(cap_writer_scope_begin(w, 0, W_WAIT_GPU, b + sim));
        CHECK(cap_writer_scope_end(w, 0, b + sim + gpu));
        CHECK(cap_writer_scope_begin(w, 0, W_PRESENT, b + sim + gpu));
        CHECK(cap_writer_scope_end(w, 0, b + sim + gpu + 1000000));
        CHECK(cap_writer_scope_begin(w, 0, W_WAIT_VSYNC,
                                     b + sim + gpu + 1000000));
        CHECK(cap_writer_scope_end(w, 0, e));
        CHECK(cap_writer_scope_end(w, 0, e));
        if (f == 10 || f == 20)
            if (cap_writer_scope_end(w, 0, e) != CAP_E_MISUSE)
                exit(1);
        if (f == 25)
            CHECK(cap_writer_scope_begin(w, 1, W_STREAM, b + 5000000));
        CHECK(cap_writer_frame(w, f, b, e));
        t = e;
    }
    CHECK(cap_writer_end_open_scopes(w, t));
    CHECK(cap_writer_close(w));
}

/* The same events as format 1.1 (scope-residuals-1.1.cap), 2.0
 * (scope-residuals.cap), whose SCOPES_R sections predict each tick delta,
 * and 3.0 (scope-residuals-3.0.cap), whose SCOPES_E sections range-code
 * the same predictions' residuals and the tokens as ranks:
 * names whose durations repeat with jitter, 4 KiB blocks so that scopes
 * stay open across many blocks (open-stack prefixes), a frame nesting 40
 * deep, a timestamp that goes backwards, gaps of seconds, one-tick and
 * zero-tick scopes, a scope still open at the end, and a thread whose
 * deltas repeat exactly (the writer keeps its sections plain SCOPES,
 * which 2.0 and 3.0 files may hold beside SCOPES_R and SCOPES_E). All
 * must read alike (tests/test_format.c, tests/cli/read_capture.cases).
 * With `hurried` (3.0 only: scope-residuals-3.0-hurried.cap) the writer
 * is told to hurry for ten frames out of every twenty, as the producer
 * does while its writer thread is behind, so the file mixes SCOPES_R and
 * SCOPES_E sections, blocks apart and scopes open across the switch.
 * With `listed` (3.1: scope-residuals-3.1.cap) the file is 3.0's with
 * the footer's FRAME_LIST: every block's frames, read without the blocks
 * by cap_reader_frames_only. With major 4 (scope-residuals-4.0-groups.cap)
 * the blocks are in groups (4.0): names, threads and tracks listed once
 * a group, each group's blocks one zstd frame; the gaps of seconds end
 * groups (at most 1 s each: group_max_ms), so the file holds several. */
static void scope_residuals(const char *dir, unsigned major, int hurried,
                            int listed)
{
    rng_state = 2024;
    cap_writer *w = open_w_version(
        dir,
        major == 1   ? "scope-residuals-1.1.cap"
        : major == 2 ? "scope-residuals.cap"
        : major == 4 ? "scope-residuals-4.0-groups.cap"
        : listed     ? "scope-residuals-3.1.cap"
        : hurried    ? "scope-residuals-3.0-hurried.cap"
                     : "scope-residuals-3.0.cap",
        "residuals", major, major == 3 ? (unsigned)listed : 1);
    define_names(w, N_VRAM);
    CHECK(cap_writer_thread(w, 0, "main"));
    CHECK(cap_writer_thread(w, 1, "loader"));
    CHECK(cap_writer_thread(w, 2, "ticker"));
    uint64_t t = 1000000000, y = t;
    CHECK(cap_writer_scope_begin(w, 1, N_JOB, y)); /* open for 20 frames */
    for (uint64_t f = 0; f < 60; f++) {
        uint64_t b = t, x = t;
        if (hurried)
            cap__writer_hurry(w, f % 20 < 10);
        CHECK(cap_writer_scope_begin(w, 0, N_FRAME, b));
        for (int i = 0; i < 30; i++) {
            uint32_t id = (uint32_t)(N_UPDATE + i % 4);
            x += uni(900, 1100);
            CHECK(cap_writer_scope_begin(w, 0, id, x));
            x += (uint64_t)(1000 * (i % 4 + 1)) + uni(0, 100);
            CHECK(cap_writer_scope_end(w, 0, x));
        }
        if (f % 10 == 3) { /* 40 deep, then back up */
            for (int d = 0; d < 40; d++)
                CHECK(cap_writer_scope_begin(w, 0, N_CULL, x += 1 + (d & 1)));
            for (int d = 0; d < 40; d++)
                CHECK(cap_writer_scope_end(w, 0, x += (uint64_t)d));
        }
        if (f == 17) { /* the clock went back: recorded as no time passing */
            CHECK(cap_writer_scope_begin(w, 0, N_SUBMIT, x + 500));
            CHECK(cap_writer_scope_end(w, 0, x + 200));
            x += 500;
        }
        x += uni(100000, 200000);
        CHECK(cap_writer_scope_end(w, 0, x));
        CHECK(cap_writer_frame(w, f, b, x));
        for (int i = 0; i < 8; i++) { /* a steady clock: plain SCOPES */
            CHECK(cap_writer_scope_begin(w, 2, N_PHYSICS, b + 100 * (uint64_t)i));
            CHECK(cap_writer_scope_end(w, 2, b + 100 * (uint64_t)i + 50));
        }
        if (f % 3 == 0) {
            CHECK(cap_writer_scope_begin(w, 1, N_DECODE, y += uni(1000, 3000)));
            CHECK(cap_writer_scope_end(w, 1, y += uni(50000, 60000)));
        }
        if (f == 19)
            CHECK(cap_writer_scope_end(w, 1, y = x));
        if (f == 20)
            CHECK(cap_writer_scope_begin(w, 1, N_JOB, y = x)); /* never ends */
        /* a gap of seconds between some frames */
        t = x + (f % 20 == 9 ? 3000000000ull + uni(0, 1000) : uni(5000, 6000));
    }
    CHECK(cap_writer_end_open_scopes(w, t));
    CHECK(cap_writer_close(w));
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fixture_gen OUTDIR\n");
        return 2;
    }
    demo(argv[1]);
    damaged(argv[1]);
    unnamed(argv[1]);
    throttling(argv[1], 0);
    throttling(argv[1], 1);
    ab(argv[1], "ab-base.cap", 1001, 0);
    ab(argv[1], "ab-regressed.cap", 2002, 7);
    ab(argv[1], "ab-same.cap", 3003, 0);
    counted_losses(argv[1]);
    waits_and_strays(argv[1]);
    outside_frames(argv[1]);
    game_loop(argv[1], 1);
    game_loop(argv[1], 0);
    scope_residuals(argv[1], 1, 0, 0);
    scope_residuals(argv[1], 2, 0, 0);
    scope_residuals(argv[1], 3, 0, 0);
    scope_residuals(argv[1], 3, 1, 0);
    scope_residuals(argv[1], 3, 0, 1); /* 3.1: the footer lists frames */
    scope_residuals(argv[1], 4, 0, 0); /* 4.0: groups of blocks */
    return 0;
}
