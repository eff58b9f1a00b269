/*
 * writer/writer_int.h - the writer's state, shared by writer.c (tables,
 * events, blocks, the sink), sections.c (a block's declaration and
 * statistics sections) and writer_live.c (the live sink's chunks).
 * Internal to libcapture.
 */
#ifndef CAP_WRITER_INT_H
#define CAP_WRITER_INT_H

#include <stddef.h>
#include <stdint.h>

#include <zstd.h>

#include "capture/cap_writer.h"
#include "codec/scopes.h"
#include "common/idtab.h"
#include "format/format.h"
#include "writer/writer_live.h"
#include "writer/writer_records.h"

typedef struct wr_open {
    uint32_t name;
    uint64_t begin;
    uint64_t children;
} wr_open;

typedef struct wr_name {
    char *name; /* NULL: id used but never named */
    char *file;
    uint32_t line;
    uint32_t flags;      /* CAP_NAME_WAIT ... (format 1.1) */
    uint64_t block_mark; /* block sequence that already lists it */
} wr_name;

typedef struct wr_thread {
    char *name;
    int declared;
    uint64_t block_mark; /* referenced in this block (blk_decl_threads) */
    uint64_t decl_mark;  /* block sequence that last listed it in THREADS */
    wr_open *stack;
    uint32_t depth, stack_cap;
    uint32_t overflow; /* open scopes past CAP_MAX_DEPTH (dropped) */
    uint64_t last_tick;
    uint64_t events_mark; /* block sequence holding its events */
    uint64_t base, prev;
    uint64_t n_events;
    capf_buf open, tokens, deltas;
    uint64_t dropped, closed_at_end, backwards; /* pending for this block */
    uint64_t stray; /* ends with nothing open (format 1.1), pending */
    capc_se_grp *seg; /* 4.0: its SCOPES_E tables kept for the group */
} wr_thread;

typedef struct wr_track {
    char *name;
    double period;
    int declared;
    uint64_t block_mark;
    uint64_t decl_mark; /* block sequence that last listed it in TRACKS */
    int has_cal;              /* the latest calibration, repeated in each */
    uint64_t cal_gpu, cal_cpu, cal_dev; /* block with this track's spans */
    uint64_t cal_mark;        /* block sequence that already carries it */
    uint64_t untimed, invalid; /* pending */
} wr_track;

typedef struct wr_index {
    uint64_t offset;
    uint64_t first_frame;
    uint64_t frames;
} wr_index;

struct cap_writer {
    int fd;
    int own_fd;
    int sink_is_file;  /* a regular file: never stalls, never SIGPIPE */
    int stall_ms;      /* pipes and sockets: longest wait for progress */
    cap_result err;
    int saved_errno;
    uint64_t pos; /* bytes written from the file header on */
    size_t block_bytes;
    int level;
    unsigned major, minor; /* format version written in the header */
    int v11;        /* the additions of 1.1: name flags, stray ends */
    int frame_list; /* 3.1: the footer's FRAME_LIST is kept (list, n
                       blocks in it); 0 once given up (no memory, or past
                       CAPF_FRAME_LIST_MAX_BYTES): the footer then has
                       none, which a reader reads as 3.0's */
    capf_buf list;
    uint64_t list_n;
    int hurry;      /* 3.0: scopes coded as SCOPES_R while the producer's
                       writer thread is behind (cap__writer_hurry) */
    capc_scopes_enc sc; /* the SCOPES_R and SCOPES_E encoders */
    ZSTD_CCtx *zc;
    /* 4.0: groups of blocks (format-spec "Groups of blocks"). A name,
       thread or track listed in a block of the current group (a mark >=
       grp_first) is not listed again in it; without groups grp_first is
       always seq. The group's blocks are one zstd frame of gz, flushed at
       each block's end. */
    int groups;
    uint64_t grp_first;  /* block sequence of the group's first block */
    size_t grp_raw;      /* raw bytes of the group's blocks so far */
    uint64_t grp_blocks; /* blocks in the group so far */
    uint64_t grp_tick;   /* latest_tick when the group began */
    double grp_max_ns;   /* a group's time (group_max_ms) */
    uint64_t latest_tick; /* latest frame end or clock sample tick */
    int grp_force;       /* a new group at the next block (a live client):
                            set mid-block, that block declares everything */
    int closing;         /* the last block: it ends the group's frame */
    ZSTD_CCtx *gz;

    /* wr_name by id (common/idtab.h): memory follows the ids used, not
       the largest (a crafted capture can use id CAP_MAX_NAME_ID) */
    cap__idtab names;
    wr_thread **threads;
    uint32_t threads_cap;
    wr_track *tracks;
    uint32_t tracks_cap;

    uint64_t seq; /* current block sequence, from 1 */
    size_t approx_raw;
    uint32_t *blk_names;
    size_t blk_names_n, blk_names_cap;
    uint32_t *blk_threads; /* threads with events in the block */
    size_t blk_threads_n, blk_threads_cap;
    uint32_t *blk_decl_threads; /* threads listed in THREADS */
    size_t blk_decl_threads_n, blk_decl_threads_cap;
    uint32_t *blk_tracks;
    size_t blk_tracks_n, blk_tracks_cap;

    capf_buf frames;
    uint64_t frames_n, frame_prev_index, frame_prev_begin;
    capf_buf lframes;        /* 3.1: the block's frames as FRAME_LIST
                                codes them (begins as gaps after the
                                previous end) */
    uint64_t frame_prev_end;
    uint64_t blk_first_frame;
    int have_last_frame;
    uint64_t last_frame_index;
    capf_buf counters;
    uint64_t counters_n, counter_prev_tick;
    capf_buf gpu; /* complete GPU_FRAME and GPU_CAL sections */
    int have_clock; /* the latest sample goes into every block */
    uint64_t clock_tick, clock_mono;

    capf_buf payload, tmp, out;
    wr_index *index;
    size_t index_n, index_cap;

    /* names the records path meets unnamed (writer_records.h) */
    cap__name_fn resolve;
    void *resolve_user;
    /* the live sink (writer_live.h): a copy of every chunk goes to tee */
    cap__tee_fn tee;
    void *tee_user;
    capf_buf meta_pairs; /* META_KV key/value pairs, without their count */
    uint64_t meta_n;
    capf_buf origin_body; /* the ORIGIN section's body */
    uint64_t origin_tick, origin_mono;
    double origin_period;
};

/* ---- tables ------------------------------------------------------------ */

/* Name id's slot when made, else NULL. */
static inline wr_name *name_peek(const cap_writer *w, uint32_t id)
{
    return cap__idtab_peek(&w->names, id);
}

/* Thread tid when declared, else NULL. */
static inline wr_thread *thread_get(cap_writer *w, uint32_t tid)
{
    if (tid >= w->threads_cap)
        return NULL;
    wr_thread *t = w->threads[tid];
    return t && t->declared ? t : NULL;
}

/* ---- errors ------------------------------------------------------------ */

static inline cap_result fail(cap_writer *w, cap_result r)
{
    if (w->err == CAP_OK)
        w->err = r;
    return r;
}

static inline cap_result check(const cap_writer *w)
{
    if (!w)
        return CAP_E_MISUSE;
    if (w->err != CAP_OK)
        return CAP_E_STOPPED;
    return CAP_OK;
}

/* The latest clock sample, then every name, thread and track the writer
 * knows (and, with cals, each track's latest calibration) into p.
 * -1 when out of memory. */
int cap__writer_put_decls(cap_writer *w, capf_buf *p, int cals);

/* writer/sections.c: a block's sections into p (built in w->tmp).
 * NAMES (and NAME_FLAGS) of ids that have a name. */
void cap__writer_put_names(cap_writer *w, capf_buf *p, const uint32_t *ids,
                           size_t n);
/* THREADS of ids; with `group`, only those its group has not listed yet
 * (4.0; each once), which are then marked listed. */
void cap__writer_put_threads(cap_writer *w, capf_buf *p, const uint32_t *ids,
                             size_t n, int group);
/* TRACKS of ids, as cap__writer_put_threads lists threads. */
void cap__writer_put_tracks(cap_writer *w, capf_buf *p, const uint32_t *ids,
                            size_t n, int group);
/* STATS of the block's threads and tracks (drops, stray ends, ...), each
 * count then reset. */
void cap__writer_put_stats(cap_writer *w, capf_buf *p);

#endif
