/*
 * hostile_gen.h - write captures byte by byte, for tests that need what
 * the reference writer refuses to write: sparse or huge name tables,
 * scopes of undeclared threads, repeated frames, thousands of threads.
 *
 * A raw_cap writes the file header, a META chunk (no keys, a monotonic
 * clock of period 1 ns), the BLOCK chunks its caller builds section by
 * section, then a FOOTER (INDEX) and the trailer: a complete file that
 * follows format-spec/capture-format.md. Chunks are zstd-compressed when
 * that makes them smaller, as the reference writer does. The test
 * includes cmocka.h before it and links zstd and the format helpers.
 */
#ifndef HOSTILE_GEN_H
#define HOSTILE_GEN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "format/format.h"

typedef struct raw_cap {
    FILE *f;
    uint64_t pos;
    unsigned major, minor;
    struct {
        uint64_t off, first, frames;
    } blk[64];
    size_t nblk;
} raw_cap;

static inline void raw_chunk(raw_cap *c, uint16_t type, const capf_buf *p)
{
    size_t bound = ZSTD_compressBound(p->len);
    uint8_t *z = malloc(bound ? bound : 1);
    assert_non_null(z);
    size_t zn = ZSTD_compress(z, bound, p->data, p->len, 3);
    assert_false(ZSTD_isError(zn));
    int packed = zn < p->len;
    const uint8_t *body = packed ? z : p->data;
    size_t n = packed ? zn : p->len;
    capf_chunk_header h = {.type = type,
                           .flags = packed ? CAPF_CHUNK_FLAG_ZSTD : 0,
                           .stored = (uint32_t)n,
                           .raw = (uint32_t)p->len,
                           .payload_crc = capf_crc32(body, n)};
    uint8_t hb[CAPF_CHUNK_HEADER_LEN];
    capf_chunk_header_encode(hb, &h);
    assert_int_equal(fwrite(hb, 1, sizeof hb, c->f), sizeof hb);
    assert_int_equal(fwrite(body, 1, n, c->f), n);
    c->pos += sizeof hb + n;
    free(z);
}

static inline void raw_open(raw_cap *c, const char *path, unsigned major,
                            unsigned minor)
{
    memset(c, 0, sizeof *c);
    c->f = fopen(path, "wb");
    assert_non_null(c->f);
    c->major = major;
    c->minor = minor;
    uint8_t hb[CAPF_HEADER_LEN];
    capf_header_encode(hb, (uint16_t)major, (uint16_t)minor);
    assert_int_equal(fwrite(hb, 1, sizeof hb, c->f), sizeof hb);
    c->pos = sizeof hb;
    capf_buf p = {0}, kv = {0}, org = {0};
    capf_buf_varint(&kv, 1);
    capf_buf_str(&kv, "program");
    capf_buf_str(&kv, "hostile");
    capf_buf_section(&p, CAPF_SEC_META_KV, &kv);
    capf_buf_str(&org, "monotonic");
    capf_buf_f64(&org, 1.0);
    capf_buf_varint(&org, 1000);
    capf_buf_varint(&org, 1000);
    capf_buf_varint(&org, 0);
    capf_buf_section(&p, CAPF_SEC_ORIGIN, &org);
    raw_chunk(c, CAPF_CHUNK_META, &p);
    capf_buf_free(&p);
    capf_buf_free(&kv);
    capf_buf_free(&org);
}

/* A BLOCK whose payload is `p` (sections), holding `frames` frames from
 * index `first` (for the INDEX). */
static inline void raw_block(raw_cap *c, const capf_buf *p, uint64_t first,
                             uint64_t frames)
{
    assert_true(c->nblk < sizeof c->blk / sizeof c->blk[0]);
    c->blk[c->nblk].off = c->pos;
    c->blk[c->nblk].first = first;
    c->blk[c->nblk].frames = frames;
    c->nblk++;
    raw_chunk(c, CAPF_CHUNK_BLOCK, p);
}

static inline void raw_close(raw_cap *c)
{
    capf_buf p = {0}, ix = {0};
    capf_buf_varint(&ix, c->nblk);
    uint64_t prev = 0;
    for (size_t i = 0; i < c->nblk; i++) {
        capf_buf_varint(&ix, c->blk[i].off - prev);
        prev = c->blk[i].off;
        capf_buf_varint(&ix, c->blk[i].first);
        capf_buf_varint(&ix, c->blk[i].frames);
    }
    capf_buf_section(&p, CAPF_SEC_INDEX, &ix);
    uint64_t footer = c->pos;
    raw_chunk(c, CAPF_CHUNK_FOOTER, &p);
    uint8_t tb[CAPF_TRAILER_LEN];
    capf_trailer_encode(tb, footer);
    assert_int_equal(fwrite(tb, 1, sizeof tb, c->f), sizeof tb);
    assert_int_equal(fclose(c->f), 0);
    capf_buf_free(&p);
    capf_buf_free(&ix);
}

/* Section helpers: each appends one section to payload p. */

/* FRAMES: n frames from index `first`, each `len` ticks, back to back
 * from tick `begin`. */
static inline void raw_frames(capf_buf *p, uint64_t first, uint64_t n,
                              uint64_t begin, uint64_t len)
{
    capf_buf s = {0};
    capf_buf_varint(&s, n);
    for (uint64_t i = 0; i < n; i++) {
        capf_buf_varint(&s, i == 0 ? first : 1);
        capf_buf_varint(&s, capf_zigzag(i == 0 ? (int64_t)begin
                                               : (int64_t)len));
        capf_buf_varint(&s, len);
    }
    capf_buf_section(p, CAPF_SEC_FRAMES, &s);
    capf_buf_free(&s);
}

/* SCOPES of thread tid: one root scope of each of the n names ids[i]
 * after another from tick `base`, each `len` ticks long. */
static inline void raw_scopes(capf_buf *p, uint32_t tid, uint64_t base,
                              const uint32_t *ids, size_t n, uint64_t len)
{
    capf_buf s = {0}, tok = {0}, dt = {0};
    for (size_t i = 0; i < n; i++) {
        capf_buf_varint(&tok, ids[i]);
        capf_buf_varint(&dt, i == 0 ? 0 : 1);
        capf_buf_varint(&tok, 0);
        capf_buf_varint(&dt, len);
    }
    capf_buf_varint(&s, tid);
    capf_buf_varint(&s, base);
    capf_buf_varint(&s, 0);
    capf_buf_varint(&s, 2 * n);
    capf_buf_varint(&s, tok.len);
    capf_buf_bytes(&s, tok.data, tok.len);
    capf_buf_bytes(&s, dt.data, dt.len);
    capf_buf_section(p, CAPF_SEC_SCOPES, &s);
    capf_buf_free(&s);
    capf_buf_free(&tok);
    capf_buf_free(&dt);
}

#endif
