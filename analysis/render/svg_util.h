/*
 * svg_util.h - what every picture shares: the document's head, XML text,
 * label widths, axis ticks and the palette. Internal to analysis/render.
 */
#ifndef AN_SVG_UTIL_H
#define AN_SVG_UTIL_H

#include <stddef.h>
#include <stdio.h>

/* Fonts: labels are measured as if every character were 0.6 em wide,
 * which is exact for the monospace fonts named first and an upper bound
 * for the usual sans-serif ones, so a truncated label never overflows. */
#define AN__SVG_MONO "DejaVu Sans Mono,Menlo,Consolas,monospace"
#define AN__SVG_SANS "DejaVu Sans,Verdana,Arial,sans-serif"
#define AN__SVG_CHAR_EM 0.6

/* Okabe-Ito colours (safe for the common colour-vision deficiencies). */
#define AN__SVG_ORANGE "#E69F00"
#define AN__SVG_SKY "#56B4E9"
#define AN__SVG_GREEN "#009E73"
#define AN__SVG_YELLOW "#F0E442"
#define AN__SVG_BLUE "#0072B2"
#define AN__SVG_VERMILLION "#D55E00"
#define AN__SVG_PURPLE "#CC79A7"
#define AN__SVG_GREY "#999999"
#define AN__SVG_INK "#222222"

/* The XML prolog, the <svg> element (width x height px, with a matching
 * viewBox), its <title>, a white background and the shared style sheet
 * (`extra_css` appended when not NULL). */
void an__svg_head(FILE *f, int width, int height, const char *title,
                  const char *extra_css);

/* Write s as XML character data or attribute text: & < > " ' escaped,
 * bytes that are not UTF-8 as U+FFFD, control characters as spaces. At
 * most max_cols columns (a character is one column, an East Asian wide
 * one two): a longer string is cut to fit max_cols - 1 columns and ends
 * in U+2026 (max_cols 0 writes nothing). */
void an__svg_text(FILE *f, const char *s, size_t max_cols);

/* Columns s takes, as an__svg_text counts them. */
size_t an__svg_cols(const char *s);

/* How many characters of font size `px` fit in `width` px. */
size_t an__svg_fit(double width, double px);

/* A round tick step (1, 2 or 5 x 10^k) giving at most max_ticks
 * intervals over [0, hi]; hi <= 0 gives 1. */
double an__svg_tick_step(double hi, int max_ticks);

/* A tick value with as many decimals as `step` needs ("0", "2.5", "0.02"). */
void an__svg_tick_label(char *buf, size_t n, double v, double step);

#endif
