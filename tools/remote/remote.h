/*
 * remote.h - record a window of a live capture served over TCP.
 *
 * The engine behind capture_remote and read_capture HOST:PORT. It connects
 * to a program recording with a listen address (capture.h, CAP_LISTEN),
 * checks the framing of the stream as it arrives (every length bounded by
 * the format's limits) and hands whole chunks to a second thread, which
 * reads them with cap_reader_open_fd and copies the window asked for into
 * a capture file with the writer (cvt_copy_reader), as it arrives. The
 * file is always complete (footer written): on the window's end, on a
 * signal (SIGINT, SIGTERM), on the program closing its capture or dying,
 * on nothing arriving for the idle timeout, and on the connection
 * dropping inside a chunk (the chunks that arrived whole are kept, the
 * rest is reported).
 */
#ifndef REMOTE_H
#define REMOTE_H

#include <stdint.h>
#include <stdio.h>

#include "tool_exit.h"
#include "tool_source.h"

#define REM_IDLE_DEFAULT 10.0 /* seconds without a byte before giving up */

typedef struct rem_options {
    const char *source;      /* "HOST:PORT" or "[V6ADDR]:PORT" */
    const char *out;         /* the capture file to write */
    double seconds;          /* window length (0: until the stream ends) */
    double skip_seconds;     /* leave out the first S seconds */
    uint64_t frames;         /* at most this many frames (0: no limit) */
    double connect_timeout;  /* seconds of connect retries; default 10 */
    double idle_timeout;     /* give up after this many seconds without a
                                byte from the server; 0: REM_IDLE_DEFAULT */
    int progress;            /* a progress line on diag (a terminal) */
    int quiet;               /* no summary line on success */
    unsigned format_major;   /* OUT's format: 1 (1.1), 2 (2.0), 3 (3.1,
                                or 3.0 with no_frame_list); 0: the
                                default, 3.1 */
    int no_frame_list;       /* --format-version 3.0 */
    int spill;               /* the window is for a reader (read_capture
                                HOST:PORT): out is an unlinked temporary
                                file's /proc/self/fd path, written once
                                (the first pass goes to another unlinked
                                file in TMPDIR) and messages name the
                                source, never that path */
    const char *tool;        /* prefix of messages, "capture_remote" */
    FILE *diag;              /* messages; stderr when NULL */
} rem_options;

/* Record o->source's window into o->out. Returns the tools' exit status
 * (tools/common/tool_exit.h); every outcome but TOOL_EXIT_OK is explained
 * on o->diag in one line:
 *   TOOL_EXIT_OK          the window was recorded in full (or, without a
 *                         window, the program closed its capture);
 *   TOOL_EXIT_USAGE       o->source is not HOST:PORT, cannot be reached
 *                         within the connect timeout, or does not send a
 *                         capture (it closed the connection before a byte:
 *                         full, or its capture is over; it sent nothing
 *                         within the idle timeout; it sent something
 *                         else): nothing written; with o->spill, also a
 *                         stream that stopped before its metadata (the
 *                         reader has nothing to read);
 *   TOOL_EXIT_INCOMPLETE  a complete file was written, but the recording
 *                         stopped early (interrupted, the program ended,
 *                         the connection dropped, nothing arrived for the
 *                         idle timeout: the reason and what the file holds
 *                         are printed), or o->out could not be written;
 *                         without o->spill, also a stream that stopped
 *                         before its metadata (nothing written).
 *
 * OUT (a regular file, or a new one) is written as the stream arrives,
 * from the moment its metadata has arrived: a client killed then leaves a
 * capture that reads up to its last whole block (truncated), never an older
 * file. Once the recording stopped, the window's frames are sliced into
 * OUT.window-XXXXXX beside it, which is renamed over OUT. An OUT that is no
 * regular file (a pipe, /dev/stdout) gets the slice alone, the first pass
 * going to an unlinked file in TMPDIR. Memory: the chunk being assembled
 * (at most 72 MiB, the format's limit) and the copy's working set; never
 * the window. Signals: SIGINT and SIGTERM stop the recording (a complete
 * file is written), SIGPIPE is ignored meanwhile. */
tool_exit rem_record(const rem_options *o);

/* As rem_record on a stream already open (a connected socket, a pipe):
 * no connection is made, no signal handler installed (the caller ignores
 * SIGPIPE). fd is closed. The same statuses. For tests and fuzzing. */
tool_exit rem_record_fd(const rem_options *o, int fd);

/* A reader's live source (read_capture HOST:PORT): tool_source_open's
 * recorder (tool_record_fn). user is a const rem_options * giving the
 * window, the timeouts, the tool's name, progress and diag; its source,
 * out, spill and quiet are set here (src->text, path, 1, 1), so the first
 * pass goes to an unlinked file in TMPDIR, the window into path (the
 * unlinked file tool_source_open made) and messages name src, never path.
 * Returns rem_record's status. */
tool_exit rem_source_record(void *user, const tool_source *src,
                            const char *path);

#endif
