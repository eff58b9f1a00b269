/*
 * test_read_batch - cap_reader_next_batch yields exactly the events, the
 * results and the statistics of cap_reader_next, one call at a time,
 * whatever the batch size: on every capture under fixtures/ (complete,
 * truncated, damaged, crafted by the fuzzer), on a generated capture with
 * a TSC-like clock, and on hand-made blocks whose SCOPES sections turn
 * malformed half-way (the error must come after the scopes before it,
 * also when the section's first scope is the last before it).
 * cap_reader_next_batch_into yields the same, and the stacks it decoded
 * into the caller's memory are still those of their events after the
 * next call (two areas taken in turn; one of the smallest size allowed,
 * so that runs end early for room). cap_reader_next_scopes, called first
 * and the batch call only when it gives no scope (or in turn with the
 * others, every third call), gives the same scopes: its records' ticks
 * converted with cap_ticks_ns and cap_ticks_dur_ns are the events' ns to
 * the nanosecond, and the statistics are the same, also with the records
 * written by streaming stores (cap_reader_stream_records). And
 * cap_reader_frames_only yields the frames of a whole read.
 *
 * Usage: test_read_batch FIXTURES_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/cap_reader.h"
#include "capture/cap_writer.h"
#include "cap_files.h"
#include "format/format.h"

static int failures;
static size_t into_seen; /* scopes whose stacks were decoded into the
                            caller's memory, all reads together */
static size_t recs_seen; /* scopes read as records */

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);               \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            failures++;                                                        \
            return;                                                            \
        }                                                                      \
    } while (0)

/* One event or result, flattened field by field (no padding compared) so
 * the two ways can be compared with memcmp. */
typedef struct rec {
    int64_t f[16];
    uint32_t stack[64];
    char name[64];
} rec;

static void flatten(rec *o, int res, const cap_event *ev)
{
    memset(o, 0, sizeof *o);
    o->f[0] = res;
    if (res != CAP_OK)
        return;
    o->f[1] = ev->kind;
    const uint32_t *st = NULL;
    uint32_t depth = 0;
    switch (ev->kind) {
    case CAP_EV_SCOPE: {
        const cap_ev_scope *e = &ev->u.scope;
        int64_t v[] = {e->tid, e->name, e->depth, e->begin_ns, e->end_ns,
                       e->children_ns};
        memcpy(o->f + 2, v, sizeof v);
        st = e->stack;
        depth = e->depth;
        break;
    }
    case CAP_EV_GPU_SPAN: {
        const cap_ev_gpu_span *e = &ev->u.gpu_span;
        int64_t v[] = {e->track, e->name, e->depth, e->parent_name,
                       (int64_t)e->cpu_frame, e->measured, e->calibrated,
                       e->duration_ns, e->self_ns, e->begin_ns, e->end_ns};
        memcpy(o->f + 2, v, sizeof v);
        st = e->stack;
        depth = e->depth;
        break;
    }
    case CAP_EV_FRAME: {
        int64_t v[] = {(int64_t)ev->u.frame.index, ev->u.frame.begin_ns,
                       ev->u.frame.end_ns};
        memcpy(o->f + 2, v, sizeof v);
        break;
    }
    case CAP_EV_COUNTER: {
        int64_t v[] = {ev->u.counter.name, ev->u.counter.time_ns};
        memcpy(o->f + 2, v, sizeof v);
        memcpy(&o->f[4], &ev->u.counter.value, sizeof(double));
        break;
    }
    case CAP_EV_THREAD:
        o->f[2] = ev->u.thread.tid;
        snprintf(o->name, sizeof o->name, "%s",
                 ev->u.thread.name ? ev->u.thread.name : "(null)");
        break;
    case CAP_EV_GPU_TRACK:
        o->f[2] = ev->u.gpu_track.track;
        memcpy(&o->f[3], &ev->u.gpu_track.period_ns, sizeof(double));
        snprintf(o->name, sizeof o->name, "%s",
                 ev->u.gpu_track.name ? ev->u.gpu_track.name : "(null)");
        break;
    }
    for (uint32_t i = 0; i < depth && i < 64; i++)
        o->stack[i] = st[i];
}

/* A record of cap_reader_next_scopes, flattened as flatten does its
 * event: its ticks converted as the reader converts them. */
static void flatten_rec(rec *o, const cap_scope_rec *q,
                        const cap_scope_run *run, const uint32_t *stacks)
{
    memset(o, 0, sizeof *o);
    o->f[0] = CAP_OK;
    o->f[1] = CAP_EV_SCOPE;
    int64_t v[] = {run->tid,
                   q->name,
                   q->depth,
                   cap_ticks_ns(q->begin, run->period_ns),
                   cap_ticks_ns(q->end, run->period_ns),
                   cap_ticks_dur_ns(q->children, run->period_ns)};
    memcpy(o->f + 2, v, sizeof v);
    for (uint32_t i = 0; i < q->depth && i < 64; i++)
        o->stack[i] = stacks[q->stack + i];
}

/* Scopes of the previous batch whose stacks are in the caller's memory
 * (cap_reader_next_batch_into): checked again after the next call. */
typedef struct kept {
    size_t at;          /* its rec */
    const uint32_t *st; /* its stack */
} kept;

/* The previous call's scopes whose stacks are in the caller's memory: each
 * stack still what it was when its scope was read. */
static void check_kept(const char *path, const rec *v, const kept *k_prev,
                       size_t nk)
{
    for (size_t i = 0; i < nk; i++) {
        const rec *o = &v[k_prev[i].at];
        for (int64_t j = 0; j < o->f[4] && j < 64; j++)
            if (k_prev[i].st[j] != o->stack[j]) {
                fprintf(stderr, "FAIL %s: scope %zu's stack changed after "
                        "the next call\n", path, k_prev[i].at);
                failures++;
                break;
            }
    }
}

/* Every event of path, read one at a time (batch 0), in batches of
 * `batch`, or (stacks_cap > 0) in batches into two areas of stacks_cap
 * entries taken in turn; *into counts the scopes whose stacks were there.
 * With recs 1, each call asks cap_reader_next_scopes first (up to
 * `batch`, into the area), and the batch call only when it gave none;
 * with recs 2, only every third call does; recs 3 is recs 1 with the
 * records streamed (cap_reader_stream_records). */
static rec *read_all_into(const char *path, size_t batch, size_t stacks_cap,
                          size_t *n_out, cap_reader_stats *st, size_t *into,
                          int recs)
{
    cap_reader *r;
    *n_out = 0;
    if (into)
        *into = 0;
    if (cap_reader_open(&r, path, NULL, 0) != CAP_OK)
        return NULL;
    if (recs == 3 && cap_reader_stream_records(r, 1) != CAP_OK) {
        fprintf(stderr, "FAIL %s: cap_reader_stream_records\n", path);
        failures++;
    }
    size_t n = 0, cap = 1024;
    rec *v = malloc(cap * sizeof *v);
    cap_event *evs = malloc((batch ? batch : 1) * sizeof *evs);
    uint32_t *area[2] = {NULL, NULL};
    kept *k_prev = NULL;
    size_t nk = 0;
    cap_scope_rec *rv = recs ? malloc(batch * sizeof *rv) : NULL;
    if (stacks_cap) {
        area[0] = malloc(stacks_cap * sizeof *area[0]);
        area[1] = malloc(stacks_cap * sizeof *area[1]);
        k_prev = malloc(batch * sizeof *k_prev);
    }
    for (int guard = 0; guard < 10000000; guard++) {
        size_t k = 1;
        uint32_t *a = area[guard & 1];
        if (recs && (recs != 2 || guard % 3 == 0)) {
            cap_scope_run run = {0};
            cap_result res = cap_reader_next_scopes(r, rv, batch, &k, a,
                                                    stacks_cap, &run);
            if (res != CAP_OK || k > batch ||
                run.stacks_used > stacks_cap) {
                fprintf(stderr, "FAIL %s: cap_reader_next_scopes %d, %zu "
                        "scopes\n", path, res, k);
                failures++;
                break;
            }
            check_kept(path, v, k_prev, nk);
            nk = 0;
            for (size_t i = 0; i < k; i++) {
                if (n == cap)
                    v = realloc(v, (cap *= 2) * sizeof *v);
                if (rv[i].depth &&
                    rv[i].stack + (size_t)rv[i].depth > run.stacks_used) {
                    fprintf(stderr, "FAIL %s: a record's stack past "
                            "stacks_used\n", path);
                    failures++;
                }
                if (rv[i].reserved != 0) {
                    fprintf(stderr, "FAIL %s: a record's reserved field "
                            "is %u\n", path, rv[i].reserved);
                    failures++;
                }
                flatten_rec(&v[n++], &rv[i], &run, a);
                k_prev[nk++] = (kept){n - 1, a + rv[i].stack};
                (*into)++;
            }
            if (k)
                continue;
        }
        k = 1;
        cap_result res = batch == 0   ? cap_reader_next(r, evs)
                         : stacks_cap ? cap_reader_next_batch_into(
                                            r, evs, batch, &k, a, stacks_cap)
                                      : cap_reader_next_batch(r, evs, batch, &k);
        if (res != CAP_OK)
            k = 1;
        check_kept(path, v, k_prev, nk);
        nk = 0;
        for (size_t i = 0; i < k; i++) {
            if (n == cap)
                v = realloc(v, (cap *= 2) * sizeof *v);
            flatten(&v[n++], res, &evs[i]);
            const cap_ev_scope *e = &evs[i].u.scope;
            if (stacks_cap && res == CAP_OK && evs[i].kind == CAP_EV_SCOPE &&
                e->depth && e->stack >= a && e->stack < a + stacks_cap) {
                k_prev[nk++] = (kept){n - 1, e->stack};
                (*into)++;
            }
        }
        if (res == CAP_DONE || (res != CAP_OK && res != CAP_E_CORRUPT &&
                                res != CAP_E_TRUNCATED))
            break;
    }
    *st = *cap_reader_get_stats(r);
    if (stacks_cap) {
        uint32_t small[16];
        size_t k = 0;
        if (cap_reader_next_batch_into(r, evs, batch, &k, small, 16) !=
            CAP_E_MISUSE) {
            fprintf(stderr, "FAIL %s: 16 entries of stacks accepted\n", path);
            failures++;
        }
    }
    if (recs) {
        size_t k = 0;
        cap_scope_run run;
        uint32_t small[16];
        if (cap_reader_next_scopes(r, rv, batch, &k, small, 16, &run) !=
                CAP_E_MISUSE ||
            cap_reader_next_scopes(r, rv, 0, &k, area[0], stacks_cap,
                                   &run) != CAP_E_MISUSE ||
            cap_reader_next_scopes(NULL, rv, batch, &k, area[0], stacks_cap,
                                   &run) != CAP_E_MISUSE) {
            fprintf(stderr, "FAIL %s: cap_reader_next_scopes took bad "
                    "arguments\n", path);
            failures++;
        }
    }
    cap_reader_close(r);
    free(rv);
    free(evs);
    free(area[0]);
    free(area[1]);
    free(k_prev);
    *n_out = n;
    return v;
}

static rec *read_all(const char *path, size_t batch, size_t *n_out,
                     cap_reader_stats *st)
{
    return read_all_into(path, batch, 0, n_out, st, NULL, 0);
}

/* The frames of path, in order: from a whole read (fast 0), frames-only
 * (1), or frames-only from the blocks (2); *listed (when not NULL):
 * whether the footer's list gave them. */
static size_t frames_of_as(const char *path, int fast, cap_ev_frame *out,
                           size_t max, int *listed)
{
    cap_reader *r;
    if (listed)
        *listed = -1;
    if (cap_reader_open(&r, path, NULL, 0) != CAP_OK)
        return 0;
    if (fast == 1)
        cap_reader_frames_only(r);
    else if (fast == 2)
        cap_reader_frames_only_blocks(r);
    if (listed)
        *listed = cap_reader_frames_listed(r);
    size_t n = 0;
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) != CAP_DONE) {
        if (res == CAP_OK && ev.kind == CAP_EV_FRAME && n < max)
            out[n++] = ev.u.frame;
        else if (res != CAP_OK && res != CAP_E_CORRUPT &&
                 res != CAP_E_TRUNCATED)
            break;
    }
    cap_reader_close(r);
    return n;
}

static size_t frames_of(const char *path, int fast, cap_ev_frame *out,
                        size_t max)
{
    return frames_of_as(path, fast, out, max, NULL);
}

static void compare_frames(const char *path)
{
    enum { MAXF = 100000 };
    static cap_ev_frame a[MAXF], b[MAXF];
    size_t na = frames_of(path, 0, a, MAXF), nb = frames_of(path, 1, b, MAXF);
    int same = na == nb;
    for (size_t i = 0; same && i < na; i++)
        same = a[i].index == b[i].index && a[i].begin_ns == b[i].begin_ns &&
               a[i].end_ns == b[i].end_ns;
    CHECK(same, "%s: frames-only read %zu frames, a whole read %zu", path,
          nb, na);
}

/* Whether cap_reader_frames_only takes path's frames from the footer. */
static int listed_of(const char *path)
{
    int l;
    cap_ev_frame f[1];
    frames_of_as(path, 1, f, 1, &l);
    return l;
}

static int same_frames(const cap_ev_frame *a, size_t na,
                       const cap_ev_frame *b, size_t nb)
{
    int same = na == nb;
    for (size_t i = 0; same && i < na; i++)
        same = a[i].index == b[i].index && a[i].begin_ns == b[i].begin_ns &&
               a[i].end_ns == b[i].end_ns;
    return same;
}

/* Format 3.1's frame list: scope-residuals-3.1.cap's footer lists its
 * blocks' frames, which frames-only reads give without reading a block
 * (the same frames as a whole read and as frames-only from the blocks);
 * its 3.0 twin has no list. A copy with one block damaged: the list
 * still gives every frame, the blocks one block fewer, which is what a
 * whole read finds. */
static void frame_list(const char *dir, const char *tmp)
{
    enum { MAXF = 1000 };
    static cap_ev_frame a[MAXF], b[MAXF], c[MAXF];
    char p31[512], p30[512];
    snprintf(p31, sizeof p31, "%s/scope-residuals-3.1.cap", dir);
    snprintf(p30, sizeof p30, "%s/scope-residuals-3.0.cap", dir);
    CHECK(listed_of(p31) == 1, "%s: frames not taken from the footer's list",
          p31);
    CHECK(listed_of(p30) == 0, "%s: a 3.0 file read as listing its frames",
          p30);
    int listed;
    size_t na = frames_of(p31, 0, a, MAXF), nb = frames_of(p31, 1, b, MAXF);
    size_t nc = frames_of_as(p31, 2, c, MAXF, &listed);
    CHECK(na == 60 && same_frames(a, na, b, nb) && same_frames(a, na, c, nc)
              && listed == 0,
          "%s: %zu frames in a whole read, %zu from the list, %zu from the "
          "blocks (listed %d)", p31, na, nb, nc, listed);
    /* the copy, its second block's payload damaged */
    FILE *f = fopen(p31, "rb");
    static uint8_t d[1 << 16];
    size_t len = f ? fread(d, 1, sizeof d, f) : 0;
    if (f)
        fclose(f);
    size_t blk[8], nblk = 0;
    for (size_t i = 0; i + 4 <= len && nblk < 8; i++)
        if (memcmp(d + i, CAPF_CHUNK_SYNC, 4) == 0)
            blk[nblk++] = i;
    CHECK(nblk >= 4, "%s: %zu chunks found", p31, nblk);
    if (nblk < 4)
        return;
    d[blk[2] + CAPF_CHUNK_HEADER_LEN + 10] ^= 0x5a;
    f = fopen(tmp, "wb");
    CHECK(f && fwrite(d, 1, len, f) == len && fclose(f) == 0,
          "writing %s", tmp);
    na = frames_of(tmp, 0, a, MAXF);
    nb = frames_of(tmp, 1, b, MAXF);
    nc = frames_of_as(tmp, 2, c, MAXF, &listed);
    CHECK(listed_of(tmp) == 1 && nb == 60 && na < 60 && na > 0 &&
              same_frames(a, na, c, nc),
          "damaged copy: %zu frames from the list (60 expected), %zu in a "
          "whole read, %zu from the blocks", nb, na, nc);
    unlink(tmp);
}

static void compare(const char *path)
{
    compare_frames(path);
    size_t n1;
    cap_reader_stats s1;
    rec *one = read_all(path, 0, &n1, &s1);
    if (!one)
        return; /* unreadable: both ways fail at open alike */
    /* batches of each size; then into the caller's stacks, 7 and 4,096 a
     * call, into 65,536 entries and into the fewest allowed; then as
     * records first (1 and 4,096 a call, and 4,096 into the fewest stacks
     * allowed), records every third call (5 a call), and records
     * streamed (7 and 4,096 a call) */
    static const size_t sizes[] = {1, 2, 3, 7, 256, 4096, 7, 4096, 4096,
                                   1, 4096, 4096, 5, 7, 4096};
    static const size_t stacks[] = {
        0,     0,     0,     0,     0, 0, 65536, 65536, 2 * CAP_MAX_DEPTH,
        65536, 65536, 2 * CAP_MAX_DEPTH, 65536, 65536, 65536};
    static const int recs[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 3, 3};
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        size_t n2, into;
        cap_reader_stats s2;
        rec *two = read_all_into(path, sizes[z], stacks[z], &n2, &s2, &into,
                                 recs[z]);
        if (recs[z])
            recs_seen += into;
        else
            into_seen += into;
        if (!two || n1 != n2) {
            fprintf(stderr, "FAIL %s batch %zu: %zu events vs %zu\n", path,
                    sizes[z], n2, n1);
            failures++;
            free(two);
            continue;
        }
        for (size_t i = 0; i < n1; i++)
            if (memcmp(&one[i], &two[i], sizeof one[i]) != 0) {
                fprintf(stderr, "FAIL %s batch %zu: event %zu differs\n",
                        path, sizes[z], i);
                failures++;
                break;
            }
        if (memcmp(&s1, &s2, sizeof s1) != 0) {
            fprintf(stderr, "FAIL %s batch %zu: statistics differ\n", path,
                    sizes[z]);
            failures++;
        }
        free(two);
    }
    free(one);
}


/* A long capture on a 0.4 ns clock, scopes nested up to 40 deep and
 * blocks of 4 KiB, so that runs are long and stacks change often; in
 * format `major` (2: SCOPES_R sections, 3: SCOPES_E). */
static void generated(const char *path, unsigned major)
{
    cap_writer_options o = {.format_major = major};
    o.clock_source = "tsc";
    o.tick_period_ns = 0.4;
    o.origin_tick = 1000;
    o.origin_mono_ns = 1000000;
    o.block_bytes = 4096;
    cap_writer *w;
    if (cap_writer_open_path(&w, path, &o) != CAP_OK) {
        failures++;
        return;
    }
    for (uint32_t i = 1; i <= 50; i++) {
        char b[16];
        snprintf(b, sizeof b, "n%u", i);
        cap_writer_name(w, i, b, NULL, 0);
    }
    cap_writer_thread(w, 0, "main");
    cap_writer_thread(w, 1, "worker");
    uint64_t t = 2000, seed = 42;
    for (uint64_t f = 0; f < 400; f++) {
        uint64_t fb = t;
        for (int k = 0; k < 60; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t depth = 1 + (uint32_t)(seed >> 58) % 40;
            uint32_t tid = (uint32_t)(seed >> 40) & 1;
            for (uint32_t d = 0; d < depth; d++)
                cap_writer_scope_begin(w, tid, 1 + (d * 7 + k) % 50,
                                       t += 1 + (seed >> (d % 30)) % 97);
            for (uint32_t d = 0; d < depth; d++)
                cap_writer_scope_end(w, tid, t += 3 + (seed >> (d % 20)) % 31);
        }
        cap_writer_frame(w, f, fb, t += 50);
        if (f % 50 == 0)
            cap_writer_clock_sample(w, t, o.origin_mono_ns + 200000000 +
                                              (uint64_t)((double)t * 0.4001));
    }
    cap_writer_close(w);
    compare(path);
}

/* A file of one META chunk and uncompressed BLOCKs given as payloads. */
static void craft(const char *path, const capf_buf *blocks, int nblocks)
{
    FILE *f = fopen(path, "wb");
    uint8_t h[CAPF_HEADER_LEN];
    capf_header_encode(h, CAPF_VERSION_MAJOR, CAPF_VERSION_MINOR);
    fwrite(h, 1, sizeof h, f);
    capf_buf meta = {0}, kv = {0}, org = {0};
    capf_buf_varint(&kv, 0);
    capf_buf_section(&meta, CAPF_SEC_META_KV, &kv);
    capf_buf_str(&org, "tsc");
    capf_buf_f64(&org, 0.4);
    capf_buf_varint(&org, 0);
    capf_buf_varint(&org, 0);
    capf_buf_varint(&org, 0);
    capf_buf_section(&meta, CAPF_SEC_ORIGIN, &org);
    for (int i = -1; i < nblocks; i++) {
        const capf_buf *p = i < 0 ? &meta : &blocks[i];
        uint8_t ch[CAPF_CHUNK_HEADER_LEN];
        capf_chunk_header hd = {0};
        hd.type = i < 0 ? CAPF_CHUNK_META : CAPF_CHUNK_BLOCK;
        hd.stored = hd.raw = (uint32_t)p->len;
        hd.payload_crc = capf_crc32(p->data, p->len);
        capf_chunk_header_encode(ch, &hd);
        fwrite(ch, 1, sizeof ch, f);
        fwrite(p->data, 1, p->len, f);
    }
    fclose(f);
    capf_buf_free(&meta);
    capf_buf_free(&kv);
    capf_buf_free(&org);
}

/* SCOPES of thread 0: `pairs` nested begin/end pairs, then with `half`
 * two begins and one end (a scope, its parent left open), then `bad` (a
 * token above the largest name id, or an end with no scope open; with
 * `half` an end closes the parent: bad 1 only). */
static void scopes_section(capf_buf *blk, int pairs, int half, int bad)
{
    capf_buf names = {0}, body = {0}, tok = {0}, dt = {0};
    capf_buf_varint(&names, 1);
    capf_buf_varint(&names, 1);
    capf_buf_str(&names, "a");
    capf_buf_str(&names, "");
    capf_buf_varint(&names, 0);
    capf_buf_section(blk, CAPF_SEC_NAMES, &names);
    /* a pair: two begins of name 1, two ends (token, delta each) */
    static const uint64_t pair[4][2] = {{1, 5}, {1, 7}, {0, 11}, {0, 13}};
    int n = 0;
    /* with half, the first three events of one more pair: the section's
       first scope when pairs is 0, the fault right after it, where a
       batch goes on decoding the run */
    for (int i = 0; i < 4 * pairs + 3 * !!half; i++, n++) {
        capf_buf_varint(&tok, pair[i % 4][0]);
        capf_buf_varint(&dt, pair[i % 4][1]);
    }
    if (bad == 1) {
        capf_buf_varint(&tok, (uint64_t)CAP_MAX_NAME_ID + 1);
        capf_buf_varint(&dt, 1);
        n++;
    } else if (bad == 2) {
        capf_buf_varint(&tok, 0);
        capf_buf_varint(&dt, 1);
        n++;
    }
    for (int i = 0; i < 3; i++) { /* events after the fault */
        capf_buf_varint(&tok, i == 2 ? 0 : 1);
        capf_buf_varint(&dt, 2);
        n++;
    }
    capf_buf_varint(&body, 0);    /* tid */
    capf_buf_varint(&body, 1000); /* base */
    capf_buf_varint(&body, 0);    /* depth */
    capf_buf_varint(&body, (uint64_t)n);
    capf_buf_varint(&body, tok.len);
    capf_buf_bytes(&body, tok.data, tok.len);
    capf_buf_bytes(&body, dt.data, dt.len);
    capf_buf_section(blk, CAPF_SEC_SCOPES, &body);
    capf_buf_free(&names);
    capf_buf_free(&body);
    capf_buf_free(&tok);
    capf_buf_free(&dt);
}

static void malformed(const char *path)
{
    for (int half = 0; half <= 1; half++) {
        for (int bad = 1; bad <= 2 - half; bad++) {
            for (int pairs = 0; pairs < 6; pairs++) {
                capf_buf blk[2] = {{0}, {0}};
                scopes_section(&blk[0], pairs, half, bad);
                scopes_section(&blk[1], 3, 0, 0);
                craft(path, blk, 2);
                capf_buf_free(&blk[0]);
                capf_buf_free(&blk[1]);
                compare(path);
                /* the fault is reported after the scopes before it */
                size_t n;
                cap_reader_stats st;
                rec *v = read_all(path, 256, &n, &st);
                CHECK(v != NULL, "%s unreadable", path);
                size_t scopes = 0, k = 0;
                while (k < n && v[k].f[0] == CAP_OK) {
                    scopes += v[k].f[1] == CAP_EV_SCOPE;
                    k++;
                }
                free(v);
                CHECK(k < n && scopes == (size_t)pairs * 2 + (size_t)half,
                      "bad %d pairs %d half %d: %zu scopes before the fault",
                      bad, pairs, half, scopes);
            }
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_read_batch FIXTURES_DIR\n");
        return 2;
    }
    cap_files_walk(argv[1], compare);
    char path[64];
    if (cap_files_temp(path, sizeof path, "test_read_batch") != 0)
        return 2;
    generated(path, 2);
    generated(path, 3);
    if (!into_seen) {
        fprintf(stderr, "FAIL: no stack was decoded into the caller's "
                "memory\n");
        failures++;
    }
    if (!recs_seen) {
        fprintf(stderr, "FAIL: no scope was read as a record\n");
        failures++;
    }
    malformed(path);
    frame_list(argv[1], path);
    unlink(path);
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("ok: batches read as cap_reader_next does\n");
    return failures ? 1 : 0;
}
