/*
 * test_game_sim - game_sim writes what it promises: a short run with every
 * knob that adds threads and scopes reads back with each thread, every
 * name of its --help table, the 7-deep physics path, GPU spans of exactly
 * their nominal durations, counters, the waits of the table tagged as
 * waits (and nothing else), the 90 runtime asset names each under its own
 * name, and no work scope shorter than its nominal self time allows. Bad
 * options exit 2.
 *
 * Usage: test_game_sim PATH/TO/game_sim
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/cap_reader.h"

static const char *game_sim;

/* Run game_sim with args (NULL-terminated), stdout to out_path (or
 * /dev/null), stderr to /dev/null; return its exit status. */
static int run(const char *out_path, const char *const *args)
{
    const char *argv[32];
    int n = 0;
    argv[n++] = game_sim;
    for (; args[n - 1] && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen(out_path ? out_path : "/dev/null", "w", stdout) ||
            !freopen("/dev/null", "w", stderr))
            _exit(99);
        execv(game_sim, (char *const *)argv);
        _exit(98);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static void tmp_path(char *buf, size_t n, const char *what)
{
    snprintf(buf, n, "/tmp/test_game_sim_%s_%ld", what, (long)getpid());
}

/* name, nominal self time in us at --scale 1 (0 for a wait) */
typedef struct truth {
    char name[64];
    char thread[32];
    double mean_us;
    int wait, gpu;
    size_t seen;
    int64_t min_self_ns;
} truth;

/* The --help table is the known truth; parse it back. */
static size_t read_truth(truth *t, size_t cap)
{
    char path[96];
    tmp_path(path, sizeof path, "help");
    const char *args[] = {"--help", NULL};
    assert_int_equal(run(path, args), 0);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[256];
    size_t n = 0;
    int in_table = 0;
    while (fgets(line, sizeof line, f)) {
        char name[64], thread[32], mean[32], kind[16];
        if (in_table && line[0] == '\n')
            break; /* the table ends at the first blank line */
        if (sscanf(line, " %63s %31s %31s %15s", name, thread, mean, kind) != 4)
            continue;
        if (strcmp(name, "name") == 0) {
            in_table = 1;
            continue;
        }
        if (!in_table || strchr(name, '<'))
            continue; /* asset_<name>: the runtime names */
        assert_true(n < cap);
        snprintf(t[n].name, sizeof t[n].name, "%s", name);
        snprintf(t[n].thread, sizeof t[n].thread, "%s", thread);
        t[n].wait = strcmp(kind, "wait") == 0;
        t[n].gpu = strcmp(kind, "gpu") == 0;
        t[n].mean_us = t[n].wait ? 0 : atof(mean);
        t[n].min_self_ns = INT64_MAX;
        n++;
    }
    fclose(f);
    unlink(path);
    return n;
}

static truth *find(truth *t, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0)
            return &t[i];
    return NULL;
}

#define FRAMES 60
#define SCALE 0.25
#define WORKERS 3

static void test_game_sim_records_its_truth(void **state)
{
    (void)state;
    static truth t[96]; /* zeroed: seen counts from 0 */
    size_t nt = read_truth(t, 96);
    assert_true(nt >= 40);

    char path[96];
    tmp_path(path, sizeof path, "cap");
    const char *args[] = {path,        "--frames",         "60",
                          "--scale",   "0.25",             "--workers",
                          "3",         "--seed",           "7",
                          "--fps-cap", "300",              "--outside-frames",
                          "--runtime-names", NULL};
    assert_int_equal(run(NULL, args), 0);

    cap_reader *r;
    char detail[256];
    assert_int_equal(cap_reader_open(&r, path, detail, sizeof detail), CAP_OK);
    cap_event ev;
    cap_result res;
    size_t frames = 0, gpu_spans = 0, counters = 0, draw_calls = 0;
    size_t assets = 0, asset_calls[90] = {0};
    uint32_t max_depth = 0;
    int threads_seen[8] = {0};
    const char *thread_names[] = {"main", "render", "worker 0", "worker 1",
                                  "worker 2", "asset_loader"};
    while ((res = cap_reader_next(r, &ev)) == CAP_OK) {
        switch (ev.kind) {
        case CAP_EV_THREAD:
            for (int i = 0; i < 6; i++)
                if (strcmp(ev.u.thread.name, thread_names[i]) == 0)
                    threads_seen[i]++;
            break;
        case CAP_EV_FRAME:
            frames++;
            break;
        case CAP_EV_COUNTER: {
            counters++;
            const char *n = cap_reader_name(r, ev.u.counter.name);
            assert_non_null(n);
            if (strcmp(n, "draw_calls") == 0) {
                draw_calls++;
                assert_true(ev.u.counter.value >= 1800 &&
                            ev.u.counter.value < 2200);
            }
            break;
        }
        case CAP_EV_GPU_SPAN: {
            gpu_spans++;
            const char *n = cap_reader_name(r, ev.u.gpu_span.name);
            truth *d = n ? find(t, nt, n) : NULL;
            assert_non_null(d);
            assert_true(d->gpu);
            d->seen++;
            assert_true(ev.u.gpu_span.measured);
            /* GPU durations are exact: self within the +-5 % jitter */
            double nominal = d->mean_us * 1000 * SCALE;
            assert_true(ev.u.gpu_span.self_ns >= (int64_t)(nominal * 0.95) - 1);
            assert_true(ev.u.gpu_span.self_ns <= (int64_t)(nominal * 1.05) + 1);
            break;
        }
        case CAP_EV_SCOPE: {
            const char *n = cap_reader_name(r, ev.u.scope.name);
            assert_non_null(n);
            if (ev.u.scope.depth > max_depth)
                max_depth = ev.u.scope.depth;
            if (strncmp(n, "asset_", 6) == 0) {
                /* asset_NN_kind: each of the 90 under its own name */
                int k = atoi(n + 6);
                assert_true(k >= 0 && k < 90);
                asset_calls[k]++;
                assets++;
                assert_string_equal(cap_reader_name(r, ev.u.scope.stack[2]),
                                    "stream_assets");
                break;
            }
            truth *d = find(t, nt, n);
            if (!d)
                fail_msg("scope '%s' is not in game_sim --help", n);
            assert_false(d->gpu);
            d->seen++;
            /* the waits of the table, and only they, are tagged */
            int wait = (cap_reader_name_flags(r, ev.u.scope.name) &
                        CAP_NAME_WAIT) != 0;
            if (wait != d->wait)
                fail_msg("'%s' is %s in the file, %s in --help", n,
                         wait ? "a wait" : "work", d->wait ? "a wait" : "work");
            int64_t self = ev.u.scope.end_ns - ev.u.scope.begin_ns -
                           ev.u.scope.children_ns;
            if (self < d->min_self_ns)
                d->min_self_ns = self;
            if (strcmp(n, "contact_island") == 0) {
                static const char *path7[] = {
                    "game_frame",       "update",          "update_physics",
                    "physics_narrowphase", "physics_contacts", "contact_solve"};
                assert_int_equal(ev.u.scope.depth, 6);
                for (int i = 0; i < 6; i++)
                    assert_string_equal(
                        cap_reader_name(r, ev.u.scope.stack[i]), path7[i]);
            }
            break;
        }
        default:
            break;
        }
    }
    assert_int_equal(res, CAP_DONE);
    const cap_reader_stats *st = cap_reader_get_stats(r);
    assert_true(st->has_footer);
    assert_int_equal(st->dropped_scopes, 0);
    assert_int_equal(st->closed_at_end, 0);
    cap_reader_close(r);
    unlink(path);

    for (int i = 0; i < 6; i++)
        if (threads_seen[i] == 0)
            fail_msg("thread '%s' missing", thread_names[i]);
    assert_int_equal(frames, FRAMES);
    assert_int_equal(gpu_spans, FRAMES * 6);
    assert_int_equal(draw_calls, FRAMES);
    assert_int_equal(counters, FRAMES * 4);
    assert_true(max_depth >= 5);
    assert_int_equal(assets, FRAMES * 3);
    for (int k = 0; k < 90; k++)
        assert_int_equal(asset_calls[k], FRAMES * 3 / 90);
    assert_int_equal(find(t, nt, "game_frame")->seen, FRAMES);
    assert_int_equal(find(t, nt, "render_frame")->seen, FRAMES);
    assert_int_equal(find(t, nt, "job_skinning")->seen, FRAMES * 3);
    assert_int_equal(find(t, nt, "job_visibility")->seen, FRAMES * 2);
    assert_int_equal(find(t, nt, "stream_asset")->seen, 6);
    assert_int_equal(find(t, nt, "load_level")->seen, 1);
    assert_int_equal(find(t, nt, "save_state")->seen, 1);
    /* every name of the table is in the file; no work scope ran shorter
     * than its nominal self time minus the jitter */
    for (size_t i = 0; i < nt; i++) {
        if (t[i].seen == 0)
            fail_msg("'%s' of game_sim --help is not in the capture",
                     t[i].name);
        if (t[i].wait || t[i].gpu)
            continue;
        double floor_ns = t[i].mean_us * 1000 * SCALE * 0.95 * 0.99 - 200;
        if ((double)t[i].min_self_ns < floor_ns)
            fail_msg("'%s': a self time of %lld ns, under the nominal floor "
                     "%.0f ns",
                     t[i].name, (long long)t[i].min_self_ns, floor_ns);
    }
}

/* --truth-report: one spin per work scope the capture holds, the late ones
 * by scope, and a scope's spins no longer than its self times. */
static void test_game_sim_truth_report(void **state)
{
    (void)state;
    char path[96], out[96];
    tmp_path(path, sizeof path, "report_cap");
    tmp_path(out, sizeof out, "report_out");
    const char *args[] = {path,       "--frames",  "40", "--scale",
                          "0.25",     "--workers", "2",  "--seed",
                          "11",       "--fps-cap", "300", "--runtime-names",
                          "--truth-report", NULL};
    assert_int_equal(run(out, args), 0);

    /* work scopes of the capture: how many, and self time by name */
    enum { MAXN = 256 };
    static char names[MAXN][64];
    static size_t count[MAXN];
    static double self_ms[MAXN];
    size_t nn = 0, work = 0;
    cap_reader *r;
    char detail[256];
    assert_int_equal(cap_reader_open(&r, path, detail, sizeof detail), CAP_OK);
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) == CAP_OK) {
        if (ev.kind != CAP_EV_SCOPE ||
            (cap_reader_name_flags(r, ev.u.scope.name) & CAP_NAME_WAIT))
            continue;
        const char *n = cap_reader_name(r, ev.u.scope.name);
        assert_non_null(n);
        size_t i = 0;
        while (i < nn && strcmp(names[i], n) != 0)
            i++;
        if (i == nn) {
            assert_true(nn < MAXN);
            snprintf(names[nn++], sizeof names[0], "%s", n);
        }
        count[i]++;
        self_ms[i] += (double)(ev.u.scope.end_ns - ev.u.scope.begin_ns -
                               ev.u.scope.children_ns) / 1e6;
        work++;
    }
    assert_int_equal(res, CAP_DONE);
    cap_reader_close(r);
    unlink(path);

    FILE *f = fopen(out, "r");
    assert_non_null(f);
    char line[256];
    unsigned long long late = 0, spins = 0, sum_late = 0;
    double late_ms = 0, spun_ms = 0, pct = 0, sum_late_ms = 0;
    int us = 0, lines = 0;
    assert_non_null(fgets(line, sizeof line, f));
    assert_int_equal(sscanf(line,
                            "game_sim: %llu of %llu spins ended over %d us late, "
                            "by %lf ms in all (%lf %% of the %lf ms spun)",
                            &late, &spins, &us, &late_ms, &pct, &spun_ms),
                     6);
    assert_int_equal(us, 20);
    /* every work scope is one spin, and its self time holds it */
    assert_int_equal(spins, work);
    assert_true(late <= spins);
    double all_self_ms = 0;
    for (size_t i = 0; i < nn; i++)
        all_self_ms += self_ms[i];
    assert_true(spun_ms > 0 && spun_ms + late_ms <= all_self_ms + 0.001 * work);
    while (fgets(line, sizeof line, f)) {
        char name[64];
        unsigned long long l, n;
        double lms, sms;
        assert_int_equal(sscanf(line, "late %63s %llu %llu %lf %lf", name, &l,
                                &n, &lms, &sms),
                         5);
        lines++;
        assert_true(l >= 1 && l <= n);
        assert_true(lms >= l * 0.020);
        sum_late += l;
        sum_late_ms += lms;
        if (strcmp(name, "asset_<name>") == 0)
            continue; /* the runtime-named scopes, asset_NN_kind, as one */
        size_t i = 0;
        while (i < nn && strcmp(names[i], name) != 0)
            i++;
        if (i == nn)
            fail_msg("late scope '%s' is not a work scope of the capture",
                     name);
        assert_int_equal(n, count[i]);
        /* a scope's self time holds its spin and its lateness */
        if (sms + lms > self_ms[i] + 0.001 * (double)n)
            fail_msg("'%s': %.3f ms spun and %.3f ms late, %.3f ms of self time",
                     name, sms, lms, self_ms[i]);
    }
    fclose(f);
    unlink(out);
    assert_int_equal(sum_late, late);
    assert_true(sum_late_ms > late_ms - 0.001 * lines - 1e-9 &&
                sum_late_ms < late_ms + 0.001 * lines + 1e-9);
}

static void test_game_sim_bad_options(void **state)
{
    (void)state;
    const char *none[] = {NULL};
    assert_int_equal(run(NULL, none), 2);
    const char *slow[] = {"/tmp/x.cap", "--slow", "no_such_scope:10", NULL};
    assert_int_equal(run(NULL, slow), 2);
    const char *both[] = {"/tmp/x.cap", "--seconds", "1", "--frames", "5",
                          NULL};
    assert_int_equal(run(NULL, both), 2);
    const char *workers[] = {"/tmp/x.cap", "--workers", "0", NULL};
    assert_int_equal(run(NULL, workers), 2);
    const char *fmt[] = {"/tmp/x.cap", "--format-major", "5", NULL};
    assert_int_equal(run(NULL, fmt), 2);
    const char *unwritable[] = {"/nonexistent-dir/x.cap", "--frames", "1",
                                NULL};
    assert_int_equal(run(NULL, unwritable), 1);
}

/* --format-major 4: the capture is 4.0 (groups of blocks) and reads
 * whole: every frame asked for. */
static void test_game_sim_format_major(void **state)
{
    (void)state;
    char path[96];
    tmp_path(path, sizeof path, "format4_cap");
    const char *args[] = {path, "--frames", "30", "--scale", "0.25",
                          "--workers", "2", "--format-major", "4", NULL};
    assert_int_equal(run(NULL, args), 0);
    cap_reader *r;
    char detail[256];
    assert_int_equal(cap_reader_open(&r, path, detail, sizeof detail), CAP_OK);
    unsigned major = 0, minor = 9;
    cap_reader_version(r, &major, &minor);
    assert_int_equal(major, 4);
    assert_int_equal(minor, 0);
    cap_event ev;
    cap_result res;
    size_t frames = 0;
    while ((res = cap_reader_next(r, &ev)) == CAP_OK)
        frames += ev.kind == CAP_EV_FRAME;
    assert_int_equal(res, CAP_DONE);
    assert_int_equal(frames, 30);
    cap_reader_close(r);
    remove(path);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_game_sim PATH/TO/game_sim\n");
        return 2;
    }
    game_sim = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_game_sim_records_its_truth),
        cmocka_unit_test(test_game_sim_truth_report),
        cmocka_unit_test(test_game_sim_bad_options),
        cmocka_unit_test(test_game_sim_format_major),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
