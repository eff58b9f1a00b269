/*
 * flight.h - the flight recorder: the last N seconds of blocks in memory,
 * written out as a complete capture on request, on a hitch or on a crash.
 *
 * Internal to libcapture. In flight mode the producer opens its writer
 * with no file (cap__writer_open_tee, fd -1) and this ring as the tee: it
 * keeps a copy of every BLOCK chunk, each of which decodes on its own
 * (format-spec "Declarations"), and drops the oldest once they are older
 * than N seconds or once the ring would pass its byte bound. A dump is a
 * file of: the writer's file header, a META chunk (the capture's metadata
 * plus `flight_dump`, `flight_frame`, `flight_seconds`), a BLOCK of
 * declarations only (every name, thread, track and calibration the writer
 * knows, so names first seen before the window are there too), the ring's
 * blocks, a FOOTER (the declarations again and an index of those blocks)
 * and the trailer: a capture like any other, as a live client's stream is.
 *
 * Threads: the writer thread calls everything but cap__flight_request and
 * cap__flight_get_stats (any thread, under the ring's own lock) and the
 * crash handler. A crash handler (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGABRT) freezes the ring and writes it with async-signal-safe calls
 * only (open, write, close, clock_gettime, sigaction, raise), then runs
 * the handler installed before it, or re-raises the signal with its
 * default action.
 */
#ifndef CAP_FLIGHT_H
#define CAP_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"
#include "writer/live.h"
#include "writer/writer_live.h"

typedef struct cap__flight cap__flight;

typedef struct cap__flight_opts {
    double seconds;       /* N: the window kept, > 0 */
    double hitch;         /* K: a frame over K x the median of the last
                             2 s is a hitch; 0: no hitch dumps */
    size_t max_bytes;     /* the ring's blocks never take more */
    unsigned flush_ms;    /* the producer's flush interval */
    const char *dir;      /* where dumps without a path go, copied */
    double period_ns;     /* the clock, to convert frame ticks */
    uint64_t origin_tick, origin_mono;
    const cap_writer_options *wo; /* the metadata and origin of the
                                     capture, copied into each dump */
    cap__live *live;      /* chunks are passed on to it too (CAP_LISTEN) */
    void (*log)(const char *line);
} cap__flight_opts;

/* Read the flight settings: the options' fields, overridden by
 * CAP_FLIGHT_SECONDS, CAP_FLIGHT_HITCH, CAP_FLIGHT_DIR and
 * CAP_FLIGHT_MAX_MIB. Fills *seconds (0: not in flight mode), *hitch,
 * *max_bytes and dir (the folder of `path` when none is given, "." for no
 * path). Malformed values are logged and ignored. */
void cap__flight_settings(const cap_capture_options *o, const char *path,
                          double *seconds, double *hitch, size_t *max_bytes,
                          char *dir, size_t dir_size,
                          void (*log)(const char *line));

/* Flight mode's window: CAP_FLIGHT_SECONDS, else o->flight_seconds; 0
 * when not in flight mode. In flight mode a fixed window's length *rec
 * (rec may be NULL) is ignored: logged and set to 0. */
double cap__flight_mode(const cap_capture_options *o, double *rec,
                        void (*log)(const char *line));

/* Start flight mode: read the settings (cap__flight_settings) into *fo
 * (fo->seconds, flush_ms, clock, wo, live and log given), make the ring
 * (*f) and open the writer (*w) on it, with no file; log one line either
 * way. Errors: those of cap__flight_new and cap__writer_open_tee (*f may
 * then be set: cap__flight_free it). */
cap_result cap__flight_open(cap__flight **f, cap_writer **w,
                            const cap_capture_options *o, const char *path,
                            cap__flight_opts *fo);

/* Make the ring and install the crash handlers. Errors: CAP_E_IO (the
 * folder cannot be written; *why says why), CAP_E_NOMEM. */
cap_result cap__flight_new(cap__flight **out, const cap__flight_opts *o,
                           char *why, size_t why_size);

/* The writer's tee (user: the ring). */
void cap__flight_tee(void *user, cap_writer *w, const cap__tee_chunk *c);

/* Writer thread: the declarations changed (a name, thread, track or
 * calibration): the copy a crash dump writes is made again soon. */
void cap__flight_decls(cap__flight *f);

/* Writer thread: frame `index` took begin..end ticks (hitch detection). */
void cap__flight_frame(cap__flight *f, uint64_t index, uint64_t begin,
                       uint64_t end);

/* Writer thread, once a round, after its flush: drop blocks past the
 * window, and write the dumps that are due (requests; a hitch once the
 * quarter window after it has passed). `round_mono` is CLOCK_MONOTONIC
 * when the round took the frames it wrote. */
void cap__flight_round(cap__flight *f, cap_writer *w, uint64_t round_mono);

/* Writer thread, at close, before the writer closes: write the dumps still
 * due (a hitch with what followed it so far). */
void cap__flight_finish(cap__flight *f, cap_writer *w);

/* Any thread: ask for a dump into `path` (copied; NULL: a new file in the
 * dump folder), written by the writer thread within a flush interval.
 * Errors: CAP_E_LIMIT (8 requests already waiting), CAP_E_NOMEM. */
cap_result cap__flight_request(cap__flight *f, const char *path);

/* Any thread: the ring's counters. */
void cap__flight_get_stats(cap__flight *f, cap_flight_stats *out);

/* Remove the crash handlers (where still ours), log the dump counts and
 * free f. Accepts NULL. */
void cap__flight_free(cap__flight *f);

#endif
