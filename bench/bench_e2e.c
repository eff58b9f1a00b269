/*
 * bench_e2e.c - recording end to end: compression and file writing on.
 *
 * Workload (issue 7, item 2): the recording workload (scopes nested four
 * deep, a frame every 1,000 scopes) recorded with the producer's default
 * options (16 Ki-event buffers, 8 per thread, zstd level 3, 100 ms flush)
 * into a file, so the writer thread must encode and compress as fast as the
 * program records.
 *
 * 1. Paced runs: the producing thread records at a fixed rate (it spins
 *    until each frame's start time, like a program with work between
 *    scopes) for --seconds, at rising rates. The sustained rate is the
 *    highest rate at which the thread kept its pace and nothing was
 *    dropped (e2e_scopes_per_s; target 20 million/s per producing thread).
 *    The same with two producing threads (e2e_2t_scopes_per_s, per thread).
 * 2. Flat out: one thread records 60 million scopes as fast as it can, then
 *    two threads do (on two cores, more than the writer takes: scopes are
 *    dropped). The figures check that the drops are counted and that the
 *    file records them (its statistics, read back with cap_reader, equal
 *    the producer's count, and recorded + dropped scopes equal the scopes
 *    the program opened: flat_drops_recorded=1), and that recording never
 *    stalled the program for longer than a frame: a third run times every
 *    call the recording thread makes into the library (--wrap) and keeps
 *    the longest one the scheduler did not interrupt
 *    (flat_library_call_max_*), beside the frame-level view (the longest
 *    frame without an involuntary context switch, against the same loop
 *    run without recording) and the number of times the thread blocked
 *    (voluntary context switches, which a lock wait in the producer would
 *    cause).
 *
 * Usage: bench_e2e [--seconds S] [--rates M,M,...] [--buffers N]
 *                  [--zstd-level L] [--keep]
 *   --buffers N: buffers_per_thread (default: the producer's default)
 *   --zstd-level L: zstd level of the capture (default: the producer's)
 */
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <capture/cap_reader.h>

#include "bench_common.h"

typedef struct run_result {
    uint64_t scopes;      /* scopes opened by the producing threads */
    double rate;          /* achieved scopes/s per thread (slowest) */
    uint64_t dropped;     /* producer's count */
    uint64_t bytes;
    double max_frame_ns;  /* thread 0 */
    double max_clean_frame_ns; /* without an involuntary switch */
    double median_frame_ns;
    long nvcsw, nivcsw;   /* thread 0 during recording */
    long faults;          /* page faults of thread 0 during recording */
    uint64_t fault_frames; /* slow frames with a page fault */
    uint64_t blocked_frames; /* slow frames where the thread blocked */
    uint64_t call_max_ticks, calls; /* thread 0's timed library calls */
    uint64_t call_max_clean_ticks, calls_long, call_max_by[2];
    uint64_t slow_frames; /* clean frames longer than twice the median */
    double writer_cpu_ns; /* CPU time of the rest of the process (the
                             writer thread) per scope recorded */
} run_result;

typedef struct prod {
    pthread_t th;
    int index;
    int raw;     /* baseline: the raw-read loop instead of recording */
    double rate; /* scopes/s; 0: flat out */
    uint64_t frames;
    pthread_barrier_t *bar;
    double *frame_ns;
    unsigned char *preempted;
    double achieved;
    long nvcsw, nivcsw;
    uint64_t cpu_ns; /* the thread's CPU time */
    long faults;     /* page faults while recording */
    uint64_t call_max_ticks, calls; /* timed calls into the library */
    uint64_t call_max_clean_ticks;  /* ...the longest not preempted */
    uint64_t calls_long;            /* ...not preempted, over 20 us */
    uint64_t call_max_by[2];        /* ...cap__emit_slow, cap_frame_mark */
} prod;

static void thread_switches(long *vol, long *invol, long *faults)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    *vol = ru.ru_nvcsw;
    *invol = ru.ru_nivcsw;
    *faults = ru.ru_minflt + ru.ru_majflt;
}

static volatile uint64_t g_sink;

/* The recording thread's calls into the library, timed: the build links
 * with --wrap for cap__emit_slow (the hot path's way out: a full buffer,
 * swapping, dropping) and cap_frame_mark, so every call the producer makes
 * on the recording thread goes through these. Timing is on only while
 * g_time_calls is set (it adds two counter reads per call). */
void __real_cap__emit_slow(uint32_t word, uint64_t tick);
void __real_cap_frame_mark(void);
void __wrap_cap__emit_slow(uint32_t word, uint64_t tick);
void __wrap_cap_frame_mark(void);
static int g_time_calls;
static __thread uint64_t t_call_max, t_calls; /* ticks, count */
/* the longest call during which the scheduler did not switch the thread
 * out: involuntary switches are read at each frame's start and after any
 * call longer than CALL_CHECK_TICKS */
static __thread uint64_t t_call_max_clean;
static __thread uint64_t t_call_max_clean_by[2]; /* emit_slow, frame_mark */
static __thread long t_nivcsw;
#define CALL_CHECK_TICKS 20000u

static long thread_nivcsw(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nivcsw;
}

static __thread uint64_t t_calls_long; /* unpreempted, over 20 us */
static double g_ticks_per_us = 1000; /* set before timing */

static void call_timed(uint64_t d, int kind)
{
    if (d > t_call_max)
        t_call_max = d;
    t_calls++;
    if (d > CALL_CHECK_TICKS && d > t_call_max_clean) {
        long now = thread_nivcsw();
        if (now == t_nivcsw) {
            t_call_max_clean = d;
            if (d > t_call_max_clean_by[kind])
                t_call_max_clean_by[kind] = d;
            if ((double)d > 20 * g_ticks_per_us)
                t_calls_long++;
        }
        t_nivcsw = now;
    } else {
        if (d > t_call_max_clean)
            t_call_max_clean = d;
        if (d > t_call_max_clean_by[kind])
            t_call_max_clean_by[kind] = d;
    }
}

void __wrap_cap__emit_slow(uint32_t word, uint64_t tick)
{
    if (!g_time_calls) {
        __real_cap__emit_slow(word, tick);
        return;
    }
    uint64_t a = bench_raw_tick();
    __real_cap__emit_slow(word, tick);
    call_timed(bench_raw_tick() - a, 0);
}

void __wrap_cap_frame_mark(void)
{
    if (!g_time_calls) {
        __real_cap_frame_mark();
        return;
    }
    uint64_t a = bench_raw_tick();
    __real_cap_frame_mark();
    call_timed(bench_raw_tick() - a, 1);
}

static void *prod_main(void *arg)
{
    prod *p = arg;
    char name[32];
    snprintf(name, sizeof name, "producer %d", p->index);
    CAP_THREAD(name);
    pthread_barrier_wait(p->bar);
    long v0, i0, f0;
    thread_switches(&v0, &i0, &f0);
    long inv = i0, flt = f0, vol = v0;
    double typical = 0; /* moving average of frames that were not slow */
    uint64_t t0 = bench_mono_ns(), prev = t0;
    double ns_per_frame = p->rate > 0 ? 1e9 * BENCH_SCOPES_PER_FRAME / p->rate
                                      : 0;
    for (uint64_t f = 0; f < p->frames; f++) {
        if (ns_per_frame > 0) {
            uint64_t due = t0 + (uint64_t)(ns_per_frame * (double)f);
            while (bench_mono_ns() < due)
                ;
        }
        if (g_time_calls)
            t_nivcsw = thread_nivcsw();
        if (p->raw)
            g_sink += bench_raw_frames(1);
        else
            bench_record_frames(1, p->index == 0);
        uint64_t now = bench_mono_ns();
        p->frame_ns[f] = (double)(now - prev);
        prev = now;
        /* attribute a long frame to the scheduler when it switched us out */
        if (ns_per_frame == 0) {
            double d = p->frame_ns[f];
            if (typical == 0 || d <= 2 * typical) {
                typical = typical == 0 ? d : typical + (d - typical) / 16;
            } else {
                long v, i, fl;
                thread_switches(&v, &i, &fl);
                p->preempted[f] = (unsigned char)((i != inv) |
                                                  (fl != flt) << 1 |
                                                  (v != vol) << 2);
                inv = i;
                flt = fl;
                vol = v;
            }
        }
    }
    uint64_t t1 = bench_mono_ns();
    long v1, i1, f1;
    thread_switches(&v1, &i1, &f1);
    p->faults = f1 - f0;
    p->nvcsw = v1 - v0;
    p->nivcsw = i1 - i0;
    p->achieved = (double)p->frames * BENCH_SCOPES_PER_FRAME /
                  ((double)(t1 - t0) / 1e9);
    p->call_max_ticks = t_call_max;
    p->call_max_clean_ticks = t_call_max_clean;
    p->call_max_by[0] = t_call_max_clean_by[0];
    p->call_max_by[1] = t_call_max_clean_by[1];
    p->calls = t_calls;
    p->calls_long = t_calls_long;
    cap_thread_unregister();
    p->cpu_ns = bench_thread_cpu_ns();
    return NULL;
}

/* Read the capture back: scopes recorded and dropped according to the file. */
static void file_counts(const char *path, uint64_t *scopes, uint64_t *dropped,
                        int *complete)
{
    cap_reader *r;
    char detail[256];
    if (cap_reader_open(&r, path, detail, sizeof detail) != CAP_OK)
        BENCH_DIE("cannot read back %s: %s", path, detail);
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) != CAP_DONE)
        if (res != CAP_OK)
            BENCH_DIE("reading %s: %s", path, cap_reader_detail(r));
    const cap_reader_stats *st = cap_reader_get_stats(r);
    *scopes = st->scopes;
    *dropped = st->dropped_scopes;
    *complete = st->has_footer && !st->corrupt_chunks;
    cap_reader_close(r);
}

static uint64_t process_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static unsigned g_buffers; /* --buffers: buffers_per_thread, 0: default */
static int g_level;        /* --zstd-level, 0: default */

static run_result run(const char *path, int threads, double rate,
                      double seconds, double flat_scopes, int raw)
{
    run_result out = {0};
    uint64_t cpu0 = process_cpu_ns();
    uint64_t frames = rate > 0 ? (uint64_t)(rate * seconds /
                                            BENCH_SCOPES_PER_FRAME)
                               : (uint64_t)(flat_scopes /
                                            BENCH_SCOPES_PER_FRAME);
    if (frames < 2)
        frames = 2;
    cap_capture_options o = {0};
    o.buffers_per_thread = g_buffers;
    o.zstd_level = g_level;
    if (!raw && cap_open(path, &o) != CAP_OK)
        BENCH_DIE("cannot open %s", path);
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)threads);
    prod p[2];
    for (int i = 0; i < threads; i++) {
        p[i] = (prod){.index = i, .rate = rate, .frames = frames, .bar = &bar,
                      .raw = raw};
        p[i].frame_ns = calloc(frames, sizeof(double));
        p[i].preempted = calloc(frames, 1);
        if (!p[i].frame_ns || !p[i].preempted)
            BENCH_DIE("out of memory");
        /* touch them now: their first-touch page faults are not the
         * producer's */
        memset(p[i].frame_ns, 1, frames * sizeof(double));
        memset(p[i].preempted, 1, frames);
        memset(p[i].preempted, 0, frames);
        if (pthread_create(&p[i].th, NULL, prod_main, &p[i]) != 0)
            BENCH_DIE("pthread_create failed");
    }
    for (int i = 0; i < threads; i++)
        pthread_join(p[i].th, NULL);
    if (!raw && cap_close() != CAP_OK)
        BENCH_DIE("cap_close failed");
    cap_producer_stats st = {0};
    if (!raw)
        cap_get_stats(&st);
    out.scopes = frames * BENCH_SCOPES_PER_FRAME * (uint64_t)threads;
    out.dropped = st.dropped_scopes;
    out.bytes = st.bytes;
    double other = (double)(process_cpu_ns() - cpu0);
    for (int i = 0; i < threads; i++)
        other -= (double)p[i].cpu_ns;
    out.writer_cpu_ns = other / (double)(out.scopes - out.dropped);
    out.rate = p[0].achieved;
    for (int i = 1; i < threads; i++)
        if (p[i].achieved < out.rate)
            out.rate = p[i].achieved;
    /* frame times of thread 0 (the one marking frames); skip frame 0 */
    double *clean = malloc(frames * sizeof *clean);
    if (!clean)
        BENCH_DIE("out of memory");
    size_t nc = 0;
    for (uint64_t f = 1; f < frames; f++) {
        double d = p[0].frame_ns[f];
        if (d > out.max_frame_ns)
            out.max_frame_ns = d;
        if (p[0].preempted[f] & 2)
            out.fault_frames++;
        if (p[0].preempted[f] & 4)
            out.blocked_frames++;
        if (!(p[0].preempted[f] & 1)) {
            clean[nc++] = d;
            if (d > out.max_clean_frame_ns)
                out.max_clean_frame_ns = d;
        }
    }
    out.median_frame_ns = nc ? bench_median(clean, nc) : 0;
    for (size_t i = 0; i < nc; i++)
        if (clean[i] > 2 * out.median_frame_ns)
            out.slow_frames++;
    out.nvcsw = p[0].nvcsw;
    out.nivcsw = p[0].nivcsw;
    out.faults = p[0].faults;
    out.call_max_ticks = p[0].call_max_ticks;
    out.call_max_clean_ticks = p[0].call_max_clean_ticks;
    out.calls_long = p[0].calls_long;
    out.call_max_by[0] = p[0].call_max_by[0];
    out.call_max_by[1] = p[0].call_max_by[1];
    out.calls = p[0].calls;
    free(clean);
    for (int i = 0; i < threads; i++) {
        free(p[i].frame_ns);
        free(p[i].preempted);
    }
    pthread_barrier_destroy(&bar);
    return out;
}

/* Paced runs at rising rates; returns the highest rate (per thread) kept
 * with nothing dropped, and prints each step. A rate that fails is run
 * again, up to E2E_ATTEMPTS times in all, before the sweep stops: on a
 * shared machine one run can lose its core to another process. */
#define E2E_ATTEMPTS 3
static double sustained(const char *path, int threads, const double *rates,
                        int nrates, double seconds, int *retries)
{
    double best = 0;
    *retries = 0;
    for (int i = 0; i < nrates; i++) {
        double rate = rates[i] * 1e6;
        int kept = 0;
        for (int a = 0; a < E2E_ATTEMPTS && !kept; a++) {
            double la[1] = {-1};
            if (getloadavg(la, 1) != 1)
                la[0] = -1;
            run_result r = run(path, threads, rate, seconds, 0, 0);
            kept = r.rate >= 0.97 * rate && !r.dropped;
            fprintf(stderr,
                    "bench_e2e: %d thread(s) at %.0f M scopes/s (attempt %d, "
                    "load %.2f): achieved %.2f M/s, dropped %llu, "
                    "%.3f bytes/scope, writer %.1f ns/scope\n",
                    threads, rates[i], a + 1, la[0], r.rate / 1e6,
                    (unsigned long long)r.dropped,
                    (double)r.bytes / (double)r.scopes, r.writer_cpu_ns);
            if (!kept)
                ++*retries;
        }
        if (!kept)
            break;
        best = rate;
    }
    return best;
}

int main(int argc, char **argv)
{
    double seconds = 2.0;
    double rates[32] = {5, 10, 15, 20, 25, 30, 35, 40, 50};
    int nrates = 9, keep = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            seconds = atof(argv[++i]);
        } else if (strcmp(argv[i], "--rates") == 0 && i + 1 < argc) {
            nrates = 0;
            for (char *s = argv[++i]; *s && nrates < 32;) {
                rates[nrates++] = strtod(s, &s);
                if (*s == ',')
                    s++;
                else
                    break;
            }
        } else if (strcmp(argv[i], "--buffers") == 0 && i + 1 < argc) {
            g_buffers = (unsigned)atoi(argv[++i]);
        } else if (strcmp(argv[i], "--zstd-level") == 0 && i + 1 < argc) {
            g_level = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--keep") == 0) {
            keep = 1;
        } else {
            BENCH_DIE("usage: bench_e2e [--seconds S] [--rates M,M,...] "
                      "[--buffers N] [--zstd-level L] [--keep]");
        }
    }
    if (seconds <= 0 || nrates < 1)
        BENCH_DIE("bad --seconds or --rates");
    const char *path = "bench-e2e.cap";
    bench_put_machine();

    int retries;
    bench_put_load("e2e_start");
    double one = sustained(path, 1, rates, nrates, seconds, &retries);
    bench_put("e2e_scopes_per_s", one);
    bench_put("e2e_failed_attempts", retries);
    bench_put_load("e2e_sweep_end");
    bench_put("e2e_scopes_per_s_target", 20e6);
    bench_put("e2e_ratio_to_target", one / 20e6);
    double two = sustained(path, 2, rates, nrates, seconds, &retries);
    bench_put("e2e_2t_scopes_per_s", two);

    /* flat out, one thread: 60 million scopes as fast as it goes */
    run_result r = run(path, 1, 0, 0, 60e6, 0);
    /* flat out, two threads: on two cores the writer cannot keep up, so
     * this one drops; check the file's account of it */
    run_result r2 = run(path, 2, 0, 0, 60e6, 0);
    uint64_t f_scopes, f_dropped;
    int complete;
    file_counts(path, &f_scopes, &f_dropped, &complete);
    /* again with the library calls timed, for the longest one */
    uint64_t c0 = bench_raw_tick(), m0 = bench_mono_ns();
    {
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
        g_ticks_per_us = (double)(bench_raw_tick() - c0) * 1000.0 /
                         (double)(bench_mono_ns() - m0);
    }
    g_time_calls = 1;
    run_result timed = run(path, 1, 0, 0, 60e6, 0);
    g_time_calls = 0;
    double ns_per_tick = (double)(bench_mono_ns() - m0) /
                         (double)(bench_raw_tick() - c0);
    bench_put("flat_scopes_per_s", r.rate);
    bench_put("flat_dropped_scopes", (double)r.dropped);
    bench_put("flat_writer_cpu_ns_per_scope", r.writer_cpu_ns);
    bench_put("flat_2t_scopes_per_s", r2.rate);
    bench_put("flat_2t_scopes", (double)r2.scopes);
    bench_put("dropped_scopes", (double)f_dropped);
    bench_put("dropped_scopes_producer", (double)r2.dropped);
    bench_put("flat_2t_file_scopes", (double)f_scopes);
    bench_put("flat_drops_recorded",
              complete && f_dropped == r2.dropped &&
                      f_scopes + f_dropped == r2.scopes
                  ? 1
                  : 0);
    bench_put("flat_frame_median_ns", r.median_frame_ns);
    bench_put("flat_frame_max_ns", r.max_frame_ns);
    bench_put("flat_frame_max_unpreempted_ns", r.max_clean_frame_ns);
    /* the same loop shape with two raw reads per scope and no capture: how
     * long frames get on this machine without any recording */
    run_result n = run(path, 1, 0, 0, 60e6, 1);
    double stall = r.max_clean_frame_ns - r.median_frame_ns;
    double noise = n.max_clean_frame_ns - n.median_frame_ns;
    double call_max = (double)timed.call_max_ticks * ns_per_tick;
    double call_clean = (double)timed.call_max_clean_ticks * ns_per_tick;
    bench_put("flat_library_calls", (double)timed.calls);
    bench_put("flat_library_call_max_ns", call_max);
    bench_put("flat_library_call_max_unpreempted_ns", call_clean);
    bench_put("flat_library_call_max_frames", call_clean / r.median_frame_ns);
    bench_put("flat_library_calls_over_20us", (double)timed.calls_long);
    bench_put("flat_emit_slow_max_unpreempted_ns",
              (double)timed.call_max_by[0] * ns_per_tick);
    bench_put("flat_frame_mark_max_unpreempted_ns",
              (double)timed.call_max_by[1] * ns_per_tick);
    bench_put("flat_library_call_max_frames_target", 1.0);
    bench_put("flat_stall_ns", stall);
    bench_put("flat_stall_frames", stall / r.median_frame_ns);
    bench_put("flat_stall_frames_target", 1.0);
    bench_put("baseline_scopes_per_s", n.rate);
    bench_put("flat_ratio_to_baseline", r.rate / n.rate);
    bench_put("baseline_frame_median_ns", n.median_frame_ns);
    bench_put("baseline_stall_ns", noise);
    bench_put("baseline_slow_frames", (double)n.slow_frames);
    bench_put("flat_stall_ratio_to_baseline", noise > 0 ? stall / noise : 0);
    bench_put("flat_slow_frames", (double)r.slow_frames);
    bench_put("flat_voluntary_switches", (double)r.nvcsw);
    bench_put("flat_involuntary_switches", (double)r.nivcsw);
    bench_put("flat_page_faults", (double)r.faults);
    bench_put("flat_slow_frames_with_faults", (double)r.fault_frames);
    bench_put("flat_slow_frames_blocked", (double)r.blocked_frames);
    if (!keep)
        unlink(path);
    return 0;
}
