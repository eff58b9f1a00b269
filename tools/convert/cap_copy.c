/*
 * cap_copy.c - capture -> capture (cvt_cap_to_cap).
 *
 * Re-writes a capture through the reader and the writer: a capture cut
 * short (no footer) or with damaged chunks comes out complete, with a
 * footer, holding everything the reader could recover. Times are rewritten
 * as nanoseconds since the origin (tick period 1 ns, origin tick 0); the
 * metadata, clock source and wall-clock origin are kept.
 *
 * Order: the reader yields scopes children first; each thread's scopes are
 * held until their root closes, then written as begin/end pairs. Scopes
 * whose root never closed (the file was cut inside it) are written at the
 * end without it, with a warning. GPU spans are rebuilt into batches: one
 * batch per run of spans of the same track and CPU frame; each span's
 * parent is the latest earlier span one level up with the parent's name.
 */
#include "cvt.h"
#include "cvt_util.h"

#include <capture/cap_reader.h>
#include <capture/cap_writer.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { W_DAMAGE, W_ORPHAN, W_CLAMP, W_GPU };

typedef struct copy {
    cvt_diag d;
    const char *out;
    cap_reader *r;
    cap_writer *w;
    uint8_t *named;          /* name ids already defined in the output */
    size_t named_cap;
    int64_t *open_end;       /* scratch: ends of open scopes */
    size_t open_cap;
    uint64_t clamped;
    /* the GPU batch being collected */
    cap_gpu_span *spans;
    uint32_t *span_depth;
    size_t nspans, spans_cap;
    uint32_t gtrack;
    uint64_t gframe;
    uint8_t cal_written[CAP_MAX_TRACKS];
    int fatal;               /* CVT_EXIT_* once something failed */
    /* a window (cvt_copy_reader), resolved once the metadata is read */
    const cvt_window *win;
    int64_t lo, hi;          /* keep what begins in [lo, hi) */
    uint64_t kept_frames;
    int have_first;
    uint64_t first_frame, last_frame; /* indices of the kept frames */
    int done;                /* the window is complete */
    uint64_t left_out;       /* scope trees outside the window */
} copy;

/* 1 when an event beginning at t is inside the window. */
static int in_window(const copy *c, int64_t t)
{
    return !c->win || (t >= c->lo && t < c->hi);
}

static int wfail(copy *c, cap_result r, const char *what)
{
    if (c->fatal)
        return c->fatal;
    int e = cap_writer_errno(c->w);
    c->d.file = c->out;
    if (r == CAP_E_IO || r == CAP_E_STOPPED)
        cvt_error(&c->d, "cannot write (%s): %s", what, strerror(e ? e : EIO));
    else
        cvt_error(&c->d, "cannot write (%s): %s", what, cap_result_message(r));
    c->fatal = r == CAP_E_NOMEM ? CVT_EXIT_INPUT : CVT_EXIT_OUTPUT;
    return c->fatal;
}

static uint64_t tick(copy *c, int64_t ns)
{
    if (ns < 0) {
        c->clamped++;
        return 0;
    }
    return (uint64_t)ns;
}

/* Define name id `id` in the output the first time it is used. */
static int use_name(copy *c, uint32_t id)
{
    if (id >= c->named_cap) {
        size_t old = c->named_cap;
        if (cvt_grow((void **)&c->named, &c->named_cap, (size_t)id + 1, 1))
            return wfail(c, CAP_E_NOMEM, "names");
        memset(c->named + old, 0, c->named_cap - old);
    }
    if (c->named[id])
        return 0;
    c->named[id] = 1;
    const char *s = cap_reader_name(c->r, id);
    if (!s)
        return 0; /* unnamed in the input: stays unnamed */
    cap_result r = cap_writer_name(c->w, id, s, cap_reader_name_file(c->r, id),
                                   cap_reader_name_line(c->r, id));
    return r == CAP_OK ? 0 : wfail(c, r, "names");
}

static int emit_scopes(void *user, uint32_t tid, const cvt_scope *s, size_t n)
{
    copy *c = user;
    if (n && !in_window(c, s[0].begin)) {
        c->left_out++;
        return 0;
    }
    if (cvt_grow((void **)&c->open_end, &c->open_cap, n + 1,
                 sizeof *c->open_end))
        return wfail(c, CAP_E_NOMEM, "scopes");
    size_t nopen = 0;
    uint32_t *odepth = NULL;
    cap_result r = CAP_OK;
    /* pop by depth: a scope ends before the next one at its depth or above */
    odepth = malloc((n + 1) * sizeof *odepth);
    if (!odepth)
        return wfail(c, CAP_E_NOMEM, "scopes");
    for (size_t i = 0; i < n && r == CAP_OK; i++) {
        while (nopen && odepth[nopen - 1] >= s[i].depth && r == CAP_OK)
            r = cap_writer_scope_end(c->w, tid, tick(c, c->open_end[--nopen]));
        if (r != CAP_OK)
            break;
        if (use_name(c, s[i].name)) {
            free(odepth);
            return c->fatal;
        }
        r = cap_writer_scope_begin(c->w, tid, s[i].name, tick(c, s[i].begin));
        c->open_end[nopen] = s[i].end;
        odepth[nopen++] = s[i].depth;
    }
    while (nopen && r == CAP_OK)
        r = cap_writer_scope_end(c->w, tid, tick(c, c->open_end[--nopen]));
    free(odepth);
    return r == CAP_OK ? 0 : wfail(c, r, "scopes");
}

static int flush_gpu(copy *c)
{
    if (!c->nspans)
        return 0;
    cap_result r = cap_writer_gpu_frame(c->w, c->gtrack, c->gframe, c->spans,
                                        c->nspans);
    c->nspans = 0;
    return r == CAP_OK ? 0 : wfail(c, r, "GPU spans");
}

static int add_gpu(copy *c, const cap_ev_gpu_span *g)
{
    if (c->nspans && (g->track != c->gtrack || g->cpu_frame != c->gframe ||
                      (c->nspans >= CAP_MAX_GPU_SPANS))) {
        if (c->nspans >= CAP_MAX_GPU_SPANS && g->depth)
            cvt_warn(&c->d, W_GPU, "GPU batch over %u spans split; spans "
                     "after the cut lose their parents", CAP_MAX_GPU_SPANS);
        if (flush_gpu(c))
            return c->fatal;
    }
    c->gtrack = g->track;
    c->gframe = g->cpu_frame;
    if (g->measured && g->calibrated && !c->cal_written[g->track]) {
        if (flush_gpu(c))
            return c->fatal;
        cap_result r = cap_writer_gpu_calibration(c->w, g->track, 0, 0, 0);
        if (r != CAP_OK)
            return wfail(c, r, "GPU calibration");
        c->cal_written[g->track] = 1;
    }
    if (use_name(c, g->name))
        return c->fatal;
    if (cvt_grow((void **)&c->spans, &c->spans_cap, c->nspans + 1,
                 sizeof *c->spans))
        return wfail(c, CAP_E_NOMEM, "GPU spans");
    size_t cap2 = c->nspans;
    (void)cap2;
    uint32_t *d = realloc(c->span_depth, c->spans_cap * sizeof *d);
    if (!d)
        return wfail(c, CAP_E_NOMEM, "GPU spans");
    c->span_depth = d;
    int32_t parent = -1;
    if (g->depth) {
        int32_t fallback = -1;
        for (size_t i = c->nspans; i-- > 0;) {
            if (c->span_depth[i] != g->depth - 1 ||
                c->spans[i].name != g->parent_name)
                continue;
            if (fallback < 0)
                fallback = (int32_t)i;
            const cap_gpu_span *p = &c->spans[i];
            if (!g->measured || !p->measured ||
                (p->begin_tick <= tick(c, g->begin_ns) &&
                 tick(c, g->end_ns) <= p->end_tick)) {
                parent = (int32_t)i;
                break;
            }
        }
        if (parent < 0)
            parent = fallback;
    }
    c->spans[c->nspans] = (cap_gpu_span){
        g->name, parent, g->measured ? tick(c, g->begin_ns) : 0,
        g->measured ? tick(c, g->begin_ns) + (uint64_t)g->duration_ns : 0,
        g->measured};
    c->span_depth[c->nspans] = parent >= 0 ? g->depth : 0;
    c->nspans++;
    return 0;
}

/* Whether frame f goes into the output; moves the window along. */
static int keep_frame(copy *c, const cap_ev_frame *f)
{
    if (!c->win)
        return 1;
    if (c->done || f->begin_ns < c->lo)
        return 0;
    if (f->begin_ns >= c->hi) {
        c->done = 1;
        if (c->win->progress)
            c->win->progress(c->win->user, c->kept_frames, 1);
        return 0;
    }
    if (!c->have_first) {
        c->have_first = 1;
        c->first_frame = f->index;
    }
    c->last_frame = f->index;
    c->kept_frames++;
    if (c->win->frames && c->kept_frames >= c->win->frames) {
        c->done = 1;
        c->hi = f->end_ns; /* nothing after the last frame */
    }
    if (c->win->progress)
        c->win->progress(c->win->user, c->kept_frames, c->done);
    return 1;
}

static void resolve_window(copy *c)
{
    const cvt_window *w = c->win;
    int64_t base = 0;
    const char *s = cap_reader_meta_get(c->r, "stream_start_ns");
    if (s)
        base = strtoll(s, NULL, 10);
    double skip = w->skip_seconds > 0 ? w->skip_seconds * 1e9 : 0;
    c->lo = base + (int64_t)(skip < 9e18 ? skip : 9e18);
    double len = w->seconds > 0 ? w->seconds * 1e9 : 0;
    c->hi = len > 0 && len < 9e18 && c->lo < INT64_MAX - (int64_t)len
                ? c->lo + (int64_t)len
                : INT64_MAX;
}

int cvt_cap_to_cap(const char *in, const char *out, const cvt_options *o)
{
    cvt_diag d = {0};
    d.out = o ? o->diag : NULL;
    d.file = in;
    char detail[256] = "";
    cap_reader *r;
    cap_result res = cap_reader_open(&r, in, detail, sizeof detail);
    if (res != CAP_OK) {
        cvt_error(&d, "%s", detail[0] ? detail : cap_result_message(res));
        return CVT_EXIT_INPUT;
    }
    return cvt_copy_reader(r, in, out, NULL, o, NULL);
}

int cvt_copy_reader(cap_reader *rd, const char *in, const char *out,
                    const cvt_window *win, const cvt_options *o,
                    cvt_copy_result *result)
{
    copy *c = calloc(1, sizeof *c);
    if (!c) {
        cap_reader_close(rd);
        return CVT_EXIT_INPUT;
    }
    c->d.out = o ? o->diag : NULL;
    c->d.file = in;
    c->out = out;
    c->r = rd;
    c->win = win;
    cap_result res;
    if (win)
        resolve_window(c);
    size_t nmeta = cap_reader_meta_count(c->r);
    cap_meta_kv *meta = calloc(nmeta ? nmeta : 1, sizeof *meta);
    if (!meta) {
        cap_reader_close(c->r);
        free(c);
        return CVT_EXIT_INPUT;
    }
    for (size_t i = 0; i < nmeta; i++)
        meta[i] = (cap_meta_kv){cap_reader_meta_key(c->r, i),
                                cap_reader_meta_value(c->r, i)};
    cap_writer_options wo = {0};
    wo.meta = meta;
    wo.meta_count = nmeta;
    wo.clock_source = cap_reader_clock_source(c->r);
    wo.tick_period_ns = 1.0;
    wo.origin_unix_ns = cap_reader_origin_unix_ns(c->r);
    res = cap_writer_open_path(&c->w, out, &wo);
    free(meta);
    if (res != CAP_OK) {
        c->d.file = out;
        cvt_error(&c->d, "cannot create: %s",
                  res == CAP_E_IO ? strerror(errno) : cap_result_message(res));
        cap_reader_close(c->r);
        free(c);
        return CVT_EXIT_OUTPUT;
    }
    cvt_preorder pre;
    cvt_preorder_init(&pre, emit_scopes, c);
    int damaged = 0;
    for (;;) {
        cap_event ev;
        res = cap_reader_next(c->r, &ev);
        if (res == CAP_DONE)
            break;
        if (res == CAP_E_TRUNCATED && win) {
            if (result)
                result->truncated = 1; /* a live stream cut: said by the tool */
            continue;
        }
        if (res == CAP_E_TRUNCATED || res == CAP_E_CORRUPT) {
            damaged = 1;
            cvt_warn(&c->d, W_DAMAGE, "%s; copying what can be read",
                     cap_reader_detail(c->r)[0] ? cap_reader_detail(c->r)
                                                : cap_result_message(res));
            continue;
        }
        if (res != CAP_OK) {
            const char *dt = cap_reader_detail(c->r);
            cvt_error(&c->d, "%s", dt[0] ? dt : cap_result_message(res));
            c->fatal = CVT_EXIT_INPUT;
            break;
        }
        if (ev.kind != CAP_EV_GPU_SPAN && flush_gpu(c))
            break;
        cap_result r = CAP_OK;
        switch (ev.kind) {
        case CAP_EV_THREAD:
            r = cap_writer_thread(c->w, ev.u.thread.tid, ev.u.thread.name);
            break;
        case CAP_EV_GPU_TRACK:
            r = cap_writer_gpu_track(c->w, ev.u.gpu_track.track,
                                     ev.u.gpu_track.name, 1.0);
            break;
        case CAP_EV_FRAME:
            if (!keep_frame(c, &ev.u.frame))
                break;
            r = cap_writer_frame(c->w, ev.u.frame.index,
                                 tick(c, ev.u.frame.begin_ns),
                                 tick(c, ev.u.frame.end_ns));
            break;
        case CAP_EV_SCOPE: {
            const cap_ev_scope *s = &ev.u.scope;
            int e = cvt_preorder_add(&pre, s->tid, s->begin_ns, s->end_ns,
                                     s->name, s->depth);
            if (e == -1)
                wfail(c, CAP_E_NOMEM, "scopes");
            break;
        }
        case CAP_EV_GPU_SPAN:
            if (!c->win ||
                (c->have_first && ev.u.gpu_span.cpu_frame >= c->first_frame &&
                 (!c->done || ev.u.gpu_span.cpu_frame <= c->last_frame)))
                add_gpu(c, &ev.u.gpu_span);
            break;
        case CAP_EV_COUNTER:
            if (!in_window(c, ev.u.counter.time_ns))
                break;
            if (use_name(c, ev.u.counter.name) == 0)
                r = cap_writer_counter(c->w, ev.u.counter.name,
                                       tick(c, ev.u.counter.time_ns),
                                       ev.u.counter.value);
            break;
        }
        if (r != CAP_OK)
            wfail(c, r, "events");
        if (c->fatal)
            break;
    }
    if (!c->fatal)
        flush_gpu(c);
    /* a live window keeps the whole name table, as the stream had it */
    for (uint32_t id = 1; win && !c->fatal && id <= cap_reader_max_name_id(c->r);
         id++)
        if (cap_reader_name(c->r, id))
            use_name(c, id);
    if (!c->fatal) {
        uint64_t orphans = 0;
        cvt_preorder_finish(&pre, &orphans);
        if (orphans)
            cvt_warn(&c->d, W_ORPHAN, "%llu scope(s) whose enclosing scope "
                     "never closed (the capture was cut inside it) are kept "
                     "without it", (unsigned long long)orphans);
    }
    if (!c->fatal) {
        const cap_reader_stats *st = cap_reader_get_stats(c->r);
        cap_result r = CAP_OK;
        if (st->dropped_scopes && cap_reader_thread_name(c->r, 0))
            r = cap_writer_dropped(c->w, 0, st->dropped_scopes);
        if (r == CAP_OK && (st->gpu_untimed_frames || st->gpu_invalid) &&
            cap_reader_track_name(c->r, 0))
            r = cap_writer_gpu_dropped(c->w, 0, st->gpu_untimed_frames,
                                       st->gpu_invalid);
        if (r != CAP_OK)
            wfail(c, r, "statistics");
    }
    if (c->clamped)
        cvt_warn(&c->d, W_CLAMP, "%llu time(s) before the capture's origin "
                 "written as the origin", (unsigned long long)c->clamped);
    int rc = c->fatal;
    if (result) {
        const cap_reader_stats *st = cap_reader_get_stats(c->r);
        result->frames = c->win ? c->kept_frames : st->frames;
        result->window_done = c->done;
        result->has_footer = st->has_footer;
        result->dropped_scopes = st->dropped_scopes;
        result->corrupt_chunks = st->corrupt_chunks;
        result->left_out = c->left_out;
    }
    if (!rc) {
        res = cap_writer_close(c->w);
        if (res != CAP_OK) {
            c->d.file = out;
            cvt_error(&c->d, "cannot write: %s", cap_result_message(res));
            rc = CVT_EXIT_OUTPUT;
        } else if (damaged) {
            cvt_warn(&c->d, W_DAMAGE, "recovered into %s, which is complete",
                     out);
        }
    } else {
        cap_writer_abandon(c->w);
    }
    cvt_warn_summary(&c->d);
    cvt_preorder_free(&pre);
    cap_reader_close(c->r);
    free(c->named);
    free(c->open_end);
    free(c->spans);
    free(c->span_depth);
    free(c);
    return rc;
}
