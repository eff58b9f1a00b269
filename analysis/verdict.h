/*
 * verdict.h - what --over-time concludes, as data: one rule table.
 *
 * The rules are the rows of AN_VERDICT_LIST below, in the order they are
 * tried; docs/VERDICTS.md is the same table in prose (keep them in step:
 * tests/test_verdicts.c exercises every row). The analysis fills an
 * an_verdicts with the rows that hold and their figures; a writer turns
 * each into a sentence (render/text.c) or a row (render/csv.c).
 *
 * Device evidence (issue #17): analysis/evidence.* reads the device's
 * clocks and temperatures in the first and last bins (an_over_time.
 * evidence). When they point to a cause, one of the device-* rows takes
 * the place of the row about the scopes' growth (or of steady), so the
 * report says one sentence that cites both: its fig[0..4] are the cited
 * row's, fig[5] that row's kind (AN_V_COUNT: it stands alone, fig[0] the
 * growth of all CPU work), `scope` the cited row's.
 */
#ifndef AN_VERDICT_H
#define AN_VERDICT_H

#include <stddef.h>

/* ---- thresholds (the figures the rules compare against) ---------------- */

#define AN_OT_GROWTH 1.10      /* a growth at or above this is growth */
#define AN_OT_SHRINK 0.90      /* at or below this, a shrink */
#define AN_OT_FLAT 0.05        /* |growth - 1| under this is flat */
#define AN_OT_UNIFORM 0.20     /* (max - min) / mean growth of the work
                                  scopes at or under this is uniform */
#define AN_OT_MIN_SHARE 0.02   /* scopes under 2 % of the frame time are
                                  noise for the verdict */
#define AN_OT_COLD 0.90        /* first bin under 0.9x the settled
                                  median: a cold start */
#define AN_OT_APART_EVERY 4   /* one work scope in this many (one of four
                                  to seven, two of eight) may stand apart
                                  from a uniform growth */
#define AN_OT_APART_MAX 2     /* the most that may (AN_OT_TOP / 4) */
#define AN_OT_ZERO_MS 0.0005   /* medians under this (shown as 0.000 ms)
                                  are zero: no growth is computed on them */

/* ---- ratios that may have no value ------------------------------------- */

typedef enum an_ratio_state {
    AN_RATIO_VALUE = 0,    /* value holds the ratio */
    AN_RATIO_NO_DATA,      /* a side is missing (empty bin, no sample) */
    AN_RATIO_FROM_ZERO,    /* the reference is zero, the other is not */
    AN_RATIO_AT_ZERO,      /* both are zero: nothing to compare */
    AN_RATIO_INFINITE      /* a side is infinite (a counter's value) */
} an_ratio_state;

typedef struct an_ratio {
    an_ratio_state state;
    double value;          /* num / den when state == AN_RATIO_VALUE,
                              else NAN */
} an_ratio;

/* num / den, where |x| < zero counts as zero (0 for exact zero); NAN
 * inputs give AN_RATIO_NO_DATA, infinite ones AN_RATIO_INFINITE. Never
 * divides by zero; the value is never NAN or infinite. */
an_ratio an_ratio_of(double num, double den, double zero);

/* ---- the rule table ---------------------------------------------------- */

/*
 * X(enum, key, figures, rule). `key` is the stable name in CSV output and
 * docs; `figures` names fig[0..5] in order; `scope` (when the row names
 * one) is an_verdict.scope.
 */
#define AN_VERDICT_LIST(X)                                                    \
    X(AN_V_TOO_SHORT, "too-short",                                            \
      "-",                                                                    \
      "fewer than two non-empty bins: nothing to compare")                    \
    X(AN_V_THROTTLING, "throttling",                                          \
      "mean growth, min growth, max growth, frame growth, growth of `scope` " \
      "(the one that stood apart, if any; a second in `scope2`, growth "     \
      "`fig2`)",                                                              \
      "frame median grew >= 1.10x; the work scopes (not waits, >= 2 % of "    \
      "the frame, or of the CPU work when the work fills less of the frame, " \
      "at least two) grew >= 1.10x on average, each by at least "            \
      "half the mean growth, with a spread <= 20 % of the mean (one such "   \
      "scope in four may stand apart, named, when the rest pass without "   \
      "it: with four to seven, the one farthest from their median growth; " \
      "with eight, two, the farthest then the farthest from the rest's "    \
      "median); memory counters not owned "                                 \
      "by the profiler changed < 5 % over the second half of the bins; "    \
      "also judged with capped-headroom, where the cap hides the growth "   \
      "from the frame time")                                                 \
    X(AN_V_THROTTLING_UNCHECKED, "throttling-unchecked",                      \
      "mean growth, min growth, max growth, frame growth",                   \
      "as throttling, but no memory counter (other than the profiler's) "    \
      "was recorded to rule out growing work")                               \
    X(AN_V_UNIFORM_MEMORY_MOVED, "uniform-memory-moved",                      \
      "mean growth, min growth, max growth, memory growth",                  \
      "as throttling, but a memory counter moved >= 5 % over the second "    \
      "half of the bins: growing work or a leak")                             \
    X(AN_V_WAITS_GREW, "waits-grew",                                          \
      "frame growth, wait growth",                                            \
      "frame median grew >= 1.10x and the waits (summed per frame) added "   \
      "more ms than the work did; `scope` is the wait that added the most: "  \
      "the frame waited longer (GPU, lock, hand-off); not more work")         \
    X(AN_V_WORK_GREW, "work-grew",                                            \
      "frame growth, scope growth",                                           \
      "frame median grew >= 1.10x, unevenly; `scope` is the work scope "      \
      "(never a wait) that added the most ms per frame")                      \
    X(AN_V_CAPPED_HEADROOM, "capped-headroom",                                \
      "work growth, frame median first ms, frame median last ms, "            \
      "frame growth",                                                         \
      "frame median grew less than 1.10x (and shrank no more than to "      \
      "0.90x) while the CPU work per frame (every "                           \
      "scope that is not a wait, summed) grew >= 1.10x: the frame is held "   \
      "(a cap, vsync, a thread that sets the pace) and the work inside it "   \
      "is eating its headroom")                                               \
    X(AN_V_CAP_ABSORBING, "cap-absorbing",                                    \
      "wait first ms, wait last ms, wait growth",                            \
      "with capped-headroom: a wait scope shrank to <= 0.90x; the cap's "     \
      "idle time absorbed the growth and runs out when the wait reaches 0")  \
    X(AN_V_RAMP, "ramp",                                                      \
      "first ms, mid ms, last ms",                                            \
      "frame median rose through the capture: the second half still grew "   \
      ">= 5 %; a ramp that has not settled, not a cold start")                \
    X(AN_V_COLD_START, "cold-start",                                          \
      "first ms, settled ms",                                                 \
      "first bin's frame median < 0.90x the median of the second half's "    \
      "bins, and the second half flat (within 5 %): the device was not warm")\
    X(AN_V_STEADY, "steady",                                                  \
      "frame growth",                                                         \
      "none of the above held")                                               \
    X(AN_V_DEVICE_THERMAL, "device-thermal",                                  \
      "the cited row's figures (fig[0..4]); fig[5] the cited row "           \
      "(an_verdict_kind)",                                                    \
      "the device's counters (analysis/evidence.h) in the first and last "    \
      "bins: the CPU work grew >= 1.10x while a CPU or GPU clock fell to "    \
      "<= 0.90x and a temperature rose >= 5 °C (or NVML reported thermal "    \
      "slowdown): replaces the scope-growth row it cites (throttling, "       \
      "throttling-unchecked, uniform-memory-moved, waits-grew, work-grew, "   \
      "capped-headroom), one sentence: thermal throttling")                   \
    X(AN_V_DEVICE_POWER, "device-power",                                      \
      "as device-thermal",                                                    \
      "as device-thermal, but no temperature rose 5 °C: the clock fell "      \
      "without heat, a power cap or the governor")                            \
    X(AN_V_DEVICE_WORK_GREW, "device-work-grew",                              \
      "as device-thermal",                                                    \
      "the CPU work grew >= 1.10x and clocks were recorded but none fell to " \
      "0.90x: the work grew (even when every scope grew alike, the "          \
      "throttling signature)")                                                \
    X(AN_V_DEVICE_NO_CLOCK, "device-no-clock",                                \
      "as device-thermal",                                                    \
      "the CPU work grew >= 1.10x; temperatures were recorded but no clock: " \
      "the cause cannot be told")                                             \
    X(AN_V_DEVICE_CONTRADICTS, "device-contradicts",                          \
      "as device-thermal",                                                    \
      "a CPU or GPU clock fell to <= 0.90x but the CPU work grew < 1.10x: "   \
      "the evidence contradicts the scopes (the clock did not limit this "    \
      "work); replaces steady, else the scope-growth row")

typedef enum an_verdict_kind {
#define AN__V_ENUM(e, key, figs, rule) e,
    AN_VERDICT_LIST(AN__V_ENUM)
#undef AN__V_ENUM
    AN_V_COUNT
} an_verdict_kind;

/* One row of the table that held, with its figures. */
typedef struct an_verdict {
    an_verdict_kind kind;
    double fig[6];              /* as the row's `figures` name them */
    const char *scope;          /* a scope name, borrowed from the model,
                                   or NULL */
    const char *scope2;         /* throttling rows: the second scope that
                                   stood apart (borrowed), or NULL */
    double fig2;                /* its growth, when scope2 is set */
} an_verdict;

#define AN_VERDICTS_MAX 8

typedef struct an_verdicts {
    an_verdict v[AN_VERDICTS_MAX];
    size_t n;
} an_verdicts;

/* Append a row (ignored when full). */
void an_verdicts_add(an_verdicts *vs, an_verdict v);

/* 1 when a row of that kind is in vs. */
int an_verdicts_has(const an_verdicts *vs, an_verdict_kind k);

/* The row's stable key ("throttling"), its figure names and its rule;
 * static strings, "?" for a value outside the table. */
const char *an_verdict_key(an_verdict_kind k);
const char *an_verdict_figures(an_verdict_kind k);
const char *an_verdict_rule(an_verdict_kind k);

#endif
