/*
 * writer_records.h - the live producer's bulk path into the writer.
 *
 * Internal to libcapture: the producer's writer thread hands whole ranges
 * of a thread buffer (cap__rec records, capture/cap_record.h) to the writer in one
 * call instead of one cap_writer_scope_begin/end call per event. The bytes
 * written are exactly those the per-event calls would write for the same
 * records.
 */
#ifndef CAP_WRITER_RECORDS_H
#define CAP_WRITER_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "capture/cap_record.h"
#include "capture/cap_writer.h"

/* Encode records rec[0..n) of thread `tid` as cap_writer_scope_begin (kind
 * CAP__KIND_BEGIN, name id in the low 30 bits) and cap_writer_scope_end
 * calls would. Begins with a name id of 0 or above CAP_MAX_NAME_ID are
 * skipped and counted in *skipped.
 *
 * Stops before a record the caller must handle itself and returns its
 * index: a begin whose name id the writer has no name for yet and cannot
 * get from its resolver (cap__writer_set_resolver; define it with
 * cap_writer_name, then pass the record to cap_writer_scope_begin), or a
 * record whose tick lies outside [lo, hi] (the recording window).
 * Returns n when every record was consumed; also when the writer has
 * stopped after an error or `tid` is undeclared, since every per-event
 * call would fail then too. */
size_t cap__writer_records(cap_writer *w, uint32_t tid, const cap__rec *rec,
                           size_t n, uint64_t lo, uint64_t hi,
                           uint64_t *skipped);

/* A name as the producer's registry has it: its text, where it was first
 * registered (file NULL and line 0: not said) and its flags
 * (CAP_NAME_WAIT ...). */
typedef struct cap__name_info {
    const char *name;
    const char *file;
    uint32_t line;
    uint32_t flags;
} cap__name_info;

/* Fills *out for name id and returns 0, or returns -1 when it has no name
 * for id. The strings must stay valid until the writer is closed. Called
 * on the thread that called cap__writer_records. */
typedef int (*cap__name_fn)(void *user, uint32_t id, cap__name_info *out);

/* From now on, a begin whose name id the writer has no name for yet is
 * named by fn (cap_writer_name, then cap_writer_name_flags when it has
 * flags) inside cap__writer_records, which goes on with it; a name fn
 * does not have stops it as before. fn NULL: none. */
void cap__writer_set_resolver(cap_writer *w, cap__name_fn fn, void *user);

/* While `on`, a writer of format 3.0 codes each thread's scopes as 2.0's
 * SCOPES_R sections (the spec lets a 3.0 file hold them, section by
 * section), which take less of the writer's time than SCOPES_E (3.0
 * costs it 1.2x 2.0's time in large blocks, 1.07x in a 60 fps game's),
 * for a file about a fifth larger while it lasts; it applies to
 * the blocks written from then on. Other versions write as before. The
 * producer turns it on while its writer thread is behind the recording
 * threads. */
void cap__writer_hurry(cap_writer *w, int on);

/* BLOCK chunks w has written to its file so far (0 for NULL). */
uint64_t cap__writer_blocks(const cap_writer *w);

#endif
