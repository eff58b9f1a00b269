/*
 * frames_only.c - cap_reader_frames_only: the footer's INDEX and
 * FRAME_LIST read with pread, so that a reader yields frames only.
 */
#include "capture/cap_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/footer.h"
#include "codec/frames.h"
#include "reader_int.h"

static void fl_drop(cap_reader *r)
{
    free(r->fl);
    r->fl = NULL;
    r->fl_len = r->fl_pos = 0;
}

/* The footer's INDEX into r->idx_*, read with pread (the stream's position
 * is left alone), and its FRAME_LIST into r->fl when it matches the INDEX.
 * 0 when read; -1 when the file has no usable footer. */
static int load_index(cap_reader *r)
{
    int fd = fileno(r->f);
    uint8_t tr[CAPF_TRAILER_LEN], hb[CAPF_CHUNK_HEADER_LEN];
    if (r->size < CAPF_HEADER_LEN + CAPF_TRAILER_LEN ||
        pread(fd, tr, sizeof tr, (off_t)(r->size - CAPF_TRAILER_LEN)) !=
            (ssize_t)sizeof tr ||
        memcmp(tr + 8, CAPF_TRAILER_MAGIC, 8) != 0)
        return -1;
    uint64_t foff = capf_get_u64(tr);
    capf_chunk_header h;
    if (foff < CAPF_HEADER_LEN ||
        foff > r->size - CAPF_TRAILER_LEN - CAPF_CHUNK_HEADER_LEN ||
        pread(fd, hb, sizeof hb, (off_t)foff) != (ssize_t)sizeof hb ||
        capf_chunk_header_decode(hb, &h) != 0 ||
        h.type != CAPF_CHUNK_FOOTER ||
        h.stored > r->size - CAPF_TRAILER_LEN - CAPF_CHUNK_HEADER_LEN - foff)
        return -1;
    uint8_t *st = malloc(h.stored ? h.stored : 1);
    uint8_t *raw = malloc(h.raw ? h.raw : 1);
    int ok = st && raw &&
             pread(fd, st, h.stored, (off_t)(foff + CAPF_CHUNK_HEADER_LEN)) ==
                 (ssize_t)h.stored &&
             capf_crc_matches(h.payload_crc, capf_crc32(st, h.stored));
    if (ok && (h.flags & CAPF_CHUNK_FLAG_ZSTD)) {
        size_t n = ZSTD_decompressDCtx(r->dc, raw, h.raw, st, h.stored);
        ok = !ZSTD_isError(n) && n == h.raw;
    } else if (ok && h.raw) {
        memcpy(raw, st, h.raw);
    }
    capf_cur c = {raw, raw + h.raw, 0};
    while (ok && c.p < c.end) {
        uint8_t kind = capf_cur_u8(&c);
        uint64_t len = capf_cur_varint(&c);
        if (c.bad || len > (uint64_t)(c.end - c.p)) {
            ok = 0;
            break;
        }
        capf_cur b = {c.p, c.p + len, 0};
        c.p += len;
        if (kind == CAPF_SEC_FRAME_LIST &&
            r->major >= CAPF_VERSION_MAJOR_SCOPES_E) {
            free(r->fl);
            r->fl = malloc(len ? len : 1);
            r->fl_len = r->fl ? len : 0;
            if (r->fl && len)
                memcpy(r->fl, b.p, len);
            continue;
        }
        if (kind != CAPF_SEC_INDEX)
            continue;
        ok = capc_index_get(&b, len, &r->idx_off, &r->idx_frames,
                            &r->idx_n) == 0;
    }
    free(st);
    free(raw);
    if (!ok) {
        r->idx_n = 0;
        fl_drop(r);
        return -1;
    }
    if (r->fl && !capc_frame_list_matches(r->fl, r->fl_len, r->idx_frames,
                                          r->idx_n))
        fl_drop(r);
    return 0;
}

static cap_result frames_only(cap_reader *r, int listed)
{
    if (!r)
        return CAP_E_MISUSE;
    cap_reader_set_filter(r, (1u << CAP_EV_SCOPE) | (1u << CAP_EV_GPU_SPAN) |
                                 (1u << CAP_EV_COUNTER));
    r->frames_only = load_index(r) == 0;
    r->idx_pos = 0;
    r->fl_on = listed && r->frames_only && r->fl && r->fl_len;
    if (!r->fl_on) {
        fl_drop(r);
        return CAP_OK;
    }
    capf_cur c = {r->fl, r->fl + r->fl_len, 0};
    (void)capf_cur_varint(&c); /* the entries' count (checked) */
    r->fl_pos = (size_t)(c.p - r->fl);
    return CAP_OK;
}

cap_result cap_reader_frames_only(cap_reader *r)
{
    return frames_only(r, 1);
}

cap_result cap_reader_frames_only_blocks(cap_reader *r)
{
    return frames_only(r, 0);
}

int cap_reader_frames_listed(const cap_reader *r)
{
    return r && r->fl_on;
}
