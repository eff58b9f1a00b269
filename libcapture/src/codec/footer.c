/*
 * codec/footer.c - INDEX (0x0B) and FRAME_LIST (0x12): see codec/footer.h.
 */
#include "codec/footer.h"

#include <stdlib.h>

void capc_index_begin(capf_buf *t, uint64_t n, uint64_t *prev)
{
    capf_buf_varint(t, n);
    *prev = 0;
}

void capc_index_entry(capf_buf *t, uint64_t *prev, uint64_t offset,
                      uint64_t first_frame, uint64_t frames)
{
    capf_buf_varint(t, offset - *prev);
    capf_buf_varint(t, first_frame);
    capf_buf_varint(t, frames);
    *prev = offset;
}

int capc_index_get(capf_cur *b, uint64_t len, uint64_t **off,
                   uint64_t **frames, size_t *n_out)
{
    uint64_t n = capf_cur_varint_max(b, len);
    free(*off);
    free(*frames);
    *off = malloc((n ? n : 1) * sizeof **off);
    *frames = malloc((n ? n : 1) * sizeof **frames);
    *n_out = 0;
    if (!*off || !*frames)
        return -1;
    uint64_t o = 0;
    for (uint64_t i = 0; i < n && !b->bad; i++) {
        o += capf_cur_varint(b);
        (void)capf_cur_varint(b);
        (*off)[i] = o;
        (*frames)[i] = capf_cur_varint(b);
        *n_out = (size_t)i + 1;
    }
    return b->bad ? -1 : 0;
}

void capc_frame_list_entry_put(capf_buf *l, int has_clock, uint64_t tick,
                               uint64_t mono, uint64_t frames,
                               const capf_buf *lframes)
{
    capf_buf_u8(l, has_clock ? 1 : 0);
    if (has_clock) {
        capf_buf_varint(l, tick);
        capf_buf_varint(l, mono);
    }
    capf_buf_varint(l, frames);
    capf_buf_bytes(l, lframes->data, lframes->len);
}

void capc_frame_list_put(capf_buf *p, uint64_t n, const capf_buf *list)
{
    capf_buf l = {0};
    capf_buf_varint(&l, n);
    capf_buf_bytes(&l, list->data, list->len);
    if (!l.failed)
        capf_buf_section(p, CAPF_SEC_FRAME_LIST, &l);
    capf_buf_free(&l);
}

int capc_frame_list_entry(capf_cur *c, int *has_clock, uint64_t *tick,
                          uint64_t *mono, uint64_t *n,
                          const uint8_t **frames)
{
    uint8_t hc = capf_cur_u8(c);
    *tick = *mono = 0;
    if (hc == 1) {
        *tick = capf_cur_varint(c);
        *mono = capf_cur_varint(c);
    }
    *has_clock = hc;
    *n = capf_cur_varint_max(c, (uint64_t)(c->end - c->p));
    *frames = c->p;
    for (uint64_t i = 0; i < *n && !c->bad; i++) {
        (void)capf_cur_varint(c);
        (void)capf_cur_varint(c);
        (void)capf_cur_varint(c);
    }
    return c->bad || hc > 1 ? -1 : 0;
}

int capc_frame_list_matches(const uint8_t *fl, size_t len,
                            const uint64_t *idx_frames, size_t idx_n)
{
    capf_cur c = {fl, fl + len, 0};
    uint64_t n = capf_cur_varint(&c), k = 0;
    size_t i = 0;
    for (; k < n && !c.bad; k++) {
        int hc;
        uint64_t t, m, frames;
        const uint8_t *fp;
        if (capc_frame_list_entry(&c, &hc, &t, &m, &frames, &fp) != 0)
            return 0;
        while (i < idx_n && idx_frames[i] == 0)
            i++;
        if (i == idx_n || idx_frames[i] != frames)
            return 0;
        i++;
    }
    while (i < idx_n && idx_frames[i] == 0)
        i++;
    return !c.bad && k == n && c.p == c.end && i == idx_n;
}
