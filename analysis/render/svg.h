/*
 * svg.h - the pictures: reports written as standalone SVG documents.
 *
 * Each function renders data the analysis has already computed (the model
 * of model.h and the statistics of report.h) into one SVG 1.1 document on
 * `out`. The output is exact: the same capture and options give the same
 * bytes on every run (coordinates are printed with fixed decimals, nothing
 * depends on the clock or on the locale's decimal point, which the tools
 * leave as "C"), so the CLI tests compare it like any text report.
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
 * Return values: 0 written (the caller checks ferror(out) for write
 * errors), -1 out of memory (what was written so far is incomplete).
 */
#ifndef AN_SVG_H
#define AN_SVG_H

#include <stdio.h>

#include "model.h"

/* The flame graph of the call tree merged by path (an_capture.nodes): one
 * section per CPU thread, then one per GPU track (CPU and GPU are never
 * stacked together), each drawn top-down from its root (the thread or
 * track) with boxes as wide as their total time, children sorted by total
 * time (largest first, then by name). Boxes narrower than 0.1 px are left
 * out (with their children). Each box's tooltip gives its calls, total and
 * self time in ms and its share of the total frame time (of all roots'
 * time when the capture has no frames) and of its thread or track. A click
 * on a box zooms into it, "Search" highlights the boxes whose name
 * contains a string (both through the inline script). `title` heads the
 * picture (usually the capture's path); NULL uses m->path. */
int an_svg_flame(FILE *out, const an_capture *m, const char *title);

/* The frame-time chart: each frame's duration (x: frame number, y: ms),
 * reduced to the minimum and maximum of each pixel column when there are
 * more frames than columns (so no single spike disappears); the GPU time
 * of each frame on the same axis; horizontal lines at the median, p95 and
 * p99 frame time; stutters (frames over 2.5x the median of the 31 frames
 * around them, as in the text report) marked above the plot, each with a
 * tooltip naming the frame. `title` as for an_svg_flame. */
int an_svg_frames(FILE *out, const an_capture *m, const char *title);

#endif
