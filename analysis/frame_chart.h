/*
 * frame_chart.h - the numbers behind the frame-time picture: every
 * frame's time reduced to pixel columns (minimum and maximum, so that no
 * single spike is lost), the GPU time likewise, and the stutters.
 *
 * A stutter is a frame longer than 2.5x the median of the 31 frames
 * centred on it (fewer at the ends of the capture): the rule of the text
 * report's summary (report.h, an_frame_stats.stutters).
 */
#ifndef AN_FRAME_CHART_H
#define AN_FRAME_CHART_H

#include <stddef.h>

#include "frame_counters.h"
#include "model.h"
#include "report.h"

/* The stutter rule's factor and window (frames, centred). */
#define AN_STUTTER_FACTOR 2.5
#define AN_STUTTER_WINDOW 31

typedef struct an_frame_col {
    size_t first, count;           /* frames [first, first + count) */
    double min_ms, max_ms;         /* their frame times */
    double gpu_min_ms, gpu_max_ms; /* their GPU times; NAN when none of
                                      them has a measured GPU span */
} an_frame_col;

typedef struct an_stutter {
    size_t frame;       /* position in an_capture.frames */
    double ms;          /* its frame time */
    double local_ms;    /* the median of the frames around it */
} an_stutter;

/* A counter drawn as a strip under the chart (--frames --svg). */
typedef struct an_chart_counter {
    const char *name;   /* borrowed from the model */
    double *col;        /* per column: the mean of its frames' values
                           (carried ones included, frame_counters.h);
                           NAN when none of its frames has a value */
    double min, max;    /* over the columns; NAN when no column has one */
} an_chart_counter;

typedef struct an_frame_chart {
    an_frame_stats fs;    /* mean, median, p95, p99... (ms) */
    an_frame_col *cols;   /* ncols columns in frame order */
    size_t ncols;
    an_stutter *stutters; /* in frame order */
    size_t nstutters;
    double max_ms;        /* the largest frame or GPU time */
    int has_gpu;          /* at least one frame has GPU time */
    an_chart_counter *counters; /* an_frame_chart_counters: the strips */
    size_t ncounters;
} an_frame_chart;

/* Compute the chart of m's frames over at most max_cols columns (one
 * frame per column when there are no more frames than columns; else
 * column c holds frames [c*n/max_cols, (c+1)*n/max_cols)). Returns
 * CAP_OK, or CAP_E_NOMEM (then *c holds nothing to free). Free with
 * an_frame_chart_free, which accepts a zeroed or freed chart. */
cap_result an_frame_chart_compute(an_frame_chart *c, const an_capture *m,
                                  size_t max_cols);

/* Add the counters fc shows as text (fc->c[0..fc->ntext), at most max of
 * them) to a computed chart c, reduced to c's columns; fc must come from
 * the same capture. Returns CAP_OK, or CAP_E_NOMEM (c then has no
 * counters, and is otherwise intact). */
cap_result an_frame_chart_counters(an_frame_chart *c,
                                   const an_frame_counters *fc, size_t max);

void an_frame_chart_free(an_frame_chart *c);

#endif
