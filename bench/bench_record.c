/*
 * bench_record.c - the cost of recording a scope on the hot path.
 *
 * Workload (issue 7, item 1): 10 million scopes nested four deep, a frame
 * boundary every 1,000 scopes, recorded through CAP_SCOPE into a real open
 * capture, on one thread and then on two threads at once. Baseline: two
 * raw time-stamp counter reads per scope, in the same loop shape, measured
 * in the same run and interleaved with the recording passes.
 *
 * The capture is opened with a buffer pool large enough to hold a whole
 * pass (buffer_events 1 Mi, as many buffers as one pass fills, plus two), so
 * what is measured is the hot path a program meets in steady state: its
 * buffers are already mapped (a warm-up pass faults them in) and the writer
 * thread drains them between passes. The end-to-end cost with the default
 * small pool, compression and file writing is bench_e2e's business.
 *
 * Time is each thread's own CPU time (CLOCK_THREAD_CPUTIME_ID): on a
 * machine with as many cores as recording threads, the writer thread would
 * otherwise preempt a recording thread and the wall clock would charge the
 * writer's work to the hot path. Wall-clock figures are printed too.
 *
 * Figures: raw_two_reads_ns, record_ns_per_scope, record_ratio,
 * record_2t_ns_per_scope, two_thread_ratio (medians of --reps passes).
 * Then the one-thread passes again in flight mode (docs/FLIGHT.md: the
 * last 30 s kept in memory, nothing written): flight_record_ratio, its
 * ratio to the same two reads, and flight_vs_file, its cost over the file
 * capture's in the same run.
 *
 * Usage: bench_record [--scopes N] [--reps R] [--keep]
 */
#include <pthread.h>
#include <unistd.h>

#include "bench_common.h"

#define BUF_EVENTS (1u << 20)

static uint64_t g_frames;
static volatile uint64_t g_sink;

/* Wait until the writer thread has encoded `events` events. */
static void wait_drained(uint64_t events)
{
    for (int i = 0; i < 60000; i++) {
        cap_producer_stats s;
        cap_get_stats(&s);
        if (s.events + 2 * s.dropped_scopes >= events)
            return;
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    BENCH_DIE("the writer did not drain %llu events in 5 minutes",
              (unsigned long long)events);
}

typedef struct worker {
    pthread_t th;
    int index;
    int reps;
    pthread_barrier_t *bar;
    double *cpu_ns; /* per rep, ns per scope */
    double *wall_ns;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    char name[32];
    snprintf(name, sizeof name, "worker %d", w->index);
    CAP_THREAD(name);
    bench_record_frames(g_frames, w->index == 0); /* warm-up */
    pthread_barrier_wait(w->bar);                  /* main waits for drain */
    pthread_barrier_wait(w->bar);
    for (int r = 0; r < w->reps; r++) {
        uint64_t c0 = bench_thread_cpu_ns(), t0 = bench_mono_ns();
        bench_record_frames(g_frames, w->index == 0);
        uint64_t c1 = bench_thread_cpu_ns(), t1 = bench_mono_ns();
        double scopes = (double)g_frames * BENCH_SCOPES_PER_FRAME;
        w->cpu_ns[r] = (double)(c1 - c0) / scopes;
        w->wall_ns[r] = (double)(t1 - t0) / scopes;
        pthread_barrier_wait(w->bar); /* main drains */
        pthread_barrier_wait(w->bar);
    }
    cap_thread_unregister();
    return NULL;
}

/* One-thread passes on an open capture, each after the baseline: the
 * ns per scope of each into raw, rec and rec_wall. */
static void one_thread_passes(int reps, uint64_t scopes, uint64_t *events,
                              double *raw, double *rec, double *rec_wall)
{
    for (int r = 0; r < reps; r++) {
        uint64_t c0 = bench_thread_cpu_ns();
        g_sink += bench_raw_frames(g_frames);
        uint64_t c1 = bench_thread_cpu_ns();
        raw[r] = (double)(c1 - c0) / (double)scopes;

        uint64_t t0 = bench_mono_ns();
        c0 = bench_thread_cpu_ns();
        bench_record_frames(g_frames, 1);
        c1 = bench_thread_cpu_ns();
        uint64_t t1 = bench_mono_ns();
        rec[r] = (double)(c1 - c0) / (double)scopes;
        if (rec_wall)
            rec_wall[r] = (double)(t1 - t0) / (double)scopes;
        *events += 2 * scopes;
        wait_drained(*events);
    }
}

/* The one-thread passes in flight mode, on a capture of their own with
 * the same buffers: flight_* figures. */
static void flight_passes(int reps, uint64_t scopes, double file_ns,
                          const cap_capture_options *file_opt, double *raw,
                          double *rec)
{
    cap_capture_options o = *file_opt;
    o.flight_seconds = 30;
    o.flight_dir = ".";
    if (cap_open(NULL, &o) != CAP_OK)
        BENCH_DIE("cannot open a capture in flight mode");
    CAP_THREAD("main");
    uint64_t events = 0;
    bench_record_frames(g_frames, 1); /* warm-up */
    events += 2 * scopes;
    wait_drained(events);
    one_thread_passes(reps, scopes, &events, raw, rec, NULL);
    cap_thread_unregister();
    cap_close();
    double raw_m = bench_median(raw, (size_t)reps);
    double rec_m = bench_median(rec, (size_t)reps);
    bench_put("flight_raw_two_reads_ns", raw_m);
    bench_put("flight_record_ns_per_scope", rec_m);
    bench_put("flight_record_ratio", rec_m / raw_m);
    bench_put("flight_vs_file", rec_m / file_ns);
}

int main(int argc, char **argv)
{
    uint64_t scopes = 10000000;
    int reps = 5, keep = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--scopes") == 0 && i + 1 < argc)
            scopes = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--keep") == 0)
            keep = 1;
        else
            BENCH_DIE("usage: bench_record [--scopes N] [--reps R] [--keep]");
    }
    if (reps < 1 || reps > 100 || scopes < BENCH_SCOPES_PER_FRAME)
        BENCH_DIE("bad --scopes or --reps");
    g_frames = scopes / BENCH_SCOPES_PER_FRAME;
    scopes = g_frames * BENCH_SCOPES_PER_FRAME;
    const char *path = "bench-record.cap";

    bench_put_machine();
    bench_put("scopes", (double)scopes);

    cap_capture_options o = {0};
    o.buffer_events = BUF_EVENTS;
    o.buffers_per_thread = (unsigned)(2 * scopes / BUF_EVENTS + 2);
    o.flush_interval_ms = 20;
    if (cap_open(path, &o) != CAP_OK)
        BENCH_DIE("cannot open %s", path);
    CAP_THREAD("main");

    uint64_t events = 0;
    /* warm-up: map the pool, register the names */
    bench_record_frames(g_frames, 1);
    events += 2 * scopes;
    wait_drained(events);

    double *raw = calloc((size_t)reps, sizeof *raw);
    double *rec = calloc((size_t)reps, sizeof *rec);
    double *rec_wall = calloc((size_t)reps, sizeof *rec_wall);
    double *rec2 = calloc((size_t)reps, sizeof *rec2);
    double *rec2_wall = calloc((size_t)reps, sizeof *rec2_wall);
    double *raw2 = calloc((size_t)reps, sizeof *raw2);
    if (!raw || !rec || !rec_wall || !rec2 || !rec2_wall || !raw2)
        BENCH_DIE("out of memory");

    one_thread_passes(reps, scopes, &events, raw, rec, rec_wall);
    cap_thread_unregister();

    /* two threads */
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, 3);
    worker w[2];
    for (int i = 0; i < 2; i++) {
        w[i] = (worker){.index = i, .reps = reps, .bar = &bar};
        w[i].cpu_ns = calloc((size_t)reps, sizeof(double));
        w[i].wall_ns = calloc((size_t)reps, sizeof(double));
        if (!w[i].cpu_ns || !w[i].wall_ns)
            BENCH_DIE("out of memory");
        if (pthread_create(&w[i].th, NULL, worker_main, &w[i]) != 0)
            BENCH_DIE("pthread_create failed");
    }
    pthread_barrier_wait(&bar);
    events += 2 * 2 * scopes;
    wait_drained(events);
    pthread_barrier_wait(&bar);
    for (int r = 0; r < reps; r++) {
        pthread_barrier_wait(&bar);
        events += 2 * 2 * scopes;
        wait_drained(events);
        /* the baseline again, on this thread, while the workers wait */
        uint64_t c0 = bench_thread_cpu_ns();
        g_sink += bench_raw_frames(g_frames);
        raw2[r] = (double)(bench_thread_cpu_ns() - c0) / (double)scopes;
        rec2[r] = (w[0].cpu_ns[r] + w[1].cpu_ns[r]) / 2;
        rec2_wall[r] = (w[0].wall_ns[r] + w[1].wall_ns[r]) / 2;
        pthread_barrier_wait(&bar);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(w[i].th, NULL);

    cap_producer_stats st;
    cap_close();
    cap_get_stats(&st);

    double raw_m = bench_median(raw, (size_t)reps);
    double rec_m = bench_median(rec, (size_t)reps);
    double rec_wall_m = bench_median(rec_wall, (size_t)reps);
    double rec2_m = bench_median(rec2, (size_t)reps);
    double rec2_wall_m = bench_median(rec2_wall, (size_t)reps);
    double raw2_m = bench_median(raw2, (size_t)reps);
    bench_put("raw_two_reads_ns", raw_m);
    bench_put("raw_two_reads_ns_2t_phase", raw2_m);
    bench_put("record_ns_per_scope", rec_m);
    bench_put("record_ratio", rec_m / raw_m);
    bench_put("record_ratio_target", 1.3);
    bench_put("record_wall_ns_per_scope", rec_wall_m);
    bench_put("record_2t_ns_per_scope", rec2_m);
    bench_put("record_2t_wall_ns_per_scope", rec2_wall_m);
    bench_put("two_thread_ratio", rec2_m / rec_m);
    bench_put("two_thread_ratio_target", 1.1);
    bench_put("dropped_scopes", (double)st.dropped_scopes);
    flight_passes(reps, scopes, rec_m, &o, raw, rec);
    if (!keep)
        unlink(path);
    free(raw);
    free(rec);
    free(rec_wall);
    free(rec2);
    free(rec2_wall);
    free(raw2);
    for (int i = 0; i < 2; i++) {
        free(w[i].cpu_ns);
        free(w[i].wall_ns);
    }
    pthread_barrier_destroy(&bar);
    return 0;
}
