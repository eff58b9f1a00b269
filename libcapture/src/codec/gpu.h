/*
 * codec/gpu.h - GPU_FRAME (0x08), one CPU frame's GPU spans on one track,
 * and GPU_CAL (0x09), a track's calibration against the CPU clock; their
 * encoders beside their decoders (format-spec/capture-format.md has the
 * bytes). Internal to libcapture.
 *
 *   GPU_FRAME := v track, v cpu_frame, v base, v n,
 *                n x (v name, v parent + 1 (0: none), u8 flags (bit 0:
 *                measured), [v begin - base, v duration] when measured)
 *   GPU_CAL   := v track, v gpu_tick, v cpu_tick, v deviation_ns
 */
#ifndef CAP_CODEC_GPU_H
#define CAP_CODEC_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "capture/cap_result.h"
#include "format/format.h"

/* GPU_FRAME's head, into t: n spans follow (capc_gpu_span_put). */
void capc_gpu_frame_put(capf_buf *t, uint32_t track, uint64_t cpu_frame,
                        uint64_t base, uint64_t n);

/* One span into t after capc_gpu_frame_put: its name, its parent's place
 * among the frame's spans plus 1 (0: none) and, when measured, its ticks
 * (begin_tick at or past the frame's base, end_tick at or past it). */
void capc_gpu_span_put(capf_buf *t, uint64_t base, uint32_t name,
                       uint64_t parent1, int measured, uint64_t begin_tick,
                       uint64_t end_tick);

/* GPU_FRAME's head at b: CAP_OK, or CAP_E_CORRUPT when malformed (track
 * past CAP_MAX_TRACKS, more than CAP_MAX_GPU_SPANS spans, or more than
 * the bytes left could hold). */
cap_result capc_gpu_frame_get(capf_cur *b, uint32_t *track,
                              uint64_t *cpu_frame, uint64_t *base,
                              uint64_t *n);

/* Span i (from 0) at b: its name (not 0), parent (-1: none, else below
 * i), whether measured, and then its begin (base added) and duration in
 * GPU ticks (0 otherwise). 0, or -1 when malformed. */
int capc_gpu_span_get(capf_cur *b, uint64_t i, uint64_t base, uint32_t *name,
                      int32_t *parent, int *measured, uint64_t *begin,
                      uint64_t *dur);

/* GPU_CAL's body into t. */
void capc_gpu_cal_put(capf_buf *t, uint32_t track, uint64_t gpu_tick,
                      uint64_t cpu_tick, uint64_t deviation_ns);

/* GPU_CAL's body at b: CAP_OK, or CAP_E_CORRUPT when malformed. */
cap_result capc_gpu_cal_get(capf_cur *b, uint32_t *track, uint64_t *gpu_tick,
                            uint64_t *cpu_tick, uint64_t *deviation_ns);

#endif
