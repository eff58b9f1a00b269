/*
 * reader.c - stream a capture file, one chunk in memory at a time.
 *
 * The reader is a small state machine: it holds the decompressed payload of
 * the current chunk and a cursor over its sections; cap_reader_next decodes
 * just enough of the current section to produce one event. See
 * format/format.h for the layout summary and format-spec/ for the spec.
 *
 * This file holds opening, closing, chunk reading, scanning and resync,
 * the section decoders (META, declarations, GPU) and cap_reader_next. The
 * scope-event loops are in scopes.c, cap_reader_frames_only in
 * frames_only.c, the getters and setters in accessors.c, and the state
 * they share in reader_int.h.
 */
#include "capture/cap_reader.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "capture/cap_limits.h"
#include "codec/decls.h"
#include "codec/footer.h"
#include "codec/frames.h"
#include "codec/gpu.h"
#include "codec/meta.h"
#include "codec/scopes.h"
#include "format/format.h"
#include "range.h"
#include "round_ns.h"
#include "reader_int.h"

/* ---- helpers ----------------------------------------------------------- */

static void set_detail(cap_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->detail, sizeof r->detail, fmt, ap);
    va_end(ap);
}

static char *dup_n(const uint8_t *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d)
        return NULL;
    if (n)
        memcpy(d, s, n);
    d[n] = 0;
    return d;
}

/* A copy of s[0..n) with a NUL, in r's arena (valid until
 * cap_reader_close); NULL when out of memory. */
static char *arena_dup(cap_reader *r, const uint8_t *s, size_t n)
{
    struct rd_text *a = &r->texts;
    if (!a->n || a->size - a->used < n + 1) {
        if (a->n == a->cap) {
            size_t c = a->cap ? a->cap * 2 : 16;
            char **p = realloc(a->blk, c * sizeof *p);
            if (!p)
                return NULL;
            a->blk = p;
            a->cap = c;
        }
        size_t size = n + 1 > RD_ARENA_BLOCK ? n + 1 : RD_ARENA_BLOCK;
        char *b = malloc(size);
        if (!b)
            return NULL;
        a->blk[a->n++] = b;
        a->used = 0;
        a->size = size;
    }
    char *d = a->blk[a->n - 1] + a->used;
    if (n)
        memcpy(d, s, n);
    d[n] = 0;
    a->used += n + 1;
    return d;
}

/* Calls fn on every name entry made. */
#define RD_EACH_NAME(r, nm, body)                                              \
    do {                                                                       \
        for (uint32_t i_ = 1; (r)->page0 && i_ < RD_PAGE; i_++) {             \
            rd_name *nm = &(r)->page0[i_];                                     \
            body;                                                              \
        }                                                                      \
        for (size_t e_ = 0; e_ < (r)->ent_n; e_++) {                           \
            rd_name *nm =                                                      \
                &(r)->nblk[e_ >> RD_PAGE_BITS][e_ & (RD_PAGE - 1)];           \
            body;                                                              \
        }                                                                      \
    } while (0)

/* The current block's period starts as the META chunk's. */
void cap__block_clock_reset(cap_reader *r)
{
    r->real_period = r->meta_period;
    r->period = r->ticks ? 1.0 : r->meta_period;
    r->clk_have = 0;
}

/* A CLOCK sample (tick, CLOCK_MONOTONIC ns): the current block's period
 * from the origin to it, when far enough from the origin. */
static void clock_sample(cap_reader *r, uint64_t t, uint64_t m)
{
    if (r->origin_mono && m >= r->origin_mono + CAPF_CLOCK_MIN_SPAN_NS &&
        t > r->origin_tick) {
        r->real_period =
            (double)(m - r->origin_mono) / (double)(t - r->origin_tick);
        r->period = r->ticks ? 1.0 : r->real_period;
        r->clk_have = 1;
        r->clk_tick = t;
        r->clk_mono = m;
    }
}

/* ---- open -------------------------------------------------------------- */

static int read_exact(cap_reader *r, void *buf, size_t n, size_t *got)
{
    size_t k = 0;
    if (r->pend_pos < r->pend_n) {
        k = r->pend_n - r->pend_pos < n ? r->pend_n - r->pend_pos : n;
        memcpy(buf, r->pend + r->pend_pos, k);
        r->pend_pos += k;
    }
    if (k < n)
        k += fread((uint8_t *)buf + k, 1, n - k, r->f);
    *got = k;
    r->off += k;
    if (k == n)
        return 0;
    return ferror(r->f) ? -2 : -1;
}

static cap_result parse_meta(cap_reader *r, const uint8_t *p, size_t n)
{
    capf_cur c = {p, p + n, 0};
    while (c.p < c.end && !c.bad) {
        uint8_t kind = capf_cur_u8(&c);
        uint64_t len = capf_cur_varint(&c);
        if (c.bad || len > (uint64_t)(c.end - c.p))
            return CAP_E_CORRUPT;
        capf_cur b = {c.p, c.p + len, 0};
        c.p += len;
        if (kind == CAPF_SEC_META_KV) {
            uint64_t cnt;
            if (capc_meta_kv_count(&b, len, &cnt) != CAP_OK || r->meta_k)
                return CAP_E_CORRUPT; /* malformed, or a second list */
            r->meta_k = calloc(cnt ? cnt : 1, sizeof *r->meta_k);
            r->meta_v = calloc(cnt ? cnt : 1, sizeof *r->meta_v);
            if (!r->meta_k || !r->meta_v)
                return CAP_E_NOMEM;
            for (uint64_t i = 0; i < cnt; i++) {
                const uint8_t *ks, *vs;
                size_t kl, vl;
                if (capc_meta_kv_get(&b, &ks, &kl, &vs, &vl) != 0)
                    return CAP_E_CORRUPT;
                r->meta_k[i] = dup_n(ks, kl);
                r->meta_v[i] = dup_n(vs, vl);
                r->meta_n = (size_t)i + 1;
                if (!r->meta_k[i] || !r->meta_v[i])
                    return CAP_E_NOMEM;
            }
        } else if (kind == CAPF_SEC_ORIGIN) {
            const uint8_t *s;
            size_t sl;
            double per;
            if (capc_origin_get(&b, &s, &sl, &per, &r->origin_tick,
                                &r->origin_mono, &r->origin_unix) != CAP_OK)
                return CAP_E_CORRUPT;
            free(r->clock_source);
            r->clock_source = dup_n(s, sl);
            if (!r->clock_source)
                return CAP_E_NOMEM;
            r->meta_period = per;
            r->have_meta = 1;
        }
    }
    if (c.bad || !r->have_meta)
        return CAP_E_CORRUPT;
    return CAP_OK;
}

/* Frames-only mode: decompress a BLOCK's payload (already checked against
 * its checksum) only until its complete sections hold the r->expect_frames
 * frames the footer's index gives it, and return the length of that
 * prefix. A block whose sections never hold exactly that many frames is
 * decompressed whole (a damaged one then yields what it has, as in
 * pass_frames' use of it: frames only). */
static size_t partial_frames(cap_reader *r, const capf_chunk_header *h)
{
    ZSTD_DCtx_reset(r->dc, ZSTD_reset_session_only);
    ZSTD_inBuffer in = {r->stored, h->stored, 0};
    ZSTD_outBuffer out = {r->raw, 0, 0};
    size_t pos = 0;           /* start of the next unparsed section */
    uint64_t frames = 0;
    int64_t want = r->expect_frames;
    if (want == 0)
        return 0;
    while (out.pos < h->raw) {
        size_t step = out.size + (64u << 10);
        out.size = step < h->raw ? step : h->raw;
        size_t before = out.pos;
        size_t z = ZSTD_decompressStream(r->dc, &out, &in);
        if (ZSTD_isError(z) || (out.pos == before && in.pos == in.size))
            return out.pos < pos ? out.pos : pos; /* damaged: what parsed */
        /* complete sections so far */
        for (;;) {
            capf_cur c = {r->raw + pos, r->raw + out.pos, 0};
            if (c.p >= c.end)
                break;
            uint8_t kind = capf_cur_u8(&c);
            uint64_t len = capf_cur_varint(&c);
            if (c.bad || len > (uint64_t)(c.end - c.p))
                break; /* not all of it yet */
            if (kind == CAPF_SEC_FRAMES) {
                capf_cur b = {c.p, c.p + len, 0};
                frames += capf_cur_varint_max(&b, len);
            }
            pos = (size_t)(c.p + len - r->raw);
        }
        if (frames == (uint64_t)want)
            return pos;
    }
    return out.pos;
}

/* 4.0: decode a compressed BLOCK's payload (r->stored) as the next piece
 * of its group's zstd frame (a new frame without CONT) into r->raw, which
 * must come to exactly h->raw bytes. 0, or -1 with the detail set (the
 * group's later blocks are then lost: format-spec "Groups of blocks"). */
static int group_decode(cap_reader *r, const capf_chunk_header *h,
                        uint64_t chunk_off)
{
    int cont = (h->flags & CAPF_CHUNK_FLAG_CONT) != 0;
    if (cont && (!r->grp_ok || r->grp_end != chunk_off)) {
        r->grp_ok = 0;
        set_detail(r, "block at offset %llu continues a group whose "
                      "earlier block was lost",
                   (unsigned long long)chunk_off);
        return -1;
    }
    r->grp_ok = 0;
    if (!r->gdc && !(r->gdc = ZSTD_createDCtx())) {
        set_detail(r, "out of memory decoding the block at offset %llu",
                   (unsigned long long)chunk_off);
        return -1;
    }
    if (!cont)
        ZSTD_DCtx_reset(r->gdc, ZSTD_reset_session_only);
    ZSTD_inBuffer in = {r->stored, h->stored, 0};
    ZSTD_outBuffer out = {r->raw, h->raw, 0};
    for (;;) {
        size_t ib = in.pos, ob = out.pos;
        if (out.pos < out.size) {
            if (ZSTD_isError(ZSTD_decompressStream(r->gdc, &out, &in)) ||
                (in.pos == ib && out.pos == ob))
                break; /* damaged, or the piece ends short of raw */
            continue;
        }
        /* all raw bytes are out: the rest of the piece must yield none */
        uint8_t extra;
        ZSTD_outBuffer more = {&extra, 1, 0};
        if (ZSTD_isError(ZSTD_decompressStream(r->gdc, &more, &in)) ||
            more.pos)
            break;
        if (in.pos == in.size) {
            r->grp_ok = 1;
            r->grp_end = r->off;
            return 0;
        }
        if (in.pos == ib)
            break;
    }
    set_detail(r, "chunk at offset %llu: zstd payload does not "
                  "decode to its stated size",
               (unsigned long long)chunk_off);
    return -1;
}

/* Read one chunk's header and payload into r->raw. Returns CAP_OK,
 * CAP_DONE (clean end of file at a chunk boundary), CAP_E_TRUNCATED,
 * CAP_E_CORRUPT (with *skip set when the chunk can be skipped by size), or
 * CAP_E_IO / CAP_E_NOMEM. */
static cap_result read_chunk(cap_reader *r, capf_chunk_header *h,
                             size_t *raw_len, uint64_t *chunk_off)
{
    uint8_t hb[CAPF_CHUNK_HEADER_LEN];
    size_t got;
    *chunk_off = r->off;
    int e = read_exact(r, hb, sizeof hb, &got);
    if (e == -2) {
        set_detail(r, "read error at offset %llu: %s",
                   (unsigned long long)*chunk_off, strerror(errno));
        return CAP_E_IO;
    }
    if (e == -1) {
        if (got == 0)
            return CAP_DONE;
        set_detail(r, "file ends inside a chunk header at offset %llu",
                   (unsigned long long)*chunk_off);
        return CAP_E_TRUNCATED;
    }
    memcpy(r->hb, hb, sizeof hb);
    int hd = capf_chunk_header_decode(hb, h);
    if (hd == 0 && (h->flags & CAPF_CHUNK_FLAG_CONT) &&
        r->major < CAPF_VERSION_MAJOR_GROUPS)
        hd = -2; /* a reserved bit before 4.0 */
    if (hd == 0 && !(h->flags & CAPF_CHUNK_FLAG_CONT))
        r->grp_gen++; /* a group starts: no SCOPES_E lists carried */
    if (hd != 0) {
        set_detail(r, "chunk header at offset %llu is damaged (%s)",
                   (unsigned long long)*chunk_off,
                   hd == -1 ? "sync or checksum mismatch"
                            : "sizes or flags out of range");
        return CAP_E_CORRUPT;
    }
    /* A chunk that claims more bytes than the file holds is cut short:
     * say so without allocating what its header claims (the file may have
     * grown since it was opened, so look again before deciding). */
    if (!r->stream && h->stored > r->size - r->off) {
        struct stat sb;
        if (fstat(fileno(r->f), &sb) == 0 && (uint64_t)sb.st_size > r->size)
            r->size = (uint64_t)sb.st_size;
        if (h->stored > r->size - r->off) {
            set_detail(r, "file ends inside the chunk at offset %llu (%llu of "
                          "%u payload bytes present)",
                       (unsigned long long)*chunk_off,
                       (unsigned long long)(r->size - r->off), h->stored);
            r->off = r->size;
            return CAP_E_TRUNCATED;
        }
    }
    if (h->stored > r->stored_cap) {
        uint8_t *p = realloc(r->stored, h->stored);
        if (!p)
            return CAP_E_NOMEM;
        r->stored = p;
        r->stored_cap = h->stored;
    }
    e = read_exact(r, r->stored, h->stored, &got);
    if (e == -2) {
        set_detail(r, "read error at offset %llu: %s",
                   (unsigned long long)*chunk_off, strerror(errno));
        return CAP_E_IO;
    }
    if (e == -1) {
        set_detail(r, "file ends inside the chunk at offset %llu (%llu of "
                      "%u payload bytes present)",
                   (unsigned long long)*chunk_off, (unsigned long long)got,
                   h->stored);
        return CAP_E_TRUNCATED;
    }
    int grouped = r->major >= CAPF_VERSION_MAJOR_GROUPS &&
                  h->type == CAPF_CHUNK_BLOCK &&
                  (h->flags & CAPF_CHUNK_FLAG_ZSTD);
    if (!grouped) /* anything else between a group's blocks ends it */
        r->grp_ok = 0;
    if (!capf_crc_matches(h->payload_crc, capf_crc32(r->stored, h->stored))) {
        set_detail(r, "chunk at offset %llu: payload checksum mismatch",
                   (unsigned long long)*chunk_off);
        r->grp_ok = 0;
        return RD_SKIPPABLE;
    }
    /* A zstd frame states its decompressed size: one that disagrees with
     * the chunk header is damage, found before allocating for it. */
    if ((h->flags & CAPF_CHUNK_FLAG_ZSTD) && !grouped &&
        ZSTD_getFrameContentSize(r->stored, h->stored) != h->raw &&
        ZSTD_getFrameContentSize(r->stored, h->stored) !=
            ZSTD_CONTENTSIZE_UNKNOWN) {
        set_detail(r, "chunk at offset %llu: zstd payload does not "
                      "decode to its stated size",
                   (unsigned long long)*chunk_off);
        return RD_SKIPPABLE;
    }
    if (h->raw + 1 > r->raw_cap) {
        size_t n = (size_t)h->raw + 1;
        uint8_t *p = realloc(r->raw, n);
        if (!p)
            return CAP_E_NOMEM;
        r->raw = p;
        r->raw_cap = n;
    }
    if (grouped) {
        if (group_decode(r, h, *chunk_off) != 0)
            return RD_SKIPPABLE;
    } else if ((h->flags & CAPF_CHUNK_FLAG_ZSTD) && r->expect_frames >= 0 &&
               h->type == CAPF_CHUNK_BLOCK) {
        *raw_len = partial_frames(r, h);
        return CAP_OK;
    } else if (h->flags & CAPF_CHUNK_FLAG_ZSTD) {
        size_t n = ZSTD_decompressDCtx(r->dc, r->raw, h->raw, r->stored,
                                       h->stored);
        if (ZSTD_isError(n) || n != h->raw) {
            set_detail(r, "chunk at offset %llu: zstd payload does not "
                          "decode to its stated size",
                       (unsigned long long)*chunk_off);
            return RD_SKIPPABLE;
        }
    } else if (h->raw) { /* r->stored is still NULL after empty chunks */
        memcpy(r->raw, r->stored, h->raw);
    }
    *raw_len = h->raw;
    return CAP_OK;
}

static cap_result open_rest(cap_reader *r);

/* The end of both opens: hand r out, or explain res and free r. */
static cap_result open_done(cap_reader *r, cap_result res, cap_reader **out,
                            char *detail, size_t detail_size)
{
    if (res == CAP_OK) {
        *out = r;
        return CAP_OK;
    }
    if (detail && detail_size)
        snprintf(detail, detail_size, "%s",
                 r->detail[0] ? r->detail : cap_result_message(res));
    cap_reader_close(r);
    return res;
}

cap_result cap_reader_open(cap_reader **out, const char *path, char *detail,
                           size_t detail_size)
{
    if (detail && detail_size)
        detail[0] = 0;
    if (!out || !path)
        return CAP_E_MISUSE;
    *out = NULL;
    cap_reader *r = calloc(1, sizeof *r);
    if (!r)
        return CAP_E_NOMEM;
    cap_result res = CAP_OK;
    r->path = strdup(path);
    r->dc = ZSTD_createDCtx();
    if (!r->path || !r->dc) {
        res = CAP_E_NOMEM;
        goto fail;
    }
    r->f = fopen(path, "rb");
    if (!r->f) {
        set_detail(r, "cannot open: %s", strerror(errno));
        res = CAP_E_IO;
        goto fail;
    }
    res = open_rest(r);
fail:
    return open_done(r, res, out, detail, detail_size);
}

cap_result cap_reader_open_fd(cap_reader **out, int fd, char *detail,
                              size_t detail_size)
{
    if (detail && detail_size)
        detail[0] = 0;
    if (!out || fd < 0) {
        if (fd >= 0)
            close(fd);
        return CAP_E_MISUSE;
    }
    *out = NULL;
    cap_reader *r = calloc(1, sizeof *r);
    cap_result res = CAP_OK;
    if (!r) {
        close(fd);
        return CAP_E_NOMEM;
    }
    r->path = strdup("(stream)");
    r->dc = ZSTD_createDCtx();
    r->f = fdopen(fd, "rb");
    if (!r->f)
        close(fd);
    if (!r->path || !r->dc || !r->f) {
        res = CAP_E_NOMEM;
        goto fail;
    }
    res = open_rest(r);
fail:
    return open_done(r, res, out, detail, detail_size);
}

/* Header and META chunk of a reader whose r->f is open. */
static cap_result open_rest(cap_reader *r)
{
    cap_result res = CAP_OK;
    struct stat sb;
    if (fstat(fileno(r->f), &sb) != 0) {
        set_detail(r, "cannot stat: %s", strerror(errno));
        res = CAP_E_IO;
        goto fail;
    }
    if (S_ISDIR(sb.st_mode)) {
        set_detail(r, "is a directory");
        res = CAP_E_IO;
        goto fail;
    }
    r->stream = !S_ISREG(sb.st_mode) && !S_ISBLK(sb.st_mode);
    r->size = r->stream ? 0 : (uint64_t)sb.st_size;
    setvbuf(r->f, NULL, _IOFBF, 1 << 20);
    uint8_t hb[CAPF_HEADER_LEN];
    size_t got;
    int e = read_exact(r, hb, sizeof hb, &got);
    if (e == -2) {
        set_detail(r, "read error: %s", strerror(errno));
        res = CAP_E_IO;
        goto fail;
    }
    if (got < CAPF_MAGIC_LEN || memcmp(hb, CAPF_MAGIC, CAPF_MAGIC_LEN) != 0) {
        if (got == 0)
            set_detail(r, "empty file, not a capture");
        else if (got < CAPF_MAGIC_LEN &&
                 memcmp(hb, CAPF_MAGIC, got) == 0)
            set_detail(r, "file ends inside the header (%zu bytes)", got);
        else
            set_detail(r, "not a capture file (no libcapture magic at "
                          "offset 0)");
        res = (got && got < CAPF_MAGIC_LEN && memcmp(hb, CAPF_MAGIC, got) == 0)
                  ? CAP_E_TRUNCATED
                  : CAP_E_NOT_CAPTURE;
        goto fail;
    }
    if (e == -1) {
        set_detail(r, "file ends inside the header (%zu bytes)", got);
        res = CAP_E_TRUNCATED;
        goto fail;
    }
    r->major = capf_get_u16(hb + 8);
    r->minor = capf_get_u16(hb + 10);
    if (!capf_crc_matches(capf_get_u32(hb + 12), capf_crc32(hb, 12))) {
        set_detail(r, "file header checksum mismatch");
        res = CAP_E_CORRUPT;
        goto fail;
    }
    if (r->major != CAPF_VERSION_MAJOR &&
        r->major != CAPF_VERSION_MAJOR_SCOPES_R &&
        r->major != CAPF_VERSION_MAJOR_SCOPES_E &&
        r->major != CAPF_VERSION_MAJOR_GROUPS) {
        set_detail(r, "format version %u.%u; this reader reads major "
                      "versions %u, %u, %u and %u only (upgrade libcapture)",
                   r->major, r->minor, CAPF_VERSION_MAJOR,
                   CAPF_VERSION_MAJOR_SCOPES_R, CAPF_VERSION_MAJOR_SCOPES_E,
                   CAPF_VERSION_MAJOR_GROUPS);
        res = CAP_E_VERSION;
        goto fail;
    }
    capf_chunk_header h;
    size_t raw_len;
    uint64_t coff;
    res = read_chunk(r, &h, &raw_len, &coff);
    if (res == CAP_DONE) {
        set_detail(r, "file ends after the header: no metadata chunk");
        res = CAP_E_TRUNCATED;
        goto fail;
    }
    if (res == RD_SKIPPABLE)
        res = CAP_E_CORRUPT;
    if (res != CAP_OK)
        goto fail;
    if (h.type != CAPF_CHUNK_META) {
        set_detail(r, "first chunk is of type %u, not metadata", h.type);
        res = CAP_E_CORRUPT;
        goto fail;
    }
    res = parse_meta(r, r->raw, raw_len);
    if (res != CAP_OK) {
        if (res == CAP_E_CORRUPT)
            set_detail(r, "metadata chunk is malformed");
        goto fail;
    }
    cap__block_clock_reset(r);
    r->st.chunks = 1;
    return CAP_OK;
fail:
    return res;
}

void cap_reader_close(cap_reader *r)
{
    if (!r)
        return;
    if (r->f)
        fclose(r->f);
    free(r->path);
    for (size_t i = 0; i < r->meta_n; i++) {
        free(r->meta_k[i]);
        free(r->meta_v[i]);
    }
    free(r->meta_k);
    free(r->meta_v);
    free(r->clock_source);
    free(r->page0);
    for (size_t i = 0; i < r->nblk_n; i++)
        free(r->nblk[i]);
    free(r->nblk);
    free(r->nh_key);
    free(r->nh_val);
    for (size_t i = 0; i < r->texts.n; i++)
        free(r->texts.blk[i]);
    free(r->texts.blk);
    for (uint32_t i = 0; i < r->threads_cap; i++)
        free(r->threads[i]);
    free(r->threads);
    for (uint32_t i = 0; i < CAP_MAX_TRACKS; i++)
        free(r->tracks[i].name);
    ZSTD_freeDCtx(r->dc);
    ZSTD_freeDCtx(r->gdc);
    free(r->stored);
    free(r->raw);
    free(r->decls);
    free(r->spans);
    free(r->span_stack);
    free(r->order);
    free(r->arena);
    free(r->sr_set);
    capc_se_dec_free(&r->sed);
    for (size_t i = 0; i < r->se_carry_n; i++)
        capc_se_carry_free(&r->se_carry[i]);
    free(r->se_carry);
    free(r->idx_off);
    free(r->idx_frames);
    free(r->fl);
    free(r);
}

/* ---- sections ---------------------------------------------------------- */

static int push_decl(cap_reader *r, cap_event_kind kind, uint32_t id)
{
    if (r->decls_n == r->decls_cap) {
        size_t n = r->decls_cap ? r->decls_cap * 2 : 16;
        void *p = realloc(r->decls, n * sizeof *r->decls);
        if (!p)
            return -1;
        r->decls = p;
        r->decls_cap = n;
    }
    r->decls[r->decls_n].kind = kind;
    r->decls[r->decls_n].id = id;
    r->decls_n++;
    return 0;
}

static int same_str(const char *a, const uint8_t *b, size_t bl)
{
    if (!a)
        return 0;
    return strlen(a) == bl && memcmp(a, b, bl) == 0;
}

static cap_result sec_names(cap_reader *r, capf_cur *b)
{
    uint64_t n = capf_cur_varint_max(b, (uint64_t)(b->end - b->p));
    for (uint64_t i = 0; i < n && !b->bad; i++) {
        uint64_t id = capf_cur_varint_max(b, CAP_MAX_NAME_ID);
        const uint8_t *s, *fs;
        size_t sl, fl;
        capf_cur_str(b, &s, &sl);
        capf_cur_str(b, &fs, &fl);
        uint64_t line = capf_cur_varint_max(b, UINT32_MAX);
        if (b->bad || id == 0)
            return CAP_E_CORRUPT;
        rd_name *nm = name_slot(r, (uint32_t)id);
        if (!nm)
            return CAP_E_NOMEM;
        if (nm->name)
            continue; /* first definition wins; ids are stable */
        nm->name = arena_dup(r, s, sl);
        nm->file = fl ? arena_dup(r, fs, fl) : NULL;
        nm->line = (uint32_t)line;
        if (!nm->name || (fl && !nm->file))
            return CAP_E_NOMEM;
    }
    return b->bad ? CAP_E_CORRUPT : CAP_OK;
}

/* NAME_FLAGS (1.1): flags accumulate; an id not named yet keeps them for
 * when its name arrives. */
static cap_result sec_name_flags(cap_reader *r, capf_cur *b)
{
    uint64_t n = capf_cur_varint_max(b, (uint64_t)(b->end - b->p));
    for (uint64_t i = 0; i < n && !b->bad; i++) {
        uint64_t id = capf_cur_varint_max(b, CAP_MAX_NAME_ID);
        uint64_t flags = capf_cur_varint_max(b, UINT32_MAX);
        if (b->bad || id == 0)
            return CAP_E_CORRUPT;
        rd_name *nm = name_slot(r, (uint32_t)id);
        if (!nm)
            return CAP_E_NOMEM;
        nm->flags |= (uint32_t)flags;
    }
    return b->bad ? CAP_E_CORRUPT : CAP_OK;
}

static cap_result sec_threads(cap_reader *r, capf_cur *b, int announce)
{
    uint64_t n = capf_cur_varint_max(b, (uint64_t)(b->end - b->p));
    for (uint64_t i = 0; i < n && !b->bad; i++) {
        uint64_t tid = capf_cur_varint_max(b, CAP_MAX_THREADS - 1);
        const uint8_t *s;
        size_t sl;
        capf_cur_str(b, &s, &sl);
        if (b->bad)
            return CAP_E_CORRUPT;
        if (tid >= r->threads_cap) {
            uint32_t cap = r->threads_cap ? r->threads_cap : 16;
            while (cap <= tid)
                cap *= 2;
            char **p = realloc(r->threads, cap * sizeof *p);
            if (!p)
                return CAP_E_NOMEM;
            memset(p + r->threads_cap, 0,
                   (cap - r->threads_cap) * sizeof *p);
            r->threads = p;
            r->threads_cap = cap;
        }
        if (r->threads[tid] && same_str(r->threads[tid], s, sl))
            continue;
        char *nm = dup_n(s, sl);
        if (!nm)
            return CAP_E_NOMEM;
        free(r->threads[tid]);
        r->threads[tid] = nm;
        if (announce && push_decl(r, CAP_EV_THREAD, (uint32_t)tid) != 0)
            return CAP_E_NOMEM;
    }
    return b->bad ? CAP_E_CORRUPT : CAP_OK;
}

static cap_result sec_tracks(cap_reader *r, capf_cur *b, int announce)
{
    uint64_t n = capc_list_count(b);
    for (uint64_t i = 0; i < n && !b->bad; i++) {
        uint32_t id;
        const uint8_t *s;
        size_t sl;
        double per;
        if (capc_track_get(b, &id, &s, &sl, &per) != 0)
            return CAP_E_CORRUPT;
        rd_track *k = &r->tracks[id];
        if (k->declared && k->period == per && same_str(k->name, s, sl))
            continue;
        char *nm = dup_n(s, sl);
        if (!nm)
            return CAP_E_NOMEM;
        free(k->name);
        k->name = nm;
        k->period = per;
        k->declared = 1;
        if (announce && push_decl(r, CAP_EV_GPU_TRACK, id) != 0)
            return CAP_E_NOMEM;
    }
    return b->bad ? CAP_E_CORRUPT : CAP_OK;
}

static cap_result sec_stats(cap_reader *r, capf_cur *b)
{
    uint64_t n = capc_list_count(b);
    for (uint64_t i = 0; i < n && !b->bad; i++) {
        uint64_t kind, subject, v;
        (void)capc_stat_get(b, &kind, &subject, &v); /* b->bad: below */
        switch (kind) {
        case CAPF_STAT_DROPPED_SCOPES: r->st.dropped_scopes += v; break;
        case CAPF_STAT_GPU_UNTIMED: r->st.gpu_untimed_frames += v; break;
        case CAPF_STAT_GPU_INVALID: r->st.gpu_invalid += v; break;
        case CAPF_STAT_CLOSED_AT_END: r->st.closed_at_end += v; break;
        case CAPF_STAT_CLOCK_BACKWARDS: r->st.clock_backwards += v; break;
        case CAPF_STAT_STRAY_ENDS: r->st.stray_ends += v; break;
        default: break; /* unknown statistics are ignored */
        }
    }
    return b->bad ? CAP_E_CORRUPT : CAP_OK;
}

static int span_begin_cmp(const void *a, const void *b, void *ctx)
{
    const rd_span *s = ctx;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (s[x].begin != s[y].begin)
        return s[x].begin < s[y].begin ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Self time of each GPU span: its duration minus the union of its measured
 * children's intervals, clipped to the span. */
static void gpu_self_times(cap_reader *r)
{
    size_t n = r->spans_n;
    /* order: span indices sorted by (parent, begin) via insertion into
     * per-parent runs; n is small per frame, but stay O(n log n). */
    for (size_t i = 0; i < n; i++)
        r->order[i] = (int32_t)i;
    /* counting sort by parent (+1), stable */
    size_t *cnt = calloc(n + 2, sizeof *cnt);
    int32_t *tmp = malloc((n + 1) * sizeof *tmp);
    if (!cnt || !tmp) {
        free(cnt);
        free(tmp);
        for (size_t i = 0; i < n; i++)
            r->spans[i].self = r->spans[i].dur;
        return;
    }
    for (size_t i = 0; i < n; i++)
        cnt[(size_t)(r->spans[i].parent + 1) + 1]++;
    for (size_t i = 1; i < n + 2; i++)
        cnt[i] += cnt[i - 1];
    for (size_t i = 0; i < n; i++)
        tmp[cnt[(size_t)(r->spans[i].parent + 1)]++] = (int32_t)i;
    size_t start = 0;
    for (size_t p = 0; p <= n; p++) {
        size_t end = start;
        while (end < n && (size_t)(r->spans[tmp[end]].parent + 1) == p)
            end++;
        /* children of span p-1 are tmp[start..end) in index order; sort
         * them by begin (ties by index, so the result is deterministic) */
        if (end - start > 1)
            qsort_r(tmp + start, end - start, sizeof *tmp, span_begin_cmp,
                    r->spans);
        if (p > 0) {
            rd_span *par = &r->spans[p - 1];
            uint64_t covered = 0, cur_b = 0, cur_e = 0;
            int open = 0;
            uint64_t pb = par->begin, pe = par->begin + par->dur;
            for (size_t i = start; i < end; i++) {
                rd_span *c = &r->spans[tmp[i]];
                if (!c->measured || !par->measured)
                    continue;
                uint64_t b = c->begin < pb ? pb : c->begin;
                uint64_t e = c->begin + c->dur > pe ? pe : c->begin + c->dur;
                if (e <= b)
                    continue;
                if (open && b <= cur_e) {
                    if (e > cur_e)
                        cur_e = e;
                } else {
                    if (open)
                        covered += cur_e - cur_b;
                    cur_b = b;
                    cur_e = e;
                    open = 1;
                }
            }
            if (open)
                covered += cur_e - cur_b;
            /* spans over 1 s were dropped: dur and covered fit int64 */
            par->self = par->measured ? (uint64_t)cap_self_ns(
                                            0, (int64_t)par->dur,
                                            (int64_t)covered)
                                      : 0;
        }
        start = end;
    }
    free(cnt);
    free(tmp);
}

static cap_result sec_gpu_frame(cap_reader *r, capf_cur *b)
{
    uint32_t track;
    uint64_t frame, base, n;
    if (capc_gpu_frame_get(b, &track, &frame, &base, &n) != CAP_OK ||
        !r->tracks[track].declared)
        return CAP_E_CORRUPT;
    if (n > r->spans_cap) {
        rd_span *s = realloc(r->spans, n * sizeof *s);
        uint32_t *st = realloc(r->span_stack, n * sizeof *st);
        if (st)
            r->span_stack = st;
        int32_t *o = realloc(r->order, n * sizeof *o);
        if (o)
            r->order = o;
        if (s)
            r->spans = s;
        if (!s || !st || !o)
            return CAP_E_NOMEM;
        r->spans_cap = n;
    }
    for (uint64_t i = 0; i < n; i++) {
        rd_span *s = &r->spans[i];
        if (capc_gpu_span_get(b, i, base, &s->name, &s->parent, &s->measured,
                              &s->begin, &s->dur) != 0)
            return CAP_E_CORRUPT;
        s->depth = s->parent >= 0 ? r->spans[s->parent].depth + 1 : 0;
        rd_name *nm = name_slot(r, s->name);
        if (!nm)
            return CAP_E_NOMEM;
        nm->used = 1;
    }
    r->spans_n = (size_t)n;
    r->span_pos = 0;
    r->gpu_track = track;
    r->gpu_frame = frame;
    gpu_self_times(r);
    return CAP_OK;
}

static cap_result sec_gpu_cal(cap_reader *r, capf_cur *b)
{
    uint32_t track;
    uint64_t g, c, dev;
    if (capc_gpu_cal_get(b, &track, &g, &c, &dev) != CAP_OK ||
        !r->tracks[track].declared)
        return CAP_E_CORRUPT;
    r->tracks[track].calibrated = 1;
    r->tracks[track].cal_gpu = g;
    r->tracks[track].cal_cpu = c;
    r->tracks[track].cal_dev = dev;
    return CAP_OK;
}

/* SCOPES_R: a context's prediction and class, set on its name (and the
 * name listed in r->sr_set, to be unset by the next section). -1 when out
 * of memory. */
static int sr_set_pred(void *user, uint32_t id, unsigned kind, uint64_t pred,
                       unsigned cls)
{
    cap_reader *r = user;
    rd_name *nm = name_slot(r, id);
    if (!nm)
        return -1;
    if (r->sr_set_n == r->sr_set_cap) {
        size_t c = r->sr_set_cap ? 2 * r->sr_set_cap : 256;
        uint32_t *p = realloc(r->sr_set, c * sizeof *p);
        if (!p)
            return -1;
        r->sr_set = p;
        r->sr_set_cap = c;
    }
    r->sr_set[r->sr_set_n++] = id;
    nm->sr_pred[kind] = pred;
    nm->sr_cls[kind] = (uint8_t)cls;
    return 0;
}

/* SCOPES_E: a name the section lists, marked used. -1 when out of
 * memory. */
static int se_use_name(void *user, uint32_t id)
{
    rd_name *nm = name_slot(user, id);
    if (!nm)
        return -1;
    nm->used = 1;
    return 0;
}

/* The start of a SCOPES (sr 0), SCOPES_R (sr 1) or SCOPES_E (sr 2)
 * section: the prefix onto the stack, the cursors set. */
static cap_result sec_scopes_start(cap_reader *r, capf_cur *b, int sr)
{
    uint64_t tid = capf_cur_varint_max(b, CAP_MAX_THREADS - 1);
    uint64_t base = capf_cur_varint(b);
    uint64_t depth = capf_cur_varint_max(b, CAP_MAX_DEPTH);
    if (b->bad)
        return CAP_E_CORRUPT;
    for (uint64_t i = 0; i < depth; i++) {
        uint64_t name = capf_cur_varint_max(b, CAP_MAX_NAME_ID);
        uint64_t back = capf_cur_varint(b);
        uint64_t ch = capf_cur_varint(b);
        if (b->bad || name == 0)
            return CAP_E_CORRUPT;
        rd_name *nm = name_slot(r, (uint32_t)name);
        if (!nm)
            return CAP_E_NOMEM;
        nm->used = 1;
        r->stk_name[i] = (uint32_t)name;
        r->stk_begin[i] = base - back;
        r->stk_begin_ns[i] = to_ns(r, base - back);
        r->stk_children[i] = ch;
    }
    r->bns_stale = 0;
    uint64_t n = capf_cur_varint(b);
    if (sr == 2) {
        r->tid = (uint32_t)tid;
        r->depth = (uint32_t)depth;
        r->tick = base;
        r->left = n;
        r->sr = sr;
        r->sr_first = 1;
        const capc_se_carry *from = NULL;
        if (r->major >= CAPF_VERSION_MAJOR_GROUPS) {
            if (cap__se_carry_for(r, (uint32_t)tid) != 0)
                return CAP_E_NOMEM;
            if (r->se_carry[tid].grp == r->grp_gen)
                from = &r->se_carry[tid];
        }
        cap_result res = capc_scopes_e_start(
            &r->sed, b, n, r->depth, r->stk_name, r->stk_dense, r->stk_epred,
            se_use_name, r, from);
        if (res == CAP_OK && r->major >= CAPF_VERSION_MAJOR_GROUPS) {
            r->se_pend = 1; /* kept when the next SCOPES_E section starts */
            r->se_pend_tid = (uint32_t)tid;
            r->se_pend_gen = r->grp_gen;
        }
        return res;
    }
    uint64_t tlen = capf_cur_varint(b);
    if (b->bad || tlen > (uint64_t)(b->end - b->p) || n > tlen)
        return CAP_E_CORRUPT;
    r->tid = (uint32_t)tid;
    r->depth = (uint32_t)depth;
    r->tick = base;
    r->left = n;
    r->sr = sr;
    if (!sr) {
        r->deltas = (capf_cur){b->p + tlen, b->end, 0};
        b->end = b->p + tlen; /* b now walks the tokens */
        return CAP_OK;
    }
    /* SCOPES_R: the previous section's predictions unset, this one's
     * set (keys increasing) */
    for (size_t i = 0; i < r->sr_set_n; i++) {
        rd_name *nm = name_peek(r, r->sr_set[i]);
        nm->sr_pred[0] = nm->sr_pred[1] = 0;
        nm->sr_cls[0] = nm->sr_cls[1] = 0;
    }
    r->sr_set_n = 0;
    cap_result res = capc_scopes_r_table(b, sr_set_pred, r);
    if (res != CAP_OK)
        return res;
    for (uint64_t i = 0; i < depth; i++) { /* the prefix's ends */
        const rd_name *nm = name_peek(r, r->stk_name[i]);
        r->stk_epred[i] = nm->sr_pred[1];
        r->stk_ecls[i] = nm->sr_cls[1];
    }
    res = capc_scopes_r_streams(&r->srd, b, tlen);
    if (res != CAP_OK)
        return res;
    r->sr_first = 1;
    return CAP_OK;
}

/* Enter the next section of the current payload. Returns CAP_OK with
 * r->state set (ST_NONE when the section produced no events), CAP_DONE
 * when the payload is exhausted, or an error. */
static cap_result next_section(cap_reader *r)
{
    capf_cur *c = &r->sec;
    if (c->p >= c->end)
        return CAP_DONE;
    uint8_t kind = capf_cur_u8(c);
    uint64_t len = capf_cur_varint(c);
    if (c->bad || len > (uint64_t)(c->end - c->p))
        return CAP_E_CORRUPT;
    r->body = (capf_cur){c->p, c->p + len, 0};
    c->p += len;
    capf_cur *b = &r->body;
    r->state = ST_NONE;
    switch (kind) {
    case CAPF_SEC_CLOCK: {
        uint64_t t, m;
        if (capc_clock_get(b, &t, &m) != 0)
            return CAP_E_CORRUPT;
        clock_sample(r, t, m);
        return CAP_OK;
    }
    case CAPF_SEC_NAMES:
        return sec_names(r, b);
    case CAPF_SEC_NAME_FLAGS:
        return sec_name_flags(r, b);
    case CAPF_SEC_THREADS: {
        cap_result res = sec_threads(r, b, !r->in_footer);
        if (res == CAP_OK && r->decls_pos < r->decls_n)
            r->state = ST_DECLS;
        return res;
    }
    case CAPF_SEC_TRACKS: {
        cap_result res = sec_tracks(r, b, !r->in_footer);
        if (res == CAP_OK && r->decls_pos < r->decls_n)
            r->state = ST_DECLS;
        return res;
    }
    case CAPF_SEC_STATS:
        return r->in_footer ? CAP_OK : sec_stats(r, b);
    case CAPF_SEC_INDEX:
        return CAP_OK; /* the streaming reader does not need it */
    default:
        break;
    }
    if (r->in_footer)
        return CAP_OK;
    if ((kind == CAPF_SEC_FRAMES && (r->filter & (1u << CAP_EV_FRAME))) ||
        ((kind == CAPF_SEC_SCOPES || kind == CAPF_SEC_SCOPES_R ||
          kind == CAPF_SEC_SCOPES_E) &&
         (r->filter & (1u << CAP_EV_SCOPE))) ||
        (kind == CAPF_SEC_COUNTERS && (r->filter & (1u << CAP_EV_COUNTER))) ||
        (kind == CAPF_SEC_GPU_FRAME && (r->filter & (1u << CAP_EV_GPU_SPAN))))
        return CAP_OK;
    switch (kind) {
    case CAPF_SEC_FRAMES:
        r->left = capf_cur_varint_max(b, len);
        if (b->bad)
            return CAP_E_CORRUPT;
        r->prev_index = r->prev_begin = r->prev_end = 0;
        r->fl_gap = 0;
        r->state = ST_FRAMES;
        return CAP_OK;
    case CAPF_SEC_SCOPES_E:
        if (r->major < CAPF_VERSION_MAJOR_SCOPES_E)
            return CAP_OK; /* unknown in 1.x and 2.0: skipped */
        /* fall through */
    case CAPF_SEC_SCOPES_R:
        if (r->major < CAPF_VERSION_MAJOR_SCOPES_R)
            return CAP_OK; /* unknown in 1.x: skipped */
        /* fall through */
    case CAPF_SEC_SCOPES: {
        cap_result res = sec_scopes_start(
            r, b, kind == CAPF_SEC_SCOPES_E ? 2 : kind == CAPF_SEC_SCOPES_R);
        if (res == CAP_OK)
            r->state = ST_SCOPES;
        return res;
    }
    case CAPF_SEC_COUNTERS:
        r->left = capf_cur_varint_max(b, len);
        if (b->bad)
            return CAP_E_CORRUPT;
        r->prev_tick = 0;
        r->state = ST_COUNTERS;
        return CAP_OK;
    case CAPF_SEC_GPU_FRAME: {
        cap_result res = sec_gpu_frame(r, b);
        if (res == CAP_OK)
            r->state = ST_GPU;
        return res;
    }
    case CAPF_SEC_GPU_CAL:
        return sec_gpu_cal(r, b);
    default:
        return CAP_OK; /* unknown section: skipped by length */
    }
}

/* Decode the next event of the current section into ev. CAP_OK: filled;
 * CAP_DONE: section exhausted; CAP_E_CORRUPT: malformed. */
static cap_result section_event(cap_reader *r, cap_event *ev)
{
    capf_cur *b = &r->body;
    switch (r->state) {
    case ST_NONE:
        return CAP_DONE;
    case ST_DECLS:
        if (r->decls_pos >= r->decls_n) {
            r->decls_n = r->decls_pos = 0;
            return CAP_DONE;
        }
        {
            uint32_t id = r->decls[r->decls_pos].id;
            ev->kind = r->decls[r->decls_pos].kind;
            r->decls_pos++;
            if (ev->kind == CAP_EV_THREAD) {
                ev->u.thread.tid = id;
                ev->u.thread.name = r->threads[id];
            } else {
                ev->u.gpu_track.track = id;
                ev->u.gpu_track.name = r->tracks[id].name;
                ev->u.gpu_track.period_ns = r->tracks[id].period;
            }
        }
        return CAP_OK;
    case ST_FRAMES:
        if (r->left == 0)
            return CAP_DONE;
        {
            uint64_t di, dur;
            int64_t db;
            if (capc_frame_get(b, &di, &db, &dur) != 0)
                return CAP_E_CORRUPT;
            r->prev_index += di;
            /* a block's: the step from the previous begin; a
               FRAME_LIST's: the gap after the previous end */
            r->prev_begin = (r->fl_gap ? r->prev_end : r->prev_begin) +
                            (uint64_t)db;
            r->prev_end = r->prev_begin + dur;
            r->left--;
            ev->kind = CAP_EV_FRAME;
            ev->u.frame.index = r->prev_index;
            ev->u.frame.begin_ns = to_ns(r, r->prev_begin);
            ev->u.frame.end_ns = to_ns(r, r->prev_end);
            r->st.frames++;
        }
        return CAP_OK;
    case ST_SCOPES:
        return cap__scopes_event(r, ev);
    case ST_COUNTERS:
        if (r->left == 0)
            return CAP_DONE;
        {
            uint32_t name;
            int64_t dt;
            double v;
            if (capc_counter_get(b, &name, &dt, &v) != 0)
                return CAP_E_CORRUPT;
            rd_name *nm = name_slot(r, (uint32_t)name);
            if (!nm)
                return CAP_E_NOMEM;
            nm->used = 1;
            r->prev_tick += (uint64_t)dt;
            r->left--;
            ev->kind = CAP_EV_COUNTER;
            ev->u.counter.name = name;
            ev->u.counter.time_ns = to_ns(r, r->prev_tick);
            ev->u.counter.value = v;
        }
        return CAP_OK;
    case ST_GPU:
        if (r->span_pos >= r->spans_n)
            return CAP_DONE;
        {
            size_t i = r->span_pos++;
            rd_span *s = &r->spans[i];
            rd_track *k = &r->tracks[r->gpu_track];
            cap_ev_gpu_span *g = &ev->u.gpu_span;
            ev->kind = CAP_EV_GPU_SPAN;
            g->track = r->gpu_track;
            g->name = s->name;
            g->depth = s->depth;
            g->parent_name = s->parent >= 0 ? r->spans[s->parent].name : 0;
            g->cpu_frame = r->gpu_frame;
            g->measured = s->measured;
            /* ancestors, root first */
            int32_t p = s->parent;
            for (uint32_t d = s->depth; d > 0 && p >= 0; d--) {
                r->span_stack[d - 1] = r->spans[p].name;
                p = r->spans[p].parent;
            }
            g->stack = r->span_stack;
            if (s->measured) {
                g->duration_ns = (int64_t)llround((double)s->dur * k->period);
                g->self_ns = (int64_t)llround((double)s->self * k->period);
                if (k->calibrated) {
                    g->calibrated = 1;
                    int64_t c0 = to_ns_per(r, k->cal_cpu, r->real_period);
                    int64_t off = (int64_t)(s->begin - k->cal_gpu);
                    g->begin_ns =
                        add_ns(c0, (int64_t)llround((double)off * k->period));
                } else {
                    g->calibrated = 0;
                    g->begin_ns = (int64_t)llround((double)s->begin * k->period);
                }
                g->end_ns = add_ns(g->begin_ns, g->duration_ns);
                r->st.gpu_spans++;
            } else {
                g->calibrated = k->calibrated;
                g->duration_ns = g->self_ns = g->begin_ns = g->end_ns = 0;
                r->st.gpu_unmeasured++;
            }
        }
        return CAP_OK;
    }
    return CAP_DONE;
}

static void finish(cap_reader *r)
{
    uint64_t unnamed = 0;
    RD_EACH_NAME(r, nm, unnamed += nm->used && !nm->name);
    r->st.unnamed_ids = unnamed;
    r->finished = 1;
}

/* resync on a stream: slide a window over the bytes after the damaged
 * header, one at a time, and keep the header found for read_chunk. */
static cap_result resync_stream(cap_reader *r)
{
    uint8_t win[CAPF_CHUNK_HEADER_LEN];
    memcpy(win, r->hb + 1, sizeof win - 1);
    for (;;) {
        int ch = getc(r->f);
        if (ch == EOF)
            return ferror(r->f) ? CAP_E_IO : CAP_DONE;
        r->off++;
        win[sizeof win - 1] = (uint8_t)ch;
        capf_chunk_header h;
        if (win[0] == 'C' && capf_chunk_header_decode(win, &h) == 0) {
            memcpy(r->pend, win, sizeof win);
            r->pend_n = sizeof win;
            r->pend_pos = 0;
            r->off -= sizeof win;
            return CAP_OK;
        }
        memmove(win, win + 1, sizeof win - 1);
    }
}

/* Skip forward to the next plausible chunk header after a damaged one. */
static cap_result resync(cap_reader *r, uint64_t from)
{
    if (r->stream)
        return resync_stream(r);
    uint8_t buf[65536 + CAPF_CHUNK_HEADER_LEN];
    uint64_t pos = from;
    for (;;) {
        if (fseeko(r->f, (off_t)pos, SEEK_SET) != 0)
            return CAP_E_IO;
        size_t n = fread(buf, 1, sizeof buf, r->f);
        if (n < CAPF_CHUNK_HEADER_LEN) {
            if (ferror(r->f))
                return CAP_E_IO;
            r->off = pos + n;
            return CAP_DONE;
        }
        for (size_t i = 0; i + CAPF_CHUNK_HEADER_LEN <= n; i++) {
            if (buf[i] != 'C' || memcmp(buf + i, CAPF_CHUNK_SYNC, 4) != 0)
                continue;
            capf_chunk_header h;
            if (capf_chunk_header_decode(buf + i, &h) == 0) {
                r->off = pos + i;
                if (fseeko(r->f, (off_t)r->off, SEEK_SET) != 0)
                    return CAP_E_IO;
                return CAP_OK;
            }
        }
        pos += n - CAPF_CHUNK_HEADER_LEN + 1;
    }
}

cap_result cap_reader_next(cap_reader *r, cap_event *ev)
{
    if (!r || !ev)
        return CAP_E_MISUSE;
    for (;;) {
        if (r->owe_truncated) {
            r->owe_truncated = 0;
            set_detail(r, "file ends at offset %llu inside damaged data, "
                          "without a footer",
                       (unsigned long long)r->off);
            return CAP_E_TRUNCATED;
        }
        if (r->finished)
            return CAP_DONE;
        r->anc_n = 0;
        r->last_gpu = 0;
        cap_result res = section_event(r, ev);
        if (res == CAP_OK) {
            if (ev->kind == CAP_EV_SCOPE)
                r->anc_n = ev->u.scope.depth;
            r->last_gpu = ev->kind == CAP_EV_GPU_SPAN;
            return CAP_OK;
        }
        if (res != CAP_DONE) {
            set_detail(r, "malformed events in the block before offset %llu",
                       (unsigned long long)r->off);
            r->st.corrupt_chunks++;
            r->grp_ok = 0; /* damage: the group's later blocks are lost */
            r->se_pend = 0;
            r->state = ST_NONE;
            r->sec.p = r->sec.end;
            return res;
        }
        r->state = ST_NONE;
        if (r->decls_pos < r->decls_n) {
            r->state = ST_DECLS;
            continue;
        }
        res = next_section(r);
        if (res == CAP_OK)
            continue;
        if (res != CAP_DONE) {
            if (res == CAP_E_CORRUPT) {
                set_detail(r, "malformed section in the block before offset "
                              "%llu",
                           (unsigned long long)r->off);
                r->st.corrupt_chunks++;
            }
            r->grp_ok = 0; /* as above */
            r->se_pend = 0;
            r->state = ST_NONE;
            r->sec.p = r->sec.end;
            r->decls_n = r->decls_pos = 0;
            return res;
        }
        /* payload exhausted: the next chunk */
        if (r->fl_on) {
            /* frames only, from the footer's list: its next entry read
               as its block's frames would be (the block's clock sample,
               then its frames), none of the file's blocks */
            if (r->fl_pos >= r->fl_len) {
                r->st.has_footer = 1;
                finish(r);
                return CAP_DONE;
            }
            capf_cur c = {r->fl + r->fl_pos, r->fl + r->fl_len, 0};
            int hc;
            uint64_t t, m, n;
            const uint8_t *fp;
            (void)capc_frame_list_entry(&c, &hc, &t, &m, &n, &fp); /* checked */
            cap__block_clock_reset(r);
            if (hc)
                clock_sample(r, t, m);
            r->in_footer = 0;
            r->sec = (capf_cur){c.p, c.p, 0}; /* nothing after them */
            r->body = (capf_cur){fp, c.p, 0};
            r->left = n;
            r->prev_index = r->prev_begin = r->prev_end = 0;
            r->fl_gap = 1;
            r->state = ST_FRAMES;
            r->fl_pos = (size_t)(c.p - r->fl);
            continue;
        }
        if (r->in_footer) {
            uint8_t tr[CAPF_TRAILER_LEN];
            size_t got;
            int e = read_exact(r, tr, sizeof tr, &got);
            r->st.has_footer = 1;
            finish(r);
            if (e != 0 || capf_get_u64(tr) != r->footer_off ||
                memcmp(tr + 8, CAPF_TRAILER_MAGIC, 8) != 0) {
                set_detail(r, "the trailer after the footer at offset %llu "
                              "is missing or damaged",
                           (unsigned long long)r->footer_off);
                r->st.corrupt_chunks++;
                return CAP_E_CORRUPT;
            }
            return CAP_DONE;
        }
        if (r->range_end && r->off >= r->range_end) { /* a chunk's end */
            finish(r);
            return CAP_DONE;
        }
        cap__block_clock_reset(r);
        capf_chunk_header h;
        size_t raw_len;
        uint64_t coff;
        r->expect_frames = -1;
        if (r->frames_only) {
            while (r->idx_pos < r->idx_n && r->idx_off[r->idx_pos] < r->off)
                r->idx_pos++;
            if (r->idx_pos < r->idx_n && r->idx_off[r->idx_pos] == r->off)
                r->expect_frames = (int64_t)r->idx_frames[r->idx_pos];
        }
        res = read_chunk(r, &h, &raw_len, &coff);
        if (res == CAP_DONE || res == CAP_E_TRUNCATED) {
            if (res == CAP_DONE)
                set_detail(r, "file ends at offset %llu without a footer",
                           (unsigned long long)coff);
            r->st.truncated = 1;
            finish(r);
            return CAP_E_TRUNCATED;
        }
        if (res == RD_SKIPPABLE) {
            r->st.corrupt_chunks++;
            return CAP_E_CORRUPT; /* skipped by its stated size */
        }
        if (res == CAP_E_CORRUPT) {
            r->st.corrupt_chunks++;
            cap_result s = resync(r, coff + 1);
            if (s == CAP_E_IO) {
                set_detail(r, "seek failed while skipping damage");
                return CAP_E_IO;
            }
            if (s == CAP_DONE) {
                r->st.truncated = 1;
                r->owe_truncated = 1;
                finish(r);
            }
            return CAP_E_CORRUPT;
        }
        if (res != CAP_OK)
            return res;
        if (h.type != CAPF_CHUNK_BLOCK && h.type != CAPF_CHUNK_FOOTER) {
            r->st.unknown_chunks++;
            continue;
        }
        r->st.chunks++;
        r->in_footer = h.type == CAPF_CHUNK_FOOTER;
        if (r->in_footer)
            r->footer_off = coff;
        r->sec = (capf_cur){r->raw, r->raw + raw_len, 0};
    }
}

cap_result cap__reader_range(cap_reader *r, uint64_t begin, uint64_t end)
{
    if (!r || r->stream || r->st.chunks != 1 || r->state != ST_NONE ||
        begin < r->off || (end && end < begin) || begin > r->size)
        return CAP_E_MISUSE;
    if (fseeko(r->f, (off_t)begin, SEEK_SET) != 0) {
        set_detail(r, "cannot seek to offset %llu: %s",
                   (unsigned long long)begin, strerror(errno));
        return CAP_E_IO;
    }
    r->off = begin;
    r->range_end = end;
    return CAP_OK;
}
