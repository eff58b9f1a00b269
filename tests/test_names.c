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

static void close_and_read(void)
{
    assert_int_equal(cap_close(), CAP_OK);
    assert_int_equal(nr_read(&file, path), 0);
    unlink(path);
    assert_int_equal(file.stats.unnamed_ids, 0);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_site_many_strings),
        cmocka_unit_test(test_same_pointer_new_contents),
        cmocka_unit_test(test_scopes_by_id),
        cmocka_unit_test(test_invalid_id),
        cmocka_unit_test(test_threads_share_a_site),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
