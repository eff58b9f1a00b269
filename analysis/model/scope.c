/* scope.c - events into the model: path caches, scopes, GPU spans, counters. */
#include "model_int.h"

/* ---- per-thread / per-track path caches -------------------------------- */

path_cache *ml_cache_for(path_cache ***arr, size_t *cap, uint32_t id)
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

void ml_path_free(path_cache *c)
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
int ml_add_name(str_index *ix, char ***arr, size_t *n, const char *name)
{
    if (ml_str_find(ix, name, ml_arr_at, arr) >= 0)
        return 0;
    char **p = realloc(*arr, (*n + 1) * sizeof *p);
    if (!p)
        return -1;
    *arr = p;
    p[*n] = ml_xstrdup(name);
    if (!p[*n])
        return -1;
    (*n)++;
    return ml_str_add(ix, (uint32_t)(*n - 1), ml_arr_at, arr);
}

long ml_cpu_row_slow(loader *L, uint32_t id)
{
    long si = ml_scope_get(L->m, AN_CPU, id);
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
    c->root = ml_root_get(m, &L->ix_roots[kind == AN_CPU ? 0 : 1], kind, name);
    if (c->root == NONE)
        return -1;
    return kind == AN_CPU
               ? ml_add_name(&L->ix_threads, &m->threads, &m->nthreads, name)
               : ml_add_name(&L->ix_tracks, &m->tracks, &m->ntracks, name);
}

/* The path cache of CPU thread or GPU track `id`, its root set up; NULL
 * when out of memory. */
__attribute__((always_inline)) static inline path_cache *
event_cache(loader *L, an_kind kind, uint32_t id)
{
    path_cache *c;
    if (kind == AN_CPU && L->last_cache && L->last_tid == id) {
        c = L->last_cache;
    } else {
        c = kind == AN_CPU ? ml_cache_for(&L->threads, &L->threads_cap, id)
                           : ml_cache_for(&L->tracks, &L->tracks_cap, id);
        if (kind == AN_CPU && c && c->root != NONE) {
            L->last_cache = c;
            L->last_tid = id;
        }
    }
    if (c && c->root == NONE &&
        set_root(L, c, kind, ml_root_name(L, kind, id), id) != 0)
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
    return ml_add_name(&L->ix_threads, &L->m->threads, &L->m->nthreads, name);
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

/* ml_pf_note's usual case on a summarised load, inline: a row already in
 * the ring, on the thread it last ran on, in a frame the ring holds (the
 * sum into its slot, as ml_win_note adds it), on a load that measures no
 * --frames lag (reread: ml_pf_note measures it). 0: not that case. */
static inline int win_fast(loader *L, long si, long f, int64_t self,
                           uint32_t who)
{
    /* f < 0 or below the ring's first frame: fr - wbase wraps past win;
       si < ring_rows <= acc_cap (ml_pf_note made the row's accumulator) */
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

/* ml_pf_note's usual case while --frames' values are packed (reread and
 * packing: not windowed, not dropping), inline: a row on the thread it
 * last ran on, with a value held in its accumulator; the lag measured,
 * the value added there or the held one packed (pack_put). 1: done as
 * ml_pf_note does it; 0: not that case. */
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

/* ml_pf_note's usual case while the series are exact (not windowed, not
 * reread), inline: a row on the thread it last ran on, in the frame its
 * accumulator holds (the sum added there, as ml_pf_note adds it). Until
 * the series ml_spill (the first 13 % of bench_read's 10 M scopes) a call of
 * ml_pf_note a scope cost 66 M instructions of the load's 5.12 G (callgrind),
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

/* A scope's self time into its row's value in frame f (ml_pf_note), through
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
    return ml_pf_note(L, si, f, self, who);
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
        if (!(c = ml_cache_for(&L->threads, &L->threads_cap, tid)))
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
            si = L->o->by_path ? ml_scope_get(m, AN_CPU, node)
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
        si = L->o->by_path ? ml_scope_get(m, AN_CPU, node) : cpu_row(L, h->name);
        if (si < 0)
            return -1;
    }
    if (!tree) { /* with a tree, ml_rows_from_nodes sums them at the end */
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
    /* (past --frames' budget, L->dropping: ml_pf_note measures the lag and
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
    long f = ml_frame_by_index(m, e->cpu_frame);
    if (L->have_cutoff && f < 0)
        return 0;
    if (L->values_only) {
        long si = ml_scope_get(m, AN_GPU, e->name);
        if (si < 0)
            return -1;
        return e->measured ? ml_pf_note(L, si, f, e->self_ns,
                                     e->track | 0x80000000u)
                           : 0;
    }
    path_cache *c;
    uint32_t node = L->tree ? event_node(L, AN_GPU, e->track, e->stack,
                                         e->depth, e->name, &c)
                            : event_cache(L, AN_GPU, e->track) ? 0 : NONE;
    if (node == NONE)
        return -1;
    long si = ml_scope_get(m, AN_GPU, L->o->by_path ? node : e->name);
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
    return ml_pf_note(L, si, f, e->self_ns, e->track | 0x80000000u);
}

static int on_counter(loader *L, const cap_ev_counter *e)
{
    an_capture *m = L->m;
    if (L->values_only ||
        (L->have_cutoff && e->time_ns < L->cutoff_ns))
        return 0;
    uint32_t ci = ml_id_get(&L->counter_of, e->name);
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
        if (ml_id_set(&L->counter_of, e->name, ci) != 0)
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
                                   : ml_root_name(L, AN_CPU, ev->u.thread.tid));
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
 * checks it, and ml_pf_note takes what either loop leaves to it. */
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

int ml_apply(loader *L, const cap_event *evs, size_t n)
{
    return L->packing ? apply_packed(L, evs, n) : apply_plain(L, evs, n);
}

/* A scan's batch (values_only, one thread): each scope straight to its
 * row's value in its frame, as scope_value takes it from on_scope (the
 * same rows in the same order, the same values), without the record, the
 * recursion check and the calls between; the ring's usual case inline
 * (ml_win_note does the rest: a new row, a late piece, frames leaving). */
int ml_apply_values(loader *L, const cap_event *evs, size_t n)
{
    const int have_cutoff = L->have_cutoff;
    const int64_t cutoff_ns = L->cutoff_ns;
    for (size_t i = 0; i < n; i++) {
        const cap_event *ev = &evs[i];
        if (ev->kind != CAP_EV_SCOPE) {
            if (ml_apply(L, ev, 1) != 0)
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
                                                    alone, as ml_apply_values */
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
int ml_apply_recs(loader *L, const cap_scope_rec *rv, size_t n,
                      const uint32_t *stk, uint32_t tid, double per)
{
    return L->packing ? apply_recs_packed(L, rv, n, stk, tid, per)
                      : apply_recs_plain(L, rv, n, stk, tid, per);
}
