/*
 * writer.c - encode explicit events into self-contained, compressed blocks.
 *
 * Each thread keeps its open-scope stack across blocks; when a thread's
 * first event lands in a new block, the stack is copied into the block's
 * SCOPES section, so every block can be decoded on its own. Every name,
 * thread and track a block references is (re)declared in that block.
 */
#include "capture/cap_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zstd.h>

#include "format/format.h"
#include "writer/writer_live.h"
#include "writer/writer_records.h"

typedef struct wr_open {
    uint32_t name;
    uint64_t begin;
    uint64_t children;
} wr_open;

typedef struct wr_name {
    char *name; /* NULL: id used but never named */
    char *file;
    uint32_t line;
    uint32_t flags;      /* CAP_NAME_WAIT ... (format 1.1) */
    uint64_t block_mark; /* block sequence that already lists it */
    uint64_t sr_m[2];    /* SCOPES_R: begin, end: sum, then mean ... */
    uint64_t sr_n[2];    /* ... of this many deltas ... */
    uint64_t sr_gen[2];  /* ... in the section of this number */
    double sr_sq[2];     /* SCOPES_R: the sum of those deltas' squares */
    uint64_t se_gen;     /* SCOPES_E: listed in the section of this number */
    uint64_t se_dev[2];  /* ... the sum of |delta - mean| (begin, end) */
    uint64_t se_last[2]; /* ... its latest delta (scopes_repeat's test) */
    uint32_t se_dense;   /* ... its index in the section's list, from 1 */
    uint8_t se_k[2], se_tab[2]; /* ... its shift and residual table */
} wr_name;

typedef struct wr_thread {
    char *name;
    int declared;
    uint64_t block_mark; /* listed in THREADS of this block */
    wr_open *stack;
    uint32_t depth, stack_cap;
    uint32_t overflow; /* open scopes past CAP_MAX_DEPTH (dropped) */
    uint64_t last_tick;
    uint64_t events_mark; /* block sequence holding its events */
    uint64_t base, prev;
    uint64_t n_events;
    capf_buf open, tokens, deltas;
    uint64_t dropped, closed_at_end, backwards; /* pending for this block */
    uint64_t stray; /* ends with nothing open (format 1.1), pending */
} wr_thread;

typedef struct wr_track {
    char *name;
    double period;
    int declared;
    uint64_t block_mark;
    int has_cal;              /* the latest calibration, repeated in each */
    uint64_t cal_gpu, cal_cpu, cal_dev; /* block with this track's spans */
    uint64_t cal_mark;        /* block sequence that already carries it */
    uint64_t untimed, invalid; /* pending */
} wr_track;

typedef struct wr_index {
    uint64_t offset;
    uint64_t first_frame;
    uint64_t frames;
} wr_index;

struct cap_writer {
    int fd;
    int own_fd;
    int sink_is_file;  /* a regular file: never stalls, never SIGPIPE */
    int stall_ms;      /* pipes and sockets: longest wait for progress */
    cap_result err;
    int saved_errno;
    uint64_t pos; /* bytes written from the file header on */
    size_t block_bytes;
    int level;
    unsigned major, minor; /* format version written in the header */
    int v11;        /* the additions of 1.1: name flags, stray ends */
    int frame_list; /* 3.1: the footer's FRAME_LIST is kept (list, n
                       blocks in it); 0 once given up (no memory, or past
                       CAPF_FRAME_LIST_MAX_BYTES): the footer then has
                       none, which a reader reads as 3.0's */
    capf_buf list;
    uint64_t list_n;
    int hurry;      /* 3.0: scopes coded as SCOPES_R while the producer's
                       writer thread is behind (cap__writer_hurry) */
    uint64_t sr_gen;  /* SCOPES_R sections encoded so far */
    capf_buf sr_lo[CAPF_SR_CLASSES], sr_hi[CAPF_SR_CLASSES];
    uint32_t *sr_stack; /* names open while a section is encoded */
    uint64_t *sr_keys;  /* its contexts: name << 1 | end */
    size_t sr_keys_cap;
    /* SCOPES_E: the section's names, its coding steps, its token lists
     * and the rANS bytes (written backwards) */
    uint32_t *se_names;
    size_t se_names_cap;
    uint16_t *se_ops; /* SCOPES_E symbols: table << 8 | symbol */
    size_t se_ops_cap;
    capf_se_list *se_lists;
    size_t se_lists_cap;
    capf_buf se_out[3]; /* tokens, residuals (rANS), raw bits */
    ZSTD_CCtx *zc;

    /* names by id, in pages of WR_PAGE made when an id in them is first
       used: a capture whose ids are sparse (a crafted one can use id
       CAP_MAX_NAME_ID) costs a page an id, not a table to the largest */
    wr_name **name_pages;
    uint32_t name_pages_n; /* pages the array holds (made or NULL) */
    /* ids from WR_DIRECT up: one entry an id used, in blocks of WR_PAGE
       that never move, found through an open-addressing hash (hk: id, 0
       empty; hv: entry index). One name in each page of ids, up to
       CAP_MAX_NAME_ID, cost capture_convert 3.2 GiB (issue 46). */
    wr_name **hblk;
    size_t hblk_n, hent_n;
    uint32_t *hk, *hv;
    size_t hcap, hn;
    wr_thread **threads;
    uint32_t threads_cap;
    wr_track *tracks;
    uint32_t tracks_cap;

    uint64_t seq; /* current block sequence, from 1 */
    size_t approx_raw;
    uint32_t *blk_names;
    size_t blk_names_n, blk_names_cap;
    uint32_t *blk_threads; /* threads with events in the block */
    size_t blk_threads_n, blk_threads_cap;
    uint32_t *blk_decl_threads; /* threads listed in THREADS */
    size_t blk_decl_threads_n, blk_decl_threads_cap;
    uint32_t *blk_tracks;
    size_t blk_tracks_n, blk_tracks_cap;

    capf_buf frames;
    uint64_t frames_n, frame_prev_index, frame_prev_begin;
    capf_buf lframes;        /* 3.1: the block's frames as FRAME_LIST
                                codes them (begins as gaps after the
                                previous end) */
    uint64_t frame_prev_end;
    uint64_t blk_first_frame;
    int have_last_frame;
    uint64_t last_frame_index;
    capf_buf counters;
    uint64_t counters_n, counter_prev_tick;
    capf_buf gpu; /* complete GPU_FRAME and GPU_CAL sections */
    int have_clock; /* the latest sample goes into every block */
    uint64_t clock_tick, clock_mono;

    capf_buf payload, tmp, out;
    wr_index *index;
    size_t index_n, index_cap;

    /* the live sink (writer_live.h): a copy of every chunk goes to tee */
    cap__tee_fn tee;
    void *tee_user;
    capf_buf meta_pairs; /* META_KV key/value pairs, without their count */
    uint64_t meta_n;
    capf_buf origin_body; /* the ORIGIN section's body */
    uint64_t origin_tick, origin_mono;
    double origin_period;
};

/* ---- small helpers ----------------------------------------------------- */

static char *dup_str(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d)
        memcpy(d, s, n + 1);
    return d;
}

static int grow_u32(uint32_t **arr, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    uint32_t *p = realloc(*arr, n * sizeof **arr);
    if (!p)
        return -1;
    *arr = p;
    *cap = n;
    return 0;
}

/* Scratch p of *cap elements of `size` bytes made room for n: p itself
 * when it holds them, else p reallocated to n (*cap set); NULL out of
 * memory (p then unchanged: the caller still owns it). */
static void *room(void *p, size_t *cap, size_t n, size_t size)
{
    if (n <= *cap)
        return p;
    void *q = realloc(p, n * size);
    if (q)
        *cap = n;
    return q;
}

static cap_result fail(cap_writer *w, cap_result r)
{
    if (w->err == CAP_OK)
        w->err = r;
    return r;
}

static cap_result check(const cap_writer *w)
{
    if (!w)
        return CAP_E_MISUSE;
    if (w->err != CAP_OK)
        return CAP_E_STOPPED;
    return CAP_OK;
}

/* Write a and b whole. A sink that fails must not take the host down: a
 * pipe or socket whose reader has gone raises SIGPIPE, a write past
 * RLIMIT_FSIZE raises SIGXFSZ, and both kill by default. They are blocked
 * in this thread for the write, and one raised by it is consumed, so the
 * failure is an error return (EPIPE, EFBIG) like any other. A pipe or
 * socket is written PIPE_BUF bytes at a time once poll() says it has room,
 * so a reader that stops reading fails the write after stall_ms (ETIMEDOUT)
 * instead of blocking forever; a non-blocking descriptor works too. */
static int write_all(cap_writer *w, const uint8_t *a, size_t an,
                     const uint8_t *b, size_t bn)
{
    if (w->fd < 0) { /* no file: the chunks go to the tee only */
        w->pos += an + bn;
        return 0;
    }
    struct iovec iov[2] = {{(void *)a, an}, {(void *)b, bn}};
    int cnt = bn ? 2 : 1;
    struct iovec *v = iov;
    sigset_t guard, old, before, after;
    sigemptyset(&guard);
    sigaddset(&guard, SIGPIPE);
    sigaddset(&guard, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &guard, &old);
    sigpending(&before);
    int rc = 0;
    while (cnt > 0) {
        struct iovec piece[2] = {v[0], cnt > 1 ? v[1] : (struct iovec){0, 0}};
        int pcnt = cnt > 1 ? 2 : 1;
        if (!w->sink_is_file) {
            struct pollfd pfd = {w->fd, POLLOUT, 0};
            int k = poll(&pfd, 1, w->stall_ms);
            if (k < 0 && errno == EINTR)
                continue;
            if (k == 0) {
                w->saved_errno = ETIMEDOUT;
                rc = -1;
                break;
            }
            /* POLLERR/POLLHUP: the write below reports the error. */
            size_t room = PIPE_BUF;
            if (piece[0].iov_len >= room) {
                piece[0].iov_len = room;
                pcnt = 1;
            } else if (pcnt > 1 && piece[1].iov_len > room - piece[0].iov_len) {
                piece[1].iov_len = room - piece[0].iov_len;
            }
        }
        ssize_t n = writev(w->fd, piece, pcnt);
        if (n < 0) {
            if (errno == EINTR ||
                (!w->sink_is_file && (errno == EAGAIN || errno == EWOULDBLOCK)))
                continue;
            w->saved_errno = errno;
            rc = -1;
            break;
        }
        if (n == 0) {
            w->saved_errno = EIO;
            rc = -1;
            break;
        }
        w->pos += (uint64_t)n;
        size_t left = (size_t)n;
        while (cnt > 0 && left >= v->iov_len) {
            left -= v->iov_len;
            v++;
            cnt--;
        }
        if (cnt > 0) {
            v->iov_base = (uint8_t *)v->iov_base + left;
            v->iov_len -= left;
        }
    }
    if (rc != 0) {
        sigpending(&after);
        static const struct timespec now = {0, 0};
        const int sigs[2] = {SIGPIPE, SIGXFSZ};
        for (int i = 0; i < 2; i++)
            if (sigismember(&after, sigs[i]) && !sigismember(&before, sigs[i])) {
                sigset_t one;
                sigemptyset(&one);
                sigaddset(&one, sigs[i]);
                (void)sigtimedwait(&one, NULL, &now);
            }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* Compress `raw` and append it as one chunk. */
static cap_result put_chunk(cap_writer *w, uint16_t type, const capf_buf *raw)
{
    if (raw->failed)
        return fail(w, CAP_E_NOMEM);
    if (raw->len > CAPF_MAX_CHUNK_RAW)
        return fail(w, CAP_E_LIMIT);
    size_t bound = ZSTD_compressBound(raw->len);
    w->out.len = 0;
    if (capf_buf_reserve(&w->out, bound) != 0)
        return fail(w, CAP_E_NOMEM);
    size_t n = ZSTD_compressCCtx(w->zc, w->out.data, bound, raw->data,
                                 raw->len, w->level);
    capf_chunk_header h = {.type = type, .raw = (uint32_t)raw->len};
    const uint8_t *body;
    if (!ZSTD_isError(n) && n < raw->len) {
        h.flags = CAPF_CHUNK_FLAG_ZSTD;
        h.stored = (uint32_t)n;
        body = w->out.data;
    } else {
        h.stored = (uint32_t)raw->len;
        body = raw->data;
    }
    h.payload_crc = capf_crc32(body, h.stored);
    uint8_t hdr[CAPF_CHUNK_HEADER_LEN];
    capf_chunk_header_encode(hdr, &h);
    if (write_all(w, hdr, sizeof hdr, body, h.stored) != 0)
        return fail(w, CAP_E_IO);
    if (w->tee) {
        cap__tee_chunk c = {type, hdr, body, h.stored, 0, 0};
        if (type == CAPF_CHUNK_BLOCK && w->frames_n) {
            c.first_frame = w->blk_first_frame;
            c.frames = w->frames_n;
        }
        w->tee(w->tee_user, w, &c);
    }
    return CAP_OK;
}

/* ---- tables ------------------------------------------------------------ */

#define WR_PAGE_BITS 10
#define WR_PAGE (1u << WR_PAGE_BITS)

#define WR_DIRECT 65536u /* ids below it: in pages of WR_PAGE by id */

static inline size_t wr_hash_at(uint32_t id, size_t cap)
{
    uint32_t h = id; /* murmur3's finaliser: consecutive ids spread */
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h & (cap - 1);
}

/* name_peek for an id of WR_DIRECT or more. */
__attribute__((noinline)) static wr_name *name_peek_far(const cap_writer *w,
                                                        uint32_t id)
{
    if (!w->hcap)
        return NULL;
    for (size_t i = wr_hash_at(id, w->hcap);; i = (i + 1) & (w->hcap - 1)) {
        if (w->hk[i] == id) {
            uint32_t e = w->hv[i];
            return &w->hblk[e >> WR_PAGE_BITS][e & (WR_PAGE - 1)];
        }
        if (!w->hk[i])
            return NULL;
    }
}

/* Name id's slot when it is made, else NULL. */
static inline wr_name *name_peek(const cap_writer *w, uint32_t id)
{
    uint32_t pg = id >> WR_PAGE_BITS;
    if (pg < w->name_pages_n && w->name_pages[pg])
        return &w->name_pages[pg][id & (WR_PAGE - 1)];
    return id >= WR_DIRECT ? name_peek_far(w, id) : NULL;
}

/* name_grow for an id of WR_DIRECT or more, not made yet. */
static wr_name *name_add_far(cap_writer *w, uint32_t id)
{
    if ((w->hn + 1) * 2 > w->hcap) {
        size_t cap = w->hcap ? w->hcap * 2 : 1024;
        uint32_t *k = calloc(cap, sizeof *k), *v = malloc(cap * sizeof *v);
        if (!k || !v) {
            free(k);
            free(v);
            return NULL;
        }
        for (size_t i = 0; i < w->hcap; i++) {
            if (!w->hk[i])
                continue;
            size_t j = wr_hash_at(w->hk[i], cap);
            while (k[j])
                j = (j + 1) & (cap - 1);
            k[j] = w->hk[i];
            v[j] = w->hv[i];
        }
        free(w->hk);
        free(w->hv);
        w->hk = k;
        w->hv = v;
        w->hcap = cap;
    }
    size_t e = w->hent_n;
    if (e >> WR_PAGE_BITS >= w->hblk_n) {
        if ((w->hblk_n & (w->hblk_n - 1)) == 0) { /* 0 or a power of 2 */
            size_t c = w->hblk_n ? w->hblk_n * 2 : 4;
            wr_name **p = realloc(w->hblk, c * sizeof *p);
            if (!p)
                return NULL;
            w->hblk = p;
        }
        if (!(w->hblk[w->hblk_n] = calloc(WR_PAGE, sizeof **w->hblk)))
            return NULL;
        w->hblk_n++;
    }
    size_t i = wr_hash_at(id, w->hcap);
    while (w->hk[i])
        i = (i + 1) & (w->hcap - 1);
    w->hk[i] = id;
    w->hv[i] = (uint32_t)e;
    w->hn++;
    w->hent_n++;
    return &w->hblk[e >> WR_PAGE_BITS][e & (WR_PAGE - 1)];
}

/* name_slot past the pages made: id's page made (zeroed); NULL when out
 * of memory or id past CAP_MAX_NAME_ID. */
__attribute__((noinline)) static wr_name *name_grow(cap_writer *w,
                                                    uint32_t id)
{
    if (id > CAP_MAX_NAME_ID)
        return NULL;
    if (id >= WR_DIRECT)
        return name_add_far(w, id);
    uint32_t pg = id >> WR_PAGE_BITS;
    if (pg >= w->name_pages_n) {
        uint32_t n = w->name_pages_n ? w->name_pages_n : 16;
        while (n <= pg)
            n *= 2;
        wr_name **p = realloc(w->name_pages, (size_t)n * sizeof *p);
        if (!p)
            return NULL;
        memset(p + w->name_pages_n, 0,
               (size_t)(n - w->name_pages_n) * sizeof *p);
        w->name_pages = p;
        w->name_pages_n = n;
    }
    if (!w->name_pages[pg] &&
        !(w->name_pages[pg] = calloc(WR_PAGE, sizeof **w->name_pages)))
        return NULL;
    return &w->name_pages[pg][id & (WR_PAGE - 1)];
}

/* Name id's slot, made (zeroed) when its page is not made yet; NULL when
 * out of memory. A slot never moves. */
static inline wr_name *name_slot(cap_writer *w, uint32_t id)
{
    wr_name *n = name_peek(w, id);
    return n ? n : name_grow(w, id);
}

static int ref_name(cap_writer *w, uint32_t id)
{
    wr_name *n = name_slot(w, id);
    if (!n)
        return -1;
    if (n->block_mark == w->seq)
        return 0;
    if (grow_u32(&w->blk_names, &w->blk_names_cap, w->blk_names_n + 1) != 0)
        return -1;
    n->block_mark = w->seq;
    w->blk_names[w->blk_names_n++] = id;
    return 0;
}

static wr_thread *thread_get(cap_writer *w, uint32_t tid)
{
    if (tid >= w->threads_cap)
        return NULL;
    wr_thread *t = w->threads[tid];
    return t && t->declared ? t : NULL;
}

static int ref_thread_decl(cap_writer *w, uint32_t tid, wr_thread *t)
{
    if (t->block_mark == w->seq)
        return 0;
    if (grow_u32(&w->blk_decl_threads, &w->blk_decl_threads_cap,
                 w->blk_decl_threads_n + 1) != 0)
        return -1;
    t->block_mark = w->seq;
    w->blk_decl_threads[w->blk_decl_threads_n++] = tid;
    return 0;
}

static int ref_track(cap_writer *w, uint32_t track)
{
    wr_track *k = &w->tracks[track];
    if (k->block_mark == w->seq)
        return 0;
    if (grow_u32(&w->blk_tracks, &w->blk_tracks_cap, w->blk_tracks_n + 1) != 0)
        return -1;
    k->block_mark = w->seq;
    w->blk_tracks[w->blk_tracks_n++] = track;
    return 0;
}

/* ---- open / names / threads / tracks ----------------------------------- */

static cap_result write_meta(cap_writer *w, const cap_writer_options *o)
{
    capf_buf *p = &w->payload, *t = &w->tmp;
    p->len = 0;
    t->len = 0;
    capf_buf_varint(t, o ? o->meta_count : 0);
    size_t pairs = t->len;
    for (size_t i = 0; o && i < o->meta_count; i++) {
        capf_buf_str(t, o->meta[i].key);
        capf_buf_str(t, o->meta[i].value);
    }
    if (w->tee) {
        w->meta_n = o ? o->meta_count : 0;
        capf_buf_bytes(&w->meta_pairs, t->data + pairs, t->len - pairs);
        if (w->meta_pairs.failed)
            p->failed = 1;
    }
    capf_buf_section(p, CAPF_SEC_META_KV, t);
    t->len = 0;
    capf_buf_str(t, o && o->clock_source ? o->clock_source : "imported");
    capf_buf_f64(t, o && o->tick_period_ns > 0 ? o->tick_period_ns : 1.0);
    capf_buf_varint(t, o ? o->origin_tick : 0);
    capf_buf_varint(t, o ? o->origin_mono_ns : 0);
    capf_buf_varint(t, capf_zigzag(o ? o->origin_unix_ns : 0));
    capf_buf_section(p, CAPF_SEC_ORIGIN, t);
    w->origin_tick = o ? o->origin_tick : 0;
    w->origin_mono = o ? o->origin_mono_ns : 0;
    w->origin_period = o && o->tick_period_ns > 0 ? o->tick_period_ns : 1.0;
    if (w->tee) {
        capf_buf_bytes(&w->origin_body, t->data, t->len);
        if (w->origin_body.failed)
            p->failed = 1;
    }
    if (t->failed)
        p->failed = 1;
    return put_chunk(w, CAPF_CHUNK_META, p);
}

static cap_result writer_start(cap_writer **out, int fd, int own,
                               const cap_writer_options *o, cap__tee_fn tee,
                               void *tee_user)
{
    if (o) {
        if (o->tick_period_ns != 0 &&
            !(isfinite(o->tick_period_ns) && o->tick_period_ns > 0))
            return CAP_E_MISUSE;
        if (o->meta_count && !o->meta)
            return CAP_E_MISUSE;
        for (size_t i = 0; i < (o->meta_count); i++)
            if (!o->meta[i].key || !o->meta[i].value ||
                strlen(o->meta[i].key) > CAP_MAX_NAME_LEN ||
                strlen(o->meta[i].value) > CAP_MAX_NAME_LEN)
                return CAP_E_MISUSE;
    }
    cap_writer *w = calloc(1, sizeof *w);
    if (!w)
        return CAP_E_NOMEM;
    w->fd = fd;
    w->own_fd = own;
    w->tee = tee;
    w->tee_user = tee_user;
    struct stat sb;
    w->sink_is_file = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
    w->stall_ms = o && o->stall_timeout_ms
                      ? (o->stall_timeout_ms > INT_MAX ? INT_MAX
                                                       : (int)o->stall_timeout_ms)
                      : 5000;
    w->seq = 1;
    w->level = o && o->zstd_level ? o->zstd_level : 3;
    size_t bb = o && o->block_bytes ? o->block_bytes : (1u << 20);
    if (bb < 4096)
        bb = 4096;
    if (bb > (16u << 20))
        bb = 16u << 20;
    w->block_bytes = bb;
    w->zc = ZSTD_createCCtx();
    if (!w->zc) {
        free(w);
        return CAP_E_NOMEM;
    }
    uint8_t hdr[CAPF_HEADER_LEN];
    w->major = o && (o->format_major == CAPF_VERSION_MAJOR ||
                     o->format_major == CAPF_VERSION_MAJOR_SCOPES_R)
                   ? o->format_major
                   : CAPF_VERSION_MAJOR_SCOPES_E;
    w->v11 = w->major != CAPF_VERSION_MAJOR || (o && o->format_minor);
    w->frame_list = w->major == CAPF_VERSION_MAJOR_SCOPES_E &&
                    !(o && o->no_frame_list);
    w->minor = w->major == CAPF_VERSION_MAJOR && w->v11
                   ? CAPF_VERSION_MINOR_NAME_FLAGS
               : w->frame_list ? CAPF_VERSION_MINOR_FRAME_LIST
                               : CAPF_VERSION_MINOR;
    capf_header_encode(hdr, (uint16_t)w->major, (uint16_t)w->minor);
    cap_result r = CAP_OK;
    if (write_all(w, hdr, sizeof hdr, NULL, 0) != 0)
        r = CAP_E_IO;
    if (r == CAP_OK)
        r = write_meta(w, o);
    if (r != CAP_OK) {
        int e = w->saved_errno;
        w->own_fd = 0; /* the caller closes or unlinks on failure */
        cap_writer_abandon(w);
        errno = e;
        return r;
    }
    *out = w;
    return CAP_OK;
}

/* Create path and start a writer on it that owns the descriptor. */
static cap_result start_on_path(cap_writer **out, const char *path,
                                const cap_writer_options *opt, cap__tee_fn tee,
                                void *user)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return CAP_E_IO;
    cap_result r = writer_start(out, fd, 1, opt, tee, user);
    if (r != CAP_OK) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return r;
}

cap_result cap_writer_open_path(cap_writer **out, const char *path,
                                const cap_writer_options *opt)
{
    if (!out || !path)
        return CAP_E_MISUSE;
    *out = NULL;
    return start_on_path(out, path, opt, NULL, NULL);
}

cap_result cap_writer_open_fd(cap_writer **out, int fd,
                              const cap_writer_options *opt)
{
    if (!out || fd < 0)
        return CAP_E_MISUSE;
    *out = NULL;
    return writer_start(out, fd, 0, opt, NULL, NULL);
}

cap_result cap__writer_open_tee(cap_writer **out, const char *path, int fd,
                                const cap_writer_options *opt, cap__tee_fn tee,
                                void *user)
{
    if (!out || !tee || fd < -1)
        return CAP_E_MISUSE;
    *out = NULL;
    return path ? start_on_path(out, path, opt, tee, user)
                : writer_start(out, fd, 0, opt, tee, user);
}

cap_result cap_writer_name(cap_writer *w, uint32_t id, const char *name,
                           const char *file, uint32_t line)
{
    cap_result r = check(w);
    if (r != CAP_OK)
        return r;
    if (id == 0 || id > CAP_MAX_NAME_ID || !name ||
        strlen(name) > CAP_MAX_NAME_LEN ||
        (file && strlen(file) > CAP_MAX_NAME_LEN))
        return CAP_E_MISUSE;
    wr_name *n = name_slot(w, id);
    if (!n)
        return fail(w, CAP_E_NOMEM);
    if (n->name)
        return strcmp(n->name, name) == 0 ? CAP_OK : CAP_E_MISUSE;
    n->name = dup_str(name);
    n->file = dup_str(file);
    n->line = line;
    if (!n->name || (file && !n->file))
        return fail(w, CAP_E_NOMEM);
    return CAP_OK;
}

cap_result cap_writer_name_flags(cap_writer *w, uint32_t id, uint32_t flags)
{
    cap_result r = check(w);
    if (r != CAP_OK)
        return r;
    wr_name *nm = name_peek(w, id);
    if (!w->v11 || id == 0 || !nm || !nm->name ||
        (flags & ~CAP_NAME_FLAGS_KNOWN))
        return CAP_E_MISUSE;
    nm->flags |= flags;
    return CAP_OK;
}

cap_result cap_writer_thread(cap_writer *w, uint32_t tid, const char *name)
{
    cap_result r = check(w);
    if (r != CAP_OK)
        return r;
    if (tid >= CAP_MAX_THREADS || (name && strlen(name) > CAP_MAX_NAME_LEN))
        return CAP_E_MISUSE;
    if (tid >= w->threads_cap) {
        uint32_t n = w->threads_cap ? w->threads_cap : 16;
        while (n <= tid)
            n *= 2;
        wr_thread **p = realloc(w->threads, (size_t)n * sizeof *p);
        if (!p)
            return fail(w, CAP_E_NOMEM);
        memset(p + w->threads_cap, 0, (size_t)(n - w->threads_cap) * sizeof *p);
        w->threads = p;
        w->threads_cap = n;
    }
    wr_thread *t = w->threads[tid];
    if (!t) {
        t = calloc(1, sizeof *t);
        if (!t)
            return fail(w, CAP_E_NOMEM);
        w->threads[tid] = t;
    }
    char *copy = dup_str(name);
    if (name && !copy)
        return fail(w, CAP_E_NOMEM);
    free(t->name);
    t->name = copy;
    t->declared = 1;
    t->block_mark = 0; /* (re)declare in this block */
    if (ref_thread_decl(w, tid, t) != 0)
        return fail(w, CAP_E_NOMEM);
    return CAP_OK;
}

cap_result cap_writer_gpu_track(cap_writer *w, uint32_t track, const char *name,
                                double period_ns)
{
    cap_result r = check(w);
    if (r != CAP_OK)
        return r;
    if (track >= CAP_MAX_TRACKS || !isfinite(period_ns) || period_ns <= 0 ||
        (name && strlen(name) > CAP_MAX_NAME_LEN))
        return CAP_E_MISUSE;
    if (!w->tracks) {
        w->tracks = calloc(CAP_MAX_TRACKS, sizeof *w->tracks);
        if (!w->tracks)
            return fail(w, CAP_E_NOMEM);
        w->tracks_cap = CAP_MAX_TRACKS;
    }
    wr_track *k = &w->tracks[track];
    char *copy = dup_str(name);
    if (name && !copy)
        return fail(w, CAP_E_NOMEM);
    free(k->name);
    k->name = copy;
    k->period = period_ns;
    k->declared = 1;
    k->block_mark = 0;
    if (ref_track(w, track) != 0)
        return fail(w, CAP_E_NOMEM);
    return CAP_OK;
}

static wr_track *track_get(cap_writer *w, uint32_t track)
{
    if (!w->tracks || track >= CAP_MAX_TRACKS || !w->tracks[track].declared)
        return NULL;
    return &w->tracks[track];
}

/* ---- events ------------------------------------------------------------ */

static void maybe_flush(cap_writer *w)
{
    if (w->approx_raw >= w->block_bytes)
        (void)cap_writer_flush(w);
}

/* First event of thread t in this block: snapshot its open stack. */
static int thread_enter_block(cap_writer *w, uint32_t tid, wr_thread *t,
                              uint64_t tick)
{
    if (grow_u32(&w->blk_threads, &w->blk_threads_cap, w->blk_threads_n + 1))
        return -1;
    if (ref_thread_decl(w, tid, t) != 0)
        return -1;
    w->blk_threads[w->blk_threads_n++] = tid;
    t->events_mark = w->seq;
    t->base = t->prev = tick;
    t->n_events = 0;
    t->open.len = t->tokens.len = t->deltas.len = 0;
    capf_buf_varint(&t->open, t->depth);
    for (uint32_t i = 0; i < t->depth; i++) {
        if (ref_name(w, t->stack[i].name) != 0)
            return -1;
        capf_buf_varint(&t->open, t->stack[i].name);
        capf_buf_varint(&t->open, tick - t->stack[i].begin);
        capf_buf_varint(&t->open, t->stack[i].children);
    }
    w->approx_raw += 8 + (size_t)t->depth * 6;
    return t->open.failed ? -1 : 0;
}

static inline uint64_t thread_tick(wr_thread *t, uint64_t tick)
{
    if (tick < t->last_tick) {
        t->backwards++;
        tick = t->last_tick;
    }
    t->last_tick = tick;
    return tick;
}

static inline void put_event(cap_writer *w, wr_thread *t, uint32_t token,
                             uint64_t tick)
{
    capf_buf_varint(&t->tokens, token);
    capf_buf_varint(&t->deltas, tick - t->prev);
    t->prev = tick;
    t->n_events++;
    w->approx_raw += 3;
}

cap_result cap_writer_scope_begin(cap_writer *w, uint32_t tid, uint32_t name,
                                  uint64_t tick)
{
    cap_result r = check(w);
    if (r != CAP_OK)
        return r;
    wr_thread *t = thread_get(w, tid);
    if (!t || name == 0 || name > CAP_MAX_NAME_ID)
        return CAP_E_MISUSE;
    tick = thread_tick(t, tick);
    if (t->depth >= CAP_MAX_DEPTH) {
        t->overflow++;
        t->dropped++;
        if (ref_thread_decl(w, tid, t) != 0)
            return fail(w, CAP_E_NOMEM);
        return CAP_E_LIMIT;
    }
    if (t->events_mark != w->seq && thread_enter_block(w, tid, t, tick) != 0)
        return fail(w, CAP_E_NOMEM);
    if (ref_name(w, name) != 0)
        return fail(w, CAP_E_NOMEM);
    if (t->depth == t->stack_cap) {
        uint32_t n = t->stack_cap ? t->stack_cap * 2 : 16;
        wr_open *s = realloc(t->stack, n * sizeof *s);
        if (!s)
            return fail(w, CAP_E_NOMEM);
        t->stack = s;
        t->stack_cap = n;
    }
    t->stack[t->depth++] = (wr_open){name, tick, 0};
    put_event(w, t, name, tick);
    maybe_flush(w);
    return w->err == CAP_OK ? CAP_OK : w->err;
}

cap_result cap_writer_scope_end(cap_writer *w, uint32_t tid, uint64_t tick)
{
    cap_result r = check(w);
    if (r != CAP_OK)
        return r;
    wr_thread *t = thread_get(w, tid);
    if (!t)
        return CAP_E_MISUSE;
    if (t->overflow) {
        t->overflow--;
        return CAP_OK;
    }
    if (t->depth == 0) {
        if (w->v11) {
            t->stray++;
            (void)ref_thread_decl(w, tid, t);
        }
        return CAP_E_MISUSE;
    }
    tick = thread_tick(t, tick);
    if (t->events_mark != w->seq && thread_enter_block(w, tid, t, tick) != 0)
        return fail(w, CAP_E_NOMEM);
    wr_open *o = &t->stack[--t->depth];
    uint64_t dur = tick - o->begin;
    if (t->depth)
        t->stack[t->depth - 1].children += dur;
    put_event(w, t, 0, tick);
    maybe_flush(w);
    return w->err == CAP_OK ? CAP_OK : w->err;
}

/* A varint into a buffer the caller has already sized. */
static inline uint8_t *put_varint_unchecked(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Records encoded between two capacity checks: each takes at most 4 token
 * bytes (ids fit 24 bits) and 10 delta bytes. */
#define RECORDS_CHUNK 1024u
/* How far ahead to prefetch the records: the recording thread has just
 * written them, on another core. */
#define RECORDS_PREFETCH 32u

size_t cap__writer_records(cap_writer *w, uint32_t tid, const cap__rec *rec,
                           size_t n, uint64_t lo, uint64_t hi,
                           uint64_t *skipped)
{
    *skipped = 0;
    if (check(w) != CAP_OK)
        return n;
    wr_thread *t = thread_get(w, tid);
    if (!t)
        return n;
    const uint32_t id_mask = (1u << CAP__KIND_SHIFT) - 1;
    const size_t block_bytes = w->block_bytes;
    size_t i = 0;
    uint64_t skip = 0;
    /* The loop keeps all the state it touches in locals (its byte stores
     * may alias anything, so fields would be reloaded after each one);
     * SYNC stores the state back before any other code runs. */
    uint8_t *tp, *dp;
    uint64_t prev, last, n_events, approx, backwards;
    uint32_t depth;
#define SYNC()                                                                 \
    do {                                                                       \
        t->tokens.len = (size_t)(tp - t->tokens.data);                         \
        t->deltas.len = (size_t)(dp - t->deltas.data);                         \
        t->prev = prev;                                                        \
        t->last_tick = last;                                                   \
        t->n_events = n_events;                                                \
        t->backwards = backwards;                                              \
        t->depth = depth;                                                      \
        w->approx_raw = approx;                                                \
        *skipped = skip;                                                       \
    } while (0)
    while (i < n) {
        size_t chunk = n - i < RECORDS_CHUNK ? n - i : RECORDS_CHUNK;
        if (capf_buf_reserve(&t->tokens, chunk * 4) != 0 ||
            capf_buf_reserve(&t->deltas, chunk * 10) != 0) {
            fail(w, CAP_E_NOMEM);
            return n;
        }
        tp = t->tokens.data + t->tokens.len;
        dp = t->deltas.data + t->deltas.len;
        prev = t->prev;
        last = t->last_tick;
        n_events = t->n_events;
        backwards = t->backwards;
        depth = t->depth;
        approx = w->approx_raw;
        wr_open *const stack = t->stack;
        const uint32_t stack_cap = t->stack_cap;
        /* no name is made in this loop: the pages stay */
        wr_name *const *const pages = w->name_pages;
        const uint32_t npages = w->name_pages_n;
        const uint64_t seq = w->seq;
        /* not in the block yet: the first event goes the per-event way */
        const int in_block = t->events_mark == seq && !t->overflow;
        int resume = 0; /* left early: state synced, start over */
        for (size_t end = i + chunk; i < end; i++) {
            if (i + RECORDS_PREFETCH < n)
                __builtin_prefetch(&rec[i + RECORDS_PREFETCH]);
            uint64_t tick = rec[i].tick;
            uint32_t word = rec[i].word;
            uint32_t id = word & id_mask;
            int begin = (word >> CAP__KIND_SHIFT) == CAP__KIND_BEGIN;
            if (tick < lo || tick > hi) {
                SYNC();
                return i;
            }
            int fast = in_block;
            if (begin) {
                if (id == 0 || id > CAP_MAX_NAME_ID) {
                    skip++;
                    continue;
                }
                const uint32_t pg = id >> WR_PAGE_BITS;
                const wr_name *nm =
                    pg < npages && pages[pg]
                        ? &pages[pg][id & (WR_PAGE - 1)]
                        : NULL;
                if (!nm || !nm->name) {
                    SYNC();
                    return i;
                }
                fast = fast && depth < stack_cap && nm->block_mark == seq;
                if (fast) {
                    if (tick < last) {
                        backwards++;
                        tick = last;
                    }
                    last = tick;
                    stack[depth++] = (wr_open){id, tick, 0};
                }
            } else {
                fast = fast && depth;
                if (fast) {
                    if (tick < last) {
                        backwards++;
                        tick = last;
                    }
                    last = tick;
                    --depth;
                    if (depth)
                        stack[depth - 1].children += tick - stack[depth].begin;
                    id = 0;
                }
            }
            if (!fast) {
                /* first event in a block, a name new to the block, a
                 * deeper stack, or a misuse: the per-event path knows them
                 * all */
                SYNC();
                if (begin)
                    (void)cap_writer_scope_begin(w, tid, id, tick);
                else
                    (void)cap_writer_scope_end(w, tid, tick);
                resume = 1;
                i++;
                break;
            }
            tp = put_varint_unchecked(tp, id);
            dp = put_varint_unchecked(dp, tick - prev);
            prev = tick;
            n_events++;
            approx += 3;
            if (approx >= block_bytes) {
                SYNC();
                (void)cap_writer_flush(w);
                resume = 1;
                i++;
                break;
            }
        }
        if (!resume)
            SYNC();
        else if (w->err != CAP_OK)
            return n;
    }
#undef SYNC
    return n;
}

cap_result cap_writer_frame(cap_writer *w, uint64_t index, uint64_t begin_tick,
                            uint64_t end_tick)
{
    cap_result r = check(w);
    if (r != CAP_OK)
        return r;
    if (end_tick < begin_tick ||
        (w->have_last_frame && index <= w->last_frame_index))
        return CAP_E_MISUSE;
    if (w->frames_n == 0) {
        w->frame_prev_index = 0;
        w->frame_prev_begin = 0;
        w->frame_prev_end = 0;
        w->blk_first_frame = index;
    }
    capf_buf_varint(&w->frames, index - w->frame_prev_index);
    capf_buf_varint(&w->frames, capf_zigzag((int64_t)(begin_tick -
                                                      w->frame_prev_begin)));
    capf_buf_varint(&w->frames, end_tick - begin_tick);
    if (w->frame_list) { /* a frame that begins where the last ended: a
                            zero gap, one byte */
        capf_buf_varint(&w->lframes, index - w->frame_prev_index);
        capf_buf_varint(&w->lframes, capf_zigzag((int64_t)(
                                         begin_tick - w->frame_prev_end)));
        capf_buf_varint(&w->lframes, end_tick - begin_tick);
        w->frame_prev_end = end_tick;
    }
    w->frame_prev_index = index;
    w->frame_prev_begin = begin_tick;
    w->frames_n++;
    w->have_last_frame = 1;
    w->last_frame_index = index;
    w->approx_raw += 8;
    maybe_flush(w);
    return w->err == CAP_OK ? CAP_OK : w->err;
}

cap_result cap_writer_counter(cap_writer *w, uint32_t name, uint64_t tick,
                              double value)
{
    cap_result r = check(w);
    if (r != CAP_OK)
        return r;
    if (name == 0 || name > CAP_MAX_NAME_ID)
        return CAP_E_MISUSE;
    if (ref_name(w, name) != 0)
        return fail(w, CAP_E_NOMEM);
    if (w->counters_n == 0)
        w->counter_prev_tick = 0;
    capf_buf_varint(&w->counters, name);
    capf_buf_varint(&w->counters,
                    capf_zigzag((int64_t)(tick - w->counter_prev_tick)));
    capf_buf_f64(&w->counters, value);
    w->counter_prev_tick = tick;
    w->counters_n++;
    w->approx_raw += 14;
    maybe_flush(w);
    return w->err == CAP_OK ? CAP_OK : w->err;
}

/* Append track k's latest calibration to this block's GPU sections. */
static void put_calibration(cap_writer *w, uint32_t track, wr_track *k)
{
    capf_buf *t = &w->tmp;
    t->len = 0;
    capf_buf_varint(t, track);
    capf_buf_varint(t, k->cal_gpu);
    capf_buf_varint(t, k->cal_cpu);
    capf_buf_varint(t, k->cal_dev);
    capf_buf_section(&w->gpu, CAPF_SEC_GPU_CAL, t);
    w->approx_raw += t->len + 2;
    k->cal_mark = w->seq;
}

#define ONE_SECOND_NS 1e9

cap_result cap_writer_gpu_frame(cap_writer *w, uint32_t track,
                                uint64_t cpu_frame, const cap_gpu_span *spans,
                                size_t n)
{
    cap_result r = check(w);
    if (r != CAP_OK)
        return r;
    wr_track *k = track_get(w, track);
    if (!k || (n && !spans))
        return CAP_E_MISUSE;
    if (n > CAP_MAX_GPU_SPANS)
        return CAP_E_LIMIT;
    for (size_t i = 0; i < n; i++)
        if (spans[i].name == 0 || spans[i].name > CAP_MAX_NAME_ID ||
            spans[i].parent >= (int32_t)i || spans[i].parent < -1)
            return CAP_E_MISUSE;
    if (n == 0)
        return CAP_OK;
    /* Drop invalid pairs; re-parent their children to the nearest kept
     * ancestor. map[i] is span i's index among the kept spans, or -1. */
    int32_t *map = malloc(n * sizeof *map);
    if (!map)
        return fail(w, CAP_E_NOMEM);
    size_t kept = 0;
    uint64_t base = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        const cap_gpu_span *s = &spans[i];
        int ok = 1;
        if (s->measured) {
            if (s->end_tick <= s->begin_tick ||
                (double)(s->end_tick - s->begin_tick) * k->period >
                    ONE_SECOND_NS)
                ok = 0;
            else if (s->begin_tick < base)
                base = s->begin_tick;
        }
        map[i] = ok ? (int32_t)kept++ : -1;
        if (!ok)
            k->invalid++;
    }
    if (base == UINT64_MAX)
        base = 0;
    if (ref_track(w, track) != 0) {
        free(map);
        return fail(w, CAP_E_NOMEM);
    }
    if (k->has_cal && k->cal_mark != w->seq)
        put_calibration(w, track, k);
    capf_buf *t = &w->tmp;
    t->len = 0;
    capf_buf_varint(t, track);
    capf_buf_varint(t, cpu_frame);
    capf_buf_varint(t, base);
    capf_buf_varint(t, kept);
    for (size_t i = 0; i < n; i++) {
        if (map[i] < 0)
            continue;
        const cap_gpu_span *s = &spans[i];
        int32_t p = s->parent;
        while (p >= 0 && map[p] < 0)
            p = spans[p].parent;
        if (ref_name(w, s->name) != 0) {
            free(map);
            return fail(w, CAP_E_NOMEM);
        }
        capf_buf_varint(t, s->name);
        capf_buf_varint(t, p >= 0 ? (uint64_t)map[p] + 1 : 0);
        capf_buf_u8(t, s->measured ? 1 : 0);
        if (s->measured) {
            capf_buf_varint(t, s->begin_tick - base);
            capf_buf_varint(t, s->end_tick - s->begin_tick);
        }
    }
    free(map);
    capf_buf_section(&w->gpu, CAPF_SEC_GPU_FRAME, t);
    w->approx_raw += t->len + 4;
    if (t->failed || w->gpu.failed)
        return fail(w, CAP_E_NOMEM);
    maybe_flush(w);
    return w->err == CAP_OK ? CAP_OK : w->err;
}

cap_result cap_writer_gpu_calibration(cap_writer *w, uint32_t track,
                                      uint64_t gpu_tick, uint64_t cpu_tick,
                                      uint64_t deviation_ns)
{
    cap_result r = check(w);
    if (r != CAP_OK)
        return r;
    wr_track *k = track_get(w, track);
    if (!k)
        return CAP_E_MISUSE;
    if (ref_track(w, track) != 0)
        return fail(w, CAP_E_NOMEM);
    k->has_cal = 1;
    k->cal_gpu = gpu_tick;
    k->cal_cpu = cpu_tick;
    k->cal_dev = deviation_ns;
    put_calibration(w, track, k);
    return w->gpu.failed ? fail(w, CAP_E_NOMEM) : CAP_OK;
}

cap_result cap_writer_dropped(cap_writer *w, uint32_t tid, uint64_t scopes)
{
    cap_result r = check(w);
    if (r != CAP_OK)
        return r;
    wr_thread *t = thread_get(w, tid);
    if (!t)
        return CAP_E_MISUSE;
    t->dropped += scopes;
    if (ref_thread_decl(w, tid, t) != 0)
        return fail(w, CAP_E_NOMEM);
    return CAP_OK;
}

cap_result cap_writer_scope_counts(cap_writer *w, uint32_t tid,
                                   uint64_t closed_at_end,
                                   uint64_t clock_backwards,
                                   uint64_t stray_ends)
{
    cap_result r = check(w);
    if (r != CAP_OK)
        return r;
    wr_thread *t = thread_get(w, tid);
    if (!t || (stray_ends && !w->v11))
        return CAP_E_MISUSE;
    t->closed_at_end += closed_at_end;
    t->backwards += clock_backwards;
    t->stray += stray_ends;
    if (ref_thread_decl(w, tid, t) != 0)
        return fail(w, CAP_E_NOMEM);
    return CAP_OK;
}

/* Thread t's next events start a block, whose open-stack prefix is made
 * from its stack then: the block under way is written first when t has
 * events in it. */
static cap_result thread_new_block(cap_writer *w, const wr_thread *t)
{
    return t->events_mark == w->seq ? cap_writer_flush(w) : CAP_OK;
}

cap_result cap_writer_scope_forget(cap_writer *w, uint32_t tid, uint32_t n)
{
    cap_result r = check(w);
    if (r != CAP_OK)
        return r;
    wr_thread *t = thread_get(w, tid);
    if (!t)
        return CAP_E_MISUSE;
    if (n > t->depth)
        n = t->depth;
    if (n == 0)
        return CAP_OK;
    /* the block under way ends with them open; the next one's open-stack
     * prefix no longer holds them */
    r = thread_new_block(w, t);
    if (r == CAP_OK)
        t->depth -= n;
    return r;
}

cap_result cap_writer_scope_children(cap_writer *w, uint32_t tid,
                                     uint32_t depth, uint64_t ticks)
{
    cap_result r = check(w);
    if (r != CAP_OK)
        return r;
    wr_thread *t = thread_get(w, tid);
    if (!t || depth >= t->depth)
        return CAP_E_MISUSE;
    if (ticks == 0)
        return CAP_OK;
    /* a scope's children time is written in a block's open-stack prefix */
    r = thread_new_block(w, t);
    if (r == CAP_OK)
        t->stack[depth].children += ticks;
    return r;
}

cap_result cap_writer_gpu_dropped(cap_writer *w, uint32_t track,
                                  uint64_t untimed_frames,
                                  uint64_t invalid_spans)
{
    cap_result r = check(w);
    if (r != CAP_OK)
        return r;
    wr_track *k = track_get(w, track);
    if (!k)
        return CAP_E_MISUSE;
    k->untimed += untimed_frames;
    k->invalid += invalid_spans;
    if (ref_track(w, track) != 0)
        return fail(w, CAP_E_NOMEM);
    return CAP_OK;
}

cap_result cap_writer_clock_sample(cap_writer *w, uint64_t tick,
                                   uint64_t mono_ns)
{
    cap_result r = check(w);
    if (r != CAP_OK)
        return r;
    w->have_clock = 1;
    w->clock_tick = tick;
    w->clock_mono = mono_ns;
    return CAP_OK;
}

/* ---- blocks ------------------------------------------------------------ */

static void put_names(cap_writer *w, capf_buf *p, const uint32_t *ids,
                      size_t n)
{
    capf_buf *t = &w->tmp;
    t->len = 0;
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        const wr_name *nm = name_peek(w, ids[i]);
        if (nm && nm->name)
            count++;
    }
    if (!count)
        return;
    capf_buf_varint(t, count);
    for (size_t i = 0; i < n; i++) {
        const wr_name *nm = name_peek(w, ids[i]);
        if (!nm || !nm->name)
            continue;
        capf_buf_varint(t, ids[i]);
        capf_buf_str(t, nm->name);
        capf_buf_str(t, nm->file);
        capf_buf_varint(t, nm->line);
    }
    capf_buf_section(p, CAPF_SEC_NAMES, t);
    /* format 1.1: the flags of the names just listed that have any */
    t->len = 0;
    count = 0;
    for (size_t i = 0; i < n; i++) {
        const wr_name *nm = name_peek(w, ids[i]);
        if (nm && nm->name && nm->flags)
            count++;
    }
    if (!count)
        return;
    capf_buf_varint(t, count);
    for (size_t i = 0; i < n; i++) {
        const wr_name *nm = name_peek(w, ids[i]);
        if (!nm || !nm->name || !nm->flags)
            continue;
        capf_buf_varint(t, ids[i]);
        capf_buf_varint(t, nm->flags);
    }
    capf_buf_section(p, CAPF_SEC_NAME_FLAGS, t);
}

static void put_threads(cap_writer *w, capf_buf *p, const uint32_t *ids,
                        size_t n)
{
    if (!n)
        return;
    capf_buf *t = &w->tmp;
    t->len = 0;
    capf_buf_varint(t, n);
    for (size_t i = 0; i < n; i++) {
        capf_buf_varint(t, ids[i]);
        capf_buf_str(t, w->threads[ids[i]]->name);
    }
    capf_buf_section(p, CAPF_SEC_THREADS, t);
}

static void put_tracks(cap_writer *w, capf_buf *p, const uint32_t *ids,
                       size_t n)
{
    if (!n)
        return;
    capf_buf *t = &w->tmp;
    t->len = 0;
    capf_buf_varint(t, n);
    for (size_t i = 0; i < n; i++) {
        capf_buf_varint(t, ids[i]);
        capf_buf_str(t, w->tracks[ids[i]].name);
        capf_buf_f64(t, w->tracks[ids[i]].period);
    }
    capf_buf_section(p, CAPF_SEC_TRACKS, t);
}

static void put_stats(cap_writer *w, capf_buf *p)
{
    capf_buf *t = &w->tmp;
    t->len = 0;
    size_t n = 0;
    capf_buf body = {0};
#define STAT(kind, subj, val)                                                  \
    do {                                                                       \
        if (val) {                                                             \
            capf_buf_varint(&body, kind);                                      \
            capf_buf_varint(&body, subj);                                      \
            capf_buf_varint(&body, val);                                       \
            n++;                                                               \
            val = 0;                                                           \
        }                                                                      \
    } while (0)
    for (size_t i = 0; i < w->blk_decl_threads_n; i++) {
        wr_thread *th = w->threads[w->blk_decl_threads[i]];
        STAT(CAPF_STAT_DROPPED_SCOPES, w->blk_decl_threads[i], th->dropped);
        STAT(CAPF_STAT_CLOSED_AT_END, w->blk_decl_threads[i], th->closed_at_end);
        STAT(CAPF_STAT_CLOCK_BACKWARDS, w->blk_decl_threads[i], th->backwards);
        STAT(CAPF_STAT_STRAY_ENDS, w->blk_decl_threads[i], th->stray);
    }
    for (size_t i = 0; i < w->blk_tracks_n; i++) {
        wr_track *k = &w->tracks[w->blk_tracks[i]];
        STAT(CAPF_STAT_GPU_UNTIMED, w->blk_tracks[i], k->untimed);
        STAT(CAPF_STAT_GPU_INVALID, w->blk_tracks[i], k->invalid);
    }
#undef STAT
    if (n) {
        capf_buf_varint(t, n);
        capf_buf_bytes(t, body.data, body.len);
        if (body.failed)
            t->failed = 1;
        capf_buf_section(p, CAPF_SEC_STATS, t);
    }
    capf_buf_free(&body);
}

static int block_empty(const cap_writer *w)
{
    return w->blk_threads_n == 0 && w->frames_n == 0 && w->counters_n == 0 &&
           w->gpu.len == 0 && w->blk_decl_threads_n == 0 &&
           w->blk_tracks_n == 0 && w->blk_names_n == 0;
}

static void block_reset(cap_writer *w)
{
    w->seq++;
    w->approx_raw = 0;
    w->blk_names_n = w->blk_threads_n = w->blk_decl_threads_n = 0;
    w->blk_tracks_n = 0;
    w->frames.len = 0;
    w->lframes.len = 0;
    w->frames_n = 0;
    w->counters.len = 0;
    w->counters_n = 0;
    w->gpu.len = 0;
}

/* The start of a pass over a section's events: the stack of open names
 * (w->sr_stack, made once) and a new generation for the names' per-pass
 * marks. 0 when out of memory. */
static uint64_t sr_pass(cap_writer *w)
{
    if (!w->sr_stack &&
        !(w->sr_stack = malloc(CAP_MAX_DEPTH * sizeof *w->sr_stack)))
        return 0;
    return ++w->sr_gen;
}

/* Events sampled from the start of a section to choose its encoding. */
#define SR_SAMPLE 4096u

/* Does th's section repeat itself: among its first SR_SAMPLE events, do
 * most deltas equal the previous delta of the same (name, begin|end)? A
 * clock that ticks coarsely under a steady loop records such sections;
 * zstd's matches shrink their plain deltas (SCOPES) several times more
 * than any residual, so they stay plain. */
static int scopes_repeat(cap_writer *w, const wr_thread *th)
{
    uint64_t gen = sr_pass(w);
    if (!gen)
        return 1;
    capf_cur o = {th->open.data, th->open.data + th->open.len, 0};
    uint32_t depth = (uint32_t)capf_cur_varint(&o);
    for (uint32_t i = 0; i < depth && i < CAP_MAX_DEPTH; i++) {
        w->sr_stack[i] = (uint32_t)capf_cur_varint(&o);
        (void)capf_cur_varint(&o);
        (void)capf_cur_varint(&o);
    }
    capf_cur tk = {th->tokens.data, th->tokens.data + th->tokens.len, 0};
    capf_cur dl = {th->deltas.data, th->deltas.data + th->deltas.len, 0};
    uint64_t n = th->n_events < SR_SAMPLE ? th->n_events : SR_SAMPLE;
    uint64_t same = 0, seen = 0;
    for (uint64_t e = 0; e < n && !tk.bad && !dl.bad; e++) {
        uint32_t tok = (uint32_t)capf_cur_varint(&tk);
        uint64_t d = capf_cur_varint(&dl);
        uint32_t id;
        int kind = tok == 0;
        if (tok) {
            if (depth >= CAP_MAX_DEPTH)
                return 1;
            id = w->sr_stack[depth++] = tok;
        } else {
            if (depth == 0)
                return 1;
            id = w->sr_stack[--depth];
        }
        wr_name *nm = name_slot(w, id);
        if (!nm)
            return 1;
        if (nm->sr_gen[kind] == gen) {
            seen++;
            same += nm->sr_m[kind] == d;
        }
        nm->sr_m[kind] = d;
        nm->sr_gen[kind] = gen;
    }
    return 2 * same > seen;
}

/* Deltas above this stay out of a context's mean (gaps, not timings);
 * the sum of at most 2^23 of them fits 64 bits. */
#define SR_MEAN_MAX ((uint64_t)1 << 40)
#define SR_MEAN_COUNT ((uint64_t)1 << 23)

/* Sections of at most this many events give every context class 0: the
 * class byte of each table entry costs more there than keeping residuals
 * of one scale together saves. */
#define SR_SMALL_EVENTS 4096u

/* mean rounded to the nearest multiple of 2^s (0 and 40 or more: as it
 * is), the coarse predictions of small sections (sr_pred, se_pred). */
static uint64_t round_pow2(uint64_t mean, unsigned s)
{
    if (s == 0 || s >= 40)
        return mean;
    uint64_t half = (uint64_t)1 << (s - 1);
    return (mean + half) >> s << s;
}

/* A context's prediction: the mean of its n deltas (sq: the sum of their
 * squares), rounded to a multiple of 2^s when n is small, where a table
 * entry's low bits cost more than they save on so few residuals. s is
 * floor(log2(sd)) of the deltas' standard deviation sd, plus 1 for up to 8
 * deltas; a context of one delta has no spread and takes sd = mean / 8;
 * above 64 deltas the mean stays exact. Bounded by SR_MEAN_MAX. */
static uint64_t sr_pred(uint64_t mean, uint64_t n, double sq)
{
    if (n == 0 || n > 64)
        return mean;
    int s; /* floor(log2(sd)) by exponents: no sqrt or log per context */
    if (n == 1) {
        s = (int)capf_bitlen(mean) - 4; /* sd = mean / 8 */
    } else {
        double m = (double)mean, var = sq / (double)n - m * m;
        int e = 1;
        if (var > 1)
            (void)frexp(var, &e); /* var = f * 2^e, f in [0.5, 1) */
        s = (e - 1) / 2 + (n <= 8);
    }
    return s <= 0 ? mean : round_pow2(mean, (unsigned)s);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A walk over th's events with the open stack's names in w->sr_stack:
 * BODY sees e (event number), tok, d, id (its name: the top's for an
 * end) and kind (1: end). -1 on a stack the writer cannot have made. */
#define SE_WALK(w, th, ...)                                                    \
    do {                                                                       \
        capf_cur o_ = {(th)->open.data, (th)->open.data + (th)->open.len, 0};  \
        uint32_t depth_ = (uint32_t)capf_cur_varint(&o_);                      \
        for (uint32_t i_ = 0; i_ < depth_ && i_ < CAP_MAX_DEPTH; i_++) {       \
            (w)->sr_stack[i_] = (uint32_t)capf_cur_varint(&o_);                \
            (void)capf_cur_varint(&o_);                                        \
            (void)capf_cur_varint(&o_);                                        \
        }                                                                      \
        capf_cur tk_ = {(th)->tokens.data,                                     \
                        (th)->tokens.data + (th)->tokens.len, 0};              \
        capf_cur dl_ = {(th)->deltas.data,                                     \
                        (th)->deltas.data + (th)->deltas.len, 0};              \
        for (uint64_t e = 0; e < (th)->n_events; e++) {                        \
            uint32_t tok = (uint32_t)capf_cur_varint(&tk_);                    \
            uint64_t d = capf_cur_varint(&dl_);                                \
            uint32_t id;                                                       \
            int kind = tok == 0;                                               \
            if (tok) {                                                         \
                if (depth_ >= CAP_MAX_DEPTH)                                   \
                    return -1;                                                 \
                id = (w)->sr_stack[depth_++] = tok;                            \
            } else {                                                           \
                if (depth_ == 0)                                               \
                    return -1;                                                 \
                id = (w)->sr_stack[--depth_];                                  \
            }                                                                  \
            wr_name *nm = name_peek((w), id);                                  \
            if (!nm)                                                           \
                return -1;                                                     \
            __VA_ARGS__                                                        \
        }                                                                      \
        if (tk_.bad || dl_.bad || o_.bad)                                      \
            return -1;                                                         \
    } while (0)

/* SE_WALK for each event but the first, with key = id << 1 | kind (the
 * context of SCOPES_R's predictions). */
#define SR_WALK(w, th, BODY)                                                   \
    SE_WALK(w, th, if (e == 0) continue; /* at base: no delta stored */       \
            uint64_t key = (uint64_t)id << 1 | (uint64_t)kind; BODY)

/* The rest of th's SCOPES_R body after tokens_len (format-spec "SCOPES_R
 * (0x0D)"): the prediction table, the class table, the tokens, then every
 * class's lo and hi streams, made from the tokens and plain deltas the
 * thread gathered. Each context's prediction is the mean of its deltas in
 * the section (gaps above 2^40 ticks left out), rounded when it has few
 * (sr_pred), its class the bit length of that prediction, or 0 in a
 * section of at most SR_SMALL_EVENTS events. Small blocks (a flush every
 * few frames) so pay less for their table, which zstd cannot share
 * between blocks. The writer thread pays two passes once per block;
 * recording paths are unchanged. -1 when out of memory. */
static int put_scopes_r(cap_writer *w, capf_buf *t, const wr_thread *th)
{
    uint64_t gen = sr_pass(w);
    if (!gen)
        return -1;
    size_t nkeys = 0;
    /* pass 1: each context's sum and count, its key listed once */
    SR_WALK(w, th, {
        if (nm->sr_gen[kind] != gen) {
            if (nkeys == w->sr_keys_cap) {
                size_t c = w->sr_keys_cap ? 2 * w->sr_keys_cap : 256;
                uint64_t *k = realloc(w->sr_keys, c * sizeof *k);
                if (!k)
                    return -1;
                w->sr_keys = k;
                w->sr_keys_cap = c;
            }
            w->sr_keys[nkeys++] = key;
            nm->sr_gen[kind] = gen;
            nm->sr_m[kind] = nm->sr_n[kind] = 0;
            nm->sr_sq[kind] = 0;
        }
        if (d <= SR_MEAN_MAX && nm->sr_n[kind] < SR_MEAN_COUNT) {
            nm->sr_m[kind] += d;
            nm->sr_n[kind]++;
            double dd = (double)(int64_t)d; /* d <= 2^40 */
            nm->sr_sq[kind] += dd * dd;
        }
    });
    int one_class = th->n_events <= SR_SMALL_EVENTS;
    if (nkeys > 1)
        qsort(w->sr_keys, nkeys, sizeof *w->sr_keys, cmp_u64);
    /* the table lists the contexts whose (pred, class) is not (0, 0), the
     * value of a context it leaves out */
    size_t listed = 0;
    for (size_t i = 0; i < nkeys; i++) {
        wr_name *nm = name_peek(w, (uint32_t)(w->sr_keys[i] >> 1));
        int kind = (int)(w->sr_keys[i] & 1);
        uint64_t n = nm->sr_n[kind];
        uint64_t pred = sr_pred(n ? nm->sr_m[kind] / n : 0, n, nm->sr_sq[kind]);
        nm->sr_m[kind] = pred;
        listed += pred != 0;
    }
    capf_buf_varint(t, listed);
    uint64_t prev = 0;
    for (size_t i = 0; i < nkeys; i++) {
        wr_name *nm = name_peek(w, (uint32_t)(w->sr_keys[i] >> 1));
        uint64_t pred = nm->sr_m[w->sr_keys[i] & 1];
        if (!pred)
            continue;
        capf_buf_varint(t, w->sr_keys[i] - prev);
        capf_buf_varint(t, one_class ? 0 : capf_sr_class(pred));
        capf_buf_varint(t, pred);
        prev = w->sr_keys[i];
    }
    /* pass 2: the residuals into their class's streams */
    for (int c = 0; c < CAPF_SR_CLASSES; c++)
        w->sr_lo[c].len = w->sr_hi[c].len = 0;
    unsigned top = 0; /* 1 + the highest class used */
    SR_WALK(w, th, {
        (void)key;
        uint64_t pred = nm->sr_m[kind];
        unsigned c = one_class ? 0 : capf_sr_class(pred);
        uint64_t z = capf_zigzag((int64_t)(d - pred));
        capf_buf_u8(&w->sr_lo[c], (uint8_t)z);
        capf_buf_varint(&w->sr_hi[c], z >> 8);
        if (c >= top)
            top = c + 1;
    });
    unsigned used = 0; /* the stream table: the classes with residuals */
    for (unsigned c = 0; c < top; c++)
        used += w->sr_lo[c].len > 0;
    capf_buf_varint(t, used);
    for (unsigned c = 0; c < top; c++) {
        if (!w->sr_lo[c].len)
            continue;
        capf_buf_varint(t, c);
        capf_buf_varint(t, w->sr_lo[c].len);
        capf_buf_varint(t, w->sr_hi[c].len);
    }
    capf_buf_bytes(t, th->tokens.data, th->tokens.len);
    /* every lo stream, then every hi stream: bytes of one kind together */
    for (unsigned c = 0; c < top; c++) {
        capf_buf_bytes(t, w->sr_lo[c].data, w->sr_lo[c].len);
        if (w->sr_lo[c].failed || w->sr_hi[c].failed)
            return -1;
    }
    for (unsigned c = 0; c < top; c++)
        capf_buf_bytes(t, w->sr_hi[c].data, w->sr_hi[c].len);
    return 0;
}

/* ---- SCOPES_E (format-spec "SCOPES_E (0x0E)") ----------------------------
 * Three passes over th's events: the names and each context's mean, each
 * context's mean absolute deviation (its shift k and residual table),
 * then the coding steps (a token rank, raw bits, a residual symbol) in
 * event order; the tables are the steps' counts scaled to 4096, and the
 * steps are rANS-coded last to first. */


/* The raw bit stream as pass 3 of put_scopes_e writes it: bytes into
 * buf from len on, lowest bits first (the order the reader takes them). */
typedef struct se_bits {
    capf_buf *buf;
    size_t len;
    uint64_t acc;
    unsigned an; /* bits waiting in acc: fewer than 8 between calls */
} se_bits;

/* n raw bits of v, lowest first, at most 16 a step (room for them made by
 * the caller: se_bits_room) */
static inline void se_raw(se_bits *b, unsigned n, uint64_t v)
{
    while (n > 0) {
        unsigned k = n < CAPF_SE_RAW_MAX ? n : CAPF_SE_RAW_MAX;
        b->acc |= (v & ((1u << k) - 1)) << b->an;
        b->an += k;
        v >>= k;
        n -= k;
        for (; b->an >= 8; b->an -= 8, b->acc >>= 8)
            b->buf->data[b->len++] = (uint8_t)b->acc;
    }
}

/* Room for one event's raw bits (at most 24 + 71 of them); -1 when out of
 * memory. */
static inline int se_bits_room(se_bits *b)
{
    if (b->buf->cap - b->len >= 16)
        return 0;
    b->buf->len = b->len;
    return capf_buf_reserve(b->buf, 16);
}

static int se_add_name(cap_writer *w, uint32_t id, size_t *nn, uint64_t gen)
{
    wr_name *nm = name_slot(w, id);
    if (!nm)
        return -1;
    if (nm->se_gen == gen)
        return 0;
    if (*nn == w->se_names_cap) {
        size_t c = w->se_names_cap ? 2 * w->se_names_cap : 256;
        uint32_t *p = realloc(w->se_names, c * sizeof *p);
        if (!p)
            return -1;
        w->se_names = p;
        w->se_names_cap = c;
    }
    w->se_names[(*nn)++] = id;
    nm->se_gen = gen;
    nm->sr_m[0] = nm->sr_m[1] = nm->sr_n[0] = nm->sr_n[1] = 0;
    nm->se_dev[0] = nm->se_dev[1] = 0;
    return 0;
}

/* A context's prediction: the mean of its n deltas, rounded to a multiple
 * of 2^(k + 1) (k its shift) when n is at most 8, of 2^k up to 16: the
 * residual's low k bits are stored raw anyway, and in a small section the
 * name list's low bits cost more than the few residuals lose. Above 16
 * deltas the mean stays exact. */
static uint64_t se_pred(uint64_t mean, uint64_t n, unsigned k)
{
    return n == 0 || n > 16 ? mean : round_pow2(mean, k + (n <= 8));
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Tables of at most this many symbols coded take coarse frequencies. */
#define SE_COARSE_COUNT 2048u

/* counts -> frequencies adding up to CAPF_SE_PROB, each symbol counted
 * at least 1; a table nothing used gives symbol 0 (or 4 for tokens) all.
 * A table of at most SE_COARSE_COUNT symbols (a small section's) gives
 * each symbol but the most used a power of two (the nearer one, about
 * geometrically), the most used the rest: a few hundred table bytes then
 * take few distinct values, which zstd stores in fewer bits than the
 * symbols lose. */
static void se_norm(const uint32_t *cnt, unsigned n, uint32_t *f,
                    unsigned unused_sym)
{
    uint64_t tot = 0;
    unsigned big = 0;
    for (unsigned i = 0; i < n; i++) {
        tot += cnt[i];
        if (cnt[i] > cnt[big])
            big = i;
    }
    if (!tot) {
        for (unsigned i = 0; i < n; i++)
            f[i] = i == unused_sym ? CAPF_SE_PROB : 0;
        return;
    }
    int64_t sum = 0;
    for (unsigned i = 0; i < n; i++) {
        f[i] = cnt[i] ? (uint32_t)(((uint64_t)cnt[i] * CAPF_SE_PROB +
                                    tot / 2) / tot)
                      : 0;
        if (cnt[i] && f[i] == 0)
            f[i] = 1;
        sum += f[i];
    }
    f[big] = (uint32_t)((int64_t)f[big] + (int64_t)CAPF_SE_PROB - sum);
    if (tot > SE_COARSE_COUNT)
        return;
    uint32_t g[CAPF_SE_RES_SYMS];
    uint32_t rest = 0;
    for (unsigned i = 0; i < n && i < CAPF_SE_RES_SYMS; i++) {
        g[i] = f[i];
        if (i == big)
            continue;
        if (f[i] > 1) {
            uint32_t lo = 1u << (31 - __builtin_clz(f[i]));
            g[i] = 7 * f[i] < 11 * lo ? lo : 2 * lo;
        }
        rest += g[i];
    }
    if (n > CAPF_SE_RES_SYMS || rest >= CAPF_SE_PROB)
        return; /* keep the exact table */
    for (unsigned i = 0; i < n; i++)
        f[i] = i == big ? CAPF_SE_PROB - rest : g[i];
}

#define SE_TABLES (CAPF_SE_TOK_TABLES + SE_RES_TABLES)
#define SE_RES_TABLES 8

static int se_out_byte(capf_buf *o, uint8_t b)
{
    capf_buf_u8(o, b);
    return o->failed ? -1 : 0;
}

/* The rest of th's SCOPES_E body after n_events: 0, or -1 when out of
 * memory; or 1, nothing written, where the section repeats itself
 * (scopes_repeat's test, made on the same events in pass 1) and is
 * better written plain. */
static int put_scopes_e(cap_writer *w, capf_buf *t, const wr_thread *th)
{
    uint64_t gen = sr_pass(w);
    if (!gen)
        return -1;
    size_t nn = 0;
    /* the prefix's names, then pass 1: the events' names and sums, and
       on the first SR_SAMPLE events scopes_repeat's test */
    {
        capf_cur o = {th->open.data, th->open.data + th->open.len, 0};
        uint32_t depth = (uint32_t)capf_cur_varint(&o);
        for (uint32_t i = 0; i < depth && !o.bad; i++) {
            uint32_t id = (uint32_t)capf_cur_varint(&o);
            (void)capf_cur_varint(&o);
            (void)capf_cur_varint(&o);
            if (se_add_name(w, id, &nn, gen) != 0)
                return -1;
        }
    }
    uint64_t same = 0, seen = 0; /* scopes_repeat's counts */
    SE_WALK(w, th, {
        if (tok && nm->se_gen != gen) {
            if (se_add_name(w, tok, &nn, gen) != 0)
                return -1;
            nm = name_peek(w, id); /* the same slot: slots never move */
        }
        if (e < SR_SAMPLE) {
            if (nm->sr_gen[kind] == gen) {
                seen++;
                same += nm->se_last[kind] == d;
            }
            nm->se_last[kind] = d;
            nm->sr_gen[kind] = gen;
        }
        if (e > 0 && d <= SR_MEAN_MAX && nm->sr_n[kind] < SR_MEAN_COUNT) {
            nm->sr_m[kind] += d;
            nm->sr_n[kind]++;
        }
    });
    if (2 * same > seen)
        return 1;
    if (nn > 1)
        qsort(w->se_names, nn, sizeof *w->se_names, cmp_u32);
    for (size_t i = 0; i < nn; i++) {
        wr_name *nm = name_peek(w, w->se_names[i]);
        nm->se_dense = (uint32_t)(i + 1);
        for (int k = 0; k < 2; k++)
            nm->sr_m[k] = nm->sr_n[k] ? nm->sr_m[k] / nm->sr_n[k] : 0;
    }
    /* pass 2: the spread of each context's deltas around its mean */
    SE_WALK(w, th, {
        (void)tok;
        if (e > 0 && d <= SR_MEAN_MAX) {
            uint64_t m = nm->sr_m[kind];
            nm->se_dev[kind] += d > m ? d - m : m - d;
        }
    });
    /* each context's shift and table: q = r >> k has a spread of 2..4
     * (tables 0..3 by the spread's place between powers of two), or
     * k = 0 and the spread below 4 (tables 4..7) */
    capf_buf_varint(t, nn);
    uint32_t prev = 0;
    for (size_t i = 0; i < nn; i++) {
        wr_name *nm = name_peek(w, w->se_names[i]);
        capf_buf_varint(t, w->se_names[i] - prev);
        prev = w->se_names[i];
        for (int k = 0; k < 2; k++) {
            double sd = nm->sr_n[k]
                            ? 1.2533 * (double)nm->se_dev[k] / (double)nm->sr_n[k]
                            : 0;
            if (sd < 4) {
                nm->se_k[k] = 0;
                nm->se_tab[k] = (uint8_t)(4 + (unsigned)sd);
            } else {
                double l = log2(sd);
                double fl = floor(l);
                nm->se_k[k] = (uint8_t)(fl - 1);
                unsigned q = (unsigned)((l - fl) * 4);
                nm->se_tab[k] = (uint8_t)(q > 3 ? 3 : q);
            }
            nm->sr_m[k] = se_pred(nm->sr_m[k], nm->sr_n[k], nm->se_k[k]);
            capf_buf_varint(t, nm->sr_m[k]);
            capf_buf_varint(t, (uint64_t)nm->se_k[k] * 16 + nm->se_tab[k]);
        }
    }
    /* pass 3: the coding steps in event order: each symbol (its table <<
     * 8 | the symbol) into w->se_ops and counted in cnt as it comes, its
     * raw bits straight into the raw stream (se_out[2]) */
    size_t nlists = 2 * (nn + 1);
    capf_se_list *lists =
        room(w->se_lists, &w->se_lists_cap, nlists, sizeof *lists);
    if (!lists)
        return -1;
    w->se_lists = lists;
    memset(lists, 0, nlists * sizeof *lists);
    if (th->n_events > (SIZE_MAX / sizeof *w->se_ops) / 2)
        return -1;
    size_t ops_cap = 2 * (size_t)th->n_events; /* a token and a residual */
    uint16_t *const ops = room(w->se_ops, &w->se_ops_cap, ops_cap, sizeof *ops);
    if (!ops)
        return -1;
    w->se_ops = ops;
    size_t nops = 0, nres = 0;
    uint32_t cnt[SE_TABLES][CAPF_SE_RES_SYMS];
    memset(cnt, 0, sizeof cnt);
    se_bits raw = {&w->se_out[2], 0, 0, 0};
    unsigned width = capf_bitlen(nn);
    uint32_t dstack[CAP_MAX_DEPTH];
    {
        capf_cur o = {th->open.data, th->open.data + th->open.len, 0};
        uint32_t depth = (uint32_t)capf_cur_varint(&o);
        for (uint32_t i = 0; i < depth && i < CAP_MAX_DEPTH; i++) {
            const wr_name *nm = name_peek(w, (uint32_t)capf_cur_varint(&o));
            dstack[i] = nm ? nm->se_dense : 0;
            (void)capf_cur_varint(&o);
            (void)capf_cur_varint(&o);
        }
    }
    uint32_t dd = 0; /* depth, as dstack sees it */
    {
        capf_cur o = {th->open.data, th->open.data + th->open.len, 0};
        dd = (uint32_t)capf_cur_varint(&o);
    }
    size_t cur = 1; /* the list after an end of nothing: the start */
    SE_WALK(w, th, {
        if (se_bits_room(&raw) != 0)
            return -1;
        uint32_t v = tok ? nm->se_dense : 0;
        capf_se_list *l = &w->se_lists[cur];
        unsigned s = CAPF_SE_LIST;
        for (unsigned i = 0; i < l->len; i++)
            if (l->v[i] == v) {
                s = i;
                break;
            }
        uint32_t ttab = (uint32_t)(cur & 1) * 15u + l->tb;
        ops[nops++] = (uint16_t)(ttab << 8 | s);
        cnt[ttab][s]++;
        if (s == CAPF_SE_LIST)
            se_raw(&raw, width, v);
        capf_se_list_use(l, s, v);
        uint32_t dn;
        if (tok) {
            dn = dstack[dd++] = v;
            cur = 2 * (size_t)dn;
        } else {
            dn = dstack[--dd];
            cur = 2 * (size_t)dn + 1;
        }
        if (e > 0) {
            uint64_t r = d - nm->sr_m[kind];
            unsigned k = nm->se_k[kind];
            uint32_t tab = CAPF_SE_TOK_TABLES + nm->se_tab[kind];
            uint64_t zq = capf_zigzag((int64_t)r >> k);
            if (zq < CAPF_SE_RES_ESC) {
                se_raw(&raw, k, r);
            } else {
                uint64_t z = capf_zigzag((int64_t)r);
                unsigned bl = capf_bitlen(z);
                zq = CAPF_SE_RES_ESC;
                se_raw(&raw, 7, bl);
                se_raw(&raw, bl, z);
            }
            ops[nops++] = (uint16_t)(tab << 8 | (uint32_t)zq);
            cnt[tab][zq]++;
            nres++;
        }
    });
    if (raw.an > 0)
        raw.buf->data[raw.len++] = (uint8_t)raw.acc;
    raw.buf->len = raw.len;
    /* the tables */
    static const unsigned nsym[2] = {CAPF_SE_TOK_SYMS, CAPF_SE_RES_SYMS};
    uint32_t fr[SE_TABLES][CAPF_SE_RES_SYMS], cum[SE_TABLES][CAPF_SE_RES_SYMS];
    capf_buf_varint(t, SE_RES_TABLES);
    for (unsigned j = 0; j < SE_TABLES; j++) {
        /* residual tables first in the body, token tables after */
        unsigned tb = j < SE_RES_TABLES ? CAPF_SE_TOK_TABLES + j
                                        : j - SE_RES_TABLES;
        unsigned n = nsym[tb >= CAPF_SE_TOK_TABLES];
        se_norm(cnt[tb], n, fr[tb],
                tb >= CAPF_SE_TOK_TABLES ? 0 : CAPF_SE_LIST);
        uint32_t c = 0;
        for (unsigned i = 0; i < n; i++) {
            cum[tb][i] = c;
            c += fr[tb][i];
            capf_buf_varint(t, fr[tb][i]);
        }
    }
    /* the symbols, last to first: tokens in one rANS stream, residuals
     * in another, whose two states take turns (residual j: state j % 2) */
    uint32_t xs[3] = {CAPF_SE_L, CAPF_SE_L, CAPF_SE_L};
    w->se_out[0].len = w->se_out[1].len = 0;
    for (size_t i = nops; i-- > 0;) {
        uint32_t op = ops[i];
        int res = (op >> 8) >= CAPF_SE_TOK_TABLES;
        capf_buf *o = &w->se_out[res];
        int st = res ? 1 + (int)(--nres & 1) : 0;
        uint32_t x = xs[st];
        uint32_t f = fr[op >> 8][op & 0xff], c = cum[op >> 8][op & 0xff];
        if (x >= ((uint64_t)(CAPF_SE_L >> CAPF_SE_PROB_BITS) << 16) * f) {
            /* a word out: high byte first, so that it reads back low
             * byte first once the buffer is reversed */
            if (se_out_byte(o, (uint8_t)(x >> 8)) != 0 ||
                se_out_byte(o, (uint8_t)x) != 0)
                return -1;
            x >>= 16;
        }
        xs[st] = ((x / f) << CAPF_SE_PROB_BITS) + (x % f) + c;
    }
    for (int res = 0; res < 2; res++) {
        capf_buf *o = &w->se_out[res];
        /* the final states, the decoder's first one last */
        for (int st = res ? 2 : 0; st >= res; st--)
            for (int i = 3; i >= 0; i--)
                if (se_out_byte(o, (uint8_t)(xs[st] >> (8 * i))) != 0)
                    return -1;
        /* reversed: the states (lowest byte first), then the words in
         * the order the decoder takes them */
        for (size_t i = 0, j = o->len; i + 1 < j; i++, j--) {
            uint8_t b = o->data[i];
            o->data[i] = o->data[j - 1];
            o->data[j - 1] = b;
        }
    }
    capf_buf_varint(t, w->se_out[0].len);
    capf_buf_varint(t, w->se_out[1].len);
    for (int st = 0; st < 3; st++)
        capf_buf_bytes(t, w->se_out[st].data, w->se_out[st].len);
    return 0;
}

/* The block just written has frames: its clock sample (the block's CLOCK,
 * when it has one) and its frames into the footer's list, as one entry
 * (format-spec: FRAME_LIST). Gives the list up (w->frame_list 0) when out
 * of memory or past its bound: the capture goes on, its footer without a
 * list. */
static void list_block(cap_writer *w)
{
    capf_buf *l = &w->list;
    capf_buf_u8(l, w->have_clock ? 1 : 0);
    if (w->have_clock) {
        capf_buf_varint(l, w->clock_tick);
        capf_buf_varint(l, w->clock_mono);
    }
    capf_buf_varint(l, w->frames_n);
    capf_buf_bytes(l, w->lframes.data, w->lframes.len);
    w->list_n++;
    if (w->lframes.failed || l->failed ||
        l->len > CAPF_FRAME_LIST_MAX_BYTES) {
        w->frame_list = 0;
        capf_buf_free(l);
    }
}

cap_result cap_writer_flush(cap_writer *w)
{
    cap_result r = check(w);
    if (r != CAP_OK)
        return r;
    if (block_empty(w))
        return CAP_OK;
    capf_buf *p = &w->payload, *t = &w->tmp;
    p->len = 0;
    if (w->have_clock) {
        t->len = 0;
        capf_buf_varint(t, w->clock_tick);
        capf_buf_varint(t, w->clock_mono);
        capf_buf_section(p, CAPF_SEC_CLOCK, t);
    }
    put_names(w, p, w->blk_names, w->blk_names_n);
    put_threads(w, p, w->blk_decl_threads, w->blk_decl_threads_n);
    put_tracks(w, p, w->blk_tracks, w->blk_tracks_n);
    if (w->frames_n) {
        t->len = 0;
        capf_buf_varint(t, w->frames_n);
        capf_buf_bytes(t, w->frames.data, w->frames.len);
        capf_buf_section(p, CAPF_SEC_FRAMES, t);
    }
    for (size_t i = 0; i < w->blk_threads_n; i++) {
        uint32_t tid = w->blk_threads[i];
        wr_thread *th = w->threads[tid];
        t->len = 0;
        capf_buf_varint(t, tid);
        capf_buf_varint(t, th->base);
        capf_buf_bytes(t, th->open.data, th->open.len);
        capf_buf_varint(t, th->n_events);
        int kind = w->major == CAPF_VERSION_MAJOR ? CAPF_SEC_SCOPES
                   : w->major == CAPF_VERSION_MAJOR_SCOPES_R || w->hurry
                       ? CAPF_SEC_SCOPES_R
                       : CAPF_SEC_SCOPES_E;
        if (kind == CAPF_SEC_SCOPES_R && scopes_repeat(w, th))
            kind = CAPF_SEC_SCOPES;
        int se = 0; /* put_scopes_e makes scopes_repeat's test itself */
        if (kind == CAPF_SEC_SCOPES_E && (se = put_scopes_e(w, t, th)) > 0)
            kind = CAPF_SEC_SCOPES; /* it wrote nothing */
        if (kind != CAPF_SEC_SCOPES_E)
            capf_buf_varint(t, th->tokens.len);
        if (kind == CAPF_SEC_SCOPES) {
            capf_buf_bytes(t, th->tokens.data, th->tokens.len);
            capf_buf_bytes(t, th->deltas.data, th->deltas.len);
        } else if (kind == CAPF_SEC_SCOPES_R ? put_scopes_r(w, t, th) != 0
                                             : se != 0) {
            t->failed = 1;
        }
        if (th->open.failed || th->tokens.failed || th->deltas.failed)
            t->failed = 1;
        capf_buf_section(p, (uint8_t)kind, t);
        th->events_mark = 0;
    }
    if (w->counters_n) {
        t->len = 0;
        capf_buf_varint(t, w->counters_n);
        capf_buf_bytes(t, w->counters.data, w->counters.len);
        capf_buf_section(p, CAPF_SEC_COUNTERS, t);
    }
    if (w->gpu.len)
        capf_buf_bytes(p, w->gpu.data, w->gpu.len);
    put_stats(w, p);
    if (t->failed || w->frames.failed || w->counters.failed || w->gpu.failed)
        p->failed = 1;

    if (w->index_n == w->index_cap) {
        size_t n = w->index_cap ? w->index_cap * 2 : 64;
        wr_index *x = realloc(w->index, n * sizeof *x);
        if (!x)
            return fail(w, CAP_E_NOMEM);
        w->index = x;
        w->index_cap = n;
    }
    wr_index ix = {w->pos, w->frames_n ? w->blk_first_frame : 0, w->frames_n};
    r = put_chunk(w, CAPF_CHUNK_BLOCK, p);
    if (r != CAP_OK)
        return r;
    w->index[w->index_n++] = ix;
    if (w->frames_n && w->frame_list)
        list_block(w);
    block_reset(w);
    /* Shrink buffers that grew for one large block. */
    if (p->cap > (w->block_bytes * 4))
        capf_buf_free(p);
    return CAP_OK;
}

/* The latest clock sample, then every name, thread and track the writer
 * knows (and, with cals, each track's latest calibration) into p.
 * -1 when out of memory. */
static int put_all_decls(cap_writer *w, capf_buf *p, int cals)
{
    capf_buf *t = &w->tmp;
    if (w->have_clock) {
        t->len = 0;
        capf_buf_varint(t, w->clock_tick);
        capf_buf_varint(t, w->clock_mono);
        capf_buf_section(p, CAPF_SEC_CLOCK, t);
    }
    uint32_t *ids = NULL;
    size_t n = 0, cap = 0;
    for (uint32_t pg = 0; pg < w->name_pages_n; pg++)
        for (uint32_t j = 0; w->name_pages[pg] && j < WR_PAGE; j++)
            if (w->name_pages[pg][j].name) {
                if (grow_u32(&ids, &cap, n + 1) != 0)
                    goto nomem;
                ids[n++] = pg << WR_PAGE_BITS | j;
            }
    size_t near = n; /* then the ids from WR_DIRECT up, in order too */
    for (size_t i = 0; i < w->hcap; i++)
        if (w->hk[i] &&
            w->hblk[w->hv[i] >> WR_PAGE_BITS][w->hv[i] & (WR_PAGE - 1)].name) {
            if (grow_u32(&ids, &cap, n + 1) != 0)
                goto nomem;
            ids[n++] = w->hk[i];
        }
    qsort(ids + near, n - near, sizeof *ids, cmp_u32);
    put_names(w, p, ids, n);
    n = 0;
    for (uint32_t i = 0; i < w->threads_cap; i++)
        if (w->threads[i] && w->threads[i]->declared) {
            if (grow_u32(&ids, &cap, n + 1) != 0)
                goto nomem;
            ids[n++] = i;
        }
    put_threads(w, p, ids, n);
    n = 0;
    for (uint32_t i = 0; i < w->tracks_cap; i++)
        if (w->tracks[i].declared) {
            if (grow_u32(&ids, &cap, n + 1) != 0)
                goto nomem;
            ids[n++] = i;
        }
    put_tracks(w, p, ids, n);
    free(ids);
    for (uint32_t i = 0; cals && i < w->tracks_cap; i++) {
        const wr_track *k = &w->tracks[i];
        if (!k->declared || !k->has_cal)
            continue;
        t->len = 0;
        capf_buf_varint(t, i);
        capf_buf_varint(t, k->cal_gpu);
        capf_buf_varint(t, k->cal_cpu);
        capf_buf_varint(t, k->cal_dev);
        capf_buf_section(p, CAPF_SEC_GPU_CAL, t);
    }
    return t->failed || p->failed ? -1 : 0;
nomem:
    free(ids);
    return -1;
}

static cap_result write_footer(cap_writer *w)
{
    /* Footer: every name, thread and track, the last clock sample and the
     * block index. */
    capf_buf *p = &w->payload, *t = &w->tmp;
    p->len = 0;
    if (put_all_decls(w, p, 0) != 0)
        return fail(w, CAP_E_NOMEM);
    t->len = 0;
    capf_buf_varint(t, w->index_n);
    uint64_t prev = 0;
    for (size_t i = 0; i < w->index_n; i++) {
        capf_buf_varint(t, w->index[i].offset - prev);
        capf_buf_varint(t, w->index[i].first_frame);
        capf_buf_varint(t, w->index[i].frames);
        prev = w->index[i].offset;
    }
    capf_buf_section(p, CAPF_SEC_INDEX, t);
    if (t->failed)
        p->failed = 1;
    if (w->frame_list) { /* 3.1: after the INDEX it matches; left out
                            when it cannot be made (a 3.0 footer) */
        capf_buf l = {0};
        capf_buf_varint(&l, w->list_n);
        capf_buf_bytes(&l, w->list.data, w->list.len);
        if (!l.failed)
            capf_buf_section(p, CAPF_SEC_FRAME_LIST, &l);
        capf_buf_free(&l);
    }
    uint64_t off = w->pos;
    cap_result r = put_chunk(w, CAPF_CHUNK_FOOTER, p);
    if (r != CAP_OK)
        return r;
    uint8_t tr[CAPF_TRAILER_LEN];
    capf_trailer_encode(tr, off);
    if (write_all(w, tr, sizeof tr, NULL, 0) != 0)
        return fail(w, CAP_E_IO);
    return CAP_OK;
}

static void writer_free(cap_writer *w)
{
    if (w->own_fd && w->fd >= 0)
        close(w->fd);
    ZSTD_freeCCtx(w->zc);
    for (uint32_t pg = 0; pg < w->name_pages_n; pg++) {
        for (uint32_t j = 0; w->name_pages[pg] && j < WR_PAGE; j++) {
            free(w->name_pages[pg][j].name);
            free(w->name_pages[pg][j].file);
        }
        free(w->name_pages[pg]);
    }
    free(w->name_pages);
    for (size_t e = 0; e < w->hent_n; e++) {
        free(w->hblk[e >> WR_PAGE_BITS][e & (WR_PAGE - 1)].name);
        free(w->hblk[e >> WR_PAGE_BITS][e & (WR_PAGE - 1)].file);
    }
    for (size_t i = 0; i < w->hblk_n; i++)
        free(w->hblk[i]);
    free(w->hblk);
    free(w->hk);
    free(w->hv);
    for (uint32_t i = 0; i < w->threads_cap; i++) {
        wr_thread *t = w->threads[i];
        if (!t)
            continue;
        free(t->name);
        free(t->stack);
        capf_buf_free(&t->open);
        capf_buf_free(&t->tokens);
        capf_buf_free(&t->deltas);
        free(t);
    }
    free(w->threads);
    for (uint32_t i = 0; i < w->tracks_cap; i++)
        free(w->tracks[i].name);
    free(w->tracks);
    free(w->blk_names);
    free(w->blk_threads);
    free(w->blk_decl_threads);
    free(w->blk_tracks);
    capf_buf_free(&w->frames);
    capf_buf_free(&w->lframes);
    capf_buf_free(&w->list);
    capf_buf_free(&w->counters);
    capf_buf_free(&w->gpu);
    capf_buf_free(&w->payload);
    capf_buf_free(&w->tmp);
    capf_buf_free(&w->out);
    capf_buf_free(&w->meta_pairs);
    capf_buf_free(&w->origin_body);
    for (int c = 0; c < CAPF_SR_CLASSES; c++) {
        capf_buf_free(&w->sr_lo[c]);
        capf_buf_free(&w->sr_hi[c]);
    }
    free(w->sr_stack);
    free(w->sr_keys);
    free(w->se_names);
    free(w->se_ops);
    free(w->se_lists);
    for (int i = 0; i < 3; i++)
        capf_buf_free(&w->se_out[i]);
    free(w->index);
    free(w);
}

cap_result cap_writer_end_open_scopes(cap_writer *w, uint64_t tick)
{
    cap_result r = check(w);
    if (r != CAP_OK)
        return r;
    for (uint32_t i = 0; i < w->threads_cap; i++) {
        wr_thread *t = w->threads[i];
        if (!t || !t->declared)
            continue;
        t->overflow = 0;
        uint64_t closed = 0;
        uint64_t at = tick > t->last_tick ? tick : t->last_tick;
        while (t->depth > 0 && w->err == CAP_OK) {
            (void)cap_writer_scope_end(w, i, at);
            closed++;
        }
        if (closed) {
            t->closed_at_end += closed;
            (void)ref_thread_decl(w, i, t);
        }
    }
    return w->err;
}

cap_result cap_writer_close(cap_writer *w)
{
    if (!w)
        return CAP_OK;
    if (w->err == CAP_OK) {
        (void)cap_writer_end_open_scopes(w, 0);
        (void)cap_writer_flush(w);
        if (w->err == CAP_OK)
            (void)write_footer(w);
        if (w->err == CAP_OK && w->own_fd && close(w->fd) != 0) {
            w->saved_errno = errno;
            fail(w, CAP_E_IO);
        }
        w->own_fd = w->own_fd && w->err != CAP_OK;
    }
    cap_result r = w->err;
    int e = w->saved_errno;
    writer_free(w);
    if (e)
        errno = e;
    return r;
}

void cap_writer_abandon(cap_writer *w)
{
    if (w)
        writer_free(w);
}

uint64_t cap_writer_bytes_written(const cap_writer *w)
{
    return w ? w->pos : 0;
}

cap_result cap_writer_status(const cap_writer *w)
{
    return w ? w->err : CAP_E_MISUSE;
}

int cap_writer_errno(const cap_writer *w)
{
    return w ? w->saved_errno : 0;
}

/* ---- the live sink's chunks (writer_live.h) ---------------------------- */

/* Append raw as one complete chunk (header and payload) to dst. */
static int encode_chunk(cap_writer *w, uint16_t type, const capf_buf *raw,
                        capf_buf *dst)
{
    if (raw->failed || raw->len > CAPF_MAX_CHUNK_RAW)
        return -1;
    size_t bound = ZSTD_compressBound(raw->len);
    if (capf_buf_reserve(dst, CAPF_CHUNK_HEADER_LEN + bound) != 0)
        return -1;
    uint8_t *hdr = dst->data + dst->len;
    uint8_t *body = hdr + CAPF_CHUNK_HEADER_LEN;
    capf_chunk_header h = {.type = type, .raw = (uint32_t)raw->len};
    size_t n = raw->len ? ZSTD_compressCCtx(w->zc, body, bound, raw->data,
                                            raw->len, w->level)
                        : 0;
    if (raw->len && !ZSTD_isError(n) && n < raw->len) {
        h.flags = CAPF_CHUNK_FLAG_ZSTD;
        h.stored = (uint32_t)n;
    } else {
        h.stored = (uint32_t)raw->len;
        if (raw->len)
            memcpy(body, raw->data, raw->len);
    }
    h.payload_crc = capf_crc32(body, h.stored);
    capf_chunk_header_encode(hdr, &h);
    dst->len += CAPF_CHUNK_HEADER_LEN + h.stored;
    return 0;
}

void cap__writer_header(const cap_writer *w, uint8_t out[CAPF_HEADER_LEN])
{
    capf_header_encode(out, (uint16_t)w->major, (uint16_t)w->minor);
}

int cap__writer_meta_chunk(cap_writer *w, uint64_t start_tick, capf_buf *out)
{
    double per = w->origin_period;
    if (w->have_clock && w->origin_mono &&
        w->clock_mono >= w->origin_mono + CAPF_CLOCK_MIN_SPAN_NS &&
        w->clock_tick > w->origin_tick)
        per = (double)(w->clock_mono - w->origin_mono) /
              (double)(w->clock_tick - w->origin_tick);
    char ns[32];
    snprintf(ns, sizeof ns, "%lld",
             (long long)llround((double)(int64_t)(start_tick - w->origin_tick) *
                                per));
    capf_buf p = {0}, t = {0};
    capf_buf_varint(&t, w->meta_n + 1);
    capf_buf_bytes(&t, w->meta_pairs.data, w->meta_pairs.len);
    capf_buf_str(&t, "stream_start_ns");
    capf_buf_str(&t, ns);
    capf_buf_section(&p, CAPF_SEC_META_KV, &t);
    capf_buf_section(&p, CAPF_SEC_ORIGIN, &w->origin_body);
    if (t.failed)
        p.failed = 1;
    int rc = encode_chunk(w, CAPF_CHUNK_META, &p, out);
    capf_buf_free(&p);
    capf_buf_free(&t);
    return rc;
}

int cap__writer_decl_chunk(cap_writer *w, capf_buf *out)
{
    capf_buf p = {0};
    int rc = put_all_decls(w, &p, 1);
    if (rc == 0)
        rc = encode_chunk(w, CAPF_CHUNK_BLOCK, &p, out);
    capf_buf_free(&p);
    return rc;
}

int cap__writer_loss_chunk(cap_writer *w, const uint32_t *tids,
                           const uint64_t *scopes, size_t n, capf_buf *out)
{
    capf_buf p = {0}, t = {0};
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += tids[i] < w->threads_cap && w->threads[tids[i]] &&
             w->threads[tids[i]]->declared && scopes[i];
    if (k == 0)
        return 0;
    capf_buf_varint(&t, k);
    for (size_t i = 0; i < n; i++)
        if (tids[i] < w->threads_cap && w->threads[tids[i]] &&
            w->threads[tids[i]]->declared && scopes[i]) {
            capf_buf_varint(&t, tids[i]);
            capf_buf_str(&t, w->threads[tids[i]]->name);
        }
    capf_buf_section(&p, CAPF_SEC_THREADS, &t);
    t.len = 0;
    capf_buf_varint(&t, k);
    for (size_t i = 0; i < n; i++)
        if (tids[i] < w->threads_cap && w->threads[tids[i]] &&
            w->threads[tids[i]]->declared && scopes[i]) {
            capf_buf_varint(&t, CAPF_STAT_DROPPED_SCOPES);
            capf_buf_varint(&t, tids[i]);
            capf_buf_varint(&t, scopes[i]);
        }
    capf_buf_section(&p, CAPF_SEC_STATS, &t);
    if (t.failed)
        p.failed = 1;
    int rc = encode_chunk(w, CAPF_CHUNK_BLOCK, &p, out);
    capf_buf_free(&p);
    capf_buf_free(&t);
    return rc;
}

int cap__writer_footer_chunk(cap_writer *w, const uint64_t *offsets,
                             const uint64_t *first_frame,
                             const uint64_t *frames, size_t n,
                             uint64_t footer_offset, capf_buf *out)
{
    capf_buf p = {0}, t = {0};
    int rc = put_all_decls(w, &p, 0);
    capf_buf_varint(&t, n);
    uint64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        capf_buf_varint(&t, offsets[i] - prev);
        capf_buf_varint(&t, first_frame[i]);
        capf_buf_varint(&t, frames[i]);
        prev = offsets[i];
    }
    capf_buf_section(&p, CAPF_SEC_INDEX, &t);
    if (t.failed)
        p.failed = 1;
    if (rc == 0)
        rc = encode_chunk(w, CAPF_CHUNK_FOOTER, &p, out);
    if (rc == 0 && capf_buf_reserve(out, CAPF_TRAILER_LEN) == 0) {
        capf_trailer_encode(out->data + out->len, footer_offset);
        out->len += CAPF_TRAILER_LEN;
    } else {
        rc = -1;
    }
    capf_buf_free(&p);
    capf_buf_free(&t);
    return rc;
}

size_t cap__writer_block_scopes(cap_writer *w, uint32_t *tids,
                                uint64_t *scopes, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < w->blk_threads_n && k < max; i++) {
        const wr_thread *th = w->threads[w->blk_threads[i]];
        capf_cur c = {th->tokens.data, th->tokens.data + th->tokens.len, 0};
        uint64_t ends = 0; /* token 0: a scope closes in this block */
        while (c.p < c.end && !c.bad)
            ends += capf_cur_varint(&c) == 0;
        tids[k] = w->blk_threads[i];
        scopes[k++] = ends;
    }
    return k;
}

void cap__writer_hurry(cap_writer *w, int on)
{
    if (w)
        w->hurry = on != 0;
}

uint64_t cap__writer_blocks(const cap_writer *w)
{
    return w ? w->index_n : 0;
}
