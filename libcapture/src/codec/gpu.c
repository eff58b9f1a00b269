/*
 * codec/gpu.c - GPU_FRAME (0x08) and GPU_CAL (0x09): see codec/gpu.h.
 */
#include "codec/gpu.h"

#include "capture/cap_limits.h"

void capc_gpu_frame_put(capf_buf *t, uint32_t track, uint64_t cpu_frame,
                        uint64_t base, uint64_t n)
{
    capf_buf_varint(t, track);
    capf_buf_varint(t, cpu_frame);
    capf_buf_varint(t, base);
    capf_buf_varint(t, n);
}

void capc_gpu_span_put(capf_buf *t, uint64_t base, uint32_t name,
                       uint64_t parent1, int measured, uint64_t begin_tick,
                       uint64_t end_tick)
{
    capf_buf_varint(t, name);
    capf_buf_varint(t, parent1);
    capf_buf_u8(t, measured ? 1 : 0);
    if (measured) {
        capf_buf_varint(t, begin_tick - base);
        capf_buf_varint(t, end_tick - begin_tick);
    }
}

cap_result capc_gpu_frame_get(capf_cur *b, uint32_t *track,
                              uint64_t *cpu_frame, uint64_t *base,
                              uint64_t *n)
{
    *track = (uint32_t)capf_cur_varint_max(b, CAP_MAX_TRACKS - 1);
    *cpu_frame = capf_cur_varint(b);
    *base = capf_cur_varint(b);
    *n = capf_cur_varint_max(b, CAP_MAX_GPU_SPANS);
    if (b->bad || *n > (uint64_t)(b->end - b->p))
        return CAP_E_CORRUPT;
    return CAP_OK;
}

int capc_gpu_span_get(capf_cur *b, uint64_t i, uint64_t base, uint32_t *name,
                      int32_t *parent, int *measured, uint64_t *begin,
                      uint64_t *dur)
{
    uint64_t nm = capf_cur_varint_max(b, CAP_MAX_NAME_ID);
    uint64_t p = capf_cur_varint_max(b, i);
    uint8_t flags = capf_cur_u8(b);
    *name = (uint32_t)nm;
    *parent = (int32_t)p - 1;
    *measured = flags & 1;
    *begin = *dur = 0;
    if (*measured) {
        *begin = base + capf_cur_varint(b);
        *dur = capf_cur_varint(b);
    }
    return b->bad || nm == 0 ? -1 : 0;
}

void capc_gpu_cal_put(capf_buf *t, uint32_t track, uint64_t gpu_tick,
                      uint64_t cpu_tick, uint64_t deviation_ns)
{
    capf_buf_varint(t, track);
    capf_buf_varint(t, gpu_tick);
    capf_buf_varint(t, cpu_tick);
    capf_buf_varint(t, deviation_ns);
}

cap_result capc_gpu_cal_get(capf_cur *b, uint32_t *track, uint64_t *gpu_tick,
                            uint64_t *cpu_tick, uint64_t *deviation_ns)
{
    *track = (uint32_t)capf_cur_varint_max(b, CAP_MAX_TRACKS - 1);
    *gpu_tick = capf_cur_varint(b);
    *cpu_tick = capf_cur_varint(b);
    *deviation_ns = capf_cur_varint(b);
    return b->bad ? CAP_E_CORRUPT : CAP_OK;
}
