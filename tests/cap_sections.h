/*
 * cap_sections.h - count the sections of each kind in a capture's BLOCK
 * chunks (format-spec "Payload: sections"), for tests that check which
 * encoding a writer chose. The test includes cmocka.h before it and links
 * zstd; format.h's chunk header decoding comes from the format helpers.
 */
#ifndef CAP_SECTIONS_H
#define CAP_SECTIONS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "format/format.h"

/* counts[kind]: sections of that kind in the file at path. Returns the
 * BLOCK chunks it holds. A 4.0 group's blocks are pieces of one zstd
 * frame (format-spec "Groups of blocks"): one decompression stream is
 * kept from a group's first block, each piece giving exactly its raw
 * bytes. */
static inline unsigned count_kinds(const char *path, unsigned counts[256])
{
    unsigned blocks = 0;
    memset(counts, 0, 256 * sizeof *counts);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    long off = CAPF_HEADER_LEN;
    ZSTD_DStream *ds = ZSTD_createDStream();
    assert_non_null(ds);
    while (off + CAPF_CHUNK_HEADER_LEN <= n) {
        capf_chunk_header h;
        if (capf_chunk_header_decode(b + off, &h) != 0)
            break;
        uint8_t *p = b + off + CAPF_CHUNK_HEADER_LEN;
        off += CAPF_CHUNK_HEADER_LEN + h.stored;
        if (h.type != CAPF_CHUNK_BLOCK)
            continue;
        blocks++;
        uint8_t *raw = malloc(h.raw + 1);
        assert_non_null(raw);
        if (h.flags & CAPF_CHUNK_FLAG_ZSTD) {
            if (!(h.flags & CAPF_CHUNK_FLAG_CONT))
                ZSTD_DCtx_reset(ds, ZSTD_reset_session_only);
            ZSTD_inBuffer in = {p, h.stored, 0};
            ZSTD_outBuffer out = {raw, h.raw + 1, 0};
            while (in.pos < in.size)
                assert_false(ZSTD_isError(ZSTD_decompressStream(ds, &out, &in)));
            assert_int_equal(out.pos, h.raw);
        } else
            memcpy(raw, p, h.raw);
        capf_cur c = {raw, raw + h.raw, 0};
        while (c.p < c.end && !c.bad) {
            uint8_t kind = capf_cur_u8(&c);
            uint64_t len = capf_cur_varint(&c);
            c.p += len;
            counts[kind]++;
        }
        free(raw);
    }
    ZSTD_freeDStream(ds);
    free(b);
    return blocks;
}

#endif
