/*
 * test_keytab - the (kind, key text) -> index table capture_diff matches
 * scopes with (analysis/keytab.h): the first value put stays, the kind is
 * part of the key, a key compares by its text (not its address), a
 * missing key is -1, and every key stays found as the table grows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keytab.h"

static void an_empty_table_finds_nothing(void **state)
{
    (void)state;
    an_keytab t = AN_KEYTAB_INIT;
    assert_int_equal(an_keytab_find(&t, AN_CPU, "a"), -1);
    an_keytab_free(&t);
    an_keytab_free(NULL);
}

static void the_first_value_put_stays(void **state)
{
    (void)state;
    an_keytab t = AN_KEYTAB_INIT;
    assert_int_equal(an_keytab_put(&t, AN_CPU, "update", 3), 1);
    assert_int_equal(an_keytab_put(&t, AN_CPU, "update", 9), 0);
    assert_int_equal(an_keytab_find(&t, AN_CPU, "update"), 3);
    assert_int_equal(t.n, 1);
    an_keytab_free(&t);
    assert_int_equal(an_keytab_find(&t, AN_CPU, "update"), -1);
}

static void the_kind_is_part_of_the_key(void **state)
{
    (void)state;
    an_keytab t = AN_KEYTAB_INIT;
    assert_int_equal(an_keytab_put(&t, AN_CPU, "draw", 1), 1);
    assert_int_equal(an_keytab_put(&t, AN_GPU, "draw", 2), 1);
    assert_int_equal(an_keytab_find(&t, AN_CPU, "draw"), 1);
    assert_int_equal(an_keytab_find(&t, AN_GPU, "draw"), 2);
    assert_int_equal(an_keytab_find(&t, AN_CPU, "dra"), -1);
    assert_int_equal(an_keytab_find(&t, AN_CPU, "draw2"), -1);
    an_keytab_free(&t);
}

static void a_key_is_found_by_its_text(void **state)
{
    (void)state;
    an_keytab t = AN_KEYTAB_INIT;
    char a[16], b[16];
    snprintf(a, sizeof a, "frame/update");
    snprintf(b, sizeof b, "frame/update");
    assert_int_equal(an_keytab_put(&t, AN_CPU, a, 7), 1);
    assert_int_equal(an_keytab_find(&t, AN_CPU, b), 7);
    assert_int_equal(an_keytab_put(&t, AN_CPU, b, 8), 0);
    an_keytab_free(&t);
}

/* 100,000 keys, put then found again after every growth of the array
 * (at most half full); their neighbours in name are not there. */
static void every_key_stays_found_as_the_table_grows(void **state)
{
    (void)state;
    enum { N = 100000 };
    char(*name)[16] = malloc(N * sizeof *name);
    assert_non_null(name);
    an_keytab t = AN_KEYTAB_INIT;
    for (size_t i = 0; i < N; i++) {
        snprintf(name[i], sizeof name[i], "name_%zu", i);
        assert_int_equal(an_keytab_put(&t, (an_kind)(i & 1), name[i], i), 1);
    }
    assert_int_equal(t.n, N);
    assert_true(2 * t.n <= t.cap);
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(an_keytab_find(&t, (an_kind)(i & 1), name[i]),
                         (long)i);
        assert_int_equal(an_keytab_find(&t, (an_kind)!(i & 1), name[i]), -1);
    }
    assert_int_equal(an_keytab_find(&t, AN_CPU, "name_100000"), -1);
    an_keytab_free(&t);
    free(name);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_empty_table_finds_nothing),
        cmocka_unit_test(the_first_value_put_stays),
        cmocka_unit_test(the_kind_is_part_of_the_key),
        cmocka_unit_test(a_key_is_found_by_its_text),
        cmocka_unit_test(every_key_stays_found_as_the_table_grows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
