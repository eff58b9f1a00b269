/*
 * test_names - runtime names are never merged: one CAP_SCOPE call site fed
 * 90 different strings records 90 names; a buffer whose contents change
 * under the same pointer records each content; scopes opened by id
 * (CAP_SCOPE_ID, CAP_BEGIN_ID, cap_scope_begin) carry their names; an
 * invalid id keeps nesting intact under a loud name; four threads sharing
 * one call site each record their own names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"
#include "names_readback.h"

#define ASSETS 90

static char path[64];
static nr_file file;

static void open_capture(void)
{
    snprintf(path, sizeof path, "/tmp/cap_test_names_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(cap_open(path, NULL), CAP_OK);
    CAP_THREAD("main");
}

static void close_and_read_allowing_open(void)
{
    assert_int_equal(cap_close(), CAP_OK);
    assert_int_equal(nr_read(&file, path), 0);
    unlink(path);
    assert_int_equal(file.stats.unnamed_ids, 0);
}

static void close_and_read(void)
{
    close_and_read_allowing_open();
    assert_int_equal(file.stats.closed_at_end, 0);
}

static void asset_name(char *buf, size_t n, int i)
{
    static const char *kinds[] = {"rock", "tree", "crate"};
    snprintf(buf, n, "asset_%02d_%s", i, kinds[i % 3]);
}

/* one call site for every name */
static void load(const char *name)
{
    CAP_SCOPE(name);
}

static void test_one_site_many_strings(void **state)
{
    (void)state;
    static char names[ASSETS][32];
    for (int i = 0; i < ASSETS; i++)
        asset_name(names[i], sizeof names[i], i);
    open_capture();
    for (int pass = 0; pass < 3; pass++) {
        CAP_SCOPE("pass");
        for (int i = 0; i < ASSETS; i++)
            load(names[i]);
    }
    close_and_read();
    assert_int_equal(nr_count(&file, "pass"), 3);
    for (int i = 0; i < ASSETS; i++) {
        nr_name *n = nr_find(&file, names[i]);
        if (!n)
            fail_msg("'%s' was not recorded under its own name", names[i]);
        assert_int_equal(n->count, 3);
        assert_string_equal(n->parent, "pass");
    }
    assert_int_equal(file.scopes, 3 + 3 * ASSETS);
}

/* The same buffer, new contents each time: each content is recorded. */
static void test_same_pointer_new_contents(void **state)
{
    (void)state;
    char buf[32];
    open_capture();
    for (int i = 0; i < 50; i++) {
        snprintf(buf, sizeof buf, "level_%d", i % 5);
        CAP_SCOPE(buf);
        CAP_BEGIN(buf); /* explicit pairs take the same path */
        CAP_END();
        CAP_COUNTER(buf, i);
    }
    close_and_read();
    for (int k = 0; k < 5; k++) {
        snprintf(buf, sizeof buf, "level_%d", k);
        assert_int_equal(nr_count(&file, buf), 20);
    }
    assert_int_equal(file.scopes, 100);
}

static void test_scopes_by_id(void **state)
{
    (void)state;
    char name[32];
    uint32_t ids[ASSETS];
    for (int i = 0; i < ASSETS; i++) {
        asset_name(name, sizeof name, i);
        ids[i] = cap_name_register(name, __FILE__, __LINE__);
        assert_true(ids[i] != 0);
    }
    /* the same text always gives the same id */
    asset_name(name, sizeof name, 7);
    assert_int_equal(cap_name_register(name, NULL, 0), ids[7]);
    open_capture();
    for (int i = 0; i < ASSETS; i++) {
        CAP_SCOPE_ID(ids[i]);
        CAP_BEGIN_ID(ids[(i + 1) % ASSETS]);
        cap_scope_begin(ids[(i + 2) % ASSETS]);
        cap_scope_end();
        CAP_END();
    }
    close_and_read();
    for (int i = 0; i < ASSETS; i++) {
        asset_name(name, sizeof name, i);
        assert_int_equal(nr_count(&file, name), 3);
    }
    asset_name(name, sizeof name, 0);
    assert_string_equal(nr_find(&file, name)->parent, "");
    asset_name(name, sizeof name, 1);
    assert_string_equal(nr_find(&file, name)->parent, "asset_00_rock");
    assert_int_equal(file.scopes, 3 * ASSETS);
}

/* An id nobody registered: recorded under a loud name, nesting intact. */
static void test_invalid_id(void **state)
{
    (void)state;
    open_capture();
    {
        CAP_SCOPE("outer");
        {
            CAP_SCOPE_ID(0);
            CAP_SCOPE("inner");
        }
        CAP_BEGIN_ID(CAP_MAX_NAME_ID + 5);
        CAP_END();
        CAP_SCOPE("after");
    }
    close_and_read();
    assert_int_equal(nr_count(&file, "<invalid scope id>"), 2);
    assert_string_equal(nr_find(&file, "<invalid scope id>")->parent, "outer");
    assert_string_equal(nr_find(&file, "inner")->parent, "<invalid scope id>");
    assert_string_equal(nr_find(&file, "after")->parent, "outer");
    assert_int_equal(nr_count(&file, "outer"), 1);
}

/* Four threads share the call site in load(), each with its own names. */
typedef struct targ {
    int index;
    char names[ASSETS][32];
} targ;

static void *thread_main(void *arg)
{
    targ *a = arg;
    char tname[16];
    snprintf(tname, sizeof tname, "t%d", a->index);
    CAP_THREAD(tname);
    for (int pass = 0; pass < 20; pass++)
        for (int i = 0; i < ASSETS; i++)
            load(a->names[i]);
    cap_thread_unregister();
    return NULL;
}

static void test_threads_share_a_site(void **state)
{
    (void)state;
    static targ args[4];
    open_capture();
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        args[t].index = t;
        for (int i = 0; i < ASSETS; i++)
            snprintf(args[t].names[i], sizeof args[t].names[i], "t%d_asset_%d",
                     t, i);
        assert_int_equal(pthread_create(&th[t], NULL, thread_main, &args[t]),
                         0);
    }
    for (int t = 0; t < 4; t++)
        pthread_join(th[t], NULL);
    close_and_read();
    for (int t = 0; t < 4; t++)
        for (int i = 0; i < ASSETS; i++)
            assert_int_equal(nr_count(&file, args[t].names[i]), 20);
    assert_int_equal(file.scopes, 4 * 20 * ASSETS);
}

static void spin_ms(int ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) <
           ms * 1000000L);
}

/* Waits carry CAP_NAME_WAIT into the file, by every way of naming them;
 * a name tagged after it was first written gets the flag too. */
static void test_wait_flags(void **state)
{
    (void)state;
    char runtime[32];
    snprintf(runtime, sizeof runtime, "wait_%s", "runtime");
    open_capture();
    {
        CAP_SCOPE("late_wait"); /* plain first */
    }
    for (int i = 0; i < 3; i++) {
        CAP_SCOPE("work");
        {
            CAP_WAIT_SCOPE("wait_literal");
        }
        {
            CAP_WAIT_SCOPE(runtime);
        }
        CAP_WAIT_BEGIN("wait_pair");
        CAP_END();
        uint32_t id = cap_name_register_flags("wait_by_id", NULL, 0,
                                              CAP_NAME_WAIT | 0x80000000u);
        CAP_SCOPE_ID(id);
    }
    spin_ms(250); /* the writer has written "late_wait" without a flag */
    assert_int_equal(cap_name_register_flags("late_wait", NULL, 0,
                                             CAP_NAME_WAIT),
                     cap_name_register("late_wait", NULL, 0));
    {
        CAP_SCOPE("late_wait");
    }
    close_and_read();
    assert_int_equal(file.major, 4); /* 4.0, the default, holds every
                                        addition of 1.1 */
    assert_int_equal(file.minor, 0);
    const char *waits[] = {"wait_literal", "wait_runtime", "wait_pair",
                           "wait_by_id", "late_wait"};
    for (int i = 0; i < 5; i++) {
        nr_name *n = nr_find(&file, waits[i]);
        assert_non_null(n);
        if (n->flags != CAP_NAME_WAIT)
            fail_msg("'%s' has flags %#x, expected CAP_NAME_WAIT", waits[i],
                     n->flags);
    }
    assert_int_equal(nr_count(&file, "late_wait"), 2);
    assert_int_equal(nr_find(&file, "work")->flags, 0);
    assert_int_equal(nr_count(&file, "wait_by_id"), 3);
}

/* A scope open at cap_close ends at the close, counted, not at 0 ms. */
static void test_open_at_close(void **state)
{
    (void)state;
    open_capture();
    CAP_BEGIN("left_open");
    {
        CAP_SCOPE("inner_done");
        spin_ms(5);
    }
    spin_ms(30);
    CAP_BEGIN("also_open");
    spin_ms(10);
    close_and_read_allowing_open();
    assert_int_equal(file.stats.closed_at_end, 2);
    assert_int_equal(nr_count(&file, "left_open"), 1);
    assert_int_equal(nr_count(&file, "also_open"), 1);
    assert_true(nr_find(&file, "left_open")->max_ns >= 45000000);
    assert_true(nr_find(&file, "also_open")->max_ns >= 10000000);
    assert_string_equal(nr_find(&file, "also_open")->parent, "left_open");
    assert_string_equal(nr_find(&file, "inner_done")->parent, "left_open");
    /* the thread's state outlives the capture; leave it clean */
    cap_thread_unregister();
}

/* A fixed recording window that ends inside a scope ends the scope with
 * the window, counted. */
static void test_open_at_window_end(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "/tmp/cap_test_names_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    cap_capture_options o = {.record_seconds = 0.05, .flush_interval_ms = 10};
    assert_int_equal(cap_open(path, &o), CAP_OK);
    CAP_THREAD("main");
    CAP_BEGIN("outlives_window");
    spin_ms(150);
    CAP_END();
    cap_close(); /* the window closed the file already */
    assert_int_equal(nr_read(&file, path), 0);
    unlink(path);
    assert_int_equal(file.stats.closed_at_end, 1);
    int64_t d = nr_find(&file, "outlives_window")->max_ns;
    assert_true(d >= 1000000 && d <= 51000000); /* not 0, not 150 ms */
    cap_thread_unregister();
}

/* Ends with nothing open are counted into the file, nesting unharmed. */
static void test_stray_ends(void **state)
{
    (void)state;
    open_capture();
    CAP_END();
    {
        CAP_SCOPE("a");
        CAP_SCOPE("b");
    }
    CAP_END();
    cap_scope_end();
    {
        CAP_SCOPE("c");
    }
    close_and_read();
    assert_int_equal(file.stats.stray_ends, 3);
    assert_int_equal(nr_count(&file, "a"), 1);
    assert_string_equal(nr_find(&file, "b")->parent, "a");
    assert_string_equal(nr_find(&file, "c")->parent, "");
    assert_int_equal(file.scopes, 3);
}

/* The committed 1.1 fixture reads back with its flags and counts; a 1.0
 * fixture reads as before, without flags. */
static void test_fixtures(void **state)
{
    (void)state;
    const char *dir = getenv("CAP_FIXTURES");
    if (!dir)
        skip();
    char p[512];
    snprintf(p, sizeof p, "%s/waits-and-strays.cap", dir);
    assert_int_equal(nr_read(&file, p), 0);
    assert_int_equal(file.minor, 1);
    assert_int_equal(nr_find(&file, "wait_gpu")->flags, CAP_NAME_WAIT);
    assert_int_equal(nr_find(&file, "wait_vsync")->flags, CAP_NAME_WAIT);
    assert_int_equal(nr_find(&file, "simulate")->flags, 0);
    assert_int_equal(nr_find(&file, "frame")->flags, 0);
    assert_int_equal(file.stats.stray_ends, 3);
    assert_int_equal(file.stats.closed_at_end, 1);
    assert_int_equal(nr_find(&file, "stream")->max_ns, 45000000);
    snprintf(p, sizeof p, "%s/demo.cap", dir);
    assert_int_equal(nr_read(&file, p), 0);
    assert_int_equal(file.minor, 0);
    assert_true(file.n > 5);
    for (size_t i = 0; i < file.n; i++)
        assert_int_equal(file.names[i].flags, 0);
    assert_int_equal(file.stats.stray_ends, 0);
}

/* cap_writer_name_flags: only in a 1.1 writer, only for defined ids and
 * known bits; flags accumulate and reach the reader. */
static void test_writer_name_flags(void **state)
{
    (void)state;
    char p[64];
    snprintf(p, sizeof p, "/tmp/cap_test_names_w_XXXXXX");
    int fd = mkstemp(p);
    assert_true(fd >= 0);
    close(fd);
    cap_writer *w;
    cap_writer_options v10 = {.format_major = 1}; /* 1.0: no name flags */
    assert_int_equal(cap_writer_open_path(&w, p, &v10), CAP_OK);
    assert_int_equal(cap_writer_name(w, 1, "wait", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_name_flags(w, 1, CAP_NAME_WAIT), CAP_E_MISUSE);
    cap_writer_abandon(w);
    cap_writer_options o = {.format_major = 1, .format_minor = 1};
    assert_int_equal(cap_writer_open_path(&w, p, &o), CAP_OK);
    assert_int_equal(cap_writer_name(w, 1, "wait", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_name(w, 2, "work", NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_name_flags(w, 3, CAP_NAME_WAIT), CAP_E_MISUSE);
    assert_int_equal(cap_writer_name_flags(w, 1, 0x2), CAP_E_MISUSE);
    assert_int_equal(cap_writer_name_flags(w, 1, CAP_NAME_WAIT), CAP_OK);
    assert_int_equal(cap_writer_name_flags(w, 1, 0), CAP_OK); /* no clearing */
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 1, 100), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 200), CAP_OK);
    assert_int_equal(cap_writer_scope_begin(w, 0, 2, 300), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 400), CAP_OK);
    assert_int_equal(cap_writer_scope_end(w, 0, 500), CAP_E_MISUSE);
    assert_int_equal(cap_writer_close(w), CAP_OK);
    assert_int_equal(nr_read(&file, p), 0);
    unlink(p);
    assert_int_equal(file.minor, 1);
    assert_int_equal(nr_find(&file, "wait")->flags, CAP_NAME_WAIT);
    assert_int_equal(nr_find(&file, "work")->flags, 0);
    assert_int_equal(file.stats.stray_ends, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_site_many_strings),
        cmocka_unit_test(test_same_pointer_new_contents),
        cmocka_unit_test(test_scopes_by_id),
        cmocka_unit_test(test_invalid_id),
        cmocka_unit_test(test_threads_share_a_site),
        cmocka_unit_test(test_wait_flags),
        cmocka_unit_test(test_open_at_close),
        cmocka_unit_test(test_open_at_window_end),
        cmocka_unit_test(test_stray_ends),
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_writer_name_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
