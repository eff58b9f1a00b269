/*
 * test_writer_records.c - the producer's bulk path into the writer
 * (cap__writer_records) writes exactly the bytes that the per-event calls
 * (cap_writer_scope_begin / cap_writer_scope_end) write for the same
 * records, and stops where its contract says.
 *
 * The records are a seeded random walk over several threads with the rare
 * cases mixed in: names first used mid-range, name id 0, ends with no
 * scope open, ticks that go backwards, nesting past CAP_MAX_DEPTH, large
 * tick jumps, and blocks small enough to be flushed in the middle of a
 * range.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <unistd.h>

#include "capture/cap_reader.h"
#include "capture/cap_writer.h"
#include "writer/writer_records.h"

#define THREADS 3
#define NAMES 40

typedef struct walk {
    uint64_t state;
    uint64_t tick[THREADS];
    uint32_t depth[THREADS];
    int deep_run[THREADS]; /* >0: keep opening scopes */
} walk;

static uint32_t rnd(walk *g, uint32_t n)
{
    g->state = g->state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((g->state >> 33) % n);
}

/* Fill rec[0..n) with thread `th`'s next records. */
static void walk_records(walk *g, int th, cap__rec *rec, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t r = rnd(g, 1000);
        uint64_t step = r < 5 ? 1000000u + rnd(g, 1u << 30) : 1 + rnd(g, 300);
        if (r >= 5 && r < 10 && g->tick[th] > 500)
            g->tick[th] -= rnd(g, 400); /* the clock went back */
        else
            g->tick[th] += step;
        if (r == 10)
            g->deep_run[th] = (int)CAP_MAX_DEPTH + 20;
        uint32_t word;
        int open = g->deep_run[th] > 0 ||
                   (g->depth[th] < 12 && rnd(g, 100) < 52);
        if (r == 11) {
            word = 0; /* a begin with name id 0: skipped */
        } else if (r == 12) {
            word = CAP__KIND_END << CAP__KIND_SHIFT; /* maybe nothing open */
            if (g->depth[th])
                g->depth[th]--;
        } else if (open) {
            word = 1 + rnd(g, NAMES);
            g->depth[th]++;
            if (g->deep_run[th] > 0)
                g->deep_run[th]--;
        } else {
            word = (CAP__KIND_END << CAP__KIND_SHIFT) | (1 + rnd(g, NAMES));
            if (g->depth[th])
                g->depth[th]--;
        }
        rec[i] = (cap__rec){.tick = g->tick[th], .word = word};
    }
}

static const char *name_of(uint32_t id)
{
    static char buf[NAMES + 1][24];
    snprintf(buf[id], sizeof buf[id], "scope_%u", id);
    return buf[id];
}

static cap_writer *open_writer(FILE *f)
{
    cap_writer_options o = {0};
    o.clock_source = "tsc";
    o.tick_period_ns = 0.4;
    o.origin_tick = 0;
    o.block_bytes = 4096;
    cap_writer *w = NULL;
    assert_int_equal(cap_writer_open_fd(&w, fileno(f), &o), CAP_OK);
    for (uint32_t t = 0; t < THREADS; t++) {
        char name[16];
        snprintf(name, sizeof name, "t%u", t);
        assert_int_equal(cap_writer_thread(w, t, name), CAP_OK);
    }
    return w;
}

/* The per-event path, as the producer used it: ids of 0 skipped, a name
 * defined before its first use. */
static void per_event(cap_writer *w, int named[], uint32_t tid,
                      const cap__rec *rec, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t id = rec[i].word & ((1u << CAP__KIND_SHIFT) - 1);
        if ((rec[i].word >> CAP__KIND_SHIFT) == CAP__KIND_BEGIN) {
            if (id == 0)
                continue;
            if (!named[id]) {
                assert_int_equal(cap_writer_name(w, id, name_of(id), NULL, 0),
                                 CAP_OK);
                named[id] = 1;
            }
            (void)cap_writer_scope_begin(w, tid, id, rec[i].tick);
        } else {
            (void)cap_writer_scope_end(w, tid, rec[i].tick);
        }
    }
}

/* The bulk path, handling its stops (new names) as the producer does. */
static void bulk(cap_writer *w, uint32_t tid, const cap__rec *rec, size_t n,
                 uint64_t *skipped_total)
{
    size_t i = 0;
    while (i < n) {
        uint64_t skipped;
        size_t k = cap__writer_records(w, tid, rec + i, n - i, 0, UINT64_MAX,
                                       &skipped);
        *skipped_total += skipped;
        i += k;
        if (i == n)
            break;
        uint32_t id = rec[i].word & ((1u << CAP__KIND_SHIFT) - 1);
        assert_int_equal(rec[i].word >> CAP__KIND_SHIFT, CAP__KIND_BEGIN);
        assert_int_equal(cap_writer_name(w, id, name_of(id), NULL, 0), CAP_OK);
        (void)cap_writer_scope_begin(w, tid, id, rec[i].tick);
        i++;
    }
}

static uint8_t *slurp(FILE *f, size_t *len)
{
    fflush(f);
    long n = ftell(f);
    assert_true(n > 0);
    uint8_t *buf = malloc((size_t)n);
    assert_non_null(buf);
    rewind(f);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    *len = (size_t)n;
    return buf;
}

static void bulk_path_writes_the_same_bytes_as_per_event_calls(void **state)
{
    (void)state;
    FILE *fa = tmpfile(), *fb = tmpfile();
    assert_non_null(fa);
    assert_non_null(fb);
    cap_writer *wa = open_writer(fa), *wb = open_writer(fb);
    walk g = {.state = 7};
    int named[NAMES + 1] = {0};
    cap__rec *rec = malloc(5000 * sizeof *rec);
    assert_non_null(rec);
    uint64_t zero_ids = 0, skipped = 0;
    for (int round = 0; round < 400; round++) {
        uint32_t tid = rnd(&g, THREADS);
        size_t n = 1 + rnd(&g, 5000);
        walk_records(&g, (int)tid, rec, n);
        for (size_t i = 0; i < n; i++)
            zero_ids += rec[i].word == 0;
        per_event(wa, named, tid, rec, n);
        bulk(wb, tid, rec, n, &skipped);
    }
    assert_int_equal(skipped, zero_ids);
    assert_int_equal(cap_writer_close(wa), CAP_OK);
    assert_int_equal(cap_writer_close(wb), CAP_OK);
    size_t la, lb;
    uint8_t *a = slurp(fa, &la), *b = slurp(fb, &lb);
    assert_int_equal(la, lb);
    size_t first = 0;
    while (first < la && a[first] == b[first])
        first++;
    if (first != la)
        print_error("files differ first at byte %zu of %zu\n", first, la);
    assert_int_equal(first, la);
    free(a);
    free(b);
    free(rec);
    fclose(fa);
    fclose(fb);
}

static void bulk_path_stops_at_unnamed_ids_and_outside_the_window(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    cap_writer *w = open_writer(f);
    assert_int_equal(cap_writer_name(w, 1, "a", NULL, 0), CAP_OK);
    cap__rec rec[] = {
        {.tick = 100, .word = 1},
        {.tick = 110, .word = 2}, /* no name yet */
        {.tick = 120, .word = CAP__KIND_END << CAP__KIND_SHIFT},
        {.tick = 130, .word = CAP__KIND_END << CAP__KIND_SHIFT},
    };
    uint64_t skipped;
    assert_int_equal(cap__writer_records(w, 0, rec, 4, 0, UINT64_MAX, &skipped),
                     1);
    assert_int_equal(skipped, 0);
    assert_int_equal(cap_writer_name(w, 2, "b", NULL, 0), CAP_OK);
    /* the window ends at tick 125: the last end is outside */
    assert_int_equal(cap__writer_records(w, 0, rec + 1, 3, 0, 125, &skipped), 2);
    /* and starts at 105: the first record is outside */
    assert_int_equal(cap__writer_records(w, 0, rec, 4, 105, 200, &skipped), 0);
    /* an undeclared thread consumes everything, as each call would fail */
    assert_int_equal(cap__writer_records(w, 9, rec, 4, 0, UINT64_MAX, &skipped),
                     4);
    assert_int_equal(cap_writer_close(w), CAP_OK);
    fclose(f);
}

/* A resolver names 7 (with where it was registered) and knows no 8. */
static int resolve_calls;
static int resolve_seven(void *user, uint32_t id, cap__name_info *out)
{
    (void)user;
    resolve_calls++;
    if (id != 7)
        return -1;
    *out = (cap__name_info){"seven", "engine/seven.c", 77, 0};
    return 0;
}

static void bulk_path_names_unnamed_ids_through_its_resolver(void **state)
{
    (void)state;
    char path[] = "/tmp/test_writer_records_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    cap_writer_options o = {.clock_source = "tsc", .tick_period_ns = 1.0};
    cap_writer *w = NULL;
    assert_int_equal(cap_writer_open_path(&w, path, &o), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "t0"), CAP_OK);
    cap__writer_set_resolver(w, resolve_seven, NULL);
    cap__rec rec[] = {
        {.tick = 100, .word = 7}, /* named by the resolver */
        {.tick = 110, .word = CAP__KIND_END << CAP__KIND_SHIFT},
        {.tick = 120, .word = 7}, /* named now: no call */
        {.tick = 130, .word = CAP__KIND_END << CAP__KIND_SHIFT},
        {.tick = 140, .word = 8}, /* the resolver has none: stops */
        {.tick = 150, .word = CAP__KIND_END << CAP__KIND_SHIFT},
    };
    uint64_t skipped;
    resolve_calls = 0;
    assert_int_equal(cap__writer_records(w, 0, rec, 6, 0, UINT64_MAX, &skipped),
                     4);
    assert_int_equal(resolve_calls, 2);
    assert_int_equal(cap_writer_close(w), CAP_OK);
    cap_reader *r;
    assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
    cap_event ev;
    size_t scopes = 0;
    while (cap_reader_next(r, &ev) == CAP_OK)
        if (ev.kind == CAP_EV_SCOPE) {
            assert_int_equal(ev.u.scope.name, 7);
            scopes++;
        }
    assert_int_equal(scopes, 2);
    assert_string_equal(cap_reader_name(r, 7), "seven");
    assert_string_equal(cap_reader_name_file(r, 7), "engine/seven.c");
    assert_int_equal(cap_reader_name_line(r, 7), 77);
    cap_reader_close(r);
    unlink(path);
}

/* A thread and a GPU track renamed within one block, after the block
 * listed them (3.1 and 4.0): the block lists each once, with its latest
 * name, and reads without damage (4.0's group listing had counted the
 * second listing but written one: a malformed section, the block lost). */
static void renamed_within_a_block_reads_whole(void **state)
{
    (void)state;
    for (unsigned major = 3; major <= 4; major++) {
        char path[] = "/tmp/test_writer_records_XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        cap_writer_options o = {.clock_source = "tsc", .tick_period_ns = 1.0,
                                .format_major = major};
        cap_writer *w = NULL;
        assert_int_equal(cap_writer_open_path(&w, path, &o), CAP_OK);
        assert_int_equal(cap_writer_name(w, 1, "work", NULL, 0), CAP_OK);
        assert_int_equal(cap_writer_thread(w, 0, "before"), CAP_OK);
        assert_int_equal(cap_writer_gpu_track(w, 0, "queue", 1.0), CAP_OK);
        assert_int_equal(cap_writer_scope_begin(w, 0, 1, 100), CAP_OK);
        assert_int_equal(cap_writer_scope_end(w, 0, 110), CAP_OK);
        assert_int_equal(cap_writer_thread(w, 0, "after"), CAP_OK);
        assert_int_equal(cap_writer_gpu_track(w, 0, "queue 2", 1.0), CAP_OK);
        assert_int_equal(cap_writer_scope_begin(w, 0, 1, 120), CAP_OK);
        assert_int_equal(cap_writer_scope_end(w, 0, 130), CAP_OK);
        assert_int_equal(cap_writer_frame(w, 0, 90, 140), CAP_OK);
        assert_int_equal(cap_writer_close(w), CAP_OK);
        cap_reader *r;
        assert_int_equal(cap_reader_open(&r, path, NULL, 0), CAP_OK);
        cap_event ev;
        cap_result res;
        size_t scopes = 0;
        while ((res = cap_reader_next(r, &ev)) == CAP_OK)
            scopes += ev.kind == CAP_EV_SCOPE;
        assert_int_equal(res, CAP_DONE);
        assert_int_equal(scopes, 2);
        assert_string_equal(cap_reader_thread_name(r, 0), "after");
        assert_string_equal(cap_reader_track_name(r, 0), "queue 2");
        cap_reader_close(r);
        unlink(path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bulk_path_writes_the_same_bytes_as_per_event_calls),
        cmocka_unit_test(bulk_path_stops_at_unnamed_ids_and_outside_the_window),
        cmocka_unit_test(bulk_path_names_unnamed_ids_through_its_resolver),
        cmocka_unit_test(renamed_within_a_block_reads_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
