/*
 * evidence_text.c - the device's evidence as words (evidence.h): the clause
 * an_evidence_text writes (cited by the verdict table's device-* rows).
 * Numbers come computed; nothing here decides.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "evidence.h"

typedef struct sb {
    char *buf;
    size_t size, len;
} sb;

static void put(sb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->len < b->size ? b->size - b->len : 0;
    int k = vsnprintf(room ? b->buf + b->len : NULL, room, fmt, ap);
    va_end(ap);
    if (k > 0)
        b->len += (size_t)k;
}

/* "2.90 GHz" from MHz, or "850 MHz" below 1 GHz */
static void clock_pair(sb *b, const char *what, const an_reading *r, int fell)
{
    int ghz = r->from >= 1000 && r->to >= 1000;
    double d = ghz ? 1000 : 1;
    const char *u = ghz ? "GHz" : "MHz";
    const char *f = ghz ? "%.2f" : "%.0f";
    char x[32], y[32];
    snprintf(x, sizeof x, f, r->from / d);
    snprintf(y, sizeof y, f, r->to / d);
    if (fell)
        put(b, "the %s clock fell from %s to %s %s (%s)", what, x, y, u,
            r->name);
    else if (fabs(r->to / r->from - 1) < 0.01 || strcmp(x, y) == 0)
        put(b, "the %s clock stayed at %s %s (%s)", what, y, u, r->name);
    else
        put(b, "the %s clock went from %s to %s %s (%s)", what, x, y, u,
            r->name);
}

static void temp_clause(sb *b, const an_reading *r)
{
    double d = r->to - r->from;
    if (fabs(d) < 1.0)
        put(b, "the temperature stayed at %.0f °C (%s)", r->to, r->name);
    else
        put(b, "the temperature %s from %.0f to %.0f °C (%s)",
            d > 0 ? "rose" : "fell", r->from, r->to, r->name);
}

size_t an_evidence_text(const an_evidence *e, char *buf, size_t size)
{
    sb b = {buf, size, 0};
    if (size)
        buf[0] = 0;
    if (e->cause == AN_CAUSE_NONE)
        return 0;
    /* the clocks: the ones that fell, else every one recorded */
    int n = 0;
    int cpu = e->cpu_clock.present && (e->cpu_fell || !e->gpu_fell);
    int gpu = e->gpu_clock.present && (e->gpu_fell || !e->cpu_fell);
    if (cpu) {
        clock_pair(&b, "CPU", &e->cpu_clock, e->cpu_fell);
        n++;
    }
    if (gpu) {
        if (n)
            put(&b, ", ");
        clock_pair(&b, "GPU", &e->gpu_clock, e->gpu_fell);
        n++;
    }
    if (e->temp.present) {
        put(&b, n ? " and " : "");
        temp_clause(&b, &e->temp);
        n++;
    }
    if (e->power.present && (e->cause == AN_CAUSE_POWER ||
                             e->cause == AN_CAUSE_STEADY ||
                             e->cause == AN_CAUSE_UNFELT ||
                             e->cause == AN_CAUSE_WORK_GREW)) {
        char x[32], y[32];
        snprintf(x, sizeof x, "%.1f", e->power.from);
        snprintf(y, sizeof y, "%.1f", e->power.to);
        if (strcmp(x, y) == 0)
            put(&b, ", power stayed at %s W (%s)", y, e->power.name);
        else
            put(&b, ", power %s to %s W (%s)", x, y, e->power.name);
    }
    if (e->power_capped)
        put(&b, ", NVML reporting the power cap in %.0f%% of the late samples",
            e->throttle_power.to * 100);
    if (e->throttle_thermal.present && e->throttle_thermal.to >= AN_EV_FLAG_SHARE)
        put(&b, ", NVML reporting thermal slowdown in %.0f%% of the late "
                "samples",
            e->throttle_thermal.to * 100);
    switch (e->cause) {
    case AN_CAUSE_THERMAL:
        put(&b, ": thermal throttling");
        break;
    case AN_CAUSE_POWER:
        put(&b, ": a power or governor limit (the clock fell without heat)");
        break;
    case AN_CAUSE_WORK_GREW:
        put(&b, ": the clocks did not fall, so the work grew");
        break;
    case AN_CAUSE_NO_CLOCK:
        put(&b, ": no clock was recorded, so the cause cannot be told");
        break;
    case AN_CAUSE_STEADY:
        put(&b, ": the work did not slow down");
        break;
    case AN_CAUSE_UNFELT:
        put(&b, ", yet the work did not slow down (%.2fx): the clock did "
                "not limit it", e->growth);
        break;
    case AN_CAUSE_NONE:
        break;
    }
    return b.len;
}
