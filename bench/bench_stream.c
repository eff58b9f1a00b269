/*
 * bench_stream.c - live capture over TCP (docs/LIVE.md), on loopback.
 *
 * 1. The streaming rate a local client sustains: one thread records trees
 *    of four nested scopes at a paced rate (a frame every 1,000 scopes),
 *    the capture served on 127.0.0.1 alone (no file); a client reads the
 *    stream with cap_reader_open_fd. For each rate: scopes the client
 *    received per second, and scopes dropped for it (counted in its
 *    stream). stream_max_scopes_per_s is the highest rate with nothing
 *    dropped.
 * 2. A client that reads nothing: the recording thread's CPU time per
 *    frame (a fixed amount of work and 1,000 scopes per frame), without a
 *    client and with one that never reads (connected with a 4 KiB receive
 *    buffer; disconnected after the 2 s stall timeout). CPU time, not
 *    wall time, so that other load on the machine does not count; the
 *    two are run alternately, three times each, and the lowest kept.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>

#include <capture/cap_reader.h>

#include "bench_common.h"

static int connect_local(int port, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (rcvbuf)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        perror("connect");
        exit(1);
    }
    return fd;
}

typedef struct client {
    int fd;
    uint64_t scopes, dropped;
    int footer;
} client;

static void *client_main(void *arg)
{
    client *c = arg;
    cap_reader *r;
    char d[256];
    if (cap_reader_open_fd(&r, c->fd, d, sizeof d) != CAP_OK) {
        fprintf(stderr, "stream: %s\n", d);
        return NULL;
    }
    cap_reader_set_filter(r, 1u << CAP_EV_COUNTER | 1u << CAP_EV_GPU_SPAN);
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) != CAP_DONE)
        if (res != CAP_OK && res != CAP_E_CORRUPT && res != CAP_E_TRUNCATED)
            break;
    const cap_reader_stats *st = cap_reader_get_stats(r);
    c->scopes = st->scopes;
    c->dropped = st->dropped_scopes;
    c->footer = st->has_footer;
    cap_reader_close(r);
    return NULL;
}

static void spin_until(uint64_t t)
{
    while (bench_mono_ns() < t) {
    }
}

/* Record at `rate` scopes/s for `secs`; returns what the client got. */
static client run_rate(double rate, double secs, uint64_t *recorded,
                       uint64_t *own_drops, double *elapsed)
{
    cap_capture_options o = {.listen = "127.0.0.1:0", .flush_interval_ms = 50};
    if (cap_open(NULL, &o) != CAP_OK)
        exit(1);
    client c = {.fd = connect_local(cap_listen_port(), 0)};
    pthread_t th;
    pthread_create(&th, NULL, client_main, &c);
    struct timespec ts = {0, 200000000}; /* the client is attached */
    nanosleep(&ts, NULL);
    CAP_THREAD("recorder");
    uint64_t t0 = bench_mono_ns(), n = 0;
    uint64_t total = (uint64_t)(rate * secs);
    double ns_per_tree = 4e9 / rate;
    while (n < total) {
        if ((n % BENCH_SCOPES_PER_FRAME) == 0)
            CAP_FRAME_MARK();
        CAP_BEGIN("a");
        CAP_BEGIN("b");
        CAP_BEGIN("c");
        CAP_BEGIN("d");
        CAP_END();
        CAP_END();
        CAP_END();
        CAP_END();
        n += 4;
        if ((n & 63) == 0)
            spin_until(t0 + (uint64_t)((double)(n / 4) * ns_per_tree));
    }
    *elapsed = (double)(bench_mono_ns() - t0) / 1e9;
    cap_producer_stats ps;
    cap_get_stats(&ps);
    cap_close();
    pthread_join(th, NULL);
    *recorded = n;
    *own_drops = ps.dropped_scopes;
    return c;
}

static double frame_loop(int with_stalled_client)
{
    cap_capture_options o = {.listen = "127.0.0.1:0", .stall_timeout_ms = 2000};
    if (cap_open(NULL, &o) != CAP_OK)
        exit(1);
    int fd = with_stalled_client ? connect_local(cap_listen_port(), 4096) : -1;
    CAP_THREAD("frames");
    volatile uint64_t sink = 0;
    uint64_t t0 = 0;
    const int frames = 1500, warm = 100;
    for (int f = 0; f < frames + warm; f++) {
        if (f == warm)
            t0 = bench_thread_cpu_ns();
        CAP_FRAME_MARK();
        for (unsigned k = 0; k < 200000; k++) /* the frame's own work */
            sink += k * (uint64_t)f;
        for (unsigned i = 0; i < BENCH_TREES_PER_FRAME; i++) {
            CAP_BEGIN("a");
            CAP_BEGIN("b");
            CAP_BEGIN("c");
            CAP_BEGIN("d");
            sink += i;
            CAP_END();
            CAP_END();
            CAP_END();
            CAP_END();
        }
    }
    double ms = (double)(bench_thread_cpu_ns() - t0) / 1e6 / frames;
    cap_close();
    if (fd >= 0)
        close(fd);
    return ms;
}

int main(void)
{
    static const double rates[] = {0.5e6, 1e6, 2e6, 4e6, 8e6, 16e6, 24e6, 32e6};
    double best = 0;
    for (size_t i = 0; i < sizeof rates / sizeof *rates; i++) {
        uint64_t recorded, own;
        double secs;
        client c = run_rate(rates[i], 1.5, &recorded, &own, &secs);
        double got = (double)c.scopes / secs; /* what the thread achieved */
        printf("stream_rate_%.1fM_scopes_per_s_received=%.0f\n", rates[i] / 1e6,
               got);
        printf("stream_rate_%.1fM_dropped_for_client=%llu\n", rates[i] / 1e6,
               (unsigned long long)(c.dropped - own));
        printf("stream_rate_%.1fM_dropped_by_producer=%llu\n", rates[i] / 1e6,
               (unsigned long long)own);
        if (c.dropped == 0 && own == 0 && c.footer && c.scopes >= recorded &&
            got > best)
            best = got;
        fflush(stdout);
    }
    printf("stream_max_scopes_per_s=%.0f\n", best);
    double base = 1e9, stalled = 1e9;
    for (int round = 0; round < 3; round++) {
        double a = frame_loop(0), b = frame_loop(1);
        base = a < base ? a : base;
        stalled = b < stalled ? b : stalled;
    }
    printf("stream_frame_cpu_ms_no_client=%.4f\n", base);
    printf("stream_frame_cpu_ms_stalled_client=%.4f\n", stalled);
    printf("stream_frame_ratio=%.3f\n", stalled / base);
    return 0;
}
