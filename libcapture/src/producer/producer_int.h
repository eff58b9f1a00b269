/*
 * producer_int.h - the producer's state, shared by producer.c (the
 * registry, the recording threads' slow path, open and close) and
 * writer_thread.c (the thread that drains buffers into the writer).
 * Internal: no header under include/ exposes it.
 */
#ifndef CAP_PRODUCER_INT_H
#define CAP_PRODUCER_INT_H

#include "capture/capture.h"
#include "writer/live.h"
#include "writer/writer_records.h"
#include "producer/sampler.h"
#include "producer/flight.h"

#include <pthread.h>
#include <stdint.h>

#define RESERVE_RECORDS (CAP_MAX_DEPTH + 64)
#define MISC_MAX 1000000u

/* ---- types ------------------------------------------------------------- */

typedef struct dbuf {
    cap__rec *start;
    cap__rec *limit;   /* end of the hot-path area */
    cap__rec *cap_end; /* end including the reserve */
    cap__rec *flushed; /* writer: records before this were encoded */
    cap__rec *final;   /* set when retired: records end here */
    struct dbuf *next;
} dbuf;

struct producer;

typedef struct tstate {
    cap__head head; /* must stay first: cap__tls points here */
    struct producer *p;
    uint32_t tid;
    pthread_mutex_t lock; /* cur, retired, free, exited */
    dbuf *cur;
    dbuf *retired, *retired_tail;
    dbuf *free;
    unsigned free_count; /* atomic reads without the lock */
    unsigned nbufs;
    int dropping;        /* owner thread only */
    uint32_t drop_depth; /* owner thread only */
    uint64_t dropped;    /* scopes dropped so far: written by the owner
                            thread only (no locked instruction on the drop
                            path), read atomically by others */
    uint64_t dropped_seen; /* writer: the part of dropped already counted */
    int exited;
    int skip_depth; /* writer: open scopes ignored by the window */
    struct tstate *next;
} tstate;

typedef enum misc_kind {
    M_THREAD,
    M_FRAME,
    M_COUNTER,
    M_TRACK,
    M_CAL,
    M_GPU,
    M_UNTIMED
} misc_kind;

typedef struct misc {
    misc_kind kind;
    uint32_t id;
    uint64_t tick; /* when it was recorded (window filtering) */
    uint64_t a, b, c;
    double v;
    char *str;
    cap_gpu_span *spans;
} misc;

typedef struct producer {
    cap_writer *w;
    cap__live *live; /* the socket sink, when a listen address was given */
    cap__flight *flight; /* flight mode: the ring the writer writes into */
    pthread_t writer;
    int writer_started;
    pthread_mutex_t lock; /* threads list, misc queue, frames, flags */
    pthread_cond_t cond;
    int stop;
    int wake;     /* work arrived since the writer last looked (a retired
                     buffer, an exited thread); a signal sent while the
                     writer was busy is not lost */
    int closing;  /* atomic */
    int failed;   /* atomic: recording stopped after an error */
    int finished; /* atomic: the fixed window ended */
    int status;   /* atomic cap_result */
    tstate *threads;
    uint32_t next_tid;
    misc *q;
    size_t q_n, q_cap;
    misc *q_spare;       /* writer: the last queue it emptied, handed back
                            so that recording threads do not grow (realloc,
                            page faults, under the lock) a new one each
                            time */
    size_t q_spare_cap;
    uint64_t misc_dropped;
    /* frames */
    uint64_t frame_next;
    int frame_open;
    uint64_t frame_begin;
    uint64_t boundary_tick; /* the latest frame boundary's tick */
    uint64_t current_frame; /* atomic */
    uint32_t ntracks;
    /* options */
    size_t buffer_events;
    unsigned buffers_per_thread;
    unsigned flush_ms;
    /* clock */
    uint64_t origin_tick, origin_mono;
    double period; /* ns per tick; guarded by lock after open */
    uint64_t skip_tick, end_tick; /* window; end 0 = none */
    uint64_t hold; /* writer: events after this tick wait for the next
                      round (flight mode: the latest frame boundary, so
                      that a block ends where a frame does), else max */
    /* the device sampler (sampler.c), writer thread only */
    int sample_on;
    unsigned sample_ms;
    char sample_root[256]; /* tests only: a fake sysfs/procfs tree */
    cap__sampler *sampler;
    uint64_t last_sample; /* monotonic ns */
    /* writer thread only */
    uint8_t *defined;
    uint32_t defined_cap;
    unsigned flags_epoch; /* the registry's, when last refreshed */
    int hurry;             /* the writer told to hurry (hurry_on) */
    uint64_t hurry_blocks; /* blocks it had written then */
    cap_producer_stats stats; /* written under lock */
} producer;

/* ---- shared between producer.c and writer_thread.c --------------------- */

/* One line to the log set by cap_set_log (stderr by default). */
void cap__logf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A tick of the producer's clock and the monotonic ns read beside it. */
void cap__clock_pair(uint64_t *tick, uint64_t *mono);

/* What the registry has for name `id` (its text, where it was first
 * registered, its flags; strings never freed): 1, or 0 for an id never
 * registered. */
int cap__registry_name(uint32_t id, cap__name_info *out);
/* Bumped each time a registered name gains a flag. */
unsigned cap__registry_flags_epoch(void);

/* A buffer of p->buffer_events records plus the reserve, or NULL. */
dbuf *cap__dbuf_new(producer *p);

/* Frees a thread's state and every buffer it holds. */
void cap__tstate_free(tstate *t);

/* The writer's name resolver (cap__writer_set_resolver; user: the
 * producer): what the registry has for an id the writer's bulk path met
 * unnamed, marked as given to the writer. 0, or -1 when unknown. */
int cap__resolve_name(void *user, uint32_t id, cap__name_info *out);

/* The writer thread's body (writer_thread.c); arg is the producer. */
void *cap__writer_main(void *arg);

#endif
