/*
 * capsum.h - read a whole capture into a summary the reliability tests can
 * check: every result the reader returned, the frames, scope counts per
 * thread name, and the reader's final statistics.
 *
 * Shared by test_crash, test_faults and test_threads. It uses only the
 * public reader API, so it checks what any tool would see.
 */
#ifndef CAPSUM_H
#define CAPSUM_H

#include <stddef.h>
#include <stdint.h>

#include <capture/cap_reader.h>

#define CAPSUM_MAX_THREADS 1024

typedef struct capsum_thread {
    char name[64];      /* "" when the file never named it */
    uint64_t scopes;    /* CAP_EV_SCOPE events of this thread */
    uint64_t roots;     /* ...of depth 0 */
} capsum_thread;

typedef struct capsum {
    cap_result open_result;  /* cap_reader_open's result */
    char open_detail[256];
    /* What cap_reader_next returned until CAP_DONE (or a final error). */
    uint64_t events;
    unsigned truncated;      /* CAP_E_TRUNCATED returns */
    unsigned corrupt;        /* CAP_E_CORRUPT returns */
    cap_result final_error;  /* CAP_DONE, or the error that ended reading */
    char detail[256];        /* cap_reader_detail after the last error */
    /* Frames, in file order. */
    uint64_t *frame_index;
    int64_t *frame_end_ns;
    size_t frames;
    int frames_contiguous;   /* indices are first, first+1, ... */
    /* Scopes. */
    uint64_t scopes;
    capsum_thread threads[CAPSUM_MAX_THREADS]; /* by thread id */
    struct {
        char name[64];
        uint64_t count;
    } names[32];              /* scopes by name text, first 32 names */
    size_t names_n;
    cap_reader_stats stats;   /* final statistics */
} capsum;

/* Read `path` whole. Returns 0 when the reader opened it (see open_result),
 * -1 otherwise. The summary owns memory: free it with capsum_free. */
int capsum_read(capsum *s, const char *path);
void capsum_free(capsum *s);

/* Scopes of the thread named `name` (0 when no such thread). */
uint64_t capsum_thread_scopes(const capsum *s, const char *name);

/* Scopes named `name` (0 when none). */
uint64_t capsum_named(const capsum *s, const char *name);

/* A one-line description for failure messages. */
const char *capsum_describe(const capsum *s, char *buf, size_t n);

/* CLOCK_MONOTONIC now, in nanoseconds. */
uint64_t capsum_mono_ns(void);

#endif
