/*
 * test_fuzz_fixtures.c - inputs found by the fuzzers (fuzz/), kept as
 * fixtures in fixtures/fuzz/ and named after what they do.
 *
 * Each fixture has a case with its exact expected outcome. A last case runs
 * every file in fixtures/fuzz/ through the reader (and the Chrome importer
 * for .json, the folded and Chrome exporters for .cap) the way the fuzz
 * targets do, so a fixture added without its
 * own case is still checked for crashes under the sanitizer builds.
 * FUZZ_FIXTURES names the directory (set by meson).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <capture/cap_reader.h>

#include "capsum.h"
#include "cvt.h"

/* A converter's error that blames its input (cvt.h), not the output, the
 * system or memory. */
static int is_input_error(cap_result rc)
{
    return rc < 0 && rc != CAP_E_IO && rc != CAP_E_NOMEM;
}

static const char *fixture(const char *name)
{
    static char path[1024];
    const char *dir = getenv("FUZZ_FIXTURES");
    snprintf(path, sizeof path, "%s/%s", dir ? dir : "fixtures/fuzz", name);
    return path;
}

static void temp_path(char *buf, size_t n, const char *what)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, n, "%s/cap-fuzzfix-%s-%ld", dir && *dir ? dir : "/tmp",
             what, (long)getpid());
}

/* A chunk with zero payload bytes: the reader copied zero bytes from a
 * NULL buffer (undefined behaviour) before parsing the empty metadata. */
static void reader_empty_metadata_chunk_is_corrupt(void **state)
{
    (void)state;
    capsum s;
    assert_int_equal(capsum_read(&s, fixture("reader-empty-metadata-chunk.cap")),
                     -1);
    assert_int_equal(s.open_result, CAP_E_CORRUPT);
    assert_string_equal(s.open_detail, "metadata chunk is malformed");
    capsum_free(&s);
}

/* A GPU span whose duration (and begin) convert to INT64_MIN ns: end =
 * begin + duration overflowed (undefined behaviour); the reader now wraps.
 * The spec lets a reader report such a span as stored. */
static void reader_gpu_span_times_overflow_reads_as_stored(void **state)
{
    (void)state;
    capsum s;
    char d[512];
    assert_int_equal(
        capsum_read(&s, fixture("reader-gpu-span-times-overflow.cap")), 0);
    if (s.frames != 27 || s.corrupt != 1)
        print_error("%s\n", capsum_describe(&s, d, sizeof d));
    assert_int_equal(s.frames, 27);
    assert_int_equal(s.scopes, 295);
    assert_int_equal(s.stats.gpu_spans, 8);
    assert_int_equal(s.corrupt, 1);   /* a malformed section further on */
    assert_int_equal(s.truncated, 1); /* and no footer */
    assert_int_equal(s.final_error, CAP_DONE);
    capsum_free(&s);
}

/* fuzz_analysis (2026-12-02): a SCOPES section whose first scope is the
 * last one before a malformed event. A batch call took that scope as the
 * section's first and decoded on into the run, which stopped at the fault
 * with no scope: the error was dropped and the next call went on past the
 * bad token, into garbage (73 more events), while one event a call, or a
 * batch of one and then records (a two-thread load's reader thread),
 * stopped there: one thread and two made different reports. Every way of
 * reading must give that one scope, then the fault. */
static void reader_fault_after_first_scope_stops_every_way(void **state)
{
    (void)state;
    const char *path = fixture("reader-fault-after-first-scope.cap");
    for (int way = 0; way < 3; way++) {
        cap_reader *r;
        assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
        cap_event ev[256];
        cap_scope_rec rec[256];
        static uint32_t stk[65536];
        size_t scopes = 0, corrupt = 0, truncated = 0, calls = 0;
        uint32_t name = 0, depth = 99;
        cap_result res = CAP_OK;
        /* on past damage and the cut, as a tool reads, to the end */
        while (res != CAP_DONE && calls++ < 1000) {
            size_t n = 0;
            if (way == 2) {
                cap_scope_run run;
                assert_int_equal(cap_reader_next_scopes(r, rec, 256, &n, stk,
                                                        65536, &run),
                                 CAP_OK);
                scopes += n;
                if (n)
                    continue;
            }
            res = way == 0   ? cap_reader_next_batch(r, ev, 1, &n)
                  : way == 1 ? cap_reader_next_batch(r, ev, 256, &n)
                             : cap_reader_next_batch_into(r, ev, 1, &n, stk,
                                                          65536);
            corrupt += res == CAP_E_CORRUPT;
            truncated += res == CAP_E_TRUNCATED;
            for (size_t i = 0; res == CAP_OK && i < n; i++) {
                if (ev[i].kind != CAP_EV_SCOPE)
                    continue;
                scopes++;
                name = ev[i].u.scope.name;
                depth = ev[i].u.scope.depth;
            }
        }
        cap_reader_close(r);
        assert_int_equal(res, CAP_DONE);
        /* a damaged chunk header, then the malformed event */
        assert_int_equal(corrupt, 2);
        assert_int_equal(truncated, 1); /* no footer */
        assert_int_equal(scopes, 1);
        assert_int_equal(name, 14);
        assert_int_equal(depth, 0);
    }
}

/* A thread with no B/E or X event (here: only a sample): the importer
 * offset a NULL interval array by zero (undefined behaviour). */
static void chrome_thread_without_intervals_imports_as_an_empty_thread(
    void **state)
{
    (void)state;
    char out[256], diag_path[256];
    temp_path(out, sizeof out, "chrome.cap");
    temp_path(diag_path, sizeof diag_path, "chrome.diag");
    FILE *diag = fopen(diag_path, "w+");
    assert_non_null(diag);
    cvt_options o = {.diag = diag};
    const char *in = fixture("chrome-thread-without-intervals.json");
    assert_int_equal(cvt_chrome_to_cap(in, out, &o), CAP_OK);
    rewind(diag);
    char line[1200], want[1200];
    assert_non_null(fgets(line, sizeof line, diag));
    snprintf(want, sizeof want,
             "warning: %s: 1 event(s) of phase 'P' (sample) not imported\n",
             in);
    assert_string_equal(line, want);
    assert_null(fgets(line, sizeof line, diag)); /* one line only */
    fclose(diag);
    unlink(diag_path);

    capsum s;
    assert_int_equal(capsum_read(&s, out), 0);
    assert_true(s.stats.has_footer);
    assert_int_equal(s.scopes, 0);
    assert_int_equal(s.frames, 0);
    assert_string_equal(s.threads[0].name, "idle");
    capsum_free(&s);
    unlink(out);
}

/* Every fixture, whatever its case: the reader returns only documented
 * results, and the importer only its documented exit codes. */
static void every_fuzz_fixture_reads_without_crashing(void **state)
{
    (void)state;
    const char *dir = getenv("FUZZ_FIXTURES");
    DIR *d = opendir(dir ? dir : "fixtures/fuzz");
    assert_non_null(d);
    struct dirent *e;
    unsigned n = 0;
    char out[256];
    temp_path(out, sizeof out, "sweep.cap");
    FILE *null_diag = fopen("/dev/null", "w");
    assert_non_null(null_diag);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        const char *path = fixture(e->d_name);
        size_t len = strlen(e->d_name);
        capsum s;
        capsum_read(&s, path);
        if (s.open_result == CAP_OK)
            assert_true(s.final_error == CAP_DONE ||
                        s.final_error == CAP_E_LIMIT);
        else
            assert_true(s.open_result < 0 && s.open_result != CAP_E_MISUSE);
        capsum_free(&s);
        if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) {
            cvt_options o = {.diag = null_diag};
            int rc = cvt_chrome_to_cap(path, out, &o);
            assert_true(rc == CAP_OK || is_input_error(rc));
        }
        if (len > 4 && strcmp(e->d_name + len - 4, ".cap") == 0) {
            /* the exporters: self time from crafted times must not
             * overflow (folded_out subtracted them unguarded) */
            cvt_options o = {.diag = null_diag};
            int rc = cvt_cap_to_folded(path, "/dev/null", &o);
            assert_true(rc == CAP_OK || is_input_error(rc));
            rc = cvt_cap_to_chrome(path, "/dev/null", &o);
            assert_true(rc == CAP_OK || is_input_error(rc));
        }
        n++;
    }
    closedir(d);
    fclose(null_diag);
    unlink(out);
    printf("%u fuzz fixtures read\n", n);
    assert_true(n >= 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reader_empty_metadata_chunk_is_corrupt),
        cmocka_unit_test(reader_gpu_span_times_overflow_reads_as_stored),
        cmocka_unit_test(reader_fault_after_first_scope_stops_every_way),
        cmocka_unit_test(
            chrome_thread_without_intervals_imports_as_an_empty_thread),
        cmocka_unit_test(every_fuzz_fixture_reads_without_crashing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
