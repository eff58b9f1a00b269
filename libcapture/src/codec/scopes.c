/*
 * codec/scopes.c - what the scope encoders share: the per-name statistics
 * by id and the choice of the plain coding (SCOPES, 0x06) for a section
 * that repeats itself. The plain body is the writer's tokens and deltas
 * as they are.
 */
#include "codec/scopes.h"

#include <stdlib.h>
#include <string.h>

#include "capture/cap_limits.h"
#include "codec/scopes_walk.h"

void capc_scopes_enc_free(capc_scopes_enc *w)
{
    cap__idtab_free(&w->names);
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
    memset(w, 0, sizeof *w);
}

/* Does th's section repeat itself: among its first SR_SAMPLE events, do
 * most deltas equal the previous delta of the same (name, begin|end)? A
 * clock that ticks coarsely under a steady loop records such sections;
 * zstd's matches shrink their plain deltas (SCOPES) several times more
 * than any residual, so they stay plain. */
int capc_scopes_repeat(capc_scopes_enc *w, const capc_scopes_src *th)
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
        capc_sc_name *nm = name_slot(w, id);
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

