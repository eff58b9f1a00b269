/*
 * writer/sections.c - a block's declaration and statistics sections:
 * NAMES (and NAME_FLAGS), THREADS, TRACKS and STATS, as writer.c's blocks
 * and footer list them (writer_int.h).
 */
#include <stddef.h>
#include <stdint.h>

#include "codec/decls.h"
#include "format/format.h"
#include "writer/writer_int.h"

void cap__writer_put_names(cap_writer *w, capf_buf *p, const uint32_t *ids,
                      size_t n)
{
    capf_buf *t = &w->tmp;
    t->len = 0;
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        const wr_name *nm = name_peek(w, ids[i]);
        if (nm && nm->name)
            count++;
    }
    if (!count)
        return;
    capf_buf_varint(t, count);
    for (size_t i = 0; i < n; i++) {
        const wr_name *nm = name_peek(w, ids[i]);
        if (!nm || !nm->name)
            continue;
        capc_name_put(t, ids[i], nm->name, nm->file, nm->line);
    }
    capf_buf_section(p, CAPF_SEC_NAMES, t);
    /* format 1.1: the flags of the names just listed that have any */
    t->len = 0;
    count = 0;
    for (size_t i = 0; i < n; i++) {
        const wr_name *nm = name_peek(w, ids[i]);
        if (nm && nm->name && nm->flags)
            count++;
    }
    if (!count)
        return;
    capf_buf_varint(t, count);
    for (size_t i = 0; i < n; i++) {
        const wr_name *nm = name_peek(w, ids[i]);
        if (!nm || !nm->name || !nm->flags)
            continue;
        capc_name_flags_put(t, ids[i], nm->flags);
    }
    capf_buf_section(p, CAPF_SEC_NAME_FLAGS, t);
}

/* decl_mark of a thread or track counted for the section being made */
#define DECL_PENDING UINT64_MAX

/* THREADS of ids; with `group`, only those not listed yet in this group
 * (4.0), which are then marked listed. */
void cap__writer_put_threads(cap_writer *w, capf_buf *p, const uint32_t *ids,
                        size_t n, int group)
{
    /* with `group`, an id listed twice (a thread renamed within the
       block) is counted and written once: marked pending, then listed */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        wr_thread *th = w->threads[ids[i]];
        if (!group) {
            k++;
        } else if (th->decl_mark < w->grp_first) {
            th->decl_mark = DECL_PENDING;
            k++;
        }
    }
    if (!k)
        return;
    capf_buf *t = &w->tmp;
    t->len = 0;
    capf_buf_varint(t, k);
    for (size_t i = 0; i < n; i++) {
        wr_thread *th = w->threads[ids[i]];
        if (group && th->decl_mark != DECL_PENDING)
            continue;
        capc_thread_put(t, ids[i], th->name);
        if (group)
            th->decl_mark = w->seq;
    }
    capf_buf_section(p, CAPF_SEC_THREADS, t);
}

/* TRACKS of ids, as cap__writer_put_threads lists threads. */
void cap__writer_put_tracks(cap_writer *w, capf_buf *p, const uint32_t *ids,
                       size_t n, int group)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        wr_track *tk = &w->tracks[ids[i]];
        if (!group) {
            k++;
        } else if (tk->decl_mark < w->grp_first) {
            tk->decl_mark = DECL_PENDING;
            k++;
        }
    }
    if (!k)
        return;
    capf_buf *t = &w->tmp;
    t->len = 0;
    capf_buf_varint(t, k);
    for (size_t i = 0; i < n; i++) {
        wr_track *tk = &w->tracks[ids[i]];
        if (group && tk->decl_mark != DECL_PENDING)
            continue;
        capc_track_put(t, ids[i], tk->name, tk->period);
        if (group)
            tk->decl_mark = w->seq;
    }
    capf_buf_section(p, CAPF_SEC_TRACKS, t);
}

void cap__writer_put_stats(cap_writer *w, capf_buf *p)
{
    capf_buf *t = &w->tmp;
    t->len = 0;
    size_t n = 0;
    capf_buf body = {0};
#define STAT(kind, subj, val)                                                  \
    do {                                                                       \
        if (val) {                                                             \
            capc_stat_put(&body, kind, subj, val);                             \
            n++;                                                               \
            val = 0;                                                           \
        }                                                                      \
    } while (0)
    for (size_t i = 0; i < w->blk_decl_threads_n; i++) {
        wr_thread *th = w->threads[w->blk_decl_threads[i]];
        STAT(CAPF_STAT_DROPPED_SCOPES, w->blk_decl_threads[i], th->dropped);
        STAT(CAPF_STAT_CLOSED_AT_END, w->blk_decl_threads[i], th->closed_at_end);
        STAT(CAPF_STAT_CLOCK_BACKWARDS, w->blk_decl_threads[i], th->backwards);
        STAT(CAPF_STAT_STRAY_ENDS, w->blk_decl_threads[i], th->stray);
    }
    for (size_t i = 0; i < w->blk_tracks_n; i++) {
        wr_track *k = &w->tracks[w->blk_tracks[i]];
        STAT(CAPF_STAT_GPU_UNTIMED, w->blk_tracks[i], k->untimed);
        STAT(CAPF_STAT_GPU_INVALID, w->blk_tracks[i], k->invalid);
    }
#undef STAT
    if (n) {
        capf_buf_varint(t, n);
        capf_buf_bytes(t, body.data, body.len);
        if (body.failed)
            t->failed = 1;
        capf_buf_section(p, CAPF_SEC_STATS, t);
    }
    capf_buf_free(&body);
}
