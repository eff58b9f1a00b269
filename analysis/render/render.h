/*
 * render.h - the text and CSV writers of read_capture's reports.
 *
 * Each writer renders a result computed by report.h and computes nothing
 * of its own: the numbers, their order and the verdicts all come from the
 * result. Text is aligned for a terminal (ANSI bold when `colour`); CSV is
 * RFC 4180 through libcsv, one header row, times in ms as decimals, an
 * empty field for "no value" (an empty bin, a ratio without a
 * denominator). Writers return nothing (but those of --frames, which
 * walk the values and return the walk's error): a write error shows in
 * ferror(out), which the caller checks once at the end.
 *
 * Words printed instead of a ratio (text): "empty" (no data on a side),
 * "from 0" (the reference is 0), "at 0" (both are 0); see an_ratio.
 */
#ifndef AN_RENDER_H
#define AN_RENDER_H

#include <stdio.h>

#include "frame_counters.h"
#include "report.h"

/* ---- warnings (stderr) ------------------------------------------------- */

/* Loud warnings about what the capture lacks or lost, one line each on
 * err, each starting "warning: <file>: ". `min_frames` > 0 also warns when
 * the capture has fewer frames than the report needs (`report` names it).
 * Returns the number of warnings written. */
int an_text_warnings(FILE *err, const an_capture *m, const char *report,
                     size_t min_frames, int colour);

/* ---- text -------------------------------------------------------------- */

/* Metadata, duration, threads, GPU tracks, the frame-time summary and the
 * time outside frames. */
void an_text_header(FILE *out, const an_capture *m, const an_frame_stats *fs,
                    const an_totals *t, int colour);
void an_text_ranking(FILE *out, const an_capture *m, const an_ranking *r,
                     int colour);
void an_text_tree(FILE *out, const an_capture *m, const an_tree *t,
                  int colour);
void an_text_split(FILE *out, const an_capture *m, const an_split *s,
                   int colour);
void an_text_over_time(FILE *out, const an_capture *m, const an_over_time *ot,
                       int colour);
/* --frames: the scopes' columns, then fc's first fc->ntext counters (fc
 * may be NULL: none), each cell the frame's value, ending in '*' when
 * carried from before the frame, '-' when there is none yet. The values
 * come from an_frames_walk, which may read the file again: returns its
 * error (CAP_OK, or as an_series_walk; the lines already written stay). */
cap_result an_text_frames(FILE *out, const an_capture *m, const an_frames *f,
                          const an_frame_counters *fc, int colour);

/* One verdict as a sentence (no indent, ends with a newline). The device
 * rows (device-*) cite ev, the over-time result's evidence (NULL: they
 * print without the readings). */
void an_text_verdict(FILE *out, const an_verdict *v, const an_evidence *ev);

/* The word or "%.2fx" for a ratio, right-aligned in `width` columns. */
void an_text_ratio(FILE *out, an_ratio r, int width);

/* ---- CSV --------------------------------------------------------------- */

void an_csv_ranking(FILE *out, const an_ranking *r);
void an_csv_tree(FILE *out, const an_tree *t);
void an_csv_split(FILE *out, const an_split *s);
/* Per bin: the frame row, the top scopes' rows, the counters' rows. */
void an_csv_over_time(FILE *out, const an_over_time *ot);
/* --frames: with f->only, one row per frame; otherwise one row per frame
 * and scope that ran in it (every scope, not only f->cols). Then, per
 * frame, one row per counter of fc (all of them; fc may be NULL) that has
 * a value: track "counter" (the mean of its samples inside the frame) or
 * "counter-carried" (the last sample before it), the counter's name, and
 * its value in the last column (in the counter's unit, not ms). Returns
 * as an_text_frames does (CAP_E_NOMEM too). */
cap_result an_csv_frames(FILE *out, const an_capture *m, const an_frames *f,
                         const an_frame_counters *fc);

/* Write one CSV text field, quoted through libcsv when it needs quoting
 * (a comma, quote, line break, or leading/trailing space). */
void an_csv_field(FILE *f, const char *s);

#endif
