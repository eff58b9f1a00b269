/*
 * svg.h - the pictures: reports written as standalone SVG documents.
 *
 * Each function renders a result the analysis has already computed (the
 * structs of report.h, diff.h and frame_chart.h; it computes nothing of
 * its own) into one SVG 1.1 document on `out`. The output is exact: the
 * same capture and options give the same bytes on every run (coordinates
 * are printed with fixed decimals, nothing depends on the clock or on the
 * locale's decimal point, which the tools leave as "C"), so the CLI tests
 * compare it like any text report.
 *
 * Every document:
 *   - loads nothing from outside (no fonts, images, style sheets or links);
 *   - reads without its script: the optional inline script only adds
 *     interaction (zoom and search in the flame graph);
 *   - escapes names for XML (& < > " '), replaces bytes that are not UTF-8
 *     with U+FFFD and control characters with spaces, so any scope name
 *     gives a well-formed document;
 *   - truncates labels that do not fit their box (ending in U+2026) and
 *     keeps the full text in the element's <title> tooltip;
 *   - uses colours from the Okabe-Ito palette (distinguishable with the
 *     common colour-vision deficiencies) and never encodes a meaning by
 *     colour alone (labels and tooltips say it too).
 *
 * Return values: CAP_OK written (the caller checks ferror(out) for write
 * errors), CAP_E_NOMEM when memory ran out (what was written so far is
 * incomplete). `title` heads the picture (the capture's path, usually);
 * NULL uses m->path. Results borrow from m, as report.h says.
 */
#ifndef AN_SVG_H
#define AN_SVG_H

#include <stdio.h>

#include "diff.h"
#include "frame_chart.h"
#include "model.h"
#include "report.h"

/* The flame graph of the call tree t (an_tree_compute: merged by call
 * path, pruned by its depth and share limits): one section per CPU thread,
 * then one per GPU track (CPU and GPU are never stacked together), each
 * drawn top-down from its root (the thread or track) with boxes as wide
 * as their total time, in t's order (children by decreasing total). Boxes
 * narrower than 0.1 px are left out (with their children). Each box's
 * tooltip gives its calls, total and self time in ms, its share (t's:
 * of the time recorded on CPU threads, or on GPU tracks) and its share of
 * its own thread or track. A click on a box zooms into it, "Search"
 * highlights the boxes whose name matches (both through the inline
 * script). */
cap_result an_svg_flame(FILE *out, const an_capture *m, const an_tree *t,
                        const char *title);

/* Pixel columns of the frame-time chart's plot: the max_cols to give
 * an_frame_chart_compute for an_svg_frames. */
#define AN_SVG_FRAME_COLUMNS 970

/* The frame-time chart of c (an_frame_chart_compute with
 * AN_SVG_FRAME_COLUMNS columns): each frame's duration (x: frame number,
 * y: ms), as the minimum and maximum of each pixel column when there are
 * more frames than columns (so no single spike disappears); the GPU time
 * of each frame on the same axis; horizontal lines at the median, p95 and
 * p99 frame time; stutters (frames over 2.5x the median of the 31 frames
 * around them, as in the text report) marked above the plot, each with a
 * tooltip naming the frame. When c->ncounters (an_frame_chart_counters,
 * --frames), one strip per counter under the plot, on the same x columns:
 * its per-frame value (the mean of each column's frames), scaled from its
 * minimum to its maximum, both printed; the document grows to fit. */
cap_result an_svg_frames(FILE *out, const an_capture *m,
                         const an_frame_chart *c, const char *title);

/* The over-time chart of ot (an_over_time_compute): x the time since the
 * first frame (a point per bin, at its middle); left axis: the frame
 * median per bin and each top scope's median self time per frame (waits
 * dashed); right axis: the counters' means per bin (the first six); each
 * line named at its right end with its growth (last non-empty bin over
 * the reference); the verdicts written above the plot, as the text
 * report's sentences. */
cap_result an_svg_over_time(FILE *out, const an_capture *m,
                            const an_over_time *ot, const char *title);

/* The split picture of s (an_split_compute): the fastest and the slowest
 * quarter of frames side by side: every frame's time as a tick with the
 * median marked; the frame/GPU ratio histograms of both (s->hist, the
 * text report's bins); the mean self time per frame of the ten scopes
 * that differ most, fast and slow as pairs of bars with their values. */
cap_result an_svg_split(FILE *out, const an_capture *m, const an_split *s,
                        const char *title);

/* The differential flame graph: the flame graph of t (the new run's
 * an_tree) with each scope's box coloured by its row of d (an_diff_run on
 * base and new_, matched by call path when by_path, else by name): only
 * significant rows are coloured (regressed: orange to vermillion,
 * improved: light to deep blue, by the relative change of the median, the
 * deepest from 50 %), added scopes yellow, the rest light grey; tooltips
 * give both medians, the change and its interval, the adjusted p-value and
 * the verdict. */
cap_result an_svg_diff(FILE *out, const an_capture *base, const an_capture *new_,
                       const an_tree *t, const an_diff *d, int by_path,
                       const char *title);

#endif
