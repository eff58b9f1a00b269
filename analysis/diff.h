/*
 * diff.h - compare two captures scope by scope (capture_diff's numbers).
 *
 * Scopes are matched by track kind and name (or by call path). Each
 * scope's samples are its self time per frame (0 in a frame where it did
 * not run); the frame-time row, named "(frame)", uses frame durations. A
 * scope that ran in fewer than 90 % of the frames of either run is
 * averaged over blocks of `block` consecutive frames instead: blocks
 * absorb a thread out of phase with the frame marks (a render thread that
 * runs twice in one frame and not in the next), which frame by frame looks
 * like a doubling. Frame by frame stays the rule where it can, because a
 * frame that a preemption stretched spoils one sample, not a block. A scope that ran in fewer than min_frames frames of a run is
 * given its per-frame values there instead, and is judged insufficient. The statistics
 * (shift, order-statistic interval, minimum-effect U test, Holm across
 * every row compared, verdicts) are diffstat.h's.
 *
 * Practical significance: a row's band is the larger of the relative
 * threshold (threshold_pct of its base median) and an absolute floor in
 * time per frame, floor_us or floor_share_pct of the base run's median
 * frame time, whichever is larger.
 *
 * Waits: rows whose scope the producer tagged as a wait (an_scope.is_wait)
 * or whose name matches a wait pattern are marked; their verdicts are
 * reported but do not count in `gating` unless gate_waits is set. The
 * "(frame)" row is wall time, which holds every wait and whatever else the
 * machine ran: it is judged but gates only with gate_frame. Rows
 * whose name matches an exclude pattern (fnmatch glob) are dropped before
 * anything is tested.
 */
#ifndef AN_DIFF_H
#define AN_DIFF_H

#include <stdio.h>

#include "diffstat.h"
#include "model.h"

typedef struct an_diff_row {
    an_kind kind;
    int is_frame;          /* the "(frame)" row */
    int is_wait;           /* a wait (tagged, or matched a wait pattern) */
    int gates;             /* its regression counts in an_diff.gating */
    size_t block;          /* frames per sample: 1, or an_diff.block */
    const char *name;      /* display name or path; borrowed from a model */
    cap_diffstat d;
    double base_mean_ms, new_mean_ms; /* self time per frame, all frames */
    double base_total_ms, new_total_ms; /* self time inside the frames */
    double sort_key;       /* |change of the mean self time per frame| */
} an_diff_row;

typedef struct an_diff {
    an_diff_row *rows;     /* frame row first, then regressions that gate,
                              other regressions and improvements, the
                              rest; each group by sort_key */
    size_t n;
    double geomean_pct;    /* NaN when no scope qualified */
    size_t geomean_used;
    size_t regressed, improved;
    size_t gating;         /* regressed rows that gate (not waits, unless
                              gate_waits): capture_diff exits 1 when > 0 */
    size_t waits;          /* rows marked as waits */
    size_t excluded;       /* rows dropped by an exclude pattern */
    double floor_ms;       /* the floor in time per frame that was used */
    double floor_share_pct;/* the share it came from, or 0 when it came
                              from floor_us */
    double frame_ms;       /* the base run's median frame time */
    size_t block;          /* frames per sample */
} an_diff;

/* Defaults of an_diff_options. */
#define AN_DIFF_DEFAULT_FLOOR_SHARE_PCT 0.1
#define AN_DIFF_DEFAULT_BLOCK 8

/* How to compare two captures. Zero-initialise; zero fields take their
 * defaults. */
typedef struct an_diff_options {
    cap_diff_options stat;  /* threshold, alpha, min_frames */
    double floor_us;        /* absolute floor, us per frame; default 0 */
    double floor_share_pct; /* floor as a share of the base run's median
                               frame time, percent; default
                               AN_DIFF_DEFAULT_FLOOR_SHARE_PCT. The floor is
                               the larger of the two */
    const char *only_scope; /* compare this name only (the frame row is
                               kept); NULL: every scope */
    const char *const *exclude; /* glob patterns: rows dropped */
    size_t nexclude;
    const char *const *wait;    /* glob patterns: rows marked as waits */
    size_t nwait;
    int gate_waits;         /* waits' regressions gate too */
    int gate_frame;         /* the (frame) row's regression gates too */
    size_t block;           /* frames averaged into one sample; default
                               AN_DIFF_DEFAULT_BLOCK, fewer when the shorter
                               run would give under min_frames samples */
} an_diff_options;

/* Compare base and new under opt (NULL: defaults). On success *out owns
 * its rows (free with an_diff_free); names are borrowed from the models,
 * which must outlive it. Returns CAP_OK, CAP_E_NOMEM, or CAP_E_MISUSE (bad
 * options: as cap_diff_options_resolve, a floor negative or not finite). */
cap_result an_diff_run_opts(an_diff *out, const an_capture *base,
                            const an_capture *new_, const an_diff_options *opt);

/* an_diff_run_opts with the statistics options opt, only_scope, and every
 * other option at its default. */
cap_result an_diff_run(an_diff *out, const an_capture *base,
                       const an_capture *new_, const cap_diff_options *opt,
                       const char *only_scope);

void an_diff_free(an_diff *d);

/* The report: text (sorted, top rows) or CSV. top == 0: every row. opt
 * are the statistics options the diff was run with (for the footer's
 * statement of the rule). Returns 0, or -1 for invalid options. */
int an_diff_report(FILE *out, const an_diff *d, const cap_diff_options *opt,
                   int csv, int colour, size_t top);

#endif
