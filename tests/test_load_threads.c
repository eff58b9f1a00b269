/*
 * test_load_threads - an_load with a second thread decoding ahead
 * (an_options.threads = 2) builds the same model as on one thread, field
 * by field: frames, scope rows and their per-frame series, the call tree,
 * counters, statistics and damage notes. Every capture under fixtures/
 * (complete, truncated, damaged, GPU, counters), each with rows by name and
 * by path and with --skip-seconds, and a generated capture long enough for
 * many batches, with threads renamed and scopes open across blocks.
 *
 * Usage: test_load_threads FIXTURES_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/cap_writer.h"
#include "cap_files.h"
#include "model.h"

static int failures, compared;

#define SAME(cond, what)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "FAIL %s (by_path %d, skip %g): %s differs\n",    \
                    path, o.by_path, o.skip_seconds, what);                    \
            failures++;                                                        \
            goto done;                                                         \
        }                                                                      \
    } while (0)

static int streq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void compare(const char *path, int by_path, double skip)
{
    an_options o = {.by_path = by_path, .skip_seconds = skip, .threads = 1};
    an_capture *a = NULL, *b = NULL;
    char da[320] = "", db[320] = "";
    cap_result ra = an_load(&a, path, &o, da, sizeof da);
    o.threads = 2;
    cap_result rb = an_load(&b, path, &o, db, sizeof db);
    compared++;
    SAME(ra == rb, "the result");
    SAME(strcmp(da, db) == 0, "the detail");
    if (ra != CAP_OK)
        goto done;
    SAME(a->nframes == b->nframes, "the frame count");
    for (size_t i = 0; i < a->nframes; i++) {
        const an_frame *x = &a->frames[i], *y = &b->frames[i];
        SAME(an_frame_index(a, i) == an_frame_index(b, i) &&
                 x->begin_ns == y->begin_ns && x->end_ns == y->end_ns &&
                 an_frame_gpu_ns(a, i) == an_frame_gpu_ns(b, i) &&
                 an_frame_has_gpu(a, i) == an_frame_has_gpu(b, i),
             "a frame");
    }
    SAME(a->nscopes == b->nscopes, "the row count");
    for (size_t i = 0; i < a->nscopes; i++) {
        const an_scope *x = &a->scopes[i], *y = &b->scopes[i];
        SAME(x->kind == y->kind && x->name_id == y->name_id &&
                 streq(x->name, y->name) && streq(x->path, y->path) &&
                 x->unnamed == y->unnamed && x->is_wait == y->is_wait &&
                 x->calls == y->calls && x->total_ns == y->total_ns &&
                 x->self_ns == y->self_ns && x->pf_n == y->pf_n,
             "a scope row");
        SAME(x->pf_n == 0 || /* no series: the arrays may be NULL */
                 (memcmp(x->pf_frame, y->pf_frame,
                         x->pf_n * sizeof *x->pf_frame) == 0 &&
                  memcmp(x->pf_self, y->pf_self,
                         x->pf_n * sizeof *x->pf_self) == 0),
             "a per-frame series");
    }
    SAME(a->nnodes == b->nnodes, "the node count");
    for (size_t i = 0; i < a->nnodes; i++) {
        const an_node *x = &a->nodes[i], *y = &b->nodes[i];
        SAME(x->parent == y->parent && x->kind == y->kind &&
                 x->is_root == y->is_root && streq(x->name, y->name) &&
                 x->name_id == y->name_id && x->depth == y->depth &&
                 x->is_wait == y->is_wait && x->calls == y->calls &&
                 x->total_ns == y->total_ns && x->self_ns == y->self_ns &&
                 x->first_child == y->first_child &&
                 x->next_sibling == y->next_sibling,
             "a tree node");
    }
    SAME(a->ncounters == b->ncounters, "the counter count");
    for (size_t i = 0; i < a->ncounters; i++)
    {
        SAME(streq(a->counters[i].name, b->counters[i].name) &&
                 a->counters[i].n == b->counters[i].n,
             "a counter");
        for (size_t k = 0; k < a->counters[i].n; k++)
            SAME(a->counters[i].s[k].time_ns == b->counters[i].s[k].time_ns &&
                     memcmp(&a->counters[i].s[k].value,
                            &b->counters[i].s[k].value, sizeof(double)) == 0,
                 "a counter sample");
    }
    SAME(a->nthreads == b->nthreads && a->ntracks == b->ntracks, "roots");
    for (size_t i = 0; i < a->nthreads; i++)
        SAME(streq(a->threads[i], b->threads[i]), "a thread name");
    for (size_t i = 0; i < a->ntracks; i++)
        SAME(streq(a->tracks[i], b->tracks[i]), "a track name");
    SAME(a->first_ns == b->first_ns && a->last_ns == b->last_ns &&
             a->cpu_events == b->cpu_events && a->gpu_events == b->gpu_events,
         "extents");
    SAME(memcmp(&a->st, &b->st, sizeof a->st) == 0, "reader statistics");
    SAME(a->corrupt_seen == b->corrupt_seen &&
             strcmp(a->damage_detail, b->damage_detail) == 0 &&
             a->unnamed_n == b->unnamed_n &&
             memcmp(a->unnamed_ids, b->unnamed_ids, sizeof a->unnamed_ids) == 0,
         "damage notes");
done:
    an_free(a);
    an_free(b);
}

/* A summarised load's per-frame sums of work and waits (the wait flags
 * travel with the decoding thread's batches, --wait globs included), and
 * --frames' walk of the values from one more read (a second decoding
 * thread too), are those of one thread. */
typedef struct walk_sum {
    size_t n;
    uint64_t h;
} walk_sum;

static void walk_hash(void *p, size_t row, size_t frame, int64_t v)
{
    walk_sum *w = p;
    w->n++;
    w->h = (w->h ^ (row * 1000003u + frame * 7919u + (uint64_t)v)) *
           0x100000001b3ull;
}

static void summarised(const char *path)
{
    static const char *const globs[] = {"*a*"};
    an_capture *m[2] = {NULL, NULL}, *r[3] = {NULL, NULL, NULL};
    walk_sum ws[3] = {{0, 0}, {0, 0}, {0, 0}};
    char d[320];
    for (int t = 0; t < 3; t++) {
        /* the third: two threads, the pack spilled past one chunk (the
           walk reads the temporary file on its own thread) */
        an_options o = {.threads = t ? 2 : 1, .series_budget = 1,
                        .over_time_hint = 1, .ot_bins = 10,
                        .wait_globs = globs, .nwait_globs = 1};
        if (t < 2 && an_load(&m[t], path, &o, d, sizeof d) != CAP_OK)
            goto done;
        an_options q = {.threads = t ? 2 : 1, .series_budget = 1,
                        .series_reread = 1, .no_tree = 1,
                        .pack_bytes = t == 2 ? 1 : 0};
        if (an_load(&r[t], path, &q, d, sizeof d) != CAP_OK ||
            an_series_walk(r[t], walk_hash, &ws[t]) != CAP_OK) {
            fprintf(stderr, "FAIL %s: the walk fails\n", path);
            failures++;
            goto done;
        }
    }
    compared++;
    if (m[0]->ot_sums != m[1]->ot_sums || ws[0].n != ws[1].n ||
        ws[0].h != ws[1].h || ws[0].n != ws[2].n || ws[0].h != ws[2].h) {
        fprintf(stderr, "FAIL %s: summarised sums or walk differ\n", path);
        failures++;
    }
    for (int k = 0; k < 2 && m[0]->ot_sums && m[1]->ot_sums; k++) {
        const double *x = k ? m[0]->ot_wait_ms : m[0]->ot_cpu_ms,
                     *y = k ? m[1]->ot_wait_ms : m[1]->ot_cpu_ms;
        if (!((!x && !y) ||
              (x && y && memcmp(x, y, m[0]->nframes * sizeof *x) == 0))) {
            fprintf(stderr, "FAIL %s: the %s sums differ\n", path,
                    k ? "wait" : "work");
            failures++;
        }
    }
done:
    for (int t = 0; t < 2; t++)
        an_free(m[t]);
    for (int t = 0; t < 3; t++)
        an_free(r[t]);
}

static void all_ways(const char *path)
{
    summarised(path);
    compare(path, 0, 0);
    compare(path, 1, 0);
    compare(path, 0, 0.05);
}


/* Three threads (one renamed half-way), scopes up to 30 deep, 4 KiB
 * blocks, a counter, GPU spans: many batches and slots. */
static void generated(const char *path)
{
    cap_writer_options wo = {0};
    wo.clock_source = "tsc";
    wo.tick_period_ns = 0.4;
    wo.origin_tick = 1000;
    wo.block_bytes = 4096;
    cap_writer *w;
    if (cap_writer_open_path(&w, path, &wo) != CAP_OK) {
        failures++;
        return;
    }
    for (uint32_t i = 1; i <= 40; i++) {
        char b[16];
        snprintf(b, sizeof b, "s%u", i);
        cap_writer_name(w, i, b, NULL, 0);
    }
    cap_writer_thread(w, 0, "main");
    cap_writer_thread(w, 1, "worker");
    cap_writer_thread(w, 2, NULL);
    cap_writer_gpu_track(w, 0, "gfx", 1.0);
    uint64_t t = 5000, seed = 7;
    for (uint64_t f = 0; f < 3000; f++) {
        uint64_t fb = t;
        if (f == 1500)
            cap_writer_thread(w, 1, "worker renamed");
        for (int k = 0; k < 12; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t depth = 1 + (uint32_t)(seed >> 59) % 30;
            uint32_t tid = (uint32_t)(seed >> 33) % 3;
            for (uint32_t d = 0; d < depth; d++)
                cap_writer_scope_begin(w, tid, 1 + (d * 3 + (uint32_t)k) % 40,
                                       t += 1 + (seed >> (d % 40)) % 200);
            for (uint32_t d = 0; d < depth; d++)
                cap_writer_scope_end(w, tid, t += 2 + (seed >> (d % 30)) % 50);
        }
        cap_writer_counter(w, 40, t, (double)(f % 17));
        cap_gpu_span sp[2] = {{.name = 39, .parent = -1, .measured = 1,
                               .begin_tick = 100 * f,
                               .end_tick = 100 * f + 60},
                              {.name = 38, .parent = 0, .measured = 1,
                               .begin_tick = 100 * f + 10,
                               .end_tick = 100 * f + 30}};
        cap_writer_gpu_frame(w, 0, f, sp, 2);
        cap_writer_frame(w, f, fb, t += 40);
    }
    cap_writer_close(w);
    all_ways(path);
}

/* Two rows' histograms hold the same values (buckets, counts, sum). */
static int same_hist(const an_hist *x, const an_hist *y)
{
    enum { CAP = 4096 };
    static double mx[CAP], my[CAP];
    static uint64_t cx[CAP], cy[CAP];
    size_t nx = an_hist_buckets(x, mx, cx, CAP);
    size_t ny = an_hist_buckets(y, my, cy, CAP);
    return x->count == y->count && x->sum == y->sum && nx == ny &&
           memcmp(mx, my, nx * sizeof *mx) == 0 &&
           memcmp(cx, cy, nx * sizeof *cx) == 0;
}

/* A capture of 2,400 frames in blocks of 300 (one block a chunk): a main
 * thread and a worker, and with lag > 0 a third thread whose scopes of
 * frames 1600 to 1609 (inner frames of the block of 1500 to 1799) are
 * written `lag` frames later, in a later block. */
static void write_lagging(const char *path, uint64_t lag)
{
    cap_writer_options wo = {.clock_source = "monotonic",
                             .tick_period_ns = 1.0,
                             .block_bytes = (size_t)64 << 20};
    cap_writer *w;
    if (cap_writer_open_path(&w, path, &wo) != CAP_OK) {
        failures++;
        return;
    }
    for (uint32_t i = 1; i <= 12; i++) {
        char b[16];
        snprintf(b, sizeof b, "n%u", i);
        cap_writer_name(w, i, b, NULL, 0);
    }
    cap_writer_thread(w, 0, "main");
    cap_writer_thread(w, 1, "worker");
    cap_writer_thread(w, 2, "rare");
    const uint64_t frames = 2400, fl = 1000000;
    uint64_t seed = 11;
    for (uint64_t f = 0; f < frames; f++) {
        if (lag && f == 1600 + lag)
            for (uint64_t g = 1600; g < 1610; g++) {
                cap_writer_scope_begin(w, 2, 12, g * fl + 900000);
                cap_writer_scope_end(w, 2, g * fl + 950000 + g);
            }
        for (int th = 0; th < 2; th++) {
            uint64_t t = f * fl + 1000 + (uint64_t)th * 400000;
            for (uint32_t k = 0; k < 6; k++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                uint32_t name = 1 + (uint32_t)th * 6 + k;
                cap_writer_scope_begin(w, (uint32_t)th, name, t);
                t += 1000 + (seed >> 40) % 50000; /* varied self times */
                cap_writer_scope_end(w, (uint32_t)th, t);
                t += 100;
            }
        }
        cap_writer_frame(w, f, f * fl, f * fl + fl - 1);
        if ((f + 1) % 300 == 0)
            cap_writer_flush(w);
    }
    cap_writer_close(w);
}

/* Row x's and y's --over-time histograms by bin (nb of them) hold the
 * same values. */
static int same_bins(const an_scope *x, const an_scope *y, size_t nb)
{
    if (!x->pf_bin || !y->pf_bin)
        return !x->pf_bin && !y->pf_bin;
    for (size_t b = 0; b < nb; b++)
        if (!same_hist(&x->pf_bin[b], &y->pf_bin[b]))
            return 0;
    return 1;
}

/* m's and n's frames' sums of work and of waits are the same, bit for
 * bit. */
static int same_sums(const an_capture *m, const an_capture *n)
{
    if (m->ot_sums != n->ot_sums || m->nframes != n->nframes)
        return 0;
    for (int k = 0; k < 2; k++) {
        const double *x = k ? m->ot_wait_ms : m->ot_cpu_ms,
                     *y = k ? n->ot_wait_ms : n->ot_cpu_ms;
        if (!x != !y || (x && memcmp(x, y, m->nframes * sizeof *x) != 0))
            return 0;
    }
    return 1;
}

/* Past the budget (histograms), the ranking's chunked load takes its
 * chunks' inner frames as histograms (all 8 chunks but the first, merged
 * before the load is windowed), the same histograms as one thread
 * reading it whole; a thread's scopes written 250 frames late, into the
 * chunk after the one whose inner frames they belong to, make it read
 * whole (inner_chunks 0), the same again. With --split's populations
 * (split_hint), each row's two histograms by population too; with
 * --over-time's bins (over_time_hint, a --wait glob), each row's
 * histograms by bin and the frames' sums of work and of waits; with bins
 * over their bound at once (let go: ot_hint_bytes 1), each row's own
 * histogram from the chunks' bins. */
static void inner_frames(const char *path)
{
    static const char *const waits[] = {"n1*"}; /* n1, n10, n11, n12 */
    static const struct {
        uint64_t lag;
        int split, ot; /* ot 2: bins let go at once */
    } cases[] = {{0, 0, 0}, {250, 0, 0}, {0, 1, 0}, {250, 1, 0},
                 {0, 0, 1}, {250, 0, 1}, {0, 1, 1}, {0, 0, 2}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int split = cases[k].split, ot = cases[k].ot, bins = ot == 1;
        write_lagging(path, cases[k].lag);
        an_capture *a = NULL, *b = NULL;
        char d[320];
        an_options o = {.threads = 1, .series_budget = 1,
                        .split_hint = split, .over_time_hint = ot,
                        .ot_bins = 10, .wait_globs = waits,
                        .nwait_globs = ot ? 1 : 0,
                        .ot_hint_bytes = ot == 2 ? 1 : 0};
        setenv("CAP_READ_CHUNK_BYTES", "1", 1);
        cap_result ra = an_load(&a, path, &o, d, sizeof d);
        o.threads = 8;
        cap_result rb = an_load(&b, path, &o, d, sizeof d);
        unsetenv("CAP_READ_CHUNK_BYTES");
        compared++;
        int ok = ra == CAP_OK && rb == CAP_OK && a->nscopes == b->nscopes &&
                 b->inner_chunks == (cases[k].lag ? 0 : 7) &&
                 !a->ot_bin == !bins && !b->ot_bin == !bins &&
                 (!bins || (a->ot_sums && a->ot_wait_ms &&
                            a->ot_nbins == b->ot_nbins && same_sums(a, b)));
        for (size_t r = 0; ok && r < a->nscopes; r++) {
            const an_scope *x = &a->scopes[r], *y = &b->scopes[r];
            ok = same_hist(&x->pf_hist, &y->pf_hist) &&
                 same_bins(x, y, a->ot_nbins) && !x->pf_bin == !bins &&
                 !x->pf_pop == !split && !y->pf_pop == !split &&
                 (!split || (x->pf_pop[0].count + x->pf_pop[1].count &&
                             same_hist(&x->pf_pop[0], &y->pf_pop[0]) &&
                             same_hist(&x->pf_pop[1], &y->pf_pop[1])));
        }
        if (!ok) {
            fprintf(stderr,
                    "FAIL inner frames, lag %llu, split %d, over-time %d: "
                    "loads %d %d, inner chunks %zu, sums %d %d, or a row's "
                    "histogram differs\n",
                    (unsigned long long)cases[k].lag, split, ot, (int)ra,
                    (int)rb, b ? b->inner_chunks : 0, a ? a->ot_sums : -1,
                    b ? b->ot_sums : -1);
            failures++;
        }
        an_free(a);
        an_free(b);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_load_threads FIXTURES_DIR\n");
        return 2;
    }
    cap_files_walk(argv[1], all_ways);
    char path[64];
    if (cap_files_temp(path, sizeof path, "test_load_threads") != 0)
        return 2;
    generated(path);
    inner_frames(path);
    unlink(path);
    if (failures) {
        fprintf(stderr, "%d failure(s) in %d comparisons\n", failures,
                compared);
        return 1;
    }
    printf("ok: %d loads on two threads, each the same as on one\n",
           compared);
    return 0;
}
