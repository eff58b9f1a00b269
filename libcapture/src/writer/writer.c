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

#include "codec/decls.h"
#include "codec/footer.h"
#include "codec/frames.h"
#include "codec/gpu.h"
#include "codec/meta.h"
#include "codec/scopes.h"
#include "format/format.h"
#include "writer/writer_int.h"
#include "writer/writer_live.h"
#include "writer/writer_records.h"

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

/* 4.0: raw as the next piece of the group's zstd frame (a new frame when
 * `first`; ended when `last`) into w->out; its length, or (size_t)-1. */
static size_t group_piece(cap_writer *w, const capf_buf *raw, int first,
                          int last)
{
    if (first &&
        (ZSTD_isError(ZSTD_CCtx_reset(w->gz, ZSTD_reset_session_only)) ||
         ZSTD_isError(ZSTD_CCtx_setParameter(w->gz, ZSTD_c_compressionLevel,
                                             w->level))))
        return (size_t)-1;
    ZSTD_inBuffer in = {raw->data, raw->len, 0};
    ZSTD_EndDirective mode = last ? ZSTD_e_end : ZSTD_e_flush;
    for (;;) {
        if (capf_buf_reserve(&w->out, ZSTD_CStreamOutSize()) != 0)
            return (size_t)-1;
        ZSTD_outBuffer out = {w->out.data + w->out.len,
                              w->out.cap - w->out.len, 0};
        size_t left = ZSTD_compressStream2(w->gz, &out, &in, mode);
        if (ZSTD_isError(left))
            return (size_t)-1;
        w->out.len += out.pos;
        if (left == 0 && in.pos == in.size)
            return w->out.len;
    }
}

/* Compress `raw` and append it as one chunk; a BLOCK of a writer with
 * groups (4.0) as the next piece of its group's frame (`cont`: not the
 * group's first block; `last`: its last). */
static cap_result put_chunk_g(cap_writer *w, uint16_t type, const capf_buf *raw,
                              int grouped, int cont, int last)
{
    if (raw->failed)
        return fail(w, CAP_E_NOMEM);
    if (raw->len > CAPF_MAX_CHUNK_RAW)
        return fail(w, CAP_E_LIMIT);
    size_t bound = ZSTD_compressBound(raw->len);
    w->out.len = 0;
    if (capf_buf_reserve(&w->out, bound) != 0)
        return fail(w, CAP_E_NOMEM);
    size_t n = grouped ? group_piece(w, raw, !cont, last)
                       : ZSTD_compressCCtx(w->zc, w->out.data, bound,
                                           raw->data, raw->len, w->level);
    if (grouped && n == (size_t)-1)
        return fail(w, CAP_E_NOMEM);
    capf_chunk_header h = {.type = type, .raw = (uint32_t)raw->len};
    const uint8_t *body;
    if (grouped) { /* always the piece: later blocks build on it */
        h.flags = (uint16_t)(CAPF_CHUNK_FLAG_ZSTD |
                             (cont ? CAPF_CHUNK_FLAG_CONT : 0));
        h.stored = (uint32_t)n;
        body = w->out.data;
    } else if (!ZSTD_isError(n) && n < raw->len) {
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

static cap_result put_chunk(cap_writer *w, uint16_t type, const capf_buf *raw)
{
    return put_chunk_g(w, type, raw, 0, 0, 0);
}

/* ---- tables ------------------------------------------------------------ */

/* Name id's slot, made (zeroed) when new; NULL when out of memory or id
 * is 0 or past CAP_MAX_NAME_ID. A slot never moves. */
static inline wr_name *name_slot(cap_writer *w, uint32_t id)
{
    return cap__idtab_slot(&w->names, id, CAP_MAX_NAME_ID);
}

static int ref_name(cap_writer *w, uint32_t id)
{
    wr_name *n = name_slot(w, id);
    if (!n)
        return -1;
    if (n->block_mark >= w->grp_first) /* listed in this block or group */
        return 0;
    if (grow_u32(&w->blk_names, &w->blk_names_cap, w->blk_names_n + 1) != 0)
        return -1;
    n->block_mark = w->seq;
    w->blk_names[w->blk_names_n++] = id;
    return 0;
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
        capc_meta_kv_put(t, o->meta[i].key, o->meta[i].value);
    }
    if (w->tee) {
        w->meta_n = o ? o->meta_count : 0;
        capf_buf_bytes(&w->meta_pairs, t->data + pairs, t->len - pairs);
        if (w->meta_pairs.failed)
            p->failed = 1;
    }
    capf_buf_section(p, CAPF_SEC_META_KV, t);
    t->len = 0;
    capc_origin_put(t, o && o->clock_source ? o->clock_source : "imported",
                    o && o->tick_period_ns > 0 ? o->tick_period_ns : 1.0,
                    o ? o->origin_tick : 0, o ? o->origin_mono_ns : 0,
                    o ? o->origin_unix_ns : 0);
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

/* The format version the options ask for: major, minor and what they
 * hold (1.1's additions, 3.1's frame list, 4.0's groups). */
static void set_version(cap_writer *w, const cap_writer_options *o)
{
    w->major = o && (o->format_major == CAPF_VERSION_MAJOR ||
                     o->format_major == CAPF_VERSION_MAJOR_SCOPES_R ||
                     o->format_major == CAPF_VERSION_MAJOR_GROUPS)
                   ? o->format_major
                   : CAPF_VERSION_MAJOR_SCOPES_E;
    w->groups = w->major == CAPF_VERSION_MAJOR_GROUPS;
    w->v11 = w->major != CAPF_VERSION_MAJOR || (o && o->format_minor);
    w->frame_list = w->major >= CAPF_VERSION_MAJOR_SCOPES_E &&
                    !(o && o->no_frame_list);
    w->minor = w->major == CAPF_VERSION_MAJOR && w->v11
                   ? CAPF_VERSION_MINOR_NAME_FLAGS
               : w->frame_list && !w->groups ? CAPF_VERSION_MINOR_FRAME_LIST
                                             : CAPF_VERSION_MINOR;
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
    if (w)
        w->names.esz = sizeof(wr_name);
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
    w->grp_max_ns = o && o->group_max_ms ? (double)o->group_max_ms * 1e6
                                         : (double)CAPF_GROUP_MAX_NS;
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
    set_version(w, o);
    w->grp_first = w->seq;
    if (w->groups && !(w->gz = ZSTD_createCCtx())) {
        ZSTD_freeCCtx(w->zc);
        free(w);
        return CAP_E_NOMEM;
    }
    capf_header_encode(hdr, (uint16_t)w->major, (uint16_t)w->minor);
    cap_result r = CAP_OK;
    if (write_all(w, hdr, sizeof hdr, NULL, 0) != 0)
        r = CAP_E_IO;
    if (r == CAP_OK)
        r = write_meta(w, o);
    w->latest_tick = w->grp_tick = w->origin_tick;
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
    t->block_mark = t->decl_mark = 0; /* (re)declare in this block */
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
    k->block_mark = k->decl_mark = 0;
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
    capc_frame_put(&w->frames, index, begin_tick, end_tick,
                   w->frame_prev_index, w->frame_prev_begin);
    if (w->frame_list) {
        capc_frame_list_frame(&w->lframes, index, begin_tick, end_tick,
                              w->frame_prev_index, w->frame_prev_end);
        w->frame_prev_end = end_tick;
    }
    w->frame_prev_index = index;
    w->frame_prev_begin = begin_tick;
    if (end_tick > w->latest_tick)
        w->latest_tick = end_tick;
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
    capc_counter_put(&w->counters, name, tick, w->counter_prev_tick, value);
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
    capc_gpu_cal_put(t, track, k->cal_gpu, k->cal_cpu, k->cal_dev);
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
    capc_gpu_frame_put(t, track, cpu_frame, base, kept);
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
        capc_gpu_span_put(t, base, s->name,
                          p >= 0 ? (uint64_t)map[p] + 1 : 0, s->measured,
                          s->begin_tick, s->end_tick);
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
    if (tick > w->latest_tick)
        w->latest_tick = tick;
    w->clock_tick = tick;
    w->clock_mono = mono_ns;
    return CAP_OK;
}

/* ---- blocks ------------------------------------------------------------ */

static int block_empty(const cap_writer *w)
{
    return w->blk_threads_n == 0 && w->frames_n == 0 && w->counters_n == 0 &&
           w->gpu.len == 0 && w->blk_decl_threads_n == 0 &&
           w->blk_tracks_n == 0 && w->blk_names_n == 0;
}

/* After a block of w->grp_first's group was written (`ended`: it ended
 * the group's frame): does the next block start a new group? */
static void group_next(cap_writer *w, int ended)
{
    if (!w->groups || ended || w->grp_force) {
        w->grp_first = w->seq;
        w->grp_raw = 0;
        w->grp_blocks = 0;
        w->grp_tick = w->latest_tick;
        w->grp_force = 0;
    }
}

/* Whether the block of `raw_len` bytes about to be written is its group's
 * last: the group then holds CAPF_GROUP_MAX_RAW bytes, CAPF_GROUP_MAX_BLOCKS
 * blocks or grp_max_ns of time (frame ends and clock samples), or
 * the writer is closing. */
static int group_full(const cap_writer *w, size_t raw_len)
{
    double ns = (double)(w->latest_tick - w->grp_tick) * w->origin_period;
    return w->closing || w->grp_raw + raw_len >= CAPF_GROUP_MAX_RAW ||
           w->grp_blocks + 1 >= CAPF_GROUP_MAX_BLOCKS ||
           ns >= w->grp_max_ns;
}

void cap__writer_new_group(cap_writer *w)
{
    if (w && w->groups)
        w->grp_force = 1;
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

/* The block just written has frames: its clock sample (the block's CLOCK,
 * when it has one) and its frames into the footer's list, as one entry
 * (format-spec: FRAME_LIST). Gives the list up (w->frame_list 0) when out
 * of memory or past its bound: the capture goes on, its footer without a
 * list. */
static void list_block(cap_writer *w)
{
    capf_buf *l = &w->list;
    capc_frame_list_entry_put(l, w->have_clock, w->clock_tick, w->clock_mono,
                              w->frames_n, &w->lframes);
    w->list_n++;
    if (w->lframes.failed || l->failed ||
        l->len > CAPF_FRAME_LIST_MAX_BYTES) {
        w->frame_list = 0;
        capf_buf_free(l);
    }
}

/* A block's first sections: its clock sample and declarations (4.0: of
 * what its group has not listed yet; of everything when a new group must
 * start at a block under way). -1 when out of memory. */
static int block_head(cap_writer *w, capf_buf *p)
{
    capf_buf *t = &w->tmp;
    if (w->grp_force && w->grp_first != w->seq) {
        /* a group must start at this block, whose names were left out
           as listed earlier in the group: list everything */
        w->grp_first = w->seq;
        w->grp_raw = 0;
        w->grp_blocks = 0;
        w->grp_tick = w->latest_tick;
        if (cap__writer_put_decls(w, p, 0) != 0)
            return -1;
    } else if (w->have_clock) {
        t->len = 0;
        capc_clock_put(t, w->clock_tick, w->clock_mono);
        capf_buf_section(p, CAPF_SEC_CLOCK, t);
    }
    w->grp_force = 0;
    cap__writer_put_names(w, p, w->blk_names, w->blk_names_n);
    cap__writer_put_threads(w, p, w->blk_decl_threads, w->blk_decl_threads_n,
                            1);
    cap__writer_put_tracks(w, p, w->blk_tracks, w->blk_tracks_n, 1);
    return 0;
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
    if (block_head(w, p) != 0)
        return fail(w, CAP_E_NOMEM);
    if (w->frames_n) {
        t->len = 0;
        capf_buf_varint(t, w->frames_n);
        capf_buf_bytes(t, w->frames.data, w->frames.len);
        capf_buf_section(p, CAPF_SEC_FRAMES, t);
    }
    w->sc.grp = w->groups ? w->grp_first : 0;
    for (size_t i = 0; i < w->blk_threads_n; i++) {
        uint32_t tid = w->blk_threads[i];
        wr_thread *th = w->threads[tid];
        t->len = 0;
        capf_buf_varint(t, tid);
        capf_buf_varint(t, th->base);
        capf_buf_bytes(t, th->open.data, th->open.len);
        capf_buf_varint(t, th->n_events);
        if (w->groups && !th->seg &&
            !(th->seg = calloc(1, sizeof *th->seg)))
            return fail(w, CAP_E_NOMEM); /* the reader carries the
                                            thread's token lists */
        capc_scopes_src src = {th->open, th->tokens, th->deltas,
                               th->n_events, th->seg};
        int kind = w->major == CAPF_VERSION_MAJOR ? CAPF_SEC_SCOPES
                   : w->major == CAPF_VERSION_MAJOR_SCOPES_R || w->hurry
                       ? CAPF_SEC_SCOPES_R
                       : CAPF_SEC_SCOPES_E;
        if (kind == CAPF_SEC_SCOPES_R && capc_scopes_repeat(&w->sc, &src))
            kind = CAPF_SEC_SCOPES;
        int se = 0; /* capc_scopes_e_put makes the repeat test itself */
        if (kind == CAPF_SEC_SCOPES_E &&
            (se = capc_scopes_e_put(&w->sc, t, &src)) > 0)
            kind = CAPF_SEC_SCOPES; /* it wrote nothing */
        if (kind != CAPF_SEC_SCOPES_E)
            capf_buf_varint(t, th->tokens.len);
        if (kind == CAPF_SEC_SCOPES) {
            capf_buf_bytes(t, th->tokens.data, th->tokens.len);
            capf_buf_bytes(t, th->deltas.data, th->deltas.len);
        } else if (kind == CAPF_SEC_SCOPES_R
                       ? capc_scopes_r_put(&w->sc, t, &src) != 0
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
    cap__writer_put_stats(w, p);
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
    int cont = w->groups && w->grp_first != w->seq;
    int last = w->groups && group_full(w, p->len);
    r = put_chunk_g(w, CAPF_CHUNK_BLOCK, p, w->groups, cont, last);
    if (r != CAP_OK)
        return r;
    w->grp_raw += p->len;
    w->grp_blocks++;
    w->index[w->index_n++] = ix;
    if (w->frames_n && w->frame_list)
        list_block(w);
    block_reset(w);
    group_next(w, last);
    /* Shrink buffers that grew for one large block. */
    if (p->cap > (w->block_bytes * 4))
        capf_buf_free(p);
    return CAP_OK;
}

/* The latest clock sample, then every name, thread and track the writer
 * knows (and, with cals, each track's latest calibration) into p.
 * -1 when out of memory. */
int cap__writer_put_decls(cap_writer *w, capf_buf *p, int cals)
{
    capf_buf *t = &w->tmp;
    if (w->have_clock) {
        t->len = 0;
        capc_clock_put(t, w->clock_tick, w->clock_mono);
        capf_buf_section(p, CAPF_SEC_CLOCK, t);
    }
    uint32_t *ids = NULL;
    size_t n = 0, cap = 0;
    const cap__idtab *nt = &w->names;
    for (uint32_t pg = 0; pg < nt->pages_n; pg++) /* ids in order */
        for (uint32_t j = 0; nt->pages[pg] && j < CAP__IDTAB_PAGE; j++)
            if (((const wr_name *)nt->pages[pg])[j].name) {
                if (grow_u32(&ids, &cap, n + 1) != 0)
                    goto nomem;
                ids[n++] = pg << CAP__IDTAB_PAGE_BITS | j;
            }
    uint32_t *far; /* then the ids past the pages, in order too */
    size_t nfar;
    if (cap__idtab_far_ids(nt, &far, &nfar) != 0)
        goto nomem;
    for (size_t i = 0; i < nfar; i++)
        if (name_peek(w, far[i])->name) {
            if (grow_u32(&ids, &cap, n + 1) != 0) {
                free(far);
                goto nomem;
            }
            ids[n++] = far[i];
        }
    free(far);
    cap__writer_put_names(w, p, ids, n);
    n = 0;
    for (uint32_t i = 0; i < w->threads_cap; i++)
        if (w->threads[i] && w->threads[i]->declared) {
            if (grow_u32(&ids, &cap, n + 1) != 0)
                goto nomem;
            ids[n++] = i;
        }
    cap__writer_put_threads(w, p, ids, n, 0);
    n = 0;
    for (uint32_t i = 0; i < w->tracks_cap; i++)
        if (w->tracks[i].declared) {
            if (grow_u32(&ids, &cap, n + 1) != 0)
                goto nomem;
            ids[n++] = i;
        }
    cap__writer_put_tracks(w, p, ids, n, 0);
    free(ids);
    for (uint32_t i = 0; cals && i < w->tracks_cap; i++) {
        const wr_track *k = &w->tracks[i];
        if (!k->declared || !k->has_cal)
            continue;
        t->len = 0;
        capc_gpu_cal_put(t, i, k->cal_gpu, k->cal_cpu, k->cal_dev);
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
    if (cap__writer_put_decls(w, p, 0) != 0)
        return fail(w, CAP_E_NOMEM);
    t->len = 0;
    uint64_t prev;
    capc_index_begin(t, w->index_n, &prev);
    for (size_t i = 0; i < w->index_n; i++)
        capc_index_entry(t, &prev, w->index[i].offset,
                         w->index[i].first_frame, w->index[i].frames);
    capf_buf_section(p, CAPF_SEC_INDEX, t);
    if (t->failed)
        p->failed = 1;
    if (w->frame_list) /* 3.1: after the INDEX it matches; left out
                          when it cannot be made (a 3.0 footer) */
        capc_frame_list_put(p, w->list_n, &w->list);
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

static void free_name(void *ctx, uint32_t id, void *entry)
{
    (void)ctx;
    (void)id;
    wr_name *n = entry;
    free(n->name);
    free(n->file);
}

static void writer_free(cap_writer *w)
{
    if (w->own_fd && w->fd >= 0)
        close(w->fd);
    ZSTD_freeCCtx(w->zc);
    ZSTD_freeCCtx(w->gz);
    cap__idtab_each(&w->names, free_name, NULL);
    cap__idtab_free(&w->names);
    for (uint32_t i = 0; i < w->threads_cap; i++) {
        wr_thread *t = w->threads[i];
        if (!t)
            continue;
        free(t->name);
        free(t->stack);
        if (t->seg)
            capc_se_carry_free(&t->seg->carry);
        free(t->seg);
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
    capc_scopes_enc_free(&w->sc);
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
        w->closing = 1; /* the last block ends its group's frame */
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
