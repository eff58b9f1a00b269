/*
 * report.h - what read_capture's reports compute, as plain data.
 *
 * Each report is one compute call that returns a struct and prints
 * nothing; the writers in render/ (text, CSV, SVG) only render those
 * structs. The pattern, the same for every report:
 *
 *     an_over_time ot;
 *     cap_result r = an_over_time_compute(&ot, m, &opt);
 *     if (r == CAP_OK) { an_text_over_time(stdout, m, &ot, style);
 *                        an_over_time_free(&ot); }
 *
 * Errors (the only ones any function here returns): CAP_E_NOMEM when
 * memory ran out, CAP_E_MISUSE when a named scope does not exist (the
 * caller checks names first with an_find_scope to print its own message).
 * On error the output struct holds nothing to free. Every `*_free`
 * accepts a zeroed or already freed struct.
 *
 * Lifetime: results borrow from the model (scope and node pointers, names)
 * and are valid until an_free(m); arrays inside are owned by the result
 * and released by its `*_free`.
 *
 * Units: times in the results are milliseconds (double) unless the field
 * name ends in _ns; shares are percentages; NAN marks "no value" (an empty
 * bin, no frames) and is never a growth or ratio: those are an_ratio.
 */
#ifndef AN_REPORT_H
#define AN_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "bins.h"
#include "evidence.h"
#include "model.h"
#include "verdict.h"

/* ---- shared pieces ----------------------------------------------------- */

/* Summary of a set of values (ms): NAN fields when n == 0. */
typedef struct an_summary {
    size_t n;
    double mean, median, p95;
} an_summary;

/* Summary of v[0..n), which is sorted in place. */
an_summary an_summarize(double *v, size_t n);

/* Sort base[0..n) of `size`-byte elements by cmp, in place (heapsort: no
 * scratch, where qsort and cap_stats_sort take a copy; for arrays as long
 * as the frames). With a total order (cmp never 0 for distinct elements,
 * or equal elements identical) the result is qsort's. Elements larger
 * than AN_SORT_MAX_SIZE bytes go to qsort. Internal to the analysis
 * library. */
#define AN_SORT_MAX_SIZE 32
void an_sort_in_place(void *base, size_t n, size_t size,
                      int (*cmp)(const void *, const void *));

/* Ascending order of two doubles (NAN-free), for qsort and the above. */
int an_cmp_double(const void *a, const void *b);

/* For each of rows[0..nrows) (indexes into m->scopes) and each group
 * g < ngroups: the summary (ms) of the row's self time per frame over the
 * frames f with group_of[f] == g (zeros where it did not run; frames with
 * any other group_of are left out), into out[r * ngroups + g]. Exact
 * model: an_summarize of those values. Summarised: n and mean exact (up
 * to rounding), median and p95 within AN_HIST_REL_ERR. Errors: as
 * an_series_scan. */
cap_result an_series_summaries(const an_capture *m, const uint32_t *group_of,
                               size_t ngroups, const size_t *rows,
                               size_t nrows, an_summary *out);

/* ---- waits ------------------------------------------------------------- */

/* an_mark_waits: model.h (the load marks them too). */

/* ---- totals and time outside frames ------------------------------------ */

/*
 * The denominators every share uses, and the time recorded outside frames.
 * A share is a row's self time over the recorded time of its kind (all
 * CPU scopes' self time, on every thread, inside frames or not; likewise
 * GPU), so the shares of one kind sum to 100 % and never exceed it.
 */
typedef struct an_totals {
    int64_t cpu_ns;          /* sum of every CPU scope's self time */
    int64_t gpu_ns;          /* sum of every GPU span's self time */
    int64_t frame_ns;        /* sum of frame durations */
    int64_t outside_ns;      /* CPU self time in no frame (the three below) */
    int64_t before_ns;       /* ... in scopes begun before the first frame */
    int64_t between_ns;      /* ... in gaps between frames */
    int64_t after_ns;        /* ... after the last frame ended */
    size_t threads;          /* CPU threads declared or seen */
    int outside_shown;       /* 1 when the reports name the time outside
                                frames: at least AN_OUTSIDE_SHOWN_PERMILLE
                                thousandths of cpu_ns, or a thread that ran
                                only outside frames (a few scopes still
                                running when the last frame ended are not
                                worth a line) */
    int outside_warned;      /* ... and warn of it: at least
                                AN_OUTSIDE_WARNED_PERMILLE thousandths, or
                                such a thread (a live window's waits that
                                run past its last frame, 0.2 % of a 1 s
                                window, are not worth a warning that
                                --strict turns into a failure) */
} an_totals;

#define AN_OUTSIDE_SHOWN_PERMILLE 1
#define AN_OUTSIDE_WARNED_PERMILLE 10

/* Fill *t from the model. Cannot fail. */
void an_totals_compute(const an_capture *m, an_totals *t);

/* ---- frame-time statistics --------------------------------------------- */

typedef struct an_frame_stats {
    size_t n;                               /* frames */
    double mean, median, p95, p99, p999, max; /* ms */
    double low1;          /* mean of the slowest 1 % of frames (ms) */
    size_t low1_frames;   /* how many frames that is (at least 1) */
    size_t stutters;      /* frames over 2.5x the median of the 31 frames
                             centred on them */
    int groups;           /* 1, or 2: the frame times fall in a light and
                             a heavy group all along (an_frame_split) */
    double group_ms[2];   /* two groups: each one's median frame (ms) */
    double group_share[2]; /* two groups: each one's share of the frames */
} an_frame_stats;

/* Fill *fs (zeroed when there are no frames). Errors: CAP_E_NOMEM. */
cap_result an_frame_stats_compute(an_frame_stats *fs, const an_capture *m);

/* ---- ranking ----------------------------------------------------------- */

typedef struct an_rank_row {
    const an_scope *scope;      /* borrowed from the model */
    double pf_mean, pf_p95;     /* self ms per frame; NAN without frames */
    double share_pct;           /* self over an_totals.cpu_ns or gpu_ns;
                                   NAN when that total is 0 */
} an_rank_row;

/* Scopes ranked by self time: CPU rows first (rows[0..ncpu)), then GPU,
 * each by descending self time, ties by name. */
typedef struct an_ranking {
    an_rank_row *rows;
    size_t n, ncpu;
    an_totals totals;
    size_t nwait;    /* CPU rows that are waits (an_scope.is_wait: tagged
                        by the program, or read_capture --wait) */
    int64_t wait_ns; /* their self time, part of totals.cpu_ns */
    unsigned cpus;   /* the machine's CPUs (an_machine_cpus), or 0 */
    double busy;     /* the self time per frame of the CPU rows that are
                        not waits over the mean frame x cpus (1.0: every
                        CPU busy in such scopes all along); NaN without
                        frames, cpus or a wait (nothing says which scopes
                        block) */
} an_ranking;

/* From this busy share the text ranking says that threads may wait for a
 * core inside their scopes (capture_diff measured 86-94 % on same-code
 * runs that it could not tell apart, 33 % on ones it could). */
#define AN_BUSY_NOTE_SHARE 0.75

cap_result an_ranking_compute(an_ranking *out, const an_capture *m);
void an_ranking_free(an_ranking *r);

/* ---- call tree --------------------------------------------------------- */

typedef struct an_tree_row {
    const an_node *node;   /* borrowed from the model */
    int depth;             /* -1 for a root (thread or GPU track), 0 for a
                              top-level scope */
    int64_t total_ns;      /* a root's total is its children's sum */
    double share_pct;      /* total over an_tree.denom_ns[kind]; NAN when
                              that is 0 */
    size_t path_off;       /* "thread;a;b" at an_tree.paths + path_off */
} an_tree_row;

/* The merged call tree in display order (pre-order; CPU roots first, in
 * the order of an_capture.threads (as declared: the header's order), then
 * GPU tracks as they appeared; children by descending total), after
 * --depth / --min-share pruning (roots are never pruned). */
typedef struct an_tree {
    an_tree_row *rows;
    size_t n;
    char *paths;           /* NUL-separated call paths */
    double denom_ns[2];    /* per an_kind: the recorded self time (as
                              an_totals.cpu_ns / gpu_ns) */
} an_tree;

/* max_depth < 0: no limit; nodes whose share is under min_share_pct are
 * left out with their subtrees. */
cap_result an_tree_compute(an_tree *out, const an_capture *m, int max_depth,
                           double min_share_pct);
void an_tree_free(an_tree *t);

/* ---- split: fastest vs slowest quarter --------------------------------- */

#define AN_SPLIT_HIST_BINS 9
/* The two quarters' median frame times within this many percent: held. */
#define AN_SPLIT_HELD_PCT 2.0
/* an_split_compute's split_by that orders frames by their CPU work: the
 * self time of every CPU scope that is not a wait, summed per frame (the
 * "(all CPU work)" row of --over-time). */
#define AN_SPLIT_BY_WORK "(all CPU work)"
/* Lower edges of the frame/GPU ratio histogram bins; the last is open. */
extern const double an_split_hist_edges[AN_SPLIT_HIST_BINS];

typedef struct an_split_scope {
    const an_scope *scope;     /* borrowed */
    an_summary pop[2];         /* self ms per frame: fast, slow */
} an_split_scope;

typedef struct an_split {
    size_t nframes;            /* frames in the capture */
    size_t quarter;            /* frames per population; 0: too few */
    const an_scope *by;        /* ordered by this scope's self time, or
                                  NULL: by frame time (or by_work) */
    int by_work;               /* ordered by the frame's CPU work
                                  (AN_SPLIT_BY_WORK) */
    an_summary work[2];        /* by_work: that CPU work (ms) of each
                                  population's frames */
    size_t *pop_frames[2];     /* frame positions of fast, slow (quarter
                                  each, ascending by the ordering key) */
    an_summary frame[2];       /* frame ms */
    double held_pct;           /* ordered by frame time: how much longer
                                  the slow quarter's median frame is than
                                  the fast one's, in percent; NaN when
                                  ordered by a scope */
    int held;                  /* held_pct under AN_SPLIT_HELD_PCT: a
                                  frame cap, vsync or a pacing thread holds
                                  the frame time, and ordering by it says
                                  little about the work */
    an_summary ratio[2];       /* frame/GPU ratio over frames with GPU */
    size_t hist[2][AN_SPLIT_HIST_BINS];
    an_split_scope *scopes;    /* by descending |delta of the mean| */
    size_t nscopes;
} an_split;

/* split_by: a scope name (CPU first, then GPU), AN_SPLIT_BY_WORK, or NULL
 * (frame time). AN_SPLIT_BY_WORK on a summarised model (an_capture.approx)
 * needs the load's over_time_hint (an_capture.ot_sums). Errors:
 * CAP_E_NOMEM, CAP_E_MISUSE (no such scope; AN_SPLIT_BY_WORK on a
 * summarised model without those sums). */
cap_result an_split_compute(an_split *out, const an_capture *m,
                            const char *split_by);
void an_split_free(an_split *s);

/* ---- over time --------------------------------------------------------- */

#define AN_OT_TOP 8          /* top work scopes followed over time */
#define AN_OT_TOP_WAITS 4    /* and top wait scopes */

/* Two groups of frames (a game that alternates light and heavy frames):
 * a bin's median would jump between the groups with the share of heavy
 * frames it happens to hold (or land on one group when the bins are
 * shorter than the alternation). When the frames split cleanly in two
 * all along the capture, each group's median is taken apart in each bin
 * and the two weighted by the capture's mix (docs/VERDICTS.md, "Two
 * groups of frames"). The frames, in time order, are cut into chunks of
 * AN_OT_GROUP_CHUNK, each split where its window (the chunk and
 * AN_OT_GROUP_REACH chunks each side) holds the most between-group
 * variance of log frame time (less the window's linear trend: a device
 * that slows spreads each group, not the gap). Every window must split
 * cleanly: at least AN_OT_GROUP_MIN_BIN frames, each side at least 2
 * frames and AN_OT_GROUP_MIN_SHARE of them, the heavy side's median at least
 * AN_OT_GROWTH times the light one's, and the gap between the medians (in
 * log) at least AN_OT_GROUP_SEPARATION times the sides' spread (root mean
 * square of 1.4826 MAD each, at least 0.5 %); and every window's gap
 * within AN_OT_GROUP_SAME of the windows' median gap. Two bins at least
 * must hold frames, and the groups must matter: one bin holds as many
 * heavy frames as light ones or more, another as many light ones or more
 * (else every bin's median lies in one group, where the mix moves it
 * little). When the frame times do not split (a cap holds them), the same
 * is tried on the CPU work per frame. */
#define AN_OT_GROUP_CHUNK 64
#define AN_OT_GROUP_REACH 2
#define AN_OT_GROUP_MIN_BIN 8
#define AN_OT_GROUP_MIN_SHARE 0.05
#define AN_OT_GROUP_SEPARATION 4.0
#define AN_OT_GROUP_SAME 0.25

/* Do v[0..n) (ms per frame, in time order: the frame time, or the CPU
 * work) fall in a light and a heavy group all along, by the windows and
 * the clean-split rule above (not the bins' rule: that one is
 * an_over_time's)? 1: yes, heavy[i] marks frame i's group (1 heavy),
 * group_ms[] gets each group's median and share[] its share of the
 * frames; 0: no (heavy and the rest untouched or partly written);
 * -1: out of memory. Internal to the analysis library. */
int an_frame_split(const double *v, size_t n, uint8_t *heavy,
                   double group_ms[2], double share[2]);

typedef struct an_ot_bin {
    double start_s, end_s;   /* since the first frame's begin */
    size_t frames;
    an_summary frame;        /* frame ms of the frames begun in the bin */
    double level;            /* the frame ms compared across bins:
                                frame.median, or with two groups
                                (an_over_time.groups == 2) each group's
                                median weighted by the capture's mix */
    size_t group_frames[2];  /* two groups: light and heavy frames here */
    double group_median[2];  /* two groups: their median frame ms here
                                (CPU work ms with group_by_work); NAN
                                for a group with no frame here (the
                                bin's figures then take that group's
                                median from the nearest bins with it) */
    an_ratio growth;         /* level over the reference bin's */
} an_ot_bin;

typedef struct an_ot_scope {
    const an_scope *scope;   /* borrowed; scope->is_wait marks a wait */
    double *median, *p95;    /* per bin, self ms per frame; NAN: empty.
                                median: with two groups, each group's
                                median weighted by the mix (as level) */
    an_ratio growth;         /* last non-empty bin over the reference */
    double share;            /* self time over the frame time (0..) */
} an_ot_scope;

typedef struct an_ot_counter {
    const char *name;        /* borrowed */
    double *mean;            /* per bin; NAN: no sample */
    size_t *samples;         /* per bin */
    an_ratio growth;         /* last non-empty bin over the reference */
    int memory;              /* a memory counter (rss, mem, vram, ...) */
    int profiler;            /* owned by the profiler itself (name starts
                                with "cap." or "libcapture."): never a
                                verdict's evidence */
} an_ot_counter;

/* A per-frame sum followed over time (all CPU work, or all CPU waits). */
typedef struct an_ot_total {
    double *median;          /* per bin, ms per frame; NAN: empty bin
                                (two groups: weighted by the mix) */
    an_ratio growth;         /* last non-empty bin over the reference */
} an_ot_total;

typedef struct an_over_time {
    size_t nframes;
    int nbins;
    double width_s;          /* bin width */
    int ref, last;           /* first and last non-empty bins */
    int groups;              /* 1, or 2: every bin's frames fall in a light
                                and a heavy group (AN_OT_GROUP_*) */
    int group_by_work;       /* two groups: found in the CPU work per frame
                                (all CPU scopes not waits, summed), the
                                frame times not splitting (a frame cap
                                holds them); 0: in the frame time */
    double group_share[2];   /* two groups: the share of all frames in the
                                light and the heavy group (the mix) */
    double group_ms[2];      /* two groups: each one's median frame ms (CPU
                                work ms with group_by_work) */
    an_ot_bin *bins;
    an_ot_scope *scopes;     /* the top AN_OT_TOP work scopes by self
                                time, then the top AN_OT_TOP_WAITS waits */
    size_t nscopes;
    an_ot_total work;        /* self time of every CPU scope that is not a
                                wait, summed per frame */
    an_ot_total wait;        /* ... of every CPU wait scope */
    int has_waits;           /* some scope is a wait */
    an_ot_counter *counters;
    size_t ncounters;
    an_verdicts verdicts;    /* what it means: see verdict.h */
    an_evidence evidence;    /* the device's counters, first bin against
                                the last (cause AN_CAUSE_NONE: none) */
} an_over_time;

/* bins: how many (clamped to 1..AN_OT_MAX_BINS; < 1 means 10), or bins
 * of bin_seconds when bin_seconds > 0. Errors: CAP_E_NOMEM. */
cap_result an_over_time_compute(an_over_time *out, const an_capture *m,
                                int bins, double bin_seconds);

/* The verdicts for a computed over-time result (called by
 * an_over_time_compute; exposed for tests and for evidence rows). */
void an_verdicts_decide(an_verdicts *vs, const an_over_time *ot);
void an_over_time_free(an_over_time *ot);

/* ---- frames ------------------------------------------------------------ */

#define AN_FRAMES_MAX_COLS 6

/* Which scopes --frames lists: the one asked for, or the top
 * AN_FRAMES_MAX_COLS by self time as the text's columns (CSV lists every
 * scope that ran in a frame). The values come frame by frame from
 * an_frames_walk, in memory bounded whatever the length (issue 12). */
typedef struct an_frames {
    const an_scope *only;    /* the scope asked for, or NULL */
    const an_scope *cols[AN_FRAMES_MAX_COLS];
    size_t ncols;
    size_t nframes;
} an_frames;

/* scope: a name or NULL. Errors: CAP_E_MISUSE (no such scope). */
cap_result an_frames_compute(an_frames *out, const an_capture *m,
                             const char *scope);
void an_frames_free(an_frames *f);

/* What an_frames_walk hands a writer, frame by frame. */
typedef struct an_frames_sink {
    /* scope s's self time (ns) in frame position `frame` (m->frames):
       every scope that ran in it (0 ns included), in the model's row
       order; with f->only that scope alone, once per frame, 0 where it
       did not run */
    void (*value)(void *ctx, size_t frame, const an_scope *s,
                  int64_t self_ns);
    /* after the frame's values: every frame, in order */
    void (*frame_end)(void *ctx, size_t frame);
    void *ctx;
} an_frames_sink;

/* Hand sink every frame's values of f's scopes (see an_frames_sink),
 * exact: from the series in memory, or on a summarised model from one
 * more read of the file (an_series_walk). Errors: as an_series_walk;
 * frames already handed on stay so. */
cap_result an_frames_walk(const an_capture *m, const an_frames *f,
                          const an_frames_sink *sink);

/* The writers (render/render.h, which includes this header: include it
 * for them), under the former names capture_diff and diff.c still use
 * (kept until their owner moves to the an_ names). */
#define rep_warnings an_text_warnings
#define rep_csv_field an_csv_field

#endif
