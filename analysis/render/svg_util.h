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
 * viewBox), its <title> "WHAT: TITLE", the shared style sheet
 * (`extra_css` appended when not NULL), a white background, and the
 * heading "WHAT: TITLE" at the top left, TITLE cut to fit title_px. */
void an__svg_begin(FILE *f, int width, int height, const char *what,
                   const char *title, const char *extra_css, double title_px);

/* A round top for an axis from 0 that shows values up to v (1 when v is
 * not a positive number). */
double an__svg_axis_top(double v);

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

/* The flame graph document (svg_flame.c) with its colours and extra
 * tooltip lines chosen by a painter: the differential flame graph is the
 * same picture painted by the diff. */
#include "report.h"

typedef struct an__flame_paint {
    void *ctx;
    const char *what;       /* the title's first words */
    const char *subtitle;   /* the line under the title */
    /* the fill ("#RRGGBB") of a scope's box; path is "thread;a;b" */
    void (*fill)(void *ctx, const an_tree_row *r, const char *path,
                 char *buf, size_t n);
    /* more tooltip lines, each starting with '\n' */
    void (*tip)(void *ctx, FILE *f, const an_tree_row *r, const char *path);
    /* a legend drawn at y (legend_h px are kept free for it), or NULL */
    void (*legend)(void *ctx, FILE *f, int y);
    int legend_h;
} an__flame_paint;

/* The flame graph of t; paint NULL: the plain one (an_svg_flame). */
cap_result an__svg_flame_doc(FILE *out, const an_capture *m, const an_tree *t,
                             const char *title, const an__flame_paint *paint);

#endif

/* Move label positions y[0..n) apart so that consecutive ones (in order of
 * y) are at least `gap` apart, staying within [lo, hi] where there is
 * room, each as near its own position as the others allow. */
void an__svg_spread(double *y, size_t n, double gap, double lo, double hi);

/* Write s as lines of at most `cols` columns broken at spaces (a word
 * longer than a line is cut), each a <text> at x, from baseline y down by
 * line_h, at most max_lines (the last one ends in U+2026 when text is
 * left over). `attrs` is added to each <text> (may be ""). Returns the
 * number of lines written. */
int an__svg_para(FILE *f, double x, double y, double line_h, size_t cols,
                 int max_lines, const char *attrs, const char *s);
