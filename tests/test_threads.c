/*
 * test_threads.c - the threaded producer accounts for every scope.
 *
 * 16 threads record at once while another thread marks frames; threads
 * start and exit mid-capture (some unregister, some just return), some
 * never register. Every scope a thread records is either read back from
 * the file or counted as dropped: the totals are checked exactly, with
 * roomy buffers and with buffers so small that most scopes are dropped.
 * Also: frame boundaries from several threads, a thread that records in
 * two captures in turn, and threads that exit while the capture closes.
 *
 * Suite "threads": tests/sanitizers.sh runs it under ThreadSanitizer.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <capture/capture.h>

#include "capsum.h"

#define SLOTS 16
#define GENERATIONS 3

static void temp_path(char *buf, size_t n, const char *what)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, n, "%s/cap-threads-%s-%ld.cap", dir && *dir ? dir : "/tmp",
             what, (long)getpid());
}

static void sleep_us(unsigned us)
{
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ---- workers -------------------------------------------------------------- */

typedef struct worker {
    unsigned slot, gen;
    uint64_t iterations;
    char name[32];       /* "" when the thread does not register */
    int unregister;      /* call cap_thread_unregister before returning */
    uint64_t scopes;     /* recorded (attempted) */
} worker;

/* One iteration: "step" > "part" > "leaf", then "part" alone: 4 scopes,
 * with the explicit begin/end pairs and the block-scoped form mixed. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    if (w->name[0])
        CAP_THREAD(w->name);
    for (uint64_t i = 0; i < w->iterations; i++) {
        CAP_BEGIN("step");
        {
            CAP_SCOPE("part");
            CAP_BEGIN("leaf");
            CAP_END();
        }
        {
            CAP_SCOPE("part");
        }
        CAP_END();
        w->scopes += 4;
        if (i % 256 == 0)
            sched_yield();
    }
    if (w->unregister)
        cap_thread_unregister();
    return NULL;
}

typedef struct slot {
    unsigned index;
    uint64_t base_iterations;
    worker w[GENERATIONS];
    pthread_t thread;
} slot;

/* Each slot runs GENERATIONS workers one after another, so threads start
 * and exit while the capture runs. */
static void *slot_main(void *arg)
{
    slot *s = arg;
    for (unsigned g = 0; g < GENERATIONS; g++) {
        worker *w = &s->w[g];
        w->slot = s->index;
        w->gen = g;
        w->iterations = s->base_iterations + 97u * s->index + 13u * g;
        w->unregister = (s->index + g) % 2;
        if ((s->index + g) % 4 != 3) /* a quarter never register */
            snprintf(w->name, sizeof w->name, "s%u g%u", s->index, g);
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, worker_main, w), 0);
        pthread_join(t, NULL);
    }
    return NULL;
}

typedef struct framer {
    int stop; /* atomic */
    uint64_t marks;
    unsigned period_us;
    pthread_t thread;
} framer;

static void *framer_main(void *arg)
{
    framer *f = arg;
    while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
        cap_frame_mark();
        f->marks++;
        sleep_us(f->period_us);
    }
    return NULL;
}

/* Run SLOTS x GENERATIONS workers and a frame thread in a capture with
 * options `o`; check every scope is accounted for. Returns the dropped
 * count. */
static uint64_t run_and_account(const cap_capture_options *o,
                                uint64_t base_iterations, const char *what)
{
    char path[256];
    temp_path(path, sizeof path, what);
    assert_int_equal(cap_open(path, o), CAP_OK);
    framer f = {.period_us = 500};
    assert_int_equal(pthread_create(&f.thread, NULL, framer_main, &f), 0);
    slot *slots = calloc(SLOTS, sizeof *slots);
    assert_non_null(slots);
    for (unsigned i = 0; i < SLOTS; i++) {
        slots[i].index = i;
        slots[i].base_iterations = base_iterations;
        assert_int_equal(
            pthread_create(&slots[i].thread, NULL, slot_main, &slots[i]), 0);
    }
    for (unsigned i = 0; i < SLOTS; i++)
        pthread_join(slots[i].thread, NULL);
    __atomic_store_n(&f.stop, 1, __ATOMIC_RELEASE);
    pthread_join(f.thread, NULL);
    assert_int_equal(cap_close(), CAP_OK);
    cap_producer_stats ps;
    cap_get_stats(&ps);

    uint64_t attempted = 0;
    for (unsigned i = 0; i < SLOTS; i++)
        for (unsigned g = 0; g < GENERATIONS; g++)
            attempted += slots[i].w[g].scopes;
    capsum s;
    char d[512];
    assert_int_equal(capsum_read(&s, path), 0);
    printf("%s: %u threads, %" PRIu64 " scopes recorded, %" PRIu64
           " read back, %" PRIu64 " dropped, %zu frames\n",
           what, SLOTS * GENERATIONS, attempted, s.scopes,
           s.stats.dropped_scopes, s.frames);
    if (!s.stats.has_footer || s.truncated || s.corrupt ||
        s.final_error != CAP_DONE)
        print_error("%s\n", capsum_describe(&s, d, sizeof d));
    assert_true(s.stats.has_footer);
    assert_int_equal(s.truncated, 0);
    assert_int_equal(s.corrupt, 0);
    assert_int_equal(s.final_error, CAP_DONE);
    /* every scope: read back or counted as dropped */
    assert_int_equal(s.scopes + s.stats.dropped_scopes, attempted);
    assert_int_equal(s.stats.dropped_scopes, ps.dropped_scopes);
    assert_int_equal(ps.events, 2 * s.scopes);
    assert_int_equal(s.stats.closed_at_end, 0);
    /* each named thread: no more than it recorded; all of it without drops */
    for (unsigned i = 0; i < SLOTS; i++)
        for (unsigned g = 0; g < GENERATIONS; g++) {
            const worker *w = &slots[i].w[g];
            if (!w->name[0])
                continue;
            uint64_t got = capsum_thread_scopes(&s, w->name);
            assert_true(got <= w->scopes);
            if (s.stats.dropped_scopes == 0)
                assert_int_equal(got, w->scopes);
        }
    /* "part" is recorded twice per "step" unless dropped */
    if (s.stats.dropped_scopes == 0) {
        assert_int_equal(capsum_named(&s, "part"), attempted / 2);
        assert_int_equal(capsum_named(&s, "step"), attempted / 4);
    }
    /* every frame boundary: frame k ends at mark k+1, the last at close */
    assert_int_equal(s.frames, f.marks);
    assert_true(s.frames_contiguous);
    assert_int_equal(s.frame_index[0], 0);
    uint64_t dropped = s.stats.dropped_scopes;
    capsum_free(&s);
    free(slots);
    unlink(path);
    return dropped;
}

static void sixteen_threads_with_roomy_buffers_account_for_every_scope(
    void **state)
{
    (void)state;
    cap_capture_options o = {.flush_interval_ms = 10};
    run_and_account(&o, 20000, "roomy");
}

static void sixteen_threads_with_tiny_buffers_drop_and_count_exactly(
    void **state)
{
    (void)state;
    /* 64 events a buffer, 2 buffers a thread, one flush every 50 ms: most
     * scopes are dropped; the count must still close exactly. */
    cap_capture_options o = {.flush_interval_ms = 50,
                             .buffer_events = 64,
                             .buffers_per_thread = 2};
    uint64_t dropped = run_and_account(&o, 20000, "tiny");
    assert_true(dropped > 0);
}

/* ---- frame boundaries from several threads -------------------------------- */

#define MARKERS 4
#define MARKS 2000

static void *marker_main(void *arg)
{
    (void)arg;
    for (int i = 0; i < MARKS; i++) {
        cap_frame_mark();
        if (i % 64 == 0)
            sched_yield();
    }
    return NULL;
}

/* Regression: the clock was read before the lock, so a boundary could get
 * an earlier tick than the one before it and its frame was refused. */
static void frame_marks_from_several_threads_are_all_kept(void **state)
{
    (void)state;
    char path[256];
    temp_path(path, sizeof path, "marks");
    cap_capture_options o = {.flush_interval_ms = 10};
    assert_int_equal(cap_open(path, &o), CAP_OK);
    pthread_t t[MARKERS];
    for (int i = 0; i < MARKERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, marker_main, NULL), 0);
    for (int i = 0; i < MARKERS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(cap_close(), CAP_OK);
    capsum s;
    assert_int_equal(capsum_read(&s, path), 0);
    assert_int_equal(s.frames, MARKERS * MARKS);
    assert_true(s.frames_contiguous);
    capsum_free(&s);
    unlink(path);
}

/* ---- one thread, two captures --------------------------------------------- */

typedef struct two_caps {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int phase; /* 0: record in capture 1; 1: wait; 2: record in capture 2 */
    int done;
} two_caps;

static void wait_phase(two_caps *tc, int phase)
{
    pthread_mutex_lock(&tc->lock);
    while (tc->phase != phase)
        pthread_cond_wait(&tc->cond, &tc->lock);
    pthread_mutex_unlock(&tc->lock);
}

static void set_phase(two_caps *tc, int phase)
{
    pthread_mutex_lock(&tc->lock);
    tc->phase = phase;
    pthread_cond_broadcast(&tc->cond);
    pthread_mutex_unlock(&tc->lock);
}

static void *two_caps_thread(void *arg)
{
    two_caps *tc = arg;
    CAP_THREAD("traveller");
    for (int i = 0; i < 1000; i++) {
        CAP_SCOPE("first");
    }
    set_phase(tc, 1);
    wait_phase(tc, 2);
    /* The capture this thread registered with is gone; a new one is open.
     * Its first scope re-registers it (as "thread <tid>") and records. */
    for (int i = 0; i < 1500; i++) {
        CAP_SCOPE("second");
    }
    set_phase(tc, 3);
    wait_phase(tc, 4);
    return NULL;
}

static void a_thread_records_in_two_captures_in_turn(void **state)
{
    (void)state;
    char p1[256], p2[256];
    temp_path(p1, sizeof p1, "first");
    temp_path(p2, sizeof p2, "second");
    two_caps tc = {.lock = PTHREAD_MUTEX_INITIALIZER,
                   .cond = PTHREAD_COND_INITIALIZER};
    assert_int_equal(cap_open(p1, NULL), CAP_OK);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, two_caps_thread, &tc), 0);
    wait_phase(&tc, 1);
    assert_int_equal(cap_close(), CAP_OK);
    assert_int_equal(cap_open(p2, NULL), CAP_OK);
    set_phase(&tc, 2);
    wait_phase(&tc, 3);
    assert_int_equal(cap_close(), CAP_OK);
    set_phase(&tc, 4);
    pthread_join(t, NULL);

    capsum s;
    assert_int_equal(capsum_read(&s, p1), 0);
    assert_int_equal(capsum_named(&s, "first"), 1000);
    assert_int_equal(capsum_named(&s, "second"), 0);
    assert_int_equal(capsum_thread_scopes(&s, "traveller"), 1000);
    capsum_free(&s);
    assert_int_equal(capsum_read(&s, p2), 0);
    assert_int_equal(capsum_named(&s, "first"), 0);
    assert_int_equal(capsum_named(&s, "second"), 1500);
    assert_true(s.stats.has_footer);
    capsum_free(&s);
    unlink(p1);
    unlink(p2);
}

/* ---- threads that exit while the capture closes --------------------------- */

typedef struct racer {
    unsigned iterations;
    int unregister;
    pthread_t thread;
} racer;

static void *racer_main(void *arg)
{
    racer *r = arg;
    CAP_THREAD("racer");
    for (unsigned i = 0; i < r->iterations; i++) {
        CAP_SCOPE("race");
    }
    if (r->unregister)
        cap_thread_unregister();
    return NULL;
}

/* Threads exit (and detach from the capture) at the moment cap_close
 * tears it down. Events racing with close may be discarded; nothing may
 * crash, race (TSan) or leak (ASan), and the file must be whole. */
static void threads_exiting_while_the_capture_closes(void **state)
{
    (void)state;
    char path[256];
    temp_path(path, sizeof path, "close-race");
    uint64_t rng = 12345;
    for (int round = 0; round < 40; round++) {
        assert_int_equal(cap_open(path, NULL), CAP_OK);
        racer r[8];
        for (int i = 0; i < 8; i++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            r[i].iterations = (unsigned)(rng >> 33) % 3000;
            r[i].unregister = i % 2;
            assert_int_equal(pthread_create(&r[i].thread, NULL, racer_main,
                                            &r[i]),
                             0);
        }
        sleep_us((unsigned)(rng >> 40) % 400);
        assert_int_equal(cap_close(), CAP_OK);
        for (int i = 0; i < 8; i++)
            pthread_join(r[i].thread, NULL);
        capsum s;
        assert_int_equal(capsum_read(&s, path), 0);
        assert_true(s.stats.has_footer);
        assert_int_equal(s.corrupt, 0);
        assert_int_equal(s.final_error, CAP_DONE);
        capsum_free(&s);
    }
    unlink(path);
}

/* A failed case must not leave its capture open for the next one. */
static int close_leftovers(void **state)
{
    (void)state;
    (void)cap_close();
    return 0;
}

int main(void)
{
#define CASE(f) cmocka_unit_test_teardown(f, close_leftovers)
    const struct CMUnitTest tests[] = {
        CASE(sixteen_threads_with_roomy_buffers_account_for_every_scope),
        CASE(sixteen_threads_with_tiny_buffers_drop_and_count_exactly),
        CASE(frame_marks_from_several_threads_are_all_kept),
        CASE(a_thread_records_in_two_captures_in_turn),
        CASE(threads_exiting_while_the_capture_closes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
