/*
 * test_driver.c - analysis/load/driver.h: chunks run on N threads and
 * merged in chunk order, with the example pass of docs/ANALYSIS.md
 * (calls and self time by scope name).
 *
 * On every fixture with several blocks, at one block a chunk: the pass's
 * result on 1, 2, 3 and 8 threads equals one whole read's, and the
 * merges come in chunk order, each once. A merge that stops the drive
 * stops it: its value is returned and the results not merged are
 * discarded (none leaks: ASan).
 */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "load/driver.h"

/* ---- the example pass of docs/ANALYSIS.md ------------------------------ */
enum { IDS = 4096 };
typedef struct by_name { /* a chunk's result, and the merged one */
    uint64_t calls[IDS];
    int64_t self_ns[IDS];
} by_name;

static void *by_name_chunk(void *ctx, size_t i, const cap_chunk *c, int fd)
{
    (void)ctx, (void)i;
    by_name *r = calloc(1, sizeof *r);
    cap_reader *rd;
    if (!r || cap_chunks_open(&rd, fd, c->begin, c->end, NULL, 0) != CAP_OK) {
        free(r);
        return NULL;
    }
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(rd, &ev)) != CAP_DONE)
        if (res == CAP_OK && ev.kind == CAP_EV_SCOPE &&
            ev.u.scope.name < IDS) {
            const cap_ev_scope *s = &ev.u.scope;
            r->calls[s->name]++;
            r->self_ns[s->name] +=
                cap_self_ns(s->begin_ns, s->end_ns, s->children_ns);
        }
    cap_reader_close(rd);
    return r;
}

static int by_name_merge(void *ctx, size_t i, void *p)
{
    (void)i;
    by_name *into = ctx, *from = p;
    for (size_t k = 0; k < IDS; k++) {
        into->calls[k] += from->calls[k];
        into->self_ns[k] += from->self_ns[k];
    }
    free(from);
    return 0;
}

static void by_name_discard(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}
/* ------------------------------------------------------------------------ */

static const char *fixtures_dir;

/* The same sums from one reader of the whole file. */
static void whole(const char *path, by_name *out)
{
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) != CAP_DONE)
        if (res == CAP_OK && ev.kind == CAP_EV_SCOPE && ev.u.scope.name < IDS) {
            out->calls[ev.u.scope.name]++;
            out->self_ns[ev.u.scope.name] +=
                cap_self_ns(ev.u.scope.begin_ns, ev.u.scope.end_ns,
                            ev.u.scope.children_ns);
        }
    cap_reader_close(r);
}

/* Merges in order: counts them, checks each index comes next. */
typedef struct order_ctx {
    by_name sums;
    size_t next, stop_at;
} order_ctx;

static int order_merge(void *ctx, size_t i, void *p)
{
    order_ctx *o = ctx;
    assert_int_equal(i, o->next);
    o->next++;
    by_name_merge(&o->sums, i, p);
    return i + 1 == o->stop_at ? 7 : 0;
}

static void check_file(const char *path, size_t *multi)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    cap_chunk_plan plan;
    assert_int_equal(cap_chunks_plan(fd, 0, &plan), CAP_OK);
    if (plan.n < 2) {
        cap_chunks_free(&plan);
        close(fd);
        return;
    }
    (*multi)++;
    by_name *w = calloc(1, sizeof *w);
    order_ctx *o = calloc(1, sizeof *o);
    assert_non_null(w);
    assert_non_null(o);
    whole(path, w);
    static const int threads[] = {1, 2, 3, 8};
    const an_driver_ops ops = {by_name_chunk, order_merge, by_name_discard};
    for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
        memset(o, 0, sizeof *o);
        o->stop_at = SIZE_MAX;
        assert_int_equal(an_drive(fd, &plan, threads[t], &ops, o), 0);
        assert_int_equal(o->next, plan.n);
        assert_memory_equal(o->sums.calls, w->calls, sizeof w->calls);
        assert_memory_equal(o->sums.self_ns, w->self_ns, sizeof w->self_ns);
        /* profiled: the same merges, and the drive's counts */
        memset(o, 0, sizeof *o);
        o->stop_at = SIZE_MAX;
        an_drive_prof prof;
        assert_int_equal(an_drive_profiled(fd, &plan, threads[t], &ops, o,
                                           &prof), 0);
        assert_memory_equal(o->sums.self_ns, w->self_ns, sizeof w->self_ns);
        assert_int_equal(prof.chunks, plan.n);
        assert_int_equal(prof.threads, (size_t)threads[t] < plan.n
                                           ? threads[t] : (int)plan.n);
        assert_true(prof.wall_s >= 0 && prof.busy_s >= 0 &&
                    prof.busy_cpu_s >= 0 && prof.merge_s >= 0 &&
                    prof.merge_cpu_s >= 0 && prof.wait_s >= 0 &&
                    prof.ahead_s >= 0);
        if (threads[t] == 1)
            assert_true(prof.wait_s == 0 && prof.ahead_s == 0);
        /* a merge stops the drive: its value, no merge after it */
        memset(o, 0, sizeof *o);
        o->stop_at = 1;
        assert_int_equal(an_drive(fd, &plan, threads[t], &ops, o), 7);
        assert_int_equal(o->next, 1);
    }
    free(w);
    free(o);
    cap_chunks_free(&plan);
    close(fd);
}

static void fixtures(void **state)
{
    (void)state;
    DIR *d = opendir(fixtures_dir);
    assert_non_null(d);
    struct dirent *e;
    size_t multi = 0;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".cap") != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", fixtures_dir, e->d_name);
        check_file(path, &multi);
    }
    closedir(d);
    assert_true(multi >= 5);
}

static void threads_from_env(void **state)
{
    (void)state;
    assert_int_equal(an_driver_threads(3), 3);
    setenv("CAP_READ_THREADS", "5", 1);
    assert_int_equal(an_driver_threads(0), 5);
    setenv("CAP_READ_THREADS", "zero", 1);
    assert_true(an_driver_threads(0) >= 1);
    setenv("CAP_READ_THREADS", "0", 1);
    assert_true(an_driver_threads(0) >= 1);
    unsetenv("CAP_READ_THREADS");
    assert_int_equal(an_drive(0, NULL, 1, NULL, NULL), -1);
}

int main(int argc, char **argv)
{
    fixtures_dir = argc > 1 ? argv[1] : "fixtures";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixtures),
        cmocka_unit_test(threads_from_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
