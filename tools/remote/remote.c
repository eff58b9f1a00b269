/*
 * remote.c - record a window of a live capture (see remote.h).
 *
 * Two threads. The main one connects, reads the socket with poll() (so a
 * signal, the window's end, a deadline or the idle timeout stops it at
 * once), checks the stream's framing and writes each chunk, once it has
 * arrived whole, into a pipe. The other reads the pipe with
 * cap_reader_open_fd and copies the window, as it arrives, into OUT itself
 * with cvt_copy_reader (or into an unlinked file in TMPDIR, for a reader's
 * source). Stopping is closing the pipe: the reader then sees a stream that
 * ends at a chunk boundary, and the copy writes the footer. Then the
 * window's frames are sliced from that first pass into a file beside OUT,
 * renamed over it.
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
    const char *part; /* the first pass's output: OUT itself, or a spill */
    FILE *diag;       /* the copy's messages */
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
    cvt_options co = {.diag = f->diag};
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
 * them, from the first pass's file into `to` (a frames slice); the whole
 * first pass when no frame was kept. Returns 0 or -1 (errno). */
static int slice_into(const feed *f, const char *to)
{
    FILE *null = fopen("/dev/null", "w");
    char text[300];
    snprintf(text, sizeof text, "the live window");
    cvt_slice sl = {.kind = CVT_SLICE_FRAMES,
                    .a = (double)f->res.first_frame,
                    .b = (double)f->res.last_frame + 1,
                    .text = text,
                    .source = f->o->source,
                    .all_names = 1};
    cvt_options co = {.slice = f->res.frames ? &sl : NULL,
                      .diag = null ? null : stderr,
                      .format_major = f->o->format_major,
                      .no_frame_list = f->o->no_frame_list};
    errno = 0;
    cap_result rc = cvt_cap_to_cap(f->part, to, &co);
    int e = errno ? errno : EIO;
    if (null)
        fclose(null);
    errno = e;
    return rc == CAP_OK ? 0 : -1;
}

/* The second pass into OUT. OUT itself held the first pass (direct):
 * the slice goes to a file beside it, renamed over it, so OUT is whole at
 * every moment. Returns 0, or -1 (message printed). */
static int finish(const feed *f, int direct, FILE *diag, const char *tool)
{
    const rem_options *o = f->o;
    if (!direct) {
        if (slice_into(f, o->out) == 0)
            return 0;
        if (o->spill)
            fprintf(diag, "%s: %s: cannot keep the window in a temporary "
                          "file: %s\n", tool, o->source, strerror(errno));
        else
            fprintf(diag, "%s: %s: cannot write: %s\n", tool, o->out,
                    strerror(errno));
        return -1;
    }
    char tmp[PATH_MAX];
    struct stat sb;
    int fd = -1;
    if (snprintf(tmp, sizeof tmp, "%s.window-XXXXXX", o->out) <
        (int)sizeof tmp)
        fd = mkostemp(tmp, O_CLOEXEC);
    if (fd >= 0 && stat(o->out, &sb) == 0)
        fchmod(fd, sb.st_mode & 07777); /* OUT's mode, not mkstemp's 0600 */
    if (fd >= 0)
        close(fd);
    if (fd >= 0 && slice_into(f, tmp) == 0 && rename(tmp, o->out) == 0)
        return 0;
    int e = errno;
    if (fd >= 0)
        unlink(tmp);
    fprintf(diag, "%s: %s: cannot write the window's frames: %s; it holds "
                  "the stream as it arrived, complete\n",
            tool, o->out, strerror(e ? e : EIO));
    return -1;
}

enum { WHY_NONE, WHY_SIGNAL, WHY_EOF, WHY_MIDCHUNK, WHY_ERROR, WHY_FOOTER,
       WHY_WINDOW, WHY_DEADLINE, WHY_DAMAGED, WHY_NOTCAP, WHY_PIPE,
       WHY_IDLE };

/* The stream's framing, checked as the bytes arrive; whole units (the
 * header, a chunk, the trailer) go to the copying thread's pipe. */
typedef struct relay {
    uint8_t *unit;
    size_t unit_len, unit_cap, need;
    enum { U_HEADER, U_CHUNK_HEADER, U_PAYLOAD, U_TRAILER } ust;
    uint64_t off, unit_off, stored;
    int is_footer, why, err;
    int out;        /* the pipe */
    double started; /* when the relay began */
} relay;

/* A whole unit has arrived in rl->unit: check it, pass it on, and say
 * what comes next. */
static void unit_done(relay *rl)
{
    switch (rl->ust) {
    case U_HEADER:
        if (memcmp(rl->unit, magic, 8) != 0 ||
            get_u32(rl->unit + 12) != crc(rl->unit, 12)) {
            rl->why = WHY_NOTCAP;
            return;
        }
        if (write_all(rl->out, rl->unit, rl->unit_len) != 0)
            rl->why = WHY_PIPE;
        rl->ust = U_CHUNK_HEADER;
        rl->unit_off = rl->off;
        rl->unit_len = 0;
        rl->need = CHUNK_HEADER_LEN;
        return;
    case U_CHUNK_HEADER: {
        const uint8_t *u = rl->unit;
        /* flags: ZSTD (1); CONT (2), format 4.0's block that continues
           its group (the reader checks it against the version) */
        uint16_t flags = (uint16_t)(u[6] | (u[7] << 8));
        uint32_t st = get_u32(u + 8), raw = get_u32(u + 12);
        if (memcmp(u, "CHNK", 4) != 0 || get_u32(u + 20) != crc(u, 20) ||
            (flags & ~3u) || st > MAX_STORED || raw > MAX_RAW ||
            (!(flags & 1u) && st != raw)) {
            rl->why = WHY_DAMAGED;
            return;
        }
        rl->is_footer = (u[4] | (u[5] << 8)) == CHUNK_FOOTER;
        rl->stored = st;
        rl->need = CHUNK_HEADER_LEN + st;
        rl->ust = U_PAYLOAD;
        if (st)
            return;
        __attribute__((fallthrough)); /* an empty payload: complete */
    }
    case U_PAYLOAD:
        if (write_all(rl->out, rl->unit, rl->unit_len) != 0) {
            rl->why = WHY_PIPE;
            return;
        }
        rl->unit_len = 0;
        rl->unit_off = rl->off;
        rl->ust = rl->is_footer ? U_TRAILER : U_CHUNK_HEADER;
        rl->need = rl->is_footer ? TRAILER_LEN : CHUNK_HEADER_LEN;
        return;
    case U_TRAILER:
        rl->why = write_all(rl->out, rl->unit, rl->unit_len) != 0 ? WHY_PIPE
                                                                   : WHY_FOOTER;
        return;
    }
}

/* Bytes received: assemble units (a chunk's payload is buffered only
 * once its header passed the checks, so at most 72 MiB + 24). */
static void relay_bytes(relay *rl, const uint8_t *p, size_t n)
{
    size_t pos = 0;
    while (pos < n && rl->why == WHY_NONE) {
        size_t take = rl->need - rl->unit_len;
        if (take > n - pos)
            take = n - pos;
        if (rl->unit_len + take > rl->unit_cap) {
            size_t c = rl->unit_cap ? rl->unit_cap : 65536;
            while (c < rl->unit_len + take)
                c *= 2;
            uint8_t *u = realloc(rl->unit, c);
            if (!u) {
                rl->why = WHY_ERROR;
                rl->err = ENOMEM;
                return;
            }
            rl->unit = u;
            rl->unit_cap = c;
        }
        memcpy(rl->unit + rl->unit_len, p + pos, take);
        rl->unit_len += take;
        pos += take;
        rl->off += take;
        if (rl->unit_len < rl->need)
            return;
        unit_done(rl);
    }
}

/* Read the socket until the stream, the window, a signal, the deadline or
 * the idle timeout ends it (rl->why). */
static void relay_run(relay *rl, int fd, const rem_options *o, feed *f,
                      FILE *diag, const char *tool)
{
    double start = now_s(), last_shown = 0, last_byte = start;
    rl->started = start;
    double idle = o->idle_timeout > 0 ? o->idle_timeout : REM_IDLE_DEFAULT;
    double hard_end = (o->seconds > 0)
                          ? start + o->skip_seconds + o->seconds + 10
                          : 0;
    uint8_t rb[65536];
    while (rl->why == WHY_NONE) {
        if (got_signal) {
            rl->why = WHY_SIGNAL;
            break;
        }
        if (__atomic_load_n(&f->done, __ATOMIC_ACQUIRE)) {
            rl->why = WHY_WINDOW;
            break;
        }
        double now = now_s();
        if (hard_end && now >= hard_end) {
            rl->why = WHY_DEADLINE;
            break;
        }
        if (now - last_byte >= idle) {
            rl->why = WHY_IDLE;
            break;
        }
        if (o->progress && now - last_shown >= 0.25) {
            fprintf(diag, "\r%s: %s  %.1f s  %llu frames  %.1f MiB   ", tool,
                    o->source, now - start,
                    (unsigned long long)__atomic_load_n(&f->frames,
                                                        __ATOMIC_RELAXED),
                    (double)rl->off / 1048576.0);
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
            rl->err = n < 0 ? errno : 0;
            rl->why = n < 0 ? WHY_ERROR
                      : (rl->ust == U_CHUNK_HEADER && rl->unit_len == 0)
                          ? WHY_EOF
                          : WHY_MIDCHUNK;
            break;
        }
        last_byte = now_s();
        relay_bytes(rl, rb, (size_t)n);
    }
    if (o->progress)
        fprintf(diag, "\r%-70s\r", "");
}

/* The copy's messages, kept apart for a read_capture source: the spill
 * file's /proc path in them is the source's name to the user. */
static void replay_diag(FILE *to, char *text, const char *path,
                        const char *name)
{
    size_t pl = strlen(path);
    for (char *p = text; p && *p;) {
        char *hit = strstr(p, path);
        if (!hit) {
            fputs(p, to);
            break;
        }
        fwrite(p, 1, (size_t)(hit - p), to);
        fputs(name, to);
        p = hit + pl;
    }
}

/* Why the stream stopped early, in words. */
static void reason_text(const relay *rl, const rem_options *o, double idle,
                        char *reason, size_t n)
{
    switch (rl->why) {
    case WHY_SIGNAL:
        snprintf(reason, n, "interrupted");
        break;
    case WHY_FOOTER:
        snprintf(reason, n, "the program closed its capture before the "
                            "window was complete");
        break;
    case WHY_EOF:
        snprintf(reason, n, "the connection closed at stream offset %llu "
                 "without the capture's end (the program exited or was "
                 "killed)", (unsigned long long)rl->off);
        break;
    case WHY_MIDCHUNK:
        snprintf(reason, n, "the connection dropped inside the chunk at "
                 "stream offset %llu (%llu of %llu bytes arrived; that chunk "
                 "is left out)",
                 (unsigned long long)rl->unit_off,
                 (unsigned long long)rl->unit_len,
                 (unsigned long long)(rl->ust == U_PAYLOAD
                                          ? CHUNK_HEADER_LEN + rl->stored
                                          : rl->need));
        break;
    case WHY_DEADLINE:
        snprintf(reason, n, "no frame ended the window within %g s",
                 o->skip_seconds + o->seconds + 10);
        break;
    case WHY_DAMAGED:
        snprintf(reason, n, "the stream is damaged at offset %llu (a chunk "
                 "header fails its checks)", (unsigned long long)rl->unit_off);
        break;
    case WHY_IDLE:
        snprintf(reason, n, "nothing arrived for %g s (--idle-timeout): the "
                 "program is stopped, or records nothing", idle);
        break;
    default:
        snprintf(reason, n, "the connection failed: %s",
                 strerror(rl->err ? rl->err : EPIPE));
        break;
    }
}

/* The outcome, said in one line when it is not a plain success, as the
 * tools' exit status (tools/common/tool_exit.h): nothing received, or not
 * a capture, is TOOL_EXIT_USAGE (like a source that cannot be reached);
 * a recording cut short, or an OUT that cannot be written, is
 * TOOL_EXIT_INCOMPLETE. */
static tool_exit outcome(const relay *rl, const feed *f,
                         const rem_options *o, FILE *diag, const char *tool)
{
    double idle = o->idle_timeout > 0 ? o->idle_timeout : REM_IDLE_DEFAULT;
    const char *nothing = o->spill ? "nothing to read" : "nothing written";
    if (rl->off == 0 && (rl->why == WHY_IDLE || rl->why == WHY_DEADLINE)) {
        fprintf(diag, "%s: %s accepted the connection but sent nothing for "
                      "%g s (%s): not a program serving its capture, or one "
                      "that is stuck; %s\n",
                tool, o->source,
                rl->why == WHY_IDLE ? idle : now_s() - rl->started,
                rl->why == WHY_IDLE ? "--idle-timeout" : "the window's deadline",
                nothing);
        return TOOL_EXIT_USAGE;
    }
    if (rl->off == 0 && (rl->why == WHY_EOF || rl->why == WHY_MIDCHUNK ||
                         rl->why == WHY_ERROR)) {
        fprintf(diag, "%s: %s closed the connection without sending a "
                      "byte: the program serves 8 clients at most and may "
                      "be full (its log says 'refused: too many clients'), "
                      "or its capture is over; %s\n",
                tool, o->source, nothing);
        return TOOL_EXIT_USAGE;
    }
    if (rl->why == WHY_NOTCAP || (f->open_failed && rl->ust == U_HEADER)) {
        fprintf(diag, "%s: %s does not send a capture (no libcapture header "
                      "at the start of the stream); %s\n",
                tool, o->source, nothing);
        return TOOL_EXIT_USAGE;
    }
    char reason[300];
    reason_text(rl, o, idle, reason, sizeof reason);
    if (f->open_failed) {
        fprintf(diag, "%s: %s: %s; %s\n", tool, o->source,
                rl->why == WHY_IDLE || rl->why == WHY_SIGNAL ? reason
                : f->detail[0] ? f->detail
                               : "the stream ended before its metadata",
                nothing);
        /* a reader has nothing to read: its input is unreadable (2, one
         * line); capture_remote's recording was cut short (3) */
        return o->spill ? TOOL_EXIT_USAGE : TOOL_EXIT_INCOMPLETE;
    }
    if (f->rc != CAP_OK)
        return tool_exit_of_result(f->rc);
    unsigned long long nf = (unsigned long long)f->res.frames;
    if (f->res.dropped_scopes)
        fprintf(diag, "%s: warning: %s: %llu scope(s) were dropped by the "
                      "program (full buffers, or a client queue the network "
                      "could not drain); they are counted %s%s\n",
                tool, o->source, (unsigned long long)f->res.dropped_scopes,
                o->spill ? "as dropped" : "in ", o->spill ? "" : o->out);
    int windowed = o->seconds > 0 || o->frames > 0;
    if (f->res.window_done || (!windowed && rl->why == WHY_FOOTER)) {
        if (!o->quiet)
            fprintf(diag, "%s: wrote %s: %llu frame(s) from %s%s\n", tool,
                    o->out, nf, o->source,
                    windowed ? ", the whole window" : "");
        return TOOL_EXIT_OK;
    }
    if (o->spill)
        fprintf(diag, "%s: %s: %s; reading the %llu frame(s) that arrived\n",
                tool, o->source, reason, nf);
    else
        fprintf(diag, "%s: %s: %s; wrote %s, complete, with the %llu "
                      "frame(s) that arrived\n",
                tool, o->source, reason, o->out, nf);
    return TOOL_EXIT_INCOMPLETE;
}

tool_exit rem_record_fd(const rem_options *o, int fd)
{
    FILE *diag = o->diag ? o->diag : stderr;
    const char *tool = o->tool ? o->tool : "capture_remote";
    /* The first pass goes to OUT itself as the stream arrives (a killed
     * client leaves a readable prefix there, never an older capture), or,
     * for a reader's source or an OUT that is no regular file, to a file
     * in TMPDIR (disk, not memory) */
    struct stat sb;
    int direct = !o->spill && (stat(o->out, &sb) != 0 || S_ISREG(sb.st_mode));
    int part_fd = direct ? -1 : tool_spill_file();
    char part[64];
    if (!direct && part_fd < 0) {
        fprintf(diag, "%s: %s: cannot make a temporary file: %s\n", tool,
                o->source, strerror(errno));
        close(fd);
        return TOOL_EXIT_INCOMPLETE;
    }
    snprintf(part, sizeof part, "/proc/self/fd/%d", part_fd);
    char *copy_text = NULL;
    size_t copy_len = 0;
    feed f = {.o = o, .part = direct ? o->out : part, .diag = diag};
    if (o->spill)
        f.diag = open_memstream(&copy_text, &copy_len);
    f.win = (cvt_window){o->skip_seconds, o->seconds, o->frames, on_progress,
                         &f};
    int pp[2] = {-1, -1};
    pthread_t th;
    int ok = f.diag && pipe2(pp, O_CLOEXEC) == 0;
    if (ok) {
        fcntl(pp[1], F_SETPIPE_SZ, 1 << 20); /* slack for the copy */
        f.pipe_r = pp[0];
        ok = pthread_create(&th, NULL, copy_main, &f) == 0;
    }
    if (!ok) {
        fprintf(diag, "%s: %s\n", tool, strerror(errno ? errno : ENOMEM));
        if (pp[0] >= 0) {
            close(pp[0]);
            close(pp[1]);
        }
        if (o->spill && f.diag)
            fclose(f.diag);
        free(copy_text);
        if (part_fd >= 0)
            close(part_fd);
        close(fd);
        return TOOL_EXIT_INCOMPLETE;
    }
    relay rl = {.need = HEADER_LEN, .ust = U_HEADER, .why = WHY_NONE,
                .out = pp[1]};
    relay_run(&rl, fd, o, &f, diag, tool);
    close(pp[1]);
    pthread_join(th, NULL);
    shutdown(fd, SHUT_RDWR);
    close(fd);
    free(rl.unit);
    if (o->spill) {
        fclose(f.diag);
        replay_diag(diag, copy_text, part, o->source);
        free(copy_text);
    }
    if (!f.open_failed && f.rc == CAP_OK && finish(&f, direct, diag, tool))
        f.rc = CAP_E_IO;
    if (part_fd >= 0)
        close(part_fd);
    return outcome(&rl, &f, o, diag, tool);
}

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
    tool_exit rc = TOOL_EXIT_INCOMPLETE;

    /* OUT must be writable before anything is recorded for it (an older
     * file there is left as it is until the stream's metadata arrives) */
    int ofd = o->out ? open(o->out, O_WRONLY | O_CREAT | O_CLOEXEC, 0644) : -1;
    if (ofd < 0) {
        fprintf(diag, "%s: %s: cannot write: %s\n", tool,
                o->out ? o->out : "", strerror(errno));
        goto out;
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
        rc = got_signal ? TOOL_EXIT_INCOMPLETE : TOOL_EXIT_USAGE;
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
        goto out;
    }
    rc = rem_record_fd(o, fd);
out:
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
    return rc;
}

/* ---- live sources for the readers ---------------------------------------- */

tool_exit rem_source_record(void *user, const tool_source *src,
                            const char *path)
{
    rem_options o = *(const rem_options *)user;
    o.source = src->text;
    o.out = path;
    o.spill = 1;
    o.quiet = 1;
    return rem_record(&o);
}
