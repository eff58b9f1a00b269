/*
 * codec/scopes_walk.h - what the scope encoders (codec/scopes*.c) share:
 * the per-name statistics by id, a section's pass and its walk over the
 * events. Private to codec/.
 */
#ifndef CAP_CODEC_SCOPES_WALK_H
#define CAP_CODEC_SCOPES_WALK_H

#include <stdlib.h>
#include <string.h>

#include "capture/cap_limits.h"
#include "codec/scopes.h"

/* Name id's statistics when made, else NULL. */
static inline capc_sc_name *name_peek(const capc_scopes_enc *w, uint32_t id)
{
    return cap__idtab_peek(&w->names, id);
}

/* Name id's statistics, made (zeroed) when new; NULL when out of memory
 * or id is 0 or past CAP_MAX_NAME_ID. A slot never moves. */
static inline capc_sc_name *name_slot(capc_scopes_enc *w, uint32_t id)
{
    w->names.esz = sizeof(capc_sc_name); /* a zeroed encoder starts */
    return cap__idtab_slot(&w->names, id, CAP_MAX_NAME_ID);
}

/* The start of a pass over a section's events: the stack of open names
 * (w->sr_stack, made once) and a new generation for the names' per-pass
 * marks. 0 when out of memory. */
static inline uint64_t sr_pass(capc_scopes_enc *w)
{
    if (!w->sr_stack &&
        !(w->sr_stack = malloc(CAP_MAX_DEPTH * sizeof *w->sr_stack)))
        return 0;
    return ++w->sr_gen;
}

/* Events sampled from the start of a section to choose its encoding. */
#define SR_SAMPLE 4096u

/* Deltas above this stay out of a context's mean (gaps, not timings);
 * the sum of at most 2^23 of them fits 64 bits. */
#define SR_MEAN_MAX ((uint64_t)1 << 40)
#define SR_MEAN_COUNT ((uint64_t)1 << 23)

/* mean rounded to the nearest multiple of 2^s (0 and 40 or more: as it
 * is), the coarse predictions of small sections (sr_pred, se_pred). */
static inline uint64_t round_pow2(uint64_t mean, unsigned s)
{
    if (s == 0 || s >= 40)
        return mean;
    uint64_t half = (uint64_t)1 << (s - 1);
    return (mean + half) >> s << s;
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
            capc_sc_name *nm = name_slot((w), id);                             \
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

#endif
