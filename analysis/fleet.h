/*
 * fleet.h - one capture reduced to one summary row, for reading many
 * captures at once (read_capture --summary, --export).
 *
 * an_capture_row_compute computes; analysis/render/fleet.c renders (text, CSV, and
 * the tidy gzip'd CSV tables of --export). Nothing here prints.
 */
#ifndef AN_FLEET_H
#define AN_FLEET_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "report.h"

#define AN_ROW_TOP 3 /* top scopes by self time in a summary row */

typedef struct an_capture_row_scope {
    const char *name;        /* borrowed from the model */
    an_kind kind;
    int is_wait;              /* a CPU wait (an_scope.is_wait): time spent
                                 blocked, not working */
    double self_ms_per_frame; /* total self time / frames (0 frames: /1) */
} an_capture_row_scope;

typedef struct an_capture_row {
    char id[17];             /* capture id: 16 hex digits, see an_capture_id */
    const char *file;        /* borrowed from the model (m->path) */
    const char *program, *build, *machine, *gpu, *start; /* metadata or "" */
    double duration_s;
    an_frame_stats fs;      /* frame-time statistics (ms) */
    double gpu_ms_per_frame; /* mean GPU time of frames with GPU work */
    size_t gpu_frames;       /* frames with measured GPU work */
    an_capture_row_scope top[AN_ROW_TOP];
    size_t ntop;
    unsigned warnings;       /* warnings the reader and analysis raised */
} an_capture_row;

/* A stable id for the capture: CRC-32 and Adler-32 (zlib) of its metadata,
 * origin, clock, frame count and extent, as 16 lowercase hex digits. Two
 * runs never share metadata and start time, so ids differ across a farm;
 * the same file always gives the same id. */
void an_capture_id(const an_capture *m, char out[17]);

/* Fill *s from m. Strings are borrowed from m and live until an_free(m).
 * `warnings` is stored as given (the caller counted what an_text_warnings
 * printed). */
void an_capture_row_compute(const an_capture *m, unsigned warnings, an_capture_row *s);

#endif
