/*
 * test_faults.c - a sink that fails never takes the host program down.
 *
 * Full disk (/dev/full, and a file size limit reached mid-capture), an
 * unwritable path, a pipe nobody reads (the stall timeout), a pipe whose
 * reader has gone (no SIGPIPE), a sink slower than the program (full
 * buffers drop, and the drops are counted in the file, exactly), and a
 * non-blocking pipe. In each case: the recording loop keeps running and
 * finishes in bounded time, cap_status and cap_close report the error, the
 * error is logged once, and the file keeps every block written before the
 * fault readable.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <capture/capture.h>

#include "capsum.h"

/* ---- helpers ------------------------------------------------------------- */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_text[4096];
static unsigned log_lines;

static void log_to_buffer(void *user, const char *line)
{
    (void)user;
    pthread_mutex_lock(&log_lock);
    size_t len = strlen(log_text);
    snprintf(log_text + len, sizeof log_text - len, "%s\n", line);
    log_lines++;
    pthread_mutex_unlock(&log_lock);
}

static void log_reset(void)
{
    pthread_mutex_lock(&log_lock);
    log_text[0] = 0;
    log_lines = 0;
    pthread_mutex_unlock(&log_lock);
    cap_set_log(log_to_buffer, NULL);
}

/* The log holds `needle`; prints the log when it does not. */
static int log_has(const char *needle)
{
    pthread_mutex_lock(&log_lock);
    int found = strstr(log_text, needle) != NULL;
    if (!found)
        print_error("log does not contain \"%s\":\n%s", needle, log_text);
    pthread_mutex_unlock(&log_lock);
    return found;
}

/* The log line comes from the writer thread just after the status it
 * explains: wait for it. */
static void log_wait(unsigned lines)
{
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&log_lock);
        unsigned n = log_lines;
        pthread_mutex_unlock(&log_lock);
        if (n >= lines)
            return;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

static unsigned log_count(void)
{
    pthread_mutex_lock(&log_lock);
    unsigned n = log_lines;
    pthread_mutex_unlock(&log_lock);
    return n;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static double since_ms(uint64_t t0)
{
    return (double)(capsum_mono_ns() - t0) / 1e6;
}

static void temp_path(char *buf, size_t n, const char *what)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, n, "%s/cap-faults-%s-%ld.cap", dir && *dir ? dir : "/tmp",
             what, (long)getpid());
}

/* Record `scopes` scopes (every other one nested in the previous) and a
 * frame boundary every 1000; returns the elapsed ms. */
static double record(uint64_t scopes)
{
    uint64_t t0 = capsum_mono_ns();
    for (uint64_t i = 0; i < scopes; i += 2) {
        if (i % 1000 == 0)
            cap_frame_mark();
        CAP_SCOPE("outer");
        CAP_SCOPE("inner");
    }
    return since_ms(t0);
}

/* CPU seconds this process used while the calling thread sleeps `ms`:
 * what the producer's own threads burn when the program does nothing. */
static double cpu_ms_while_sleeping(unsigned ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    sleep_ms(ms);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    return (double)(b.tv_sec - a.tv_sec) * 1e3 +
           (double)(b.tv_nsec - a.tv_nsec) / 1e6;
}

/* Current resident set, KiB, from /proc/self/status. */
static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

/* Copies a pipe into a file until EOF, optionally slowly. */
typedef struct drain {
    int rfd, out;
    unsigned delay_us; /* between 4 KiB reads */
    uint64_t bytes;
    pthread_t thread;
} drain;

static void *drain_main(void *arg)
{
    drain *d = arg;
    char buf[4096];
    for (;;) {
        ssize_t n = read(d->rfd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (write(d->out, buf, (size_t)n) != n)
            break;
        d->bytes += (uint64_t)n;
        if (d->delay_us) {
            struct timespec ts = {0, (long)d->delay_us * 1000L};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

static void drain_start(drain *d, int rfd, const char *path, unsigned delay_us)
{
    memset(d, 0, sizeof *d);
    d->rfd = rfd;
    d->delay_us = delay_us;
    d->out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(d->out >= 0);
    assert_int_equal(pthread_create(&d->thread, NULL, drain_main, d), 0);
}

static void drain_finish(drain *d)
{
    pthread_join(d->thread, NULL);
    close(d->out);
}

/* ---- full disk and bad paths ---------------------------------------------- */

static void dev_full_fails_at_open_with_an_io_error_and_a_log_line(void **state)
{
    (void)state;
    log_reset();
    /* open() of /dev/full succeeds; the header's write fails with ENOSPC,
     * and cap_open writes the header before it returns. */
    assert_int_equal(cap_open("/dev/full", NULL), CAP_E_IO);
    assert_true(log_has("/dev/full"));
    assert_true(log_has(strerror(ENOSPC)));
    assert_int_equal(log_count(), 1);
    assert_int_equal(cap_status(), CAP_E_MISUSE); /* nothing is open */
    {
        CAP_SCOPE("ignored"); /* recording without a capture is a no-op */
    }
    int fd = open("/dev/full", O_WRONLY);
    assert_true(fd >= 0);
    log_reset();
    assert_int_equal(cap_open_fd(fd, NULL), CAP_E_IO);
    assert_true(log_has(strerror(ENOSPC)));
    close(fd);
    /* Nothing was left half-open: a good capture opens and closes. */
    char path[256];
    temp_path(path, sizeof path, "after-full");
    assert_int_equal(cap_open(path, NULL), CAP_OK);
    assert_int_equal(cap_close(), CAP_OK);
    unlink(path);
    cap_set_log(NULL, NULL);
}

static void unwritable_paths_fail_at_open_with_an_io_error_and_a_log_line(
    void **state)
{
    (void)state;
    log_reset();
    const char *missing = "/nonexistent-cap-dir/run.cap";
    assert_int_equal(cap_open(missing, NULL), CAP_E_IO);
    assert_true(log_has(missing));
    assert_true(log_has(strerror(ENOENT)));
    assert_int_equal(cap_status(), CAP_E_MISUSE);

    char dir[256];
    temp_path(dir, sizeof dir, "dir");
    assert_int_equal(mkdir(dir, 0755), 0);
    log_reset();
    assert_int_equal(cap_open(dir, NULL), CAP_E_IO);
    assert_true(log_has(strerror(EISDIR)));
    if (geteuid() != 0) { /* root writes anywhere: permissions prove nothing */
        char ro[300];
        snprintf(ro, sizeof ro, "%s/ro", dir);
        assert_int_equal(mkdir(ro, 0500), 0);
        char file[320];
        snprintf(file, sizeof file, "%s/run.cap", ro);
        log_reset();
        assert_int_equal(cap_open(file, NULL), CAP_E_IO);
        assert_true(log_has(strerror(EACCES)));
        rmdir(ro);
    }
    rmdir(dir);
    cap_set_log(NULL, NULL);
}

/* A file size limit makes the disk "full" after 48 KiB: writes then fail
 * with EFBIG and raise SIGXFSZ, whose default action kills the process.
 * The child leaves SIGXFSZ at its default on purpose. */
#define FSIZE_LIMIT (48 * 1024)

typedef struct fsize_report {
    int status;        /* cap_status once the error was seen */
    int close_result;
    uint64_t frames;   /* frame marks made */
    double after_ms;   /* recording 50 more frames after the error took */
    char log[1024];
} fsize_report;

static void fsize_child(const char *path, int wfd)
{
    struct rlimit lim;
    getrlimit(RLIMIT_FSIZE, &lim);
    lim.rlim_cur = FSIZE_LIMIT;
    setrlimit(RLIMIT_FSIZE, &lim);
    log_reset();
    fsize_report rep = {0};
    cap_capture_options o = {.flush_interval_ms = 10};
    if (cap_open(path, &o) != CAP_OK)
        _exit(10);
    uint64_t t0 = capsum_mono_ns();
    while (cap_status() == CAP_OK && since_ms(t0) < 20000) {
        cap_frame_mark();
        rep.frames++;
        record(400);
        sleep_ms(1);
    }
    rep.status = cap_status();
    uint64_t t1 = capsum_mono_ns();
    for (int i = 0; i < 50; i++) {
        cap_frame_mark();
        record(400);
    }
    rep.after_ms = since_ms(t1);
    rep.close_result = cap_close();
    pthread_mutex_lock(&log_lock);
    snprintf(rep.log, sizeof rep.log, "%s", log_text);
    pthread_mutex_unlock(&log_lock);
    if (write(wfd, &rep, sizeof rep) != (ssize_t)sizeof rep)
        _exit(12);
    _exit(0);
}

static void a_disk_that_fills_mid_capture_stops_the_capture_not_the_program(
    void **state)
{
    (void)state;
    char path[256];
    temp_path(path, sizeof path, "fsize");
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        fsize_child(path, fds[1]);
    }
    close(fds[1]);
    fsize_report rep;
    memset(&rep, 0, sizeof rep);
    ssize_t got = read(fds[0], &rep, sizeof rep);
    close(fds[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFSIGNALED(st))
        print_error("the recording child was killed by signal %d (%s)\n",
                    WTERMSIG(st), strsignal(WTERMSIG(st)));
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(got, (ssize_t)sizeof rep);
    assert_int_equal(rep.status, CAP_E_IO);
    assert_int_equal(rep.close_result, CAP_E_IO);
    if (!strstr(rep.log, strerror(EFBIG)))
        print_error("log: %s\n", rep.log);
    assert_non_null(strstr(rep.log, strerror(EFBIG)));
    /* 50 frames of 400 scopes after the error: no waiting on the sink */
    printf("disk full after %" PRIu64 " frames; 50 more frames took %.1f ms\n",
           rep.frames, rep.after_ms);
    assert_true(rep.after_ms < 2000);

    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_true(sb.st_size <= FSIZE_LIMIT);
    capsum s;
    char d[512];
    assert_int_equal(capsum_read(&s, path), 0);
    if (s.truncated != 1 || s.corrupt || s.frames == 0)
        print_error("%s\n", capsum_describe(&s, d, sizeof d));
    assert_int_equal(s.truncated, 1);
    assert_int_equal(s.corrupt, 0);
    assert_int_equal(s.final_error, CAP_DONE);
    assert_true(s.frames > 0);
    assert_true(s.frames_contiguous);
    assert_int_equal(s.frame_index[0], 0);
    assert_true(s.scopes > 0);
    capsum_free(&s);
    unlink(path);
}

/* ---- pipes ---------------------------------------------------------------- */

static void a_stalled_pipe_never_blocks_the_program_and_fails_after_the_timeout(
    void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    (void)fcntl(fds[1], F_SETPIPE_SZ, 16384); /* 4 pages */
    log_reset();
    cap_capture_options o = {.flush_interval_ms = 10,
                             .buffer_events = 1024,
                             .buffers_per_thread = 2,
                             .stall_timeout_ms = 300};
    assert_int_equal(cap_open_fd(fds[1], &o), CAP_OK);
    /* Nobody reads: the pipe fills after some blocks, then the writer
     * waits for room, then gives up. The program records all along. */
    uint64_t t0 = capsum_mono_ns();
    double worst = 0;
    while (cap_status() == CAP_OK && since_ms(t0) < 20000) {
        double ms = record(20000);
        if (ms > worst)
            worst = ms;
    }
    printf("recording into a stalled pipe: the capture failed after %.0f ms; "
           "the slowest 20000 scopes took %.1f ms\n",
           since_ms(t0), worst);
    assert_int_equal(cap_status(), CAP_E_IO);
    assert_true(worst < 2000);
    log_wait(1);
    assert_true(log_has(strerror(ETIMEDOUT)));
    assert_int_equal(log_count(), 1);
    assert_true(record(100000) < 2000); /* and after the error */
    t0 = capsum_mono_ns();
    assert_int_equal(cap_close(), CAP_E_IO);
    assert_true(since_ms(t0) < 1000);
    cap_producer_stats ps;
    cap_get_stats(&ps);
    assert_true(ps.dropped_scopes > 0);

    /* What reached the pipe before the stall is a valid, truncated file. */
    char path[256];
    temp_path(path, sizeof path, "stalled");
    close(fds[1]);
    drain d;
    drain_start(&d, fds[0], path, 0);
    drain_finish(&d);
    close(fds[0]);
    assert_true(d.bytes > 0 && d.bytes <= 16384);
    capsum s;
    char desc[512];
    assert_int_equal(capsum_read(&s, path), 0);
    if (s.truncated != 1 || s.corrupt)
        print_error("%s\n", capsum_describe(&s, desc, sizeof desc));
    assert_int_equal(s.truncated, 1);
    assert_int_equal(s.corrupt, 0);
    assert_int_equal(s.final_error, CAP_DONE);
    capsum_free(&s);
    unlink(path);
    cap_set_log(NULL, NULL);
}

static void a_pipe_whose_reader_left_is_an_error_not_a_signal(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    log_reset();
    cap_capture_options o = {.flush_interval_ms = 10};
    assert_int_equal(cap_open_fd(fds[1], &o), CAP_OK);
    record(10000);
    close(fds[0]); /* the reader goes away */
    uint64_t t0 = capsum_mono_ns();
    while (cap_status() == CAP_OK && since_ms(t0) < 5000)
        record(2000);
    /* SIGPIPE's default action would have killed this process by now. */
    assert_int_equal(cap_status(), CAP_E_IO);
    log_wait(1);
    assert_true(log_has(strerror(EPIPE)));
    assert_int_equal(cap_close(), CAP_E_IO);
    sigset_t pending;
    sigpending(&pending);
    assert_false(sigismember(&pending, SIGPIPE));
    close(fds[1]);
    cap_set_log(NULL, NULL);
}

/* The program outruns its sink: with a small pool of buffers per thread
 * and a pipe nobody drains during the loop, threads drop scopes and count
 * them; the count reaches the file, and every scope is either read back or
 * counted as dropped. Memory stays at the pool's size. */
#define DROP_THREADS 2
#define DROP_SCOPES 2000000u /* per thread: 4e6 events, 64 MB unbounded */

static void *drop_thread(void *arg)
{
    (void)arg;
    CAP_THREAD("dropper");
    record(DROP_SCOPES);
    return NULL;
}

static void full_buffers_drop_count_in_the_file_and_memory_stays_bounded(
    void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    (void)fcntl(fds[1], F_SETPIPE_SZ, 16384);
    cap_capture_options o = {.flush_interval_ms = 10,
                             .buffer_events = 1024,
                             .buffers_per_thread = 2,
                             .stall_timeout_ms = 60000};
    assert_int_equal(cap_open_fd(fds[1], &o), CAP_OK);
    long rss0 = rss_kib();
    uint64_t t0 = capsum_mono_ns();
    pthread_t th[DROP_THREADS];
    for (int i = 0; i < DROP_THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, drop_thread, NULL), 0);
    for (int i = 0; i < DROP_THREADS; i++)
        pthread_join(th[i], NULL);
    double ms = since_ms(t0);
    long rss1 = rss_kib();
    printf("%d threads x %u scopes into a stalled pipe: %.1f ms, RSS %+ld "
           "KiB\n",
           DROP_THREADS, DROP_SCOPES, ms, rss1 - rss0);
    assert_true(ms < 10000);
    assert_true(rss1 - rss0 < 16 * 1024);
    assert_int_equal(cap_status(), CAP_OK); /* slow is not an error */

    /* Now drain: the producer catches up and closes the file whole. */
    char path[256];
    temp_path(path, sizeof path, "drops");
    drain d;
    drain_start(&d, fds[0], path, 0);
    assert_int_equal(cap_close(), CAP_OK);
    cap_producer_stats ps;
    cap_get_stats(&ps);
    close(fds[1]);
    drain_finish(&d);
    close(fds[0]);

    capsum s;
    char desc[512];
    assert_int_equal(capsum_read(&s, path), 0);
    printf("read back %" PRIu64 " scopes, %" PRIu64 " dropped\n", s.scopes,
           s.stats.dropped_scopes);
    if (!s.stats.has_footer || s.corrupt || s.truncated)
        print_error("%s\n", capsum_describe(&s, desc, sizeof desc));
    assert_true(s.stats.has_footer);
    assert_int_equal(s.truncated, 0);
    assert_int_equal(s.corrupt, 0);
    assert_true(s.stats.dropped_scopes > 0);
    assert_int_equal(s.stats.dropped_scopes, ps.dropped_scopes);
    assert_int_equal(s.scopes + s.stats.dropped_scopes,
                     (uint64_t)DROP_THREADS * DROP_SCOPES);
    assert_int_equal(s.stats.closed_at_end, 0);
    /* every frame boundary is kept: frames are not dropped */
    assert_int_equal(s.frames, (uint64_t)DROP_THREADS * (DROP_SCOPES / 1000));
    capsum_free(&s);
    unlink(path);
}

/* A descriptor the program made non-blocking is written whole: EAGAIN
 * waits for room instead of failing the capture. */
static void a_nonblocking_pipe_is_written_whole(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(fcntl(fds[1], F_SETFL, O_NONBLOCK), 0);
    char path[256];
    temp_path(path, sizeof path, "nonblock");
    drain d;
    drain_start(&d, fds[0], path, 200); /* a slow reader */
    cap_capture_options o = {.flush_interval_ms = 10};
    assert_int_equal(cap_open_fd(fds[1], &o), CAP_OK);
    record(200000);
    assert_int_equal(cap_close(), CAP_OK);
    close(fds[1]);
    drain_finish(&d);
    close(fds[0]);
    capsum s;
    assert_int_equal(capsum_read(&s, path), 0);
    assert_true(s.stats.has_footer);
    assert_int_equal(s.corrupt, 0);
    assert_int_equal(s.scopes + s.stats.dropped_scopes, 200000);
    assert_int_equal(s.frames, 200);
    capsum_free(&s);
    unlink(path);
}

/* ---- an idle writer once recording stopped -------------------------------- */

/* Once a fixed window closed, or the sink failed, the writer has nothing to
 * flush: it must sleep, not spin on a flush deadline that no longer moves
 * (issue 46: 21.6 s of CPU in the 22 s after a window closed). Idle, the
 * writer wakes once a flush interval to free retired buffers: microseconds
 * in 500 ms. A spinning one takes the whole 500 ms of a core, and still
 * over 100 ms on a machine loaded by a build beside the test. */
#define IDLE_SLEEP_MS 500
#define IDLE_CPU_MS 50.0

static void the_writer_sleeps_after_a_fixed_window_closed(void **state)
{
    (void)state;
    char path[256];
    temp_path(path, sizeof path, "window");
    log_reset();
    cap_capture_options o = {.record_seconds = 0.05, .flush_interval_ms = 10};
    assert_int_equal(cap_open(path, &o), CAP_OK);
    uint64_t t0 = capsum_mono_ns();
    while (since_ms(t0) < 200) { /* the window closes 50 ms in */
        record(2000);
        sleep_ms(1);
    }
    log_wait(1);
    assert_true(log_has("recording window of the capture is over"));
    double cpu = cpu_ms_while_sleeping(IDLE_SLEEP_MS);
    printf("after the window closed: %.1f ms of CPU in %d ms asleep\n", cpu,
           IDLE_SLEEP_MS);
    assert_true(cpu < IDLE_CPU_MS);
    assert_int_equal(cap_close(), CAP_OK);
    capsum s;
    assert_int_equal(capsum_read(&s, path), 0);
    assert_true(s.frames > 0);
    assert_int_equal(s.corrupt, 0);
    capsum_free(&s);
    unlink(path);
    cap_set_log(NULL, NULL);
}

static void the_writer_sleeps_after_its_sink_failed(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    log_reset();
    cap_capture_options o = {.flush_interval_ms = 10};
    assert_int_equal(cap_open_fd(fds[1], &o), CAP_OK);
    close(fds[0]); /* the reader goes: the next block fails with EPIPE */
    uint64_t t0 = capsum_mono_ns();
    while (cap_status() == CAP_OK && since_ms(t0) < 5000)
        record(2000);
    assert_int_equal(cap_status(), CAP_E_IO);
    record(2000); /* the program goes on recording into nothing */
    double cpu = cpu_ms_while_sleeping(IDLE_SLEEP_MS);
    printf("after the sink failed: %.1f ms of CPU in %d ms asleep\n", cpu,
           IDLE_SLEEP_MS);
    assert_true(cpu < IDLE_CPU_MS);
    assert_int_equal(cap_close(), CAP_E_IO);
    close(fds[1]);
    cap_set_log(NULL, NULL);
}

/* A failed case must not leave its capture open for the next one. */
static int close_leftovers(void **state)
{
    (void)state;
    (void)cap_close();
    cap_set_log(NULL, NULL);
    return 0;
}

int main(void)
{
#define CASE(f) cmocka_unit_test_teardown(f, close_leftovers)
    const struct CMUnitTest tests[] = {
        CASE(dev_full_fails_at_open_with_an_io_error_and_a_log_line),
        CASE(unwritable_paths_fail_at_open_with_an_io_error_and_a_log_line),
        CASE(a_disk_that_fills_mid_capture_stops_the_capture_not_the_program),
        CASE(a_stalled_pipe_never_blocks_the_program_and_fails_after_the_timeout),
        CASE(a_pipe_whose_reader_left_is_an_error_not_a_signal),
        CASE(full_buffers_drop_count_in_the_file_and_memory_stays_bounded),
        CASE(a_nonblocking_pipe_is_written_whole),
        CASE(the_writer_sleeps_after_a_fixed_window_closed),
        CASE(the_writer_sleeps_after_its_sink_failed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
