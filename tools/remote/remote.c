/*
 * remote.c - record a window of a live capture (see remote.h).
 *
 * Two threads. The main one connects, reads the socket with poll() (so a
 * signal, the window's end or a deadline stops it at once), checks the
 * stream's framing and writes each chunk, once it has arrived whole, into
 * a pipe. The other reads the pipe with cap_reader_open_fd and copies the
 * window into the output with cvt_copy_reader. Stopping is closing the
 * pipe: the reader then sees a stream that ends at a chunk boundary, and
 * the copy writes the footer.
 */
#include "remote.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <capture/cap_reader.h>

#include "cvt.h"
#include "tool_source.h"

/* The format's numbers this file checks (format-spec/capture-format.md). */
#define HEADER_LEN 16
#define CHUNK_HEADER_LEN 24
#define TRAILER_LEN 16
#define MAX_STORED (72u << 20)
#define MAX_RAW (64u << 20)
#define CHUNK_FOOTER 3
static const uint8_t magic[8] = {0x89, 'C', 'A', 'P', '\r', '\n', 0x1a, '\n'};

static volatile sig_atomic_t got_signal;

static void on_signal(int s)
{
    got_signal = s;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static uint32_t crc(const uint8_t *p, size_t n)
{
    return (uint32_t)crc32(crc32(0, NULL, 0), p, (uInt)n);
}

/* ---- connecting ----------------------------------------------------------- */

/* One connection attempt to each address of host:port, each given up to
 * `wait` seconds. Returns a connected, blocking socket or -1 (errno). */
static int try_connect(const char *host, const char *port, double wait,
                       int *gai)
{
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    *gai = getaddrinfo(host, port, &hints, &ai);
    if (*gai != 0)
        return -1;
    int fd = -1, err = ECONNREFUSED;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        int fl = fcntl(fd, F_GETFL);
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
        int rc = connect(fd, a->ai_addr, a->ai_addrlen);
        if (rc != 0 && errno == EINPROGRESS) {
            struct pollfd pf = {fd, POLLOUT, 0};
            int k = poll(&pf, 1, (int)(wait * 1000));
            int e = 0;
            socklen_t el = sizeof e;
            if (k == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 &&
                e == 0)
                rc = 0;
            else
                errno = k == 0 ? ETIMEDOUT : (e ? e : errno);
        }
        if (rc != 0) {
            err = errno;
            close(fd);
            fd = -1;
            continue;
        }
        fcntl(fd, F_SETFL, fl);
    }
    freeaddrinfo(ai);
    if (fd < 0)
        errno = err;
    return fd;
}

/* ---- the copying thread ------------------------------------------------- */

typedef struct feed {
    const rem_options *o;
    const char *part; /* the first pass's output (a memory file) */
    int pipe_r;
    cvt_window win;
    cvt_copy_result res;
    cap_result rc;
    int open_failed;
    char detail[256];
    uint64_t frames; /* atomic */
    int done;        /* atomic: the window is complete */
} feed;

static void on_progress(void *user, uint64_t frames, int done)
{
    feed *f = user;
    __atomic_store_n(&f->frames, frames, __ATOMIC_RELAXED);
    if (done)
        __atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
}

static void *copy_main(void *arg)
{
    feed *f = arg;
    cap_reader *r;
    cap_result res = cap_reader_open_fd(&r, f->pipe_r, f->detail,
                                        sizeof f->detail);
    if (res != CAP_OK) {
        f->open_failed = 1;
        return NULL;
    }
    cvt_options co = {.diag = f->o->diag ? f->o->diag : stderr};
    f->rc = cvt_copy_reader(r, f->o->source, f->part, &f->win, &co, &f->res);
    return NULL;
}

/* ---- the relay ---------------------------------------------------------- */

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) {
            if (got_signal)
                return -1;
            continue;
        }
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* The second pass: the window's frames, with exactly what belongs to
 * them, from the memory file into o->out (a frames slice); the whole first
 * pass when no frame was kept. Returns 0, or -1 (message printed). */
static int finish(const feed *f, const char *part, FILE *diag,
                  const char *tool)
{
    static FILE *null;
    if (!null)
        null = fopen("/dev/null", "w");
    char text[300];
    snprintf(text, sizeof text, "the live window");
    cvt_slice sl = {.kind = CVT_SLICE_FRAMES,
                    .a = (double)f->res.first_frame,
                    .b = (double)f->res.last_frame + 1,
                    .text = text,
                    .source = f->o->source,
                    .all_names = 1};
    cvt_options co = {.slice = f->res.frames ? &sl : NULL,
                      .diag = null ? null : diag,
                      .format_major = f->o->format_major,
                      .no_frame_list = f->o->no_frame_list};
    if (cvt_cap_to_cap(part, f->o->out, &co) != CAP_OK) {
        fprintf(diag, "%s: %s: cannot write: %s\n", tool, f->o->out,
                strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

enum { WHY_NONE, WHY_SIGNAL, WHY_EOF, WHY_MIDCHUNK, WHY_ERROR, WHY_FOOTER,
       WHY_WINDOW, WHY_DEADLINE, WHY_DAMAGED, WHY_NOTCAP, WHY_PIPE };

tool_exit rem_record(const rem_options *o)
{
    FILE *diag = o->diag ? o->diag : stderr;
    const char *tool = o->tool ? o->tool : "capture_remote";
    char host[256], port[8];
    if (!o->source || tool_address_split(o->source, host, sizeof host, port,
                                          sizeof port)) {
        fprintf(diag, "%s: '%s' is not HOST:PORT\n", tool,
                o->source ? o->source : "");
        return TOOL_EXIT_USAGE;
    }
    struct sigaction sa = {0}, old_int, old_term, old_pipe;
    sa.sa_handler = on_signal; /* no SA_RESTART: poll and write return */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    struct sigaction ign = {0};
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old_pipe);
    got_signal = 0;

    /* OUT must be writable before anything is recorded for it */
    int ofd = o->out ? open(o->out, O_WRONLY | O_CREAT | O_CLOEXEC, 0644) : -1;
    if (ofd < 0) {
        fprintf(diag, "%s: %s: cannot write: %s\n", tool,
                o->out ? o->out : "", strerror(errno));
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        sigaction(SIGPIPE, &old_pipe, NULL);
        return TOOL_EXIT_INCOMPLETE;
    }
    close(ofd);

    /* connect, retrying until the timeout */
    double timeout = o->connect_timeout > 0 ? o->connect_timeout : 10;
    double t0 = now_s(), deadline = t0 + timeout;
    int fd = -1, gai = 0, said = 0;
    for (;;) {
        double left = deadline - now_s();
        fd = try_connect(host, port, left < 1 ? (left > 0.05 ? left : 0.05) : 1,
                         &gai);
        if (fd >= 0 || gai != 0 || got_signal || now_s() >= deadline)
            break;
        if (o->progress && !said) {
            fprintf(diag, "%s: waiting for %s (%s)...", tool, o->source,
                    strerror(errno));
            fflush(diag);
            said = 1;
        }
        struct timespec ts = {0, 200000000};
        nanosleep(&ts, NULL);
    }
    if (said)
        fprintf(diag, "\r%-70s\r", "");
    if (fd < 0) {
        tool_exit rc = got_signal ? TOOL_EXIT_INCOMPLETE : TOOL_EXIT_USAGE;
        if (gai)
            fprintf(diag, "%s: %s: %s\n", tool, o->source, gai_strerror(gai));
        else if (got_signal)
            fprintf(diag, "%s: %s: interrupted before a connection was made; "
                          "nothing written\n", tool, o->source);
        else
            fprintf(diag, "%s: %s: cannot connect within %g s: %s (is the "
                          "program listening on an address this machine can "
                          "reach? see docs/LIVE.md)\n",
                    tool, o->source, timeout, strerror(errno));
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        sigaction(SIGPIPE, &old_pipe, NULL);
        return rc;
    }

    /* the window goes to a memory file first, then is sliced to its
     * frames into o->out (see finish) */
    int part_fd = memfd_create("capture-window", MFD_CLOEXEC);
    char part[64];
    snprintf(part, sizeof part, "/proc/self/fd/%d", part_fd);
    int pp[2];
    feed f = {.o = o, .part = part};
    f.win = (cvt_window){o->skip_seconds, o->seconds, o->frames, on_progress,
                         &f};
    pthread_t th;
    if (part_fd < 0 || pipe2(pp, O_CLOEXEC) != 0) {
        fprintf(diag, "%s: %s\n", tool, strerror(errno));
        if (part_fd >= 0)
            close(part_fd);
        close(fd);
        return TOOL_EXIT_INCOMPLETE;
    }
    fcntl(pp[1], F_SETPIPE_SZ, 1 << 20); /* slack for the copying thread */
    f.pipe_r = pp[0];
    if (pthread_create(&th, NULL, copy_main, &f) != 0) {
        fprintf(diag, "%s: cannot start a thread\n", tool);
        close(pp[0]);
        close(pp[1]);
        close(fd);
        return TOOL_EXIT_INCOMPLETE;
    }

    /* relay whole chunks; unit = what is being assembled */
    uint8_t *unit = NULL;
    size_t unit_len = 0, unit_cap = 0, need = HEADER_LEN;
    enum { U_HEADER, U_CHUNK_HEADER, U_PAYLOAD, U_TRAILER } ust = U_HEADER;
    uint64_t off = 0, unit_off = 0, stored = 0;
    int is_footer = 0, why = WHY_NONE, err = 0;
    double start = now_s(), last_shown = 0;
    double hard_end = (o->seconds > 0)
                          ? start + o->skip_seconds + o->seconds + 10
                          : 0;
    uint8_t rb[65536];
    while (why == WHY_NONE) {
        if (got_signal) {
            why = WHY_SIGNAL;
            break;
        }
        if (__atomic_load_n(&f.done, __ATOMIC_ACQUIRE)) {
            why = WHY_WINDOW;
            break;
        }
        double now = now_s();
        if (hard_end && now >= hard_end) {
            why = WHY_DEADLINE;
            break;
        }
        if (o->progress && now - last_shown >= 0.25) {
            fprintf(diag, "\r%s: %s  %.1f s  %llu frames  %.1f MiB   ", tool,
                    o->source, now - start,
                    (unsigned long long)__atomic_load_n(&f.frames,
                                                        __ATOMIC_RELAXED),
                    (double)off / 1048576.0);
            fflush(diag);
            last_shown = now;
        }
        struct pollfd pf = {fd, POLLIN, 0};
        int k = poll(&pf, 1, 100);
        if (k <= 0)
            continue;
        ssize_t n = recv(fd, rb, sizeof rb, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0) {
            err = n < 0 ? errno : 0;
            why = n < 0 ? WHY_ERROR
                        : (ust == U_CHUNK_HEADER && unit_len == 0) ? WHY_EOF
                                                                   : WHY_MIDCHUNK;
            break;
        }
        size_t pos = 0;
        while (pos < (size_t)n && why == WHY_NONE) {
            size_t take = need - unit_len;
            if (take > (size_t)n - pos)
                take = (size_t)n - pos;
            if (unit_len + take > unit_cap) {
                size_t c = unit_cap ? unit_cap : 65536;
                while (c < unit_len + take)
                    c *= 2;
                uint8_t *u = realloc(unit, c);
                if (!u) {
                    why = WHY_ERROR;
                    err = ENOMEM;
                    break;
                }
                unit = u;
                unit_cap = c;
            }
            memcpy(unit + unit_len, rb + pos, take);
            unit_len += take;
            pos += take;
            off += take;
            if (unit_len < need)
                break;
            switch (ust) {
            case U_HEADER:
                if (memcmp(unit, magic, 8) != 0 ||
                    get_u32(unit + 12) != crc(unit, 12)) {
                    why = WHY_NOTCAP;
                    break;
                }
                if (write_all(pp[1], unit, unit_len) != 0)
                    why = WHY_PIPE;
                ust = U_CHUNK_HEADER;
                unit_off = off;
                unit_len = 0;
                need = CHUNK_HEADER_LEN;
                break;
            case U_CHUNK_HEADER: {
                uint16_t flags = (uint16_t)(unit[6] | (unit[7] << 8));
                uint32_t st = get_u32(unit + 8), raw = get_u32(unit + 12);
                if (memcmp(unit, "CHNK", 4) != 0 ||
                    get_u32(unit + 20) != crc(unit, 20) || (flags & ~1u) ||
                    st > MAX_STORED || raw > MAX_RAW ||
                    (!(flags & 1u) && st != raw)) {
                    why = WHY_DAMAGED;
                    break;
                }
                is_footer = (unit[4] | (unit[5] << 8)) == CHUNK_FOOTER;
                stored = st;
                need = CHUNK_HEADER_LEN + st;
                ust = U_PAYLOAD;
                if (st)
                    break;
                __attribute__((fallthrough)); /* an empty payload: complete */
            }
            case U_PAYLOAD:
                if (write_all(pp[1], unit, unit_len) != 0) {
                    why = WHY_PIPE;
                    break;
                }
                unit_len = 0;
                unit_off = off;
                if (is_footer) {
                    ust = U_TRAILER;
                    need = TRAILER_LEN;
                } else {
                    ust = U_CHUNK_HEADER;
                    need = CHUNK_HEADER_LEN;
                }
                break;
            case U_TRAILER:
                if (write_all(pp[1], unit, unit_len) != 0)
                    why = WHY_PIPE;
                else
                    why = WHY_FOOTER;
                break;
            }
        }
    }
    if (o->progress)
        fprintf(diag, "\r%-70s\r", "");
    close(pp[1]);
    pthread_join(th, NULL);
    shutdown(fd, SHUT_RDWR);
    close(fd);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);

    if (!f.open_failed && f.rc == CAP_OK && finish(&f, part, diag, tool) != 0)
        f.rc = CAP_E_IO;
    close(part_fd);
    if (why == WHY_NOTCAP || (f.open_failed && ust == U_HEADER)) {
        fprintf(diag, "%s: %s does not send a capture (no libcapture header "
                      "at the start of the stream); nothing written\n",
                tool, o->source);
        free(unit);
        return TOOL_EXIT_USAGE;
    }
    if (f.open_failed) {
        fprintf(diag, "%s: %s: %s; nothing written\n", tool, o->source,
                f.detail[0] ? f.detail : "the stream ended before its metadata");
        free(unit);
        return TOOL_EXIT_INCOMPLETE;
    }
    free(unit);
    if (f.rc != CAP_OK)
        return tool_exit_of_result(f.rc);
    unsigned long long nf = (unsigned long long)f.res.frames;
    if (f.res.dropped_scopes)
        fprintf(diag, "%s: warning: %s: %llu scope(s) were dropped by the "
                      "program (full buffers, or a client queue the network "
                      "could not drain); they are counted in %s\n",
                tool, o->source, (unsigned long long)f.res.dropped_scopes,
                o->out);
    int windowed = o->seconds > 0 || o->frames > 0;
    if (f.res.window_done || (!windowed && why == WHY_FOOTER)) {
        if (!o->quiet)
            fprintf(diag, "%s: wrote %s: %llu frame(s) from %s%s\n", tool,
                    o->out, nf, o->source,
                    windowed ? ", the whole window" : "");
        return TOOL_EXIT_OK;
    }
    char reason[200];
    switch (why) {
    case WHY_SIGNAL:
        snprintf(reason, sizeof reason, "interrupted");
        break;
    case WHY_FOOTER:
        snprintf(reason, sizeof reason, "the program closed its capture "
                                        "before the window was complete");
        break;
    case WHY_EOF:
        snprintf(reason, sizeof reason, "the connection closed at stream "
                 "offset %llu without the capture's end (the program exited "
                 "or was killed)", (unsigned long long)off);
        break;
    case WHY_MIDCHUNK:
        snprintf(reason, sizeof reason, "the connection dropped inside the "
                 "chunk at stream offset %llu (%llu of %llu bytes arrived; "
                 "that chunk is left out)",
                 (unsigned long long)unit_off, (unsigned long long)unit_len,
                 (unsigned long long)(ust == U_PAYLOAD ? CHUNK_HEADER_LEN + stored
                                                       : need));
        break;
    case WHY_DEADLINE:
        snprintf(reason, sizeof reason, "no frame ended the window within "
                 "%g s", o->skip_seconds + o->seconds + 10);
        break;
    case WHY_DAMAGED:
        snprintf(reason, sizeof reason, "the stream is damaged at offset "
                 "%llu (a chunk header fails its checks)",
                 (unsigned long long)unit_off);
        break;
    default:
        snprintf(reason, sizeof reason, "the connection failed: %s",
                 strerror(err ? err : EPIPE));
        break;
    }
    fprintf(diag, "%s: %s: %s; wrote %s, complete, with the %llu frame(s) "
                  "that arrived\n",
            tool, o->source, reason, o->out, nf);
    return TOOL_EXIT_INCOMPLETE;
}
