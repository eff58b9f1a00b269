/*
 * evidence.h - what the device itself says about a slowdown: its clocks,
 * temperatures and power early and late in a capture, and the cause they
 * point to.
 *
 * The counters come from the producer's device sampler (sample_device,
 * docs/EVIDENCE.md), or from any program that records counters with the
 * same names:
 *   cpu<N>.freq_mhz                    a CPU cluster's clock
 *   gpu*freq_mhz (gpu0.sm_freq_mhz, gpu.amdgpu.freq_mhz, ...)
 *                                      a GPU clock
 *   *.temp_c                           a temperature
 *   *.power_w                          a power draw (not *.power_limit_w)
 *   gpu<N>.throttle_thermal_flag, gpu<N>.throttle_power_flag
 *                                      NVML's throttle reasons, 0 or 1
 *
 * an_evidence_compute returns data; an_evidence_text renders the clause a
 * report prints. The thresholds are the AN_EV_ constants below, and the
 * table in docs/EVIDENCE.md.
 */
#ifndef AN_EVIDENCE_H
#define AN_EVIDENCE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"

/* ---- thresholds (docs/EVIDENCE.md holds the same table) ---------------- */

/* A clock fell when its late mean is at most this share of its early mean. */
#define AN_EV_CLOCK_FELL 0.90
/* A temperature rose when its late mean exceeds its early mean by at least
 * this many degrees Celsius. */
#define AN_EV_HEAT_ROSE_C 5.0
/* The work slowed down when the scopes grew by at least this factor (the
 * --over-time report's own threshold). */
#define AN_EV_SLOWER 1.10
/* An NVML throttle reason held when its flag is 1 in at least this share
 * of the late window's samples. */
#define AN_EV_FLAG_SHARE 0.5

typedef enum an_cause {
    AN_CAUSE_NONE = 0,  /* no clock or temperature counter in the capture */
    AN_CAUSE_STEADY,    /* the work did not slow down (growth below
                           AN_EV_SLOWER, or unknown) and no clock fell
                           (or the growth is unknown) */
    AN_CAUSE_THERMAL,   /* slowed; a clock fell while a temperature rose
                           (or NVML reported thermal throttling) */
    AN_CAUSE_POWER,     /* slowed; a clock fell without heat: a power cap
                           or the governor */
    AN_CAUSE_WORK_GREW, /* slowed; no clock fell: the work grew */
    AN_CAUSE_NO_CLOCK,  /* slowed; temperatures recorded but no clock, so
                           the cause cannot be told */
    AN_CAUSE_UNFELT     /* a clock fell but the work did not slow down
                           (growth known and below AN_EV_SLOWER): the
                           evidence contradicts the scopes */
} an_cause;

/* One counter's means in the two windows. */
typedef struct an_reading {
    int present;     /* 1 when the counter has samples in both windows */
    char name[96];   /* the counter cited */
    double from, to; /* mean in the early window, in the late window */
} an_reading;

typedef struct an_evidence {
    an_reading cpu_clock;  /* MHz: the cluster whose clock fell most */
    an_reading gpu_clock;  /* MHz: the GPU clock that fell most */
    an_reading temp;       /* degrees C: the one that rose most */
    an_reading power;      /* W: the largest late draw (*.power_w) */
    an_reading throttle_thermal; /* share of samples (0..1), NVML */
    an_reading throttle_power;   /* share of samples (0..1), NVML */
    double growth;   /* the scopes' growth given by the caller (NaN: none) */
    int cpu_fell, gpu_fell; /* that clock fell (AN_EV_CLOCK_FELL) */
    int heated;      /* temp rose AN_EV_HEAT_ROSE_C, or the thermal flag */
    int power_capped; /* NVML's power flag held in the late window */
    an_cause cause;
} an_evidence;

/* Evidence from counters c[0..nc) between an early window
 * [early_begin, early_end) and a late one [late_begin, late_end] (ns on
 * the capture's axis, as an_sample.time_ns), for scopes that grew by
 * `growth` from the first to the second (NaN when not known: the cause is
 * then AN_CAUSE_STEADY at most). Counters without samples in both windows
 * are ignored. Fills *out entirely; never fails. */
void an_evidence_compute(const an_counter *c, size_t nc, int64_t early_begin,
                         int64_t early_end, int64_t late_begin,
                         int64_t late_end, double growth, an_evidence *out);

/* As an_evidence_compute over a capture split into the first and last
 * `share` (0 < share <= 0.5) of its frames' time span. */
void an_evidence_of_capture(const an_capture *m, double share, double growth,
                            an_evidence *out);

/* The cause's short name: "thermal throttling", "power or governor limit",
 * "the work grew", "steady", "no clock recorded", "clock fell, work did not
 * slow", "no device evidence". Static storage. */
const char *an_cause_name(an_cause c);

/* ---- rendering (analysis/render/evidence_text.c) ------------------------ */

/* Render the evidence as one clause for a report, e.g. "the CPU clock fell
 * from 2.90 to 2.00 GHz (cpu0.freq_mhz) and the temperature rose from 52
 * to 81 °C (thermal.soc.temp_c): thermal throttling", into buf (always NUL
 * terminated). Returns the length it needed (as snprintf); 0 and an empty
 * string for AN_CAUSE_NONE. */
size_t an_evidence_text(const an_evidence *e, char *buf, size_t size);

#endif
