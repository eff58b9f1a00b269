/* walk.c - the per-frame series handed out: an_series_scan/rows/walk. */
#include "model_int.h"

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
    cap_result r = ml_load(&t, m->fd, m->path, o, scan_visit, &c, m,
                           walk_win, detail, sizeof detail);
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
            c->b = ml_pack_chunk(p, nx);
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
            c->b = ml_pack_chunk(p, c->chunk);
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
           ml_load_threads(&m->load_opt, m->fd) == 2;
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
    if ((r = ml_load(&t, m->fd, m->path, &o, NULL, NULL, NULL, 0, detail,
                     sizeof detail)) != CAP_OK)
        return r;
    if (t->nscopes != m->nscopes || t->nframes != m->nframes)
        r = CAP_E_CORRUPT;
    else
        r = walk_exact(t, fn, ctx);
    an_free(t);
    return r;
}
