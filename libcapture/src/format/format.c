/* format.c - byte-level helpers shared by the writer and the reader. */
#include "format.h"

#include <stdlib.h>
#include <zlib.h>

void capf_buf_free(capf_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = 0;
}

int capf_buf_reserve(capf_buf *b, size_t extra)
{
    if (b->failed)
        return -1;
    if (b->cap - b->len >= extra)
        return 0;
    size_t want = b->cap ? b->cap : 256;
    while (want - b->len < extra) {
        if (want > SIZE_MAX / 2) {
            b->failed = 1;
            return -1;
        }
        want *= 2;
    }
    uint8_t *p = realloc(b->data, want);
    if (!p) {
        b->failed = 1;
        return -1;
    }
    b->data = p;
    b->cap = want;
    return 0;
}

void capf_buf_f64(capf_buf *b, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint8_t tmp[8];
    capf_put_u64(tmp, bits);
    capf_buf_bytes(b, tmp, 8);
}

void capf_buf_str(capf_buf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    capf_buf_varint(b, n);
    if (n)
        capf_buf_bytes(b, s, n);
}

void capf_buf_section(capf_buf *b, uint8_t kind, const capf_buf *body)
{
    capf_buf_u8(b, kind);
    capf_buf_varint(b, body->len);
    if (body->len)
        capf_buf_bytes(b, body->data, body->len);
    if (body->failed)
        b->failed = 1;
}

double capf_cur_f64(capf_cur *c)
{
    if (c->end - c->p < 8) {
        c->bad = 1;
        c->p = c->end;
        return 0.0;
    }
    uint64_t bits = capf_get_u64(c->p);
    c->p += 8;
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

void capf_cur_str(capf_cur *c, const uint8_t **s, size_t *len)
{
    uint64_t n = capf_cur_varint(c);
    if (c->bad || n > (uint64_t)(c->end - c->p)) {
        c->bad = 1;
        c->p = c->end;
        *s = NULL;
        *len = 0;
        return;
    }
    *s = c->p;
    *len = (size_t)n;
    c->p += n;
}

uint64_t capf_cur_varint_max(capf_cur *c, uint64_t max)
{
    uint64_t v = capf_cur_varint(c);
    if (v > max) {
        c->bad = 1;
        c->p = c->end;
        return 0;
    }
    return v;
}

uint32_t capf_crc32(const void *data, size_t len)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    const Bytef *p = data;
    while (len > 0) {
        uInt n = len > 0x40000000u ? 0x40000000u : (uInt)len;
        crc = crc32(crc, p, n);
        p += n;
        len -= n;
    }
    return (uint32_t)crc;
}

void capf_header_encode(uint8_t out[CAPF_HEADER_LEN], uint16_t major,
                        uint16_t minor)
{
    memcpy(out, CAPF_MAGIC, CAPF_MAGIC_LEN);
    capf_put_u16(out + 8, major);
    capf_put_u16(out + 10, minor);
    capf_put_u32(out + 12, capf_crc32(out, 12));
}

void capf_chunk_header_encode(uint8_t out[CAPF_CHUNK_HEADER_LEN],
                              const capf_chunk_header *h)
{
    memcpy(out, CAPF_CHUNK_SYNC, 4);
    capf_put_u16(out + 4, h->type);
    capf_put_u16(out + 6, h->flags);
    capf_put_u32(out + 8, h->stored);
    capf_put_u32(out + 12, h->raw);
    capf_put_u32(out + 16, h->payload_crc);
    capf_put_u32(out + 20, capf_crc32(out, 20));
}

int capf_chunk_header_decode(const uint8_t in[CAPF_CHUNK_HEADER_LEN],
                             capf_chunk_header *h)
{
    if (memcmp(in, CAPF_CHUNK_SYNC, 4) != 0)
        return -1;
    if (!capf_crc_matches(capf_get_u32(in + 20), capf_crc32(in, 20)))
        return -1;
    h->type = capf_get_u16(in + 4);
    h->flags = capf_get_u16(in + 6);
    h->stored = capf_get_u32(in + 8);
    h->raw = capf_get_u32(in + 12);
    h->payload_crc = capf_get_u32(in + 16);
    if (h->flags & ~CAPF_CHUNK_FLAGS_KNOWN)
        return -2;
    if (h->raw > CAPF_MAX_CHUNK_RAW || h->stored > CAPF_MAX_CHUNK_STORED)
        return -2;
    if (!(h->flags & CAPF_CHUNK_FLAG_ZSTD) && h->stored != h->raw)
        return -2;
    /* CONT (4.0) only on a compressed BLOCK; a reader of a file before
       4.0 refuses it as a reserved bit (the reader checks the version) */
    if ((h->flags & CAPF_CHUNK_FLAG_CONT) &&
        (h->type != CAPF_CHUNK_BLOCK || !(h->flags & CAPF_CHUNK_FLAG_ZSTD)))
        return -2;
    return 0;
}

void capf_trailer_encode(uint8_t out[CAPF_TRAILER_LEN], uint64_t footer_offset)
{
    capf_put_u64(out, footer_offset);
    memcpy(out + 8, CAPF_TRAILER_MAGIC, 8);
}
