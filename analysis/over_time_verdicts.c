/* over_time_verdicts.c - the verdicts of an over-time result: each row
 * of the rule table (verdict.h) decided over an_over_time (report.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* ---- decisions --------------------------------------------------------- */

/* The first bin at or after `from` (up to `last`) where v has a value. */
static int first_valued(const double *v, int from, int last)
{
    for (int b = from; b <= last; b++)
        if (!isnan(v[b]))
            return b;
    return -1;
}

static double median_of(double *v, size_t n)
{
    an_summary s = an_summarize(v, n);
    return s.median;
}

/* Memory counters that are the program's (not the profiler's): 0 none
 * recorded, 1 all flat over the second half, -1 one moved (*moved gets its
 * growth). A rise at the start (buffers warming up) is not judged. */
static int memory_flat(const an_over_time *ot, int mid, double *moved)
{
    int seen = 0;
    for (size_t c = 0; c < ot->ncounters; c++) {
        const an_ot_counter *C = &ot->counters[c];
        if (!C->memory || C->profiler)
            continue;
        int b = first_valued(C->mean, mid, ot->last);
        int e = ot->last;
        while (e > 0 && isnan(C->mean[e]))
            e--;
        if (b < 0 || e <= b)
            continue; /* too few samples to judge */
        seen = 1;
        an_ratio g = an_ratio_of(C->mean[e], C->mean[b], 0);
        if (g.state == AN_RATIO_AT_ZERO || g.state == AN_RATIO_INFINITE)
            continue; /* nothing to judge by */
        if (g.state != AN_RATIO_VALUE || fabs(g.value - 1.0) >= AN_OT_FLAT) {
            *moved = g.state == AN_RATIO_VALUE ? g.value : INFINITY;
            return -1;
        }
    }
    return seen;
}

/* Median of a scope (or total) in the last bin minus the reference (ms). */
static double added_ms(const double *median, const an_over_time *ot)
{
    double d = median[ot->last] - median[ot->ref];
    return isnan(d) ? 0 : d;
}

/* Is the work's growth uniform (the throttling signature)? Over the work
 * scopes (not waits, >= AN_OT_MIN_SHARE of the frame, or of the CPU work
 * when the work fills less than the frame): at least two, a
 * mean growth >= AN_OT_GROWTH, each at least half the mean growth, spread
 * <= AN_OT_UNIFORM of the mean. One scope in AN_OT_APART_EVERY may stand
 * apart when the rest pass without it: the one farthest from the median
 * growth, then (with eight) the one farthest from the median of the rest.
 * A scope whose time moved for its own reason (a thread preempted in a
 * new phase; a scope that wakes another thread, whose cost follows the
 * scheduler, not the clock) does not hide the others' common factor.
 * Figures of the rest in g[0..2] (mean, min, max); those set apart in
 * apart[0..*napart) with their growths in apart_g. */
static int uniform_work(const an_over_time *ot, double g[3],
                        const an_ot_scope *apart[AN_OT_APART_MAX],
                        double apart_g[AN_OT_APART_MAX], size_t *napart)
{
    double v[AN_OT_TOP + AN_OT_TOP_WAITS];
    const an_ot_scope *who[AN_OT_TOP + AN_OT_TOP_WAITS];
    size_t k = 0;
    /* a frame held by a cap is mostly idle: scopes are then judged by
     * their share of the work, not of the frame */
    double floor = AN_OT_MIN_SHARE;
    double wf = ot->work.median ? ot->work.median[ot->ref] /
                                      ot->bins[ot->ref].level
                                : NAN;
    if (wf > 0 && wf < 1)
        floor *= wf;
    for (size_t j = 0; j < ot->nscopes && k < sizeof v / sizeof *v; j++) {
        const an_ot_scope *S = &ot->scopes[j];
        if (S->share < floor || S->growth.state != AN_RATIO_VALUE ||
            S->scope->is_wait)
            continue;
        who[k] = S;
        v[k++] = S->growth.value;
    }
    *napart = 0;
    size_t may = k / AN_OT_APART_EVERY;
    if (may > AN_OT_APART_MAX)
        may = AN_OT_APART_MAX;
    unsigned char out[AN_OT_TOP + AN_OT_TOP_WAITS] = {0};
    for (size_t pass = 0;; pass++) {
        double lo = INFINITY, hi = 0, sum = 0;
        double rest[AN_OT_TOP + AN_OT_TOP_WAITS];
        size_t n = 0;
        for (size_t i = 0; i < k; i++) {
            if (out[i])
                continue;
            lo = v[i] < lo ? v[i] : lo;
            hi = v[i] > hi ? v[i] : hi;
            sum += v[i];
            rest[n++] = v[i];
        }
        double mean = n ? sum / (double)n : NAN;
        if (n >= 2 && mean >= AN_OT_GROWTH && lo - 1.0 >= (mean - 1.0) / 2 &&
            (hi - lo) / mean <= AN_OT_UNIFORM) {
            g[0] = mean;
            g[1] = lo;
            g[2] = hi;
            return 1;
        }
        if (pass == may)
            break;
        /* the scope farthest from the median growth of those left */
        double med = median_of(rest, n), far = -1;
        size_t at = k;
        for (size_t i = 0; i < k; i++)
            if (!out[i] && fabs(v[i] - med) > far) {
                far = fabs(v[i] - med);
                at = i;
            }
        out[at] = 1;
        apart[*napart] = who[at];
        apart_g[(*napart)++] = v[at];
    }
    *napart = 0;
    return 0;
}

/* Add the throttling row (or its unchecked / memory-moved variants) when
 * the work grew uniformly; 1 when it did. */
static int decide_uniform(an_verdicts *vs, const an_over_time *ot, double fg,
                          int mid)
{
    double g[3], apart_g[AN_OT_APART_MAX];
    const an_ot_scope *apart[AN_OT_APART_MAX];
    size_t napart;
    if (!uniform_work(ot, g, apart, apart_g, &napart))
        return 0;
    double moved = 0;
    int mem = memory_flat(ot, mid, &moved);
    an_verdict v = {
        .kind = AN_V_THROTTLING, .fig = {g[0], g[1], g[2], fg}, .scope = 0};
    if (mem == 0)
        v.kind = AN_V_THROTTLING_UNCHECKED;
    else if (mem < 0) {
        v.kind = AN_V_UNIFORM_MEMORY_MOVED;
        v.fig[3] = moved;
    }
    if (napart > 0) {
        v.scope = apart[0]->scope->name;
        v.fig[4] = apart_g[0];
    }
    if (napart > 1) {
        v.scope2 = apart[1]->scope->name;
        v.fig2 = apart_g[1];
    }
    an_verdicts_add(vs, v);
    return 1;
}

static void decide_growth(an_verdicts *vs, const an_over_time *ot, double fg,
                          int mid)
{
    /* who added the most time per frame, work and waits apart */
    const an_ot_scope *best = NULL, *best_wait = NULL;
    for (size_t j = 0; j < ot->nscopes; j++) {
        const an_ot_scope *S = &ot->scopes[j];
        if (S->share < AN_OT_MIN_SHARE || S->growth.state != AN_RATIO_VALUE)
            continue;
        double d = added_ms(S->median, ot);
        if (S->scope->is_wait) {
            if (!best_wait || d > added_ms(best_wait->median, ot))
                best_wait = S;
            continue;
        }
        if (!best || d > added_ms(best->median, ot))
            best = S;
    }
    if (decide_uniform(vs, ot, fg, mid))
        return;
    /* the waits added more time per frame than the work did */
    if (ot->has_waits && best_wait &&
        added_ms(ot->wait.median, ot) > added_ms(ot->work.median, ot)) {
        an_verdicts_add(vs, (an_verdict){.kind = AN_V_WAITS_GREW,
                                         .fig = {fg, best_wait->growth.value},
                                         .scope = best_wait->scope->name});
        return;
    }
    an_verdicts_add(vs,
                    (an_verdict){.kind = AN_V_WORK_GREW,
                                 .fig = {fg, best ? best->growth.value : NAN},
                                 .scope = best ? best->scope->name : NULL});
}

static void decide_capped(an_verdicts *vs, const an_over_time *ot, double fg,
                          int mid)
{
    /* all the CPU work per frame, not a few scopes: on many threads the
     * growth is spread over dozens of small scopes */
    if (ot->work.growth.state != AN_RATIO_VALUE)
        return;
    double wg = ot->work.growth.value;
    if (wg < AN_OT_GROWTH)
        return;
    an_verdicts_add(vs,
                    (an_verdict){.kind = AN_V_CAPPED_HEADROOM,
                                 .fig = {wg, ot->bins[ot->ref].level,
                                         ot->bins[ot->last].level, fg},
                                 .scope = NULL});
    /* the work inside the held frame grew alike everywhere: the throttling
     * signature, which the cap hides from the frame time */
    (void)decide_uniform(vs, ot, fg, mid);
    /* the wait that gave up the most time */
    const an_ot_scope *w = NULL;
    double most = 0;
    for (size_t j = 0; j < ot->nscopes; j++) {
        const an_ot_scope *S = &ot->scopes[j];
        if (!S->scope->is_wait || S->growth.state != AN_RATIO_VALUE ||
            S->growth.value > AN_OT_SHRINK)
            continue;
        double gave = S->median[ot->ref] - S->median[ot->last];
        if (gave > most) {
            most = gave;
            w = S;
        }
    }
    if (w)
        an_verdicts_add(
            vs, (an_verdict){.kind = AN_V_CAP_ABSORBING,
                             .fig = {w->median[ot->ref], w->median[ot->last],
                                     w->growth.value},
                             .scope = w->scope->name});
}

static void decide_start(an_verdicts *vs, const an_over_time *ot, int mid)
{
    double *f = malloc((size_t)ot->nbins * sizeof *f);
    if (!f)
        return;
    size_t k = 0;
    for (int b = mid; b <= ot->last; b++)
        if (ot->bins[b].frames)
            f[k++] = ot->bins[b].level;
    double settled = median_of(f, k);
    free(f);
    double first = ot->bins[ot->ref].level;
    if (!k || !(first < AN_OT_COLD * settled))
        return;
    int m0 = mid;
    while (m0 < ot->last && !ot->bins[m0].frames)
        m0++;
    double fm = ot->bins[m0].level, fl = ot->bins[ot->last].level;
    if (fm > 0 && fl / fm >= 1.0 + AN_OT_FLAT)
        an_verdicts_add(vs, (an_verdict){.kind = AN_V_RAMP,
                                         .fig = {first, fm, fl},
                                         .scope = 0});
    else
        an_verdicts_add(vs, (an_verdict){.kind = AN_V_COLD_START,
                                         .fig = {first, settled},
                                         .scope = 0});
}

/* The device row for a cause (AN_V_COUNT: none). */
static an_verdict_kind device_row(an_cause c)
{
    switch (c) {
    case AN_CAUSE_THERMAL: return AN_V_DEVICE_THERMAL;
    case AN_CAUSE_POWER: return AN_V_DEVICE_POWER;
    case AN_CAUSE_WORK_GREW: return AN_V_DEVICE_WORK_GREW;
    case AN_CAUSE_NO_CLOCK: return AN_V_DEVICE_NO_CLOCK;
    case AN_CAUSE_UNFELT: return AN_V_DEVICE_CONTRADICTS;
    case AN_CAUSE_NONE:
    case AN_CAUSE_STEADY:
        break;
    }
    return AN_V_COUNT;
}

/* The device's evidence (ot->evidence) joins the row about the scopes'
 * growth, so that one sentence cites both: the device row takes that
 * row's place and keeps its figures (fig[5] names it). A contradiction
 * (a clock fell, the work did not grow) takes the place of `steady`
 * first. Without such a row the device row stands alone, last. */
static void cite_device(an_verdicts *vs, const an_evidence *e)
{
    an_verdict_kind d = device_row(e->cause);
    if (d == AN_V_COUNT)
        return;
    static const an_verdict_kind growth_rows[] = {
        AN_V_THROTTLING, AN_V_THROTTLING_UNCHECKED, AN_V_UNIFORM_MEMORY_MOVED,
        AN_V_WAITS_GREW, AN_V_WORK_GREW, AN_V_CAPPED_HEADROOM};
    long at = -1;
    for (size_t i = 0; i < vs->n && at < 0; i++)
        if (d == AN_V_DEVICE_CONTRADICTS && vs->v[i].kind == AN_V_STEADY)
            at = (long)i;
    /* in the list's order: under a cap, the throttling row that follows
     * capped-headroom is the one cited */
    for (size_t k = 0; k < sizeof growth_rows / sizeof *growth_rows; k++)
        for (size_t i = 0; i < vs->n && at < 0; i++)
            if (vs->v[i].kind == growth_rows[k])
                at = (long)i;
    if (at < 0) {
        an_verdicts_add(
            vs, (an_verdict){.kind = d,
                             .fig = {e->growth, 0, 0, 0, 0, AN_V_COUNT},
                             .scope = NULL});
        return;
    }
    an_verdict *v = &vs->v[at];
    v->fig[5] = (double)v->kind;
    v->kind = d;
}

void an_verdicts_decide(an_verdicts *vs, const an_over_time *ot)
{
    memset(vs, 0, sizeof *vs);
    if (!ot->nframes || ot->last <= ot->ref) {
        an_verdicts_add(
            vs, (an_verdict){.kind = AN_V_TOO_SHORT, .fig = {0}, .scope = 0});
        return;
    }
    int mid = ot->ref + (ot->last - ot->ref + 1) / 2;
    an_ratio r = ot->bins[ot->last].growth;
    double fg = r.state == AN_RATIO_VALUE ? r.value : NAN;
    if (fg >= AN_OT_GROWTH && ot->nscopes >= 2)
        decide_growth(vs, ot, fg, mid);
    else if (fg > AN_OT_SHRINK && fg < AN_OT_GROWTH)
        decide_capped(vs, ot, fg, mid);
    if (ot->last >= ot->ref + 2)
        decide_start(vs, ot, mid);
    if (!vs->n)
        an_verdicts_add(
            vs, (an_verdict){.kind = AN_V_STEADY, .fig = {fg}, .scope = 0});
    cite_device(vs, &ot->evidence);
}
