/*
 * test_series_budget - the bounded-memory model (an_options.series_budget,
 * issue 12) against the exact one, on every fixture: a budget of one value
 * makes every capture summarised; the ranking, --split and --over-time
 * must then give the same counts and means (to rounding) and medians and
 * p95 within the histograms' stated error; two loading threads give the
 * same summarised model. Also the histogram alone against exact order
 * statistics.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capture/cap_writer.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/stat.h>
#include <sys/vfs.h>
#endif

#include "cap_files.h"
#include "fleet.h"
#include "render/fleet_render.h"
#include "hist.h"
#include "report.h"
#include "stats.h"

static int failures, files_checked, files_approx, files_packed, files_unpacked,
    files_pack_given_up, files_spilled, files_spill_failed;

#define CHECK(c, ...)                                                        \
    do {                                                                     \
        if (!(c)) {                                                          \
            failures++;                                                      \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);             \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
        }                                                                    \
    } while (0)

/* a within the histogram's bound of e (both ms, NAN alike) */
static int near_q(double a, double e)
{
    if (isnan(e) || isnan(a))
        return isnan(e) && isnan(a);
    return fabs(a - e) <= AN_HIST_REL_ERR * fabs(e) + 1e-12;
}

/* the same up to floating-point rounding */
static int near_sum(double a, double e)
{
    if (isnan(e) || isnan(a))
        return isnan(e) && isnan(a);
    return fabs(a - e) <= 1e-9 * fabs(e) + 1e-12;
}

static void same_summary(const char *what, const char *path, const char *name,
                         an_summary a, an_summary e)
{
    CHECK(a.n == e.n, "%s %s %s: n %zu, exact %zu", path, what, name, a.n, e.n);
    CHECK(near_sum(a.mean, e.mean), "%s %s %s: mean %.9g, exact %.9g", path,
          what, name, a.mean, e.mean);
    CHECK(near_q(a.median, e.median), "%s %s %s: median %.9g, exact %.9g",
          path, what, name, a.median, e.median);
    CHECK(near_q(a.p95, e.p95), "%s %s %s: p95 %.9g, exact %.9g", path, what,
          name, a.p95, e.p95);
}

static void compare(const char *path, const an_capture *e,
                    const an_capture *a)
{
    CHECK(a->nscopes == e->nscopes && a->nframes == e->nframes,
          "%s: %zu rows %zu frames, exact %zu %zu", path, a->nscopes,
          a->nframes, e->nscopes, e->nframes);
    if (a->nscopes != e->nscopes || a->nframes != e->nframes)
        return;
    CHECK(a->late_values == 0, "%s: %llu late values", path,
          (unsigned long long)a->late_values);
    an_ranking re, ra;
    CHECK(an_ranking_compute(&re, e) == CAP_OK, "%s ranking", path);
    CHECK(an_ranking_compute(&ra, a) == CAP_OK, "%s ranking", path);
    for (size_t i = 0; i < re.n && i < ra.n; i++) {
        CHECK(re.rows[i].scope - e->scopes == ra.rows[i].scope - a->scopes,
              "%s ranking row %zu differs", path, i);
        CHECK(near_sum(ra.rows[i].pf_mean, re.rows[i].pf_mean),
              "%s %s mean %.9g, exact %.9g", path, re.rows[i].scope->name,
              ra.rows[i].pf_mean, re.rows[i].pf_mean);
        CHECK(near_q(ra.rows[i].pf_p95, re.rows[i].pf_p95),
              "%s %s p95 %.9g, exact %.9g", path, re.rows[i].scope->name,
              ra.rows[i].pf_p95, re.rows[i].pf_p95);
    }
    an_ranking_free(&re);
    an_ranking_free(&ra);

    /* --split, by frame time, by the first CPU scope and by CPU work
     * (which a summarised model orders by the over-time hint's sums) */
    for (int by = 0; by < 3; by++) {
        const char *name = by == 2 ? AN_SPLIT_BY_WORK : NULL;
        for (size_t i = 0; by == 1 && i < e->nscopes && !name; i++)
            if (e->scopes[i].kind == AN_CPU)
                name = e->scopes[i].name;
        if (by && !name)
            continue;
        an_split se, sa;
        if (an_split_compute(&se, e, name) != CAP_OK) {
            CHECK(0, "%s split", path);
            continue;
        }
        if (by == 2 && a->approx && !a->ot_sums) {
            CHECK(an_split_compute(&sa, a, name) == CAP_E_MISUSE,
                  "%s split by work without the over-time sums", path);
            an_split_free(&se);
            continue;
        }
        CHECK(an_split_compute(&sa, a, name) == CAP_OK, "%s split", path);
        for (int p = 0; by == 2 && p < 2; p++)
            CHECK(se.by_work && sa.by_work &&
                      near_sum(sa.work[p].mean, se.work[p].mean) &&
                      near_sum(sa.work[p].median, se.work[p].median),
                  "%s split by work: population %d's work %.9g / %.9g, "
                  "exact %.9g / %.9g",
                  path, p, sa.work[p].mean, sa.work[p].median,
                  se.work[p].mean, se.work[p].median);
        CHECK(sa.quarter == se.quarter && sa.nscopes == se.nscopes,
              "%s split shape", path);
        for (size_t i = 0; i < se.quarter && i < sa.quarter; i++)
            CHECK(se.pop_frames[0][i] == sa.pop_frames[0][i] &&
                      se.pop_frames[1][i] == sa.pop_frames[1][i],
                  "%s split populations differ", path);
        /* rows by scope (their order can swap where means tie) */
        for (size_t i = 0; i < se.nscopes; i++)
            for (size_t k = 0; k < sa.nscopes; k++)
                if (sa.scopes[k].scope - a->scopes ==
                    se.scopes[i].scope - e->scopes)
                    for (int p = 0; p < 2; p++)
                        same_summary(by == 2   ? "split-by-work"
                                     : by ? "split-by"
                                          : "split",
                                     path,
                                     se.scopes[i].scope->name,
                                     sa.scopes[k].pop[p], se.scopes[i].pop[p]);
        an_split_free(&se);
        an_split_free(&sa);
    }

    an_over_time oe, oa;
    int bins = e->nframes >= 20 ? 10 : 2;
    CHECK(an_over_time_compute(&oe, e, bins, 0) == CAP_OK, "%s ot", path);
    CHECK(an_over_time_compute(&oa, a, bins, 0) == CAP_OK, "%s ot", path);
    CHECK(oe.nscopes == oa.nscopes && oe.nbins == oa.nbins, "%s ot shape",
          path);
    /* two groups of frames: found the same way (frame times are exact in
       both), the scopes' group medians then from each bin's two cells */
    CHECK(oe.groups == oa.groups && oe.group_by_work == oa.group_by_work,
          "%s ot groups %d/%d, exact %d/%d", path, oa.groups,
          oa.group_by_work, oe.groups, oe.group_by_work);
    for (int b = 0; b < oe.nbins && b < oa.nbins && oe.nframes; b++)
        CHECK(oa.bins[b].level == oe.bins[b].level ||
                  (isnan(oa.bins[b].level) && isnan(oe.bins[b].level)),
              "%s ot bin %d level %.9g, exact %.9g", path, b,
              oa.bins[b].level, oe.bins[b].level);
    for (size_t j = 0; j < oe.nscopes && j < oa.nscopes; j++)
        for (int b = 0; b < oe.nbins && oe.nframes; b++) {
            CHECK(near_q(oa.scopes[j].median[b], oe.scopes[j].median[b]),
                  "%s ot %s bin %d median %.9g, exact %.9g", path,
                  oe.scopes[j].scope->name, b, oa.scopes[j].median[b],
                  oe.scopes[j].median[b]);
            CHECK(near_q(oa.scopes[j].p95[b], oe.scopes[j].p95[b]),
                  "%s ot %s bin %d p95", path, oe.scopes[j].scope->name, b);
        }
    for (int b = 0; b < oe.nbins && oe.nframes && oa.nframes; b++) {
        CHECK(near_sum(oa.work.median[b], oe.work.median[b]),
              "%s ot work bin %d %.12g, exact %.12g", path, b,
              oa.work.median[b], oe.work.median[b]);
        CHECK(near_sum(oa.wait.median[b], oe.wait.median[b]),
              "%s ot wait bin %d", path, b);
    }
    an_over_time_free(&oe);
    an_over_time_free(&oa);
}

/* an_series_walk's calls, in order */
typedef struct walk_rec {
    size_t row, frame;
    int64_t v;
} walk_rec;
typedef struct walk_list {
    walk_rec *r;
    size_t n, cap;
    int nomem;
} walk_list;

static void walk_add(void *p, size_t row, size_t frame, int64_t v)
{
    walk_list *l = p;
    if (l->n == l->cap) {
        size_t c = l->cap ? l->cap * 2 : 1024;
        walk_rec *q = realloc(l->r, c * sizeof *q);
        if (!q) {
            l->nomem = 1;
            return;
        }
        l->r = q;
        l->cap = c;
    }
    l->r[l->n++] = (walk_rec){row, frame, v};
}

/* --frames' values (an_series_walk) of a summarised model a, which reads
 * the file again, are the exact model e's, call for call: frame order,
 * rows in order within a frame, zeros where a scope ran for no time. */
static void same_walk(const char *path, const char *what, const an_capture *e,
                      const an_capture *a)
{
    walk_list le = {0}, la = {0};
    CHECK(an_series_walk(e, walk_add, &le) == CAP_OK && !le.nomem,
          "%s: exact walk", path);
    CHECK(an_series_walk(a, walk_add, &la) == CAP_OK && !la.nomem,
          "%s %s: walk", path, what);
    CHECK(le.n == la.n, "%s %s: walk gives %zu values, exact %zu", path, what,
          la.n, le.n);
    size_t bad = 0;
    for (size_t i = 0; i < le.n && i < la.n; i++)
        if (le.r[i].row != la.r[i].row || le.r[i].frame != la.r[i].frame ||
            le.r[i].v != la.r[i].v) {
            if (!bad++)
                CHECK(0, "%s %s: walk value %zu: row %zu frame %zu %lld, "
                         "exact row %zu frame %zu %lld",
                      path, what, i, la.r[i].row, la.r[i].frame,
                      (long long)la.r[i].v, le.r[i].row, le.r[i].frame,
                      (long long)le.r[i].v);
        }
    for (size_t i = 1; i < le.n; i++)
        CHECK(le.r[i - 1].frame < le.r[i].frame ||
                  (le.r[i - 1].frame == le.r[i].frame &&
                   le.r[i - 1].row < le.r[i].row),
              "%s: exact walk out of order at %zu", path, i);
    for (size_t r = 0; r < e->nscopes && r < a->nscopes; r++)
        CHECK(strcmp(e->scopes[r].name, a->scopes[r].name) == 0,
              "%s %s: row %zu named apart", path, what, r);
    free(le.r);
    free(la.r);
}

/* The walk from a model that keeps no values past its budget
 * (series_reread, --frames) on one and two threads, loaded without the
 * call tree (no_tree, as --frames loads): the rows, threads and totals of
 * the exact model, the roots alone for a tree. */
static void reread_walks(const char *path, const an_capture *e,
                         const an_options *base, int configs)
{
    for (int k = 0; k < configs; k++) {
        /* 0-1 packed in memory; 2-3 no pack (the file read again); 4-5
           a chunk in memory, the rest spilled to a temporary file; 6-7
           the same where no temporary file can be made (given up: the
           file read again) */
        int th = 1 + k % 2, nopack = k == 2 || k == 3, spill = k >= 4,
            notmp = k >= 6;
        an_options o = *base;
        o.threads = th;
        o.series_budget = 1;
        o.series_reread = 1;
        o.no_tree = 1;
        o.pack_bytes = nopack || spill ? 1 : 0;
        o.pack_no_spill = nopack;
        o.split_hint = o.over_time_hint = 0;
        an_capture *r;
        char d[400];
        char *tmpdir = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
        if (notmp)
            setenv("TMPDIR", "/nonexistent/capture-test", 1);
        cap_result lr = an_load(&r, path, &o, d, sizeof d);
        if (notmp) {
            if (tmpdir)
                setenv("TMPDIR", tmpdir, 1);
            else
                unsetenv("TMPDIR");
        }
        free(tmpdir);
        if (lr != CAP_OK) {
            CHECK(0, "%s: reread load fails: %s", path, d);
            continue;
        }
        CHECK(r->reread == r->approx && r->nscopes == e->nscopes,
              "%s: reread %d approx %d", path, r->reread, r->approx);
        for (size_t i = 0; i < r->nscopes; i++)
            CHECK(r->scopes[i].pf_n == 0 || !r->approx,
                  "%s: reread keeps values", path);
        for (size_t i = 0; i < r->nscopes && r->nscopes == e->nscopes; i++)
            CHECK(r->scopes[i].self_ns == e->scopes[i].self_ns &&
                      r->scopes[i].total_ns == e->scopes[i].total_ns &&
                      r->scopes[i].calls == e->scopes[i].calls &&
                      r->scopes[i].is_wait == e->scopes[i].is_wait,
                  "%s: no_tree row %zu differs", path, i);
        size_t roots = 0;
        for (size_t i = 0; i < e->nnodes; i++)
            roots += e->nodes[i].is_root;
        CHECK(base->by_path || r->nnodes == roots, "%s: no_tree %zu nodes, "
              "%zu roots", path, r->nnodes, roots);
        CHECK(r->nthreads == e->nthreads &&
                  r->noutside_threads == e->noutside_threads &&
                  r->ntracks == e->ntracks && r->cpu_events == e->cpu_events &&
                  memcmp(r->outside_ns, e->outside_ns,
                         sizeof r->outside_ns) == 0,
              "%s: no_tree threads or totals differ", path);
        /* past the budget the values are packed, unless they cannot be
           (a row's frames out of order: threads far apart in the file) */
        CHECK(!nopack || !r->pack, "%s: packed past pack_bytes", path);
        CHECK(!r->pack || r->pack_file_bytes == 0 || (spill && !notmp),
              "%s: spilled in config %d", path, k);
        CHECK(!notmp || !r->pack || r->pack_file_bytes == 0,
              "%s: spilled with no temporary directory", path);
        if (k < 4) {
            files_packed += r->approx && r->pack != NULL;
            files_unpacked += r->approx && !r->pack;
            files_pack_given_up += !nopack && r->approx && !r->pack;
        } else if (!notmp) {
            files_spilled += r->approx && r->pack && r->pack_file_bytes > 0;
        } else {
            files_spill_failed += r->approx && !r->pack;
        }
        static const char *what[8] = {
            "packed",  "packed, two threads",  "reread",
            "reread, two threads", "spilled", "spilled, two threads",
            "no temporary file", "no temporary file, two threads"};
        same_walk(path, what[k], e, r);
        an_free(r);
    }
}

static void one_file(const char *path)
{
    /* by name, by call path, with --skip-seconds (the scans read the
       file again with the model's cut-off), and with --wait GLOB (the
       load marks the waits, and sums work and waits apart as it reads) */
    static const char *const globs[] = {"*e*", "nosuch"};
    for (int cfg = 0; cfg < 4; cfg++) {
        int by_path = cfg == 1;
        double skip = cfg == 2 ? 0.05 : 0;
        const char *const *wg = cfg == 3 ? globs : NULL;
        size_t nwg = cfg == 3 ? 2 : 0;
        an_options oe = {.by_path = by_path, .threads = 1,
                         .skip_seconds = skip, .wait_globs = wg,
                         .nwait_globs = nwg};
        an_options oa = {.by_path = by_path, .threads = 1,
                         .skip_seconds = skip, .series_budget = 1,
                         .wait_globs = wg, .nwait_globs = nwg,
                         .split_hint = cfg > 0, /* --split from the load's
                                                   histograms, or a scan */
                         .over_time_hint = cfg > 0, .ot_bins = 10,
                         .ot_hint_bytes = cfg == 2 ? 1 : 0};
        /* (--over-time: the load's bins are compare()'s where a file has
           20 frames or more, else it reads the file again; with
           --skip-seconds the histograms by bin outgrow their bound at
           once and are let go, so it reads the file again too) */
        an_options o2 = {.by_path = by_path, .threads = 2,
                         .skip_seconds = skip, .series_budget = 1,
                         .wait_globs = wg, .nwait_globs = nwg,
                         .over_time_hint = cfg > 0, .ot_bins = 10,
                         .ot_hint_bytes = oa.ot_hint_bytes};
        an_capture *e, *a, *a2;
        char d[400];
        if (an_load(&e, path, &oe, d, sizeof d) != CAP_OK)
            return; /* an unreadable fixture: not this test's */
        if (an_load(&a, path, &oa, d, sizeof d) != CAP_OK) {
            CHECK(0, "%s: exact load works, summarised fails: %s", path, d);
            an_free(e);
            return;
        }
        files_checked++;
        /* a capture with values in frames is summarised */
        int any = 0;
        for (size_t i = 0; i < e->nscopes; i++)
            any |= e->scopes[i].pf_n > 0;
        CHECK(a->approx == (any && e->nframes > 0) || (a->approx && !any),
              "%s: approx %d", path, a->approx);
        files_approx += a->approx;
        for (size_t i = 0; cfg == 2 && i < a->nscopes; i++)
            CHECK(!a->scopes[i].pf_bin && !a->ot_cpu_ms,
                  "%s: bins over their bound kept", path);
        CHECK(cfg != 1 || !a->approx || a->nframes == 0 || a->ot_bin,
              "%s: no bins", path);
        for (size_t i = 0; cfg == 3 && i < e->nscopes; i++)
            CHECK(!strchr(e->scopes[i].name, 'e') || e->scopes[i].is_wait,
                  "%s: %s not marked by --wait", path, e->scopes[i].name);
        /* --over-time in one read: the load summed work and waits */
        CHECK(!a->ot_bin || a->ot_sums, "%s: no sums of work and waits",
              path);
        compare(path, e, a);
        same_walk(path, "summarised", e, a);
        reread_walks(path, e, &oe, 8);
        if (an_load(&a2, path, &o2, d, sizeof d) == CAP_OK) {
            same_walk(path, "two threads", e, a2);
            /* the wait flags carried with the batches: the same sums */
            CHECK(a2->ot_sums == a->ot_sums, "%s: sums on two threads", path);
            for (int k = 0; k < 2 && a->ot_sums && a2->ot_sums; k++) {
                const double *x = k ? a->ot_wait_ms : a->ot_cpu_ms,
                             *y = k ? a2->ot_wait_ms : a2->ot_cpu_ms;
                CHECK((!x && !y) ||
                          (x && y && memcmp(x, y, a->nframes * sizeof *x) == 0),
                      "%s: %s sums differ on two threads", path,
                      k ? "wait" : "work");
            }
            CHECK(a2->approx == a->approx && a2->nscopes == a->nscopes,
                  "%s: two threads", path);
            for (size_t i = 0; i < a->nscopes && i < a2->nscopes; i++) {
                const an_hist *x = &a->scopes[i].pf_hist,
                              *y = &a2->scopes[i].pf_hist;
                CHECK(x->count == y->count && x->sum == y->sum &&
                          x->pos.n == y->pos.n && x->pos.lo == y->pos.lo &&
                          an_hist_nbuckets(x) == an_hist_nbuckets(y) &&
                          (!x->pos.n ||
                           memcmp(x->pos.c, y->pos.c, x->pos.n * 4) == 0),
                      "%s: row %zu's histogram differs on two threads", path,
                      i);
            }
            an_free(a2);
        } else {
            CHECK(0, "%s: two threads fail", path);
        }
        an_free(e);
        an_free(a);
    }
}

/* The histogram against exact order statistics. */
static void hist_alone(void)
{
    enum { N = 20000 };
    static double v[N + 5000];
    an_hist h = {0};
    unsigned long long x = 88172645463325252ull;
    for (size_t i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t ns = 1 + (int64_t)(x % 50000000); /* 1 ns .. 50 ms */
        CHECK(an_hist_add(&h, ns) == 0, "hist add");
        v[i] = (double)ns;
    }
    CHECK(an_hist_add(&h, 0) == 0 && h.count == N, "a zero is not stored");
    for (size_t i = N; i < N + 5000; i++)
        v[i] = 0; /* 5000 frames where it did not run */
    cap_stats_sort(v, N + 5000);
    static const double ps[] = {0, 0.1, 0.2, 0.21, 0.5, 0.95, 0.99, 1};
    for (size_t k = 0; k < sizeof ps / sizeof *ps; k++) {
        double e = cap_stats_quantile_sorted(v, N + 5000, ps[k]);
        double q = an_hist_quantile(&h, N + 5000, ps[k]);
        CHECK(fabs(q - e) <= AN_HIST_REL_ERR * e, "p%g: %.9g, exact %.9g",
              ps[k], q, e);
    }
    CHECK(isnan(an_hist_quantile(&h, 0, 0.5)), "no values: NAN");
    /* the same values in two halves, merged: the same counts */
    {
        an_hist p[2], mg;
        memset(p, 0, sizeof p);
        memset(&mg, 0, sizeof mg);
        for (size_t i = 0; i < N + 5000; i++) /* sorted; zeros not kept */
            CHECK(an_hist_add(&p[v[i] > 2e7], (int64_t)v[i]) == 0, "add");
        CHECK(an_hist_add(&p[0], -7) == 0 && an_hist_add(&h, -7) == 0, "neg");
        CHECK(an_hist_merge(&mg, &p[1]) == 0 && an_hist_merge(&mg, &p[0]) == 0,
              "merge");
        CHECK(mg.count == h.count && mg.sum == h.sum &&
                  mg.neg && mg.neg->count == 1 && mg.pos.count == h.pos.count,
              "merged count %llu sum %g", (unsigned long long)mg.count,
              mg.sum);
        for (double q = 0; q <= 1.0; q += 0.125)
            CHECK(an_hist_quantile(&mg, N + 5000, q) ==
                      an_hist_quantile(&h, N + 5000, q),
                  "merged p%g", q);
        an_hist_free(&p[0]);
        an_hist_free(&p[1]);
        an_hist_free(&mg);
    }
    CHECK(h.sum > 0, "sum");
    an_hist_free(&h);
    CHECK(h.pos.n == 0 && h.pos.c == NULL, "freed");
    /* negative values (a crafted file's GPU self times) sort first */
    an_hist g = {0};
    CHECK(an_hist_add(&g, -1000) == 0 && an_hist_add(&g, 500) == 0 &&
              an_hist_add(&g, -10) == 0, "hist add negative");
    CHECK(fabs(an_hist_quantile(&g, 4, 0) + 1000) <= 5, "min %g",
          an_hist_quantile(&g, 4, 0));
    CHECK(fabs(an_hist_quantile(&g, 4, 1.0 / 3) + 10) <= 0.05, "second %g",
          an_hist_quantile(&g, 4, 1.0 / 3));
    CHECK(an_hist_quantile(&g, 4, 2.0 / 3) == 0, "a zero third");
    CHECK(fabs(an_hist_quantile(&g, 4, 1) - 500) <= 2.5, "max");
    CHECK(g.sum == -510 && g.count == 3, "sum %g", g.sum);
    an_hist_free(&g);
}

typedef struct kp {
    double key;
    size_t pos;
} kp;

static int cmp_kp(const void *a, const void *b)
{
    const kp *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A writer of ns ticks into a new file named from the template path
 * (filled in), in blocks of block_bytes; NULL when that fails. */
static cap_writer *temp_writer(char *path, size_t block_bytes)
{
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return NULL;
    close(fd);
    cap_writer_options o = {0};
    o.clock_source = "monotonic";
    o.tick_period_ns = 1.0;
    o.block_bytes = block_bytes;
    cap_writer *w = NULL;
    CHECK(cap_writer_open_path(&w, path, &o) == CAP_OK, "open %s", path);
    if (!w)
        unlink(path);
    return w;
}

/* A long capture written here: 70,000 frames (more than the reports' in-
 * place sorts start at), two threads, the second five frames behind the
 * first, one name on both (its time in a frame arrives in two parts),
 * times varied. Written in blocks of block_bytes: small blocks keep the
 * two threads' pieces of a frame close in the file (as the producer's
 * buffers do), and the summarised model must agree with the exact one;
 * 1 MiB blocks put the second thread's pieces thousands of frames behind
 * the ring: the name of one thread must still agree, and the pieces of
 * the shared name that came too late must be counted. The frame
 * statistics must agree with a plain computation. */
static void long_capture(size_t block_bytes)
{
    enum { FRAMES = 70000, LAG = 5 };
    char path[] = "/tmp/test_series_budget_XXXXXX";
    cap_writer *w = temp_writer(path, block_bytes);
    if (!w)
        return;
    cap_writer_name(w, 1, "shared", "t.c", 1);
    cap_writer_name(w, 2, "main_only", "t.c", 2);
    cap_writer_name(w, 3, "worker_only", "t.c", 3);
    cap_writer_thread(w, 0, "main");
    cap_writer_thread(w, 1, "worker");
    unsigned long long x = 0x2545f4914f6cdd1dull;
    uint64_t fbeg[FRAMES];
    static double ft[FRAMES];
    uint64_t t = 1000;
    for (int f = 0; f < FRAMES + LAG; f++) {
        if (f < FRAMES) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint64_t b = t, d1 = 1000 + x % 5000, d2 = 200 + (x >> 20) % 900;
            fbeg[f] = b;
            cap_writer_scope_begin(w, 0, 1, b + 10);
            cap_writer_scope_begin(w, 0, 2, b + 20);
            cap_writer_scope_end(w, 0, b + 20 + d2);
            cap_writer_scope_end(w, 0, b + 30 + d2 + d1);
            t = b + 100 + d2 + d1 + (f % 997 == 0 ? 40000 : 0);
            ft[f] = (double)(t - b) / 1e6;
            cap_writer_frame(w, (uint64_t)f, b, t);
        }
        if (f >= LAG) { /* the worker's part of frame f - LAG */
            uint64_t b = fbeg[f - LAG];
            uint64_t d = 300 + (uint64_t)((f * 7919) % 2000);
            cap_writer_scope_begin(w, 1, 1, b + 5);
            cap_writer_scope_end(w, 1, b + 5 + d);
            cap_writer_scope_begin(w, 1, 3, b + 10 + d);
            cap_writer_scope_end(w, 1, b + 20 + d + (uint64_t)(f % 50));
        }
    }
    CHECK(cap_writer_close(w) == CAP_OK, "close");
    an_options oe = {.threads = 1},
               oa = {.threads = 1, .series_budget = 1, .split_hint = 1,
                     .over_time_hint = 1, .ot_bins = 10};
    an_capture *e, *a;
    char d[400];
    if (an_load(&e, path, &oe, d, sizeof d) != CAP_OK) {
        CHECK(0, "%s: %s", path, d);
        unlink(path);
        return;
    }
    CHECK(an_load(&a, path, &oa, d, sizeof d) == CAP_OK, "%s: %s", path, d);
    CHECK(e->nframes == FRAMES && a->approx, "%zu frames, approx %d",
          e->nframes, a->approx);
    /* --frames' values exact, late pieces or not */
    same_walk(path, "long", e, a);
    reread_walks(path, e, &oe, 8);
    if (block_bytes < 65536) {
        compare(path, e, a);
    } else {
        /* late pieces of "shared": counted; the rows of one thread exact */
        CHECK(a->late_values > 0, "%s: no late values counted", path);
        an_ranking re, ra;
        CHECK(an_ranking_compute(&re, e) == CAP_OK &&
                  an_ranking_compute(&ra, a) == CAP_OK, "ranking");
        for (size_t i = 0; i < re.n && i < ra.n; i++) {
            const char *nm = re.rows[i].scope->name;
            if (strcmp(nm, "shared") == 0)
                continue;
            CHECK(near_sum(ra.rows[i].pf_mean, re.rows[i].pf_mean) &&
                      near_q(ra.rows[i].pf_p95, re.rows[i].pf_p95),
                  "%s %s: %g %g, exact %g %g", path, nm, ra.rows[i].pf_mean,
                  ra.rows[i].pf_p95, re.rows[i].pf_mean, re.rows[i].pf_p95);
        }
        an_ranking_free(&re);
        an_ranking_free(&ra);
    }
    /* frame statistics against a plain computation */
    an_frame_stats fs;
    CHECK(an_frame_stats_compute(&fs, a) == CAP_OK, "frame stats");
    static double v[FRAMES], win[31];
    memcpy(v, ft, sizeof v);
    qsort(v, FRAMES, sizeof *v, cmp_d);
    CHECK(fs.median == cap_stats_quantile_sorted(v, FRAMES, 0.5) &&
              fs.p95 == cap_stats_quantile_sorted(v, FRAMES, 0.95) &&
              fs.p999 == cap_stats_quantile_sorted(v, FRAMES, 0.999) &&
              fs.max == v[FRAMES - 1],
          "frame quantiles %g %g %g %g", fs.median, fs.p95, fs.p999, fs.max);
    size_t stutters = 0;
    for (size_t i = 0; i < FRAMES; i++) {
        size_t lo = i >= 15 ? i - 15 : 0, hi = i + 16 < FRAMES ? i + 16 : FRAMES;
        memcpy(win, ft + lo, (hi - lo) * sizeof *win);
        qsort(win, hi - lo, sizeof *win, cmp_d);
        stutters += ft[i] > 2.5 * cap_stats_quantile_sorted(win, hi - lo, 0.5);
    }
    CHECK(fs.stutters == stutters && stutters >= FRAMES / 997,
          "stutters %zu, plainly %zu", fs.stutters, stutters);
    /* --split's quarters against a plain qsort by (frame time, position) */
    static kp order[FRAMES];
    for (size_t i = 0; i < FRAMES; i++)
        order[i] = (kp){(double)an_frame_ns(&a->frames[i]), i};
    qsort(order, FRAMES, sizeof *order, cmp_kp);
    an_split sp;
    CHECK(an_split_compute(&sp, a, NULL) == CAP_OK && sp.quarter == FRAMES / 4,
          "split");
    for (size_t i = 0; i < sp.quarter; i++)
        CHECK(sp.pop_frames[0][i] == order[i].pos &&
                  sp.pop_frames[1][i] == order[FRAMES - sp.quarter + i].pos,
              "split quarter position %zu differs from qsort's", i);
    an_split_free(&sp);
    an_free(e);
    an_free(a);
    unlink(path);
}

/* A capture whose worker thread is written after every frame of the main
 * one: its pieces come up to FRAMES frames late, past what
 * an_series_walk's ring may hold (AN_WALK_MAX_BYTES), so the walk loads
 * the exact series again; the values must still be the exact ones. Zero-
 * length scopes: the exact series hold their 0, and so must the walk. */
static void late_worker(void)
{
    enum { FRAMES = 40000 };
    char path[] = "/tmp/test_series_budget_XXXXXX";
    cap_writer *w = temp_writer(path, 4096);
    if (!w)
        return;
    cap_writer_name(w, 1, "work", "t.c", 1);
    cap_writer_name(w, 2, "instant", "t.c", 2);
    cap_writer_name(w, 3, "late", "t.c", 3);
    cap_writer_thread(w, 0, "main");
    cap_writer_thread(w, 1, "worker");
    for (uint64_t f = 0; f < FRAMES; f++) {
        uint64_t b = 1000 + f * 1000;
        cap_writer_scope_begin(w, 0, 1, b + 10);
        cap_writer_scope_end(w, 0, b + 100 + f % 300);
        if (f % 3 == 0) { /* ran for no time */
            cap_writer_scope_begin(w, 0, 2, b + 500);
            cap_writer_scope_end(w, 0, b + 500);
        }
        cap_writer_frame(w, f, b, b + 1000);
    }
    for (uint64_t f = 0; f < FRAMES; f += 2) {
        uint64_t b = 1000 + f * 1000;
        cap_writer_scope_begin(w, 1, 3, b + 200);
        cap_writer_scope_end(w, 1, b + 260 + f % 70);
    }
    CHECK(cap_writer_close(w) == CAP_OK, "close");
    an_options oe = {.threads = 1},
               oa = {.threads = 1, .series_budget = 1, .series_reread = 1,
                     .pack_bytes = 1, .pack_no_spill = 1}; /* no pack: the
                                          ring, past its bound */
    an_capture *e, *a;
    char d[400];
    if (an_load(&e, path, &oe, d, sizeof d) == CAP_OK) {
        CHECK(an_load(&a, path, &oa, d, sizeof d) == CAP_OK, "%s", d);
        CHECK(a->approx && a->lag_known && a->max_lag >= FRAMES / 2,
              "approx %d, lag %llu", a->approx,
              (unsigned long long)a->max_lag);
        same_walk(path, "late worker", e, a);
        reread_walks(path, e, &oe, 8);
        long z = an_find_scope(e, AN_CPU, "instant");
        CHECK(z >= 0 && e->scopes[z].pf_n == FRAMES / 3 + 1 &&
                  e->scopes[z].pf_self[0] == 0,
              "zero-length scopes kept as 0");
        an_free(a);
        an_free(e);
    } else {
        CHECK(0, "%s: %s", path, d);
    }
    unlink(path);
}

/* 1 when dir is a tmpfs: its files in memory (Linux only). */
static int is_tmpfs(const char *dir)
{
#ifdef __linux__
    struct statfs sf;
    return statfs(dir, &sf) == 0 && (unsigned long)sf.f_type == 0x01021994;
#else
    (void)dir;
    return 0;
#endif
}

/* an_spill_dir, with /dev/shm (a tmpfs) standing for a /tmp in memory and
 * the current directory (the build's) for a /var/tmp on disk. */
static void spill_dir(void)
{
    const char *mem = "/dev/shm", *disk = ".", *none = "/nonexistent/x";
    if (!is_tmpfs(mem) || is_tmpfs(disk) || access(disk, W_OK) != 0) {
        printf("an_spill_dir: skipped (needs /dev/shm a tmpfs and the "
               "current directory on a disk)\n");
        return;
    }
    const char *set = "/somewhere";
    CHECK(an_spill_dir(set, mem, disk) == set, "$TMPDIR set: not taken");
    CHECK(an_spill_dir(NULL, mem, disk) == disk,
          "/tmp in memory: /var/tmp on disk not taken");
    CHECK(an_spill_dir("", mem, disk) == disk,
          "$TMPDIR empty, /tmp in memory: /var/tmp not taken");
    CHECK(an_spill_dir(NULL, disk, mem) == disk, "/tmp on disk: not kept");
    CHECK(an_spill_dir(NULL, mem, none) == mem,
          "no /var/tmp: /tmp not kept");
    CHECK(an_spill_dir(NULL, mem, mem) == mem,
          "/var/tmp in memory too: /tmp not kept");
    printf("an_spill_dir: 6 cases\n");
}

/* Row i of a and of e hold the same exact series, value for value. */
static void same_series(const char *what, const an_capture *a,
                        const an_capture *e)
{
    CHECK(a->nscopes == e->nscopes && !a->approx && !e->approx,
          "%s: %zu rows (approx %d), exact %zu", what, a->nscopes, a->approx,
          e->nscopes);
    for (size_t i = 0; i < a->nscopes && i < e->nscopes; i++) {
        const an_scope *x = &a->scopes[i], *y = &e->scopes[i];
        int same = x->pf_n == y->pf_n && strcmp(x->name, y->name) == 0;
        for (size_t k = 0; same && k < x->pf_n; k++)
            same = x->pf_frame[k] == y->pf_frame[k] &&
                   x->pf_self[k] == y->pf_self[k];
        CHECK(same, "%s: row %zu (%s) differs from the exact one", what, i,
              x->name);
        if (!same)
            return;
    }
}

/* The exact series in their arena (a file of 4 MiB or more, a budget):
 * 300 names, each a scope a frame under its pair's first (depth 2), with
 * random times so that the file is large, over 4,000 frames: 1.2 M values.
 * Under a budget they fit, the series must equal those of a load without
 * a budget (no arena), whether the arena holds them all or is outgrown
 * (CAP_PF_ARENA_VALUES) and the rows go on in the heap; under a budget
 * they outgrow, the summaries must agree with the exact model, on one
 * thread and two. --frames' loads of it pack several slabs. */
static void arena_capture(void)
{
    enum { NAMES = 300, FRAMES = 4000 };
    char path[] = "/tmp/test_series_budget_XXXXXX";
    cap_writer *w = temp_writer(path, 1 << 20);
    if (!w)
        return;
    for (uint32_t k = 1; k <= NAMES; k++) {
        char nm[32];
        snprintf(nm, sizeof nm, "arena_%u", k);
        cap_writer_name(w, k, nm, "t.c", k);
    }
    cap_writer_thread(w, 0, "main");
    unsigned long long x = 0x9e3779b97f4a7c15ull;
    uint64_t t = 1000;
#define ARENA_RAND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
    for (int f = 0; f < FRAMES; f++) {
        uint64_t b = t;
        for (uint32_t k = 1; k <= NAMES; k += 2) {
            cap_writer_scope_begin(w, 0, k, t += 1 + ARENA_RAND() % 50000);
            cap_writer_scope_begin(w, 0, k + 1,
                                   t += 1 + ARENA_RAND() % 50000);
            cap_writer_scope_end(w, 0, t += 1 + ARENA_RAND() % 50000);
            cap_writer_scope_end(w, 0, t += 1 + ARENA_RAND() % 50000);
        }
        t += 100;
        cap_writer_frame(w, (uint64_t)f, b, t);
    }
#undef ARENA_RAND
    CHECK(cap_writer_close(w) == CAP_OK, "close");
    FILE *fp = fopen(path, "rb");
    long size = -1;
    if (fp && fseek(fp, 0, SEEK_END) == 0)
        size = ftell(fp);
    if (fp)
        fclose(fp);
    CHECK(size >= 4L << 20, "%s: %ld bytes, under the arena's 4 MiB", path,
          size);
    an_options oe = {.threads = 1}, ox = {.threads = 1, .series_budget =
                                                            2000000};
    an_capture *e = NULL, *a = NULL;
    char d[400];
    if (an_load(&e, path, &oe, d, sizeof d) != CAP_OK) {
        CHECK(0, "%s: %s", path, d);
        unlink(path);
        return;
    }
    CHECK(e->nscopes == NAMES && e->nframes == FRAMES && !e->pf_arena_used &&
              !e->pf_arena_peak,
          "%s: %zu rows, %zu frames, an arena without a budget", path,
          e->nscopes, e->nframes);
    int huge = an_huge_pages(); /* the arena needs them */
    for (int outgrown = 0; outgrown < 2; outgrown++) {
        const char *what = outgrown ? "arena outgrown" : "arena";
        if (outgrown)
            setenv("CAP_PF_ARENA_VALUES", "20000", 1);
        if (an_load(&a, path, &ox, d, sizeof d) != CAP_OK) {
            CHECK(0, "%s %s: %s", path, what, d);
            continue;
        }
        same_series(what, a, e);
        if (huge) {
            /* 1.2 M values take 14.4 MB at least; an outgrown arena
               gives its room and no more */
            size_t room = 20000 * (sizeof(int64_t) + sizeof(uint32_t));
            CHECK(outgrown ? a->pf_arena_used > 0 && a->pf_arena_used <= room
                           : a->pf_arena_used >= (size_t)NAMES * FRAMES * 12,
                  "%s: the arena gave %zu bytes", what, a->pf_arena_used);
        }
        an_free(a);
        a = NULL;
    }
    unsetenv("CAP_PF_ARENA_VALUES");
    /* --frames' loads, packed in memory on one thread and two: several
       of the pack's 2 MiB slabs */
    reread_walks(path, e, &oe, 2);
    if (!huge)
        printf("arena_capture: no transparent huge pages on request here: "
               "the series grew in the heap, the arena was not checked\n");
    for (int th = 1; th <= 2; th++) {
        an_options os = {.threads = th, .series_budget = 300000};
        if (an_load(&a, path, &os, d, sizeof d) != CAP_OK) {
            CHECK(0, "%s spilled, %d threads: %s", path, th, d);
            continue;
        }
        CHECK(a->approx && !a->pf_arena && (!huge || a->pf_arena_peak > 0),
              "%s: approx %d, arena %p, peak %zu", path, a->approx,
              (void *)a->pf_arena, a->pf_arena_peak);
        compare(path, e, a);
        an_free(a);
        a = NULL;
    }
    an_free(e);
    unlink(path);
}

/* --export of a model whose values are not held (a series_reread load
 * whose pack was given up: its walk reads the file again): all of it
 * while the file stays; one line and 1 from an_export_add, not a write
 * failure, when the file was replaced in between, and the export goes
 * on. */
static void export_read_back(void)
{
    char path[] = "/tmp/test_series_budget_XXXXXX";
    cap_writer *w = temp_writer(path, 4096);
    if (!w)
        return;
    cap_writer_name(w, 1, "work", "t.c", 1);
    cap_writer_thread(w, 0, "main");
    for (uint64_t f = 0, t = 1000; f < 200; f++, t += 1000) {
        cap_writer_scope_begin(w, 0, 1, t + 10);
        cap_writer_scope_end(w, 0, t + 20 + f % 7);
        cap_writer_frame(w, f, t, t + 900);
    }
    CHECK(cap_writer_close(w) == CAP_OK, "close");
    an_options o = {.threads = 1, .series_budget = 1, .series_reread = 1,
                    .no_tree = 1, .pack_bytes = 1, .pack_no_spill = 1};
    char dir[] = "/tmp/test_series_budget_exp_XXXXXX", d[400], err[400];
    an_capture *m = NULL;
    an_export *x = NULL;
    if (!mkdtemp(dir) || an_load(&m, path, &o, d, sizeof d) != CAP_OK ||
        an_export_open(&x, dir, err, sizeof err) != 0) {
        CHECK(0, "export_read_back: set-up fails");
        an_free(m);
        unlink(path);
        return;
    }
    CHECK(m->approx && m->reread && !m->pack, "export_read_back: the pack "
          "was kept (approx %d, reread %d)", m->approx, m->reread);
    an_capture_row row;
    an_capture_row_compute(m, 0, &row);
    err[0] = 0;
    CHECK(an_export_add(x, m, &row, err, sizeof err) == 0 && !err[0],
          "export_read_back: the file there: %s", err);
    /* cut short in place (a file renamed over the path is no change:
       the model reads the file it opened) */
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && truncate(path, sb.st_size / 2) == 0,
          "export_read_back: cannot cut %s", path);
    CHECK(an_export_add(x, m, &row, err, sizeof err) == 1 &&
              strstr(err, "could not be read back"),
          "export_read_back: the file cut short gives '%s'", err);
    CHECK(an_export_close(x, err, sizeof err) == 0,
          "export_read_back: the export goes on: %s", err);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "zcat %s/scopes.csv.gz | grep -c ',work,'",
             dir);
    FILE *p = popen(cmd, "r");
    int rows = -1;
    if (p && fscanf(p, "%d", &rows) != 1)
        rows = -1;
    if (p)
        pclose(p);
    CHECK(rows == 200, "export_read_back: %d scope rows, 200 from the "
          "first add and none from the second", rows);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        CHECK(0, "rm %s", dir);
    an_free(m);
    unlink(path);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_series_budget FIXTURES_DIR\n");
        return 2;
    }
    hist_alone();
    spill_dir();
    long_capture(4096);
    long_capture(1 << 20);
    late_worker();
    arena_capture();
    export_read_back();
    cap_files_walk(argv[1], one_file);
    printf("%d captures, %d summarised, %d failures\n", files_checked,
           files_approx, failures);
    CHECK(files_approx >= 10, "too few summarised captures: %d", files_approx);
    printf("--frames' loads: %d packed, %d not (read again; %d of them "
           "where a row's frames came out of order)\n",
           files_packed, files_unpacked, files_pack_given_up);
    CHECK(files_packed >= 10 && files_unpacked >= 10 && files_pack_given_up,
          "too few packed (%d) or unpacked (%d, %d given up) loads",
          files_packed, files_unpacked, files_pack_given_up);
    printf("--frames' loads with a chunk in memory: %d spilled to a "
           "temporary file, %d given up where none could be made\n",
           files_spilled, files_spill_failed);
    CHECK(files_spilled >= 10 && files_spill_failed >= 10,
          "too few spilled (%d) or failed spills (%d)", files_spilled,
          files_spill_failed);
    return failures ? 1 : 0;
}
