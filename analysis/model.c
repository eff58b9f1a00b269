/* model.c - reduce a capture to frames, scope rows, a call tree, counters. */
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
    /* the frame frame_at found last, frame_hint's (fr_len 0: none, or
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
    /* a chunked load (pass_chunks): this loader reads one chunk */
    int chunk;               /* 1: a chunk's loader */
    size_t chunk_index;
    const cap_reader *decl;  /* the footer's reader: the names of threads
                                a chunk's blocks do not declare */
    int inexact;             /* the chunk met what only a whole read
                                gets right (pass_chunks reads whole) */
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
    uint32_t frame;   /* NONE: nothing held */
    int64_t sum;
    /* bounded memory: the thread (or GPU track | 1 << 31) the row ran on,
     * whether it ran on more than one, and its time in the frame it last
     * ran in behind the ring (late pieces of one thread's frame, merged) */
    uint32_t who;
    int multi;
    uint32_t late_frame;
    int64_t late_sum;
} pf_acc;

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

/* ---- tables by name id -------------------------------------------------- */

static inline size_t id_slot(uint32_t id, size_t cap)
{
    return (size_t)mix(id) & (cap - 1);
}

static uint32_t id_get(const struct id_map *t, uint32_t id)
{
    if (id < ID_DIRECT)
        return id < t->dcap ? t->d[id] : 0;
    for (size_t i = t->hcap ? id_slot(id, t->hcap) : 0; t->hcap;
         i = (i + 1) & (t->hcap - 1)) {
        if (t->hk[i] == id)
            return t->hv[i];
        if (!t->hk[i])
            break;
    }
    return 0;
}

/* Make id's value v (not 0). 0, or -1 when out of memory. */
static int id_set(struct id_map *t, uint32_t id, uint32_t v)
{
    if (id < ID_DIRECT) {
        if (id >= t->dcap) {
            size_t n = t->dcap ? t->dcap : 64;
            while (n <= id)
                n *= 2;
            uint32_t *p = realloc(t->d, n * sizeof *p);
            if (!p)
                return -1;
            memset(p + t->dcap, 0, (n - t->dcap) * sizeof *p);
            t->d = p;
            t->dcap = n;
        }
        t->d[id] = v;
        return 0;
    }
    if ((t->hn + 1) * 2 > t->hcap) {
        size_t cap = t->hcap ? t->hcap * 2 : 64;
        uint32_t *k = calloc(cap, sizeof *k), *w = malloc(cap * sizeof *w);
        if (!k || !w) {
            free(k);
            free(w);
            return -1;
        }
        for (size_t i = 0; i < t->hcap; i++) {
            if (!t->hk[i])
                continue;
            size_t j = id_slot(t->hk[i], cap);
            while (k[j])
                j = (j + 1) & (cap - 1);
            k[j] = t->hk[i];
            w[j] = t->hv[i];
        }
        free(t->hk);
        free(t->hv);
        t->hk = k;
        t->hv = w;
        t->hcap = cap;
    }
    size_t i = id_slot(id, t->hcap);
    while (t->hk[i] && t->hk[i] != id)
        i = (i + 1) & (t->hcap - 1);
    t->hn += !t->hk[i];
    t->hk[i] = id;
    t->hv[i] = v;
    return 0;
}

static void id_free(struct id_map *t)
{
    free(t->d);
    free(t->hk);
    free(t->hv);
}

/* ---- names by text ------------------------------------------------------ */

typedef struct str_index str_index;

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return mix(h);
}

/* The index i in ix of the text `name`, where at(ctx, i) gives the text
 * of index i; -1 when absent. */
static long str_find(const str_index *ix, const char *name,
                     const char *(*at)(const void *, uint32_t),
                     const void *ctx)
{
    if (!ix->cap)
        return -1;
    size_t mask = ix->cap - 1;
    for (size_t i = str_hash(name) & mask; ix->slot[i]; i = (i + 1) & mask)
        if (strcmp(at(ctx, ix->slot[i] - 1), name) == 0)
            return (long)ix->slot[i] - 1;
    return -1;
}

/* Add index `v` (whose text at() gives) to ix; -1 when out of memory. */
static int str_add(str_index *ix, uint32_t v,
                   const char *(*at)(const void *, uint32_t), const void *ctx)
{
    if ((ix->n + 1) * 2 > ix->cap) {
        size_t cap = ix->cap ? ix->cap * 2 : 64;
        uint32_t *p = calloc(cap, sizeof *p);
        if (!p)
            return -1;
        for (size_t i = 0; i < ix->cap; i++) {
            uint32_t e = ix->slot[i];
            if (!e)
                continue;
            size_t j = str_hash(at(ctx, e - 1)) & (cap - 1);
            while (p[j])
                j = (j + 1) & (cap - 1);
            p[j] = e;
        }
        free(ix->slot);
        ix->slot = p;
        ix->cap = cap;
    }
    size_t j = str_hash(at(ctx, v)) & (ix->cap - 1);
    while (ix->slot[j])
        j = (j + 1) & (ix->cap - 1);
    ix->slot[j] = v + 1;
    ix->n++;
    return 0;
}

static const char *arr_at(const void *ctx, uint32_t i)
{
    return (*(char **const *)ctx)[i];
}

static const char *node_at(const void *ctx, uint32_t i)
{
    return ((const an_capture *)ctx)->nodes[i].name;
}

/* ---- frames ------------------------------------------------------------ */

/* A frame with its index, to sort frames that came out of order. */
typedef struct frame_ix {
    an_frame f;
    uint64_t index;
} frame_ix;

static int frame_cmp(const void *a, const void *b)
{
    const frame_ix *x = a, *y = b;
    if (x->f.begin_ns != y->f.begin_ns)
        return x->f.begin_ns < y->f.begin_ns ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Frames i - 1 and i in the order frame_cmp sorts them. */
static int frames_in_order(const an_capture *m, size_t i)
{
    const an_frame *x = &m->frames[i - 1], *y = &m->frames[i];
    if (x->begin_ns != y->begin_ns)
        return x->begin_ns < y->begin_ns;
    return an_frame_index(m, i - 1) <= an_frame_index(m, i);
}

/* Drop m->frame_index when its indices are frame_index0 + position,
 * increasing (no wrap), as an_frame_index then gives them. */
static void frame_index_compact(an_capture *m)
{
    if (!m->frame_index)
        return;
    for (size_t i = 0; i < m->nframes; i++)
        if (m->frame_index[i] != m->frame_index[0] + i ||
            m->frame_index[i] < m->frame_index[0])
            return;
    m->frame_index0 = m->nframes ? m->frame_index[0] : 0;
    free(m->frame_index);
    m->frame_index = NULL;
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

size_t an_frame_after(const an_capture *m, int64_t t)
{
    size_t lo = 0, hi = m->nframes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->frames[mid].begin_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Position of the frame containing t (up to frame_until), or -1. */
static long frame_at(const an_capture *m, int64_t t, size_t *hint)
{
    size_t n = m->nframes;
    if (!n)
        return -1;
    size_t h = *hint < n ? *hint : 0;
    const an_frame *f = m->frames;
    if (f[h].begin_ns <= t && t < frame_until(m, h))
        return (long)h;
    if (h + 1 < n && f[h + 1].begin_ns <= t && t < frame_until(m, h + 1)) {
        *hint = h + 1;
        return (long)h + 1;
    }
    size_t lo = an_frame_after(m, t);
    if (lo == 0)
        return -1;
    size_t k = lo - 1;
    if (t >= frame_until(m, k) &&
        !(f[k].end_ns == f[k].begin_ns && t == f[k].begin_ns))
        return -1;
    *hint = k;
    return (long)k;
}

/* frame_at with c's hint, its usual answer (the frame it found last,
 * when it holds t) inline in one unsigned comparison. */
__attribute__((always_inline)) static inline long
frame_near(const an_capture *m, int64_t t, path_cache *c)
{
    if ((uint64_t)t - (uint64_t)c->fr_begin < c->fr_len)
        return (long)c->frame_hint;
    long f = frame_at(m, t, &c->frame_hint);
    if (f >= 0) {
        c->fr_begin = m->frames[f].begin_ns;
        c->fr_end = frame_until(m, (size_t)f);
        c->fr_len = (uint64_t)c->fr_end - (uint64_t)c->fr_begin;
    } else {
        c->fr_end = INT64_MIN;
    }
    return f;
}

static long frame_by_index(const an_capture *m, uint64_t index)
{
    if (!m->frame_index) /* frame_index0 + position, increasing */
        return index >= m->frame_index0 && index - m->frame_index0 < m->nframes
                   ? (long)(index - m->frame_index0)
                   : -1;
    size_t lo = 0, hi = m->nframes;
    /* frames are sorted by begin, and indices grow with begin */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->frame_index[mid] < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < m->nframes && m->frame_index[lo] == index)
        return (long)lo;
    return -1;
}

/* ---- nodes and scope rows --------------------------------------------- */

static int ht_grow(uint32_t **ht, size_t *cap, size_t used)
{
    if ((used + 1) * 2 <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 1024;
    uint32_t *t = calloc(n, sizeof *t);
    if (!t)
        return -1;
    free(*ht);
    *ht = t;
    *cap = n;
    return 1; /* caller re-inserts */
}

static uint32_t node_new(an_capture *m, uint32_t parent, an_kind kind,
                         uint32_t name_id, const char *root_name)
{
    if ((m->nnodes & (m->nnodes - 1)) == 0 || m->nnodes == 0) {
        size_t cap = m->nnodes ? m->nnodes * 2 : 64;
        an_node *p = realloc(m->nodes, cap * sizeof *p);
        if (!p)
            return NONE;
        m->nodes = p;
    }
    uint32_t idx = (uint32_t)m->nnodes;
    an_node *n = &m->nodes[idx];
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->kind = kind;
    n->name_id = name_id;
    n->is_root = parent == NONE;
    n->depth = parent == NONE ? 0 : m->nodes[parent].depth + 1;
    n->first_child = n->next_sibling = NONE;
    for (uint32_t a = parent; a != NONE && !m->nodes[a].is_root;
         a = m->nodes[a].parent)
        if (m->nodes[a].name_id == name_id && m->nodes[a].kind == kind) {
            n->recursive = 1;
            break;
        }
    if (root_name) {
        n->name = xstrdup(root_name);
        if (!n->name)
            return NONE;
    }
    m->nnodes++;
    return idx;
}

static uint32_t kid_key(an_kind kind, uint32_t name)
{
    return (name << 1) | (uint32_t)kind; /* name ids < 2^24 */
}

static void kid_ht_put(kid_table *t, uint32_t key, uint32_t entry)
{
    uint32_t mask = t->ht_cap - 1;
    uint32_t i = (uint32_t)mix(key) & mask;
    while (t->ht[i])
        i = (i + 1) & mask;
    t->ht[i] = entry + 1;
}

/* The child of `parent` with (kind, name), made when missing. */
static uint32_t node_find(loader *L, uint32_t parent, an_kind kind,
                          uint32_t name, struct kid_memo *mm);

__attribute__((always_inline)) static inline uint32_t
node_get(loader *L, uint32_t parent, an_kind kind, uint32_t name)
{
    uint32_t key = kid_key(kind, name);
    struct kid_memo *mm = &L->memo[(parent * 0x9e3779b1u ^ key * 0x85ebca6bu) >>
                                   20];
    if (mm->parent == parent && mm->key == key && mm->node != NONE)
        return mm->node;
    uint32_t node = node_find(L, parent, kind, name, mm);
    if (node != NONE)
        *mm = (struct kid_memo){parent, key, node};
    return node;
}

__attribute__((noinline)) static uint32_t
node_find(loader *L, uint32_t parent, an_kind kind, uint32_t name,
          struct kid_memo *mm)
{
    (void)mm;
    an_capture *m = L->m;
    if (parent >= L->kids_cap) {
        size_t n = L->kids_cap ? L->kids_cap : 256;
        while (n <= parent)
            n *= 2;
        kid_table *p = realloc(L->kids, n * sizeof *p);
        if (!p)
            return NONE;
        memset(p + L->kids_cap, 0, (n - L->kids_cap) * sizeof *p);
        L->kids = p;
        L->kids_cap = n;
    }
    uint32_t key = kid_key(kind, name);
    kid_table *t = &L->kids[parent];
    if (!t->ht) {
        for (uint32_t i = 0; i < t->n; i++)
            if ((uint32_t)(t->e[i] >> 32) == key)
                return (uint32_t)t->e[i];
    } else {
        uint32_t mask = t->ht_cap - 1;
        for (uint32_t i = (uint32_t)mix(key) & mask; t->ht[i];
             i = (i + 1) & mask)
            if ((uint32_t)(t->e[t->ht[i] - 1] >> 32) == key)
                return (uint32_t)t->e[t->ht[i] - 1];
    }
    uint32_t node = node_new(m, parent, kind, name, NULL);
    if (node == NONE)
        return NONE;
    t = &L->kids[parent];
    if (t->n == t->cap) {
        uint32_t n = t->cap ? t->cap * 2 : 4;
        uint64_t *e = realloc(t->e, n * sizeof *e);
        if (!e)
            return NONE;
        t->e = e;
        t->cap = n;
    }
    t->e[t->n] = ((uint64_t)key << 32) | node;
    t->n++;
    if (t->n > KID_SCAN && (!t->ht || t->n * 2 > t->ht_cap)) {
        uint32_t hc = t->ht_cap ? t->ht_cap * 2 : 64;
        uint32_t *h = calloc(hc, sizeof *h);
        if (!h)
            return NONE;
        free(t->ht);
        t->ht = h;
        t->ht_cap = hc;
        for (uint32_t i = 0; i < t->n; i++)
            kid_ht_put(t, (uint32_t)(t->e[i] >> 32), i);
    } else if (t->ht) {
        kid_ht_put(t, key, t->n - 1);
    }
    return node;
}

/* The root of kind `kind` named `name`, made when missing (ix: the roots
 * of that kind by name). NONE when out of memory. */
static uint32_t root_get(an_capture *m, str_index *ix, an_kind kind,
                         const char *name)
{
    long i = str_find(ix, name, node_at, m);
    if (i >= 0)
        return (uint32_t)i;
    uint32_t r = node_new(m, NONE, kind, 0, name);
    if (r != NONE && str_add(ix, r, node_at, m) != 0)
        return NONE;
    return r;
}

static uint64_t scope_key(an_kind kind, uint32_t id)
{
    return ((uint64_t)kind << 40) | id;
}

static long scope_get(an_capture *m, an_kind kind, uint32_t id)
{
    uint64_t key = scope_key(kind, id);
    if (m->scope_ht_cap) {
        size_t mask = m->scope_ht_cap - 1;
        size_t i = mix(key) & mask;
        while (m->scope_ht[i]) {
            an_scope *s = &m->scopes[m->scope_ht[i] - 1];
            if (scope_key(s->kind, s->name_id) == key)
                return (long)m->scope_ht[i] - 1;
            i = (i + 1) & mask;
        }
    }
    if ((m->nscopes & (m->nscopes - 1)) == 0 || m->nscopes == 0) {
        size_t cap = m->nscopes ? m->nscopes * 2 : 32;
        an_scope *p = realloc(m->scopes, cap * sizeof *p);
        if (!p)
            return -1;
        m->scopes = p;
    }
    an_scope *s = &m->scopes[m->nscopes];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->name_id = id; /* a node index when by_path */
    s->pf_sorted = 1;
    m->nscopes++;
    int g = ht_grow(&m->scope_ht, &m->scope_ht_cap, m->nscopes);
    if (g < 0)
        return -1;
    size_t mask = m->scope_ht_cap - 1;
    for (size_t k = g > 0 ? 0 : m->nscopes - 1; k < m->nscopes; k++) {
        size_t i = mix(scope_key(m->scopes[k].kind, m->scopes[k].name_id)) &
                   mask;
        while (m->scope_ht[i])
            i = (i + 1) & mask;
        m->scope_ht[i] = (uint32_t)k + 1;
    }
    return (long)m->nscopes - 1;
}

/* model.h: read each time (no state kept between loads). */
int an_huge_pages(void)
{
#ifdef MADV_HUGEPAGE
    char mode[64] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (!fgets(mode, sizeof mode, f))
            mode[0] = 0;
        fclose(f);
    }
    return strstr(mode, "[always]") || strstr(mode, "[madvise]");
#else
    return 0;
#endif
}

/* Where the system makes memory of at least 2 MiB out of huge pages on
 * request (an_huge_pages), bytes (not zeroed) on 2 MiB boundaries, asked
 * as huge pages: a fault each 2 MiB instead of each 4 KiB, which on this
 * project's virtual machines costs about 10 us a fault (a 10 M scope load
 * took 1,650 to 2,460 of them). NULL where it does not, or when out of
 * memory: the caller allocates as usual. Freed with free. */
static void *huge_alloc(size_t bytes)
{
#ifdef MADV_HUGEPAGE
    size_t huge = (size_t)2 << 20;
    if (bytes < huge || !an_huge_pages())
        return NULL;
    void *p = NULL;
    size_t len = (bytes + huge - 1) / huge * huge;
    if (posix_memalign(&p, huge, len) != 0)
        return NULL;
    (void)madvise(p, len, MADV_HUGEPAGE);
    return p;
#else
    (void)bytes;
    return NULL;
#endif
}

/* The exact series' arena: a load with a budget gives its rows' series
 * room for about 4 times the budget's values (a row's arrays take twice
 * its values at most, and each growth leaves the old ones behind), in
 * huge pages. Before it, the series grew by realloc, and their fresh
 * pages were 70 % of a 10 M scope load's page faults. Without huge pages
 * (huge_alloc's NULL) there is no arena: a bump allocator would touch
 * more pages than realloc, which reuses what the series let go. */
#define PF_ARENA_MIN_FILE ((uint64_t)4 << 20)
static size_t env_size(const char *name, size_t dflt);
static void pf_arena_make(an_capture *m, size_t budget)
{
    /* CAP_PF_ARENA_VALUES=N (tests): room for N values, so that the rows
       outgrow it and go on in the heap */
    size_t values = env_size("CAP_PF_ARENA_VALUES", budget * 4 + 16384);
    size_t bytes = values * (sizeof(int64_t) + sizeof(uint32_t)),
           huge = (size_t)2 << 20;
    m->pf_arena = huge_alloc(bytes < huge ? huge : bytes);
    m->pf_arena_len = m->pf_arena ? bytes : 0;
    m->pf_arena_used = 0;
}

static int pf_in_arena(const an_capture *m, const void *p)
{
    const unsigned char *q = p;
    return q && m->pf_arena && q >= m->pf_arena &&
           q < m->pf_arena + m->pf_arena_len;
}

/* Let go of the arena, once no row's series is in it. */
static void pf_arena_free(an_capture *m)
{
    if (m->pf_arena_used > m->pf_arena_peak)
        m->pf_arena_peak = m->pf_arena_used;
    free(m->pf_arena);
    m->pf_arena = NULL;
    m->pf_arena_len = m->pf_arena_used = 0;
}

/* Row s's series made room for n values (n > pf_n): from the arena while
 * it has room, else from the heap. 0, or -1 out of memory. */
static int pf_grow(an_capture *m, an_scope *s, size_t n)
{
    size_t need = n * (sizeof(int64_t) + sizeof(uint32_t));
    int64_t *b;
    uint32_t *a;
    int old_in = pf_in_arena(m, s->pf_self);
    if (m->pf_arena && (n & 1) == 0 &&
        m->pf_arena_len - m->pf_arena_used >= need) {
        /* the values first: n even keeps the next ones 8-aligned */
        b = (int64_t *)(void *)(m->pf_arena + m->pf_arena_used);
        a = (uint32_t *)(void *)(b + n);
        m->pf_arena_used += need;
    } else {
        b = malloc(n * sizeof *b);
        a = malloc(n * sizeof *a);
        if (!a || !b) {
            free(a);
            free(b);
            return -1;
        }
    }
    if (s->pf_n) {
        memcpy(b, s->pf_self, s->pf_n * sizeof *b);
        memcpy(a, s->pf_frame, s->pf_n * sizeof *a);
    }
    if (!old_in) {
        free(s->pf_self);
        free(s->pf_frame);
    }
    s->pf_self = b;
    s->pf_frame = a;
    s->pf_cap = n;
    return 0;
}

static int pf_add(an_capture *m, an_scope *s, long frame, int64_t self)
{
    if (frame < 0)
        return 0;
    uint32_t f = (uint32_t)frame;
    if (s->pf_n && s->pf_frame[s->pf_n - 1] == f) {
        cap_stats_sat_add(&s->pf_self[s->pf_n - 1], self);
        return 0;
    }
    if (s->pf_n == s->pf_cap &&
        pf_grow(m, s, s->pf_cap ? s->pf_cap * 2 : 16) != 0)
        return -1;
    if (s->pf_n && s->pf_frame[s->pf_n - 1] > f)
        s->pf_sorted = 0;
    s->pf_frame[s->pf_n] = f;
    s->pf_self[s->pf_n] = self;
    s->pf_n++;
    return 1;
}

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
 * load the rest follows and the slabs are freed (pack_finish). The load
 * gives the pack up (and --frames reads the file again) at a frame out of
 * order, when memory runs out, when the file cannot be made or written
 * (a full disk) or would pass the process's file size limit, or past
 * max_chunks when spilling is off. */
/* 2 MiB slabs, each one huge page where the system gives them on
 * request (huge_alloc): in 256 KiB slabs of 4 KiB pages, the pack's fresh
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
    int spill;          /* past max_chunks: spill (else give up) */
    int fd;             /* the temporary file; -1: none yet */
    uint64_t fbytes;    /* bytes written to it */
    pack_piece *piece;  /* in the order written */
    size_t npiece, piece_cap;
};

static uint8_t *pack_chunk(const struct an_pack *p, uint32_t c)
{
    c--;
    return p->slab[c / PACK_SLAB] + (size_t)(c % PACK_SLAB) * PACK_CHUNK;
}

static void pack_free_slabs(struct an_pack *p)
{
    for (size_t i = 0; i < p->nslab; i++)
        free(p->slab[i]);
    free(p->slab);
    p->slab = NULL;
    p->nslab = p->slab_cap = 0;
}

static void pack_free(struct an_pack *p)
{
    if (!p)
        return;
    pack_free_slabs(p);
    if (p->fd >= 0)
        close(p->fd);
    free(p->piece);
    free(p->row);
    free(p);
}

/* A new chunk, after `prev` (0: the row's first); 0 past max_chunks or
 * out of memory. */
static uint32_t pack_new_chunk(struct an_pack *p, uint32_t prev)
{
    if (p->nchunks >= p->max_chunks)
        return 0;
    if (p->nchunks / PACK_SLAB >= p->nslab) {
        size_t bytes = (size_t)PACK_SLAB * PACK_CHUNK;
        if (an_grow((void **)&p->slab, &p->slab_cap, p->nslab + 1,
                    sizeof *p->slab) != 0 ||
            (!(p->slab[p->nslab] = huge_alloc(bytes)) &&
             !(p->slab[p->nslab] = malloc(bytes))))
            return 0;
        p->nslab++;
    }
    uint32_t c = ++p->nchunks;
    uint8_t *b = pack_chunk(p, c);
    memset(b, 0, PACK_HEAD);
    if (prev)
        memcpy(pack_chunk(p, prev), &c, sizeof c);
    return c;
}

#ifdef __linux__
#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
/* 1 when dir is a tmpfs (its files in memory), 0 otherwise or unknown. */
static int in_memory(const char *dir)
{
    struct statfs sf;
    return statfs(dir, &sf) == 0 && (unsigned long)sf.f_type == TMPFS_MAGIC;
}
#else
static int in_memory(const char *dir)
{
    (void)dir;
    return 0;
}
#endif

const char *an_spill_dir(const char *tmpdir, const char *tmp,
                         const char *var_tmp)
{
    if (tmpdir && *tmpdir)
        return tmpdir;
    if (in_memory(tmp) && access(var_tmp, W_OK | X_OK) == 0 &&
        !in_memory(var_tmp))
        return var_tmp;
    return tmp;
}

/* An unlinked temporary file in an_spill_dir's choice: its descriptor, or
 * -1. */
static int pack_tempfile(void)
{
    const char *dir = an_spill_dir(getenv("TMPDIR"), "/tmp", "/var/tmp");
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/capture-pack-XXXXXX", dir) >=
        (int)sizeof path)
        return -1;
    int fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0)
        unlink(path);
    return fd;
}

static int write_all(int fd, const uint8_t *b, size_t n)
{
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The tail chunk's header made to count its bytes. */
static void pack_sync(struct an_pack *p, const pack_row *pr)
{
    uint16_t used = (uint16_t)pr->used;
    memcpy(pack_chunk(p, pr->tail) + 4, &used, sizeof used);
}

/* Every row's bytes in memory appended to the temporary file, one piece a
 * row, and the chunks emptied for reuse (each row's next frame kept): 0,
 * or -1 (spilling off, no file, a failed write: the caller gives the
 * pack up). */
static int pack_spill(struct an_pack *p)
{
    if (!p->spill)
        return -1;
    /* past a file size limit (ulimit -f) a write would raise SIGXFSZ,
       which ends the program: give up before */
    struct rlimit fl;
    if (getrlimit(RLIMIT_FSIZE, &fl) == 0 && fl.rlim_cur != RLIM_INFINITY &&
        p->fbytes + (uint64_t)p->nchunks * PACK_CHUNK > (uint64_t)fl.rlim_cur)
        return -1;
    if (p->fd < 0 && (p->fd = pack_tempfile()) < 0)
        return -1;
    uint8_t buf[1 << 16];
    size_t nb = 0;
    for (size_t r = 0; r < p->nrow; r++) {
        pack_row *pr = &p->row[r];
        if (!pr->head)
            continue;
        if (an_grow((void **)&p->piece, &p->piece_cap, p->npiece + 1,
                    sizeof *p->piece) != 0)
            return -1;
        pack_sync(p, pr);
        pack_piece *pc = &p->piece[p->npiece++];
        pc->off = p->fbytes + nb;
        pc->row = (uint32_t)r;
        size_t len = 0;
        for (uint32_t c = pr->head; c;) {
            const uint8_t *b = pack_chunk(p, c);
            uint16_t used;
            memcpy(&used, b + 4, sizeof used);
            size_t n = (size_t)used - PACK_HEAD;
            if (nb + n > sizeof buf) {
                if (write_all(p->fd, buf, nb) != 0)
                    return -1;
                p->fbytes += nb;
                nb = 0;
            }
            memcpy(buf + nb, b + PACK_HEAD, n);
            nb += n;
            len += n;
            memcpy(&c, b, sizeof c);
        }
        if (len > UINT32_MAX)
            return -1;
        pc->len = (uint32_t)len;
        pr->head = pr->tail = 0;
    }
    if (nb && write_all(p->fd, buf, nb) != 0)
        return -1;
    p->fbytes += nb;
    p->nchunks = 0;
    return 0;
}

/* The end of the load: a pack that spilled puts the rest in its file and
 * frees its slabs. 0, or -1 (give the pack up). */
static int pack_finish(struct an_pack *p)
{
    if (p->fd < 0) {
        for (size_t r = 0; r < p->nrow; r++)
            if (p->row[r].tail)
                pack_sync(p, &p->row[r]);
        return 0;
    }
    if (pack_spill(p) != 0)
        return -1;
    pack_free_slabs(p);
    return 0;
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

/* pack_put where the row is new, its tail chunk full or none (out of
 * line: once in about 40 values of a row). */
__attribute__((noinline)) static int pack_put_new(struct an_pack *p,
                                                  size_t row, uint64_t frame,
                                                  int64_t v)
{
    if (row >= p->nrow) {
        size_t n = p->nrow ? p->nrow : 64;
        while (n <= row)
            n *= 2;
        pack_row *q = realloc(p->row, n * sizeof *q);
        if (!q)
            return -1;
        memset(q + p->nrow, 0, (n - p->nrow) * sizeof *q);
        p->row = q;
        p->nrow = n;
    }
    pack_row *pr = &p->row[row];
    if (frame < pr->next)
        return -1;
    if (!pr->tail || pr->used + 20 > PACK_CHUNK) { /* two varints: <= 20 */
        if (pr->tail)
            pack_sync(p, pr);
        uint32_t c = pack_new_chunk(p, pr->tail);
        if (!c && p->nchunks >= p->max_chunks && pack_spill(p) == 0)
            c = pack_new_chunk(p, 0); /* every row starts a new piece */
        if (!c)
            return -1;
        if (!pr->head)
            pr->head = c;
        pr->tail = c;
        pr->used = PACK_HEAD;
    }
    uint8_t *b = pack_chunk(p, pr->tail);
    pr->used = (uint32_t)(pack_write(b + pr->used, pr, frame, v) - b);
    pr->next = frame + 1;
    p->values++;
    return 0;
}

/* Row `row`'s value v in frame position `frame`: 0, or -1 when the pack
 * cannot take it (past its budget, out of memory, or a frame not after
 * the row's last one): the caller then gives the pack up. */
static inline int pack_put(struct an_pack *p, size_t row, uint64_t frame,
                           int64_t v)
{
    if (row >= p->nrow)
        return pack_put_new(p, row, frame, v);
    pack_row *pr = &p->row[row];
    if (frame < pr->next || !pr->tail || pr->used + 20 > PACK_CHUNK)
        return pack_put_new(p, row, frame, v);
    uint8_t *b = pack_chunk(p, pr->tail);
    pr->used = (uint32_t)(pack_write(b + pr->used, pr, frame, v) - b);
    pr->next = frame + 1;
    p->values++;
    return 0;
}

/* The pack let go: --frames reads the file again (an_series_walk). */
static void pack_give_up(loader *L)
{
    pack_free(L->m->pack);
    L->m->pack = NULL;
    L->packing = 0;
    L->dropping = 1;
    for (size_t i = 0; i < L->acc_cap; i++)
        L->acc[i].frame = NONE;
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
        pack_give_up(L);
    else
        a->frame = frame, a->sum = self;
}

/* Scope row si ran `self` ns in frame position `frame` (< 0: in none):
 * held in the row's accumulator while the row stays in one frame, added to
 * its series (pf_add) when it moves on, and by pf_flush at the end. The
 * series is the same as with pf_add called for every scope. */
static int win_note(loader *L, size_t row, uint64_t frame, int64_t self);
static uint32_t win_frames(size_t rows);
static int spill(loader *L);

static int pf_note(loader *L, long si, long frame, int64_t self, uint32_t who)
{
    if (frame < 0)
        return 0;
    if (L->reread) { /* --frames: its lag measured, its values let go */
        lag_note(L, (uint64_t)frame);
        if (L->dropping)
            return 0;
    }
    if ((size_t)si >= L->acc_cap) {
        size_t n = L->acc_cap ? L->acc_cap : 256;
        while (n <= (size_t)si)
            n *= 2;
        pf_acc *p = realloc(L->acc, n * sizeof *p);
        if (!p)
            return -1;
        for (size_t i = L->acc_cap; i < n; i++)
            p[i] = (pf_acc){NONE, 0, NONE, 0, NONE, 0};
        L->acc = p;
        L->acc_cap = n;
    }
    pf_acc *a = &L->acc[si];
    if (a->who != who) {
        a->multi |= a->who != NONE;
        a->who = who;
    }
    if (L->windowed)
        return win_note(L, (size_t)si, (uint64_t)frame, self);
    if (a->frame == (uint32_t)frame) {
        cap_stats_sat_add(&a->sum, self);
        return 0;
    }
    if (a->frame != NONE && L->packing) {
        pack_move(L, a, (size_t)si, (uint32_t)frame, self);
        return 0;
    }
    if (a->frame != NONE) {
        int k = pf_add(L->m, &L->m->scopes[si], (long)a->frame, a->sum);
        if (k < 0)
            return -1;
        if (k > 0 && L->budget && ++L->pf_total > L->budget) {
            a->frame = (uint32_t)frame;
            a->sum = self;
            return spill(L);
        }
    }
    a->frame = (uint32_t)frame;
    a->sum = self;
    return 0;
}

static int win_flush_all(loader *L);

static int pf_flush(loader *L)
{
    if (L->windowed)
        return win_flush_all(L);
    for (size_t i = 0; L->packing && i < L->acc_cap; i++) {
        pf_acc *a = &L->acc[i];
        if (a->frame != NONE && pack_put(L->m->pack, i, a->frame, a->sum) != 0)
            pack_give_up(L);
        a->frame = NONE;
    }
    if (L->packing) {
        if (pack_finish(L->m->pack) != 0)
            pack_give_up(L);
        else
            L->m->pack_file_bytes = L->m->pack->fbytes;
    }
    for (size_t i = 0; i < L->acc_cap && i < L->m->nscopes; i++) {
        pf_acc *a = &L->acc[i];
        if (a->frame != NONE &&
            pf_add(L->m, &L->m->scopes[i], (long)a->frame, a->sum) < 0)
            return -1;
        a->frame = NONE;
    }
    return 0;
}

/* ---- bounded memory: per-frame values summarised as frames close -------
 * Every value of a frame has arrived once the file has moved `win`
 * frames past it (the writer interleaves the threads' buffers, each a
 * short stretch of time); a value that comes later still is summarised
 * on its own and counted (late_values). */

/* Each row's histogram over all frames from its histograms by bin. */
static int ot_merge(an_capture *m)
{
    for (size_t i = 0; i < m->nscopes; i++)
        for (size_t b = 0; m->scopes[i].pf_bin && b < m->ot_nbins; b++)
            if (an_hist_merge(&m->scopes[i].pf_hist,
                              &m->scopes[i].pf_bin[b]) != 0)
                return -1;
    return 0;
}

/* The histograms by bin outgrew AN_OT_HINT_MAX_BYTES: merged into each
 * row's and let go (an_over_time_compute then reads the file again). */
static int ot_drop(an_capture *m)
{
    if (ot_merge(m) != 0)
        return -1;
    for (size_t i = 0; i < m->nscopes; i++) {
        for (size_t b = 0; m->scopes[i].pf_bin && b < m->ot_nbins; b++)
            an_hist_free(&m->scopes[i].pf_bin[b]);
        free(m->scopes[i].pf_bin);
        m->scopes[i].pf_bin = NULL;
    }
    free(m->ot_bin);
    free(m->ot_cpu_ms);
    free(m->ot_wait_ms);
    m->ot_bin = NULL;
    m->ot_cpu_ms = NULL;
    m->ot_wait_ms = NULL;
    m->ot_sums = 0;
    m->ot_nbins = 0;
    return 0;
}

/* 1 when name id `id` is a wait: the producer's flag, or a wait_globs
 * match on its display name (as an_mark_waits sees it). */
static int name_is_wait(const loader *L, cap_reader *r, uint32_t id)
{
    if (cap_reader_name_flags(r, id) & CAP_NAME_WAIT)
        return 1;
    if (!L->o->nwait_globs)
        return 0;
    const char *nm = cap_reader_name(r, id);
    char buf[48];
    if (!nm) {
        snprintf(buf, sizeof buf, "<unnamed #%u>", id);
        nm = buf;
    }
    for (size_t i = 0; i < L->o->nwait_globs; i++)
        if (fnmatch(L->o->wait_globs[i], nm, 0) == 0)
            return 1;
    return 0;
}

/* Make *p hold at least `need` bytes, the new ones 0. */
static int grow_zero(uint8_t **p, size_t *cap, size_t need)
{
    size_t old = *cap;
    if (an_grow((void **)p, cap, need, 1) != 0)
        return -1;
    memset(*p + old, 0, *cap - old);
    return 0;
}

/* Note name id `id`'s wait flag (w: 1 work, 2 wait). */
static int name_wait_set(loader *L, uint32_t id, uint8_t w)
{
    return id_set(&L->name_wait, id, w);
}

/* row_wait for a row met the first time. */
static int row_wait_first(loader *L, size_t row)
{
    an_capture *m = L->m;
    const an_scope *s = &m->scopes[row];
    uint32_t id = L->o->by_path ? m->nodes[s->name_id].name_id : s->name_id;
    uint8_t w = (uint8_t)id_get(&L->name_wait, id);
    if (!w && !L->reader_busy) {
        w = name_is_wait(L, L->r, id) ? 2 : 1;
        if (name_wait_set(L, id, w) != 0)
            return -1;
    }
    if (!w) /* not carried by the decoding thread: cannot be */
        w = 1, m->ot_sums = 0;
    if (grow_zero(&L->row_wait, &L->row_wait_cap, row + 1) != 0)
        return -1;
    L->row_wait[row] = w;
    return w == 2;
}

/* Whether CPU row `row` is a wait (1) or not (0) as its values are summed
 * (the first answer is kept, and checked against the final flags at the
 * end of the load: ot_check); -1 when out of memory. Inline: asked for
 * every value of a summarised load that sums frames' work. */
static inline int row_wait(loader *L, size_t row)
{
    if (row < L->row_wait_cap && L->row_wait[row])
        return L->row_wait[row] == 2;
    return row_wait_first(L, row);
}

/* At the end of the load, the flags final: the sums stand only if every
 * row was summed under its final flag. */
static void ot_check(loader *L)
{
    an_capture *m = L->m;
    for (size_t i = 0; m->ot_sums && i < m->nscopes && i < L->row_wait_cap;
         i++)
        if (L->row_wait[i] && (L->row_wait[i] == 2) != !!m->scopes[i].is_wait)
            m->ot_sums = 0;
    if (!m->ot_sums) {
        free(m->ot_cpu_ms);
        free(m->ot_wait_ms);
        free(m->frame_work_ms);
        m->ot_cpu_ms = m->ot_wait_ms = NULL;
        m->frame_work_ms = NULL;
    }
}

static int emit_ot(loader *L, size_t row, uint64_t frame, int64_t v);

/* A row's final self time in a frame. */
/* 1 when emit does nothing but add a non-zero value to its row's
 * histogram: no visitor, no summary callback, no split populations, no
 * over-time bins (the ranking's load). Kept beside emit, whose cases it
 * names. */
static inline int emit_is_hist(const loader *L)
{
    return !L->visit && !L->o->summary_fn && !L->m->pop_of && !L->m->ot_bin &&
           !L->o->frame_work;
}

/* an_options.frame_work (no over-time bins): a CPU row's value into its
 * frame's work unless the row is a wait (as emit_ot sums, in floats: 4
 * bytes a frame). */
static inline int emit_work(loader *L, size_t row, uint64_t frame,
                            int64_t v)
{
    an_capture *m = L->m;
    if (m->scopes[row].kind != AN_CPU || !m->ot_sums || frame >= m->nframes)
        return 0;
    int w = row_wait(L, row); /* 1: a wait */
    if (w != 0)
        return w < 0 ? -1 : 0;
    if (!m->frame_work_ms &&
        !(m->frame_work_ms = calloc(m->nframes ? m->nframes : 1,
                                    sizeof *m->frame_work_ms)))
        return -1;
    m->frame_work_ms[frame] += (float)((double)v / 1e6);
    return 0;
}

static int emit(loader *L, size_t row, uint64_t frame, int64_t v)
{
    if (v == 0 && !L->seen)
        return 0;
    if (L->visit) {
        L->visit(L->visit_ctx, row, (size_t)frame, v);
        return 0;
    }
    an_capture *m = L->m;
    if (L->o->summary_fn)
        L->o->summary_fn(L->o->summary_ctx, m, row, (size_t)frame, v);
    if (L->o->frame_work && !m->ot_bin && emit_work(L, row, frame, v) != 0)
        return -1;
    an_scope *s = &m->scopes[row];
    if (m->pop_of && frame < m->nframes && m->pop_of[frame] < 2 &&
        an_hist_add(&s->pf_pop[m->pop_of[frame]], v) != 0)
        return -1;
    if (m->ot_bin && frame < m->nframes)
        return emit_ot(L, row, frame, v);
    return an_hist_add(&s->pf_hist, v);
}

/* emit's --over-time hint: the row's histogram of the frame's bin, and
 * the frame's sum of work or of waits. Inline: the ranking's load takes
 * its values past emit (emit_is_hist), so its code does not grow, and
 * --over-time saves a call a value (2.5 % of its instructions). */
static inline int emit_ot(loader *L, size_t row, uint64_t frame, int64_t v)
{
    an_capture *m = L->m;
    an_scope *s = &m->scopes[row];
    {
        if (!s->pf_bin) {
            if (!(s->pf_bin = calloc(m->ot_nbins, sizeof *s->pf_bin)))
                return -1;
            L->ot_bytes += m->ot_nbins * sizeof *s->pf_bin;
        }
        double **sum = NULL;
        if (s->kind == AN_CPU && m->ot_sums) {
            int w = row_wait(L, row);
            if (w < 0)
                return -1;
            sum = w ? &m->ot_wait_ms : &m->ot_cpu_ms;
            if (!*sum && !(*sum = calloc(m->nframes, sizeof **sum)))
                return -1;
        }
        an_hist *h = &s->pf_bin[m->ot_bin[frame]];
        uint32_t held = h->pos.n + h->neg.n;
        if (an_hist_add(h, v) != 0)
            return -1;
        L->ot_bytes += (size_t)(h->pos.n + h->neg.n - held) * sizeof *h->pos.c;
        if (sum) /* in row order, as over_time.c sums them */
            (*sum)[frame] += (double)v / 1e6;
        /* pf_hist: the bins' merged at the end (ot_merge) */
        size_t most = L->o->ot_hint_bytes ? L->o->ot_hint_bytes
                                          : AN_OT_HINT_MAX_BYTES;
        return L->ot_bytes > most ? ot_drop(m) : 0;
    }
}

static int win_emit_frame(loader *L, uint64_t frame)
{
    if (!L->ring)
        return 0;
    size_t at = (size_t)(frame & (L->win - 1)) * L->ring_cap;
    int64_t *g = L->ring + at;
    if (!L->seen) {
        const int hist = emit_is_hist(L); /* the ranking's usual load */
        an_scope *sc = L->m->scopes;
        for (size_t r = 0; r < L->ring_rows; r++) {
            if (g[r]) {
                int64_t v = g[r];
                g[r] = 0;
                if ((hist ? an_hist_add(&sc[r].pf_hist, v)
                          : emit(L, r, frame, v)) != 0)
                    return -1;
            }
        }
        return 0;
    }
    uint8_t *sn = L->seen + at; /* an_series_walk: zeros too */
    for (size_t r = 0; r < L->ring_rows; r++) {
        if (sn[r]) {
            int64_t v = g[r];
            g[r] = 0;
            sn[r] = 0;
            if (emit(L, r, frame, v) != 0)
                return -1;
        }
    }
    return 0;
}

/* A piece behind the ring: merged with the row's other pieces of that
 * frame while they come in a run (one thread's), else summarised alone;
 * counted when the row runs on several threads, whose pieces of one
 * frame may then have been summarised apart. */
static int win_late(loader *L, size_t row, uint64_t frame, int64_t self)
{
    pf_acc *a = &L->acc[row];
    if (a->multi)
        L->m->late_values++;
    if (a->late_frame == frame) {
        cap_stats_sat_add(&a->late_sum, self);
        return 0;
    }
    if (a->late_frame != NONE && emit(L, row, a->late_frame, a->late_sum) != 0)
        return -1;
    a->late_frame = (uint32_t)frame;
    a->late_sum = self;
    return 0;
}

/* n zeroed int64_t for the ring. Its 2 MiB are written all over within
 * a few frames: asked as one huge page where the system gives them on
 * request (huge_alloc), one fault instead of 512. Freed with free. */
static int64_t *ring_alloc(size_t n)
{
    size_t bytes = n * sizeof(int64_t);
    int64_t *p = huge_alloc(bytes);
    if (p) {
        memset(p, 0, bytes);
        return p;
    }
    return calloc(n, sizeof(int64_t));
}

/* The ring made to hold rows up to `row` (ring_cap a power of two past
 * it), its frames copied over. 0, or -1 when out of memory. */
static int win_grow(loader *L, size_t row)
{
    size_t n = L->ring_cap ? L->ring_cap : 64;
    while (n <= row)
        n *= 2;
    /* more rows: a shorter ring, so that it stays near 2 MiB (its
       oldest frames are summarised first) */
    uint32_t nw = win_frames(n);
    if (nw > L->win || L->fixed_win)
        nw = L->win;
    uint64_t nb = L->whi + 1 > nw ? L->whi + 1 - nw : 0;
    for (; L->wbase < nb; L->wbase++)
        if (win_emit_frame(L, L->wbase) != 0)
            return -1;
    int64_t *p = ring_alloc((size_t)nw * n);
    uint8_t *q = L->seen ? calloc((size_t)nw * n, 1) : NULL;
    if (!p || (L->seen && !q)) {
        free(p);
        return -1;
    }
    for (uint64_t f = L->wbase; L->ring && f < L->wbase + nw; f++) {
        memcpy(p + (size_t)(f & (nw - 1)) * n,
               L->ring + (size_t)(f & (L->win - 1)) * L->ring_cap,
               L->ring_rows * sizeof *p);
        if (q)
            memcpy(q + (size_t)(f & (nw - 1)) * n,
                   L->seen + (size_t)(f & (L->win - 1)) * L->ring_cap,
                   L->ring_rows);
    }
    free(L->ring);
    L->ring = p;
    if (q) {
        free(L->seen);
        L->seen = q;
    }
    L->ring_cap = n;
    L->win = nw;
    if (!L->visit)
        L->m->win = nw;
    return 0;
}

static int win_note(loader *L, size_t row, uint64_t frame, int64_t self)
{
    if (row >= L->ring_cap && win_grow(L, row) != 0)
        return -1;
    if (frame < L->wbase)
        return win_late(L, row, frame, self);
    if (frame - L->wbase >= L->win) {
        uint64_t to = frame - L->win + 1, end = L->wbase + L->win;
        for (uint64_t f = L->wbase; f < to && f < end; f++)
            if (win_emit_frame(L, f) != 0)
                return -1;
        L->wbase = to;
    }
    if (row >= L->ring_rows)
        L->ring_rows = row + 1;
    if (frame > L->whi)
        L->whi = frame;
    size_t at = (size_t)(frame & (L->win - 1)) * L->ring_cap + row;
    cap_stats_sat_add(&L->ring[at], self);
    if (L->seen)
        L->seen[at] = 1;
    return 0;
}

static int win_flush_all(loader *L)
{
    for (uint64_t f = L->wbase; f < L->wbase + L->win; f++)
        if (win_emit_frame(L, f) != 0)
            return -1;
    L->wbase += L->win;
    for (size_t i = 0; i < L->acc_cap; i++) {
        pf_acc *a = &L->acc[i];
        if (a->late_frame != NONE &&
            emit(L, i, a->late_frame, a->late_sum) != 0)
            return -1;
        a->late_frame = NONE;
    }
    return 0;
}

static void win_free(loader *L)
{
    free(L->ring);
    free(L->seen);
    L->ring = NULL;
    L->seen = NULL;
    L->ring_cap = L->ring_rows = 0;
}

/* The ring's length for `rows` rows: about 2 MiB of sums in all, 64 to
 * 4096 frames. */
static uint32_t win_frames(size_t rows)
{
    size_t w = ((size_t)2 << 20) / 8 / (rows ? rows : 1);
    uint32_t p = 64;
    while (p < 4096 && (size_t)p * 2 <= w)
        p *= 2;
    return p;
}

static int sort_pf(an_scope *s);

/* Let go of a row's exact series (of m). */
static void series_free(an_capture *m, an_scope *s)
{
    if (!pf_in_arena(m, s->pf_self)) {
        free(s->pf_frame);
        free(s->pf_self);
    }
    s->pf_frame = NULL;
    s->pf_self = NULL;
    s->pf_n = s->pf_cap = 0;
    s->pf_sorted = 1;
}

/* The positive number in environment variable `name` (tests: a budget
 * small enough for a fixture to pass it), else dflt. */
static size_t env_size(const char *name, size_t dflt)
{
    const char *e = getenv(name);
    if (e && *e) {
        char *end;
        unsigned long long v = strtoull(e, &end, 10);
        if (*end == 0 && v > 0)
            return (size_t)v;
    }
    return dflt;
}

/* The pack's chunks in memory: what the 64 MiB read_capture keeps within
 * leaves beside the model's frames (AN_PACK_MAX_BYTES less 64 bytes a
 * frame), at least PACK_MIN_BYTES where it may spill; pack_bytes or
 * CAP_PACK_BYTES=N in the environment (tests) set it, at least a chunk
 * where it may spill. */
static void pack_limits(const loader *L, struct an_pack *p)
{
    size_t set = env_size("CAP_PACK_BYTES", L->o->pack_bytes);
    size_t most = set ? set : AN_PACK_MAX_BYTES;
    size_t frames = L->m->nframes * (size_t)64;
    size_t b = frames < most ? most - frames : 0;
    p->spill = !L->o->pack_no_spill;
    if (p->spill && !set && b < PACK_MIN_BYTES)
        b = PACK_MIN_BYTES;
    size_t c = b / PACK_CHUNK;
    if (p->spill && c == 0)
        c = 1;
    p->max_chunks = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

/* The exact series (each row's frames in order, or no pack) moved into a
 * new pack: 0, or -1 when they do not fit it (none is kept then). */
static int pack_start(loader *L)
{
    an_capture *m = L->m;
    struct an_pack *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    p->fd = -1;
    pack_limits(L, p);
    m->pack = p;
    for (size_t i = 0; i < m->nscopes; i++) {
        const an_scope *s = &m->scopes[i];
        if (!s->pf_sorted)
            return -1;
        for (size_t k = 0; k < s->pf_n; k++)
            if (pack_put(p, i, s->pf_frame[k], s->pf_self[k]) != 0)
                return -1;
    }
    return 0;
}

/* The exact series outgrew the budget: summarise what they hold (frames
 * more than a ring behind the furthest one seen) or move it to the ring,
 * free them, and go on with the ring. */
static int spill(loader *L)
{
    an_capture *m = L->m;
    if (L->o->series_reread) { /* packed, else read again when asked */
        L->win = win_frames(m->nscopes);
        m->win = L->win; /* for an_series_scan */
        m->approx = 1;
        m->reread = 1;
        L->packing = pack_start(L) == 0;
        for (size_t i = 0; i < m->nscopes; i++)
            series_free(m, &m->scopes[i]);
        pf_arena_free(m);
        if (!L->packing)
            pack_give_up(L);
        return 0;
    }
    for (size_t i = 0; i < L->acc_cap && i < m->nscopes; i++) {
        pf_acc *a = &L->acc[i];
        if (a->frame != NONE &&
            pf_add(m, &m->scopes[i], (long)a->frame, a->sum) < 0)
            return -1;
        a->frame = NONE;
    }
    uint64_t hi = 0;
    for (size_t i = 0; i < m->nscopes; i++)
        for (size_t k = 0; k < m->scopes[i].pf_n; k++)
            if (m->scopes[i].pf_frame[k] > hi)
                hi = m->scopes[i].pf_frame[k];
    L->win = win_frames(m->nscopes);
    m->win = L->win;
    L->wbase = hi + 1 > L->win ? hi + 1 - L->win : 0;
    L->whi = hi;
    L->windowed = 1;
    m->approx = 1;
    /* the ring for every row at once (the same window as made row by
       row: win_frames(ring_cap) is win_frames(nscopes)); grown a row at
       a time it was allocated, faulted in and copied three times (10 ms
       of a 10 M scope load, with the reader thread waiting) */
    if (m->nscopes && win_grow(L, m->nscopes - 1) != 0)
        return -1;
    for (size_t i = 0; i < m->nscopes; i++) {
        an_scope *s = &m->scopes[i];
        if (sort_pf(s) != 0)
            return -1;
        for (size_t k = 0; k < s->pf_n; k++)
            if ((s->pf_frame[k] < L->wbase
                     ? emit(L, i, s->pf_frame[k], s->pf_self[k])
                     : win_note(L, i, s->pf_frame[k], s->pf_self[k])) != 0)
                return -1;
        series_free(m, s);
    }
    pf_arena_free(m);
    return 0;
}

/* ---- per-thread / per-track path caches -------------------------------- */

static path_cache *cache_for(path_cache ***arr, size_t *cap, uint32_t id)
{
    if (id >= *cap) {
        size_t n = *cap ? *cap : 16;
        while (n <= id)
            n *= 2;
        path_cache **p = realloc(*arr, n * sizeof *p);
        if (!p)
            return NULL;
        memset(p + *cap, 0, (n - *cap) * sizeof *p);
        *arr = p;
        *cap = n;
    }
    if (!(*arr)[id]) {
        (*arr)[id] = calloc(1, sizeof(path_cache));
        if (!(*arr)[id])
            return NULL;
        (*arr)[id]->root = NONE;
    }
    return (*arr)[id];
}

/* c's path grown to hold n entries (n <= CAP_MAX_DEPTH). 0, or -1 when
 * out of memory. */
__attribute__((noinline)) static int path_grow(path_cache *c, uint32_t n)
{
    uint32_t cap = c->pcap ? c->pcap : 16;
    while (cap < n)
        cap *= 2;
    uint32_t *a = realloc(c->name, cap * sizeof *a);
    if (!a)
        return -1;
    c->name = a;
    uint32_t *b = realloc(c->node, cap * sizeof *b);
    if (!b)
        return -1;
    c->node = b;
    c->pcap = cap;
    return 0;
}

static void path_free(path_cache *c)
{
    if (c) {
        free(c->name);
        free(c->node);
    }
}

/* Node of the parent of an event with ancestors stack[0..depth). */
__attribute__((always_inline)) static inline uint32_t
parent_node(loader *L, path_cache *c, an_kind kind, const uint32_t *stack,
            uint32_t depth)
{
    if (depth > c->pcap && path_grow(c, depth) != 0)
        return NONE;
    /* the common prefix of the cached path and the stack, two names at a
       time (eight bytes compared as one) */
    uint32_t lim = c->depth < depth ? c->depth : depth, k = 0;
    for (;;) {
        uint64_t a, b;
        if (k + 2 > lim)
            break;
        memcpy(&a, c->name + k, sizeof a);
        memcpy(&b, stack + k, sizeof b);
        if (a != b)
            break;
        k += 2;
    }
    if (k < lim && c->name[k] == stack[k])
        k++;
    uint32_t parent = k == 0 ? c->root : c->node[k - 1];
    for (uint32_t j = k; j < depth; j++) {
        parent = node_get(L, parent, kind, stack[j]);
        if (parent == NONE)
            return NONE;
        c->name[j] = stack[j];
        c->node[j] = parent;
    }
    /* Entries past depth extend the same path when all of it matched
     * (scopes arrive children first, so the parent's own node is often
     * cached already): keep them then. */
    if (k < depth)
        c->depth = depth;
    return parent;
}

/* Node of an event named `name` under `parent` at `depth`, through the
 * path cache (parent_node was just called with the event's stack). */
__attribute__((always_inline)) static inline uint32_t
own_node(loader *L, path_cache *c, an_kind kind, uint32_t parent,
         uint32_t depth, uint32_t name)
{
    if (depth < c->depth && c->name[depth] == name)
        return c->node[depth];
    uint32_t node = node_get(L, parent, kind, name);
    if (node != NONE && depth < CAP_MAX_DEPTH &&
        (depth < c->pcap || path_grow(c, depth + 1) == 0)) {
        c->name[depth] = name;
        c->node[depth] = node;
        c->depth = depth + 1;
        if (depth < c->sp_n)
            c->sp_n = depth;
    }
    return node;
}

static int in_stack(const uint32_t *stack, uint32_t depth, uint32_t name)
{
    for (uint32_t i = 0; i < depth; i++)
        if (stack[i] == name)
            return 1;
    return 0;
}

/* Add `name` to the list arr[0..*n) unless it holds it (ix: the list by
 * name). -1 when out of memory. */
static int add_name(str_index *ix, char ***arr, size_t *n, const char *name)
{
    if (str_find(ix, name, arr_at, arr) >= 0)
        return 0;
    char **p = realloc(*arr, (*n + 1) * sizeof *p);
    if (!p)
        return -1;
    *arr = p;
    p[*n] = xstrdup(name);
    if (!p[*n])
        return -1;
    (*n)++;
    return str_add(ix, (uint32_t)(*n - 1), arr_at, arr);
}

/* Scope row of CPU name id `id` (rows keyed by name): a direct table in
 * front of scope_get's hash, since ids are small and dense. */
static long cpu_row_slow(loader *L, uint32_t id);
static inline long cpu_row(loader *L, uint32_t id)
{
    if (id < L->row_of_cap && L->row_of[id])
        return (long)L->row_of[id] - 1;
    return cpu_row_slow(L, id);
}

static long cpu_row_slow(loader *L, uint32_t id)
{
    long si = scope_get(L->m, AN_CPU, id);
    if (si < 0 || id >= ID_DIRECT) /* the hash answers for sparse ids */
        return si;
    if (id >= L->row_of_cap) {
        size_t n = L->row_of_cap ? L->row_of_cap : 256;
        while (n <= id)
            n *= 2;
        uint32_t *p = realloc(L->row_of, n * sizeof *p);
        if (!p)
            return si; /* the hash still answers */
        memset(p + L->row_of_cap, 0, (n - L->row_of_cap) * sizeof *p);
        L->row_of = p;
        L->row_of_cap = n;
    }
    L->row_of[id] = (uint32_t)si + 1;
    return si;
}

/* The tree root of a thread or GPU track: its name, or "thread N" /
 * "gpu N" when the file gave none. Threads (tracks) sharing a name share a
 * root. */
static int set_root(loader *L, path_cache *c, an_kind kind,
                    const char *name, uint32_t id)
{
    an_capture *m = L->m;
    char buf[32];
    if (!name || !*name) {
        snprintf(buf, sizeof buf, kind == AN_CPU ? "thread %u" : "gpu %u", id);
        name = buf;
    }
    c->root = root_get(m, &L->ix_roots[kind == AN_CPU ? 0 : 1], kind, name);
    if (c->root == NONE)
        return -1;
    return kind == AN_CPU
               ? add_name(&L->ix_threads, &m->threads, &m->nthreads, name)
               : add_name(&L->ix_tracks, &m->tracks, &m->ntracks, name);
}

static const char *root_name(const loader *L, an_kind kind, uint32_t id);

/* The path cache of CPU thread or GPU track `id`, its root set up; NULL
 * when out of memory. */
__attribute__((always_inline)) static inline path_cache *
event_cache(loader *L, an_kind kind, uint32_t id)
{
    path_cache *c;
    if (kind == AN_CPU && L->last_cache && L->last_tid == id) {
        c = L->last_cache;
    } else {
        c = kind == AN_CPU ? cache_for(&L->threads, &L->threads_cap, id)
                           : cache_for(&L->tracks, &L->tracks_cap, id);
        if (kind == AN_CPU && c && c->root != NONE) {
            L->last_cache = c;
            L->last_tid = id;
        }
    }
    if (c && c->root == NONE &&
        set_root(L, c, kind, root_name(L, kind, id), id) != 0)
        return NULL;
    return c;
}

/* The call-tree node of an event named `name` under ancestors
 * stack[0..depth) on CPU thread or GPU track `id`; *cache is that
 * thread's (track's) path cache. NONE when out of memory. */
static uint32_t event_node(loader *L, an_kind kind, uint32_t id,
                           const uint32_t *stack, uint32_t depth,
                           uint32_t name, path_cache **cache)
{
    path_cache *c = *cache = event_cache(L, kind, id);
    if (!c)
        return NONE;
    uint32_t parent = parent_node(L, c, kind, stack, depth);
    if (parent == NONE)
        return NONE;
    return own_node(L, c, kind, parent, depth, name);
}

/* event_node for a CPU scope: a scope with the stack (pointer) of the
 * thread's previous one in the same batch, no deeper than what the cache
 * holds of it, finds its parent there without comparing the stacks (the
 * usual case: the ends of a run share one copy of their ancestors). */
__attribute__((always_inline)) static inline uint32_t
scope_node_in(loader *L, path_cache *c, const uint32_t *stack,
              uint32_t depth, uint32_t name)
{
    uint32_t parent;
    if (stack == c->sp && depth <= c->sp_n && c->sp_gen == L->gen) {
        parent = depth ? c->node[depth - 1] : c->root;
    } else {
        parent = parent_node(L, c, AN_CPU, stack, depth);
        if (parent == NONE)
            return NONE;
        c->sp = stack;
        c->sp_gen = L->gen;
        c->sp_n = depth;
    }
    return own_node(L, c, AN_CPU, parent, depth, name);
}

/* scope_node_in with the thread's path cache looked up (*cache). */
__attribute__((always_inline)) static inline uint32_t
scope_node(loader *L, uint32_t tid, const uint32_t *stack, uint32_t depth,
           uint32_t name, path_cache **cache)
{
    path_cache *c = *cache = event_cache(L, AN_CPU, tid);
    if (!c)
        return NONE;
    return scope_node_in(L, c, stack, depth, name);
}

/* ---- events ------------------------------------------------------------ */

/* A declared CPU thread joins the header's list under its name (or
 * "thread N"), whether or not it records a scope. */
static int thread_declared(loader *L, uint32_t tid, const char *name)
{
    char buf[32];
    if (!name || !*name) {
        snprintf(buf, sizeof buf, "thread %u", tid);
        name = buf;
    }
    return add_name(&L->ix_threads, &L->m->threads, &L->m->nthreads, name);
}


/* A CPU scope as the model takes it from its event (on_scope, on either
 * thread count). */
#define HAND_RECURSIVE 0x80000000u /* in hand.depth */

typedef struct hand {
    int64_t begin_ns, end_ns, children_ns; /* as cap_ev_scope's */
    uint32_t name;
    uint32_t tid;
    uint32_t depth; /* | HAND_RECURSIVE when its name is an ancestor's
                       (only without a call tree: with one, the scope's
                       node says it, an_node.recursive) */
} hand;

/* pf_note's usual case on a summarised load, inline: a row already in
 * the ring, on the thread it last ran on, in a frame the ring holds (the
 * sum into its slot, as win_note adds it), on a load that measures no
 * --frames lag (reread: pf_note measures it). 0: not that case. */
static inline int win_fast(loader *L, long si, long f, int64_t self,
                           uint32_t who)
{
    /* f < 0 or below the ring's first frame: fr - wbase wraps past win;
       si < ring_rows <= acc_cap (pf_note made the row's accumulator) */
    uint64_t fr = (uint64_t)f;
    if (!L->windowed || L->reread || (size_t)si >= L->ring_rows ||
        fr - L->wbase >= L->win || L->acc[si].who != who)
        return 0;
    size_t at = (size_t)(fr & (L->win - 1)) * L->ring_cap + (size_t)si;
    cap_stats_sat_add(&L->ring[at], self);
    if (L->seen)
        L->seen[at] = 1;
    if (fr > L->whi)
        L->whi = fr;
    return 1;
}

/* pf_note's usual case while --frames' values are packed (reread and
 * packing: not windowed, not dropping), inline: a row on the thread it
 * last ran on, with a value held in its accumulator; the lag measured,
 * the value added there or the held one packed (pack_put). 1: done as
 * pf_note does it; 0: not that case. */
__attribute__((always_inline)) static inline int
pack_fast(loader *L, long si, long f, int64_t self, uint32_t who)
{
    if (!L->packing || !L->reread || f < 0 || (size_t)si >= L->acc_cap)
        return 0;
    pf_acc *a = &L->acc[si];
    if (a->who != who || a->frame == NONE)
        return 0;
    lag_note(L, (uint64_t)f);
    if (a->frame == (uint32_t)f)
        cap_stats_sat_add(&a->sum, self);
    else
        pack_move(L, a, (size_t)si, (uint32_t)f, self);
    return 1;
}

/* pf_note's usual case while the series are exact (not windowed, not
 * reread), inline: a row on the thread it last ran on, in the frame its
 * accumulator holds (the sum added there, as pf_note adds it). Until
 * the series spill (the first 13 % of bench_read's 10 M scopes) a call of
 * pf_note a scope cost 66 M instructions of the load's 5.12 G (callgrind),
 * 23 M with this, while the reader thread waits on the model's. 0: not
 * that case. */
static inline int acc_fast(loader *L, long si, long f, int64_t self,
                           uint32_t who)
{
    /* f < 0: not a frame the accumulator holds (NONE is 2^32 - 1, and
       frame indices stay below it) */
    if (L->windowed || L->reread || f < 0 || (size_t)si >= L->acc_cap)
        return 0;
    pf_acc *a = &L->acc[si];
    if (a->who != who || a->frame != (uint64_t)f)
        return 0;
    cap_stats_sat_add(&a->sum, self);
    return 1;
}

/* A scope's self time into its row's value in frame f (pf_note), through
 * win_fast or acc_fast when it can, or, in a batch begun with --frames'
 * values packed (`pack`), through pack_fast. */
__attribute__((always_inline)) static inline int
note_value(loader *L, long si, long f, int64_t self, uint32_t who,
           const int pack)
{
    if (pack ? pack_fast(L, si, f, self, who)
             : (win_fast(L, si, f, self, who) ||
                acc_fast(L, si, f, self, who)))
        return 0;
    return pf_note(L, si, f, self, who);
}

/* ---- scopes that span frames --------------------------------------------
 * A CPU scope's self time goes to the frames it ran in: in each, the time
 * it overlaps that frame less its children's time there. A scope within
 * one frame (nearly every one) has its children there too, and its self
 * time goes there whole (note_value). One that runs past its frame's end
 * (a worker waiting for jobs over several frames, a level load) is
 * shared out by span_values; for that, every scope adds its time by frame
 * to its parent's sums as it ends (kid_add: scopes end before their
 * parent, children in order). Its self time outside every frame (before,
 * between or after them) counts outside, as a scope that begins there. */

/* The most pieces a thread holds (16 MiB): more (a crafted file's) are
 * let go, and the parent that would take them shares its self time out
 * with less subtracted (its values still add up to its self time). */
#define KID_PIECES_MAX ((size_t)1 << 20)

static int kid_push(path_cache *c, uint32_t depth, const struct kid_sum *k)
{
    if (c->npieces == KID_PIECES_MAX)
        return 0;
    if (c->npieces == c->pieces_cap) {
        size_t n = c->pieces_cap ? 2 * c->pieces_cap : 16;
        struct kid_piece *p = realloc(c->pieces, n * sizeof *p);
        if (!p)
            return -1;
        c->pieces = p;
        c->pieces_cap = n;
    }
    c->pieces[c->npieces++] = (struct kid_piece){depth, k->f1, k->sum};
    return 0;
}

/* kids_for's other case: kid grown to hold depth + 1 (zeroed). 0, or -1
 * when out of memory. */
__attribute__((noinline)) static int kids_grow(path_cache *c, uint32_t depth)
{
    size_t n = c->kid_cap ? c->kid_cap : 16;
    while (n <= (size_t)depth + 1)
        n *= 2;
    struct kid_sum *k = realloc(c->kid, n * sizeof *k);
    if (!k)
        return -1;
    memset(k + c->kid_cap, 0, (n - c->kid_cap) * sizeof *k);
    c->kid = k;
    c->kid_cap = (uint32_t)n;
    return 0;
}

/* c->kid made to hold entries depth and depth + 1 (a scope's own and its
 * children's). 0, or -1 when out of memory. */
__attribute__((always_inline)) static inline int kids_for(path_cache *c,
                                                          uint32_t depth)
{
    if (__builtin_expect(depth + 1 < c->kid_cap, 1))
        return 0;
    return kids_grow(c, depth);
}

/* kid_add's other case: the scope in another frame than the sum held. */
__attribute__((noinline)) static int kid_move(path_cache *c, uint32_t depth,
                                              uint32_t f1, uint64_t t)
{
    struct kid_sum *k = &c->kid[depth];
    if (k->sum && depth && kid_push(c, depth, k) != 0) /* roots': unread */
        return -1;
    k->f1 = f1;
    k->sum = t;
    return 0;
}

/* A scope at `depth` that ran t ns in frame position f (-1: in none),
 * into its parent's sums by frame (a root's, at depth 0, are never read).
 * 0, or -1 when out of memory. */
__attribute__((always_inline)) static inline int
kid_add(path_cache *c, uint32_t depth, long f, int64_t t)
{
    struct kid_sum *k = &c->kid[depth];
    uint32_t f1 = (uint32_t)(f + 1);
    if (__builtin_expect(k->f1 == f1, 1)) {
        k->sum += (uint64_t)t;
        return 0;
    }
    return kid_move(c, depth, f1, (uint64_t)t);
}

/* How long [b, e) runs in frame position k (up to frame_until). */
static inline int64_t frame_overlap(const an_capture *m, size_t k, int64_t b,
                                    int64_t e)
{
    int64_t lo = m->frames[k].begin_ns, hi = frame_until(m, k);
    return cap_duration_ns(lo > b ? lo : b, hi < e ? hi : e);
}

/* Where time t lies outside the frames (m->nframes > 0): 0 before the
 * first, 2 at or after the last one's end, 1 between two. */
static inline int outside_where(const an_capture *m, int64_t t)
{
    return t < m->frames[0].begin_ns                      ? 0
           : t >= m->frames[m->nframes - 1].end_ns ? 2
                                                    : 1;
}

/* A scope [b, e) at `depth` with self time `self` that spans frames
 * (cpu_value), begun in frame position f (-1: in none): its self time
 * in each frame it overlaps (its overlap less its children's time there,
 * from their sums) noted for row si (where positive, and in f always),
 * the rest outside (in m->outside_ns when `outside`); then its own time
 * by frame into its parent's sums. Its cost grows with the frames it
 * spans. 0, or -1 when out of memory. */
__attribute__((noinline)) static int
span_values(loader *L, path_cache *c, long si, long f, int64_t b, int64_t e,
            uint32_t depth, int64_t self, uint32_t who, int pack, int outside)
{
    an_capture *m = L->m;
    const an_frame *fr = m->frames;
    const size_t n = m->nframes;
    const size_t k0 = f >= 0 ? (size_t)f : an_frame_after(m, b);
    size_t p0 = c->npieces; /* the children's pieces: those on top */
    while (p0 && c->pieces[p0 - 1].depth > depth)
        p0--;
    const size_t p1 = c->npieces; /* the parent's are pushed past it */
    const struct kid_sum last = c->kid[depth + 1];
    int64_t left = self;
    size_t p = p0;
    for (size_t k = k0; k < n && fr[k].begin_ns < e; k++) {
        int64_t ov = frame_overlap(m, k, b, e);
        uint64_t kids = 0;
        const uint32_t f1 = (uint32_t)k + 1;
        /* pieces in frame order (those of no frame, or out of order,
           skipped) */
        for (; p < p1 && c->pieces[p].f1 <= f1; p++)
            if (c->pieces[p].f1 == f1 && c->pieces[p].depth == depth + 1)
                kids += c->pieces[p].sum;
        if (last.f1 == f1)
            kids += last.sum;
        int64_t v = (uint64_t)ov > kids ? (int64_t)((uint64_t)ov - kids) : 0;
        if (v > left)
            v = left;
        left -= v;
        if (v || (long)k == f) {
            if (note_value(L, si, (long)k, v, who, pack) != 0)
                return -1;
            c->in_frames = 1;
        }
        /* its own time there into its parent's sums (a root's are never
           read) */
        if (depth && ov && kid_add(c, depth, (long)k, ov) != 0)
            return -1;
    }
    if (left > 0 && outside) {
        int where = outside_where(m, b < fr[0].begin_ns ? b : e - 1);
        cap_stats_sat_add(&m->outside_ns[where], left);
        c->outside = 1;
    }
    /* the children's pieces let go, the parent's moved down over them */
    size_t pushed = c->npieces - p1;
    if (pushed && p1 > p0)
        memmove(c->pieces + p0, c->pieces + p1, pushed * sizeof *c->pieces);
    c->npieces = p0 + pushed;
    c->kid[depth + 1].sum = 0;
    return 0;
}

/* cpu_value's other cases: a scope begun in no frame (counted outside
 * when `outside`, unless it runs into a frame), or one that runs past the
 * end of the frame it began in (span_values). */
__attribute__((noinline)) static int
cpu_value_rare(loader *L, path_cache *c, long si, long f, int64_t b,
               int64_t e, int64_t dur, uint32_t depth, int64_t self,
               uint32_t who, int pack, int outside)
{
    an_capture *m = L->m;
    /* a chunk's scope that spans frames or runs outside them, begun
       before the chunk's first scope of its thread ended: its children
       may have ended in an earlier chunk, whose sums by frame this
       chunk does not hold */
    if (L->chunk && L->chunk_index && (!c->first_set || b < c->first_end))
        L->inexact = 1;
    size_t k = f < 0 && m->nframes && e > b ? an_frame_after(m, b) : m->nframes;
    if (f >= 0 || (k < m->nframes && m->frames[k].begin_ns < e))
        return span_values(L, c, si, f, b, e, depth, self, who, pack,
                           outside);
    c->kid[depth + 1].sum = 0; /* outside every frame, as its children */
    if (kid_add(c, depth, f, dur) != 0)
        return -1;
    if (outside && m->nframes) {
        c->outside = 1; /* before the frames, between them, after them */
        cap_stats_sat_add(&m->outside_ns[outside_where(m, b)], self);
    }
    return 0;
}

/* A CPU scope's value (note_value) in the frame it began in, f, or shared
 * out over the frames it spans (span_values), and its time in its
 * parent's sums by frame. The scope is [b, e), `dur` long, with self time
 * `self`, at `depth`, on the thread of cache c (its frame_near answer f);
 * outside: 1 to count its self time outside every frame in
 * m->outside_ns (a scan: 0). 0, or -1 when out of memory. */
__attribute__((always_inline)) static inline int
cpu_value(loader *L, path_cache *c, long si, long f, int64_t b, int64_t e,
          int64_t dur, uint32_t depth, int64_t self, uint32_t who,
          const int pack, const int outside)
{
    if (kids_for(c, depth) != 0)
        return -1;
    /* within frame f, and its children with it (e before b, from a
       crafted file: no time, noted in f) */
    if (__builtin_expect(e > c->fr_end, 0))
        return cpu_value_rare(L, c, si, f, b, e, dur, depth, self, who, pack,
                              outside);
    /* its children's sums let go (their frame kept: the next child's,
       most likely), its own time into its parent's; pieces left by
       children in other frames can only come from a parent that spans
       (span_values takes them) */
    c->kid[depth + 1].sum = 0;
    if (kid_add(c, depth, f, dur) != 0)
        return -1;
    c->in_frames = 1;
    return note_value(L, si, f, self, who, pack);
}

/* A scan's scope (values_only): its row's value in the frames it ran in,
 * and nothing else (rows by name are made in the order of the load's). */
__attribute__((always_inline)) static inline int
value_of(loader *L, uint32_t name, uint32_t tid, uint32_t depth,
         int64_t begin_ns, int64_t end_ns, int64_t self)
{
    long si = cpu_row(L, name);
    if (si < 0)
        return -1;
    path_cache *c = L->last_cache;
    if (!c || L->last_tid != tid) {
        if (!(c = cache_for(&L->threads, &L->threads_cap, tid)))
            return -1;
        L->last_cache = c;
        L->last_tid = tid;
    }
    long f = frame_near(L->m, begin_ns, c);
    return cpu_value(L, c, si, f, begin_ns, end_ns,
                     cap_duration_ns(begin_ns, end_ns), depth, self,
                     tid & 0x7fffffffu, 0, 0);
}

/* value_of for a scan's scope (scope_core, values_only). */
__attribute__((noinline)) static int scope_value(loader *L, const hand *h)
{
    return value_of(L, h->name, h->tid, h->depth & ~HAND_RECURSIVE,
                    h->begin_ns, h->end_ns,
                    cap_self_ns(h->begin_ns, h->end_ns, h->children_ns));
}

/* How a batch of one thread's records is applied (apply_recs_as): the
 * load's tests made once a batch, the thread's path cache looked up once
 * (REC_ANY: each scope tests the load and finds its thread's cache). */
enum {
    REC_ANY = 0,
    REC_TREE = 1,   /* a call tree, no cut-off, no scan */
    REC_NO_TREE = 2 /* no call tree, no cut-off, no scan */
};

/* A CPU scope into the model: its node, row, sums and per-frame value.
 * stack: its ancestors (h->depth of them). mode: REC_ANY, or what the
 * load is known to be, with hc its thread's path cache. */
__attribute__((always_inline)) static inline int
scope_core_in(loader *L, const hand *h, const uint32_t *stack,
              const int pack, const int mode, path_cache *const hc)
{
    an_capture *m = L->m;
    uint32_t depth = h->depth & ~HAND_RECURSIVE;
    /* cap_self_ns from the duration the node and row take anyway */
    int64_t dur = cap_duration_ns(h->begin_ns, h->end_ns), self = dur;
    if (h->children_ns > 0)
        self = h->children_ns >= dur ? 0 : dur - h->children_ns;
    path_cache *c;
    uint32_t node = NONE;
    long si; /* the scope's row */
    int rec = !!(h->depth & HAND_RECURSIVE); /* no tree: the stack's answer */
    const int tree = mode == REC_TREE ||
                     (mode == REC_ANY && __builtin_expect(L->tree, 1));
    if (tree) {
        if (mode != REC_ANY) {
            c = hc;
            node = scope_node_in(L, c, stack, depth, h->name);
        } else {
            node = scope_node(L, h->tid, stack, depth, h->name, &c);
        }
        if (node == NONE)
            return -1;
        an_node *n = &m->nodes[node];
        n->calls++;
        cap_stats_sat_add(&n->total_ns, dur);
        cap_stats_sat_add(&n->self_ns, self);
        if (n->row1) { /* the node's row, looked up at its first scope */
            si = (long)n->row1 - 1;
        } else {
            si = L->o->by_path ? scope_get(m, AN_CPU, node)
                               : cpu_row(L, h->name);
            if (si < 0)
                return -1;
            n->row1 = (uint32_t)si + 1;
        }
    } else if (mode == REC_ANY && L->values_only) {
        return scope_value(L, h);
    } else if (!(c = mode != REC_ANY ? hc
                                     : event_cache(L, AN_CPU, h->tid))) {
        return -1; /* no_tree */
    } else {
        si = L->o->by_path ? scope_get(m, AN_CPU, node) : cpu_row(L, h->name);
        if (si < 0)
            return -1;
    }
    if (!tree) { /* with a tree, rows_from_nodes sums them at the end */
        an_scope *s = &m->scopes[si];
        s->calls++;
        cap_stats_sat_add(&s->self_ns, self);
        if (L->o->by_path || !rec)
            cap_stats_sat_add(&s->total_ns, dur);
    }
    if (__builtin_expect(L->chunk, 0) && !c->first_set) {
        c->first_set = 1;
        c->first_end = h->end_ns;
    }
    long f = frame_near(m, h->begin_ns, c);
    /* (past --frames' budget, L->dropping: pf_note measures the lag and
       lets the values go) */
    if (cpu_value(L, c, si, f, h->begin_ns, h->end_ns, dur, depth, self,
                  h->tid & 0x7fffffffu, pack, 1) != 0)
        return -1;
    if (h->begin_ns < L->cpu_first)
        L->cpu_first = h->begin_ns;
    if (h->end_ns > m->last_ns)
        m->last_ns = h->end_ns;
    m->cpu_events++;
    return 0;
}

__attribute__((always_inline)) static inline int
scope_core(loader *L, const hand *h, const uint32_t *stack, const int pack)
{
    return scope_core_in(L, h, stack, pack, REC_ANY, NULL);
}

/* A scope's fields as the model takes them (from its event, or from
 * its record on a second thread); the recursion flag only when `rec`
 * (without a call tree: with one, the scope's node says it). */
static inline hand make_hand(int64_t begin_ns, int64_t end_ns,
                             int64_t children_ns, uint32_t name, uint32_t tid,
                             uint32_t depth, const uint32_t *stack, int rec)
{
    return (hand){.begin_ns = begin_ns,
                  .end_ns = end_ns,
                  .children_ns = children_ns,
                  .name = name,
                  .tid = tid,
                  .depth = depth | (rec && in_stack(stack, depth, name)
                                        ? HAND_RECURSIVE
                                        : 0)};
}

static inline hand scope_hand(const cap_ev_scope *e, int rec)
{
    return make_hand(e->begin_ns, e->end_ns, e->children_ns, e->name, e->tid,
                     e->depth, e->stack, rec);
}

/* A scope event read on this thread (pack: as note_value). */
__attribute__((always_inline)) static inline int
on_scope(loader *L, const cap_ev_scope *e, const int pack)
{
    if (L->have_cutoff && e->begin_ns < L->cutoff_ns)
        return 0;
    hand h = scope_hand(e, !L->tree);
    return scope_core(L, &h, e->stack, pack);
}

static int on_gpu(loader *L, const cap_ev_gpu_span *e)
{
    an_capture *m = L->m;
    long f = frame_by_index(m, e->cpu_frame);
    if (L->have_cutoff && f < 0)
        return 0;
    if (L->values_only) {
        long si = scope_get(m, AN_GPU, e->name);
        if (si < 0)
            return -1;
        return e->measured ? pf_note(L, si, f, e->self_ns,
                                     e->track | 0x80000000u)
                           : 0;
    }
    path_cache *c;
    uint32_t node = L->tree ? event_node(L, AN_GPU, e->track, e->stack,
                                         e->depth, e->name, &c)
                            : event_cache(L, AN_GPU, e->track) ? 0 : NONE;
    if (node == NONE)
        return -1;
    long si = scope_get(m, AN_GPU, L->o->by_path ? node : e->name);
    if (si < 0)
        return -1;
    an_scope *s = &m->scopes[si];
    an_node *n = L->tree ? &m->nodes[node] : NULL;
    m->gpu_events++;
    if (!e->measured)
        return 0;
    if (n) {
        n->calls++;
        cap_stats_sat_add(&n->total_ns, e->duration_ns);
        cap_stats_sat_add(&n->self_ns, e->self_ns);
    }
    s->calls++;
    cap_stats_sat_add(&s->self_ns, e->self_ns);
    if (L->o->by_path || !in_stack(e->stack, e->depth, e->name))
        cap_stats_sat_add(&s->total_ns, e->duration_ns);
    if (f >= 0 && !L->visit) { /* a scan borrows the model's frames */
        if (!m->frame_gpu_ns) {
            m->frame_gpu_ns = calloc(m->nframes, sizeof *m->frame_gpu_ns);
            m->frame_has_gpu = calloc(m->nframes, 1);
            if (!m->frame_gpu_ns || !m->frame_has_gpu)
                return -1;
        }
        cap_stats_sat_add(&m->frame_gpu_ns[f], e->self_ns);
        m->frame_has_gpu[f] = 1;
    }
    return pf_note(L, si, f, e->self_ns, e->track | 0x80000000u);
}

static int on_counter(loader *L, const cap_ev_counter *e)
{
    an_capture *m = L->m;
    if (L->values_only ||
        (L->have_cutoff && e->time_ns < L->cutoff_ns))
        return 0;
    uint32_t ci = id_get(&L->counter_of, e->name);
    if (!ci) {
        an_counter *p = realloc(m->counters, (m->ncounters + 1) * sizeof *p);
        if (!p)
            return -1;
        m->counters = p;
        memset(&p[m->ncounters], 0, sizeof *p);
        /* name resolved at the end */
        p[m->ncounters].name = NULL;
        m->ncounters++;
        ci = (uint32_t)m->ncounters;
        if (id_set(&L->counter_of, e->name, ci) != 0)
            return -1;
    }
    an_counter *c = &m->counters[ci - 1];
    if (c->n == c->cap) {
        size_t n = c->cap ? c->cap * 2 : 64;
        an_sample *p = realloc(c->s, n * sizeof *p);
        if (!p)
            return -1;
        c->s = p;
        c->cap = n;
    }
    c->s[c->n++] = (an_sample){e->time_ns, e->value};
    return 0;
}

static void note_damage(an_capture *m, cap_reader *r, cap_result res)
{
    if (res == CAP_E_CORRUPT)
        m->corrupt_seen = 1;
    if (!m->damage_detail[0])
        snprintf(m->damage_detail, sizeof m->damage_detail, "%s",
                 cap_reader_detail(r));
}

static void progress(const loader *L, const char *what, int force_end)
{
    if (!L->o->progress)
        return;
    if (force_end) {
        fprintf(L->o->progress, "\r%-60s\r", "");
        fflush(L->o->progress);
        return;
    }
    uint64_t size = cap_reader_file_size(L->r);
    double pct = size ? 100.0 * (double)cap_reader_offset(L->r) / (double)size
                      : 0;
    fprintf(L->o->progress, "\r%s %s: %3.0f%%", what, L->m->path, pct);
    fflush(L->o->progress);
}

/* What file path names now (known 0 for a pipe, a device, a path gone:
 * nothing to compare). */
static struct an_file_id file_id(const char *path)
{
    struct stat sb;
    struct an_file_id id = {0};
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return id;
    id.known = 1;
    id.dev = (uint64_t)sb.st_dev;
    id.ino = (uint64_t)sb.st_ino;
    id.size = (uint64_t)sb.st_size;
    id.mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    return id;
}

/* CAP_OK when path is still the file m was loaded from (model.h:
 * an_capture.file); else CAP_E_CHANGED with what changed in detail. */
static cap_result file_same(const an_capture *m, const char *path,
                            char *detail, size_t dsz)
{
    const struct an_file_id *was = &m->file;
    if (!was->known)
        return CAP_OK;
    struct an_file_id now = file_id(path);
    const char *why =
        !now.known || now.dev != was->dev || now.ino != was->ino
            ? "replaced by another file"
        : now.size < was->size ? "cut short"
        : now.size == was->size && now.mtime_ns != was->mtime_ns
            ? "rewritten"
            : NULL;
    if (!why)
        return CAP_OK;
    snprintf(detail, dsz,
             "the file changed while it was being read (%s, %llu bytes when "
             "first read, %llu now): read it again once nothing writes it",
             why, (unsigned long long)was->size,
             (unsigned long long)now.size);
    return CAP_E_CHANGED;
}

static cap_result pass_frames(loader *L, char *detail, size_t dsz)
{
    an_capture *m = L->m;
    cap_result res = cap_reader_open(&L->r, m->path, detail, dsz);
    if (res != CAP_OK)
        return res;
    if (L->o->frames_from_blocks)
        cap_reader_frames_only_blocks(L->r);
    else
        cap_reader_frames_only(L->r);
    m->frames_listed = cap_reader_frames_listed(L->r);
    size_t cap = 0;
    cap_event ev;
    uint64_t seen = 0;
    for (;;) {
        res = cap_reader_next(L->r, &ev);
        if (res == CAP_DONE)
            break;
        if (res == CAP_E_CORRUPT || res == CAP_E_TRUNCATED)
            continue;
        if (res != CAP_OK) {
            snprintf(detail, dsz, "%s", cap_reader_detail(L->r));
            return res;
        }
        if ((++seen & 0xffff) == 0)
            progress(L, "scanning", 0);
        if (ev.kind != CAP_EV_FRAME)
            continue;
        size_t n = m->nframes;
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            an_frame *p = realloc(m->frames, cap * sizeof *p);
            if (!p)
                return CAP_E_NOMEM;
            m->frames = p;
            if (m->frame_index) {
                uint64_t *q = realloc(m->frame_index, cap * sizeof *q);
                if (!q)
                    return CAP_E_NOMEM;
                m->frame_index = q;
            }
        }
        uint64_t ix = ev.u.frame.index;
        if (n == 0) {
            m->frame_index0 = ix;
        } else if (!m->frame_index &&
                   (ix != m->frame_index0 + n || ix < m->frame_index0)) {
            /* not the next index: each frame's is kept from here on */
            m->frame_index = malloc(cap * sizeof *m->frame_index);
            if (!m->frame_index)
                return CAP_E_NOMEM;
            for (size_t i = 0; i < n; i++)
                m->frame_index[i] = m->frame_index0 + i;
        }
        if (m->frame_index)
            m->frame_index[n] = ix;
        m->frames[n] = (an_frame){ev.u.frame.begin_ns, ev.u.frame.end_ns};
        m->nframes = n + 1;
    }
    cap_reader_close(L->r);
    L->r = NULL;
    /* sorted already in a file written in order; otherwise sorted with
       their indices beside them (24 bytes a frame, for the sort only) */
    int sorted = 1;
    for (size_t i = 1; sorted && i < m->nframes; i++)
        sorted = frames_in_order(m, i);
    if (m->nframes && !sorted) {
        frame_ix *t = malloc(m->nframes * sizeof *t);
        if (!t)
            return CAP_E_NOMEM;
        for (size_t i = 0; i < m->nframes; i++)
            t[i] = (frame_ix){m->frames[i], an_frame_index(m, i)};
        qsort(t, m->nframes, sizeof *t, frame_cmp);
        if (!m->frame_index &&
            !(m->frame_index = malloc(m->nframes * sizeof *m->frame_index))) {
            free(t);
            return CAP_E_NOMEM;
        }
        for (size_t i = 0; i < m->nframes; i++) {
            m->frames[i] = t[i].f;
            m->frame_index[i] = t[i].index;
        }
        free(t);
        frame_index_compact(m);
    }
    if (L->o->skip_seconds > 0 && m->nframes) {
        double skip = L->o->skip_seconds * 1e9;
        L->cutoff_ns = m->frames[0].begin_ns;
        cap_stats_sat_add(&L->cutoff_ns,
                          skip >= 9.2e18 ? INT64_MAX : (int64_t)skip);
        L->have_cutoff = 1;
        size_t k = 0;
        while (k < m->nframes && m->frames[k].begin_ns < L->cutoff_ns)
            k++;
        /* whole frames: what ran in the frame cut in two goes with it */
        if (k < m->nframes)
            L->cutoff_ns = m->frames[k].begin_ns;
        memmove(m->frames, m->frames + k, (m->nframes - k) * sizeof *m->frames);
        if (m->frame_index)
            memmove(m->frame_index, m->frame_index + k,
                    (m->nframes - k) * sizeof *m->frame_index);
        else
            m->frame_index0 += k;
        m->nframes -= k;
        frame_index_compact(m);
    }
    return CAP_OK;
}

/* An event other than a CPU scope into the model (apply). */
/* A chunk's loader: an event that a chunk cannot take as a whole read
 * would (GPU spans need calibrations from earlier blocks; a thread named
 * otherwise than at the end was renamed). */
static void chunk_check(loader *L, const cap_event *ev)
{
    if (ev->kind == CAP_EV_GPU_SPAN || ev->kind == CAP_EV_GPU_TRACK)
        L->inexact = 1;

    if (ev->kind == CAP_EV_THREAD && L->decl) {
        const char *a = ev->u.thread.name ? ev->u.thread.name : "";
        const char *b = cap_reader_thread_name(L->decl, ev->u.thread.tid);
        if (strcmp(a, b ? b : "") != 0)
            L->inexact = 1;
    }
}

__attribute__((noinline)) static int apply_other(loader *L, const cap_event *ev)
{
    if (L->chunk)
        chunk_check(L, ev);
    switch (ev->kind) {
    case CAP_EV_GPU_SPAN:
        return on_gpu(L, &ev->u.gpu_span);
    case CAP_EV_COUNTER:
        return on_counter(L, &ev->u.counter);
    case CAP_EV_THREAD: /* counted even when it records no scope */
        return thread_declared(L, ev->u.thread.tid,
                               ev->u.thread.name
                                   ? ev->u.thread.name
                                   : root_name(L, AN_CPU, ev->u.thread.tid));
    default:
        return 0;
    }
}

/* A batch of events into the model, in order: 0, or -1 out of memory.
 * CPU scopes, nearly every event, without the switch's jump. Made once
 * for batches begun with --frames' values packed (pack: apply_packed,
 * pack_fast inline: 4.5 % fewer instructions for --frames --csv of
 * realistic 10 M) and once for the others (apply_plain: no test of the
 * pack per scope). The pack may start or stop within a batch: pack_fast
 * checks it, and pf_note takes what either loop leaves to it. */
static inline __attribute__((always_inline)) int
apply_as(loader *L, const cap_event *evs, size_t n, const int pack)
{
    for (size_t i = 0; i < n; i++) {
        const cap_event *ev = &evs[i];
        int rc = __builtin_expect(ev->kind == CAP_EV_SCOPE, 1)
                     ? on_scope(L, &ev->u.scope, pack)
                     : apply_other(L, ev);
        if (rc != 0)
            return rc;
    }
    return 0;
}

__attribute__((noinline)) static int apply_packed(loader *L,
                                                  const cap_event *evs,
                                                  size_t n)
{
    return apply_as(L, evs, n, 1);
}

__attribute__((noinline)) static int apply_plain(loader *L,
                                                 const cap_event *evs,
                                                 size_t n)
{
    return apply_as(L, evs, n, 0);
}

static int apply(loader *L, const cap_event *evs, size_t n)
{
    return L->packing ? apply_packed(L, evs, n) : apply_plain(L, evs, n);
}

/* A scan's batch (values_only, one thread): each scope straight to its
 * row's value in its frame, as scope_value takes it from on_scope (the
 * same rows in the same order, the same values), without the record, the
 * recursion check and the calls between; the ring's usual case inline
 * (win_note does the rest: a new row, a late piece, frames leaving). */
static int apply_values(loader *L, const cap_event *evs, size_t n)
{
    const int have_cutoff = L->have_cutoff;
    const int64_t cutoff_ns = L->cutoff_ns;
    for (size_t i = 0; i < n; i++) {
        const cap_event *ev = &evs[i];
        if (ev->kind != CAP_EV_SCOPE) {
            if (apply(L, ev, 1) != 0)
                return -1;
            continue;
        }
        const cap_ev_scope *e = &ev->u.scope;
        if (have_cutoff && e->begin_ns < cutoff_ns)
            continue;
        if (value_of(L, e->name, e->tid, e->depth, e->begin_ns, e->end_ns,
                     cap_self_ns(e->begin_ns, e->end_ns, e->children_ns)) != 0)
            return -1;
    }
    return 0;
}

/* ---- decoding ahead on a second thread ----------------------------------
 * The reader thread fills the slots of a ring: a run of one thread's
 * scopes as records in ticks (cap_reader_next_scopes, 40 bytes each,
 * their stacks decoded into the slot's stk once per change: the ends of a
 * run share one), or one event of another kind (its stack, if any, copied
 * into the slot's arena) followed by the records of the run a section's
 * first scope begins. The name of each thread or track as the reader knew
 * it at that thread's first counted event goes into the slot's roots
 * (root_name), and so do the wait flags of names new to the load
 * (over_time_hint). The calling thread applies each slot in order, the
 * event through apply and the records through apply_recs, which converts
 * their ticks as the reader would, as a one-thread load does, so the
 * model is the same.
 *
 * The split (issue 12): the reader thread's share is the decoding itself
 * (about 285 instructions a realistic scope, reader.c) and the copy into
 * the slot; the model thread's, the conversion and the rest (about 190 on
 * the ranking, plus the frames, rings and histograms). Until the records
 * the reader thread also converted each tick and made an 80-byte event,
 * which fill_events read back to write a 40-byte record of the ns: the
 * reader thread was the longer one (bench_threads --ranking 20 M: 0.58 s
 * against 0.44) and two threads reached 1.44x; with records 0.51 against
 * 0.47, 1.64-1.67x (docs/PERFORMANCE.md, "Scopes as records in ticks").
 * What the model thread needs a scope's stack for it does once per stack
 * (scope_node), and whether a scope recurses is its node's
 * (an_node.recursive, set once when the node is made).
 *
 * The reader thread decodes the records straight into the slot with
 * streaming stores (cap_reader_stream_records), and the stacks into a
 * stage of its own (ahead.stk: the same lines batch after batch, in its
 * core's cache) copied into the slot at once (memcpy). Decoded into the
 * slot with ordinary stores, every line the decoder wrote was one the
 * model thread had read half a ring before, so each store first fetched
 * that line back from the other core, one after another: on a guest
 * whose two vCPUs are 480 ns apart (a cache line's round trip, AMD EPYC
 * family 26) the reader thread took twice its one-thread time and two
 * threads were slower than one (realistic 10 M: 0.56-0.61 s wall against
 * 0.49 s; with a stage copied by memcpy 0.35-0.39 s; non-temporal stores
 * for that copy did no better than memcpy). A streaming store fetches no
 * line, and with no copy at all the reader thread is 7 % shorter: 100 M
 * scopes in 1.94-2.04 s wall against 2.15-2.16 s with the records staged
 * (docs/PERFORMANCE.md, "Records streamed into the slot"). */

/* Up to 4,096 records a slot, half a ring (8 slots, 32 Ki scopes) handed
 * over at a time: with 1,024 the threads met four times as often and the
 * records were rewritten while still in the other core's cache (ranking
 * of 100 M scopes on two idle cores: 3.7-4.0 s wall with 1,024, 3.0 s
 * with 4,096, 1 thread 4.4 s; larger rings gave no more). */
enum { SLOT_EVENTS = 4096, SLOTS = 16 };

typedef struct slot_name {
    an_kind kind;
    uint32_t id;
    size_t off; /* in names */
} slot_name;

/* A slot's stacks: blocks of ARENA_BLOCK entries that never move (a
 * stack copied there is pointed at by its events), reused batch after
 * batch. */
enum { ARENA_BLOCK = 16384 }; /* > CAP_MAX_DEPTH: any stack fits one */

/* Entries of a slot's stk: a run of 4,096 realistic records copies a
 * stack about once per begin, a few entries each, so runs rarely end
 * early for room (at least 2 x CAP_MAX_DEPTH, as the reader asks). */
enum { SLOT_STACKS = 65536 };

typedef struct slot {
    cap_event ev[1]; /* an event that is not a record (n: 0 or 1); the
                        stacks of the events the model takes point into
                        the slot's arena, threads' names into its roots */
    size_t n;
    cap_scope_rec *rec; /* SLOT_EVENTS: a run of one thread's scopes as
                           the reader gives them (cap_reader_next_scopes:
                           ticks, converted by the model thread), after
                           the event; their stacks in stk */
    size_t rec_n;
    uint32_t rec_tid;
    double rec_per; /* their period (cap_scope_run.period_ns) */
    cap_result res;   /* CAP_OK: events; otherwise the reader's result */
    char detail[320]; /* the reader's detail for a result */
    uint32_t *stk;    /* SLOT_STACKS entries: the stacks of the
                         records */
    uint32_t **blk;   /* the arena's blocks: the stacks of the other
                         events the model takes */
    size_t nblk, blk_cap;
    size_t blk_at, blk_n; /* the block in use, entries used in it */
    slot_name *roots; /* first events of threads and tracks */
    size_t roots_n, roots_cap;
    char *names;
    size_t names_n, names_cap;
    struct slot_wait {  /* over_time_hint: CPU name ids first seen in the
                           batch, and whether each is a wait (2) or not */
        uint32_t id;
        uint8_t w;
    } *waits;
    size_t waits_n, waits_cap;
} slot;

typedef struct ahead {
    loader *L;
    slot *slots;
    size_t head, tail; /* filled: [tail, head) */
    int stop;          /* the consumer gave up */
    int ended;         /* the reader thread posted its last slot */
    int prod_waiting, cons_waiting;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* the reader thread's own copies of what the model decides by */
    uint8_t *seen_cpu; /* by tid */
    uint8_t seen_gpu[CAP_MAX_TRACKS];
    int carry_waits;   /* over_time_hint: the wait flags go with the
                          batches (the model sums work and waits apart) */
    struct id_map name_seen; /* by CPU name id, the reader thread's */
    int failed;        /* the reader thread ran out of memory */
    /* the reader thread's stage: an event and the records' stacks are
       decoded and prepared here, then copied into their slot (the
       records themselves are streamed into the slot) */
    cap_event stage[1];
    uint32_t *stk;       /* SLOT_STACKS: the records' stacks */
    cap_scope_rec *recs; /* the slots' records in one block (huge_alloc),
                            or NULL: each slot's own */
} ahead;

static const char *root_name(const loader *L, an_kind kind, uint32_t id)
{
    if (!L->slot) {
        const char *nm = kind == AN_CPU ? cap_reader_thread_name(L->r, id)
                                        : cap_reader_track_name(L->r, id);
        /* a chunk after the first: a thread declared in an earlier
           chunk only is named as the footer names it */
        if (!nm && L->decl && L->chunk_index && kind == AN_CPU)
            nm = cap_reader_thread_name(L->decl, id);
        return nm;
    }
    for (size_t i = 0; i < L->slot->roots_n; i++)
        if (L->slot->roots[i].kind == kind && L->slot->roots[i].id == id)
            return L->slot->roots[i].off == SIZE_MAX
                       ? NULL
                       : L->slot->names + L->slot->roots[i].off;
    return NULL;
}

int an_grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * size);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

static int slot_root(slot *s, an_kind kind, uint32_t id, const char *name)
{
    size_t len = name ? strlen(name) + 1 : 0;
    if (an_grow((void **)&s->roots, &s->roots_cap, s->roots_n + 1,
             sizeof *s->roots) != 0 ||
        an_grow((void **)&s->names, &s->names_cap, s->names_n + len + 1, 1) != 0)
        return -1;
    s->roots[s->roots_n++] = (slot_name){kind, id, name ? s->names_n : 0};
    if (name) {
        memcpy(s->names + s->names_n, name, len);
        s->names_n += len;
    } else {
        s->roots[s->roots_n - 1].off = SIZE_MAX; /* no name: NULL */
    }
    return 0;
}

/* Room for `depth` entries in s's arena (the next block once this one is
 * full); NULL out of memory. */
static uint32_t *arena_take(slot *s, uint32_t depth)
{
    if (s->nblk && s->blk_n + depth <= ARENA_BLOCK) {
        uint32_t *d = s->blk[s->blk_at] + s->blk_n;
        s->blk_n += depth;
        return d;
    }
    size_t at = s->nblk ? s->blk_at + 1 : 0;
    if (at == s->nblk) {
        if (an_grow((void **)&s->blk, &s->blk_cap, s->nblk + 1,
                    sizeof *s->blk) != 0 ||
            !(s->blk[s->nblk] = malloc(ARENA_BLOCK * sizeof **s->blk)))
            return NULL;
        s->nblk++;
    }
    s->blk_at = at;
    s->blk_n = depth;
    return s->blk[at];
}

/* Reverse roots[a..b). */
static void roots_reverse(slot_name *r, size_t a, size_t b)
{
    for (; a + 1 < b; a++, b--) {
        slot_name t = r[a];
        r[a] = r[b - 1];
        r[b - 1] = t;
    }
}

/* The root of thread tid into slot s, the first time the reader thread
 * meets it: 0, or -1 out of memory. */
static int slot_root_cpu(ahead *A, slot *s, uint32_t tid)
{
    if (A->seen_cpu[tid])
        return 0;
    A->seen_cpu[tid] = 1;
    return slot_root(s, AN_CPU, tid, cap_reader_thread_name(A->L->r, tid));
}

/* Whether a scope that begins at ns begin counts: all of them, or those
 * from the cut-off on (--skip-seconds; on_scope's test). */
static inline int past_cutoff(const loader *L, int64_t begin)
{
    return !L->have_cutoff || begin >= L->cutoff_ns;
}

/* A CPU name met by the reader thread: its wait flag into the slot the
 * first time (over_time_hint): 0, or -1 out of memory. */
static int slot_wait(ahead *A, slot *s, uint32_t name)
{
    if (id_get(&A->name_seen, name))
        return 0;
    if (id_set(&A->name_seen, name, 1) != 0 ||
        an_grow((void **)&s->waits, &s->waits_cap, s->waits_n + 1,
                sizeof *s->waits) != 0)
        return -1;
    s->waits[s->waits_n++] =
        (struct slot_wait){name, name_is_wait(A->L, A->L->r, name) ? 2 : 1};
    return 0;
}

/* A copy of an event's stack (depth names) in slot s's arena, where it
 * stays while the slot is applied; NULL when out of memory. */
static const uint32_t *arena_copy(slot *s, const uint32_t *stack,
                                  uint32_t depth)
{
    uint32_t *d = arena_take(s, depth);
    if (d && depth)
        memcpy(d, stack, depth * sizeof *d);
    return d;
}

/* fill's work for the event of a slot (one, not a record): its stack
 * copied into the slot's arena, its thread's or track's first root name,
 * the wait flag of a new name: 0, or -1 out of memory; *threads set when
 * it declares a thread (its name goes into the roots after). */
static int fill_event(ahead *A, slot *s, cap_event *ev, int *threads)
{
    loader *L = A->L;
    if (ev->kind == CAP_EV_SCOPE) {
        cap_ev_scope *e = &ev->u.scope;
        if (!past_cutoff(L, e->begin_ns) || L->values_only)
            return 0; /* on_scope skips it first; apply_values takes no
                         stack, no root, no flag */
        if (!(e->stack = arena_copy(s, e->stack, e->depth)))
            return -1;
        if (slot_root_cpu(A, s, e->tid) != 0)
            return -1;
        return A->carry_waits ? slot_wait(A, s, e->name) : 0;
    }
    if (ev->kind == CAP_EV_THREAD) {
        *threads = 1;
    } else if (ev->kind == CAP_EV_GPU_SPAN) {
        cap_ev_gpu_span *e = &ev->u.gpu_span;
        if (!(e->stack = arena_copy(s, e->stack, e->depth)))
            return -1;
        if (!(L->have_cutoff && frame_by_index(L->m, e->cpu_frame) < 0) &&
            !A->seen_gpu[e->track]) {
            A->seen_gpu[e->track] = 1;
            if (slot_root(s, AN_GPU, e->track,
                          cap_reader_track_name(L->r, e->track)) != 0)
                return -1;
        }
    }
    /* counters carry no pointer; the model takes nothing else */
    return 0;
}

/* fill's work for the n records just decoded (thread tid, period per)
 * into recs: the thread's first root name, once one of them counts (the
 * cut-off), and the wait flags of new names: 0, or -1 out of memory. The
 * usual load (no cut-off, no wait flags) tests two flags and is done; a
 * scan (apply_values) takes no root and no flag. */
static int fill_recs(ahead *A, slot *s, const cap_scope_rec *recs, size_t n,
                     uint32_t tid, double per)
{
    const loader *L = A->L;
    if (L->values_only)
        return 0;
    if (!A->carry_waits && (!L->have_cutoff || A->seen_cpu[tid]))
        return slot_root_cpu(A, s, tid); /* nothing to look at per record */
    for (size_t i = 0; i < n; i++) {
        const cap_scope_rec *q = &recs[i];
        if (!past_cutoff(L, cap_ticks_ns(q->begin, per)))
            continue;
        if (slot_root_cpu(A, s, tid) != 0 ||
            (A->carry_waits && slot_wait(A, s, q->name) != 0))
            return -1;
    }
    return 0;
}

/* Records from the reader into slot s, after its event (if any): the
 * records streamed into the slot, their stacks copied from the stage at
 * once. 0, or -1 out of memory. */
static int fill_take_recs(ahead *A, slot *s)
{
    cap_scope_run run;
    size_t rn = 0;
    cap_reader_next_scopes(A->L->r, s->rec, SLOT_EVENTS, &rn, A->stk,
                           SLOT_STACKS, &run);
    if (!rn)
        return 0;
    if (fill_recs(A, s, s->rec, rn, run.tid, run.period_ns) != 0)
        return -1;
    /* one copy, in a burst: the lines' fetches from the other core
       overlap, where the decoder's stores, spread over its work, waited
       for them one by one */
    memcpy(s->stk, A->stk, run.stacks_used * sizeof *A->stk);
    s->rec_n = rn;
    s->rec_tid = run.tid;
    s->rec_per = run.period_ns;
    return 0;
}

/* Fill slot s from the reader: a run of scopes as records, streamed into
 * the slot, their stacks decoded into the reader thread's own stage (its
 * lines stay in this core's cache, batch after batch) and copied into
 * the slot; or one event (prepared for the model by fill_event),
 * followed by the run of records a section's first scope begins. */
static int fill(ahead *A, slot *s)
{
    loader *L = A->L;
    s->roots_n = s->names_n = s->waits_n = 0;
    s->detail[0] = 0;
    s->blk_at = s->blk_n = 0;
    s->n = s->rec_n = 0;
    if ((!s->stk && !(s->stk = malloc(SLOT_STACKS * sizeof *s->stk))) ||
        (!s->rec && !(s->rec = malloc(SLOT_EVENTS * sizeof *s->rec))))
        return -1;
    s->res = CAP_OK;
    if (fill_take_recs(A, s) != 0)
        return -1;
    if (s->rec_n)
        return 0;
    /* one event: the others come one a call anyway, and a run of scopes
       after a section's first follows as records */
    cap_event *ev = A->stage;
    size_t got = 0;
    s->res = cap_reader_next_batch_into(L->r, ev, 1, &got, A->stk,
                                        SLOT_STACKS);
    if (s->res != CAP_OK) {
        snprintf(s->detail, sizeof s->detail, "%s", cap_reader_detail(L->r));
        return 0;
    }
    int threads = 0;
    if (fill_event(A, s, ev, &threads) != 0)
        return -1;
    if (threads) {
        /* the thread it declares goes first: root_name finds the first
         * entry of a thread, and its declared name wins over the
         * reader's */
        size_t k = s->roots_n;
        if (slot_root(s, AN_CPU, ev->u.thread.tid, ev->u.thread.name) != 0)
            return -1;
        ev->u.thread.name = NULL; /* in the slot's roots */
        roots_reverse(s->roots, 0, k);
        roots_reverse(s->roots, k, s->roots_n);
        roots_reverse(s->roots, 0, s->roots_n);
    }
    s->ev[0] = *ev;
    s->n = 1;
    return ev->kind == CAP_EV_SCOPE ? fill_take_recs(A, s) : 0;
}

/* A slot's records (cap_reader_next_scopes) into the model, as on_scope
 * takes events (those before the cut-off left out): the ticks converted
 * here, as the reader converts them. */
static inline __attribute__((always_inline)) int
apply_recs_as(loader *L, const cap_scope_rec *rv, size_t n,
              const uint32_t *const stk, const uint32_t tid, const double per,
              const int pack, const int unit, const int mode)
{
    /* mode (recs_mode): what the load is known to be, the thread's path
       cache then looked up once for the batch */
    path_cache *hc = NULL;
    if (mode != REC_ANY && !(hc = event_cache(L, AN_CPU, tid)))
        return -1;
    const int rec = mode == REC_NO_TREE || (mode == REC_ANY && !L->tree);
    const int have_cutoff = mode == REC_ANY && L->have_cutoff;
    const int64_t cutoff_ns = L->cutoff_ns;
    /* the reader's conversion: its usual case known from one compare of
       the ticks with lim (unit: a period of exactly 1, the ticks as they
       are) */
    const uint64_t lim = cap__ticks_lim(per);
    for (size_t i = 0; i < n; i++) {
        const cap_scope_rec *e = &rv[i];
        const uint32_t *st = stk + e->stack;
        int64_t b, en, c;
        if (unit) {
            b = e->begin;
            en = e->end;
            c = (int64_t)e->children;
        } else {
            b = cap__ticks_ns_lim(e->begin, per, lim);
            en = cap__ticks_ns_lim(e->end, per, lim);
            c = cap__ticks_dur_ns_lim(e->children, per, lim);
        }
        if (have_cutoff && b < cutoff_ns)
            continue;
        if (mode == REC_ANY && L->values_only) { /* a scan: the value
                                                    alone, as apply_values */
            if (value_of(L, e->name, tid, e->depth, b, en,
                         cap_self_ns(b, en, c)) != 0)
                return -1;
            continue;
        }
        hand h = make_hand(b, en, c, e->name, tid, e->depth, st, rec);
        if (scope_core_in(L, &h, st, pack, mode, hc) != 0)
            return -1;
    }
    return 0;
}

/* The mode of apply_recs_as a batch takes on this load. */
static inline int recs_mode(const loader *L)
{
    if (L->have_cutoff || L->values_only)
        return REC_ANY;
    return L->tree ? REC_TREE : REC_NO_TREE;
}

/* apply_recs_as for one mode, made with a period of exactly 1 and not. */
__attribute__((always_inline)) static inline int
apply_recs_unit(loader *L, const cap_scope_rec *rv, size_t n,
                const uint32_t *stk, uint32_t tid, double per, const int pack,
                const int mode)
{
    return per == 1.0 ? apply_recs_as(L, rv, n, stk, tid, per, pack, 1, mode)
                      : apply_recs_as(L, rv, n, stk, tid, per, pack, 0, mode);
}

/* apply_recs_as made for each mode (recs_mode, tested once a batch). */
__attribute__((always_inline)) static inline int
apply_recs_modes(loader *L, const cap_scope_rec *rv, size_t n,
                 const uint32_t *stk, uint32_t tid, double per, const int pack)
{
    switch (recs_mode(L)) {
    case REC_TREE:
        return apply_recs_unit(L, rv, n, stk, tid, per, pack, REC_TREE);
    case REC_NO_TREE:
        return apply_recs_unit(L, rv, n, stk, tid, per, pack, REC_NO_TREE);
    default:
        return apply_recs_unit(L, rv, n, stk, tid, per, pack, REC_ANY);
    }
}

__attribute__((noinline)) static int
apply_recs_packed(loader *L, const cap_scope_rec *rv, size_t n,
                  const uint32_t *stk, uint32_t tid, double per)
{
    return apply_recs_modes(L, rv, n, stk, tid, per, 1);
}

__attribute__((noinline)) static int
apply_recs_plain(loader *L, const cap_scope_rec *rv, size_t n,
                 const uint32_t *stk, uint32_t tid, double per)
{
    return apply_recs_modes(L, rv, n, stk, tid, per, 0);
}

/* Records into the model. */
static int apply_recs(loader *L, const cap_scope_rec *rv, size_t n,
                      const uint32_t *stk, uint32_t tid, double per)
{
    return L->packing ? apply_recs_packed(L, rv, n, stk, tid, per)
                      : apply_recs_plain(L, rv, n, stk, tid, per);
}

/* Apply slot s's event and records in order, as a one-thread load
 * applies them. */
static int apply_slot(loader *L, const slot *s)
{
    int rc = 0;
    if (s->n)
        rc = L->values_only ? apply_values(L, s->ev, s->n)
                            : apply(L, s->ev, s->n);
    if (rc == 0 && s->rec_n)
        rc = apply_recs(L, s->rec, s->rec_n, s->stk, s->rec_tid, s->rec_per);
    return rc;
}

static void *reader_main(void *arg)
{
    ahead *A = arg;
    uint64_t seen = 0;
    for (;;) {
        /* a full ring: wait until half of it is free again, so that the
         * threads hand over half a ring at a time, not a slot */
        pthread_mutex_lock(&A->mu);
        if (A->head - A->tail == SLOTS && !A->stop) {
            A->prod_waiting = 1;
            while (A->head - A->tail > SLOTS / 2 && !A->stop)
                pthread_cond_wait(&A->cv, &A->mu);
            A->prod_waiting = 0;
        }
        int stop = A->stop;
        pthread_mutex_unlock(&A->mu);
        if (stop)
            return NULL;
        slot *s = &A->slots[A->head % SLOTS];
        if (fill(A, s) != 0) {
            s->res = CAP_E_NOMEM;
            s->n = 0;
            snprintf(s->detail, sizeof s->detail, "out of memory");
        }
        uint64_t before = seen;
        seen += s->n + s->rec_n;
        if ((seen >> 20) != (before >> 20))
            progress(A->L, "reading", 0);
        cap_result res = s->res;
        int last =
            res != CAP_OK && res != CAP_E_CORRUPT && res != CAP_E_TRUNCATED;
        pthread_mutex_lock(&A->mu);
        A->head++;
        if (last)
            A->ended = 1;
        if (A->cons_waiting && (A->head - A->tail >= SLOTS / 2 || last))
            pthread_cond_broadcast(&A->cv);
        pthread_mutex_unlock(&A->mu);
        if (last)
            return NULL; /* CAP_DONE or a final error: the last slot */
    }
}

static cap_result pass_ahead(loader *L, char *detail, size_t dsz)
{
    an_capture *m = L->m;
    ahead A = {.L = L, .carry_waits = m->ot_bin != NULL};
    A.slots = calloc(SLOTS, sizeof *A.slots);
    A.seen_cpu = calloc(CAP_MAX_THREADS, 1);
    A.stk = malloc(SLOT_STACKS * sizeof *A.stk);
    /* every slot's records in one block of huge pages where the system
       gives them: the reader thread's streamed stores into 2.6 MB of
       fresh 4 KiB pages were a quarter of a two-thread 10 M scope load's
       page faults, on the thread that bounds it (else fill mallocs each
       slot's) */
    A.recs = huge_alloc((size_t)SLOTS * SLOT_EVENTS * sizeof *A.recs);
    if (!A.slots || !A.seen_cpu || !A.stk) {
        free(A.recs);
        free(A.stk);
        free(A.slots);
        free(A.seen_cpu);
        return CAP_E_NOMEM;
    }
    for (size_t i = 0; A.recs && i < SLOTS; i++)
        A.slots[i].rec = A.recs + i * SLOT_EVENTS;
    pthread_mutex_init(&A.mu, NULL);
    pthread_cond_init(&A.cv, NULL);
    pthread_t th;
    cap_result res = CAP_OK;
    L->reader_busy = 1;
    /* the records go to the other thread: past this core's cache */
    cap_reader_stream_records(L->r, 1);
    if (pthread_create(&th, NULL, reader_main, &A) != 0) {
        res = CAP_E_NOMEM;
        goto out;
    }
    for (;;) {
        pthread_mutex_lock(&A.mu);
        if (A.head == A.tail) { /* empty: wait for half a ring */
            A.cons_waiting = 1;
            while (A.head - A.tail < SLOTS / 2 && !A.ended)
                pthread_cond_wait(&A.cv, &A.mu);
            A.cons_waiting = 0;
        }
        pthread_mutex_unlock(&A.mu);
        slot *s = &A.slots[A.tail % SLOTS];
        cap_result r = s->res;
        if (r == CAP_OK) {
            L->slot = s;
            L->gen++; /* the stacks of a new slot */
            int rc = 0;
            for (size_t i = 0; i < s->waits_n && rc == 0; i++)
                rc = name_wait_set(L, s->waits[i].id, s->waits[i].w);
            if (rc == 0)
                rc = apply_slot(L, s);
            L->slot = NULL;
            if (rc != 0)
                res = CAP_E_NOMEM;
        } else if (r == CAP_E_CORRUPT || r == CAP_E_TRUNCATED) {
            if (r == CAP_E_CORRUPT)
                m->corrupt_seen = 1;
            if (!m->damage_detail[0])
                snprintf(m->damage_detail, sizeof m->damage_detail, "%s",
                         s->detail);
        } else if (r != CAP_DONE) {
            snprintf(detail, dsz, "%s", s->detail);
            res = r;
        }
        pthread_mutex_lock(&A.mu);
        A.tail++;
        if (res != CAP_OK)
            A.stop = 1;
        if (A.stop || (A.prod_waiting && A.head - A.tail <= SLOTS / 2))
            pthread_cond_broadcast(&A.cv);
        pthread_mutex_unlock(&A.mu);
        if (res != CAP_OK || r == CAP_DONE ||
            (r != CAP_OK && r != CAP_E_CORRUPT && r != CAP_E_TRUNCATED))
            break;
    }
    pthread_join(th, NULL);
out:
    cap_reader_stream_records(L->r, 0);
    L->reader_busy = 0;
    for (size_t i = 0; i < SLOTS; i++) {
        for (size_t b = 0; b < A.slots[i].nblk; b++)
            free(A.slots[i].blk[b]);
        free(A.slots[i].blk);
        free(A.slots[i].stk);
        if (!A.recs)
            free(A.slots[i].rec);
        free(A.slots[i].roots);
        free(A.slots[i].names);
        free(A.slots[i].waits);
    }
    free(A.recs);
    id_free(&A.name_seen);
    free(A.slots);
    free(A.seen_cpu);
    free(A.stk);
    pthread_mutex_destroy(&A.mu);
    pthread_cond_destroy(&A.cv);
    if (res == CAP_OK)
        progress(L, "", 1);
    return res;
}

/* How many threads load path: opt->threads, else the environment's
 * CAP_READ_THREADS, else 2 for a file over 8 MiB on 2 cores or more. */
static int load_threads(const an_options *o, const char *path)
{
    if (o->threads == 1 || o->threads == 2)
        return o->threads;
    const char *e = getenv("CAP_READ_THREADS");
    if (e && (strcmp(e, "1") == 0 || strcmp(e, "2") == 0))
        return e[0] - '0';
    struct stat sb;
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || stat(path, &sb) != 0 ||
        sb.st_size <= (8 << 20))
        return 1;
    return 2;
}

/* Every event of L->r into the model: scopes in runs of records, the
 * rest in batches. A chunk's loader takes damage as a reason to read
 * whole (inexact); a load notes it and goes on. */
static cap_result read_events(loader *L, char *detail, size_t dsz)
{
    an_capture *m = L->m;
    cap_result res = CAP_OK;
    enum { BATCH = 256 };
    cap_event evs[BATCH]; /* on the stack: a load of a small capture
                             allocates little */
    uint64_t seen = 0;
    /* runs of scopes come as records (ticks, converted by apply_recs),
       the rest as events */
    enum { STACKS = 8 * CAP_MAX_DEPTH };
    cap_scope_rec *rv = malloc(BATCH * sizeof *rv);
    uint32_t *stk = malloc(STACKS * sizeof *stk);
    if (!rv || !stk) {
        free(rv);
        free(stk);
        return CAP_E_NOMEM;
    }
    for (;;) {
        size_t n = 0;
        cap_scope_run run;
        cap_reader_next_scopes(L->r, rv, BATCH, &n, stk, STACKS, &run);
        const int recs = n != 0;
        if (!recs) {
            res = cap_reader_next_batch(L->r, evs, BATCH, &n);
            if (res == CAP_DONE) {
                res = CAP_OK;
                break;
            }
            if (res == CAP_E_CORRUPT || res == CAP_E_TRUNCATED) {
                L->inexact |= L->chunk;
                note_damage(m, L->r, res);
                continue;
            }
            if (res != CAP_OK) {
                snprintf(detail, dsz, "%s", cap_reader_detail(L->r));
                break;
            }
        }
        uint64_t before = seen;
        seen += n;
        if ((seen >> 20) != (before >> 20))
            progress(L, "reading", 0);
        L->gen++; /* the stacks of a new batch */
        if ((recs ? apply_recs(L, rv, n, stk, run.tid, run.period_ns)
             : L->values_only ? apply_values(L, evs, n)
                              : apply(L, evs, n)) != 0) {
            res = CAP_E_NOMEM;
            break;
        }
    }
    free(rv);
    free(stk);
    return res;
}

static void loader_free(loader *L);
static int sort_pf(an_scope *s);

/* ---- a chunked load: the file's chunks on N threads ---------------------
 * Each chunk (cap_chunks.h: a run of blocks that reads on its own) is
 * loaded by a loader of its own into a model of its own, exact (its
 * series whole), the frames borrowed from the load's first pass; the
 * chunks' models are merged into the load's in chunk order (load/driver.h):
 * nodes and rows in order of first appearance, sums added, each chunk's
 * values by (row, frame) handed to pf_note frame by frame (a frame cut by
 * a chunk's edge gets its pieces from both, summed there as one thread's
 * pieces are), counters in order. What a chunk cannot get right alone
 * (inexact: GPU spans, a renamed thread, damage, unnamed ids, a scope
 * spanning frames that began before the chunk) makes the load read the
 * file whole (LOAD_WHOLE). */

/* load(): the chunks could not be merged exactly: load again, whole. */
#define LOAD_WHOLE ((cap_result)97)

typedef struct chunk_val {
    uint32_t frame, row;
    int64_t v;
} chunk_val;

typedef struct chunk_tid {
    uint32_t tid, root;
    int in_frames, outside;
} chunk_tid;

typedef struct chunk_res {
    an_capture *m;        /* frames borrowed from the load's model */
    uint32_t *counter_name; /* each counter's name id */
    chunk_tid *tids;
    size_t ntids;
    chunk_val *vals;      /* by frame, then row */
    size_t nvals;
    cap_reader_stats st;
    int64_t cpu_first;
    int inexact;
    cap_result res;
    char detail[320];
} chunk_res;

typedef struct chunk_ctx {
    loader *L;            /* the load: read only on the chunks' threads */
    an_options co;        /* the chunks' loaders' options */
    const cap_reader *decl;
    uint32_t *nmap, *rmap; /* merge: chunk node / row -> the load's */
    size_t nmap_cap, rmap_cap;
    int inexact;
    cap_result res;
    char detail[320];
} chunk_ctx;

static void chunk_free(void *ctx, void *p)
{
    (void)ctx;
    chunk_res *R = p;
    if (!R)
        return;
    if (R->m) {
        R->m->frames = NULL; /* borrowed */
        R->m->frame_index = NULL;
        an_free(R->m);
    }
    free(R->counter_name);
    free(R->tids);
    free(R->vals);
    free(R);
}

/* A chunk's loader's results kept for the merge: its threads, its
 * counters' names and its values by frame (counting sort; the rows'
 * series let go). 0, or -1 when out of memory. */
static int chunk_keep(loader *L, chunk_res *R)
{
    an_capture *m = L->m;
    for (size_t i = 0; i < L->threads_cap; i++)
        if (L->threads[i] && L->threads[i]->root != NONE)
            R->ntids++;
    R->tids = malloc((R->ntids ? R->ntids : 1) * sizeof *R->tids);
    R->counter_name = malloc((m->ncounters ? m->ncounters : 1) *
                             sizeof *R->counter_name);
    if (!R->tids || !R->counter_name)
        return -1;
    for (size_t i = 0, k = 0; i < L->threads_cap; i++) {
        const path_cache *c = L->threads[i];
        if (c && c->root != NONE)
            R->tids[k++] = (chunk_tid){(uint32_t)i, c->root, c->in_frames,
                                       c->outside};
    }
    const struct id_map *co = &L->counter_of;
    for (size_t i = 0; i < co->dcap; i++)
        if (co->d[i])
            R->counter_name[co->d[i] - 1] = (uint32_t)i;
    for (size_t i = 0; i < co->hcap; i++)
        if (co->hk[i])
            R->counter_name[co->hv[i] - 1] = co->hk[i];
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t r = 0; r < m->nscopes; r++) {
        an_scope *s = &m->scopes[r];
        if (sort_pf(s) != 0)
            return -1;
        R->nvals += s->pf_n;
        if (s->pf_n && s->pf_frame[0] < lo)
            lo = s->pf_frame[0];
        if (s->pf_n && s->pf_frame[s->pf_n - 1] > hi)
            hi = s->pf_frame[s->pf_n - 1];
    }
    if (!R->nvals)
        return 0;
    size_t span = (size_t)(hi - lo) + 2;
    size_t *at = calloc(span, sizeof *at);
    R->vals = malloc(R->nvals * sizeof *R->vals);
    if (!at || !R->vals) {
        free(at);
        return -1;
    }
    for (size_t r = 0; r < m->nscopes; r++)
        for (size_t k = 0; k < m->scopes[r].pf_n; k++)
            at[m->scopes[r].pf_frame[k] - lo + 1]++;
    for (size_t f = 1; f < span; f++)
        at[f] += at[f - 1];
    for (size_t r = 0; r < m->nscopes; r++) {
        an_scope *s = &m->scopes[r];
        for (size_t k = 0; k < s->pf_n; k++)
            R->vals[at[s->pf_frame[k] - lo]++] =
                (chunk_val){s->pf_frame[k], (uint32_t)r, s->pf_self[k]};
        free(s->pf_frame);
        free(s->pf_self);
        s->pf_frame = NULL;
        s->pf_self = NULL;
        s->pf_n = s->pf_cap = 0;
    }
    free(at);
    return 0;
}

/* One chunk, on any thread (an_driver_ops.chunk). */
static void *chunk_run(void *vctx, size_t i, const cap_chunk *ch, int fd)
{
    chunk_ctx *X = vctx;
    const loader *G = X->L;
    chunk_res *R = calloc(1, sizeof *R);
    an_capture *m = calloc(1, sizeof *m);
    if (!R || !m) {
        free(R);
        free(m);
        return NULL;
    }
    R->m = m;
    m->frames = G->m->frames;
    m->nframes = G->m->nframes;
    m->frame_index = G->m->frame_index;
    m->frame_index0 = G->m->frame_index0;
    loader L = {.m = m, .o = &X->co, .cpu_first = INT64_MAX,
                .tree = G->tree, .cutoff_ns = G->cutoff_ns,
                .have_cutoff = G->have_cutoff, .chunk = 1,
                .chunk_index = i, .decl = X->decl};
    R->res = cap_chunks_open(&L.r, fd, ch->begin, ch->end, R->detail,
                             sizeof R->detail);
    if (R->res == CAP_OK) {
        cap_reader_set_filter(L.r, 1u << CAP_EV_FRAME);
        R->res = read_events(&L, R->detail, sizeof R->detail);
    }
    if (R->res == CAP_OK) {
        R->st = *cap_reader_get_stats(L.r);
        L.inexact |= R->st.unnamed_ids != 0;
        if (pf_flush(&L) != 0 || chunk_keep(&L, R) != 0)
            R->res = CAP_E_NOMEM;
    }
    R->inexact = L.inexact;
    R->cpu_first = L.cpu_first;
    loader_free(&L);
    return R;
}

static int map_room(uint32_t **p, size_t *cap, size_t n)
{
    return n <= *cap ? 0 : an_grow((void **)p, cap, n, sizeof **p);
}

static void stats_add(cap_reader_stats *a, const cap_reader_stats *b)
{
    a->chunks += b->chunks - 1; /* each chunk's reader read the META */
    a->corrupt_chunks += b->corrupt_chunks;
    a->unknown_chunks += b->unknown_chunks;
    a->scopes += b->scopes;
    a->frames += b->frames;
    a->gpu_spans += b->gpu_spans;
    a->gpu_unmeasured += b->gpu_unmeasured;
    a->gpu_invalid += b->gpu_invalid;
    a->gpu_untimed_frames += b->gpu_untimed_frames;
    a->dropped_scopes += b->dropped_scopes;
    a->closed_at_end += b->closed_at_end;
    a->clock_backwards += b->clock_backwards;
    a->stray_ends += b->stray_ends;
}

/* A chunk's call tree and rows into the load's (X->nmap, X->rmap). */
static int merge_tree(chunk_ctx *X, const an_capture *c)
{
    loader *G = X->L;
    an_capture *m = G->m;
    if (map_room(&X->nmap, &X->nmap_cap, c->nnodes) != 0 ||
        map_room(&X->rmap, &X->rmap_cap, c->nscopes) != 0)
        return -1;
    for (size_t k = 0; k < c->nnodes; k++) {
        const an_node *n = &c->nodes[k];
        uint32_t g = n->is_root ? root_get(m,
                                           &G->ix_roots[n->kind == AN_CPU ? 0
                                                                           : 1],
                                           n->kind, n->name)
                                : node_get(G, X->nmap[n->parent], n->kind,
                                           n->name_id);
        if (g == NONE)
            return -1;
        X->nmap[k] = g;
        an_node *gn = &m->nodes[g];
        gn->calls += n->calls;
        cap_stats_sat_add(&gn->total_ns, n->total_ns);
        cap_stats_sat_add(&gn->self_ns, n->self_ns);
    }
    for (size_t r = 0; r < c->nscopes; r++) {
        const an_scope *s = &c->scopes[r];
        uint32_t key = G->o->by_path ? X->nmap[s->name_id] : s->name_id;
        long g = s->kind == AN_CPU && !G->o->by_path ? cpu_row(G, key)
                                                     : scope_get(m, s->kind,
                                                                 key);
        if (g < 0)
            return -1;
        X->rmap[r] = (uint32_t)g;
        if (!G->tree || s->kind == AN_GPU) {
            an_scope *gs = &m->scopes[g];
            gs->calls += s->calls;
            cap_stats_sat_add(&gs->total_ns, s->total_ns);
            cap_stats_sat_add(&gs->self_ns, s->self_ns);
        }
    }
    for (size_t k = 0; k < c->nnodes; k++)
        if (c->nodes[k].row1 && !m->nodes[X->nmap[k]].row1)
            m->nodes[X->nmap[k]].row1 = X->rmap[c->nodes[k].row1 - 1] + 1;
    for (size_t i = 0; i < c->nthreads; i++)
        if (add_name(&G->ix_threads, &m->threads, &m->nthreads,
                     c->threads[i]) != 0)
            return -1;
    for (size_t i = 0; i < c->ntracks; i++)
        if (add_name(&G->ix_tracks, &m->tracks, &m->ntracks, c->tracks[i]) !=
            0)
            return -1;
    return 0;
}

/* A chunk's counters after the load's (in order of first appearance). */
static int merge_counters(loader *G, const chunk_res *R)
{
    an_capture *m = G->m;
    for (size_t j = 0; j < R->m->ncounters; j++) {
        const an_counter *cc = &R->m->counters[j];
        uint32_t id = R->counter_name[j];
        uint32_t at = id_get(&G->counter_of, id);
        if (!at) {
            an_counter *p = realloc(m->counters,
                                    (m->ncounters + 1) * sizeof *p);
            if (!p)
                return -1;
            m->counters = p;
            memset(&p[m->ncounters], 0, sizeof *p);
            at = (uint32_t)++m->ncounters;
            if (id_set(&G->counter_of, id, at) != 0)
                return -1;
        }
        an_counter *gc = &m->counters[at - 1];
        if (cc->n && an_grow((void **)&gc->s, &gc->cap, gc->n + cc->n,
                             sizeof *gc->s) != 0)
            return -1;
        if (cc->n)
            memcpy(gc->s + gc->n, cc->s, cc->n * sizeof *gc->s);
        gc->n += cc->n;
    }
    return 0;
}

/* Chunk R into the load's model (in chunk order). 0, or -1 out of
 * memory. */
static int merge_chunk(chunk_ctx *X, const chunk_res *R)
{
    loader *G = X->L;
    an_capture *m = G->m;
    const an_capture *c = R->m;
    if (merge_tree(X, c) != 0 || merge_counters(G, R) != 0)
        return -1;
    for (size_t i = 0; i < R->ntids; i++) {
        const chunk_tid *t = &R->tids[i];
        path_cache *pc = cache_for(&G->threads, &G->threads_cap, t->tid);
        if (!pc)
            return -1;
        if (pc->root == NONE)
            pc->root = X->nmap[t->root];
        pc->in_frames |= t->in_frames;
        pc->outside |= t->outside;
    }
    for (int w = 0; w < 3; w++)
        cap_stats_sat_add(&m->outside_ns[w], c->outside_ns[w]);
    m->cpu_events += c->cpu_events;
    m->gpu_events += c->gpu_events;
    if (c->cpu_events && c->last_ns > m->last_ns)
        m->last_ns = c->last_ns;
    if (R->cpu_first < G->cpu_first)
        G->cpu_first = R->cpu_first;
    stats_add(&G->chunk_st, &R->st);
    for (size_t i = 0; i < R->nvals; i++)
        if (pf_note(G, (long)X->rmap[R->vals[i].row], (long)R->vals[i].frame,
                    R->vals[i].v, 0) != 0)
            return -1;
    return 0;
}

/* an_driver_ops.merge: 0 goes on; 1 a chunk's error (X->res); 2 inexact;
 * 3 out of memory. */
static int chunk_merge(void *vctx, size_t i, void *p)
{
    (void)i;
    chunk_ctx *X = vctx;
    chunk_res *R = p;
    int rc = 0;
    if (R->res != CAP_OK) {
        X->res = R->res;
        snprintf(X->detail, sizeof X->detail, "%s", R->detail);
        rc = 1;
    } else if (R->inexact) {
        X->inexact = 1;
        rc = 2;
    } else if (merge_chunk(X, R) != 0) {
        rc = 3;
    }
    chunk_free(X, R);
    return rc;
}

/* The footer's reader (the names of every thread, the footer's
 * statistics), read to its end: NULL when it cannot be read or declares
 * a GPU track (its spans need the blocks before them: read whole). */
static cap_reader *footer_reader(int fd, const cap_chunk_plan *plan)
{
    cap_reader *r;
    if (cap_chunks_open(&r, fd, plan->footer_offset, 0, NULL, 0) != CAP_OK)
        return NULL;
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) == CAP_OK)
        if (ev.kind != CAP_EV_THREAD)
            break;
    for (uint32_t t = 0; res == CAP_DONE && t < CAP_MAX_TRACKS; t++)
        if (cap_reader_track_name(r, t))
            res = CAP_E_LIMIT; /* a GPU track: whole */
    if (res != CAP_DONE) {
        cap_reader_close(r);
        return NULL;
    }
    return r;
}

/* CAP_READ_CHUNK_BYTES=N sets the least bytes of a chunk (tests: 1, a
 * block a chunk). 256 KiB: a producer's block (1 MiB raw, about 300 KiB
 * of file for bench_read's realistic capture) a chunk. On realistic 10 M
 * (58 blocks), 2 threads: with 2 MiB chunks (9) the CPU time went from
 * 1.12 s on one thread to 1.78 s on two and the calling thread held
 * 0.91 s; with 512 KiB (29) 0.86 -> 1.00 s, 0.52 s; a block a chunk
 * 0.84 -> 0.87 s, 0.44 s (smaller models, each in cache; peak RSS 26
 * MiB against 37 read whole). 64 KiB: a chunk's exact per-frame values
 * wait for the merge, so its memory follows the frames it covers; a
 * capture of 31 bytes a frame (tests/fleet's long one) held 8,500 frames
 * in 256 KiB, and its --summary grew from 17 to 44 MiB between 10,000 and
 * 60,000 frames; with 64 KiB (a block a chunk there, as for bench_read's
 * realistic capture) 15 to 20 MiB. */
#define CHUNK_BYTES ((uint64_t)64 << 10)

/* The chunked load, where the file allows it: *used 1 when it ran (its
 * result returned; LOAD_WHOLE: read whole), 0 when the file must be read
 * whole (nothing done). */
static cap_result pass_chunks(loader *L, char *detail, size_t dsz, int *used)
{
    an_capture *m = L->m;
    *used = 0;
    int fd = open(m->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return CAP_OK;
    cap_chunk_plan plan;
    cap_reader *tail = NULL;
    cap_result res = cap_chunks_plan(fd, env_size("CAP_READ_CHUNK_BYTES",
                                                  CHUNK_BYTES), &plan);
    if (res == CAP_OK && plan.n)
        tail = footer_reader(fd, &plan);
    if (res == CAP_OK && tail)
        res = file_same(m, m->path, detail, dsz);
    if (res != CAP_OK || !tail) {
        cap_reader_close(tail);
        cap_chunks_free(&plan);
        close(fd);
        if (res != CAP_OK)
            *used = 1;
        return res;
    }
    *used = 1;
    chunk_ctx X = {.L = L, .co = *L->o, .decl = tail, .res = CAP_OK};
    X.co.progress = NULL;
    X.co.series_budget = 0;
    L->chunk_st = *cap_reader_get_stats(tail);
    static const an_driver_ops ops = {chunk_run, chunk_merge, chunk_free};
    int rc = an_drive(fd, &plan, an_driver_threads(L->o->threads), &ops, &X);
    close(fd);
    cap_chunks_free(&plan);
    free(X.nmap);
    free(X.rmap);
    L->r = tail; /* names, metadata, the footer's statistics */
    L->chunked = 1;
    if (rc == 1) {
        snprintf(detail, dsz, "%s", X.detail);
        return X.res;
    }
    if (rc == 2)
        return LOAD_WHOLE;
    if (rc != 0)
        return CAP_E_NOMEM;
    progress(L, "", 1);
    return CAP_OK;
}

/* Threads from which a load reads in chunks by default. Below it the
 * whole read's two-thread pipeline (a decoding thread ahead of the model)
 * is faster: on the 16-core Xeon host, realistic 100 M scopes, e2febf2,
 * the ranking took 8.8 s in chunks on 2 threads and 5.7 s on 4, against
 * 4.3-4.9 s for that pipeline (90e59e6's default); 3.2 s in chunks on 8. */
#define CHUNK_MIN_THREADS 4

/* Whether this load may read the file in chunks: a load of the model
 * (no scan, no --frames reread), not asked for one thread; with a
 * summary_fn only when it can be reset (a load that must read whole
 * after merges starts it again). */
static int chunkable(const loader *L, int whole)
{
    /* CAP_READ_CHUNK_BYTES (tests, experiments) chunks on 2 threads too */
    if (an_driver_threads(L->o->threads) < CHUNK_MIN_THREADS &&
        !getenv("CAP_READ_CHUNK_BYTES"))
        return 0;
    return !whole && L->o->threads != 1 && !L->visit && !L->reread &&
           (!L->o->summary_fn || L->o->summary_reset) && !L->values_only;
}

static cap_result pass_all(loader *L, char *detail, size_t dsz, int whole)
{
    an_capture *m = L->m;
    if (chunkable(L, whole)) {
        int used;
        cap_result res = pass_chunks(L, detail, dsz, &used);
        if (used)
            return res;
    }
    cap_result res = cap_reader_open(&L->r, m->path, detail, dsz);
    if (res == CAP_OK) /* the file the frames were read from */
        res = file_same(m, m->path, detail, dsz);
    if (res != CAP_OK)
        return res;
    cap_reader_set_filter(L->r, 1u << CAP_EV_FRAME);
    if (load_threads(L->o, m->path) == 2)
        return pass_ahead(L, detail, dsz);
    res = read_events(L, detail, dsz);
    if (res == CAP_OK)
        progress(L, "", 1);
    return res;
}

static int resolve_names(loader *L)
{
    an_capture *m = L->m;
    cap_reader *r = L->r;
    for (size_t i = 0; i < m->nnodes; i++) {
        an_node *n = &m->nodes[i];
        if (n->is_root)
            continue;
        const char *nm = cap_reader_name(r, n->name_id);
        char buf[48];
        if (!nm) {
            snprintf(buf, sizeof buf, "<unnamed #%u>", n->name_id);
            nm = buf;
        }
        n->name = xstrdup(nm);
        if (!n->name)
            return -1;
        n->is_wait = (cap_reader_name_flags(r, n->name_id) & CAP_NAME_WAIT) != 0;
    }
    for (size_t i = 0; i < m->nscopes; i++) {
        an_scope *s = &m->scopes[i];
        uint32_t id = L->o->by_path ? m->nodes[s->name_id].name_id : s->name_id;
        const char *nm = cap_reader_name(r, id);
        char buf[48];
        if (!nm) {
            snprintf(buf, sizeof buf, "<unnamed #%u>", id);
            nm = buf;
            s->unnamed = 1;
            int dup = 0;
            for (size_t k = 0; k < m->unnamed_n; k++)
                dup |= m->unnamed_ids[k] == id;
            if (!dup && m->unnamed_n < 8)
                m->unnamed_ids[m->unnamed_n++] = id;
        }
        s->name = xstrdup(nm);
        if (!s->name)
            return -1;
        s->is_wait = (cap_reader_name_flags(r, id) & CAP_NAME_WAIT) != 0;
        if (L->o->by_path) {
            /* path: root;...;name */
            size_t len = 0;
            for (uint32_t k = s->name_id; k != NONE; k = m->nodes[k].parent)
                len += strlen(m->nodes[k].name) + 1;
            len--; /* k names, k - 1 separators */
            s->path = malloc(len + 1);
            if (!s->path)
                return -1;
            size_t pos = len;
            s->path[len] = 0;
            for (uint32_t k = s->name_id; k != NONE; k = m->nodes[k].parent) {
                size_t l = strlen(m->nodes[k].name);
                pos -= l;
                memcpy(s->path + pos, m->nodes[k].name, l);
                if (pos > 0)
                    s->path[--pos] = ';';
            }
            memmove(s->path, s->path + pos, len - pos + 1);
        }
    }
    const struct id_map *co = &L->counter_of;
    for (size_t k = 0; k < co->dcap + co->hcap; k++) {
        uint32_t id = k < co->dcap ? (uint32_t)k : co->hk[k - co->dcap];
        uint32_t ci = k < co->dcap ? co->d[k] : co->hv[k - co->dcap];
        if (!id || !ci)
            continue;
        an_counter *c = &m->counters[ci - 1];
        const char *nm = cap_reader_name(r, id);
        char buf[48];
        if (!nm) {
            snprintf(buf, sizeof buf, "<unnamed #%u>", id);
            nm = buf;
        }
        c->name = xstrdup(nm);
        if (!c->name)
            return -1;
    }
    /* children lists, in order of first appearance */
    for (size_t i = m->nnodes; i-- > 0;) {
        an_node *n = &m->nodes[i];
        if (n->parent != NONE) {
            n->next_sibling = m->nodes[n->parent].first_child;
            m->nodes[n->parent].first_child = (uint32_t)i;
        }
    }
    return 0;
}

typedef struct pf_pair {
    uint32_t f;
    int64_t v;
} pf_pair;

static int pf_cmp(const void *a, const void *b)
{
    const pf_pair *x = a, *y = b;
    return x->f < y->f ? -1 : x->f > y->f;
}

static int sort_pf(an_scope *s)
{
    if (s->pf_sorted)
        return 0;
    pf_pair *t = malloc(s->pf_n * sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < s->pf_n; i++)
        t[i] = (pf_pair){s->pf_frame[i], s->pf_self[i]};
    qsort(t, s->pf_n, sizeof *t, pf_cmp); /* stable enough: equal keys sum */
    size_t w = 0;
    for (size_t i = 0; i < s->pf_n; i++) {
        if (w && s->pf_frame[w - 1] == t[i].f) {
            cap_stats_sat_add(&s->pf_self[w - 1], t[i].v);
        } else {
            s->pf_frame[w] = t[i].f;
            s->pf_self[w] = t[i].v;
            w++;
        }
    }
    free(t);
    s->pf_n = w;
    s->pf_sorted = 1;
    return 0;
}

static size_t series_budget(const an_options *o)
{
    if (!o->series_budget)
        return 0;
    return env_size("CAP_SERIES_BUDGET", o->series_budget);
}

/* The fastest and the slowest quarter of frames by frame time, as
 * an_split_compute picks them (ascending by (duration, position)): the
 * q-th smallest and q-th largest durations by selection, ties taken by
 * position. 1 byte a frame; -1 when out of memory. */
static int split_pops(an_capture *m)
{
    size_t n = m->nframes, q = n / 4;
    if (q == 0)
        return 0;
    double *k = malloc(n * sizeof *k);
    m->pop_of = malloc(n);
    if (!k || !m->pop_of) {
        free(k);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        k[i] = (double)an_frame_ns(&m->frames[i]);
    double a = cap_stats_select(k, n, q - 1);
    double b = cap_stats_select(k, n, n - q);
    free(k);
    size_t below = 0, above = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)an_frame_ns(&m->frames[i]);
        below += d < a;
        above += d > b;
        m->pop_of[i] = 2;
    }
    size_t ties = q - below;
    for (size_t i = 0; i < n; i++) {
        double d = (double)an_frame_ns(&m->frames[i]);
        if (d < a || (d == a && ties && ties--))
            m->pop_of[i] = 0;
    }
    ties = q - above;
    for (size_t i = n; i-- > 0;) {
        double d = (double)an_frame_ns(&m->frames[i]);
        if (d > b || (d == b && ties && ties--))
            m->pop_of[i] = 1;
    }
    return 0;
}

/* The load, or with visit a read of every (row, frame) value through it
 * (a ring of src->win frames from the start; of walk_win frames that never
 * shortens, zeros handed on, when walk_win > 0: an_series_walk). */
/* With a call tree, a CPU row's calls and sums are its nodes' (each
 * scope went into one node, and the node's row is the scope's): summed
 * here once a node instead of once a scope. The totals of a row by name
 * leave out its recursive nodes (an ancestor has the name: counted at the
 * outermost). Every value is >= 0 and the sums saturate, so the order of
 * the additions does not change them. */
/* The --over-time bin of each frame, by its begin (as
 * an_over_time_frame_bins, report.h, bins them), and how many bins. */
static size_t frame_bins(const an_capture *m, int bins, double bin_seconds,
                         uint16_t *bin_of)
{
    size_t n = m->nframes;
    if (!n)
        return 0;
    int64_t t0 = m->frames[0].begin_ns;
    double width;
    bins = an_bins_choose(an_elapsed_ns(t0, m->frames[n - 1].end_ns), bins,
                          bin_seconds, &width);
    for (size_t i = 0; i < n; i++)
        bin_of[i] = (uint16_t)an_bins_index(
            an_elapsed_ns(t0, m->frames[i].begin_ns) / width, bins);
    return (size_t)bins;
}

static void rows_from_nodes(loader *L)
{
    an_capture *m = L->m;
    for (size_t i = 0; i < m->nnodes; i++) {
        const an_node *n = &m->nodes[i];
        if (n->kind != AN_CPU || !n->row1 || !n->calls)
            continue;
        an_scope *s = &m->scopes[n->row1 - 1];
        s->calls += n->calls;
        cap_stats_sat_add(&s->self_ns, n->self_ns);
        if (L->o->by_path || !n->recursive)
            cap_stats_sat_add(&s->total_ns, n->total_ns);
    }
}

static cap_result load_as(an_capture **out, const char *path,
                          const an_options *opt, an_series_fn visit,
                          void *visit_ctx, const an_capture *src,
                          uint32_t walk_win, int whole, char *detail,
                          size_t detail_size)
{
    static const an_options defaults;
    *out = NULL;
    an_capture *m = calloc(1, sizeof *m);
    if (!m)
        return CAP_E_NOMEM;
    m->path = xstrdup(path);
    m->load_path = xstrdup(path);
    if (!m->path || !m->load_path) {
        free(m->path);
        free(m->load_path);
        free(m);
        return CAP_E_NOMEM;
    }
    loader L = {.m = m, .o = opt ? opt : &defaults, .cpu_first = INT64_MAX};
    m->load_opt = *L.o;
    L.tree = (!L.o->no_tree || L.o->by_path) && !(visit && !L.o->by_path);
    L.reread = L.o->series_reread && !visit;
    L.budget = series_budget(L.o);
    if (visit) {
        L.visit = visit;
        L.visit_ctx = visit_ctx;
        L.windowed = 1;
        L.win = src->win;
        L.budget = 0;
        L.values_only = !L.o->by_path;
        if (walk_win) { /* rows known: the ring made once, for all */
            L.win = walk_win;
            L.fixed_win = 1;
            L.ring_cap = 64;
            while (L.ring_cap < src->nscopes)
                L.ring_cap *= 2;
            L.ring = calloc((size_t)L.win * L.ring_cap, sizeof *L.ring);
            L.seen = calloc((size_t)L.win * L.ring_cap, 1);
            if (!L.ring || !L.seen) {
                win_free(&L);
                an_free(m);
                return CAP_E_NOMEM;
            }
        }
        /* the frames and the cut-off of the model scanned, borrowed (the
           scan's model lets go of them before it is freed) */
        m->file = src->file;
        m->frames = src->frames;
        m->nframes = src->nframes;
        m->frame_index = src->frame_index;
        m->frame_index0 = src->frame_index0;
        L.cutoff_ns = src->cutoff_ns;
        L.have_cutoff = src->have_cutoff;
    }
    if (!visit)
        m->file = file_id(path);
    cap_result res = visit ? CAP_OK : pass_frames(&L, detail, detail_size);
    /* a file of a few MiB or more fills the budget's series: their arena
       (a smaller one would zero a huge page for little) */
    if (res == CAP_OK && !visit && L.budget && m->file.known &&
        m->file.size >= PF_ARENA_MIN_FILE)
        pf_arena_make(m, L.budget);
    if (res == CAP_OK && !visit && L.budget && L.o->split_hint &&
        split_pops(m) != 0)
        res = CAP_E_NOMEM;
    if (res == CAP_OK && !visit && L.budget && L.o->over_time_hint &&
        m->nframes) {
        m->ot_bin = malloc(m->nframes * sizeof *m->ot_bin);
        if (!m->ot_bin)
            res = CAP_E_NOMEM;
        else
            m->ot_nbins = frame_bins(m, L.o->ot_bins, L.o->ot_bin_seconds,
                                     m->ot_bin);
        if (m->ot_nbins > AN_OT_HINT_MAX_BINS) { /* too many histograms */
            free(m->ot_bin);
            m->ot_bin = NULL;
            m->ot_nbins = 0;
        }
        m->ot_sums = m->ot_bin != NULL;
    }
    if (L.o->frame_work && !m->ot_bin)
        m->ot_sums = 1; /* until a row's flag says otherwise (ot_check) */
    m->cutoff_ns = L.cutoff_ns;
    m->have_cutoff = L.have_cutoff;
    if (res == CAP_OK)
        res = pass_all(&L, detail, detail_size, whole);
    if (L.tree)
        rows_from_nodes(&L);
    if (res == CAP_OK && visit) /* a second read: the same file throughout */
        res = file_same(m, path, detail, detail_size);
    m->max_lag = L.lag;
    m->lag_known = L.reread;
    if (m->cpu_events)
        m->first_ns = L.cpu_first;
    if (res == CAP_OK) {
        m->st = L.chunked ? L.chunk_st : *cap_reader_get_stats(L.r);
        cap_reader_version(L.r, &m->major, &m->minor);
        m->origin_unix_ns = cap_reader_origin_unix_ns(L.r);
        m->clock_source = xstrdup(cap_reader_clock_source(L.r));
        m->meta_n = cap_reader_meta_count(L.r);
        m->meta_k = calloc(m->meta_n + 1, sizeof *m->meta_k);
        m->meta_v = calloc(m->meta_n + 1, sizeof *m->meta_v);
        if (!m->clock_source || !m->meta_k || !m->meta_v)
            res = CAP_E_NOMEM;
        for (size_t i = 0; res == CAP_OK && i < m->meta_n; i++) {
            m->meta_k[i] = xstrdup(cap_reader_meta_key(L.r, i));
            m->meta_v[i] = xstrdup(cap_reader_meta_value(L.r, i));
            if (!m->meta_k[i] || !m->meta_v[i])
                res = CAP_E_NOMEM;
        }
        if (res == CAP_OK && (pf_flush(&L) != 0 || ot_merge(m) != 0))
            res = CAP_E_NOMEM;
        if (res == CAP_OK && resolve_names(&L) != 0)
            res = CAP_E_NOMEM;
        if (res == CAP_OK && L.o->nwait_globs)
            an_mark_waits(m, L.o->wait_globs, L.o->nwait_globs);
        if (res == CAP_OK)
            ot_check(&L);
        for (size_t i = 0; res == CAP_OK && i < L.threads_cap; i++) {
            const path_cache *c = L.threads[i];
            if (c && c->outside && !c->in_frames && c->root != NONE &&
                add_name(&L.ix_outside, &m->outside_threads,
                         &m->noutside_threads,
                         m->nodes[c->root].name) != 0)
                res = CAP_E_NOMEM;
        }
        for (size_t i = 0; res == CAP_OK && i < m->nscopes; i++)
            if (sort_pf(&m->scopes[i]) != 0)
                res = CAP_E_NOMEM;
        if (m->nframes) {
            if (m->cpu_events == 0 || m->frames[0].begin_ns < m->first_ns)
                m->first_ns = m->frames[0].begin_ns;
            if (m->frames[m->nframes - 1].end_ns > m->last_ns)
                m->last_ns = m->frames[m->nframes - 1].end_ns;
        }
    }
    loader_free(&L);
    if (res != CAP_OK) {
        if (res == CAP_E_NOMEM && detail && detail_size)
            snprintf(detail, detail_size, "out of memory");
        if (visit) { /* borrowed */
            m->frames = NULL;
            m->frame_index = NULL;
        }
        an_free(m);
        return res;
    }
    *out = m;
    return CAP_OK;
}

/* Everything a loader holds but its model (its reader closed). */
static void loader_free(loader *L)
{
    cap_reader_close(L->r);
    L->r = NULL;
    for (size_t i = 0; i < L->threads_cap; i++) {
        if (L->threads[i]) {
            free(L->threads[i]->pieces);
            free(L->threads[i]->kid);
        }
        path_free(L->threads[i]);
        free(L->threads[i]);
    }
    free(L->threads);
    for (size_t i = 0; i < L->tracks_cap; i++) {
        path_free(L->tracks[i]);
        free(L->tracks[i]);
    }
    free(L->tracks);
    id_free(&L->counter_of);
    free(L->row_of);
    for (size_t i = 0; i < L->kids_cap; i++) {
        free(L->kids[i].e);
        free(L->kids[i].ht);
    }
    free(L->kids);
    free(L->acc);
    free(L->ix_threads.slot);
    free(L->ix_tracks.slot);
    free(L->ix_outside.slot);
    free(L->ix_roots[0].slot);
    free(L->ix_roots[1].slot);
    id_free(&L->name_wait);
    free(L->row_wait);
    win_free(L);
}

static cap_result load(an_capture **out, const char *path,
                       const an_options *opt, an_series_fn visit,
                       void *visit_ctx, const an_capture *src,
                       uint32_t walk_win, char *detail, size_t detail_size)
{
    cap_result r = load_as(out, path, opt, visit, visit_ctx, src, walk_win,
                           0, detail, detail_size);
    if (r != LOAD_WHOLE)
        return r;
    /* the chunks could not be merged exactly: the file whole (what the
       merges gave summary_fn forgotten) */
    if (opt && opt->summary_fn)
        opt->summary_reset(opt->summary_ctx);
    return load_as(out, path, opt, visit, visit_ctx, src, walk_win, 1,
                   detail, detail_size);
}

/* m's frames came from a 3.1 footer's list and its load found damage:
 * the list holds frames that a read of the blocks leaves out. */
static int frames_recheck(const an_capture *m)
{
    return m->frames_listed &&
           (m->st.corrupt_chunks || m->st.truncated || m->corrupt_seen);
}

cap_result an_load(an_capture **out, const char *path, const an_options *opt,
                   char *detail, size_t detail_size)
{
    cap_result r = load(out, path, opt, NULL, NULL, NULL, 0, detail,
                        detail_size);
    const an_capture *m = r == CAP_OK ? *out : NULL;
    if (!m || !frames_recheck(m) ||
        (m->load_opt.summary_fn && !m->load_opt.summary_reset))
        return r;
    /* frames from the footer's list, a damaged block found by the load:
       again, the frames from the readable blocks (as a file without a
       list reads) */
    an_options o = m->load_opt;
    o.frames_from_blocks = 1;
    if (o.summary_fn)
        o.summary_reset(o.summary_ctx);
    an_free(*out);
    *out = NULL;
    return load(out, path, &o, NULL, NULL, NULL, 0, detail, detail_size);
}

typedef struct scan_ctx {
    const an_capture *m;
    an_series_fn fn;
    void *ctx;
} scan_ctx;

static void scan_visit(void *p, size_t row, size_t frame, int64_t v)
{
    scan_ctx *c = p;
    if (row < c->m->nscopes && frame < c->m->nframes)
        c->fn(c->ctx, row, frame, v);
}

/* m's file read again with options o, every value through fn (a ring of
 * walk_win frames: see load). */
static cap_result scan_file(const an_capture *m, const an_options *o,
                            an_series_fn fn, void *ctx, uint32_t walk_win)
{
    scan_ctx c = {m, fn, ctx};
    an_capture *t;
    char detail[320];
    cap_result r = load(&t, m->load_path, o, scan_visit, &c, m, walk_win,
                        detail, sizeof detail);
    if (r != CAP_OK)
        return r;
    if (t->nscopes != m->nscopes)
        r = CAP_E_CHANGED; /* not the file that was loaded */
    t->frames = NULL; /* borrowed */
    t->frame_index = NULL;
    t->nframes = 0;
    an_free(t);
    return r;
}

cap_result an_series_scan(const an_capture *m, an_series_fn fn, void *ctx)
{
    if (!m->approx) {
        for (size_t r = 0; r < m->nscopes; r++) {
            const an_scope *s = &m->scopes[r];
            for (size_t i = 0; i < s->pf_n; i++)
                if (s->pf_frame[i] < m->nframes && s->pf_self[i] != 0)
                    fn(ctx, r, s->pf_frame[i], s->pf_self[i]);
        }
        return CAP_OK;
    }
    an_options o = m->load_opt;
    o.progress = NULL;
    o.series_budget = 0;
    return scan_file(m, &o, fn, ctx, 0);
}

/* The exact series of m in frame order, rows in order within a frame. */
static cap_result walk_exact(const an_capture *m, an_series_fn fn, void *ctx)
{
    size_t ns = m->nscopes;
    size_t *cur = calloc(ns ? ns : 1, sizeof *cur); /* each row's next */
    if (!cur)
        return CAP_E_NOMEM;
    for (size_t fi = 0; fi < m->nframes; fi++)
        for (size_t r = 0; r < ns; r++) {
            const an_scope *s = &m->scopes[r];
            size_t k = cur[r];
            if (k < s->pf_n && s->pf_frame[k] == fi) {
                fn(ctx, r, fi, s->pf_self[k]);
                cur[r] = k + 1;
            }
        }
    free(cur);
    return CAP_OK;
}

/* 1 when walk_packed's check of every row in every frame costs less
 * than reading the file again (not with many rows and few values). */
static int pack_walkable(const an_capture *m)
{
    const struct an_pack *p = m->pack;
    return p && (double)p->nrow * (double)m->nframes <=
                    64.0 * (double)p->values + 1e6;
}

/* A row's place in the pack as walk_packed reads it: the values in
 * [b + pos, b + end), from a chunk in memory, or from the row's pieces in
 * the temporary file through buf (piece: the next of the row's pieces,
 * in `order`; at: bytes of it already read). */
typedef struct pack_cur {
    uint64_t frame; /* UINT64_MAX: none left */
    int64_t v;
    const uint8_t *b;
    uint32_t pos, end;
    uint32_t chunk;
    uint8_t *buf;
    size_t piece, piece_end, at;
} pack_cur;

/* Enough of c's row in view for one more value (two varints: 20 bytes at
 * most, never split across chunks or pieces' ends of a value). 0, or -1 on
 * a failed read of the temporary file. */
__attribute__((noinline)) static int
pack_cur_fill(const struct an_pack *p, const size_t *order, size_t cap,
              pack_cur *c)
{
    if (!c->buf) { /* in memory: the next chunk */
        if (c->pos < c->end || !c->chunk)
            return 0;
        uint32_t nx;
        memcpy(&nx, c->b, sizeof nx);
        c->chunk = nx;
        c->b = NULL;
        c->pos = c->end = 0;
        if (nx) {
            uint16_t used;
            c->b = pack_chunk(p, nx);
            memcpy(&used, c->b + 4, sizeof used);
            c->pos = PACK_HEAD;
            c->end = used;
        }
        return 0;
    }
    if (c->end - c->pos >= 20 || c->piece == c->piece_end)
        return 0;
    memmove(c->buf, c->buf + c->pos, c->end - c->pos);
    c->end -= c->pos;
    c->pos = 0;
    while (c->end < cap && c->piece < c->piece_end) {
        const pack_piece *pc = &p->piece[order[c->piece]];
        size_t want = pc->len - c->at;
        if (want == 0) { /* an empty piece (none is written) */
            c->piece++;
            c->at = 0;
            continue;
        }
        if (want > cap - c->end)
            want = cap - c->end;
        ssize_t n = pread(p->fd, c->buf + c->end, want,
                          (off_t)(pc->off + c->at));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        c->end += (uint32_t)n;
        c->at += (size_t)n;
        if (c->at == pc->len) {
            c->piece++;
            c->at = 0;
        }
    }
    return 0;
}

/* c's next value (frame UINT64_MAX at the row's end): 0, or -1 as
 * pack_cur_fill. */
static inline int pack_cur_next(const struct an_pack *p,
                                const size_t *order, size_t cap, pack_cur *c,
                                uint64_t prev_next)
{
    if (c->end - c->pos < 20 && pack_cur_fill(p, order, cap, c) != 0)
        return -1;
    if (c->pos >= c->end) {
        c->frame = UINT64_MAX;
        return 0;
    }
    uint64_t df, z;
    const uint8_t *q = get_varint(c->b + c->pos, &df);
    q = get_varint(q, &z);
    c->pos = (uint32_t)(q - c->b);
    c->frame = prev_next + df - 1;
    c->v = (int64_t)((z >> 1) ^ (0 - (z & 1)));
    return 0;
}

/* The pack's values (a series_reread load's) in frame order, rows in
 * order within a frame, or (by_row) row by row, each row's in frame
 * order: from memory, or from the temporary file it spilled to through a
 * buffer a row (about 2 MiB in all). */
static cap_result walk_packed_as(const an_capture *m, an_series_fn fn,
                                 void *ctx, int by_row)
{
    const struct an_pack *p = m->pack;
    size_t ns = p->nrow < m->nscopes ? p->nrow : m->nscopes;
    size_t cap = 0, *order = NULL, *first = NULL;
    uint8_t *bufs = NULL;
    cap_result res = CAP_E_NOMEM;
    pack_cur *cur = calloc(ns ? ns : 1, sizeof *cur);
    if (!cur)
        return CAP_E_NOMEM;
    if (p->fd >= 0) { /* each row's pieces in the order written */
        cap = ((size_t)2 << 20) / (ns ? ns : 1);
        cap = cap < 256 ? 256 : cap > 65536 ? 65536 : cap;
        order = malloc((p->npiece ? p->npiece : 1) * sizeof *order);
        first = calloc(ns + 1, sizeof *first);
        bufs = malloc(ns ? ns * cap : 1);
        if (!order || !first || !bufs)
            goto out;
        for (size_t i = 0; i < p->npiece; i++)
            if (p->piece[i].row < ns)
                first[p->piece[i].row + 1]++;
        for (size_t r = 0; r < ns; r++)
            first[r + 1] += first[r];
        for (size_t i = 0; i < p->npiece; i++) { /* cur[r].piece: a count */
            uint32_t r = p->piece[i].row;
            if (r < ns)
                order[first[r] + cur[r].piece++] = i;
        }
    }
    for (size_t r = 0; r < ns; r++) {
        pack_cur *c = &cur[r];
        if (p->fd >= 0) {
            c->buf = bufs + r * cap;
            c->b = c->buf;
            c->piece = first[r];
            c->piece_end = first[r + 1];
        } else if ((c->chunk = p->row[r].head) != 0) {
            uint16_t used;
            c->b = pack_chunk(p, c->chunk);
            memcpy(&used, c->b + 4, sizeof used);
            c->pos = PACK_HEAD;
            c->end = used;
        }
        if (pack_cur_next(p, order, cap, c, 0) != 0)
            goto io;
    }
    for (size_t r = 0; by_row && r < ns; r++) {
        pack_cur *c = &cur[r];
        while (c->frame < m->nframes) {
            fn(ctx, r, (size_t)c->frame, c->v);
            if (pack_cur_next(p, order, cap, c, c->frame + 1) != 0)
                goto io;
        }
    }
    for (size_t fi = 0; !by_row && fi < m->nframes; fi++)
        for (size_t r = 0; r < ns; r++)
            if (cur[r].frame == fi) {
                fn(ctx, r, fi, cur[r].v);
                if (pack_cur_next(p, order, cap, &cur[r], fi + 1) != 0)
                    goto io;
            }
    res = CAP_OK;
    goto out;
io:
    res = CAP_E_IO;
out:
    free(cur);
    free(order);
    free(first);
    free(bufs);
    return res;
}

/* walk_packed on a second thread: it reads the pack and hands the values
 * over in slots of WALK_SLOT, fn runs on the calling thread (--frames'
 * writers format rows while the next values are read). The values are
 * written into a stage of the reading thread's and copied into a slot at
 * once, as the load's batches are: written one by one into the slot,
 * each line was first fetched back from the calling thread's core, which
 * had read it. */
enum { WALK_SLOT = 8192, WALK_NSLOT = 4 };

typedef struct walk_val {
    uint32_t row, frame;
    int64_t v;
} walk_val;

typedef struct walk_relay {
    const an_capture *m;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    walk_val *slot[WALK_NSLOT];
    walk_val *stage;   /* WALK_SLOT: the reading thread fills it, then
                          copies it into slot head at once */
    size_t n[WALK_NSLOT];
    size_t head, tail; /* slots filled: tail .. head - 1 (mod WALK_NSLOT) */
    size_t fill;       /* values in slot head (the reading thread's) */
    int done;
    cap_result res;
} walk_relay;

/* The reading thread's slot head handed on; waits while every slot is
 * full. */
static void relay_publish(walk_relay *w)
{
    memcpy(w->slot[w->head % WALK_NSLOT], w->stage,
           w->fill * sizeof *w->stage);
    pthread_mutex_lock(&w->mu);
    w->n[w->head % WALK_NSLOT] = w->fill;
    w->head++;
    pthread_cond_broadcast(&w->cv);
    while (w->head - w->tail == WALK_NSLOT)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
    w->fill = 0;
}

static void relay_put(void *ctx, size_t row, size_t frame, int64_t v)
{
    walk_relay *w = ctx;
    w->stage[w->fill++] = (walk_val){(uint32_t)row, (uint32_t)frame, v};
    if (w->fill == WALK_SLOT)
        relay_publish(w);
}

static void *relay_main(void *arg)
{
    walk_relay *w = arg;
    cap_result r = walk_packed_as(w->m, relay_put, w, 0);
    if (w->fill)
        relay_publish(w);
    pthread_mutex_lock(&w->mu);
    w->res = r;
    w->done = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* 1 when walk_packed runs on a second thread: threads == 2 asked, or
 * chosen as the load chooses them, for a pack of a million values or
 * more. */
static int walk_threads(const an_capture *m)
{
    if (m->load_opt.threads == 1 || m->load_opt.threads == 2)
        return m->load_opt.threads == 2;
    return m->pack->values >= 1000000 &&
           load_threads(&m->load_opt, m->load_path) == 2;
}

static cap_result walk_packed_2t(const an_capture *m, an_series_fn fn,
                                 void *ctx)
{
    walk_relay w = {.m = m};
    walk_val *mem = malloc(sizeof(walk_val) * WALK_SLOT * (WALK_NSLOT + 1));
    if (!mem)
        return walk_packed_as(m, fn, ctx, 0);
    for (int i = 0; i < WALK_NSLOT; i++)
        w.slot[i] = mem + (size_t)i * WALK_SLOT;
    w.stage = mem + (size_t)WALK_NSLOT * WALK_SLOT;
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    pthread_t t;
    if (pthread_create(&t, NULL, relay_main, &w) != 0) {
        pthread_cond_destroy(&w.cv);
        pthread_mutex_destroy(&w.mu);
        free(mem);
        return walk_packed_as(m, fn, ctx, 0);
    }
    for (;;) {
        pthread_mutex_lock(&w.mu);
        while (w.head == w.tail && !w.done)
            pthread_cond_wait(&w.cv, &w.mu);
        if (w.head == w.tail) { /* done, every slot handed on */
            pthread_mutex_unlock(&w.mu);
            break;
        }
        const walk_val *v = w.slot[w.tail % WALK_NSLOT];
        size_t n = w.n[w.tail % WALK_NSLOT];
        pthread_mutex_unlock(&w.mu);
        for (size_t i = 0; i < n; i++)
            fn(ctx, v[i].row, v[i].frame, v[i].v);
        pthread_mutex_lock(&w.mu);
        w.tail++;
        pthread_cond_broadcast(&w.cv);
        pthread_mutex_unlock(&w.mu);
    }
    pthread_join(t, NULL);
    pthread_cond_destroy(&w.cv);
    pthread_mutex_destroy(&w.mu);
    free(mem);
    return w.res;
}

cap_result an_series_rows(const an_capture *m, an_series_fn fn, void *ctx)
{
    if (!m->approx) {
        for (size_t r = 0; r < m->nscopes; r++) {
            const an_scope *s = &m->scopes[r];
            for (size_t i = 0; i < s->pf_n; i++)
                if (s->pf_frame[i] < m->nframes)
                    fn(ctx, r, s->pf_frame[i], s->pf_self[i]);
        }
        return CAP_OK;
    }
    if (m->pack)
        return walk_packed_as(m, fn, ctx, 1);
    return an_series_walk(m, fn, ctx);
}

cap_result an_series_walk(const an_capture *m, an_series_fn fn, void *ctx)
{
    if (!m->approx)
        return walk_exact(m, fn, ctx);
    if (pack_walkable(m))
        return walk_threads(m) ? walk_packed_2t(m, fn, ctx)
                               : walk_packed_as(m, fn, ctx, 0);
    an_options o = m->load_opt;
    o.progress = NULL;
    o.series_budget = 0;
    o.series_reread = 0;
    o.split_hint = o.over_time_hint = 0;
    /* a ring longer than any piece came late: a frame is whole when it
       leaves it */
    uint64_t need = m->max_lag + 1;
    size_t rows = 64;
    while (rows < m->nscopes)
        rows *= 2;
    uint32_t w = 8;
    while (w < need && w < ((uint32_t)1 << 31))
        w *= 2;
    if (m->lag_known && need <= w && (size_t)w * rows * 9 <= AN_WALK_MAX_BYTES)
        return scan_file(m, &o, fn, ctx, w);
    /* too far apart: the exact series, in memory */
    char detail[320];
    an_capture *t;
    cap_result r;
    if ((r = load(&t, m->load_path, &o, NULL, NULL, NULL, 0, detail,
                  sizeof detail)) != CAP_OK)
        return r;
    if (t->nscopes != m->nscopes || t->nframes != m->nframes)
        r = CAP_E_CORRUPT;
    else
        r = walk_exact(t, fn, ctx);
    an_free(t);
    return r;
}

void an_free(an_capture *m)
{
    if (!m)
        return;
    free(m->path);
    free(m->load_path);
    free(m->pop_of);
    free(m->ot_bin);
    free(m->ot_cpu_ms);
    free(m->ot_wait_ms);
    free(m->frame_work_ms);
    for (size_t i = 0; i < m->meta_n; i++) {
        if (m->meta_k)
            free(m->meta_k[i]);
        if (m->meta_v)
            free(m->meta_v[i]);
    }
    free(m->meta_k);
    free(m->meta_v);
    free(m->clock_source);
    free(m->frames);
    free(m->frame_index);
    free(m->frame_gpu_ns);
    free(m->frame_has_gpu);
    for (size_t i = 0; i < m->nscopes; i++) {
        free(m->scopes[i].name);
        free(m->scopes[i].path);
        series_free(m, &m->scopes[i]);
        an_hist_free(&m->scopes[i].pf_hist);
        an_hist_free(&m->scopes[i].pf_pop[0]);
        an_hist_free(&m->scopes[i].pf_pop[1]);
        for (size_t b = 0; m->scopes[i].pf_bin && b < m->ot_nbins; b++)
            an_hist_free(&m->scopes[i].pf_bin[b]);
        free(m->scopes[i].pf_bin);
    }
    pf_arena_free(m);
    free(m->scopes);
    for (size_t i = 0; i < m->nnodes; i++)
        free(m->nodes[i].name);
    free(m->nodes);
    for (size_t i = 0; i < m->ncounters; i++) {
        free(m->counters[i].name);
        free(m->counters[i].s);
    }
    free(m->counters);
    for (size_t i = 0; i < m->nthreads; i++)
        free(m->threads[i]);
    for (size_t i = 0; i < m->noutside_threads; i++)
        free(m->outside_threads[i]);
    free(m->outside_threads);
    free(m->threads);
    for (size_t i = 0; i < m->ntracks; i++)
        free(m->tracks[i]);
    free(m->tracks);
    free(m->scope_ht);
    free(m->node_ht);
    pack_free(m->pack);
    free(m);
}

typedef struct dense_ctx {
    size_t row;
    double *dense;
} dense_ctx;

static void dense_visit(void *p, size_t row, size_t frame, int64_t v)
{
    dense_ctx *c = p;
    if (row == c->row)
        c->dense[frame] += (double)v;
}

void an_scope_dense(const an_capture *m, const an_scope *s, double *dense_ns)
{
    for (size_t i = 0; i < m->nframes; i++)
        dense_ns[i] = 0;
    if (m->approx) {
        dense_ctx c = {(size_t)(s - m->scopes), dense_ns};
        if (an_series_scan(m, dense_visit, &c) != CAP_OK)
            for (size_t i = 0; i < m->nframes; i++)
                dense_ns[i] = NAN;
        return;
    }
    for (size_t i = 0; i < s->pf_n; i++)
        if (s->pf_frame[i] < m->nframes)
            dense_ns[s->pf_frame[i]] += (double)s->pf_self[i];
}

void an_cpu_frame_sums(const an_capture *m, double *row_ns,
                       double *const sum_ms[2])
{
    for (size_t s = 0; s < m->nscopes; s++) {
        const an_scope *sc = &m->scopes[s];
        double *to = sum_ms[sc->is_wait != 0];
        if (sc->kind != AN_CPU || !to)
            continue;
        an_scope_dense(m, sc, row_ns);
        for (size_t i = 0; i < m->nframes; i++)
            to[i] += row_ns[i] / 1e6;
    }
}

static int glob_matches(const char *name, const char *const *globs,
                        size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fnmatch(globs[i], name, 0) == 0)
            return 1;
    return 0;
}

size_t an_mark_waits(an_capture *m, const char *const *globs, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < m->nscopes; i++)
        if (glob_matches(m->scopes[i].name, globs, n)) {
            m->scopes[i].is_wait = 1;
            k++;
        }
    for (size_t i = 0; i < m->nnodes; i++)
        if (!m->nodes[i].is_root && glob_matches(m->nodes[i].name, globs, n))
            m->nodes[i].is_wait = 1;
    return k;
}

const char *an_meta(const an_capture *m, const char *key)
{
    for (size_t i = 0; i < m->meta_n; i++)
        if (strcmp(m->meta_k[i], key) == 0)
            return m->meta_v[i];
    return NULL;
}

unsigned an_machine_cpus(const an_capture *m)
{
    const char *s = an_meta(m, "machine");
    const char *tail = " CPUs)";
    size_t len = s ? strlen(s) : 0, tl = strlen(tail);
    if (len <= tl || strcmp(s + len - tl, tail) != 0)
        return 0;
    size_t k = len - tl, d = k;
    while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9')
        d--;
    if (d == k || k - d > 6 || d < 2 || s[d - 1] != ' ' || s[d - 2] != ',')
        return 0;
    unsigned c = 0;
    for (size_t i = d; i < k; i++)
        c = c * 10 + (unsigned)(s[i] - '0');
    return c;
}

long an_find_scope(const an_capture *m, an_kind kind, const char *name)
{
    for (size_t i = 0; i < m->nscopes; i++)
        if (m->scopes[i].kind == kind && strcmp(m->scopes[i].name, name) == 0)
            return (long)i;
    return -1;
}

int64_t an_total_frame_ns(const an_capture *m)
{
    int64_t t = 0;
    for (size_t i = 0; i < m->nframes; i++)
        cap_stats_sat_add(&t, an_frame_ns(&m->frames[i]));
    return t;
}
