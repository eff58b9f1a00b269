/*
 * puffin_in.c - import a puffin capture (.puffin) into a libcapture file.
 *
 * Format summary (the long form, with the puffin sources it comes from, is
 * docs/PUFFIN.md). Integers in record headers and streams are little endian;
 * "bincode" below is serde + bincode 1 with varint integers (a value < 251
 * is one byte; 251, 252, 253 announce a u16, u32, u64; signed values are
 * zigzagged; strings and sequences are a varint length then the items).
 *
 *   file    := "PUF0" record* [00 00 00 00]           (the marker is optional)
 *   record  := "PFD1" u32 n  zstd[n]( frame1 )
 *            | "PFD2" u32 m  meta[m]  u32 n  zstd[n]( streams )
 *            | "PFD3" u32 m  meta[m]  u32 n  u8 kind  packed[n]( streams )
 *            | "PFD4" u32 m  meta[m]  u32 n  u8 kind  packed[n]( streams )
 *                    u32 s  details[s]
 *            | "PFD5" meta  u32 n  u8 kind  packed[n]( streams )  details
 *                    (PFD4 without the meta's and the details' sizes)
 *            | u32 n  frame1[n]            (unversioned, older than PFD1)
 *   meta    := bincode { frame_index u64, range_ns (i64, i64),
 *                        num_bytes u64, num_scopes u64 }
 *   frame1  := bincode { frame_index u64, streams, range_ns (i64, i64),
 *                        num_bytes u64, num_scopes u64 }
 *   streams := bincode map { (start_time_ns Option<i64>, name str) ->
 *                            (stream bytes, num_scopes u64, depth u64,
 *                             range_ns (i64, i64)) }
 *   kind    := 0 stored | 1 lz4 block behind a u32 raw size | 2 zstd
 *   details := bincode Vec<{ scope_id Option<u32>, scope_name Option<str>,
 *                            function_name str, file_path str, line u32 }>
 *
 *   stream (PFD1..3) := scope*, scope := '(' i64 start  str8 name
 *                        str8 location  str8 data  u64 size  child[size]
 *                        ')' i64 stop
 *   stream (PFD4, 5) := scope*, scope := '(' u32 id  i64 start  str8 data
 *                        u64 size  child[size]  ')' i64 stop
 *   (str8: one length byte, then that many bytes of UTF-8)
 *
 * PFD1..3 streams name every scope inline. PFD4 and 5 streams carry only an id;
 * a frame's details list the ids first seen in that frame, so a name may
 * sit in any frame of the file, or (when that frame was not saved) nowhere.
 *
 * The import makes two passes. The first validates the whole file and
 * collects threads, names (from every frame) and the earliest timestamp;
 * nothing is written unless it succeeds. The second re-reads each frame,
 * in frame-index order, and writes its scopes and then the frame.
 * Every allocation is bounded by a length checked against the bytes that
 * remain in the file, or by a decompression limit derived from it.
 */
#include "cvt.h"
#include "cvt_util.h"

#include <capture/cap_writer.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <lz4.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

/* One frame's streams never unpack to more than this. */
#define PF_MAX_UNPACKED ((size_t)256 << 20)
/* lz4 emits at most 255 bytes per input byte (plus a few at the end). */
#define PF_LZ4_RATIO 255u
/* A zstd RLE block: 4 bytes for up to 128 KiB, so at most 32 Ki per byte. */
#define PF_ZSTD_RATIO 32768u
/* The smallest encodings, used to reject counts the data cannot hold. */
#define PF_MIN_THREAD_BYTES 7u  /* tag, name, stream, 2 counts, range */
#define PF_MIN_DETAIL_BYTES 5u  /* 2 option tags, 2 strings, line */
#define PF_MIN_SCOPE_V3 29u     /* '(' i64 3 str8 u64 ')' i64 */
#define PF_MIN_SCOPE_V4 31u     /* '(' u32 i64 str8 u64 ')' i64 */
#define PF_MAX_WARN_IDS 8       /* ids listed in the unnamed warning */
#define PF_ID_SLACK 65536u      /* unused ids tolerated to keep puffin's */

/* ---- tables ------------------------------------------------------------ */

/* A scope identity: a PFD4 id, or a (name, location) pair of PFD1..3. */
typedef struct pf_name {
    uint32_t puffin_id; /* PFD4 id; 0 for a name-keyed entry */
    uint32_t id;        /* our name id, set after pass 1 */
    int named;
    char *text;
    char *file;
    uint32_t line;
} pf_name;

typedef struct pf_thread {
    char *name;
} pf_thread;

typedef struct pf_frame {
    uint64_t index;
    int64_t begin_ns;
    int64_t end_ns;
    uint64_t offset;  /* of the record's 4-byte tag */
    uint64_t ordinal; /* record number in the file, from 1 */
} pf_frame;

typedef struct pf_open {
    size_t end; /* stream offset where the scope's children end */
    int64_t start_ns;
    int emitted; /* begun in the writer (within CAP_MAX_DEPTH) */
} pf_open;

/* ---- the importer's state ------------------------------------------------ */

typedef struct pf_ctx {
    const char *path;
    cvt_diag d; /* warnings and errors, one line each */
    FILE *in;
    uint64_t size; /* of the input file */
    uint64_t pos;  /* read position in the input */
    char err[320]; /* the first problem met, "" when none */
    unsigned format_major; /* of the output: cvt_options.format_major */
    int no_frame_list;     /* ... and .no_frame_list */

    uint64_t ordinal;    /* record being read, from 1 */
    uint64_t rec_offset; /* its offset */
    int version;         /* its version: 0 unversioned, 1..4 */

    uint8_t *raw; /* the record's packed bytes */
    size_t raw_cap;
    uint8_t *unpacked;
    size_t unpacked_cap;
    uint8_t *details;
    size_t details_cap;
    ZSTD_DCtx *zstd;

    cvt_strtab name_map; /* key -> 1 + index in names */
    pf_name *names;
    size_t n_names, cap_names;
    uint32_t max_puffin_id;

    cvt_strtab thread_map; /* key -> 1 + tid */
    pf_thread *threads;
    size_t n_threads, cap_threads;

    pf_frame *frames;
    size_t n_frames, cap_frames;

    pf_open *stack;
    size_t cap_stack;

    uint8_t *key; /* scratch key */
    size_t key_cap;

    int have_time;
    int64_t min_ns;
    unsigned versions; /* bit v set when a PFDv record was seen */
    uint64_t scopes;
    uint64_t too_deep; /* scopes past CAP_MAX_DEPTH, not written */

    cap_writer *w; /* NULL during pass 1 */
    cap_result wres;
} pf_ctx;

/* A cursor over bincode bytes; `what` names the region in messages. */
typedef struct pf_cur {
    pf_ctx *c;
    const uint8_t *p;
    size_t n;
    size_t at;
    const char *what;
} pf_cur;

static int pf_fail(pf_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int pf_fail(pf_ctx *c, const char *fmt, ...)
{
    if (c->err[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err, sizeof c->err, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* A warning about the input (cvt_warn: the importer gives at most a few,
 * each once, so one kind does). */
#define pf_warn(c, ...) cvt_warn(&(c)->d, 0, __VA_ARGS__)

/* "error: FILE: message" (cvt_error). */
static void pf_error(pf_ctx *c, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void pf_error(pf_ctx *c, const char *file, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->d.file = file;
    cvt_error(&c->d, "%s", msg);
    c->d.file = c->path;
}

static uint32_t pf_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static uint64_t pf_le64(const uint8_t *p)
{
    return (uint64_t)pf_le32(p) | (uint64_t)pf_le32(p + 4) << 32;
}

/* Grow *buf to hold at least `need` elements of `size` bytes
 * (cvt_grow), saying so when out of memory. */
static int pf_reserve(pf_ctx *c, void **buf, size_t *cap, size_t need,
                      size_t size)
{
    if (cvt_grow(buf, cap, need, size))
        return pf_fail(c, "out of memory (%zu elements of %zu bytes)", need,
                       size);
    return 0;
}

/* The length of the longest prefix of s[0..n) that is valid UTF-8. */
static size_t pf_utf8_prefix(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t b = s[i];
        size_t len;
        uint32_t min;
        if (b < 0x80) {
            i++;
            continue;
        } else if ((b & 0xe0) == 0xc0) {
            len = 2;
            min = 0x80;
        } else if ((b & 0xf0) == 0xe0) {
            len = 3;
            min = 0x800;
        } else if ((b & 0xf8) == 0xf0) {
            len = 4;
            min = 0x10000;
        } else {
            return i;
        }
        if (n - i < len)
            return i;
        uint32_t cp = b & (0x7fu >> len);
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return i;
            cp = cp << 6 | (s[i + k] & 0x3fu);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return i;
        i += len;
    }
    return n;
}

/* A copy of s[0..n) as a C string, cut at a character boundary so that it
 * fits a libcapture name. */
static char *pf_strdup(pf_ctx *c, const uint8_t *s, size_t n)
{
    size_t max = CAP_MAX_NAME_LEN - 1;
    if (n > max) {
        n = max;
        while (n > 0 && (s[n] & 0xc0) == 0x80)
            n--;
    }
    char *d = malloc(n + 1);
    if (!d) {
        pf_fail(c, "out of memory");
        return NULL;
    }
    if (n)
        memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* ---- map ---------------------------------------------------------------- */

/* The value of key k[0..n) in m (a cvt_strtab whose ids are 1 + the
 * values, given in order): 1 and *value when present, else 0. */
static int pf_map_find(const cvt_strtab *m, const uint8_t *k, size_t n,
                       size_t *value)
{
    uint32_t id = cvt_strtab_find(m, (const char *)k, n);
    if (!id)
        return 0;
    *value = id - 1;
    return 1;
}

/* Add key k[0..n) to m with the next value (m->n before the call). */
static int pf_map_put(pf_ctx *c, cvt_strtab *m, const uint8_t *k, size_t n)
{
    if (!cvt_strtab_intern(m, (const char *)k, n))
        return pf_fail(c, "out of memory");
    return 0;
}

/* ---- bincode ---------------------------------------------------------- */

static int pf_short(pf_cur *k, size_t need)
{
    return pf_fail(k->c, "%s ends early (%zu more bytes needed at byte %zu "
                         "of %zu)",
                   k->what, need, k->at, k->n);
}

static int pf_take(pf_cur *k, size_t n, const uint8_t **out)
{
    if (k->n - k->at < n)
        return pf_short(k, n - (k->n - k->at));
    *out = k->p + k->at;
    k->at += n;
    return 0;
}

static int pf_u8(pf_cur *k, uint8_t *v)
{
    const uint8_t *p = NULL;
    if (pf_take(k, 1, &p))
        return -1;
    *v = *p;
    return 0;
}

static int pf_uvar(pf_cur *k, uint64_t *v)
{
    *v = 0; /* defined on failure too */
    uint8_t tag = 0;
    const uint8_t *p = NULL;
    if (pf_u8(k, &tag))
        return -1;
    if (tag < 251) {
        *v = tag;
    } else if (tag == 251) {
        if (pf_take(k, 2, &p))
            return -1;
        *v = (uint64_t)p[0] | (uint64_t)p[1] << 8;
    } else if (tag == 252) {
        if (pf_take(k, 4, &p))
            return -1;
        *v = pf_le32(p);
    } else if (tag == 253) {
        if (pf_take(k, 8, &p))
            return -1;
        *v = pf_le64(p);
    } else {
        return pf_fail(k->c, "%s: byte %zu: integer tag %u is not a 64-bit "
                             "varint",
                       k->what, k->at - 1, tag);
    }
    return 0;
}

static int pf_u32var(pf_cur *k, uint32_t *v)
{
    uint64_t x;
    if (pf_uvar(k, &x))
        return -1;
    if (x > UINT32_MAX)
        return pf_fail(k->c, "%s: byte %zu: %" PRIu64 " does not fit 32 bits",
                       k->what, k->at, x);
    *v = (uint32_t)x;
    return 0;
}

static int pf_ivar(pf_cur *k, int64_t *v)
{
    uint64_t z;
    *v = 0; /* defined on failure too */
    if (pf_uvar(k, &z))
        return -1;
    uint64_t u = (z >> 1) ^ (0 - (z & 1));
    memcpy(v, &u, sizeof u);
    return 0;
}

static int pf_option(pf_cur *k, int *some)
{
    uint8_t tag;
    if (pf_u8(k, &tag))
        return -1;
    if (tag > 1)
        return pf_fail(k->c, "%s: byte %zu: option tag %u is neither 0 nor 1",
                       k->what, k->at - 1, tag);
    *some = tag;
    return 0;
}

/* A length-prefixed byte string (a Vec<u8> or, with utf8, a String). */
static int pf_bytes(pf_cur *k, int utf8, const uint8_t **s, size_t *n)
{
    uint64_t len = 0;
    if (pf_uvar(k, &len))
        return -1;
    if (len > k->n - k->at)
        return pf_fail(k->c, "%s: byte %zu: a length of %" PRIu64
                             " runs past the end (%zu bytes left)",
                       k->what, k->at, len, k->n - k->at);
    *s = k->p + k->at;
    *n = (size_t)len;
    k->at += (size_t)len;
    if (utf8 && pf_utf8_prefix(*s, *n) != *n)
        return pf_fail(k->c, "%s: byte %zu: a string is not valid UTF-8",
                       k->what, k->at - *n);
    return 0;
}

/* ---- names and threads -------------------------------------------------- */

/* The entry for a scope identity, created when missing (pass 1 only). */
static int pf_name_get(pf_ctx *c, const uint8_t *key, size_t n, size_t *out,
                       int *created)
{
    *created = 0;
    if (pf_map_find(&c->name_map, key, n, out))
        return 0;
    if (c->w)
        return pf_fail(c, "a scope identity changed between the two reads of "
                          "the file");
    if (pf_reserve(c, (void **)&c->names, &c->cap_names, c->n_names + 1,
                   sizeof *c->names))
        return -1;
    if (pf_map_put(c, &c->name_map, key, n))
        return -1;
    memset(&c->names[c->n_names], 0, sizeof c->names[0]);
    *out = c->n_names++;
    *created = 1;
    return 0;
}

static int pf_key_reserve(pf_ctx *c, size_t n)
{
    return pf_reserve(c, (void **)&c->key, &c->key_cap, n, 1);
}

/* The entry of PFD4 scope id `id`. */
static int pf_name_by_id(pf_ctx *c, uint32_t id, size_t *out)
{
    uint8_t key[5] = {'#', (uint8_t)id, (uint8_t)(id >> 8),
                      (uint8_t)(id >> 16), (uint8_t)(id >> 24)};
    int created;
    if (id == 0)
        return pf_fail(c, "scope id 0 (puffin ids start at 1)");
    if (pf_name_get(c, key, sizeof key, out, &created))
        return -1;
    if (created) {
        c->names[*out].puffin_id = id;
        if (id > c->max_puffin_id)
            c->max_puffin_id = id;
    }
    return 0;
}

/* Split "path:123" into a file and a line; anything else is all file. */
static int pf_set_location(pf_ctx *c, pf_name *e, const uint8_t *loc,
                           size_t n)
{
    size_t colon = n;
    while (colon > 0 && loc[colon - 1] >= '0' && loc[colon - 1] <= '9')
        colon--;
    uint64_t line = 0;
    if (colon > 1 && colon < n && n - colon <= 9 && loc[colon - 1] == ':') {
        for (size_t i = colon; i < n; i++)
            line = line * 10 + (uint64_t)(loc[i] - '0');
        n = colon - 1;
    }
    e->line = (uint32_t)line;
    if (n == 0)
        return 0;
    e->file = pf_strdup(c, loc, n);
    return e->file ? 0 : -1;
}

/* The entry of a PFD1..3 scope named inline. */
static int pf_name_by_text(pf_ctx *c, const uint8_t *name, size_t nn,
                           const uint8_t *loc, size_t nl, size_t *out)
{
    size_t n = 1 + 1 + nn + nl;
    int created;
    if (pf_key_reserve(c, n))
        return -1;
    c->key[0] = '$';
    c->key[1] = (uint8_t)nn;
    memcpy(c->key + 2, name, nn);
    memcpy(c->key + 2 + nn, loc, nl);
    if (pf_name_get(c, c->key, n, out, &created))
        return -1;
    if (created) {
        pf_name *e = &c->names[*out];
        e->named = 1;
        static const char empty[] = "(empty name)";
        nn = pf_utf8_prefix(name, nn);
        e->text = nn ? pf_strdup(c, name, nn)
                     : pf_strdup(c, (const uint8_t *)empty, sizeof empty - 1);
        if (!e->text)
            return -1;
        if (pf_set_location(c, e, loc, pf_utf8_prefix(loc, nl)))
            return -1;
    }
    return 0;
}

/* The thread keyed by puffin's ThreadInfo (start time and name). */
static int pf_thread_get(pf_ctx *c, int has_start, int64_t start,
                         const uint8_t *name, size_t n, uint32_t *tid)
{
    size_t k = 9 + n, v;
    if (pf_key_reserve(c, k))
        return -1;
    uint64_t u;
    memcpy(&u, &start, sizeof u);
    c->key[0] = (uint8_t)has_start;
    for (int i = 0; i < 8; i++)
        c->key[1 + i] = has_start ? (uint8_t)(u >> (8 * i)) : 0;
    memcpy(c->key + 9, name, n);
    if (pf_map_find(&c->thread_map, c->key, k, &v)) {
        *tid = (uint32_t)v;
        return 0;
    }
    if (c->w)
        return pf_fail(c, "a thread changed between the two reads of the "
                          "file");
    if (c->n_threads >= CAP_MAX_THREADS)
        return pf_fail(c, "more than %u threads", CAP_MAX_THREADS);
    if (pf_reserve(c, (void **)&c->threads, &c->cap_threads,
                   c->n_threads + 1, sizeof *c->threads))
        return -1;
    if (pf_map_put(c, &c->thread_map, c->key, k))
        return -1;
    c->threads[c->n_threads].name = pf_strdup(c, name, n);
    if (!c->threads[c->n_threads].name)
        return -1;
    *tid = (uint32_t)c->n_threads++;
    return 0;
}

/* ---- streams ------------------------------------------------------------ */

static uint64_t pf_tick(const pf_ctx *c, int64_t ns)
{
    return (uint64_t)ns - (uint64_t)c->min_ns;
}

static void pf_saw_time(pf_ctx *c, int64_t ns)
{
    if (!c->have_time || ns < c->min_ns)
        c->min_ns = ns;
    c->have_time = 1;
}

static int pf_writer_failed(pf_ctx *c, cap_result r)
{
    int e = r == CAP_E_IO ? cap_writer_errno(c->w) : 0;
    c->wres = r;
    return pf_fail(c, "cannot write the capture: %s%s%s",
                   cap_result_message(r), e ? ": " : "", e ? strerror(e) : "");
}

/* Walk one thread's stream: in pass 1 validate it and collect its scope
 * identities; in pass 2 write its scopes on thread `tid`. */
static int pf_walk(pf_ctx *c, const uint8_t *s, size_t n, uint32_t tid)
{
    const int v4 = c->version >= 4; /* PFD4 and PFD5 streams: ids */
    size_t pos = 0, depth = 0;
    for (;;) {
        size_t limit = depth ? c->stack[depth - 1].end : n;
        if (pos == limit) {
            if (depth == 0)
                return 0;
            pf_open *o = &c->stack[--depth];
            /* Room for ')' and the stop time was checked at the '('. */
            if (s[pos] != ')')
                return pf_fail(c, "stream of thread %u, byte %zu: expected "
                                  "')' closing a scope, found 0x%02x",
                               tid, pos, s[pos]);
            int64_t stop = (int64_t)pf_le64(s + pos + 1);
            if (stop < o->start_ns)
                return pf_fail(c, "stream of thread %u, byte %zu: a scope "
                                  "ends (%" PRId64 ") before it begins "
                                  "(%" PRId64 ")",
                               tid, pos, stop, o->start_ns);
            pos += 9;
            if (c->w && o->emitted) {
                cap_result r =
                    cap_writer_scope_end(c->w, tid, pf_tick(c, stop));
                if (r != CAP_OK)
                    return pf_writer_failed(c, r);
            }
            continue;
        }
        size_t left = limit - pos;
        size_t at = pos;
        if (s[pos] != '(')
            return pf_fail(c, "stream of thread %u, byte %zu: expected '(' "
                              "opening a scope, found 0x%02x",
                           tid, pos, s[pos]);
        if (left < (v4 ? PF_MIN_SCOPE_V4 : PF_MIN_SCOPE_V3))
            goto short_scope;
        pos++;
        size_t entry = 0;
        int64_t start;
        if (v4) {
            uint32_t id = pf_le32(s + pos);
            start = (int64_t)pf_le64(s + pos + 4);
            pos += 12;
            if (pf_name_by_id(c, id, &entry))
                return -1;
        } else {
            start = (int64_t)pf_le64(s + pos);
            pos += 8;
            const uint8_t *name = s + pos + 1;
            size_t nn = s[pos];
            if (limit - pos < 1 + nn + 1)
                goto short_scope;
            pos += 1 + nn;
            const uint8_t *loc = s + pos + 1;
            size_t nl = s[pos];
            if (limit - pos < 1 + nl + 1)
                goto short_scope;
            pos += 1 + nl;
            if (pf_name_by_text(c, name, nn, loc, nl, &entry))
                return -1;
        }
        size_t nd = s[pos]; /* the data string, not imported */
        if (limit - pos < 1 + nd + 8)
            goto short_scope;
        pos += 1 + nd;
        uint64_t size = pf_le64(s + pos);
        pos += 8;
        if (size == UINT64_MAX)
            return pf_fail(c, "stream of thread %u, byte %zu: a scope was "
                              "never closed",
                           tid, at);
        if (size > limit - pos || limit - pos - size < 9)
            return pf_fail(c, "stream of thread %u, byte %zu: a scope's "
                              "%" PRIu64 " bytes of children and its end "
                              "run past %s (byte %zu)",
                           tid, at, size,
                           depth ? "its parent" : "the stream", limit);
        if (pf_reserve(c, (void **)&c->stack, &c->cap_stack, depth + 1,
                       sizeof *c->stack))
            return -1;
        pf_open *o = &c->stack[depth++];
        o->end = pos + (size_t)size;
        o->start_ns = start;
        o->emitted = 0;
        if (!c->w) {
            c->scopes++;
            pf_saw_time(c, start);
        } else if (depth <= CAP_MAX_DEPTH) {
            cap_result r = cap_writer_scope_begin(c->w, tid,
                                                  c->names[entry].id,
                                                  pf_tick(c, start));
            if (r != CAP_OK)
                return pf_writer_failed(c, r);
            o->emitted = 1;
        } else {
            c->too_deep++;
        }
        continue;
    short_scope:
        return pf_fail(c, "stream of thread %u, byte %zu: a scope header "
                          "runs past %s (byte %zu)",
                       tid, at, depth ? "its parent" : "the stream", limit);
    }
}

/* The thread-streams map: parse it; with `walk`, also walk each stream. */
static int pf_streams(pf_ctx *c, pf_cur *k, int walk)
{
    uint64_t count;
    if (pf_uvar(k, &count))
        return -1;
    if (count > (k->n - k->at) / PF_MIN_THREAD_BYTES)
        return pf_fail(c, "%s: %" PRIu64 " threads cannot fit in %zu bytes",
                       k->what, count, k->n - k->at);
    for (uint64_t i = 0; i < count; i++) {
        int has_start = 0;
        int64_t start = 0, r0, r1;
        const uint8_t *name = NULL, *stream = NULL;
        size_t nn = 0, ns = 0;
        uint64_t num_scopes, depth;
        if (pf_option(k, &has_start) || (has_start && pf_ivar(k, &start)) ||
            pf_bytes(k, 1, &name, &nn) || pf_bytes(k, 0, &stream, &ns) ||
            pf_uvar(k, &num_scopes) || pf_uvar(k, &depth) ||
            pf_ivar(k, &r0) || pf_ivar(k, &r1))
            return -1;
        if (walk) {
            uint32_t tid = 0;
            if (pf_thread_get(c, has_start, start, name, nn, &tid) ||
                pf_walk(c, stream, ns, tid))
                return -1;
        }
    }
    return 0;
}

/* PFD4 scope details: name the ids they list (the first name wins). */
static int pf_details(pf_ctx *c, const uint8_t *p, size_t n)
{
    pf_cur k = {c, p, n, 0, "scope details"};
    uint64_t count;
    if (pf_uvar(&k, &count))
        return -1;
    if (count > (n - k.at) / PF_MIN_DETAIL_BYTES)
        return pf_fail(c, "scope details: %" PRIu64 " entries cannot fit in "
                          "%zu bytes",
                       count, n - k.at);
    for (uint64_t i = 0; i < count; i++) {
        int has_id = 0, has_name = 0;
        uint32_t id = 0, line = 0;
        const uint8_t *sname = NULL, *fname, *file;
        size_t nsn = 0, nfn, nf;
        if (pf_option(&k, &has_id) || (has_id && pf_u32var(&k, &id)) ||
            pf_option(&k, &has_name) ||
            (has_name && pf_bytes(&k, 1, &sname, &nsn)) ||
            pf_bytes(&k, 1, &fname, &nfn) || pf_bytes(&k, 1, &file, &nf) ||
            pf_u32var(&k, &line))
            return -1;
        if (!has_id)
            continue; /* not registered: nothing can refer to it */
        size_t entry = 0;
        if (pf_name_by_id(c, id, &entry))
            return -1;
        pf_name *e = &c->names[entry];
        if (e->named)
            continue;
        if (nsn) {
            e->text = pf_strdup(c, sname, nsn);
        } else if (nfn) {
            e->text = pf_strdup(c, fname, nfn);
        } else {
            char tmp[48];
            int len = snprintf(tmp, sizeof tmp, "(puffin scope %" PRIu32
                                                " without a name)",
                               id);
            e->text = pf_strdup(c, (const uint8_t *)tmp, (size_t)len);
        }
        if (!e->text)
            return -1;
        e->file = nf ? pf_strdup(c, file, nf) : NULL;
        if (nf && !e->file)
            return -1;
        e->line = line;
        e->named = 1;
    }
    return 0;
}

/* ---- records ------------------------------------------------------------ */

/* Read n bytes of the input into *buf. */
static int pf_read(pf_ctx *c, uint8_t **buf, size_t *cap, size_t n,
                   const char *what)
{
    if (n > c->size - c->pos)
        return pf_fail(c, "truncated: %s: %zu bytes needed, %" PRIu64
                          " left in the file",
                       what, n, c->size - c->pos);
    if (pf_reserve(c, (void **)buf, cap, n ? n : 1, 1))
        return -1;
    if (n && fread(*buf, 1, n, c->in) != n)
        return pf_fail(c, "cannot read %s: %s", what,
                       ferror(c->in) ? strerror(errno) : "unexpected end");
    c->pos += n;
    return 0;
}

static int pf_read_u32(pf_ctx *c, uint32_t *v, const char *what)
{
    uint8_t b[4];
    if (c->size - c->pos < 4)
        return pf_fail(c, "truncated: %s: 4 bytes needed, %" PRIu64
                          " left in the file",
                       what, c->size - c->pos);
    if (fread(b, 1, 4, c->in) != 4)
        return pf_fail(c, "cannot read %s: %s", what,
                       ferror(c->in) ? strerror(errno) : "unexpected end");
    c->pos += 4;
    *v = pf_le32(b);
    return 0;
}

/* A byte of the input, for pf_measure. */
static int pf_fbyte(pf_ctx *c, uint8_t *b, const char *what)
{
    if (c->pos == c->size)
        return pf_fail(c, "truncated: %s: the file ends inside it", what);
    int ch = fgetc(c->in);
    if (ch == EOF)
        return pf_fail(c, "cannot read %s: %s", what,
                       ferror(c->in) ? strerror(errno) : "unexpected end");
    c->pos++;
    *b = (uint8_t)ch;
    return 0;
}

/* A bincode varint of the input, for pf_measure. */
static int pf_fvar(pf_ctx *c, uint64_t *v, const char *what)
{
    uint8_t t = 0, b = 0;
    if (pf_fbyte(c, &t, what))
        return -1;
    if (t < 251) {
        *v = t;
        return 0;
    }
    if (t > 253)
        return pf_fail(c, "%s: a varint tag %u (puffin writes none above "
                          "253)",
                       what, t);
    unsigned n = t == 251 ? 2 : t == 252 ? 4 : 8;
    *v = 0;
    for (unsigned i = 0; i < n; i++) {
        if (pf_fbyte(c, &b, what))
            return -1;
        *v |= (uint64_t)b << (8 * i);
    }
    return 0;
}

/* Skip a bincode string of the input, for pf_measure. */
static int pf_fskip_str(pf_ctx *c, const char *what)
{
    uint64_t n;
    if (pf_fvar(c, &n, what))
        return -1;
    if (n > c->size - c->pos)
        return pf_fail(c, "truncated: %s: a string of %" PRIu64 " bytes, %"
                          PRIu64 " left in the file",
                       what, n, c->size - c->pos);
    if (fseeko(c->in, (off_t)n, SEEK_CUR) != 0)
        return pf_fail(c, "cannot seek in %s: %s", what, strerror(errno));
    c->pos += n;
    return 0;
}

/* PFD5 writes its meta (details 0) and its scope details (details 1) as
 * bare bincode, without the u32 size PFD4 puts before them: find their
 * size by walking them, then go back to their start (the caller reads
 * them as PFD4's, with all of PFD4's checks). */
static int pf_measure(pf_ctx *c, int details, uint32_t *size)
{
    uint64_t start = c->pos, v;
    const char *what = details ? "the scope details" : "the frame meta";
    if (!details) { /* frame_index, range_ns (2), num_bytes, num_scopes */
        for (int i = 0; i < 5; i++)
            if (pf_fvar(c, &v, what))
                return -1;
    } else {
        uint64_t count;
        if (pf_fvar(c, &count, what))
            return -1;
        if (count > (c->size - c->pos) / PF_MIN_DETAIL_BYTES)
            return pf_fail(c, "scope details: %" PRIu64 " entries cannot "
                              "fit in the %" PRIu64 " bytes left",
                           count, c->size - c->pos);
        for (uint64_t i = 0; i < count; i++) {
            uint8_t opt = 0;
            if (pf_fbyte(c, &opt, what) || opt > 1 ||
                (opt && pf_fvar(c, &v, what)) || pf_fbyte(c, &opt, what) ||
                opt > 1 || (opt && pf_fskip_str(c, what)) ||
                pf_fskip_str(c, what) || pf_fskip_str(c, what) ||
                pf_fvar(c, &v, what))
                return opt > 1 ? pf_fail(c, "%s: an option tag %u (0 or 1 "
                                            "expected)", what, opt)
                               : -1;
        }
    }
    if (c->pos - start > UINT32_MAX)
        return pf_fail(c, "%s: over 4 GiB", what);
    *size = (uint32_t)(c->pos - start);
    if (fseeko(c->in, (off_t)start, SEEK_SET) != 0)
        return pf_fail(c, "cannot seek back in %s: %s", what,
                       strerror(errno));
    c->pos = start;
    return 0;
}

/* Unpack `n` bytes of c->raw compressed as `kind`: *out, *len. */
static int pf_unpack(pf_ctx *c, unsigned kind, size_t n, const uint8_t **out,
                     size_t *len)
{
    const uint8_t *src = c->raw;
    if (kind == 0) {
        *out = src;
        *len = n;
        return 0;
    }
    if (kind == 1) {
        if (n < 4)
            return pf_fail(c, "lz4 data (%zu bytes) is shorter than its size "
                              "prefix",
                           n);
        uint64_t size = pf_le32(src);
        uint64_t bound = (uint64_t)(n - 4) * PF_LZ4_RATIO + 16;
        if (size > bound || size > PF_MAX_UNPACKED || n - 4 > INT_MAX)
            return pf_fail(c, "lz4 data claims %" PRIu64 " bytes from %zu: "
                              "more than lz4 can produce (or than %zu)",
                           size, n - 4, PF_MAX_UNPACKED);
        if (pf_reserve(c, (void **)&c->unpacked, &c->unpacked_cap,
                       size ? (size_t)size : 1, 1))
            return -1;
        int got = LZ4_decompress_safe((const char *)src + 4,
                                      (char *)c->unpacked, (int)(n - 4),
                                      (int)size);
        if (got < 0 || (uint64_t)got != size)
            return pf_fail(c, "lz4 data is corrupt");
        *out = c->unpacked;
        *len = (size_t)size;
        return 0;
    }
    if (kind == 2) {
        uint64_t limit = (uint64_t)n * PF_ZSTD_RATIO + (128u << 10);
        if (limit > PF_MAX_UNPACKED)
            limit = PF_MAX_UNPACKED;
        if (!c->zstd && !(c->zstd = ZSTD_createDCtx()))
            return pf_fail(c, "out of memory");
        ZSTD_DCtx_reset(c->zstd, ZSTD_reset_session_only);
        ZSTD_inBuffer in = {src, n, 0};
        size_t have = 0, hint = 1;
        for (;;) {
            size_t room = c->unpacked_cap < limit ? c->unpacked_cap
                                                  : (size_t)limit;
            if (have == room) {
                if (have >= limit)
                    return pf_fail(c, "zstd data unpacks to more than "
                                      "%" PRIu64 " bytes",
                                   limit);
                size_t want = have ? have * 2 : (size_t)n * 4 + 4096;
                if (want > limit)
                    want = (size_t)limit;
                if (pf_reserve(c, (void **)&c->unpacked, &c->unpacked_cap,
                               want, 1))
                    return -1;
                room = c->unpacked_cap < limit ? c->unpacked_cap
                                               : (size_t)limit;
            }
            size_t before_in = in.pos;
            ZSTD_outBuffer ob = {c->unpacked, room, have};
            hint = ZSTD_decompressStream(c->zstd, &ob, &in);
            if (ZSTD_isError(hint))
                return pf_fail(c, "zstd data is corrupt: %s",
                               ZSTD_getErrorName(hint));
            int progress = ob.pos != have || in.pos != before_in;
            have = ob.pos;
            if (in.pos == in.size && (hint == 0 || ob.pos < ob.size))
                break;
            if (!progress && ob.pos < ob.size)
                return pf_fail(c, "zstd data is corrupt: no progress");
        }
        if (hint != 0)
            return pf_fail(c, "zstd data ends inside a frame");
        *out = c->unpacked;
        *len = have;
        return 0;
    }
    return pf_fail(c, "unknown compression kind %u (puffin knows 0 stored, "
                      "1 lz4, 2 zstd)",
                   kind);
}

/* Read the frame record whose tag the caller has read (c->version set);
 * pass 1 fills *f, pass 2 writes the frame's scopes. */
static int pf_record(pf_ctx *c, uint32_t tag_len, pf_frame *f)
{
    const uint8_t *body;
    size_t len;
    uint64_t num;
    if (c->version <= 1) {
        /* A whole frame in bincode, zstd-compressed from PFD1 on. */
        uint32_t n = tag_len;
        if (c->version == 1 && pf_read_u32(c, &n, "the compressed size"))
            return -1;
        if (pf_read(c, &c->raw, &c->raw_cap, n, "the frame"))
            return -1;
        if (pf_unpack(c, c->version == 1 ? 2 : 0, n, &body, &len))
            return -1;
        pf_cur k = {c, body, len, 0, "frame"};
        if (pf_uvar(&k, &f->index))
            return -1;
        size_t streams_at = k.at;
        if (pf_streams(c, &k, 0) || pf_ivar(&k, &f->begin_ns) ||
            pf_ivar(&k, &f->end_ns) || pf_uvar(&k, &num) ||
            pf_uvar(&k, &num))
            return -1;
        if (k.at != k.n)
            return pf_fail(c, "frame: %zu bytes after its end", k.n - k.at);
        k.at = streams_at;
        return pf_streams(c, &k, 1);
    }
    uint32_t m, n, s;
    uint8_t kind = 2;
    if (c->version == 5 ? pf_measure(c, 0, &m)
                        : pf_read_u32(c, &m, "the meta size"))
        return -1;
    if (pf_read(c, &c->raw, &c->raw_cap, m, "the frame meta"))
        return -1;
    pf_cur meta = {c, c->raw, m, 0, "frame meta"};
    if (pf_uvar(&meta, &f->index) || pf_ivar(&meta, &f->begin_ns) ||
        pf_ivar(&meta, &f->end_ns) || pf_uvar(&meta, &num) ||
        pf_uvar(&meta, &num))
        return -1;
    if (meta.at != meta.n)
        return pf_fail(c, "frame meta: %zu bytes after its end",
                       meta.n - meta.at);
    if (pf_read_u32(c, &n, "the streams size"))
        return -1;
    if (c->version >= 3) {
        if (c->size - c->pos < 1)
            return pf_fail(c, "truncated: the compression kind: 1 byte "
                              "needed, 0 left in the file");
        if (fread(&kind, 1, 1, c->in) != 1)
            return pf_fail(c, "cannot read the compression kind");
        c->pos++;
    }
    if (pf_read(c, &c->raw, &c->raw_cap, n, "the thread streams") ||
        pf_unpack(c, kind, n, &body, &len))
        return -1;
    /* Details come before the streams are walked: in pass 1 they only name
     * ids, and reading them first keeps the file position simple. */
    if (c->version >= 4) {
        if (c->version == 5 ? pf_measure(c, 1, &s)
                            : pf_read_u32(c, &s, "the scope details size"))
            return -1;
        if (pf_read(c, &c->details, &c->details_cap, s, "the scope details"))
            return -1;
        if (!c->w && pf_details(c, c->details, s))
            return -1;
    }
    pf_cur k = {c, body, len, 0, "thread streams"};
    if (pf_streams(c, &k, 1))
        return -1;
    if (k.at != k.n)
        return pf_fail(c, "thread streams: %zu bytes after their end",
                       k.n - k.at);
    return 0;
}

/* Read the record's tag at c->pos and set c->version. Returns 1 at the end
 * of the file or at the end marker, 0 for a record, -1 on error. */
static int pf_tag(pf_ctx *c, uint32_t *tag_len)
{
    uint8_t t[4];
    if (c->pos == c->size)
        return 1;
    if (c->size - c->pos < 4)
        return pf_fail(c, "truncated: %" PRIu64 " stray bytes where a frame "
                          "record should begin",
                       c->size - c->pos);
    if (fread(t, 1, 4, c->in) != 4)
        return pf_fail(c, "cannot read: %s",
                       ferror(c->in) ? strerror(errno) : "unexpected end");
    c->pos += 4;
    *tag_len = pf_le32(t);
    if (*tag_len == 0) {
        if (c->pos != c->size)
            pf_warn(c, "%" PRIu64 " bytes after the end-of-frames marker "
                       "ignored",
                    c->size - c->pos);
        return 1;
    }
    if (memcmp(t, "PFD", 3) != 0) {
        c->version = 0; /* an unversioned frame: t is its size */
        return 0;
    }
    if (t[3] >= '1' && t[3] <= '5') {
        c->version = t[3] - '0';
        return 0;
    }
    if (t[3] == '0')
        return pf_fail(c, "frame record version PFD0 (lz4_flex, before "
                          "2021-11) is not supported; puffin itself no longer "
                          "reads it");
    return pf_fail(c, "unknown frame record version 'PFD%c' (this importer "
                      "reads PFD1 to PFD5)",
                   t[3] >= 0x20 && t[3] < 0x7f ? t[3] : '?');
}

static int pf_frame_order(const void *a, const void *b)
{
    const pf_frame *x = a, *y = b;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

/* Pass 1: validate every record, collect frames, threads, names, times. */
static int pf_scan(pf_ctx *c)
{
    uint8_t magic[4];
    if (c->size == 0)
        return pf_fail(c, "empty file (a puffin capture begins with 'PUF0')");
    if (c->size < 4 || fread(magic, 1, 4, c->in) != 4)
        return pf_fail(c, "not a puffin capture: %" PRIu64 " bytes, too short "
                          "for the 'PUF0' magic",
                       c->size);
    if (memcmp(magic, "PUF0", 4) != 0) {
        char shown[20];
        size_t o = 0;
        for (int i = 0; i < 4; i++) {
            if (magic[i] >= 0x20 && magic[i] < 0x7f && magic[i] != '\\')
                shown[o++] = (char)magic[i];
            else
                o += (size_t)snprintf(shown + o, sizeof shown - o, "\\x%02x",
                                      magic[i]);
        }
        shown[o] = '\0';
        return pf_fail(c, "not a puffin capture: begins with '%s', expected "
                          "'PUF0'",
                       shown);
    }
    c->pos = 4;
    for (;;) {
        uint32_t tag_len;
        c->rec_offset = c->pos;
        c->ordinal++;
        int r = pf_tag(c, &tag_len);
        if (r < 0)
            return -1;
        if (r > 0)
            break;
        pf_frame f = {0, 0, 0, c->rec_offset, c->ordinal};
        if (pf_record(c, tag_len, &f))
            return -1;
        if (f.end_ns < f.begin_ns)
            return pf_fail(c, "frame %" PRIu64 " ends (%" PRId64 " ns) before "
                              "it begins (%" PRId64 " ns)",
                           f.index, f.end_ns, f.begin_ns);
        pf_saw_time(c, f.begin_ns);
        c->versions |= 1u << c->version;
        if (pf_reserve(c, (void **)&c->frames, &c->cap_frames,
                       c->n_frames + 1, sizeof *c->frames))
            return -1;
        c->frames[c->n_frames++] = f;
    }
    c->ordinal = 0;
    return 0;
}

static int pf_by_puffin_id(const void *a, const void *b)
{
    uint32_t x = (*(pf_name *const *)a)->puffin_id;
    uint32_t y = (*(pf_name *const *)b)->puffin_id;
    return (x > y) - (x < y);
}

/* Give every identity its libcapture id. PFD4 ids keep their number (what
 * puffin's own viewer shows) unless that would leave a long run of unused
 * ids: libcapture's tables are indexed by id, so a file must not make them
 * large with one huge id; then they are renumbered 1.. in their order.
 * Names of PFD1..3 streams are numbered after the PFD4 ids. */
static int pf_assign_ids(pf_ctx *c)
{
    uint64_t next = 1;
    size_t n_puffin = 0;
    for (size_t i = 0; i < c->n_names; i++)
        n_puffin += c->names[i].puffin_id != 0;
    if (c->max_puffin_id <= n_puffin + PF_ID_SLACK) {
        for (size_t i = 0; i < c->n_names; i++)
            if (c->names[i].puffin_id)
                c->names[i].id = c->names[i].puffin_id;
        next = (uint64_t)c->max_puffin_id + 1;
    } else {
        pf_name **order = malloc(n_puffin * sizeof *order);
        if (!order)
            return pf_fail(c, "out of memory");
        size_t k = 0;
        for (size_t i = 0; i < c->n_names; i++)
            if (c->names[i].puffin_id)
                order[k++] = &c->names[i];
        qsort(order, k, sizeof *order, pf_by_puffin_id);
        for (size_t i = 0; i < k; i++)
            order[i]->id = (uint32_t)next++;
        free(order);
    }
    for (size_t i = 0; i < c->n_names; i++) {
        pf_name *e = &c->names[i];
        if (e->puffin_id)
            continue;
        if (next > CAP_MAX_NAME_ID)
            return pf_fail(c, "too many distinct scope names");
        e->id = (uint32_t)next++;
    }
    return 0;
}

static void pf_warn_unnamed(pf_ctx *c)
{
    size_t unnamed = 0;
    char list[160] = "";
    size_t o = 0;
    for (size_t i = 0; i < c->n_names; i++) {
        if (c->names[i].named)
            continue;
        if (unnamed < PF_MAX_WARN_IDS && o < sizeof list)
            o += (size_t)snprintf(list + o, sizeof list - o, "%s%" PRIu32,
                                  unnamed ? ", " : "", c->names[i].puffin_id);
        unnamed++;
    }
    if (unnamed == 0)
        return;
    pf_warn(c, "%zu puffin scope id%s never named anywhere in the file "
               "(%s%s): puffin writes a scope's name only with the frame where "
               "it first ran, and that frame is not in this file; these "
               "scopes stay unnamed",
            unnamed, unnamed == 1 ? " is" : "s are", list,
            unnamed > PF_MAX_WARN_IDS ? ", ..." : "");
}

static const char *pf_basename(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Remove a partly written output, if it is a plain file (never a device
 * such as /dev/full, nor a pipe). */
static void pf_remove_output(const char *out)
{
    struct stat st;
    if (stat(out, &st) == 0 && S_ISREG(st.st_mode))
        remove(out);
}

/* Pass 2: write the capture. Returns CVT_OK or an exit code. */
static int pf_write(pf_ctx *c, const char *out)
{
    static const char *const version_names[] = {"unversioned", "PFD1",
                                                "PFD2", "PFD3", "PFD4", "PFD5"};
    char versions[48] = "";
    size_t o = 0;
    for (int v = 0; v <= 4; v++)
        if (c->versions & (1u << v))
            o += (size_t)snprintf(versions + o, sizeof versions - o, "%s%s",
                                  o ? "," : "", version_names[v]);
    cap_meta_kv meta[] = {
        {"source_format", "puffin"},
        {"source_file", pf_basename(c->path)},
        {"puffin_records", versions[0] ? versions : "none"},
    };
    cap_writer_options opt;
    memset(&opt, 0, sizeof opt);
    opt.meta = meta;
    opt.meta_count = sizeof meta / sizeof meta[0];
    opt.clock_source = "imported";
    opt.tick_period_ns = 1.0;
    opt.format_major = c->format_major;
    opt.format_minor = c->format_major == 1; /* 1.1: name flags */
    opt.no_frame_list = c->no_frame_list;
    /* puffin's clock counts ns since 1970 from 2021-11 on; earlier files
     * count from the program's start. Only the former gives a date. */
    if (c->have_time && c->min_ns >= INT64_C(946684800000000000))
        opt.origin_unix_ns = c->min_ns;

    errno = 0;
    cap_result r = cap_writer_open_path(&c->w, out, &opt);
    if (r != CAP_OK) {
        int e = errno;
        pf_error(c, out, "cannot create the capture: %s%s%s",
                 cap_result_message(r), e ? ": " : "", e ? strerror(e) : "");
        c->w = NULL;
        return CVT_EXIT_OUTPUT;
    }
    for (size_t i = 0; i < c->n_names && r == CAP_OK; i++) {
        const pf_name *e = &c->names[i];
        if (e->named)
            r = cap_writer_name(c->w, e->id, e->text, e->file, e->line);
    }
    for (size_t i = 0; i < c->n_threads && r == CAP_OK; i++)
        r = cap_writer_thread(c->w, (uint32_t)i, c->threads[i].name);
    if (r != CAP_OK) {
        pf_writer_failed(c, r);
        goto fail;
    }

    uint64_t duplicates = 0;
    for (size_t i = 0; i < c->n_frames; i++) {
        const pf_frame *f = &c->frames[i];
        if (i > 0 && f->index == c->frames[i - 1].index) {
            duplicates++;
            continue;
        }
        uint32_t tag_len;
        c->ordinal = f->ordinal;
        c->rec_offset = f->offset;
        c->pos = f->offset;
        if (fseeko(c->in, (off_t)f->offset, SEEK_SET) != 0) {
            pf_fail(c, "cannot seek: %s", strerror(errno));
            goto fail;
        }
        pf_frame again = *f;
        if (pf_tag(c, &tag_len) != 0 || pf_record(c, tag_len, &again))
            goto fail;
        r = cap_writer_frame(c->w, f->index, pf_tick(c, f->begin_ns),
                             pf_tick(c, f->end_ns));
        if (r != CAP_OK) {
            pf_writer_failed(c, r);
            goto fail;
        }
    }
    r = cap_writer_close(c->w);
    c->w = NULL;
    if (r != CAP_OK) {
        pf_error(c, out, "cannot write the capture: %s",
                 cap_result_message(r));
        pf_remove_output(out);
        return CVT_EXIT_OUTPUT;
    }
    if (duplicates)
        pf_warn(c, "%" PRIu64 " frame record%s repeated an earlier frame "
                   "index and %s skipped",
                duplicates, duplicates == 1 ? "" : "s",
                duplicates == 1 ? "was" : "were");
    if (c->too_deep)
        pf_warn(c, "%" PRIu64 " scope%s nested deeper than %u levels %s "
                   "left out",
                c->too_deep, c->too_deep == 1 ? "" : "s", CAP_MAX_DEPTH,
                c->too_deep == 1 ? "was" : "were");
    return CVT_OK;

fail:
    cap_writer_abandon(c->w);
    c->w = NULL;
    pf_remove_output(out);
    if (c->wres != CAP_OK) {
        pf_error(c, out, "%s", c->err);
        return CVT_EXIT_OUTPUT;
    }
    pf_error(c, c->path, "frame record %" PRIu64 " at byte %" PRIu64
                         ", on the second read: %s",
             c->ordinal, c->rec_offset, c->err);
    return CVT_EXIT_INPUT;
}

static void pf_free(pf_ctx *c)
{
    if (c->in)
        fclose(c->in);
    free(c->raw);
    free(c->unpacked);
    free(c->details);
    ZSTD_freeDCtx(c->zstd);
    for (size_t i = 0; i < c->n_names; i++) {
        free(c->names[i].text);
        free(c->names[i].file);
    }
    free(c->names);
    cvt_strtab_free(&c->name_map);
    for (size_t i = 0; i < c->n_threads; i++)
        free(c->threads[i].name);
    free(c->threads);
    cvt_strtab_free(&c->thread_map);
    free(c->frames);
    free(c->stack);
    free(c->key);
}

cap_result cvt_puffin_to_cap(const char *in, const char *out,
                             const cvt_options *o)
{
    pf_ctx c;
    struct stat st, ost;
    int rc = CVT_EXIT_INPUT;
    memset(&c, 0, sizeof c);
    c.d.out = o && o->diag ? o->diag : stderr;
    c.path = in ? in : "(null)";
    c.d.file = c.path;
    c.format_major = o ? o->format_major : 0;
    c.no_frame_list = o ? o->no_frame_list : 0;
    if (!in || !out) {
        pf_error(&c, c.path, "no %s path given", in ? "output" : "input");
        return in ? CVT_EXIT_OUTPUT : CVT_EXIT_INPUT;
    }
    c.in = fopen(in, "rb");
    if (!c.in || fstat(fileno(c.in), &st) != 0) {
        pf_error(&c, in, "cannot open: %s", strerror(errno));
        goto done;
    }
    if (!S_ISREG(st.st_mode)) {
        pf_error(&c, in, "not a regular file");
        goto done;
    }
    if (stat(out, &ost) == 0 && ost.st_dev == st.st_dev &&
        ost.st_ino == st.st_ino) {
        pf_error(&c, out, "the output is the input file");
        rc = CVT_EXIT_OUTPUT;
        goto done;
    }
    c.size = (uint64_t)st.st_size;
    if (o && o->frame_scope)
        pf_warn(&c, "--frame-scope is ignored: puffin records its own frames");

    if (pf_scan(&c) || pf_assign_ids(&c)) {
        if (c.ordinal)
            pf_error(&c, in, "frame record %" PRIu64 " at byte %" PRIu64
                             ": %s",
                     c.ordinal, c.rec_offset, c.err);
        else
            pf_error(&c, in, "%s", c.err);
        goto done;
    }
    if (c.n_frames == 0)
        pf_warn(&c, "the file holds no frames");
    if (c.n_frames > 1)
        qsort(c.frames, c.n_frames, sizeof *c.frames, pf_frame_order);
    pf_warn_unnamed(&c);
    c.err[0] = '\0';
    rc = pf_write(&c, out);
done:
    pf_free(&c);
    return rc;
}
