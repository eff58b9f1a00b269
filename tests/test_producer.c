/*
 * test_producer - the live producer: macros and explicit pairs from several
 * threads, frames, counters and GPU frames come back from the file with
 * exact counts, names and nesting; the fixed window; misuse; the format
 * version asked for (cap_capture_options.format_major).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture/cap_reader.h"
#include "capture/capture.h"
#include "cap_sections.h"

static char path[64];

static void make_path(void)
{
    snprintf(path, sizeof path, "/tmp/cap_test_producer_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
}

typedef struct counts {
    size_t frames, scopes, counters, gpu, threads;
    size_t by_name[8]; /* scopes named job, inner, frame, update, render */
    size_t max_depth;
    int has_footer;
    uint64_t dropped;
} counts;

static counts read_back(void)
{
    counts c = {0};
    cap_reader *r;
    char d[256];
    assert_int_equal(cap_reader_open(&r, path, d, sizeof d), CAP_OK);
    cap_event ev;
    cap_result res;
    const char *names[] = {"job", "inner", "frame", "update", "render"};
    while ((res = cap_reader_next(r, &ev)) == CAP_OK) {
        switch (ev.kind) {
        case CAP_EV_FRAME: c.frames++; break;
        case CAP_EV_COUNTER: c.counters++; break;
        case CAP_EV_GPU_SPAN: c.gpu++; break;
        case CAP_EV_THREAD: c.threads++; break;
        case CAP_EV_SCOPE: {
            c.scopes++;
            const char *n = cap_reader_name(r, ev.u.scope.name);
            assert_non_null(n);
            for (int i = 0; i < 5; i++)
                if (strcmp(n, names[i]) == 0)
                    c.by_name[i]++;
            if (strcmp(n, "inner") == 0) {
                assert_int_equal(ev.u.scope.depth, 1);
                assert_string_equal(cap_reader_name(r, ev.u.scope.stack[0]),
                                    "job");
                assert_true(ev.u.scope.end_ns >= ev.u.scope.begin_ns);
            }
            if (ev.u.scope.depth > c.max_depth)
                c.max_depth = ev.u.scope.depth;
            break;
        }
        default: break;
        }
    }
    assert_int_equal(res, CAP_DONE);
    c.has_footer = cap_reader_get_stats(r)->has_footer;
    c.dropped = cap_reader_get_stats(r)->dropped_scopes;
    cap_reader_close(r);
    unlink(path);
    return c;
}

static int spin_sink; /* keeps the busy loop from being dropped */

static void spin(int n)
{
    int x = 0;
    for (int i = 0; i < n; i++)
        x += i;
    __atomic_store_n(&spin_sink, x, __ATOMIC_RELAXED); /* threads share it */
}

#define JOBS 2000

static void *worker(void *arg)
{
    (void)arg;
    CAP_THREAD("worker");
    for (int i = 0; i < JOBS; i++) {
        CAP_SCOPE("job");
        {
            CAP_SCOPE("inner");
            spin(10);
        }
    }
    cap_thread_unregister();
    return NULL;
}

static void threads_frames_and_counters_round_trip(void **state)
{
    (void)state;
    make_path();
    cap_capture_options o = {.buffer_events = 256, .buffers_per_thread = 64,
                             .flush_interval_ms = 5};
    assert_int_equal(cap_open(path, &o), CAP_OK);
    assert_int_equal(cap_open(path, &o), CAP_E_MISUSE); /* one at a time */
    CAP_THREAD("main");
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&t[i], NULL, worker, NULL), 0);
    for (int f = 0; f < 100; f++) {
        CAP_FRAME_MARK();
        CAP_SCOPE("frame");
        {
            CAP_SCOPE("update");
            spin(100);
        }
        CAP_BEGIN("render");
        spin(50);
        CAP_END();
        CAP_COUNTER("frame_index", f);
    }
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    cap_producer_stats ps;
    cap_get_stats(&ps);
    assert_int_equal(cap_status(), CAP_OK);
    assert_int_equal(cap_close(), CAP_OK);
    assert_int_equal(cap_close(), CAP_E_MISUSE);
    counts c = read_back();
    assert_true(c.has_footer);
    assert_int_equal(c.dropped, 0);
    assert_int_equal(c.frames, 100);
    assert_int_equal(c.counters, 100);
    assert_int_equal(c.by_name[0], 3 * JOBS);
    assert_int_equal(c.by_name[1], 3 * JOBS);
    assert_int_equal(c.by_name[2], 100);
    assert_int_equal(c.by_name[3], 100);
    assert_int_equal(c.by_name[4], 100);
    assert_int_equal(c.scopes, 6 * JOBS + 300);
    assert_int_equal(c.threads, 4);
}

static void gpu_frames_through_the_producer(void **state)
{
    (void)state;
    make_path();
    assert_int_equal(cap_open(path, NULL), CAP_OK);
    uint32_t track = cap_gpu_track("compute queue", 1.0);
    assert_int_equal(track, 0);
    assert_int_equal(cap_gpu_track("bad", -1.0), UINT32_MAX);
    uint32_t pass = cap_name_register("pass", NULL, 0);
    uint32_t sub = cap_name_register("sub", NULL, 0);
    assert_int_equal(cap_name_register("pass", NULL, 0), pass);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t mono = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    cap_gpu_calibrate(track, 1000000, mono, 5);
    for (int f = 0; f < 10; f++) {
        cap_frame_mark();
        assert_int_equal(cap_frame_current(), (uint64_t)f);
        cap_gpu_span s[3] = {{pass, -1, 1000000 + 1000 * (uint64_t)f, 1000000 + 1000 * (uint64_t)f + 500, 1},
                             {sub, 0, 1000000 + 1000 * (uint64_t)f + 100, 1000000 + 1000 * (uint64_t)f + 200, 1},
                             {sub, 0, 50, 40, 1}}; /* invalid: dropped */
        cap_gpu_frame(track, (uint64_t)f, s, 3);
    }
    assert_int_equal(cap_close(), CAP_OK);
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
    cap_event ev;
    size_t spans = 0;
    while (cap_reader_next(r, &ev) == CAP_OK)
        if (ev.kind == CAP_EV_GPU_SPAN) {
            spans++;
            assert_true(ev.u.gpu_span.calibrated);
            if (ev.u.gpu_span.depth == 0) {
                assert_int_equal(ev.u.gpu_span.duration_ns, 500);
                assert_int_equal(ev.u.gpu_span.self_ns, 400);
            }
        }
    assert_int_equal(spans, 20);
    assert_int_equal(cap_reader_get_stats(r)->gpu_invalid, 10);
    cap_reader_close(r);
    unlink(path);
}

static void fixed_window_from_the_environment_closes_the_file_itself(void **state)
{
    (void)state;
    make_path();
    setenv("CAP_SKIP_SECONDS", "0.05", 1);
    setenv("CAP_RECORD_SECONDS", "0.1", 1);
    cap_capture_options o = {.flush_interval_ms = 10};
    assert_int_equal(cap_open(path, &o), CAP_OK);
    unsetenv("CAP_SKIP_SECONDS");
    unsetenv("CAP_RECORD_SECONDS");
    CAP_THREAD("main");
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t frames = 0;
    do {
        CAP_FRAME_MARK();
        CAP_SCOPE("frame");
        struct timespec ms = {0, 2000000};
        nanosleep(&ms, NULL);
        frames++;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec) <
             400000000L);
    assert_int_equal(cap_close(), CAP_OK);
    counts c = read_back();
    assert_true(c.has_footer);
    /* about 0.1 s of ~2 ms frames out of ~0.4 s: well under half */
    assert_true(c.frames > 10);
    assert_true(c.frames < frames / 2);
}

static void open_fd_writes_where_the_descriptor_points(void **state)
{
    (void)state;
    make_path();
    int fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(cap_open_fd(fd, NULL), CAP_OK);
    CAP_THREAD("main");
    for (int i = 0; i < 5; i++) {
        CAP_FRAME_MARK();
        CAP_SCOPE("frame");
    }
    assert_int_equal(cap_close(), CAP_OK);
    assert_int_equal(close(fd), 0); /* still ours to close */
    counts c = read_back();
    assert_int_equal(c.frames, 5);
    assert_int_equal(c.by_name[2], 5);
}

static void recording_without_a_capture_is_harmless(void **state)
{
    (void)state;
    CAP_SCOPE("nothing open");
    CAP_BEGIN("x");
    CAP_END();
    CAP_FRAME_MARK();
    CAP_COUNTER("c", 1);
    assert_int_equal(cap_status(), CAP_E_MISUSE);
    assert_int_equal(cap_thread_register("t"), CAP_E_MISUSE);
    assert_int_equal(cap_frame_current(), UINT64_MAX);
    assert_int_equal(cap_open("/nonexistent-dir/x.cap", NULL), CAP_E_IO);
}

static void log_sink(void *user, const char *line)
{
    snprintf(user, 256, "%s", line);
}

static void a_full_disk_stops_recording_and_is_reported(void **state)
{
    (void)state;
    char logged[256] = "";
    cap_set_log(log_sink, logged);
    /* /dev/full accepts the open, then every write fails with ENOSPC */
    cap_result r = cap_open("/dev/full", NULL);
    if (r == CAP_OK) {
        CAP_THREAD("main");
        for (int i = 0; i < 1000; i++) {
            CAP_SCOPE("x");
        }
        assert_int_not_equal(cap_close(), CAP_OK);
    } else {
        assert_int_equal(r, CAP_E_IO);
    }
    assert_non_null(strstr(logged, "No space left on device"));
    cap_set_log(NULL, NULL);
}

/* ---- cap_capture_options.format_major --------------------------------- */

/* Record the same single-threaded program (its structure fixed, its times
 * not) in format `major`; *out gets what the file holds apart from times:
 * each scope's name, flags, depth and ancestors in the reader's order,
 * then each counter's name and value in theirs (apart: where the writer
 * thread cuts its blocks, which moves with timing, decides how scopes and
 * counters interleave, not what each holds); *vmaj / *vmin the file's
 * version. */
static void record_in_format(unsigned major, char **out, unsigned *vmaj,
                             unsigned *vmin)
{
    make_path();
    cap_capture_options o = {.buffer_events = 256, .flush_interval_ms = 5,
                             .format_major = major};
    assert_int_equal(cap_open(path, &o), CAP_OK);
    CAP_THREAD("main");
    uint32_t wait = cap_name_register_flags("wait", NULL, 0, CAP_NAME_WAIT);
    uint32_t asset = cap_name_register("asset/rock.mesh", NULL, 0);
    for (int f = 0; f < 200; f++) {
        CAP_FRAME_MARK();
        CAP_SCOPE("frame");
        {
            CAP_SCOPE("update");
            for (int j = 0; j < f % 7; j++) {
                CAP_SCOPE("job");
                {
                    CAP_SCOPE("inner");
                    spin(10 * (f % 13));
                }
            }
        }
        cap_scope_begin(f % 3 ? wait : asset);
        spin(f % 5 ? 20 : 2000);
        cap_scope_end();
        CAP_COUNTER("frame_index", f * 0.5);
    }
    assert_int_equal(cap_close(), CAP_OK);

    size_t cap[2] = {1 << 16, 1 << 12}, n[2] = {0, 0};
    char *s[2] = {malloc(cap[0]), malloc(cap[1])};
    assert_non_null(s[0]);
    assert_non_null(s[1]);
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
    cap_reader_version(r, vmaj, vmin);
    cap_event ev;
    cap_result res;
    size_t scopes = 0;
    while ((res = cap_reader_next(r, &ev)) == CAP_OK) {
        char line[256];
        int k = 0, which = ev.kind == CAP_EV_COUNTER;
        if (ev.kind == CAP_EV_SCOPE) {
            const cap_ev_scope *sc = &ev.u.scope;
            assert_true(sc->end_ns >= sc->begin_ns);
            assert_true(sc->children_ns <= sc->end_ns - sc->begin_ns);
            k = snprintf(line, sizeof line, "%s/%u/%u:",
                         cap_reader_name(r, sc->name),
                         cap_reader_name_flags(r, sc->name), sc->depth);
            for (uint32_t d = 0; d < sc->depth && k < 200; d++)
                k += snprintf(line + k, sizeof line - (size_t)k, "<%s",
                              cap_reader_name(r, sc->stack[d]));
            k += snprintf(line + k, sizeof line - (size_t)k, "\n");
            scopes++;
        } else if (ev.kind == CAP_EV_COUNTER) {
            k = snprintf(line, sizeof line, "%s=%g\n",
                         cap_reader_name(r, ev.u.counter.name),
                         ev.u.counter.value);
        }
        assert_true(k >= 0 && (size_t)k < sizeof line);
        if (n[which] + (size_t)k + 1 > cap[which]) {
            cap[which] *= 2;
            s[which] = realloc(s[which], cap[which]);
            assert_non_null(s[which]);
        }
        memcpy(s[which] + n[which], line, (size_t)k);
        n[which] += (size_t)k;
    }
    s[0] = realloc(s[0], n[0] + n[1] + 1);
    assert_non_null(s[0]);
    memcpy(s[0] + n[0], s[1], n[1]);
    s[0][n[0] + n[1]] = '\0';
    free(s[1]);
    assert_int_equal(res, CAP_DONE);
    assert_true(cap_reader_get_stats(r)->has_footer);
    assert_int_equal(cap_reader_get_stats(r)->dropped_scopes, 0);
    /* frame, update and wait (or asset) each frame; f % 7 jobs, each
     * with its inner */
    assert_int_equal(scopes, 200 * 3 + 2 * (28 * (0 + 1 + 2 + 3 + 4 + 5 + 6) +
                                            (0 + 1 + 2 + 3)));
    cap_reader_close(r);
    unlink(path);
    *out = s[0];
}

static void format_major_writes_the_version_asked_with_the_same_scopes(
    void **state)
{
    (void)state;
    char *def, *s;
    unsigned maj, min;
    record_in_format(0, &def, &maj, &min);
    assert_int_equal(maj, 4); /* the default: 4.0 (groups of blocks) */
    assert_int_equal(min, 0);
    assert_non_null(strstr(def, "wait/1/1:<frame\n")); /* the flag */
    assert_non_null(strstr(def, "inner/0/3:<frame<update<job\n"));
    assert_non_null(strstr(def, "frame_index=99.5\n"));
    static const unsigned want[][3] = {
        {3, 3, 1}, {1, 1, 1}, {2, 2, 0}, {4, 4, 0}};
    for (size_t i = 0; i < 4; i++) {
        record_in_format(want[i][0], &s, &maj, &min);
        assert_int_equal(maj, want[i][1]);
        assert_int_equal(min, want[i][2]);
        assert_string_equal(s, def);
        free(s);
    }
    free(def);
    make_path();
    cap_capture_options bad = {.format_major = 5};
    assert_int_equal(cap_open(path, &bad), CAP_E_MISUSE);
    assert_int_equal(cap_status(), CAP_E_MISUSE); /* nothing open */
    unlink(path);
}

/* Scopes whose durations vary for each name (the writer codes them, not
 * plain SCOPES): n pairs, `work` scaling the busy loop. */
static void varied_scopes(const uint32_t *ids, uint64_t from, uint64_t n,
                          int work)
{
    for (uint64_t i = from; i < from + n; i++) {
        uint32_t h = (uint32_t)(i * 2654435761u); /* every gap varies */
        cap_scope_begin(ids[i % 40]);
        spin(work * (int)(h >> 27));
        cap_scope_begin(ids[(i * 7 + 3) % 40]);
        spin(work * (int)(h >> 21 & 63));
        cap_scope_end();
        spin(work * (int)(h >> 16 & 31));
        cap_scope_end();
        spin(work * (int)(h >> 11 & 31));
    }
}

/* The writer thread keeping up (a few hundred scopes every 5 ms, blocks
 * every 20 ms) codes 3.x's and 4.0's scopes as SCOPES_E; behind its recording
 * thread (scopes recorded flat out for 300 ms into a small pool, so that
 * coding a block lets a quarter of it fill), as 2.0's SCOPES_R, the
 * cheaper way.
 * Every scope recorded is read back or counted as dropped, and
 * cap_get_stats counts the file's blocks. */
static void a_writer_behind_codes_scopes_the_cheaper_way(void **state)
{
    (void)state;
    make_path();
    cap_capture_options o = {.buffer_events = 1024,
                             .buffers_per_thread = 8,
                             .flush_interval_ms = 20};
    assert_int_equal(cap_open(path, &o), CAP_OK);
    CAP_THREAD("main");
    uint32_t ids[40];
    for (int i = 0; i < 40; i++) {
        char n[16];
        snprintf(n, sizeof n, "work_%d", i);
        ids[i] = cap_name_register(n, NULL, 0);
    }
    const uint64_t slow = 20, each = 200; /* less than a buffer */
    for (uint64_t i = 0; i < slow; i++) {
        varied_scopes(ids, i * each, each, 4);
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    /* flat out for 300 ms: blocks written meanwhile (one every 20 ms) */
    uint64_t fast = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        varied_scopes(ids, fast, 10000, 1);
        fast += 10000;
        clock_gettime(CLOCK_MONOTONIC, &t1);
    } while ((t1.tv_sec - t0.tv_sec) * 1000000000L +
                 (t1.tv_nsec - t0.tv_nsec) < 300000000L);
    assert_int_equal(cap_close(), CAP_OK);
    cap_producer_stats st;
    cap_get_stats(&st);
    unsigned k[256];
    unsigned blocks = count_kinds(path, k);
    assert_true(k[0x0E] >= 1); /* SCOPES_E: keeping up */
    assert_true(k[0x0D] >= 1); /* SCOPES_R: behind */
    assert_int_equal(st.blocks, blocks);
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
    unsigned vmaj, vmin;
    cap_reader_version(r, &vmaj, &vmin);
    assert_int_equal(vmaj, 4); /* the default: SCOPES_R inside 4.0 groups */
    cap_event ev;
    uint64_t scopes = 0;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) == CAP_OK)
        scopes += ev.kind == CAP_EV_SCOPE;
    assert_int_equal(res, CAP_DONE);
    assert_int_equal(scopes + cap_reader_get_stats(r)->dropped_scopes,
                     2 * (slow * each + fast));
    assert_int_equal(st.dropped_scopes,
                     cap_reader_get_stats(r)->dropped_scopes);
    cap_reader_close(r);
    unlink(path);
}

/* A name carries where it was first registered into the capture's name
 * table: a CAP_SCOPE site's file and line, or the file and line
 * cap_name_register was given; one registered without them has none. The
 * writer's bulk path names them itself (its resolver), as the per-event
 * path does. */
static void names_carry_the_file_and_line_they_were_registered_at(
    void **state)
{
    (void)state;
    make_path();
    cap_capture_options o = {.buffer_events = 256, .flush_interval_ms = 5};
    assert_int_equal(cap_open(path, &o), CAP_OK);
    CAP_THREAD("main");
    uint32_t told = cap_name_register("fl/told", "engine/render.c", 42);
    uint32_t bare = cap_name_register("fl/bare", NULL, 0);
    assert_int_equal(cap_name_register("fl/told", "elsewhere.c", 7), told);
    uint32_t site_line = 0;
    for (int f = 0; f < 50; f++) {
        CAP_FRAME_MARK();
        site_line = __LINE__ + 2;
        {
            CAP_SCOPE("fl/site");
            spin(10);
        }
        cap_scope_begin(told);
        cap_scope_end();
        cap_scope_begin(bare);
        cap_scope_end();
    }
    assert_int_equal(cap_close(), CAP_OK);
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
    cap_event ev;
    size_t scopes = 0;
    while (cap_reader_next(r, &ev) == CAP_OK)
        scopes += ev.kind == CAP_EV_SCOPE;
    assert_int_equal(scopes, 150);
    assert_string_equal(cap_reader_name(r, told), "fl/told");
    assert_string_equal(cap_reader_name_file(r, told), "engine/render.c");
    assert_int_equal(cap_reader_name_line(r, told), 42);
    assert_string_equal(cap_reader_name(r, bare), "fl/bare");
    assert_null(cap_reader_name_file(r, bare));
    assert_int_equal(cap_reader_name_line(r, bare), 0);
    uint32_t site = 0;
    for (uint32_t id = 1; id <= cap_reader_max_name_id(r); id++)
        if (cap_reader_name(r, id) &&
            strcmp(cap_reader_name(r, id), "fl/site") == 0)
            site = id;
    assert_true(site != 0);
    assert_non_null(cap_reader_name_file(r, site));
    assert_non_null(strstr(cap_reader_name_file(r, site), "test_producer.c"));
    assert_int_equal(cap_reader_name_line(r, site), site_line);
    cap_reader_close(r);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_frames_and_counters_round_trip),
        cmocka_unit_test(gpu_frames_through_the_producer),
        cmocka_unit_test(fixed_window_from_the_environment_closes_the_file_itself),
        cmocka_unit_test(open_fd_writes_where_the_descriptor_points),
        cmocka_unit_test(recording_without_a_capture_is_harmless),
        cmocka_unit_test(a_full_disk_stops_recording_and_is_reported),
        cmocka_unit_test(
            format_major_writes_the_version_asked_with_the_same_scopes),
        cmocka_unit_test(a_writer_behind_codes_scopes_the_cheaper_way),
        cmocka_unit_test(names_carry_the_file_and_line_they_were_registered_at),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
