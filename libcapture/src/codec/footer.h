/*
 * codec/footer.h - the footer's sections: INDEX (0x0B), every block's
 * place and frames, and FRAME_LIST (0x12, format 3.1), every block's
 * frames themselves; their encoders beside their decoders
 * (format-spec/capture-format.md has the bytes). Internal to libcapture.
 */
#ifndef CAP_CODEC_FOOTER_H
#define CAP_CODEC_FOOTER_H

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

/* ---- INDEX: v n, n x (v offset - the previous one's, v first_frame,
 * v frames) ---- */

/* The start of an INDEX body for n blocks, into t; *prev is the previous
 * offset for capc_index_entry (0). */
void capc_index_begin(capf_buf *t, uint64_t n, uint64_t *prev);

/* One block's entry, into t after capc_index_begin: its chunk's offset in
 * the file (at or past *prev, which it becomes), its first frame and its
 * frames' count. */
void capc_index_entry(capf_buf *t, uint64_t *prev, uint64_t offset,
                      uint64_t first_frame, uint64_t frames);

/* An INDEX body at b (len bytes): each block's offset into *off and its
 * frames' count into *frames (both arrays made anew, what they held
 * freed; the caller frees them), *n set to the entries read. 0; -1 when
 * out of memory (*n 0) or when the body is malformed. */
int capc_index_get(capf_cur *b, uint64_t len, uint64_t **off,
                   uint64_t **frames, size_t *n);

/* ---- FRAME_LIST: v n, then per block with frames: u8 has_clock,
 * [v tick, v mono], v frames, frames x (v dindex, zz gap after the
 * previous end, v duration) ---- */

/* One block's entry, into l: its clock sample (has_clock 0: none), its
 * frames' count and their codes (lframes, as capc_frame_list_frame made
 * them). */
void capc_frame_list_entry_put(capf_buf *l, int has_clock, uint64_t tick,
                               uint64_t mono, uint64_t frames,
                               const capf_buf *lframes);

/* One frame's code into lframes: its index and ticks, after the block's
 * previous frame (prev_index, prev_end: 0 for the block's first). */
static inline void capc_frame_list_frame(capf_buf *lframes, uint64_t index,
                                         uint64_t begin_tick,
                                         uint64_t end_tick,
                                         uint64_t prev_index,
                                         uint64_t prev_end)
{
    /* a frame that begins where the last ended: a zero gap, one byte */
    capf_buf_varint(lframes, index - prev_index);
    capf_buf_varint(lframes, capf_zigzag((int64_t)(begin_tick - prev_end)));
    capf_buf_varint(lframes, end_tick - begin_tick);
}

/* The FRAME_LIST section of n entries (list: their bytes) appended to
 * p; nothing when out of memory (the footer then has none, as 3.0's). */
void capc_frame_list_put(capf_buf *p, uint64_t n, const capf_buf *list);

/* One FRAME_LIST entry at c: its clock sample (*has_clock 0 or 1, then
 * *tick and *mono), its frames' count, and where its frames begin; c is
 * left after the entry. 0, or -1 when malformed. */
int capc_frame_list_entry(capf_cur *c, int *has_clock, uint64_t *tick,
                          uint64_t *mono, uint64_t *n,
                          const uint8_t **frames);

/* Does the FRAME_LIST body fl (len bytes) hold one well-formed entry for
 * each block the INDEX gives frames (idx_frames, idx_n blocks), with as
 * many frames, in order, and nothing after them? */
int capc_frame_list_matches(const uint8_t *fl, size_t len,
                            const uint64_t *idx_frames, size_t idx_n);

#endif
