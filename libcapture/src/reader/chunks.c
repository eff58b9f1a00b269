/*
 * chunks.c - a capture cut into runs of blocks (cap_chunks.h): the
 * footer's INDEX read with pread, and readers limited to one run.
 */
#include "capture/cap_chunks.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "format/format.h"
#include "range.h"

static int pread_all(int fd, void *buf, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, (uint8_t *)buf + got, n - got,
                          (off_t)(off + got));
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    return 0;
}

/* The footer's payload, decompressed (*raw, *raw_len; free it), and its
 * offset. Returns a reason when there is no usable footer, else NULL. */
static const char *footer_payload(int fd, uint64_t size, uint8_t **raw,
                                  size_t *raw_len, uint64_t *foff)
{
    uint8_t tr[CAPF_TRAILER_LEN], hb[CAPF_CHUNK_HEADER_LEN];
    *raw = NULL;
    if (size < CAPF_HEADER_LEN + CAPF_TRAILER_LEN ||
        pread_all(fd, tr, sizeof tr, size - CAPF_TRAILER_LEN) != 0 ||
        memcmp(tr + 8, CAPF_TRAILER_MAGIC, 8) != 0)
        return "no footer";
    uint64_t off = capf_get_u64(tr);
    capf_chunk_header h;
    if (off < CAPF_HEADER_LEN ||
        off > size - CAPF_TRAILER_LEN - CAPF_CHUNK_HEADER_LEN ||
        pread_all(fd, hb, sizeof hb, off) != 0 ||
        capf_chunk_header_decode(hb, &h) != 0 ||
        h.type != CAPF_CHUNK_FOOTER ||
        h.stored > size - CAPF_TRAILER_LEN - CAPF_CHUNK_HEADER_LEN - off)
        return "footer damaged";
    uint8_t *st = malloc(h.stored ? h.stored : 1);
    uint8_t *out = malloc(h.raw ? h.raw : 1);
    int ok = st && out &&
             pread_all(fd, st, h.stored, off + CAPF_CHUNK_HEADER_LEN) == 0 &&
             capf_crc_matches(h.payload_crc, capf_crc32(st, h.stored));
    if (ok && (h.flags & CAPF_CHUNK_FLAG_ZSTD)) {
        size_t n = ZSTD_decompress(out, h.raw, st, h.stored);
        ok = !ZSTD_isError(n) && n == h.raw;
    } else if (ok && h.raw) {
        memcpy(out, st, h.raw);
    }
    free(st);
    if (!ok) {
        free(out);
        return "footer damaged";
    }
    *raw = out;
    *raw_len = h.raw;
    *foff = off;
    return NULL;
}

/* The INDEX's block offsets (*off, *n; free *off). A reason when the
 * footer has none or it does not hold together, else NULL. */
static const char *index_offsets(const uint8_t *raw, size_t len,
                                 uint64_t foff, uint64_t **off, size_t *n)
{
    capf_cur c = {raw, raw + len, 0};
    *off = NULL;
    *n = 0;
    while (c.p < c.end) {
        uint8_t kind = capf_cur_u8(&c);
        uint64_t l = capf_cur_varint(&c);
        if (c.bad || l > (uint64_t)(c.end - c.p))
            return "footer damaged";
        capf_cur b = {c.p, c.p + l, 0};
        c.p += l;
        if (kind != CAPF_SEC_INDEX)
            continue;
        /* three varints an entry, one byte each at least */
        uint64_t cnt = capf_cur_varint_max(&b, l / 3 + 1);
        free(*off);
        *off = malloc((cnt ? cnt : 1) * sizeof **off);
        if (!*off)
            return "out of memory";
        uint64_t o = 0;
        for (uint64_t i = 0; i < cnt && !b.bad; i++) {
            uint64_t d = capf_cur_varint(&b);
            (void)capf_cur_varint(&b);
            (void)capf_cur_varint(&b);
            if ((i && d == 0) || d > foff - o)
                b.bad = 1;
            o += d;
            (*off)[i] = o;
        }
        if (b.bad || (cnt && (*off)[cnt - 1] >= foff)) {
            free(*off);
            *off = NULL;
            return "index damaged";
        }
        *n = (size_t)cnt;
        return cnt ? NULL : "no blocks";
    }
    return "no index";
}

cap_result cap_chunks_plan(int fd, uint64_t min_bytes, cap_chunk_plan *plan)
{
    if (!plan)
        return CAP_E_MISUSE;
    memset(plan, 0, sizeof *plan);
    if (fd < 0)
        return CAP_E_MISUSE;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        plan->why_whole = "not a regular file";
        return CAP_OK;
    }
    uint64_t size = (uint64_t)sb.st_size, foff = 0;
    plan->file_size = size;
    uint8_t *raw;
    size_t raw_len, n = 0;
    uint64_t *off = NULL;
    const char *why = footer_payload(fd, size, &raw, &raw_len, &foff);
    if (!why) {
        why = index_offsets(raw, raw_len, foff, &off, &n);
        free(raw);
    }
    /* 4.0: a block that continues a group (CONT) decodes only after the
       group's earlier blocks, so a chunk never begins at one: cont[i] */
    uint8_t *cont = why ? NULL : calloc(n ? n : 1, 1);
    if (!why && !cont)
        why = "out of memory";
    for (size_t i = 0; !why && i < n; i++) {
        uint8_t hb[CAPF_CHUNK_HEADER_LEN];
        capf_chunk_header h;
        if (pread_all(fd, hb, sizeof hb, off[i]) != 0 ||
            capf_chunk_header_decode(hb, &h) != 0 ||
            h.type != CAPF_CHUNK_BLOCK)
            why = "index names no block";
        else
            cont[i] = (h.flags & CAPF_CHUNK_FLAG_CONT) != 0;
    }
    if (!why && !(plan->chunks = malloc(n * sizeof *plan->chunks)))
        why = "out of memory";
    if (why) {
        free(off);
        free(cont);
        plan->why_whole = why;
        return strcmp(why, "out of memory") == 0 ? CAP_E_NOMEM : CAP_OK;
    }
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && (off[j] - off[i] < min_bytes || cont[j]))
            j++;
        plan->chunks[k++] = (cap_chunk){off[i], j < n ? off[j] : foff,
                                        (uint64_t)(j - i)};
        i = j;
    }
    free(off);
    free(cont);
    plan->n = k;
    plan->blocks = n;
    plan->footer_offset = foff;
    return CAP_OK;
}

void cap_chunks_free(cap_chunk_plan *plan)
{
    if (!plan)
        return;
    free(plan->chunks);
    memset(plan, 0, sizeof *plan);
}

cap_result cap_chunks_open(cap_reader **out, int fd, uint64_t begin,
                           uint64_t end, char *detail, size_t detail_size)
{
    if (detail && detail_size)
        detail[0] = 0;
    if (!out || fd < 0 || (end && end < begin))
        return CAP_E_MISUSE;
    *out = NULL;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        return CAP_E_MISUSE;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int own = open(path, O_RDONLY | O_CLOEXEC);
    if (own < 0) {
        if (detail && detail_size)
            snprintf(detail, detail_size, "cannot open %s again", path);
        return CAP_E_IO;
    }
    cap_reader *r;
    cap_result res = cap_reader_open_fd(&r, own, detail, detail_size);
    if (res != CAP_OK)
        return res;
    res = cap__reader_range(r, begin, end);
    if (res != CAP_OK) {
        if (detail && detail_size)
            snprintf(detail, detail_size, "%s",
                     cap_reader_detail(r)[0] ? cap_reader_detail(r)
                                             : "chunk out of range");
        cap_reader_close(r);
        return res;
    }
    *out = r;
    return CAP_OK;
}
