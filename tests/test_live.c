/*
 * test_live - a capture served over TCP (loopback only; every test bounded
 * in time and stops by itself).
 *
 * A late client gets every name and every frame after it connected, equal
 * to the program's own file; a client that reads nothing costs the program
 * nothing and finds the drops counted in its stream; a stalled client is
 * disconnected; a port in use is one log line; killing either side leaves
 * complete files; the socket alone works; a saved stream is a valid file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture/cap_reader.h"
#include "capture/capture.h"
#include "remote.h"

/* ---- helpers ------------------------------------------------------------ */

static char file_path[64], remote_path[64];

static void make_paths(void)
{
    snprintf(file_path, sizeof file_path, "/tmp/cap_test_live_XXXXXX");
    int fd = mkstemp(file_path);
    assert_true(fd >= 0);
    close(fd);
    snprintf(remote_path, sizeof remote_path, "/tmp/cap_test_live_r_XXXXXX");
    fd = mkstemp(remote_path);
    assert_true(fd >= 0);
    close(fd);
}

static void remove_paths(void)
{
    unlink(file_path);
    unlink(remote_path);
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_text[16384];

static void log_to_buffer(void *user, const char *line)
{
    (void)user;
    pthread_mutex_lock(&log_lock);
    size_t n = strlen(log_text);
    snprintf(log_text + n, sizeof log_text - n, "%s\n", line);
    pthread_mutex_unlock(&log_lock);
}

static int log_count(const char *needle)
{
    pthread_mutex_lock(&log_lock);
    int n = 0;
    for (const char *p = log_text; (p = strstr(p, needle)); p++)
        n++;
    pthread_mutex_unlock(&log_lock);
    return n;
}

static void log_reset(void)
{
    pthread_mutex_lock(&log_lock);
    log_text[0] = 0;
    pthread_mutex_unlock(&log_lock);
    cap_set_log(log_to_buffer, NULL);
}

static int connect_port(int port, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    if (rcvbuf)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    return fd;
}

/* ---- the program under test: frames and workers -------------------------- */

typedef struct program {
    int stop;      /* atomic */
    int workers;
    unsigned frame_us; /* sleep per frame */
    int busy;      /* workers record without pause */
    pthread_t main_thread, worker[4];
    uint64_t frames; /* atomic */
} program;

static void *program_worker(void *arg)
{
    program *p = arg;
    CAP_THREAD("worker");
    { CAP_SCOPE("startup_only"); } /* named once, before any client */
    while (!__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) {
        for (int i = 0; i < (p->busy ? 200 : 1); i++) {
            CAP_SCOPE("job");
            { CAP_SCOPE("inner"); }
        }
        sleep_ms(1);
    }
    return NULL;
}

static void *program_main(void *arg)
{
    program *p = arg;
    CAP_THREAD("main");
    while (!__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) {
        CAP_FRAME_MARK();
        CAP_SCOPE("frame");
        { CAP_SCOPE("update"); struct timespec ts = {0, (long)p->frame_us * 1000L}; nanosleep(&ts, NULL); }
        { CAP_SCOPE("render"); }
        __atomic_fetch_add(&p->frames, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void program_start(program *p)
{
    pthread_create(&p->main_thread, NULL, program_main, p);
    for (int i = 0; i < p->workers; i++)
        pthread_create(&p->worker[i], NULL, program_worker, p);
}

static void program_stop(program *p)
{
    __atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
    pthread_join(p->main_thread, NULL);
    for (int i = 0; i < p->workers; i++)
        pthread_join(p->worker[i], NULL);
}

/* ---- reading captures back ---------------------------------------------- */

typedef struct rec {
    int kind; /* 0 frame, 1 scope */
    char thread[16];
    char name[16];
    uint32_t depth;
    uint64_t index;
    int64_t begin, end;
} rec;

typedef struct cap_read {
    rec *r;
    size_t n, cap;
    cap_reader_stats st;
    int startup_named;
    int64_t first_begin, last_begin; /* of frames */
    uint64_t first_index, last_index;
    int64_t stream_start; /* stream_start_ns, INT64_MIN when absent */
} cap_read;

static void add_rec(cap_read *c, rec x)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 4096;
        c->r = realloc(c->r, c->cap * sizeof *c->r);
        assert_non_null(c->r);
    }
    c->r[c->n++] = x;
}

static void read_all(cap_reader *r, cap_read *c)
{
    memset(c, 0, sizeof *c);
    const char *ss = cap_reader_meta_get(r, "stream_start_ns");
    c->stream_start = ss ? strtoll(ss, NULL, 10) : INT64_MIN;
    cap_event ev;
    cap_result res;
    int first = 1;
    while ((res = cap_reader_next(r, &ev)) != CAP_DONE) {
        if (res == CAP_E_TRUNCATED || res == CAP_E_CORRUPT)
            continue;
        assert_int_equal(res, CAP_OK);
        rec x = {0};
        if (ev.kind == CAP_EV_FRAME) {
            x.kind = 0;
            x.index = ev.u.frame.index;
            x.begin = ev.u.frame.begin_ns;
            x.end = ev.u.frame.end_ns;
            if (first)
                c->first_begin = x.begin, c->first_index = x.index;
            first = 0;
            c->last_begin = x.begin;
            c->last_index = x.index;
            add_rec(c, x);
        } else if (ev.kind == CAP_EV_SCOPE) {
            x.kind = 1;
            const char *tn = cap_reader_thread_name(r, ev.u.scope.tid);
            const char *nn = cap_reader_name(r, ev.u.scope.name);
            assert_non_null(tn);
            assert_non_null(nn);
            snprintf(x.thread, sizeof x.thread, "%s", tn);
            snprintf(x.name, sizeof x.name, "%s", nn);
            x.depth = ev.u.scope.depth;
            x.begin = ev.u.scope.begin_ns;
            x.end = ev.u.scope.end_ns;
            add_rec(c, x);
        }
    }
    for (uint32_t id = 1; id <= cap_reader_max_name_id(r); id++) {
        const char *nn = cap_reader_name(r, id);
        if (nn && strcmp(nn, "startup_only") == 0)
            c->startup_named = 1;
    }
    c->st = *cap_reader_get_stats(r);
    cap_reader_close(r);
}

static void read_path(const char *path, cap_read *c)
{
    cap_reader *r;
    char d[256];
    cap_result res = cap_reader_open(&r, path, d, sizeof d);
    if (res != CAP_OK)
        fail_msg("%s: %s", path, d);
    read_all(r, c);
}

static int rec_cmp(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind - y->kind;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    int k = strcmp(x->thread, y->thread);
    if (k)
        return k;
    k = strcmp(x->name, y->name);
    if (k)
        return k;
    return (int)x->depth - (int)y->depth;
}

static int contains(const cap_read *c, const rec *x)
{
    return bsearch(x, c->r, c->n, sizeof *c->r, rec_cmp) != NULL;
}

/* ---- tests -------------------------------------------------------------- */

typedef struct remote_run {
    rem_options o;
    int rc;
} remote_run;

static void *remote_thread(void *arg)
{
    remote_run *rr = arg;
    rr->rc = rem_record(&rr->o);
    return NULL;
}

static FILE *devnull(void)
{
    static FILE *f;
    if (!f)
        f = fopen("/dev/null", "w");
    return f;
}

/* major: the format written (0: the default, 4.0's groups of blocks,
 * whose client streams begin at a group the writer starts for them; 3:
 * 3.1, each block on its own) */
static void late_client(unsigned major)
{
    make_paths();
    log_reset();
    cap_capture_options o = {.listen = "127.0.0.1:0", .flush_interval_ms = 20,
                             .format_major = major};
    assert_int_equal(cap_open(file_path, &o), CAP_OK);
    int port = cap_listen_port();
    assert_true(port > 0);
    program p = {.workers = 3, .frame_us = 2000};
    program_start(&p);
    sleep_ms(300); /* the client connects late */
    char src[32];
    snprintf(src, sizeof src, "127.0.0.1:%d", port);
    remote_run rr = {{.source = src, .out = remote_path, .seconds = 0.4,
                      .connect_timeout = 5, .quiet = 1, .diag = devnull()},
                     -1};
    remote_thread(&rr);
    assert_int_equal(rr.rc, TOOL_EXIT_OK);
    sleep_ms(100);
    program_stop(&p);
    assert_int_equal(cap_close(), CAP_OK);
    cap_set_log(NULL, NULL);
    assert_int_equal(log_count(" connected\n"), 1);

    cap_read f, r;
    read_path(file_path, &f);
    read_path(remote_path, &r);
    assert_true(f.st.has_footer && r.st.has_footer);
    assert_int_equal(r.st.corrupt_chunks, 0);
    assert_int_equal(r.st.unnamed_ids, 0);
    assert_true(r.startup_named); /* used only before the client came */
    /* 0.4 s of 2 ms frames, the first after the connection */
    assert_true(r.last_index - r.first_index + 1 >= 50);
    assert_true(r.first_index > f.first_index);
    qsort(f.r, f.n, sizeof *f.r, rec_cmp);
    size_t frames = 0, scopes = 0;
    for (size_t i = 0; i < r.n; i++) {
        if (!contains(&f, &r.r[i]))
            fail_msg("the remote %s %s at %lld ns is not in the file",
                     r.r[i].kind ? "scope" : "frame", r.r[i].name,
                     (long long)r.r[i].begin);
        frames += r.r[i].kind == 0;
        scopes += r.r[i].kind == 1;
    }
    /* every frame of the window, and every scope inside it, arrived */
    qsort(r.r, r.n, sizeof *r.r, rec_cmp);
    size_t want_frames = 0, want_scopes = 0;
    for (size_t i = 0; i < f.n; i++) {
        const rec *x = &f.r[i];
        if (x->kind == 0 && x->index >= r.first_index &&
            x->index <= r.last_index) {
            want_frames++;
            assert_true(contains(&r, x));
        }
        if (x->kind == 1 && x->begin >= r.first_begin + 5000000 &&
            x->end <= r.last_begin) {
            want_scopes++;
            if (!contains(&r, x))
                fail_msg("the file's scope %s/%s at %lld ns is missing "
                         "remotely", x->thread, x->name, (long long)x->begin);
        }
    }
    assert_int_equal(frames, want_frames);
    assert_true(want_scopes > 100);
    assert_true(scopes >= want_scopes);
    free(f.r);
    free(r.r);
    remove_paths();
}

static void a_late_client_gets_every_name_and_every_frame_after_it_connected(
    void **state)
{
    (void)state;
    late_client(0);
}

static void a_late_client_of_3_1_gets_the_same(void **state)
{
    (void)state;
    late_client(3);
}

typedef struct stream_read {
    int fd;
    FILE *save; /* the raw bytes, when not NULL */
    cap_read c;
} stream_read;

static void *stream_reader(void *arg)
{
    stream_read *s = arg;
    int fd = s->fd;
    if (s->save) {
        /* keep the raw bytes, then read them as a file */
        char buf[65536];
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0)
            fwrite(buf, 1, (size_t)n, s->save);
        close(fd);
        return NULL;
    }
    cap_reader *r;
    char d[256];
    cap_result res = cap_reader_open_fd(&r, fd, d, sizeof d);
    if (res != CAP_OK)
        fail_msg("stream: %s", d);
    read_all(r, &s->c);
    return NULL;
}

/* major: as in late_client (in 4.0 a block left out takes the rest of
 * its group with it, and the stream goes on at the next group) */
static void drops_counted(unsigned major)
{
    make_paths();
    log_reset();
    cap_capture_options o = {.listen = "127.0.0.1:0",
                             .flush_interval_ms = 20,
                             .listen_queue_bytes = 1, /* one block */
                             .stall_timeout_ms = 4000,
                             .format_major = major};
    assert_int_equal(cap_open(file_path, &o), CAP_OK);
    program p = {.workers = 2, .frame_us = 1000, .busy = 1};
    program_start(&p);
    int fd = connect_port(cap_listen_port(), 4096);
    sleep_ms(1000); /* read nothing while the program records hard */
    uint64_t frames_before = __atomic_load_n(&p.frames, __ATOMIC_RELAXED);
    stream_read s = {.fd = fd};
    pthread_t th;
    pthread_create(&th, NULL, stream_reader, &s);
    sleep_ms(300);
    program_stop(&p);
    assert_int_equal(cap_close(), CAP_OK);
    pthread_join(th, NULL);
    cap_set_log(NULL, NULL);
    /* the program kept its pace: ~1 ms frames for a second */
    assert_true(frames_before >= 300);
    cap_producer_stats ps;
    cap_get_stats(&ps);
    assert_int_equal(ps.dropped_scopes, 0); /* its own file lost nothing */
    /* the client's stream is complete and says what it lost */
    assert_true(s.c.st.has_footer);
    assert_int_equal(s.c.st.corrupt_chunks, 0);
    if (!(s.c.st.dropped_scopes > 0))
        fail_msg("no drops: %llu chunks, %llu scopes, %llu frames; log:\n%s",
                 (unsigned long long)s.c.st.chunks,
                 (unsigned long long)s.c.st.scopes,
                 (unsigned long long)s.c.st.frames, log_text);
    if (log_count("could not take") != 1)
        fail_msg("log:\n%s", log_text);
    /* received + counted as lost = the file's scopes from the moment the
     * client was attached (give or take the block being assembled then) */
    cap_read f;
    read_path(file_path, &f);
    assert_true(s.c.stream_start != INT64_MIN);
    uint64_t after = 0, near = 0;
    for (size_t i = 0; i < f.n; i++) {
        after += f.r[i].kind == 1 && f.r[i].end > s.c.stream_start;
        near += f.r[i].kind == 1 && f.r[i].end > s.c.stream_start - 100000000;
    }
    uint64_t got = s.c.st.scopes + s.c.st.dropped_scopes;
    if (got < after || got > near)
        fail_msg("%llu received + %llu counted lost, not within [%llu, %llu]",
                 (unsigned long long)s.c.st.scopes,
                 (unsigned long long)s.c.st.dropped_scopes,
                 (unsigned long long)after, (unsigned long long)near);
    free(f.r);
    free(s.c.r);
    remove_paths();
}

static void a_client_that_reads_nothing_costs_nothing_and_its_drops_are_counted(
    void **state)
{
    (void)state;
    drops_counted(0);
}

static void drops_in_3_1_are_counted_the_same(void **state)
{
    (void)state;
    drops_counted(3);
}

static void a_stalled_client_is_disconnected_and_the_program_goes_on(
    void **state)
{
    (void)state;
    make_paths();
    log_reset();
    /* large blocks (200 ms each): the few bytes at a time the kernel
     * still takes from a client that reads nothing never make one whole */
    cap_capture_options o = {.listen = "127.0.0.1:0",
                             .flush_interval_ms = 200,
                             .listen_queue_bytes = 1,
                             .stall_timeout_ms = 300};
    assert_int_equal(cap_open(file_path, &o), CAP_OK);
    program p = {.workers = 2, .frame_us = 1000, .busy = 1};
    program_start(&p);
    int fd = connect_port(cap_listen_port(), 4096);
    sleep_ms(2000);
    program_stop(&p);
    assert_int_equal(cap_close(), CAP_OK);
    cap_set_log(NULL, NULL);
    close(fd);
    if (log_count("took less than 64 KiB in 300 ms") != 1)
        fail_msg("log:\n%s", log_text);
    cap_read f;
    read_path(file_path, &f);
    assert_true(f.st.has_footer);
    assert_true(f.n > 1000);
    free(f.r);
    remove_paths();
}

static void the_port_in_use_is_one_log_line_and_recording_goes_on(void **state)
{
    (void)state;
    make_paths();
    log_reset();
    int busy = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(busy, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(busy, 1), 0);
    socklen_t sl = sizeof sa;
    getsockname(busy, (struct sockaddr *)&sa, &sl);
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", ntohs(sa.sin_port));
    cap_capture_options o = {.listen = addr};
    assert_int_equal(cap_open(file_path, &o), CAP_OK);
    assert_int_equal(cap_listen_port(), 0);
    program p = {.workers = 1, .frame_us = 1000};
    program_start(&p);
    sleep_ms(300);
    program_stop(&p);
    assert_int_equal(cap_close(), CAP_OK);
    cap_set_log(NULL, NULL);
    close(busy);
    assert_int_equal(log_count("cannot listen on"), 1);
    assert_int_equal(log_count("\n"), 1); /* and nothing else */
    cap_read f;
    read_path(file_path, &f);
    assert_true(f.st.has_footer);
    assert_true(f.n > 20);
    free(f.r);
    /* the socket alone cannot go on: an error, still one line */
    log_reset();
    o.listen = addr;
    busy = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(busy, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    assert_int_equal(bind(busy, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(busy, 1), 0);
    assert_int_equal(cap_open(NULL, &o), CAP_E_IO);
    assert_int_equal(log_count("\n"), 1);
    close(busy);
    cap_set_log(NULL, NULL);
    assert_int_equal(cap_open(NULL, NULL), CAP_E_MISUSE); /* no sink at all */
    remove_paths();
}

static void killing_the_client_then_closing_and_reopening_is_clean(void **state)
{
    (void)state;
    make_paths();
    log_reset();
    cap_capture_options o = {.listen = "127.0.0.1:0", .flush_interval_ms = 20};
    assert_int_equal(cap_open(file_path, &o), CAP_OK);
    int port = cap_listen_port();
    program p = {.workers = 2, .frame_us = 1000};
    program_start(&p);
    int fd = connect_port(port, 0);
    char buf[4096];
    assert_true(read(fd, buf, sizeof buf) > 0);
    struct linger lg = {1, 0}; /* a reset, as a killed client leaves */
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(fd);
    sleep_ms(300);
    program_stop(&p);
    assert_int_equal(cap_close(), CAP_OK);
    assert_int_equal(log_count("capture client"), 2); /* came, went */
    cap_read f;
    read_path(file_path, &f);
    assert_true(f.st.has_footer);
    free(f.r);

    /* reopen on the same port, the socket alone; a stream saved raw is a
     * valid capture file */
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    o.listen = addr;
    assert_int_equal(cap_open(NULL, &o), CAP_OK);
    assert_int_equal(cap_listen_port(), port);
    program q = {.workers = 1, .frame_us = 1000};
    program_start(&q);
    stream_read s = {.fd = connect_port(port, 0),
                     .save = fopen(remote_path, "wb")};
    assert_non_null(s.save);
    pthread_t th;
    pthread_create(&th, NULL, stream_reader, &s);
    sleep_ms(300);
    program_stop(&q);
    assert_int_equal(cap_close(), CAP_OK);
    pthread_join(th, NULL);
    fclose(s.save);
    cap_set_log(NULL, NULL);
    cap_read r;
    read_path(remote_path, &r); /* as a file: header, footer, trailer */
    assert_true(r.st.has_footer);
    assert_int_equal(r.st.corrupt_chunks, 0);
    assert_int_equal(r.st.truncated, 0);
    assert_true(r.startup_named);
    assert_true(r.last_index > r.first_index);
    free(r.r);
    remove_paths();
}

static void killing_the_program_or_interrupting_leaves_a_complete_file(
    void **state)
{
    (void)state;
    make_paths();
    int pp[2];
    assert_int_equal(pipe(pp), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        cap_set_log(NULL, NULL);
        close(pp[0]);
        cap_capture_options o = {.listen = "127.0.0.1:0",
                                 .flush_interval_ms = 20};
        if (cap_open(NULL, &o) != CAP_OK)
            _exit(1);
        int port = cap_listen_port();
        if (write(pp[1], &port, sizeof port) != sizeof port)
            _exit(1);
        program p = {.workers = 2, .frame_us = 1000};
        program_start(&p);
        sleep_ms(10000); /* killed long before */
        _exit(0);
    }
    close(pp[1]);
    int port = 0;
    assert_int_equal(read(pp[0], &port, sizeof port), (ssize_t)sizeof port);
    close(pp[0]);
    char src[32];
    snprintf(src, sizeof src, "127.0.0.1:%d", port);
    remote_run rr = {{.source = src, .out = remote_path, .connect_timeout = 5,
                      .diag = devnull()},
                     -1};
    pthread_t th;
    pthread_create(&th, NULL, remote_thread, &rr);
    sleep_ms(500);
    kill(pid, SIGKILL);
    pthread_join(th, NULL);
    waitpid(pid, NULL, 0);
    assert_int_equal(rr.rc, TOOL_EXIT_INCOMPLETE);
    cap_read r;
    read_path(remote_path, &r);
    assert_true(r.st.has_footer);
    assert_int_equal(r.st.corrupt_chunks, 0);
    assert_true(r.last_index > r.first_index);
    free(r.r);

    /* Ctrl-C on the client: the same complete file */
    cap_capture_options o = {.listen = "127.0.0.1:0", .flush_interval_ms = 20};
    assert_int_equal(cap_open(file_path, &o), CAP_OK);
    program p = {.workers = 1, .frame_us = 1000};
    program_start(&p);
    snprintf(src, sizeof src, "127.0.0.1:%d", cap_listen_port());
    rr.rc = -1;
    pthread_create(&th, NULL, remote_thread, &rr);
    sleep_ms(400);
    pthread_kill(th, SIGINT);
    pthread_join(th, NULL);
    program_stop(&p);
    assert_int_equal(cap_close(), CAP_OK);
    assert_int_equal(rr.rc, TOOL_EXIT_INCOMPLETE);
    read_path(remote_path, &r);
    assert_true(r.st.has_footer);
    assert_true(r.last_index > r.first_index);
    free(r.r);

    /* nobody listening: exit code 3 once the timeout is over */
    rr.o.connect_timeout = 0.3;
    assert_int_equal(rem_record(&rr.o), TOOL_EXIT_USAGE);
    remove_paths();
}


/* Everything a reader yields from a capture, in order, as one digest. */
typedef struct digest {
    uint64_t hash, events, corrupt, truncated;
    cap_reader_stats st;
} digest;

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 1099511628211ull;
}

static digest digest_of(cap_reader *r)
{
    digest d = {.hash = 1469598103934665603ull};
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) != CAP_DONE) {
        if (res == CAP_E_CORRUPT) {
            d.corrupt++;
            continue;
        }
        if (res == CAP_E_TRUNCATED) {
            d.truncated++;
            continue;
        }
        assert_int_equal(res, CAP_OK);
        d.events++;
        d.hash = mix(d.hash, ev.kind);
        switch (ev.kind) {
        case CAP_EV_FRAME:
            d.hash = mix(mix(d.hash, ev.u.frame.index),
                         (uint64_t)ev.u.frame.begin_ns);
            break;
        case CAP_EV_SCOPE: {
            const char *n = cap_reader_name(r, ev.u.scope.name);
            d.hash = mix(mix(mix(d.hash, ev.u.scope.tid),
                             (uint64_t)ev.u.scope.begin_ns),
                         (uint64_t)ev.u.scope.end_ns);
            for (; n && *n; n++)
                d.hash = mix(d.hash, (uint8_t)*n);
            break;
        }
        case CAP_EV_GPU_SPAN:
            d.hash = mix(mix(d.hash, ev.u.gpu_span.name),
                         (uint64_t)ev.u.gpu_span.duration_ns);
            break;
        case CAP_EV_COUNTER:
            d.hash = mix(d.hash, (uint64_t)ev.u.counter.time_ns);
            break;
        default:
            break;
        }
    }
    d.st = *cap_reader_get_stats(r);
    cap_reader_close(r);
    return d;
}

typedef struct feeder {
    int fd;
    const char *path;
} feeder;

static void *feed_pipe(void *arg)
{
    feeder *f = arg;
    FILE *in = fopen(f->path, "rb");
    char buf[4096];
    size_t n;
    while (in && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (write(f->fd, buf, n) != (ssize_t)n)
            break;
    if (in)
        fclose(in);
    close(f->fd);
    return NULL;
}

static void a_stream_reads_as_the_file_does_damage_included(void **state)
{
    (void)state;
    const char *dir = getenv("CAP_FIXTURES");
    if (!dir)
        skip();
    /* and demo.cap with its third chunk header broken: the reader has to
     * resynchronise on the bytes that follow (no seeking on a pipe) */
    char broken[64] = "/tmp/cap_test_live_broken_XXXXXX";
    {
        char src[512];
        snprintf(src, sizeof src, "%s/demo.cap", dir);
        FILE *in = fopen(src, "rb");
        assert_non_null(in);
        static uint8_t buf[1 << 20];
        size_t n = fread(buf, 1, sizeof buf, in);
        fclose(in);
        int seen = 0;
        for (size_t k = 0; k + 4 <= n; k++)
            if (memcmp(buf + k, "CHNK", 4) == 0 && ++seen == 3) {
                buf[k + 1] ^= 0xff;
                break;
            }
        assert_int_equal(seen, 3);
        int fd = mkstemp(broken);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, buf, n), (ssize_t)n);
        close(fd);
    }
    const char *names[] = {"demo.cap", "demo-truncated.cap", "demo-corrupt.cap",
                           "counted-losses.cap", "unnamed.cap", broken};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[512];
        if (names[i][0] == '/')
            snprintf(path, sizeof path, "%s", names[i]);
        else
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        cap_reader *r;
        char d[256];
        assert_int_equal(cap_reader_open(&r, path, d, sizeof d), CAP_OK);
        digest want = digest_of(r);
        int pp[2];
        assert_int_equal(pipe(pp), 0);
        feeder f = {pp[1], path};
        pthread_t th;
        pthread_create(&th, NULL, feed_pipe, &f);
        assert_int_equal(cap_reader_open_fd(&r, pp[0], d, sizeof d), CAP_OK);
        assert_int_equal(cap_reader_file_size(r), 0);
        digest got = digest_of(r);
        pthread_join(th, NULL);
        if (got.hash != want.hash || got.events != want.events ||
            got.corrupt != want.corrupt || got.truncated != want.truncated ||
            got.st.has_footer != want.st.has_footer ||
            got.st.dropped_scopes != want.st.dropped_scopes ||
            got.st.unnamed_ids != want.st.unnamed_ids)
            fail_msg("%s through a pipe: %llu events, %llu corrupt, %llu "
                     "truncated; from the file: %llu, %llu, %llu",
                     names[i], (unsigned long long)got.events,
                     (unsigned long long)got.corrupt,
                     (unsigned long long)got.truncated,
                     (unsigned long long)want.events,
                     (unsigned long long)want.corrupt,
                     (unsigned long long)want.truncated);
        if (names[i] == broken)
            assert_true(got.corrupt > 0 && got.events > 1000);
    }
    unlink(broken);
}


/* ---- hostile and faulty peers (issue 46) --------------------------------- */

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Wait up to max_ms for the log to hold needle; the seconds waited, or -1. */
static double wait_log(const char *needle, unsigned max_ms)
{
    double t0 = mono_s();
    while (!log_count(needle)) {
        if (mono_s() - t0 > max_ms / 1000.0)
            return -1;
        sleep_ms(10);
    }
    return mono_s() - t0;
}

static void a_client_that_never_reads_is_cut_off_within_the_limit(
    void **state)
{
    (void)state;
    make_paths();
    log_reset();
    /* the default queue (8 MiB, a kernel send buffer of 1 MiB that Linux
     * doubles): at this program's few hundred KB/s, only the program's own
     * queue counting, the kernel would absorb 5 s and more of the stream
     * before the stall clock started */
    cap_capture_options o = {.listen = "127.0.0.1:0",
                             .flush_interval_ms = 20,
                             .stall_timeout_ms = 1000};
    assert_int_equal(cap_open(NULL, &o), CAP_OK);
    program p = {.workers = 1, .frame_us = 1000};
    program_start(&p);
    int fd = connect_port(cap_listen_port(), 4096); /* then never reads */
    double t = wait_log("took less than 64 KiB in 1000 ms", 8000);
    program_stop(&p);
    assert_int_equal(cap_close(), CAP_OK);
    cap_set_log(NULL, NULL);
    close(fd);
    if (t < 0 || t > 1.0 + 2.5) /* the limit, and a margin for the kernel
                                   and the sink's 100 ms checks */
        fail_msg("cut off after %.2f s (-1: not within 8 s); log:\n%s", t,
                 log_text);
    remove_paths();
}

static void a_client_that_sends_is_disconnected_and_a_few_bytes_are_not(
    void **state)
{
    (void)state;
    log_reset();
    cap_capture_options o = {.listen = "127.0.0.1:0", .flush_interval_ms = 20};
    assert_int_equal(cap_open(NULL, &o), CAP_OK);
    program p = {.workers = 1, .frame_us = 1000};
    program_start(&p);
    /* a flood: cut off, the program does not read 64 MiB */
    int fd = connect_port(cap_listen_port(), 0);
    static char junk[65536];
    memset(junk, 'x', sizeof junk);
    uint64_t sent = 0;
    double t0 = mono_s();
    int failed = 0;
    while (sent < (64u << 20) && mono_s() - t0 < 5) {
        ssize_t n = send(fd, junk, sizeof junk, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0)
            sent += (uint64_t)n;
        else if (errno == EAGAIN || errno == EWOULDBLOCK)
            sleep_ms(1);
        else {
            failed = 1;
            break;
        }
    }
    close(fd);
    if (!failed || sent >= (64u << 20))
        fail_msg("the program took %llu bytes from a client (%s)",
                 (unsigned long long)sent, failed ? "then cut" : "not cut");
    assert_true(wait_log("(a client sends nothing); disconnected", 2000) >= 0);
    /* a few bytes (a newline typed into nc), then its half-close: the
     * stream goes on to the end, a valid capture */
    stream_read s = {.fd = connect_port(cap_listen_port(), 0),
                     .save = fopen(file_path, "wb")};
    assert_non_null(s.save);
    assert_int_equal(send(s.fd, "\n", 1, MSG_NOSIGNAL), 1);
    assert_int_equal(shutdown(s.fd, SHUT_WR), 0); /* nc -N, nc < /dev/null */
    pthread_t th;
    pthread_create(&th, NULL, stream_reader, &s);
    sleep_ms(500);
    program_stop(&p);
    assert_int_equal(cap_close(), CAP_OK);
    pthread_join(th, NULL);
    fclose(s.save);
    cap_set_log(NULL, NULL);
    cap_read r;
    read_path(file_path, &r);
    assert_true(r.st.has_footer);
    assert_int_equal(r.st.corrupt_chunks, 0);
    assert_true(r.last_index > r.first_index + 2); /* 0.5 s of frames */
    free(r.r);
    unlink(file_path);
}

static void connections_coming_and_going_fast_are_logged_in_few_lines(
    void **state)
{
    (void)state;
    log_reset();
    cap_capture_options o = {.listen = "127.0.0.1:0", .flush_interval_ms = 20};
    assert_int_equal(cap_open(NULL, &o), CAP_OK);
    int port = cap_listen_port();
    double t0 = mono_s();
    int cycles = 0;
    for (; cycles < 500 && mono_s() - t0 < 10; cycles++) {
        close(connect_port(port, 0));
        if (cycles % 8 == 7)
            sleep_ms(2); /* the listen backlog is 8 */
    }
    sleep_ms(300);
    assert_int_equal(cap_close(), CAP_OK);
    cap_set_log(NULL, NULL);
    assert_true(cycles >= 100);
    /* 20 lines, then one that counts the rest */
    int lines = log_count("capture client ");
    if (lines > 20 || log_count("more line(s) about clients suppressed") != 1)
        fail_msg("%d cycles: %d lines about clients; log:\n%s", cycles, lines,
                 log_text);
}

/* The local address a listening TCP socket on port holds, from
 * /proc/net/tcp (hex, as the kernel writes it), or "" when none. */
static void listen_address(int port, char *out, size_t n)
{
    out[0] = 0;
    FILE *f = fopen("/proc/net/tcp", "r");
    assert_non_null(f);
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char local[64];
        unsigned st;
        if (sscanf(line, " %*d: %63s %*s %x", local, &st) != 2 || st != 0x0A)
            continue;
        char *colon = strchr(local, ':');
        if (colon && strtol(colon + 1, NULL, 16) == port) {
            *colon = 0;
            snprintf(out, n, "%s", local);
        }
    }
    fclose(f);
}

static void an_empty_host_listens_on_the_loopback_only(void **state)
{
    (void)state;
    log_reset();
    cap_capture_options o = {.listen = ":0"};
    assert_int_equal(cap_open(NULL, &o), CAP_OK);
    char addr[64];
    listen_address(cap_listen_port(), addr, sizeof addr);
    assert_int_equal(cap_close(), CAP_OK);
    cap_set_log(NULL, NULL);
    assert_string_equal(addr, "0100007F"); /* 127.0.0.1, not 0.0.0.0 */
    assert_int_equal(log_count("every interface"), 0);
}

static void *read_or_hold(void *arg)
{
    stream_read *s = arg;
    return s->save ? stream_reader(arg) : NULL;
}

static void a_full_server_replaces_a_stalled_client_or_says_it_is_full(
    void **state)
{
    (void)state;
    make_paths();
    log_reset();
    cap_capture_options o = {.listen = "127.0.0.1:0",
                             .flush_interval_ms = 20,
                             .stall_timeout_ms = 30000};
    assert_int_equal(cap_open(NULL, &o), CAP_OK);
    int port = cap_listen_port();
    program p = {.workers = 2, .frame_us = 1000, .busy = 1};
    program_start(&p);
    /* 8 connections that read nothing: the ninth takes the place of the
     * one stalled longest */
    int idle[8];
    for (int i = 0; i < 8; i++)
        idle[i] = connect_port(port, 4096);
    sleep_ms(1500);
    int ninth = connect_port(port, 0);
    char buf[16];
    struct timeval tv = {5, 0};
    setsockopt(ninth, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    assert_int_equal(recv(ninth, buf, sizeof buf, MSG_WAITALL), 16);
    assert_memory_equal(buf, "\x89" "CAP", 4);
    close(ninth);
    assert_true(wait_log("to make room for", 2000) >= 0);
    for (int i = 0; i < 8; i++)
        close(idle[i]);
    program_stop(&p);
    assert_int_equal(cap_close(), CAP_OK);

    /* 8 that take their stream: a ninth is refused, and capture_remote
     * says why */
    log_reset();
    assert_int_equal(cap_open(NULL, &o), CAP_OK);
    port = cap_listen_port();
    p = (program){.workers = 2, .frame_us = 1000, .busy = 1};
    program_start(&p);
    stream_read rd[8];
    pthread_t th[8];
    FILE *save[8];
    for (int i = 0; i < 8; i++) {
        save[i] = fopen("/dev/null", "wb");
        rd[i] = (stream_read){.fd = connect_port(port, 0), .save = save[i]};
        pthread_create(&th[i], NULL, read_or_hold, &rd[i]);
    }
    sleep_ms(300);
    char src[32], *text = NULL;
    size_t len = 0;
    snprintf(src, sizeof src, "127.0.0.1:%d", port);
    FILE *diag = open_memstream(&text, &len);
    rem_options ro = {.source = src, .out = remote_path,
                      .connect_timeout = 2, .diag = diag};
    int rc = rem_record(&ro);
    fclose(diag);
    program_stop(&p);
    assert_int_equal(cap_close(), CAP_OK);
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        fclose(save[i]);
    }
    cap_set_log(NULL, NULL);
    assert_int_equal(rc, TOOL_EXIT_USAGE);
    if (!strstr(text, "closed the connection without sending a byte: the "
                      "program serves 8 clients at most and may be full"))
        fail_msg("capture_remote said: %s", text);
    if (log_count("refused: too many clients (8)") != 1)
        fail_msg("log:\n%s", log_text);
    free(text);
    remove_paths();
}

/* A server that accepts one client and sends it `n` bytes of `data`, then
 * nothing, until `hold_ms` have passed. */
typedef struct mute_server {
    int lfd, port;
    const void *data;
    size_t n;
    unsigned hold_ms;
    pthread_t th;
} mute_server;

static void *mute_main(void *arg)
{
    mute_server *m = arg;
    int fd = accept(m->lfd, NULL, NULL);
    if (fd >= 0) {
        if (m->n && send(fd, m->data, m->n, MSG_NOSIGNAL) != (ssize_t)m->n)
            fail_msg("mute server: send");
        sleep_ms(m->hold_ms);
        close(fd);
    }
    return NULL;
}

static void mute_start(mute_server *m)
{
    m->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(m->lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(m->lfd, 1), 0);
    socklen_t sl = sizeof sa;
    getsockname(m->lfd, (struct sockaddr *)&sa, &sl);
    m->port = ntohs(sa.sin_port);
    pthread_create(&m->th, NULL, mute_main, m);
}

static void mute_stop(mute_server *m)
{
    pthread_join(m->th, NULL);
    close(m->lfd);
}

static void a_server_that_sends_nothing_is_given_up_on(void **state)
{
    (void)state;
    make_paths();
    /* accepts, sends nothing: exit 2 (nothing written) after the idle
     * timeout */
    mute_server m = {.hold_ms = 3000};
    mute_start(&m);
    char src[32], *text = NULL;
    size_t len = 0;
    snprintf(src, sizeof src, "127.0.0.1:%d", m.port);
    FILE *diag = open_memstream(&text, &len);
    rem_options ro = {.source = src, .out = remote_path,
                      .connect_timeout = 2, .idle_timeout = 0.5,
                      .diag = diag};
    double t0 = mono_s();
    int rc = rem_record(&ro);
    double t = mono_s() - t0;
    fclose(diag);
    mute_stop(&m);
    assert_int_equal(rc, TOOL_EXIT_USAGE);
    if (t > 2.0 || !strstr(text, "accepted the connection but sent nothing "
                                 "for 0.5 s (--idle-timeout)"))
        fail_msg("after %.2f s: %s", t, text);
    free(text);

    /* the same through read_capture's way in (read_capture HOST:PORT
     * --idle-timeout 0.5): exit 2, nothing to read, the source named */
    m = (mute_server){.hold_ms = 3000};
    mute_start(&m);
    snprintf(src, sizeof src, "127.0.0.1:%d", m.port);
    diag = open_memstream(&text, &len);
    tool_source ts;
    tool_source_parse(&ts, src);
    rem_options lo = {.connect_timeout = 2, .idle_timeout = 0.5,
                      .tool = "read_capture", .diag = diag};
    t0 = mono_s();
    rc = tool_source_open(&ts, "read_capture", rem_source_record, &lo);
    t = mono_s() - t0;
    fclose(diag);
    mute_stop(&m);
    assert_int_equal(rc, TOOL_EXIT_USAGE);
    assert_int_equal(ts.fd, -1);
    if (t > 2.0 || strstr(text, "/proc/") ||
        !strstr(text, "read_capture: 127.0.0.1:") ||
        !strstr(text, "sent nothing for 0.5 s (--idle-timeout)") ||
        !strstr(text, "; nothing to read"))
        fail_msg("after %.2f s: %s", t, text);
    free(text);

    /* a header, then the connection closed before the metadata: the
     * reader's input is unreadable, exit 2 in one line (not the line and
     * then an empty file's) */
    const char *fx = getenv("CAP_FIXTURES");
    if (fx) {
        char demo[512];
        uint8_t head[16];
        snprintf(demo, sizeof demo, "%s/demo.cap", fx);
        FILE *in = fopen(demo, "rb");
        assert_non_null(in);
        assert_int_equal(fread(head, 1, sizeof head, in), sizeof head);
        fclose(in);
        m = (mute_server){.data = head, .n = sizeof head};
        mute_start(&m);
        snprintf(src, sizeof src, "127.0.0.1:%d", m.port);
        diag = open_memstream(&text, &len);
        lo.diag = diag;
        tool_source_parse(&ts, src);
        rc = tool_source_open(&ts, "read_capture", rem_source_record, &lo);
        fclose(diag);
        mute_stop(&m);
        assert_int_equal(rc, TOOL_EXIT_USAGE);
        assert_int_equal(ts.fd, -1);
        if (!strstr(text, "; nothing to read\n") ||
            strchr(text, '\n') != text + strlen(text) - 1)
            fail_msg("%s", text);
        free(text);
    }

    /* a program that serves its capture and records nothing: exit 3 after
     * the idle timeout, a complete file */
    cap_set_log(NULL, NULL);
    cap_capture_options o = {.listen = "127.0.0.1:0", .flush_interval_ms = 20};
    assert_int_equal(cap_open(NULL, &o), CAP_OK);
    snprintf(src, sizeof src, "127.0.0.1:%d", cap_listen_port());
    diag = open_memstream(&text, &len);
    ro.diag = diag;
    rc = rem_record(&ro);
    fclose(diag);
    assert_int_equal(cap_close(), CAP_OK);
    assert_int_equal(rc, TOOL_EXIT_INCOMPLETE);
    if (!strstr(text, "nothing arrived for 0.5 s (--idle-timeout)"))
        fail_msg("%s", text);
    free(text);
    cap_read r;
    read_path(remote_path, &r);
    assert_true(r.st.has_footer);
    free(r.r);
    remove_paths();
}

static void a_killed_capture_remote_leaves_a_readable_prefix(void **state)
{
    (void)state;
    make_paths();
    /* an older capture in OUT, which must not survive as this one */
    FILE *old = fopen(remote_path, "wb");
    assert_non_null(old);
    fputs("an older capture\n", old);
    fclose(old);
    int pp[2];
    assert_int_equal(pipe(pp), 0);
    pid_t pid = fork(); /* before any thread of this process starts */
    assert_true(pid >= 0);
    if (pid == 0) {
        close(pp[1]);
        int port = 0;
        if (read(pp[0], &port, sizeof port) != sizeof port)
            _exit(1);
        char src[32];
        snprintf(src, sizeof src, "127.0.0.1:%d", port);
        rem_options ro = {.source = src, .out = remote_path,
                          .connect_timeout = 5, .diag = devnull()};
        _exit(rem_record(&ro));
    }
    close(pp[0]);
    cap_set_log(NULL, NULL);
    cap_capture_options o = {.listen = "127.0.0.1:0", .flush_interval_ms = 20};
    assert_int_equal(cap_open(NULL, &o), CAP_OK);
    int port = cap_listen_port();
    assert_int_equal(write(pp[1], &port, sizeof port), (ssize_t)sizeof port);
    close(pp[1]);
    program p = {.workers = 1, .frame_us = 1000};
    program_start(&p);
    sleep_ms(1000);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    program_stop(&p);
    assert_int_equal(cap_close(), CAP_OK);
    /* a capture that reads up to its last whole block */
    cap_read r;
    read_path(remote_path, &r);
    assert_false(r.st.has_footer);
    assert_true(r.n > 10);
    assert_true(r.last_index > r.first_index + 2);
    free(r.r);
    remove_paths();
}

static void a_reader_keeps_a_live_window_on_disk_and_names_the_source(
    void **state)
{
    (void)state;
    char dir[] = "/tmp/cap_test_live_spill_XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *was = getenv("TMPDIR");
    char *saved = was ? strdup(was) : NULL;
    setenv("TMPDIR", dir, 1);
    cap_set_log(NULL, NULL);
    cap_capture_options o = {.listen = "127.0.0.1:0", .flush_interval_ms = 20};
    assert_int_equal(cap_open(NULL, &o), CAP_OK);
    program p = {.workers = 1, .frame_us = 1000};
    program_start(&p);
    char src[32], path[64];
    snprintf(src, sizeof src, "127.0.0.1:%d", cap_listen_port());
    /* as read_capture HOST:PORT --seconds 0.3 opens it */
    tool_source ts;
    tool_source_parse(&ts, src);
    assert_int_equal(ts.kind, TOOL_SOURCE_ADDRESS);
    rem_options lo = {.seconds = 0.3, .connect_timeout = 2,
                      .tool = "read_capture"};
    int rc = tool_source_open(&ts, "read_capture", rem_source_record, &lo);
    int fd = ts.fd;
    if (rc == TOOL_EXIT_OK)
        snprintf(path, sizeof path, "%s", ts.path);
    /* the window is a file in TMPDIR, unlinked: not memory */
    char link[128], target[256];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t tn = rc == TOOL_EXIT_OK ? readlink(link, target, sizeof target - 1) : -1;
    target[tn > 0 ? tn : 0] = 0;
    cap_read r = {0};
    if (rc == TOOL_EXIT_OK)
        read_path(path, &r);

    /* a cut window names the source, not a /proc/self/fd/N path */
    int sp = open(dir, O_TMPFILE | O_RDWR, 0600);
    assert_true(sp >= 0);
    char spath[64], *text = NULL;
    size_t len = 0;
    snprintf(spath, sizeof spath, "/proc/self/fd/%d", sp);
    FILE *diag = open_memstream(&text, &len);
    rem_options ro = {.source = src, .out = spath, .connect_timeout = 2,
                      .idle_timeout = 0.5, .spill = 1, .tool = "read_capture",
                      .diag = diag};
    remote_run rr = {ro, -1};
    pthread_t th;
    pthread_create(&th, NULL, remote_thread, &rr);
    sleep_ms(400);
    program_stop(&p); /* then nothing arrives: cut after 0.5 s */
    pthread_join(th, NULL);
    assert_int_equal(cap_close(), CAP_OK);
    fclose(diag);
    close(sp);
    if (saved)
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
    free(saved);
    rmdir(dir);
    assert_int_equal(rc, TOOL_EXIT_OK);
    tool_source_close(&ts);
    if (strncmp(target, dir, strlen(dir)) != 0 || !strstr(target, "(deleted)"))
        fail_msg("the window is kept in '%s', not an unlinked file in %s",
                 target, dir);
    assert_true(r.st.has_footer);
    assert_true(r.last_index > r.first_index + 2);
    free(r.r);
    assert_int_equal(rr.rc, TOOL_EXIT_INCOMPLETE);
    if (strstr(text, "/proc/") ||
        !strstr(text, "read_capture: 127.0.0.1:") ||
        !strstr(text, "; reading the "))
        fail_msg("%s", text);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            a_late_client_gets_every_name_and_every_frame_after_it_connected),
        cmocka_unit_test(a_late_client_of_3_1_gets_the_same),
        cmocka_unit_test(drops_in_3_1_are_counted_the_same),
        cmocka_unit_test(
            a_client_that_reads_nothing_costs_nothing_and_its_drops_are_counted),
        cmocka_unit_test(
            a_stalled_client_is_disconnected_and_the_program_goes_on),
        cmocka_unit_test(the_port_in_use_is_one_log_line_and_recording_goes_on),
        cmocka_unit_test(
            killing_the_client_then_closing_and_reopening_is_clean),
        cmocka_unit_test(
            killing_the_program_or_interrupting_leaves_a_complete_file),
        cmocka_unit_test(a_stream_reads_as_the_file_does_damage_included),
        cmocka_unit_test(a_client_that_never_reads_is_cut_off_within_the_limit),
        cmocka_unit_test(
            a_client_that_sends_is_disconnected_and_a_few_bytes_are_not),
        cmocka_unit_test(
            connections_coming_and_going_fast_are_logged_in_few_lines),
        cmocka_unit_test(an_empty_host_listens_on_the_loopback_only),
        cmocka_unit_test(
            a_full_server_replaces_a_stalled_client_or_says_it_is_full),
        cmocka_unit_test(a_server_that_sends_nothing_is_given_up_on),
        cmocka_unit_test(a_killed_capture_remote_leaves_a_readable_prefix),
        cmocka_unit_test(
            a_reader_keeps_a_live_window_on_disk_and_names_the_source),
    };
    if (getenv("TEST_LIVE_ONLY")) /* one case, by name or glob */
        cmocka_set_test_filter(getenv("TEST_LIVE_ONLY"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
