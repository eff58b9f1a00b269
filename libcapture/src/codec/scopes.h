/*
 * codec/scopes.h - the codings of a thread's scope events in a block:
 * SCOPES (0x06, plain), SCOPES_R (0x0D, predicted deltas) and SCOPES_E
 * (0x0E, range-coded), their encoders beside their decoders
 * (format-spec/capture-format.md has the bytes; format/format.h the
 * framing, varints and the constants these codings share).
 *
 * Internal to libcapture: the writer encodes a section's body with these,
 * the reader starts a section with them and decodes its events in its own
 * loop, with the per-event steps inlined from here.
 */
#ifndef CAP_CODEC_SCOPES_H
#define CAP_CODEC_SCOPES_H

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

/* ---- encoders (writer side) ------------------------------------------- */

/* One thread's events in a block as the writer gathered them: the open
 * stack at the block's start (v depth, depth x (v name, v base - begin,
 * v children)), a token per event (a name: a begin; 0: an end) and each
 * event's tick delta (the first event's from base), all varints. The
 * buffers are borrowed for the call. */
typedef struct capc_scopes_src {
    capf_buf open, tokens, deltas;
    uint64_t n_events;
} capc_scopes_src;

/* Per name id: the statistics of the section being encoded, for each
 * kind (0: begin, 1: end). */
typedef struct capc_sc_name {
    uint64_t sr_m[2];    /* SCOPES_R: begin, end: sum, then mean ... */
    uint64_t sr_n[2];    /* ... of this many deltas ... */
    uint64_t sr_gen[2];  /* ... in the section of this number */
    double sr_sq[2];     /* SCOPES_R: the sum of those deltas' squares */
    uint64_t se_gen;     /* SCOPES_E: listed in the section of this number */
    uint64_t se_dev[2];  /* ... the sum of |delta - mean| (begin, end) */
    uint64_t se_last[2]; /* ... its latest delta (scopes_repeat's test) */
    uint32_t se_dense;   /* ... its index in the section's list, from 1 */
    uint8_t se_k[2], se_tab[2]; /* ... its shift and residual table */
} capc_sc_name;

/* The encoders' state, kept from one section to the next so that its
 * buffers are made once: zero it to start, capc_scopes_enc_free to end. */
typedef struct capc_scopes_enc {
    /* names by id, in pages of CAPC_PAGE made when an id in them is
       first seen (ids go up to CAP_MAX_NAME_ID) */
    capc_sc_name **name_pages;
    uint32_t name_pages_n;
    uint64_t sr_gen;  /* sections encoded so far */
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
} capc_scopes_enc;

/* Frees what e holds and zeroes it; e itself is the caller's. */
void capc_scopes_enc_free(capc_scopes_enc *e);

/* Does the section repeat itself: among its first events, do most deltas
 * equal the previous delta of the same (name, begin|end)? Then it is
 * better written plain (SCOPES) than as SCOPES_R. 1 also when out of
 * memory or when s holds a stack the writer cannot have made. */
int capc_scopes_repeat(capc_scopes_enc *e, const capc_scopes_src *s);

/* The rest of a SCOPES_R body after v tokens_len (format-spec "SCOPES_R
 * (0x0D)") appended to t: 0, or -1 when out of memory or when s holds a
 * stack the writer cannot have made (t then incomplete). */
int capc_scopes_r_put(capc_scopes_enc *e, capf_buf *t,
                      const capc_scopes_src *s);

/* The rest of a SCOPES_E body after n_events (format-spec "SCOPES_E
 * (0x0E)") appended to t: 0; -1 as capc_scopes_r_put; or 1, nothing
 * written, where the section repeats itself (capc_scopes_repeat's test,
 * made on the same events) and is better written plain. */
int capc_scopes_e_put(capc_scopes_enc *e, capf_buf *t,
                      const capc_scopes_src *s);

#endif
