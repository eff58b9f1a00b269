/* model_int.h - what the model's files (analysis/model/) share: the
 * loader's state, the call tree's and the series' structures, and each
 * file's functions that another one calls. Private to analysis/model/:
 * no report includes it.
 *
 * One job a file:
 *   ids.c     tables by name id, names by text
 *   frames.c  the frame index
 *   nodes.c   call-tree nodes and scope rows
 *   series.c  the exact per-frame series, in an arena
 *   pack.c    --frames' values packed, spilled to a temporary file
 *   window.c  bounded memory: frames summarised as they close
 *   pass_*.c  the reports' parts of the load (split, over-time), passes.c
 *   waits.c   which names are waits
 *   scope.c   events into the model (the hot path)
 *   ahead.c   decoding ahead on a second thread
 *   chunks.c  a chunked load on N threads, merged in chunk order
 *   finish.c  after the events: names, rows from nodes
 *   load.c    the load's passes, an_load
 *   walk.c    the series handed out (an_series_scan/rows/walk)
 *   access.c  the public accessors, an_free
 */
#ifndef AN_MODEL_INT_H
#define AN_MODEL_INT_H

#include "model.h"

#include "capture/cap_chunks.h"
#include "capture/cap_limits.h"
#include "bins.h"
#include "load/driver.h"
#include "stats.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/vfs.h> /* statfs: is /tmp in memory? */
#endif

#define NONE UINT32_MAX

typedef struct path_cache {
    int used;
    uint32_t root;
    uint32_t depth;
    uint32_t *name; /* the cached path: pcap entries, grown with the */
    uint32_t *node; /* deepest event (path_grow), so that a capture of */
    uint32_t pcap;  /* 65,536 threads does not cost 8 KiB a thread */
    size_t frame_hint;
    /* the frame ml_frame_at found last, frame_hint's (fr_len 0: none, or
     * one that holds no time) */
    int64_t fr_begin;
    uint64_t fr_len;
    int64_t fr_end;  /* frame_near's last answer's end, INT64_MIN when it
                        was none (cpu_value: a scope ending past it spans
                        frames, or began in none) */
    int in_frames, outside; /* CPU: a scope ran in a frame, in none */
    int first_set;   /* a chunk's loader: first_end holds the end of the
                        thread's first scope in the chunk */
    int64_t first_end;
    /* CPU: the stack of the last scope resolved (sp, in the batch sp_gen):
     * name[0..sp_n) holds its first sp_n entries, so that a scope of that
     * batch with the same stack and depth <= sp_n has its parent at once */
    const uint32_t *sp;
    uint64_t sp_gen;
    uint32_t sp_n;
    /* CPU: the time of the scopes that ended at depth d since the last
     * one at depth d - 1 (the children of the scope open at d - 1), by
     * frame, for a parent that spans frames (span_values): kid[d] the
     * latest frame's, the earlier frames' in pieces (a stack, deepest
     * last). f1 is the frame position + 1, 0 for none. kid holds
     * kid_cap entries, grown with the deepest scope (kids_for): a
     * thread's cache stays small where a capture has thousands. */
    struct kid_sum {
        uint32_t f1;
        uint64_t sum; /* wraps on a crafted file's times (span_values
                         clamps what it takes) */
    } *kid;
    uint32_t kid_cap;
    struct kid_piece {
        uint32_t depth, f1;
        uint64_t sum;
    } *pieces;
    size_t npieces, pieces_cap;
} path_cache;

/* Name id -> value (0: none), for the load's tables by name id: a direct
 * array for ids below ID_DIRECT, a hash above. A capture's ids are small
 * and dense; a crafted one's may lie anywhere up to CAP_MAX_NAME_ID and
 * must not cost a table to the largest (issue 46). */
#define ID_DIRECT 65536u
struct id_map {
    uint32_t *d; /* d[id], dcap entries */
    size_t dcap;
    uint32_t *hk, *hv; /* ids (0: empty) and their values, hcap of each */
    size_t hcap, hn;
};

typedef struct loader {
    an_capture *m;
    const an_options *o;
    cap_reader *r;
    path_cache **threads; /* by tid */
    size_t threads_cap;
    path_cache **tracks;  /* by track */
    size_t tracks_cap;
    uint32_t *row_of;     /* CPU name id -> scope row + 1 (by name) */
    size_t row_of_cap;
    struct id_map counter_of; /* name id -> counter index + 1 */
    int64_t cutoff_ns;
    int have_cutoff;
    /* each node's children, for node_get (private to the load) */
    struct kid_table *kids;
    size_t kids_cap;
    /* each scope row's self time in the frame it last ran in, added to its
     * per-frame series when the row moves on to another frame */
    struct pf_acc *acc;
    size_t acc_cap;
    uint32_t last_tid;
    path_cache *last_cache;
    const struct slot *slot; /* decoding ahead: the batch being applied */
    int64_t cpu_first;       /* the earliest CPU scope's begin, INT64_MAX
                                before one (m->first_ns after the load) */
    uint64_t gen;            /* the batch being applied, counted: two
                                scopes of one batch with the same stack
                                pointer have the same ancestors */
    /* bounded memory (an_options.series_budget): the exact series until
     * they hold `budget` values, then a ring of the last `win` frames per
     * row, each frame's values summarised (emit) once it leaves the ring */
    size_t budget, pf_total;
    int windowed;
    uint32_t win;           /* a power of two */
    uint64_t wbase;         /* the ring holds frames wbase..wbase+win-1 */
    uint64_t whi;           /* the furthest frame noted */
    int64_t *ring;          /* win slots of ring_cap rows' sums: frame f's
                               at (f % win) * ring_cap, a frame's rows
                               side by side */
    size_t ring_cap, ring_rows; /* rows held, rows used */
    an_series_fn visit;     /* an_series_scan: values go there, not into
                               the rows' histograms */
    void *visit_ctx;
    int values_only;        /* visit, rows by name: no call tree, no
                               counters (only the rows' values matter) */
    uint8_t *seen;          /* an_series_walk: the ring's (frame, row)
                               pieces noted, so that a sum of 0 is handed
                               on as the exact series would hold it */
    int fixed_win;          /* an_series_walk: the ring never shortens */
    uint64_t fhi;           /* the furthest frame any piece went to */
    uint64_t lag;           /* max_lag so far (into the model at the end) */
    int tree;               /* build the call tree (not no_tree) */
    int reread;             /* series_reread: max_lag measured for
                               an_series_walk (other loads skip it) */
    int packing;            /* series_reread past the budget: values go
                               to m->pack while it holds them (pack_put) */
    int dropping;           /* series_reread past the budget: values are
                               not kept at all */
    /* over_time_hint: each name id's wait flag as the rows' values are
     * summed (0 unknown, 1 work, 2 wait), and each row's as used */
    struct id_map name_wait;
    uint8_t *row_wait;
    size_t row_wait_cap;
    int reader_busy;        /* the decoding thread holds the reader */
    size_t ot_bytes;        /* the histograms by bin (over_time_hint) */
    /* the lists of names a load adds to (m->threads, m->tracks,
     * m->outside_threads) and the roots of each kind, by name: a new
     * thread is not compared with every earlier one (issue 46: 65,536
     * threads took 86 s) */
    struct str_index {
        uint32_t *slot; /* index + 1, 0: empty */
        size_t cap, n;
    } ix_threads, ix_tracks, ix_outside, ix_roots[2];
    /* node_get's memo: (parent, kind/name) -> child, direct-mapped */
    struct kid_memo {
        uint32_t parent, key, node;
    } memo[4096];
    /* a chunked ml_load (ml_pass_chunks): this loader reads one chunk */
    int chunk;               /* 1: a chunk's loader */
    size_t chunk_index;
    const cap_reader *decl;  /* the footer's reader: the names of threads
                                a chunk's blocks do not declare */
    int inexact;             /* the chunk met what only a whole read
                                gets right (ml_pass_chunks reads whole) */
    int chunked;             /* the load's: its chunks merged, chunk_st
                                their reader statistics */
    cap_reader_stats chunk_st;
} loader;

/* The children of one call-tree node: (kind, name id) -> node, a short
 * array scanned in order, and a hash of it once it grows past KID_SCAN. */
typedef struct kid_table {
    uint32_t n, cap;
    uint64_t *e;      /* key << 32 | child node */
    uint32_t *ht;     /* entry index + 1; NULL while n <= KID_SCAN */
    uint32_t ht_cap;
} kid_table;
#define KID_SCAN 16

typedef struct pf_acc {
    int64_t sum;
    uint32_t frame;   /* NONE: nothing held */
    /* bounded memory: the thread (or GPU track | 1 << 31) the row ran on,
     * whether it ran on more than one, and its time in the frame it last
     * ran in behind the ring (late pieces of one thread's frame, merged);
     * 32 bytes a row */
    uint32_t who;
    int64_t late_sum;
    uint32_t late_frame;
    int multi;
} pf_acc;

typedef struct str_index str_index;

/* A frame with its index, to sort frames that came out of order. */
typedef struct frame_ix {
    an_frame f;
    uint64_t index;
} frame_ix;

/* The exact series' arena: a load with a budget gives its rows' series
 * room for about 4 times the budget's values (a row's arrays take twice
 * its values at most, and each growth leaves the old ones behind), in
 * huge pages. Before it, the series grew by realloc, and their fresh
 * pages were 70 % of a 10 M scope load's page faults. Without huge pages
 * (ml_huge_alloc's NULL) there is no arena: a bump allocator would touch
 * more pages than realloc, which reuses what the series let go. */
#define PF_ARENA_MIN_FILE ((uint64_t)4 << 20)

/* ---- --frames' values packed (series_reread past the budget) ----------
 * Each row's (frame, self time) values as varints in chunks of PACK_CHUNK
 * bytes, taken from slabs of PACK_SLAB chunks: the frame as the step from
 * the row's previous value's frame (>= 1: a row's frames must come in
 * ascending order, each whole, as one thread's scopes give them), the
 * value zigzagged. About 3 bytes a value where the exact series take 12,
 * so that a capture of 10 M scopes needs no second read. Past the pack's
 * memory (max_chunks) every row's bytes so far go to an unlinked
 * temporary file (pack_spill: one piece a row) and the chunks are used
 * again, so that a capture of any length is read once; at the end of the
 * load the rest follows and the slabs are freed (ml_pack_finish). The load
 * gives the pack up (and --frames reads the file again) at a frame out of
 * order, when memory runs out, when the file cannot be made or written
 * (a full disk) or would pass the process's file size limit, or past
 * max_chunks when spilling is off. */
/* 2 MiB slabs, each one huge page where the system gives them on
 * request (ml_huge_alloc): in 256 KiB slabs of 4 KiB pages, the pack's fresh
 * pages were 90 % of --frames' page faults (5,600 of 6,241 on a realistic
 * 10 M scope capture, at about 10 us each on this project's virtual
 * machines) */
enum { PACK_CHUNK = 512, PACK_SLAB = 4096 };
#define PACK_HEAD 8 /* a chunk's next chunk (u32, 0: none) and bytes used */
#define PACK_MIN_BYTES ((size_t)4 << 20) /* in memory before spilling */

typedef struct pack_row {
    uint32_t head, tail; /* chunk numbers + 1; 0: none */
    uint64_t next;       /* the frame after the last one put */
    uint32_t used;       /* bytes used of the tail chunk (its header's
                            count is written when the chunk is left or
                            the pack read: pack_sync) */
} pack_row;

typedef struct pack_piece { /* one row's bytes of one spill, in the file */
    uint64_t off;
    uint32_t len;
    uint32_t row;
} pack_piece;

struct an_pack {
    uint8_t **slab;
    size_t nslab, slab_cap;
    uint32_t nchunks, max_chunks;
    pack_row *row;
    size_t nrow;
    uint64_t values;
    int spill;          /* past max_chunks: ml_spill (else give up) */
    int fd;             /* the temporary file; -1: none yet */
    uint64_t fbytes;    /* bytes written to it */
    pack_piece *piece;  /* in the order written */
    size_t npiece, piece_cap;
};

/* ml_load(): the chunks could not be merged exactly: load again, whole. */
#define LOAD_WHOLE ((cap_result)97)

/* ---- each file's functions that another file calls ---------------------- */

/* ids.c */
char *ml_xstrdup(const char *s);
const char *ml_arr_at(const void *ctx, uint32_t i);
const char *ml_node_at(const void *ctx, uint32_t i);
int ml_id_set(struct id_map *t, uint32_t id, uint32_t v);
int ml_str_add(str_index *ix, uint32_t v,
               const char *(*at)(const void *, uint32_t), const void *ctx);
long ml_str_find(const str_index *ix, const char *name,
                 const char *(*at)(const void *, uint32_t), const void *ctx);
uint32_t ml_id_get(const struct id_map *t, uint32_t id);
void ml_id_free(struct id_map *t);

/* frames.c */
int ml_frame_cmp(const void *a, const void *b);
int ml_frames_in_order(const an_capture *m, size_t i);
long ml_frame_at(const an_capture *m, int64_t t, size_t *hint);
long ml_frame_by_index(const an_capture *m, uint64_t index);
void ml_frame_index_compact(an_capture *m);

/* nodes.c */
long ml_scope_get(an_capture *m, an_kind kind, uint32_t id);
uint32_t ml_node_find(loader *L, uint32_t parent, an_kind kind, uint32_t name,
                      struct kid_memo *mm);
uint32_t ml_root_get(an_capture *m, str_index *ix, an_kind kind,
                     const char *name);

/* series.c */
int ml_pf_add(an_capture *m, an_scope *s, long frame, int64_t self);
int ml_pf_flush(loader *L);
int ml_pf_note(loader *L, long si, long frame, int64_t self, uint32_t who);
int ml_sort_pf(an_scope *s);
size_t ml_env_size(const char *name, size_t dflt);
size_t ml_series_budget(const an_options *o);
void *ml_huge_alloc(size_t bytes);
void ml_pf_arena_free(an_capture *m);
void ml_pf_arena_make(an_capture *m, size_t budget);
void ml_series_free(an_capture *m, an_scope *s);

/* pack.c */
int ml_pack_finish(struct an_pack *p);
int ml_pack_put_new(struct an_pack *p, size_t row, uint64_t frame, int64_t v);
int ml_spill(loader *L);
uint8_t *ml_pack_chunk(const struct an_pack *p, uint32_t c);
void ml_pack_free(struct an_pack *p);
void ml_pack_give_up(loader *L);

/* window.c */
int ml_emit(loader *L, size_t row, uint64_t frame, int64_t v);
int ml_win_flush_all(loader *L);
int ml_win_grow(loader *L, size_t row);
/* 1 when the load's values go only to histograms and frame sums (each
 * row's own, --split's two by population, --over-time's by bin and its
 * frames' sums of work and waits: the ranking's, --tree's, --split's and
 * --over-time's load; no visitor, summary, frame work, --frames reread),
 * so that a frame's values may be added there by whoever has them whole
 * (chunks.c's inner frames). */
int ml_win_hist_only(const loader *L);
/* A row's two --split histograms (pf_pop), made empty at the first need.
 * 0, or -1 when out of memory. */
static inline int ml_row_pops(an_scope *s)
{
    return s->pf_pop || (s->pf_pop = calloc(2, sizeof *s->pf_pop)) ? 0 : -1;
}
int ml_win_note(loader *L, size_t row, uint64_t frame, int64_t self);
uint32_t ml_win_frames(size_t rows);
void ml_win_free(loader *L);

/* waits.c */
int ml_name_is_wait(const loader *L, cap_reader *r, uint32_t id);
int ml_name_wait_set(loader *L, uint32_t id, uint8_t w);
int ml_row_wait_first(loader *L, size_t row);

/* pass_over_time.c */
int ml_ot_merge(an_capture *m);
int ml_ot_drop(an_capture *m);
/* The histograms by bin let go (ml_ot_drop) once L->ot_bytes is past the
 * bound (an_options.ot_hint_bytes, 0: AN_OT_HINT_MAX_BYTES); emit_ot
 * asks after each value, a chunk's merge after its bins. 0, or -1 out of
 * memory. Inline: on emit_ot's path. */
static inline int ml_ot_bound(loader *L)
{
    size_t most = L->o->ot_hint_bytes ? L->o->ot_hint_bytes
                                      : AN_OT_HINT_MAX_BYTES;
    return L->ot_bytes > most ? ml_ot_drop(L->m) : 0;
}
void ml_ot_check(loader *L);
size_t ml_frame_bins(const an_capture *m, int bins, double bin_seconds,
                     uint16_t *bin_of);

/* pass_split.c */
int ml_split_pops(an_capture *m);

/* scope.c */
int ml_add_name(str_index *ix, char ***arr, size_t *n, const char *name);
int ml_apply(loader *L, const cap_event *evs, size_t n);
int ml_apply_recs(loader *L, const cap_scope_rec *rv, size_t n, const uint32_t
                  *stk, uint32_t tid, double per);
int ml_apply_values(loader *L, const cap_event *evs, size_t n);
long ml_cpu_row_slow(loader *L, uint32_t id);
path_cache *ml_cache_for(path_cache ***arr, size_t *cap, uint32_t id);
void ml_path_free(path_cache *c);

/* ahead.c */
cap_result ml_pass_ahead(loader *L, char *detail, size_t dsz);
const char *ml_root_name(const loader *L, an_kind kind, uint32_t id);

/* chunks.c */
cap_result ml_pass_chunks(loader *L, char *detail, size_t dsz, int *used);

/* finish.c */
int ml_resolve_names(loader *L);
void ml_rows_from_nodes(loader *L);

/* load.c */
cap_result ml_file_same(const an_capture *m, char *detail, size_t dsz);
cap_result ml_reader_open(const an_capture *m, cap_reader **r, char *detail,
                          size_t dsz);
cap_result ml_load(an_capture **out, int fd, const char *name,
                   const an_options *opt, an_series_fn visit,
                   void *visit_ctx, const an_capture *src, uint32_t walk_win,
                   char *detail, size_t detail_size);
cap_result ml_read_events(loader *L, char *detail, size_t dsz);
int ml_load_threads(const an_options *o, int fd);
void ml_loader_free(loader *L);
void ml_progress(const loader *L, const char *what, int force_end);

/* ---- the hot path's helpers, inline in every file ----------------------- */

static inline uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

/* Where frame position k's time ends for attribution: its end, or the
 * next frame's begin when that comes first (frames that overlap by a few
 * ns, their marks taken apart), so that each instant is in one frame at
 * most, the last that began before it. */
static inline int64_t frame_until(const an_capture *m, size_t k)
{
    int64_t e = m->frames[k].end_ns;
    if (k + 1 < m->nframes && m->frames[k + 1].begin_ns < e)
        e = m->frames[k + 1].begin_ns;
    return e;
}

/* ml_frame_at with c's hint, its usual answer (the frame it found last,
 * when it holds t) inline in one unsigned comparison. */
__attribute__((always_inline)) static inline long
frame_near(const an_capture *m, int64_t t, path_cache *c)
{
    if ((uint64_t)t - (uint64_t)c->fr_begin < c->fr_len)
        return (long)c->frame_hint;
    long f = ml_frame_at(m, t, &c->frame_hint);
    if (f >= 0) {
        c->fr_begin = m->frames[f].begin_ns;
        c->fr_end = frame_until(m, (size_t)f);
        c->fr_len = (uint64_t)c->fr_end - (uint64_t)c->fr_begin;
    } else {
        c->fr_end = INT64_MIN;
    }
    return f;
}

static inline uint32_t kid_key(an_kind kind, uint32_t name)
{
    return (name << 1) | (uint32_t)kind; /* name ids < 2^24 */
}

__attribute__((always_inline)) static inline uint32_t
node_get(loader *L, uint32_t parent, an_kind kind, uint32_t name)
{
    uint32_t key = kid_key(kind, name);
    struct kid_memo *mm = &L->memo[(parent * 0x9e3779b1u ^ key * 0x85ebca6bu) >>
                                   20];
    if (mm->parent == parent && mm->key == key && mm->node != NONE)
        return mm->node;
    uint32_t node = ml_node_find(L, parent, kind, name, mm);
    if (node != NONE)
        *mm = (struct kid_memo){parent, key, node};
    return node;
}

static inline uint8_t *put_varint(uint8_t *d, uint64_t v)
{
    while (v >= 0x80) {
        *d++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *d++ = (uint8_t)v;
    return d;
}

static inline const uint8_t *get_varint(const uint8_t *s, uint64_t *v)
{
    uint64_t x = 0;
    for (int sh = 0;; sh += 7) {
        uint8_t b = *s++;
        x |= (uint64_t)(b & 0x7f) << sh;
        if (b < 0x80 || sh >= 63)
            break;
    }
    *v = x;
    return s;
}

/* The two varints of a value (the frame as the step from the row's
 * previous one, the value zigzagged) at d: past them. */
static inline uint8_t *pack_write(uint8_t *d, const pack_row *pr,
                                  uint64_t frame, int64_t v)
{
    d = put_varint(d, frame - pr->next + 1);
    uint64_t u = (uint64_t)v;
    return put_varint(d, v < 0 ? ~(u << 1) : u << 1);
}

/* Row `row`'s value v in frame position `frame`: 0, or -1 when the pack
 * cannot take it (past its budget, out of memory, or a frame not after
 * the row's last one): the caller then gives the pack up. */
static inline int pack_put(struct an_pack *p, size_t row, uint64_t frame,
                           int64_t v)
{
    if (row >= p->nrow)
        return ml_pack_put_new(p, row, frame, v);
    pack_row *pr = &p->row[row];
    if (frame < pr->next || !pr->tail || pr->used + 20 > PACK_CHUNK)
        return ml_pack_put_new(p, row, frame, v);
    uint8_t *b = ml_pack_chunk(p, pr->tail);
    pr->used = (uint32_t)(pack_write(b + pr->used, pr, frame, v) - b);
    pr->next = frame + 1;
    p->values++;
    return 0;
}

/* --frames' lag: how far behind the furthest frame seen a value came
 * (max_lag, for an_series_walk), with frame `fr` now. */
static inline void lag_note(loader *L, uint64_t fr)
{
    if (fr > L->fhi)
        L->fhi = fr;
    else if (L->fhi - fr > L->lag)
        L->lag = L->fhi - fr;
}

/* Row si's accumulator a (holding a frame's value, the pack on) moves to
 * `frame`: the held value packed and `self` held, or the pack given up
 * when it cannot take it. */
static inline void pack_move(loader *L, pf_acc *a, size_t si, uint32_t frame,
                             int64_t self)
{
    if (pack_put(L->m->pack, si, a->frame, a->sum) != 0)
        ml_pack_give_up(L);
    else
        a->frame = frame, a->sum = self;
}

/* Whether CPU row `row` is a wait (1) or not (0) as its values are summed
 * (the first answer is kept, and checked against the final flags at the
 * end of the load: ml_ot_check); -1 when out of memory. Inline: asked for
 * every value of a summarised load that sums frames' work. */
static inline int row_wait(loader *L, size_t row)
{
    if (row < L->row_wait_cap && L->row_wait[row])
        return L->row_wait[row] == 2;
    return ml_row_wait_first(L, row);
}

/* Scope row of CPU name id `id` (rows keyed by name): a direct table in
 * front of ml_scope_get's hash, since ids are small and dense. */
static inline long cpu_row(loader *L, uint32_t id)
{
    if (id < L->row_of_cap && L->row_of[id])
        return (long)L->row_of[id] - 1;
    return ml_cpu_row_slow(L, id);
}

#endif
