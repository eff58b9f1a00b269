/*
 * writer_live.h - what the live socket sink (live.c) needs from the writer.
 *
 * Internal to libcapture. A writer opened with cap__writer_open_tee hands
 * every chunk it writes (META, BLOCK, FOOTER; the file header is not a
 * chunk and is not passed) to a tee callback, on the thread that drives the
 * writer, after the chunk reached the file (or at once when there is no
 * file: fd -1). The sink copies the chunk bytes for its clients and builds,
 * with the helpers below, the chunks a client needs that the file does not
 * have: its own META (with the key `stream_start_ns`), a declarations
 * block for a client that connects late, a loss block counting what the
 * client's queue could not take, and a footer with the client's own index.
 * All of them are complete chunks (24-byte header and payload) appended to
 * `out`. They may be called only from inside the tee callback or between
 * writer calls, on the writer's thread.
 */
#ifndef CAP_WRITER_LIVE_H
#define CAP_WRITER_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "capture/cap_writer.h"
#include "format/format.h"

typedef struct cap__tee_chunk {
    uint16_t type;          /* CAPF_CHUNK_META, _BLOCK or _FOOTER */
    const uint8_t *hdr;     /* the 24-byte chunk header */
    const uint8_t *body;    /* then the stored payload, body_len bytes */
    size_t body_len;
    uint64_t first_frame;   /* BLOCK: its index entry's first_frame, frames */
    uint64_t frames;
} cap__tee_chunk;

typedef void (*cap__tee_fn)(void *user, cap_writer *w, const cap__tee_chunk *c);

/* As cap_writer_open_path (path not NULL) or cap_writer_open_fd (fd), with
 * every chunk also passed to tee(user, ...); path NULL and fd -1: no file,
 * the chunks go to the tee only. */
cap_result cap__writer_open_tee(cap_writer **out, const char *path, int fd,
                                const cap_writer_options *opt, cap__tee_fn tee,
                                void *user);

/* The 16-byte file header the writer wrote (its format version). */
void cap__writer_header(const cap_writer *w, uint8_t out[CAPF_HEADER_LEN]);

/* A META chunk equal to the writer's, with `stream_start_ns` = the time of
 * CPU tick `start_tick` (ns since the origin, converted with the latest
 * clock sample as a reader converts it) appended to the metadata. */
int cap__writer_meta_chunk(cap_writer *w, uint64_t start_tick, capf_buf *out);

/* A BLOCK chunk declaring every name, thread and track the writer knows,
 * the latest clock sample and each track's latest calibration. */
int cap__writer_decl_chunk(cap_writer *w, capf_buf *out);

/* A BLOCK chunk whose STATS count `scopes[i]` dropped scopes of thread
 * `tids[i]` (declared in it), for i < n. */
int cap__writer_loss_chunk(cap_writer *w, const uint32_t *tids,
                           const uint64_t *scopes, size_t n, capf_buf *out);

/* A FOOTER chunk (every declaration, the latest clock sample and an index
 * of `n` blocks: offsets[i], first_frame[i], frames[i]) and the trailer
 * that points at `footer_offset`. */
int cap__writer_footer_chunk(cap_writer *w, const uint64_t *offsets,
                             const uint64_t *first_frame,
                             const uint64_t *frames, size_t n,
                             uint64_t footer_offset, capf_buf *out);

/* Inside the tee callback of a BLOCK: per thread, the scopes that block
 * loses when it is left out of a stream, i.e. the scopes that end in it (a
 * scope that begins in it and ends later is still read from the later
 * block's open-scope prefix). Fills at most `max` pairs and returns how
 * many threads had events. */
size_t cap__writer_block_scopes(cap_writer *w, uint32_t *tids,
                                uint64_t *scopes, size_t max);

/* Format 4.0 (groups of blocks): make the writer's next BLOCK the start of
 * a new group (a chunk without the CONT flag that decodes without the
 * blocks before it), so that a client's stream can begin there or go on
 * after a block left out of it. Called on the writer's thread: from the
 * tee callback (the next block starts the group), or between writer calls
 * (the block being assembled starts it and declares every name, thread
 * and track). No effect on a writer without groups. */
void cap__writer_new_group(cap_writer *w);

#endif
