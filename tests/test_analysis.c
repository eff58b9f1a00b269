/*
 * test_analysis - the self-time arithmetic on hand-built trees: recursion,
 * zero-length scopes, a child as long as its parent, a scope spanning a
 * frame boundary, overlapping GPU children, per-frame attribution; and
 * frames from a 3.1 footer's list, or from the blocks when one is damaged.
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

#include "capture/cap_writer.h"
#include "model.h"
#include "render/render.h"
#include "report.h"

static char path[64];

static cap_writer *open_writer(void)
{
    snprintf(path, sizeof path, "/tmp/cap_test_analysis_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, NULL), CAP_OK);
    const char *names[] = {NULL, "A", "B", "C", "G", "G1", "G2"};
    for (uint32_t i = 1; i <= 6; i++)
        assert_int_equal(cap_writer_name(w, i, names[i], NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    return w;
}

static void frame_lengths_saturate(const an_capture *m)
{
    (void)m;
    an_frame f = {INT64_MIN, INT64_MAX};
    assert_true(an_frame_ns(&f) == INT64_MAX);
    an_frame g = {INT64_MAX, INT64_MIN};
    assert_true(an_frame_ns(&g) == INT64_MIN);
    an_frame h = {100, 350};
    assert_int_equal(an_frame_ns(&h), 250);
}

static an_capture *load(cap_writer *w)
{
    assert_int_equal(cap_writer_close(w), CAP_OK);
    an_capture *m;
    char d[256];
    an_options o = {0};
    assert_int_equal(an_load(&m, path, &o, d, sizeof d), CAP_OK);
    unlink(path);
    return m;
}

static const an_scope *row(const an_capture *m, an_kind k, const char *name)
{
    long i = an_find_scope(m, k, name);
    assert_true(i >= 0);
    return &m->scopes[i];
}

#define B(t, n, tick) assert_int_equal(cap_writer_scope_begin(w, t, n, tick), CAP_OK)
#define E(t, tick) assert_int_equal(cap_writer_scope_end(w, t, tick), CAP_OK)

static void recursion_is_not_double_counted_in_total(void **state)
{
    (void)state;
    cap_writer *w = open_writer();
    /* A[0,100] > A[10,60] > B[20,50] */
    B(0, 1, 0);
    B(0, 1, 10);
    B(0, 2, 20);
    E(0, 50);
    E(0, 60);
    E(0, 100);
    an_capture *m = load(w);
    const an_scope *a = row(m, AN_CPU, "A");
    assert_int_equal(a->calls, 2);
    assert_int_equal(a->total_ns, 100);      /* not 100 + 50 */
    assert_int_equal(a->self_ns, 50 + 20);   /* outer 100-50, inner 50-30 */
    assert_int_equal(row(m, AN_CPU, "B")->self_ns, 30);
    /* the tree keeps both levels */
    size_t anodes = 0;
    for (size_t i = 0; i < m->nnodes; i++)
        if (!m->nodes[i].is_root && strcmp(m->nodes[i].name, "A") == 0) {
            anodes++;
            assert_int_equal(m->nodes[i].calls, 1);
        }
    assert_int_equal(anodes, 2);
    an_free(m);
}

static void zero_length_scopes_count_calls_and_no_time(void **state)
{
    (void)state;
    cap_writer *w = open_writer();
    B(0, 1, 0);
    B(0, 2, 5);
    E(0, 5);
    B(0, 2, 7);
    E(0, 7);
    E(0, 10);
    an_capture *m = load(w);
    const an_scope *b = row(m, AN_CPU, "B");
    assert_int_equal(b->calls, 2);
    assert_int_equal(b->total_ns, 0);
    assert_int_equal(b->self_ns, 0);
    assert_int_equal(row(m, AN_CPU, "A")->self_ns, 10);
    an_free(m);
}

static void child_as_long_as_parent_leaves_no_self_time(void **state)
{
    (void)state;
    cap_writer *w = open_writer();
    B(0, 1, 100);
    B(0, 2, 100);
    E(0, 180);
    E(0, 180);
    an_capture *m = load(w);
    assert_int_equal(row(m, AN_CPU, "A")->self_ns, 0);
    assert_int_equal(row(m, AN_CPU, "A")->total_ns, 80);
    assert_int_equal(row(m, AN_CPU, "B")->self_ns, 80);
    an_free(m);
}

static void scope_spanning_frames_is_shared_out_by_its_time_in_each(void **state)
{
    (void)state;
    cap_writer *w = open_writer();
    /* frames [0,100) [100,200) [200,300) [300,400) on main.
     * A 10..40 (frame 0); C 50..350 spans all four, its children
     * B 60..90, B 120..230 (over frames 1 and 2, holding G 190..210 over
     * the same boundary), B 310..320; then A 380..450 runs past the last
     * frame. */
    B(0, 1, 10);
    E(0, 40);
    B(0, 3, 50);
    B(0, 2, 60);
    E(0, 90);
    B(0, 2, 120);
    B(0, 4, 190);
    E(0, 210);
    E(0, 230);
    B(0, 2, 310);
    E(0, 320);
    E(0, 350);
    B(0, 1, 380);
    E(0, 450);
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(cap_writer_frame(w, i, 100 * i, 100 * i + 100),
                         CAP_OK);
    an_capture *m = load(w);
    assert_int_equal(m->nframes, 4);
    double d[4];
    /* C: its time in each frame less its children's there */
    an_scope_dense(m, row(m, AN_CPU, "C"), d);
    assert_true(d[0] == 50 - 30 && d[1] == 100 - 80 && d[2] == 100 - 30 &&
                d[3] == 50 - 10);
    assert_int_equal(row(m, AN_CPU, "C")->self_ns, 150);
    /* B: 30; 80 less G's 10; 30 less G's 10; 10 */
    an_scope_dense(m, row(m, AN_CPU, "B"), d);
    assert_true(d[0] == 30 && d[1] == 70 && d[2] == 20 && d[3] == 10);
    an_scope_dense(m, row(m, AN_CPU, "G"), d);
    assert_true(d[0] == 0 && d[1] == 10 && d[2] == 10 && d[3] == 0);
    /* A: 30 in frame 0, 20 in frame 3, the 50 after it outside */
    an_scope_dense(m, row(m, AN_CPU, "A"), d);
    assert_true(d[0] == 30 && d[1] == 0 && d[2] == 0 && d[3] == 20);
    assert_int_equal(row(m, AN_CPU, "A")->self_ns, 100);
    assert_true(m->outside_ns[0] == 0 && m->outside_ns[1] == 0 &&
                m->outside_ns[2] == 50);
    /* no frame holds more of the thread's time than it lasted */
    double sum[4] = {0};
    for (size_t i = 0; i < m->nscopes; i++) {
        an_scope_dense(m, &m->scopes[i], d);
        for (int k = 0; k < 4; k++)
            sum[k] += d[k];
    }
    assert_true(sum[0] == 30 + 50 && sum[1] == 100 && sum[2] == 100 &&
                sum[3] == 70);
    an_free(m);
}

static void a_few_ns_past_the_last_frame_are_not_worth_a_warning(void **state)
{
    (void)state;
    for (int big = 0; big < 2; big++) {
        cap_writer *w = open_writer();
        /* frame [0,100000); A runs 20 ns (0.02 % of its time) or 200 ns
         * (0.2 %) past it */
        B(0, 1, 0);
        E(0, big ? 100200 : 100020);
        assert_int_equal(cap_writer_frame(w, 0, 0, 100000), CAP_OK);
        an_capture *m = load(w);
        an_totals t;
        an_totals_compute(m, &t);
        assert_int_equal(t.outside_ns, big ? 200 : 20);
        assert_int_equal(t.after_ns, big ? 200 : 20);
        assert_int_equal(t.outside_shown, big);
        assert_int_equal(t.outside_warned, 0); /* under 1 % */
        an_free(m);
    }
    /* 2,000 of 102,000 ns (2 %) past the frame: warned */
    cap_writer *w = open_writer();
    B(0, 1, 0);
    E(0, 102000);
    assert_int_equal(cap_writer_frame(w, 0, 0, 100000), CAP_OK);
    an_capture *m = load(w);
    an_totals t;
    an_totals_compute(m, &t);
    assert_true(t.outside_shown && t.outside_warned);
    an_free(m);
}

static void scope_from_a_gap_into_frames_counts_its_time_in_them(void **state)
{
    (void)state;
    cap_writer *w = open_writer();
    /* frames [100,200) and [300,400): A 50..150 begins before the first
     * (50 before, 50 in frame 0); C 250..320 in the gap and frame 1,
     * holding B 260..310 across the same edge */
    B(0, 1, 50);
    E(0, 150);
    B(0, 3, 250);
    B(0, 2, 260);
    E(0, 310);
    E(0, 320);
    assert_int_equal(cap_writer_frame(w, 0, 100, 200), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 1, 300, 400), CAP_OK);
    an_capture *m = load(w);
    double d[2];
    an_scope_dense(m, row(m, AN_CPU, "A"), d);
    assert_true(d[0] == 50 && d[1] == 0);
    an_scope_dense(m, row(m, AN_CPU, "B"), d);
    assert_true(d[0] == 0 && d[1] == 10);
    an_scope_dense(m, row(m, AN_CPU, "C"), d);
    assert_true(d[0] == 0 && d[1] == 20 - 10);
    /* A's 50 before; B's 40 and C's 10 in the gap, by their begins */
    assert_true(m->outside_ns[0] == 50 && m->outside_ns[1] == 40 + 10 &&
                m->outside_ns[2] == 0);
    an_free(m);
}

static void gpu_self_time_subtracts_the_union_of_overlapping_children(void **state)
{
    (void)state;
    cap_writer *w = open_writer();
    assert_int_equal(cap_writer_gpu_track(w, 0, "gfx", 1.0), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 7, 0, 1000), CAP_OK);
    /* G [0,100]: G1 [10,50], G2 [30,70] overlap: union 60, self 40 */
    cap_gpu_span sp[] = {{4, -1, 1000, 1100, 1},
                         {5, 0, 1010, 1050, 1},
                         {6, 0, 1030, 1070, 1}};
    assert_int_equal(cap_writer_gpu_frame(w, 0, 7, sp, 3), CAP_OK);
    an_capture *m = load(w);
    assert_int_equal(row(m, AN_GPU, "G")->self_ns, 40);
    assert_int_equal(row(m, AN_GPU, "G")->total_ns, 100);
    assert_int_equal(row(m, AN_GPU, "G1")->self_ns, 40);
    assert_int_equal(row(m, AN_GPU, "G2")->self_ns, 40);
    /* the frame's GPU time: the sum of self times = busy time, 120 */
    assert_int_equal(an_frame_gpu_ns(m, 0), 120);
    assert_true(an_frame_has_gpu(m, 0));
    an_free(m);
}

/* Frames keep their own indices beside them (an_frame_index): consecutive
 * ones as a first index, others one by one, frames sorted by begin with
 * theirs; GPU time goes to the frame of the index that recorded it. */
static void frame_indices_and_gpu_time_beside_the_frames(void **state)
{
    (void)state;
    cap_writer *w = open_writer();
    assert_int_equal(cap_writer_gpu_track(w, 0, "gfx", 1.0), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 5, 0, 100), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 6, 100, 200), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 7, 200, 300), CAP_OK);
    an_capture *m = load(w);
    assert_int_equal(m->nframes, 3);
    assert_null(m->frame_index);
    assert_null(m->frame_gpu_ns);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(an_frame_index(m, i), 5 + i);
        assert_int_equal(an_frame_gpu_ns(m, i), 0);
        assert_false(an_frame_has_gpu(m, i));
    }
    an_free(m);

    w = open_writer();
    assert_int_equal(cap_writer_gpu_track(w, 0, "gfx", 1.0), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 3, 0, 100), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 4, 100, 200), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 9, 200, 300), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 10, 300, 400), CAP_OK);
    cap_gpu_span a[] = {{4, -1, 1000, 1030, 1}};
    cap_gpu_span b[] = {{5, -1, 2000, 2007, 1}};
    assert_int_equal(cap_writer_gpu_frame(w, 0, 9, a, 1), CAP_OK);
    assert_int_equal(cap_writer_gpu_frame(w, 0, 10, b, 1), CAP_OK);
    m = load(w);
    assert_int_equal(m->nframes, 4);
    assert_non_null(m->frame_index);
    static const uint64_t ix[4] = {3, 4, 9, 10};
    static const int64_t begin[4] = {0, 100, 200, 300}, gpu[4] = {0, 0, 30, 7};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(an_frame_index(m, i), ix[i]);
        assert_int_equal(m->frames[i].begin_ns, begin[i]);
        assert_int_equal(m->frames[i].end_ns, begin[i] + 100);
        assert_int_equal(an_frame_gpu_ns(m, i), gpu[i]);
        assert_int_equal(an_frame_has_gpu(m, i), gpu[i] != 0);
    }
    an_free(m);

    /* indices increase in the file, begins need not: sorted by begin */
    w = open_writer();
    assert_int_equal(cap_writer_frame(w, 1, 100, 200), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 2, 0, 100), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 3, 200, 300), CAP_OK);
    m = load(w);
    assert_int_equal(m->nframes, 3);
    assert_non_null(m->frame_index);
    static const uint64_t ix2[3] = {2, 1, 3};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(an_frame_index(m, i), ix2[i]);
        assert_int_equal(m->frames[i].begin_ns, (int64_t)i * 100);
    }
    an_free(m);
}

static void threads_with_the_same_name_merge_in_the_tree(void **state)
{
    (void)state;
    cap_writer *w = open_writer();
    assert_int_equal(cap_writer_thread(w, 1, "worker"), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 2, "worker"), CAP_OK);
    B(1, 2, 0);
    E(1, 10);
    B(2, 2, 0);
    E(2, 30);
    an_capture *m = load(w);
    size_t roots = 0;
    for (size_t i = 0; i < m->nnodes; i++)
        if (m->nodes[i].is_root) {
            roots++;
            assert_string_equal(m->nodes[i].name, "worker");
        }
    assert_int_equal(roots, 1);
    assert_int_equal(row(m, AN_CPU, "B")->calls, 2);
    assert_int_equal(row(m, AN_CPU, "B")->self_ns, 40);
    an_free(m);
}

static void times_far_apart_do_not_overflow_the_reports(void **state)
{
    (void)state;
    cap_writer *w = open_writer();
    assert_int_equal(cap_writer_thread(w, 1, "other"), CAP_OK);
    /* thread 0 near the top of int64, thread 1 (as a signed ns value) near
     * its bottom: their difference does not fit 64 bits */
    uint64_t hi = 0x7ffffffffffff000ull, lo = 0x8000000000001000ull;
    B(0, 1, hi);
    E(0, hi + 100);
    B(1, 2, lo);
    E(1, lo + 100);
    assert_int_equal(cap_writer_frame(w, 0, hi, hi + 200), CAP_OK);
    an_capture *m = load(w);
    assert_true(an_elapsed_ns(m->first_ns, m->last_ns) > 1.8e19);
    FILE *null = fopen("/dev/null", "w");
    assert_non_null(null);
    an_frame_stats fs;
    an_totals t;
    assert_int_equal(an_frame_stats_compute(&fs, m), CAP_OK);
    an_totals_compute(m, &t);
    an_text_header(null, m, &fs, &t, 0);
    an_over_time ot;
    assert_int_equal(an_over_time_compute(&ot, m, 0, 1.0), CAP_OK);
    an_text_over_time(null, m, &ot, 0);
    an_over_time_free(&ot);
    an_ranking r;
    assert_int_equal(an_ranking_compute(&r, m), CAP_OK);
    an_text_ranking(null, m, &r, 0);
    an_ranking_free(&r);
    fclose(null);
    frame_lengths_saturate(m);
    an_free(m);
}

/* r as an_csv_ranking writes it: a new string. */
static char *csv_of(const an_ranking *r)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    an_csv_ranking(f, r);
    fclose(f);
    return out;
}

/* Waits are marked wherever self time is ranked: a name the program
 * tagged (CAP_NAME_WAIT) and one matched by a --wait glob count in
 * an_ranking's nwait and wait_ns (their self times, exactly), and the
 * text and CSV of the ranking and the tree mark those rows and no other. */
static void waits_are_marked_in_the_ranking_and_the_tree(void **state)
{
    (void)state;
    cap_writer *w = open_writer();
    assert_int_equal(cap_writer_name_flags(w, 2, CAP_NAME_WAIT), CAP_OK);
    /* A[0,100] > B[10,40] (tagged wait) ; C[100,160] (matched by glob) */
    B(0, 1, 0);
    B(0, 2, 10);
    E(0, 40);
    E(0, 100);
    B(0, 3, 100);
    E(0, 160);
    assert_int_equal(cap_writer_frame(w, 0, 0, 200), CAP_OK);
    assert_int_equal(cap_writer_close(w), CAP_OK);
    const char *globs[] = {"C"};
    an_options o = {.wait_globs = globs, .nwait_globs = 1};
    an_capture *m;
    char d[256];
    assert_int_equal(an_load(&m, path, &o, d, sizeof d), CAP_OK);
    unlink(path);
    an_ranking r;
    assert_int_equal(an_ranking_compute(&r, m), CAP_OK);
    assert_int_equal(r.nwait, 2);
    assert_int_equal(r.wait_ns, 30 + 60);
    assert_int_equal(r.totals.cpu_ns, 70 + 30 + 60);
    char *out = csv_of(&r);
    assert_string_equal(
        out, "track,name,calls,total_ms,self_ms,self_ms_per_frame_mean,"
             "self_ms_per_frame_p95,share_pct,wait\n"
             "cpu,A,1,0.000100,0.000070,0.000070,0.000070,43.750000,0\n"
             "cpu,C,1,0.000060,0.000060,0.000060,0.000060,37.500000,1\n"
             "cpu,B,1,0.000030,0.000030,0.000030,0.000030,18.750000,1\n");
    free(out);
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    an_text_ranking(f, m, &r, 0);
    fclose(f);
    assert_non_null(strstr(out, "43.8%\n"));
    assert_non_null(strstr(out, "37.5%  wait\n"));
    assert_non_null(strstr(out, "18.8%  wait\n"));
    assert_non_null(strstr(out, "\nwait: time a thread spent blocked, not "
                                "working (a scope the program tagged as a "
                                "wait, or matched by --wait): 2 scopes, "
                                "0.000 ms, 56.2% of the CPU time\n"));
    free(out);
    an_ranking_free(&r);
    an_tree t;
    assert_int_equal(an_tree_compute(&t, m, -1, 0.0), CAP_OK);
    f = open_memstream(&out, &len);
    assert_non_null(f);
    an_csv_tree(f, &t);
    fclose(f);
    assert_string_equal(out,
                        "path,depth,track,calls,total_ms,self_ms,share_pct,"
                        "wait\n"
                        "main;A,0,cpu,1,0.000100,0.000070,62.500000,0\n"
                        "main;A;B,1,cpu,1,0.000030,0.000030,18.750000,1\n"
                        "main;C,0,cpu,1,0.000060,0.000060,37.500000,1\n");
    free(out);
    f = open_memstream(&out, &len);
    assert_non_null(f);
    an_text_tree(f, m, &t, 0);
    fclose(f);
    assert_non_null(strstr(out, "  A\n"));
    assert_non_null(strstr(out, "    B  (wait)\n"));
    assert_non_null(strstr(out, "  C  (wait)\n"));
    free(out);
    an_tree_free(&t);
    an_free(m);
}

/* The warning about ids with no name lists the first few that have a row,
 * then "..." for the ids the reader counted past them; when no row has
 * one (ids met only in scopes a damaged section left open), the list is
 * "(...)", not "(, ...)". */
static void unnamed_ids_warning_lists_what_it_has(void **state)
{
    (void)state;
    static const struct {
        uint64_t counted;
        size_t listed;
        const char *want;
    } c[] = {
        {3, 0, "warning: x.cap: 3 scope ids have no name (...): "},
        {3, 1, "warning: x.cap: 3 scope ids have no name (#14, ...): "},
        {1, 1, "warning: x.cap: 1 scope id has no name (#14): "},
        {0, 2, "warning: x.cap: 2 scope ids have no name (#14, #15): "},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        an_capture m;
        memset(&m, 0, sizeof m);
        char path[] = "x.cap";
        m.path = path;
        m.st.unnamed_ids = c[i].counted;
        m.unnamed_ids[0] = 14;
        m.unnamed_ids[1] = 15;
        m.unnamed_n = c[i].listed;
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        assert_non_null(f);
        an_text_warnings(f, &m, "ranking", 0, 0);
        fclose(f);
        assert_non_null(out);
        assert_true(strncmp(out, c[i].want, strlen(c[i].want)) == 0);
        free(out);
    }
}

static void self_time_helper_clamps_and_never_overflows(void **state)
{
    (void)state;
    assert_int_equal(cap_self_ns(10, 110, 30), 70);
    assert_int_equal(cap_self_ns(10, 110, 0), 100);
    assert_int_equal(cap_self_ns(10, 110, 100), 0);  /* children cover all */
    assert_int_equal(cap_self_ns(10, 110, 500), 0);  /* more than all */
    assert_int_equal(cap_self_ns(10, 110, -5), 100); /* no negative cover */
    assert_int_equal(cap_self_ns(110, 10, 0), 0);    /* end before begin */
    assert_true(cap_self_ns(INT64_MIN, INT64_MAX, 0) == INT64_MAX);
    assert_true(cap_self_ns(INT64_MIN, INT64_MAX, INT64_MAX) == 0);
    assert_true(cap_self_ns(-1, INT64_MAX, 1) == INT64_MAX - 1);
    assert_true(cap_duration_ns(INT64_MIN, 0) == INT64_MAX);
    assert_true(cap_duration_ns(INT64_MIN + 1, 0) == INT64_MAX);
    assert_true(cap_duration_ns(0, INT64_MIN) == 0);
}

/* The ranking CSV of the capture at p, loaded with o: a new string (csv_of). */
static char *ranking_csv(const char *p, const an_options *o, size_t *nframes,
                         int *listed)
{
    an_capture *m;
    char d[256];
    assert_int_equal(an_load(&m, p, o, d, sizeof d), CAP_OK);
    *nframes = m->nframes;
    *listed = m->frames_listed;
    an_ranking r;
    assert_int_equal(an_ranking_compute(&r, m), CAP_OK);
    char *out = csv_of(&r);
    an_ranking_free(&r);
    an_free(m);
    return out;
}

/* Format 3.1: the frames come from the footer's list, and the model is
 * the one the blocks give. With a block damaged, the list still holds its
 * frames; the load finds the damage and loads again from the blocks, so
 * that the model is exactly that of a load told to read the blocks (the
 * damaged block's frames left out, as from a file without a list). */
static void frames_from_the_footer_list_or_the_blocks(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "/tmp/cap_test_analysis_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    cap_writer_options wo = {.block_bytes = 4096};
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, &wo), CAP_OK);
    assert_int_equal(cap_writer_name(w, 1, "frame", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_name(w, 2, "work", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    uint64_t t = 1000;
    for (uint64_t f = 0; f < 40; f++) {
        uint64_t b = t;
        B(0, 1, t);
        for (int i = 0; i < 60; i++) {
            B(0, 2, t += 10);
            E(0, t += 20 + (f * 7 + (uint64_t)i) % 13);
        }
        E(0, t += 5);
        assert_int_equal(cap_writer_frame(w, f, b, t), CAP_OK);
        t += 100;
    }
    assert_int_equal(cap_writer_close(w), CAP_OK);
    an_options o = {0}, blocks = {.frames_from_blocks = 1};
    size_t n1, n2;
    int l1, l2;
    char *a = ranking_csv(path, &o, &n1, &l1);
    char *b = ranking_csv(path, &blocks, &n2, &l2);
    assert_int_equal(l1, 1);
    assert_int_equal(l2, 0);
    assert_int_equal(n1, 40);
    assert_int_equal(n2, 40);
    assert_string_equal(a, b);
    free(a);
    free(b);
    /* one block's payload damaged (the third chunk: the second block) */
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    static unsigned char buf[1 << 18];
    size_t len = fread(buf, 1, sizeof buf, f);
    size_t at[4], k = 0;
    for (size_t i = 0; i + 4 <= len && k < 4; i++)
        if (memcmp(buf + i, "CHNK", 4) == 0)
            at[k++] = i;
    assert_int_equal(k, 4);
    buf[at[2] + 24 + 10] ^= 0x5a;
    assert_int_equal(fseek(f, 0, SEEK_SET), 0);
    assert_int_equal(fwrite(buf, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    a = ranking_csv(path, &o, &n1, &l1);
    b = ranking_csv(path, &blocks, &n2, &l2);
    assert_int_equal(l1, 0); /* loaded again, from the blocks */
    assert_int_equal(l2, 0);
    assert_true(n2 > 0 && n2 < 40);
    assert_int_equal(n1, n2);
    assert_string_equal(a, b);
    free(a);
    free(b);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(recursion_is_not_double_counted_in_total),
        cmocka_unit_test(zero_length_scopes_count_calls_and_no_time),
        cmocka_unit_test(child_as_long_as_parent_leaves_no_self_time),
        cmocka_unit_test(scope_spanning_frames_is_shared_out_by_its_time_in_each),
        cmocka_unit_test(scope_from_a_gap_into_frames_counts_its_time_in_them),
        cmocka_unit_test(a_few_ns_past_the_last_frame_are_not_worth_a_warning),
        cmocka_unit_test(gpu_self_time_subtracts_the_union_of_overlapping_children),
        cmocka_unit_test(frame_indices_and_gpu_time_beside_the_frames),
        cmocka_unit_test(threads_with_the_same_name_merge_in_the_tree),
        cmocka_unit_test(times_far_apart_do_not_overflow_the_reports),
        cmocka_unit_test(self_time_helper_clamps_and_never_overflows),
        cmocka_unit_test(unnamed_ids_warning_lists_what_it_has),
        cmocka_unit_test(waits_are_marked_in_the_ranking_and_the_tree),
        cmocka_unit_test(frames_from_the_footer_list_or_the_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
