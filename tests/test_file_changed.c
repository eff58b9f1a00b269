/*
 * test_file_changed - a capture cut short or rewritten between the load
 * and a second read of it (read_capture --frames past its budget reads
 * the file twice) is an error, CAP_E_CHANGED, never a report of the
 * other file's values; a file grown by a recording still being written
 * and an unchanged one read as before; another file renamed over the
 * path changes nothing (the model holds the file it opened).
 *
 *   test_file_changed FIXTURES_DIR
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "model.h"

#define TMP_DIR_NAME "file_changed"
#include "tmp_dir.h"

static const char *fixtures;

static void copy_file(const char *from, const char *to, long cut)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    long done = 0;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        if (cut >= 0 && done + (long)n > cut)
            n = (size_t)(cut - done);
        assert_int_equal(fwrite(buf, 1, n, out), n);
        done += (long)n;
        if (cut >= 0 && done >= cut)
            break;
    }
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

static void count_visit(void *ctx, size_t row, size_t frame, int64_t v)
{
    (void)row;
    (void)frame;
    (void)v;
    ++*(size_t *)ctx;
}

enum change { SAME, REPLACED_SHORTER, CUT_IN_PLACE, REWRITTEN, GROWN };

/* Load a copy of the fixture summarised (budget 1, the --frames way),
 * change it as `how` says, then read it again. */
static cap_result load_change_walk(enum change how, size_t *values)
{
    char src[512], path[512], other[512];
    snprintf(src, sizeof src, "%s/game-sim-base.cap", fixtures);
    snprintf(path, sizeof path, "%s/c.cap", tmpdir);
    snprintf(other, sizeof other, "%s/other.cap", tmpdir);
    copy_file(src, path, -1);
    an_options o = {.series_budget = 1, .series_reread = 1, .no_tree = 1,
                    .threads = 1};
    an_capture *m;
    char detail[320];
    assert_int_equal(an_load(&m, path, &o, detail, sizeof detail), CAP_OK);
    long size = file_size(path);
    switch (how) {
    case SAME:
        break;
    case REPLACED_SHORTER: /* another file renamed over it */
        copy_file(src, other, size / 2);
        assert_int_equal(rename(other, path), 0);
        break;
    case CUT_IN_PLACE:
        assert_int_equal(truncate(path, size / 2), 0);
        break;
    case REWRITTEN: { /* the same size, other bytes, a later time */
        sleep(1); /* a later mtime even where it counts whole seconds */
        FILE *f = fopen(path, "r+b");
        assert_non_null(f);
        fseek(f, size / 2, SEEK_SET);
        fputc(0x55, f);
        assert_int_equal(fclose(f), 0);
        break;
    }
    case GROWN: { /* appended to, as a recording still being written */
        FILE *f = fopen(path, "ab");
        assert_non_null(f);
        fputs("more", f);
        assert_int_equal(fclose(f), 0);
        break;
    }
    }
    *values = 0;
    cap_result r = an_series_walk(m, count_visit, values);
    an_free(m);
    return r;
}

static void unchanged_file_reads_again(void **state)
{
    (void)state;
    size_t n;
    assert_int_equal(load_change_walk(SAME, &n), CAP_OK);
    assert_true(n > 1000);
}

static void replaced_file_reads_what_was_loaded(void **state)
{
    (void)state;
    size_t same, replaced;
    assert_int_equal(load_change_walk(SAME, &same), CAP_OK);
    assert_int_equal(load_change_walk(REPLACED_SHORTER, &replaced), CAP_OK);
    assert_true(same > 1000);
    assert_int_equal(replaced, same);
}

static void file_cut_short_is_an_error(void **state)
{
    (void)state;
    size_t n;
    assert_int_equal(load_change_walk(CUT_IN_PLACE, &n), CAP_E_CHANGED);
}

static void file_rewritten_in_place_is_an_error(void **state)
{
    (void)state;
    size_t n;
    assert_int_equal(load_change_walk(REWRITTEN, &n), CAP_E_CHANGED);
}

static void grown_file_reads_again(void **state)
{
    (void)state;
    size_t same, grown;
    assert_int_equal(load_change_walk(SAME, &same), CAP_OK);
    assert_int_equal(load_change_walk(GROWN, &grown), CAP_OK);
    assert_int_equal(grown, same);
}

/* an_load_fd on an unlinked copy: the model named as asked, the same as
 * an_load of the file, and a second read (the summarised walk) reads the
 * unlinked file through the model's descriptor after the caller closed
 * its own. */
static void unlinked_file_loads_by_descriptor(void **state)
{
    (void)state;
    char src[512], path[512];
    snprintf(src, sizeof src, "%s/game-sim-base.cap", fixtures);
    snprintf(path, sizeof path, "%s/u.cap", tmpdir);
    copy_file(src, path, -1);
    an_options o = {.series_budget = 1, .series_reread = 1, .no_tree = 1,
                    .threads = 1};
    an_capture *byname, *byfd;
    char detail[320];
    assert_int_equal(an_load(&byname, src, &o, detail, sizeof detail),
                     CAP_OK);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(an_load_fd(&byfd, fd, "the copy", &o, detail,
                                sizeof detail), CAP_OK);
    assert_int_equal(close(fd), 0);
    assert_string_equal(byfd->path, "the copy");
    assert_true(byfd->approx);
    assert_int_equal(byfd->nframes, byname->nframes);
    assert_int_equal(byfd->nscopes, byname->nscopes);
    assert_int_equal(byfd->cpu_events, byname->cpu_events);
    size_t a = 0, b = 0;
    assert_int_equal(an_series_walk(byname, count_visit, &a), CAP_OK);
    assert_int_equal(an_series_walk(byfd, count_visit, &b), CAP_OK);
    assert_true(a > 1000);
    assert_int_equal(b, a);
    an_free(byfd);
    an_free(byname);
}

/* A pipe is refused with a line that says why (the analysis reads twice);
 * a bad call is CAP_E_MISUSE; a missing path CAP_E_IO. */
static void stream_descriptor_is_refused(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    an_capture *m = (an_capture *)1;
    char detail[320];
    assert_int_equal(an_load_fd(&m, p[0], "-", NULL, detail, sizeof detail),
                     CAP_E_IO);
    assert_null(m);
    assert_non_null(strstr(detail, "not a regular file"));
    close(p[0]);
    close(p[1]);
    assert_int_equal(an_load_fd(&m, -1, "x", NULL, detail, sizeof detail),
                     CAP_E_MISUSE);
    assert_int_equal(an_load_fd(&m, 0, NULL, NULL, detail, sizeof detail),
                     CAP_E_MISUSE);
    char path[512];
    snprintf(path, sizeof path, "%s/missing.cap", tmpdir);
    assert_int_equal(an_load(&m, path, NULL, detail, sizeof detail),
                     CAP_E_IO);
    assert_string_equal(detail, "cannot open: No such file or directory");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_file_changed FIXTURES_DIR\n");
        return 2;
    }
    fixtures = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unchanged_file_reads_again),
        cmocka_unit_test(replaced_file_reads_what_was_loaded),
        cmocka_unit_test(file_cut_short_is_an_error),
        cmocka_unit_test(file_rewritten_in_place_is_an_error),
        cmocka_unit_test(grown_file_reads_again),
        cmocka_unit_test(unlinked_file_loads_by_descriptor),
        cmocka_unit_test(stream_descriptor_is_refused),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
