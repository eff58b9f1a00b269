/*
 * cap_vk_logic.h - the Vulkan ring's pure logic, testable without a GPU.
 *
 * Everything here works on plain integers: masking timestamps to a queue
 * family's valid bits, extending masked ticks to 64 bits next to a
 * reference, judging a begin/end pair, and turning one frame's scopes plus
 * their query results into a tree of cap_gpu_span. Internal to libcapture
 * (cap__ prefix); tests/test_vk_ring.c links it directly.
 */
#ifndef CAP_VK_LOGIC_H
#define CAP_VK_LOGIC_H

#include <stddef.h>
#include <stdint.h>

#include "capture/cap_writer.h"

/* Longest span kept, in ns (lesson 15: longer is garbage, not work). */
#define CAP__VK_MAX_SPAN_NS 1e9

/* The mask of `valid_bits` low bits: 0 for 0, all ones for 64 or more. */
uint64_t cap__vk_mask(uint32_t valid_bits);

/* 1 when a queue family with `valid_bits` and a device with `period_ns`
 * cannot time (valid_bits 0, period not finite or not positive). */
int cap__vk_is_inert(uint32_t valid_bits, double period_ns);

/* The 64-bit tick that is congruent to `masked` modulo 2^valid_bits and
 * nearest to `ref` (ties go forward). Valid for |true - ref| below half the
 * counter's range. With 64 valid bits (or 0), returns masked unchanged. */
uint64_t cap__vk_unwrap(uint64_t masked, uint64_t ref, uint32_t valid_bits);

/* The 64-bit extension of the first masked tick a ring sees: on lap 4 of a
 * counter of 60 valid bits or fewer, so that ticks up to four wraps earlier
 * (bounds computed before it) neither go below 0 nor overflow 2^64 when a
 * duration is added; unchanged for wider counters. */
uint64_t cap__vk_extend_first(uint64_t masked, uint32_t valid_bits);

/* The first 64-bit tick at or after `low` that is congruent to `masked`
 * modulo 2^valid_bits: exact when the true tick lies in [low, low + 2^bits).
 * With 64 valid bits (or 0), returns masked unchanged. */
uint64_t cap__vk_unwrap_after(uint64_t masked, uint64_t low,
                              uint32_t valid_bits);

/* The device tick expected at CLOCK_MONOTONIC `mono_ns`, extrapolated from
 * the calibration pair (cal_tick, cal_mono_ns) at period_ns (before or after
 * the pair). */
uint64_t cap__vk_predict_tick(uint64_t cal_tick, uint64_t cal_mono_ns,
                              uint64_t mono_ns, double period_ns);

/* Margin for the clocks' disagreement when the ring bounds a frame's ticks
 * from below: 100 us, plus 100 ppm of the time extrapolated over (drift of
 * the GPU's tick rate from its stated period). */
#define CAP__VK_DRIFT_NS 100000.0
#define CAP__VK_DRIFT_PPM 100.0

/* A lower bound for every tick of a frame that began (on the CPU) at
 * CLOCK_MONOTONIC `begin_mono_ns`: its work cannot run before it began.
 * The tick predicted for that moment from the pair (ref_tick, ref_mono_ns),
 * less deviation_ns and the drift margin. The pair is a calibration sample
 * (deviation_ns its maxDeviation), or, uncalibrated, the latest tick read
 * with the time it was read (deviation 0: the GPU wrote it earlier, so the
 * prediction can only be low). The ring extends the frame's masked ticks
 * forward from the bound (cap__vk_unwrap_after), which is exact while less
 * than one counter wrap passes between the pair and the frame's harvest. */
uint64_t cap__vk_frame_low(uint64_t ref_tick, uint64_t ref_mono_ns,
                           uint64_t begin_mono_ns, double period_ns,
                           uint64_t deviation_ns);

/* Verdict on one begin/end pair. */
typedef enum cap__vk_pair {
    CAP__VK_PAIR_OK = 0,      /* a span: *ticks holds its duration */
    CAP__VK_PAIR_UNWRITTEN,   /* a timestamp was never written: not
                                 measured */
    CAP__VK_PAIR_INVALID      /* non-increasing, or over one second */
} cap__vk_pair;

/* Judge the pair (begin, end) read with their availability words (non-zero:
 * written). The duration in ticks is (end - begin) masked to valid_bits,
 * so a counter that wrapped between the two gives the true duration; it
 * must be positive and at most one second at period_ns. *ticks (may be
 * NULL) gets the duration for CAP__VK_PAIR_OK, 0 otherwise. */
cap__vk_pair cap__vk_check_pair(uint64_t begin, uint64_t begin_avail,
                                uint64_t end, uint64_t end_avail,
                                uint32_t valid_bits, double period_ns,
                                uint64_t *ticks);

/* One scope as the ring recorded it in a frame: its name, its declared
 * parent (index of an earlier scope, or -1), whether its end timestamp was
 * recorded. Its queries are 2*i (begin) and 2*i+1 (end). */
typedef struct cap__vk_scope_rec {
    uint32_t name;
    int32_t parent;
    int ended;
} cap__vk_scope_rec;

/* Counts from cap__vk_build_spans. */
typedef struct cap__vk_build_stats {
    size_t measured;
    size_t unmeasured;
    size_t invalid;
} cap__vk_build_stats;

/* Build the span batch of one finished frame. `results` holds, for each of
 * the 2*n queries, the pair (value, availability) as vkGetQueryPoolResults
 * writes them with VK_QUERY_RESULT_64_BIT |
 * VK_QUERY_RESULT_WITH_AVAILABILITY_BIT (stride 16 bytes). Values are
 * masked to valid_bits. Scope i becomes:
 *   - a measured span when its pair is OK: begin extended to 64 bits as
 *     the first tick at or after `low` (cap__vk_unwrap_after), end = begin
 *     + duration;
 *   - a not-measured span (measured = 0, ticks 0) when it was never ended
 *     or a timestamp was never written;
 *   - nothing when the pair is invalid: it is counted and its children are
 *     re-parented to its nearest kept ancestor.
 * A parent that is not an earlier scope makes the scope a root. Output
 * indices are renumbered so each parent precedes its children. `map` is
 * scratch for n entries (input index to output index, -1 when dropped);
 * `out` has room for n spans; returns how many were written. *latest
 * becomes the latest measured end (unchanged when none). stats may be
 * NULL. */
size_t cap__vk_build_spans(const cap__vk_scope_rec *scopes, size_t n,
                           const uint64_t *results, uint32_t valid_bits,
                           double period_ns, uint64_t low, uint64_t *latest,
                           int32_t *map, cap_gpu_span *out,
                           cap__vk_build_stats *stats);

/* Of `count` calibration samples (device tick, CLOCK_MONOTONIC ns,
 * maxDeviation) the index of the one with the smallest deviation (the
 * first among equals); -1 when count is 0. */
int cap__vk_best_sample(const uint64_t *deviations, size_t count);

/* How often to recalibrate, in ns: about a second to follow drift, and
 * often enough that a counter of valid_bits at period_ns is sampled at
 * least four times per wrap (the samples anchor the 64-bit extension). */
uint64_t cap__vk_recalibration_ns(uint32_t valid_bits, double period_ns);

#endif
