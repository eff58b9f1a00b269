/*
 * test_diff_busy - how busy a comparison's threads kept the machine's CPUs
 * (an_diff.cpus, base_busy, new_busy; docs/STATISTICS.md section 11), on
 * captures written through cap_writer.h with known work a frame: the CPU
 * count read from the machine's description, the busy shares exactly, the
 * cases where they are unknown, and the lines a text report of one run a
 * side prints when it gates; and read_capture's ranking's share and line
 * (an_ranking.busy).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/cap_writer.h"
#include "diff.h"
#include "model.h"
#include "render/render.h"
#include "report.h"

#include "assert_near.h"

enum { N_WORK = 1, N_BLOCKED, N_JOB };

#define FRAMES 200
#define FRAME_NS 10000000ull /* 10 ms */

/* 200 frames of 10 ms on a machine described as `machine` (NULL: none):
 * thread 0 works work_ms, then waits (a name flagged CAP_NAME_WAIT) to
 * the frame's end (flag_wait 0: not flagged); thread 1 runs a job of
 * job_ms. Each work is jittered by at most +-0.5 % (a fixed sequence), so
 * that the busy share is work_ms + job_ms over 2 x 10 ms within 0.05 %. */
static an_capture *sim_full(double work_ms, double job_ms,
                            const char *machine, int flag_wait)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/cap_test_diff_busy_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    cap_meta_kv kv = {"machine", machine};
    cap_writer_options o = {0};
    if (machine) {
        o.meta = &kv;
        o.meta_count = 1;
    }
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, &o), CAP_OK);
    assert_int_equal(cap_writer_name(w, N_WORK, "work", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_name(w, N_BLOCKED, "blocked", NULL, 0),
                     CAP_OK);
    if (flag_wait)
        assert_int_equal(
            cap_writer_name_flags(w, N_BLOCKED, CAP_NAME_WAIT), CAP_OK);
    assert_int_equal(cap_writer_name(w, N_JOB, "job", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 1, "worker"), CAP_OK);
    uint64_t t = 1000000, x = 12345;
    for (int i = 0; i < FRAMES; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        double j = 1.0 + 0.01 * ((double)(x >> 11) / 9007199254740992.0 - 0.5);
        uint64_t end = t + FRAME_NS;
        uint64_t w_end = t + (uint64_t)llround(work_ms * 1e6 * j);
        assert_int_equal(cap_writer_scope_begin(w, 0, N_WORK, t), CAP_OK);
        assert_int_equal(cap_writer_scope_end(w, 0, w_end), CAP_OK);
        assert_int_equal(cap_writer_scope_begin(w, 0, N_BLOCKED, w_end),
                         CAP_OK);
        assert_int_equal(cap_writer_scope_end(w, 0, end), CAP_OK);
        assert_int_equal(cap_writer_scope_begin(w, 1, N_JOB, t + 1000),
                         CAP_OK);
        assert_int_equal(
            cap_writer_scope_end(w, 1,
                                 t + 1000 + (uint64_t)llround(job_ms * 1e6 * j)),
            CAP_OK);
        assert_int_equal(cap_writer_frame(w, (uint64_t)i, t, end), CAP_OK);
        t = end;
    }
    assert_int_equal(cap_writer_close(w), CAP_OK);
    an_capture *m;
    char d[256];
    assert_int_equal(an_load(&m, path, NULL, d, sizeof d), CAP_OK);
    unlink(path);
    return m;
}

static an_capture *sim_flagged(double work_ms, const char *machine,
                               int flag_wait)
{
    return sim_full(work_ms, 3.0, machine, flag_wait);
}

static an_capture *sim(double work_ms, const char *machine)
{
    return sim_flagged(work_ms, machine, 1);
}

/* The text report of d (one run a side), owned by the caller. */
static char *report(const an_diff *d)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(an_diff_report(f, d, NULL, 0, 0, 0), 0);
    fclose(f);
    return text;
}

/* 6 + 3 ms against 8 + 3 ms of work in each 10 ms frame on 2 CPUs: 45 %
 * and 55 % busy; the wait is left out; work regresses, and the report
 * says both how runs differ and how busy they were. */
static void the_busy_shares_are_the_work_over_the_cpus_time(void **state)
{
    (void)state;
    an_capture *b = sim(6.0, "box (some cpu, 2 CPUs)");
    an_capture *n = sim(8.0, "box (some cpu, 2 CPUs)");
    an_diff d;
    assert_int_equal(an_diff_run_opts(&d, b, n, NULL), CAP_OK);
    assert_int_equal(d.cpus, 2);
    assert_near(d.base_busy, 0.45, 0.0005);
    assert_near(d.new_busy, 0.55, 0.0005);
    assert_int_equal(d.gating, 1);
    char *text = report(&d);
    assert_non_null(strstr(text, "\nOne run a side: how runs of the same "
                                 "code differ"));
    assert_non_null(strstr(text, "\nBusy: scopes that are not waits held "
                                 "45 % (base) and 55 % (new) of the 2 "
                                 "CPUs'\ntime in frames"));
    free(text);
    an_diff_free(&d);

    /* nothing gates (the same run twice): neither line */
    assert_int_equal(an_diff_run_opts(&d, b, b, NULL), CAP_OK);
    assert_near(d.base_busy, 0.45, 0.0005);
    assert_int_equal(d.gating, 0);
    text = report(&d);
    assert_null(strstr(text, "One run a side"));
    assert_null(strstr(text, "Busy:"));
    free(text);
    an_diff_free(&d);

    /* several runs a side: the runs are in the test, neither line */
    const an_capture *base[2] = {b, b}, *new_[2] = {n, n};
    assert_int_equal(an_diff_runs(&d, base, 2, new_, 2, NULL), CAP_OK);
    assert_near(d.new_busy, 0.55, 0.0005);
    text = report(&d);
    assert_null(strstr(text, "One run a side"));
    assert_null(strstr(text, "Busy:"));
    free(text);
    an_diff_free(&d);
    an_free(b);
    an_free(n);
}

/* The CPU count is read only from the producer's "..., N CPUs)" and only
 * when every run names the same: else the shares are unknown (NaN) and
 * the report says nothing of them, while the one-run line stays. */
static void an_unknown_cpu_count_gives_no_busy_share(void **state)
{
    (void)state;
    static const char *const other[] = {
        NULL,                        /* no machine at all */
        "fixture-box (8 cores)",     /* another producer's words */
        "box (some cpu, 0 CPUs)",    /* no CPU */
        "box (some cpu,  CPUs)",     /* no number */
        "box (some cpu, 4 CPUs)",    /* not the base's 2 */
        "box 2 CPUs)",               /* not after ", " */
    };
    an_capture *b = sim(6.0, "box (some cpu, 2 CPUs)");
    for (size_t k = 0; k < sizeof other / sizeof other[0]; k++) {
        an_capture *n = sim(8.0, other[k]);
        an_diff d;
        assert_int_equal(an_diff_run_opts(&d, b, n, NULL), CAP_OK);
        if (d.cpus != 0)
            fail_msg("machine \"%s\": cpus %u, expected 0",
                     other[k] ? other[k] : "(none)", d.cpus);
        assert_true(isnan(d.base_busy) && isnan(d.new_busy));
        char *text = report(&d);
        assert_non_null(strstr(text, "One run a side"));
        assert_null(strstr(text, "Busy:"));
        free(text);
        an_diff_free(&d);
        an_free(n);
    }
    /* no name flagged as a wait: "blocked" would count as busy (100 %
       and more), so nothing is said */
    an_capture *u = sim_flagged(6.0, "box (some cpu, 2 CPUs)", 0);
    an_capture *v = sim_flagged(8.0, "box (some cpu, 2 CPUs)", 0);
    an_diff e;
    assert_int_equal(an_diff_run_opts(&e, u, v, NULL), CAP_OK);
    assert_int_equal(e.cpus, 2);
    assert_true(isnan(e.base_busy) && isnan(e.new_busy));
    an_diff_free(&e);
    /* ... unless --wait names it */
    an_diff_options wo = {0};
    const char *globs[] = {"block*"};
    wo.wait = globs;
    wo.nwait = 1;
    assert_int_equal(an_diff_run_opts(&e, u, v, &wo), CAP_OK);
    assert_near(e.base_busy, 0.45, 0.0005);
    assert_near(e.new_busy, 0.55, 0.0005);
    an_diff_free(&e);
    an_free(u);
    an_free(v);
    /* 16 CPUs, as a large host's producer writes them */
    an_capture *x = sim(6.0, "host (cpu, 16 CPUs)");
    an_capture *y = sim(8.0, "host (cpu, 16 CPUs)");
    an_diff d;
    assert_int_equal(an_diff_run_opts(&d, x, y, NULL), CAP_OK);
    assert_int_equal(d.cpus, 16);
    assert_near(d.new_busy, 11.0 / 160.0, 0.0001);
    an_diff_free(&d);
    an_free(x);
    an_free(y);
    an_free(b);
}

/* The text ranking of m, owned by the caller. */
static char *ranking_text(const an_capture *m, an_ranking *r)
{
    assert_int_equal(an_ranking_compute(r, m), CAP_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    an_text_ranking(f, m, r, 0);
    fclose(f);
    return text;
}

/* read_capture's ranking: the same share of one capture, and a line from
 * AN_BUSY_NOTE_SHARE (75 %) on: 9 + 7 ms of 2 x 10 ms is 80 %, 6 + 3 ms
 * 45 %, nothing said; no wait known: nothing computed. */
static void the_ranking_says_when_the_cpus_were_busy(void **state)
{
    (void)state;
    an_capture *busy = sim_full(9.0, 7.0, "box (some cpu, 2 CPUs)", 1);
    an_capture *calm = sim(6.0, "box (some cpu, 2 CPUs)");
    an_capture *blind = sim_full(9.0, 7.0, "box (some cpu, 2 CPUs)", 0);
    an_ranking r;
    char *text = ranking_text(busy, &r);
    assert_int_equal(r.cpus, 2);
    assert_near(r.busy, 0.80, 0.0005);
    assert_non_null(strstr(text, "\nbusy: scopes that are not waits held "
                                 "80% of the 2 CPUs' time in frames"));
    free(text);
    an_ranking_free(&r);
    text = ranking_text(calm, &r);
    assert_near(r.busy, 0.45, 0.0005);
    assert_null(strstr(text, "busy:"));
    free(text);
    an_ranking_free(&r);
    text = ranking_text(blind, &r);
    assert_true(isnan(r.busy));
    assert_null(strstr(text, "busy:"));
    free(text);
    an_ranking_free(&r);
    an_free(busy);
    an_free(calm);
    an_free(blind);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_busy_shares_are_the_work_over_the_cpus_time),
        cmocka_unit_test(an_unknown_cpu_count_gives_no_busy_share),
        cmocka_unit_test(the_ranking_says_when_the_cpus_were_busy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
