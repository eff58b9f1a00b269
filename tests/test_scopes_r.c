/*
 * test_scopes_r - format 2.0's SCOPES_R section (format-spec "SCOPES_R
 * (0x0D)") and 3.0's SCOPES_E ("SCOPES_E (0x0E)"): random events written
 * as 2.0 and as 3.0 read back exactly as the same events written as 1.1;
 * sections built by hand from the spec (for SCOPES_E with an encoder
 * written from its text) decode to the ticks the spec's arithmetic gives;
 * every "malformed when" rule is reported as damage, after the scopes
 * before it.
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
#include "writer/writer_records.h"
#include "cap_sections.h"

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

/* ---- random events, written as 1.1 and as 2.0 -------------------------- */

#define NAMES 40

/* Thread t's events: scopes with per-name jittered durations (so the 2.0
 * writer predicts them), deep runs past the depth limit, ends with
 * nothing open, timestamps going backwards, huge gaps (up to 2^56 ticks:
 * residuals whose hi part takes 8 bytes), ticks near 2^64, frames. */
static void write_random(const char *path, unsigned major, uint64_t seed,
                         int steady, int hurry)
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
        if (hurry) /* behind, then caught up, then behind again, ... */
            cap__writer_hurry(w, step / 3000 % 2);
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
    char p1[300], p2[300], p3[300];
    snprintf(p1, sizeof p1, "%s/r1.cap", tmpdir);
    snprintf(p2, sizeof p2, "%s/r2.cap", tmpdir);
    snprintf(p3, sizeof p3, "%s/r3.cap", tmpdir);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        for (int steady = 0; steady <= 1; steady++) {
            write_random(p1, 1, seed * 7919, steady, 0);
            write_random(p2, 2, seed * 7919, steady, 0);
            write_random(p3, 3, seed * 7919, steady, 0);
            unsigned k1[256], k2[256], k3[256];
            count_kinds(p1, k1);
            count_kinds(p2, k2);
            count_kinds(p3, k3);
            assert_int_equal(k1[CAPF_SEC_SCOPES_R], 0);
            assert_int_equal(k1[CAPF_SEC_SCOPES_E], 0);
            assert_int_equal(k2[CAPF_SEC_SCOPES_E], 0);
            assert_int_equal(k3[CAPF_SEC_SCOPES_R], 0);
            if (steady) { /* deltas that repeat stay plain */
                assert_int_equal(k2[CAPF_SEC_SCOPES_R], 0);
                assert_true(k2[CAPF_SEC_SCOPES] > 0);
                assert_int_equal(k3[CAPF_SEC_SCOPES_E], 0);
            } else {
                assert_true(k2[CAPF_SEC_SCOPES_R] > 10);
                assert_int_equal(k3[CAPF_SEC_SCOPES_E],
                                 k2[CAPF_SEC_SCOPES_R]);
            }
            recs a = read_recs(p1, 0), b = read_recs(p2, 0),
                 c = read_recs(p2, 64), d = read_recs(p3, 0),
                 e = read_recs(p3, 64);
            assert_int_equal(a.major, 1);
            assert_int_equal(b.major, 2);
            assert_int_equal(d.major, 3);
            same_recs(&a, &d);
            same_recs(&d, &e);
            free(d.v);
            free(e.v);
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

/* A 3.0 writer in a hurry (the producer's writer thread behind) codes
 * scopes as 2.0's SCOPES_R, block by block: the file mixes the two kinds,
 * SCOPES_R where the 2.0 file has it and SCOPES_E where the 3.0 file
 * does, and reads back the same events as the 1.1 file; a 2.0 or 1.1
 * writer in a hurry writes what it always does. */
static void hurried_3_0_codes_scopes_r_and_reads_the_same(void **state)
{
    (void)state;
    char p1[300], p2[300], p3[300], ph[300], p2h[300];
    snprintf(p1, sizeof p1, "%s/h1.cap", tmpdir);
    snprintf(p2, sizeof p2, "%s/h2.cap", tmpdir);
    snprintf(p3, sizeof p3, "%s/h3.cap", tmpdir);
    snprintf(ph, sizeof ph, "%s/h3h.cap", tmpdir);
    snprintf(p2h, sizeof p2h, "%s/h2h.cap", tmpdir);
    write_random(p1, 1, 104729, 0, 0);
    write_random(p2, 2, 104729, 0, 0);
    write_random(p3, 3, 104729, 0, 0);
    write_random(ph, 3, 104729, 0, 1);
    write_random(p2h, 2, 104729, 0, 1);
    unsigned k2[256], k3[256], kh[256], k2h[256];
    count_kinds(p2, k2);
    count_kinds(p3, k3);
    count_kinds(ph, kh);
    count_kinds(p2h, k2h);
    assert_true(kh[CAPF_SEC_SCOPES_R] > 5);
    assert_true(kh[CAPF_SEC_SCOPES_E] > 5);
    assert_int_equal(kh[CAPF_SEC_SCOPES_R] + kh[CAPF_SEC_SCOPES_E],
                     k3[CAPF_SEC_SCOPES_E]);
    assert_int_equal(kh[CAPF_SEC_SCOPES], k3[CAPF_SEC_SCOPES]);
    assert_int_equal(memcmp(k2, k2h, sizeof k2), 0);
    recs a = read_recs(p1, 0), h = read_recs(ph, 0), h64 = read_recs(ph, 64);
    assert_int_equal(h.major, 3);
    same_recs(&a, &h);
    same_recs(&h, &h64);
    free(a.v);
    free(h.v);
    free(h64.v);
}

static const char *fixtures_dir; /* argv[1] */

/* fixtures/scope-residuals-3.0-hurried.cap (a writer told to hurry for
 * half its frames) holds SCOPES_R and SCOPES_E sections and reads as
 * scope-residuals-3.0.cap and the 1.1 file of the same events do, event
 * for event. */
static void the_hurried_fixture_mixes_kinds_and_reads_alike(void **state)
{
    (void)state;
    char ph[512], p3[512], p1[512];
    snprintf(ph, sizeof ph, "%s/scope-residuals-3.0-hurried.cap",
             fixtures_dir);
    snprintf(p3, sizeof p3, "%s/scope-residuals-3.0.cap", fixtures_dir);
    snprintf(p1, sizeof p1, "%s/scope-residuals-1.1.cap", fixtures_dir);
    unsigned kh[256], k3[256];
    count_kinds(ph, kh);
    count_kinds(p3, k3);
    assert_true(kh[CAPF_SEC_SCOPES_R] > 0);
    assert_true(kh[CAPF_SEC_SCOPES_E] > 0);
    assert_int_equal(k3[CAPF_SEC_SCOPES_R], 0);
    recs h = read_recs(ph, 0), h64 = read_recs(ph, 64), r3 = read_recs(p3, 0),
         r1 = read_recs(p1, 0);
    assert_int_equal(h.major, 3);
    same_recs(&h, &r3);
    same_recs(&h64, &r3);
    same_recs(&h, &r1);
    free(h.v);
    free(h64.v);
    free(r3.v);
    free(r1.v);
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

/* The same events with each context's prediction the mean of its deltas
 * (begins 10, 10, 300: 106; ends 100, 110, 90, 101: 100), both in class 7
 * (what the reference writer wrote for them before it rounded the
 * predictions of small sections). */
static const uint64_t writer_ctx[] = {2, 7, 106, 1, 7, 100};
static const uint64_t writer_tab[] = {7, 7, 7};
static const uint8_t writer_streams[] = {
    0, 191, 20, 191, 19, 0x84, 2, /* lo: z 0, 191, 20, 191, 19, 388, 2 */
    0, 0, 0, 0, 0, 1, 0           /* hi */
};

/* The same events as the reference writer encodes them now: a section of
 * at most 4,096 events puts every context in class 0, and a context of at
 * most 8 deltas has its mean rounded to a multiple of 2^(floor(log2 sd) +
 * 1), sd their standard deviation. Begins: mean 106, sd 137, step 256:
 * pred 0, so (0, 0) and left out of the table. Ends: mean 100, sd 10.0,
 * step 16: pred 96. Residuals in event order, all class 0: z 8, 20, 28,
 * 20, 11, 600 (lo 0x58, hi 2), 10. */
static const uint64_t small_ctx[] = {3, 0, 96};
static const uint64_t small_tab[] = {0, 7, 7};
static const uint8_t small_streams[] = {
    8, 20, 28, 20, 11, 0x58, 10, /* lo */
    0, 0, 0, 0, 0, 2, 0          /* hi */
};

/* body, a section of kind in a file of major, holds the scopes of
 * hand_want; the next block's scope follows. */
static void expect_hand(const char *path, const capf_buf *b, unsigned major,
                        uint8_t kind)
{
    craft(path, major, kind, b);
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

static void hand_built_section_decodes_as_the_spec_says(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/hand.cap", tmpdir);
    capf_buf b = {0};
    sr_parts s = hand();
    for (int variant = 0; variant < 3; variant++) {
        if (variant == 1) {
            s.n_ctx = 2;
            s.ctx = writer_ctx;
            s.n_streams = 1;
            s.tab = writer_tab;
            s.streams = writer_streams;
            s.streams_len = sizeof writer_streams;
        } else if (variant == 2) {
            s.n_ctx = 1;
            s.ctx = small_ctx;
            s.n_streams = 1;
            s.tab = small_tab;
            s.streams = small_streams;
            s.streams_len = sizeof small_streams;
        }
        sr_body(&b, &s);
        expect_hand(path, &b, 2, CAPF_SEC_SCOPES_R);
    }
    /* the same section in a 1.x file is an unknown kind: skipped */
    craft(path, 1, CAPF_SEC_SCOPES_R, &b);
    outcome o = read_outcome(path);
    assert_int_equal(o.corrupt, 0);
    assert_int_equal(o.n, 1);
    assert_int_equal(o.sc[0].tid, 1);
    /* the writer writes the third variant's very bytes for these events */
    cap_writer_options wo = {.clock_source = "monotonic",
                             .tick_period_ns = 1.0,
                             .format_major = 2};
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

/* Each "malformed when" rule: the section (body, of kind in a file of
 * major) is reported as damage once, after the scopes that precede the
 * fault (scopes_before; -1: fewer than the four the sections built by
 * hand hold), and the next block is read. */
static void expect_damage(capf_buf *b, unsigned major, uint8_t kind,
                          int scopes_before, const char *what)
{
    char path[300];
    snprintf(path, sizeof path, "%s/bad.cap", tmpdir);
    craft(path, major, kind, b);
    capf_buf_free(b);
    outcome o = read_outcome(path);
    int at_ok = scopes_before >= 0 ? o.corrupt_at == (size_t)scopes_before
                                   : o.corrupt_at < 4;
    if (o.corrupt != 1 || !at_ok || o.n != o.corrupt_at + 1 ||
        o.sc[o.n - 1].tid != 1)
        fail_msg("%s: %d reports after %zu scopes, %zu scopes in all", what,
                 o.corrupt, o.corrupt_at, o.n);
}

static void expect_malformed(const sr_parts *s, int scopes_before,
                             const char *what)
{
    capf_buf b = {0};
    sr_body(&b, s);
    expect_damage(&b, 2, CAPF_SEC_SCOPES_R, scopes_before, what);
}

/* 1025 prefix entries of name 1 (free it) */
static uint64_t *deep_prefix(void)
{
    uint64_t *deep = calloc(3 * 1025, sizeof *deep);
    assert_non_null(deep);
    for (int i = 0; i < 1025; i++)
        deep[3 * i] = 1;
    return deep;
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
        uint64_t *deep = deep_prefix();
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

/* ---- SCOPES_E (3.0) built by hand ---------------------------------------
 * A small encoder written from the spec's text ("SCOPES_E (0x0E)"): the
 * steps of a section in event order (a token symbol, a residual symbol,
 * raw bits), each rANS stream encoded last to first. */

typedef struct se_step {
    int kind;       /* 0: token symbol, 1: residual symbol, 2: raw bits */
    unsigned table; /* 0, 1: the table */
    unsigned sym;   /* 0, 1: the symbol */
    unsigned n;     /* 2: how many bits */
    uint64_t v;     /* 2: their value */
} se_step;

typedef struct se_parts {
    uint64_t base, depth;
    const uint64_t *prefix;   /* depth x (name, back, children) */
    uint64_t n_events;
    uint64_t n_names;
    const uint64_t *names;    /* n_names x (dname, pred_b, kt_b, pred_e, kt_e) */
    uint64_t n_names_says;    /* written as n_names when not 0 */
    uint64_t n_rtab;
    uint32_t rtab[2][64];
    uint32_t ttab[30][5];
    const se_step *steps;
    size_t n_steps;
    int64_t tok_len_adj, res_len_adj; /* added to the lengths written */
    size_t bits_cut;          /* bytes left out at the end of the bits */
    size_t res_cut;           /* ... of the residual stream */
    size_t tok_cut;           /* ... of the token stream */
} se_parts;

static uint32_t se_cum(const uint32_t *f, unsigned s)
{
    uint32_t c = 0;
    for (unsigned i = 0; i < s; i++)
        c += f[i];
    return c;
}

/* One rANS stream (1 or 2 states) from its symbols' (f, c), last to first */
static void se_rans(capf_buf *out, const uint32_t (*fc)[2], size_t n,
                    int states)
{
    uint8_t *tmp = malloc(2 * n + 16);
    assert_non_null(tmp);
    size_t len = 0; /* bytes written backwards from tmp's end */
    size_t cap = 2 * n + 16;
    uint32_t x[2] = {65536, 65536};
    for (size_t i = n; i-- > 0;) {
        uint32_t *s = &x[states == 2 ? i % 2 : 0];
        uint32_t f = fc[i][0], c = fc[i][1];
        if ((uint64_t)*s >= ((uint64_t)1 << 20) * f) {
            len += 2;
            tmp[cap - len] = (uint8_t)*s;
            tmp[cap - len + 1] = (uint8_t)(*s >> 8);
            *s >>= 16;
        }
        *s = (*s / f) * 4096 + *s % f + c;
    }
    for (int st = states - 1; st >= 0; st--) {
        len += 4;
        for (int b = 0; b < 4; b++)
            tmp[cap - len + b] = (uint8_t)(x[st] >> (8 * b));
    }
    capf_buf_bytes(out, tmp + cap - len, len);
    free(tmp);
}

static void se_body(capf_buf *b, const se_parts *p)
{
    b->len = 0;
    capf_buf_varint(b, 0); /* tid */
    capf_buf_varint(b, p->base);
    capf_buf_varint(b, p->depth);
    for (uint64_t i = 0; i < 3 * p->depth; i++)
        capf_buf_varint(b, p->prefix[i]);
    capf_buf_varint(b, p->n_events);
    capf_buf_varint(b, p->n_names_says ? p->n_names_says : p->n_names);
    for (uint64_t i = 0; i < 5 * p->n_names; i++)
        capf_buf_varint(b, p->names[i]);
    capf_buf_varint(b, p->n_rtab);
    for (uint64_t t = 0; t < p->n_rtab && t < 2; t++)
        for (int s = 0; s < 64; s++)
            capf_buf_varint(b, p->rtab[t][s]);
    for (int t = 0; t < 30; t++)
        for (int s = 0; s < 5; s++)
            capf_buf_varint(b, p->ttab[t][s]);
    uint32_t(*tk)[2] = calloc(p->n_steps + 1, sizeof *tk);
    uint32_t(*rs)[2] = calloc(p->n_steps + 1, sizeof *rs);
    assert_true(tk && rs);
    size_t nt = 0, nr = 0;
    capf_buf bits = {0}, tok = {0}, res = {0};
    uint64_t acc = 0;
    unsigned an = 0;
    for (size_t i = 0; i < p->n_steps; i++) {
        const se_step *s = &p->steps[i];
        if (s->kind == 0) {
            tk[nt][0] = p->ttab[s->table][s->sym];
            tk[nt++][1] = se_cum(p->ttab[s->table], s->sym);
        } else if (s->kind == 1) {
            rs[nr][0] = p->rtab[s->table][s->sym];
            rs[nr++][1] = se_cum(p->rtab[s->table], s->sym);
        } else {
            for (unsigned k = 0; k < s->n; k++) {
                acc |= ((s->v >> k) & 1) << an;
                if (++an == 8) {
                    capf_buf_u8(&bits, (uint8_t)acc);
                    acc = 0;
                    an = 0;
                }
            }
        }
    }
    if (an)
        capf_buf_u8(&bits, (uint8_t)acc);
    se_rans(&tok, (const uint32_t(*)[2])tk, nt, 1);
    se_rans(&res, (const uint32_t(*)[2])rs, nr, 2);
    capf_buf_varint(b, (uint64_t)((int64_t)(tok.len - p->tok_cut) +
                                  p->tok_len_adj));
    capf_buf_varint(b, (uint64_t)((int64_t)(res.len - p->res_cut) +
                                  p->res_len_adj));
    capf_buf_bytes(b, tok.data, tok.len - p->tok_cut);
    capf_buf_bytes(b, res.data, res.len - p->res_cut);
    capf_buf_bytes(b, bits.data, bits.len - p->bits_cut);
    capf_buf_free(&bits);
    capf_buf_free(&tok);
    capf_buf_free(&res);
    free(tk);
    free(rs);
}

/* The token table the spec gives a list: a 1 for an E list */
static unsigned se_t(unsigned a, unsigned len, unsigned last)
{
    return (a * 5 + len) * 3 + last;
}

#define TOK(t, s) {0, (t), (s), 0, 0}
#define RES(s) {1, 0, (s), 0, 0}
#define BITS(n, v) {2, 0, 0, (n), (v)}

/* Name 1 (place 1) four times, as in SCOPES_R's hand-built section: its
 * begins predicted 10 with k 0, its ends 100 with k 2, one residual table
 * (all 64 symbols 64/4096), token tables each of their own frequencies.
 *   ev 0 begin: list E[0] empty, table 15: escape, 1 bit: 1
 *   ev 1 end +100: B[1] empty, table 0: escape, 1 bit 0; r 0: q 0,
 *        symbol 0, 2 low bits 0
 *   ev 2 begin +10: E[1] empty, table 15: escape, 1 bit 1; r 0: symbol 0
 *   ev 3 end +110: B[1] (len 1, last 2), table 5: rank 0; r 10: q 2,
 *        symbol 4, low 2
 *   ev 4 begin +10: E[1] (len 1, last 2), table 20: rank 0; symbol 0
 *   ev 5 end +90: B[1] (len 1, last 0), table 3: rank 0; r -10: q -3,
 *        symbol 5, low 2
 *   ev 6 begin +300: E[1] (len 1, last 0), table 18: rank 0; r 290:
 *        zigzag 580 >= 63: escape, 7 bits 10, 10 bits 580
 *   ev 7 end +101: B[1], table 3: rank 0; r 1: symbol 0, low 1
 * so the scopes of hand_want. */
static const uint64_t se_hand_names[] = {1, 10, 0, 100, 2 * 16};
static const se_step se_hand_steps[] = {
    TOK(15, 4), BITS(1, 1),
    TOK(0, 4), BITS(1, 0), RES(0), BITS(2, 0),
    TOK(15, 4), BITS(1, 1), RES(0),
    TOK(5, 0), RES(4), BITS(2, 2),
    TOK(20, 0), RES(0),
    TOK(3, 0), RES(5), BITS(2, 2),
    TOK(18, 0), RES(63), BITS(7, 10), BITS(10, 580),
    TOK(3, 0), RES(0), BITS(2, 1)};

static se_parts se_hand(void)
{
    se_parts p = {.base = 1000, .n_events = 8, .n_names = 1,
                  .names = se_hand_names, .n_rtab = 1,
                  .steps = se_hand_steps,
                  .n_steps = sizeof se_hand_steps / sizeof *se_hand_steps};
    for (int s = 0; s < 64; s++)
        p.rtab[0][s] = p.rtab[1][s] = 64;
    for (unsigned t = 0; t < 30; t++) {
        p.ttab[t][0] = 600 + 10 * t;
        p.ttab[t][1] = p.ttab[t][2] = p.ttab[t][3] = 700;
        p.ttab[t][4] = 4096 - 2700 - 10 * t;
    }
    assert_int_equal(se_t(1, 0, 0), 15);
    assert_int_equal(se_t(0, 1, 2), 5);
    assert_int_equal(se_t(1, 1, 2), 20);
    assert_int_equal(se_t(0, 1, 0), 3);
    assert_int_equal(se_t(1, 1, 0), 18);
    return p;
}

static void se_hand_built_section_decodes_as_the_spec_says(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/se-hand.cap", tmpdir);
    capf_buf b = {0};
    se_parts p = se_hand();
    se_body(&b, &p);
    expect_hand(path, &b, 3, CAPF_SEC_SCOPES_E);
    outcome o;
    /* the same section in a 2.0 (or 1.x) file is an unknown kind */
    for (unsigned major = 1; major <= 2; major++) {
        craft(path, major, CAPF_SEC_SCOPES_E, &b);
        o = read_outcome(path);
        assert_int_equal(o.corrupt, 0);
        assert_int_equal(o.n, 1);
        assert_int_equal(o.sc[0].tid, 1);
    }
    capf_buf_free(&b);
}

static void se_expect_malformed(const se_parts *p, int scopes_before,
                                const char *what)
{
    capf_buf b = {0};
    se_body(&b, p);
    expect_damage(&b, 3, CAPF_SEC_SCOPES_E, scopes_before, what);
}

static void se_every_malformed_rule_is_reported(void **state)
{
    (void)state;
    se_parts p;
    se_step steps[sizeof se_hand_steps / sizeof *se_hand_steps];
    memcpy(steps, se_hand_steps, sizeof steps);

    /* the name list */
    p = se_hand();
    p.n_names_says = 1000; /* more than a fifth of the body */
    se_expect_malformed(&p, 0, "n_names");
    const uint64_t two0[] = {1, 10, 0, 100, 32, 0, 0, 0, 0, 0};
    p = se_hand();
    p.n_names = 2;
    p.names = two0;
    se_expect_malformed(&p, 0, "dname 0 after the first");
    const uint64_t id0[] = {0, 10, 0, 100, 32};
    p = se_hand();
    p.names = id0;
    se_expect_malformed(&p, 0, "id 0");
    const uint64_t idbig[] = {(uint64_t)CAP_MAX_NAME_ID + 1, 10, 0, 100, 32};
    p = se_hand();
    p.names = idbig;
    se_expect_malformed(&p, 0, "id above the largest");
    const uint64_t kt[] = {1, 10, 1024, 100, 32};
    p = se_hand();
    p.names = kt;
    se_expect_malformed(&p, 0, "kt 1024");
    const uint64_t tab1[] = {1, 10, 1, 100, 32};
    p = se_hand();
    p.names = tab1; /* table 1 of 1 */
    se_expect_malformed(&p, 0, "table index n_rtab");

    /* the tables */
    p = se_hand();
    p.n_rtab = 0;
    se_expect_malformed(&p, 0, "n_rtab 0");
    p = se_hand();
    p.n_rtab = 17;
    se_expect_malformed(&p, 0, "n_rtab 17");
    p = se_hand();
    p.rtab[0][9] = 65; /* 4097 in all */
    se_expect_malformed(&p, 0, "a residual table's sum");
    p = se_hand();
    p.ttab[29][1] = 699;
    se_expect_malformed(&p, 0, "a token table's sum");

    /* the prefix and the stream lengths */
    const uint64_t pre2[3] = {2, 5, 0};
    p = se_hand();
    p.depth = 1;
    p.prefix = pre2;
    se_expect_malformed(&p, 0, "prefix name not in the list");
    p = se_hand();
    p.tok_len_adj = 100;
    se_expect_malformed(&p, 0, "tok_len past the body");
    p = se_hand();
    p.res_len_adj = 100;
    se_expect_malformed(&p, 0, "res_len past the body");
    p = se_hand();
    p.steps = NULL;
    p.n_steps = 0;
    p.tok_len_adj = -4; /* no state */
    se_expect_malformed(&p, 0, "tok_len below 4");
    p = se_hand();
    p.steps = NULL;
    p.n_steps = 0;
    p.res_len_adj = -4; /* one state of two */
    se_expect_malformed(&p, 0, "res_len below 8");

    /* streams running out: the bits in ev 6 (after 3 scopes: bits 16..25
     * of 28, in a stream cut to 3 bytes); the residual stream's last
     * word (taken by the decoder before the section's last scope) */
    p = se_hand();
    p.bits_cut = 1;
    se_expect_malformed(&p, 3, "the bits run out");
    p = se_hand();
    p.res_cut = 2; /* every word written is read: the last one is missed */
    se_expect_malformed(&p, -1, "the residual stream runs out");
    p = se_hand();
    p.tok_cut = 2; /* its last word, needed before the first scope ends */
    se_expect_malformed(&p, 0, "the token stream runs out");
    /* the bits running out under a residual that is not an escape: ev 6's
     * residual 0 (no escape), so 11 bits in 2 bytes, cut to 1: ev 5's two
     * low bits (7 and 8) run out after 2 scopes */
    {
        se_step noesc[sizeof se_hand_steps / sizeof *se_hand_steps];
        memcpy(noesc, se_hand_steps, 18 * sizeof *noesc);
        noesc[18] = (se_step)RES(0);
        memcpy(noesc + 19, se_hand_steps + 21, 3 * sizeof *noesc);
        p = se_hand();
        p.steps = noesc;
        p.n_steps = 22;
        p.bits_cut = 1;
        se_expect_malformed(&p, 2, "the bits run out under a usual residual");
    }

    /* tokens: a rank the list does not hold (ev 3: B[1] holds one) */
    p = se_hand();
    memcpy(steps, se_hand_steps, sizeof steps);
    steps[9] = (se_step)TOK(5, 1);
    p.steps = steps;
    se_expect_malformed(&p, 1, "rank 1 of a list of one");
    /* an escape naming a value the list holds (ev 3: 0, an end) */
    memcpy(steps, se_hand_steps, sizeof steps);
    se_step dup[sizeof steps / sizeof *steps + 1];
    memcpy(dup, steps, 10 * sizeof *steps);
    dup[9] = (se_step)TOK(5, 4);
    dup[10] = (se_step)BITS(1, 0);
    memcpy(dup + 11, steps + 10, (p.n_steps - 10) * sizeof *steps);
    p = se_hand();
    p.steps = dup;
    p.n_steps++;
    se_expect_malformed(&p, 1, "an escape the list holds");
    /* an escaped value above n_names: with two names the escapes take 2
     * bits; ev 0 escapes 3 */
    {
        const uint64_t two[] = {1, 10, 0, 100, 32, 1, 0, 0, 0, 0};
        const se_step s3[] = {TOK(15, 4), BITS(2, 3)};
        p = se_hand();
        p.n_names = 2;
        p.names = two;
        p.steps = s3;
        p.n_steps = 2;
        se_expect_malformed(&p, 0, "escape above n_names");
    }
    /* an escaped residual of more than 64 bits (ev 6) */
    memcpy(steps, se_hand_steps, sizeof steps);
    steps[19] = (se_step)BITS(7, 65);
    p = se_hand();
    p.steps = steps;
    se_expect_malformed(&p, 3, "residual escape of 65 bits");

    /* the stack: an end with none open (ev 0); a begin past 1024 */
    {
        const se_step s0[] = {TOK(15, 4), BITS(1, 0)};
        p = se_hand();
        p.steps = s0;
        p.n_steps = 2;
        se_expect_malformed(&p, 0, "end on an empty stack");
        uint64_t *deep = deep_prefix();
        p = se_hand();
        p.depth = 1024;
        p.prefix = deep;
        se_expect_malformed(&p, 0, "a begin past 1024 open");
        p = se_hand();
        p.depth = 1025;
        p.prefix = deep;
        se_expect_malformed(&p, 0, "depth 1025");
        free(deep);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_scopes_r FIXTURES_DIR\n");
        return 2;
    }
    fixtures_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_events_read_back_as_in_1_1),
        cmocka_unit_test(hurried_3_0_codes_scopes_r_and_reads_the_same),
        cmocka_unit_test(the_hurried_fixture_mixes_kinds_and_reads_alike),
        cmocka_unit_test(hand_built_section_decodes_as_the_spec_says),
        cmocka_unit_test(every_malformed_rule_is_reported),
        cmocka_unit_test(prefix_names_give_the_ends_their_contexts),
        cmocka_unit_test(se_hand_built_section_decodes_as_the_spec_says),
        cmocka_unit_test(se_every_malformed_rule_is_reported),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
