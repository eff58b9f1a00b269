/*
 * perfetto_out.c - capture -> Perfetto's protobuf trace
 * (cvt_cap_to_perfetto).
 *
 * Output: a `Trace`, that is a stream of `TracePacket`s (field 1, each
 * length-delimited), written as the capture is read. The field numbers are
 * those of Perfetto's public schema (docs/CONVERT.md lists the ones used;
 * tests/perfetto_min.proto declares them for protoc). Tracks:
 *   - one process track (uuid 1, pid PF_PID_CPU) named by the capture's
 *     "program" metadata (else the input's file name);
 *   - a thread track per recording thread (uuid PF_UUID_THREAD + tid,
 *     tid + 1 as Perfetto's tid, so that none is 0), with its name;
 *   - "Frames" (uuid 3), a child of the process, one slice per frame;
 *   - a "GPU" process track (uuid 2) and a child track per GPU track
 *     (PF_UUID_GPU + track), its spans on the CPU axis (calibrated spans
 *     only, as the reader places them);
 *   - a counter track per counter name (PF_UUID_COUNTER + name id).
 *
 * Each thread, GPU track and the frames have a packet sequence of their
 * own (trusted_packet_sequence_id): its first packet clears the incremental
 * state and sets the sequence's defaults (its track, and clock 64), a clock
 * snapshot makes clock 64 an incremental clock equal to BOOTTIME (6), so
 * every later packet carries its time as the delta from the previous one
 * on the sequence. A name is interned (interned_data.event_names, iid = the
 * capture's name id) in the first packet of its sequence that uses it;
 * slices refer to it by name_iid. Scopes whose name is a wait
 * (CAP_NAME_WAIT) carry the interned category "wait". Counter samples, on
 * a sequence of their own, carry absolute timestamps.
 *
 * Scopes come from the reader at their end, children first. A slice must
 * begin before its children, so a thread's sequence keeps the slices it
 * has begun and not ended (one per level, CAP_MAX_DEPTH at most): when a
 * scope ends, the ancestors not begun yet are begun first, from
 * cap_reader_scope_ancestors. Memory is that stack per thread, a bit per
 * name per sequence for interning, and one GPU frame's spans per track:
 * bounded whatever the capture's length.
 */
#include "cvt.h"
#include "cvt_util.h"

#include <capture/cap_reader.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- Perfetto's field numbers (public schema) -------------------------- */

enum {
    /* Trace */
    F_TRACE_PACKET = 1,
    /* TracePacket */
    F_PKT_CLOCK_SNAPSHOT = 6,
    F_PKT_TIMESTAMP = 8,
    F_PKT_SEQ_ID = 10,
    F_PKT_TRACK_EVENT = 11,
    F_PKT_INTERNED = 12,
    F_PKT_SEQ_FLAGS = 13,
    F_PKT_DEFAULTS = 59,
    F_PKT_TRACK_DESC = 60,
    F_PKT_FIRST_ON_SEQ = 87,
    /* TracePacketDefaults */
    F_DEF_CLOCK_ID = 58,
    F_DEF_TRACK_EVENT = 11,
    /* TrackEventDefaults */
    F_TED_TRACK_UUID = 11,
    /* ClockSnapshot, ClockSnapshot.Clock */
    F_CS_CLOCKS = 1,
    F_CLK_ID = 1,
    F_CLK_TIMESTAMP = 2,
    F_CLK_INCREMENTAL = 3,
    /* TrackEvent */
    F_TE_CATEGORY_IIDS = 3,
    F_TE_TYPE = 9,
    F_TE_NAME_IID = 10,
    F_TE_TRACK_UUID = 11,
    F_TE_NAME = 23,
    F_TE_DOUBLE_VALUE = 44,
    /* InternedData, EventCategory / EventName */
    F_ID_CATEGORIES = 1,
    F_ID_NAMES = 2,
    F_IN_IID = 1,
    F_IN_NAME = 2,
    /* TrackDescriptor */
    F_TD_UUID = 1,
    F_TD_NAME = 2,
    F_TD_PROCESS = 3,
    F_TD_THREAD = 4,
    F_TD_PARENT = 5,
    F_TD_COUNTER = 8,
    /* ProcessDescriptor */
    F_PD_PID = 1,
    F_PD_NAME = 6,
    /* ThreadDescriptor */
    F_THD_PID = 1,
    F_THD_TID = 2,
    F_THD_NAME = 5,
};

enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_COUNTER = 4 };
enum { SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2 };
enum { CLOCK_BOOTTIME = 6, CLOCK_SEQ = 64 };
enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2 };

#define PF_PID_CPU 100000
#define PF_PID_GPU 100001
#define PF_UUID_CPU 1u
#define PF_UUID_GPU_PROCESS 2u
#define PF_UUID_FRAMES 3u
#define PF_UUID_GPU 0x100u         /* + track (< 256) */
#define PF_UUID_THREAD 0x10000u    /* + tid (< 65536) */
#define PF_UUID_COUNTER 0x1000000u /* + name id (< 2^24) */
#define PF_SEQ_FRAMES 1u
#define PF_SEQ_COUNTERS 2u
#define PF_WAIT_CATEGORY 1u        /* its iid */

/* The largest packet: a descriptor or an interned name with a text of at
 * most CVT_NAME_MAX bytes, plus fields. */
#define PF_PACKET_MAX (2 * CVT_NAME_MAX + 256)
#define PF_BUF (1u << 18)

enum {
    W_DAMAGE, W_UNNAMED, W_GPU, W_COUNTER, W_MOVED, W_LOST, W_UNENDED,
    W_ORPHAN
};

/* ---- a protobuf writer into the output buffer ------------------------- */

static inline uint8_t *pb_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint8_t *pb_tag(uint8_t *p, unsigned field, unsigned wt)
{
    return pb_varint(p, (uint64_t)field << 3 | wt);
}

static inline uint8_t *pb_uint(uint8_t *p, unsigned field, uint64_t v)
{
    return pb_varint(pb_tag(p, field, WT_VARINT), v);
}

static uint8_t *pb_bytes(uint8_t *p, unsigned field, const char *s, size_t n)
{
    p = pb_varint(pb_tag(p, field, WT_LEN), n);
    memcpy(p, s, n);
    return p + n;
}

static uint8_t *pb_double(uint8_t *p, unsigned field, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    p = pb_tag(p, field, WT_I64);
    for (int i = 0; i < 8; i++)
        *p++ = (uint8_t)(u >> (8 * i)); /* little-endian */
    return p;
}

/* A length-delimited field whose length is not known yet: the tag and one
 * byte kept for the length; *mark is where the length goes. */
static inline uint8_t *pb_open(uint8_t *p, unsigned field, uint8_t **mark)
{
    p = pb_tag(p, field, WT_LEN);
    *mark = p;
    return p + 1;
}

/* Close the field opened at mark, its body ending at end: the length is
 * written, the body moved when the length takes more than one byte.
 * Returns the new end. */
static inline uint8_t *pb_close(uint8_t *mark, uint8_t *end)
{
    size_t n = (size_t)(end - mark - 1);
    if (n < 0x80) {
        *mark = (uint8_t)n;
        return end;
    }
    uint8_t len[10];
    size_t k = (size_t)(pb_varint(len, n) - len);
    memmove(mark + k, mark + 1, n);
    memcpy(mark, len, k);
    return mark + k + n;
}

/* ---- state ------------------------------------------------------------- */

/* A slice begun and not ended on a sequence. */
typedef struct open_slice {
    int64_t begin;      /* as written */
    int64_t end;        /* where it will end; PF_OPEN: not known yet */
    uint32_t name, depth;
} open_slice;

#define PF_OPEN INT64_MAX

/* A scope or GPU span held until it can be written in order of begin. */
typedef struct item {
    int64_t begin, end;
    uint32_t name, depth;
    uint64_t ord;       /* order read */
} item;

/* A packet sequence: one thread, one GPU track, or the frames. */
typedef struct seq {
    uint32_t id;          /* trusted_packet_sequence_id; 0: not started */
    uint64_t uuid;        /* its track */
    int clocked;          /* its clock snapshot was written */
    int64_t clock;        /* the incremental clock: the last time written */
    uint8_t *named;       /* a bit per name id interned on it */
    size_t named_cap;     /* bytes */
    int wait_named;       /* the "wait" category interned */
    open_slice *open;     /* the slices begun, outermost first */
    size_t nopen, open_cap;
    item *held;           /* a thread: the closed scopes of its open root;
                             a GPU track: one GPU frame's spans */
    size_t nheld, held_cap;
    uint64_t frame;       /* a GPU track: the CPU frame of held */
    uint64_t moved;       /* times moved by over PF_MOVE_QUIET */
} seq;

typedef struct pf {
    cvt_diag d;
    cap_reader *r;
    FILE *f;
    uint8_t *buf; /* packets not written yet */
    size_t n;
    uint32_t next_seq;    /* the next sequence id to hand out */
    seq *th;              /* by tid */
    size_t nth;
    seq *gpu;             /* by track, CAP_MAX_TRACKS of them */
    seq frames;
    int counters_started;
    uint8_t *counter_named; /* a bit per counter name with a track */
    size_t counter_named_cap;
    int gpu_process;      /* the GPU process track was written */
    uint64_t ord;         /* items read */
    size_t *start, *work; /* write_tree's */
    size_t start_cap, work_cap;
    int64_t anc_begin[CAP_MAX_DEPTH];
    uint64_t unnamed, gpu_uncal, gpu_unmeasured, bad_counters, lost;
    int werr;             /* a write failed */
    size_t hold_max;      /* PF_HOLD_MAX */
} pf;

/* Room for one packet in the buffer; writes out what it holds when full.
 * Returns where the packet goes. */
static uint8_t *room(pf *c)
{
    if (c->n + PF_PACKET_MAX > PF_BUF) {
        if (fwrite(c->buf, 1, c->n, c->f) != c->n)
            c->werr = 1;
        c->n = 0;
    }
    return c->buf + c->n;
}

/* Open a TracePacket on sequence id `sid`; *mark for packet_end. */
static uint8_t *packet_begin(pf *c, uint32_t sid, uint8_t **mark)
{
    uint8_t *p = pb_open(room(c), F_TRACE_PACKET, mark);
    return pb_uint(p, F_PKT_SEQ_ID, sid);
}

static void packet_end(pf *c, uint8_t *mark, uint8_t *end)
{
    end = pb_close(mark, end);
    c->n = (size_t)(end - c->buf);
}

/* A name's text for interning: cut to CVT_NAME_MAX, "[unnamed #ID]"
 * when the capture has none. */
static size_t name_text(pf *c, uint32_t id, char *buf, int count)
{
    const char *s = cap_reader_name(c->r, id);
    if (!s) {
        if (count)
            c->unnamed++;
        return (size_t)snprintf(buf, 40, "<unnamed #%u>", id);
    }
    int cut;
    return cvt_name_clean(buf, s, strlen(s), &cut);
}

static int bit_test_set(uint8_t **bits, size_t *cap, uint32_t i)
{
    size_t byte = i / 8;
    if (byte >= *cap) {
        size_t old = *cap;
        if (cvt_grow((void **)bits, cap, byte + 1, 1))
            return -1;
        memset(*bits + old, 0, *cap - old);
    }
    int was = (*bits)[byte] >> (i % 8) & 1;
    (*bits)[byte] |= (uint8_t)(1u << (i % 8));
    return was;
}

/* ---- tracks ------------------------------------------------------------ */

static uint8_t *put_str(uint8_t *p, unsigned field, const char *s)
{
    char buf[CVT_NAME_MAX + 1];
    int cut;
    size_t n = cvt_name_clean(buf, s, strlen(s), &cut);
    return pb_bytes(p, field, buf, n);
}

/* A process track (uuid, pid, name) on sequence sid. */
static void process_track(pf *c, uint32_t sid, uint64_t uuid, int pid,
                          const char *name)
{
    uint8_t *pk, *td, *pd;
    uint8_t *p = packet_begin(c, sid, &pk);
    p = pb_open(p, F_PKT_TRACK_DESC, &td);
    p = pb_uint(p, F_TD_UUID, uuid);
    p = pb_open(p, F_TD_PROCESS, &pd);
    p = pb_uint(p, F_PD_PID, (uint64_t)pid);
    p = put_str(p, F_PD_NAME, name);
    p = pb_close(pd, p);
    p = pb_close(td, p);
    packet_end(c, pk, p);
}

/* Start sequence s (id handed out now) for track `uuid`: the packet that
 * clears its incremental state, sets its defaults and declares the track
 * (a thread when tid >= 0, else a named child of `parent`). */
static void seq_start(pf *c, seq *s, uint32_t sid, uint64_t uuid, int64_t tid,
                      uint64_t parent, const char *name)
{
    s->id = sid;
    s->uuid = uuid;
    uint8_t *pk, *m1, *m2, *td;
    uint8_t *p = packet_begin(c, sid, &pk);
    p = pb_uint(p, F_PKT_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    p = pb_uint(p, F_PKT_FIRST_ON_SEQ, 1);
    p = pb_open(p, F_PKT_DEFAULTS, &m1);
    p = pb_uint(p, F_DEF_CLOCK_ID, CLOCK_SEQ);
    p = pb_open(p, F_DEF_TRACK_EVENT, &m2);
    p = pb_uint(p, F_TED_TRACK_UUID, uuid);
    p = pb_close(m2, p);
    p = pb_close(m1, p);
    p = pb_open(p, F_PKT_TRACK_DESC, &td);
    p = pb_uint(p, F_TD_UUID, uuid);
    if (tid >= 0) {
        uint8_t *thd;
        p = pb_open(p, F_TD_THREAD, &thd);
        p = pb_uint(p, F_THD_PID, PF_PID_CPU);
        p = pb_uint(p, F_THD_TID, (uint64_t)tid + 1);
        p = put_str(p, F_THD_NAME, name);
        p = pb_close(thd, p);
    } else {
        p = pb_uint(p, F_TD_PARENT, parent);
        p = put_str(p, F_TD_NAME, name);
    }
    p = pb_close(td, p);
    packet_end(c, pk, p);
}

/* The sequence of thread tid, started (named "thread N" when the capture
 * did not name it) if new; NULL when out of memory. */
static seq *thread_seq(pf *c, uint32_t tid, const char *name)
{
    if (tid >= c->nth) {
        size_t cap = c->nth;
        if (cvt_grow((void **)&c->th, &cap, (size_t)tid + 1, sizeof *c->th))
            return NULL;
        memset(c->th + c->nth, 0, (cap - c->nth) * sizeof *c->th);
        c->nth = cap;
    }
    seq *s = &c->th[tid];
    if (!s->id) {
        char tmp[32];
        if (!name)
            name = cap_reader_thread_name(c->r, tid);
        if (!name) {
            snprintf(tmp, sizeof tmp, "thread %u", tid);
            name = tmp;
        }
        seq_start(c, s, c->next_seq++, PF_UUID_THREAD + tid, tid, 0, name);
    }
    return s;
}

static seq *gpu_seq(pf *c, uint32_t track, const char *name)
{
    seq *g = &c->gpu[track];
    if (!g->id) {
        if (!c->gpu_process)
            process_track(c, PF_SEQ_FRAMES, PF_UUID_GPU_PROCESS, PF_PID_GPU,
                          "GPU");
        c->gpu_process = 1;
        char tmp[32];
        if (!name)
            name = cap_reader_track_name(c->r, track);
        if (!name) {
            snprintf(tmp, sizeof tmp, "GPU track %u", track);
            name = tmp;
        }
        seq_start(c, g, c->next_seq++, PF_UUID_GPU + track, -1,
                  PF_UUID_GPU_PROCESS, name);
    }
    return g;
}

/* ---- slices ------------------------------------------------------------ */

/* Moves of at most this many ns are not counted: the reader's blocks
 * convert ticks with periods of their own, which puts a child read in one
 * block up to a few ns outside its parent read in the next. */
#define PF_MOVE_QUIET 1000

static int far(int64_t a, int64_t b)
{
    uint64_t d = a > b ? (uint64_t)a - (uint64_t)b : (uint64_t)b - (uint64_t)a;
    return d > PF_MOVE_QUIET;
}

/* Time t on sequence s, as a delta of its incremental clock. A time before
 * the sequence's last one is moved up to it (slices stay nested, deltas
 * are unsigned), and counted. */
static uint8_t *put_time(seq *s, uint8_t *p, int64_t t)
{
    if (t < s->clock) {
        if (far(t, s->clock))
            s->moved++;
        t = s->clock;
    }
    p = pb_uint(p, F_PKT_TIMESTAMP, (uint64_t)(t - s->clock));
    s->clock = t;
    return p;
}

/* The clock snapshot of sequence s, before its first timed packet: clock
 * 64 (incremental) and BOOTTIME read t (at least 0) together. */
static void seq_clock(pf *c, seq *s, int64_t t)
{
    if (s->clocked)
        return;
    s->clocked = 1;
    s->clock = t > 0 ? t : 0;
    uint8_t *pk, *cs, *k;
    uint8_t *p = packet_begin(c, s->id, &pk);
    p = pb_open(p, F_PKT_CLOCK_SNAPSHOT, &cs);
    p = pb_open(p, F_CS_CLOCKS, &k);
    p = pb_uint(p, F_CLK_ID, CLOCK_BOOTTIME);
    p = pb_uint(p, F_CLK_TIMESTAMP, (uint64_t)s->clock);
    p = pb_close(k, p);
    p = pb_open(p, F_CS_CLOCKS, &k);
    p = pb_uint(p, F_CLK_ID, CLOCK_SEQ);
    p = pb_uint(p, F_CLK_TIMESTAMP, (uint64_t)s->clock);
    p = pb_uint(p, F_CLK_INCREMENTAL, 1);
    p = pb_close(k, p);
    p = pb_close(cs, p);
    packet_end(c, pk, p);
}

/* A slice's BEGIN on s at t, to end at `end` (PF_OPEN: not known yet),
 * named by id `name` (wait: in the "wait" category) or, when text is not
 * NULL, by that text (not interned). */
static int slice_begin(pf *c, seq *s, int64_t t, int64_t end, uint32_t depth,
                       uint32_t name, const char *text, int wait)
{
    seq_clock(c, s, t);
    if (cvt_grow((void **)&s->open, &s->open_cap, s->nopen + 1,
                 sizeof *s->open))
        return -1;
    int known = 1;
    if (!text) {
        known = bit_test_set(&s->named, &s->named_cap, name);
        if (known < 0)
            return -1;
    }
    uint8_t *pk, *te;
    uint8_t *p = packet_begin(c, s->id, &pk);
    p = put_time(s, p, t);
    s->open[s->nopen++] = (open_slice){s->clock, end, name, depth};
    if (!known || (wait && !s->wait_named)) {
        uint8_t *id, *e;
        p = pb_open(p, F_PKT_INTERNED, &id);
        if (wait && !s->wait_named) {
            p = pb_open(p, F_ID_CATEGORIES, &e);
            p = pb_uint(p, F_IN_IID, PF_WAIT_CATEGORY);
            p = pb_bytes(p, F_IN_NAME, "wait", 4);
            p = pb_close(e, p);
            s->wait_named = 1;
        }
        if (!known) {
            char buf[CVT_NAME_MAX + 1];
            size_t n = name_text(c, name, buf, 1);
            p = pb_open(p, F_ID_NAMES, &e);
            p = pb_uint(p, F_IN_IID, name);
            p = pb_bytes(p, F_IN_NAME, buf, n);
            p = pb_close(e, p);
        }
        p = pb_close(id, p);
        p = pb_uint(p, F_PKT_SEQ_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
    }
    p = pb_open(p, F_PKT_TRACK_EVENT, &te);
    if (wait)
        p = pb_uint(p, F_TE_CATEGORY_IIDS, PF_WAIT_CATEGORY);
    p = pb_uint(p, F_TE_TYPE, TYPE_SLICE_BEGIN);
    if (text)
        p = put_str(p, F_TE_NAME, text);
    else
        p = pb_uint(p, F_TE_NAME_IID, name);
    p = pb_close(te, p);
    packet_end(c, pk, p);
    return 0;
}

/* End the innermost open slice of s at t. */
static void slice_end(pf *c, seq *s, int64_t t)
{
    uint8_t *pk, *te;
    uint8_t *p = packet_begin(c, s->id, &pk);
    p = put_time(s, p, t);
    p = pb_open(p, F_PKT_TRACK_EVENT, &te);
    p = pb_uint(p, F_TE_TYPE, TYPE_SLICE_END);
    p = pb_close(te, p);
    packet_end(c, pk, p);
    s->nopen--;
}

static int is_wait(pf *c, uint32_t name)
{
    return (cap_reader_name_flags(c->r, name) & CAP_NAME_WAIT) != 0;
}

/* Where a slice [*b, *e) goes on s (*e PF_OPEN: its end is not known
 * yet): not before the last time written (deltas are unsigned), inside
 * the open slice it begins in, and its duration kept where it fits, so
 * that self times stay those of the capture. The reader converts each
 * block's ticks with that block's period, so a child read in one block
 * can stick out of its parent, read in the next, by a few ns: it is
 * moved, not cut. A time moved is counted. */
static void place(pf *c, seq *s, int64_t *b, int64_t *e)
{
    seq_clock(c, s, *b);
    int64_t lo = s->clock;
    int64_t hi = s->nopen ? s->open[s->nopen - 1].end : PF_OPEN;
    int64_t nb = *b < lo ? lo : *b;
    if (hi != PF_OPEN && nb > hi)
        nb = hi;
    if (*e == PF_OPEN) {
        if (far(nb, *b))
            s->moved++;
        *b = nb;
        return;
    }
    int64_t d = cap_duration_ns(*b, *e);
    if (hi != PF_OPEN && d > hi - nb) /* would end after its parent */
        nb = hi - d < lo ? lo : hi - d;
    int64_t ne = hi != PF_OPEN && d > hi - nb ? hi
                 : d > PF_OPEN - 1 - nb      ? PF_OPEN - 1
                                             : nb + d;
    if (far(nb, *b) || far(ne, *e))
        s->moved++;
    *b = nb;
    *e = ne;
}

static int cmp_item(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* End the open slices of s that end before x begins (one that ends where
 * x begins stays open when x is deeper: a child of no length at its
 * parent's end). */
static void end_before(pf *c, seq *s, const item *x)
{
    while (s->nopen) {
        const open_slice *o = &s->open[s->nopen - 1];
        if (o->end == PF_OPEN || o->end > x->begin ||
            (o->end == x->begin && x->depth > o->depth))
            break;
        slice_end(c, s, o->end);
    }
}

/* A GPU track's held spans (one GPU frame's), in order of begin: each
 * ends the open slices that end before it begins and nests in the one it
 * begins in (a span that overlaps its sibling is moved or cut to nest:
 * a queue's spans may overlap, a track's slices cannot). They stay open
 * until what follows ends them. */
static int write_gpu(pf *c, seq *s)
{
    cvt_sort(s->held, s->nheld, sizeof *s->held, cmp_item);
    for (size_t i = 0; i < s->nheld; i++) {
        item *x = &s->held[i];
        end_before(c, s, x);
        int64_t b = x->begin, e = x->end;
        place(c, s, &b, &e);
        if (slice_begin(c, s, b, e, x->depth, x->name, NULL, 0))
            return -1;
    }
    s->nheld = 0;
    return 0;
}

/* End the slices of s whose end is known. */
static void end_known(pf *c, seq *s)
{
    while (s->nopen && s->open[s->nopen - 1].end != PF_OPEN)
        slice_end(c, s, s->open[s->nopen - 1].end);
}

static int hold(pf *c, seq *s, int64_t begin, int64_t end, uint32_t name,
                uint32_t depth)
{
    if (cvt_grow((void **)&s->held, &s->held_cap, s->nheld + 1,
                 sizeof *s->held))
        return -1;
    s->held[s->nheld++] = (item){begin, end, name, depth, c->ord++};
    return 0;
}

/* Begin `name` (of depth `depth`) at b on s, to end at e, placed. */
static int begin_placed(pf *c, seq *s, int64_t b, int64_t e, uint32_t depth,
                        uint32_t name)
{
    place(c, s, &b, &e);
    return slice_begin(c, s, b, e, depth, name, NULL, is_wait(c, name));
}

/* A thread's held scopes, read children first (post-order, with their
 * depths), written parents first: the tree is rebuilt from the order and
 * the depths alone (a scope's children are the deeper scopes read just
 * before it), never from the times, which may not nest by a few ns.
 * Each subtree is written whole and ended. A subtree whose parent is not
 * held hangs off the open slices of s, begun first from chain (the
 * begins of the scopes open around the last one read, nchain of them,
 * names from names), or off nothing (a capture cut short). */
static int write_tree(pf *c, seq *s, const int64_t *chain,
                      const uint32_t *names, size_t nchain)
{
    size_t n = s->nheld;
    if (cvt_grow((void **)&c->start, &c->start_cap, n + 1, sizeof *c->start) ||
        cvt_grow((void **)&c->work, &c->work_cap, 2 * n + 2, sizeof *c->work))
        return -1;
    size_t *start = c->start, *roots = c->work + n + 1, nroots = 0;
    for (size_t i = 0; i < n; i++) {
        start[i] = i;
        while (nroots && s->held[roots[nroots - 1]].depth > s->held[i].depth)
            start[i] = start[roots[--nroots]];
        roots[nroots++] = i;
    }
    /* roots[] sits in the top half of work; the walk below uses at most
     * one entry a scope of the subtree it walks, below it */
    for (size_t r = 0; r < nroots; r++) {
        size_t root = roots[r];
        uint32_t d = s->held[root].depth;
        for (size_t k = s->nopen; k < d && k < nchain; k++)
            if (begin_placed(c, s, chain[k], PF_OPEN, (uint32_t)k, names[k]))
                return -1;
        size_t *work = c->work, nw = 0;
        work[nw++] = root << 1;
        while (nw) {
            size_t w = work[--nw];
            if (w & 1) {
                slice_end(c, s, s->open[s->nopen - 1].end);
                continue;
            }
            const item *x = &s->held[w >> 1];
            if (begin_placed(c, s, x->begin, x->end, x->depth, x->name))
                return -1;
            work[nw++] = w | 1;
            for (size_t k = w >> 1; k > start[w >> 1];) {
                work[nw++] = (k - 1) << 1; /* last child first: popped last */
                k = start[k - 1];
            }
        }
    }
    s->nheld = 0;
    return 0;
}

/* A thread holds at most this many closed scopes of one root (the tests
 * set fewer through the environment, CVT_PERFETTO_HOLD_MAX, to take the
 * streaming path on small captures). */
#define PF_HOLD_MAX 16384u

/* A scope a thread streams, after a spill: its ancestors not begun yet
 * are begun (their begins from the reader), then the scope if it had no
 * children, then it ends. Open slices that are not its ancestors (what a
 * damaged chunk left open) end first, where it begins. */
static int stream_scope(pf *c, seq *s, const cap_ev_scope *e, uint32_t depth)
{
    size_t keep = 0;
    while (keep < s->nopen && keep <= depth) {
        uint32_t nm = keep < depth ? e->stack[keep] : e->name;
        if (s->open[keep].name != nm)
            break;
        keep++;
    }
    if (s->nopen > keep) {
        c->lost += s->nopen - keep;
        while (s->nopen > keep)
            slice_end(c, s, e->begin_ns > s->clock ? e->begin_ns : s->clock);
    }
    for (size_t i = s->nopen; i < depth; i++)
        if (begin_placed(c, s, c->anc_begin[i], PF_OPEN, (uint32_t)i,
                         e->stack[i]))
            return -1;
    if (s->nopen == depth &&
        begin_placed(c, s, e->begin_ns, e->end_ns, depth, e->name))
        return -1;
    open_slice *o = &s->open[s->nopen - 1];
    if (o->end == PF_OPEN) /* begun as an ancestor */
        o->end = e->end_ns > s->clock ? e->end_ns : s->clock;
    slice_end(c, s, o->end);
    return 0;
}

/* A CPU scope, read at its end, children first. A thread holds the
 * closed scopes of its open root and writes them, parents first, when
 * the root ends (write_tree): every time as the reader gives it at the
 * scope's end. A root that holds PF_HOLD_MAX scopes spills: what is held
 * is written with the scopes still open around the last one (their
 * begins from cap_reader_scope_ancestors: a scope's begin as read in the
 * block where its child ends, which can differ by a few ns from the one
 * read at its own end when the blocks' periods differ), and the thread
 * streams (stream_scope) until that root ends. */
static int cpu_scope(pf *c, const cap_ev_scope *e)
{
    seq *s = thread_seq(c, e->tid, NULL);
    if (!s)
        return -1;
    uint32_t depth = e->depth < CAP_MAX_DEPTH ? e->depth : CAP_MAX_DEPTH - 1;
    if (s->nopen) {
        size_t na = cap_reader_scope_ancestors(c->r, c->anc_begin, NULL,
                                               depth);
        return stream_scope(c, s, e, na < depth ? (uint32_t)na : depth);
    }
    if (hold(c, s, e->begin_ns, e->end_ns, e->name, depth))
        return -1;
    if (depth == 0)
        return write_tree(c, s, NULL, NULL, 0);
    if (s->nheld < c->hold_max)
        return 0;
    size_t na = cap_reader_scope_ancestors(c->r, c->anc_begin, NULL, depth);
    return write_tree(c, s, c->anc_begin, e->stack, na < depth ? na : depth);
}

static int gpu_span_add(pf *c, const cap_ev_gpu_span *e)
{
    if (!e->measured) {
        c->gpu_unmeasured++;
        return 0;
    }
    if (!e->calibrated) {
        c->gpu_uncal++;
        return 0;
    }
    if (e->track >= CAP_MAX_TRACKS)
        return 0;
    seq *g = gpu_seq(c, e->track, NULL);
    if (g->nheld && g->frame != e->cpu_frame && write_gpu(c, g))
        return -1;
    g->frame = e->cpu_frame;
    return hold(c, g, e->begin_ns, e->end_ns, e->name, e->depth);
}

static int frame(pf *c, const cap_ev_frame *e)
{
    seq *s = &c->frames;
    char text[40];
    snprintf(text, sizeof text, "frame %llu", (unsigned long long)e->index);
    int64_t b = e->begin_ns, end = e->end_ns;
    place(c, s, &b, &end);
    if (slice_begin(c, s, b, end, 0, 0, text, 0))
        return -1;
    slice_end(c, s, end);
    return 0;
}

static int counter(pf *c, const cap_ev_counter *e)
{
    if (!isfinite(e->value) || e->time_ns < 0) {
        c->bad_counters++;
        return 0;
    }
    uint8_t *pk, *m;
    if (!c->counters_started) {
        c->counters_started = 1;
        uint8_t *p = packet_begin(c, PF_SEQ_COUNTERS, &pk);
        p = pb_uint(p, F_PKT_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
        p = pb_uint(p, F_PKT_FIRST_ON_SEQ, 1);
        packet_end(c, pk, p);
    }
    int had = bit_test_set(&c->counter_named, &c->counter_named_cap, e->name);
    if (had < 0)
        return -1;
    uint64_t uuid = PF_UUID_COUNTER + (uint64_t)e->name;
    if (!had) {
        char buf[CVT_NAME_MAX + 1];
        size_t n = name_text(c, e->name, buf, 0);
        uint8_t *p = packet_begin(c, PF_SEQ_COUNTERS, &pk);
        p = pb_open(p, F_PKT_TRACK_DESC, &m);
        p = pb_uint(p, F_TD_UUID, uuid);
        p = pb_uint(p, F_TD_PARENT, PF_UUID_CPU);
        p = pb_bytes(p, F_TD_NAME, buf, n);
        uint8_t *cd;
        p = pb_open(p, F_TD_COUNTER, &cd);
        p = pb_close(cd, p);
        p = pb_close(m, p);
        packet_end(c, pk, p);
    }
    uint8_t *p = packet_begin(c, PF_SEQ_COUNTERS, &pk);
    p = pb_uint(p, F_PKT_TIMESTAMP, (uint64_t)e->time_ns);
    p = pb_open(p, F_PKT_TRACK_EVENT, &m);
    p = pb_uint(p, F_TE_TYPE, TYPE_COUNTER);
    p = pb_uint(p, F_TE_TRACK_UUID, uuid);
    p = pb_double(p, F_TE_DOUBLE_VALUE, e->value);
    p = pb_close(m, p);
    packet_end(c, pk, p);
    return 0;
}

static int on_event(pf *c, const cap_event *ev)
{
    switch (ev->kind) {
    case CAP_EV_THREAD:
        return thread_seq(c, ev->u.thread.tid, ev->u.thread.name) ? 0 : -1;
    case CAP_EV_GPU_TRACK:
        if (ev->u.gpu_track.track < CAP_MAX_TRACKS)
            gpu_seq(c, ev->u.gpu_track.track, ev->u.gpu_track.name);
        return 0;
    case CAP_EV_FRAME:
        return frame(c, &ev->u.frame);
    case CAP_EV_SCOPE:
        return cpu_scope(c, &ev->u.scope);
    case CAP_EV_GPU_SPAN:
        return gpu_span_add(c, &ev->u.gpu_span);
    case CAP_EV_COUNTER:
        return counter(c, &ev->u.counter);
    }
    return 0;
}

/* What is still held or open once the capture has been read: GPU spans
 * are written and ended; the scopes a thread holds (their root never
 * ended: a capture cut short) are written without it, and slices begun
 * whose scope never ended stay open, as Perfetto shows a slice that "did
 * not end" (*unended counts them, *orphans the scopes written without
 * their root). */
static int finish(pf *c, uint64_t *unended, uint64_t *orphans)
{
    *unended = *orphans = 0;
    for (size_t t = 0; t < CAP_MAX_TRACKS; t++) {
        seq *g = &c->gpu[t];
        if (g->nheld && write_gpu(c, g))
            return -1;
        end_known(c, g);
    }
    for (size_t i = 0; i < c->nth; i++) {
        seq *s = &c->th[i];
        *orphans += s->nheld;
        if (s->nheld && write_tree(c, s, NULL, NULL, 0))
            return -1;
        *unended += s->nopen;
    }
    return 0;
}

static void seq_free(seq *s)
{
    free(s->named);
    free(s->open);
    free(s->held);
}

static void report(pf *c, uint64_t unended, uint64_t orphans)
{
    uint64_t moved = c->frames.moved, gpu_moved = 0;
    for (size_t i = 0; i < c->nth; i++)
        moved += c->th[i].moved;
    for (size_t t = 0; t < CAP_MAX_TRACKS; t++)
        gpu_moved += c->gpu[t].moved;
    if (orphans)
        cvt_warn(&c->d, W_ORPHAN, "%llu scope(s) whose enclosing scope "
                 "never closed (a truncated capture) are exported without "
                 "it", (unsigned long long)orphans);
    if (c->unnamed)
        cvt_warn(&c->d, W_UNNAMED, "%llu slice(s) use name ids that the "
                 "capture never named (a damaged or foreign capture); "
                 "named <unnamed #ID>", (unsigned long long)c->unnamed);
    if (c->gpu_uncal)
        cvt_warn(&c->d, W_GPU, "%llu GPU span(s) of tracks without a "
                 "calibration to the CPU clock left out (their position is "
                 "unknown)", (unsigned long long)c->gpu_uncal);
    if (c->gpu_unmeasured)
        cvt_warn(&c->d, W_GPU, "%llu GPU span(s) not measured left out",
                 (unsigned long long)c->gpu_unmeasured);
    if (c->bad_counters)
        cvt_warn(&c->d, W_COUNTER, "%llu counter sample(s) that are not "
                 "finite numbers, or before the capture's origin, left out",
                 (unsigned long long)c->bad_counters);
    if (moved)
        cvt_warn(&c->d, W_MOVED, "%llu time(s) moved by over 1 us so that "
                 "slices nest on their track (times that go back, or before "
                 "the capture's origin)", (unsigned long long)moved);
    if (gpu_moved)
        cvt_warn(&c->d, W_MOVED, "%llu GPU span time(s) moved by over 1 us "
                 "so that spans nest on their track (spans that overlap a "
                 "sibling: their self times differ from the reader's)",
                 (unsigned long long)gpu_moved);
    if (c->lost)
        cvt_warn(&c->d, W_LOST, "%llu slice(s) whose end was lost with a "
                 "damaged chunk end where the next scope of their thread "
                 "begins", (unsigned long long)c->lost);
    if (unended)
        cvt_warn(&c->d, W_UNENDED, "%llu scope(s) that never ended (a "
                 "capture cut short) are slices without an end",
                 (unsigned long long)unended);
}

static int export_file(const char *in, const char *out, const cvt_options *o)
{
    pf c = {0};
    c.d.out = o ? o->diag : NULL;
    c.d.file = in;
    c.next_seq = PF_SEQ_COUNTERS + 1;
    c.hold_max = PF_HOLD_MAX;
    const char *hm = getenv("CVT_PERFETTO_HOLD_MAX");
    if (hm && atoi(hm) > 0)
        c.hold_max = (size_t)atoi(hm);
    char detail[256] = "";
    cap_result res = cap_reader_open(&c.r, in, detail, sizeof detail);
    if (res != CAP_OK) {
        cvt_error(&c.d, "%s", detail[0] ? detail : cap_result_message(res));
        return CVT_EXIT_INPUT;
    }
    c.buf = malloc(PF_BUF);
    c.gpu = calloc(CAP_MAX_TRACKS, sizeof *c.gpu);
    if (!c.buf || !c.gpu) {
        cvt_error(&c.d, "out of memory");
        free(c.buf);
        free(c.gpu);
        cap_reader_close(c.r);
        return CVT_EXIT_INPUT;
    }
    int to_stdout = strcmp(out, "-") == 0;
    c.f = to_stdout ? stdout : fopen(out, "wb");
    if (!c.f) {
        c.d.file = out;
        cvt_error(&c.d, "cannot create: %s", strerror(errno));
        free(c.buf);
        free(c.gpu);
        cap_reader_close(c.r);
        return CVT_EXIT_OUTPUT;
    }
    const char *base = strrchr(in, '/');
    const char *prog = cap_reader_meta_get(c.r, "program");
    seq_start(&c, &c.frames, PF_SEQ_FRAMES, PF_UUID_FRAMES, -1, PF_UUID_CPU,
              "Frames");
    process_track(&c, PF_SEQ_FRAMES, PF_UUID_CPU, PF_PID_CPU,
                  prog && *prog ? prog : base ? base + 1 : in);
    int rc = CVT_OK;
    for (;;) {
        cap_event ev;
        res = cvt_next_event(&c.d, c.r, &ev, W_DAMAGE, "exporting");
        if (res == CAP_DONE)
            break;
        if (res != CAP_OK) {
            rc = CVT_EXIT_INPUT;
            break;
        }
        if (on_event(&c, &ev)) {
            cvt_error(&c.d, "out of memory");
            rc = CVT_EXIT_INPUT;
            break;
        }
    }
    uint64_t unended = 0, orphans = 0;
    if (rc == CVT_OK && finish(&c, &unended, &orphans)) {
        cvt_error(&c.d, "out of memory");
        rc = CVT_EXIT_INPUT;
    }
    if (rc == CVT_OK)
        report(&c, unended, orphans);
    int werr = c.werr || (c.n && fwrite(c.buf, 1, c.n, c.f) != c.n);
    if (ferror(c.f))
        werr = 1;
    if (!to_stdout) {
        if (fclose(c.f) != 0)
            werr = 1;
    } else if (fflush(c.f) != 0) {
        werr = 1;
    }
    if (werr && rc == CVT_OK) {
        c.d.file = out;
        cvt_error(&c.d, "write failed: %s", strerror(errno));
        rc = CVT_EXIT_OUTPUT;
    }
    cvt_warn_summary(&c.d);
    for (size_t i = 0; i < c.nth; i++)
        seq_free(&c.th[i]);
    for (size_t t = 0; t < CAP_MAX_TRACKS; t++)
        seq_free(&c.gpu[t]);
    seq_free(&c.frames);
    free(c.th);
    free(c.gpu);
    free(c.counter_named);
    free(c.start);
    free(c.work);
    free(c.buf);
    cap_reader_close(c.r);
    return rc;
}

cap_result cvt_cap_to_perfetto(const char *in, const char *out,
                               const cvt_options *o)
{
    const cvt_slice *sl = o ? o->slice : NULL;
    if (!sl || sl->kind == CVT_SLICE_NONE)
        return (cap_result)export_file(in, out, o);
    /* --frames, --seconds, --slowest: the slice is cut into a temporary
     * capture (cvt_cap_to_cap, which keeps what belongs to its frames),
     * which is then exported */
    cvt_diag d = {.out = o->diag, .file = in};
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    size_t n = strlen(dir) + 40;
    char *tmp = malloc(n);
    if (!tmp) {
        cvt_error(&d, "out of memory");
        return CVT_EXIT_INPUT;
    }
    snprintf(tmp, n, "%s/capture_convert-slice-XXXXXX", dir);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        cvt_error(&d, "cannot create a temporary file in %s: %s", dir,
                  strerror(errno));
        free(tmp);
        return CVT_EXIT_OUTPUT;
    }
    close(fd);
    /* what the cut says names its output: OUT, not the temporary file */
    char *said = NULL;
    size_t nsaid = 0;
    FILE *m = o->diag ? open_memstream(&said, &nsaid) : NULL;
    cvt_options co = *o;
    co.format_major = 0;
    co.diag = m ? m : o->diag;
    cap_result rc = cvt_cap_to_cap(in, tmp, &co);
    if (m && fclose(m) == 0 && said) {
        size_t nt = strlen(tmp);
        for (const char *p = said, *q; *p; p = q + nt) {
            if (!(q = strstr(p, tmp))) {
                fputs(p, o->diag);
                break;
            }
            fwrite(p, 1, (size_t)(q - p), o->diag);
            fputs(out, o->diag);
        }
    }
    free(said);
    if (rc == CVT_OK) {
        cvt_options eo = *o;
        eo.slice = NULL;
        rc = (cap_result)export_file(tmp, out, &eo);
        if (rc != CAP_OK && rc != CAP_E_IO && rc != CAP_E_NOMEM)
            rc = CAP_E_IO; /* our own temporary capture failed */
    }
    unlink(tmp);
    free(tmp);
    return rc;
}
