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

/* Exit codes, the same for the tools. */
#define REM_OK 0      /* the window was recorded in full (or, without a
                         window, the program closed its capture) */
#define REM_CUT 1     /* a complete file was written, but the recording
                         stopped early: interrupted, the program ended or
                         the connection dropped (reported on diag) */
#define REM_USAGE 2   /* bad arguments */
#define REM_CONNECT 3 /* could not connect within the timeout, or the
                         server does not send a capture */
#define REM_OUTPUT 4  /* the output file could not be written */

typedef struct rem_options {
    const char *source;      /* "HOST:PORT" or "[V6ADDR]:PORT" */
    const char *out;         /* the capture file to write */
    double seconds;          /* window length (0: until the stream ends) */
    double skip_seconds;     /* leave out the first S seconds */
    uint64_t frames;         /* at most this many frames (0: no limit) */
    double connect_timeout;  /* seconds of connect retries; default 10 */
    int progress;            /* a progress line on diag (a terminal) */
    int quiet;               /* no summary line on success */
    const char *tool;        /* prefix of messages, "capture_remote" */
    FILE *diag;              /* messages; stderr when NULL */
} rem_options;

/* Record o->source's window into o->out. Returns an REM_ exit code; every
 * outcome but REM_OK is explained on o->diag in one line (REM_CUT: the
 * reason, and what the file holds). */
int rem_record(const rem_options *o);

/* 1 when s looks like HOST:PORT (a port number after the last colon) and
 * names no existing file. */
int rem_is_address(const char *s);

#endif
