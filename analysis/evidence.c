/*
 * evidence.c - the device's clocks, temperatures and power early and late
 * in a capture, and the cause they point to (evidence.h; the thresholds in
 * docs/EVIDENCE.md).
 */
#include "evidence.h"

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
        sum += c->s[i].value * 0x1p-64; /* exact; never overflows */
        n++;
    }
    if (!n)
        return 0;
    *out = sum / (double)n * 0x1p64;
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
        e->cause = !isnan(growth) && (e->cpu_fell || e->gpu_fell)
                       ? AN_CAUSE_UNFELT
                       : AN_CAUSE_STEADY;
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
    case AN_CAUSE_UNFELT: return "clock fell, work did not slow";
    }
    return "?";
}
