/*
 * evidence.c - the device's clocks, temperatures and power early and late
 * in a capture, and the cause they point to (evidence.h; the thresholds in
 * docs/EVIDENCE.md).
 */
#include "evidence.h"

#include <math.h>
#include <stddef.h>
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

static int is_gpu_clock(const char *s)
{
    return starts(s, "gpu") && ends(s, "freq_mhz");
}

static int is_temp(const char *s) { return ends(s, "temp_c"); }
static int is_power(const char *s) { return ends(s, "power_w"); }
static int is_thermal_flag(const char *s)
{
    return ends(s, "throttle_thermal_flag");
}
static int is_power_flag(const char *s)
{
    return ends(s, "throttle_power_flag");
}

/* Which of two readings of a kind is kept: cand over the one held. */
static int clock_fell_more(const an_reading *cand, const an_reading *held)
{
    return cand->from > 0 && (!held->present || ratio(cand) < ratio(held));
}

static int rose_more(const an_reading *cand, const an_reading *held)
{
    return !held->present || cand->to - cand->from > held->to - held->from;
}

static int ended_higher(const an_reading *cand, const an_reading *held)
{
    return !held->present || cand->to > held->to;
}

/* The kinds of reading, by counter name: the first row whose name test
 * passes takes the counter, and keeps it over the one it holds when
 * `keep` says so. */
static const struct reading_rule {
    int (*is)(const char *name);
    size_t slot; /* offsetof the reading in an_evidence */
    int (*keep)(const an_reading *cand, const an_reading *held);
} READINGS[] = {
    {is_cpu_clock, offsetof(an_evidence, cpu_clock), clock_fell_more},
    {is_gpu_clock, offsetof(an_evidence, gpu_clock), clock_fell_more},
    {is_temp, offsetof(an_evidence, temp), rose_more},
    {is_power, offsetof(an_evidence, power), ended_higher},
    {is_thermal_flag, offsetof(an_evidence, throttle_thermal), ended_higher},
    {is_power_flag, offsetof(an_evidence, throttle_power), ended_higher},
};

/* Counter c's reading, if it is of a kind and its windows have samples,
 * kept in e where its rule says so. */
static void reading_take(an_evidence *e, const an_counter *c,
                         int64_t early_begin, int64_t early_end,
                         int64_t late_begin, int64_t late_end)
{
    double a, b;
    if (!c->name || !window_mean(c, early_begin, early_end, 0, &a) ||
        !window_mean(c, late_begin, late_end, 1, &b))
        return;
    for (size_t r = 0; r < sizeof READINGS / sizeof *READINGS; r++) {
        if (!READINGS[r].is(c->name))
            continue;
        an_reading cand = {0};
        take(&cand, c, a, b);
        an_reading *held = (an_reading *)((char *)e + READINGS[r].slot);
        if (READINGS[r].keep(&cand, held))
            *held = cand;
        return;
    }
}

/* The causes, in order: the first row whose test passes is the cause
 * (docs/EVIDENCE.md; tests/test_evidence.c has a case for each). */
static int no_device(const an_evidence *e, int clocks)
{
    return !clocks && !e->temp.present;
}

static int not_slower(const an_evidence *e, int clocks)
{
    (void)clocks;
    return !(e->growth >= AN_EV_SLOWER);
}

static int clock_fell(const an_evidence *e)
{
    return e->cpu_fell || e->gpu_fell;
}

static int fell_unfelt(const an_evidence *e, int clocks)
{
    return not_slower(e, clocks) && !isnan(e->growth) && clock_fell(e);
}

static int fell_heated(const an_evidence *e, int clocks)
{
    (void)clocks;
    return clock_fell(e) && e->heated;
}

static int fell(const an_evidence *e, int clocks)
{
    (void)clocks;
    return clock_fell(e);
}

static int has_clock(const an_evidence *e, int clocks)
{
    (void)e;
    return clocks;
}

static int always(const an_evidence *e, int clocks)
{
    (void)e;
    (void)clocks;
    return 1;
}

static const struct cause_rule {
    int (*holds)(const an_evidence *e, int clocks);
    an_cause cause;
} CAUSES[] = {
    {no_device, AN_CAUSE_NONE},       /* no clock and no temperature */
    {fell_unfelt, AN_CAUSE_UNFELT},   /* no slowdown, yet a clock fell */
    {not_slower, AN_CAUSE_STEADY},    /* no slowdown (or growth unknown) */
    {fell_heated, AN_CAUSE_THERMAL},  /* slower, a clock fell, it heated */
    {fell, AN_CAUSE_POWER},           /* slower, a clock fell, no heat */
    {has_clock, AN_CAUSE_WORK_GREW},  /* slower, the clocks held */
    {always, AN_CAUSE_NO_CLOCK},      /* slower, only a temperature */
};

void an_evidence_compute(const an_counter *c, size_t nc, int64_t early_begin,
                         int64_t early_end, int64_t late_begin,
                         int64_t late_end, double growth, an_evidence *e)
{
    memset(e, 0, sizeof *e);
    e->growth = growth;
    for (size_t i = 0; i < nc; i++)
        reading_take(e, &c[i], early_begin, early_end, late_begin, late_end);
    e->cpu_fell = e->cpu_clock.present && ratio(&e->cpu_clock) <= AN_EV_CLOCK_FELL;
    e->gpu_fell = e->gpu_clock.present && ratio(&e->gpu_clock) <= AN_EV_CLOCK_FELL;
    e->heated = (e->temp.present &&
                 e->temp.to - e->temp.from >= AN_EV_HEAT_ROSE_C) ||
                (e->throttle_thermal.present &&
                 e->throttle_thermal.to >= AN_EV_FLAG_SHARE);
    e->power_capped = e->throttle_power.present &&
                      e->throttle_power.to >= AN_EV_FLAG_SHARE;
    int clocks = e->cpu_clock.present || e->gpu_clock.present;
    for (size_t r = 0; r < sizeof CAUSES / sizeof *CAUSES; r++)
        if (CAUSES[r].holds(e, clocks)) {
            e->cause = CAUSES[r].cause;
            break;
        }
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
