/*
 * diff.h - compare two captures, or several runs a side, scope by scope
 * (capture_diff's numbers).
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
 *
 * Several runs a side (an_diff_runs): a row's samples are those of each
 * run, made as above (the block size from the shortest run; frame by frame
 * only when the scope ran in 90 % of the frames of every run), pooled per
 * side, with each run's count kept for the between-run test of
 * cap_diff_compare_runs. A scope missing from some runs of a side where it
 * is present in others has a run with no samples there: INSUFFICIENT. The
 * floor's frame time is the median over every frame of the base runs.
 * With one run a side the result is an_diff_run_opts's, bit for bit.
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

/* One side of a comparison whose frames fall in a light and a heavy group
 * (an_diff_mix). */
typedef struct an_diff_side_groups {
    size_t split;          /* runs of this side whose frame times split in
                              two groups themselves (an_frame_split); the
                              others' frames are classed by the cut */
    size_t frames, heavy;  /* frames of the side's runs, heavy ones */
    double share;          /* heavy / frames */
    double light_ms, heavy_ms; /* median frame time of each group on this
                              side (NaN when it has no frame of it) */
    size_t batches;        /* batches of an_diff_mix.batch frames */
    double share_se;       /* standard error of share: the SD of the
                              batches' shares over sqrt(batches) (NaN
                              under 2 batches) */
} an_diff_side_groups;

/* The frames' mix of two groups compared (docs/STATISTICS.md section 17):
 * found when the frame times of some run split in a light and a heavy
 * group all along (an_frame_split), or, where none does and no run is
 * summarised, its CPU work per frame (by_work). d holds the change of the mean frame
 * that the change of the heavy share alone makes, (new share - base
 * share) x (heavy_ms - light_ms), as a row of its own: delta_ms, its
 * interval (t, from batch means), band_ms (the rows' threshold of the
 * base side's mixed level light_ms + share x gap, or the floor), p_value
 * (= p_adjusted: not in the rows' Holm family) and verdict (the rows'
 * rule, cap_diff_verdict); its base_median and
 * new_median are the heavy shares in percent, its means and p95 NaN. */
typedef struct an_diff_mix {
    int found;             /* the rest is filled only when 1 */
    int by_work;           /* the groups are of the CPU work per frame (its
                              CPU rows that are not waits): no run's frame
                              times split, as under a frame cap; the *_ms
                              below are then CPU work per frame */
    int crowded;           /* some run split, and another's frames crowd
                              the cut between the groups or lie at
                              neither group's level: not the same groups,
                              nothing compared (found 0) */
    double light_ms, heavy_ms; /* the groups' levels: the medians, over the
                              runs that split, of their groups' medians */
    double cut_ms;         /* sqrt(light_ms heavy_ms): where the frames of
                              a run that does not split are classed */
    double base_level_ms;  /* light_ms + base share x (heavy_ms - light_ms) */
    size_t batch;          /* frames per batch: twice the mean length of a
                              stretch of one group (the longer side's, over
                              its runs that hold both groups), at least
                              AN_DIFF_MIX_MIN_BATCH */
    an_diff_side_groups base, new_;
    cap_diffstat d;
    int gates;             /* its regression gates the exit status */
} an_diff_mix;

#define AN_DIFF_MIX_ROW "(heavy frames)" /* its name in the report */
#define AN_DIFF_MIX_MIN_BATCH 8     /* frames */
#define AN_DIFF_MIX_MIN_BATCHES 5   /* a side: else not compared (found 0) */
#define AN_DIFF_MIX_CROWD_DIV 20    /* a run that does not split crowds
                                       the cut when over 1/20 of its
                                       frames lie within a quarter of the
                                       groups' gap (in log) of it */

/* Compare the mix of light and heavy frames of run[0..nbase) (base) and
 * run[nbase..nbase+nnew) (new) under opt's threshold and alpha (NULL:
 * defaults), the band at least floor_ms. The groups of CPU work are tried
 * only when every run has its work per frame: a run not summarised sums
 * it (an_cpu_frame_sums), a summarised one has it from its load
 * (an_capture.frame_work_ms, an_options.frame_work). Fills *mix (found
 * 0 when no run's frames split, when mix->crowded, or when a side has
 * fewer than AN_DIFF_MIX_MIN_BATCHES batches). Returns CAP_OK,
 * CAP_E_NOMEM, or CAP_E_MISUSE (NULL arguments, a count of 0, invalid
 * options). */
cap_result an_diff_mix_compute(an_diff_mix *mix,
                               const an_capture *const *run, size_t nbase,
                               size_t nnew, double floor_ms,
                               const cap_diff_options *opt);

typedef struct an_diff {
    an_diff_mix mix;       /* the frames' groups: the "(heavy frames)" row,
                              counted in regressed, improved and gating */
    an_diff_row *rows;     /* frame row first, then regressions that gate,
                              other regressions and improvements, rows
                              within run-to-run spread, the rest; each
                              group by sort_key */
    size_t n;
    double geomean_pct;    /* NaN when no scope qualified */
    size_t geomean_used;
    int geomean_of_means;  /* mix.found: the summary is over the rows'
                              mean self time per frame, not their medians */
    int level_of_means;    /* mix.found: the level a report shows for
                              each row (the frame row's too) is its mean
                              self time per frame over all frames
                              (base_mean_ms, new_mean_ms), not its median,
                              which lands on either group and can jump
                              between them from run to run */
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
    size_t base_runs, new_runs; /* captures on each side */
    size_t tested;         /* rows in the Holm family (p_adjusted not NaN) */
    size_t within_spread;  /* rows whose frames alone put the change past
                              the band but whose runs do not (d.within_spread) */
    int waits_gate;        /* some row that is a wait gates */
    unsigned cpus;         /* the CPUs every run's machine names (the
                              producer writes "..., N CPUs)"), or 0 when
                              a run names none or they differ */
    double base_busy, new_busy; /* each side's CPU self time in the rows
                              that are not waits, inside its frames, over
                              its frames' time x cpus (1.0: every CPU
                              busy in such scopes all along; over 1.0:
                              threads waited for a core inside them);
                              NaN when cpus is 0, with only_scope, with
                              no frame row, or when no CPU row is a wait
                              (nothing says which scopes block; a wait
                              not marked as one still counts as busy) */
    int approx;            /* some run was summarised (an_capture.approx):
                              the samples were read back from histograms
                              (AN_DIFF_APPROX_NOTE says so) */
    uint64_t late_values;  /* summarised runs: values that reached a frame
                              or block already summarised (each counted as
                              a sample of its own) */
} an_diff;

/* What the report says, once, when an_diff.approx. */
#define AN_DIFF_APPROX_NOTE                                                  \
    "samples are read back from log histograms (each value within 0.5 %, "  \
    "docs/STATISTICS.md section 16): the captures hold more scope names x " \
    "frames than the exact budget"

/* capture_diff's budget of exact per-frame values, per capture (model.h:
 * an_options.series_budget): read_capture's. */
#define AN_DIFF_SERIES_BUDGET AN_SERIES_BUDGET_DEFAULT

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

/* Compare nbase base runs with nnew new runs (each at least 1) under opt
 * (NULL: defaults); see the header's prose. Ownership and errors as
 * an_diff_run_opts, which is this function with one run a side; also
 * CAP_E_MISUSE for a count of 0 or a NULL array or model. */
cap_result an_diff_runs(an_diff *out, const an_capture *const *base,
                        size_t nbase, const an_capture *const *new_,
                        size_t nnew, const an_diff_options *opt);

/* an_diff_run_opts with the statistics options opt, only_scope, and every
 * other option at its default. */
cap_result an_diff_run(an_diff *out, const an_capture *base,
                       const an_capture *new_, const cap_diff_options *opt,
                       const char *only_scope);

/* Each row's self time summed over blocks of frames, in histograms: what
 * a summarised run's blocked rows need beyond the model (the block means
 * depend on the order of the frames, which the row's histogram has
 * lost). Filled during the load (an_diff_load). Opaque. */
typedef struct an_diff_sums an_diff_sums;

void an_diff_sums_free(an_diff_sums *s);

/* Load the captures paths[0..n) for a comparison under opt (NULL:
 * defaults) with the load options lo (NULL: defaults): m[i] receives
 * capture i's model and sums[i] its block sums (planned from opt's block
 * and min_frames and the capture's frames; they hold something only when
 * the model is summarised: lo->series_budget). The files are loaded
 * concurrently, one load a thread (an_options.threads 1 unless lo says
 * otherwise), on `threads` threads (0: one per core, at most n; one
 * when the environment sets CAP_READ_THREADS=1); the models are the same
 * whatever the count. Returns CAP_OK (free each m[i] with an_free and
 * sums[i] with an_diff_sums_free), or the error of the first capture in
 * order that failed, with *failed its index and its one-line message in
 * detail (as an_load's); then every m[i] and sums[i] is NULL. Invalid
 * statistics options in opt are an_diff_runs' to refuse: the sums are
 * then planned with the defaults. CAP_E_MISUSE for m, sums, paths or
 * failed NULL. */
cap_result an_diff_load(an_capture **m, an_diff_sums **sums,
                        const char *const *paths, size_t n,
                        const an_options *lo, const an_diff_options *opt,
                        size_t threads, size_t *failed, char *detail,
                        size_t detail_size);

/* an_diff_runs with each run's block sums from an_diff_load (either array,
 * or any entry, may be NULL: a summarised run without them, or with
 * sums of another block size, is read again through an_series_scan for
 * its blocked rows). On a summarised run (an_capture.approx) every row's
 * samples are read back from histograms (weighted samples,
 * cap_diff_compare_w) and out->approx is set. Errors as an_diff_runs. */
cap_result an_diff_runs_sums(an_diff *out, const an_capture *const *base,
                             const an_diff_sums *const *base_sums,
                             size_t nbase, const an_capture *const *new_,
                             const an_diff_sums *const *new_sums, size_t nnew,
                             const an_diff_options *opt);

void an_diff_free(an_diff *d);

/* The report (analysis/render/diff_report.c): text (sorted, top rows) or
 * CSV. top == 0: every row. opt are the statistics options the diff was
 * run with (for the footer's statement of the rule). With several runs on
 * a side the text adds a "run sd" column, marks the rows within
 * run-to-run spread and states the runs in its footer, and the CSV adds
 * the run columns after `block` (docs/STATISTICS.md section 15); with one
 * run a side both are as they always were. Returns 0, or -1 for invalid
 * options. */
int an_diff_report(FILE *out, const an_diff *d, const cap_diff_options *opt,
                   int csv, int colour, size_t top);

#endif
