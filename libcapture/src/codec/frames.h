/*
 * codec/frames.h - the event lists of a block besides scopes: FRAMES
 * (0x05) and COUNTERS (0x07), one entry at a time, encoders beside
 * decoders (format-spec/capture-format.md has the bytes). Inline: the
 * reader decodes them one event per call. Internal to libcapture.
 *
 *   FRAMES   := v n, n x (v dindex, zz dbegin, v duration)
 *   COUNTERS := v n, n x (v name, zz dtick, f64 value)
 *
 * A FRAME_LIST entry's frames (codec/footer.h) are coded as FRAMES' but
 * for their begin: the gap after the previous frame's end.
 */
#ifndef CAP_CODEC_FRAMES_H
#define CAP_CODEC_FRAMES_H

#include <stdint.h>

#include "capture/cap_limits.h"
#include "format/format.h"

/* One FRAMES entry into t: a frame's index and ticks after the block's
 * previous frame (prev_index, prev_begin: 0 for the block's first). */
static inline void capc_frame_put(capf_buf *t, uint64_t index,
                                  uint64_t begin_tick, uint64_t end_tick,
                                  uint64_t prev_index, uint64_t prev_begin)
{
    capf_buf_varint(t, index - prev_index);
    capf_buf_varint(t, capf_zigzag((int64_t)(begin_tick - prev_begin)));
    capf_buf_varint(t, end_tick - begin_tick);
}

/* One FRAMES (or FRAME_LIST) entry at b: the index's step, the begin's
 * step (or gap) and the duration. 0, or -1 when malformed. */
static inline int capc_frame_get(capf_cur *b, uint64_t *dindex,
                                 int64_t *dbegin, uint64_t *duration)
{
    *dindex = capf_cur_varint(b);
    *dbegin = capf_unzigzag(capf_cur_varint(b));
    *duration = capf_cur_varint(b);
    return b->bad ? -1 : 0;
}

/* One COUNTERS entry into t: its name, its tick after the block's
 * previous sample (prev_tick: 0 for the block's first), its value. */
static inline void capc_counter_put(capf_buf *t, uint32_t name,
                                    uint64_t tick, uint64_t prev_tick,
                                    double value)
{
    capf_buf_varint(t, name);
    capf_buf_varint(t, capf_zigzag((int64_t)(tick - prev_tick)));
    capf_buf_f64(t, value);
}

/* One COUNTERS entry at b: its name (1 to CAP_MAX_NAME_ID), its tick's
 * step and its value. 0, or -1 when malformed. */
static inline int capc_counter_get(capf_cur *b, uint32_t *name,
                                   int64_t *dtick, double *value)
{
    uint64_t nm = capf_cur_varint_max(b, CAP_MAX_NAME_ID);
    *dtick = capf_unzigzag(capf_cur_varint(b));
    *value = capf_cur_f64(b);
    *name = (uint32_t)nm;
    return b->bad || nm == 0 ? -1 : 0;
}

#endif
