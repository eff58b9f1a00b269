/*
 * bench_names.c - what each way of naming a scope costs on the hot path
 * (docs/NAMES.md). One thread records `--scopes` scopes (begin and end) per
 * path into an open capture whose buffers hold a whole pass, and the time
 * is the thread's own CPU time per scope, median of --reps passes:
 *
 *   names_literal_ns      CAP_SCOPE("literal")
 *   names_id_ns           CAP_SCOPE_ID(id), id from cap_name_register
 *   names_call_ns         cap_scope_begin(id) / cap_scope_end()
 *   names_runtime_same_ns CAP_SCOPE(str), str a runtime string that stays
 *                         the same (checked by content on each call)
 *   names_runtime_cycle_ns CAP_SCOPE(str) at one site, str cycling through
 *                         90 names (each call re-resolves in the registry)
 *
 * Usage: bench_names [--scopes N] [--reps R]
 */
#include "bench_common.h"

static volatile uint64_t g_sink;

static char g_names[90][32];
static uint32_t g_ids[90];

static void wait_drained(void)
{
    /* the writer drains every flush interval (100 ms) */
    struct timespec ts = {0, 250000000};
    nanosleep(&ts, NULL);
}

static void run_literal(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        CAP_SCOPE("literal");
        g_sink = i;
    }
}

static void run_id(uint64_t n)
{
    uint32_t id = g_ids[0];
    for (uint64_t i = 0; i < n; i++) {
        CAP_SCOPE_ID(id);
        g_sink = i;
    }
}

static void run_call(uint64_t n)
{
    uint32_t id = g_ids[0];
    for (uint64_t i = 0; i < n; i++) {
        cap_scope_begin(id);
        g_sink = i;
        cap_scope_end();
    }
}

static void run_same(uint64_t n)
{
    const char *s = g_names[0];
    for (uint64_t i = 0; i < n; i++) {
        CAP_SCOPE(s);
        g_sink = i;
    }
}

static void run_cycle(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        CAP_SCOPE(g_names[i % 90]);
        g_sink = i;
    }
}

int main(int argc, char **argv)
{
    uint64_t scopes = 2000000;
    int reps = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--scopes") == 0 && i + 1 < argc)
            scopes = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else
            BENCH_DIE("usage: bench_names [--scopes N] [--reps R]");
    }
    if (scopes == 0 || reps < 1 || reps > 101)
        BENCH_DIE("bad --scopes or --reps");
    for (int i = 0; i < 90; i++) {
        snprintf(g_names[i], sizeof g_names[i], "asset_%02d_mesh", i);
        g_ids[i] = cap_name_register(g_names[i], NULL, 0);
    }
    char path[] = "/tmp/bench_names_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        BENCH_DIE("cannot create a temporary file");
    close(fd);
    size_t buf = 1u << 20;
    cap_capture_options o = {
        .buffer_events = buf,
        .buffers_per_thread = (unsigned)(2 * scopes / buf + 3),
    };
    if (cap_open(path, &o) != CAP_OK)
        BENCH_DIE("cannot open the capture");
    CAP_THREAD("main");
    static const struct {
        const char *name;
        void (*fn)(uint64_t);
    } paths[] = {
        {"names_literal_ns", run_literal},
        {"names_id_ns", run_id},
        {"names_call_ns", run_call},
        {"names_runtime_same_ns", run_same},
        {"names_runtime_cycle_ns", run_cycle},
    };
    bench_put_machine();
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        double v[101];
        paths[p].fn(scopes / 10); /* warm-up: buffers mapped, sites set */
        wait_drained();
        for (int r = 0; r < reps; r++) {
            uint64_t c0 = bench_thread_cpu_ns();
            paths[p].fn(scopes);
            uint64_t c1 = bench_thread_cpu_ns();
            v[r] = (double)(c1 - c0) / (double)scopes;
            wait_drained();
        }
        bench_put(paths[p].name, bench_median(v, (size_t)reps));
    }
    cap_producer_stats st;
    cap_close();
    cap_get_stats(&st);
    unlink(path);
    bench_put("names_dropped_scopes", (double)st.dropped_scopes);
    return 0;
}
