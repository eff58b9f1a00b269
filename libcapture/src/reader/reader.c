/*
 * reader.c - stream a capture file, one chunk in memory at a time.
 *
 * The reader is a small state machine: it holds the decompressed payload of
 * the current chunk and a cursor over its sections; cap_reader_next decodes
 * just enough of the current section to produce one event. See
 * format/format.h for the layout summary and format-spec/ for the spec.
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

/* Streaming stores for cap_reader_stream_records: x86-64 has them in its
 * baseline (SSE2); elsewhere records are written as usual. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>
#include <stddef.h>
#define RD_HAVE_STREAM 1
/* scope_pop_rec streams a record as five 8-byte words */
_Static_assert(sizeof(cap_scope_rec) == 40 &&
                   offsetof(cap_scope_rec, children) == 16 &&
                   offsetof(cap_scope_rec, name) == 24 &&
                   offsetof(cap_scope_rec, depth) == 28 &&
                   offsetof(cap_scope_rec, stack) == 32 &&
                   offsetof(cap_scope_rec, reserved) == 36,
               "cap_scope_rec as scope_pop_rec streams it");
#else
#define RD_HAVE_STREAM 0
#endif

/* read_chunk: a damaged chunk whose size is trustworthy (skip it whole). */
#define RD_SKIPPABLE ((cap_result)98)

typedef struct rd_name {
    char *name;
    char *file;
    uint32_t line;
    uint32_t flags; /* NAME_FLAGS (format 1.1), accumulated */
    int used;
    uint64_t sr_pred[2]; /* SCOPES_R: begin, end: the current section's
                            prediction and class (0 when unset) */
    uint8_t sr_cls[2];
} rd_name;

typedef struct rd_track {
    char *name;
    double period;
    int declared;
    int calibrated;
    uint64_t cal_gpu, cal_cpu;
    uint64_t cal_dev; /* the calibration's stated maximum error, ns */
} rd_track;

typedef struct rd_span {
    uint32_t name;
    int32_t parent;
    int measured;
    uint32_t depth;
    uint64_t begin, dur; /* GPU ticks */
    uint64_t self;
} rd_span;

typedef enum sec_state {
    ST_NONE,
    ST_DECLS,
    ST_FRAMES,
    ST_SCOPES,
    ST_COUNTERS,
    ST_GPU
} sec_state;

struct cap_reader {
    FILE *f;
    char *path;
    uint64_t size, off;
    int stream;        /* not a regular file: no size, no seeking */
    uint8_t hb[CAPF_CHUNK_HEADER_LEN]; /* the last chunk header read */
    uint8_t pend[CAPF_CHUNK_HEADER_LEN]; /* stream: a chunk header found by */
    size_t pend_n, pend_pos;             /* resync, read again from here */
    unsigned major, minor;
    char detail[320];

    char **meta_k, **meta_v;
    size_t meta_n;
    char *clock_source;
    double meta_period;
    uint64_t origin_tick, origin_mono;
    int64_t origin_unix;
    int have_meta;

    /* Names by id: ids below RD_PAGE (most captures' every name) in one
     * page made when first used; the others in blocks of RD_PAGE entries,
     * one entry per id used, found through an open-addressing hash
     * (nh_key: id, 0 empty; nh_val: entry index). Ids go up to
     * CAP_MAX_NAME_ID, and what a file claims must not cost what it does
     * not hold: a table by id cost 804 MiB for one id in each 1,024
     * (issue 46). Entries never move. Their texts are in an arena of
     * blocks that never move either (texts). */
    rd_name *page0;
    rd_name **nblk;
    size_t nblk_n, ent_n;
    uint32_t *nh_key, *nh_val;
    size_t nh_cap, nh_n;
    uint32_t max_id;
    struct rd_text {
        char **blk;
        size_t n, cap; /* blocks */
        size_t used, size; /* of the last block */
    } texts;
    char **threads;
    uint32_t threads_cap;
    rd_track tracks[CAP_MAX_TRACKS];

    ZSTD_DCtx *dc;
    uint8_t *stored;
    size_t stored_cap;
    uint8_t *raw;
    size_t raw_cap;
    capf_cur sec;     /* remaining sections of the current payload */
    capf_cur body;    /* the section being decoded */
    sec_state state;
    double period;    /* ns per CPU tick for the current block (1.0
                         under cap_reader_set_ticks) */
    double real_period; /* ns per CPU tick for the current block, always */
    int ticks;        /* cap_reader_set_ticks: CPU times in ticks */
    int nt_recs;      /* cap_reader_stream_records (and RD_HAVE_STREAM) */
    int clk_have;     /* the current block's period came from a CLOCK */
    uint64_t clk_tick, clk_mono; /* ... sample: this one */
    uint32_t anc_n;   /* cap_reader_scope_ancestors: the depth of the
                         scope cap_reader_next yielded last (0: none) */
    int last_gpu;     /* cap_reader_next yielded a GPU span last */
    double lim_per;   /* the period fast_lim was made for (0: none yet) */
    uint64_t fast_lim; /* tick counts below it are in cap__round_pos's range */
    int in_footer;
    int finished;     /* CAP_DONE from now on */
    unsigned filter; /* 1u << kind: sections to step over */
    int owe_truncated; /* report CAP_E_TRUNCATED on the next call */
    uint64_t footer_off;

    /* declarations to yield: (kind, id) */
    struct {
        cap_event_kind kind;
        uint32_t id;
    } *decls;
    size_t decls_n, decls_cap, decls_pos;

    /* FRAMES */
    uint64_t left, prev_index, prev_begin;
    uint64_t prev_end; /* FRAME_LIST frames: begins as gaps after it */
    /* SCOPES */
    uint32_t tid;
    uint64_t tick;
    capf_cur deltas;
    uint32_t depth;
    uint32_t stk_name[CAP_MAX_DEPTH];
    uint64_t stk_epred[CAP_MAX_DEPTH]; /* SCOPES_R: the prediction and */
    uint8_t stk_ecls[CAP_MAX_DEPTH];   /* class of each open scope's end */
    uint32_t *sr_set;  /* ids whose predictions the section set */
    size_t sr_set_n, sr_set_cap;
    int sr;           /* the section is SCOPES_R (2.0) */
    int sr_first;     /* its first event (at base) is still to come */

    capc_sr_dec srd;  /* SCOPES_R: each class's two streams */
    capc_se_dec sed;  /* SCOPES_E (3.0): the section's decoder */
    uint32_t stk_dense[CAP_MAX_DEPTH];
    uint64_t stk_begin[CAP_MAX_DEPTH];
    int64_t stk_begin_ns[CAP_MAX_DEPTH]; /* stk_begin converted, once */
    int bns_stale; /* cap_reader_next_scopes pushed scopes without their
                      stk_begin_ns: converted before events are made */
    uint64_t stk_children[CAP_MAX_DEPTH];
    cap_result pending; /* an error found after a batch's first scopes,
                           reported by the next call */
    uint32_t *arena;    /* batches: copies of the ancestor stacks */
    size_t arena_cap;   /* entries, doubled up to RD_ARENA when a batch
                           ended for want of room */
    int arena_full;
    /* cap_reader_frames_only: the footer's block index, and the frames
     * the current block must yield (-1: decode it whole) */
    int frames_only;
    uint64_t *idx_off, *idx_frames;
    size_t idx_n, idx_pos;
    int64_t expect_frames;
    /* 3.1: the footer's FRAME_LIST, checked against the INDEX (NULL: none,
     * or it disagreed); fl_on: cap_reader_frames_only yields the frames
     * from it, its entries read in turn as blocks (fl_pos) */
    uint8_t *fl;
    size_t fl_len, fl_pos;
    int fl_on;
    int fl_gap;       /* the frames being read are a FRAME_LIST entry's */
    /* COUNTERS */
    uint64_t prev_tick;
    /* GPU */
    rd_span *spans;
    size_t spans_n, spans_cap, span_pos;
    uint32_t *span_stack;
    int32_t *order; /* scratch for self-time */
    uint32_t gpu_track;
    uint64_t gpu_frame;

    cap_reader_stats st;
    uint64_t range_end; /* cap__reader_range: no chunk read at or past it
                           (0: none) */
};

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

#define RD_PAGE_BITS 10
#define RD_PAGE (1u << RD_PAGE_BITS)
#define RD_ARENA_BLOCK ((size_t)64 << 10)

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

static inline size_t nh_at(uint32_t id, size_t cap)
{
    uint32_t h = id; /* murmur3's finaliser: consecutive ids spread */
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h & (cap - 1);
}

/* The entry of name id `id`, or NULL when none was ever made. */
static rd_name *name_peek(const cap_reader *r, uint32_t id)
{
    if (id < RD_PAGE)
        return id && r->page0 ? &r->page0[id] : NULL;
    if (!r->nh_cap)
        return NULL;
    for (size_t i = nh_at(id, r->nh_cap);; i = (i + 1) & (r->nh_cap - 1)) {
        if (r->nh_key[i] == id) {
            uint32_t e = r->nh_val[i];
            return &r->nblk[e >> RD_PAGE_BITS][e & (RD_PAGE - 1)];
        }
        if (!r->nh_key[i])
            return NULL;
    }
}

/* The hash grown to hold one more id; 0, or -1 when out of memory. */
static int nh_grow(cap_reader *r)
{
    if ((r->nh_n + 1) * 2 <= r->nh_cap)
        return 0;
    size_t cap = r->nh_cap ? r->nh_cap * 2 : 1024;
    uint32_t *k = calloc(cap, sizeof *k), *v = malloc(cap * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    for (size_t i = 0; i < r->nh_cap; i++) {
        if (!r->nh_key[i])
            continue;
        size_t j = nh_at(r->nh_key[i], cap);
        while (k[j])
            j = (j + 1) & (cap - 1);
        k[j] = r->nh_key[i];
        v[j] = r->nh_val[i];
    }
    free(r->nh_key);
    free(r->nh_val);
    r->nh_key = k;
    r->nh_val = v;
    r->nh_cap = cap;
    return 0;
}

/* name_slot for an id of RD_PAGE or more, not in the table yet. */
static rd_name *name_add(cap_reader *r, uint32_t id)
{
    if (nh_grow(r) != 0)
        return NULL;
    size_t e = r->ent_n;
    if (e >> RD_PAGE_BITS >= r->nblk_n) {
        if ((r->nblk_n & (r->nblk_n - 1)) == 0) { /* 0 or a power of 2 */
            size_t c = r->nblk_n ? r->nblk_n * 2 : 4;
            rd_name **p = realloc(r->nblk, c * sizeof *p);
            if (!p)
                return NULL;
            r->nblk = p;
        }
        if (!(r->nblk[r->nblk_n] = calloc(RD_PAGE, sizeof **r->nblk)))
            return NULL;
        r->nblk_n++;
    }
    size_t i = nh_at(id, r->nh_cap);
    while (r->nh_key[i])
        i = (i + 1) & (r->nh_cap - 1);
    r->nh_key[i] = id;
    r->nh_val[i] = (uint32_t)e;
    r->nh_n++;
    r->ent_n++;
    return &r->nblk[e >> RD_PAGE_BITS][e & (RD_PAGE - 1)];
}

/* The entry of name id `id`, made when missing; NULL when id is out of
 * range or memory is short. */
static rd_name *name_slot(cap_reader *r, uint32_t id)
{
    if (id == 0 || id > CAP_MAX_NAME_ID)
        return NULL;
    rd_name *nm;
    if (id < RD_PAGE) {
        if (!r->page0 && !(r->page0 = calloc(RD_PAGE, sizeof *r->page0)))
            return NULL;
        nm = &r->page0[id];
    } else if (!(nm = name_peek(r, id)) && !(nm = name_add(r, id))) {
        return NULL;
    }
    if (id > r->max_id)
        r->max_id = id;
    return nm;
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

/* a + b, wrapping instead of overflowing: a damaged file may hold any
 * value, and what the reader yields for it must be defined. */
static inline int64_t add_ns(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

static inline int64_t to_ns_per(const cap_reader *r, uint64_t tick,
                                double per)
{
    return cap_ticks_ns((int64_t)(tick - r->origin_tick), per);
}

static inline int64_t to_ns(const cap_reader *r, uint64_t tick)
{
    return to_ns_per(r, tick, r->period);
}

/* The current block's period starts as the META chunk's. */
static void block_clock_reset(cap_reader *r)
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
    if (!capf_crc_matches(h->payload_crc, capf_crc32(r->stored, h->stored))) {
        set_detail(r, "chunk at offset %llu: payload checksum mismatch",
                   (unsigned long long)*chunk_off);
        return RD_SKIPPABLE;
    }
    /* A zstd frame states its decompressed size: one that disagrees with
     * the chunk header is damage, found before allocating for it. */
    if ((h->flags & CAPF_CHUNK_FLAG_ZSTD) &&
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
    if ((h->flags & CAPF_CHUNK_FLAG_ZSTD) && r->expect_frames >= 0 &&
        h->type == CAPF_CHUNK_BLOCK) {
        *raw_len = partial_frames(r, h);
        return CAP_OK;
    }
    if (h->flags & CAPF_CHUNK_FLAG_ZSTD) {
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
        r->major != CAPF_VERSION_MAJOR_SCOPES_E) {
        set_detail(r, "format version %u.%u; this reader reads major "
                      "versions %u, %u and %u only (upgrade libcapture)",
                   r->major, r->minor, CAPF_VERSION_MAJOR,
                   CAPF_VERSION_MAJOR_SCOPES_R, CAPF_VERSION_MAJOR_SCOPES_E);
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
    block_clock_reset(r);
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
    free(r->stored);
    free(r->raw);
    free(r->decls);
    free(r->spans);
    free(r->span_stack);
    free(r->order);
    free(r->arena);
    free(r->sr_set);
    capc_se_dec_free(&r->sed);
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

/* The start of a SCOPES (sr 0) or SCOPES_R (sr 1) section: the prefix
 * onto the stack, the cursors set. */
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
        return capc_scopes_e_start(&r->sed, b, n, r->depth, r->stk_name,
                                   r->stk_dense, r->stk_epred, se_use_name,
                                   r);
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

/* ---- events ------------------------------------------------------------ */

/* A varint from p, which has at least 10 bytes left; NULL if malformed. */
static inline const uint8_t *varint_10(const uint8_t *p, uint64_t *out)
{
    uint64_t v = *p++;
    if (v < 0x80) {
        *out = v;
        return p;
    }
    v &= 0x7f;
    for (int shift = 7; shift < 64; shift += 7) {
        uint8_t byte = *p++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (byte < 0x80) {
            *out = v;
            return p;
        }
    }
    return NULL;
}

/* The tick counts dn for which (double)dn * period is in [0, 2^52), so
 * cap__round_pos converts them: below 2^51 / period (the products' rounding is
 * far below the factor of 2 left); none (0) for a period that is not
 * between 2^-11 and 2^60. Made again when the period changed. */
static inline uint64_t fast_lim(cap_reader *r)
{
    if (r->lim_per != r->period) {
        double per = r->period;
        r->fast_lim = cap__ticks_lim(per);
        r->lim_per = per;
    }
    return r->fast_lim;
}

#define RD_ARENA (1u << 15) /* uint32 entries of ancestor stacks a batch
                              may copy, at most */

/* The scope that begins at tick, pushed (depth below CAP_MAX_DEPTH). */
static inline __attribute__((always_inline)) void
scope_push(cap_reader *r, uint32_t depth, uint32_t name, uint64_t tick,
           int unit, double per, uint64_t lim, uint64_t origin, const int rec)
{
    int64_t dn = (int64_t)(tick - origin);
    r->stk_name[depth] = name;
    r->stk_begin[depth] = tick;
    if (!rec) /* records keep ticks: stk_begin_ns made when needed */
        r->stk_begin_ns[depth] = unit ? dn : cap__ticks_ns_lim(dn, per, lim);
    r->stk_children[depth] = 0;
}

/* The innermost of depth + 1 open scopes, ended at tick, as a record (its
 * ancestors at stack in the caller's stacks); its duration added to its
 * parent's children. */
static inline __attribute__((always_inline)) void
scope_pop_rec(cap_reader *r, cap_scope_rec *o, uint32_t dpt, uint64_t tick,
              uint32_t stack, uint64_t origin)
{
    uint64_t begin = r->stk_begin[dpt];
#if RD_HAVE_STREAM
    if (r->nt_recs) {
        /* the record's five 8-byte words, past this core's cache: a whole
           line is written in turn, so none is read first (the fields as
           the struct lays them out, little-endian) */
        long long *q = (long long *)(void *)o;
        _mm_stream_si64(q, (long long)(begin - origin));
        _mm_stream_si64(q + 1, (long long)(tick - origin));
        _mm_stream_si64(q + 2, (long long)r->stk_children[dpt]);
        _mm_stream_si64(q + 3, (long long)((uint64_t)r->stk_name[dpt] |
                                           (uint64_t)dpt << 32));
        _mm_stream_si64(q + 4, (long long)(uint64_t)stack);
    } else
#endif
    {
        o->begin = (int64_t)(begin - origin);
        o->end = (int64_t)(tick - origin);
        o->children = r->stk_children[dpt];
        o->name = r->stk_name[dpt];
        o->depth = dpt;
        o->stack = stack;
        o->reserved = 0;
    }
    if (dpt)
        r->stk_children[dpt - 1] += tick - begin;
}

/* The innermost of depth + 1 open scopes, ended at tick, into *sc with
 * its ancestors' names in stack; its duration added to its parent's
 * children. */
static inline __attribute__((always_inline)) void
scope_pop(cap_reader *r, cap_ev_scope *sc, uint32_t tid, uint32_t dpt,
          uint64_t tick, const uint32_t *stack, int unit, double per,
          uint64_t lim, uint64_t origin)
{
    uint64_t begin = r->stk_begin[dpt];
    uint64_t children = r->stk_children[dpt];
    int64_t dn = (int64_t)(tick - origin);
    sc->tid = tid;
    sc->name = r->stk_name[dpt];
    sc->depth = dpt;
    sc->begin_ns = r->stk_begin_ns[dpt];
    sc->end_ns = unit ? dn : cap__ticks_ns_lim(dn, per, lim);
    sc->children_ns = unit ? (int64_t)children
                           : cap__ticks_dur_ns_lim(children, per, lim);
    sc->stack = stack;
    if (dpt)
        r->stk_children[dpt - 1] += tick - begin;
}

/* The innermost open scope, ended at tick, out as the k-th record (rec)
 * or event of the run: scope_pop_rec or scope_pop. */
static inline __attribute__((always_inline)) void
scope_out(cap_reader *r, cap_event *ev, cap_scope_rec *rv, size_t k,
          const int rec, uint32_t tid, uint32_t dpt, uint64_t tick,
          const uint32_t *stack, const uint32_t *arena, int unit, double per,
          uint64_t lim, uint64_t origin)
{
    if (rec) {
        scope_pop_rec(r, &rv[k], dpt, tick, (uint32_t)(stack - arena),
                      origin);
    } else {
        ev[k].kind = CAP_EV_SCOPE;
        scope_pop(r, &ev[k].u.scope, tid, dpt, tick, stack, unit, per, lim,
                  origin);
    }
}

/* The end of a run that filled k scopes and stopped with res: an error
 * after some scopes waits in r->pending; a section's end is found again
 * by the next call. */
static inline cap_result run_done(cap_reader *r, size_t k, cap_result res,
                                  size_t *got)
{
    r->st.scopes += k;
    if (k && res != CAP_OK && res != CAP_DONE) {
        r->pending = res;
        res = CAP_OK;
    }
    if (k && res == CAP_DONE)
        res = CAP_OK;
    *got = k;
    return res;
}

/* An end's ancestors for scope_pop: the reader's own stack when the call
 * reads one event (max == 1), else a copy in the batch's arena at *ap.
 * *cur is the latest copy, of which the first *cv entries still equal the
 * open stack's (a begin at depth d lowers *cv to d: pops change nothing
 * below them): an end at depth dpt <= *cv shares it, so a run of ends and
 * the siblings that follow each other under one parent take one copy.
 * The caller has checked that the arena holds dpt more when a copy is
 * needed (end_copies). */
static inline __attribute__((always_inline)) int
end_copies(const uint32_t *cur, uint32_t cv, uint32_t dpt)
{
    return !cur || dpt > cv;
}

static inline __attribute__((always_inline)) const uint32_t *
end_stack(const cap_reader *r, size_t max, uint32_t dpt, uint32_t *arena,
          size_t *ap, const uint32_t **cur, uint32_t *cv)
{
    if (max <= 1)
        return r->stk_name;
    if (end_copies(*cur, *cv, dpt)) {
        /* the usual few names in one fixed copy (no library call) when
           the arena has room past them */
        if (dpt <= 8 && *ap + 8 <= r->arena_cap)
            memcpy(arena + *ap, r->stk_name, 8 * sizeof *arena);
        else
            memcpy(arena + *ap, r->stk_name, dpt * sizeof *arena);
        *cur = arena + *ap;
        *cv = dpt;
        *ap += dpt;
    }
    return *cur;
}

/* ST_SCOPES: decode begin/end events until `max` scopes have closed
 * (CAP_OK, ev[0..max) filled) or the section ends (CAP_DONE, *got filled);
 * an error after some scopes were filled is kept in r->pending and the
 * call returns CAP_OK with them. Each tick is converted to ns once: a
 * begin when it is pushed, an end when it pops. With max == 1 the event's
 * stack is the reader's own; otherwise each scope's ancestors are in
 * r->arena from *apos on (copied only when a begin changed the stack since
 * the previous copy: pops leave the entries below them as they were).
 * The cursors and the stack depth live in locals for the loop and are
 * stored back on the way out. */
static inline __attribute__((always_inline)) cap_result
scopes_run_as(cap_reader *r, cap_event *ev, cap_scope_rec *rv, size_t max,
              size_t *got, size_t *apos, const int sr, const int rec)
{
    capf_cur tok_c = r->body, dt_c = r->deltas;
    uint64_t left = r->left, tick = r->tick;
    uint32_t depth = r->depth;
    const double per = r->period;
    const int unit = per == 1.0;
    const uint64_t origin = r->origin_tick;
    const uint64_t lim = fast_lim(r);
    const uint32_t *cur = NULL; /* the latest arena copy */
    uint32_t cv = 0;            /* its entries still on the stack */
    /* the arena's place, the arena and the thread in locals: the stores
     * into ev and the arena would otherwise load them again each time */
    size_t ap = *apos;
    uint32_t *const arena = r->arena;
    const size_t acap = r->arena_cap;
    const uint32_t tid = r->tid;
    /* names below RD_PAGE (most captures' every name) from their page,
     * which stays where it is while the loop may add others */
    rd_name *const page0 = r->page0;
    const uint64_t p0lim = page0 ? RD_PAGE : 0;
    size_t k = 0;
    int first = r->sr_first;
    cap_result res = CAP_DONE;
    while (left > 0) {
        uint64_t tok, d = 0;
        const uint8_t *tok_p = tok_c.p, *dt_p = dt_c.p;
        if (!sr && tok_c.end - tok_c.p >= 10 && dt_c.end - dt_c.p >= 10) {
            const uint8_t *a = varint_10(tok_c.p, &tok);
            const uint8_t *b = varint_10(dt_c.p, &d);
            if (!a || !b) {
                res = CAP_E_CORRUPT;
                break;
            }
            tok_c.p = a;
            dt_c.p = b;
        } else if (!sr) {
            tok = capf_cur_varint(&tok_c);
            d = capf_cur_varint(&dt_c);
            if (tok_c.bad || dt_c.bad) {
                res = CAP_E_CORRUPT;
                break;
            }
        } else if (tok_c.end - tok_c.p >= 10) {
            const uint8_t *a = varint_10(tok_c.p, &tok);
            if (!a) {
                res = CAP_E_CORRUPT;
                break;
            }
            tok_c.p = a;
        } else {
            tok = capf_cur_varint(&tok_c);
            if (tok_c.bad) {
                res = CAP_E_CORRUPT;
                break;
            }
        }
        rd_name *nm = NULL;
        if (tok != 0) {
            if (tok > CAP_MAX_NAME_ID || depth >= CAP_MAX_DEPTH) {
                res = CAP_E_CORRUPT;
                break;
            }
            nm = tok < p0lim ? &page0[tok] : name_peek(r, (uint32_t)tok);
            if (!nm || !nm->used) {
                nm = name_slot(r, (uint32_t)tok);
                if (!nm) {
                    res = CAP_E_NOMEM;
                    break;
                }
                nm->used = 1;
            }
        } else {
            if (depth == 0) {
                res = CAP_E_CORRUPT;
                break;
            }
            if ((rec || max > 1) && end_copies(cur, cv, depth - 1) &&
                ap + depth - 1 > acap) {
                r->arena_full = 1; /* full: this end waits */
                tok_c.p = tok_p;
                dt_c.p = dt_p;
                res = CAP_OK;
                break;
            }
        }
        if (!sr) {
            /* SCOPES: d was read with the token */
        } else if (first) {
            first = 0; /* SCOPES_R: the first event is at base */
        } else {
            /* SCOPES_R: the residual from the streams of the class of the
             * context's prediction */
            uint64_t pred;
            unsigned c;
            if (tok) {
                pred = nm->sr_pred[0];
                c = nm->sr_cls[0];
            } else {
                pred = r->stk_epred[depth - 1];
                c = r->stk_ecls[depth - 1];
            }
            if (capc_sr_residual(&r->srd.cls[c], pred, &d) != 0) {
                res = CAP_E_CORRUPT;
                break;
            }
        }
        left--;
        tick += d;
        if (tok != 0) {
            scope_push(r, depth, (uint32_t)tok, tick, unit, per, lim,
                       origin, rec);
            if (sr) {
                r->stk_epred[depth] = nm->sr_pred[1];
                r->stk_ecls[depth] = nm->sr_cls[1];
            }
            if (depth < cv) /* stk_name[depth] is written */
                cv = depth;
            depth++;
            continue;
        }
        uint32_t dpt = depth - 1;
        const uint32_t *stack =
            end_stack(r, rec ? 2 : max, dpt, arena, &ap, &cur, &cv);
        depth = dpt;
        scope_out(r, ev, rv, k, rec, tid, dpt, tick, stack, arena, unit, per,
                  lim, origin);
        k++;
        if (k == max) {
            res = CAP_OK;
            break;
        }
    }
    *apos = ap;
    res = run_done(r, k, res, got);
    r->body = tok_c;
    r->deltas = dt_c;
    r->sr_first = first;
    r->left = left;
    r->tick = tick;
    r->depth = depth;
    return res;
}

/* ST_SCOPES for a SCOPES_E section: as scopes_run_as, made once for the
 * section's first call (fst: its first event, at base, has no residual)
 * and, for the others, once for a period of 1 ns (unit) and once for
 * others. An end that finds the arena full is kept decoded (r->sed.pend)
 * for the next call. The rANS states, the bits read ahead, the residual
 * stream's place and the previous event's context live in locals; the
 * token stream's and the bits' places stay in r, used only in the rarer
 * branches (more locals than the registers hold put some of the loop's
 * chains through memory). Each stream's bounds are checked only where it
 * is read: a rANS state's word (one at most per symbol, in the branch that
 * needs it), the raw bits when fewer than 32 are read ahead (the usual
 * residual's low bits, k <= 32, are then there). The usual token (rank 0
 * of the list) and residual (a symbol below the escape with k <= 32) take
 * no other branch. */
static inline __attribute__((always_inline)) cap_result
scopes_run_e_as(cap_reader *r, cap_event *ev, cap_scope_rec *rv, size_t max,
                size_t *got, size_t *apos, const int unit, const int fst,
                const int rec)
{
    uint64_t left = r->left, tick = r->tick;
    uint32_t depth = r->depth;
    const double per = r->period;
    const uint64_t origin = r->origin_tick;
    const uint64_t lim = fast_lim(r);
    const uint32_t *cur = NULL; /* as in scopes_run_as */
    uint32_t cv = 0;
    size_t ap = *apos;
    uint32_t *const arena = r->arena;
    const size_t acap = r->arena_cap;
    const uint32_t tid = r->tid;
    size_t k = 0;
    int first = fst && r->sr_first;
    uint32_t tx = r->sed.x[0], rx0 = r->sed.x[1], rx1 = r->sed.x[2];
    /* the token stream's and the bits' places stay in r (read in the
     * rarer branches): fewer values for the loop's registers */
    const uint8_t *rp = r->sed.p[1], *const rend = r->sed.end[1];
    capc_se_bits bs = {r->sed.bb, r->sed.bn, NULL, NULL}; /* p, end: in r */
    capc_se_ctx *const ctx = r->sed.ctx;
    capc_se_ctx *lp = ctx + r->sed.cur; /* the previous event's context */
    const capc_se_name *const names = r->sed.nm;
    cap_result res = CAP_DONE;
    uint32_t v = 0;
    if (r->sed.pend) {
        r->sed.pend = 0; /* an end, its tick in tick already */
        goto end;
    }
    while (left > 0) {
        int bad = 0;
        if (bs.bn < 32) {
            bs.p = r->sed.p[2];
            bs.end = r->sed.end[2];
            capc_se_bits_fill(&bs);
            r->sed.p[2] = bs.p;
        }
        /* the token: rank 0 of the previous event's list, usually */
        capc_se_ctx *l = lp;
        uint32_t slot = tx & (CAPF_SE_PROB - 1), f0 = l->f0;
        if (__builtin_expect(slot < f0, 1)) {
            tx = f0 * (tx >> CAPF_SE_PROB_BITS) + slot;
            v = l->l.v[0];
            l->l.n[0]++;
            /* rank 0 given last now: stored each time (a test of the
             * last rank would go either way after another rank) */
            l->f0 = l->f0z;
            l->l.tb = (uint16_t)(l->l.len * 3u);
        } else {
            bs.p = r->sed.p[2];
            bs.end = r->sed.end[2];
            tx = capc_se_token_rare(&r->sed, l, (unsigned)(l - ctx) & 1, tx,
                                    &bs, &v, &bad);
            r->sed.p[2] = bs.p;
            if (bad) {
                res = CAP_E_CORRUPT;
                break;
            }
        }
        if (__builtin_expect(tx < CAPF_SE_L, 0)) {
            const uint8_t *tp = r->sed.p[0];
            if (r->sed.end[0] - tp < 2) {
                res = CAP_E_CORRUPT;
                break;
            }
            tx = tx << 16 | (uint32_t)tp[0] | (uint32_t)tp[1] << 8;
            r->sed.p[0] = tp + 2;
        }
        uint32_t dn;
        if (v) {
            if (depth >= CAP_MAX_DEPTH) {
                res = CAP_E_CORRUPT;
                break;
            }
            dn = v;
            lp = ctx + 2 * (size_t)dn;
        } else {
            if (depth == 0) {
                res = CAP_E_CORRUPT;
                break;
            }
            dn = r->stk_dense[depth - 1];
            lp = ctx + 2 * (size_t)dn + 1;
        }
        uint64_t d = 0;
        if (fst && first) {
            first = 0; /* the first event is at base */
        } else {
            /* the residual: its symbol with the context's table, from the
             * residual stream's state whose turn it is */
            const capc_se_ctx *c = lp;
            const capc_se_rtab *rt = c->rt;
            uint32_t x = rx0;
            slot = x & (CAPF_SE_PROB - 1);
            unsigned s = rt->sym[slot];
            x = rt->si[s].f * (x >> CAPF_SE_PROB_BITS) + slot - rt->si[s].c;
            if (__builtin_expect(rend - rp >= 2, 1)) {
                /* the word taken or not without a branch: whether a
                 * state needs one follows the data, not a pattern */
                uint32_t w = (uint32_t)rp[0] | (uint32_t)rp[1] << 8;
                uint32_t need = 0u - (uint32_t)(x < CAPF_SE_L);
                x = (x & ~need) | ((x << 16 | w) & need);
                rp += need & 2u;
            } else if (x < CAPF_SE_L) {
                res = CAP_E_CORRUPT;
                break;
            }
            rx0 = rx1; /* the states take turns */
            rx1 = x;
            uint64_t rv;
            if (__builtin_expect(s < CAPF_SE_RES_ESC && c->kf <= bs.bn, 1)) {
                unsigned sh = c->k;
                rv = (uint64_t)(int64_t)rt->si[s].q << sh |
                     (bs.bb & ((1ull << sh) - 1));
                bs.bb >>= sh;
                bs.bn -= sh;
            } else {
                bs.p = r->sed.p[2];
                bs.end = r->sed.end[2];
                rv = capc_se_res_rare(c, s, &bs, &bad);
                r->sed.p[2] = bs.p;
                if (bad) {
                    res = CAP_E_CORRUPT;
                    break;
                }
            }
            d = c->pred + rv;
        }
        left--;
        tick += d;
        if (v) {
            scope_push(r, depth, names[v].id, tick, unit, per, lim, origin,
                       rec);
            r->stk_dense[depth] = v;
            if (depth < cv) /* stk_name[depth] is written */
                cv = depth;
            depth++;
            continue;
        }
    end:;
        uint32_t dpt = depth - 1;
        if ((rec || max > 1) && end_copies(cur, cv, dpt) && ap + dpt > acap) {
            r->arena_full = 1; /* full: this end waits */
            r->sed.pend = 1;
            res = CAP_OK;
            break;
        }
        const uint32_t *stack =
            end_stack(r, rec ? 2 : max, dpt, arena, &ap, &cur, &cv);
        depth = dpt;
        scope_out(r, ev, rv, k, rec, tid, dpt, tick, stack, arena, unit, per,
                  lim, origin);
        k++;
        if (k == max) {
            res = CAP_OK;
            break;
        }
    }
    *apos = ap;
    res = run_done(r, k, res, got);
    r->sed.x[0] = tx;
    r->sed.x[1] = rx0;
    r->sed.x[2] = rx1;
    r->sed.p[1] = rp;
    r->sed.bb = bs.bb;
    r->sed.bn = bs.bn;
    r->sed.cur = (uint32_t)(lp - ctx);
    if (fst)
        r->sr_first = first;
    r->left = left;
    r->tick = tick;
    r->depth = depth;
    return res;
}

static cap_result scopes_run_e(cap_reader *r, cap_event *ev, size_t max,
                               size_t *got, size_t *apos)
{
    if (r->sr_first) /* the section's first call */
        return scopes_run_e_as(r, ev, NULL, max, got, apos,
                               r->period == 1.0, 1, 0);
    return r->period == 1.0
               ? scopes_run_e_as(r, ev, NULL, max, got, apos, 1, 0, 0)
               : scopes_run_e_as(r, ev, NULL, max, got, apos, 0, 0, 0);
}

/* scopes_run_as, made once for SCOPES and once for SCOPES_R. */
static cap_result scopes_run(cap_reader *r, cap_event *ev, size_t max,
                             size_t *got, size_t *apos)
{
    if (r->bns_stale) {
        /* records ran before: the open scopes' begins in ns, as
           scope_push would have made them */
        for (uint32_t i = 0; i < r->depth; i++)
            r->stk_begin_ns[i] = to_ns(r, r->stk_begin[i]);
        r->bns_stale = 0;
    }
    if (r->sr == 2)
        return scopes_run_e(r, ev, max, got, apos);
    return r->sr ? scopes_run_as(r, ev, NULL, max, got, apos, 1, 0)
                 : scopes_run_as(r, ev, NULL, max, got, apos, 0, 0);
}

/* scopes_run for records (cap_reader_next_scopes): made once for each
 * kind of section, and for a SCOPES_E section's first call. */
static cap_result scopes_run_rec(cap_reader *r, cap_scope_rec *rv,
                                 size_t max, size_t *got, size_t *apos)
{
    r->bns_stale = 1;
    if (r->sr == 2)
        return r->sr_first
                   ? scopes_run_e_as(r, NULL, rv, max, got, apos, 0, 1, 1)
                   : scopes_run_e_as(r, NULL, rv, max, got, apos, 0, 0, 1);
    return r->sr ? scopes_run_as(r, NULL, rv, max, got, apos, 1, 1)
                 : scopes_run_as(r, NULL, rv, max, got, apos, 0, 1);
}

static cap_result scopes_event(cap_reader *r, cap_event *ev)
{
    if (r->pending) {
        cap_result res = r->pending;
        r->pending = CAP_OK;
        return res;
    }
    size_t got, apos = 0;
    cap_result res = scopes_run(r, ev, 1, &got, &apos);
    return got ? CAP_OK : res;
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
        return scopes_event(r, ev);
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
            block_clock_reset(r);
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
        block_clock_reset(r);
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

static cap_result batch_run(cap_reader *r, cap_event *ev, size_t max,
                            size_t *n);

cap_result cap_reader_next_batch(cap_reader *r, cap_event *ev, size_t max,
                                 size_t *n)
{
    if (!r || !ev || !n || max == 0)
        return CAP_E_MISUSE;
    *n = 0;
    if (max > 1 && (!r->arena || (r->arena_full && r->arena_cap < RD_ARENA))) {
        /* small to start with (captures are often small), doubled when a
         * batch ran out of room; always room for one full stack */
        size_t cap = r->arena ? r->arena_cap * 2 : 2 * CAP_MAX_DEPTH;
        uint32_t *a = realloc(r->arena, cap * sizeof *a);
        if (a) {
            r->arena = a;
            r->arena_cap = cap;
        }
        r->arena_full = 0;
        if (!r->arena)
            max = 1;
    }
    return batch_run(r, ev, max, n);
}

/* The reader's own arena, set aside while a call decodes stacks into the
 * caller's memory (which does not grow). */
typedef struct rd_arena {
    uint32_t *a;
    size_t cap;
    int full;
} rd_arena;

static rd_arena arena_lend(cap_reader *r, uint32_t *stacks, size_t cap)
{
    rd_arena own = {r->arena, r->arena_cap, r->arena_full};
    r->arena = stacks;
    r->arena_cap = cap;
    r->arena_full = 0;
    return own;
}

static void arena_restore(cap_reader *r, rd_arena own)
{
    r->arena = own.a;
    r->arena_cap = own.cap;
    r->arena_full = own.full;
}

cap_result cap_reader_next_batch_into(cap_reader *r, cap_event *ev,
                                      size_t max, size_t *n, uint32_t *stacks,
                                      size_t stacks_cap)
{
    if (!r || !ev || !n || max == 0 || !stacks ||
        stacks_cap < 2 * (size_t)CAP_MAX_DEPTH)
        return CAP_E_MISUSE;
    *n = 0;
    /* the batch's stacks go to the caller's memory: the reader's own
     * arena is set aside for the call (and does not grow for it) */
    rd_arena own = arena_lend(r, stacks, stacks_cap);
    cap_result res = batch_run(r, ev, max, n);
    arena_restore(r, own);
    return res;
}

cap_result cap_reader_next_scopes(cap_reader *r, cap_scope_rec *rec,
                                  size_t max, size_t *n, uint32_t *stacks,
                                  size_t stacks_cap, cap_scope_run *run)
{
    if (!r || !rec || !n || max == 0 || !stacks || !run ||
        stacks_cap < 2 * (size_t)CAP_MAX_DEPTH)
        return CAP_E_MISUSE;
    *n = 0;
    if (r->state != ST_SCOPES || r->pending || r->finished ||
        r->owe_truncated)
        return CAP_OK; /* the others' turn */
    rd_arena own = arena_lend(r, stacks, stacks_cap);
    size_t apos = 0, k = 0;
    cap_result res = scopes_run_rec(r, rec, max, &k, &apos);
#if RD_HAVE_STREAM
    if (r->nt_recs)
        _mm_sfence(); /* the streamed records ordered before what follows */
#endif
    arena_restore(r, own);
    r->anc_n = 0;
    r->last_gpu = 0;
    if (k) {
        *n = k;
        run->tid = r->tid;
        run->period_ns = r->real_period;
        run->stacks_used = apos;
        return CAP_OK;
    }
    if (res != CAP_DONE && res != CAP_OK)
        r->pending = res; /* reported by the next of the other calls */
    return CAP_OK;
}

/* cap_reader_next_batch once r->arena is there (or max is 1). */
static cap_result batch_run(cap_reader *r, cap_event *ev, size_t max,
                            size_t *n)
{
    size_t apos = 0, k = 0;
    if (max > 1 && r->state == ST_SCOPES && !r->pending && !r->finished &&
        !r->owe_truncated) {
        cap_result res = scopes_run(r, ev, max, &k, &apos);
        if (k) {
            *n = k;
            r->anc_n = 0;
            return CAP_OK;
        }
        if (res != CAP_DONE)
            r->pending = res; /* reported by cap_reader_next below */
    }
    cap_result res = cap_reader_next(r, ev);
    if (res != CAP_OK)
        return res;
    *n = 1;
    if (max > 1 && ev->kind == CAP_EV_SCOPE && r->state == ST_SCOPES &&
        !r->pending) {
        /* the section's first scope: its stack into the arena, then the
         * rest of the run */
        uint32_t dpt = ev->u.scope.depth;
        memcpy(r->arena, ev->u.scope.stack, dpt * sizeof *r->arena);
        ev->u.scope.stack = r->arena;
        apos = dpt;
        cap_result more = scopes_run(r, ev + 1, max - 1, &k, &apos);
        *n += k;
        if (k)
            r->anc_n = 0; /* an error after them waits in r->pending */
        else if (more != CAP_OK && more != CAP_DONE)
            r->pending = more; /* reported by the next call, as a run
                                  that gave no scope reports it */
    }
    return CAP_OK;
}

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

/* ---- accessors --------------------------------------------------------- */

const char *cap_reader_detail(const cap_reader *r)
{
    return r ? r->detail : "";
}

const char *cap_reader_name(const cap_reader *r, uint32_t id)
{
    const rd_name *nm = r ? name_peek(r, id) : NULL;
    return nm ? nm->name : NULL;
}

const char *cap_reader_name_file(const cap_reader *r, uint32_t id)
{
    const rd_name *nm = r ? name_peek(r, id) : NULL;
    return nm ? nm->file : NULL;
}

uint32_t cap_reader_name_flags(const cap_reader *r, uint32_t id)
{
    const rd_name *nm = r ? name_peek(r, id) : NULL;
    return nm ? nm->flags : 0;
}

uint32_t cap_reader_name_line(const cap_reader *r, uint32_t id)
{
    const rd_name *nm = r ? name_peek(r, id) : NULL;
    return nm ? nm->line : 0;
}

uint32_t cap_reader_max_name_id(const cap_reader *r)
{
    return r ? r->max_id : 0;
}

const char *cap_reader_thread_name(const cap_reader *r, uint32_t tid)
{
    if (!r || tid >= r->threads_cap)
        return NULL;
    return r->threads[tid];
}

const char *cap_reader_track_name(const cap_reader *r, uint32_t track)
{
    if (!r || track >= CAP_MAX_TRACKS || !r->tracks[track].declared)
        return NULL;
    return r->tracks[track].name;
}

size_t cap_reader_meta_count(const cap_reader *r)
{
    return r ? r->meta_n : 0;
}

const char *cap_reader_meta_key(const cap_reader *r, size_t i)
{
    return r && i < r->meta_n ? r->meta_k[i] : NULL;
}

const char *cap_reader_meta_value(const cap_reader *r, size_t i)
{
    return r && i < r->meta_n ? r->meta_v[i] : NULL;
}

const char *cap_reader_meta_get(const cap_reader *r, const char *key)
{
    if (!r || !key)
        return NULL;
    for (size_t i = 0; i < r->meta_n; i++)
        if (strcmp(r->meta_k[i], key) == 0)
            return r->meta_v[i];
    return NULL;
}

void cap_reader_version(const cap_reader *r, unsigned *major, unsigned *minor)
{
    if (major)
        *major = r ? r->major : 0;
    if (minor)
        *minor = r ? r->minor : 0;
}

int64_t cap_reader_origin_unix_ns(const cap_reader *r)
{
    return r ? r->origin_unix : 0;
}

const char *cap_reader_clock_source(const cap_reader *r)
{
    return r && r->clock_source ? r->clock_source : "";
}

cap_result cap_reader_set_ticks(cap_reader *r, int on)
{
    if (!r || r->sec.end || r->finished)
        return CAP_E_MISUSE;
    r->ticks = on != 0;
    block_clock_reset(r);
    return CAP_OK;
}

cap_result cap_reader_stream_records(cap_reader *r, int on)
{
    if (!r)
        return CAP_E_MISUSE;
    r->nt_recs = RD_HAVE_STREAM && on;
    return CAP_OK;
}

void cap_reader_clock(const cap_reader *r, double *period_ns,
                      uint64_t *origin_tick, uint64_t *origin_mono_ns)
{
    if (period_ns)
        *period_ns = r ? r->meta_period : 0;
    if (origin_tick)
        *origin_tick = r ? r->origin_tick : 0;
    if (origin_mono_ns)
        *origin_mono_ns = r ? r->origin_mono : 0;
}

int cap_reader_block_clock(const cap_reader *r, uint64_t *tick,
                           uint64_t *mono_ns)
{
    int have = r && r->clk_have;
    if (tick)
        *tick = have ? r->clk_tick : 0;
    if (mono_ns)
        *mono_ns = have ? r->clk_mono : 0;
    return have;
}

size_t cap_reader_scope_ancestors(const cap_reader *r, int64_t *begin,
                                  int64_t *children, size_t max)
{
    if (!r)
        return 0;
    for (size_t i = 0; i < r->anc_n && i < max; i++) {
        if (begin)
            begin[i] = r->stk_begin_ns[i];
        if (children) {
            uint64_t ch = r->stk_children[i];
            children[i] = cap_ticks_dur_ns(ch, r->period);
        }
    }
    return r->anc_n;
}

int cap_reader_gpu_span_ticks(const cap_reader *r, uint64_t *begin_tick,
                              uint64_t *end_tick)
{
    const rd_span *s = r && r->last_gpu && r->span_pos
                           ? &r->spans[r->span_pos - 1]
                           : NULL;
    int have = s && s->measured;
    if (begin_tick)
        *begin_tick = have ? s->begin : 0;
    if (end_tick)
        *end_tick = have ? s->begin + s->dur : 0;
    return have;
}

int cap_reader_track_calibration(const cap_reader *r, uint32_t track,
                                 uint64_t *gpu_tick, uint64_t *cpu_tick)
{
    int have = r && track < CAP_MAX_TRACKS && r->tracks[track].calibrated;
    if (gpu_tick)
        *gpu_tick = have ? r->tracks[track].cal_gpu : 0;
    if (cpu_tick)
        *cpu_tick = have ? r->tracks[track].cal_cpu : 0;
    return have;
}

uint64_t cap_reader_track_calibration_deviation(const cap_reader *r,
                                                uint32_t track)
{
    return r && track < CAP_MAX_TRACKS && r->tracks[track].calibrated
               ? r->tracks[track].cal_dev
               : 0;
}

void cap_reader_set_filter(cap_reader *r, unsigned mask)
{
    if (r)
        r->filter = mask;
}

const cap_reader_stats *cap_reader_get_stats(const cap_reader *r)
{
    return r ? &r->st : NULL;
}

uint64_t cap_reader_offset(const cap_reader *r)
{
    return r ? r->off : 0;
}

uint64_t cap_reader_file_size(const cap_reader *r)
{
    return r ? r->size : 0;
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
