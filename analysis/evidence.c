/*
 * evidence.c - the device's clocks, temperatures and power early and late
 * in a capture, and the cause they point to (evidence.h; the thresholds in
 * docs/EVIDENCE.md).
 */
#include "evidence.h"
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static int ends(const char *s, const char *x)
{
    size_t n = strlen(s), k = strlen(x);
    return n >= k && strcmp(s + n - k, x) == 0;
}

/* cpu<digits>.freq_mhz */
static int is_cpu_clock(const char *s)
{
    if (!starts(s, "cpu"))
        return 0;
    const char *p = s + 3;
    if (*p < '0' || *p > '9')
        return 0;
    while (*p >= '0' && *p <= '9')
        p++;
    return strcmp(p, ".freq_mhz") == 0;
}

/* Mean of c's samples in [b, e) (or [b, e] when closed); 0 when none. */
static int window_mean(const an_counter *c, int64_t b, int64_t e, int closed,
                       double *out)
{
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        int64_t t = c->s[i].time_ns;
        if (t < b || t > e || (!closed && t == e) || !isfinite(c->s[i].value))
            continue;
        sum += c->s[i].value;
        n++;
    }
    if (!n)
        return 0;
    *out = sum / (double)n;
    return 1;
}

static void take(an_reading *r, const an_counter *c, double from, double to)
{
    r->present = 1;
    snprintf(r->name, sizeof r->name, "%s", c->name ? c->name : "");
    r->from = from;
    r->to = to;
}

static double ratio(const an_reading *r)
{
    return r->from > 0 ? r->to / r->from : 1.0;
}

void an_evidence_compute(const an_counter *c, size_t nc, int64_t early_begin,
                         int64_t early_end, int64_t late_begin,
                         int64_t late_end, double growth, an_evidence *e)
{
    memset(e, 0, sizeof *e);
    e->growth = growth;
    for (size_t i = 0; i < nc; i++) {
        const char *n = c[i].name;
        double a, b;
        if (!n || !window_mean(&c[i], early_begin, early_end, 0, &a) ||
            !window_mean(&c[i], late_begin, late_end, 1, &b))
            continue;
        an_reading cand = {0};
        take(&cand, &c[i], a, b);
        if (is_cpu_clock(n)) {
            if (a > 0 && (!e->cpu_clock.present ||
                          ratio(&cand) < ratio(&e->cpu_clock)))
                e->cpu_clock = cand;
        } else if (starts(n, "gpu") && ends(n, "freq_mhz")) {
            if (a > 0 && (!e->gpu_clock.present ||
                          ratio(&cand) < ratio(&e->gpu_clock)))
                e->gpu_clock = cand;
        } else if (ends(n, "temp_c")) {
            if (!e->temp.present || b - a > e->temp.to - e->temp.from)
                e->temp = cand;
        } else if (ends(n, "power_w")) {
            if (!e->power.present || b > e->power.to)
                e->power = cand;
        } else if (ends(n, "throttle_thermal_flag")) {
            if (!e->throttle_thermal.present || b > e->throttle_thermal.to)
                e->throttle_thermal = cand;
        } else if (ends(n, "throttle_power_flag")) {
            if (!e->throttle_power.present || b > e->throttle_power.to)
                e->throttle_power = cand;
        }
    }
    e->cpu_fell = e->cpu_clock.present && ratio(&e->cpu_clock) <= AN_EV_CLOCK_FELL;
    e->gpu_fell = e->gpu_clock.present && ratio(&e->gpu_clock) <= AN_EV_CLOCK_FELL;
    e->heated = (e->temp.present &&
                 e->temp.to - e->temp.from >= AN_EV_HEAT_ROSE_C) ||
                (e->throttle_thermal.present &&
                 e->throttle_thermal.to >= AN_EV_FLAG_SHARE);
    e->power_capped = e->throttle_power.present &&
                      e->throttle_power.to >= AN_EV_FLAG_SHARE;
    int clocks = e->cpu_clock.present || e->gpu_clock.present;
    if (!clocks && !e->temp.present)
        e->cause = AN_CAUSE_NONE;
    else if (!(growth >= AN_EV_SLOWER))
        e->cause = AN_CAUSE_STEADY;
    else if ((e->cpu_fell || e->gpu_fell) && e->heated)
        e->cause = AN_CAUSE_THERMAL;
    else if (e->cpu_fell || e->gpu_fell)
        e->cause = AN_CAUSE_POWER;
    else if (clocks)
        e->cause = AN_CAUSE_WORK_GREW;
    else
        e->cause = AN_CAUSE_NO_CLOCK;
}

void an_evidence_of_capture(const an_capture *m, double share, double growth,
                            an_evidence *out)
{
    if (!m->nframes) {
        an_evidence_compute(NULL, 0, 0, 0, 0, 0, growth, out);
        return;
    }
    if (!(share > 0) || share > 0.5)
        share = 0.5;
    int64_t t0 = m->frames[0].begin_ns, t1 = m->frames[m->nframes - 1].end_ns;
    double w = an_elapsed_ns(t0, t1) * share;
    int64_t e1 = (int64_t)((double)t0 + w), l0 = (int64_t)((double)t1 - w);
    an_evidence_compute(m->counters, m->ncounters, t0, e1, l0, t1, growth, out);
}

const char *an_cause_name(an_cause c)
{
    switch (c) {
    case AN_CAUSE_NONE: return "no device evidence";
    case AN_CAUSE_STEADY: return "steady";
    case AN_CAUSE_THERMAL: return "thermal throttling";
    case AN_CAUSE_POWER: return "power or governor limit";
    case AN_CAUSE_WORK_GREW: return "the work grew";
    case AN_CAUSE_NO_CLOCK: return "no clock recorded";
    }
    return "?";
}

void an_evidence_of_over_time(an_evidence *e, const an_capture *m,
                              struct an_over_time *ot)
{
    if (!ot->nframes || !m->nframes || ot->last <= ot->ref) {
        an_evidence_compute(NULL, 0, 0, 0, 0, 0, NAN, e);
        return;
    }
    /* the growth the verdicts measured */
    an_ratio fr = ot->bins[ot->last].growth;
    double growth = fr.state == AN_RATIO_VALUE ? fr.value : NAN;
    int growth_of = 0;
    for (size_t i = 0; i < ot->verdicts.n; i++) {
        const an_verdict *v = &ot->verdicts.v[i];
        if (v->kind == AN_V_THROTTLING || v->kind == AN_V_THROTTLING_UNCHECKED ||
            v->kind == AN_V_UNIFORM_MEMORY_MOVED) {
            growth = v->fig[0];
            growth_of = 1;
        } else if (v->kind == AN_V_CAPPED_HEADROOM) {
            growth = v->fig[0];
            growth_of = 2;
        }
    }
    /* the first and last non-empty bins, as over_time.c bins samples:
     * [start, end), the last one closed at the last frame's end */
    int64_t t0 = m->frames[0].begin_ns, t1 = m->frames[m->nframes - 1].end_ns;
    double w = ot->width_s * 1e9;
    int64_t e0 = t0 + (int64_t)((double)ot->ref * w);
    int64_t e1 = t0 + (int64_t)((double)(ot->ref + 1) * w);
    int64_t l0 = t0 + (int64_t)((double)ot->last * w);
    int64_t l1 = ot->last == ot->nbins - 1
                     ? t1
                     : t0 + (int64_t)((double)(ot->last + 1) * w);
    an_evidence_compute(m->counters, m->ncounters, e0, e1, l0, l1, growth, e);
    e->growth_of = growth_of;
    an_verdict v = {.kind = AN_V_DEVICE_STEADY};
    switch (e->cause) {
    case AN_CAUSE_NONE: return;
    case AN_CAUSE_STEADY:
        if (!e->cpu_clock.present && !e->gpu_clock.present)
            return; /* a temperature alone, and nothing slowed: no row */
        v.kind = AN_V_DEVICE_STEADY;
        break;
    case AN_CAUSE_THERMAL: v.kind = AN_V_DEVICE_THERMAL; break;
    case AN_CAUSE_POWER: v.kind = AN_V_DEVICE_POWER; break;
    case AN_CAUSE_WORK_GREW: v.kind = AN_V_DEVICE_WORK_GREW; break;
    case AN_CAUSE_NO_CLOCK: v.kind = AN_V_DEVICE_NO_CLOCK; break;
    }
    const an_reading *clk = e->cpu_fell || (!e->gpu_fell && e->cpu_clock.present)
                                ? &e->cpu_clock
                                : &e->gpu_clock;
    v.fig[0] = growth;
    v.fig[1] = clk->present ? clk->from : NAN;
    v.fig[2] = clk->present ? clk->to : NAN;
    v.fig[3] = e->temp.present ? e->temp.to - e->temp.from : NAN;
    /* right after the rows about growth, which it explains */
    an_verdicts *vs = &ot->verdicts;
    if (vs->n >= AN_VERDICTS_MAX)
        return;
    size_t at = vs->n;
    for (size_t i = 0; i < vs->n; i++)
        if (vs->v[i].kind == AN_V_RAMP || vs->v[i].kind == AN_V_COLD_START) {
            at = i;
            break;
        }
    memmove(&vs->v[at + 1], &vs->v[at], (vs->n - at) * sizeof vs->v[0]);
    vs->v[at] = v;
    vs->n++;
}
