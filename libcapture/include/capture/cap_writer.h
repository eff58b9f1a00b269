/*
 * cap_writer.h - write a capture file from explicit events.
 *
 * Which writer: a program that measures itself uses capture.h (the
 * producer: per-thread buffers, a writer thread, timestamps taken for you,
 * macros that compile out). Use this header when the events already exist
 * with their own timestamps: importers and converters (Chrome JSON,
 * puffin), test files with known values, a program rewriting a capture.
 * The producer itself writes through it, from its writer thread.
 *
 * This is the format layer's writing half: a single-threaded encoder that
 * takes events with explicit timestamps, groups them into self-contained
 * blocks (each names every id it references), compresses each block with
 * zstd and appends it to a file, then ends the file with a footer (the whole
 * name table and a block index) and a trailer. The byte layout is described
 * in format-spec/capture-format.md.
 *
 * Thread safety: a cap_writer is not thread-safe; one thread at a time.
 *
 * Time: CPU timestamps are "ticks" of the capture clock. The clock is
 * described once in cap_writer_options (ns per tick and an origin), and
 * refined by clock samples (cap_writer_clock_sample). An importer with
 * nanosecond timestamps uses tick_period_ns = 1 and origin 0.
 * GPU timestamps are ticks of their track's own clock (cap_writer_gpu_track).
 *
 * Ids: name ids (scope, counter and GPU span names) are small positive
 * integers (1 .. CAP_MAX_NAME_ID, dense: readers size tables by the largest
 * id), normally defined with cap_writer_name. An id used without a name is
 * written as such and every reader warns about it (a foreign trace with
 * nameless events, or a deliberately damaged test file).
 * Thread ids and GPU track ids are small integers (0 .. CAP_MAX_THREADS-1,
 * 0 .. CAP_MAX_TRACKS-1) declared before use.
 */
#ifndef CAP_WRITER_H
#define CAP_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "cap_export.h"
#include "cap_limits.h"
#include "cap_result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Name flags (format 1.1): what a name stands for, beyond its text.
 * CAP_NAME_WAIT: the scope is time spent blocked (a lock, a queue, a
 * fence, vsync), not work, and reports keep it apart. cap_reader.h
 * defines the same values. */
#ifndef CAP_NAME_WAIT
#define CAP_NAME_WAIT 0x1u
#define CAP_NAME_FLAGS_KNOWN 0x1u
#endif

/* One metadata entry. Both strings are copied by the writer. */
typedef struct cap_meta_kv {
    const char *key;
    const char *value;
} cap_meta_kv;

/* How to open a writer. Zero-initialise, then set what you need; a zero
 * field takes the default named beside it. */
typedef struct cap_writer_options {
    const cap_meta_kv *meta;   /* metadata entries, copied */
    size_t meta_count;
    const char *clock_source;  /* "tsc", "cntvct", "monotonic", "imported";
                                  default "imported" */
    double tick_period_ns;     /* ns per CPU tick; default 1.0 */
    uint64_t origin_tick;      /* CPU tick at the capture's start */
    uint64_t origin_mono_ns;   /* CLOCK_MONOTONIC at origin_tick (0 if
                                  unknown) */
    int64_t origin_unix_ns;    /* wall-clock time at origin_tick, ns since
                                  1970 (0 if unknown) */
    int zstd_level;            /* default 3 */
    size_t block_bytes;        /* raw bytes before a block is written;
                                  default 1 MiB, clamped to 4 KiB..16 MiB */
    unsigned stall_timeout_ms; /* a pipe or socket that accepts no byte for
                                  this long fails the write (CAP_E_IO,
                                  errno ETIMEDOUT); default 5000. Regular
                                  files are written without a timeout */
    unsigned format_minor;     /* with format_major 1 only: 0 (default)
                                  writes format 1.0; 1 writes format 1.1,
                                  which may carry name flags
                                  (cap_writer_name_flags) and counts of
                                  stray ends (cap_writer_scope_end) */
    unsigned format_major;     /* 0 (default) or 3: write format 3.1
                                  (3.0 and its footer's frame list: see
                                  no_frame_list), which range-codes scope
                                  ticks and names
                                  (on varied timings about a fifth smaller
                                  than 2.0, read in about 1.1x its time;
                                  1.2x 2.0's time to write in large
                                  blocks, 1.05x in 100 ms blocks of a
                                  60 fps game;
                                  readers of 1.x and 2.0 refuse it);
                                  2: write format 2.0, which holds
                                  everything 1.1 may and stores scope
                                  ticks as residuals of a prediction
                                  (readers of 1.x refuse it);
                                  1: write 1.0 or 1.1 for readers of 1.x;
                                  4: write format 4.0, 3.1's content in
                                  groups of blocks (format-spec "Groups
                                  of blocks": names, threads and tracks
                                  listed once a group, a group's blocks
                                  one zstd frame flushed at each block's
                                  end, at most 4 MiB, 64 blocks or
                                  group_max_ms a group; readers before
                                  4.0 refuse it) */
    int no_frame_list;         /* format 3 only: 0 (default) writes 3.1,
                                  whose footer lists every block's frames
                                  (about 4 bytes a frame; a reader gets
                                  the frames without reading the blocks,
                                  3-5 % of read_capture's time); 1 writes
                                  3.0 exactly as before it */
    unsigned group_max_ms;     /* format 4 only: a group ends once its
                                  frames and clock samples span this many
                                  milliseconds; 0 (default): 4000. Longer
                                  groups are smaller (a 60 fps game's
                                  100 ms blocks: 2.14 bytes a scope at
                                  1000, 1.94 at 4000) and lose more to a
                                  damaged block (the rest of its group) */
} cap_writer_options;

/* One GPU span of a frame batch, see cap_writer_gpu_frame. */
typedef struct cap_gpu_span {
    uint32_t name;        /* name id */
    int32_t parent;       /* index of the parent span in the same batch, or
                             -1 for a root; must be lower than this index */
    uint64_t begin_tick;  /* GPU ticks of the span's track */
    uint64_t end_tick;
    int measured;         /* 0: the pair was never written ("not measured",
                             distinct from a zero duration); ticks ignored */
} cap_gpu_span;

typedef struct cap_writer cap_writer;

/* Create the file at path (truncating it) and write the file header and the
 * META chunk. On success *out owns the file until cap_writer_close.
 * Errors: CAP_E_MISUSE (NULL argument, invalid option), CAP_E_IO (open or
 * write failed; errno tells why), CAP_E_NOMEM. On error *out is NULL. */
CAP_API cap_result cap_writer_open_path(cap_writer **out, const char *path,
                                        const cap_writer_options *opt);

/* As cap_writer_open_path on an already open, writable file descriptor. The
 * writer writes at the descriptor's current position and never closes it. */
CAP_API cap_result cap_writer_open_fd(cap_writer **out, int fd,
                                      const cap_writer_options *opt);

/* Define name id `id` as `name` with an optional source location (file may
 * be NULL, line 0). Redefining an id with the same text is a no-op; with
 * another text, CAP_E_MISUSE. Strings are copied.
 * Errors: CAP_E_MISUSE (id 0 or > CAP_MAX_NAME_ID, name NULL or too long),
 * CAP_E_NOMEM, CAP_E_STOPPED. */
CAP_API cap_result cap_writer_name(cap_writer *w, uint32_t id, const char *name,
                                   const char *file, uint32_t line);

/* Add `flags` (CAP_NAME_WAIT) to name id `id`, already defined with
 * cap_writer_name. Flags only accumulate. They are written with the name
 * in every later block that uses it and in the footer.
 * Errors: CAP_E_MISUSE (the writer writes format 1.0, id not defined,
 * unknown flag bits), CAP_E_STOPPED. */
CAP_API cap_result cap_writer_name_flags(cap_writer *w, uint32_t id,
                                         uint32_t flags);

/* Declare CPU thread `tid` with a display name (copied; may be NULL).
 * Declaring again renames it. Errors: CAP_E_MISUSE, CAP_E_NOMEM. */
CAP_API cap_result cap_writer_thread(cap_writer *w, uint32_t tid,
                                     const char *name);

/* Declare GPU track `track` (one per queue) with its name and its tick
 * period in ns. Errors: CAP_E_MISUSE (period not finite and positive),
 * CAP_E_NOMEM. */
CAP_API cap_result cap_writer_gpu_track(cap_writer *w, uint32_t track,
                                        const char *name, double period_ns);

/* Record that GPU tick `gpu_tick` of `track` and CPU tick `cpu_tick` were
 * sampled together (calibrated timestamps), with `deviation_ns` the
 * sampler's stated maximum deviation. Readers place later spans of the
 * track on the CPU axis with the latest calibration.
 * Errors: CAP_E_MISUSE (undeclared track). */
CAP_API cap_result cap_writer_gpu_calibration(cap_writer *w, uint32_t track,
                                              uint64_t gpu_tick,
                                              uint64_t cpu_tick,
                                              uint64_t deviation_ns);

/* Open a scope named `name` on thread `tid` at `tick`. Ticks of one thread
 * must not decrease (a decrease is recorded as no time passing and counted
 * in the block's clock_backwards statistic).
 * Errors: CAP_E_MISUSE (undeclared thread, name 0), CAP_E_LIMIT
 * (nesting deeper than CAP_MAX_DEPTH; the scope is dropped and counted),
 * CAP_E_IO / CAP_E_STOPPED (a block write failed earlier). */
CAP_API cap_result cap_writer_scope_begin(cap_writer *w, uint32_t tid,
                                          uint32_t name, uint64_t tick);

/* Close the innermost open scope of thread `tid` at `tick`.
 * Errors: CAP_E_MISUSE (no scope open on that thread: the end is dropped
 * and, in a format 1.1 or 2.0 file, counted in the block's STRAY_ENDS
 * statistic),
 * as begin. */
CAP_API cap_result cap_writer_scope_end(cap_writer *w, uint32_t tid,
                                        uint64_t tick);

/* Record frame `index` from begin_tick to end_tick (end >= begin). Frames
 * are recorded in increasing index order; gaps in indices are allowed.
 * Errors: CAP_E_MISUSE (decreasing index, end < begin). */
CAP_API cap_result cap_writer_frame(cap_writer *w, uint64_t index,
                                    uint64_t begin_tick, uint64_t end_tick);

/* Record a sample of counter `name` (a name id) at `tick`.
 * Errors: CAP_E_MISUSE (name 0). */
CAP_API cap_result cap_writer_counter(cap_writer *w, uint32_t name,
                                      uint64_t tick, double value);

/* Record one CPU frame's GPU spans on `track`: `n` spans whose parents are
 * given by index within the batch (a tree). Spans with measured != 0 and
 * end_tick <= begin_tick, or longer than one second, are dropped and
 * counted as invalid (never clamped); a dropped span's children are kept
 * and re-parented to its nearest kept ancestor. `cpu_frame` is the index of the CPU frame
 * that recorded the work.
 * Errors: CAP_E_MISUSE (undeclared track, name 0, parent index not lower
 * than the span's own), CAP_E_LIMIT (n > CAP_MAX_GPU_SPANS). */
CAP_API cap_result cap_writer_gpu_frame(cap_writer *w, uint32_t track,
                                        uint64_t cpu_frame,
                                        const cap_gpu_span *spans, size_t n);

/* Count `scopes` scopes of thread `tid` that the producer had to drop (its
 * buffers were full). Recorded in the next block's statistics; readers sum
 * them over the file. */
CAP_API cap_result cap_writer_dropped(cap_writer *w, uint32_t tid,
                                      uint64_t scopes);

/* Count, for thread `tid`, what the writer otherwise counts itself as it
 * meets it: `closed_at_end` scopes still open at close and ended there
 * (cap_writer_close, cap_writer_end_open_scopes), `clock_backwards`
 * timestamps that went backwards and were written as no time passing
 * (cap_writer_scope_begin/_end), `stray_ends` scope ends met with no
 * scope open (cap_writer_scope_end). For a program that re-writes a
 * capture (capture_convert): the input's file holds these counts, not
 * the events that made them, and the copy must say what the input says.
 * Recorded, like cap_writer_dropped, in the next block's statistics
 * (STATS kinds 4, 5 and 6); readers sum them over the file. Zero counts
 * are allowed and write nothing.
 * Errors: CAP_E_MISUSE (undeclared thread; stray_ends not 0 in a format
 * 1.0 file, which cannot hold it), CAP_E_NOMEM, CAP_E_STOPPED (or the
 * error that stopped the writer). */
CAP_API cap_result cap_writer_scope_counts(cap_writer *w, uint32_t tid,
                                           uint64_t closed_at_end,
                                           uint64_t clock_backwards,
                                           uint64_t stray_ends);

/* Leave the innermost `n` scopes open on thread `tid` (every one when n
 * is at least as many) without an end: they are never ended, not by
 * cap_writer_close either, and not counted, so readers never report them,
 * as they never report scopes open where a file cut short ends. If the
 * thread has events in the block under way, that block is written first
 * (cap_writer_flush), so the thread's later events nest under the scopes
 * still open only. For a program that re-writes a capture cut short or
 * damaged (capture_convert), where scopes began and their ends are lost.
 * Errors: CAP_E_MISUSE (undeclared thread), those of cap_writer_flush,
 * CAP_E_STOPPED. */
CAP_API cap_result cap_writer_scope_forget(cap_writer *w, uint32_t tid,
                                           uint32_t n);

/* Add `ticks` to the children time of the scope open on thread `tid` at
 * `depth` (0: the outermost open), as if direct children that took that
 * long had been written: its self time is that much lower. For a program
 * that re-writes a damaged capture (capture_convert), where the input
 * still counts children whose events were lost. A scope's children time
 * is written in a block's open-stack prefix, so if the thread has events
 * in the block under way, that block is written first (cap_writer_flush).
 * Errors: CAP_E_MISUSE (undeclared thread, no scope open at `depth`),
 * those of cap_writer_flush, CAP_E_STOPPED. */
CAP_API cap_result cap_writer_scope_children(cap_writer *w, uint32_t tid,
                                             uint32_t depth, uint64_t ticks);

/* Count GPU frames of `track` that went untimed (their ring slot was still
 * in flight) and GPU spans dropped before reaching the writer. */
CAP_API cap_result cap_writer_gpu_dropped(cap_writer *w, uint32_t track,
                                          uint64_t untimed_frames,
                                          uint64_t invalid_spans);

/* Record that CPU tick `tick` was read together with CLOCK_MONOTONIC
 * `mono_ns`. The latest sample is written into every later block (and the
 * footer); readers derive each block's tick period from it once it lies
 * at least 100 ms after the origin. */
CAP_API cap_result cap_writer_clock_sample(cap_writer *w, uint64_t tick,
                                           uint64_t mono_ns);

/* Close every scope still open, on every thread, at `tick` (or at the
 * thread's last tick when that is later), and count each as "closed at
 * end". For a producer that knows when recording stopped: cap_writer_close
 * alone closes them at each thread's last tick.
 * Errors: CAP_E_STOPPED, CAP_E_NOMEM. */
CAP_API cap_result cap_writer_end_open_scopes(cap_writer *w, uint64_t tick);

/* Encode, compress and write the pending block (if any) now.
 * Errors: CAP_E_IO (the write failed: the writer stops; every block written
 * before stays valid on disk), CAP_E_NOMEM, CAP_E_STOPPED. */
CAP_API cap_result cap_writer_flush(cap_writer *w);

/* Flush, then write the footer and trailer, close the file if the writer
 * opened it, and free w. Scopes still open are closed at the last tick
 * seen on their thread and counted as "closed at end". Accepts NULL.
 * Returns the first error the writer met (CAP_E_IO, CAP_E_NOMEM) or CAP_OK;
 * w is freed either way. */
CAP_API cap_result cap_writer_close(cap_writer *w);

/* Free w without writing a footer (the file reads as truncated). For tests
 * and for a producer that must stop at once. Accepts NULL. */
CAP_API void cap_writer_abandon(cap_writer *w);

/* Bytes written to the file so far (header, chunks). */
CAP_API uint64_t cap_writer_bytes_written(const cap_writer *w);

/* The first error the writer met (CAP_E_IO, CAP_E_NOMEM, CAP_E_LIMIT), or
 * CAP_OK: what later calls report only as CAP_E_STOPPED. */
CAP_API cap_result cap_writer_status(const cap_writer *w);

/* The errno of the last failed write (0 if none). */
CAP_API int cap_writer_errno(const cap_writer *w);

#ifdef __cplusplus
}
#endif
#endif
