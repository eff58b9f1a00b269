/*
 * writer_live.c - the live sink's chunks (writer_live.h): whole chunks
 * made from the writer's state for a client that joins late.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "codec/decls.h"
#include "codec/footer.h"
#include "codec/meta.h"
#include "format/format.h"
#include "writer/writer_int.h"
#include "writer/writer_live.h"

/* ---- the live sink's chunks (writer_live.h) ---------------------------- */

/* Append raw as one complete chunk (header and payload) to dst. */
static int encode_chunk(cap_writer *w, uint16_t type, const capf_buf *raw,
                        capf_buf *dst)
{
    if (raw->failed || raw->len > CAPF_MAX_CHUNK_RAW)
        return -1;
    size_t bound = ZSTD_compressBound(raw->len);
    if (capf_buf_reserve(dst, CAPF_CHUNK_HEADER_LEN + bound) != 0)
        return -1;
    uint8_t *hdr = dst->data + dst->len;
    uint8_t *body = hdr + CAPF_CHUNK_HEADER_LEN;
    capf_chunk_header h = {.type = type, .raw = (uint32_t)raw->len};
    size_t n = raw->len ? ZSTD_compressCCtx(w->zc, body, bound, raw->data,
                                            raw->len, w->level)
                        : 0;
    if (raw->len && !ZSTD_isError(n) && n < raw->len) {
        h.flags = CAPF_CHUNK_FLAG_ZSTD;
        h.stored = (uint32_t)n;
    } else {
        h.stored = (uint32_t)raw->len;
        if (raw->len)
            memcpy(body, raw->data, raw->len);
    }
    h.payload_crc = capf_crc32(body, h.stored);
    capf_chunk_header_encode(hdr, &h);
    dst->len += CAPF_CHUNK_HEADER_LEN + h.stored;
    return 0;
}

void cap__writer_header(const cap_writer *w, uint8_t out[CAPF_HEADER_LEN])
{
    capf_header_encode(out, (uint16_t)w->major, (uint16_t)w->minor);
}

int cap__writer_meta_chunk(cap_writer *w, uint64_t start_tick, capf_buf *out)
{
    double per = w->origin_period;
    if (w->have_clock && w->origin_mono &&
        w->clock_mono >= w->origin_mono + CAPF_CLOCK_MIN_SPAN_NS &&
        w->clock_tick > w->origin_tick)
        per = (double)(w->clock_mono - w->origin_mono) /
              (double)(w->clock_tick - w->origin_tick);
    char ns[32];
    snprintf(ns, sizeof ns, "%lld",
             (long long)llround((double)(int64_t)(start_tick - w->origin_tick) *
                                per));
    capf_buf p = {0}, t = {0};
    capf_buf_varint(&t, w->meta_n + 1);
    capf_buf_bytes(&t, w->meta_pairs.data, w->meta_pairs.len);
    capc_meta_kv_put(&t, "stream_start_ns", ns);
    capf_buf_section(&p, CAPF_SEC_META_KV, &t);
    capf_buf_section(&p, CAPF_SEC_ORIGIN, &w->origin_body);
    if (t.failed)
        p.failed = 1;
    int rc = encode_chunk(w, CAPF_CHUNK_META, &p, out);
    capf_buf_free(&p);
    capf_buf_free(&t);
    return rc;
}

int cap__writer_decl_chunk(cap_writer *w, capf_buf *out)
{
    capf_buf p = {0};
    int rc = cap__writer_put_decls(w, &p, 1);
    if (rc == 0)
        rc = encode_chunk(w, CAPF_CHUNK_BLOCK, &p, out);
    capf_buf_free(&p);
    return rc;
}

int cap__writer_loss_chunk(cap_writer *w, const uint32_t *tids,
                           const uint64_t *scopes, size_t n, capf_buf *out)
{
    capf_buf p = {0}, t = {0};
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += tids[i] < w->threads_cap && w->threads[tids[i]] &&
             w->threads[tids[i]]->declared && scopes[i];
    if (k == 0)
        return 0;
    capf_buf_varint(&t, k);
    for (size_t i = 0; i < n; i++)
        if (tids[i] < w->threads_cap && w->threads[tids[i]] &&
            w->threads[tids[i]]->declared && scopes[i]) {
            capc_thread_put(&t, tids[i], w->threads[tids[i]]->name);
        }
    capf_buf_section(&p, CAPF_SEC_THREADS, &t);
    t.len = 0;
    capf_buf_varint(&t, k);
    for (size_t i = 0; i < n; i++)
        if (tids[i] < w->threads_cap && w->threads[tids[i]] &&
            w->threads[tids[i]]->declared && scopes[i]) {
            capc_stat_put(&t, CAPF_STAT_DROPPED_SCOPES, tids[i], scopes[i]);
        }
    capf_buf_section(&p, CAPF_SEC_STATS, &t);
    if (t.failed)
        p.failed = 1;
    int rc = encode_chunk(w, CAPF_CHUNK_BLOCK, &p, out);
    capf_buf_free(&p);
    capf_buf_free(&t);
    return rc;
}

int cap__writer_footer_chunk(cap_writer *w, const uint64_t *offsets,
                             const uint64_t *first_frame,
                             const uint64_t *frames, size_t n,
                             uint64_t footer_offset, capf_buf *out)
{
    capf_buf p = {0}, t = {0};
    int rc = cap__writer_put_decls(w, &p, 0);
    uint64_t prev;
    capc_index_begin(&t, n, &prev);
    for (size_t i = 0; i < n; i++)
        capc_index_entry(&t, &prev, offsets[i], first_frame[i], frames[i]);
    capf_buf_section(&p, CAPF_SEC_INDEX, &t);
    if (t.failed)
        p.failed = 1;
    if (rc == 0)
        rc = encode_chunk(w, CAPF_CHUNK_FOOTER, &p, out);
    if (rc == 0 && capf_buf_reserve(out, CAPF_TRAILER_LEN) == 0) {
        capf_trailer_encode(out->data + out->len, footer_offset);
        out->len += CAPF_TRAILER_LEN;
    } else {
        rc = -1;
    }
    capf_buf_free(&p);
    capf_buf_free(&t);
    return rc;
}

size_t cap__writer_block_scopes(cap_writer *w, uint32_t *tids,
                                uint64_t *scopes, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < w->blk_threads_n && k < max; i++) {
        const wr_thread *th = w->threads[w->blk_threads[i]];
        capf_cur c = {th->tokens.data, th->tokens.data + th->tokens.len, 0};
        uint64_t ends = 0; /* token 0: a scope closes in this block */
        while (c.p < c.end && !c.bad)
            ends += capf_cur_varint(&c) == 0;
        tids[k] = w->blk_threads[i];
        scopes[k++] = ends;
    }
    return k;
}
