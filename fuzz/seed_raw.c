/*
 * seed_raw - rewrite a capture's chunks for fuzzing and for fixtures.
 *
 *   seed_raw IN OUT            every chunk stored uncompressed
 *   seed_raw --fix-crc IN OUT  every checksum recomputed, bytes unchanged
 *
 * The fuzzer's mutations of a zstd payload almost never decompress, so
 * seeds made of compressed chunks keep it out of the section decoders.
 * The same capture stored raw (flags 0, stored == raw, checksums
 * recomputed: a valid file for any reader) lets each mutation land in a
 * section. The trailer's footer offset is recomputed too.
 *
 * The fuzz build ignores checksums, so an input it finds usually has wrong
 * ones and a normal build would skip the damaged chunk before reaching the
 * bug. --fix-crc recomputes the file header's and every chunk's checksums
 * (walking chunks by their stated sizes), so the input becomes a fixture
 * that reproduces in every build. Exit status 0, or 1 with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "format/format.h"

static int fail(const char *in, const char *why)
{
    fprintf(stderr, "seed_raw: %s: %s\n", in, why);
    return 1;
}

/* Recompute every checksum of in[0..size) in place. */
static void fix_crc(uint8_t *in, size_t size)
{
    if (size >= CAPF_HEADER_LEN)
        capf_put_u32(in + 12, capf_crc32(in, 12));
    size_t pos = CAPF_HEADER_LEN;
    while (pos + CAPF_CHUNK_HEADER_LEN <= size &&
           memcmp(in + pos, CAPF_CHUNK_SYNC, 4) == 0) {
        uint8_t *h = in + pos;
        uint32_t stored = capf_get_u32(h + 8);
        size_t body = size - pos - CAPF_CHUNK_HEADER_LEN;
        size_t n = stored < body ? stored : body;
        capf_put_u32(h + 16, capf_crc32(h + CAPF_CHUNK_HEADER_LEN, n));
        capf_put_u32(h + 20, capf_crc32(h, 20));
        pos += CAPF_CHUNK_HEADER_LEN + n;
    }
}

int main(int argc, char **argv)
{
    int fix = argc == 4 && strcmp(argv[1], "--fix-crc") == 0;
    if (argc != 3 && !fix) {
        fprintf(stderr, "usage: seed_raw [--fix-crc] IN OUT\n");
        return 2;
    }
    if (fix) {
        argv++;
        argc--;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f)
        return fail(argv[1], "cannot open");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *in = malloc(size > 0 ? (size_t)size : 1);
    if (!in || fread(in, 1, (size_t)size, f) != (size_t)size)
        return fail(argv[1], "cannot read");
    fclose(f);
    if (size < CAPF_HEADER_LEN || memcmp(in, CAPF_MAGIC, CAPF_MAGIC_LEN) != 0)
        return fail(argv[1], "not a capture");
    if (fix) {
        fix_crc(in, (size_t)size);
        FILE *o = fopen(argv[2], "wb");
        if (!o || fwrite(in, 1, (size_t)size, o) != (size_t)size ||
            fclose(o) != 0)
            return fail(argv[2], "cannot write");
        free(in);
        return 0;
    }
    FILE *o = fopen(argv[2], "wb");
    if (!o)
        return fail(argv[2], "cannot create");
    fwrite(in, 1, CAPF_HEADER_LEN, o);
    uint64_t pos = CAPF_HEADER_LEN, out_pos = CAPF_HEADER_LEN;
    uint64_t footer_at = 0;
    int have_footer = 0;
    while (pos + CAPF_CHUNK_HEADER_LEN <= (uint64_t)size) {
        capf_chunk_header h;
        if (capf_chunk_header_decode(in + pos, &h) != 0 ||
            pos + CAPF_CHUNK_HEADER_LEN + h.stored > (uint64_t)size)
            break; /* damage or a cut: keep what came before */
        const uint8_t *body = in + pos + CAPF_CHUNK_HEADER_LEN;
        uint8_t *raw = malloc(h.raw ? h.raw : 1);
        if (!raw)
            return fail(argv[1], "out of memory");
        if (h.flags & CAPF_CHUNK_FLAG_ZSTD) {
            size_t n = ZSTD_decompress(raw, h.raw, body, h.stored);
            if (ZSTD_isError(n) || n != h.raw) {
                free(raw);
                break;
            }
        } else {
            memcpy(raw, body, h.raw);
        }
        if (h.type == CAPF_CHUNK_FOOTER) {
            footer_at = out_pos;
            have_footer = 1;
        }
        capf_chunk_header r = {.type = h.type, .flags = 0, .stored = h.raw,
                               .raw = h.raw,
                               .payload_crc = capf_crc32(raw, h.raw)};
        uint8_t hb[CAPF_CHUNK_HEADER_LEN];
        capf_chunk_header_encode(hb, &r);
        fwrite(hb, 1, sizeof hb, o);
        fwrite(raw, 1, h.raw, o);
        free(raw);
        out_pos += CAPF_CHUNK_HEADER_LEN + h.raw;
        pos += CAPF_CHUNK_HEADER_LEN + h.stored;
        if (have_footer)
            break;
    }
    if (have_footer) {
        uint8_t tr[CAPF_TRAILER_LEN];
        capf_trailer_encode(tr, footer_at);
        fwrite(tr, 1, sizeof tr, o);
    }
    free(in);
    if (fclose(o) != 0)
        return fail(argv[2], "write error");
    return 0;
}
