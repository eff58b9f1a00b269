/*
 * reader_int.h - the reader's state (struct cap_reader) and the helpers
 * that reader.c, scopes.c, frames_only.c and accessors.c share.
 */
#ifndef CAP_READER_INT_H
#define CAP_READER_INT_H

#include "capture/cap_reader.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <zstd.h>

#include "capture/cap_limits.h"
#include "codec/scopes.h"
#include "format/format.h"
#include "round_ns.h"

/* Streaming stores for cap_reader_stream_records: x86-64 has them in its
 * baseline (SSE2); elsewhere records are written as usual. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>
#include <stddef.h>
#define RD_HAVE_STREAM 1
/* scope_pop_rec streams a record as five 8-byte words */
_Static_assert(sizeof(cap_scope_rec) == 40 &&
                   offsetof(cap_scope_rec, children) == 16 &&
                   offsetof(cap_scope_rec, name) == 24 &&
                   offsetof(cap_scope_rec, depth) == 28 &&
                   offsetof(cap_scope_rec, stack) == 32 &&
                   offsetof(cap_scope_rec, reserved) == 36,
               "cap_scope_rec as scope_pop_rec streams it");
#else
#define RD_HAVE_STREAM 0
#endif

/* read_chunk: a damaged chunk whose size is trustworthy (skip it whole). */
#define RD_SKIPPABLE ((cap_result)98)

typedef struct rd_name {
    char *name;
    char *file;
    uint32_t line;
    uint32_t flags; /* NAME_FLAGS (format 1.1), accumulated */
    int used;
    uint64_t sr_pred[2]; /* SCOPES_R: begin, end: the current section's
                            prediction and class (0 when unset) */
    uint8_t sr_cls[2];
} rd_name;

typedef struct rd_track {
    char *name;
    double period;
    int declared;
    int calibrated;
    uint64_t cal_gpu, cal_cpu;
    uint64_t cal_dev; /* the calibration's stated maximum error, ns */
} rd_track;

typedef struct rd_span {
    uint32_t name;
    int32_t parent;
    int measured;
    uint32_t depth;
    uint64_t begin, dur; /* GPU ticks */
    uint64_t self;
} rd_span;

typedef enum sec_state {
    ST_NONE,
    ST_DECLS,
    ST_FRAMES,
    ST_SCOPES,
    ST_COUNTERS,
    ST_GPU
} sec_state;

struct cap_reader {
    FILE *f;
    char *path;
    uint64_t size, off;
    int stream;        /* not a regular file: no size, no seeking */
    uint8_t hb[CAPF_CHUNK_HEADER_LEN]; /* the last chunk header read */
    uint8_t pend[CAPF_CHUNK_HEADER_LEN]; /* stream: a chunk header found by */
    size_t pend_n, pend_pos;             /* resync, read again from here */
    unsigned major, minor;
    char detail[320];

    char **meta_k, **meta_v;
    size_t meta_n;
    char *clock_source;
    double meta_period;
    uint64_t origin_tick, origin_mono;
    int64_t origin_unix;
    int have_meta;

    /* Names by id: ids below RD_PAGE (most captures' every name) in one
     * page made when first used; the others in blocks of RD_PAGE entries,
     * one entry per id used, found through an open-addressing hash
     * (nh_key: id, 0 empty; nh_val: entry index). Ids go up to
     * CAP_MAX_NAME_ID, and what a file claims must not cost what it does
     * not hold: a table by id cost 804 MiB for one id in each 1,024
     * (issue 46). Entries never move. Their texts are in an arena of
     * blocks that never move either (texts). */
    rd_name *page0;
    rd_name **nblk;
    size_t nblk_n, ent_n;
    uint32_t *nh_key, *nh_val;
    size_t nh_cap, nh_n;
    uint32_t max_id;
    struct rd_text {
        char **blk;
        size_t n, cap; /* blocks */
        size_t used, size; /* of the last block */
    } texts;
    char **threads;
    uint32_t threads_cap;
    rd_track tracks[CAP_MAX_TRACKS];

    ZSTD_DCtx *dc;
    /* 4.0: the current group's zstd frame (made when first needed):
       grp_ok while every block of the group so far decoded, grp_end the
       offset right after its last block (where a CONT block must start) */
    ZSTD_DCtx *gdc;
    int grp_ok;
    uint64_t grp_end;
    uint8_t *stored;
    size_t stored_cap;
    uint8_t *raw;
    size_t raw_cap;
    capf_cur sec;     /* remaining sections of the current payload */
    capf_cur body;    /* the section being decoded */
    sec_state state;
    double period;    /* ns per CPU tick for the current block (1.0
                         under cap_reader_set_ticks) */
    double real_period; /* ns per CPU tick for the current block, always */
    int ticks;        /* cap_reader_set_ticks: CPU times in ticks */
    int nt_recs;      /* cap_reader_stream_records (and RD_HAVE_STREAM) */
    int clk_have;     /* the current block's period came from a CLOCK */
    uint64_t clk_tick, clk_mono; /* ... sample: this one */
    uint32_t anc_n;   /* cap_reader_scope_ancestors: the depth of the
                         scope cap_reader_next yielded last (0: none) */
    int last_gpu;     /* cap_reader_next yielded a GPU span last */
    double lim_per;   /* the period fast_lim was made for (0: none yet) */
    uint64_t fast_lim; /* tick counts below it are in cap__round_pos's range */
    int in_footer;
    int finished;     /* CAP_DONE from now on */
    unsigned filter; /* 1u << kind: sections to step over */
    int owe_truncated; /* report CAP_E_TRUNCATED on the next call */
    uint64_t footer_off;

    /* declarations to yield: (kind, id) */
    struct {
        cap_event_kind kind;
        uint32_t id;
    } *decls;
    size_t decls_n, decls_cap, decls_pos;

    /* FRAMES */
    uint64_t left, prev_index, prev_begin;
    uint64_t prev_end; /* FRAME_LIST frames: begins as gaps after it */
    /* SCOPES */
    uint32_t tid;
    uint64_t tick;
    capf_cur deltas;
    uint32_t depth;
    uint32_t stk_name[CAP_MAX_DEPTH];
    uint64_t stk_epred[CAP_MAX_DEPTH]; /* SCOPES_R: the prediction and */
    uint8_t stk_ecls[CAP_MAX_DEPTH];   /* class of each open scope's end */
    uint32_t *sr_set;  /* ids whose predictions the section set */
    size_t sr_set_n, sr_set_cap;
    int sr;           /* the section is SCOPES_R (2.0) */
    int sr_first;     /* its first event (at base) is still to come */

    capc_sr_dec srd;  /* SCOPES_R: each class's two streams */
    capc_se_dec sed;  /* SCOPES_E (3.0): the section's decoder */
    /* 4.0: each thread's SCOPES_E token lists as its latest section in
       the current group left them (by tid, se_carry_n of them); grp_gen
       counts the chunks read that start a group (no CONT flag); with
       se_pend the section in sed (thread se_pend_tid, group se_pend_gen)
       is kept there once the next SCOPES_E section starts (a section is
       left before its end only for damage, which ends the group) */
    capc_se_carry *se_carry;
    size_t se_carry_n;
    uint64_t grp_gen, se_pend_gen;
    uint32_t se_pend_tid;
    int se_pend;
    uint32_t stk_dense[CAP_MAX_DEPTH];
    uint64_t stk_begin[CAP_MAX_DEPTH];
    int64_t stk_begin_ns[CAP_MAX_DEPTH]; /* stk_begin converted, once */
    int bns_stale; /* cap_reader_next_scopes pushed scopes without their
                      stk_begin_ns: converted before events are made */
    uint64_t stk_children[CAP_MAX_DEPTH];
    cap_result pending; /* an error found after a batch's first scopes,
                           reported by the next call */
    uint32_t *arena;    /* batches: copies of the ancestor stacks */
    size_t arena_cap;   /* entries, doubled up to RD_ARENA when a batch
                           ended for want of room */
    int arena_full;
    /* cap_reader_frames_only: the footer's block index, and the frames
     * the current block must yield (-1: decode it whole) */
    int frames_only;
    uint64_t *idx_off, *idx_frames;
    size_t idx_n, idx_pos;
    int64_t expect_frames;
    /* 3.1: the footer's FRAME_LIST, checked against the INDEX (NULL: none,
     * or it disagreed); fl_on: cap_reader_frames_only yields the frames
     * from it, its entries read in turn as blocks (fl_pos) */
    uint8_t *fl;
    size_t fl_len, fl_pos;
    int fl_on;
    int fl_gap;       /* the frames being read are a FRAME_LIST entry's */
    /* COUNTERS */
    uint64_t prev_tick;
    /* GPU */
    rd_span *spans;
    size_t spans_n, spans_cap, span_pos;
    uint32_t *span_stack;
    int32_t *order; /* scratch for self-time */
    uint32_t gpu_track;
    uint64_t gpu_frame;

    cap_reader_stats st;
    uint64_t range_end; /* cap__reader_range: no chunk read at or past it
                           (0: none) */
};

#define RD_PAGE_BITS 10
#define RD_PAGE (1u << RD_PAGE_BITS)
#define RD_ARENA_BLOCK ((size_t)64 << 10)

static inline size_t nh_at(uint32_t id, size_t cap)
{
    uint32_t h = id; /* murmur3's finaliser: consecutive ids spread */
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h & (cap - 1);
}

/* The entry of name id `id`, or NULL when none was ever made. */
static inline rd_name *name_peek(const cap_reader *r, uint32_t id)
{
    if (id < RD_PAGE)
        return id && r->page0 ? &r->page0[id] : NULL;
    if (!r->nh_cap)
        return NULL;
    for (size_t i = nh_at(id, r->nh_cap);; i = (i + 1) & (r->nh_cap - 1)) {
        if (r->nh_key[i] == id) {
            uint32_t e = r->nh_val[i];
            return &r->nblk[e >> RD_PAGE_BITS][e & (RD_PAGE - 1)];
        }
        if (!r->nh_key[i])
            return NULL;
    }
}

/* The hash grown to hold one more id; 0, or -1 when out of memory. */
static inline int nh_grow(cap_reader *r)
{
    if ((r->nh_n + 1) * 2 <= r->nh_cap)
        return 0;
    size_t cap = r->nh_cap ? r->nh_cap * 2 : 1024;
    uint32_t *k = calloc(cap, sizeof *k), *v = malloc(cap * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    for (size_t i = 0; i < r->nh_cap; i++) {
        if (!r->nh_key[i])
            continue;
        size_t j = nh_at(r->nh_key[i], cap);
        while (k[j])
            j = (j + 1) & (cap - 1);
        k[j] = r->nh_key[i];
        v[j] = r->nh_val[i];
    }
    free(r->nh_key);
    free(r->nh_val);
    r->nh_key = k;
    r->nh_val = v;
    r->nh_cap = cap;
    return 0;
}

/* name_slot for an id of RD_PAGE or more, not in the table yet. */
static inline rd_name *name_add(cap_reader *r, uint32_t id)
{
    if (nh_grow(r) != 0)
        return NULL;
    size_t e = r->ent_n;
    if (e >> RD_PAGE_BITS >= r->nblk_n) {
        if ((r->nblk_n & (r->nblk_n - 1)) == 0) { /* 0 or a power of 2 */
            size_t c = r->nblk_n ? r->nblk_n * 2 : 4;
            rd_name **p = realloc(r->nblk, c * sizeof *p);
            if (!p)
                return NULL;
            r->nblk = p;
        }
        if (!(r->nblk[r->nblk_n] = calloc(RD_PAGE, sizeof **r->nblk)))
            return NULL;
        r->nblk_n++;
    }
    size_t i = nh_at(id, r->nh_cap);
    while (r->nh_key[i])
        i = (i + 1) & (r->nh_cap - 1);
    r->nh_key[i] = id;
    r->nh_val[i] = (uint32_t)e;
    r->nh_n++;
    r->ent_n++;
    return &r->nblk[e >> RD_PAGE_BITS][e & (RD_PAGE - 1)];
}

/* The entry of name id `id`, made when missing; NULL when id is out of
 * range or memory is short. */
static inline rd_name *name_slot(cap_reader *r, uint32_t id)
{
    if (id == 0 || id > CAP_MAX_NAME_ID)
        return NULL;
    rd_name *nm;
    if (id < RD_PAGE) {
        if (!r->page0 && !(r->page0 = calloc(RD_PAGE, sizeof *r->page0)))
            return NULL;
        nm = &r->page0[id];
    } else if (!(nm = name_peek(r, id)) && !(nm = name_add(r, id))) {
        return NULL;
    }
    if (id > r->max_id)
        r->max_id = id;
    return nm;
}

/* a + b, wrapping instead of overflowing: a damaged file may hold any
 * value, and what the reader yields for it must be defined. */
static inline int64_t add_ns(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

static inline int64_t to_ns_per(const cap_reader *r, uint64_t tick,
                                double per)
{
    return cap_ticks_ns((int64_t)(tick - r->origin_tick), per);
}

static inline int64_t to_ns(const cap_reader *r, uint64_t tick)
{
    return to_ns_per(r, tick, r->period);
}

/* reader.c */
/* The current block's period starts as the META chunk's. */
void cap__block_clock_reset(cap_reader *r);

/* scopes.c */
/* The next scope event of the current SCOPES section into ev (or the error
 * a batch left pending). */
cap_result cap__scopes_event(cap_reader *r, cap_event *ev);

/* 4.0: r->se_carry made room for thread tid, and the lists of the
 * SCOPES_E section decoded last (se_pend) kept in its thread's entry.
 * -1 when out of memory. */
int cap__se_carry_for(cap_reader *r, uint32_t tid);

#endif
