/*
 * bench_sections.c - where a capture's bytes go, by section kind.
 *
 * Reads every BLOCK chunk of a capture file (a 4.0 group's blocks as
 * pieces of one zstd stream, format-spec "Groups of blocks"), walks its
 * sections and prints, for each kind present:
 *   sections_<KIND>_raw_bytes   the sections' payload bytes, uncompressed
 *   sections_<KIND>_zstd_bytes  those payloads, concatenated in file order,
 *                               compressed alone with zstd -1: what the
 *                               kind would cost in a file of its own (the
 *                               file's shared stream makes the sum differ
 *                               from the file's size a little)
 * and, given EVENTS (the events the file records, as game_sim_size.sh
 * counts them), each figure over EVENTS as _per_event. Also file_bytes,
 * block_bytes (stored, headers included) and blocks.
 *
 * Usage: bench_sections FILE [EVENTS]
 * Exit: 0, or 1 (the file could not be read, or a block did not decode:
 * one line on stderr).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "format/format.h"

static const char *const kind_names[256] = {
    [CAPF_SEC_CLOCK] = "CLOCK",         [CAPF_SEC_NAMES] = "NAMES",
    [CAPF_SEC_THREADS] = "THREADS",     [CAPF_SEC_TRACKS] = "TRACKS",
    [CAPF_SEC_FRAMES] = "FRAMES",       [CAPF_SEC_SCOPES] = "SCOPES",
    [CAPF_SEC_COUNTERS] = "COUNTERS",   [CAPF_SEC_GPU_FRAME] = "GPU_FRAME",
    [CAPF_SEC_GPU_CAL] = "GPU_CAL",     [CAPF_SEC_STATS] = "STATS",
    [CAPF_SEC_NAME_FLAGS] = "NAME_FLAGS", [CAPF_SEC_SCOPES_R] = "SCOPES_R",
    [CAPF_SEC_SCOPES_E] = "SCOPES_E",
};

typedef struct kind_bytes {
    uint8_t *b; /* the kind's payloads, concatenated */
    size_t n, cap;
} kind_bytes;

static int die(const char *path, const char *what)
{
    fprintf(stderr, "bench_sections: %s: %s\n", path, what);
    return 1;
}

static int append(kind_bytes *k, const uint8_t *p, size_t n)
{
    if (k->n + n > k->cap) {
        size_t c = k->cap ? k->cap : 4096;
        while (c < k->n + n)
            c *= 2;
        uint8_t *q = realloc(k->b, c);
        if (!q)
            return -1;
        k->b = q;
        k->cap = c;
    }
    memcpy(k->b + k->n, p, n);
    k->n += n;
    return 0;
}

/* The sections of one block's raw payload into kinds. 0, or -1 (a
 * malformed section or out of memory). */
static int walk(const uint8_t *raw, size_t n, kind_bytes *kinds)
{
    capf_cur c = {raw, raw + n, 0};
    while (c.p < c.end && !c.bad) {
        uint8_t kind = capf_cur_u8(&c);
        uint64_t len = capf_cur_varint(&c);
        if (c.bad || len > (uint64_t)(c.end - c.p))
            return -1;
        if (append(&kinds[kind], c.p, (size_t)len) != 0)
            return -1;
        c.p += len;
    }
    return c.bad ? -1 : 0;
}

/* One block's payload p (stored bytes) into raw (h->raw bytes): a
 * group's stream ds goes on at a CONT block. 0, or -1. */
static int unpack(ZSTD_DStream *ds, const capf_chunk_header *h,
                  const uint8_t *p, uint8_t *raw)
{
    if (!(h->flags & CAPF_CHUNK_FLAG_ZSTD)) {
        memcpy(raw, p, h->raw);
        return 0;
    }
    if (!(h->flags & CAPF_CHUNK_FLAG_CONT))
        ZSTD_DCtx_reset(ds, ZSTD_reset_session_only);
    ZSTD_inBuffer in = {p, h->stored, 0};
    ZSTD_outBuffer out = {raw, h->raw, 0};
    while (in.pos < in.size)
        if (ZSTD_isError(ZSTD_decompressStream(ds, &out, &in)))
            return -1;
    return out.pos == h->raw ? 0 : -1;
}

static void put(const char *kind, const char *what, size_t v, double events)
{
    printf("sections_%s_%s=%zu\n", kind, what, v);
    if (events > 0)
        printf("sections_%s_%s_per_event=%.3f\n", kind, what,
               (double)v / events);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: bench_sections FILE [EVENTS]\n");
        return 2;
    }
    const char *path = argv[1];
    double events = argc == 3 ? atof(argv[2]) : 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return die(path, "cannot open");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = n > 0 ? malloc((size_t)n) : NULL;
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(b);
        return die(path, "cannot read");
    }
    fclose(f);
    static kind_bytes kinds[256];
    ZSTD_DStream *ds = ZSTD_createDStream();
    size_t blocks = 0, block_bytes = 0;
    int rc = 0;
    for (long off = CAPF_HEADER_LEN; off + CAPF_CHUNK_HEADER_LEN <= n;) {
        capf_chunk_header h;
        if (capf_chunk_header_decode(b + off, &h) != 0 ||
            (uint64_t)(n - off - CAPF_CHUNK_HEADER_LEN) < h.stored) {
            rc = die(path, "a chunk header fails its checks");
            break;
        }
        const uint8_t *p = b + off + CAPF_CHUNK_HEADER_LEN;
        off += CAPF_CHUNK_HEADER_LEN + (long)h.stored;
        if (h.type != CAPF_CHUNK_BLOCK)
            continue;
        blocks++;
        block_bytes += CAPF_CHUNK_HEADER_LEN + h.stored;
        uint8_t *raw = malloc(h.raw ? h.raw : 1);
        if (!raw || !ds || unpack(ds, &h, p, raw) != 0 ||
            walk(raw, h.raw, kinds) != 0) {
            free(raw);
            rc = die(path, "a block does not decode");
            break;
        }
        free(raw);
    }
    printf("file_bytes=%ld\nblock_bytes=%zu\nblocks=%zu\n", n, block_bytes,
           blocks);
    if (events > 0)
        printf("file_bytes_per_event=%.3f\n", (double)n / events);
    for (int k = 0; k < 256 && rc == 0; k++) {
        if (!kinds[k].n)
            continue;
        char other[16];
        snprintf(other, sizeof other, "0x%02X", k);
        const char *name = kind_names[k] ? kind_names[k] : other;
        size_t bound = ZSTD_compressBound(kinds[k].n);
        uint8_t *z = malloc(bound);
        size_t zn = z ? ZSTD_compress(z, bound, kinds[k].b, kinds[k].n, 1)
                      : 0;
        put(name, "raw_bytes", kinds[k].n, events);
        if (z && !ZSTD_isError(zn))
            put(name, "zstd_bytes", zn, events);
        free(z);
    }
    for (int k = 0; k < 256; k++)
        free(kinds[k].b);
    ZSTD_freeDStream(ds);
    free(b);
    return rc;
}
