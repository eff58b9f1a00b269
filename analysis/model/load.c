/* load.c - the load: its passes over the file, an_load. */
#include "model_int.h"
#include "pass.h"

static void note_damage(an_capture *m, cap_reader *r, cap_result res)
{
    if (res == CAP_E_CORRUPT)
        m->corrupt_seen = 1;
    if (!m->damage_detail[0])
        snprintf(m->damage_detail, sizeof m->damage_detail, "%s",
                 cap_reader_detail(r));
}

void ml_progress(const loader *L, const char *what, int force_end)
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

/* The file open on fd as it is now (known 0 for a device: nothing to
 * compare). */
static struct an_file_id file_id(int fd)
{
    struct stat sb;
    struct an_file_id id = {0};
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        return id;
    id.known = 1;
    id.dev = (uint64_t)sb.st_dev;
    id.ino = (uint64_t)sb.st_ino;
    id.size = (uint64_t)sb.st_size;
    id.mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    return id;
}

/* CAP_OK when m's file is still as m was loaded from it (model.h:
 * an_capture.file); else CAP_E_CHANGED with what changed in detail. */
cap_result ml_file_same(const an_capture *m, char *detail, size_t dsz)
{
    const struct an_file_id *was = &m->file;
    if (!was->known)
        return CAP_OK;
    struct an_file_id now = file_id(m->fd);
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

/* A reader of m's file from its start, a file description of its own
 * (opened again through the model's descriptor: readers never share a
 * position). Errors: cap_reader_open's. */
cap_result ml_reader_open(const an_capture *m, cap_reader **r, char *detail,
                          size_t dsz)
{
    char path[32];
    snprintf(path, sizeof path, "/proc/self/fd/%d", m->fd);
    return cap_reader_open(r, path, detail, dsz);
}

static cap_result pass_frames(loader *L, char *detail, size_t dsz)
{
    an_capture *m = L->m;
    cap_result res = ml_reader_open(m, &L->r, detail, dsz);
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
            ml_progress(L, "scanning", 0);
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
        sorted = ml_frames_in_order(m, i);
    if (m->nframes && !sorted) {
        frame_ix *t = malloc(m->nframes * sizeof *t);
        if (!t)
            return CAP_E_NOMEM;
        for (size_t i = 0; i < m->nframes; i++)
            t[i] = (frame_ix){m->frames[i], an_frame_index(m, i)};
        qsort(t, m->nframes, sizeof *t, ml_frame_cmp);
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
        ml_frame_index_compact(m);
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
        ml_frame_index_compact(m);
    }
    return CAP_OK;
}

/* How many threads load the file open on fd: opt->threads, else the
 * environment's CAP_READ_THREADS, else 2 for a file over 8 MiB on 2 cores
 * or more. */
int ml_load_threads(const an_options *o, int fd)
{
    if (o->threads == 1 || o->threads == 2)
        return o->threads;
    const char *e = getenv("CAP_READ_THREADS");
    if (e && (strcmp(e, "1") == 0 || strcmp(e, "2") == 0))
        return e[0] - '0';
    struct stat sb;
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || fstat(fd, &sb) != 0 ||
        sb.st_size <= (8 << 20))
        return 1;
    return 2;
}

/* Every event of L->r into the model: scopes in runs of records, the
 * rest in batches. A chunk's loader takes damage as a reason to read
 * whole (inexact); a load notes it and goes on. */
cap_result ml_read_events(loader *L, char *detail, size_t dsz)
{
    an_capture *m = L->m;
    cap_result res = CAP_OK;
    enum { BATCH = 256 };
    cap_event evs[BATCH]; /* on the stack: a load of a small capture
                             allocates little */
    uint64_t seen = 0;
    /* runs of scopes come as records (ticks, converted by ml_apply_recs),
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
            ml_progress(L, "reading", 0);
        L->gen++; /* the stacks of a new batch */
        if ((recs ? ml_apply_recs(L, rv, n, stk, run.tid, run.period_ns)
             : L->values_only ? ml_apply_values(L, evs, n)
                              : ml_apply(L, evs, n)) != 0) {
            res = CAP_E_NOMEM;
            break;
        }
    }
    free(rv);
    free(stk);
    return res;
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
        cap_result res = ml_pass_chunks(L, detail, dsz, &used);
        if (used)
            return res;
    }
    cap_result res = ml_reader_open(m, &L->r, detail, dsz);
    if (res == CAP_OK) /* the file the frames were read from */
        res = ml_file_same(m, detail, dsz);
    if (res != CAP_OK)
        return res;
    cap_reader_set_filter(L->r, 1u << CAP_EV_FRAME);
    if (ml_load_threads(L->o, m->fd) == 2)
        return ml_pass_ahead(L, detail, dsz);
    res = ml_read_events(L, detail, dsz);
    if (res == CAP_OK)
        ml_progress(L, "", 1);
    return res;
}

/* A scan's loader (visit): the values to visit, the ring (of walk_win
 * frames that never shortens when walk_win > 0), and the frames and
 * cut-off of the model scanned, borrowed (the scan's model lets go of
 * them before it is freed). CAP_E_NOMEM when the ring cannot be made. */
static cap_result visit_setup(loader *L, an_series_fn visit, void *visit_ctx,
                              const an_capture *src, uint32_t walk_win)
{
    an_capture *m = L->m;
    L->visit = visit;
    L->visit_ctx = visit_ctx;
    L->windowed = 1;
    L->win = src->win;
    L->budget = 0;
    L->values_only = !L->o->by_path;
    if (walk_win) { /* rows known: the ring made once, for all */
        L->win = walk_win;
        L->fixed_win = 1;
        L->ring_cap = 64;
        while (L->ring_cap < src->nscopes)
            L->ring_cap *= 2;
        L->ring = calloc((size_t)L->win * L->ring_cap, sizeof *L->ring);
        L->seen = calloc((size_t)L->win * L->ring_cap, 1);
        if (!L->ring || !L->seen)
            return CAP_E_NOMEM;
    }
    m->file = src->file;
    m->frames = src->frames;
    m->nframes = src->nframes;
    m->frame_index = src->frame_index;
    m->frame_index0 = src->frame_index0;
    L->cutoff_ns = src->cutoff_ns;
    L->have_cutoff = src->have_cutoff;
    return CAP_OK;
}

/* Before the events: the frames read (not on a scan: its model's are
 * borrowed), the series' arena, and each pass's state by frame. */
static cap_result load_frames(loader *L, char *detail, size_t dsz)
{
    an_capture *m = L->m;
    if (L->visit)
        return CAP_OK;
    cap_result res = pass_frames(L, detail, dsz);
    /* a file of a few MiB or more fills the budget's series: their arena
       (a smaller one would zero a huge page for little) */
    if (res == CAP_OK && L->budget && m->file.known &&
        m->file.size >= PF_ARENA_MIN_FILE)
        ml_pf_arena_make(m, L->budget);
    return res;
}

/* The reader's facts into the model: statistics, version, clock and
 * metadata. 0, or -1 when out of memory. */
static int reader_facts(loader *L)
{
    an_capture *m = L->m;
    m->st = L->chunked ? L->chunk_st : *cap_reader_get_stats(L->r);
    cap_reader_version(L->r, &m->major, &m->minor);
    m->origin_unix_ns = cap_reader_origin_unix_ns(L->r);
    m->clock_source = ml_xstrdup(cap_reader_clock_source(L->r));
    m->meta_n = cap_reader_meta_count(L->r);
    m->meta_k = calloc(m->meta_n + 1, sizeof *m->meta_k);
    m->meta_v = calloc(m->meta_n + 1, sizeof *m->meta_v);
    if (!m->clock_source || !m->meta_k || !m->meta_v)
        return -1;
    for (size_t i = 0; i < m->meta_n; i++) {
        m->meta_k[i] = ml_xstrdup(cap_reader_meta_key(L->r, i));
        m->meta_v[i] = ml_xstrdup(cap_reader_meta_value(L->r, i));
        if (!m->meta_k[i] || !m->meta_v[i])
            return -1;
    }
    return 0;
}

/* After the events, on a load that read them all: the series flushed,
 * names resolved, the passes finished, the threads that ran outside every
 * frame listed, each series sorted, and the time span. 0, or -1 when out
 * of memory. */
static int load_finish(loader *L)
{
    an_capture *m = L->m;
    if (reader_facts(L) != 0 || ml_pf_flush(L) != 0 ||
        ml_resolve_names(L) != 0 || ml_passes_finish(L) != 0)
        return -1;
    for (size_t i = 0; i < L->threads_cap; i++) {
        const path_cache *c = L->threads[i];
        if (c && c->outside && !c->in_frames && c->root != NONE &&
            ml_add_name(&L->ix_outside, &m->outside_threads,
                        &m->noutside_threads, m->nodes[c->root].name) != 0)
            return -1;
    }
    for (size_t i = 0; i < m->nscopes; i++)
        if (ml_sort_pf(&m->scopes[i]) != 0)
            return -1;
    if (m->nframes) {
        if (m->cpu_events == 0 || m->frames[0].begin_ns < m->first_ns)
            m->first_ns = m->frames[0].begin_ns;
        if (m->frames[m->nframes - 1].end_ns > m->last_ns)
            m->last_ns = m->frames[m->nframes - 1].end_ns;
    }
    return 0;
}

/* A new model named `name` of the file open on fd (which it duplicates),
 * or CAP_E_NOMEM, or CAP_E_IO when fd cannot be duplicated (detail says
 * why). */
static cap_result model_new(an_capture **out, int fd, const char *name,
                            char *detail, size_t dsz)
{
    an_capture *m = calloc(1, sizeof *m);
    *out = m;
    if (!m)
        return CAP_E_NOMEM;
    m->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    m->fd_open = m->fd >= 0;
    if (!m->fd_open && detail && dsz)
        snprintf(detail, dsz, "cannot hold the file open: %s",
                 strerror(errno));
    m->path = ml_xstrdup(name);
    if (!m->fd_open || !m->path) {
        cap_result r = m->fd_open ? CAP_E_NOMEM : CAP_E_IO;
        an_free(m);
        *out = NULL;
        return r;
    }
    return CAP_OK;
}

/* The load, or with visit a read of every (row, frame) value through it
 * (a ring of src->win frames from the start; of walk_win frames that never
 * shortens, zeros handed on, when walk_win > 0: an_series_walk). */
static cap_result load_as(an_capture **out, int fd, const char *name,
                          const an_options *opt, an_series_fn visit,
                          void *visit_ctx, const an_capture *src,
                          uint32_t walk_win, int whole, char *detail,
                          size_t detail_size)
{
    static const an_options defaults;
    *out = NULL;
    an_capture *m;
    cap_result made = model_new(&m, fd, name, detail, detail_size);
    if (made != CAP_OK)
        return made;
    loader L = {.m = m, .o = opt ? opt : &defaults, .cpu_first = INT64_MAX};
    m->load_opt = *L.o;
    L.tree = (!L.o->no_tree || L.o->by_path) && !(visit && !L.o->by_path);
    L.reread = L.o->series_reread && !visit;
    L.budget = ml_series_budget(L.o);
    cap_result res = CAP_OK;
    if (visit)
        res = visit_setup(&L, visit, visit_ctx, src, walk_win);
    else
        m->file = file_id(m->fd);
    if (res == CAP_OK)
        res = load_frames(&L, detail, detail_size);
    if (res == CAP_OK && ml_passes_frames(&L) != 0)
        res = CAP_E_NOMEM;
    m->cutoff_ns = L.cutoff_ns;
    m->have_cutoff = L.have_cutoff;
    if (res == CAP_OK)
        res = pass_all(&L, detail, detail_size, whole);
    if (L.tree)
        ml_rows_from_nodes(&L);
    if (res == CAP_OK && visit) /* a second read: the same file throughout */
        res = ml_file_same(m, detail, detail_size);
    m->max_lag = L.lag;
    m->lag_known = L.reread;
    if (m->cpu_events)
        m->first_ns = L.cpu_first;
    if (res == CAP_OK && load_finish(&L) != 0)
        res = CAP_E_NOMEM;
    ml_loader_free(&L);
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
void ml_loader_free(loader *L)
{
    cap_reader_close(L->r);
    L->r = NULL;
    for (size_t i = 0; i < L->threads_cap; i++) {
        if (L->threads[i]) {
            free(L->threads[i]->pieces);
            free(L->threads[i]->kid);
        }
        ml_path_free(L->threads[i]);
        free(L->threads[i]);
    }
    free(L->threads);
    for (size_t i = 0; i < L->tracks_cap; i++) {
        ml_path_free(L->tracks[i]);
        free(L->tracks[i]);
    }
    free(L->tracks);
    ml_id_free(&L->counter_of);
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
    ml_id_free(&L->name_wait);
    free(L->row_wait);
    ml_win_free(L);
}

cap_result ml_load(an_capture **out, int fd, const char *name,
                   const an_options *opt, an_series_fn visit,
                   void *visit_ctx, const an_capture *src,
                   uint32_t walk_win, char *detail, size_t detail_size)
{
    cap_result r = load_as(out, fd, name, opt, visit, visit_ctx, src,
                           walk_win, 0, detail, detail_size);
    if (r != LOAD_WHOLE)
        return r;
    /* the chunks could not be merged exactly: the file whole (what the
       merges gave summary_fn forgotten) */
    if (opt && opt->summary_fn)
        opt->summary_reset(opt->summary_ctx);
    return load_as(out, fd, name, opt, visit, visit_ctx, src, walk_win, 1,
                   detail, detail_size);
}

/* m's frames came from a 3.1 footer's list and its load found damage:
 * the list holds frames that a read of the blocks leaves out. */
static int frames_recheck(const an_capture *m)
{
    return m->frames_listed &&
           (m->st.corrupt_chunks || m->st.truncated || m->corrupt_seen);
}

cap_result an_load_fd(an_capture **out, int fd, const char *name,
                      const an_options *opt, char *detail,
                      size_t detail_size)
{
    if (detail && detail_size)
        detail[0] = 0;
    if (!out || !name || fd < 0)
        return CAP_E_MISUSE;
    *out = NULL;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        if (detail && detail_size)
            snprintf(detail, detail_size, "cannot stat: %s",
                     strerror(errno));
        return CAP_E_IO;
    }
    if (!S_ISREG(sb.st_mode) && !S_ISBLK(sb.st_mode)) {
        if (detail && detail_size)
            snprintf(detail, detail_size, "%s",
                     S_ISDIR(sb.st_mode)
                         ? "is a directory"
                         : "not a regular file (a pipe, a socket: the "
                           "analysis reads a capture more than once; copy "
                           "it into a file first)");
        return CAP_E_IO;
    }
    cap_result r = ml_load(out, fd, name, opt, NULL, NULL, NULL, 0, detail,
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
    return ml_load(out, fd, name, &o, NULL, NULL, NULL, 0, detail,
                   detail_size);
}

cap_result an_load(an_capture **out, const char *path, const an_options *opt,
                   char *detail, size_t detail_size)
{
    if (detail && detail_size)
        detail[0] = 0;
    if (!out || !path)
        return CAP_E_MISUSE;
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (detail && detail_size)
            snprintf(detail, detail_size, "cannot open: %s", strerror(errno));
        return CAP_E_IO;
    }
    cap_result r = an_load_fd(out, fd, path, opt, detail, detail_size);
    close(fd);
    return r;
}
