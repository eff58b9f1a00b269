/*
 * format.h - the byte layout of a capture file: its framing (header,
 * chunks, trailer, sections), the primitives section bodies are made of
 * and the constants of each section. The section bodies themselves are
 * coded in codec/ (one file per section coding, its encoder beside its
 * decoder): with this file, the only code that knows the bytes.
 *
 * Summary (format-spec/capture-format.md is the full specification):
 *
 *   file     := header chunk* [footer-chunk trailer]
 *   header   := magic[8] major:u16 minor:u16 crc32(bytes 0..11):u32   (16 B)
 *   chunk    := "CHNK" type:u16 flags:u16 stored:u32 raw:u32
 *               payload_crc:u32 header_crc:u32 payload[stored]          (24 B+)
 *   trailer  := footer_offset:u64 "CAPEND\r\n"                          (16 B)
 *
 * All integers little-endian. A payload (zstd-compressed when flags bit 0
 * is set) is a sequence of sections: kind:u8 length:varint body[length].
 * Section bodies use LEB128 varints ("v" below) and little-endian f64.
 *
 * Depends on nothing else of libcapture.
 */
#ifndef CAP_FORMAT_H
#define CAP_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CAPF_MAGIC "\x89" "CAP\r\n\x1a\n"
#define CAPF_MAGIC_LEN 8
#define CAPF_VERSION_MAJOR 1
#define CAPF_VERSION_MINOR 0
/* 1.1 adds NAME_FLAGS sections and the STRAY_ENDS statistic; a writer
 * writes 1.1 when asked to (cap_writer_options.format_minor), 1.0 else */
#define CAPF_VERSION_MINOR_NAME_FLAGS 1
/* 2.0 replaces SCOPES (0x06) by SCOPES_R (0x0D); readers read 1.x and 2.0 */
#define CAPF_VERSION_MAJOR_SCOPES_R 2
/* 3.0 adds SCOPES_E (0x0E): tokens and residuals entropy-coded (rANS); a
 * writer writes 3.0 unless asked for 1.x or 2.0 (cap_writer_options) */
#define CAPF_VERSION_MAJOR_SCOPES_E 3
/* 3.1 adds FRAME_LIST (0x12) to the FOOTER: every block's frames, so that
 * a reader gets a file's frames without reading its blocks; a writer of
 * 3.x writes 3.1 unless told not to (cap_writer_options.no_frame_list) */
#define CAPF_VERSION_MINOR_FRAME_LIST 1
/* 4.0 groups blocks: a BLOCK with the CONT flag holds the next flushed
 * piece of the zstd frame begun by the group's first block, and may use
 * the group's earlier declarations (format-spec: Groups of blocks); a
 * thread's SCOPES_E section starts from the token lists its previous
 * SCOPES_E section in the group left, carried by name id (codec/scopes.h
 * capc_se_carry) */
#define CAPF_VERSION_MAJOR_GROUPS 4
#define CAPF_GROUP_MAX_RAW ((size_t)4 << 20) /* the writer's groups: raw */
#define CAPF_GROUP_MAX_NS 4000000000ull     /* ...time covered */
#define CAPF_GROUP_MAX_BLOCKS 64            /* ...blocks */
#define CAPF_FRAME_LIST_MAX_BYTES ((size_t)16 << 20) /* the writer's list:
                                  past it the footer has none */
#define CAPF_HEADER_LEN 16

#define CAPF_CHUNK_SYNC "CHNK"
#define CAPF_CHUNK_HEADER_LEN 24
#define CAPF_CHUNK_FLAG_ZSTD 0x0001u
/* 4.0: the BLOCK continues the group of the BLOCK before it (needs ZSTD) */
#define CAPF_CHUNK_FLAG_CONT 0x0002u
#define CAPF_CHUNK_FLAGS_KNOWN 0x0003u
#define CAPF_MAX_CHUNK_RAW (64u << 20)    /* decoders refuse more */
#define CAPF_MAX_CHUNK_STORED (72u << 20)

#define CAPF_TRAILER_MAGIC "CAPEND\r\n"
#define CAPF_TRAILER_LEN 16

enum capf_chunk_type {
    CAPF_CHUNK_META = 1,
    CAPF_CHUNK_BLOCK = 2,
    CAPF_CHUNK_FOOTER = 3
};

enum capf_section {
    CAPF_SEC_CLOCK = 0x01,     /* v tick, v mono_ns */
    CAPF_SEC_NAMES = 0x02,     /* v n, n x (v id, str name, str file, v line) */
    CAPF_SEC_THREADS = 0x03,   /* v n, n x (v tid, str name) */
    CAPF_SEC_TRACKS = 0x04,    /* v n, n x (v track, str name, f64 period) */
    CAPF_SEC_FRAMES = 0x05,    /* v n, n x (v dindex, v dbegin, v duration) */
    CAPF_SEC_SCOPES = 0x06,    /* one thread's scope events, see spec */
    CAPF_SEC_COUNTERS = 0x07,  /* v n, n x (v name, zz dtick, f64 value) */
    CAPF_SEC_GPU_FRAME = 0x08, /* one CPU frame's GPU spans on one track */
    CAPF_SEC_GPU_CAL = 0x09,   /* v track, v gpu_tick, v cpu_tick, v dev_ns */
    CAPF_SEC_STATS = 0x0A,     /* v n, n x (v kind, v subject, v count) */
    CAPF_SEC_INDEX = 0x0B,     /* footer: block index */
    CAPF_SEC_NAME_FLAGS = 0x0C, /* 1.1: v n, n x (v id, v flags) */
    CAPF_SEC_SCOPES_R = 0x0D,  /* 2.0: SCOPES with predicted tick deltas */
    CAPF_SEC_SCOPES_E = 0x0E,  /* 3.0: SCOPES_R, range-coded (rANS) */
    CAPF_SEC_META_KV = 0x10,   /* v n, n x (str key, str value) */
    CAPF_SEC_ORIGIN = 0x11,    /* str clock_source, f64 period_ns,
                                  v origin_tick, v origin_mono_ns,
                                  zz origin_unix_ns */
    CAPF_SEC_FRAME_LIST = 0x12 /* 3.1, footer: v n, then per block with
                                  frames u8 has_clock, [v tick, v mono],
                                  v frames, frames x (v dindex, zz gap
                                  after the previous end, v duration) */
};

enum capf_stat_kind {
    CAPF_STAT_DROPPED_SCOPES = 1, /* subject: thread */
    CAPF_STAT_GPU_UNTIMED = 2,    /* subject: track */
    CAPF_STAT_GPU_INVALID = 3,    /* subject: track */
    CAPF_STAT_CLOSED_AT_END = 4,  /* subject: thread */
    CAPF_STAT_CLOCK_BACKWARDS = 5, /* subject: thread */
    CAPF_STAT_STRAY_ENDS = 6       /* 1.1; subject: thread */
};

/* ---- SCOPES_R: tick deltas as residuals of a per-(name, begin|end)
 * prediction (format-spec "SCOPES_R (0x0D)"). The section lists, for each
 * context its events use, a prediction and a class (the reference writer:
 * the mean of the context's deltas in the section, and its bit length).
 * Each delta but the first is stored as the zigzag z of its residual from
 * its context's prediction (0 for a context not listed), in the streams of
 * the context's class: the low byte of z in the lo stream, z >> 8 as a
 * varint in the hi stream. */
#define CAPF_SR_CLASSES 65 /* bit lengths 0..64 */

static inline unsigned capf_sr_class(uint64_t pred)
{
    return pred ? 64u - (unsigned)__builtin_clzll(pred) : 0u;
}

/* ---- SCOPES_E (format-spec "SCOPES_E (0x0E)"): a section's tokens and
 * residuals range-coded (rANS: 32-bit states taking 16 bits at a time,
 * frequencies in 1/4096), tokens in one stream, residual symbols in
 * another with two states taking turns, raw bits in a third. A token is
 * the rank of its value in a short list kept per previous event (its kind
 * and name), ordered by count; a residual r = d - pred is split into
 * q = r >> k, coded with a shared table chosen per context, and k raw low
 * bits. 3.0 is 2.0 plus SCOPES_E; the writer writes it when asked. */
#define CAPF_SE_PROB_BITS 12
#define CAPF_SE_PROB (1u << CAPF_SE_PROB_BITS)
#define CAPF_SE_L (1u << 16)          /* the state's lower bound; the
                                         state takes 16 bits at a time */
#define CAPF_SE_LIST 4                /* values a token list holds */
#define CAPF_SE_TOK_SYMS 5            /* ranks 0..3, 4: escape */
#define CAPF_SE_TOK_TABLES 30         /* 2 kinds x 5 lengths x 3 last:
                                         kind x 15 + capf_se_list.tb */
#define CAPF_SE_RES_SYMS 64           /* zigzag(q) 0..62, 63: escape */
#define CAPF_SE_RES_ESC 63
#define CAPF_SE_RES_TABLES_MAX 16
#define CAPF_SE_RAW_MAX 16            /* bits one raw read takes, at most */

/* A token list (format-spec "SCOPES_E", token lists): up to four values
 * with their counts, most counted first; tb = len x 3 + the last rank
 * given (at most 2), which with the list's kind picks the token table. */
typedef struct capf_se_list {
    uint32_t v[CAPF_SE_LIST], n[CAPF_SE_LIST];
    uint16_t len, tb;
} capf_se_list;

/* The list after rank s gave its value (s < CAPF_SE_LIST), or after the
 * escape s == CAPF_SE_LIST brought v (in place of the last when full). */
static inline void capf_se_list_use(capf_se_list *l, unsigned s, uint32_t v)
{
    unsigned pos = s;
    if (s == CAPF_SE_LIST) {
        if (l->len == CAPF_SE_LIST)
            l->len--;
        pos = l->len++;
        l->v[pos] = v;
        l->n[pos] = 0;
    }
    l->n[pos]++;
    while (pos > 0 && l->n[pos - 1] < l->n[pos]) {
        uint32_t tv = l->v[pos], tn = l->n[pos];
        l->v[pos] = l->v[pos - 1];
        l->n[pos] = l->n[pos - 1];
        l->v[pos - 1] = tv;
        l->n[pos - 1] = tn;
        pos--;
    }
    l->tb = (uint16_t)(l->len * 3u + (s < 2 ? s : 2));
}

/* A varint's bit length: 0 for 0. */
static inline unsigned capf_bitlen(uint64_t v)
{
    return v ? 64u - (unsigned)__builtin_clzll(v) : 0u;
}

/* A CLOCK sample refines the tick period only once this far from origin. */
#define CAPF_CLOCK_MIN_SPAN_NS 100000000ull

/* ---- little-endian fixed-width ----------------------------------------- */

static inline void capf_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void capf_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline void capf_put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t capf_get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t capf_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}
static inline uint64_t capf_get_u64(const uint8_t *p)
{
    return (uint64_t)capf_get_u32(p) | ((uint64_t)capf_get_u32(p + 4) << 32);
}

/* ---- growable byte buffer (writer side) -------------------------------- */

typedef struct capf_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
    int failed; /* an allocation failed; contents are incomplete */
} capf_buf;

void capf_buf_free(capf_buf *b);
/* Make room for `extra` more bytes; 0 on success, -1 (and failed set). */
int capf_buf_reserve(capf_buf *b, size_t extra);

static inline void capf_buf_bytes(capf_buf *b, const void *src, size_t n)
{
    if (n && capf_buf_reserve(b, n) == 0) { /* src may be NULL when n is 0 */
        memcpy(b->data + b->len, src, n);
        b->len += n;
    }
}

static inline void capf_buf_u8(capf_buf *b, uint8_t v)
{
    if (b->len < b->cap || capf_buf_reserve(b, 1) == 0)
        b->data[b->len++] = v;
}

static inline void capf_buf_varint(capf_buf *b, uint64_t v)
{
    if (b->cap - b->len < 10 && capf_buf_reserve(b, 10) != 0)
        return;
    uint8_t *p = b->data + b->len;
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    b->len = (size_t)(p - b->data);
}

static inline uint64_t capf_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t capf_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

void capf_buf_f64(capf_buf *b, double v);
/* A string: v length, then the bytes (no NUL). NULL writes length 0. */
void capf_buf_str(capf_buf *b, const char *s);
/* Append section `kind` whose body is `body`. */
void capf_buf_section(capf_buf *b, uint8_t kind, const capf_buf *body);

/* ---- bounded decoding cursor (reader side) ----------------------------- */

typedef struct capf_cur {
    const uint8_t *p;
    const uint8_t *end;
    int bad; /* set once any read ran past end or was malformed */
} capf_cur;

static inline uint64_t capf_cur_varint(capf_cur *c)
{
    const uint8_t *p = c->p;
    if (c->end - p >= 10) { /* fast path: no bounds check per byte */
        uint64_t v = *p & 0x7f;
        if (*p++ < 0x80) {
            c->p = p;
            return v;
        }
        for (int shift = 7; shift < 64; shift += 7) {
            uint8_t byte = *p++;
            if (shift == 63 && byte > 1)
                break; /* does not fit 64 bits */
            v |= (uint64_t)(byte & 0x7f) << shift;
            if (byte < 0x80) {
                c->p = p;
                return v;
            }
        }
        c->bad = 1;
        c->p = c->end;
        return 0;
    }
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (p >= c->end) {
            c->bad = 1;
            c->p = c->end;
            return 0;
        }
        uint8_t byte = *p++;
        if (shift == 63 && byte > 1)
            break; /* does not fit 64 bits */
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (byte < 0x80) {
            c->p = p;
            return v;
        }
    }
    c->bad = 1;
    c->p = c->end;
    return 0;
}

static inline uint8_t capf_cur_u8(capf_cur *c)
{
    if (c->p >= c->end) {
        c->bad = 1;
        return 0;
    }
    return *c->p++;
}

double capf_cur_f64(capf_cur *c);
/* A string: sets *s (not NUL-terminated, points into the buffer) and *len. */
void capf_cur_str(capf_cur *c, const uint8_t **s, size_t *len);
/* A varint that must be <= max; otherwise marks the cursor bad. */
uint64_t capf_cur_varint_max(capf_cur *c, uint64_t max);

/* ---- checksums and chunk framing --------------------------------------- */

uint32_t capf_crc32(const void *data, size_t len);

/* Does a stored checksum match the computed one? Fuzzing builds (fuzz/
 * defines FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION for its own copy of the
 * library, nowhere else) accept any value, so that mutated inputs reach the
 * decoders behind the checksums instead of stopping at them. */
static inline int capf_crc_matches(uint32_t stored, uint32_t computed)
{
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    (void)stored;
    (void)computed;
    return 1;
#else
    return stored == computed;
#endif
}

void capf_header_encode(uint8_t out[CAPF_HEADER_LEN], uint16_t major,
                        uint16_t minor);

typedef struct capf_chunk_header {
    uint16_t type;
    uint16_t flags;
    uint32_t stored;
    uint32_t raw;
    uint32_t payload_crc;
} capf_chunk_header;

void capf_chunk_header_encode(uint8_t out[CAPF_CHUNK_HEADER_LEN],
                              const capf_chunk_header *h);
/* 0: valid; -1: sync or header checksum wrong; -2: sizes out of range or
 * unknown flag bits. */
int capf_chunk_header_decode(const uint8_t in[CAPF_CHUNK_HEADER_LEN],
                             capf_chunk_header *h);

void capf_trailer_encode(uint8_t out[CAPF_TRAILER_LEN], uint64_t footer_offset);

#endif
