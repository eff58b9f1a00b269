/*
 * cap_reader.h - read a capture file as a stream of events.
 *
 * The reader walks the file chunk by chunk, in constant memory (one block
 * at a time, plus the name table and per-thread open-scope stacks): it never
 * loads the whole file. It yields, in file order:
 *   CAP_EV_THREAD, CAP_EV_GPU_TRACK   declarations (before first use),
 *   CAP_EV_FRAME                      a CPU frame,
 *   CAP_EV_SCOPE                      a CPU scope, once closed (post-order:
 *                                     children before their parent), with
 *                                     its depth, its children's total time
 *                                     and the names of its ancestors,
 *   CAP_EV_GPU_SPAN                   a GPU span with its depth, parent and
 *                                     self time within its frame's tree,
 *   CAP_EV_COUNTER                    a counter sample.
 *
 * Times are nanoseconds since the capture's origin, on the CPU axis. GPU
 * spans carry their exact GPU-clock duration, and a CPU-axis position when
 * their track was calibrated.
 *
 * Damage: a chunk with a bad checksum is skipped and reported once as
 * CAP_E_CORRUPT; a file that ends without a footer yields every complete
 * chunk, then CAP_E_TRUNCATED once. After either, cap_reader_next may be
 * called again and goes on (CAP_DONE at the end). Any other error is final.
 *
 * Thread safety: one reader per thread; distinct readers are independent.
 *
 * Captures are written by capture.h (a program recording itself) or by
 * cap_writer.h (events with known timestamps: importers, tests).
 */
#ifndef CAP_READER_H
#define CAP_READER_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "cap_export.h"
#include "cap_limits.h"
#include "cap_result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cap_event_kind {
    CAP_EV_THREAD = 1,
    CAP_EV_GPU_TRACK,
    CAP_EV_FRAME,
    CAP_EV_SCOPE,
    CAP_EV_GPU_SPAN,
    CAP_EV_COUNTER
} cap_event_kind;

typedef struct cap_ev_thread {
    uint32_t tid;
    const char *name;       /* borrowed until the next cap_reader_next */
} cap_ev_thread;

typedef struct cap_ev_gpu_track {
    uint32_t track;
    const char *name;       /* borrowed until the next cap_reader_next */
    double period_ns;
} cap_ev_gpu_track;

typedef struct cap_ev_frame {
    uint64_t index;
    int64_t begin_ns;
    int64_t end_ns;
} cap_ev_frame;

typedef struct cap_ev_scope {
    uint32_t tid;
    uint32_t name;          /* name id: cap_reader_name gives its text */
    uint32_t depth;         /* 0 for a root scope */
    int64_t begin_ns;
    int64_t end_ns;
    int64_t children_ns;    /* sum of the direct children's durations */
    const uint32_t *stack;  /* name ids of the ancestors, root first,
                               `depth` entries; borrowed until the next
                               cap_reader_next */
} cap_ev_scope;

/* Duration of [begin_ns, end_ns): 0 when end_ns <= begin_ns, INT64_MAX when
 * the difference does not fit (times from a crafted file can be anywhere
 * in int64). */
static inline int64_t cap_duration_ns(int64_t begin_ns, int64_t end_ns)
{
    if (end_ns <= begin_ns)
        return 0;
    uint64_t d = (uint64_t)end_ns - (uint64_t)begin_ns; /* exact */
    return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
}

/* Self time: the duration of [begin_ns, end_ns) minus the time its
 * children cover (children_ns, e.g. cap_ev_scope.children_ns or the union
 * of a GPU span's children), never below 0 and never overflowing. The one
 * definition every reader of captures uses (the reader's GPU spans, the
 * analysis, the exporters). */
static inline int64_t cap_self_ns(int64_t begin_ns, int64_t end_ns,
                                  int64_t children_ns)
{
    int64_t d = cap_duration_ns(begin_ns, end_ns);
    if (children_ns <= 0)
        return d;
    return children_ns >= d ? 0 : d - children_ns;
}

typedef struct cap_ev_gpu_span {
    uint32_t track;
    uint32_t name;
    uint32_t depth;         /* within its frame's tree, 0 for a root */
    uint32_t parent_name;   /* name id of the parent, 0 for a root */
    uint64_t cpu_frame;     /* CPU frame that recorded the work */
    int measured;           /* 0: "not measured" (no times below) */
    int calibrated;         /* begin_ns/end_ns are on the CPU axis */
    int64_t duration_ns;    /* exact, from the GPU clock */
    int64_t self_ns;        /* duration minus the time covered by its
                               measured children (their union) */
    int64_t begin_ns;       /* CPU axis if calibrated, otherwise ns on the
                               GPU clock from an arbitrary origin */
    int64_t end_ns;
    const uint32_t *stack;  /* ancestors' name ids, root first */
} cap_ev_gpu_span;

typedef struct cap_ev_counter {
    uint32_t name;
    int64_t time_ns;
    double value;
} cap_ev_counter;

typedef struct cap_event {
    cap_event_kind kind;
    union {
        cap_ev_thread thread;
        cap_ev_gpu_track gpu_track;
        cap_ev_frame frame;
        cap_ev_scope scope;
        cap_ev_gpu_span gpu_span;
        cap_ev_counter counter;
    } u;
} cap_event;

/* Statistics the reader accumulates while it walks the file. */
typedef struct cap_reader_stats {
    uint64_t chunks;              /* chunks read whole and valid */
    uint64_t corrupt_chunks;      /* skipped for a bad checksum or encoding */
    uint64_t unknown_chunks;      /* skipped: type unknown to this reader */
    uint64_t scopes;              /* CAP_EV_SCOPE yielded */
    uint64_t frames;
    uint64_t gpu_spans;           /* measured spans yielded */
    uint64_t gpu_unmeasured;      /* spans yielded as not measured */
    uint64_t gpu_invalid;         /* spans the producer dropped as invalid */
    uint64_t gpu_untimed_frames;  /* frames whose GPU slot was in flight */
    uint64_t dropped_scopes;      /* scopes the producer dropped (full
                                     buffers) */
    uint64_t closed_at_end;       /* scopes open at close, closed by writer */
    uint64_t unnamed_ids;         /* distinct ids used without a name */
    uint64_t clock_backwards;     /* timestamps that went back, as recorded */
    uint64_t stray_ends;          /* scope ends the producer met with no
                                     scope open on their thread, dropped
                                     (format 1.1) */
    int has_footer;               /* the file ended with a valid footer */
    int truncated;                /* the file ended without one */
} cap_reader_stats;

typedef struct cap_reader cap_reader;

/* Open the capture at path and read its header and metadata.
 * Errors: CAP_E_IO (cannot open or read: missing file, directory, ...),
 * CAP_E_NOT_CAPTURE (empty file or wrong magic), CAP_E_VERSION (a newer
 * major version), CAP_E_TRUNCATED (the file ends inside the header),
 * CAP_E_CORRUPT (header checksum), CAP_E_NOMEM. On error *out is NULL and,
 * if detail is not NULL, a one-line explanation is copied there
 * (detail_size bytes at most, NUL-terminated). */
CAP_API cap_result cap_reader_open(cap_reader **out, const char *path,
                                   char *detail, size_t detail_size);

/* As cap_reader_open on an open, readable descriptor: a file, a pipe,
 * standard input (0) or a connected socket (a live capture, capture.h's
 * listen address). The reader owns fd from this call on, whatever it
 * returns: cap_reader_close (or a failed open) closes it.
 * On a stream (anything but a regular file) the reader reads front to
 * back and never seeks: it does not use the footer's index (names come
 * from the blocks, each of which names every id it uses; the footer, when
 * the stream has one, completes them), cap_reader_file_size returns 0,
 * and after a damaged chunk header it resynchronises on the bytes that
 * follow. cap_reader_next blocks until the next chunk has arrived whole;
 * a stream that ends without a footer yields every whole chunk, then
 * CAP_E_TRUNCATED.
 * Errors: as cap_reader_open (CAP_E_MISUSE for fd < 0). */
CAP_API cap_result cap_reader_open_fd(cap_reader **out, int fd, char *detail,
                                      size_t detail_size);

/* Free everything. Accepts NULL. Borrowed pointers die with it. */
CAP_API void cap_reader_close(cap_reader *r);

/* Fill *ev with the next event. Returns CAP_OK (ev filled), CAP_DONE (end
 * of the capture), CAP_E_CORRUPT or CAP_E_TRUNCATED (recoverable, see
 * above; ev not filled), or a final error (CAP_E_IO, CAP_E_NOMEM,
 * CAP_E_LIMIT). Pointers inside *ev are borrowed until the next call. */
CAP_API cap_result cap_reader_next(cap_reader *r, cap_event *ev);

/* The next events, several per call: fills ev[0..*n) with 1 <= *n <= max
 * events and returns CAP_OK, or returns what cap_reader_next would (CAP_DONE
 * or an error, with *n = 0). The events and their order are exactly those
 * of calling cap_reader_next *n times; a batch holds either one event of
 * any kind, or a run of CAP_EV_SCOPE events of one SCOPES section (each with
 * its own `stack`), so it costs one call per run instead of one per scope.
 * Pointers inside every event of the batch are borrowed until the next
 * call on r. An error found after some scopes of a run were decoded is
 * returned by the next call, after those scopes. Errors: those of
 * cap_reader_next, and CAP_E_MISUSE (r, ev or n NULL, or max 0). Calls
 * may be mixed with cap_reader_next. */
CAP_API cap_result cap_reader_next_batch(cap_reader *r, cap_event *ev,
                                         size_t max, size_t *n);

/* cap_reader_next_batch, with the ancestors of the batch's scopes (the
 * `stack` of its CAP_EV_SCOPE events) written into stacks[0 .. stacks_cap),
 * memory the caller owns: they stay valid after later calls, for as long
 * as the caller keeps that memory unchanged, so a program that hands
 * batches to another thread need not copy them. A run ends early (fewer
 * than max events) when stacks has no room for the next end's ancestors.
 * Other pointers in the events (a GPU span's stack, a thread's name) and
 * the stack of a batch of one event that is not part of a run may still
 * point into r: borrowed until the next call, as in cap_reader_next_batch.
 * The events and their order are those of cap_reader_next_batch. Errors:
 * those of cap_reader_next_batch, and CAP_E_MISUSE (stacks NULL, or
 * stacks_cap below 2 x CAP_MAX_DEPTH). Calls may be mixed with the other
 * two. */
CAP_API cap_result cap_reader_next_batch_into(cap_reader *r, cap_event *ev,
                                              size_t max, size_t *n,
                                              uint32_t *stacks,
                                              size_t stacks_cap);

/* A scope as cap_reader_next_scopes gives it: 40 bytes, its times in CPU
 * ticks, as the file stores them. begin and end are the ticks minus the
 * origin's tick (cap_reader_clock), as signed values; children is the
 * ticks its direct children took. cap_ticks_ns(begin, period) and
 * cap_ticks_ns(end, period), and cap_ticks_dur_ns(children, period), are
 * exactly the begin_ns, end_ns and children_ns the other calls report for
 * the scope (period: the run's cap_scope_run.period_ns). Its ancestors'
 * names, outermost first, are stacks[stack .. stack + depth) of the
 * stacks the call was given. */
typedef struct cap_scope_rec {
    int64_t begin, end;
    uint64_t children;
    uint32_t name;  /* as cap_ev_scope.name */
    uint32_t depth; /* its ancestors, 0 for a root scope */
    uint32_t stack; /* where its ancestors' names start in stacks */
    uint32_t reserved; /* 0 */
} cap_scope_rec;

/* What the scopes of one cap_reader_next_scopes call share. */
typedef struct cap_scope_run {
    uint32_t tid;       /* the thread they ran on */
    double period_ns;   /* ns per tick of their block (the one its clock
                           sample sets, else the initial one), also under
                           cap_reader_set_ticks */
    size_t stacks_used; /* the records' ancestors are all in stacks[0 ..
                           stacks_used) (the call may write scratch past
                           it, below stacks_cap) */
} cap_scope_run;

/* The next scopes, as compact records in ticks: when the next events are
 * scopes of a SCOPES section that an earlier call has started (the
 * section's first event comes from cap_reader_next or a batch call), fills
 * rec[0 .. *n) with 1 <= *n <= max of them, in the order the other calls
 * yield them, their ancestors' names into stacks[0 .. stacks_cap) (memory
 * the caller owns, as in cap_reader_next_batch_into; a run ends early when
 * it has no room for the next end's), *run with their thread and period,
 * and returns CAP_OK. Otherwise (the next event is of another kind, or
 * starts a section, or there is none, or an error was found) it returns
 * CAP_OK with *n = 0 and leaves everything to the next call of
 * cap_reader_next or a batch call, which yields that event or reports
 * that error (so a program calls this first, and one of the others when
 * it gets no scope). Nothing here converts a tick: a program that hands
 * scopes to another thread leaves the conversion to that thread. The
 * scopes count in the statistics as the others' do. Errors: CAP_E_MISUSE
 * (r, rec, n, stacks or run NULL, max 0, or stacks_cap below 2 x
 * CAP_MAX_DEPTH). Calls may be mixed with the other three. */
CAP_API cap_result cap_reader_next_scopes(cap_reader *r, cap_scope_rec *rec,
                                          size_t max, size_t *n,
                                          uint32_t *stacks, size_t stacks_cap,
                                          cap_scope_run *run);

/* Whether cap_reader_next_scopes writes its records with streaming
 * (non-temporal) stores, for a program that hands them to another
 * thread: each record's line goes to memory without being read into this
 * core's cache first, so a buffer the other thread read before is not
 * fetched back from it line by line (on a guest whose two vCPUs were 0.5
 * us apart, two threads read a capture 1.1x faster; docs/PERFORMANCE.md).
 * The call makes a store fence before it returns, so the records are
 * ordered before whatever the program writes next (a mutex or an atomic
 * release handing them over). Reading the records back on the same
 * thread is correct but slower: leave it off (the default) there. Where
 * the processor has no such stores (other than x86-64, or another
 * compiler than GCC and Clang) records are written as usual. Takes effect
 * from the next call. Errors: CAP_E_MISUSE (r NULL). */
CAP_API cap_result cap_reader_stream_records(cap_reader *r, int on);

/* llround(x) for x in [0, 2^52), without the library call: x + (1/2 -
 * 2^-54), the largest double below a half, truncated
 * (libcapture/src/reader/round_ns.h says why). Internal to the reader and
 * the conversions below; 1/2 - 2^-54 written exactly, with no
 * hexadecimal float (C++). */
static inline int64_t cap__round_pos(double x)
{
    return (int64_t)(x + (0.5 - 1.0 / 18014398509481984.0));
}

/* The bound below which ticks (compared as unsigned) times period_ns is in
 * [0, 2^51], where cap__round_pos applies: a program converting many
 * ticks of one period tests each with one compare. 0 when period_ns is
 * outside [2^-11, 2^60]. Internal to the reader and its analysis. */
static inline uint64_t cap__ticks_lim(double period_ns)
{
    return period_ns >= 1.0 / 2048 && period_ns <= 1152921504606846976.0
               ? (uint64_t)(2251799813685248.0 / period_ns)
               : 0;
}

/* llround(x), halves away from zero, without the library call where x is
 * in [0, 2^52). The reader's rounding of ticks x period; used by the two
 * conversions below. */
static inline int64_t cap__round_ns(double x)
{
    const double two52 = 4503599627370496.0; /* 2^52 */
    if (x >= 0 && x < two52) /* the usual case */
        return cap__round_pos(x);
    double a = x < 0 ? -x : x;
    if (!(a < two52)) /* integral already (or NaN): rare */
        return (int64_t)llround(x);
    if (a < 0.5)
        return 0;
    int64_t k = (int64_t)(a + 0.5);
    if ((double)k - a > 0.5) /* a + 0.5 was rounded up to the next integer;
                                exact subtraction (Sterbenz) */
        k--;
    return x < 0 ? -k : k;
}

/* A time of a cap_scope_rec (ticks since the origin's tick) in ns, as the
 * reader reports it: the ticks themselves when period_ns is exactly 1.0,
 * else ticks x period_ns rounded to the nearest (halves away from 0). */
static inline int64_t cap_ticks_ns(int64_t ticks, double period_ns)
{
    return period_ns == 1.0 ? ticks : cap__round_ns((double)ticks * period_ns);
}

/* A duration in ticks (cap_scope_rec.children) in ns, as the reader
 * reports it (cap_ev_scope.children_ns): as cap_ticks_ns, 0 staying 0. */
static inline int64_t cap_ticks_dur_ns(uint64_t ticks, double period_ns)
{
    return period_ns == 1.0 || ticks == 0
               ? (int64_t)ticks
               : cap__round_ns((double)ticks * period_ns);
}

/* cap_ticks_ns and cap_ticks_dur_ns for a period_ns other than 1.0, with
 * lim = cap__ticks_lim(period_ns) computed once for many ticks: below lim
 * the product is in cap__round_pos's range and takes it alone. Internal to
 * the reader and its analysis (one conversion for both). */
static inline int64_t cap__ticks_ns_lim(int64_t ticks, double period_ns,
                                        uint64_t lim)
{
    return (uint64_t)ticks < lim ? cap__round_pos((double)ticks * period_ns)
                                 : cap__round_ns((double)ticks * period_ns);
}

static inline int64_t cap__ticks_dur_ns_lim(uint64_t ticks, double period_ns,
                                            uint64_t lim)
{
    return ticks == 0     ? 0
           : ticks < lim ? cap__round_pos((double)ticks * period_ns)
                         : cap__round_ns((double)ticks * period_ns);
}

/* A one-line explanation of the last error returned (with the byte offset
 * where it was found), or "" when none. Borrowed from r. */
CAP_API const char *cap_reader_detail(const cap_reader *r);

/* The text of name id `id` as far as the file has defined it so far (every
 * block defines the ids it uses, so any id in an event already yielded is
 * named unless the file is damaged or foreign). NULL when unnamed.
 * Borrowed from r, valid until cap_reader_close. */
CAP_API const char *cap_reader_name(const cap_reader *r, uint32_t id);

/* Source location of name id `id`, or NULL / 0 when none was recorded. */
CAP_API const char *cap_reader_name_file(const cap_reader *r, uint32_t id);
CAP_API uint32_t cap_reader_name_line(const cap_reader *r, uint32_t id);

/* Name flags (format 1.1), as in cap_writer.h and capture.h. */
#ifndef CAP_NAME_WAIT
#define CAP_NAME_WAIT 0x1u        /* time spent blocked, not working */
#define CAP_NAME_FLAGS_KNOWN 0x1u
#endif

/* The flags of name id `id` (CAP_NAME_WAIT, ...) as far as the file has
 * declared them so far; 0 for an id without flags, an unknown id, a 1.0
 * file. A block declares the flags of the names it uses before their
 * events, so the flags of an id in an event already yielded are known.
 * Bits this reader does not know are returned as they are. */
CAP_API uint32_t cap_reader_name_flags(const cap_reader *r, uint32_t id);

/* The largest name id defined or used so far. */
CAP_API uint32_t cap_reader_max_name_id(const cap_reader *r);

/* Thread and GPU track names known so far (NULL when undeclared). */
CAP_API const char *cap_reader_thread_name(const cap_reader *r, uint32_t tid);
CAP_API const char *cap_reader_track_name(const cap_reader *r, uint32_t track);

/* Metadata: count and the i-th key/value (borrowed from r). */
CAP_API size_t cap_reader_meta_count(const cap_reader *r);
CAP_API const char *cap_reader_meta_key(const cap_reader *r, size_t i);
CAP_API const char *cap_reader_meta_value(const cap_reader *r, size_t i);
/* The value of `key`, or NULL. */
CAP_API const char *cap_reader_meta_get(const cap_reader *r, const char *key);

/* The format version of the file. */
CAP_API void cap_reader_version(const cap_reader *r, unsigned *major,
                                unsigned *minor);

/* Wall-clock time of the capture's origin, ns since 1970 (0 if unknown). */
CAP_API int64_t cap_reader_origin_unix_ns(const cap_reader *r);

/* The clock source recorded by the producer ("tsc", "monotonic", ...). */
CAP_API const char *cap_reader_clock_source(const cap_reader *r);

/* The capture's clock as its ORIGIN section states it: the initial ns per
 * CPU tick (the period before any CLOCK sample), the CPU tick at the
 * origin and CLOCK_MONOTONIC at that tick (0 when unknown). Any pointer
 * may be NULL; with r NULL every value is 0. With these, the clock
 * samples (cap_reader_block_clock) and the ticks of cap_reader_set_ticks,
 * a program re-writing a capture (capture_convert) gives its writer the
 * same clock, and every time reads back to the same nanosecond. */
CAP_API void cap_reader_clock(const cap_reader *r, double *period_ns,
                              uint64_t *origin_tick, uint64_t *origin_mono_ns);

/* The clock sample (a CLOCK section: CPU tick and CLOCK_MONOTONIC ns read
 * together) that set the period of the block the last event came from:
 * returns 1 and fills *tick and *mono_ns (either may be NULL), or returns
 * 0 (and sets them to 0) when that block is converted with the initial
 * period of cap_reader_clock. Only samples that count are reported (one
 * at least 100 ms after the origin, format-spec "The period of a block").
 * Before the first event, and with r NULL: 0. */
CAP_API int cap_reader_block_clock(const cap_reader *r, uint64_t *tick,
                                   uint64_t *mono_ns);

/* With on != 0, the CPU times of the events (scopes' begin_ns, end_ns and
 * children_ns, frames' begin_ns and end_ns, counters' time_ns) are
 * reported in CPU ticks, not nanoseconds: each is the tick minus the
 * origin's tick (cap_reader_clock), reinterpreted as a signed 64-bit
 * integer, with no period applied, so the file's ticks are given back
 * exactly (origin_tick + (uint64_t)value). GPU spans are unchanged (their
 * times stay nanoseconds, on the CPU axis when calibrated). Converting a
 * value to what the reader reports otherwise is the format's own rule:
 * the value itself when the block's period is exactly 1.0, else
 * llround(value x period), the period being the initial one or the block's
 * sample's (mono_ns - origin_mono_ns) / (tick - origin_tick). Call before
 * the first cap_reader_next (or cap_reader_next_batch).
 * Errors: CAP_E_MISUSE (r NULL, or events were already read). */
CAP_API cap_result cap_reader_set_ticks(cap_reader *r, int on);

/* The scopes open around the scope the last call of cap_reader_next
 * yielded: its ancestors, outermost first (the names are its event's
 * `stack`). Fills begin[0 .. min(depth, max)) with their begin times and
 * children[0 .. min(depth, max)) with the time their direct children took
 * so far (this scope included, as for cap_ev_scope.children_ns), and
 * returns the scope's depth; either array may be NULL (max 0 to ask for
 * the depth only). The times are in the units of the event: ns, or ticks
 * under cap_reader_set_ticks, converted as the scope's own are. Returns 0
 * for a root scope, after an event of another kind, after a
 * cap_reader_next_batch that yielded more than one event, and with r NULL.
 * A scope is yielded at its end, after its children; this tells a program
 * that re-writes a capture in the order it was recorded (capture_convert)
 * where the scopes around it began, before they end. */
CAP_API size_t cap_reader_scope_ancestors(const cap_reader *r, int64_t *begin,
                                          int64_t *children, size_t max);

/* The GPU ticks (of its track's clock, cap_ev_gpu_track.period_ns each)
 * of the GPU span the last call of cap_reader_next yielded: returns 1 and
 * fills *begin_tick and *end_tick (either may be NULL) for a measured
 * span; returns 0 (and sets them to 0) for a span not measured, after an
 * event of another kind, and with r NULL. With the track's calibration
 * (cap_reader_track_calibration) they give the span's times exactly as
 * the reader converts them. */
CAP_API int cap_reader_gpu_span_ticks(const cap_reader *r,
                                      uint64_t *begin_tick,
                                      uint64_t *end_tick);

/* The calibration of GPU track `track` in force for the spans read so far
 * (the latest GPU_CAL section: a GPU tick and the CPU tick read with it):
 * returns 1 and fills *gpu_tick and *cpu_tick (either may be NULL), or
 * returns 0 (and sets them to 0) when the track was not calibrated yet,
 * for a track id past CAP_MAX_TRACKS, and with r NULL. */
CAP_API int cap_reader_track_calibration(const cap_reader *r, uint32_t track,
                                         uint64_t *gpu_tick,
                                         uint64_t *cpu_tick);

/* The stated maximum error, in ns, of that calibration (the GPU_CAL
 * section's deviation_ns, informational: readers place spans without it);
 * 0 when the track was not calibrated yet, for a track id past
 * CAP_MAX_TRACKS, and with r NULL. */
CAP_API uint64_t cap_reader_track_calibration_deviation(const cap_reader *r,
                                                        uint32_t track);

/* Skip events of the kinds in `mask` (bits 1u << CAP_EV_FRAME, ...) without
 * decoding them: their sections are stepped over by length. Declarations,
 * names and statistics are still read. For a fast first pass (frames only)
 * before a full one. Call before the first cap_reader_next. */
CAP_API void cap_reader_set_filter(cap_reader *r, unsigned mask);

/* Yield frames only, fast: as cap_reader_set_filter with every kind but
 * CAP_EV_FRAME (and the declarations) masked, and, when the file ends with
 * a valid footer, each block is decompressed only as far as it takes to
 * hold the frames the footer's block index gives it (frames come first in
 * a block), so a first pass that collects frame times costs a fraction of
 * a full one. A format 3.1 file whose footer lists every block's frames
 * (FRAME_LIST, matching the block index) gives them from that list and
 * reads no block at all (the pass then costs the footer's read: 12 ms
 * for 100 million scopes where it took 103-132; docs/PERFORMANCE.md). A
 * file without a valid footer (truncated, damaged) is read block by block
 * whole, with the same frames as a result. Declarations and statistics after a
 * block's frames are then not read: use it for frames only. The frames of
 * a list are those of the blocks as written: a block damaged since still
 * gives its frames, where reading the blocks skips them (a full read then
 * counts the block in cap_reader_get_stats' corrupt_chunks); a caller that
 * needs the readable blocks' frames exactly uses
 * cap_reader_frames_only_blocks (cap_reader_frames_listed says whether a
 * list was used). Call before the first cap_reader_next. Errors:
 * CAP_E_MISUSE (r NULL). */
CAP_API cap_result cap_reader_frames_only(cap_reader *r);

/* As cap_reader_frames_only, reading the blocks even when the footer
 * lists their frames. Errors: CAP_E_MISUSE (r NULL). */
CAP_API cap_result cap_reader_frames_only_blocks(cap_reader *r);

/* 1 when cap_reader_frames_only gives the frames from the footer's list
 * (no block is read), 0 otherwise (no list, the list disagreed with the
 * block index, cap_reader_frames_only_blocks, or r NULL). */
CAP_API int cap_reader_frames_listed(const cap_reader *r);

/* Statistics so far; final once cap_reader_next returned CAP_DONE. */
CAP_API const cap_reader_stats *cap_reader_get_stats(const cap_reader *r);

/* Bytes of the file consumed so far and its size (for progress; the size
 * is 0 on a stream). */
CAP_API uint64_t cap_reader_offset(const cap_reader *r);
CAP_API uint64_t cap_reader_file_size(const cap_reader *r);

#ifdef __cplusplus
}
#endif
#endif
