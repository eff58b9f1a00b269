/*
 * producer.c - the live producer: per-thread buffers and a writer thread.
 *
 * Hot path (capture.h, inline): a thread appends 16-byte records to its
 * current buffer and publishes the new end with a release store. No lock,
 * no allocation.
 *
 * Slow path (cap__emit_slow): the buffer is full, the thread is not
 * registered, or recording has stopped. A full buffer is retired to the
 * writer and replaced from the thread's own pool (at most
 * buffers_per_thread buffers, allocated on first need). With no buffer
 * free the thread drops: begins are dropped and counted, their ends
 * dropped with them; ends of scopes that were recorded go to a reserve at
 * the tail of the buffer (CAP_MAX_DEPTH records), so nesting stays intact.
 * Recording resumes once a buffer is free and every dropped scope has
 * closed.
 *
 * The writer thread wakes every flush interval (or when a buffer is
 * retired), copies what each thread published since last time into the
 * cap_writer, writes a block, and returns drained buffers to their pools.
 *
 * The registry below is libcapture's only process-wide mutable state.
 */
#include "capture/capture.h"
#include "writer/live.h"
#include "writer/writer_records.h"
#include "producer/sampler.h"
#include "producer/flight.h"
#include "producer/producer_int.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* ---- the registry ------------------------------------------------------ */

static struct {
    pthread_mutex_t lock;
    cap__name **names; /* id - 1; entries are never freed */
    uint32_t names_n, names_cap;
    uint32_t *ht; /* open addressing: id or 0 */
    uint32_t ht_cap;
    uint32_t invalid_id; /* "<invalid scope id>", registered on first need */
    unsigned flags_epoch; /* atomic: bumped when a known name gains a flag */
    producer *active; /* atomic */
    unsigned inflight; /* atomic: calls using `active` right now */
    int closing;       /* a cap_close is tearing a producer down */
    tstate *graveyard; /* states of closed captures still owned by live
                          threads */
    void (*log_fn)(void *, const char *);
    void *log_user;
    cap_producer_stats last;
    pthread_key_t key;
    pthread_once_t once;
} reg = {.lock = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT};

cap__head cap__null_head;
__thread cap__head *cap__tls
    __attribute__((tls_model("initial-exec"))) = &cap__null_head;
int cap__clock_is_counter;

void cap__logf(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&reg.lock);
    void (*fn)(void *, const char *) = reg.log_fn;
    void *user = reg.log_user;
    pthread_mutex_unlock(&reg.lock);
    if (fn)
        fn(user, line);
    else
        fprintf(stderr, "libcapture: %s\n", line);
}

void cap_set_log(void (*fn)(void *user, const char *line), void *user)
{
    pthread_mutex_lock(&reg.lock);
    reg.log_fn = fn;
    reg.log_user = user;
    pthread_mutex_unlock(&reg.lock);
}

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static void ht_insert(uint32_t *ht, uint32_t cap, cap__name **names,
                      uint32_t id)
{
    uint32_t i = hash_str(names[id - 1]->text) & (cap - 1);
    while (ht[i])
        i = (i + 1) & (cap - 1);
    ht[i] = id;
}

/* A registry entry: the public part (cap__name, which call sites cache),
 * then where the name was first registered (file NULL: nowhere said),
 * then the texts. Never freed, never changed but for e.flags. */
typedef struct reg_name {
    cap__name e;
    const char *file;
    uint32_t line;
} reg_name;

/* The entry of `name` (at most CAP_MAX_NAME_LEN bytes of it), created when
 * new with file and line (the first registration's are kept); its flags
 * gain `flags`. NULL when out of memory or out of ids. Caller holds
 * reg.lock. */
static cap__name *name_intern(const char *name, const char *file,
                              uint32_t line, uint32_t flags)
{
    size_t len = strlen(name);
    if (len > CAP_MAX_NAME_LEN)
        len = CAP_MAX_NAME_LEN;
    uint32_t h = 2166136261u;
    for (size_t k = 0; k < len; k++)
        h = (h ^ (uint8_t)name[k]) * 16777619u;
    if (reg.ht_cap) {
        uint32_t i = h & (reg.ht_cap - 1);
        while (reg.ht[i]) {
            cap__name *e = reg.names[reg.ht[i] - 1];
            if (strncmp(e->text, name, len) == 0 && e->text[len] == 0) {
                if (flags & ~e->flags) {
                    e->flags |= flags;
                    __atomic_add_fetch(&reg.flags_epoch, 1, __ATOMIC_RELEASE);
                }
                return e;
            }
            i = (i + 1) & (reg.ht_cap - 1);
        }
    }
    if (reg.names_n >= CAP_MAX_NAME_ID)
        return NULL;
    if (reg.names_n == reg.names_cap) {
        uint32_t n = reg.names_cap ? reg.names_cap * 2 : 64;
        cap__name **p = realloc(reg.names, n * sizeof *p);
        if (!p)
            return NULL;
        reg.names = p;
        reg.names_cap = n;
    }
    if ((reg.names_n + 1) * 2 > reg.ht_cap) {
        uint32_t n = reg.ht_cap ? reg.ht_cap * 2 : 128;
        uint32_t *ht = calloc(n, sizeof *ht);
        if (!ht)
            return NULL;
        for (uint32_t i = 1; i <= reg.names_n; i++)
            ht_insert(ht, n, reg.names, i);
        free(reg.ht);
        reg.ht = ht;
        reg.ht_cap = n;
    }
    /* entry and texts in one allocation */
    size_t flen = file ? strnlen(file, CAP_MAX_NAME_LEN) : 0;
    reg_name *rn = malloc(sizeof *rn + len + 1 + (file ? flen + 1 : 0));
    if (!rn)
        return NULL;
    cap__name *e = &rn->e;
    char *text = (char *)(rn + 1);
    memcpy(text, name, len);
    text[len] = 0;
    e->text = text;
    rn->file = NULL;
    rn->line = line;
    if (file) {
        char *f = text + len + 1;
        memcpy(f, file, flen);
        f[flen] = 0;
        rn->file = f;
    }
    e->flags = flags;
    reg.names[reg.names_n++] = e;
    e->id = reg.names_n;
    ht_insert(reg.ht, reg.ht_cap, reg.names, e->id);
    return e;
}

/* name_intern under the registry lock; NULL for a NULL name too. */
static cap__name *intern(const char *name, const char *file, uint32_t line,
                         uint32_t flags)
{
    if (!name)
        return NULL;
    pthread_mutex_lock(&reg.lock);
    cap__name *e = name_intern(name, file, line, flags & CAP_NAME_FLAGS_KNOWN);
    pthread_mutex_unlock(&reg.lock);
    return e;
}

uint32_t cap_name_register_flags(const char *name, const char *file,
                                 uint32_t line, uint32_t flags)
{
    cap__name *e = intern(name, file, line, flags);
    return e ? e->id : 0;
}

uint32_t cap_name_register(const char *name, const char *file, uint32_t line)
{
    return cap_name_register_flags(name, file, line, 0);
}

uint32_t cap__site_resolve(cap__site *site, const char *name, const char *file,
                           uint32_t line, uint32_t flags, int literal)
{
    cap__name *e = intern(name, file, line, flags);
    if (!e)
        return 0;
    if (literal)
        __atomic_store_n(&site->id, e->id, __ATOMIC_RELAXED);
    else /* publishes the entry's fields, written under the lock */
        __atomic_store_n(&site->entry, e, __ATOMIC_RELEASE);
    return e->id;
}

uint32_t cap__invalid_id(void)
{
    pthread_mutex_lock(&reg.lock);
    if (!reg.invalid_id) {
        cap__name *e = name_intern("<invalid scope id>", NULL, 0, 0);
        reg.invalid_id = e ? e->id : 0;
    }
    uint32_t id = reg.invalid_id;
    pthread_mutex_unlock(&reg.lock);
    return id;
}

void cap_scope_begin(uint32_t id)
{
    (void)cap__scope_enter(id);
}

void cap_scope_end(void)
{
    cap__emit(CAP__KIND_END << CAP__KIND_SHIFT);
}

int cap__registry_name(uint32_t id, cap__name_info *out)
{
    pthread_mutex_lock(&reg.lock);
    const reg_name *rn =
        id >= 1 && id <= reg.names_n ? (const reg_name *)reg.names[id - 1]
                                     : NULL;
    if (rn) /* the strings live as long as the process: never freed */
        *out = (cap__name_info){rn->e.text, rn->file, rn->line, rn->e.flags};
    pthread_mutex_unlock(&reg.lock);
    return rn != NULL;
}

unsigned cap__registry_flags_epoch(void)
{
    return __atomic_load_n(&reg.flags_epoch, __ATOMIC_ACQUIRE);
}

/* ---- clock ------------------------------------------------------------- */

uint64_t cap__now_monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int have_invariant_counter(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1;
#elif defined(__aarch64__)
    return 1;
#else
    return 0;
#endif
}

/* A (tick, monotonic ns) pair read as close together as we can. */
void cap__clock_pair(uint64_t *tick, uint64_t *mono)
{
    uint64_t best = UINT64_MAX;
    *tick = 0;
    *mono = 0;
    for (int i = 0; i < 5; i++) {
        uint64_t m0 = cap__now_monotonic();
        uint64_t t = cap__now();
        uint64_t m1 = cap__now_monotonic();
        if (m1 - m0 < best) {
            best = m1 - m0;
            *tick = t;
            *mono = m0 + (m1 - m0) / 2;
        }
    }
}

/* Calls that use the active producer hold it between enter and leave:
 * cap_close unpublishes it, then waits for reg.inflight to drain before it
 * frees it, so a thread racing with close never touches freed memory.
 * (Both sides use sequentially consistent operations: either the caller
 * sees the producer unpublished, or close sees the caller's count.)
 * enter_any: any open producer; enter: one that is still recording. */
static producer *enter_any(void)
{
    if (!__atomic_load_n(&reg.active, __ATOMIC_RELAXED))
        return NULL; /* cheap when nothing is open */
    __atomic_add_fetch(&reg.inflight, 1, __ATOMIC_SEQ_CST);
    producer *p = __atomic_load_n(&reg.active, __ATOMIC_SEQ_CST);
    if (!p)
        __atomic_sub_fetch(&reg.inflight, 1, __ATOMIC_RELEASE);
    return p;
}

static void leave(void)
{
    __atomic_sub_fetch(&reg.inflight, 1, __ATOMIC_RELEASE);
}

static producer *enter(void)
{
    producer *p = enter_any();
    if (p && (__atomic_load_n(&p->closing, __ATOMIC_ACQUIRE) ||
              __atomic_load_n(&p->failed, __ATOMIC_RELAXED) ||
              __atomic_load_n(&p->finished, __ATOMIC_RELAXED))) {
        leave();
        return NULL;
    }
    return p;
}

uint64_t cap_now(void)
{
    return cap__now();
}

uint64_t cap_tick_from_mono_ns(uint64_t mono_ns)
{
    producer *p = enter_any();
    if (!p)
        return 0;
    pthread_mutex_lock(&p->lock);
    double per = p->period;
    uint64_t ot = p->origin_tick, om = p->origin_mono;
    pthread_mutex_unlock(&p->lock);
    leave();
    double d = ((double)(int64_t)(mono_ns - om)) / per;
    return ot + (uint64_t)(int64_t)llround(d);
}

/* ---- misc queue -------------------------------------------------------- */

/* Caller holds p->lock. Takes ownership of m->str and m->spans. */
static void misc_push(producer *p, misc m)
{
    if (p->q_n == p->q_cap) {
        size_t n = p->q_cap ? p->q_cap * 2 : 256;
        misc *q = n <= MISC_MAX ? realloc(p->q, n * sizeof *q) : NULL;
        if (!q) {
            p->misc_dropped++;
            free(m.str);
            free(m.spans);
            return;
        }
        p->q = q;
        p->q_cap = n;
    }
    p->q[p->q_n++] = m;
}

/* Caller holds p->lock. The tick of a frame boundary, never earlier than
 * the boundary before it. Reading the clock under the lock is not enough:
 * the counter instruction is not ordered with the lock's acquisition, and
 * the counters of two cores may differ by a few ticks, so a boundary made
 * on another thread could read a tick earlier than the one before it, and
 * its frame would end before it began and be refused. */
static uint64_t boundary_now(producer *p, uint64_t now)
{
    if (now < p->boundary_tick)
        now = p->boundary_tick;
    p->boundary_tick = now;
    return now;
}

/* ---- threads ----------------------------------------------------------- */

dbuf *cap__dbuf_new(producer *p)
{
    dbuf *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    size_t n = p->buffer_events + RESERVE_RECORDS;
    d->start = malloc(n * sizeof *d->start);
    if (!d->start) {
        free(d);
        return NULL;
    }
    d->limit = d->start + p->buffer_events;
    d->cap_end = d->start + n;
    d->flushed = d->start;
    return d;
}

static void dbuf_free_list(dbuf *d)
{
    while (d) {
        dbuf *n = d->next;
        free(d->start);
        free(d);
        d = n;
    }
}

void cap__tstate_free(tstate *t)
{
    if (t->cur) {
        free(t->cur->start);
        free(t->cur);
    }
    dbuf_free_list(t->retired);
    dbuf_free_list(t->free);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

static void tls_destructor(void *arg);

static void make_key(void)
{
    pthread_key_create(&reg.key, tls_destructor);
}

static void thread_name_default(char *buf, size_t n)
{
    snprintf(buf, n, "thread %ld", (long)gettid());
}

/* Give the calling thread a state in capture p. */
static tstate *thread_attach(producer *p, const char *name)
{
    tstate *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    pthread_mutex_init(&t->lock, NULL);
    t->p = p;
    t->cur = cap__dbuf_new(p);
    if (!t->cur) {
        cap__tstate_free(t);
        return NULL;
    }
    t->nbufs = 1;
    t->head.pos = t->cur->start;
    t->head.end = t->cur->limit;
    char auto_name[48];
    if (!name) {
        thread_name_default(auto_name, sizeof auto_name);
        name = auto_name;
    }
    char *copy = strdup(name);
    pthread_mutex_lock(&p->lock);
    t->tid = p->next_tid++;
    t->next = p->threads;
    p->threads = t;
    misc_push(p, (misc){.kind = M_THREAD, .id = t->tid, .str = copy});
    pthread_mutex_unlock(&p->lock);
    pthread_once(&reg.once, make_key);
    pthread_setspecific(reg.key, t);
    cap__tls = &t->head;
    return t;
}

static void thread_detach(tstate *t);

cap_result cap_thread_register(const char *name)
{
    producer *p = enter();
    if (!p)
        return CAP_E_MISUSE;
    cap_result r;
    cap__head *h = cap__tls;
    if (h != &cap__null_head && ((tstate *)h)->p == p) {
        tstate *t = (tstate *)h;
        char *copy = strdup(name ? name : "");
        pthread_mutex_lock(&p->lock);
        misc_push(p, (misc){.kind = M_THREAD, .id = t->tid, .str = copy});
        pthread_mutex_unlock(&p->lock);
        r = copy ? CAP_OK : CAP_E_NOMEM;
    } else {
        if (h != &cap__null_head) { /* state of a closed capture */
            cap__tls = &cap__null_head;
            pthread_setspecific(reg.key, NULL);
            thread_detach((tstate *)h);
        }
        r = thread_attach(p, name) ? CAP_OK : CAP_E_NOMEM;
    }
    leave();
    return r;
}

/* Detach state t from its thread: its buffer goes to the writer. Runs
 * under reg.lock throughout: cap_close moves the states of live threads to
 * the graveyard (or frees those of exited ones) and frees the producer
 * under that lock, so t->p is valid here unless t is in the graveyard. */
static void thread_detach(tstate *t)
{
    pthread_mutex_lock(&reg.lock);
    for (tstate **pp = &reg.graveyard; *pp; pp = &(*pp)->next)
        if (*pp == t) {
            *pp = t->next;
            pthread_mutex_unlock(&reg.lock);
            cap__tstate_free(t);
            return;
        }
    producer *p = t->p;
    pthread_mutex_lock(&t->lock);
    if (t->cur) {
        t->cur->final = __atomic_load_n(&t->head.pos, __ATOMIC_RELAXED);
        t->cur->next = NULL;
        if (t->retired_tail)
            t->retired_tail->next = t->cur;
        else
            t->retired = t->cur;
        t->retired_tail = t->cur;
        t->cur = NULL;
    }
    __atomic_store_n(&t->head.end, NULL, __ATOMIC_RELAXED);
    t->exited = 1;
    pthread_mutex_unlock(&t->lock);
    pthread_mutex_lock(&p->lock);
    p->wake = 1;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&reg.lock);
}

static void tls_destructor(void *arg)
{
    tstate *t = arg;
    if (cap__tls == &t->head)
        cap__tls = &cap__null_head;
    thread_detach(t);
}

void cap_thread_unregister(void)
{
    cap__head *h = cap__tls;
    if (h == &cap__null_head)
        return;
    tstate *t = (tstate *)h;
    cap__tls = &cap__null_head;
    if (reg.once == PTHREAD_ONCE_INIT)
        return;
    pthread_setspecific(reg.key, NULL);
    thread_detach(t);
}

/* ---- the slow path ----------------------------------------------------- */

static void wake_writer(producer *p)
{
    pthread_mutex_lock(&p->lock);
    p->wake = 1;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

/* Try to switch t to a fresh buffer; 1 on success. */
static int swap_buffer(tstate *t)
{
    producer *p = t->p;
    dbuf *d = NULL;
    pthread_mutex_lock(&t->lock);
    if (t->free) {
        d = t->free;
        t->free = d->next;
        __atomic_store_n(&t->free_count, t->free_count - 1, __ATOMIC_RELAXED);
    } else if (t->nbufs < p->buffers_per_thread) {
        d = cap__dbuf_new(p);
        if (d)
            t->nbufs++;
    }
    if (!d) {
        pthread_mutex_unlock(&t->lock);
        return 0;
    }
    d->next = NULL;
    d->flushed = d->start;
    d->final = NULL;
    dbuf *old = t->cur;
    old->final = __atomic_load_n(&t->head.pos, __ATOMIC_RELAXED);
    old->next = NULL;
    if (t->retired_tail)
        t->retired_tail->next = old;
    else
        t->retired = old;
    t->retired_tail = old;
    t->cur = d;
    __atomic_store_n(&t->head.pos, d->start, __ATOMIC_RELEASE);
    __atomic_store_n(&t->head.end, d->limit, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&t->lock);
    wake_writer(p);
    return 1;
}

static void put_record(tstate *t, uint32_t word, uint64_t tick)
{
    cap__rec *r = __atomic_load_n(&t->head.pos, __ATOMIC_RELAXED);
    r->tick = tick;
    r->word = word;
    r->aux = 0;
    __atomic_store_n(&t->head.pos, r + 1, __ATOMIC_RELEASE);
}

static void emit_slow(producer *p, uint32_t word, uint64_t tick)
{
    cap__head *h = cap__tls;
    tstate *t = (tstate *)h;
    if (h == &cap__null_head || t->p != p) {
        if (h != &cap__null_head) { /* stale state of a closed capture */
            cap__tls = &cap__null_head;
            pthread_setspecific(reg.key, NULL);
            thread_detach(t);
        }
        t = thread_attach(p, NULL);
        if (!t)
            return;
        put_record(t, word, tick);
        return;
    }
    if (t->exited)
        return;
    uint32_t kind = word >> CAP__KIND_SHIFT;
    if (!t->dropping) {
        if (swap_buffer(t)) {
            put_record(t, word, tick);
            return;
        }
        t->dropping = 1;
        t->drop_depth = 0;
        __atomic_store_n(&t->head.end, NULL, __ATOMIC_RELAXED);
    }
    /* dropping */
    if (t->drop_depth == 0 && kind == CAP__KIND_BEGIN &&
        __atomic_load_n(&t->free_count, __ATOMIC_RELAXED) > 0 &&
        swap_buffer(t)) {
        t->dropping = 0;
        put_record(t, word, tick);
        return;
    }
    if (kind == CAP__KIND_BEGIN) {
        t->drop_depth++;
        __atomic_store_n(&t->dropped,
                         __atomic_load_n(&t->dropped, __ATOMIC_RELAXED) + 1,
                         __ATOMIC_RELAXED);
        return;
    }
    if (t->drop_depth > 0) {
        t->drop_depth--;
        return;
    }
    /* the end of a recorded scope: keep nesting intact via the reserve */
    cap__rec *r = __atomic_load_n(&t->head.pos, __ATOMIC_RELAXED);
    if (r < t->cur->cap_end)
        put_record(t, word, tick);
}

void cap__emit_slow(uint32_t word, uint64_t tick)
{
    producer *p = enter();
    if (!p)
        return;
    emit_slow(p, word, tick);
    leave();
}

/* ---- open / close ------------------------------------------------------ */

static double env_seconds(const char *name, double fallback)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return fallback;
    char *end;
    double v = strtod(s, &end);
    if (*end || !isfinite(v) || v < 0) {
        cap__logf("ignoring %s=%s: not a number of seconds", name, s);
        return fallback;
    }
    return v;
}

static void live_log(const char *line)
{
    cap__logf("%s", line);
}

static void fill_default_meta(cap_meta_kv *kv, size_t *n, char *buf,
                              size_t bufsz, const cap_capture_options *o,
                              const char *clock)
{
    /* buf holds program, machine and start time strings */
    size_t used = 0;
    int have_program = 0, have_machine = 0, have_start = 0, have_clock = 0;
    for (size_t i = 0; o && i < o->meta_count; i++) {
        if (!o->meta[i].key)
            continue;
        have_program |= strcmp(o->meta[i].key, "program") == 0;
        have_machine |= strcmp(o->meta[i].key, "machine") == 0;
        have_start |= strcmp(o->meta[i].key, "start_time") == 0;
        have_clock |= strcmp(o->meta[i].key, "clock_source") == 0;
    }
    if (!have_program) {
        char exe[256];
        ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
        const char *name = "unknown";
        if (k > 0) {
            exe[k] = 0;
            const char *slash = strrchr(exe, '/');
            name = slash ? slash + 1 : exe;
        }
        int w = snprintf(buf + used, bufsz - used, "%s", name);
        kv[(*n)++] = (cap_meta_kv){"program", buf + used};
        used += (size_t)w + 1;
    }
    if (!have_machine) {
        char host[128] = "unknown";
        gethostname(host, sizeof host - 1);
        host[sizeof host - 1] = 0;
        char cpu[160] = "";
        FILE *f = fopen("/proc/cpuinfo", "r");
        if (f) {
            char line[256];
            while (fgets(line, sizeof line, f)) {
                if (strncmp(line, "model name", 10) == 0) {
                    const char *c = strchr(line, ':');
                    if (c) {
                        snprintf(cpu, sizeof cpu, "%s", c + 2);
                        cpu[strcspn(cpu, "\n")] = 0;
                    }
                    break;
                }
            }
            fclose(f);
        }
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        int w = snprintf(buf + used, bufsz - used, "%s (%s, %ld CPUs)", host,
                         cpu[0] ? cpu : "unknown CPU", ncpu);
        kv[(*n)++] = (cap_meta_kv){"machine", buf + used};
        used += (size_t)w + 1;
    }
    if (!have_start) {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        size_t w = strftime(buf + used, bufsz - used, "%Y-%m-%dT%H:%M:%SZ", &tm);
        kv[(*n)++] = (cap_meta_kv){"start_time", buf + used};
        used += w + 1;
    }
    if (!have_clock)
        kv[(*n)++] = (cap_meta_kv){"clock_source", clock};
    kv[(*n)++] = (cap_meta_kv){"libcapture", "0.1.0"};
    for (size_t i = 0; o && i < o->meta_count; i++)
        kv[(*n)++] = o->meta[i];
}

/* sample_device / CAP_SAMPLE_DEVICE, sample_period_ms /
 * CAP_SAMPLE_PERIOD_MS, and CAP__SAMPLE_ROOT (tests only: the directory
 * that stands for / when the sampler reads sysfs and procfs). */
static void sampler_options(producer *p, const cap_capture_options *o)
{
    p->sample_on = o && o->sample_device;
    p->sample_ms = o && o->sample_period_ms ? o->sample_period_ms : 100;
    const char *e = getenv("CAP_SAMPLE_DEVICE");
    if (e && *e) {
        if (strcmp(e, "0") == 0 || strcmp(e, "1") == 0)
            p->sample_on = e[0] == '1';
        else
            cap__logf("ignoring CAP_SAMPLE_DEVICE=%s: not 0 or 1", e);
    }
    e = getenv("CAP_SAMPLE_PERIOD_MS");
    if (e && *e) {
        char *end;
        unsigned long v = strtoul(e, &end, 10);
        if (*end || v < 1 || v > 3600000)
            cap__logf("ignoring CAP_SAMPLE_PERIOD_MS=%s: not a number of "
                  "milliseconds (1 to 3600000)",
                  e);
        else
            p->sample_ms = (unsigned)v;
    }
    e = getenv("CAP__SAMPLE_ROOT");
    if (e && *e)
        snprintf(p->sample_root, sizeof p->sample_root, "%s", e);
}

/* The writer on the file or descriptor, and the live sink when there is
 * one; CAP_E_IO with neither. */
static cap_result open_sink(producer *p, const char *path, int fd,
                            const cap_writer_options *wo)
{
    if (p->live)
        return cap__writer_open_tee(&p->w, path, fd, wo, cap__live_tee,
                                    p->live);
    if (path)
        return cap_writer_open_path(&p->w, path, wo);
    return fd >= 0 ? cap_writer_open_fd(&p->w, fd, wo) : CAP_E_IO;
}

/* A producer with o's buffer, flush and sampler options, its condition
 * variable on CLOCK_MONOTONIC; NULL when out of memory. */
static producer *producer_new(const cap_capture_options *o)
{
    producer *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    pthread_mutex_init(&p->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cond, &ca);
    pthread_condattr_destroy(&ca);
    p->buffer_events = o && o->buffer_events ? o->buffer_events : 16384;
    if (p->buffer_events < 64)
        p->buffer_events = 64;
    p->buffers_per_thread = o && o->buffers_per_thread ? o->buffers_per_thread
                                                       : 64;
    if (p->buffers_per_thread < 2)
        p->buffers_per_thread = 2;
    p->flush_ms = o && o->flush_interval_ms ? o->flush_interval_ms : 100;
    sampler_options(p, o);
    p->current_frame = UINT64_MAX;
    return p;
}

/* A producer that never started its writer thread, with its sinks. */
static void producer_discard(producer *p)
{
    cap__live_stop(p->live, 0);
    cap__flight_free(p->flight);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* The clock: the time-stamp counter when invariant (unless o forces
 * CLOCK_MONOTONIC), calibrated against CLOCK_MONOTONIC over ~2 ms into
 * p->period, p->origin_*. Returns the clock's name for the metadata. */
static const char *clock_start(producer *p, const cap_capture_options *o)
{
    int counter = !(o && o->force_monotonic) && have_invariant_counter();
    __atomic_store_n(&cap__clock_is_counter, counter, __ATOMIC_RELAXED);
    const char *clock =
#if defined(__aarch64__)
        counter ? "cntvct" : "monotonic";
#else
        counter ? "tsc" : "monotonic";
#endif
    uint64_t t0, m0, t1, m1;
    cap__clock_pair(&t0, &m0);
    if (counter) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        cap__clock_pair(&t1, &m1);
        p->period = t1 > t0 ? (double)(m1 - m0) / (double)(t1 - t0) : 1.0;
    } else {
        p->period = 1.0;
    }
    p->origin_tick = t0;
    p->origin_mono = m0;
    return clock;
}

/* The live server when CAP_LISTEN or o->listen asks for one (its failure
 * is logged, never fatal here). */
static void live_start(producer *p, const cap_capture_options *o,
                       const char *path, int fd)
{
    const char *listen = getenv("CAP_LISTEN");
    if (!listen || !*listen)
        listen = o ? o->listen : NULL;
    if (!listen)
        return;
    char why[160];
    if (cap__live_start(&p->live, listen, o ? o->listen_queue_bytes : 0,
                        o ? o->stall_timeout_ms : 0, live_log, why,
                        sizeof why) == CAP_OK)
        cap__logf("serving the capture on %s (port %d, no authentication: "
                  "see docs/LIVE.md)",
                  listen, cap__live_port(p->live));
    else
        cap__logf("cannot listen on %s: %s; %s", listen, why,
                  path || fd >= 0 ? "recording goes on without it"
                                  : "nothing is recorded");
}

/* p's writer (a file, fd, the live tee, or the flight ring) with its
 * metadata; CAP_E_NOMEM, or the sink's error. */
static cap_result writer_start(producer *p, const cap_capture_options *o,
                               const char *path, int fd, const char *clock)
{
    double skip = env_seconds("CAP_SKIP_SECONDS", o ? o->skip_seconds : 0);
    double rec = env_seconds("CAP_RECORD_SECONDS", o ? o->record_seconds : 0);
    double flight = cap__flight_mode(o, &rec, live_log);
    uint64_t t0 = p->origin_tick;
    p->skip_tick = t0 + (uint64_t)(skip * 1e9 / p->period);
    p->end_tick = rec > 0 ? p->skip_tick + (uint64_t)(rec * 1e9 / p->period) : 0;
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);

    size_t extra = o ? o->meta_count : 0;
    cap_meta_kv *kv = calloc(extra + 8, sizeof *kv);
    char strs[1024];
    if (!kv)
        return CAP_E_NOMEM;
    size_t kvn = 0;
    fill_default_meta(kv, &kvn, strs, sizeof strs, o, clock);
    char window[96];
    if (skip > 0 || rec > 0) {
        snprintf(window, sizeof window, "skip %.3f s, record %.3f s", skip, rec);
        kv[kvn++] = (cap_meta_kv){"window", window};
    }
    cap_writer_options wo = {
        .meta = kv,
        .meta_count = kvn,
        .clock_source = clock,
        .tick_period_ns = p->period,
        .origin_tick = t0,
        .origin_mono_ns = p->origin_mono,
        .origin_unix_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec,
        .zstd_level = o && o->zstd_level ? o->zstd_level : 1,
        .block_bytes = o && o->flush_bytes ? o->flush_bytes : 0,
        .stall_timeout_ms = o ? o->stall_timeout_ms : 0,
        .format_minor = 1, /* name flags, stray ends (as 1.1) */
        .format_major = o && o->format_major ? o->format_major : 4,
    };
    if (flight > 0 && wo.format_major == 4)
        wo.format_major = 3; /* the ring drops its oldest blocks: a dump
                                must not begin inside a group (4.0) */
    live_start(p, o, path, fd);
    cap__flight_opts fo = {.seconds = flight, .flush_ms = p->flush_ms,
                           .period_ns = p->period, .origin_tick = t0,
                           .origin_mono = p->origin_mono, .wo = &wo,
                           .live = p->live, .log = live_log};
    cap_result r = flight > 0 ? cap__flight_open(&p->flight, &p->w, o, path, &fo)
                              : open_sink(p, path, fd, &wo);
    if (r == CAP_OK && p->w) /* the registry names what the writer's bulk
                                path meets unnamed */
        cap__writer_set_resolver(p->w, cap__resolve_name, p);
    free(kv);
    if (r != CAP_OK && !(flight > 0 || (!path && fd < 0))) { /* else logged */
        int e = errno;
        cap__logf("cannot open capture '%s': %s%s%s", path ? path : "(fd)",
                  cap_result_message(r), r == CAP_E_IO ? ": " : "",
                  r == CAP_E_IO ? strerror(e) : "");
    }
    return r;
}

/* p, whose writer thread runs, becomes the active capture; CAP_E_MISUSE
 * (p stopped and freed) when another cap_open won the race. */
static cap_result publish(producer *p)
{
    pthread_mutex_lock(&reg.lock);
    if (reg.active || reg.closing) { /* lost a race with another cap_open */
        pthread_mutex_unlock(&reg.lock);
        pthread_mutex_lock(&p->lock);
        p->stop = 1;
        __atomic_store_n(&p->failed, 1, __ATOMIC_RELEASE);
        pthread_cond_signal(&p->cond);
        pthread_mutex_unlock(&p->lock);
        pthread_join(p->writer, NULL);
        cap_writer_abandon(p->w);
        cap__live_stop(p->live, 0);
        cap__flight_free(p->flight);
        free(p);
        return CAP_E_MISUSE;
    }
    memset(&reg.last, 0, sizeof reg.last);
    __atomic_store_n(&reg.active, p, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&reg.lock);
    return CAP_OK;
}

static cap_result open_common(int fd, const char *path,
                              const cap_capture_options *o)
{
    pthread_mutex_lock(&reg.lock);
    int busy = reg.active != NULL || reg.closing;
    pthread_mutex_unlock(&reg.lock);
    if (busy)
        return CAP_E_MISUSE;
    if (o && o->meta_count && !o->meta)
        return CAP_E_MISUSE;
    if (o && o->format_major > 4) /* 0 default, 1.1, 2.0, 3.1, 4.0 */
        return CAP_E_MISUSE;
    producer *p = producer_new(o);
    if (!p)
        return CAP_E_NOMEM;
    const char *clock = clock_start(p, o);
    cap_result r = writer_start(p, o, path, fd, clock);
    if (r != CAP_OK) {
        producer_discard(p);
        return r;
    }
    if (pthread_create(&p->writer, NULL, cap__writer_main, p) != 0) {
        cap_writer_abandon(p->w);
        producer_discard(p);
        return CAP_E_NOMEM;
    }
    p->writer_started = 1;
    return publish(p);
}

cap_result cap_open(const char *path, const cap_capture_options *opt)
{
    const char *listen = getenv("CAP_LISTEN");
    if (!path && !(listen && *listen) && !(opt && opt->listen) &&
        !(cap__flight_mode(opt, NULL, live_log) > 0))
        return CAP_E_MISUSE;
    return open_common(-1, path, opt);
}

cap_result cap_open_fd(int fd, const cap_capture_options *opt)
{
    if (fd < 0)
        return CAP_E_MISUSE;
    return open_common(fd, NULL, opt);
}

cap_result cap_close(void)
{
    pthread_mutex_lock(&reg.lock);
    producer *p = reg.active;
    if (!p || reg.closing) { /* none open, or another close under way */
        pthread_mutex_unlock(&reg.lock);
        return CAP_E_MISUSE;
    }
    reg.closing = 1;
    __atomic_store_n(&p->closing, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&reg.lock);

    /* The caller's own thread: its open frame ends now, and so do the
     * scopes still open on any thread (once the writer thread is done). */
    uint64_t close_tick = cap__now();
    pthread_mutex_lock(&p->lock);
    if (p->frame_open) {
        uint64_t now = boundary_now(p, close_tick);
        misc_push(p, (misc){.kind = M_FRAME, .tick = p->frame_begin,
                            .a = p->frame_begin, .b = now,
                            .c = p->frame_next - 1});
        p->frame_open = 0;
    }
    for (tstate *t = p->threads; t; t = t->next)
        __atomic_store_n(&t->head.end, NULL, __ATOMIC_RELAXED);
    p->stop = 1;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->writer, NULL);

    cap_result r = (cap_result)__atomic_load_n(&p->status, __ATOMIC_ACQUIRE);
    if (p->w) {
        int failed = __atomic_load_n(&p->failed, __ATOMIC_RELAXED);
        if (!failed) {
            (void)cap_writer_end_open_scopes(
                p->w, p->end_tick && close_tick > p->end_tick ? p->end_tick
                                                              : close_tick);
            /* the last block now, so that the statistics count it
             * (cap_get_stats may be reading them: under the lock) */
            if (cap_writer_flush(p->w) == CAP_OK) {
                pthread_mutex_lock(&p->lock);
                p->stats.blocks = cap__writer_blocks(p->w);
                pthread_mutex_unlock(&p->lock);
            }
            cap__flight_finish(p->flight, p->w); /* dumps still due */
        }
        cap_result c = failed ? (cap_writer_abandon(p->w), CAP_OK)
                              : cap_writer_close(p->w);
        p->w = NULL;
        if (c != CAP_OK && r == CAP_OK) {
            r = c;
            cap__logf("closing the capture failed: %s", cap_result_message(c));
        }
    }
    cap__live_stop(p->live, 2000); /* clients take their footers */
    p->live = NULL;
    /* Unpublish p, then wait until no call that found it is still using it
     * (see enter). */
    pthread_mutex_lock(&reg.lock);
    reg.last = p->stats;
    __atomic_store_n(&reg.active, NULL, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&reg.lock);
    while (__atomic_load_n(&reg.inflight, __ATOMIC_ACQUIRE) != 0)
        sched_yield();
    cap__flight_free(p->flight); /* cap_flight_* calls are over */
    p->flight = NULL;
    pthread_mutex_lock(&reg.lock);
    /* Threads still alive keep their state (their TLS points at it) in the
     * graveyard until they exit or record again. */
    for (tstate *t = p->threads, *next; t; t = next) {
        next = t->next;
        if (t->exited) {
            cap__tstate_free(t);
            continue;
        }
        dbuf_free_list(t->retired);
        t->retired = t->retired_tail = NULL;
        t->p = NULL;
        t->next = reg.graveyard;
        reg.graveyard = t;
    }
    reg.closing = 0;
    pthread_mutex_unlock(&reg.lock);
    for (size_t i = 0; i < p->q_n; i++) {
        free(p->q[i].str);
        free(p->q[i].spans);
    }
    free(p->q);
    free(p->q_spare);
    free(p->defined);
    cap__sampler_free(p->sampler);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    free(p);
    return r;
}

cap_result cap_flight_dump(const char *path)
{
    producer *p = enter_any();
    if (!p)
        return CAP_E_MISUSE;
    cap_result r = p->flight ? cap__flight_request(p->flight, path)
                             : CAP_E_MISUSE;
    leave();
    return r;
}

cap_result cap_flight_get_stats(cap_flight_stats *out)
{
    if (!out)
        return CAP_E_MISUSE;
    memset(out, 0, sizeof *out);
    producer *p = enter_any();
    if (!p)
        return CAP_E_MISUSE;
    cap_result r = CAP_E_MISUSE;
    if (p->flight) {
        cap__flight_get_stats(p->flight, out);
        r = CAP_OK;
    }
    leave();
    return r;
}

int cap_listen_port(void)
{
    producer *p = enter_any();
    if (!p)
        return 0;
    int port = cap__live_port(p->live);
    leave();
    return port;
}

cap_result cap_status(void)
{
    producer *p = enter_any();
    if (!p)
        return CAP_E_MISUSE;
    cap_result r = (cap_result)__atomic_load_n(&p->status, __ATOMIC_ACQUIRE);
    leave();
    return r;
}

void cap_get_stats(cap_producer_stats *out)
{
    if (!out)
        return;
    pthread_mutex_lock(&reg.lock);
    producer *p = reg.active;
    if (p) {
        pthread_mutex_lock(&p->lock); /* the writer frees states under it */
        out->events = __atomic_load_n(&p->stats.events, __ATOMIC_RELAXED);
        out->dropped_scopes =
            __atomic_load_n(&p->stats.dropped_scopes, __ATOMIC_RELAXED);
        out->frames = __atomic_load_n(&p->stats.frames, __ATOMIC_RELAXED);
        out->blocks = p->stats.blocks;
        out->bytes = p->stats.bytes;
        uint64_t pending = 0;
        for (tstate *t = p->threads; t; t = t->next)
            pending += __atomic_load_n(&t->dropped, __ATOMIC_RELAXED) -
                       __atomic_load_n(&t->dropped_seen, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&p->lock);
        out->dropped_scopes += pending;
    } else {
        *out = reg.last;
    }
    pthread_mutex_unlock(&reg.lock);
}

/* ---- frames, counters, GPU -------------------------------------------- */

static void frame_boundary(int begin, int end)
{
    producer *p = enter();
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    /* Read the clock under the lock: boundaries from two threads must get
     * their ticks in the order they take effect, or a frame would end
     * before it began and the writer would refuse it. */
    uint64_t now = boundary_now(p, cap__now());
    if (end && p->frame_open) {
        misc_push(p, (misc){.kind = M_FRAME, .tick = p->frame_begin,
                            .a = p->frame_begin, .b = now,
                            .c = p->frame_next - 1});
        p->frame_open = 0;
    }
    if (begin) {
        p->frame_open = 1;
        p->frame_begin = now;
        __atomic_store_n(&p->current_frame, p->frame_next, __ATOMIC_RELAXED);
        p->frame_next++;
    }
    pthread_mutex_unlock(&p->lock);
    leave();
}

void cap_frame_mark(void) { frame_boundary(1, 1); }
void cap_frame_begin(void) { frame_boundary(1, 1); }
void cap_frame_end(void) { frame_boundary(0, 1); }

uint64_t cap_frame_current(void)
{
    producer *p = enter_any();
    if (!p)
        return UINT64_MAX;
    uint64_t f = __atomic_load_n(&p->current_frame, __ATOMIC_RELAXED);
    leave();
    return f;
}

void cap_counter(uint32_t name, double value)
{
    producer *p = name ? enter() : NULL;
    if (!p)
        return;
    uint64_t now = cap__now();
    pthread_mutex_lock(&p->lock);
    misc_push(p, (misc){.kind = M_COUNTER, .id = name, .tick = now, .a = now,
                        .v = value});
    pthread_mutex_unlock(&p->lock);
    leave();
}

uint32_t cap_gpu_track(const char *name, double period_ns)
{
    if (!isfinite(period_ns) || period_ns <= 0)
        return UINT32_MAX;
    char *copy = strdup(name ? name : "gpu");
    if (!copy)
        return UINT32_MAX;
    producer *p = enter();
    if (!p) {
        free(copy);
        return UINT32_MAX;
    }
    uint64_t now = cap__now();
    pthread_mutex_lock(&p->lock);
    uint32_t id = UINT32_MAX;
    if (p->ntracks < CAP_MAX_TRACKS) {
        id = p->ntracks++;
        misc_push(p, (misc){.kind = M_TRACK, .id = id, .tick = now,
                            .str = copy, .v = period_ns});
        copy = NULL;
    }
    pthread_mutex_unlock(&p->lock);
    leave();
    free(copy);
    return id;
}

void cap_gpu_calibrate(uint32_t track, uint64_t gpu_tick, uint64_t mono_ns,
                       uint64_t deviation_ns)
{
    producer *p = enter();
    if (!p)
        return;
    uint64_t cpu = cap_tick_from_mono_ns(mono_ns);
    uint64_t now = cap__now();
    pthread_mutex_lock(&p->lock);
    if (track < p->ntracks)
        misc_push(p, (misc){.kind = M_CAL, .id = track, .tick = now,
                            .a = gpu_tick, .b = cpu, .c = deviation_ns});
    pthread_mutex_unlock(&p->lock);
    leave();
}

void cap_gpu_frame(uint32_t track, uint64_t cpu_frame, const cap_gpu_span *spans,
                   size_t n)
{
    if (!spans || n == 0 || n > CAP_MAX_GPU_SPANS)
        return;
    cap_gpu_span *copy = malloc(n * sizeof *copy);
    if (!copy)
        return;
    memcpy(copy, spans, n * sizeof *copy);
    producer *p = enter();
    if (!p) {
        free(copy);
        return;
    }
    uint64_t now = cap__now();
    pthread_mutex_lock(&p->lock);
    if (track < p->ntracks) {
        misc_push(p, (misc){.kind = M_GPU, .id = track, .tick = now,
                            .a = cpu_frame, .b = n, .spans = copy});
        copy = NULL;
    }
    pthread_mutex_unlock(&p->lock);
    leave();
    free(copy);
}

void cap_gpu_untimed(uint32_t track, uint64_t untimed_frames,
                     uint64_t invalid_spans)
{
    producer *p = enter();
    if (!p)
        return;
    uint64_t now = cap__now();
    pthread_mutex_lock(&p->lock);
    if (track < p->ntracks)
        misc_push(p, (misc){.kind = M_UNTIMED, .id = track, .tick = now,
                            .a = untimed_frames, .b = invalid_spans});
    pthread_mutex_unlock(&p->lock);
    leave();
}
