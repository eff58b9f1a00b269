/*
 * report.h - the reports of read_capture, as aligned text or CSV.
 *
 * Every function writes to the FILE * it is given and returns 0, or -1 when
 * memory ran out. Times are milliseconds. CSV goes through libcsv (RFC 4180
 * quoting), one header row, times as decimals.
 */
#ifndef AN_REPORT_H
#define AN_REPORT_H

#include <stdio.h>

#include "model.h"

typedef struct rep_style {
    int csv;    /* CSV instead of aligned text */
    int colour; /* ANSI colour in text output (a terminal, no NO_COLOR) */
} rep_style;

/* Loud warnings about what the capture lacks or lost, one line each on
 * err, each starting "warning: <file>: ". `min_frames` > 0 also warns when
 * the capture has fewer frames than the report needs (`report` names it).
 * Returns the number of warnings written. */
int rep_warnings(FILE *err, const an_capture *m, const char *report,
                 size_t min_frames, int colour);

/* Header (metadata, duration, threads, tracks) and frame-time summary
 * (text only; CSV output has no header block). */
int rep_header(FILE *out, const an_capture *m, rep_style st);

/* Scopes ranked by total self time, CPU and GPU apart. */
int rep_ranking(FILE *out, const an_capture *m, rep_style st);

/* The call tree merged by path; max_depth < 0 means no limit; nodes whose
 * total is below min_share_pct of the frame time (or of the capture's
 * root time when there are no frames) are pruned. */
int rep_tree(FILE *out, const an_capture *m, rep_style st, int max_depth,
             double min_share_pct);

/* Fastest vs slowest quarter of frames, ordered by frame time, or by the
 * self time of scope `split_by` (CPU first, then GPU) when not NULL.
 * Returns -2 when split_by names no scope. */
int rep_split(FILE *out, const an_capture *m, rep_style st,
              const char *split_by);

/* Frames binned by elapsed time: `bins` bins, or bins of bin_seconds when
 * bin_seconds > 0. */
int rep_over_time(FILE *out, const an_capture *m, rep_style st, int bins,
                  double bin_seconds);

/* One row per frame; scope restricts to one scope (-2 when unknown). */
int rep_frames(FILE *out, const an_capture *m, rep_style st,
               const char *scope);

/* Write one CSV text field, quoted through libcsv when it needs quoting
 * (a comma, quote, line break, or leading/trailing space). */
void rep_csv_field(FILE *f, const char *s);

/* Frame-time statistics used by several reports. */
typedef struct rep_frame_stats {
    size_t n;
    double mean, median, p95, p99, p999, max, low1; /* ms */
    size_t low1_frames;
    size_t stutters;
} rep_frame_stats;

void rep_compute_frame_stats(const an_capture *m, rep_frame_stats *fs);

#endif
