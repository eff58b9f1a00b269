/*
 * capture.h - record a frame profile from a running program.
 *
 * Quick use:
 *
 *     #include <capture/capture.h>
 *     cap_open("run.cap", NULL);            // once, at start
 *     CAP_THREAD("main");                   // name each recording thread
 *     for (;;) {
 *         CAP_FRAME_MARK();                 // one boundary per frame
 *         { CAP_SCOPE("update"); update(); }        // ends with its block
 *         CAP_BEGIN("render"); render(); CAP_END(); // or explicit pairs
 *         CAP_COUNTER("rss_mib", rss_mib());
 *     }
 *     cap_close();                          // footer: the file is complete
 *
 * Which writer: this header, the producer, is for a program measuring
 * itself: it takes timestamps, buffers per thread and writes from a thread
 * of its own, and every macro compiles out. cap_writer.h, the explicit
 * writer it uses underneath, is for events that already have timestamps
 * (importers, converters, tests that need exact values); one thread, no
 * clock, no macros.
 *
 * Model: one capture per process at a time (the producer's registry is the
 * only process-wide state of libcapture). Each recording thread owns a
 * buffer: a scope costs two clock reads and two 16-byte stores, with no
 * lock and no allocation. A writer thread turns full or aged buffers into
 * compressed blocks off the hot path, at least every flush interval, so a
 * crash loses at most that interval. When the writer cannot keep up, the
 * producer drops scopes and counts them (the count is written into the
 * file): memory stays bounded and the program never waits.
 *
 * Errors never stop the host program: a failing write stops the recording
 * cleanly, is logged once on stderr (or to cap_set_log's callback) and is
 * reported by cap_status() and cap_close(). SIGPIPE and SIGXFSZ raised by
 * a write are turned into that error, and a pipe or socket that takes no
 * byte for stall_timeout_ms fails it too, so nothing blocks forever.
 *
 * A program that dies (a crash, SIGKILL, abort) leaves a file that reads
 * as truncated and holds everything recorded more than one flush interval
 * before: frames that had ended, scopes that had closed. So does a
 * program that exits without cap_close(): no atexit handler is installed.
 * docs/RELIABILITY.md says how each of these promises is tested.
 *
 * Compile with -DCAP_DISABLE and every CAP_ macro expands to nothing and
 * every function below becomes an inline no-op (see the end of this
 * header): a shipped build carries no instrumentation and needs no
 * library, so it links without -lcapture.
 */
#ifndef CAP_CAPTURE_H
#define CAP_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "cap_export.h"
#include "cap_record.h"
#include "cap_result.h"
#include "cap_writer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How to record. Zero-initialise; zero fields take the defaults beside
 * them. Environment variables read at open override the fixed window:
 * CAP_SKIP_SECONDS and CAP_RECORD_SECONDS; the device sampler:
 * CAP_SAMPLE_DEVICE (0 or 1) and CAP_SAMPLE_PERIOD_MS; and flight mode:
 * CAP_FLIGHT_SECONDS, CAP_FLIGHT_HITCH, CAP_FLIGHT_DIR and
 * CAP_FLIGHT_MAX_MIB. */
typedef struct cap_capture_options {
    const cap_meta_kv *meta;     /* extra metadata, copied (program, build,
                                    machine, start time and clock source are
                                    filled in when absent) */
    size_t meta_count;
    size_t buffer_events;        /* events per thread buffer; default 16384
                                    (256 KiB) */
    unsigned buffers_per_thread; /* buffers a thread may fill before it
                                    drops; default 64 (16 MiB with the
                                    default size), allocated only as the
                                    writer falls behind: the slack that
                                    lets a thread record 20 million
                                    scopes/s while the writer waits for
                                    a core */
    unsigned flush_interval_ms;  /* the writer drains every buffer at least
                                    this often; default 100 */
    size_t flush_bytes;          /* ...and writes a block once this many raw
                                    bytes are pending; default 1 MiB */
    int zstd_level;              /* default 1: level 3 costs the writer
                                    thread up to twice the CPU for
                                    files about as small */
    double skip_seconds;         /* fixed window: ignore events in the first
                                    S seconds after open (default 0) */
    double record_seconds;       /* ...then record D seconds and close the
                                    file by itself (0: until cap_close) */
    int force_monotonic;         /* use CLOCK_MONOTONIC even when an
                                    invariant cycle counter exists */
    unsigned stall_timeout_ms;   /* a pipe or socket sink (cap_open_fd) that
                                    takes no byte for this long fails the
                                    capture with CAP_E_IO; default 5000.
                                    A live client (listen) that receives
                                    less than 64 KiB in this long while
                                    bytes wait for it (its queue and its
                                    kernel send buffer) is disconnected */
    int sample_device;           /* 1: the writer thread samples the
                                    device's own evidence as counters (CPU
                                    clock per cluster, thermal zones,
                                    battery power, the process's RSS and
                                    CPU time, GPU clock, temperature and
                                    power from sysfs or NVML); see
                                    docs/EVIDENCE.md. Env CAP_SAMPLE_DEVICE=1
                                    (or 0) overrides. Default 0 */
    unsigned sample_period_ms;   /* ...every this many ms; default 100, env
                                    CAP_SAMPLE_PERIOD_MS overrides */
    const char *listen;          /* "ADDR:PORT": also serve the capture to
                                    TCP clients (capture_remote); NULL: no
                                    socket (the default). The environment
                                    variable CAP_LISTEN overrides it. An
                                    empty ADDR means 127.0.0.1: reach it
                                    from another machine through an ssh
                                    tunnel; 0.0.0.0 (every interface, a
                                    warning logged) lets anyone who can
                                    reach the port read the capture. No
                                    authentication: docs/LIVE.md */
    size_t listen_queue_bytes;   /* bytes queued per live client before
                                    blocks are dropped for it (and counted
                                    in its stream); default 8 MiB */
    unsigned format_major;       /* the capture format written (file and
                                    live clients): 0 (default) or 4
                                    writes 4.0: groups of blocks (names
                                    listed once a group, each group one
                                    zstd frame flushed at every block, at
                                    most 4 s a group), about 1.94 bytes a
                                    scope in a 60 fps game's 100 ms
                                    blocks (3.1: 4.33); every block is
                                    still flushed whole, so a killed
                                    program keeps what 3.1 keeps, but a
                                    damaged block costs the rest of its
                                    group; readers before 4.0 refuse it;
                                    flight mode writes 3.1 instead. 3
                                    writes 3.1 (3.0 with the frames
                                    listed in the footer), which
                                    range-codes the scopes (about a fifth
                                    smaller than 2.0 on varied timings,
                                    read in about 1.1x 2.0's time;
                                    readers before 3.0 refuse it). Coding
                                    scopes costs ~1.2x 2.0's time on the
                                    writer thread (1.05x in a 60 fps
                                    game's blocks), never on the
                                    recording threads; while that thread
                                    is behind (a quarter of a thread's
                                    buffers waiting) it codes scopes as
                                    2.0 does, inside the 3.x or 4.0 file.
                                    2 writes 2.0; 1 writes 1.1 for readers
                                    of 1.x. Other values: CAP_E_MISUSE.
                                    capture_convert --format-version
                                    re-saves a capture in any of them */
    /* Flight mode (docs/FLIGHT.md): keep the last flight_seconds of the
     * capture in memory, write nothing until a dump, and write each dump
     * (cap_flight_dump, a hitch, a crash) as a complete capture file. */
    double flight_seconds;       /* N > 0: flight mode, keeping at least
                                    the last N seconds; 0 (default): record
                                    to the file. Env CAP_FLIGHT_SECONDS
                                    overrides (0 turns it off) */
    double flight_hitch;         /* K > 1: a frame longer than K times the
                                    median frame of the last 2 s is a hitch:
                                    dumped with the N s before it and the
                                    N/4 s after it, at most one hitch dump
                                    every N s (the rest are counted and
                                    logged); 0 (default): none. Env
                                    CAP_FLIGHT_HITCH overrides */
    const char *flight_dir;      /* folder of the dumps named by the ring
                                    (flight-<UTC time>-f<frame>-<why>.cap);
                                    default: the folder of cap_open's path
                                    ("." with cap_open_fd or no path).
                                    Env CAP_FLIGHT_DIR overrides */
    size_t flight_max_bytes;     /* the ring's blocks never take more
                                    memory than this; when a burst would
                                    pass it the oldest blocks go first
                                    (counted: cap_flight_get_stats).
                                    Default 64 MiB, at least 1 MiB; env
                                    CAP_FLIGHT_MAX_MIB overrides */
} cap_capture_options;

/* The flight ring's counters (cap_flight_get_stats). */
typedef struct cap_flight_stats {
    double seconds;           /* N, the window kept; 0 when not in flight
                                 mode */
    uint64_t bound_bytes;     /* the ring's bound (flight_max_bytes) */
    uint64_t bytes;           /* bytes of blocks held now */
    uint64_t bytes_peak;      /* the most held at once */
    uint64_t blocks;          /* blocks held now */
    uint64_t evicted_blocks;  /* blocks dropped, oldest first, to keep the
                                 bound (a burst), not for their age */
    uint64_t dumps;           /* dumps written whole */
    uint64_t dump_failures;   /* dumps that could not be written (logged) */
    uint64_t hitches;         /* hitches seen */
    uint64_t hitches_skipped; /* ...not dumped: within N s of a hitch dump */
    double last_dump_ms;      /* the writer thread's time on the last dump */
} cap_flight_stats;

/* Recording statistics (cap_get_stats). */
typedef struct cap_producer_stats {
    uint64_t events;          /* scope begin/end events recorded */
    uint64_t dropped_scopes;  /* scopes dropped because buffers were full */
    uint64_t blocks;          /* blocks written */
    uint64_t bytes;           /* bytes written to the file */
    uint64_t frames;          /* frames written to the file */
} cap_producer_stats;

#ifndef CAP_DISABLE

/* Open the process's capture on `path` (created or truncated) and start
 * recording. Writes the file header at once, so an unwritable path fails
 * here. opt may be NULL.
 * With a listen address (opt->listen or CAP_LISTEN), the capture is also
 * served on that TCP address, to any number of clients up to 8, each of
 * which gets a complete capture stream from the moment it connects (see
 * docs/LIVE.md); path may then be NULL (the socket alone). An address that
 * cannot be listened on is logged (one line) and recording goes on to the
 * file; with path NULL nothing is recorded and CAP_E_IO is returned.
 * In flight mode (flight_seconds, CAP_FLIGHT_SECONDS) path is not created:
 * it names the default folder of the dumps, and may be NULL; the ring
 * also installs handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT
 * (it writes its dump, then runs the handler found at open, or the
 * default action), removed by cap_close (docs/FLIGHT.md).
 * Errors: CAP_E_MISUSE (a capture is already open, bad option), CAP_E_IO
 * (path cannot be created or written, or in flight mode the dump folder
 * cannot be written; logged), CAP_E_NOMEM. */
CAP_API cap_result cap_open(const char *path, const cap_capture_options *opt);

/* As cap_open on an open, writable descriptor; never closed by libcapture.
 * A listen address works as with cap_open. In flight mode fd is not
 * written (the dumps go to flight_dir, default "."). */
CAP_API cap_result cap_open_fd(int fd, const cap_capture_options *opt);

/* Stop recording, drain every thread's buffer, write the footer and close
 * the file. Threads should stop recording first: events racing with close
 * are discarded. A scope still open ends at the moment of the call and is
 * counted as closed at end (readers warn: its time is cut short). Returns the first error met while recording (CAP_E_IO,
 * CAP_E_NOMEM) or CAP_OK; CAP_E_MISUSE when no capture is open. */
CAP_API cap_result cap_close(void);

/* The TCP port the open capture is served on (the one picked when the
 * listen address asked for port 0), or 0 when it is not served. */
CAP_API int cap_listen_port(void);

/* CAP_OK while recording normally; the error that stopped recording
 * otherwise; CAP_E_MISUSE when no capture is open. */
CAP_API cap_result cap_status(void);

/* Counters of the current (or last closed) capture. */
CAP_API void cap_get_stats(cap_producer_stats *out);

/* Flight mode: ask the writer thread to write the N seconds before the
 * call (up to the last frame boundary before it; written within a flush
 * interval) as a complete capture at `path` (copied; created or
 * truncated), or, with path NULL, as a new file in the dump folder named
 * after the time and the frame. Returns at once: the caller never waits
 * for the file; the
 * result is logged (one line) and counted (cap_flight_get_stats: dumps,
 * dump_failures), and cap_close writes the requests still waiting first.
 * Errors: CAP_E_MISUSE (no capture open, or not in flight mode),
 * CAP_E_LIMIT (8 requests already waiting), CAP_E_NOMEM. */
CAP_API cap_result cap_flight_dump(const char *path);

/* The flight ring's counters now (zeros, and CAP_E_MISUSE, when no
 * capture in flight mode is open). Thread-safe. */
CAP_API cap_result cap_flight_get_stats(cap_flight_stats *out);

/* Route libcapture's log lines (one line, no newline) to fn instead of
 * stderr; fn(NULL) restores stderr. fn may be called from the writer
 * thread. */
CAP_API void cap_set_log(void (*fn)(void *user, const char *line), void *user);

/* Process-wide id for a scope or counter name; the same text always gives
 * the same id. `name` is copied. file/line may be NULL/0; the first
 * registration's are copied too and go into the capture's name table
 * (cap_reader_name_file, cap_reader_name_line), as CAP_SCOPE's call site
 * does. Returns 0 when out of memory or name is NULL. Thread-safe. */
CAP_API uint32_t cap_name_register(const char *name, const char *file,
                                   uint32_t line);

/* As cap_name_register, and add `flags` to the name's flags. CAP_NAME_WAIT
 * tags the name as a wait: time spent blocked (a lock, a queue, a fence,
 * vsync), not working; reports keep waits apart from work. Flags belong to
 * the name, not to the call: a text tagged once is tagged everywhere in
 * the capture from then on, and flags are never removed. Unknown bits are
 * ignored. Returns the id, 0 as cap_name_register does. Thread-safe. */
CAP_API uint32_t cap_name_register_flags(const char *name, const char *file,
                                         uint32_t line, uint32_t flags);

/* ---- scopes by id ------------------------------------------------------
 * For names known only at run time (assets, levels, script functions):
 * intern each name once with cap_name_register, keep the id, and open
 * scopes by id. That costs what a literal CAP_SCOPE costs, where
 * CAP_SCOPE(runtime_string) compares the string with the call site's last
 * name on every call and takes the registry lock whenever it changes
 * (docs/NAMES.md has the figures).
 *
 *     uint32_t id = cap_name_register(asset->name, NULL, 0);   // at load
 *     { CAP_SCOPE_ID(id); load(asset); }                        // hot
 *     CAP_BEGIN_ID(id); load(asset); CAP_END();                 // or pairs
 *     cap_scope_begin(id); load(asset); cap_scope_end();        // or calls
 *
 * An id that cap_name_register did not return (0 after a failure, a
 * made-up number) is still recorded, so its end closes it: as the name
 * "<invalid scope id>" when out of range, as an unnamed id (every reader
 * warns) when in range but never registered. */

/* Open a scope named by `id` on the calling thread (CAP_BEGIN_ID as a
 * function, for bindings that cannot use macros). Never fails: when the
 * thread's buffers are full the scope is dropped and counted. */
CAP_API void cap_scope_begin(uint32_t id);

/* Close the calling thread's innermost open scope (CAP_END as a function).
 * An end with no scope open is counted in the file's stray_ends statistic
 * and read back as a warning. */
CAP_API void cap_scope_end(void);

/* Name the calling thread in the capture and give it its buffer. A thread
 * that records without registering is registered as "thread <tid>".
 * Errors: CAP_E_MISUSE (no capture open), CAP_E_NOMEM. */
CAP_API cap_result cap_thread_register(const char *name);

/* Flush and release the calling thread's buffer (also done at thread exit). */
CAP_API void cap_thread_unregister(void);

/* Frame boundaries: cap_frame_mark ends the frame in progress (if any) and
 * begins the next; or use cap_frame_begin / cap_frame_end pairs. Any thread
 * may call them, one thread should. */
CAP_API void cap_frame_mark(void);
CAP_API void cap_frame_begin(void);
CAP_API void cap_frame_end(void);

/* Index of the frame in progress (the last begun), or UINT64_MAX before
 * the first. */
CAP_API uint64_t cap_frame_current(void);

/* Sample counter `name` (an id from cap_name_register) now. */
CAP_API void cap_counter(uint32_t name, double value);

/* Create a GPU track (one per queue) whose ticks last period_ns each.
 * Returns its id, or UINT32_MAX on error (no capture, bad period, too many
 * tracks). */
CAP_API uint32_t cap_gpu_track(const char *name, double period_ns);

/* GPU tick `gpu_tick` of `track` was sampled together with CLOCK_MONOTONIC
 * `mono_ns` (calibrated timestamps), within deviation_ns. */
CAP_API void cap_gpu_calibrate(uint32_t track, uint64_t gpu_tick,
                               uint64_t mono_ns, uint64_t deviation_ns);

/* Record one CPU frame's GPU spans on track (see cap_writer_gpu_frame:
 * invalid pairs are dropped and counted, never clamped). Copies spans. */
CAP_API void cap_gpu_frame(uint32_t track, uint64_t cpu_frame,
                           const cap_gpu_span *spans, size_t n);

/* Count GPU frames that went untimed and spans dropped before submission. */
CAP_API void cap_gpu_untimed(uint32_t track, uint64_t untimed_frames,
                             uint64_t invalid_spans);

/* The capture clock now, in ticks, and its conversion from CLOCK_MONOTONIC
 * nanoseconds (0 when no capture is open). */
CAP_API uint64_t cap_now(void);
CAP_API uint64_t cap_tick_from_mono_ns(uint64_t mono_ns);

/* ---- the hot path (internal, inline; use the macros) ------------------ */

typedef struct cap__head {
    cap__rec *pos; /* next free record; published with release order */
    cap__rec *end; /* pos == end sends the next event to the slow path */
} cap__head;

/* Exported for the inline code above the library, shared or static. */
extern CAP_API __thread cap__head *cap__tls
    __attribute__((tls_model("initial-exec")));
extern CAP_API int cap__clock_is_counter; /* set at open: 1 when a cycle
                                             counter */

/* A registered name: immutable once published, owned by the registry and
 * never freed (names live as long as the process). */
typedef struct cap__name {
    uint32_t id;
    uint32_t flags;   /* written under the registry lock only */
    const char *text; /* the interned copy */
} cap__name;

/* A CAP_SCOPE call site's cache (static, zero-initialised): `id` for a
 * string literal, `entry` (the last name seen, checked by content) for any
 * other string. */
typedef struct cap__site {
    uint32_t id;
    const cap__name *entry;
} cap__site;

CAP_API void cap__emit_slow(uint32_t word, uint64_t tick);
CAP_API uint32_t cap__site_resolve(cap__site *site, const char *name,
                                   const char *file, uint32_t line,
                                   uint32_t flags, int literal);
CAP_API uint32_t cap__invalid_id(void);
CAP_API uint64_t cap__now_monotonic(void);

static inline uint64_t cap__now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_expect(cap__clock_is_counter, 1)) {
        uint32_t lo, hi;
        __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
        return ((uint64_t)hi << 32) | lo;
    }
#elif defined(__aarch64__)
    if (__builtin_expect(cap__clock_is_counter, 1)) {
        uint64_t v;
        __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
        return v;
    }
#endif
    return cap__now_monotonic();
}

static inline void cap__emit(uint32_t word)
{
    cap__head *h = cap__tls;
    cap__rec *p = __atomic_load_n(&h->pos, __ATOMIC_RELAXED);
    uint64_t t = cap__now();
    if (__builtin_expect(p >= __atomic_load_n(&h->end, __ATOMIC_RELAXED), 0)) {
        cap__emit_slow(word, t);
        return;
    }
    p->tick = t;
    p->word = word;
    __atomic_store_n(&h->pos, p + 1, __ATOMIC_RELEASE);
}

/* The id of `name` at a call site. A string literal (known at compile
 * time: its text cannot change) costs one load once resolved. Any other
 * string is compared, by content, with the name the site saw last: equal,
 * the cached id; different (another string, or new contents under the same
 * pointer), the registry resolves it (a lock and a hash lookup). */
static inline uint32_t cap__site_id(cap__site *site, const char *name,
                                    const char *file, uint32_t line,
                                    uint32_t flags, int literal)
{
    if (literal) {
        uint32_t id = __atomic_load_n(&site->id, __ATOMIC_RELAXED);
        if (__builtin_expect(id != 0, 1))
            return id;
    } else {
        const cap__name *e = __atomic_load_n(&site->entry, __ATOMIC_ACQUIRE);
        if (__builtin_expect(e && name && __builtin_strcmp(e->text, name) == 0,
                             1))
            return e->id;
    }
    return cap__site_resolve(site, name, file, line, flags, literal);
}

/* Ids a scope may carry: 1 .. CAP_MAX_NAME_ID. Any other value (0 from a
 * failed registration, a made-up id) is recorded under the name
 * "<invalid scope id>", so that its end still closes it. */
static inline uint32_t cap__scope_enter(uint32_t id)
{
    if (__builtin_expect(id - 1u >= CAP_MAX_NAME_ID, 0))
        id = cap__invalid_id();
    cap__emit(id);
    return id;
}

static inline void cap__scope_leave(const uint32_t *id)
{
    cap__emit(*id | (CAP__KIND_END << CAP__KIND_SHIFT));
}

#else /* CAP_DISABLE */

/* ---- compiled out: every function above as an inline no-op -------------
 * One line per function, same signature. A program built with CAP_DISABLE
 * calls no library function and needs no -lcapture. The no-ops report
 * success and "nothing recorded": CAP_OK, zero statistics, name and track
 * id 0, no frame (UINT64_MAX), clock 0. tests/disabled_link.sh fails when
 * a CAP_API function of this header has no line here. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#endif
static inline cap_result cap_open(const char *path, const cap_capture_options *opt) { return CAP_OK; }
static inline cap_result cap_open_fd(int fd, const cap_capture_options *opt) { return CAP_OK; }
static inline cap_result cap_close(void) { return CAP_OK; }
static inline int cap_listen_port(void) { return 0; }
static inline cap_result cap_status(void) { return CAP_OK; }
static inline void cap_get_stats(cap_producer_stats *out) { for (size_t i = 0; out && i < sizeof *out; i++) ((unsigned char *)out)[i] = 0; }
static inline cap_result cap_flight_dump(const char *path) { return CAP_OK; }
static inline cap_result cap_flight_get_stats(cap_flight_stats *out) { for (size_t i = 0; out && i < sizeof *out; i++) ((unsigned char *)out)[i] = 0; return CAP_OK; }
static inline void cap_set_log(void (*fn)(void *user, const char *line), void *user) {}
static inline uint32_t cap_name_register(const char *name, const char *file, uint32_t line) { return 0; }
static inline uint32_t cap_name_register_flags(const char *name, const char *file, uint32_t line, uint32_t flags) { return 0; }
static inline void cap_scope_begin(uint32_t id) {}
static inline void cap_scope_end(void) {}
static inline cap_result cap_thread_register(const char *name) { return CAP_OK; }
static inline void cap_thread_unregister(void) {}
static inline void cap_frame_mark(void) {}
static inline void cap_frame_begin(void) {}
static inline void cap_frame_end(void) {}
static inline uint64_t cap_frame_current(void) { return UINT64_MAX; }
static inline void cap_counter(uint32_t name, double value) {}
static inline uint32_t cap_gpu_track(const char *name, double period_ns) { return 0; }
static inline void cap_gpu_calibrate(uint32_t track, uint64_t gpu_tick, uint64_t mono_ns, uint64_t deviation_ns) {}
static inline void cap_gpu_frame(uint32_t track, uint64_t cpu_frame, const cap_gpu_span *spans, size_t n) {}
static inline void cap_gpu_untimed(uint32_t track, uint64_t untimed_frames, uint64_t invalid_spans) {}
static inline uint64_t cap_now(void) { return 0; }
static inline uint64_t cap_tick_from_mono_ns(uint64_t mono_ns) { return 0; }
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#endif /* CAP_DISABLE */

#ifdef __cplusplus
}
#endif

/* ---- macros ----------------------------------------------------------- */

#define CAP__CAT2(a, b) a##b
#define CAP__CAT(a, b) CAP__CAT2(a, b)

#ifndef CAP_DISABLE

/* The call site's cache and the literal test, for the macros below. */
#define CAP__SITE_ID(site, name, flags)                                        \
    cap__site_id(&(site), (name), __FILE__, __LINE__, (flags),                 \
                 __builtin_constant_p(name))

#ifdef __cplusplus
struct cap__scope_guard {
    uint32_t id;
    explicit cap__scope_guard(uint32_t i) : id(cap__scope_enter(i)) {}
    ~cap__scope_guard() { cap__scope_leave(&id); }
    cap__scope_guard(const cap__scope_guard &) = delete;
    cap__scope_guard &operator=(const cap__scope_guard &) = delete;
};
#define CAP__SCOPE_FLAGS(name, flags)                                          \
    static cap__site CAP__CAT(cap__site_, __LINE__);                           \
    cap__scope_guard CAP__CAT(cap__scope_, __LINE__)(                          \
        CAP__SITE_ID(CAP__CAT(cap__site_, __LINE__), name, flags))
#define CAP_SCOPE_ID(id)                                                       \
    cap__scope_guard CAP__CAT(cap__scope_, __LINE__)((uint32_t)(id))
#else
#define CAP__SCOPE_FLAGS(name, flags)                                          \
    static cap__site CAP__CAT(cap__site_, __LINE__);                           \
    const uint32_t CAP__CAT(cap__scope_, __LINE__)                             \
        __attribute__((cleanup(cap__scope_leave), unused)) =                   \
            cap__scope_enter(                                                  \
                CAP__SITE_ID(CAP__CAT(cap__site_, __LINE__), name, flags))
/* A scope by registered id (cap_name_register), to the end of the block. */
#define CAP_SCOPE_ID(id)                                                       \
    const uint32_t CAP__CAT(cap__scope_, __LINE__)                             \
        __attribute__((cleanup(cap__scope_leave), unused)) =                   \
            cap__scope_enter((uint32_t)(id))
#endif

/* A scope that lasts until the end of the enclosing block. `name` may be a
 * literal (cheapest) or any string, even one whose contents change between
 * calls at the same site: each call records the text it is given. */
#define CAP_SCOPE(name) CAP__SCOPE_FLAGS(name, 0)

/* A wait: a scope whose name is tagged CAP_NAME_WAIT (time spent blocked,
 * not working), to the end of the block; CAP_WAIT_BEGIN pairs with
 * CAP_END. Same cost as CAP_SCOPE. */
#define CAP_WAIT_SCOPE(name) CAP__SCOPE_FLAGS(name, CAP_NAME_WAIT)
#define CAP_WAIT_BEGIN(name)                                                   \
    do {                                                                       \
        static cap__site cap__site_w;                                          \
        (void)cap__scope_enter(CAP__SITE_ID(cap__site_w, name, CAP_NAME_WAIT)); \
    } while (0)

/* Explicit pairs: CAP_BEGIN opens a scope, CAP_END closes the innermost. */
#define CAP_BEGIN(name)                                                        \
    do {                                                                       \
        static cap__site cap__site_b;                                          \
        (void)cap__scope_enter(CAP__SITE_ID(cap__site_b, name, 0));            \
    } while (0)
#define CAP_BEGIN_ID(id) ((void)cap__scope_enter((uint32_t)(id)))
#define CAP_END() cap__emit(CAP__KIND_END << CAP__KIND_SHIFT)

#define CAP_FRAME_MARK() cap_frame_mark()
#define CAP_FRAME_BEGIN() cap_frame_begin()
#define CAP_FRAME_END() cap_frame_end()
#define CAP_THREAD(name) ((void)cap_thread_register(name))
#define CAP_COUNTER(name, value)                                               \
    do {                                                                       \
        static cap__site cap__site_c;                                          \
        cap_counter(CAP__SITE_ID(cap__site_c, name, 0), (double)(value));      \
    } while (0)

#else /* CAP_DISABLE */

#define CAP_SCOPE(name) ((void)0)
#define CAP_SCOPE_ID(id) ((void)0)
#define CAP_BEGIN(name) ((void)0)
#define CAP_BEGIN_ID(id) ((void)0)
#define CAP_WAIT_SCOPE(name) ((void)0)
#define CAP_WAIT_BEGIN(name) ((void)0)
#define CAP_END() ((void)0)
#define CAP_FRAME_MARK() ((void)0)
#define CAP_FRAME_BEGIN() ((void)0)
#define CAP_FRAME_END() ((void)0)
#define CAP_THREAD(name) ((void)0)
#define CAP_COUNTER(name, value) ((void)0)

#endif /* CAP_DISABLE */

#endif
