/*
 * writer_records.c - the live producer's bulk path into the writer
 * (writer_records.h): a thread buffer's records encoded as the per-event
 * calls would, and the producer's other hooks.
 */
#include "writer/writer_records.h"

#include "capture/cap_limits.h"
#include "format/format.h"
#include "writer/writer_int.h"

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

/* Name id from the writer's resolver: 0, or -1 when it has none. */
static int resolve(cap_writer *w, uint32_t id)
{
    cap__name_info ni;
    if (w->resolve(w->resolve_user, id, &ni) != 0 || !ni.name)
        return -1;
    if (cap_writer_name(w, id, ni.name, ni.file, ni.line) != CAP_OK)
        return -1;
    if (ni.flags)
        (void)cap_writer_name_flags(w, id, ni.flags);
    return 0;
}

void cap__writer_set_resolver(cap_writer *w, cap__name_fn fn, void *user)
{
    if (w) {
        w->resolve = fn;
        w->resolve_user = user;
    }
}

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
        uint8_t *const *const pages = w->names.pages;
        const uint32_t npages = w->names.pages_n;
        const uint64_t seq = w->seq;
        const uint64_t gfirst = w->grp_first; /* names listed from it on */
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
                const uint32_t pg = id >> CAP__IDTAB_PAGE_BITS;
                const wr_name *nm =
                    pg < npages && pages[pg]
                        ? (const wr_name *)pages[pg] +
                              (id & (CAP__IDTAB_PAGE - 1))
                        : NULL;
                if (!nm || !nm->name) {
                    /* named by the resolver, then the per-event path */
                    SYNC();
                    if (!w->resolve || resolve(w, id) != 0)
                        return i;
                    (void)cap_writer_scope_begin(w, tid, id, tick);
                    resume = 1;
                    i++;
                    break;
                }
                fast = fast && depth < stack_cap && nm->block_mark >= gfirst;
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

void cap__writer_hurry(cap_writer *w, int on)
{
    if (w)
        w->hurry = on != 0;
}

uint64_t cap__writer_blocks(const cap_writer *w)
{
    return w ? w->index_n : 0;
}
