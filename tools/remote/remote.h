/*
 * remote.h - record a window of a live capture served over TCP.
 *
 * The engine behind capture_remote and read_capture HOST:PORT. It connects
 * to a program recording with a listen address (capture.h, CAP_LISTEN),
 * checks the framing of the stream as it arrives (every length bounded by
 * the format's limits) and hands whole chunks to a second thread, which
 * reads them with cap_reader_open_fd and copies the window asked for into
 * a capture file with the writer (cvt_copy_reader). The file is always
 * complete (footer written): on the window's end, on a signal (SIGINT,
 * SIGTERM), on the program closing its capture or dying, and on the
 * connection dropping inside a chunk (the chunks that arrived whole are
 * kept, the rest is reported).
 */
#ifndef REMOTE_H
#define REMOTE_H

#include <stdint.h>
#include <stdio.h>

#include "tool_exit.h"

typedef struct rem_options {
    const char *source;      /* "HOST:PORT" or "[V6ADDR]:PORT" */
    const char *out;         /* the capture file to write */
    double seconds;          /* window length (0: until the stream ends) */
    double skip_seconds;     /* leave out the first S seconds */
    uint64_t frames;         /* at most this many frames (0: no limit) */
    double connect_timeout;  /* seconds of connect retries; default 10 */
    int progress;            /* a progress line on diag (a terminal) */
    int quiet;               /* no summary line on success */
    unsigned format_major;   /* OUT's format: 1 (1.1), 2 (2.0), 3 (3.1,
                                or 3.0 with no_frame_list); 0: the
                                default, 3.1 */
    int no_frame_list;       /* --format-version 3.0 */
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
 *                         capture: nothing written;
 *   TOOL_EXIT_INCOMPLETE  a complete file was written, but the recording
 *                         stopped early (interrupted, the program ended,
 *                         the connection dropped: the reason and what the
 *                         file holds are printed), or o->out could not be
 *                         written. */
tool_exit rem_record(const rem_options *o);

#endif
