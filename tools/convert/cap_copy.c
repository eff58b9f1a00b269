/*
 * cap_copy.c - capture -> capture (cvt_cap_to_cap).
 *
 * Re-writes a capture through the reader and the writer: a capture cut
 * short (no footer) or with damaged chunks comes out complete, with a
 * footer, holding everything the reader could recover. The copy is
 * faithful (docs/CONVERT.md): every report of it is the input's.
 *
 * Clock: the copy keeps the input's (source, initial period, origin tick,
 * CLOCK_MONOTONIC and wall-clock origin) and reads the input in ticks
 * (cap_reader_set_ticks), so CPU times are written as the very ticks the
 * input holds. A block's period comes from its clock sample: the copy
 * starts a block where the input does, with that block's sample
 * (cap_reader_block_clock), so every time is converted as the input's.
 * GPU spans keep their ticks, their track its period and calibrations
 * (cap_reader_gpu_span_ticks, cap_reader_track_calibration): a new
 * calibration is written before the first span that the input read with
 * it.
 *
 * Order: the copy writes each event as it is read, so each block of the
 * copy holds what the input's did, in the same order, and every report
 * lists what the input's lists in the same order. The reader yields a
 * scope at its end (children first) together with its ancestors' begins
 * (cap_reader_scope_ancestors): the ancestors not begun yet in the copy
 * are begun then, the scope is begun unless it already was (as an
 * ancestor of an earlier one), and it ends. Scopes the input never ends
 * (a capture cut inside them, or their end in a damaged chunk) are left
 * open in the copy (cap_writer_scope_forget), so no reader reports them,
 * as none reports them in the input; a warning counts them. Children the
 * input counts but whose events were lost (damage) are counted in the
 * copy too (the reader gives the ancestors' children so far;
 * cap_writer_scope_children), so self times stay the input's. GPU spans are
 * rebuilt into batches: one batch per run of spans of the same track and
 * CPU frame; each span's parent is the latest earlier span one level up
 * with the parent's name.
 *
 * Counts: what the input counted rather than recorded (dropped scopes,
 * scopes closed at end, timestamps that went backwards, stray ends, GPU
 * frames untimed and spans invalid) is counted in the copy again
 * (cap_writer_dropped, cap_writer_scope_counts, cap_writer_gpu_dropped),
 * for its first declared thread and track: the reader gives totals.
 *
 * Per thread, ticks are written in order: a tick before the thread's
 * latest (which a well-formed input never holds) is written as the
 * latest, not counted as a clock that went backwards; the largest
 * adjustment is reported when it exceeds a microsecond.
 *
 * Slices (cvt_options.slice): a first pass reads only the frames and picks
 * those to keep; consecutive kept frames make one time window. The copy
 * then keeps the frames picked, every scope that runs in a window for some
 * time (with its ancestors; a wait that began before the first kept frame
 * included, so that each kept frame holds the self time it held: the
 * reports share a spanning scope out over its frames), the GPU spans
 * recorded by a kept frame and the counter samples inside a window. Names
 * are defined as they are used, so the slice names every id it holds and
 * nothing more.
 *
 * A live window (cvt_copy_reader, capture_remote): the reader is already
 * open on a stream that cannot be read twice, so frames are judged as they
 * come: from the stream's stream_start_ns plus the skip, for the length or
 * the number of frames asked for; scope trees by their root, counters by
 * their time, GPU spans by the frame that recorded them, as for slices.
 * Every name the stream declared is written.
 */
#include "cvt.h"
#include "cvt_util.h"

#include <capture/cap_reader.h>
#include <capture/cap_writer.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { W_DAMAGE, W_ORPHAN, W_CLAMP, W_GPU, W_LOST, W_FLAGS, W_CHUNKS,
       W_FRAMES };

/* A clock sample the input's blocks were converted with (have 0: the
 * initial period). */
typedef struct clk {
    int have;
    uint64_t tick, mono;
    double per; /* ns per tick it gives */
} clk;

/* A thread's scopes begun in the copy and not ended yet, outermost first:
 * name ids and begins as read (ticks since the origin). */
typedef struct wthread {
    uint32_t *name;
    int64_t *begin;
    int64_t *ch;     /* ticks of their direct children written so far */
    size_t n, cap, bcap, ccap;
} wthread;

typedef struct window {
    int64_t begin, end; /* [begin, end) ns */
} window;

typedef struct copy {
    cvt_diag d;
    /* slice: kept frame indices (sorted) and their time windows */
    int sliced;
    uint64_t *keep;
    size_t nkeep;
    window *win;
    size_t nwin;
    uint64_t sliced_out;     /* scopes left out by the slice */
    const char *out;
    unsigned format_major;   /* of the output: cvt_options.format_major */
    int no_frame_list;       /* ... and .no_frame_list */
    cap_reader *r;
    cap_writer *w;
    uint8_t *named;          /* name ids already defined in the output */
    size_t named_cap;
    wthread *th;             /* per thread: the scopes begun, not ended */
    size_t nth;
    int64_t *anc;            /* scratch: a scope's ancestors' begins */
    int64_t *anc_ch;         /* ... and their children so far */
    size_t anc_cap, anc_ch_cap;
    uint64_t forgot;         /* scopes left open: their ends are lost */
    /* threads declared in the copy (a bit a tid): the spec lets scopes
     * of a thread no THREADS section declared be read; the writer needs
     * a declaration, made without a name, as the input has none */
    uint8_t declared[CAP_MAX_THREADS / 8];
    int have_frame;          /* a frame was written: its index is */
    uint64_t last_frame;     /* ... this one */
    uint64_t frames_dup;     /* frames left out: index not above it */
    uint64_t unknown_flags;  /* names with flags this version cannot write */
    uint64_t in_off;         /* the input's offset at the last event */
    uint64_t *last_tick;     /* per thread: latest time written */
    size_t last_cap;
    uint64_t max_adjust;     /* largest per-thread order adjustment (ns) */
    /* the GPU batch being collected */
    cap_gpu_span *spans;
    uint32_t *span_depth;
    size_t nspans, spans_cap;
    uint32_t gtrack;
    uint64_t gframe;
    uint8_t cal_written[CAP_MAX_TRACKS]; /* the calibration written */
    uint64_t cal_gpu[CAP_MAX_TRACKS], cal_cpu[CAP_MAX_TRACKS];
    uint64_t cal_dev[CAP_MAX_TRACKS]; /* its stated maximum error, ns */
    int fatal;               /* a cap_result error once something failed */
    /* the input's clock: origin, and the samples met so far */
    double per0;
    uint64_t otick, omono;
    clk *clks;
    size_t nclk, clk_cap;
    uint32_t rsi;            /* the sample of the input block being read */
    uint32_t wsi;            /* the sample of the output block being written */
    int wrote_clk;           /* the writer was given a sample */
    /* a live window (cvt_copy_reader), resolved once the metadata is read */
    const cvt_window *lw;
    int64_t lw_lo, lw_hi;    /* keep what begins in [lo, hi) */
    uint64_t lw_kept;        /* frames kept */
    int lw_have_first;
    uint64_t lw_first, lw_last; /* indices of the first and last kept */
    int lw_done;             /* the window is complete */
    uint64_t lw_tail;        /* frames seen since it was complete */
    int lw_have_pre;         /* a frame before the window was seen: */
    uint64_t lw_pre;         /* the highest index of those */
} copy;

/* 1 when an event beginning at t is inside the live window (or none). */
static int live_in(const copy *c, int64_t t)
{
    return !c->lw || (t >= c->lw_lo && t < c->lw_hi);
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
    c->fatal = r == CAP_E_NOMEM ? CAP_E_NOMEM : CAP_E_IO;
    return c->fatal;
}


/* A CPU time as read (ticks since the origin) as the input's tick. */
static uint64_t raw(const copy *c, int64_t t)
{
    return c->otick + (uint64_t)t;
}

/* A CPU time as read, in ns as the reader reports it, with sample si. */
static int64_t to_ns(const copy *c, int64_t t, uint32_t si)
{
    double per = c->nclk ? c->clks[si].per : c->per0;
    if (per == 1.0)
        return t;
    double v = (double)t * per;
    return v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : llround(v);
}

/* Note the input's current block sample; sets c->rsi. */
static int read_clock(copy *c)
{
    clk k = {0, 0, 0, c->per0};
    k.have = cap_reader_block_clock(c->r, &k.tick, &k.mono);
    if (k.have)
        k.per = (double)(k.mono - c->omono) / (double)(k.tick - c->otick);
    if (c->nclk) {
        const clk *l = &c->clks[c->rsi];
        if (l->have == k.have && l->tick == k.tick && l->mono == k.mono)
            return 0;
        const clk *z = &c->clks[c->nclk - 1];
        if (z->have == k.have && z->tick == k.tick && z->mono == k.mono) {
            c->rsi = (uint32_t)(c->nclk - 1);
            return 0;
        }
    }
    if (c->nclk >= UINT32_MAX ||
        cvt_grow((void **)&c->clks, &c->clk_cap, c->nclk + 1, sizeof k))
        return -1;
    c->clks[c->nclk] = k;
    c->rsi = (uint32_t)c->nclk++;
    return 0;
}

/* Make the block being written one converted with sample si: flush the
 * block under way and give the writer si's sample (or, for the initial
 * period after a sample, one that does not count: at the origin's tick). */
static cap_result need_clock(copy *c, uint32_t si)
{
    if (si == c->wsi)
        return CAP_OK;
    cap_result r = cap_writer_flush(c->w);
    if (r != CAP_OK)
        return r;
    const clk *k = &c->clks[si];
    if (k->have) {
        r = cap_writer_clock_sample(c->w, k->tick, k->mono);
        c->wrote_clk = 1;
    } else if (c->wrote_clk) {
        r = cap_writer_clock_sample(c->w, c->otick, c->omono);
    }
    c->wsi = si;
    return r;
}

/* Give name id `id`, defined in the output, the flags the input has given
 * it so far (they only accumulate). c->named[id] keeps 1 | flags << 1. */
static int name_flags(copy *c, uint32_t id)
{
    uint32_t all = cap_reader_name_flags(c->r, id);
    uint32_t flags = all & CAP_NAME_FLAGS_KNOWN;
    if ((all & ~CAP_NAME_FLAGS_KNOWN) && !(c->named[id] & 0x80)) {
        c->unknown_flags++; /* bits this version cannot write */
        c->named[id] |= 0x80;
    }
    if (!(flags & ~((uint32_t)(c->named[id] & 0x7f) >> 1)))
        return 0;
    cap_result r = cap_writer_name_flags(c->w, id, flags);
    c->named[id] |= (uint8_t)(flags << 1);
    return r == CAP_OK ? 0 : wfail(c, r, "names");
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
    return r == CAP_OK ? name_flags(c, id) : wfail(c, r, "names");
}

/* ---- slices ------------------------------------------------------------ */

typedef struct fr {
    uint64_t index;
    int64_t begin, end;
} fr;

static int cmp_fr_slow(const void *a, const void *b)
{
    const fr *x = a, *y = b;
    double dx = (double)x->end - (double)x->begin;
    double dy = (double)y->end - (double)y->begin;
    if (dx != dy)
        return dx > dy ? -1 : 1; /* slowest first */
    return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int kept(const copy *c, uint64_t index)
{
    size_t lo = 0, hi = c->nkeep;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->keep[mid] < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->nkeep && c->keep[lo] == index;
}

/* The first window that ends after t (c->nwin: none). */
static size_t window_after(const copy *c, int64_t t)
{
    size_t lo = 0, hi = c->nwin;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->win[mid].end <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int in_window(const copy *c, int64_t t)
{
    size_t k = window_after(c, t);
    return k < c->nwin && c->win[k].begin <= t;
}

/* 1 when [b, e) runs in a window for some time (a scope of no length: when
 * b is inside one). */
static int runs_in_window(const copy *c, int64_t b, int64_t e)
{
    size_t k = window_after(c, b);
    return k < c->nwin && (c->win[k].begin <= b || c->win[k].begin < e);
}

static int oom(copy *c)
{
    cvt_error(&c->d, "out of memory");
    return CAP_E_NOMEM;
}

/* First pass: read the frames, pick those the slice keeps. Returns 0, or
 * a cap_result error after one line. */
static int plan_slice(copy *c, const char *in, const cvt_slice *sl)
{
    cap_reader *r;
    char detail[256] = "";
    cap_result res = cap_reader_open(&r, in, detail, sizeof detail);
    if (res != CAP_OK) {
        cvt_error(&c->d, "%s", detail[0] ? detail : cap_result_message(res));
        return res;
    }
    cap_reader_set_filter(r, (1u << CAP_EV_SCOPE) | (1u << CAP_EV_GPU_SPAN) |
                                 (1u << CAP_EV_COUNTER));
    fr *f = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (;;) {
        cap_event ev;
        res = cap_reader_next(r, &ev);
        if (res == CAP_DONE)
            break;
        if (res == CAP_E_TRUNCATED || res == CAP_E_CORRUPT)
            continue; /* said once, by the copying pass */
        if (res != CAP_OK) {
            const char *dt = cap_reader_detail(r);
            cvt_error(&c->d, "%s", dt[0] ? dt : cap_result_message(res));
            rc = res;
            goto done;
        }
        if (ev.kind != CAP_EV_FRAME)
            continue;
        if (cvt_grow((void **)&f, &cap, n + 1, sizeof *f)) {
            rc = oom(c);
            goto done;
        }
        f[n++] = (fr){ev.u.frame.index, ev.u.frame.begin_ns, ev.u.frame.end_ns};
    }
    if (!n) {
        cvt_error(&c->d, "the capture has no frames to slice");
        rc = CAP_E_MISUSE;
        goto done;
    }
    /* mark[i]: frame i (in file order) is kept */
    unsigned char *mark = calloc(n, 1);
    if (!mark) {
        rc = oom(c);
        goto done;
    }
    if (sl->kind == CVT_SLICE_FRAMES) {
        for (size_t i = 0; i < n; i++)
            mark[i] = (double)f[i].index >= sl->a && (double)f[i].index < sl->b;
    } else if (sl->kind == CVT_SLICE_SECONDS) {
        int64_t t0 = f[0].begin;
        for (size_t i = 0; i < n; i++) {
            double s = ((double)f[i].begin - (double)t0) / 1e9;
            mark[i] = s >= sl->a && s < sl->b;
        }
    } else {
        fr *by = malloc(n * sizeof *by);
        size_t *pos = malloc(n * sizeof *pos);
        if (!by || !pos) {
            free(by);
            free(pos);
            free(mark);
            rc = oom(c);
            goto done;
        }
        /* remember positions through the index: file order is index order
         * in a capture, but a damaged one may repeat or skip */
        for (size_t i = 0; i < n; i++)
            by[i] = f[i];
        cvt_sort(by, n, sizeof *by, cmp_fr_slow);
        for (size_t k = 0; k < n && k < sl->n; k++) {
            for (size_t i = 0; i < n; i++) {
                if (f[i].index != by[k].index)
                    continue;
                size_t lo = i > sl->context ? i - sl->context : 0;
                size_t hi = i + sl->context < n ? i + sl->context : n - 1;
                for (size_t j = lo; j <= hi; j++)
                    mark[j] = 1;
                break;
            }
        }
        free(by);
        free(pos);
    }
    c->keep = malloc(n * sizeof *c->keep);
    c->win = malloc(n * sizeof *c->win);
    if (!c->keep || !c->win) {
        free(mark);
        rc = oom(c);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (!mark[i])
            continue;
        c->keep[c->nkeep++] = f[i].index;
        if (c->nwin && i > 0 && mark[i - 1] &&
            c->win[c->nwin - 1].end >= f[i].begin) {
            if (f[i].end > c->win[c->nwin - 1].end)
                c->win[c->nwin - 1].end = f[i].end;
        } else {
            c->win[c->nwin++] = (window){f[i].begin, f[i].end};
        }
    }
    free(mark);
    cvt_sort(c->keep, c->nkeep, sizeof *c->keep, cmp_u64);
    if (!c->nkeep) {
        cvt_error(&c->d, "the slice %s holds no frame (the capture has %zu, "
                  "indices %llu to %llu)", sl->text ? sl->text : "", n,
                  (unsigned long long)f[0].index,
                  (unsigned long long)f[n - 1].index);
        rc = CAP_E_MISUSE;
    }
    c->sliced = 1;
done:
    free(f);
    cap_reader_close(r);
    return rc;
}

/* t, or the thread's latest written time when t is earlier (see above). */
static uint64_t in_order(copy *c, uint32_t tid, uint64_t t)
{
    uint64_t *last = &c->last_tick[tid];
    if (t < *last) {
        if (*last - t > c->max_adjust)
            c->max_adjust = *last - t;
        return *last;
    }
    return *last = t;
}

/* Leave the innermost n written scopes of thread tid open for good (their
 * ends were lost, or the input ends inside them). */
static int forget(copy *c, uint32_t tid, uint32_t n)
{
    cap_result r = cap_writer_scope_forget(c->w, tid, n);
    c->th[tid].n -= n;
    c->forgot += n;
    return r == CAP_OK ? 0 : wfail(c, r, "scopes");
}

/* Note thread tid declared in the copy. */
static void thread_declared(copy *c, uint32_t tid)
{
    if (tid < CAP_MAX_THREADS)
        c->declared[tid >> 3] |= (uint8_t)(1u << (tid & 7));
}

/* Declare thread tid in the copy, without a name, unless it is: the spec
 * lets a reader accept scopes of a thread no THREADS section declared,
 * and the input has no name for it either. 0, or c->fatal. */
static int declare_thread(copy *c, uint32_t tid)
{
    if (c->declared[tid >> 3] & (1u << (tid & 7)))
        return 0;
    cap_result r = cap_writer_thread(c->w, tid, NULL);
    if (r != CAP_OK)
        return wfail(c, r, "threads");
    thread_declared(c, tid);
    return 0;
}

/* 1 when frame `index` is not above the last frame written (an input
 * that repeats frames; the writer keeps indices increasing): it is left
 * out and counted. */
static int frame_repeats(copy *c, uint64_t index)
{
    if (c->have_frame && index <= c->last_frame) {
        c->frames_dup++;
        return 1;
    }
    return 0;
}

/* Scope s, just read (at its end): begin the ancestors not begun yet (the
 * reader gives their begins), begin s itself unless it already is, end
 * it. So each thread's events are written in the input's order and each
 * end into the block mirroring the one it was read from. */
/* Thread tid's open-scope tables, with room for depth d. NULL when out of
 * memory. */
static wthread *scope_thread(copy *c, uint32_t tid, uint32_t d)
{
    if (tid >= c->last_cap) {
        size_t old = c->last_cap;
        if (cvt_grow((void **)&c->last_tick, &c->last_cap, (size_t)tid + 1,
                     sizeof *c->last_tick))
            return NULL;
        memset(c->last_tick + old, 0, (c->last_cap - old) * sizeof *c->last_tick);
    }
    if (tid >= c->nth) {
        size_t old = c->nth;
        if (cvt_grow((void **)&c->th, &c->nth, (size_t)tid + 1, sizeof *c->th))
            return NULL;
        memset(c->th + old, 0, (c->nth - old) * sizeof *c->th);
    }
    wthread *t = &c->th[tid];
    if (cvt_grow((void **)&t->name, &t->cap, (size_t)d + 1, sizeof *t->name) ||
        cvt_grow((void **)&t->begin, &t->bcap, (size_t)d + 1,
                 sizeof *t->begin) ||
        cvt_grow((void **)&t->ch, &t->ccap, (size_t)d + 1, sizeof *t->ch))
        return NULL;
    return t;
}

static int copy_scope(copy *c, const cap_ev_scope *s)
{
    uint32_t d = s->depth, tid = s->tid;
    if (d && (cvt_grow((void **)&c->anc, &c->anc_cap, d, sizeof *c->anc) ||
              cvt_grow((void **)&c->anc_ch, &c->anc_ch_cap, d,
                       sizeof *c->anc_ch)))
        return wfail(c, CAP_E_NOMEM, "scopes");
    if (cap_reader_scope_ancestors(c->r, c->anc, c->anc_ch, d) != d)
        return wfail(c, CAP_E_MISUSE, "scopes");
    /* a live window: whole trees, by their root's begin; a slice: every
       scope that runs in a window for some time (with its ancestors,
       which then do too), so that the frames kept hold what they held */
    if (c->lw ? !live_in(c, to_ns(c, d ? c->anc[0] : s->begin_ns, c->rsi))
              : c->sliced && !runs_in_window(c, to_ns(c, s->begin_ns, c->rsi),
                                             to_ns(c, s->end_ns, c->rsi))) {
        c->sliced_out++;
        return 0;
    }
    wthread *t = scope_thread(c, tid, d);
    if (!t)
        return wfail(c, CAP_E_NOMEM, "scopes");
    if (declare_thread(c, tid))
        return c->fatal;
    uint32_t j = 0;
    while (j < t->n && j < d && t->name[j] == s->stack[j] &&
           t->begin[j] == c->anc[j])
        j++;
    int begun = j == d && t->n > d && t->name[d] == s->name &&
                t->begin[d] == s->begin_ns;
    uint32_t keep = begun ? d + 1 : j;
    if (t->n > keep && forget(c, tid, t->n - keep))
        return c->fatal;
    cap_result r = CAP_OK;
    for (uint32_t i = j; i < d && r == CAP_OK; i++) {
        if (use_name(c, s->stack[i]))
            return c->fatal;
        r = cap_writer_scope_begin(c->w, tid, s->stack[i],
                                   in_order(c, tid, raw(c, c->anc[i])));
        t->name[i] = s->stack[i];
        t->begin[i] = c->anc[i];
        t->ch[i] = 0;
        t->n = i + 1;
    }
    if (r == CAP_OK && !begun) {
        if (use_name(c, s->name))
            return c->fatal;
        r = cap_writer_scope_begin(c->w, tid, s->name,
                                   in_order(c, tid, raw(c, s->begin_ns)));
        t->ch[d] = 0;
    }
    /* children the input counts and the copy has not written (their
     * events were in a damaged chunk): counted in the copy too */
    int64_t dur = (int64_t)((uint64_t)s->end_ns - (uint64_t)s->begin_ns);
    for (uint32_t i = 0; i <= d && r == CAP_OK; i++) {
        int64_t want = i == d       ? s->children_ns
                       : i == d - 1 ? c->anc_ch[i] - dur
                                    : c->anc_ch[i];
        if (want > t->ch[i]) {
            r = cap_writer_scope_children(c->w, tid, i,
                                          (uint64_t)(want - t->ch[i]));
            t->ch[i] = want;
        }
    }
    if (r == CAP_OK)
        r = need_clock(c, c->rsi);
    if (r == CAP_OK)
        r = cap_writer_scope_end(c->w, tid,
                                 in_order(c, tid, raw(c, s->end_ns)));
    if (d)
        t->ch[d - 1] += dur;
    t->n = d;
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
    uint64_t cg, cc;
    uint64_t cd = cap_reader_track_calibration_deviation(c->r, g->track);
    if (cap_reader_track_calibration(c->r, g->track, &cg, &cc) &&
        (!c->cal_written[g->track] || c->cal_gpu[g->track] != cg ||
         c->cal_cpu[g->track] != cc || c->cal_dev[g->track] != cd)) {
        if (flush_gpu(c))
            return c->fatal;
        cap_result r = cap_writer_gpu_calibration(c->w, g->track, cg, cc, cd);
        if (r != CAP_OK)
            return wfail(c, r, "GPU calibration");
        c->cal_written[g->track] = 1;
        c->cal_gpu[g->track] = cg;
        c->cal_cpu[g->track] = cc;
        c->cal_dev[g->track] = cd;
    }
    uint64_t gb = 0, ge = 0; /* the span's GPU ticks */
    cap_reader_gpu_span_ticks(c->r, &gb, &ge);
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
                (p->begin_tick <= gb && ge <= p->end_tick)) {
                parent = (int32_t)i;
                break;
            }
        }
        if (parent < 0)
            parent = fallback;
    }
    c->spans[c->nspans] = (cap_gpu_span){g->name, parent, gb, ge, g->measured};
    c->span_depth[c->nspans] = parent >= 0 ? g->depth : 0;
    c->nspans++;
    return 0;
}

/* Frames read past a live window before it is called complete: the GPU
 * spans of its last frames arrive that much later (a query ring's depth). */
#define LIVE_TAIL_FRAMES 8

/* Whether frame f goes into a live window's output; moves it along. */
static int live_frame(copy *c, const cap_ev_frame *f)
{
    if (f->begin_ns < c->lw_lo) {
        if (!c->lw_have_pre || f->index > c->lw_pre)
            c->lw_pre = f->index;
        c->lw_have_pre = 1;
    }
    if (c->lw_done && f->index > c->lw_last &&
        ++c->lw_tail == LIVE_TAIL_FRAMES && c->lw->progress)
        c->lw->progress(c->lw->user, c->lw_kept, 1);
    if (c->lw_done || f->begin_ns < c->lw_lo)
        return 0;
    if (f->begin_ns >= c->lw_hi) {
        c->lw_done = 1;
        c->lw_tail = 1;
        return 0;
    }
    if (!c->lw_have_first) {
        c->lw_have_first = 1;
        c->lw_first = f->index;
    }
    c->lw_last = f->index;
    c->lw_kept++;
    if (c->lw->frames && c->lw_kept >= c->lw->frames) {
        c->lw_done = 1;
        c->lw_hi = f->end_ns; /* nothing after the last frame */
    }
    if (c->lw->progress)
        c->lw->progress(c->lw->user, c->lw_kept, 0);
    return 1;
}

static void live_resolve(copy *c)
{
    const cvt_window *w = c->lw;
    int64_t base = 0;
    const char *s = cap_reader_meta_get(c->r, "stream_start_ns");
    if (s)
        base = strtoll(s, NULL, 10);
    double skip = w->skip_seconds > 0 ? w->skip_seconds * 1e9 : 0;
    c->lw_lo = base + (int64_t)(skip < 9e18 ? skip : 9e18);
    double len = w->seconds > 0 ? w->seconds * 1e9 : 0;
    c->lw_hi = len > 0 && len < 9e18 && c->lw_lo < INT64_MAX - (int64_t)len
                   ? c->lw_lo + (int64_t)len
                   : INT64_MAX;
}

static int copy_run(copy *c, const char *in, const char *out,
                    const cvt_slice *sl, cvt_copy_result *result);

cap_result cvt_copy_reader(cap_reader *rd, const char *in, const char *out,
                           const cvt_window *win, const cvt_options *o,
                           cvt_copy_result *result)
{
    copy *c = calloc(1, sizeof *c);
    if (!c) {
        cap_reader_close(rd);
        return CAP_E_NOMEM;
    }
    c->d.out = o ? o->diag : NULL;
    c->d.file = in;
    c->out = out;
    c->format_major = o ? o->format_major : 0;
    c->no_frame_list = o ? o->no_frame_list : 0;
    c->r = rd;
    c->lw = win;
    if (win)
        live_resolve(c);
    return copy_run(c, in, out, NULL, result);
}

cap_result cvt_cap_to_cap(const char *in, const char *out,
                          const cvt_options *o)
{
    copy *c = calloc(1, sizeof *c);
    if (!c)
        return CAP_E_NOMEM;
    c->d.out = o ? o->diag : NULL;
    c->d.file = in;
    c->out = out;
    c->format_major = o ? o->format_major : 0;
    c->no_frame_list = o ? o->no_frame_list : 0;
    const cvt_slice *sl = o ? o->slice : NULL;
    if (sl && sl->kind != CVT_SLICE_NONE) {
        int prc = plan_slice(c, in, sl);
        if (prc) {
            free(c->keep);
            free(c->win);
            free(c);
            return prc;
        }
    }
    char detail[256] = "";
    cap_result res = cap_reader_open(&c->r, in, detail, sizeof detail);
    if (res != CAP_OK) {
        cvt_error(&c->d, "%s", detail[0] ? detail : cap_result_message(res));
        free(c->keep);
        free(c->win);
        free(c);
        return res;
    }
    return copy_run(c, in, out, sl, NULL);
}

/* The lowest thread (track) id the input declared and the copy did, or
 * -1 when none. */
static int64_t first_thread(const copy *c)
{
    for (uint32_t i = 0; i < CAP_MAX_THREADS; i++)
        if (cap_reader_thread_name(c->r, i))
            return i;
    return -1;
}

static int64_t first_track(const copy *c)
{
    for (uint32_t i = 0; i < CAP_MAX_TRACKS; i++)
        if (cap_reader_track_name(c->r, i))
            return i;
    return -1;
}

/* What the input counted, counted again in the copy; a count with no
 * thread or track to hold it is said lost, in one line. */
static cap_result copy_counts(copy *c)
{
    const cap_reader_stats *st = cap_reader_get_stats(c->r);
    cap_result r = CAP_OK;
    int64_t tid = first_thread(c), track = first_track(c);
    uint64_t lost = 0;
    if (tid >= 0) {
        r = cap_writer_dropped(c->w, (uint32_t)tid, st->dropped_scopes);
        if (r == CAP_OK)
            r = cap_writer_scope_counts(c->w, (uint32_t)tid, st->closed_at_end,
                                        st->clock_backwards, st->stray_ends);
    } else {
        lost += st->dropped_scopes + st->closed_at_end + st->clock_backwards +
                st->stray_ends;
    }
    if (r == CAP_OK && track >= 0 && (st->gpu_untimed_frames || st->gpu_invalid))
        r = cap_writer_gpu_dropped(c->w, (uint32_t)track,
                                   st->gpu_untimed_frames, st->gpu_invalid);
    else if (track < 0)
        lost += st->gpu_untimed_frames + st->gpu_invalid;
    if (lost)
        cvt_warn(&c->d, W_LOST, "%llu counted loss(es) of the input (dropped "
                 "scopes, GPU frames untimed, ...) have no thread or track "
                 "in the copy to be counted on and are not in it",
                 (unsigned long long)lost);
    return r;
}

/* The copy itself, from c->r (open) into out; frees c and the reader. */
/* Open the copy's writer on out (c->w): the input's metadata (a slice's
 * replaced), clock and version. Returns 0, CAP_E_NOMEM, or CAP_E_IO after
 * a line. */
static int open_copy(copy *c, const char *in, const char *out,
                     const cvt_slice *sl)
{
    cap_result res;
    size_t nmeta = cap_reader_meta_count(c->r), kmeta = 0;
    cap_meta_kv *meta = calloc(nmeta + 1, sizeof *meta);
    char slice_text[256];
    if (!meta)
        return CAP_E_NOMEM;
    for (size_t i = 0; i < nmeta; i++) {
        const char *k = cap_reader_meta_key(c->r, i);
        if (c->sliced && strcmp(k, "slice") == 0)
            continue; /* replaced below */
        meta[kmeta++] = (cap_meta_kv){k, cap_reader_meta_value(c->r, i)};
    }
    if (c->sliced) {
        const char *base = strrchr(in, '/');
        snprintf(slice_text, sizeof slice_text, "%s of %s (%zu frames)",
                 sl->text ? sl->text : "?",
                 sl->source ? sl->source : base ? base + 1 : in, c->nkeep);
        meta[kmeta++] = (cap_meta_kv){"slice", slice_text};
    }
    cap_writer_options wo = {0};
    wo.meta = meta;
    wo.meta_count = kmeta;
    wo.clock_source = cap_reader_clock_source(c->r);
    cap_reader_clock(c->r, &c->per0, &c->otick, &c->omono);
    wo.tick_period_ns = c->per0;
    wo.origin_tick = c->otick;
    wo.origin_mono_ns = c->omono;
    wo.origin_unix_ns = cap_reader_origin_unix_ns(c->r);
    /* blocks end where the input's do, not before: the largest allowed */
    wo.block_bytes = (size_t)16 << 20;
    unsigned vmajor, vminor;
    cap_reader_version(c->r, &vmajor, &vminor);
    wo.format_minor = vminor >= 1; /* keep name flags (waits) */
    if (c->format_major) { /* --format-version */
        wo.format_major = c->format_major;
        wo.format_minor = c->format_major == 1; /* 1.1, not 1.0 */
        wo.no_frame_list = c->no_frame_list;    /* 3.0, not 3.1 */
    }
    res = cap_writer_open_path(&c->w, out, &wo);
    free(meta);
    if (res != CAP_OK) {
        c->d.file = out;
        cvt_error(&c->d, "cannot create: %s",
                  res == CAP_E_IO ? strerror(errno) : cap_result_message(res));
        return CAP_E_IO;
    }
    return 0;
}

/* One event of the input into the copy, as the slice or the live window
 * keeps it. Returns the writer's result (scopes and GPU spans fail through
 * c->fatal). */
static cap_result copy_event(copy *c, const cap_event *ev)
{
    cap_result r = CAP_OK;
    switch (ev->kind) {
    case CAP_EV_THREAD:
        r = cap_writer_thread(c->w, ev->u.thread.tid, ev->u.thread.name);
        thread_declared(c, ev->u.thread.tid);
        break;
    case CAP_EV_GPU_TRACK:
        r = cap_writer_gpu_track(c->w, ev->u.gpu_track.track,
                                 ev->u.gpu_track.name,
                                 ev->u.gpu_track.period_ns);
        break;
    case CAP_EV_FRAME: {
        cap_ev_frame f = ev->u.frame; /* in ns, for the live window */
        f.begin_ns = to_ns(c, f.begin_ns, c->rsi);
        f.end_ns = to_ns(c, f.end_ns, c->rsi);
        if (c->sliced && !kept(c, f.index))
            break;
        if (frame_repeats(c, f.index) || (c->lw && !live_frame(c, &f)))
            break;
        c->have_frame = 1;
        c->last_frame = f.index;
        r = need_clock(c, c->rsi);
        if (r == CAP_OK)
            r = cap_writer_frame(c->w, f.index, raw(c, ev->u.frame.begin_ns),
                                 raw(c, ev->u.frame.end_ns));
        break;
    }
    case CAP_EV_SCOPE: {
        const cap_ev_scope *s = &ev->u.scope;
        copy_scope(c, s);
        break;
    }
    case CAP_EV_GPU_SPAN:
        /* a span may come before its frame: kept unless its frame is
         * known to be outside the window */
        if (c->lw && ((c->lw_have_pre &&
                       ev->u.gpu_span.cpu_frame <= c->lw_pre) ||
                      (c->lw_have_first &&
                       ev->u.gpu_span.cpu_frame < c->lw_first) ||
                      (c->lw_done &&
                       ev->u.gpu_span.cpu_frame > c->lw_last)))
            break;
        if (!c->sliced || kept(c, ev->u.gpu_span.cpu_frame))
            add_gpu(c, &ev->u.gpu_span);
        break;
    case CAP_EV_COUNTER: {
        int64_t t = to_ns(c, ev->u.counter.time_ns, c->rsi);
        if (c->sliced && !in_window(c, t))
            break;
        if (!live_in(c, t))
            break;
        if (use_name(c, ev->u.counter.name) == 0 &&
            (r = need_clock(c, c->rsi)) == CAP_OK)
            r = cap_writer_counter(c->w, ev->u.counter.name,
                                   raw(c, ev->u.counter.time_ns),
                                   ev->u.counter.value);
        break;
    }
    }
    return r;
}

/* Read the input to its end into the copy; *damaged is set when damage
 * was read past (warned). Stops at c->fatal. */
static void copy_events(copy *c, cvt_copy_result *result, int *damaged)
{
    while (!c->fatal) {
        cap_event ev;
        cap_result res = cap_reader_next(c->r, &ev);
        if (res == CAP_DONE)
            break;
        if (res == CAP_OK && read_clock(c) != 0) {
            wfail(c, CAP_E_NOMEM, "clock");
            break;
        }
        if (res == CAP_OK && cap_reader_offset(c->r) != c->in_off) {
            /* the input's next block: so is the copy's */
            c->in_off = cap_reader_offset(c->r);
            cap_result fr = CAP_OK;
            if (flush_gpu(c) || (fr = cap_writer_flush(c->w)) != CAP_OK) {
                wfail(c, fr, "events");
                break;
            }
        }
        if (res == CAP_E_TRUNCATED && c->lw) {
            if (result) /* a live stream cut: the tool says why */
                result->truncated = 1;
            continue;
        }
        if (res == CAP_E_TRUNCATED || res == CAP_E_CORRUPT) {
            *damaged = 1;
            cvt_warn(&c->d, W_DAMAGE, "%s; copying what can be read",
                     cap_reader_detail(c->r)[0] ? cap_reader_detail(c->r)
                                                : cap_result_message(res));
            continue;
        }
        if (res != CAP_OK) {
            const char *dt = cap_reader_detail(c->r);
            cvt_error(&c->d, "%s", dt[0] ? dt : cap_result_message(res));
            c->fatal = res;
            break;
        }
        if (ev.kind != CAP_EV_GPU_SPAN && flush_gpu(c))
            break;
        cap_result r = copy_event(c, &ev);
        if (r != CAP_OK)
            wfail(c, r, "events");
        if (c->fatal)
            break;
    }
}

/* After the events: the names the copy keeps, the flags given late, the
 * scopes that never end, the statistics. */
static void copy_tail(copy *c, const cvt_slice *sl)
{
    if (!c->fatal)
        flush_gpu(c);
    /* a whole copy and a live window keep the whole name table, as the
     * input had it: a name defined and never used too */
    int all_names = c->lw || !c->sliced || (sl && sl->all_names);
    for (uint32_t id = 1;
         all_names && !c->fatal && id <= cap_reader_max_name_id(c->r); id++)
        if (cap_reader_name(c->r, id))
            use_name(c, id);
    /* flags the input gave a name after its first use */
    for (uint32_t id = 1; !c->fatal && id < c->named_cap; id++)
        if (c->named[id] && cap_reader_name(c->r, id))
            name_flags(c, id);
    cap_result r;
    if (!c->fatal) {
        for (size_t i = 0; i < c->nth && !c->fatal; i++)
            if (c->th[i].n)
                forget(c, (uint32_t)i, (uint32_t)c->th[i].n);
        if (c->forgot && !c->lw) /* a live window is cut inside them */
            cvt_warn(&c->d, W_ORPHAN, "%llu scope(s) never end in the input "
                     "(their ends were lost: the capture was cut or damaged "
                     "inside them); the copy leaves them open as well, and "
                     "no reader reports them", (unsigned long long)c->forgot);
    }
    if (!c->fatal) {
        r = copy_counts(c);
        if (r != CAP_OK)
            wfail(c, r, "statistics");
    }
}

/* The warnings about what the copy left out or changed. */
static void copy_warnings(copy *c, const char *out)
{
    if (c->frames_dup)
        cvt_warn(&c->d, W_FRAMES, "%llu frames left out: their index was not "
                 "above the previous frame's (the input repeats frames; a "
                 "capture's frame indices increase)",
                 (unsigned long long)c->frames_dup);
    if (c->unknown_flags)
        cvt_warn(&c->d, W_FLAGS, "%llu name(s) carry flags this version of "
                 "libcapture does not know; they are not in the copy",
                 (unsigned long long)c->unknown_flags);
    if (cap_reader_get_stats(c->r)->unknown_chunks)
        cvt_warn(&c->d, W_CHUNKS, "%llu chunk(s) of a type this version of "
                 "libcapture does not know were skipped; they are not in the "
                 "copy", (unsigned long long)cap_reader_get_stats(c->r)
                             ->unknown_chunks);
    if (c->sliced && c->d.out)
        fprintf(c->d.out, "%s: kept %zu frame(s) in %zu "
                "window(s); %llu scope(s) outside them left out\n", out,
                c->nkeep, c->nwin, (unsigned long long)c->sliced_out);
    if (c->max_adjust > 1000)
        cvt_warn(&c->d, W_CLAMP, "times on a thread out of order by up to "
                 "%.3f us (the input's clock estimate changed between "
                 "blocks) were written in order",
                 (double)c->max_adjust / 1e3);
}

/* What was copied, into *result. */
static void copy_result_fill(const copy *c, cvt_copy_result *result)
{
    const cap_reader_stats *st = cap_reader_get_stats(c->r);
    result->frames = c->lw ? c->lw_kept : st->frames;
    result->first_frame = c->lw_first;
    result->last_frame = c->lw_last;
    result->window_done = c->lw_done;
    result->has_footer = st->has_footer;
    result->dropped_scopes = st->dropped_scopes;
    result->corrupt_chunks = st->corrupt_chunks;
}

static void copy_free(copy *c)
{
    cap_reader_close(c->r);
    free(c->keep);
    free(c->win);
    free(c->named);
    free(c->last_tick);
    for (size_t i = 0; i < c->nth; i++) {
        free(c->th[i].name);
        free(c->th[i].begin);
        free(c->th[i].ch);
    }
    free(c->th);
    free(c->anc);
    free(c->anc_ch);
    free(c->clks);
    free(c->spans);
    free(c->span_depth);
    free(c);
}

static int copy_run(copy *c, const char *in, const char *out,
                    const cvt_slice *sl, cvt_copy_result *result)
{
    int rc = open_copy(c, in, out, sl);
    if (rc != 0) {
        cap_reader_close(c->r);
        free(c->keep);
        free(c->win);
        free(c);
        return rc;
    }
    int damaged = 0;
    if (cap_reader_set_ticks(c->r, 1) != CAP_OK || read_clock(c) != 0) {
        cvt_error(&c->d, "cannot read the capture's ticks");
        c->fatal = CAP_E_CORRUPT;
    }
    copy_events(c, result, &damaged);
    copy_tail(c, sl);
    copy_warnings(c, out);
    rc = c->fatal;
    if (result)
        copy_result_fill(c, result);
    if (!rc) {
        cap_result res = cap_writer_close(c->w);
        if (res != CAP_OK) {
            c->d.file = out;
            cvt_error(&c->d, "cannot write: %s", cap_result_message(res));
            rc = CAP_E_IO;
        } else if (damaged) {
            cvt_warn(&c->d, W_DAMAGE, "recovered into %s, which is complete: "
                     "what the damage lost is not in it either, and reading "
                     "it does not warn about the damage (keep the input)",
                     out);
        }
    } else {
        cap_writer_abandon(c->w);
    }
    cvt_warn_summary(&c->d);
    copy_free(c);
    return rc;
}
