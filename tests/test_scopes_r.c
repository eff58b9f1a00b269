/*
 * test_scopes_r - format 2.0's SCOPES_R section (format-spec "SCOPES_R
 * (0x0D)"): random events written as 2.0 read back exactly as the same
 * events written as 1.1; a section built by hand from the spec decodes to
 * the ticks the spec's arithmetic gives; every "malformed when" rule is
 * reported as damage, after the scopes before it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "capture/cap_reader.h"
#include "capture/cap_writer.h"
#include "format/format.h"

#define TMP_DIR_NAME "scopes_r"
#include "tmp_dir.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* ---- every event of a file, as comparable records ---------------------- */

typedef struct rec {
    int kind;
    uint64_t f[6];
    uint32_t stack[8]; /* the innermost ancestors */
} rec;

typedef struct recs {
    rec *v;
    size_t n, cap;
    cap_reader_stats st;
    unsigned major;
} recs;

static void put(recs *rs, const cap_event *ev)
{
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? rs->cap * 2 : 4096;
        rs->v = realloc(rs->v, rs->cap * sizeof *rs->v);
        assert_non_null(rs->v);
    }
    rec *r = &rs->v[rs->n++];
    memset(r, 0, sizeof *r);
    r->kind = ev->kind;
    if (ev->kind == CAP_EV_SCOPE) {
        const cap_ev_scope *s = &ev->u.scope;
        r->f[0] = s->tid;
        r->f[1] = s->name;
        r->f[2] = s->depth;
        r->f[3] = (uint64_t)s->begin_ns;
        r->f[4] = (uint64_t)s->end_ns;
        r->f[5] = (uint64_t)s->children_ns;
        for (uint32_t i = 0; i < 8 && i < s->depth; i++)
            r->stack[i] = s->stack[s->depth - 1 - i];
    } else if (ev->kind == CAP_EV_FRAME) {
        r->f[0] = ev->u.frame.index;
        r->f[1] = (uint64_t)ev->u.frame.begin_ns;
        r->f[2] = (uint64_t)ev->u.frame.end_ns;
    }
}

/* Read path whole, one event a call (batch 0) or `batch` a call. */
static recs read_recs(const char *path, size_t batch)
{
    recs rs = {0};
    cap_reader *r;
    char d[256];
    assert_int_equal(cap_reader_open(&r, path, d, sizeof d), CAP_OK);
    cap_reader_version(r, &rs.major, NULL);
    cap_event ev[64];
    cap_result res;
    for (;;) {
        size_t n = 1;
        res = batch ? cap_reader_next_batch(r, ev, batch, &n)
                    : cap_reader_next(r, ev);
        if (res == CAP_DONE)
            break;
        assert_int_equal(res, CAP_OK);
        for (size_t i = 0; i < n; i++)
            put(&rs, &ev[i]);
    }
    rs.st = *cap_reader_get_stats(r);
    cap_reader_close(r);
    return rs;
}

static void same_recs(const recs *a, const recs *b)
{
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++)
        if (memcmp(&a->v[i], &b->v[i], sizeof a->v[i]) != 0)
            fail_msg("event %zu differs (kind %d / %d)", i, a->v[i].kind,
                     b->v[i].kind);
    assert_int_equal(a->st.scopes, b->st.scopes);
    assert_int_equal(a->st.frames, b->st.frames);
    assert_int_equal(a->st.dropped_scopes, b->st.dropped_scopes);
    assert_int_equal(a->st.closed_at_end, b->st.closed_at_end);
    assert_int_equal(a->st.clock_backwards, b->st.clock_backwards);
    assert_int_equal(a->st.stray_ends, b->st.stray_ends);
    assert_int_equal(a->st.corrupt_chunks, 0);
}

/* Sections of each kind in the BLOCK chunks of the file at path. */
static void count_kinds(const char *path, unsigned counts[256])
{
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
    while (off + CAPF_CHUNK_HEADER_LEN <= n) {
        capf_chunk_header h;
        if (capf_chunk_header_decode(b + off, &h) != 0)
            break;
        uint8_t *p = b + off + CAPF_CHUNK_HEADER_LEN;
        off += CAPF_CHUNK_HEADER_LEN + h.stored;
        if (h.type != CAPF_CHUNK_BLOCK)
            continue;
        uint8_t *raw = malloc(h.raw + 1);
        assert_non_null(raw);
        if (h.flags & CAPF_CHUNK_FLAG_ZSTD)
            assert_int_equal(ZSTD_decompress(raw, h.raw, p, h.stored), h.raw);
        else
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
    free(b);
}

/* ---- random events, written as 1.1 and as 2.0 -------------------------- */

#define NAMES 40

/* Thread t's events: scopes with per-name jittered durations (so the 2.0
 * writer predicts them), deep runs past the depth limit, ends with
 * nothing open, timestamps going backwards, huge gaps (up to 2^56 ticks:
 * residuals whose hi part takes 8 bytes), ticks near 2^64, frames. */
static void write_random(const char *path, unsigned major, uint64_t seed,
                         int steady)
{
    cap_writer_options o = {.clock_source = "monotonic",
                            .tick_period_ns = 1.0,
                            .origin_tick = 1000,
                            .block_bytes = 4096,
                            .format_major = major,
                            .format_minor = 1};
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, &o), CAP_OK);
    for (uint32_t i = 1; i <= NAMES; i++) {
        char n[16];
        snprintf(n, sizeof n, "n%u", i);
        assert_int_equal(cap_writer_name(w, i, n, NULL, 0), CAP_OK);
    }
    for (uint32_t t = 0; t < 3; t++)
        assert_int_equal(cap_writer_thread(w, t, NULL), CAP_OK);
    rng_state = seed;
    uint64_t tick[3] = {5000, 5000, 5000};
    uint32_t depth[3] = {0, 0, 0};
    uint64_t frame = 0, fbegin = 5000;
    for (int step = 0; step < 60000; step++) {
        uint32_t t = (uint32_t)(rnd() % 3);
        uint64_t r = rnd();
        uint64_t d;
        if (steady)
            d = 26; /* a coarse clock under a steady loop */
        else if (r % 1000 == 0)
            d = (uint64_t)1 << (40 + rnd() % 17); /* up to 2^56 */
        else
            d = 100 * (1 + r % 7) + rnd() % 23; /* jitter around a mean */
        uint64_t at = tick[t] + d;
        if (!steady && r % 211 == 0)
            at = tick[t] - rnd() % 500; /* the clock went backwards */
        int begin = depth[t] == 0 || (rnd() % 100) < 50;
        if (!steady && step % 9000 == 4000) {
            /* past the depth limit and back */
            for (int i = 0; i < 1100; i++) {
                cap_result res = cap_writer_scope_begin(w, t, 1 + (uint32_t)(i % 3),
                                                        at += 3);
                assert_true(res == CAP_OK || res == CAP_E_LIMIT);
            }
            for (int i = 0; i < 1100; i++)
                assert_int_equal(cap_writer_scope_end(w, t, at += 2), CAP_OK);
            tick[t] = at;
            continue;
        }
        if (!steady && step % 7000 == 100) {
            /* everything closed, then an end with nothing open */
            for (; depth[t] > 0; depth[t]--)
                assert_int_equal(cap_writer_scope_end(w, t, at += 5), CAP_OK);
            assert_int_equal(cap_writer_scope_end(w, t, at), CAP_E_MISUSE);
        } else if (begin) {
            uint32_t name = 1 + (uint32_t)((rnd() >> 7) % NAMES);
            assert_int_equal(cap_writer_scope_begin(w, t, name, at), CAP_OK);
            depth[t]++;
        } else {
            assert_int_equal(cap_writer_scope_end(w, t, at), CAP_OK);
            depth[t]--;
        }
        if (at > tick[t])
            tick[t] = at;
        if (t == 0 && step % 500 == 499) {
            assert_int_equal(cap_writer_frame(w, frame++, fbegin, tick[0]),
                             CAP_OK);
            fbegin = tick[0];
        }
    }
    /* ticks near 2^64 on thread 2 */
    uint64_t hi = UINT64_MAX - 5000000;
    for (int i = 0; i < (steady ? 0 : 50); i++) {
        assert_int_equal(cap_writer_scope_begin(w, 2, 5, hi += 1000 + rnd() % 9),
                         CAP_OK);
        assert_int_equal(cap_writer_scope_end(w, 2, hi += 3000 + rnd() % 9),
                         CAP_OK);
    }
    uint64_t end = 0;
    for (int t = 0; t < 3; t++)
        if (tick[t] > end)
            end = tick[t];
    assert_int_equal(cap_writer_end_open_scopes(w, end), CAP_OK);
    assert_int_equal(cap_writer_close(w), CAP_OK);
}

static void random_events_read_back_as_in_1_1(void **state)
{
    (void)state;
    char p1[300], p2[300];
    snprintf(p1, sizeof p1, "%s/r1.cap", tmpdir);
    snprintf(p2, sizeof p2, "%s/r2.cap", tmpdir);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        for (int steady = 0; steady <= 1; steady++) {
            write_random(p1, 1, seed * 7919, steady);
            write_random(p2, 2, seed * 7919, steady);
            unsigned k1[256], k2[256];
            count_kinds(p1, k1);
            count_kinds(p2, k2);
            assert_int_equal(k1[CAPF_SEC_SCOPES_R], 0);
            if (steady) { /* deltas that repeat stay plain */
                assert_int_equal(k2[CAPF_SEC_SCOPES_R], 0);
                assert_true(k2[CAPF_SEC_SCOPES] > 0);
            } else {
                assert_true(k2[CAPF_SEC_SCOPES_R] > 10);
            }
            recs a = read_recs(p1, 0), b = read_recs(p2, 0),
                 c = read_recs(p2, 64);
            assert_int_equal(a.major, 1);
            assert_int_equal(b.major, 2);
            assert_true(a.st.scopes > 20000);
            if (!steady) {
                assert_true(a.st.clock_backwards > 0);
                assert_true(a.st.dropped_scopes > 0);
                assert_true(a.st.stray_ends > 0);
            }
            same_recs(&a, &b);
            same_recs(&b, &c);
            free(a.v);
            free(b.v);
            free(c.v);
        }
    }
}

/* ---- sections built by hand -------------------------------------------- */

/* A 2.0 file (1.x when major is 1) of one META chunk (monotonic clock,
 * period 1, origin 0) and two uncompressed BLOCKs: NAMES of ids 1 and 2,
 * then `body` as a section of `kind`; then a plain SCOPES section of
 * thread 1 with one scope of name 2 from tick 10 to 20 (read after any
 * damage in the first block). */
static void craft(const char *path, unsigned major, uint8_t kind,
                  const capf_buf *body)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    uint8_t h[CAPF_HEADER_LEN];
    capf_header_encode(h, (uint16_t)major, 0);
    fwrite(h, 1, sizeof h, f);
    capf_buf meta = {0}, kv = {0}, org = {0}, blk = {0}, blk2 = {0},
             names = {0}, after = {0};
    capf_buf_varint(&kv, 0);
    capf_buf_section(&meta, CAPF_SEC_META_KV, &kv);
    capf_buf_str(&org, "monotonic");
    capf_buf_f64(&org, 1.0);
    capf_buf_varint(&org, 0);
    capf_buf_varint(&org, 0);
    capf_buf_varint(&org, 0);
    capf_buf_section(&meta, CAPF_SEC_ORIGIN, &org);
    capf_buf_varint(&names, 2);
    for (uint32_t id = 1; id <= 2; id++) {
        capf_buf_varint(&names, id);
        capf_buf_str(&names, id == 1 ? "a" : "b");
        capf_buf_str(&names, "");
        capf_buf_varint(&names, 0);
    }
    capf_buf_section(&blk, CAPF_SEC_NAMES, &names);
    capf_buf_section(&blk, kind, body);
    const uint8_t plain[] = {1, 10, 0, 2, 2, 2, 0, 0, 10};
    capf_buf_bytes(&after, plain, sizeof plain);
    capf_buf_section(&blk2, CAPF_SEC_NAMES, &names);
    capf_buf_section(&blk2, CAPF_SEC_SCOPES, &after);
    for (int i = 0; i < 3; i++) {
        const capf_buf *p = i == 0 ? &meta : i == 1 ? &blk : &blk2;
        uint8_t ch[CAPF_CHUNK_HEADER_LEN];
        capf_chunk_header hd = {0};
        hd.type = i == 0 ? CAPF_CHUNK_META : CAPF_CHUNK_BLOCK;
        hd.stored = hd.raw = (uint32_t)p->len;
        hd.payload_crc = capf_crc32(p->data, p->len);
        capf_chunk_header_encode(ch, &hd);
        fwrite(ch, 1, sizeof ch, f);
        fwrite(p->data, 1, p->len, f);
    }
    assert_int_equal(fclose(f), 0);
    capf_buf_free(&meta);
    capf_buf_free(&kv);
    capf_buf_free(&org);
    capf_buf_free(&blk);
    capf_buf_free(&blk2);
    capf_buf_free(&names);
    capf_buf_free(&after);
}

/* A SCOPES_R body of thread 0 from the parts given. */
typedef struct sr_parts {
    uint64_t base, depth;
    const uint64_t *prefix; /* depth x (name, back, children) */
    uint64_t n_events;
    const uint8_t *tokens;
    size_t tokens_len;
    uint64_t tokens_len_says; /* written as tokens_len when not 0 */
    uint64_t n_ctx;
    const uint64_t *ctx;      /* n_ctx x (dkey, class, pred) */
    uint64_t n_ctx_says;      /* written as n_ctx when not 0 */
    uint64_t n_streams;
    const uint64_t *tab;      /* n_streams x (class, lo_len, hi_len) */
    const uint8_t *streams;   /* the bytes after the tokens */
    size_t streams_len;
} sr_parts;

static void sr_body(capf_buf *b, const sr_parts *s)
{
    b->len = 0;
    capf_buf_varint(b, 0); /* tid */
    capf_buf_varint(b, s->base);
    capf_buf_varint(b, s->depth);
    for (uint64_t i = 0; i < 3 * s->depth; i++)
        capf_buf_varint(b, s->prefix[i]);
    capf_buf_varint(b, s->n_events);
    capf_buf_varint(b, s->tokens_len_says ? s->tokens_len_says
                                          : s->tokens_len);
    capf_buf_varint(b, s->n_ctx_says ? s->n_ctx_says : s->n_ctx);
    for (uint64_t i = 0; i < 3 * s->n_ctx; i++)
        capf_buf_varint(b, s->ctx[i]);
    capf_buf_varint(b, s->n_streams);
    for (uint64_t i = 0; i < 3 * s->n_streams && s->tab; i++)
        capf_buf_varint(b, s->tab[i]);
    capf_buf_bytes(b, s->tokens, s->tokens_len);
    capf_buf_bytes(b, s->streams, s->streams_len);
}

/* The scopes of path, and the damage reports among them. */
typedef struct outcome {
    cap_ev_scope sc[16];
    size_t n;
    int corrupt;
    size_t corrupt_at; /* scopes read before the first report */
} outcome;

static outcome read_outcome(const char *path)
{
    outcome o = {0};
    cap_reader *r;
    char d[256];
    assert_int_equal(cap_reader_open(&r, path, d, sizeof d), CAP_OK);
    cap_event ev;
    cap_result res;
    int guard = 0;
    while ((res = cap_reader_next(r, &ev)) != CAP_DONE) {
        assert_true(++guard < 1000);
        if (res == CAP_E_CORRUPT) {
            if (!o.corrupt++)
                o.corrupt_at = o.n;
            continue;
        }
        if (res == CAP_E_TRUNCATED)
            continue; /* crafted files have no footer */
        assert_int_equal(res, CAP_OK);
        if (ev.kind == CAP_EV_SCOPE && o.n < 16)
            o.sc[o.n++] = ev.u.scope;
    }
    cap_reader_close(r);
    return o;
}

/* The spec's arithmetic by hand: name 1 four times, its begins (key 2)
 * left out of the table (pred 0, class 0), its ends (key 3) predicted 100
 * in class 7:
 *   event 0 begin at base 1000
 *   event 1 end    +100: class 7, r 0,    z 0
 *   event 2 begin  +10:  class 0, r 10,   z 20
 *   event 3 end    +110: class 7, r 10,   z 20
 *   event 4 begin  +10:  class 0, r 10,   z 20
 *   event 5 end    +90:  class 7, r -10,  z 19
 *   event 6 begin  +300: class 0, r 300,  z 600: lo 0x58, hi 2
 *   event 7 end    +101: class 7, r 1,    z 2
 * so scopes 1000..1100, 1110..1220, 1230..1320, 1620..1721. */
static const uint8_t hand_tokens[] = {1, 0, 1, 0, 1, 0, 1, 0};
static const uint64_t hand_ctx[] = {3, 7, 100};
static const uint64_t hand_tab[] = {0, 3, 3, 7, 4, 4};
static const uint8_t hand_streams[] = {
    20, 20, 0x58, 0, 20, 19, 2, /* lo: class 0, class 7 */
    0, 0, 2, 0, 0, 0, 0         /* hi: class 0, class 7 */
};
static const int64_t hand_want[4][2] = {
    {1000, 1100}, {1110, 1220}, {1230, 1320}, {1620, 1721}};

static sr_parts hand(void)
{
    return (sr_parts){.base = 1000, .n_events = 8, .tokens = hand_tokens,
                      .tokens_len = 8, .n_ctx = 1, .ctx = hand_ctx,
                      .n_streams = 2, .tab = hand_tab,
                      .streams = hand_streams,
                      .streams_len = sizeof hand_streams};
}

/* The same events as the reference writer encodes them: each context's
 * prediction the mean of its deltas (begins 10, 10, 300: 106; ends 100,
 * 110, 90, 101: 100), both in class 7. */
static const uint64_t writer_ctx[] = {2, 7, 106, 1, 7, 100};
static const uint64_t writer_tab[] = {7, 7, 7};
static const uint8_t writer_streams[] = {
    0, 191, 20, 191, 19, 0x84, 2, /* lo: z 0, 191, 20, 191, 19, 388, 2 */
    0, 0, 0, 0, 0, 1, 0           /* hi */
};

static void hand_built_section_decodes_as_the_spec_says(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/hand.cap", tmpdir);
    capf_buf b = {0};
    sr_parts s = hand();
    for (int variant = 0; variant < 2; variant++) {
        if (variant == 1) {
            s.n_ctx = 2;
            s.ctx = writer_ctx;
            s.n_streams = 1;
            s.tab = writer_tab;
            s.streams = writer_streams;
            s.streams_len = sizeof writer_streams;
        }
        sr_body(&b, &s);
        craft(path, 2, CAPF_SEC_SCOPES_R, &b);
        outcome o = read_outcome(path);
        assert_int_equal(o.corrupt, 0);
        assert_int_equal(o.n, 5);
        for (int i = 0; i < 4; i++) {
            assert_int_equal(o.sc[i].name, 1);
            assert_int_equal(o.sc[i].begin_ns, hand_want[i][0]);
            assert_int_equal(o.sc[i].end_ns, hand_want[i][1]);
        }
        assert_int_equal(o.sc[4].tid, 1); /* the block after it */
    }
    /* the same section in a 1.x file is an unknown kind: skipped */
    craft(path, 1, CAPF_SEC_SCOPES_R, &b);
    outcome o = read_outcome(path);
    assert_int_equal(o.corrupt, 0);
    assert_int_equal(o.n, 1);
    assert_int_equal(o.sc[0].tid, 1);
    /* the writer writes the second variant's very bytes for these events */
    cap_writer_options wo = {.clock_source = "monotonic",
                             .tick_period_ns = 1.0};
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, &wo), CAP_OK);
    assert_int_equal(cap_writer_name(w, 1, "a", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, NULL), CAP_OK);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(
            cap_writer_scope_begin(w, 0, 1, (uint64_t)hand_want[i][0]), CAP_OK);
        assert_int_equal(
            cap_writer_scope_end(w, 0, (uint64_t)hand_want[i][1]), CAP_OK);
    }
    assert_int_equal(cap_writer_close(w), CAP_OK);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t file[4096];
    size_t n = fread(file, 1, sizeof file, f);
    fclose(f);
    capf_buf sec = {0};
    capf_buf_section(&sec, CAPF_SEC_SCOPES_R, &b);
    int found = 0;
    for (size_t i = 0; i + sec.len <= n && !found; i++)
        found = memcmp(file + i, sec.data, sec.len) == 0;
    assert_true(found);
    capf_buf_free(&sec);
    capf_buf_free(&b);
}

/* Each "malformed when" rule: the section is reported as damage once,
 * after the scopes that precede the fault, and the next block is read. */
static void expect_malformed(const sr_parts *s, size_t scopes_before,
                             const char *what)
{
    char path[300];
    snprintf(path, sizeof path, "%s/bad.cap", tmpdir);
    capf_buf b = {0};
    sr_body(&b, s);
    craft(path, 2, CAPF_SEC_SCOPES_R, &b);
    capf_buf_free(&b);
    outcome o = read_outcome(path);
    if (o.corrupt != 1 || o.corrupt_at != scopes_before ||
        o.n != scopes_before + 1 || o.sc[o.n - 1].tid != 1)
        fail_msg("%s: %d reports after %zu scopes, %zu scopes in all", what,
                 o.corrupt, o.corrupt_at, o.n);
}

static void every_malformed_rule_is_reported(void **state)
{
    (void)state;
    sr_parts s;
    uint64_t tab[3 * 66], ctx[6];

    /* the stream table */
    s = hand();
    s.n_streams = 66;
    memset(tab, 0, sizeof tab);
    for (int i = 0; i < 66; i++)
        tab[3 * i] = (uint64_t)i;
    s.tab = tab;
    expect_malformed(&s, 0, "n_streams 66");
    s = hand();
    const uint64_t c65[] = {0, 3, 3, 65, 4, 4};
    s.tab = c65;
    expect_malformed(&s, 0, "stream class 65");
    s = hand();
    const uint64_t down[] = {7, 4, 4, 0, 3, 3};
    s.tab = down;
    expect_malformed(&s, 0, "stream classes not increasing");
    s = hand();
    const uint64_t past[] = {0, 3, 3, 7, 4, 5};
    s.tab = past;
    expect_malformed(&s, 0, "a stream past the body");

    /* the prediction table */
    s = hand();
    s.n_ctx_says = 100; /* more entries than a third of the body */
    expect_malformed(&s, 0, "n_ctx");
    s = hand();
    const uint64_t name0[] = {1, 7, 100};
    s.ctx = name0;
    expect_malformed(&s, 0, "key of name 0");
    s = hand();
    memcpy(ctx, (uint64_t[]){3, 7, 100, 0, 7, 100}, sizeof ctx);
    s.n_ctx = 2;
    s.ctx = ctx;
    expect_malformed(&s, 0, "dkey 0 after the first");
    s = hand();
    memcpy(ctx, (uint64_t[]){3, 65, 100}, 3 * sizeof *ctx);
    s.ctx = ctx;
    expect_malformed(&s, 0, "class 65");
    s = hand();
    memcpy(ctx, (uint64_t[]){(uint64_t)CAP_MAX_NAME_ID * 2 + 2, 7, 100},
           3 * sizeof *ctx);
    s.ctx = ctx;
    expect_malformed(&s, 0, "key above the largest name");

    /* the tokens */
    s = hand();
    s.tokens_len_says = 200; /* tokens past the body */
    expect_malformed(&s, 0, "tokens_len");
    s = hand();
    s.n_events = 9; /* more events than token bytes */
    expect_malformed(&s, 0, "n_events > tokens_len");

    /* class 7's lo stream holds 3 bytes for 4 residuals: the fault is at
     * event 7, after three scopes */
    s = hand();
    const uint64_t lo3[] = {0, 3, 3, 7, 3, 5};
    s.tab = lo3;
    expect_malformed(&s, 3, "lo stream runs out");
    /* class 7's hi stream holds 3 varints for 4 residuals */
    s = hand();
    const uint64_t hi3[] = {0, 3, 3, 7, 5, 3};
    s.tab = hi3;
    expect_malformed(&s, 3, "hi stream runs out");
    /* a hi varint of 2^56: z would not fit 64 bits (class 0's second
     * residual, event 4, after two scopes) */
    {
        capf_buf st = {0}, hi = {0};
        capf_buf_varint(&hi, 0);
        capf_buf_varint(&hi, (uint64_t)1 << 56);
        capf_buf_varint(&hi, 2);
        capf_buf_bytes(&st, hand_streams, 7);         /* the lo streams */
        capf_buf_bytes(&st, hi.data, hi.len);         /* class 0's hi */
        capf_buf_bytes(&st, hand_streams + 10, 4);    /* class 7's hi */
        uint64_t t2[6] = {0, 3, hi.len, 7, 4, 4};
        s = hand();
        s.tab = t2;
        s.streams = st.data;
        s.streams_len = st.len;
        expect_malformed(&s, 2, "hi of 2^56");
        capf_buf_free(&st);
        capf_buf_free(&hi);
    }

    /* an end with the stack empty: event 2 (after the first scope) */
    {
        const uint8_t tk[] = {1, 0, 0, 0, 1, 0, 1, 0};
        s = hand();
        s.tokens = tk;
        expect_malformed(&s, 1, "end on an empty stack");
    }
    /* a token above the largest name id */
    {
        capf_buf tk = {0};
        capf_buf_varint(&tk, (uint64_t)CAP_MAX_NAME_ID + 1);
        s = (sr_parts){.base = 5, .n_events = 1, .tokens = tk.data,
                       .tokens_len = tk.len};
        expect_malformed(&s, 0, "token above the largest id");
        capf_buf_free(&tk);
    }
    /* a prefix name of 0; a depth above 1024; a begin past 1024 open */
    {
        const uint64_t pre[3] = {0, 5, 0};
        s = hand();
        s.depth = 1;
        s.prefix = pre;
        expect_malformed(&s, 0, "prefix name 0");
        uint64_t *deep = calloc(3 * 1025, sizeof *deep);
        assert_non_null(deep);
        for (int i = 0; i < 1025; i++)
            deep[3 * i] = 1;
        s = hand();
        s.depth = 1025;
        s.prefix = deep;
        expect_malformed(&s, 0, "depth 1025");
        s = hand();
        s.depth = 1024;
        s.prefix = deep;
        expect_malformed(&s, 0, "a begin past 1024 open");
        free(deep);
    }
}

/* Scopes open across blocks: the prefix gives the names the ends'
 * contexts use. The block below opens with names 2 and 1 open (1
 * innermost), begins and ends name 1, then ends both: the ends of name 1
 * (key 3: pred 40, class 6) read class 6, the end of name 2 (key 5, not
 * in the table) class 0. */
static void prefix_names_give_the_ends_their_contexts(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/prefix.cap", tmpdir);
    const uint64_t pre[6] = {2, 50, 7, 1, 20, 0};
    const uint8_t tk[] = {1, 0, 0, 0};
    const uint64_t ctx[] = {3, 6, 40};
    const uint64_t tab[] = {0, 1, 1, 6, 2, 2};
    /* event 1: end +40, z 0 (class 6); event 2: end +40, z 0 (class 6);
     * event 3: end +5, z 10 (class 0) */
    const uint8_t st[] = {10, 0, 0, 0, 0, 0};
    sr_parts s = {.base = 500, .depth = 2, .prefix = pre, .n_events = 4,
                  .tokens = tk, .tokens_len = 4, .n_ctx = 1, .ctx = ctx,
                  .n_streams = 2, .tab = tab, .streams = st,
                  .streams_len = sizeof st};
    capf_buf b = {0};
    sr_body(&b, &s);
    craft(path, 2, CAPF_SEC_SCOPES_R, &b);
    capf_buf_free(&b);
    outcome o = read_outcome(path);
    assert_int_equal(o.corrupt, 0);
    assert_int_equal(o.n, 4);
    assert_int_equal(o.sc[0].begin_ns, 500);
    assert_int_equal(o.sc[0].end_ns, 540);
    assert_int_equal(o.sc[0].depth, 2);
    assert_int_equal(o.sc[1].name, 1);
    assert_int_equal(o.sc[1].begin_ns, 480);
    assert_int_equal(o.sc[1].end_ns, 580);
    assert_int_equal(o.sc[1].children_ns, 40);
    assert_int_equal(o.sc[2].name, 2);
    assert_int_equal(o.sc[2].begin_ns, 450);
    assert_int_equal(o.sc[2].end_ns, 585);
    assert_int_equal(o.sc[2].children_ns, 7 + 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_events_read_back_as_in_1_1),
        cmocka_unit_test(hand_built_section_decodes_as_the_spec_says),
        cmocka_unit_test(every_malformed_rule_is_reported),
        cmocka_unit_test(prefix_names_give_the_ends_their_contexts),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
