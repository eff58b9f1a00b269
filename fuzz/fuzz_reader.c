/*
 * fuzz_reader.c - libFuzzer target: the capture reader on arbitrary bytes.
 *
 * Opens the input with cap_reader_open and walks every event to the end,
 * going on after the recoverable errors (CAP_E_CORRUPT, CAP_E_TRUNCATED)
 * as a tool does, and touching every borrowed pointer an event carries
 * (names, ancestor stacks) so that ASan checks them. Then a second pass
 * with the frames-only filter, which steps over sections by length, a
 * third through cap_reader_next_batch (every event of each batch touched
 * after the batch is complete), a fourth with cap_reader_frames_only
 * (blocks decompressed only as far as the footer index says) and a fifth
 * through cap_reader_next_batch_into, the stacks decoded into a buffer of
 * the smallest size allowed on the heap (ASan sees a write past it), and
 * a sixth through cap_reader_next_scopes (7 records a call, into that
 * buffer; the batch call when it gives none): a record whose ancestors lie
 * past the entries the call says it used aborts, and so does a sixth walk
 * whose scopes (the records converted with cap_ticks_ns), other events
 * and errors, in order, differ from the fifth's.
 * Any crash, sanitizer report, leak or hang is a bug in the reader.
 *
 * Both scope encodings are reached from the seeds (smoke.sh copies every
 * fixture, and stores each uncompressed with seed_raw): the 1.x fixtures'
 * SCOPES sections, and fixtures/scope-residuals.cap's SCOPES_R sections
 * (format 2.0: prediction table, stream table, class streams) beside
 * SCOPES ones in the same blocks.
 */
#include <capture/cap_reader.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_input.h"

static volatile size_t sink; /* keeps the reads below from being dropped */

static void touch_str(const char *s)
{
    if (s)
        sink += strlen(s);
}

static void touch_event(const cap_reader *r, const cap_event *ev)
{
    switch (ev->kind) {
    case CAP_EV_THREAD:
        touch_str(ev->u.thread.name);
        touch_str(cap_reader_thread_name(r, ev->u.thread.tid));
        break;
    case CAP_EV_GPU_TRACK:
        touch_str(ev->u.gpu_track.name);
        touch_str(cap_reader_track_name(r, ev->u.gpu_track.track));
        break;
    case CAP_EV_FRAME:
        sink += (size_t)ev->u.frame.end_ns - (size_t)ev->u.frame.begin_ns;
        break;
    case CAP_EV_SCOPE:
        touch_str(cap_reader_name(r, ev->u.scope.name));
        touch_str(cap_reader_name_file(r, ev->u.scope.name));
        touch_str(cap_reader_thread_name(r, ev->u.scope.tid));
        for (uint32_t i = 0; i < ev->u.scope.depth; i++)
            touch_str(cap_reader_name(r, ev->u.scope.stack[i]));
        break;
    case CAP_EV_GPU_SPAN:
        touch_str(cap_reader_name(r, ev->u.gpu_span.name));
        touch_str(cap_reader_track_name(r, ev->u.gpu_span.track));
        for (uint32_t i = 0; i < ev->u.gpu_span.depth; i++)
            touch_str(cap_reader_name(r, ev->u.gpu_span.stack[i]));
        break;
    case CAP_EV_COUNTER:
        touch_str(cap_reader_name(r, ev->u.counter.name));
        break;
    }
}

/* A digest of what a walk yields, in order: zlib's CRC-32 of each value
 * after the ones before (enough to tell two walks apart). */
static uint64_t mix(uint64_t h, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    return crc32((uLong)h, b, sizeof b);
}

/* A scope into the digest, from its event or its converted record. */
static uint64_t mix_scope(uint64_t h, uint32_t tid, uint32_t name,
                          uint32_t depth, int64_t begin, int64_t end,
                          int64_t children, const uint32_t *stack)
{
    h = mix(h, CAP_EV_SCOPE);
    h = mix(h, (uint64_t)tid << 32 | name);
    h = mix(h, depth);
    h = mix(mix(mix(h, (uint64_t)begin), (uint64_t)end), (uint64_t)children);
    for (uint32_t i = 0; i < depth; i++)
        h = mix(h, stack[i]);
    return h;
}

/* mode 0: cap_reader_next; 1: batches of 7; 2: cap_reader_frames_only;
 * 3: batches of 7 into the caller's stacks; 4: records first, 7 a call,
 * into the caller's stacks, else as 3. Returns the digest of what it
 * yielded (scopes, other events' kinds, errors; 0 when it cannot open). */
static uint64_t walk(const char *path, unsigned filter, int mode)
{
    cap_reader *r = NULL;
    char detail[256];
    uint64_t h = 1;
    if (cap_reader_open(&r, path, detail, sizeof detail) != CAP_OK) {
        touch_str(detail);
        return 0;
    }
    if (filter)
        cap_reader_set_filter(r, filter);
    if (mode == 2)
        cap_reader_frames_only(r);
    for (size_t i = 0; i < cap_reader_meta_count(r); i++) {
        touch_str(cap_reader_meta_key(r, i));
        touch_str(cap_reader_meta_value(r, i));
    }
    touch_str(cap_reader_clock_source(r));
    cap_event ev[7];
    uint32_t *stacks = NULL;
    if (mode >= 3 && !(stacks = malloc(2 * CAP_MAX_DEPTH * sizeof *stacks))) {
        cap_reader_close(r);
        abort(); /* two walks must be compared */
    }
    for (;;) {
        size_t n = 1;
        if (mode == 4) {
            cap_scope_rec rec[7];
            cap_scope_run run;
            if (cap_reader_next_scopes(r, rec, 7, &n, stacks,
                                       2 * CAP_MAX_DEPTH, &run) != CAP_OK)
                abort();
            for (size_t i = 0; i < n; i++) {
                if (rec[i].depth && rec[i].stack + (size_t)rec[i].depth >
                                        run.stacks_used)
                    abort(); /* its ancestors past what the call used */
                for (uint32_t k = 0; k < rec[i].depth; k++)
                    touch_str(cap_reader_name(r, stacks[rec[i].stack + k]));
                touch_str(cap_reader_name(r, rec[i].name));
                h = mix_scope(h, run.tid, rec[i].name, rec[i].depth,
                              cap_ticks_ns(rec[i].begin, run.period_ns),
                              cap_ticks_ns(rec[i].end, run.period_ns),
                              cap_ticks_dur_ns(rec[i].children,
                                               run.period_ns),
                              stacks + rec[i].stack);
            }
            if (n)
                continue;
            n = 1;
        }
        cap_result res =
            mode == 1   ? cap_reader_next_batch(r, ev, 7, &n)
            : mode >= 3 ? cap_reader_next_batch_into(r, ev, 7, &n, stacks,
                                                     2 * CAP_MAX_DEPTH)
                        : cap_reader_next(r, ev);
        if (res == CAP_OK) {
            for (size_t i = 0; i < n; i++) {
                touch_event(r, &ev[i]);
                const cap_ev_scope *e = &ev[i].u.scope;
                h = ev[i].kind == CAP_EV_SCOPE
                        ? mix_scope(h, e->tid, e->name, e->depth, e->begin_ns,
                                    e->end_ns, e->children_ns, e->stack)
                        : mix(h, ev[i].kind);
            }
            continue;
        }
        h = mix(h, 1000 + (uint64_t)(res + 100));
        touch_str(cap_reader_detail(r));
        if (res == CAP_E_CORRUPT || res == CAP_E_TRUNCATED)
            continue; /* recoverable: a tool reads on */
        break;
    }
    const cap_reader_stats *st = cap_reader_get_stats(r);
    sink += (size_t)st->scopes + (size_t)cap_reader_max_name_id(r) +
            (size_t)cap_reader_offset(r);
    cap_reader_close(r);
    free(stacks);
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    fuzz_input_path(data, size, path, sizeof path);
    walk(path, 0, 0);
    walk(path, 1u << CAP_EV_SCOPE | 1u << CAP_EV_COUNTER |
                   1u << CAP_EV_GPU_SPAN, 0);
    walk(path, 0, 1);
    walk(path, 0, 2);
    if (walk(path, 0, 3) != walk(path, 0, 4))
        abort(); /* records and events told different stories */
    return 0;
}
