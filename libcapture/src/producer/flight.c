/*
 * flight.c - the flight recorder's ring, its dumps and its crash handler
 * (flight.h says what each part is for).
 *
 * The ring is an array of block copies, each malloc'd whole; `head` and
 * `tail` count blocks ever added and dropped, and a block's slot is its
 * count modulo the array's size. Only one thread changes the ring at a
 * time (the writer thread, or the thread closing the capture once the
 * writer thread has ended), and each change is made inside a guard: it
 * sets `busy`, then gives up if a crash handler has set `frozen`. The
 * handler sets `frozen`, then waits for `busy` to clear (unless it runs
 * on the thread that was changing the ring), so from then on it reads a
 * ring that no one changes or frees. Both sides use sequentially
 * consistent operations: either the writer sees the ring frozen, or the
 * handler sees the change under way.
 */
#include "producer/flight.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "format/format.h"

#define FL_REQUESTS 8
#define FL_HIST 512                       /* frames kept for the median */
#define FL_HIST_NS 2000000000ull          /* ...of the last 2 s */
#define FL_HIST_MIN 8                     /* frames before any hitch */
#define FL_DECLS_NS 250000000ull          /* declarations remade at most
                                             this often for a crash dump */
#define FL_MIN_BYTES ((size_t)1 << 20)
#define FL_DEFAULT_BYTES ((size_t)64 << 20)
#define FL_INDEX_ENTRY 30                 /* 3 varints */

typedef struct fl_ent {
    uint8_t *data; /* chunk header and payload */
    size_t len;
    uint64_t first_frame, frames;
    uint64_t mono; /* CLOCK_MONOTONIC when the writer wrote it */
} fl_ent;

/* The declarations a crash dump writes: a BLOCK chunk, and the same
 * sections (less GPU_CAL, which has no meaning there) for its FOOTER. */
typedef struct fl_decls {
    uint8_t *chunk;
    size_t chunk_len;
    uint8_t *fraw;
    size_t fraw_len;
} fl_decls;

typedef struct fl_req {
    char *path;    /* NULL: a new file in the dump folder */
    uint64_t mono; /* when it was asked for */
} fl_req;

static const int crash_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static const char *const crash_names[] = {"sigsegv", "sigbus", "sigfpe",
                                          "sigill", "sigabrt"};
#define N_SIGS (sizeof crash_sigs / sizeof crash_sigs[0])

struct cap__flight {
    /* settings */
    double seconds, hitch;
    uint64_t window_ns, flush_ns;
    size_t max_bytes;
    char dir[PATH_MAX];
    double period;
    uint64_t origin_tick, origin_mono;
    cap__live *live;
    void (*log)(const char *line);
    capf_buf meta_pairs; /* the capture's META_KV pairs, without n */
    uint64_t meta_n;
    capf_buf origin;     /* the ORIGIN section's body */
    uint8_t header[CAPF_HEADER_LEN];
    int have_header;     /* atomic */
    uint8_t *crash_meta; /* a META chunk saying flight_dump=crash */
    size_t crash_meta_len;

    /* the ring (see the top of this file) */
    fl_ent *ents;
    uint64_t cap;
    uint64_t head, tail;  /* atomic */
    fl_decls *decls;      /* atomic */
    int busy, frozen;     /* atomic */
    int crashed;          /* atomic: a crash dump has begun */
    pid_t writer_tid;     /* atomic: the thread changing the ring */
    uint8_t *idx_crash, *idx_writer; /* INDEX bodies, cap entries each */
    size_t idx_cap;
    char crash_path[PATH_MAX + 96];
    uint64_t last_frame;  /* atomic; UINT64_MAX before the first */

    /* writer thread */
    int decls_dirty;
    uint64_t decls_mono;
    uint64_t hist_end[FL_HIST], hist_dur[FL_HIST];
    uint64_t hist_n;      /* frames pushed so far */
    uint64_t median;      /* ticks, 0 until known */
    unsigned since_median;
    int pending;          /* a hitch waits for its quarter window */
    uint64_t hitch_frame, hitch_begin_mono, hitch_due, last_hitch_mono;
    int have_last_hitch;
    double hitch_ms, hitch_median_ms;

    /* shared: requests and counters, under mu (counters the crash
     * handler never touches) */
    pthread_mutex_t mu;
    fl_req req[FL_REQUESTS];
    unsigned req_n;
    cap_flight_stats st; /* bytes, blocks, peak: atomics, see get_stats */
    uint64_t bytes, blocks, peak, evicted; /* atomic */

    struct sigaction old[N_SIGS];
    int installed;
};

/* The ring a crash handler writes, and how many handlers run now. The
 * producer's process-wide state (one capture per process), as its
 * registry is. */
static cap__flight *crash_ring;
static int crash_in;

static void logf_(cap__flight *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void logf_(cap__flight *f, const char *fmt, ...)
{
    char line[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (f->log)
        f->log(line);
}

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

/* ---- settings ---------------------------------------------------------- */

static int env_double(const char *name, double lo, double hi, double *out,
                      void (*log)(const char *line))
{
    const char *s = getenv(name);
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < lo || v > hi) {
        char line[256];
        snprintf(line, sizeof line, "ignoring %s=%s: not a number from %g to %g",
                 name, s, lo, hi);
        log(line);
        return 0;
    }
    *out = v;
    return 1;
}

void cap__flight_settings(const cap_capture_options *o, const char *path,
                          double *seconds, double *hitch, size_t *max_bytes,
                          char *dir, size_t dir_size,
                          void (*log)(const char *line))
{
    *seconds = o && isfinite(o->flight_seconds) && o->flight_seconds > 0
                   ? o->flight_seconds
                   : 0;
    (void)env_double("CAP_FLIGHT_SECONDS", 0, 86400, seconds, log);
    *hitch = o && isfinite(o->flight_hitch) && o->flight_hitch > 1
                 ? o->flight_hitch
                 : 0;
    double k;
    if (env_double("CAP_FLIGHT_HITCH", 0, 1e6, &k, log)) {
        if (k != 0 && k <= 1)
            log("ignoring CAP_FLIGHT_HITCH: a hitch threshold is a factor "
                "over 1 (or 0: none)");
        else
            *hitch = k;
    }
    *max_bytes = o && o->flight_max_bytes ? o->flight_max_bytes
                                          : FL_DEFAULT_BYTES;
    double mib;
    if (env_double("CAP_FLIGHT_MAX_MIB", 1, 1048576, &mib, log))
        *max_bytes = (size_t)(mib * 1048576.0);
    if (*max_bytes < FL_MIN_BYTES)
        *max_bytes = FL_MIN_BYTES;
    const char *d = getenv("CAP_FLIGHT_DIR");
    if (!d || !*d)
        d = o ? o->flight_dir : NULL;
    if (d && *d) {
        snprintf(dir, dir_size, "%s", d);
    } else if (path && strrchr(path, '/')) {
        size_t n = (size_t)(strrchr(path, '/') - path);
        snprintf(dir, dir_size, "%.*s", (int)(n ? n : 1), path);
    } else {
        snprintf(dir, dir_size, ".");
    }
}

double cap__flight_mode(const cap_capture_options *o, double *rec,
                        void (*log)(const char *line))
{
    double s, k;
    size_t b;
    char d[2];
    cap__flight_settings(o, NULL, &s, &k, &b, d, sizeof d, log);
    if (s > 0 && rec && *rec > 0) {
        char line[160];
        snprintf(line, sizeof line,
                 "flight recorder: ignoring the recording window's length "
                 "(%g s): the ring records until cap_close", *rec);
        log(line);
        *rec = 0;
    }
    return s;
}

cap_result cap__flight_open(cap__flight **f, cap_writer **w,
                            const cap_capture_options *o, const char *path,
                            cap__flight_opts *fo)
{
    char dir[PATH_MAX], why[PATH_MAX + 128], line[PATH_MAX + 160];
    cap__flight_settings(o, path, &fo->seconds, &fo->hitch, &fo->max_bytes,
                         dir, sizeof dir, fo->log);
    fo->dir = dir;
    cap_result r = cap__flight_new(f, fo, why, sizeof why);
    if (r == CAP_OK)
        r = cap__writer_open_tee(w, NULL, -1, fo->wo, cap__flight_tee, *f);
    if (r == CAP_OK)
        snprintf(line, sizeof line,
                 "flight recorder: keeping the last %g s (at most %.0f MiB) "
                 "in memory; dumps go to %s%s",
                 fo->seconds, (double)fo->max_bytes / 1048576.0, dir,
                 fo->hitch > 0 ? ", and on a hitch" : "");
    else
        snprintf(line, sizeof line, "flight recorder: %s",
                 r == CAP_E_IO ? why : cap_result_message(r));
    fo->log(line);
    fo->dir = NULL;
    return r;
}

/* ---- the ring ---------------------------------------------------------- */

static int guard_enter(cap__flight *f)
{
    __atomic_store_n(&f->busy, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&f->frozen, __ATOMIC_SEQ_CST)) {
        __atomic_store_n(&f->busy, 0, __ATOMIC_RELEASE);
        return 0;
    }
    return 1;
}

static void guard_leave(cap__flight *f)
{
    __atomic_store_n(&f->busy, 0, __ATOMIC_RELEASE);
}

/* Inside the guard: drop the oldest block. */
static void evict_one(cap__flight *f, int for_bound)
{
    uint64_t h = f->head;
    fl_ent *e = &f->ents[h % f->cap];
    __atomic_store_n(&f->head, h + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&f->bytes, f->bytes - e->len, __ATOMIC_RELAXED);
    __atomic_store_n(&f->blocks, f->blocks - 1, __ATOMIC_RELAXED);
    if (for_bound)
        __atomic_store_n(&f->evicted, f->evicted + 1, __ATOMIC_RELAXED);
    free(e->data);
    e->data = NULL;
    e->len = 0;
}

static void ring_add(cap__flight *f, const cap__tee_chunk *c)
{
    size_t len = CAPF_CHUNK_HEADER_LEN + c->body_len;
    if (!guard_enter(f))
        return;
    /* room first, then the copy: the blocks never pass the bound */
    while (len <= f->max_bytes && f->tail > f->head &&
           (f->bytes + len > f->max_bytes || f->tail - f->head >= f->cap - 1))
        evict_one(f, 1);
    uint8_t *d = len <= f->max_bytes ? malloc(len) : NULL;
    if (!d) { /* never fits (or no memory): dropped, counted */
        __atomic_store_n(&f->evicted, f->evicted + 1, __ATOMIC_RELAXED);
        guard_leave(f);
        return;
    }
    memcpy(d, c->hdr, CAPF_CHUNK_HEADER_LEN);
    memcpy(d + CAPF_CHUNK_HEADER_LEN, c->body, c->body_len);
    fl_ent *e = &f->ents[f->tail % f->cap];
    *e = (fl_ent){d, len, c->first_frame, c->frames, mono_ns()};
    __atomic_store_n(&f->tail, f->tail + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&f->bytes, f->bytes + len, __ATOMIC_RELAXED);
    __atomic_store_n(&f->blocks, f->blocks + 1, __ATOMIC_RELAXED);
    if (f->bytes > f->peak)
        __atomic_store_n(&f->peak, f->bytes, __ATOMIC_RELAXED);
    guard_leave(f);
}

void cap__flight_tee(void *user, cap_writer *w, const cap__tee_chunk *c)
{
    cap__flight *f = user;
    if (c->type == CAPF_CHUNK_META && !f->have_header) {
        cap__writer_header(w, f->header);
        __atomic_store_n(&f->have_header, 1, __ATOMIC_RELEASE);
    } else if (c->type == CAPF_CHUNK_BLOCK) {
        ring_add(f, c);
    }
    if (f->live)
        cap__live_tee(f->live, w, c);
}

static uint64_t tick_mono(const cap__flight *f, uint64_t tick);

/* Drop the blocks written before the window: N s before now, or, with
 * hitches on, N s before the frame under way began (it may be a hitch,
 * known only once it ends; up to 2 N back), or a pending hitch began. */
static void evict_old(cap__flight *f, uint64_t now)
{
    uint64_t keep = f->window_ns + f->flush_ns;
    uint64_t cutoff = now > keep ? now - keep : 0;
    if (f->hitch > 0 && f->hist_n) {
        uint64_t cur = tick_mono(f, f->hist_end[(f->hist_n - 1) % FL_HIST]);
        uint64_t c = cur > keep ? cur - keep : 0;
        uint64_t floor = now > 2 * keep ? now - 2 * keep : 0;
        c = c > floor ? c : floor;
        cutoff = c < cutoff ? c : cutoff;
    }
    if (f->pending) {
        uint64_t c = f->hitch_begin_mono > keep ? f->hitch_begin_mono - keep : 0;
        cutoff = c < cutoff ? c : cutoff;
    }
    if (f->tail == f->head || f->ents[f->head % f->cap].mono >= cutoff ||
        !guard_enter(f))
        return;
    while (f->tail > f->head && f->ents[f->head % f->cap].mono < cutoff)
        evict_one(f, 0);
    guard_leave(f);
}

void cap__flight_decls(cap__flight *f)
{
    f->decls_dirty = 1;
}

static void decls_free(fl_decls *d)
{
    if (d) {
        free(d->chunk);
        free(d->fraw);
        free(d);
    }
}

/* The sections of a raw declarations payload that a FOOTER may hold. */
static uint8_t *footer_sections(const uint8_t *raw, size_t n, size_t *out_len)
{
    uint8_t *o = malloc(n ? n : 1);
    if (!o)
        return NULL;
    size_t k = 0;
    capf_cur c = {raw, raw + n, 0};
    while (c.p < c.end) {
        const uint8_t *start = c.p;
        uint8_t kind = capf_cur_u8(&c);
        uint64_t len = capf_cur_varint(&c);
        if (c.bad || len > (uint64_t)(c.end - c.p)) {
            free(o);
            return NULL;
        }
        c.p += len;
        if (kind != CAPF_SEC_GPU_CAL) {
            memcpy(o + k, start, (size_t)(c.p - start));
            k += (size_t)(c.p - start);
        }
    }
    *out_len = k;
    return o;
}

/* Writer thread: make the declarations again from the writer's tables. */
static void decls_rebuild(cap__flight *f, cap_writer *w, uint64_t now)
{
    capf_buf c = {0};
    fl_decls *d = calloc(1, sizeof *d);
    capf_chunk_header h;
    if (!d || cap__writer_decl_chunk(w, &c) != 0 ||
        c.len < CAPF_CHUNK_HEADER_LEN ||
        capf_chunk_header_decode(c.data, &h) != 0) {
        free(d);
        capf_buf_free(&c);
        return;
    }
    uint8_t *raw = malloc(h.raw ? h.raw : 1);
    const uint8_t *body = c.data + CAPF_CHUNK_HEADER_LEN;
    int ok = raw != NULL;
    if (ok && (h.flags & CAPF_CHUNK_FLAG_ZSTD))
        ok = ZSTD_decompress(raw, h.raw, body, h.stored) == h.raw;
    else if (ok)
        memcpy(raw, body, h.raw);
    d->chunk = c.data;
    d->chunk_len = c.len;
    d->fraw = ok ? footer_sections(raw, h.raw, &d->fraw_len) : NULL;
    free(raw);
    if (!d->fraw || !guard_enter(f)) {
        decls_free(d);
        return;
    }
    fl_decls *old = f->decls;
    __atomic_store_n(&f->decls, d, __ATOMIC_RELEASE);
    decls_free(old);
    guard_leave(f);
    f->decls_dirty = 0;
    f->decls_mono = now;
}

/* ---- writing a dump (async-signal-safe) --------------------------------- */

typedef struct fl_out {
    int fd;
    uint64_t pos;
    int err;
} fl_out;

static void out_write(fl_out *o, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n && !o->err) {
        ssize_t k = write(o->fd, b, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            o->err = k < 0 ? errno : EIO;
            return;
        }
        b += k;
        n -= (size_t)k;
        o->pos += (uint64_t)k;
    }
}

static size_t put_varint(uint8_t *p, size_t k, uint64_t v)
{
    while (v >= 0x80) {
        p[k++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[k++] = (uint8_t)v;
    return k;
}

/* Write a whole capture of blocks [h, t) to fd: header, meta, the
 * declarations, the blocks, a footer (the declarations and an index built
 * in idx) and the trailer. Returns 0 or an errno. Calls only write(). */
static int dump_fd(const cap__flight *f, int fd, const uint8_t *meta,
                   size_t meta_len, const fl_decls *d, uint64_t h, uint64_t t,
                   uint8_t *idx)
{
    fl_out o = {fd, 0, 0};
    out_write(&o, f->header, CAPF_HEADER_LEN);
    out_write(&o, meta, meta_len);
    if (d)
        out_write(&o, d->chunk, d->chunk_len);
    size_t k = put_varint(idx, 0, t - h);
    uint64_t prev = 0;
    for (uint64_t i = h; i < t; i++) {
        const fl_ent *e = &f->ents[i % f->cap];
        k = put_varint(idx, k, o.pos - prev);
        prev = o.pos;
        k = put_varint(idx, k, e->frames ? e->first_frame : 0);
        k = put_varint(idx, k, e->frames);
        out_write(&o, e->data, e->len);
    }
    uint8_t sec[12];
    size_t sl = 0;
    sec[sl++] = CAPF_SEC_INDEX;
    sl = put_varint(sec, sl, k);
    size_t fl = d ? d->fraw_len : 0;
    uLong crc = crc32(0L, Z_NULL, 0);
    if (fl)
        crc = crc32(crc, d->fraw, (uInt)fl);
    crc = crc32(crc, sec, (uInt)sl);
    crc = crc32(crc, idx, (uInt)k);
    capf_chunk_header fh = {.type = CAPF_CHUNK_FOOTER,
                            .stored = (uint32_t)(fl + sl + k),
                            .raw = (uint32_t)(fl + sl + k),
                            .payload_crc = (uint32_t)crc};
    uint8_t hdr[CAPF_CHUNK_HEADER_LEN], tr[CAPF_TRAILER_LEN];
    capf_chunk_header_encode(hdr, &fh);
    capf_trailer_encode(tr, o.pos);
    out_write(&o, hdr, sizeof hdr);
    if (fl)
        out_write(&o, d->fraw, fl);
    out_write(&o, sec, sl);
    out_write(&o, idx, k);
    out_write(&o, tr, sizeof tr);
    return o.err;
}

/* Appenders into a fixed buffer (async-signal-safe). */
static size_t app_str(char *b, size_t k, size_t n, const char *s)
{
    while (*s && k + 1 < n)
        b[k++] = *s++;
    b[k] = 0;
    return k;
}

static size_t app_uint(char *b, size_t k, size_t n, uint64_t v, int width)
{
    char tmp[24];
    int m = 0;
    do {
        tmp[m++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (m < width)
        tmp[m++] = '0';
    while (m > 0 && k + 1 < n)
        b[k++] = tmp[--m];
    b[k] = 0;
    return k;
}

/* "DIR/flight-YYYYMMDD-HHMMSS.mmm-f<frame>-<why>[-<attempt>].cap" (UTC),
 * async-signal-safe (clock_gettime and arithmetic). */
static void dump_name(char *b, size_t n, const char *dir, uint64_t frame,
                      const char *why, unsigned attempt)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t secs = (int64_t)ts.tv_sec;
    int64_t days = secs / 86400, rem = secs % 86400;
    if (rem < 0) {
        rem += 86400;
        days--;
    }
    /* civil date of a day count since 1970-01-01 (proleptic Gregorian) */
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t day = doy - (153 * mp + 2) / 5 + 1;
    int64_t mon = mp < 10 ? mp + 3 : mp - 9;
    int64_t year = yoe + era * 400 + (mon <= 2);
    size_t k = app_str(b, 0, n, dir);
    k = app_str(b, k, n, "/flight-");
    k = app_uint(b, k, n, (uint64_t)(year < 0 ? 0 : year), 4);
    k = app_uint(b, k, n, (uint64_t)mon, 2);
    k = app_uint(b, k, n, (uint64_t)day, 2);
    k = app_str(b, k, n, "-");
    k = app_uint(b, k, n, (uint64_t)(rem / 3600), 2);
    k = app_uint(b, k, n, (uint64_t)(rem / 60 % 60), 2);
    k = app_uint(b, k, n, (uint64_t)(rem % 60), 2);
    k = app_str(b, k, n, ".");
    k = app_uint(b, k, n, (uint64_t)ts.tv_nsec / 1000000u, 3);
    k = app_str(b, k, n, "-f");
    k = app_uint(b, k, n, frame == UINT64_MAX ? 0 : frame, 1);
    k = app_str(b, k, n, "-");
    k = app_str(b, k, n, why);
    if (attempt > 1) {
        k = app_str(b, k, n, "-");
        k = app_uint(b, k, n, attempt, 1);
    }
    (void)app_str(b, k, n, ".cap");
}

/* A new file named after the time, the frame and why, in dir (open with
 * O_EXCL: a name taken gets a number). -1 and errno on failure. */
static int open_new(char *b, size_t n, const char *dir, uint64_t frame,
                    const char *why)
{
    for (unsigned a = 1; a <= 50; a++) {
        dump_name(b, n, dir, frame, why, a);
        int fd = open(b, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

/* ---- dumps on the writer thread ----------------------------------------- */

/* A META chunk: the capture's metadata, then flight_dump = why,
 * flight_frame (when frame is not UINT64_MAX) and flight_seconds. */
static int meta_chunk(const cap__flight *f, const char *why, uint64_t frame,
                      capf_buf *out)
{
    capf_buf p = {0}, t = {0};
    char num[32], secs[32];
    snprintf(num, sizeof num, "%llu", (unsigned long long)frame);
    snprintf(secs, sizeof secs, "%g", f->seconds);
    capf_buf_varint(&t, f->meta_n + 2 + (frame != UINT64_MAX));
    capf_buf_bytes(&t, f->meta_pairs.data, f->meta_pairs.len);
    capf_buf_str(&t, "flight_dump");
    capf_buf_str(&t, why);
    if (frame != UINT64_MAX) {
        capf_buf_str(&t, "flight_frame");
        capf_buf_str(&t, num);
    }
    capf_buf_str(&t, "flight_seconds");
    capf_buf_str(&t, secs);
    capf_buf_section(&p, CAPF_SEC_META_KV, &t);
    capf_buf_section(&p, CAPF_SEC_ORIGIN, &f->origin);
    int rc = -1;
    if (!p.failed && !t.failed &&
        capf_buf_reserve(out, CAPF_CHUNK_HEADER_LEN + p.len) == 0) {
        capf_chunk_header h = {.type = CAPF_CHUNK_META,
                               .stored = (uint32_t)p.len,
                               .raw = (uint32_t)p.len,
                               .payload_crc = capf_crc32(p.data, p.len)};
        capf_chunk_header_encode(out->data + out->len, &h);
        memcpy(out->data + out->len + CAPF_CHUNK_HEADER_LEN, p.data, p.len);
        out->len += CAPF_CHUNK_HEADER_LEN + p.len;
        rc = 0;
    }
    capf_buf_free(&p);
    capf_buf_free(&t);
    return rc;
}

static void count_dump(cap__flight *f, int ok, double ms)
{
    pthread_mutex_lock(&f->mu);
    if (ok)
        f->st.dumps++;
    else
        f->st.dump_failures++;
    f->st.last_dump_ms = ms;
    pthread_mutex_unlock(&f->mu);
}

/* Writer thread: write the ring now, to `path` or a new file. `what`
 * describes the dump for the log line. */
static void dump_now(cap__flight *f, cap_writer *w, const char *path,
                     const char *why, uint64_t frame, const char *what)
{
    if (__atomic_load_n(&f->frozen, __ATOMIC_SEQ_CST) || !f->have_header)
        return;
    uint64_t t0 = mono_ns(), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    if (f->decls_dirty || !f->decls)
        decls_rebuild(f, w, t0);
    capf_buf meta = {0};
    char name[PATH_MAX + 96];
    int fd = -1, err = 0;
    if (meta_chunk(f, why, frame, &meta) != 0) {
        err = ENOMEM;
    } else if (path) {
        snprintf(name, sizeof name, "%s", path);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    } else {
        fd = open_new(name, sizeof name, f->dir, frame, why);
    }
    if (!err && fd < 0)
        err = errno;
    uint64_t h = f->head, t = f->tail;
    if (!err)
        err = dump_fd(f, fd, meta.data, meta.len, f->decls, h, t,
                      f->idx_writer);
    if (fd >= 0 && close(fd) != 0 && !err)
        err = errno;
    capf_buf_free(&meta);
    double ms = (double)(mono_ns() - t0) / 1e6;
    double cpu = (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / 1e6;
    count_dump(f, !err, ms);
    if (err) {
        logf_(f, "flight recorder: %s: cannot write '%s': %s", what,
              path ? path : f->dir, strerror(err));
        return;
    }
    double span = t > h ? (double)(f->ents[(t - 1) % f->cap].mono -
                                   f->ents[h % f->cap].mono) / 1e9
                        : 0;
    logf_(f, "flight recorder: %s: wrote %s (%llu blocks over %.2f s, "
             "%.2f MiB) in %.1f ms (%.1f ms of CPU)",
          what, name, (unsigned long long)(t - h), span,
          (double)__atomic_load_n(&f->bytes, __ATOMIC_RELAXED) / 1048576.0, ms,
          cpu);
}

/* ---- hitches ------------------------------------------------------------ */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The median duration of the frames that ended in the 2 s before `at`;
 * 0 when fewer than FL_HIST_MIN did. */
static uint64_t median_before(const cap__flight *f, uint64_t at)
{
    uint64_t span = (uint64_t)((double)FL_HIST_NS / f->period);
    uint64_t v[FL_HIST];
    size_t n = 0;
    uint64_t have = f->hist_n < FL_HIST ? f->hist_n : FL_HIST;
    for (uint64_t i = 0; i < have; i++)
        if (f->hist_end[i] + span >= at)
            v[n++] = f->hist_dur[i];
    if (n < FL_HIST_MIN)
        return 0;
    qsort(v, n, sizeof *v, cmp_u64);
    return v[n / 2];
}

static uint64_t tick_mono(const cap__flight *f, uint64_t tick)
{
    double d = (double)(int64_t)(tick - f->origin_tick) * f->period;
    return f->origin_mono + (uint64_t)(int64_t)llround(d);
}

static void hitch_seen(cap__flight *f, uint64_t index, uint64_t begin,
                       uint64_t end)
{
    uint64_t bm = tick_mono(f, begin), em = tick_mono(f, end);
    pthread_mutex_lock(&f->mu);
    f->st.hitches++;
    int skip = f->pending ||
               (f->have_last_hitch && bm < f->last_hitch_mono + f->window_ns);
    if (skip)
        f->st.hitches_skipped++;
    pthread_mutex_unlock(&f->mu);
    if (skip)
        return;
    f->pending = 1;
    f->hitch_frame = index;
    f->hitch_begin_mono = bm;
    f->hitch_due = em + f->window_ns / 4;
    f->last_hitch_mono = bm;
    f->have_last_hitch = 1;
    f->hitch_ms = (double)(end - begin) * f->period / 1e6;
    f->hitch_median_ms = (double)f->median * f->period / 1e6;
}

void cap__flight_frame(cap__flight *f, uint64_t index, uint64_t begin,
                       uint64_t end)
{
    __atomic_store_n(&f->last_frame, index, __ATOMIC_RELAXED);
    if (f->hitch <= 0)
        return;
    uint64_t dur = end - begin;
    if (f->median == 0 || ++f->since_median >= 16 ||
        (double)dur > f->hitch * (double)f->median) {
        f->median = median_before(f, begin);
        f->since_median = 0;
    }
    if (f->median && (double)dur > f->hitch * (double)f->median)
        hitch_seen(f, index, begin, end);
    f->hist_end[f->hist_n % FL_HIST] = end;
    f->hist_dur[f->hist_n % FL_HIST] = dur;
    f->hist_n++;
}

/* ---- the writer's round ------------------------------------------------- */

void cap__flight_round(cap__flight *f, cap_writer *w, uint64_t round_mono)
{
    __atomic_store_n(&f->writer_tid, gettid(), __ATOMIC_RELAXED);
    /* the requests made before this round took its frames: each dump
     * holds what was recorded before its call, and the N s before it */
    fl_req req[FL_REQUESTS];
    unsigned nreq = 0, kept = 0;
    uint64_t now = round_mono;
    pthread_mutex_lock(&f->mu);
    for (unsigned i = 0; i < f->req_n; i++) {
        if (f->req[i].mono <= round_mono) {
            req[nreq++] = f->req[i];
            now = f->req[i].mono < now ? f->req[i].mono : now;
        } else {
            f->req[kept++] = f->req[i];
        }
    }
    f->req_n = kept;
    pthread_mutex_unlock(&f->mu);
    evict_old(f, now);
    /* a hitch's dump once a frame has ended N/4 s after it (or, should
     * frames stop, N/2 s after it) */
    uint64_t last_end = f->hist_n
        ? tick_mono(f, f->hist_end[(f->hist_n - 1) % FL_HIST]) : 0;
    int hitch_due = f->pending && round_mono >= f->hitch_due &&
                    (last_end >= f->hitch_due ||
                     round_mono >= f->hitch_due + f->window_ns / 4);
    if (hitch_due || nreq)
        (void)cap_writer_flush(w); /* what the round took, in the ring */
    if (f->decls_dirty && round_mono - f->decls_mono >= FL_DECLS_NS)
        decls_rebuild(f, w, round_mono);
    for (unsigned i = 0; i < nreq; i++) {
        dump_now(f, w, req[i].path, "request",
                 __atomic_load_n(&f->last_frame, __ATOMIC_RELAXED),
                 "dump asked for");
        free(req[i].path);
    }
    if (hitch_due) {
        char what[160];
        pthread_mutex_lock(&f->mu);
        unsigned long long skipped = f->st.hitches_skipped;
        pthread_mutex_unlock(&f->mu);
        snprintf(what, sizeof what,
                 "hitch in frame %llu (%.1f ms, over %g x the median %.2f "
                 "ms; %llu more not dumped so far)",
                 (unsigned long long)f->hitch_frame, f->hitch_ms, f->hitch,
                 f->hitch_median_ms, skipped);
        dump_now(f, w, NULL, "hitch", f->hitch_frame, what);
        f->pending = 0;
    }
}

void cap__flight_finish(cap__flight *f, cap_writer *w)
{
    if (!f || !w)
        return;
    f->hitch_due = 0; /* a hitch still waiting: with what followed so far */
    f->decls_mono = 0;
    cap__flight_round(f, w, mono_ns());
}

cap_result cap__flight_request(cap__flight *f, const char *path)
{
    char *copy = NULL;
    if (path && !(copy = strdup(path)))
        return CAP_E_NOMEM;
    pthread_mutex_lock(&f->mu);
    cap_result r = CAP_E_LIMIT;
    if (f->req_n < FL_REQUESTS) {
        f->req[f->req_n++] = (fl_req){copy, mono_ns()};
        copy = NULL;
        r = CAP_OK;
    }
    pthread_mutex_unlock(&f->mu);
    free(copy);
    return r;
}

void cap__flight_get_stats(cap__flight *f, cap_flight_stats *out)
{
    pthread_mutex_lock(&f->mu);
    *out = f->st;
    pthread_mutex_unlock(&f->mu);
    out->bytes = __atomic_load_n(&f->bytes, __ATOMIC_RELAXED);
    out->blocks = __atomic_load_n(&f->blocks, __ATOMIC_RELAXED);
    out->bytes_peak = __atomic_load_n(&f->peak, __ATOMIC_RELAXED);
    out->evicted_blocks = __atomic_load_n(&f->evicted, __ATOMIC_RELAXED);
}

/* ---- crashes ------------------------------------------------------------ */

static void crash_dump(cap__flight *f, int sig)
{
    __atomic_store_n(&f->frozen, 1, __ATOMIC_SEQ_CST);
    if (gettid() != __atomic_load_n(&f->writer_tid, __ATOMIC_RELAXED)) {
        /* the ring's change under way ends within microseconds; a thread
         * stopped inside one (SIGSTOP, a debugger) is not waited for long */
        struct timespec ms = {0, 1000000};
        for (int i = 0; i < 1000 && __atomic_load_n(&f->busy, __ATOMIC_SEQ_CST);
             i++)
            nanosleep(&ms, NULL);
    }
    if (!__atomic_load_n(&f->have_header, __ATOMIC_ACQUIRE))
        return;
    uint64_t h = __atomic_load_n(&f->head, __ATOMIC_ACQUIRE);
    uint64_t t = __atomic_load_n(&f->tail, __ATOMIC_ACQUIRE);
    const fl_decls *d = __atomic_load_n(&f->decls, __ATOMIC_ACQUIRE);
    const char *why = "crash";
    for (size_t i = 0; i < N_SIGS; i++)
        if (crash_sigs[i] == sig)
            why = crash_names[i];
    char *b = f->crash_path;
    int fd = open_new(b, sizeof f->crash_path, f->dir,
                      __atomic_load_n(&f->last_frame, __ATOMIC_RELAXED), why);
    if (fd < 0)
        return;
    int err = dump_fd(f, fd, f->crash_meta, f->crash_meta_len, d, h, t,
                      f->idx_crash);
    close(fd);
    char line[PATH_MAX + 160];
    size_t k = app_str(line, 0, sizeof line, "libcapture: flight recorder: ");
    k = app_str(line, k, sizeof line, why);
    k = app_str(line, k, sizeof line, err ? ": cut short writing " : ": wrote ");
    k = app_str(line, k, sizeof line, b);
    k = app_str(line, k, sizeof line, " (");
    k = app_uint(line, k, sizeof line, t - h, 1);
    k = app_str(line, k, sizeof line, " blocks)\n");
    ssize_t wr = write(2, line, k);
    (void)wr;
}

static void crash_handler(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    __atomic_add_fetch(&crash_in, 1, __ATOMIC_SEQ_CST);
    cap__flight *f = __atomic_load_n(&crash_ring, __ATOMIC_SEQ_CST);
    struct sigaction prev;
    sigemptyset(&prev.sa_mask);
    prev.sa_flags = 0;
    prev.sa_handler = SIG_DFL;
    if (f) {
        for (size_t i = 0; i < N_SIGS; i++)
            if (crash_sigs[i] == sig)
                prev = f->old[i];
        if (!__atomic_exchange_n(&f->crashed, 1, __ATOMIC_SEQ_CST))
            crash_dump(f, sig);
    }
    __atomic_sub_fetch(&crash_in, 1, __ATOMIC_RELEASE);
    if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
        prev.sa_sigaction(sig, si, uc);
    } else if (prev.sa_handler == SIG_DFL) {
        /* the default action, once this handler returns (the signal is
         * blocked until then; a fault repeats anyway) */
        struct sigaction dfl;
        sigemptyset(&dfl.sa_mask);
        dfl.sa_flags = 0;
        dfl.sa_handler = SIG_DFL;
        sigaction(sig, &dfl, NULL);
        raise(sig);
    } else if (prev.sa_handler != SIG_IGN) {
        prev.sa_handler(sig);
    }
    errno = saved;
}

static void crash_install(cap__flight *f)
{
    __atomic_store_n(&crash_ring, f, __ATOMIC_SEQ_CST);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = crash_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_SIGS; i++)
        sigaction(crash_sigs[i], &sa, &f->old[i]);
    f->installed = 1;
}

static void crash_remove(cap__flight *f)
{
    if (!f->installed)
        return;
    for (size_t i = 0; i < N_SIGS; i++) {
        struct sigaction cur;
        if (sigaction(crash_sigs[i], NULL, &cur) == 0 &&
            (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == crash_handler)
            sigaction(crash_sigs[i], &f->old[i], NULL);
    }
    __atomic_store_n(&crash_ring, NULL, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&crash_in, __ATOMIC_SEQ_CST) != 0)
        sched_yield();
}

/* ---- life --------------------------------------------------------------- */

static int copy_meta(cap__flight *f, const cap_writer_options *wo)
{
    f->meta_n = wo->meta_count;
    for (size_t i = 0; i < wo->meta_count; i++) {
        capf_buf_str(&f->meta_pairs, wo->meta[i].key);
        capf_buf_str(&f->meta_pairs, wo->meta[i].value);
    }
    capf_buf_str(&f->origin, wo->clock_source ? wo->clock_source : "imported");
    capf_buf_f64(&f->origin, wo->tick_period_ns > 0 ? wo->tick_period_ns : 1.0);
    capf_buf_varint(&f->origin, wo->origin_tick);
    capf_buf_varint(&f->origin, wo->origin_mono_ns);
    capf_buf_varint(&f->origin, capf_zigzag(wo->origin_unix_ns));
    capf_buf m = {0};
    int rc = meta_chunk(f, "crash", UINT64_MAX, &m);
    f->crash_meta = m.data;
    f->crash_meta_len = m.len;
    return f->meta_pairs.failed || f->origin.failed || rc != 0 ? -1 : 0;
}

cap_result cap__flight_new(cap__flight **out, const cap__flight_opts *o,
                           char *why, size_t why_size)
{
    *out = NULL;
    if (access(o->dir, W_OK | X_OK) != 0) {
        snprintf(why, why_size, "the dump folder '%s' cannot be written: %s",
                 o->dir, strerror(errno));
        return CAP_E_IO;
    }
    cap__flight *f = calloc(1, sizeof *f);
    if (!f)
        return CAP_E_NOMEM;
    f->seconds = o->seconds;
    f->hitch = o->hitch;
    f->window_ns = (uint64_t)(o->seconds * 1e9);
    f->flush_ns = (uint64_t)o->flush_ms * 1000000u;
    f->max_bytes = o->max_bytes;
    snprintf(f->dir, sizeof f->dir, "%s", o->dir);
    f->period = o->period_ns > 0 ? o->period_ns : 1.0;
    f->origin_tick = o->origin_tick;
    f->origin_mono = o->origin_mono;
    f->live = o->live;
    f->log = o->log;
    f->last_frame = UINT64_MAX;
    f->st.seconds = o->seconds;
    f->st.bound_bytes = o->max_bytes;
    pthread_mutex_init(&f->mu, NULL);
    /* slots: 8 blocks a flush interval over 1.25 N + 1 s, 256 .. 1 Mi */
    double slots = (o->seconds * 1.25 + 1) * 8000.0 / (o->flush_ms ? o->flush_ms : 100);
    f->cap = slots > 1048576 ? 1048576 : slots < 256 ? 256 : (uint64_t)slots;
    f->idx_cap = 16 + (size_t)f->cap * FL_INDEX_ENTRY;
    f->ents = calloc(f->cap, sizeof *f->ents);
    f->idx_crash = malloc(f->idx_cap);
    f->idx_writer = malloc(f->idx_cap);
    if (!f->ents || !f->idx_crash || !f->idx_writer ||
        copy_meta(f, o->wo) != 0) {
        cap__flight_free(f);
        return CAP_E_NOMEM;
    }
    crash_install(f);
    *out = f;
    return CAP_OK;
}

void cap__flight_free(cap__flight *f)
{
    if (!f)
        return;
    crash_remove(f);
    if (f->have_header) /* made whole (not a failed open) */
        logf_(f, "flight recorder: %llu dumps written (%llu failed); %llu "
                 "hitches, %llu of them not dumped (within %g s of a hitch "
                 "dump); %llu blocks dropped to keep the %.0f MiB bound "
                 "(peak %.1f MiB)",
              (unsigned long long)f->st.dumps,
              (unsigned long long)f->st.dump_failures,
              (unsigned long long)f->st.hitches,
              (unsigned long long)f->st.hitches_skipped, f->seconds,
              (unsigned long long)f->evicted,
              (double)f->max_bytes / 1048576.0, (double)f->peak / 1048576.0);
    for (unsigned i = 0; i < f->req_n; i++)
        free(f->req[i].path);
    for (uint64_t i = f->head; f->ents && i < f->tail; i++)
        free(f->ents[i % f->cap].data);
    decls_free(f->decls);
    free(f->ents);
    free(f->idx_crash);
    free(f->idx_writer);
    free(f->crash_meta);
    capf_buf_free(&f->meta_pairs);
    capf_buf_free(&f->origin);
    pthread_mutex_destroy(&f->mu);
    free(f);
}
