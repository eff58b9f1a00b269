/* window.c - bounded memory: per-frame values summarised as frames close (over-time bins). */
#include "model_int.h"

/* ---- bounded memory: per-frame values summarised as frames close -------
 * Every value of a frame has arrived once the file has moved `win`
 * frames past it (the writer interleaves the threads' buffers, each a
 * short stretch of time); a value that comes later still is summarised
 * on its own and counted (late_values). */


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

int ml_win_hist_only(const loader *L)
{
    return !L->visit && !L->o->summary_fn && !L->o->frame_work &&
           !L->seen && !L->reread && !L->packing;
}

int ml_emit(loader *L, size_t row, uint64_t frame, int64_t v)
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
        (ml_row_pops(s) != 0 ||
         an_hist_add(&s->pf_pop[m->pop_of[frame]], v) != 0))
        return -1;
    if (m->ot_bin && frame < m->nframes)
        return emit_ot(L, row, frame, v);
    return an_hist_add(&s->pf_hist, v);
}

/* emit's --over-time hint: the row's histogram of the frame's bin, and
 * the frame's sum of work or of waits. Inline: the ranking's load takes
 * its values past ml_emit (emit_is_hist), so its code does not grow, and
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
        size_t held = an_hist_nbuckets(h);
        if (an_hist_add(h, v) != 0)
            return -1;
        L->ot_bytes += (an_hist_nbuckets(h) - held) * sizeof *h->pos.c;
        if (sum) /* whole ns, in any order (exact below 2^53 ns): ms at
                    the end (over_time_finish), as over_time.c's sums */
            (*sum)[frame] += (double)v;
        /* pf_hist: the bins' merged at the end (ml_ot_merge) */
        return ml_ot_bound(L);
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
                          : ml_emit(L, r, frame, v)) != 0)
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
            if (ml_emit(L, r, frame, v) != 0)
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
    if (a->late_frame != NONE && ml_emit(L, row, a->late_frame, a->late_sum) != 0)
        return -1;
    a->late_frame = (uint32_t)frame;
    a->late_sum = self;
    return 0;
}

/* n zeroed int64_t for the ring. Its 2 MiB are written all over within
 * a few frames: asked as one huge page where the system gives them on
 * request (ml_huge_alloc), one fault instead of 512. Freed with free. */
static int64_t *ring_alloc(size_t n)
{
    size_t bytes = n * sizeof(int64_t);
    int64_t *p = ml_huge_alloc(bytes);
    if (p) {
        memset(p, 0, bytes);
        return p;
    }
    return calloc(n, sizeof(int64_t));
}

/* The ring made to hold rows up to `row` (ring_cap a power of two past
 * it), its frames copied over. 0, or -1 when out of memory. */
int ml_win_grow(loader *L, size_t row)
{
    size_t n = L->ring_cap ? L->ring_cap : 64;
    while (n <= row)
        n *= 2;
    /* more rows: a shorter ring, so that it stays near 2 MiB (its
       oldest frames are summarised first) */
    uint32_t nw = ml_win_frames(n);
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

int ml_win_note(loader *L, size_t row, uint64_t frame, int64_t self)
{
    if (row >= L->ring_cap && ml_win_grow(L, row) != 0)
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

int ml_win_flush_all(loader *L)
{
    for (uint64_t f = L->wbase; f < L->wbase + L->win; f++)
        if (win_emit_frame(L, f) != 0)
            return -1;
    L->wbase += L->win;
    for (size_t i = 0; i < L->acc_cap; i++) {
        pf_acc *a = &L->acc[i];
        if (a->late_frame != NONE &&
            ml_emit(L, i, a->late_frame, a->late_sum) != 0)
            return -1;
        a->late_frame = NONE;
    }
    return 0;
}

void ml_win_free(loader *L)
{
    free(L->ring);
    free(L->seen);
    L->ring = NULL;
    L->seen = NULL;
    L->ring_cap = L->ring_rows = 0;
}

/* The ring's length for `rows` rows: about 2 MiB of sums in all, 64 to
 * 4096 frames. */
uint32_t ml_win_frames(size_t rows)
{
    size_t w = ((size_t)2 << 20) / 8 / (rows ? rows : 1);
    uint32_t p = 64;
    while (p < 4096 && (size_t)p * 2 <= w)
        p *= 2;
    return p;
}
