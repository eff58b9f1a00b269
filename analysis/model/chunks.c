/* chunks.c - a chunked load: the file's chunks on N threads, merged in order. */
#include "model_int.h"

/* ---- a chunked load: the file's chunks on N threads ---------------------
 * Each chunk (cap_chunks.h: a run of blocks that reads on its own) is
 * loaded by a loader of its own into a model of its own, exact (its
 * series whole), the frames borrowed from the load's first pass; the
 * chunks' models are merged into the load's in chunk order (load/driver.h):
 * nodes and rows in order of first appearance, sums added, each chunk's
 * values by (row, frame) handed to ml_pf_note frame by frame (a frame cut by
 * a chunk's edge gets its pieces from both, summed there as one thread's
 * pieces are), counters in order. What a chunk cannot get right alone
 * (inexact: GPU spans, a renamed thread, damage, unnamed ids, a scope
 * spanning frames that began before the chunk) makes the load read the
 * file whole (LOAD_WHOLE).
 *
 * Inner frames (the ranking's, --tree's, --split's and --over-time's
 * load, whose values go only to histograms and frame sums:
 * ml_win_hist_only): a chunk also adds the values of its frames at least
 * INNER_MARGIN frames inside its own to per-row histograms of its own
 * (and by --split's population, and by --over-time's bin with each
 * frame's sums of work and of waits in whole ns), on its thread. Once
 * the load is windowed, the merge takes those whole (an_hist_merge:
 * counts and integer sums; sums of whole ns: in any order) where no frame
 * of theirs was merged before, and hands on only the other values; the
 * window would have summed each inner frame from this chunk's pieces
 * alone and added the sum to the same histograms and sums. A later chunk
 * with a value of a frame so taken, or a row that the chunk and the load
 * tell apart as wait and work, makes the load inexact (read whole).
 * CAP_READ_INNER=0 turns it off. */

#define INNER_MARGIN 64 /* frames: a window's shortest (ml_win_frames) */

typedef struct chunk_val {
    uint32_t frame, row;
    int64_t v;
} chunk_val;

typedef struct chunk_tid {
    uint32_t tid, root;
    int in_frames, outside;
} chunk_tid;

/* A chunk row's values of its inner frames: all of them (or, where the
 * load has --over-time's bins, by bin instead), and by --split's
 * population (the fastest and the slowest quarter) where it has them. */
typedef struct inner_row {
    an_hist all, pop[2];  /* all: empty where bin is not NULL */
    an_hist *bin;         /* the bins bin_lo.. of the chunk's, or NULL */
    uint64_t n;           /* the values added */
    uint8_t wait;         /* a CPU row with bins: 1 work, 2 wait; else 0 */
} inner_row;

/* What the chunks' inner frames feed besides their rows' histograms, as
 * the load set it before the drive (read on the chunks' threads). */
typedef struct inner_need {
    const uint8_t *pop_of;  /* --split's populations, or NULL */
    const uint16_t *bin_of; /* --over-time's bins (a copy: the merge may
                               let the load's go), or NULL */
    int sums;               /* the frames' sums of work and waits */
} inner_need;

typedef struct chunk_res {
    an_capture *m;        /* frames borrowed from the load's model */
    uint32_t *counter_name; /* each counter's name id */
    chunk_tid *tids;
    size_t ntids;
    chunk_val *vals;      /* by frame, then row */
    size_t nvals;
    uint32_t minf, maxf;  /* frames of vals, when nvals */
    inner_row *inner;     /* per row: values of frames inner_lo..inner_hi,
                             NULL when none */
    size_t ninner;        /* its rows */
    uint32_t inner_lo, inner_hi;
    uint16_t bin_lo, nbins; /* the bins of the inner frames */
    int64_t *ot_ns;       /* with bins and sums: each inner frame's work
                             (ns), then each one's waits; else NULL */
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
    int profile;          /* CAP_READ_PROFILE: vals_cpu_s measured */
    double vals_cpu_s;    /* the merges' CPU time handing values over */
    int inner_ok;         /* the load's values go only to histograms */
    inner_need need;      /* and what else inner frames feed */
    uint16_t *bin_of;     /* need.bin_of's storage */
    int merged_any;       /* a chunk's values merged */
    uint32_t merged_max;  /* the latest frame of any merged so far */
    int inner_any;        /* inner histograms taken */
    uint32_t inner_max;   /* the latest frame they held */
    size_t inner_chunks;  /* chunks whose inner histograms were taken */
} chunk_ctx;

/* The calling thread's CPU time, in seconds. */
static double thread_cpu_s(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0)
        return 0;
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

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
    for (size_t r = 0; R->inner && r < R->ninner; r++) {
        inner_row *in = &R->inner[r];
        an_hist_free(&in->all);
        an_hist_free(&in->pop[0]);
        an_hist_free(&in->pop[1]);
        for (size_t b = 0; in->bin && b < R->nbins; b++)
            an_hist_free(&in->bin[b]);
        free(in->bin);
    }
    free(R->inner);
    free(R->ot_ns);
    free(R);
}

/* Row r of a chunk's loader L with --over-time's bins: its histograms
 * by bin and, for a CPU row when sums are wanted, its flag (as the load's
 * row_wait asks it, of the chunk's reader). 0, or -1 out of memory. */
static int inner_bins(loader *L, chunk_res *R, size_t r, int sums)
{
    const an_capture *m = L->m;
    const an_scope *s = &m->scopes[r];
    inner_row *in = &R->inner[r];
    if (!(in->bin = calloc(R->nbins, sizeof *in->bin)))
        return -1;
    if (s->kind == AN_CPU && sums) {
        uint32_t id = L->o->by_path ? m->nodes[s->name_id].name_id
                                    : s->name_id;
        in->wait = ml_name_is_wait(L, L->r, id) ? 2 : 1;
    }
    return 0;
}

/* Value v of inner frame f into row r's histograms (R->inner[r]), with
 * need's populations, bins (made at the row's first value) and sums. 0,
 * or -1 out of memory. */
static int inner_add(loader *L, chunk_res *R, size_t r, uint32_t f,
                     int64_t v, const inner_need *need)
{
    inner_row *in = &R->inner[r];
    size_t nframes = L->m->nframes;
    if (!in->n++ && need->bin_of && inner_bins(L, R, r, need->sums) != 0)
        return -1;
    if (need->pop_of && f < nframes && need->pop_of[f] < 2 &&
        an_hist_add(&in->pop[need->pop_of[f]], v) != 0)
        return -1;
    if (!in->bin)
        return an_hist_add(&in->all, v);
    if (an_hist_add(&in->bin[need->bin_of[f] - R->bin_lo], v) != 0)
        return -1;
    if (in->wait && R->ot_ns) {
        size_t nf = (size_t)(R->inner_hi - R->inner_lo) + 1;
        R->ot_ns[(size_t)(in->wait - 1) * nf + (f - R->inner_lo)] += v;
    }
    return 0;
}

/* The inner frames' values of a chunk whose rows' series are sorted (lo
 * and hi: its first and last frame) into R->inner, with what `need` asks
 * (the load's, for its nframes frames). 0, or -1 when out of memory. */
static int keep_inner(loader *L, chunk_res *R, uint32_t lo, uint32_t hi,
                      const inner_need *need)
{
    const an_capture *m = L->m;
    if (hi - lo <= 2 * INNER_MARGIN)
        return 0;
    R->inner_lo = lo + INNER_MARGIN;
    R->inner_hi = hi - INNER_MARGIN;
    R->inner = calloc(m->nscopes ? m->nscopes : 1, sizeof *R->inner);
    if (!R->inner)
        return -1;
    R->ninner = m->nscopes;
    size_t nf = (size_t)(R->inner_hi - R->inner_lo) + 1;
    if (need->bin_of) {
        R->bin_lo = need->bin_of[R->inner_lo];
        R->nbins = (uint16_t)(need->bin_of[R->inner_hi] - R->bin_lo + 1);
        if (need->sums && !(R->ot_ns = calloc(2 * nf, sizeof *R->ot_ns)))
            return -1;
    }
    for (size_t r = 0; r < m->nscopes; r++) {
        const an_scope *s = &m->scopes[r];
        for (size_t k = 0; k < s->pf_n; k++) {
            uint32_t f = s->pf_frame[k];
            int64_t v = s->pf_self[k];
            if (f < R->inner_lo || f > R->inner_hi || v == 0)
                continue;
            if (inner_add(L, R, r, f, v, need) != 0)
                return -1;
        }
    }
    return 0;
}

/* A chunk's loader's results kept for the merge: its threads, its
 * counters' names and its values by frame (counting sort; the rows'
 * series let go), and with need its inner frames' histograms
 * (keep_inner). 0, or -1 when out of memory. */
static int chunk_keep(loader *L, chunk_res *R, const inner_need *need)
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
        if (ml_sort_pf(s) != 0)
            return -1;
        R->nvals += s->pf_n;
        if (s->pf_n && s->pf_frame[0] < lo)
            lo = s->pf_frame[0];
        if (s->pf_n && s->pf_frame[s->pf_n - 1] > hi)
            hi = s->pf_frame[s->pf_n - 1];
    }
    if (!R->nvals)
        return 0;
    R->minf = lo;
    R->maxf = hi;
    if (need && keep_inner(L, R, lo, hi, need) != 0)
        return -1;
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
        R->res = ml_read_events(&L, R->detail, sizeof R->detail);
    }
    if (R->res == CAP_OK) {
        R->st = *cap_reader_get_stats(L.r);
        L.inexact |= R->st.unnamed_ids != 0;
        if (ml_pf_flush(&L) != 0 ||
            chunk_keep(&L, R, X->inner_ok ? &X->need : NULL) != 0)
            R->res = CAP_E_NOMEM;
    }
    R->inexact = L.inexact;
    R->cpu_first = L.cpu_first;
    ml_loader_free(&L);
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
        uint32_t g = n->is_root ? ml_root_get(m,
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
                                                     : ml_scope_get(m, s->kind,
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
        if (ml_add_name(&G->ix_threads, &m->threads, &m->nthreads,
                     c->threads[i]) != 0)
            return -1;
    for (size_t i = 0; i < c->ntracks; i++)
        if (ml_add_name(&G->ix_tracks, &m->tracks, &m->ntracks, c->tracks[i]) !=
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
        uint32_t at = ml_id_get(&G->counter_of, id);
        if (!at) {
            an_counter *p = realloc(m->counters,
                                    (m->ncounters + 1) * sizeof *p);
            if (!p)
                return -1;
            m->counters = p;
            memset(&p[m->ncounters], 0, sizeof *p);
            at = (uint32_t)++m->ncounters;
            if (ml_id_set(&G->counter_of, id, at) != 0)
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

/* Whether R's inner histograms can be taken: the load windowed, values
 * only to histograms, and none of R's inner frames merged before. */
static int inner_takes(const chunk_ctx *X, const chunk_res *R)
{
    return R->inner && X->inner_ok && X->L->windowed &&
           (!X->merged_any || R->inner_lo > X->merged_max);
}

/* Whether every CPU row of R's with sums is, for the load, what it was
 * for the chunk (wait or work): 1 yes, 0 no, -1 out of memory. */
static int inner_waits_agree(chunk_ctx *X, const chunk_res *R)
{
    for (size_t r = 0; r < R->ninner; r++) {
        if (!R->inner[r].wait)
            continue;
        int w = row_wait(X->L, X->rmap[r]);
        if (w < 0)
            return -1;
        if (w != (R->inner[r].wait == 2))
            return 0;
    }
    return 1;
}

/* Row s's --over-time histograms by bin (bins bin_lo.. of them) added to
 * with in's, counted in the load's ot_bytes as emit_ot counts them. 0,
 * or -1 out of memory. */
static int take_bins(loader *G, an_scope *s, const inner_row *in,
                     size_t bin_lo, size_t nbins)
{
    an_capture *m = G->m;
    if (!s->pf_bin) {
        if (!(s->pf_bin = calloc(m->ot_nbins, sizeof *s->pf_bin)))
            return -1;
        G->ot_bytes += m->ot_nbins * sizeof *s->pf_bin;
    }
    for (size_t b = 0; b < nbins; b++) {
        an_hist *h = &s->pf_bin[bin_lo + b];
        size_t held = an_hist_nbuckets(h);
        if (an_hist_merge(h, &in->bin[b]) != 0)
            return -1;
        G->ot_bytes += (an_hist_nbuckets(h) - held) * sizeof *h->pos.c;
    }
    return 0;
}

/* Row s's own histogram added to with in's values (its bins' where it
 * has them: the load let its bins go). 0, or -1 out of memory. */
static int take_all(an_scope *s, const inner_row *in, size_t nbins)
{
    if (!in->bin)
        return an_hist_merge(&s->pf_hist, &in->all);
    for (size_t b = 0; b < nbins; b++)
        if (an_hist_merge(&s->pf_hist, &in->bin[b]) != 0)
            return -1;
    return 0;
}

/* R's inner frames' sums of work and of waits (whole ns) added to the
 * load's frames' (allocated where R has a value, as emit_ot does). 0, or
 * -1 out of memory. */
static int take_sums(an_capture *m, const chunk_res *R)
{
    size_t nf = (size_t)(R->inner_hi - R->inner_lo) + 1;
    for (int k = 0; k < 2; k++) {
        const int64_t *ns = R->ot_ns + (size_t)k * nf;
        double **sum = k ? &m->ot_wait_ms : &m->ot_cpu_ms;
        for (size_t i = 0; i < nf; i++) {
            if (!ns[i])
                continue;
            if (!*sum && !(*sum = calloc(m->nframes, sizeof **sum)))
                return -1;
            (*sum)[R->inner_lo + i] += (double)ns[i];
        }
    }
    return 0;
}

/* R's inner histograms into their rows' (the window's ring made to hold
 * those rows, as noting their values would have made it): each row's
 * own, or with the load's --over-time bins still held its bins' and the
 * frames' sums (and the bins let go past their bound, as emit_ot does).
 * 0, -1 out of memory, or 1 inexact (a row wait for one and work for the
 * other). */
static int take_inner(chunk_ctx *X, const chunk_res *R)
{
    loader *G = X->L;
    an_capture *m = G->m;
    const int bins = m->ot_bin && R->nbins;
    const int sums = bins && m->ot_sums && R->ot_ns;
    int agree = sums ? inner_waits_agree(X, R) : 1;
    if (agree <= 0)
        return agree < 0 ? -1 : 1;
    for (size_t r = 0; r < R->ninner; r++) {
        const inner_row *in = &R->inner[r];
        if (!in->n)
            continue;
        size_t g = X->rmap[r];
        an_scope *s = &m->scopes[g];
        if ((g >= G->ring_cap && ml_win_grow(G, g) != 0) ||
            (bins ? take_bins(G, s, in, R->bin_lo, R->nbins)
                  : take_all(s, in, R->nbins)) != 0)
            return -1;
        if (g >= G->ring_rows)
            G->ring_rows = g + 1;
        for (int p = 0; p < 2; p++)
            if (in->pop[p].count &&
                (ml_row_pops(s) != 0 ||
                 an_hist_merge(&s->pf_pop[p], &in->pop[p]) != 0))
                return -1;
    }
    if (sums && take_sums(m, R) != 0)
        return -1;
    if (bins && ml_ot_bound(G) != 0)
        return -1;
    X->inner_any = 1;
    if (R->inner_hi > X->inner_max)
        X->inner_max = R->inner_hi;
    X->inner_chunks++;
    return 0;
}

/* R's values to the load's series, in order (those of its inner frames
 * as histograms where inner_takes). 0, -1 out of memory, 1 inexact (a
 * value of a frame whose sums were taken whole from an earlier chunk). */
static int merge_values(chunk_ctx *X, const chunk_res *R)
{
    loader *G = X->L;
    if (!R->nvals)
        return 0;
    if (X->inner_any && R->minf <= X->inner_max)
        return 1;
    int take = inner_takes(X, R);
    uint32_t lo = take ? R->inner_lo : UINT32_MAX, hi = take ? R->inner_hi : 0;
    for (size_t i = 0; i < R->nvals; i++) {
        const chunk_val *v = &R->vals[i]; /* by frame */
        if (v->frame >= lo && v->frame <= hi)
            continue;
        /* the inner frames' sums where their values would have come:
           after the frames before them */
        if (take && v->frame > hi) {
            take = 0;
            int k = take_inner(X, R);
            if (k != 0)
                return k;
        }
        if (ml_pf_note(G, (long)X->rmap[v->row], (long)v->frame, v->v, 0) != 0)
            return -1;
    }
    int k = take ? take_inner(X, R) : 0;
    if (k != 0)
        return k;
    if (!X->merged_any || R->maxf > X->merged_max)
        X->merged_max = R->maxf;
    X->merged_any = 1;
    return 0;
}

/* Chunk R into the load's model (in chunk order). 0, -1 out of memory,
 * or 1 inexact (merge_values). */
static int merge_chunk(chunk_ctx *X, const chunk_res *R)
{
    loader *G = X->L;
    an_capture *m = G->m;
    const an_capture *c = R->m;
    if (merge_tree(X, c) != 0 || merge_counters(G, R) != 0)
        return -1;
    for (size_t i = 0; i < R->ntids; i++) {
        const chunk_tid *t = &R->tids[i];
        path_cache *pc = ml_cache_for(&G->threads, &G->threads_cap, t->tid);
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
    double t0 = X->profile ? thread_cpu_s() : 0;
    int k = merge_values(X, R);
    if (X->profile)
        X->vals_cpu_s += thread_cpu_s() - t0;
    return k;
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
    } else if ((rc = merge_chunk(X, R)) != 0) {
        X->inexact |= rc > 0;
        rc = rc > 0 ? 2 : 3;
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

/* CAP_READ_PROFILE set and not "0": each chunked load prints one line
 * to stderr, where its drive spent its time (docs/ANALYSIS.md). */
static int profile_asked(void)
{
    const char *e = getenv("CAP_READ_PROFILE");
    return e && *e && strcmp(e, "0") != 0;
}

static void profile_print(const an_drive_prof *p, double vals_cpu_s,
                          size_t inner)
{
    fprintf(stderr,
            "cap_read_profile: chunks %zu threads %d wall %.3f s "
            "busy %.3f s (cpu %.3f s) merge %.3f s (cpu %.3f s, values "
            "%.3f s) wait %.3f s ahead %.3f s inner %zu\n",
            p->chunks, p->threads, p->wall_s, p->busy_s, p->busy_cpu_s,
            p->merge_s, p->merge_cpu_s, vals_cpu_s, p->wait_s, p->ahead_s,
            inner);
}

/* The chunked load, where the file allows it: *used 1 when it ran (its
 * result returned; LOAD_WHOLE: read whole), 0 when the file must be read
 * whole (nothing done). */
cap_result ml_pass_chunks(loader *L, char *detail, size_t dsz, int *used)
{
    an_capture *m = L->m;
    *used = 0;
    int fd = m->fd; /* the model's: planned with pread, each chunk's reader
                       opening the file again */
    cap_chunk_plan plan;
    cap_reader *tail = NULL;
    cap_result res = cap_chunks_plan(fd, ml_env_size("CAP_READ_CHUNK_BYTES",
                                                  CHUNK_BYTES), &plan);
    if (res == CAP_OK && plan.n)
        tail = footer_reader(fd, &plan);
    if (res == CAP_OK && tail)
        res = ml_file_same(m, detail, dsz);
    if (res != CAP_OK || !tail) {
        cap_reader_close(tail);
        cap_chunks_free(&plan);
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
    an_drive_prof prof;
    X.profile = profile_asked();
    const char *inner = getenv("CAP_READ_INNER");
    X.inner_ok = ml_win_hist_only(L) && !(inner && strcmp(inner, "0") == 0);
    X.need = (inner_need){.pop_of = m->pop_of, .sums = m->ot_sums};
    if (X.inner_ok && m->ot_bin) {
        X.bin_of = malloc(m->nframes * sizeof *X.bin_of);
        if (!X.bin_of) {
            cap_reader_close(tail);
            cap_chunks_free(&plan);
            return CAP_E_NOMEM;
        }
        memcpy(X.bin_of, m->ot_bin, m->nframes * sizeof *X.bin_of);
        X.need.bin_of = X.bin_of;
    }
    /* the names (wait flags: row_wait) as the merge meets rows, read on
       the chunks' threads too (decl) */
    L->r = tail;
    int rc = an_drive_profiled(fd, &plan, an_driver_threads(L->o->threads),
                               &ops, &X, X.profile ? &prof : NULL);
    if (X.profile)
        profile_print(&prof, X.vals_cpu_s, X.inner_chunks);
    m->inner_chunks = rc == 0 ? X.inner_chunks : 0;
    cap_chunks_free(&plan);
    free(X.nmap);
    free(X.rmap);
    free(X.bin_of);
    /* L->r: tail, for names, metadata, the footer's statistics */
    L->chunked = 1;
    if (rc == 1) {
        snprintf(detail, dsz, "%s", X.detail);
        return X.res;
    }
    if (rc == 2)
        return LOAD_WHOLE;
    if (rc != 0)
        return CAP_E_NOMEM;
    ml_progress(L, "", 1);
    return CAP_OK;
}
