/*
 * diff.h - compare two captures scope by scope (capture_diff's numbers).
 *
 * Scopes are matched by track kind and name (or by call path). Each
 * scope's samples are its self time in every frame where it ran; the
 * frame-time row, named "(frame)", uses frame durations. The statistics
 * (median change, bootstrap interval, Mann-Whitney p, Holm across every
 * row compared, verdicts) are diffstat.h's.
 */
#ifndef AN_DIFF_H
#define AN_DIFF_H

#include <stdio.h>

#include "diffstat.h"
#include "model.h"

typedef struct an_diff_row {
    an_kind kind;
    int is_frame;          /* the "(frame)" row */
    const char *name;      /* display name or path; borrowed from a model */
    cap_diffstat d;
    double base_mean_ms, new_mean_ms;
    double sort_key;       /* |change of the mean self time per frame| */
} an_diff_row;

typedef struct an_diff {
    an_diff_row *rows;     /* frame row first, then by sort_key */
    size_t n;
    double geomean_pct;    /* NaN when no scope qualified */
    size_t geomean_used;
    size_t regressed, improved;
} an_diff;

/* Compare base and new. only_scope restricts to one name (the frame row is
 * kept). Returns CAP_OK, CAP_E_NOMEM, or CAP_E_MISUSE (bad options). */
cap_result an_diff_run(an_diff *out, const an_capture *base,
                       const an_capture *new_, const cap_diff_options *opt,
                       const char *only_scope);

void an_diff_free(an_diff *d);

/* The report: text (sorted, top rows) or CSV. top == 0: every row. */
int an_diff_report(FILE *out, const an_diff *d, const cap_diff_options *opt,
                   int csv, int colour, size_t top);

#endif
