/*
 * writer_thread.c - the producer's writer thread.
 *
 * It wakes every flush interval (or when a buffer is retired), copies
 * what each thread published since last time into the cap_writer (names
 * defined on first use, misc records, GPU spans), writes a block, samples
 * the device, returns drained buffers to their pools, and closes the file
 * when a fixed window ends. Once recording has stopped (window over, sink
 * failed) it only frees retired buffers, once a flush interval.
 */
#include "producer/producer_int.h"
#include "writer/writer_records.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void set_failed(producer *p, cap_result r, const char *what)
{
    if (__atomic_exchange_n(&p->failed, 1, __ATOMIC_ACQ_REL))
        return;
    __atomic_store_n(&p->status, (int)r, __ATOMIC_RELEASE);
    int e = cap_writer_errno(p->w);
    cap__logf("%s failed: %s%s%s; recording stopped, the file keeps every block "
          "written before",
          what, cap_result_message(r), e ? ": " : "", e ? strerror(e) : "");
}

/* p->defined[id]: DEFINED | the flags the writer has for id. */
#define DEFINED 0x80u

/* What the registry has for id, for the writer's name table; id marked as
 * given to the writer (p->defined), with its flags, and the flight ring
 * told its declarations grew. 0; -1 when id is not registered or
 * p->defined cannot grow. */
static int name_info(producer *p, uint32_t id, cap__name_info *out)
{
    if (id == 0)
        return -1;
    if (id >= p->defined_cap) {
        uint32_t n = p->defined_cap ? p->defined_cap : 256;
        while (n <= id)
            n *= 2;
        uint8_t *d = realloc(p->defined, n);
        if (!d)
            return -1;
        memset(d + p->defined_cap, 0, n - p->defined_cap);
        p->defined = d;
        p->defined_cap = n;
    }
    cap__name_info ni = {0};
    int known = cap__registry_name(id, &ni);
    p->defined[id] = (uint8_t)(DEFINED | (ni.flags & CAP_NAME_FLAGS_KNOWN));
    if (!known)
        return -1;
    *out = ni;
    if (p->flight)
        cap__flight_decls(p->flight);
    return 0;
}

/* id's name, with where it was registered, to the writer, once. */
static void define_name(producer *p, uint32_t id)
{
    if (id == 0 || (id < p->defined_cap && p->defined[id]))
        return;
    cap__name_info ni;
    if (name_info(p, id, &ni) != 0)
        return;
    (void)cap_writer_name(p->w, id, ni.name, ni.file, ni.line);
    if (ni.flags)
        (void)cap_writer_name_flags(p->w, id, ni.flags);
}

int cap__resolve_name(void *user, uint32_t id, cap__name_info *out)
{
    return name_info(user, id, out);
}

/* A name the writer already has may gain a flag later (registered plain,
 * then as a wait): pass the new flags on. Runs when the epoch moved. */
static void refresh_flags(producer *p)
{
    unsigned epoch = cap__registry_flags_epoch();
    if (epoch == p->flags_epoch)
        return;
    p->flags_epoch = epoch;
    for (uint32_t id = 1; id < p->defined_cap; id++) {
        if (!p->defined[id])
            continue;
        cap__name_info ni = {0};
        (void)cap__registry_name(id, &ni);
        uint32_t flags = ni.flags & CAP_NAME_FLAGS_KNOWN;
        if (flags & ~(uint32_t)p->defined[id]) {
            (void)cap_writer_name_flags(p->w, id, flags);
            p->defined[id] = (uint8_t)(DEFINED | flags);
        }
    }
}

/* Encode records from..to of thread t; stops at the first one past
 * p->hold (flight mode: the latest frame boundary) and returns where it
 * stopped (to when it did not). */
static cap__rec *encode_range(producer *p, tstate *t, cap__rec *from,
                              cap__rec *to)
{
    cap_writer *w = p->w;
    uint64_t events = 0;
    uint64_t lo = p->skip_tick, hi = p->end_tick ? p->end_tick : UINT64_MAX;
    hi = hi < p->hold ? hi : p->hold;
    cap__rec *r = from;
    for (; r < to; r++) {
        if (t->skip_depth == 0) {
            /* the bulk path; it stops at what needs the code below (a name
             * the writer has not seen, a record outside the window) */
            uint64_t skipped;
            size_t k = cap__writer_records(w, t->tid, r, (size_t)(to - r), lo,
                                           hi, &skipped);
            events += k - skipped;
            r += k;
            if (r == to)
                break;
        }
        if (r->tick > p->hold)
            break; /* the next block's */
        uint32_t kind = r->word >> CAP__KIND_SHIFT;
        uint32_t id = r->word & ((1u << CAP__KIND_SHIFT) - 1);
        if (r->tick < p->skip_tick || (p->end_tick && r->tick > p->end_tick)) {
            if (kind == CAP__KIND_BEGIN)
                t->skip_depth++;
            else if (t->skip_depth > 0)
                t->skip_depth--;
            else
                (void)cap_writer_scope_end(w, t->tid, r->tick);
            continue;
        }
        if (kind == CAP__KIND_BEGIN) {
            if (t->skip_depth > 0) {
                t->skip_depth++;
                continue;
            }
            if (id > CAP_MAX_NAME_ID || id == 0)
                continue;
            define_name(p, id);
            (void)cap_writer_scope_begin(w, t->tid, id, r->tick);
        } else {
            if (t->skip_depth > 0) {
                t->skip_depth--;
                continue;
            }
            (void)cap_writer_scope_end(w, t->tid, r->tick);
        }
        events++;
    }
    __atomic_fetch_add(&p->stats.events, events, __ATOMIC_RELAXED);
    return r < to ? r : to;
}

/* What the flight ring needs to know of a misc record (flight.h). */
static void flight_misc(producer *p, const misc *m)
{
    if (m->kind == M_FRAME)
        cap__flight_frame(p->flight, m->c, m->a, m->b);
    else if (m->kind == M_THREAD || m->kind == M_TRACK || m->kind == M_CAL)
        cap__flight_decls(p->flight);
}

static void process_misc(producer *p, misc *q, size_t n)
{
    cap_writer *w = p->w;
    for (size_t i = 0; i < n; i++) {
        misc *m = &q[i];
        if (p->flight)
            flight_misc(p, m);
        int in_window = m->tick >= p->skip_tick &&
                        (!p->end_tick || m->tick <= p->end_tick);
        switch (m->kind) {
        case M_THREAD:
            (void)cap_writer_thread(w, m->id, m->str);
            break;
        case M_FRAME:
            /* a: begin tick, b: end tick, c: index */
            if (m->a >= p->skip_tick && (!p->end_tick || m->b <= p->end_tick)) {
                if (cap_writer_frame(w, m->c, m->a, m->b) == CAP_OK)
                    __atomic_fetch_add(&p->stats.frames, 1, __ATOMIC_RELAXED);
            }
            break;
        case M_COUNTER:
            if (in_window) {
                define_name(p, m->id);
                (void)cap_writer_counter(w, m->id, m->a, m->v);
            }
            break;
        case M_TRACK:
            (void)cap_writer_gpu_track(w, m->id, m->str, m->v);
            break;
        case M_CAL:
            (void)cap_writer_gpu_calibration(w, m->id, m->a, m->b, m->c);
            break;
        case M_GPU:
            if (!in_window)
                break;
            for (uint64_t k = 0; k < m->b; k++)
                define_name(p, m->spans[k].name);
            (void)cap_writer_gpu_frame(w, m->id, m->a, m->spans, m->b);
            break;
        case M_UNTIMED:
            (void)cap_writer_gpu_dropped(w, m->id, m->a, m->b);
            break;
        }
        free(m->str);
        free(m->spans);
    }
}

/* Give thread t a free buffer when it has none left and its pool may
 * grow: allocated and first touched here, on the writer thread, so the
 * recording thread's next swap costs neither an mmap nor page faults. */
static void keep_spare(producer *p, tstate *t)
{
    if (__atomic_load_n(&t->free_count, __ATOMIC_RELAXED) > 0)
        return;
    pthread_mutex_lock(&t->lock);
    int grow = !t->free && !t->exited && t->nbufs < p->buffers_per_thread;
    if (grow)
        t->nbufs++; /* counted now: the thread may grow the pool too */
    pthread_mutex_unlock(&t->lock);
    if (!grow)
        return;
    dbuf *d = cap__dbuf_new(p);
    if (d)
        memset(d->start, 0, (size_t)(d->cap_end - d->start) * sizeof *d->start);
    pthread_mutex_lock(&t->lock);
    if (d) {
        d->next = t->free;
        t->free = d;
        __atomic_store_n(&t->free_count, t->free_count + 1, __ATOMIC_RELAXED);
    } else {
        t->nbufs--;
    }
    pthread_mutex_unlock(&t->lock);
}

/* Full buffers waiting for one drain from which the writer thread counts
 * itself behind: a quarter of a thread's pool (at least 2). It is woken
 * as each buffer fills, so one waiting is keeping up. */
static unsigned hurry_buffers(const producer *p)
{
    unsigned n = p->buffers_per_thread / 4;
    return n < 2 ? 2 : n;
}

/* The writer thread behind (a thread had hurry_buffers() waiting, a
 * quarter of its slack gone, most often while a block was coded): 3.0's
 * scopes are coded the cheaper way (cap__writer_hurry, SCOPES_R) until a
 * block has been written so and a round then finds every thread keeping
 * up (one buffer waiting at most). */
static void hurry_on(producer *p)
{
    if (p->hurry)
        return;
    p->hurry = 1;
    p->hurry_blocks = cap__writer_blocks(p->w);
    cap__writer_hurry(p->w, 1);
}

static void hurry_check(producer *p, unsigned most)
{
    if (p->hurry && most <= 1 && cap__writer_blocks(p->w) > p->hurry_blocks) {
        p->hurry = 0;
        cap__writer_hurry(p->w, 0);
    }
}

/* Put back, ahead of those retired since, the retired buffers from d on
 * (d's records from d->flushed on are still to be encoded). */
static void hold_retired(tstate *t, dbuf *d)
{
    dbuf *last = d;
    while (last->next)
        last = last->next;
    pthread_mutex_lock(&t->lock);
    last->next = t->retired;
    if (!t->retired)
        t->retired_tail = last;
    t->retired = d;
    pthread_mutex_unlock(&t->lock);
}

/* Copy what thread t published since the last drain into the writer.
 * Returns the full buffers it found waiting (hurry_on from
 * hurry_buffers() on, before it takes them). */
static unsigned drain_thread(producer *p, tstate *t)
{
    pthread_mutex_lock(&t->lock);
    dbuf *ret = t->retired;
    t->retired = t->retired_tail = NULL;
    dbuf *cur = t->cur;
    cap__rec *pos = cur ? __atomic_load_n(&t->head.pos, __ATOMIC_ACQUIRE) : NULL;
    pthread_mutex_unlock(&t->lock);
    int live = p->w && !__atomic_load_n(&p->failed, __ATOMIC_RELAXED);
    unsigned waiting = 0;
    for (dbuf *d = ret; d; d = d->next)
        waiting++;
    if (live && waiting >= hurry_buffers(p))
        hurry_on(p);
    while (ret) {
        dbuf *next = ret->next;
        cap__rec *stop = live ? encode_range(p, t, ret->flushed, ret->final)
                              : ret->final;
        if (stop < ret->final) { /* held back (flight mode): later */
            ret->flushed = stop;
            hold_retired(t, ret);
            cur = NULL;
            break;
        }
        ret->flushed = ret->start;
        ret->final = NULL;
        pthread_mutex_lock(&t->lock);
        ret->next = t->free;
        t->free = ret;
        __atomic_store_n(&t->free_count, t->free_count + 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&t->lock);
        ret = next;
    }
    if (cur && pos > cur->flushed)
        cur->flushed = live ? encode_range(p, t, cur->flushed, pos) : pos;
    uint64_t total = __atomic_load_n(&t->dropped, __ATOMIC_RELAXED);
    uint64_t dropped = total - t->dropped_seen;
    __atomic_store_n(&t->dropped_seen, total, __ATOMIC_RELAXED);
    if (dropped) {
        __atomic_fetch_add(&p->stats.dropped_scopes, dropped, __ATOMIC_RELAXED);
        if (live)
            (void)cap_writer_dropped(p->w, t->tid, dropped);
    }
    if (live)
        keep_spare(p, t);
    return waiting;
}

/* ---- the device sampler's hook (sampler.c) ---------------------------- */

static void sampler_log(void *user, const char *line)
{
    (void)user;
    cap__logf("%s", line);
}

static void sampler_emit(void *user, const char *name, uint32_t *id,
                         double value)
{
    producer *p = user;
    if (!*id)
        *id = cap_name_register(name, NULL, 0);
    uint64_t now = cap__now();
    if (!*id || now < p->skip_tick || (p->end_tick && now > p->end_tick))
        return;
    define_name(p, *id);
    (void)cap_writer_counter(p->w, *id, now, value);
}

/* Writer thread: sample the device when its period is due (the sources
 * are found at the first sample, here too, so cap_open pays nothing). */
static void sample_device(producer *p, uint64_t now_mono)
{
    if (!p->sample_on || now_mono - p->last_sample < p->sample_ms * 1000000ull)
        return;
    p->last_sample = now_mono;
    if (!p->sampler) {
        p->sampler = cap__sampler_new(p->sample_root, now_mono, sampler_log, p);
        if (!p->sampler) {
            p->sample_on = 0;
            return;
        }
    }
    cap__sampler_sample(p->sampler, now_mono, sampler_emit, p);
}

/* Under p->lock, as a round takes the frames: in flight mode, events
 * after the latest frame boundary wait for the next round (unless no
 * boundary came in the last second, or the capture closes). */
static void set_hold(producer *p, int stopping)
{
    p->hold = UINT64_MAX;
    if (p->flight && !stopping && p->boundary_tick &&
        cap__now() - p->boundary_tick < (uint64_t)(1e9 / p->period))
        p->hold = p->boundary_tick;
}

void *cap__writer_main(void *arg)
{
    producer *p = arg;
    uint64_t last_flush = cap__now_monotonic();
    pthread_mutex_lock(&p->lock);
    for (;;) {
        if (!p->stop && !p->wake) {
            /* Wake by the next flush deadline, counted from the last flush:
             * an early wake-up (a retired buffer) must not push it back.
             * The condition variable waits on CLOCK_MONOTONIC, so a step
             * of the wall clock cannot stall flushing either. */
            uint64_t now = cap__now_monotonic();
            if (!p->w || __atomic_load_n(&p->failed, __ATOMIC_RELAXED))
                /* Recording is over (the window closed, or the sink
                 * failed): nothing flushes or samples any more, so the
                 * deadlines below stand still. Wake once an interval to
                 * free retired buffers, never on a past deadline. */
                last_flush = now;
            uint64_t due = last_flush + (uint64_t)p->flush_ms * 1000000u;
            if (p->w && p->sample_on &&
                p->last_sample + p->sample_ms * 1000000ull < due)
                due = p->last_sample + p->sample_ms * 1000000ull;
            if (due > now) {
                struct timespec ts = {(time_t)(due / 1000000000u),
                                      (long)(due % 1000000000u)};
                pthread_cond_timedwait(&p->cond, &p->lock, &ts);
            }
        }
        p->wake = 0;
        int stopping = p->stop;
        uint64_t round_mono = cap__now_monotonic(); /* frames taken by then */
        set_hold(p, stopping);
        misc *q = p->q;
        size_t qn = p->q_n, qcap = p->q_cap;
        p->q = p->q_spare;
        p->q_cap = p->q_spare_cap;
        p->q_n = 0;
        p->q_spare = NULL;
        p->q_spare_cap = 0;
        tstate *head = p->threads;
        pthread_mutex_unlock(&p->lock);

        int live = p->w && !__atomic_load_n(&p->failed, __ATOMIC_RELAXED);
        if (live && p->live) /* clients that connected: their declarations */
            cap__live_poll(p->live, p->w);
        if (live)
            refresh_flags(p);
        if (live)
            process_misc(p, q, qn);
        else
            for (size_t i = 0; i < qn; i++) {
                free(q[i].str);
                free(q[i].spans);
            }
        unsigned most = 0; /* full buffers found waiting, at most */
        for (tstate *t = head; t; t = t->next) {
            unsigned n = drain_thread(p, t);
            most = n > most ? n : most;
        }
        if (live)
            hurry_check(p, most);
        if (live)
            sample_device(p, cap__now_monotonic());

        uint64_t tick, mono;
        cap__clock_pair(&tick, &mono);
        if (live) {
            (void)cap_writer_clock_sample(p->w, tick, mono);
            if (mono - p->origin_mono >= 100000000u && tick > p->origin_tick) {
                pthread_mutex_lock(&p->lock);
                p->period = (double)(mono - p->origin_mono) /
                            (double)(tick - p->origin_tick);
                pthread_mutex_unlock(&p->lock);
            }
            uint64_t now = cap__now_monotonic();
            if (stopping || now - last_flush >= (uint64_t)p->flush_ms * 1000000u) {
                cap_result r = cap_writer_flush(p->w);
                last_flush = now;
                /* A block written when it filled up may have failed first:
                 * report that error, not the CAP_E_STOPPED that follows. */
                if (r != CAP_OK)
                    set_failed(p, cap_writer_status(p->w), "writing the capture");
            }
            if (p->flight)
                cap__flight_round(p->flight, p->w, round_mono);
            if (p->end_tick && tick > p->end_tick &&
                !__atomic_load_n(&p->finished, __ATOMIC_RELAXED)) {
                /* the fixed window is over: finish the file now; scopes
                 * still open end with the window */
                (void)cap_writer_end_open_scopes(p->w, p->end_tick);
                cap_result r = cap_writer_close(p->w);
                p->w = NULL;
                __atomic_store_n(&p->finished, 1, __ATOMIC_RELEASE);
                if (r != CAP_OK)
                    set_failed(p, r, "closing the capture");
                else
                    cap__logf("recording window of the capture is over; file "
                          "closed");
            }
        }
        pthread_mutex_lock(&p->lock);
        if (qcap <= 65536 && !p->q_spare) { /* keep a moderate one */
            p->q_spare = q;
            p->q_spare_cap = qcap;
        } else {
            free(q);
        }
        p->stats.bytes = p->w ? cap_writer_bytes_written(p->w) : p->stats.bytes;
        p->stats.blocks = p->w ? cap__writer_blocks(p->w) : p->stats.blocks;
        /* free the states of threads that exited and are fully drained */
        for (tstate **pp = &p->threads; *pp;) {
            tstate *t = *pp;
            pthread_mutex_lock(&t->lock);
            int gone = t->exited && !t->retired && !t->cur;
            pthread_mutex_unlock(&t->lock);
            if (gone) {
                *pp = t->next;
                cap__tstate_free(t);
            } else {
                pp = &t->next;
            }
        }
        if (stopping)
            break;
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

