/*
 * driver.h - the load driver: a capture's chunks (cap_chunks.h) run on N
 * threads, their results merged in chunk order on the calling thread.
 *
 * The driver knows no report and no model: a caller gives it what to do
 * with one chunk (on any thread) and how to take a chunk's result (on the
 * calling thread, chunk 0 first, then 1, ...). Since the chunks depend on
 * the file alone (cap_chunks_plan) and the merge order on the chunks
 * alone, a result built by the merges is the same on 1, 2 or 64 threads.
 *
 * Memory: at most `threads` chunk results exist at once (a chunk is
 * started only while fewer than that wait for their merge).
 */
#ifndef AN_LOAD_DRIVER_H
#define AN_LOAD_DRIVER_H

#include <stddef.h>

#include "capture/cap_chunks.h"

typedef struct an_driver_ops {
    /* Read chunk i of the plan (c) from fd, on any thread (the calling
     * one included), and return its result, or NULL when out of memory
     * (the drive then stops, CAP_E_NOMEM). Calls for different chunks run
     * at the same time: touch nothing shared but what ctx lets be read. */
    void *(*chunk)(void *ctx, size_t i, const cap_chunk *c, int fd);
    /* Take chunk i's result, on the calling thread, in chunk order (each
     * result once; merge owns it from then on). Non-zero stops the drive
     * (the value is returned by an_drive; results not merged yet are
     * given to discard). */
    int (*merge)(void *ctx, size_t i, void *result);
    /* Free a result that will not be merged. */
    void (*discard)(void *ctx, void *result);
} an_driver_ops;

/* The threads a load uses: `asked` when >= 1; otherwise the environment's
 * CAP_READ_THREADS when it is a whole number from 1 to 1024; otherwise
 * the machine's online processors (at least 1). */
int an_driver_threads(int asked);

/* Run every chunk of plan (plan->n >= 1) through ops on `threads` threads
 * (the calling thread and threads - 1 more; 1: all on the calling thread,
 * in order) and merge their results in chunk order. Returns 0 when every
 * chunk was merged, merge's non-zero value when it stopped the drive, or
 * -1 when a chunk gave NULL or a thread could not be started. */
int an_drive(int fd, const cap_chunk_plan *plan, int threads,
             const an_driver_ops *ops, void *ctx);

/* What a drive spent where (an_drive_profiled), in seconds. */
typedef struct an_drive_prof {
    size_t chunks;     /* the plan's chunks */
    int threads;       /* threads that ran chunks (the calling one too) */
    double wall_s;     /* the drive, start to the last thread joined */
    double busy_s;     /* wall time in ops.chunk, summed over threads */
    double busy_cpu_s; /* the same as those threads' CPU time */
    double merge_s;    /* the calling thread's wall time in ops.merge */
    double merge_cpu_s; /* the same as its CPU time */
    double wait_s;     /* the calling thread waiting for the next chunk in
                          order (none left to run meanwhile) */
    double ahead_s;    /* other threads waiting, a window ahead of the
                          merge, summed */
} an_drive_prof;

/* an_drive, and when prof is not NULL the time it spent where filled in
 * (*prof zeroed first; two clock reads around each chunk, merge and wait).
 * The same return values and results as an_drive. */
int an_drive_profiled(int fd, const cap_chunk_plan *plan, int threads,
                      const an_driver_ops *ops, void *ctx,
                      an_drive_prof *prof);

#endif
