/*
 * bench_common.h - shared helpers of the benchmarks in bench/.
 *
 * Every benchmark prints its figures as `name=value` lines on stdout (one
 * figure per line, names listed in docs/PERFORMANCE.md) and diagnostics on
 * stderr. Each figure that has a target is printed next to the baseline it
 * was measured against in the same run, and the ratio between the two.
 *
 * The workload shared by the recording, end-to-end and size benchmarks is
 * the one of issue 7: scopes nested four deep, a frame boundary every 1,000
 * scopes (250 trees of 4 nested scopes per frame).
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <capture/cap_reader.h>
#include <capture/capture.h>

#define BENCH_SCOPES_PER_FRAME 1000u
#define BENCH_DEPTH 4u
#define BENCH_TREES_PER_FRAME (BENCH_SCOPES_PER_FRAME / BENCH_DEPTH)

/* Whether open reader r's file (format 3.1) gives its frames from its
 * footer's list, as the reader takes it: a capture written while 3.1 was
 * in the making (its list coded otherwise) reads them from the blocks,
 * and a benchmark would measure it as what it is not (the benchmarks then
 * make it again). r is left set to frames only. */
static inline int bench_frames_listed(cap_reader *r)
{
    return cap_reader_frames_only(r) == CAP_OK && cap_reader_frames_listed(r);
}

/* CLOCK_MONOTONIC in ns. */
static inline uint64_t bench_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time consumed by the calling thread, in ns. Unlike wall time it does
 * not grow while the thread waits for a core, so it measures the work done
 * by the thread even on a machine with fewer cores than busy threads. */
static inline uint64_t bench_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One raw read of the time-stamp counter, exactly as the producer's hot
 * path reads it (capture.h, cap__now), or CLOCK_MONOTONIC elsewhere. */
static inline uint64_t bench_raw_tick(void)
{
#if defined(__x86_64__) || defined(__i386__)
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return bench_mono_ns();
#endif
}

/* The baseline of the recording cost: per "scope", two raw timestamp reads
 * whose results are kept (so neither read can be dropped), in the same loop
 * shape as bench_record_frames. Returns a value the caller must consume. */
static inline uint64_t bench_raw_frames(uint64_t frames)
{
    uint64_t acc = 0;
    for (uint64_t f = 0; f < frames; f++)
        for (unsigned i = 0; i < BENCH_SCOPES_PER_FRAME; i++) {
            uint64_t a = bench_raw_tick();
            uint64_t b = bench_raw_tick();
            acc += b - a;
        }
    return acc;
}

/* The workload as a user writes it: `frames` frames of 250 trees of four
 * nested CAP_SCOPEs. mark_frames: this thread marks frame boundaries (one
 * thread of a process should). */
static inline void bench_record_frames(uint64_t frames, int mark_frames)
{
    for (uint64_t f = 0; f < frames; f++) {
        if (mark_frames)
            CAP_FRAME_MARK();
        for (unsigned i = 0; i < BENCH_TREES_PER_FRAME; i++) {
            CAP_SCOPE("update");
            {
                CAP_SCOPE("physics");
                {
                    CAP_SCOPE("broadphase");
                    {
                        CAP_SCOPE("pair_test");
                    }
                }
            }
        }
    }
}

/* Print one figure. */
static inline void bench_put(const char *name, double value)
{
    if (value == (double)(int64_t)value && value < 1e15 && value > -1e15)
        printf("%s=%lld\n", name, (long long)value);
    else
        printf("%s=%.4g\n", name, value);
    fflush(stdout);
}

static inline void bench_put_str(const char *name, const char *value)
{
    printf("%s=%s\n", name, value);
    fflush(stdout);
}

/* The machine, as name=value lines: cpu model and online cores. */
static inline void bench_put_machine(void)
{
    char cpu[160] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) == 0) {
                const char *c = strchr(line, ':');
                if (c) {
                    snprintf(cpu, sizeof cpu, "%s", c + 2);
                    cpu[strcspn(cpu, "\n")] = 0;
                }
                break;
            }
        }
        fclose(f);
    }
    bench_put_str("cpu_model", cpu);
    bench_put("nproc", (double)sysconf(_SC_NPROCESSORS_ONLN));
}

/* The machine's load: the 1-minute load average and the cores, printed as
 * `<prefix>_loadavg_1m` (other sessions' work shares the cores: figures
 * measured in wall time are only as good as the load allows). */
static inline double bench_put_load(const char *prefix)
{
    double la[1] = {-1};
    if (getloadavg(la, 1) != 1)
        la[0] = -1;
    char name[160];
    snprintf(name, sizeof name, "%.120s_loadavg_1m", prefix);
    bench_put(name, la[0]);
    return la[0];
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of n values (sorts v). */
static inline double bench_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A fatal error: print and exit 1 (the benchmark fails). */
#define BENCH_DIE(...)                                                         \
    do {                                                                       \
        fprintf(stderr, "bench: " __VA_ARGS__);                                \
        fputc('\n', stderr);                                                   \
        exit(1);                                                               \
    } while (0)

#endif
