/*
 * test_flight.c - the flight recorder (issue 44, docs/FLIGHT.md): the last
 * N seconds in memory, dumped as complete captures.
 *
 *   request   a dump asked for holds the window, every name and thread
 *             (names first seen before the window, a thread that started
 *             and ended before it, one that started and ended inside it),
 *             and none of the frames before the window;
 *   bound     a burst passes the ring's bound: the oldest blocks go
 *             (counted), the peak stays within the bound, a dump reads;
 *   hitch     game_sim --hitch-at in flight mode with a hitch threshold:
 *             exactly one dump, holding the hitch frame, N - 0.2 s before
 *             it and N/4 after, every name (argv[1]: game_sim);
 *   crash     a child recording in flight mode faults on another thread:
 *             its dump reads whole and holds its last frames;
 *   listen    flight mode and a listen address together: the client's
 *             stream and a dump both read whole.
 *
 * Windows are short (N = 1 or 2 s) so that the whole file runs in about
 * 15 s. Timing: no test measures speed; the hitch run is recorded again
 * (up to 3 times) when a stall of the machine, not game_sim's hitch, made
 * the dump, and the crash case allows frames that ended within a few flush
 * intervals of the fault to be missing (as test_crash does).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include <capture/capture.h>
#include <capture/cap_reader.h>

#define TMP_DIR_NAME "flight"
#include "tmp_dir.h"

static const char *game_sim_path;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void spin_us(unsigned us)
{
    uint64_t until = mono_ns() + us * 1000ull;
    while (mono_ns() < until)
        ;
}

/* ---- reading a dump ----------------------------------------------------- */

#define MAX_FRAMES 20000

typedef struct dump {
    cap_result open;
    int corrupt, truncated, has_footer;
    uint64_t unnamed, scopes;
    size_t nframes;
    uint64_t idx[MAX_FRAMES];
    int64_t begin[MAX_FRAMES], end[MAX_FRAMES];
    char names[256][48]; /* every name the file declares */
    size_t nnames;
    char threads[64][48]; /* every thread it declares */
    size_t nthreads;
    uint64_t thread_scopes[64];
    char meta_frame[32], meta_dump[32];
} dump;

static int dump_read(dump *d, const char *path)
{
    memset(d, 0, sizeof *d);
    cap_reader *r;
    char det[256];
    d->open = cap_reader_open(&r, path, det, sizeof det);
    if (d->open != CAP_OK) {
        print_error("%s: %s\n", path, det);
        return -1;
    }
    cap_event ev;
    cap_result rc;
    while ((rc = cap_reader_next(r, &ev)) != CAP_DONE) {
        if (rc == CAP_E_CORRUPT) {
            d->corrupt++;
            continue;
        }
        if (rc != CAP_OK) {
            d->truncated += rc == CAP_E_TRUNCATED;
            break;
        }
        if (ev.kind == CAP_EV_FRAME && d->nframes < MAX_FRAMES) {
            d->idx[d->nframes] = ev.u.frame.index;
            d->begin[d->nframes] = ev.u.frame.begin_ns;
            d->end[d->nframes++] = ev.u.frame.end_ns;
        } else if (ev.kind == CAP_EV_SCOPE) {
            d->scopes++;
            if (ev.u.scope.tid < 64)
                d->thread_scopes[ev.u.scope.tid]++;
        }
    }
    const cap_reader_stats *st = cap_reader_get_stats(r);
    d->has_footer = st->has_footer;
    d->unnamed = st->unnamed_ids;
    for (uint32_t id = 1; id <= cap_reader_max_name_id(r) && d->nnames < 256;
         id++) {
        const char *n = cap_reader_name(r, id);
        if (n)
            snprintf(d->names[d->nnames++], 48, "%s", n);
    }
    for (uint32_t t = 0; t < 64; t++) {
        const char *n = cap_reader_thread_name(r, t);
        snprintf(d->threads[t], 48, "%s", n ? n : "");
        if (n)
            d->nthreads = t + 1;
    }
    const char *m = cap_reader_meta_get(r, "flight_frame");
    snprintf(d->meta_frame, sizeof d->meta_frame, "%s", m ? m : "");
    m = cap_reader_meta_get(r, "flight_dump");
    snprintf(d->meta_dump, sizeof d->meta_dump, "%s", m ? m : "");
    cap_reader_close(r);
    return 0;
}

static int has_name(const dump *d, const char *name)
{
    for (size_t i = 0; i < d->nnames; i++)
        if (strcmp(d->names[i], name) == 0)
            return 1;
    return 0;
}

/* The thread id named `name`, or -1. */
static int thread_id(const dump *d, const char *name)
{
    for (size_t i = 0; i < d->nthreads; i++)
        if (strcmp(d->threads[i], name) == 0)
            return (int)i;
    return -1;
}

/* A whole, undamaged, fully named capture. */
static void assert_whole(const dump *d)
{
    assert_int_equal(d->open, CAP_OK);
    assert_int_equal(d->corrupt, 0);
    assert_int_equal(d->truncated, 0);
    assert_true(d->has_footer);
    assert_int_equal(d->unnamed, 0);
}

/* The files in dir whose names start with "flight-" and end with
 * `suffix`: how many, the first one's path in out. */
static int find_dumps(const char *dir, const char *suffix, char *out,
                      size_t n)
{
    DIR *dd = opendir(dir);
    assert_non_null(dd);
    int k = 0;
    struct dirent *e;
    while ((e = readdir(dd))) {
        size_t l = strlen(e->d_name), s = strlen(suffix);
        if (strncmp(e->d_name, "flight-", 7) == 0 && l > s &&
            strcmp(e->d_name + l - s, suffix) == 0) {
            if (k++ == 0)
                snprintf(out, n, "%s/%s", dir, e->d_name);
        }
    }
    closedir(dd);
    return k;
}

static void make_dir(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmpdir, name);
    assert_int_equal(mkdir(out, 0755), 0);
}

/* ---- request ------------------------------------------------------------ */

static void *short_thread(void *arg)
{
    const char *name = arg;
    CAP_THREAD(name);
    for (int i = 0; i < 50; i++) {
        CAP_SCOPE("short_work");
        spin_us(100);
    }
    cap_thread_unregister();
    return NULL;
}

static void frames_for(unsigned ms, const char *scope)
{
    uint64_t until = mono_ns() + ms * 1000000ull;
    while (mono_ns() < until) {
        CAP_FRAME_MARK();
        {
            CAP_SCOPE(scope);
            spin_us(300);
        }
        sleep_ms(4);
    }
}

static void wait_dumps(uint64_t n)
{
    cap_flight_stats s;
    for (int i = 0; i < 3000; i++) {
        assert_int_equal(cap_flight_get_stats(&s), CAP_OK);
        if (s.dumps + s.dump_failures >= n)
            break;
        sleep_ms(10);
    }
    assert_int_equal(s.dump_failures, 0);
    assert_int_equal(s.dumps, n);
}

static void test_request(void **state)
{
    (void)state;
    char dir[300], path[400];
    make_dir(dir, sizeof dir, "request");
    snprintf(path, sizeof path, "%s/asked.cap", dir);
    /* no capture, or one that records to a file: no ring to dump */
    cap_flight_stats none;
    assert_int_equal(cap_flight_dump(NULL), CAP_E_MISUSE);
    assert_int_equal(cap_flight_get_stats(&none), CAP_E_MISUSE);
    assert_int_equal(none.seconds, 0);
    char file[400];
    snprintf(file, sizeof file, "%s/file.cap", dir);
    assert_int_equal(cap_open(file, NULL), CAP_OK);
    assert_int_equal(cap_flight_dump(NULL), CAP_E_MISUSE);
    assert_int_equal(cap_close(), CAP_OK);
    cap_capture_options o = {.flight_seconds = 1.0, .flush_interval_ms = 20};
    char never[400];
    snprintf(never, sizeof never, "%s/never.cap", dir);
    assert_int_equal(cap_open(never, &o), CAP_OK);
    assert_int_equal(cap_flight_dump(NULL) == CAP_OK, 1); /* an empty ring */
    CAP_THREAD("main");
    /* before the window: a name used once, a thread that comes and goes */
    uint32_t early = cap_name_register("early_name", NULL, 0);
    cap_scope_begin(early);
    spin_us(200);
    cap_scope_end();
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, short_thread, "gone_before"), 0);
    pthread_join(th, NULL);
    frames_for(1600, "old_work");
    uint64_t window_start = cap_frame_current();
    /* inside the window: a thread that starts and ends */
    assert_int_equal(pthread_create(&th, NULL, short_thread, "came_inside"), 0);
    pthread_join(th, NULL);
    frames_for(600, "new_work");
    uint64_t last = cap_frame_current();
    assert_int_equal(cap_flight_dump(path), CAP_OK);
    wait_dumps(2);
    frames_for(100, "after_work");
    assert_int_equal(cap_close(), CAP_OK);
    assert_int_equal(access(never, F_OK), -1); /* nothing but dumps */

    static dump d;
    assert_int_equal(dump_read(&d, path), 0);
    assert_whole(&d);
    assert_string_equal(d.meta_dump, "request");
    assert_true(d.nframes > 10);
    /* the window: no frame from more than N + a flush interval or two
     * before, every frame since it began up to the request */
    assert_true(d.idx[0] > 0);
    /* (N s before the call: the last frame ended a few ms before it, more
     * when the machine took the thread's core) */
    assert_true(d.end[d.nframes - 1] - d.begin[0] >= 900000000ll);
    assert_true(d.end[d.nframes - 1] - d.begin[0] < 2000000000ll);
    assert_true(d.idx[0] <= window_start);
    assert_true(d.idx[d.nframes - 1] + 2 >= last);
    for (size_t i = 1; i < d.nframes; i++)
        assert_int_equal(d.idx[i], d.idx[i - 1] + 1);
    /* every name and thread, those of before the window too */
    assert_true(has_name(&d, "early_name"));
    assert_true(has_name(&d, "old_work"));
    assert_true(has_name(&d, "new_work"));
    assert_true(has_name(&d, "short_work"));
    assert_false(has_name(&d, "after_work"));
    assert_true(thread_id(&d, "main") >= 0);
    assert_true(thread_id(&d, "gone_before") >= 0);
    int inside = thread_id(&d, "came_inside");
    assert_true(inside >= 0);
    assert_int_equal(d.thread_scopes[inside], 50);
    assert_int_equal(d.thread_scopes[thread_id(&d, "gone_before")], 0);
    /* the first dump, of a ring (nearly) empty, named by the ring: reads */
    char first[400];
    assert_int_equal(find_dumps(dir, "-request.cap", first, sizeof first), 1);
    assert_int_equal(dump_read(&d, first), 0);
    assert_whole(&d);
    assert_string_equal(d.meta_dump, "request");
}

/* ---- bound -------------------------------------------------------------- */

static void test_bound(void **state)
{
    (void)state;
    char dir[300], path[400];
    make_dir(dir, sizeof dir, "bound");
    snprintf(path, sizeof path, "%s/after_burst.cap", dir);
    cap_capture_options o = {.flight_seconds = 2.0,
                             .flight_max_bytes = (size_t)1 << 20,
                             .flight_dir = dir,
                             .flush_interval_ms = 20};
    assert_int_equal(cap_open(NULL, &o), CAP_OK);
    CAP_THREAD("burst");
    /* a burst: many scopes of irregular lengths (they compress badly)
     * for about half a second, well over 1 MiB of blocks */
    uint32_t ids[64];
    char name[32];
    for (int i = 0; i < 64; i++) {
        snprintf(name, sizeof name, "burst_%02d", i);
        ids[i] = cap_name_register(name, NULL, 0);
    }
    uint64_t x = 88172645463325252ull;
    uint64_t until = mono_ns() + 10000000000ull;
    cap_flight_stats s;
    for (uint64_t n = 0; mono_ns() < until; n++) {
        if (n % 2000 == 0) {
            CAP_FRAME_MARK();
            /* at least half a second, until the bound was met */
            assert_int_equal(cap_flight_get_stats(&s), CAP_OK);
            if (s.evicted_blocks > 0 && until > mono_ns() + 500000000ull)
                until = mono_ns() + 500000000ull;
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        cap_scope_begin(ids[x % 64]);
        for (volatile unsigned k = 0; k < (x >> 58); k++)
            ;
        cap_scope_end();
    }
    frames_for(300, "calm");
    assert_int_equal(cap_flight_get_stats(&s), CAP_OK);
    assert_int_equal(s.bound_bytes, (uint64_t)1 << 20);
    assert_true(s.evicted_blocks > 0);
    assert_true(s.bytes_peak <= s.bound_bytes);
    assert_true(s.bytes <= s.bound_bytes);
    assert_true(s.blocks > 0);
    assert_int_equal(cap_flight_dump(path), CAP_OK);
    wait_dumps(1);
    assert_int_equal(cap_close(), CAP_OK);
    static dump d;
    assert_int_equal(dump_read(&d, path), 0);
    assert_whole(&d);
    assert_true(d.scopes > 0);
    assert_true(has_name(&d, "calm"));
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_true((uint64_t)sb.st_size <= ((uint64_t)1 << 20) + 65536);
}

/* ---- hitch (game_sim) --------------------------------------------------- */

#define N_S 2.0
#define HITCH_MS 1000 /* over 5 x the median frame while frames take less
                         than 250 ms: on a 2-core machine running builds
                         beside this test, frames took up to 160 ms */

/* Run game_sim in flight mode into dir; the frame it says it hitched in,
 * or UINT64_MAX. */
static uint64_t run_game_sim(const char *dir)
{
    char cmd[4096], log[400];
    snprintf(log, sizeof log, "%s/game_sim.log", dir);
    snprintf(cmd, sizeof cmd,
             "CAP_FLIGHT_SECONDS=%g CAP_FLIGHT_HITCH=5 CAP_FLIGHT_DIR='%s' "
             "'%s' '%s/unused.cap' --seconds 4.5 --fps-cap 60 --hitch-at 2.4 "
             "--hitch-ms %d --outside-frames --workers 2 2>'%s'",
             N_S, dir, game_sim_path, dir, HITCH_MS, log);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    char line[512];
    unsigned long long frame = UINT64_MAX;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "game_sim: hitch in frame %llu", &frame) == 1)
            break;
    fclose(f);
    return frame;
}

static void test_hitch(void **state)
{
    (void)state;
    if (!game_sim_path) {
        skip();
        return;
    }
    static dump d;
    char dir[300], path[400];
    uint64_t frame = UINT64_MAX;
    for (int attempt = 1; attempt <= 3; attempt++) {
        char sub[32];
        snprintf(sub, sizeof sub, "hitch%d", attempt);
        make_dir(dir, sizeof dir, sub);
        frame = run_game_sim(dir);
        assert_true(frame != UINT64_MAX);
        int dumps = find_dumps(dir, ".cap", path, sizeof path);
        char want[32];
        snprintf(want, sizeof want, "%llu", (unsigned long long)frame);
        if (dumps == 1) {
            assert_int_equal(dump_read(&d, path), 0);
            if (strcmp(d.meta_frame, want) == 0)
                break;
        }
        /* a stall of the machine made a dump of its own (and the hitch
         * fell within N s of it, or came N s after it), or frames so slow
         * that the hitch was not 5 x their median: record again */
        print_message("attempt %d: %d dumps (the first of frame %s), "
                      "game_sim's hitch was frame %s; again\n",
                      attempt, dumps, dumps ? d.meta_frame : "-", want);
        assert_true(attempt < 3);
    }
    assert_whole(&d);
    assert_string_equal(d.meta_dump, "hitch");
    assert_non_null(strstr(path, "-hitch.cap"));
    size_t h = 0;
    while (h < d.nframes && d.idx[h] != frame)
        h++;
    assert_true(h < d.nframes);
    assert_true(d.end[h] - d.begin[h] >= HITCH_MS * 1000000ll);
    /* N - 0.2 s before it, N/4 after it (to 10 ms: the clock's
     * calibration) */
    assert_true(d.begin[0] <= d.begin[h] - (int64_t)((N_S - 0.2) * 1e9));
    assert_true(d.end[d.nframes - 1] >=
                d.end[h] + (int64_t)((N_S / 4 - 0.01) * 1e9));
    for (size_t i = 1; i < d.nframes; i++)
        assert_int_equal(d.idx[i], d.idx[i - 1] + 1);
    /* every name: those of the frames, of before them, of the hitch */
    const char *names[] = {"game_frame", "load_level", "stream_asset",
                           "decompress", "worker_wait", "render_frame",
                           "gpu_frame", "hitch", "draw_calls"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        assert_true(has_name(&d, names[i]));
    assert_true(thread_id(&d, "asset_loader") >= 0);
    assert_true(thread_id(&d, "render") >= 0);
}

/* ---- crash -------------------------------------------------------------- */

static int report_fd = -1;
static volatile int *volatile fault_at = (volatile int *)(uintptr_t)16;

static void *faulting_thread(void *arg)
{
    (void)arg;
    sleep_ms(1500);
    *fault_at = 1; /* SIGSEGV, on this thread */
    return NULL;
}

/* The child: frames on the main thread, told to the parent as they end
 * (index and CLOCK_MONOTONIC), until another thread faults. */
static void crash_child(const char *dir)
{
    cap_capture_options o = {.flight_seconds = 1.0, .flight_dir = dir,
                             .flush_interval_ms = 25};
    /* cmocka's handlers would carry on with the tests in this child */
    const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
    if (cap_open(NULL, &o) != CAP_OK)
        _exit(90);
    CAP_THREAD("main");
    pthread_t th;
    if (pthread_create(&th, NULL, faulting_thread, NULL) != 0)
        _exit(91);
    for (;;) {
        CAP_FRAME_MARK();
        uint64_t done[2] = {cap_frame_current() - 1, mono_ns()};
        {
            CAP_SCOPE("child_work");
            spin_us(500);
        }
        if (done[0] != UINT64_MAX - 1) {
            ssize_t n = write(report_fd, done, sizeof done);
            (void)n;
        }
        sleep_ms(3);
    }
}

static void test_crash(void **state)
{
    (void)state;
#if defined(__SANITIZE_THREAD__)
    skip(); /* fork and a fault under ThreadSanitizer: not our signal */
    return;
#endif
    char dir[300], path[400];
    make_dir(dir, sizeof dir, "crash");
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fcntl(fds[1], F_SETFL, O_NONBLOCK);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        report_fd = fds[1];
        crash_child(dir);
        _exit(92);
    }
    close(fds[1]);
    uint64_t last[2] = {0, 0}, rec[2], before[2] = {0, 0};
    uint64_t got = 0;
    static uint64_t idx[4096], when[4096];
    while (read(fds[0], rec, sizeof rec) == (ssize_t)sizeof rec) {
        idx[got % 4096] = rec[0];
        when[got % 4096] = rec[1];
        got++;
        memcpy(last, rec, sizeof last);
    }
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    /* killed by the fault, or exited by a sanitizer's report of it */
    assert_true((WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) ||
                (WIFEXITED(status) && WEXITSTATUS(status) != 0 &&
                 WEXITSTATUS(status) < 90));
    assert_true(got > 50);
    /* the last frame that ended 8 flush intervals before the last one
     * the child told of: in the dump */
#if defined(__SANITIZE_ADDRESS__)
    const uint64_t margin = 400000000ull;
#else
    const uint64_t margin = 200000000ull;
#endif
    for (uint64_t i = got; i-- > 0 && got - i < 4096;)
        if (when[i % 4096] + margin <= last[1]) {
            before[0] = idx[i % 4096];
            before[1] = when[i % 4096];
            break;
        }
    assert_true(before[1] != 0);
    assert_int_equal(find_dumps(dir, "-sigsegv.cap", path, sizeof path), 1);
    static dump d;
    assert_int_equal(dump_read(&d, path), 0);
    assert_whole(&d);
    assert_string_equal(d.meta_dump, "crash");
    assert_true(d.nframes > 50);
    assert_true(d.idx[d.nframes - 1] >= before[0]);
    assert_true(has_name(&d, "child_work"));

    /* a dump cut short (a second fault while it was written): every
     * whole block before the cut reads, then "truncated" */
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    char cut[450];
    snprintf(cut, sizeof cut, "%s.cut", path);
    char cmd[1000];
    snprintf(cmd, sizeof cmd, "head -c %lld '%s' > '%s'",
             (long long)sb.st_size * 3 / 5, path, cut);
    assert_int_equal(system(cmd), 0);
    static dump c;
    assert_int_equal(dump_read(&c, cut), 0);
    assert_int_equal(c.open, CAP_OK);
    assert_int_equal(c.corrupt, 0);
    assert_int_equal(c.truncated, 1);
    assert_false(c.has_footer);
    assert_true(c.nframes > 0 && c.nframes < d.nframes);
    for (size_t i = 0; i < c.nframes; i++)
        assert_int_equal(c.idx[i], d.idx[i]);
}

/* ---- listen ------------------------------------------------------------- */

typedef struct client {
    int port;
    char path[400];
} client;

/* Connect to the capture's port and save the stream until it ends. */
static void *client_main(void *arg)
{
    client *c = arg;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)c->port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    FILE *out = fopen(c->path, "wb");
    if (fd >= 0 && out &&
        connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
        char buf[65536];
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0) {
            fwrite(buf, 1, (size_t)n, out);
            fflush(out);
        }
    }
    if (out)
        fclose(out);
    if (fd >= 0)
        close(fd);
    return NULL;
}

static void test_listen(void **state)
{
    (void)state;
    char dir[300], path[400];
    make_dir(dir, sizeof dir, "listen");
    snprintf(path, sizeof path, "%s/asked.cap", dir);
    cap_capture_options o = {.flight_seconds = 1.0, .flight_dir = dir,
                             .listen = "127.0.0.1:0",
                             .flush_interval_ms = 20};
    assert_int_equal(cap_open(NULL, &o), CAP_OK);
    client c = {.port = cap_listen_port()};
    assert_true(c.port > 0);
    snprintf(c.path, sizeof c.path, "%s/stream.cap", dir);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, client_main, &c), 0);
    /* the client has its header (it connected) before the frames */
    struct stat sb;
    for (int i = 0; i < 1000 && (stat(c.path, &sb) != 0 || sb.st_size == 0);
         i++)
        sleep_ms(10);
    CAP_THREAD("main");
    frames_for(700, "listened");
    assert_int_equal(cap_flight_dump(path), CAP_OK);
    wait_dumps(1);
    frames_for(100, "listened");
    assert_int_equal(cap_close(), CAP_OK);
    pthread_join(th, NULL);
    static dump d;
    assert_int_equal(dump_read(&d, path), 0);
    assert_whole(&d);
    assert_true(d.nframes > 10);
    assert_true(has_name(&d, "listened"));
    assert_int_equal(dump_read(&d, c.path), 0);
    assert_whole(&d);
    assert_true(d.nframes > 10);
    assert_true(has_name(&d, "listened"));
}

int main(int argc, char **argv)
{
    game_sim_path = argc > 1 ? argv[1] : NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request),
        cmocka_unit_test(test_bound),
        cmocka_unit_test(test_hitch),
        cmocka_unit_test(test_crash),
        cmocka_unit_test(test_listen),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
