/* ahead.c - decoding ahead on a second thread. */
#include "model_int.h"

/* ---- decoding ahead on a second thread ----------------------------------
 * The reader thread fills the slots of a ring: a run of one thread's
 * scopes as records in ticks (cap_reader_next_scopes, 40 bytes each,
 * their stacks decoded into the slot's stk once per change: the ends of a
 * run share one), or one event of another kind (its stack, if any, copied
 * into the slot's arena) followed by the records of the run a section's
 * first scope begins. The name of each thread or track as the reader knew
 * it at that thread's first counted event goes into the slot's roots
 * (ml_root_name), and so do the wait flags of names new to the load
 * (over_time_hint). The calling thread applies each slot in order, the
 * event through apply and the records through ml_apply_recs, which converts
 * their ticks as the reader would, as a one-thread load does, so the
 * model is the same.
 *
 * The split (issue 12): the reader thread's share is the decoding itself
 * (about 285 instructions a realistic scope, reader.c) and the copy into
 * the slot; the model thread's, the conversion and the rest (about 190 on
 * the ranking, plus the frames, rings and histograms). Until the records
 * the reader thread also converted each tick and made an 80-byte event,
 * which fill_events read back to write a 40-byte record of the ns: the
 * reader thread was the longer one (bench_threads --ranking 20 M: 0.58 s
 * against 0.44) and two threads reached 1.44x; with records 0.51 against
 * 0.47, 1.64-1.67x (docs/PERFORMANCE.md, "Scopes as records in ticks").
 * What the model thread needs a scope's stack for it does once per stack
 * (scope_node), and whether a scope recurses is its node's
 * (an_node.recursive, set once when the node is made).
 *
 * The reader thread decodes the records straight into the slot with
 * streaming stores (cap_reader_stream_records), and the stacks into a
 * stage of its own (ahead.stk: the same lines batch after batch, in its
 * core's cache) copied into the slot at once (memcpy). Decoded into the
 * slot with ordinary stores, every line the decoder wrote was one the
 * model thread had read half a ring before, so each store first fetched
 * that line back from the other core, one after another: on a guest
 * whose two vCPUs are 480 ns apart (a cache line's round trip, AMD EPYC
 * family 26) the reader thread took twice its one-thread time and two
 * threads were slower than one (realistic 10 M: 0.56-0.61 s wall against
 * 0.49 s; with a stage copied by memcpy 0.35-0.39 s; non-temporal stores
 * for that copy did no better than memcpy). A streaming store fetches no
 * line, and with no copy at all the reader thread is 7 % shorter: 100 M
 * scopes in 1.94-2.04 s wall against 2.15-2.16 s with the records staged
 * (docs/PERFORMANCE.md, "Records streamed into the slot"). */

/* Up to 4,096 records a slot, half a ring (8 slots, 32 Ki scopes) handed
 * over at a time: with 1,024 the threads met four times as often and the
 * records were rewritten while still in the other core's cache (ranking
 * of 100 M scopes on two idle cores: 3.7-4.0 s wall with 1,024, 3.0 s
 * with 4,096, 1 thread 4.4 s; larger rings gave no more). */
enum { SLOT_EVENTS = 4096, SLOTS = 16 };

typedef struct slot_name {
    an_kind kind;
    uint32_t id;
    size_t off; /* in names */
} slot_name;

/* A slot's stacks: blocks of ARENA_BLOCK entries that never move (a
 * stack copied there is pointed at by its events), reused batch after
 * batch. */
enum { ARENA_BLOCK = 16384 }; /* > CAP_MAX_DEPTH: any stack fits one */

/* Entries of a slot's stk: a run of 4,096 realistic records copies a
 * stack about once per begin, a few entries each, so runs rarely end
 * early for room (at least 2 x CAP_MAX_DEPTH, as the reader asks). */
enum { SLOT_STACKS = 65536 };

typedef struct slot {
    cap_event ev[1]; /* an event that is not a record (n: 0 or 1); the
                        stacks of the events the model takes point into
                        the slot's arena, threads' names into its roots */
    size_t n;
    cap_scope_rec *rec; /* SLOT_EVENTS: a run of one thread's scopes as
                           the reader gives them (cap_reader_next_scopes:
                           ticks, converted by the model thread), after
                           the event; their stacks in stk */
    size_t rec_n;
    uint32_t rec_tid;
    double rec_per; /* their period (cap_scope_run.period_ns) */
    cap_result res;   /* CAP_OK: events; otherwise the reader's result */
    char detail[320]; /* the reader's detail for a result */
    uint32_t *stk;    /* SLOT_STACKS entries: the stacks of the
                         records */
    uint32_t **blk;   /* the arena's blocks: the stacks of the other
                         events the model takes */
    size_t nblk, blk_cap;
    size_t blk_at, blk_n; /* the block in use, entries used in it */
    slot_name *roots; /* first events of threads and tracks */
    size_t roots_n, roots_cap;
    char *names;
    size_t names_n, names_cap;
    struct slot_wait {  /* over_time_hint: CPU name ids first seen in the
                           batch, and whether each is a wait (2) or not */
        uint32_t id;
        uint8_t w;
    } *waits;
    size_t waits_n, waits_cap;
} slot;

typedef struct ahead {
    loader *L;
    slot *slots;
    size_t head, tail; /* filled: [tail, head) */
    int stop;          /* the consumer gave up */
    int ended;         /* the reader thread posted its last slot */
    int prod_waiting, cons_waiting;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* the reader thread's own copies of what the model decides by */
    uint8_t *seen_cpu; /* by tid */
    uint8_t seen_gpu[CAP_MAX_TRACKS];
    int carry_waits;   /* over_time_hint: the wait flags go with the
                          batches (the model sums work and waits apart) */
    struct id_map name_seen; /* by CPU name id, the reader thread's */
    int failed;        /* the reader thread ran out of memory */
    /* the reader thread's stage: an event and the records' stacks are
       decoded and prepared here, then copied into their slot (the
       records themselves are streamed into the slot) */
    cap_event stage[1];
    uint32_t *stk;       /* SLOT_STACKS: the records' stacks */
    cap_scope_rec *recs; /* the slots' records in one block (ml_huge_alloc),
                            or NULL: each slot's own */
} ahead;

const char *ml_root_name(const loader *L, an_kind kind, uint32_t id)
{
    if (!L->slot) {
        const char *nm = kind == AN_CPU ? cap_reader_thread_name(L->r, id)
                                        : cap_reader_track_name(L->r, id);
        /* a chunk after the first: a thread declared in an earlier
           chunk only is named as the footer names it */
        if (!nm && L->decl && L->chunk_index && kind == AN_CPU)
            nm = cap_reader_thread_name(L->decl, id);
        return nm;
    }
    for (size_t i = 0; i < L->slot->roots_n; i++)
        if (L->slot->roots[i].kind == kind && L->slot->roots[i].id == id)
            return L->slot->roots[i].off == SIZE_MAX
                       ? NULL
                       : L->slot->names + L->slot->roots[i].off;
    return NULL;
}

static int slot_root(slot *s, an_kind kind, uint32_t id, const char *name)
{
    size_t len = name ? strlen(name) + 1 : 0;
    if (an_grow((void **)&s->roots, &s->roots_cap, s->roots_n + 1,
             sizeof *s->roots) != 0 ||
        an_grow((void **)&s->names, &s->names_cap, s->names_n + len + 1, 1) != 0)
        return -1;
    s->roots[s->roots_n++] = (slot_name){kind, id, name ? s->names_n : 0};
    if (name) {
        memcpy(s->names + s->names_n, name, len);
        s->names_n += len;
    } else {
        s->roots[s->roots_n - 1].off = SIZE_MAX; /* no name: NULL */
    }
    return 0;
}

/* Room for `depth` entries in s's arena (the next block once this one is
 * full); NULL out of memory. */
static uint32_t *arena_take(slot *s, uint32_t depth)
{
    if (s->nblk && s->blk_n + depth <= ARENA_BLOCK) {
        uint32_t *d = s->blk[s->blk_at] + s->blk_n;
        s->blk_n += depth;
        return d;
    }
    size_t at = s->nblk ? s->blk_at + 1 : 0;
    if (at == s->nblk) {
        if (an_grow((void **)&s->blk, &s->blk_cap, s->nblk + 1,
                    sizeof *s->blk) != 0 ||
            !(s->blk[s->nblk] = malloc(ARENA_BLOCK * sizeof **s->blk)))
            return NULL;
        s->nblk++;
    }
    s->blk_at = at;
    s->blk_n = depth;
    return s->blk[at];
}

/* Reverse roots[a..b). */
static void roots_reverse(slot_name *r, size_t a, size_t b)
{
    for (; a + 1 < b; a++, b--) {
        slot_name t = r[a];
        r[a] = r[b - 1];
        r[b - 1] = t;
    }
}

/* The root of thread tid into slot s, the first time the reader thread
 * meets it: 0, or -1 out of memory. */
static int slot_root_cpu(ahead *A, slot *s, uint32_t tid)
{
    if (A->seen_cpu[tid])
        return 0;
    A->seen_cpu[tid] = 1;
    return slot_root(s, AN_CPU, tid, cap_reader_thread_name(A->L->r, tid));
}

/* Whether a scope that begins at ns begin counts: all of them, or those
 * from the cut-off on (--skip-seconds; on_scope's test). */
static inline int past_cutoff(const loader *L, int64_t begin)
{
    return !L->have_cutoff || begin >= L->cutoff_ns;
}

/* A CPU name met by the reader thread: its wait flag into the slot the
 * first time (over_time_hint): 0, or -1 out of memory. */
static int slot_wait(ahead *A, slot *s, uint32_t name)
{
    if (ml_id_get(&A->name_seen, name))
        return 0;
    if (ml_id_set(&A->name_seen, name, 1) != 0 ||
        an_grow((void **)&s->waits, &s->waits_cap, s->waits_n + 1,
                sizeof *s->waits) != 0)
        return -1;
    s->waits[s->waits_n++] =
        (struct slot_wait){name, ml_name_is_wait(A->L, A->L->r, name) ? 2 : 1};
    return 0;
}

/* A copy of an event's stack (depth names) in slot s's arena, where it
 * stays while the slot is applied; NULL when out of memory. */
static const uint32_t *arena_copy(slot *s, const uint32_t *stack,
                                  uint32_t depth)
{
    uint32_t *d = arena_take(s, depth);
    if (d && depth)
        memcpy(d, stack, depth * sizeof *d);
    return d;
}

/* fill's work for the event of a slot (one, not a record): its stack
 * copied into the slot's arena, its thread's or track's first root name,
 * the wait flag of a new name: 0, or -1 out of memory; *threads set when
 * it declares a thread (its name goes into the roots after). */
static int fill_event(ahead *A, slot *s, cap_event *ev, int *threads)
{
    loader *L = A->L;
    if (ev->kind == CAP_EV_SCOPE) {
        cap_ev_scope *e = &ev->u.scope;
        if (!past_cutoff(L, e->begin_ns) || L->values_only)
            return 0; /* on_scope skips it first; ml_apply_values takes no
                         stack, no root, no flag */
        if (!(e->stack = arena_copy(s, e->stack, e->depth)))
            return -1;
        if (slot_root_cpu(A, s, e->tid) != 0)
            return -1;
        return A->carry_waits ? slot_wait(A, s, e->name) : 0;
    }
    if (ev->kind == CAP_EV_THREAD) {
        *threads = 1;
    } else if (ev->kind == CAP_EV_GPU_SPAN) {
        cap_ev_gpu_span *e = &ev->u.gpu_span;
        if (!(e->stack = arena_copy(s, e->stack, e->depth)))
            return -1;
        if (!(L->have_cutoff && ml_frame_by_index(L->m, e->cpu_frame) < 0) &&
            !A->seen_gpu[e->track]) {
            A->seen_gpu[e->track] = 1;
            if (slot_root(s, AN_GPU, e->track,
                          cap_reader_track_name(L->r, e->track)) != 0)
                return -1;
        }
    }
    /* counters carry no pointer; the model takes nothing else */
    return 0;
}

/* fill's work for the n records just decoded (thread tid, period per)
 * into recs: the thread's first root name, once one of them counts (the
 * cut-off), and the wait flags of new names: 0, or -1 out of memory. The
 * usual ml_load (no cut-off, no wait flags) tests two flags and is done; a
 * scan (ml_apply_values) takes no root and no flag. */
static int fill_recs(ahead *A, slot *s, const cap_scope_rec *recs, size_t n,
                     uint32_t tid, double per)
{
    const loader *L = A->L;
    if (L->values_only)
        return 0;
    if (!A->carry_waits && (!L->have_cutoff || A->seen_cpu[tid]))
        return slot_root_cpu(A, s, tid); /* nothing to look at per record */
    for (size_t i = 0; i < n; i++) {
        const cap_scope_rec *q = &recs[i];
        if (!past_cutoff(L, cap_ticks_ns(q->begin, per)))
            continue;
        if (slot_root_cpu(A, s, tid) != 0 ||
            (A->carry_waits && slot_wait(A, s, q->name) != 0))
            return -1;
    }
    return 0;
}

/* Records from the reader into slot s, after its event (if any): the
 * records streamed into the slot, their stacks copied from the stage at
 * once. 0, or -1 out of memory. */
static int fill_take_recs(ahead *A, slot *s)
{
    cap_scope_run run;
    size_t rn = 0;
    cap_reader_next_scopes(A->L->r, s->rec, SLOT_EVENTS, &rn, A->stk,
                           SLOT_STACKS, &run);
    if (!rn)
        return 0;
    if (fill_recs(A, s, s->rec, rn, run.tid, run.period_ns) != 0)
        return -1;
    /* one copy, in a burst: the lines' fetches from the other core
       overlap, where the decoder's stores, spread over its work, waited
       for them one by one */
    memcpy(s->stk, A->stk, run.stacks_used * sizeof *A->stk);
    s->rec_n = rn;
    s->rec_tid = run.tid;
    s->rec_per = run.period_ns;
    return 0;
}

/* Fill slot s from the reader: a run of scopes as records, streamed into
 * the slot, their stacks decoded into the reader thread's own stage (its
 * lines stay in this core's cache, batch after batch) and copied into
 * the slot; or one event (prepared for the model by fill_event),
 * followed by the run of records a section's first scope begins. */
static int fill(ahead *A, slot *s)
{
    loader *L = A->L;
    s->roots_n = s->names_n = s->waits_n = 0;
    s->detail[0] = 0;
    s->blk_at = s->blk_n = 0;
    s->n = s->rec_n = 0;
    if ((!s->stk && !(s->stk = malloc(SLOT_STACKS * sizeof *s->stk))) ||
        (!s->rec && !(s->rec = malloc(SLOT_EVENTS * sizeof *s->rec))))
        return -1;
    s->res = CAP_OK;
    if (fill_take_recs(A, s) != 0)
        return -1;
    if (s->rec_n)
        return 0;
    /* one event: the others come one a call anyway, and a run of scopes
       after a section's first follows as records */
    cap_event *ev = A->stage;
    size_t got = 0;
    s->res = cap_reader_next_batch_into(L->r, ev, 1, &got, A->stk,
                                        SLOT_STACKS);
    if (s->res != CAP_OK) {
        snprintf(s->detail, sizeof s->detail, "%s", cap_reader_detail(L->r));
        return 0;
    }
    int threads = 0;
    if (fill_event(A, s, ev, &threads) != 0)
        return -1;
    if (threads) {
        /* the thread it declares goes first: ml_root_name finds the first
         * entry of a thread, and its declared name wins over the
         * reader's */
        size_t k = s->roots_n;
        if (slot_root(s, AN_CPU, ev->u.thread.tid, ev->u.thread.name) != 0)
            return -1;
        ev->u.thread.name = NULL; /* in the slot's roots */
        roots_reverse(s->roots, 0, k);
        roots_reverse(s->roots, k, s->roots_n);
        roots_reverse(s->roots, 0, s->roots_n);
    }
    s->ev[0] = *ev;
    s->n = 1;
    return ev->kind == CAP_EV_SCOPE ? fill_take_recs(A, s) : 0;
}

/* Apply slot s's event and records in order, as a one-thread load
 * applies them. */
static int apply_slot(loader *L, const slot *s)
{
    int rc = 0;
    if (s->n)
        rc = L->values_only ? ml_apply_values(L, s->ev, s->n)
                            : ml_apply(L, s->ev, s->n);
    if (rc == 0 && s->rec_n)
        rc = ml_apply_recs(L, s->rec, s->rec_n, s->stk, s->rec_tid, s->rec_per);
    return rc;
}

static void *reader_main(void *arg)
{
    ahead *A = arg;
    uint64_t seen = 0;
    for (;;) {
        /* a full ring: wait until half of it is free again, so that the
         * threads hand over half a ring at a time, not a slot */
        pthread_mutex_lock(&A->mu);
        if (A->head - A->tail == SLOTS && !A->stop) {
            A->prod_waiting = 1;
            while (A->head - A->tail > SLOTS / 2 && !A->stop)
                pthread_cond_wait(&A->cv, &A->mu);
            A->prod_waiting = 0;
        }
        int stop = A->stop;
        pthread_mutex_unlock(&A->mu);
        if (stop)
            return NULL;
        slot *s = &A->slots[A->head % SLOTS];
        if (fill(A, s) != 0) {
            s->res = CAP_E_NOMEM;
            s->n = 0;
            snprintf(s->detail, sizeof s->detail, "out of memory");
        }
        uint64_t before = seen;
        seen += s->n + s->rec_n;
        if ((seen >> 20) != (before >> 20))
            ml_progress(A->L, "reading", 0);
        cap_result res = s->res;
        int last =
            res != CAP_OK && res != CAP_E_CORRUPT && res != CAP_E_TRUNCATED;
        pthread_mutex_lock(&A->mu);
        A->head++;
        if (last)
            A->ended = 1;
        if (A->cons_waiting && (A->head - A->tail >= SLOTS / 2 || last))
            pthread_cond_broadcast(&A->cv);
        pthread_mutex_unlock(&A->mu);
        if (last)
            return NULL; /* CAP_DONE or a final error: the last slot */
    }
}

cap_result ml_pass_ahead(loader *L, char *detail, size_t dsz)
{
    an_capture *m = L->m;
    ahead A = {.L = L, .carry_waits = m->ot_bin != NULL};
    A.slots = calloc(SLOTS, sizeof *A.slots);
    A.seen_cpu = calloc(CAP_MAX_THREADS, 1);
    A.stk = malloc(SLOT_STACKS * sizeof *A.stk);
    /* every slot's records in one block of huge pages where the system
       gives them: the reader thread's streamed stores into 2.6 MB of
       fresh 4 KiB pages were a quarter of a two-thread 10 M scope load's
       page faults, on the thread that bounds it (else fill mallocs each
       slot's) */
    A.recs = ml_huge_alloc((size_t)SLOTS * SLOT_EVENTS * sizeof *A.recs);
    if (!A.slots || !A.seen_cpu || !A.stk) {
        free(A.recs);
        free(A.stk);
        free(A.slots);
        free(A.seen_cpu);
        return CAP_E_NOMEM;
    }
    for (size_t i = 0; A.recs && i < SLOTS; i++)
        A.slots[i].rec = A.recs + i * SLOT_EVENTS;
    pthread_mutex_init(&A.mu, NULL);
    pthread_cond_init(&A.cv, NULL);
    pthread_t th;
    cap_result res = CAP_OK;
    L->reader_busy = 1;
    /* the records go to the other thread: past this core's cache */
    cap_reader_stream_records(L->r, 1);
    if (pthread_create(&th, NULL, reader_main, &A) != 0) {
        res = CAP_E_NOMEM;
        goto out;
    }
    for (;;) {
        pthread_mutex_lock(&A.mu);
        if (A.head == A.tail) { /* empty: wait for half a ring */
            A.cons_waiting = 1;
            while (A.head - A.tail < SLOTS / 2 && !A.ended)
                pthread_cond_wait(&A.cv, &A.mu);
            A.cons_waiting = 0;
        }
        pthread_mutex_unlock(&A.mu);
        slot *s = &A.slots[A.tail % SLOTS];
        cap_result r = s->res;
        if (r == CAP_OK) {
            L->slot = s;
            L->gen++; /* the stacks of a new slot */
            int rc = 0;
            for (size_t i = 0; i < s->waits_n && rc == 0; i++)
                rc = ml_name_wait_set(L, s->waits[i].id, s->waits[i].w);
            if (rc == 0)
                rc = apply_slot(L, s);
            L->slot = NULL;
            if (rc != 0)
                res = CAP_E_NOMEM;
        } else if (r == CAP_E_CORRUPT || r == CAP_E_TRUNCATED) {
            if (r == CAP_E_CORRUPT)
                m->corrupt_seen = 1;
            if (!m->damage_detail[0])
                snprintf(m->damage_detail, sizeof m->damage_detail, "%s",
                         s->detail);
        } else if (r != CAP_DONE) {
            snprintf(detail, dsz, "%s", s->detail);
            res = r;
        }
        pthread_mutex_lock(&A.mu);
        A.tail++;
        if (res != CAP_OK)
            A.stop = 1;
        if (A.stop || (A.prod_waiting && A.head - A.tail <= SLOTS / 2))
            pthread_cond_broadcast(&A.cv);
        pthread_mutex_unlock(&A.mu);
        if (res != CAP_OK || r == CAP_DONE ||
            (r != CAP_OK && r != CAP_E_CORRUPT && r != CAP_E_TRUNCATED))
            break;
    }
    pthread_join(th, NULL);
out:
    cap_reader_stream_records(L->r, 0);
    L->reader_busy = 0;
    for (size_t i = 0; i < SLOTS; i++) {
        for (size_t b = 0; b < A.slots[i].nblk; b++)
            free(A.slots[i].blk[b]);
        free(A.slots[i].blk);
        free(A.slots[i].stk);
        if (!A.recs)
            free(A.slots[i].rec);
        free(A.slots[i].roots);
        free(A.slots[i].names);
        free(A.slots[i].waits);
    }
    free(A.recs);
    ml_id_free(&A.name_seen);
    free(A.slots);
    free(A.seen_cpu);
    free(A.stk);
    pthread_mutex_destroy(&A.mu);
    pthread_cond_destroy(&A.cv);
    if (res == CAP_OK)
        ml_progress(L, "", 1);
    return res;
}
