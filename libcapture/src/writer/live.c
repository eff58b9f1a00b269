/*
 * live.c - the producer's socket sink (see live.h for what a client gets).
 */
#include "writer/live.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"

#define LV_MAX_CLIENTS 8
#define LV_MAX_LOSS 256 /* threads whose losses one client keeps apart */
#define LV_MAX_INBOUND 64 /* bytes a client may send (it has nothing to say) */
/* A client progresses when this many more of its bytes reached it (the
 * kernel's unacknowledged bytes no longer counted), or when nothing waits
 * for it: a client that reads nothing still sees its window opened a few
 * bytes at a time, which is not progress. */
#define LV_PROGRESS_BYTES (64u << 10)
#define LV_EVICT_MS 1000 /* a full server replaces a client stalled so long */
#define LV_LOG_WINDOW_MS 10000 /* client lines: at most LV_LOG_BURST ... */
#define LV_LOG_BURST 20        /* ... per window; the rest are counted */

typedef struct lv_item {
    struct lv_item *next;
    size_t len, off;
    uint8_t data[];
} lv_item;

enum { LV_PENDING, LV_ACTIVE, LV_FINISHING, LV_DEAD };

typedef struct lv_client {
    struct lv_client *next;
    int fd;
    int state;
    char peer[80];
    lv_item *head, *tail; /* head: sent by the thread; tail: the writer */
    size_t queued;
    uint64_t last_progress_ms;
    uint64_t pos; /* stream bytes queued so far */
    /* the sink's thread only: */
    uint64_t sent;      /* bytes handed to the kernel */
    uint64_t mark;      /* bytes delivered at the last progress */
    size_t unacked;     /* the kernel's bytes not yet acknowledged */
    uint64_t inbound;   /* bytes the client sent */
    int rd_closed;      /* it shut its side down (it may still read) */
    uint64_t *ix_off, *ix_first, *ix_frames; /* per block sent */
    size_t ix_n, ix_cap;
    uint32_t loss_tid[LV_MAX_LOSS];
    uint64_t loss_n[LV_MAX_LOSS];
    size_t loss_k;
    uint64_t lost_blocks;
    int need_group; /* 4.0: send no block until a group's first (one that
                       does not continue the group of the block before) */
    char note[320]; /* logged by the sink's thread, outside the lock */
} lv_client;

struct cap__live {
    int lfd;
    int wake[2];
    int port;
    size_t queue_max;
    unsigned stall_ms;
    void (*log)(const char *line);
    pthread_t thread;
    pthread_mutex_t lock;
    lv_client *clients;
    int stop;               /* under lock */
    uint64_t stop_deadline; /* ms */
    int closed;             /* the footer went out: accept no more */
    uint64_t dropped_blocks; /* atomic */
    /* client lines, rate-limited (the sink's thread only) */
    uint64_t log_window_ms;
    unsigned log_lines;
    uint64_t log_suppressed;
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void lv_log(const cap__live *l, const char *fmt, ...)
{
    char line[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (l->log)
        l->log(line);
}

/* A line about a client (the sink's thread only): at most LV_LOG_BURST
 * every LV_LOG_WINDOW_MS; the others are counted and said in one line when
 * the window ends (lv_log_flush). */
static void lv_log_flush(cap__live *l, uint64_t now, int force)
{
    if (!force && now - l->log_window_ms < LV_LOG_WINDOW_MS)
        return;
    if (l->log_suppressed)
        lv_log(l, "capture clients: %llu more line(s) about clients "
                  "suppressed in the last %llu s",
               (unsigned long long)l->log_suppressed,
               (unsigned long long)((now - l->log_window_ms + 999) / 1000));
    l->log_suppressed = 0;
    l->log_lines = 0;
    l->log_window_ms = now;
}

static void lv_log_client(cap__live *l, const char *fmt, ...)
{
    lv_log_flush(l, now_ms(), 0);
    if (l->log_lines >= LV_LOG_BURST) {
        l->log_suppressed++;
        return;
    }
    l->log_lines++;
    char line[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (l->log)
        l->log(line);
}

static void wake(cap__live *l)
{
    char c = 1;
    ssize_t n = write(l->wake[1], &c, 1); /* full pipe: already woken */
    (void)n;
}

/* ---- queues (caller holds l->lock) -------------------------------------- */

static int enqueue(lv_client *c, const uint8_t *a, size_t an, const uint8_t *b,
                   size_t bn)
{
    lv_item *it = malloc(sizeof *it + an + bn);
    if (!it)
        return -1;
    it->next = NULL;
    it->len = an + bn;
    it->off = 0;
    if (an)
        memcpy(it->data, a, an);
    if (bn)
        memcpy(it->data + an, b, bn);
    if (c->tail)
        c->tail->next = it;
    else
        c->head = it;
    c->tail = it;
    c->queued += an + bn;
    c->pos += an + bn;
    return 0;
}

static int index_block(lv_client *c, uint64_t off, uint64_t first,
                       uint64_t frames)
{
    if (c->ix_n == c->ix_cap) {
        size_t n = c->ix_cap ? c->ix_cap * 2 : 64;
        uint64_t **arr[3] = {&c->ix_off, &c->ix_first, &c->ix_frames};
        for (int i = 0; i < 3; i++) {
            uint64_t *p = realloc(*arr[i], n * sizeof *p);
            if (!p)
                return -1;
            *arr[i] = p;
        }
        c->ix_cap = n;
    }
    c->ix_off[c->ix_n] = off;
    c->ix_first[c->ix_n] = first;
    c->ix_frames[c->ix_n] = frames;
    c->ix_n++;
    return 0;
}

/* Mark c dead (caller holds l->lock); why is logged when it is reaped,
 * after the lock is released: nothing is logged under the sink's lock,
 * since the log callback takes locks of its own. */
static void client_kill(cap__live *l, lv_client *c, const char *why)
{
    (void)l;
    if (c->state == LV_DEAD)
        return;
    if (why && !c->note[0])
        snprintf(c->note, sizeof c->note, "capture client %s %s", c->peer, why);
    c->state = LV_DEAD;
}

/* Header, META and declarations for a client that just connected. */
static void activate(cap__live *l, lv_client *c, cap_writer *w)
{
    capf_buf b = {0};
    uint8_t hdr[CAPF_HEADER_LEN];
    cap__writer_header(w, hdr); /* the same version as the file's */
    capf_buf_bytes(&b, hdr, sizeof hdr);
    int rc = cap__writer_meta_chunk(w, cap__now(), &b);
    size_t decl_at = b.len;
    if (rc == 0)
        rc = cap__writer_decl_chunk(w, &b);
    if (rc != 0 || b.failed || enqueue(c, b.data, b.len, NULL, 0) != 0 ||
        index_block(c, decl_at, 0, 0) != 0) {
        client_kill(l, c, "dropped: out of memory");
    } else {
        c->state = LV_ACTIVE;
        /* 4.0: the stream goes on at a group's first block, which the
           writer makes its next one */
        c->need_group = 1;
        cap__writer_new_group(w);
    }
    capf_buf_free(&b);
}

static void activate_pending(cap__live *l, cap_writer *w)
{
    for (lv_client *c = l->clients; c; c = c->next)
        if (c->state == LV_PENDING)
            activate(l, c, w);
}

/* Queue the loss block of client c when it fits (or `force`). */
static void send_losses(cap__live *l, lv_client *c, cap_writer *w, int force)
{
    if (!c->loss_k)
        return;
    capf_buf b = {0};
    if (cap__writer_loss_chunk(w, c->loss_tid, c->loss_n, c->loss_k, &b) != 0) {
        capf_buf_free(&b);
        return; /* out of memory: try again with the next block */
    }
    /* as a block: an empty queue takes it, however small the queue */
    if (b.len && (force || !c->head || c->queued + b.len <= l->queue_max)) {
        uint64_t at = c->pos;
        if (enqueue(c, b.data, b.len, NULL, 0) == 0 &&
            index_block(c, at, 0, 0) == 0)
            c->loss_k = 0;
    } else if (!b.len) {
        c->loss_k = 0;
    }
    capf_buf_free(&b);
}

static void count_loss(lv_client *c, const uint32_t *tids, const uint64_t *n,
                       size_t k)
{
    for (size_t i = 0; i < k; i++) {
        size_t j = 0;
        while (j < c->loss_k && c->loss_tid[j] != tids[i])
            j++;
        if (j == c->loss_k) {
            if (c->loss_k == LV_MAX_LOSS)
                j = LV_MAX_LOSS - 1; /* many threads: charge the last slot */
            else { /* a slot freed by a loss block sent: count from 0 */
                c->loss_tid[c->loss_k] = tids[i];
                c->loss_n[c->loss_k++] = 0;
            }
        }
        c->loss_n[j] += n[i];
    }
    c->lost_blocks++;
}

void cap__live_tee(void *user, cap_writer *w, const cap__tee_chunk *ch)
{
    cap__live *l = user;
    if (ch->type == CAPF_CHUNK_META)
        return; /* each client gets its own (with stream_start_ns) */
    pthread_mutex_lock(&l->lock);
    activate_pending(l, w);
    size_t len = CAPF_CHUNK_HEADER_LEN + ch->body_len;
    uint32_t tids[LV_MAX_LOSS];
    uint64_t scopes[LV_MAX_LOSS];
    size_t k = (size_t)-1;
    for (lv_client *c = l->clients; c; c = c->next) {
        if (c->state != LV_ACTIVE)
            continue;
        if (ch->type == CAPF_CHUNK_BLOCK) {
            /* 4.0: a block that continues a group reaches a client that
               has the group's earlier blocks only */
            int cont = (capf_get_u16(ch->hdr + 6) & CAPF_CHUNK_FLAG_CONT) != 0;
            if (cont && c->need_group && !c->loss_k && !c->lost_blocks &&
                c->ix_n == 1)
                continue; /* written before the client's stream began */
            if (!cont)
                c->need_group = 0;
            if (!c->need_group)
                send_losses(l, c, w, 0);
            /* an empty queue takes one block, however large */
            if (!c->need_group && !c->loss_k &&
                (c->queued + len <= l->queue_max || !c->head)) {
                uint64_t at = c->pos;
                if (enqueue(c, ch->hdr, CAPF_CHUNK_HEADER_LEN, ch->body,
                            ch->body_len) == 0 &&
                    index_block(c, at, ch->first_frame, ch->frames) == 0)
                    continue;
            }
            if (k == (size_t)-1)
                k = cap__writer_block_scopes(w, tids, scopes, LV_MAX_LOSS);
            count_loss(c, tids, scopes, k);
            __atomic_fetch_add(&l->dropped_blocks, 1, __ATOMIC_RELAXED);
            /* the rest of this group cannot reach it: go on at the next
               group, which the writer starts at its next block */
            c->need_group = 1;
            cap__writer_new_group(w);
        } else if (ch->type == CAPF_CHUNK_FOOTER) {
            send_losses(l, c, w, 1);
            capf_buf b = {0};
            if (cap__writer_footer_chunk(w, c->ix_off, c->ix_first,
                                         c->ix_frames, c->ix_n, c->pos,
                                         &b) == 0)
                (void)enqueue(c, b.data, b.len, NULL, 0);
            capf_buf_free(&b);
            if (c->lost_blocks)
                snprintf(c->note, sizeof c->note,
                         "capture client %s could not take %llu block(s); "
                         "their scopes are counted as dropped in its stream",
                         c->peer, (unsigned long long)c->lost_blocks);
            c->state = LV_FINISHING;
        }
    }
    if (ch->type == CAPF_CHUNK_FOOTER)
        l->closed = 1;
    pthread_mutex_unlock(&l->lock);
    wake(l);
}

void cap__live_poll(cap__live *l, cap_writer *w)
{
    if (!l || !w)
        return;
    pthread_mutex_lock(&l->lock);
    int any = 0;
    for (lv_client *c = l->clients; c; c = c->next)
        any |= c->state == LV_PENDING;
    if (any && !l->closed)
        activate_pending(l, w);
    pthread_mutex_unlock(&l->lock);
    if (any)
        wake(l);
}

int cap__live_port(const cap__live *l)
{
    return l ? l->port : 0;
}

uint64_t cap__live_dropped_blocks(const cap__live *l)
{
    return l ? __atomic_load_n(&l->dropped_blocks, __ATOMIC_RELAXED) : 0;
}

/* ---- the sink's thread -------------------------------------------------- */

static void client_free(lv_client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    for (lv_item *it = c->head, *n; it; it = n) {
        n = it->next;
        free(it);
    }
    free(c->ix_off);
    free(c->ix_first);
    free(c->ix_frames);
    free(c);
}

/* Under l->lock, the server full: disconnect the client that has taken
 * nothing for longest, if that is LV_EVICT_MS or more, to make room for
 * `peer`. Clients that take their stream are never replaced: 8 of them
 * refuse a ninth. Returns 1 when one was disconnected. */
static int evict_stalled(cap__live *l, const char *peer)
{
    uint64_t now = now_ms();
    lv_client *worst = NULL;
    for (lv_client *c = l->clients; c; c = c->next)
        if (c->state != LV_DEAD && (c->head || c->unacked) &&
            now >= c->last_progress_ms + LV_EVICT_MS &&
            (!worst || c->last_progress_ms < worst->last_progress_ms))
            worst = c;
    if (!worst)
        return 0;
    char why[200];
    snprintf(why, sizeof why,
             "took less than %u KiB for %llu ms; disconnected to make room "
             "for %s "
             "(8 clients at most)",
             LV_PROGRESS_BYTES >> 10,
             (unsigned long long)(now - worst->last_progress_ms), peer);
    client_kill(l, worst, why);
    return 1;
}

static void accept_clients(cap__live *l)
{
    for (;;) {
        struct sockaddr_storage sa;
        socklen_t sl = sizeof sa;
        int fd = accept4(l->lfd, (struct sockaddr *)&sa, &sl,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return; /* EAGAIN, or a connection that went away */
        char host[64] = "?", serv[16] = "?";
        getnameinfo((struct sockaddr *)&sa, sl, host, sizeof host, serv,
                    sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV);
        char peer[80];
        snprintf(peer, sizeof peer, strchr(host, ':') ? "[%s]:%s" : "%s:%s",
                 host, serv);
        pthread_mutex_lock(&l->lock);
        size_t n = 0;
        for (lv_client *c = l->clients; c; c = c->next)
            n += c->state != LV_DEAD;
        if (n >= LV_MAX_CLIENTS && !l->closed && !l->stop &&
            evict_stalled(l, peer))
            n--;
        lv_client *c = NULL;
        if (!l->closed && !l->stop && n < LV_MAX_CLIENTS)
            c = calloc(1, sizeof *c);
        if (c) {
            c->fd = fd;
            c->state = LV_PENDING;
            snprintf(c->peer, sizeof c->peer, "%s", peer);
            c->last_progress_ms = now_ms();
            c->next = l->clients;
            l->clients = c;
        }
        pthread_mutex_unlock(&l->lock);
        if (c) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            /* the kernel's buffer is bounded too (no autotuning to MiBs):
             * a quarter of the queue, 16 KiB .. 1 MiB */
            size_t sb = l->queue_max / 4;
            int sndbuf = sb < (16u << 10) ? 16 << 10
                         : sb > (1u << 20) ? 1 << 20 : (int)sb;
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
            lv_log_client(l, "capture client %s connected", c->peer);
        } else {
            lv_log_client(l, "capture client %s refused: %s", peer,
                          n >= LV_MAX_CLIENTS ? "too many clients (8)"
                                              : "the capture is over");
            close(fd);
        }
    }
}

/* Send what c has queued until the socket is full. */
static void send_queue(cap__live *l, lv_client *c)
{
    for (;;) {
        pthread_mutex_lock(&l->lock);
        lv_item *it = c->head;
        pthread_mutex_unlock(&l->lock);
        if (!it)
            return;
        ssize_t n = send(c->fd, it->data + it->off, it->len - it->off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                char why[160];
                snprintf(why, sizeof why, "went away (%s)", strerror(errno));
                pthread_mutex_lock(&l->lock);
                client_kill(l, c, why);
                pthread_mutex_unlock(&l->lock);
            }
            return;
        }
        it->off += (size_t)n;
        c->sent += (uint64_t)n; /* progress is judged by what reached it */
        if (it->off == it->len) {
            pthread_mutex_lock(&l->lock);
            c->head = it->next;
            if (!c->head)
                c->tail = NULL;
            c->queued -= it->len;
            pthread_mutex_unlock(&l->lock);
            free(it);
        }
    }
}

/* Under l->lock: whether c still takes its stream. What waits for it is
 * its queue and the bytes its kernel holds unacknowledged (SIOCOUTQ): the
 * kernel's send buffer alone would otherwise absorb a few MiB of a client
 * that reads nothing, or of a peer that vanished, before the queue grows. */
static void check_progress(cap__live *l, lv_client *c, uint64_t now)
{
    int uq = 0;
    if (ioctl(c->fd, TIOCOUTQ, &uq) != 0 || uq < 0 || (uint64_t)uq > c->sent)
        uq = 0;
    c->unacked = (size_t)uq;
    uint64_t delivered = c->sent - (uint64_t)uq;
    if ((!c->head && !uq) || delivered >= c->mark + LV_PROGRESS_BYTES) {
        c->last_progress_ms = now;
        c->mark = delivered;
    } else if (now > c->last_progress_ms &&
               now - c->last_progress_ms > l->stall_ms) {
        char why[200];
        snprintf(why, sizeof why,
                 "took less than %u KiB in %u ms (%zu bytes waiting); "
                 "disconnected",
                 LV_PROGRESS_BYTES >> 10, l->stall_ms, c->queued + c->unacked);
        client_kill(l, c, why);
    }
}

/* A client's side of the connection is readable: it sent bytes (a few
 * are tolerated; a client has nothing to say, and reading a flood would
 * cost the program a core) or shut its side down, which a client that
 * still reads does (`nc -N`, `nc < /dev/null`): the stream goes on.
 * Returns 1 when c was disconnected. */
static int client_input(cap__live *l, lv_client *c)
{
    char buf[512];
    ssize_t r = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
    char why[160] = "";
    if (r > 0) {
        c->inbound += (uint64_t)r;
        if (c->inbound > LV_MAX_INBOUND)
            snprintf(why, sizeof why,
                     "sent %llu bytes or more (a client sends nothing); "
                     "disconnected",
                     (unsigned long long)c->inbound);
    } else if (r == 0) {
        c->rd_closed = 1;
    } else if (errno != EAGAIN && errno != EINTR && errno != EWOULDBLOCK) {
        snprintf(why, sizeof why, "went away (%s)", strerror(errno));
    }
    if (!why[0])
        return 0;
    pthread_mutex_lock(&l->lock);
    client_kill(l, c, why);
    pthread_mutex_unlock(&l->lock);
    return 1;
}

static void *live_main(void *arg)
{
    cap__live *l = arg;
    struct pollfd pf[2 + LV_MAX_CLIENTS];
    lv_client *who[2 + LV_MAX_CLIENTS];
    for (;;) {
        /* reap the dead, time out the stalled, finish the finished */
        pthread_mutex_lock(&l->lock);
        /* read under the lock: a block queued by the writer thread since
         * sets last_progress_ms later than a `now` read before, and the
         * unsigned difference would wrap to a stall of ~2^64 ms (a client
         * was cut off 0.5 s after it connected) */
        uint64_t now = now_ms();
        int stop = l->stop;
        int busy = 0;
        lv_client *gone = NULL;
        for (lv_client **pp = &l->clients; *pp;) {
            lv_client *c = *pp;
            if (c->state != LV_DEAD)
                check_progress(l, c, now);
            if (c->state == LV_FINISHING && !c->head) {
                shutdown(c->fd, SHUT_WR);
                c->state = LV_DEAD;
            }
            if (c->state == LV_DEAD) {
                *pp = c->next;
                c->next = gone;
                gone = c;
                continue;
            }
            busy |= c->head != NULL || c->state == LV_FINISHING;
            pp = &c->next;
        }
        int leaving = stop && (!busy || now >= l->stop_deadline);
        if (leaving)
            for (lv_client *c = l->clients; c; c = c->next)
                if (c->head && !c->note[0])
                    snprintf(c->note, sizeof c->note,
                             "capture client %s closed with %zu bytes it had "
                             "not taken",
                             c->peer, c->queued);
        pthread_mutex_unlock(&l->lock);
        for (lv_client *c = gone, *next; c; c = next) {
            next = c->next;
            if (c->note[0])
                lv_log_client(l, "%s", c->note);
            client_free(c);
        }
        if (leaving) {
            for (lv_client *c = l->clients; c; c = c->next) /* only we */
                if (c->note[0])                           /* touch them */
                    lv_log_client(l, "%s", c->note);
            lv_log_flush(l, now_ms(), 1);
            break;
        }
        lv_log_flush(l, now_ms(), 0);
        pthread_mutex_lock(&l->lock);
        nfds_t n = 0;
        pf[n] = (struct pollfd){l->wake[0], POLLIN, 0};
        who[n++] = NULL;
        if (l->lfd >= 0 && !l->closed && !stop) {
            pf[n] = (struct pollfd){l->lfd, POLLIN, 0};
            who[n++] = NULL;
        }
        for (lv_client *c = l->clients; c && n < 2 + LV_MAX_CLIENTS;
             c = c->next) {
            /* after its half-close a client reads on: POLLIN would only
             * repeat the end of its side */
            pf[n] = (struct pollfd){c->fd,
                                    (short)((c->rd_closed ? 0 : POLLIN) |
                                            (c->head ? POLLOUT : 0)),
                                    0};
            who[n++] = c;
        }
        pthread_mutex_unlock(&l->lock);
        int k = poll(pf, n, 100);
        if (k <= 0)
            continue;
        for (nfds_t i = 0; i < n; i++) {
            if (!pf[i].revents)
                continue;
            if (pf[i].fd == l->wake[0]) {
                char buf[64];
                while (read(l->wake[0], buf, sizeof buf) > 0) {
                }
                continue;
            }
            if (!who[i]) {
                accept_clients(l);
                continue;
            }
            lv_client *c = who[i];
            if (pf[i].revents & (POLLERR | POLLHUP)) {
                /* a reset, or both sides shut: gone */
                int e = 0;
                socklen_t el = sizeof e;
                char why[160] = "disconnected";
                if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e)
                    snprintf(why, sizeof why, "went away (%s)", strerror(e));
                pthread_mutex_lock(&l->lock);
                client_kill(l, c, why);
                pthread_mutex_unlock(&l->lock);
                continue;
            }
            if ((pf[i].revents & POLLIN) && client_input(l, c))
                continue;
            if (pf[i].revents & POLLOUT)
                send_queue(l, c);
        }
    }
    return NULL;
}

/* ---- start / stop ------------------------------------------------------- */

static int split_addr(const char *addr, char *host, size_t hn, char *port,
                      size_t pn)
{
    const char *colon = strrchr(addr, ':');
    if (!colon || !colon[1] || strlen(colon + 1) >= pn)
        return -1;
    const char *h = addr;
    size_t hl = (size_t)(colon - addr);
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl >= hn)
        return -1;
    memcpy(host, h, hl);
    host[hl] = 0;
    snprintf(port, pn, "%s", colon + 1);
    for (const char *p = port; *p; p++)
        if (*p < '0' || *p > '9')
            return -1;
    return atoi(port) <= 65535 ? 0 : -1;
}

cap_result cap__live_start(cap__live **out, const char *addr,
                           size_t queue_bytes, unsigned stall_ms,
                           void (*log)(const char *line), char *why,
                           size_t why_size)
{
    *out = NULL;
    char host[256], port[8];
    if (!addr || split_addr(addr, host, sizeof host, port, sizeof port) != 0) {
        snprintf(why, why_size, "not HOST:PORT");
        return CAP_E_MISUSE;
    }
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    /* no host: the loopback, not every interface (that is asked for by
     * name: 0.0.0.0 or [::]) */
    int g = getaddrinfo(host[0] ? host : "127.0.0.1", port, &hints, &ai);
    if (g != 0) {
        snprintf(why, why_size, "%s", gai_strerror(g));
        return CAP_E_IO;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    a->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 8) != 0) {
            err = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0) {
        snprintf(why, why_size, "%s", strerror(err ? err : EADDRNOTAVAIL));
        return CAP_E_IO;
    }
    cap__live *l = calloc(1, sizeof *l);
    if (!l || pipe2(l->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        free(l);
        close(fd);
        snprintf(why, why_size, "out of memory");
        return CAP_E_NOMEM;
    }
    struct sockaddr_storage sa = {0};
    socklen_t sl = sizeof sa;
    if (getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
        l->port = ntohs(sa.ss_family == AF_INET6
                            ? ((struct sockaddr_in6 *)&sa)->sin6_port
                            : ((struct sockaddr_in *)&sa)->sin_port);
    if (log && ((sa.ss_family == AF_INET &&
                 ((struct sockaddr_in *)&sa)->sin_addr.s_addr ==
                     htonl(INADDR_ANY)) ||
                (sa.ss_family == AF_INET6 &&
                 IN6_IS_ADDR_UNSPECIFIED(
                     &((struct sockaddr_in6 *)&sa)->sin6_addr)))) {
        char line[200];
        snprintf(line, sizeof line,
                 "the capture is served on every interface (%s): anyone who "
                 "can reach port %d can read it; see docs/LIVE.md (loopback "
                 "and an ssh tunnel)",
                 addr, l->port);
        log(line);
    }
    l->lfd = fd;
    l->queue_max = queue_bytes ? queue_bytes : (8u << 20);
    l->stall_ms = stall_ms ? stall_ms : 5000;
    l->log = log;
    pthread_mutex_init(&l->lock, NULL);
    if (pthread_create(&l->thread, NULL, live_main, l) != 0) {
        pthread_mutex_destroy(&l->lock);
        close(l->wake[0]);
        close(l->wake[1]);
        close(fd);
        free(l);
        snprintf(why, why_size, "cannot start its thread");
        return CAP_E_NOMEM;
    }
    *out = l;
    return CAP_OK;
}

void cap__live_stop(cap__live *l, unsigned grace_ms)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->lock);
    l->stop = 1;
    l->stop_deadline = now_ms() + grace_ms;
    pthread_mutex_unlock(&l->lock);
    wake(l);
    pthread_join(l->thread, NULL);
    for (lv_client *c = l->clients, *n; c; c = n) {
        n = c->next;
        client_free(c);
    }
    close(l->lfd);
    close(l->wake[0]);
    close(l->wake[1]);
    pthread_mutex_destroy(&l->lock);
    free(l);
}
