/*
 * test_format - the capture format: every event written is read back
 * exactly; every block names what it uses; damage is detected, survived
 * and reported.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "capture/cap_reader.h"
#include "capture/cap_writer.h"
#include "format/format.h"

/* ---- helpers ----------------------------------------------------------- */

#define TMP_DIR_NAME "format"
#include "tmp_dir.h"

static void tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmpdir, name);
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return b;
}

static void spit(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* The reference capture: 3 threads with nesting across blocks, frames,
 * counters, GPU spans with nesting, one unmeasured and one invalid. */
enum { A = 1, B, C, D, CNT, G0, G1, G2, G3 };
#define NFRAMES 200

typedef struct expect_scope {
    uint32_t tid, name, depth;
    int64_t begin, end, children;
} expect_scope;

static expect_scope exp_scopes[4 * 3 * NFRAMES + 8];
static size_t exp_n;

static void build_reference(const char *path, size_t block_bytes)
{
    cap_meta_kv meta[] = {{"program", "test"}, {"build", "b1"}};
    cap_writer_options o = {.meta = meta, .meta_count = 2,
                            .clock_source = "monotonic",
                            .tick_period_ns = 1.0, .origin_tick = 0,
                            .block_bytes = block_bytes};
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, &o), CAP_OK);
    const char *nm[] = {NULL, "alpha", "beta", "gamma", "delta", "counter",
                        "gpu frame", "pass a", "pass b", "pass b.1"};
    for (uint32_t i = 1; i <= G3; i++)
        assert_int_equal(cap_writer_name(w, i, nm[i], "f.c", i), CAP_OK);
    for (uint32_t t = 0; t < 3; t++) {
        char tn[16];
        snprintf(tn, sizeof tn, "t%u", t);
        assert_int_equal(cap_writer_thread(w, t, tn), CAP_OK);
    }
    assert_int_equal(cap_writer_gpu_track(w, 0, "gfx", 2.0), CAP_OK);
    assert_int_equal(cap_writer_gpu_calibration(w, 0, 1000, 500, 3), CAP_OK);
    exp_n = 0;
    uint64_t t = 100;
    for (uint64_t f = 0; f < NFRAMES; f++) {
        uint64_t fb = t;
        for (uint32_t th = 0; th < 3; th++) {
            /* A [ B [ C ] D ] with per-thread offsets */
            uint64_t x = fb + th;
            uint64_t a0 = x, b0 = x + 10, c0 = x + 20, c1 = x + 50 + f,
                     b1 = x + 60 + f, d0 = b1 + 5, d1 = d0 + 7, a1 = d1 + 3;
            assert_int_equal(cap_writer_scope_begin(w, th, A, a0), CAP_OK);
            assert_int_equal(cap_writer_scope_begin(w, th, B, b0), CAP_OK);
            assert_int_equal(cap_writer_scope_begin(w, th, C, c0), CAP_OK);
            assert_int_equal(cap_writer_scope_end(w, th, c1), CAP_OK);
            exp_scopes[exp_n++] = (expect_scope){th, C, 2, (int64_t)c0, (int64_t)c1, 0};
            assert_int_equal(cap_writer_scope_end(w, th, b1), CAP_OK);
            exp_scopes[exp_n++] = (expect_scope){th, B, 1, (int64_t)b0, (int64_t)b1, (int64_t)(c1 - c0)};
            assert_int_equal(cap_writer_scope_begin(w, th, D, d0), CAP_OK);
            assert_int_equal(cap_writer_scope_end(w, th, d1), CAP_OK);
            exp_scopes[exp_n++] = (expect_scope){th, D, 1, (int64_t)d0, (int64_t)d1, 0};
            assert_int_equal(cap_writer_scope_end(w, th, a1), CAP_OK);
            exp_scopes[exp_n++] = (expect_scope){th, A, 0, (int64_t)a0, (int64_t)a1,
                                                 (int64_t)((b1 - b0) + (d1 - d0))};
        }
        uint64_t fe = fb + 400;
        assert_int_equal(cap_writer_frame(w, f, fb, fe), CAP_OK);
        assert_int_equal(cap_writer_counter(w, CNT, fe, 0.5 * (double)f), CAP_OK);
        cap_gpu_span sp[5] = {
            {G0, -1, 2000 + 100 * f, 2000 + 100 * f + 80, 1},
            {G1, 0, 2000 + 100 * f + 5, 2000 + 100 * f + 25, 1},
            {G2, 0, 2000 + 100 * f + 30, 2000 + 100 * f + 70, 1},
            {G3, 2, 0, 0, 0},                                    /* unmeasured */
            {G3, 2, 2000 + 100 * f + 50, 2000 + 100 * f + 40, 1}, /* invalid */
        };
        assert_int_equal(cap_writer_gpu_frame(w, 0, f, sp, 5), CAP_OK);
        t = fe;
    }
    /* one scope left open: closed at end by the writer */
    assert_int_equal(cap_writer_scope_begin(w, 1, A, t + 10), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 1, B, t + 20), CAP_OK);
    exp_scopes[exp_n++] = (expect_scope){1, B, 1, (int64_t)t + 20, (int64_t)t + 20, 0};
    exp_scopes[exp_n++] = (expect_scope){1, A, 0, (int64_t)t + 10, (int64_t)t + 20, 0};
    assert_int_equal(cap_writer_close(w), CAP_OK);
}

typedef struct tally {
    size_t frames, scopes, counters, spans, unmeasured, threads, tracks;
    size_t scope_match;
    int end; /* final result */
    int truncated_seen, corrupt_seen;
} tally;

static tally read_all(const char *path, cap_result *open_res)
{
    tally y = {0};
    cap_reader *r;
    char d[256];
    *open_res = cap_reader_open(&r, path, d, sizeof d);
    if (*open_res != CAP_OK)
        return y;
    cap_event ev;
    cap_result res;
    size_t guard = 0;
    while ((res = cap_reader_next(r, &ev)) != CAP_DONE) {
        assert_true(++guard < 10000000);
        if (res == CAP_E_TRUNCATED) {
            y.truncated_seen++;
            continue;
        }
        if (res == CAP_E_CORRUPT) {
            y.corrupt_seen++;
            continue;
        }
        assert_int_equal(res, CAP_OK);
        switch (ev.kind) {
        case CAP_EV_FRAME: y.frames++; break;
        case CAP_EV_SCOPE: y.scopes++; break;
        case CAP_EV_COUNTER: y.counters++; break;
        case CAP_EV_GPU_SPAN:
            if (ev.u.gpu_span.measured)
                y.spans++;
            else
                y.unmeasured++;
            break;
        case CAP_EV_THREAD: y.threads++; break;
        case CAP_EV_GPU_TRACK: y.tracks++; break;
        }
    }
    y.end = res;
    cap_reader_close(r);
    return y;
}

/* ---- round trip -------------------------------------------------------- */

static void round_trip_reads_back_every_event_exactly(void **state)
{
    (void)state;
    char path[300];
    tmp_path(path, sizeof path, "ref.cap");
    build_reference(path, 4096);
    cap_reader *r;
    char d[256];
    assert_int_equal(cap_reader_open(&r, path, d, sizeof d), CAP_OK);
    assert_string_equal(cap_reader_meta_get(r, "program"), "test");
    assert_string_equal(cap_reader_meta_get(r, "build"), "b1");
    assert_string_equal(cap_reader_clock_source(r), "monotonic");
    cap_event ev;
    cap_result res;
    size_t si = 0, frames = 0, counters = 0, gspans = 0;
    /* scopes come per thread in end order; compare per thread */
    size_t seen_per_thread[3] = {0};
    while ((res = cap_reader_next(r, &ev)) == CAP_OK) {
        if (ev.kind == CAP_EV_SCOPE) {
            const cap_ev_scope *s = &ev.u.scope;
            /* find the k-th expected scope of this thread */
            size_t k = 0, want = seen_per_thread[s->tid]++;
            const expect_scope *e = NULL;
            for (size_t i = 0; i < exp_n; i++)
                if (exp_scopes[i].tid == s->tid && k++ == want) {
                    e = &exp_scopes[i];
                    break;
                }
            assert_non_null(e);
            assert_int_equal(s->name, e->name);
            assert_int_equal(s->depth, e->depth);
            assert_int_equal(s->begin_ns, e->begin);
            assert_int_equal(s->end_ns, e->end);
            assert_int_equal(s->children_ns, e->children);
            if (s->depth >= 1)
                assert_int_equal(s->stack[0], A);
            if (s->depth == 2)
                assert_int_equal(s->stack[1], B);
            si++;
        } else if (ev.kind == CAP_EV_FRAME) {
            assert_int_equal(ev.u.frame.index, frames);
            assert_int_equal(ev.u.frame.begin_ns, 100 + 400 * (int64_t)frames);
            assert_int_equal(ev.u.frame.end_ns, 500 + 400 * (int64_t)frames);
            frames++;
        } else if (ev.kind == CAP_EV_COUNTER) {
            assert_int_equal(ev.u.counter.name, CNT);
            assert_true(ev.u.counter.value == 0.5 * (double)counters);
            assert_int_equal(ev.u.counter.time_ns, 500 + 400 * (int64_t)counters);
            counters++;
        } else if (ev.kind == CAP_EV_GPU_SPAN) {
            const cap_ev_gpu_span *g = &ev.u.gpu_span;
            size_t f = gspans / 4, k = gspans % 4;
            assert_int_equal(g->cpu_frame, f);
            int64_t base = 2000 + 100 * (int64_t)f;
            /* calibration: gpu tick 1000 == cpu tick 500, 2 ns per tick */
            int64_t cpu0 = 500 + (base - 1000) * 2;
            switch (k) {
            case 0:
                assert_int_equal(g->name, G0);
                assert_int_equal(g->depth, 0);
                assert_int_equal(g->duration_ns, 160);
                assert_int_equal(g->self_ns, 160 - 40 - 80);
                assert_true(g->calibrated);
                assert_int_equal(g->begin_ns, cpu0);
                break;
            case 1:
                assert_int_equal(g->name, G1);
                assert_int_equal(g->depth, 1);
                assert_int_equal(g->parent_name, G0);
                assert_int_equal(g->duration_ns, 40);
                assert_int_equal(g->begin_ns, cpu0 + 10);
                break;
            case 2:
                assert_int_equal(g->name, G2);
                assert_int_equal(g->duration_ns, 80);
                assert_int_equal(g->self_ns, 80);
                break;
            case 3:
                assert_int_equal(g->name, G3);
                assert_int_equal(g->depth, 2);
                assert_int_equal(g->parent_name, G2);
                assert_int_equal(g->stack[0], G0);
                assert_int_equal(g->stack[1], G2);
                assert_false(g->measured);
                break;
            }
            gspans++;
        }
    }
    assert_int_equal(res, CAP_DONE);
    assert_int_equal(si, exp_n);
    assert_int_equal(frames, NFRAMES);
    assert_int_equal(counters, NFRAMES);
    assert_int_equal(gspans, 4 * NFRAMES);
    const cap_reader_stats *st = cap_reader_get_stats(r);
    assert_true(st->has_footer);
    assert_false(st->truncated);
    assert_int_equal(st->gpu_invalid, NFRAMES);
    assert_int_equal(st->gpu_unmeasured, NFRAMES);
    assert_int_equal(st->closed_at_end, 2);
    assert_int_equal(st->unnamed_ids, 0);
    assert_true(st->chunks > 5); /* the reference spans several blocks */
    assert_string_equal(cap_reader_name(r, G3), "pass b.1");
    assert_string_equal(cap_reader_name_file(r, G3), "f.c");
    assert_int_equal(cap_reader_name_line(r, G3), G3);
    assert_string_equal(cap_reader_thread_name(r, 2), "t2");
    assert_string_equal(cap_reader_track_name(r, 0), "gfx");
    cap_reader_close(r);
}

/* ---- every block names its ids ---------------------------------------- */

typedef struct chunk_at {
    size_t off, len; /* whole chunk incl. header */
    uint16_t type;
} chunk_at;

static size_t list_chunks(const unsigned char *b, size_t n, chunk_at *out,
                          size_t max)
{
    size_t k = 0, p = CAPF_HEADER_LEN;
    capf_chunk_header h;
    while (p + CAPF_CHUNK_HEADER_LEN <= n && k < max &&
           capf_chunk_header_decode(b + p, &h) == 0) {
        out[k].off = p;
        out[k].len = CAPF_CHUNK_HEADER_LEN + h.stored;
        out[k].type = h.type;
        k++;
        p += CAPF_CHUNK_HEADER_LEN + h.stored;
    }
    return k;
}

static uint8_t *payload(const unsigned char *b, const chunk_at *c, size_t *n)
{
    capf_chunk_header h;
    assert_int_equal(capf_chunk_header_decode(b + c->off, &h), 0);
    uint8_t *raw = malloc(h.raw + 1);
    assert_non_null(raw);
    const unsigned char *src = b + c->off + CAPF_CHUNK_HEADER_LEN;
    if (h.flags & CAPF_CHUNK_FLAG_ZSTD)
        assert_int_equal(ZSTD_decompress(raw, h.raw, src, h.stored), h.raw);
    else
        memcpy(raw, src, h.raw);
    *n = h.raw;
    return raw;
}

static void every_block_names_every_id_it_references(void **state)
{
    (void)state;
    char path[300];
    tmp_path(path, sizeof path, "names.cap");
    build_reference(path, 4096);
    size_t n;
    unsigned char *b = slurp(path, &n);
    chunk_at ch[512];
    size_t k = list_chunks(b, n, ch, 512);
    size_t blocks = 0, sr_sections = 0;
    for (size_t i = 0; i < k; i++) {
        if (ch[i].type != CAPF_CHUNK_BLOCK)
            continue;
        blocks++;
        size_t len;
        uint8_t *raw = payload(b, &ch[i], &len);
        int named[32] = {0}, used[32] = {0};
        capf_cur c = {raw, raw + len, 0};
        while (c.p < c.end) {
            uint8_t kind = capf_cur_u8(&c);
            uint64_t sl = capf_cur_varint(&c);
            capf_cur s = {c.p, c.p + sl, 0};
            c.p += sl;
            if (kind == CAPF_SEC_NAMES) {
                uint64_t cnt = capf_cur_varint(&s);
                for (uint64_t j = 0; j < cnt; j++) {
                    uint64_t id = capf_cur_varint(&s);
                    const uint8_t *str;
                    size_t l;
                    capf_cur_str(&s, &str, &l);
                    capf_cur_str(&s, &str, &l);
                    (void)capf_cur_varint(&s);
                    named[id] = 1;
                }
            } else if (kind == CAPF_SEC_SCOPES || kind == CAPF_SEC_SCOPES_R) {
                (void)capf_cur_varint(&s);
                (void)capf_cur_varint(&s);
                uint64_t depth = capf_cur_varint(&s);
                for (uint64_t j = 0; j < depth; j++) {
                    used[capf_cur_varint(&s)] = 1;
                    (void)capf_cur_varint(&s);
                    (void)capf_cur_varint(&s);
                }
                uint64_t ne = capf_cur_varint(&s);
                (void)capf_cur_varint(&s);
                if (kind == CAPF_SEC_SCOPES_R) { /* the class table */
                    sr_sections++;
                    uint64_t ncls = capf_cur_varint(&s);
                    for (uint64_t j = 0; j < 2 * ncls; j++)
                        (void)capf_cur_varint(&s);
                }
                for (uint64_t j = 0; j < ne; j++)
                    used[capf_cur_varint(&s)] = 1;
            } else if (kind == CAPF_SEC_SCOPES_E) { /* its name list */
                (void)capf_cur_varint(&s);
                (void)capf_cur_varint(&s);
                uint64_t depth = capf_cur_varint(&s);
                for (uint64_t j = 0; j < 3 * depth; j++)
                    (void)capf_cur_varint(&s);
                (void)capf_cur_varint(&s);
                uint64_t nn = capf_cur_varint(&s), id = 0;
                for (uint64_t j = 0; j < nn; j++) {
                    id += capf_cur_varint(&s);
                    used[id < 32 ? id : 0] = 1;
                    for (int q = 0; q < 4; q++)
                        (void)capf_cur_varint(&s);
                }
                s.p = s.end;
            } else if (kind == CAPF_SEC_COUNTERS) {
                uint64_t cnt = capf_cur_varint(&s);
                for (uint64_t j = 0; j < cnt; j++) {
                    used[capf_cur_varint(&s)] = 1;
                    (void)capf_cur_varint(&s);
                    (void)capf_cur_f64(&s);
                }
            } else if (kind == CAPF_SEC_GPU_FRAME) {
                (void)capf_cur_varint(&s);
                (void)capf_cur_varint(&s);
                (void)capf_cur_varint(&s);
                uint64_t cnt = capf_cur_varint(&s);
                for (uint64_t j = 0; j < cnt; j++) {
                    used[capf_cur_varint(&s)] = 1;
                    (void)capf_cur_varint(&s);
                    if (capf_cur_u8(&s) & 1) {
                        (void)capf_cur_varint(&s);
                        (void)capf_cur_varint(&s);
                    }
                }
            }
            assert_false(s.bad);
        }
        used[0] = 0; /* token 0 is an end, not a name */
        for (int id = 1; id < 32; id++)
            if (used[id] && !named[id])
                fail_msg("block at offset %zu uses id %d without naming it",
                         ch[i].off, id);
        free(raw);
    }
    assert_true(blocks >= 5);
    (void)sr_sections; /* this capture's deltas repeat: plain SCOPES */
    free(b);
}

/* ---- truncation at every byte ----------------------------------------- */

static void truncation_at_every_offset_recovers_every_complete_chunk(void **state)
{
    (void)state;
    char path[300], cut[300];
    tmp_path(path, sizeof path, "small.cap");
    tmp_path(cut, sizeof cut, "cut.cap");
    build_reference(path, 4096);
    size_t n;
    unsigned char *b = slurp(path, &n);
    chunk_at ch[512];
    size_t k = list_chunks(b, n, ch, 512);
    /* frames per chunk, from the whole file */
    size_t frames_in[512] = {0};
    {
        /* count frames by reading each prefix ending at a chunk boundary */
        size_t prev = 0;
        for (size_t i = 0; i < k; i++) {
            spit(cut, b, ch[i].off + ch[i].len);
            cap_result o;
            tally y = read_all(cut, &o);
            frames_in[i] = y.frames - prev;
            prev = y.frames;
        }
    }
    for (size_t len = 0; len < n; len++) {
        spit(cut, b, len);
        cap_result o;
        tally y = read_all(cut, &o);
        if (len < CAPF_HEADER_LEN + ch[0].len) {
            /* no complete metadata chunk: cannot open */
            assert_true(o == CAP_E_NOT_CAPTURE || o == CAP_E_TRUNCATED);
            continue;
        }
        assert_int_equal(o, CAP_OK);
        assert_int_equal(y.end, CAP_DONE);
        /* every chunk that ends at or before len was recovered */
        size_t want = 0;
        int complete_footer = 0;
        for (size_t i = 0; i < k; i++)
            if (ch[i].off + ch[i].len <= len) {
                want += frames_in[i];
                if (ch[i].type == CAPF_CHUNK_FOOTER)
                    complete_footer = 1;
            }
        assert_int_equal(y.frames, want);
        /* truncation is reported once, unless the footer made it */
        assert_int_equal(y.truncated_seen, complete_footer ? 0 : 1);
    }
    free(b);
}

/* ---- flipped bytes ----------------------------------------------------- */

static void flipped_byte_in_each_chunk_is_detected(void **state)
{
    (void)state;
    char path[300], bad[300];
    tmp_path(path, sizeof path, "flip.cap");
    tmp_path(bad, sizeof bad, "bad.cap");
    build_reference(path, 4096);
    size_t n;
    unsigned char *b = slurp(path, &n);
    chunk_at ch[512];
    size_t k = list_chunks(b, n, ch, 512);
    cap_result o;
    tally whole = read_all(path, &o);
    for (size_t i = 0; i < k; i++) {
        for (int where = 0; where < 2; where++) {
            /* where 0: a payload byte; 1: a byte of the chunk header */
            size_t at = where == 0 ? ch[i].off + CAPF_CHUNK_HEADER_LEN + ch[i].len / 3
                                   : ch[i].off + 9;
            if (at >= ch[i].off + ch[i].len)
                continue;
            b[at] ^= 0x21;
            spit(bad, b, n);
            b[at] ^= 0x21;
            tally y = read_all(bad, &o);
            if (ch[i].type == CAPF_CHUNK_META) {
                assert_int_equal(o, CAP_E_CORRUPT);
                continue;
            }
            assert_int_equal(o, CAP_OK);
            assert_int_equal(y.end, CAP_DONE);
            assert_int_equal(y.corrupt_seen, 1);
            if (ch[i].type == CAPF_CHUNK_BLOCK)
                assert_true(y.frames <= whole.frames);
        }
    }
    free(b);
}

/* ---- forward compatibility -------------------------------------------- */

static void unknown_chunk_type_is_skipped(void **state)
{
    (void)state;
    char path[300], out[300];
    tmp_path(path, sizeof path, "unk.cap");
    tmp_path(out, sizeof out, "unk2.cap");
    build_reference(path, 4096);
    size_t n;
    unsigned char *b = slurp(path, &n);
    chunk_at ch[512];
    size_t k = list_chunks(b, n, ch, 512);
    assert_true(k > 3);
    /* a chunk of type 0x7777 with valid checksums, inserted after chunk 2 */
    const char body[] = "a future kind of chunk";
    capf_chunk_header h = {.type = 0x7777, .flags = 0,
                           .stored = sizeof body, .raw = sizeof body,
                           .payload_crc = capf_crc32(body, sizeof body)};
    uint8_t hdr[CAPF_CHUNK_HEADER_LEN];
    capf_chunk_header_encode(hdr, &h);
    size_t at = ch[2].off;
    size_t m = n + sizeof hdr + sizeof body;
    unsigned char *c = malloc(m);
    memcpy(c, b, at);
    memcpy(c + at, hdr, sizeof hdr);
    memcpy(c + at + sizeof hdr, body, sizeof body);
    memcpy(c + at + sizeof hdr + sizeof body, b + at, n - at);
    /* the trailer points at the footer, which moved */
    capf_trailer_encode(c + m - CAPF_TRAILER_LEN,
                        capf_get_u64(c + m - CAPF_TRAILER_LEN) + sizeof hdr +
                            sizeof body);
    spit(out, c, m);
    cap_result o1, o2;
    tally y1 = read_all(path, &o1), y2 = read_all(out, &o2);
    assert_int_equal(o2, CAP_OK);
    assert_int_equal(y2.frames, y1.frames);
    assert_int_equal(y2.scopes, y1.scopes);
    assert_int_equal(y2.spans, y1.spans);
    assert_int_equal(y2.corrupt_seen, 0);
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, out, NULL, 0), CAP_OK);
    cap_event ev;
    while (cap_reader_next(r, &ev) == CAP_OK)
        ;
    assert_int_equal(cap_reader_get_stats(r)->unknown_chunks, 1);
    cap_reader_close(r);
    free(b);
    free(c);
}

static void set_version(unsigned char *b, uint16_t major, uint16_t minor)
{
    capf_header_encode(b, major, minor);
}

static void future_major_version_is_refused_and_minor_is_read(void **state)
{
    (void)state;
    char path[300], out[300];
    tmp_path(path, sizeof path, "ver.cap");
    tmp_path(out, sizeof out, "ver2.cap");
    build_reference(path, 4096);
    size_t n;
    unsigned char *b = slurp(path, &n);
    set_version(b, 5, 0);
    spit(out, b, n);
    cap_reader *r;
    char d[256];
    assert_int_equal(cap_reader_open(&r, out, d, sizeof d), CAP_E_VERSION);
    assert_null(r);
    assert_non_null(strstr(d, "version 5.0"));
    set_version(b, 1, 7);
    spit(out, b, n);
    cap_result o;
    tally y = read_all(out, &o);
    assert_int_equal(o, CAP_OK);
    assert_int_equal(y.frames, NFRAMES);
    free(b);
}

static void foreign_and_missing_files_get_distinct_errors(void **state)
{
    (void)state;
    char path[300], d[256];
    cap_reader *r;
    tmp_path(path, sizeof path, "empty.cap");
    spit(path, "", 0);
    assert_int_equal(cap_reader_open(&r, path, d, sizeof d), CAP_E_NOT_CAPTURE);
    assert_string_equal(d, "empty file, not a capture");
    tmp_path(path, sizeof path, "json.cap");
    spit(path, "{\"traceEvents\":[]}", 18);
    assert_int_equal(cap_reader_open(&r, path, d, sizeof d), CAP_E_NOT_CAPTURE);
    tmp_path(path, sizeof path, "missing.cap");
    assert_int_equal(cap_reader_open(&r, path, d, sizeof d), CAP_E_IO);
    assert_non_null(strstr(d, "No such file"));
    assert_int_equal(cap_reader_open(&r, tmpdir, d, sizeof d), CAP_E_IO);
    assert_string_equal(d, "is a directory");
}

static void writer_rejects_misuse_without_damaging_the_file(void **state)
{
    (void)state;
    char path[300];
    tmp_path(path, sizeof path, "misuse.cap");
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, NULL), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 1, 10), CAP_E_MISUSE); /* no thread */
    assert_int_equal(cap_writer_thread(w, 0, "m"), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 10), CAP_E_MISUSE); /* nothing open */
    assert_int_equal(cap_writer_name(w, 0, "zero", NULL, 0), CAP_E_MISUSE);
    assert_int_equal(cap_writer_name(w, 1, "one", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_name(w, 1, "one", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_name(w, 1, "uno", NULL, 0), CAP_E_MISUSE);
    assert_int_equal(cap_writer_frame(w, 5, 20, 10), CAP_E_MISUSE);
    assert_int_equal(cap_writer_frame(w, 5, 10, 20), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 4, 30, 40), CAP_E_MISUSE);
    assert_int_equal(cap_writer_gpu_track(w, 0, "g", 0.0), CAP_E_MISUSE);
    assert_int_equal(cap_writer_close(w), CAP_OK);
    cap_result o;
    tally y = read_all(path, &o);
    assert_int_equal(o, CAP_OK);
    assert_int_equal(y.frames, 1);
}

/* A capture may use any name id up to CAP_MAX_NAME_ID (a crafted one
 * does; capture_convert copies ids as they are): the writer's memory
 * follows the ids it is given, not the largest (fuzz_stream once found a
 * copy taking 2.4 GB for one such id). */
static long peak_rss_kib(void)
{
    struct rusage u;
    assert_int_equal(getrusage(RUSAGE_SELF, &u), 0);
    return u.ru_maxrss;
}

static void sparse_name_ids_cost_what_they_use(void **state)
{
    (void)state;
    char path[300];
    tmp_path(path, sizeof path, "sparse-ids.cap");
    long before = peak_rss_kib();
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, NULL), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    const uint32_t ids[3] = {1, CAP_MAX_NAME_ID / 2, CAP_MAX_NAME_ID};
    const char *names[3] = {"first", "middle", "last"};
    for (int i = 0; i < 3; i++)
        assert_int_equal(cap_writer_name(w, ids[i], names[i], NULL, 0),
                         CAP_OK);
    for (int i = 0; i < 3; i++)
        assert_int_equal(cap_writer_scope_begin(w, 0, ids[i], 10 + i), CAP_OK);
    for (int i = 0; i < 3; i++)
        assert_int_equal(cap_writer_scope_end(w, 0, 20 + i), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 0, 5, 30), CAP_OK);
    assert_int_equal(cap_writer_close(w), CAP_OK);
    long grew = peak_rss_kib() - before;
    /* three pages of names: under 1 MiB; a table to CAP_MAX_NAME_ID took
       2.4 GB */
    printf("peak RSS grew by %ld KiB\n", grew);
    assert_true(grew < 64 * 1024);

    cap_reader *r;
    char d[256];
    assert_int_equal(cap_reader_open(&r, path, d, sizeof d), CAP_OK);
    cap_event ev;
    cap_result res;
    uint32_t seen[3] = {0, 0, 0};
    int n = 0;
    while ((res = cap_reader_next(r, &ev)) == CAP_OK) {
        if (ev.kind != CAP_EV_SCOPE)
            continue;
        /* scopes end innermost first: last, middle, first */
        assert_true(n < 3);
        seen[n++] = ev.u.scope.name;
        assert_int_equal(ev.u.scope.depth, 2 - (n - 1));
    }
    assert_int_equal(res, CAP_DONE);
    assert_int_equal(n, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(seen[i], ids[2 - i]);
        assert_string_equal(cap_reader_name(r, ids[i]), names[i]);
    }
    cap_reader_close(r);
    unlink(path);
}

static void unwritable_path_fails_at_open(void **state)
{
    (void)state;
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, "/nonexistent-dir/x.cap", NULL),
                     CAP_E_IO);
    assert_null(w);
    assert_int_equal(cap_writer_open_path(&w, "/dev/full", NULL), CAP_E_IO);
}

static void damage_at_the_end_is_reported_as_truncation_and_trailer_checked(void **state)
{
    (void)state;
    char path[300], bad[300];
    tmp_path(path, sizeof path, "end.cap");
    tmp_path(bad, sizeof bad, "end-bad.cap");
    build_reference(path, 4096);
    size_t n;
    unsigned char *b = slurp(path, &n);
    chunk_at ch[512];
    size_t k = list_chunks(b, n, ch, 512);
    assert_int_equal(ch[k - 1].type, CAPF_CHUNK_FOOTER);
    cap_result o;
    /* a damaged footer header: nothing valid follows, so the file is cut */
    b[ch[k - 1].off + 2] ^= 0xff;
    spit(bad, b, n);
    b[ch[k - 1].off + 2] ^= 0xff;
    tally y = read_all(bad, &o);
    assert_int_equal(o, CAP_OK);
    assert_int_equal(y.corrupt_seen, 1);
    assert_int_equal(y.truncated_seen, 1);
    assert_int_equal(y.frames, NFRAMES);
    /* a damaged trailer: the events are complete, the damage is reported */
    b[n - 3] ^= 0x01;
    spit(bad, b, n);
    y = read_all(bad, &o);
    assert_int_equal(y.corrupt_seen, 1);
    assert_int_equal(y.truncated_seen, 0);
    assert_int_equal(y.frames, NFRAMES);
    free(b);
}

/* ---- 4.0: groups of blocks --------------------------------------------- */

#define G_FRAMES 300 /* 10 ms each: 3 s, so three groups of at most 1 s */
#define G_PER_BLOCK 5

/* A 4.0 file of G_FRAMES frames, each with a scope named "tick", a block
 * every G_PER_BLOCK frames (as the producer's flush makes them), in
 * groups of at most group_ms (0: the writer's default). */
static void build_groups_of(const char *path, unsigned group_ms)
{
    cap_writer_options o = {.clock_source = "monotonic",
                            .tick_period_ns = 1.0,
                            .format_major = 4,
                            .group_max_ms = group_ms};
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, &o), CAP_OK);
    assert_int_equal(cap_writer_name(w, 1, "tick", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    for (uint64_t f = 0; f < G_FRAMES; f++) {
        uint64_t t = f * 10000000;
        assert_int_equal(cap_writer_scope_begin(w, 0, 1, t + 100), CAP_OK);
        assert_int_equal(cap_writer_scope_end(w, 0, t + 5000 + f % 7),
                         CAP_OK);
        assert_int_equal(cap_writer_frame(w, f, t, t + 9000000), CAP_OK);
        if ((f + 1) % G_PER_BLOCK == 0)
            assert_int_equal(cap_writer_flush(w), CAP_OK);
    }
    assert_int_equal(cap_writer_close(w), CAP_OK);
}

static void build_groups(const char *path)
{
    build_groups_of(path, 1000);
}

/* The groups' first blocks (no CONT) of the file at path: how many, the
 * first's chunk index in starts[0]. */
static size_t group_starts(const char *path, size_t *first)
{
    size_t n, ns = 0;
    unsigned char *b = slurp(path, &n);
    chunk_at ch[256];
    size_t nc = list_chunks(b, n, ch, 256);
    *first = 0;
    for (size_t i = 1; i + 1 < nc; i++) {
        capf_chunk_header h;
        assert_int_equal(capf_chunk_header_decode(b + ch[i].off, &h), 0);
        if (!(h.flags & CAPF_CHUNK_FLAG_CONT) && ns++ == 0)
            *first = i;
    }
    free(b);
    return ns;
}

/* The writer's default group spans up to 4 s (so G_FRAMES' 3 s are one
 * group), group_max_ms shortens it; every frame reads either way. */
static void groups_span_4_s_by_default_and_group_max_ms_when_asked(
    void **state)
{
    (void)state;
    char path[300];
    tmp_path(path, sizeof path, "groups-len.cap");
    static const struct {
        unsigned ms;
        size_t groups;
    } want[] = {{0, 1}, {4000, 1}, {1000, 3}, {500, 6}};
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        build_groups_of(path, want[k].ms);
        size_t first;
        assert_int_equal(group_starts(path, &first), want[k].groups);
        assert_int_equal(first, 1);
        cap_result o;
        tally y = read_all(path, &o);
        assert_int_equal(o, CAP_OK);
        assert_int_equal(y.frames, G_FRAMES);
        assert_int_equal(y.corrupt_seen, 0);
    }
}

static void groups_read_whole_cut_short_and_lose_only_a_damaged_group(
    void **state)
{
    (void)state;
    char path[300], out[300];
    tmp_path(path, sizeof path, "groups.cap");
    tmp_path(out, sizeof out, "groups-cut.cap");
    build_groups(path);
    size_t n;
    unsigned char *b = slurp(path, &n);
    assert_int_equal(b[8], 4); /* format 4.0 */
    chunk_at ch[256];
    size_t nc = list_chunks(b, n, ch, 256);
    size_t blocks = nc - 2; /* less META and FOOTER */
    assert_int_equal(blocks, G_FRAMES / G_PER_BLOCK);
    /* the groups: first blocks are those without CONT; the second
       block of the file continues the first */
    size_t starts[64], ns = 0;
    for (size_t i = 1; i + 1 < nc; i++) {
        capf_chunk_header h;
        assert_int_equal(capf_chunk_header_decode(b + ch[i].off, &h), 0);
        assert_true(h.flags & CAPF_CHUNK_FLAG_ZSTD);
        if (!(h.flags & CAPF_CHUNK_FLAG_CONT))
            starts[ns++] = i;
    }
    assert_int_equal(ns, 3);
    assert_int_equal(starts[0], 1);
    cap_result o;
    tally y = read_all(path, &o);
    assert_int_equal(o, CAP_OK);
    assert_int_equal(y.frames, G_FRAMES);
    assert_int_equal(y.scopes, G_FRAMES);
    assert_int_equal(y.corrupt_seen, 0);
    assert_int_equal(y.end, CAP_DONE);

    /* cut short after each block, and inside it: every complete block's
       frames read (its group's earlier blocks lie before it) */
    for (size_t i = 1; i + 1 < nc; i++)
        for (int mid = 0; mid < 2; mid++) {
            size_t cut = ch[i].off + ch[i].len - (size_t)mid * 7;
            spit(out, b, cut);
            y = read_all(out, &o);
            assert_int_equal(o, CAP_OK);
            assert_int_equal(y.frames, (i - (size_t)mid) * G_PER_BLOCK);
            assert_int_equal(y.corrupt_seen, 0);
            assert_int_equal(y.truncated_seen, 1);
        }

    /* a byte flipped in the second group's first block: that group is
       lost (its first block and each block continuing it reported
       corrupt), the other groups read */
    unsigned char *d = malloc(n);
    assert_non_null(d);
    memcpy(d, b, n);
    d[ch[starts[1]].off + CAPF_CHUNK_HEADER_LEN + 5] ^= 0x40;
    spit(out, d, n);
    y = read_all(out, &o);
    assert_int_equal(o, CAP_OK);
    size_t lost = starts[2] - starts[1];
    assert_int_equal(y.corrupt_seen, lost);
    assert_int_equal(y.frames, G_FRAMES - lost * G_PER_BLOCK);
    assert_int_equal(y.end, CAP_DONE);

    /* the CONT bit in a 3.x file is a reserved bit: damage, skipped */
    unsigned char *v3 = malloc(n);
    assert_non_null(v3);
    memcpy(v3, b, n);
    set_version(v3, 3, 1);
    spit(out, v3, n);
    y = read_all(out, &o);
    assert_int_equal(o, CAP_OK);
    /* and a first block's unfinished zstd frame is not a 3.x payload:
       every block is damage to a 3.x reader, none is misread */
    assert_int_equal(y.frames, 0);
    assert_int_equal(y.corrupt_seen, blocks);
    free(v3);
    free(d);
    free(b);
    unlink(path);
    unlink(out);
}

/* 4.0's SCOPES_E sections start from the token lists their thread's
 * previous section in the group left (carried by name id): the same
 * events written as 3.1 and as 4.0, in blocks of 2 frames on 3 threads
 * (one of them absent from every third block), with names that come and
 * go between blocks (a name listed in one section, not the next, then
 * again), read back alike, event for event. */
static void write_varied(const char *path, unsigned major)
{
    cap_writer_options o = {.clock_source = "monotonic",
                            .tick_period_ns = 1.0,
                            .format_major = major};
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, &o), CAP_OK);
    for (uint32_t id = 1; id <= 40; id++) {
        char nm[16];
        snprintf(nm, sizeof nm, "n%u", id);
        assert_int_equal(cap_writer_name(w, id, nm, NULL, 0), CAP_OK);
    }
    for (uint32_t tid = 0; tid < 3; tid++)
        assert_int_equal(cap_writer_thread(w, tid, "t"), CAP_OK);
    uint64_t rng = 7;
    for (uint64_t f = 0; f < 120; f++) {
        uint64_t t0 = 1000 + f * 10000000;
        for (uint32_t tid = 0; tid < 3; tid++) {
            if (tid == 2 && (f / 2) % 3 == 1)
                continue; /* a thread absent from a block */
            uint64_t t = t0 + tid * 1000;
            for (int k = 0; k < 12; k++) {
                rng = rng * 6364136223846793005ull + 1442695040888963407ull;
                uint32_t r = (uint32_t)(rng >> 33);
                /* names 1..8 every frame; 9..40 some blocks only */
                uint32_t id = 1 + (uint32_t)k % 8;
                if (r % 5 == 0)
                    id = 9 + (uint32_t)((f / 2 + r) % 32);
                assert_int_equal(cap_writer_scope_begin(w, tid, id, t),
                                 CAP_OK);
                uint32_t inner = 1 + (r >> 8) % 40;
                if (r % 3 == 0) {
                    assert_int_equal(cap_writer_scope_begin(
                                         w, tid, inner, t + 100 + r % 50),
                                     CAP_OK);
                    assert_int_equal(
                        cap_writer_scope_end(w, tid, t + 900 + r % 300),
                        CAP_OK);
                }
                t += 2000 + id * 100 + (r >> 4) % 200;
                assert_int_equal(cap_writer_scope_end(w, tid, t), CAP_OK);
                t += 50 + (r >> 12) % 20;
            }
        }
        assert_int_equal(cap_writer_frame(w, f, t0, t0 + 9000000), CAP_OK);
        if (f % 2 == 1)
            assert_int_equal(cap_writer_flush(w), CAP_OK);
    }
    assert_int_equal(cap_writer_close(w), CAP_OK);
}

static void groups_carry_token_lists_and_read_as_3_1(void **state)
{
    (void)state;
    char p3[300], p4[300];
    tmp_path(p3, sizeof p3, "carry-3.cap");
    tmp_path(p4, sizeof p4, "carry-4.cap");
    write_varied(p3, 3);
    write_varied(p4, 4);
    cap_reader *a, *b;
    char detail[256];
    assert_int_equal(cap_reader_open(&a, p3, detail, sizeof detail), CAP_OK);
    assert_int_equal(cap_reader_open(&b, p4, detail, sizeof detail), CAP_OK);
    unsigned major, minor;
    cap_reader_version(b, &major, &minor);
    assert_int_equal(major, 4);
    cap_event x, y;
    cap_result ra, rb;
    size_t scopes = 0;
    for (;;) {
        do
            ra = cap_reader_next(a, &x);
        while (ra == CAP_OK && x.kind != CAP_EV_SCOPE);
        do
            rb = cap_reader_next(b, &y);
        while (rb == CAP_OK && y.kind != CAP_EV_SCOPE);
        assert_int_equal(ra, rb);
        if (ra != CAP_OK)
            break;
        assert_int_equal(x.u.scope.tid, y.u.scope.tid);
        assert_int_equal(x.u.scope.name, y.u.scope.name);
        assert_int_equal(x.u.scope.depth, y.u.scope.depth);
        assert_true(x.u.scope.begin_ns == y.u.scope.begin_ns);
        assert_true(x.u.scope.end_ns == y.u.scope.end_ns);
        scopes++;
    }
    assert_int_equal(ra, CAP_DONE);
    assert_true(scopes > 4000);
    const cap_reader_stats *sa = cap_reader_get_stats(a),
                           *sb = cap_reader_get_stats(b);
    assert_int_equal(sb->corrupt_chunks, 0);
    assert_int_equal(sa->scopes, sb->scopes);
    cap_reader_close(a);
    cap_reader_close(b);
    unlink(p3);
    unlink(p4);
}

static void varints_that_overflow_64_bits_are_malformed(void **state)
{
    (void)state;
    const uint8_t ok[10] = {0xff, 0xff, 0xff, 0xff, 0xff,
                            0xff, 0xff, 0xff, 0xff, 0x01};
    const uint8_t big[10] = {0xff, 0xff, 0xff, 0xff, 0xff,
                             0xff, 0xff, 0xff, 0xff, 0x02};
    capf_cur c = {ok, ok + 10, 0};
    assert_true(capf_cur_varint(&c) == UINT64_MAX);
    assert_false(c.bad);
    capf_cur d = {big, big + 10, 0};
    (void)capf_cur_varint(&d);
    assert_true(d.bad);
    /* the same through the slow path (fewer than 10 bytes left) */
    const uint8_t cut[3] = {0x80, 0x80, 0x80};
    capf_cur e = {cut, cut + 3, 0};
    (void)capf_cur_varint(&e);
    assert_true(e.bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_reads_back_every_event_exactly),
        cmocka_unit_test(every_block_names_every_id_it_references),
        cmocka_unit_test(truncation_at_every_offset_recovers_every_complete_chunk),
        cmocka_unit_test(flipped_byte_in_each_chunk_is_detected),
        cmocka_unit_test(unknown_chunk_type_is_skipped),
        cmocka_unit_test(future_major_version_is_refused_and_minor_is_read),
        cmocka_unit_test(foreign_and_missing_files_get_distinct_errors),
        cmocka_unit_test(writer_rejects_misuse_without_damaging_the_file),
        cmocka_unit_test(sparse_name_ids_cost_what_they_use),
        cmocka_unit_test(unwritable_path_fails_at_open),
        cmocka_unit_test(damage_at_the_end_is_reported_as_truncation_and_trailer_checked),
        cmocka_unit_test(varints_that_overflow_64_bits_are_malformed),
        cmocka_unit_test(
            groups_read_whole_cut_short_and_lose_only_a_damaged_group),
        cmocka_unit_test(
            groups_span_4_s_by_default_and_group_max_ms_when_asked),
        cmocka_unit_test(groups_carry_token_lists_and_read_as_3_1),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
