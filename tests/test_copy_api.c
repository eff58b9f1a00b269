/*
 * test_copy_api.c - the reader and writer calls a faithful copy of a
 * capture needs: the reader's ticks (cap_reader_set_ticks), its clock
 * (cap_reader_clock, cap_reader_block_clock), a scope's ancestors
 * (cap_reader_scope_ancestors), a GPU span's ticks and its track's
 * calibration (cap_reader_gpu_span_ticks, cap_reader_track_calibration);
 * the writer's counts (cap_writer_scope_counts), scopes left open
 * (cap_writer_scope_forget) and children time added
 * (cap_writer_scope_children). Exact values throughout.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "capture/cap_reader.h"
#include "capture/cap_writer.h"

#define TMP_DIR_NAME "copy_api"
#include "tmp_dir.h"

static void tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmpdir, name);
}

/* Every scope of the capture at path, "tid name depth begin end
 * children" a line, into got. */
static void scopes_of(const char *path, char *got, size_t size)
{
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
    got[0] = '\0';
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) == CAP_OK) {
        if (ev.kind != CAP_EV_SCOPE)
            continue;
        size_t k = strlen(got);
        snprintf(got + k, size - k, "%u %u %u %lld %lld %lld\n",
                 ev.u.scope.tid, ev.u.scope.name, ev.u.scope.depth,
                 (long long)ev.u.scope.begin_ns, (long long)ev.u.scope.end_ns,
                 (long long)ev.u.scope.children_ns);
    }
    assert_int_equal(res, CAP_DONE);
    cap_reader_close(r);
}

/* A capture of 0.25 ns ticks from tick 1000 (CLOCK_MONOTONIC 5000 there):
 * block 1 without a clock sample, block 2 with one that counts (0.5 ns a
 * tick), block 3 with one that does not (too soon after the origin). */
static void write_clocked(const char *path)
{
    cap_writer_options wo = {0};
    wo.clock_source = "tsc";
    wo.tick_period_ns = 0.25;
    wo.origin_tick = 1000;
    wo.origin_mono_ns = 5000;
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, &wo), CAP_OK);
    assert_int_equal(cap_writer_name(w, 1, "a", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_name(w, 2, "n", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 0, 1003, 1010), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 1, 1003), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 1009), CAP_OK);
    assert_int_equal(cap_writer_flush(w), CAP_OK);
    /* 400,000,000 ticks after the origin, 200 ms later: 0.5 ns a tick */
    assert_int_equal(cap_writer_clock_sample(w, 400001000, 200005000),
                     CAP_OK);
    assert_int_equal(cap_writer_counter(w, 2, 1007, 1.5), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 1, 1011), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 1017), CAP_OK);
    assert_int_equal(cap_writer_flush(w), CAP_OK);
    assert_int_equal(cap_writer_clock_sample(w, 2000, 6000), CAP_OK);
    /* block 3: converted with the initial period again */
    assert_int_equal(cap_writer_scope_begin(w, 0, 1, 1020), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 1021), CAP_OK);
    assert_int_equal(cap_writer_close(w), CAP_OK);
}

static void ticks_read_back_exactly_with_each_blocks_clock(void **state)
{
    (void)state;
    char path[300];
    tmp_path(path, sizeof path, "clocked.cap");
    write_clocked(path);
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
    double per;
    uint64_t otick, omono, t, m;
    cap_reader_clock(r, &per, &otick, &omono);
    assert_true(per == 0.25);
    assert_int_equal(otick, 1000);
    assert_int_equal(omono, 5000);
    assert_int_equal(cap_reader_block_clock(r, &t, &m), 0);
    assert_int_equal(cap_reader_set_ticks(r, 1), CAP_OK);
    char got[1024] = "";
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) == CAP_OK) {
        char line[128] = "";
        int have = cap_reader_block_clock(r, &t, &m);
        if (ev.kind == CAP_EV_FRAME)
            snprintf(line, sizeof line, "frame %lld %lld",
                     (long long)ev.u.frame.begin_ns,
                     (long long)ev.u.frame.end_ns);
        else if (ev.kind == CAP_EV_SCOPE)
            snprintf(line, sizeof line, "scope %lld %lld %lld",
                     (long long)ev.u.scope.begin_ns,
                     (long long)ev.u.scope.end_ns,
                     (long long)ev.u.scope.children_ns);
        else if (ev.kind == CAP_EV_COUNTER)
            snprintf(line, sizeof line, "counter %lld",
                     (long long)ev.u.counter.time_ns);
        else
            continue;
        size_t k = strlen(got);
        snprintf(got + k, sizeof got - k, "%s clock %d %llu %llu\n", line,
                 have, (unsigned long long)t, (unsigned long long)m);
    }
    assert_int_equal(res, CAP_DONE);
    /* ticks minus the origin's; the sample of block 2 only (block 3's
     * lies 1 us after the origin: it does not count) */
    assert_string_equal(got, "frame 3 10 clock 0 0 0\n"
                             "scope 3 9 0 clock 0 0 0\n"
                             "scope 11 17 0 clock 1 400001000 200005000\n"
                             "counter 7 clock 1 400001000 200005000\n"
                             "scope 20 21 0 clock 0 0 0\n");
    /* too late now */
    assert_int_equal(cap_reader_set_ticks(r, 0), CAP_E_MISUSE);
    cap_reader_close(r);
    assert_int_equal(cap_reader_set_ticks(NULL, 1), CAP_E_MISUSE);
    assert_int_equal(cap_reader_block_clock(NULL, &t, &m), 0);
    cap_reader_clock(NULL, &per, &otick, &omono);
    assert_true(per == 0);
    assert_int_equal(otick + omono, 0);

    /* without ticks, the same events in ns: 0.25 ns a tick, then 0.5 */
    assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
    got[0] = '\0';
    while ((res = cap_reader_next(r, &ev)) == CAP_OK) {
        if (ev.kind != CAP_EV_SCOPE)
            continue;
        size_t k = strlen(got);
        snprintf(got + k, sizeof got - k, "%lld %lld\n",
                 (long long)ev.u.scope.begin_ns, (long long)ev.u.scope.end_ns);
    }
    assert_int_equal(res, CAP_DONE);
    /* 3 x 0.25 = 0.75 -> 1; 9 x 0.25 = 2.25 -> 2; 11 x 0.5 = 5.5 -> 6 */
    assert_string_equal(got, "1 2\n6 9\n5 5\n");
    cap_reader_close(r);
}

static void scope_counts_are_read_back_as_the_writer_counts_them(void **state)
{
    (void)state;
    char path[300];
    tmp_path(path, sizeof path, "counts.cap");
    cap_writer_options wo = {0};
    wo.format_major = 1;
    wo.format_minor = 1;
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, &wo), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 3, "io"), CAP_OK);
    assert_int_equal(cap_writer_scope_counts(w, 0, 2, 12, 3), CAP_OK);
    assert_int_equal(cap_writer_flush(w), CAP_OK);
    assert_int_equal(cap_writer_scope_counts(w, 3, 1, 0, 0), CAP_OK);
    assert_int_equal(cap_writer_scope_counts(w, 0, 0, 0, 0), CAP_OK);
    /* the writer's own counting adds to them */
    assert_int_equal(cap_writer_scope_end(w, 3, 5), CAP_E_MISUSE);
    assert_int_equal(cap_writer_scope_counts(w, 7, 1, 0, 0), CAP_E_MISUSE);
    assert_int_equal(cap_writer_scope_counts(NULL, 0, 1, 0, 0),
                     CAP_E_MISUSE);
    assert_int_equal(cap_writer_close(w), CAP_OK);
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) == CAP_OK)
        ;
    assert_int_equal(res, CAP_DONE);
    const cap_reader_stats *st = cap_reader_get_stats(r);
    assert_int_equal(st->closed_at_end, 3);
    assert_int_equal(st->clock_backwards, 12);
    assert_int_equal(st->stray_ends, 4);
    assert_int_equal(st->dropped_scopes, 0);
    cap_reader_close(r);

    /* format 1.0 cannot hold stray ends; the other two it can */
    tmp_path(path, sizeof path, "counts-1.0.cap");
    wo.format_minor = 0;
    assert_int_equal(cap_writer_open_path(&w, path, &wo), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    assert_int_equal(cap_writer_scope_counts(w, 0, 0, 0, 1), CAP_E_MISUSE);
    assert_int_equal(cap_writer_scope_counts(w, 0, 1, 1, 0), CAP_OK);
    assert_int_equal(cap_writer_close(w), CAP_OK);
    assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
    while ((res = cap_reader_next(r, &ev)) == CAP_OK)
        ;
    assert_int_equal(res, CAP_DONE);
    st = cap_reader_get_stats(r);
    assert_int_equal(st->closed_at_end, 1);
    assert_int_equal(st->clock_backwards, 1);
    assert_int_equal(st->stray_ends, 0);
    cap_reader_close(r);
}

/* Scopes read with their ancestors' begins, in ns and in ticks. */
static void a_scopes_ancestors_begins_are_given_with_it(void **state)
{
    (void)state;
    char path[300];
    tmp_path(path, sizeof path, "nest.cap");
    cap_writer_options wo = {0};
    wo.tick_period_ns = 2.0;
    wo.origin_tick = 100;
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, &wo), CAP_OK);
    for (uint32_t i = 1; i <= 3; i++)
        assert_int_equal(cap_writer_name(w, i, i == 1 ? "frame" : i == 2 ? "a"
                                                                 : "b",
                                         NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 1, 110), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 2, 112), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 3, 115), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 116), CAP_OK);
    assert_int_equal(cap_writer_flush(w), CAP_OK); /* a, frame: prefix */
    assert_int_equal(cap_writer_scope_end(w, 0, 118), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 120), CAP_OK);
    assert_int_equal(cap_writer_frame(w, 0, 110, 120), CAP_OK);
    assert_int_equal(cap_writer_close(w), CAP_OK);
    for (int ticks = 0; ticks < 2; ticks++) {
        cap_reader *r;
        assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
        assert_int_equal(cap_reader_set_ticks(r, ticks), CAP_OK);
        char got[256] = "";
        cap_event ev;
        cap_result res;
        while ((res = cap_reader_next(r, &ev)) == CAP_OK) {
            int64_t b[4] = {-1, -1, -1, -1}, ch[4] = {-1, -1, -1, -1};
            size_t n = cap_reader_scope_ancestors(r, b, ch, 4);
            size_t k = strlen(got);
            snprintf(got + k, sizeof got - k, "%d %zu %lld %lld %lld %lld\n",
                     (int)ev.kind, n, (long long)b[0], (long long)b[1],
                     (long long)ch[0], (long long)ch[1]);
        }
        assert_int_equal(res, CAP_DONE);
        if (ticks) /* ticks after the origin (100) */
            /* children so far, the scope itself included: b's 1 tick
             * in a; a's 6 in frame */
            assert_string_equal(got, "1 0 -1 -1 -1 -1\n" /* the thread */
                                     "4 2 10 12 0 1\n" /* b in frame, a */
                                     "3 0 -1 -1 -1 -1\n" /* frame 0 */
                                     "4 1 10 -1 6 -1\n" /* a in frame */
                                     "4 0 -1 -1 -1 -1\n"); /* frame */
        else /* 2 ns a tick */
            assert_string_equal(got, "1 0 -1 -1 -1 -1\n"
                                     "4 2 20 24 0 2\n"
                                     "3 0 -1 -1 -1 -1\n"
                                     "4 1 20 -1 12 -1\n"
                                     "4 0 -1 -1 -1 -1\n");
        cap_reader_close(r);
    }
    /* the depth only, with no room; after a batch of several: 0 */
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
    cap_event ev[8];
    size_t n;
    assert_int_equal(cap_reader_next(r, &ev[0]), CAP_OK); /* thread */
    assert_int_equal(cap_reader_next(r, &ev[0]), CAP_OK); /* b */
    assert_int_equal(cap_reader_scope_ancestors(r, NULL, NULL, 0), 2);
    assert_int_equal(cap_reader_next_batch(r, ev, 8, &n), CAP_OK);
    assert_int_equal(n, 1); /* block 2's frame comes alone */
    assert_int_equal(cap_reader_scope_ancestors(r, NULL, NULL, 0), 0);
    assert_int_equal(cap_reader_next_batch(r, ev, 8, &n), CAP_OK);
    assert_int_equal(n, 2); /* a and frame: a run of scopes */
    assert_int_equal(ev[0].u.scope.depth, 1);
    assert_int_equal(cap_reader_scope_ancestors(r, NULL, NULL, 0), 0);
    cap_reader_close(r);
    assert_int_equal(cap_reader_scope_ancestors(NULL, NULL, NULL, 0), 0);
}

/* Scopes left open on purpose: never reported, never counted, and the
 * thread's later scopes nest under those still open only. */
static void forgotten_scopes_are_never_ended(void **state)
{
    (void)state;
    char path[300];
    tmp_path(path, sizeof path, "forget.cap");
    cap_writer_options wo = {0};
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, &wo), CAP_OK);
    for (uint32_t i = 1; i <= 4; i++)
        assert_int_equal(cap_writer_name(w, i, i == 1 ? "a" : i == 2 ? "b"
                                                      : i == 3 ? "c" : "d",
                                         NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 1, "idle"), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 1, 10), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 2, 20), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 3, 30), CAP_OK);
    assert_int_equal(cap_writer_scope_forget(w, 0, 2), CAP_OK); /* b, c */
    assert_int_equal(cap_writer_scope_begin(w, 0, 4, 40), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 50), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 60), CAP_OK); /* a */
    assert_int_equal(cap_writer_scope_begin(w, 1, 2, 70), CAP_OK);
    assert_int_equal(cap_writer_scope_forget(w, 1, 9), CAP_OK); /* all */
    assert_int_equal(cap_writer_scope_forget(w, 1, 0), CAP_OK);
    assert_int_equal(cap_writer_scope_forget(w, 5, 1), CAP_E_MISUSE);
    assert_int_equal(cap_writer_scope_forget(NULL, 0, 1), CAP_E_MISUSE);
    assert_int_equal(cap_writer_close(w), CAP_OK);
    char got[256];
    scopes_of(path, got, sizeof got);
    assert_string_equal(got, "0 4 1 40 50 0\n"
                             "0 1 0 10 60 10\n");
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
    cap_event ev;
    while (cap_reader_next(r, &ev) == CAP_OK)
        ;
    const cap_reader_stats *st = cap_reader_get_stats(r);
    assert_int_equal(st->closed_at_end, 0);
    assert_int_equal(st->stray_ends, 0);
    assert_int_equal(st->corrupt_chunks, 0);
    cap_reader_close(r);
}

/* A GPU span's own ticks and its track's calibration, as read. */
static void gpu_ticks_and_calibrations_are_given_as_written(void **state)
{
    (void)state;
    char path[300];
    tmp_path(path, sizeof path, "gpu.cap");
    cap_writer_options wo = {0};
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, &wo), CAP_OK);
    assert_int_equal(cap_writer_name(w, 1, "pass", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_gpu_track(w, 3, "queue", 0.3), CAP_OK);
    cap_gpu_span a[] = {{1, -1, 100, 103, 1}, {1, 0, 0, 0, 0}};
    assert_int_equal(cap_writer_gpu_frame(w, 3, 0, a, 2), CAP_OK);
    assert_int_equal(cap_writer_gpu_calibration(w, 3, 90, 1001, 7), CAP_OK);
    a[0].begin_tick = 200;
    a[0].end_tick = 250;
    assert_int_equal(cap_writer_gpu_frame(w, 3, 1, a, 1), CAP_OK);
    assert_int_equal(cap_writer_close(w), CAP_OK);
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
    uint64_t b = 9, e = 9, g = 9, c = 9;
    assert_int_equal(cap_reader_track_calibration(r, 3, &g, &c), 0);
    assert_int_equal(g + c, 0);
    char got[256] = "";
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) == CAP_OK) {
        int m = cap_reader_gpu_span_ticks(r, &b, &e);
        int k = cap_reader_track_calibration(r, 3, &g, &c);
        size_t n = strlen(got);
        snprintf(got + n, sizeof got - n, "%d %d %llu %llu %d %llu %llu\n",
                 (int)ev.kind, m, (unsigned long long)b, (unsigned long long)e,
                 k, (unsigned long long)g, (unsigned long long)c);
    }
    assert_int_equal(res, CAP_DONE);
    assert_string_equal(got, "2 0 0 0 0 0 0\n"         /* the track */
                             "5 1 100 103 0 0 0\n"     /* measured */
                             "5 0 0 0 0 0 0\n"         /* not measured */
                             "5 1 200 250 1 90 1001\n"); /* calibrated */
    assert_int_equal(cap_reader_track_calibration(r, CAP_MAX_TRACKS, &g, &c),
                     0);
    cap_reader_close(r);
    assert_int_equal(cap_reader_gpu_span_ticks(NULL, &b, &e), 0);
    assert_int_equal(cap_reader_track_calibration(NULL, 0, NULL, NULL), 0);
}

/* Children time added to open scopes: their self times are that much
 * lower; the block under way is written first when it must be. */
static void children_added_to_open_scopes_count_as_children(void **state)
{
    (void)state;
    char path[300];
    tmp_path(path, sizeof path, "children.cap");
    cap_writer_options wo = {0};
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, &wo), CAP_OK);
    assert_int_equal(cap_writer_name(w, 1, "a", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_name(w, 2, "b", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 1, 100), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 2, 110), CAP_OK);
    /* the thread has events in the block: it is written first */
    assert_int_equal(cap_writer_scope_children(w, 0, 0, 30), CAP_OK);
    assert_int_equal(cap_writer_scope_children(w, 0, 1, 5), CAP_OK);
    assert_int_equal(cap_writer_scope_children(w, 0, 1, 0), CAP_OK);
    assert_int_equal(cap_writer_scope_children(w, 0, 2, 5), CAP_E_MISUSE);
    assert_int_equal(cap_writer_scope_children(w, 1, 0, 5), CAP_E_MISUSE);
    assert_int_equal(cap_writer_scope_children(NULL, 0, 0, 5), CAP_E_MISUSE);
    assert_int_equal(cap_writer_scope_end(w, 0, 150), CAP_OK); /* b: 40 */
    assert_int_equal(cap_writer_scope_end(w, 0, 200), CAP_OK); /* a: 100 */
    assert_int_equal(cap_writer_close(w), CAP_OK);
    char got[128];
    scopes_of(path, got, sizeof got);
    /* b: 5 added; a: 30 added and b's 40 */
    assert_string_equal(got, "0 2 1 110 150 5\n0 1 0 100 200 70\n");
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
    cap_event ev;
    while (cap_reader_next(r, &ev) == CAP_OK)
        ;
    assert_int_equal(cap_reader_get_stats(r)->chunks, 4); /* meta, 2, foot */
    cap_reader_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ticks_read_back_exactly_with_each_blocks_clock),
        cmocka_unit_test(scope_counts_are_read_back_as_the_writer_counts_them),
        cmocka_unit_test(a_scopes_ancestors_begins_are_given_with_it),
        cmocka_unit_test(forgotten_scopes_are_never_ended),
        cmocka_unit_test(children_added_to_open_scopes_count_as_children),
        cmocka_unit_test(gpu_ticks_and_calibrations_are_given_as_written),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
