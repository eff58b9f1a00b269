/*
 * cap_chunks.h - a capture file cut into runs of blocks that read on their
 * own, for reading one file on several threads.
 *
 * Every BLOCK chunk of a capture decodes without the blocks before it
 * (format-spec "Open-stack prefix", "The period of a block"): it names the
 * ids it uses and carries each thread's open scopes. In format 4.0 this
 * holds for the first block of each group (format-spec "Groups of
 * blocks"); the group's later blocks decode only after it, so a chunk
 * always begins at a group's first block (and may hold more than
 * min_bytes to get to the next one). A file that ends with
 * a valid footer lists its blocks' offsets (INDEX). cap_chunks_plan reads
 * that list and groups the blocks into chunks of consecutive blocks, each
 * at least `min_bytes` of the file (the last one may be shorter); the
 * grouping depends on the file and min_bytes only, never on how many
 * threads will read it, so a program that merges the chunks' results in
 * chunk order gets the same result on any number of threads.
 * cap_chunks_open gives a reader of one chunk, with a file description of
 * its own, so that chunks are read on different threads at once.
 *
 * What a chunk reader does not know: declarations made only in earlier
 * chunks (a thread named once, in the first block, is unnamed in a chunk
 * reader of a later run: the footer's declarations, read by a reader of
 * [footer_offset, 0), name it), a GPU track's declaration and calibration
 * made in earlier blocks (GPU spans need them: read such files whole), and
 * the footer (a chunk reader ends with CAP_DONE at its chunk's end, never
 * with CAP_E_TRUNCATED). Events, their order within the chunk, times and
 * names of ids it uses are those a whole read yields for those blocks.
 *
 * Thread safety: the functions may be called from any thread; each reader
 * they open is used by one thread at a time (cap_reader.h).
 */
#ifndef CAP_CHUNKS_H
#define CAP_CHUNKS_H

#include <stddef.h>
#include <stdint.h>

#include "cap_export.h"
#include "cap_reader.h"
#include "cap_result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A run of consecutive BLOCK chunks: those whose headers start in
 * [begin, end) of the file. */
typedef struct cap_chunk {
    uint64_t begin, end;
    uint64_t blocks; /* BLOCK chunks in it (>= 1) */
} cap_chunk;

typedef struct cap_chunk_plan {
    cap_chunk *chunks;      /* n of them, in file order; NULL when n is 0 */
    size_t n;               /* 0: the file cannot be cut (read it whole) */
    uint64_t blocks;        /* BLOCK chunks in the file (the INDEX's) */
    uint64_t footer_offset; /* where the FOOTER chunk starts (0 when n 0) */
    uint64_t file_size;
    const char *why_whole;  /* n 0: why (a static string), else NULL */
} cap_chunk_plan;

/* Plan the chunks of the capture open on fd (read with pread only: fd's
 * position is left alone; the caller keeps fd). Each chunk holds
 * consecutive blocks of the footer's INDEX adding up to at least
 * min_bytes (0: one block a chunk; one group a chunk in 4.0), never
 * beginning at a block that continues a group. A valid chunk header of a BLOCK must
 * start at each offset the INDEX lists. When the file cannot be cut (not
 * a regular file, no readable footer or INDEX, an offset without a
 * block's header, no blocks) *plan has n 0 and why_whole says why, and
 * CAP_OK is returned: read the file whole then. Errors: CAP_E_MISUSE (fd
 * < 0 or plan NULL), CAP_E_NOMEM. Free with cap_chunks_free. */
CAP_API cap_result cap_chunks_plan(int fd, uint64_t min_bytes,
                                   cap_chunk_plan *plan);

/* Free what cap_chunks_plan allocated (plan may be NULL) and zero it. */
CAP_API void cap_chunks_free(cap_chunk_plan *plan);

/* Open a reader of the chunks that start in [begin, end) of the capture
 * open on fd (end 0: on to the end of the file, the footer included; a
 * reader of [footer_offset, 0) yields the footer's declarations and
 * knows its names). The reader has its own file description (fd is
 * opened again through /proc/self/fd, not shared), reads the file's
 * header and META chunk, then seeks to begin; it ends with CAP_DONE at
 * end. Close it with cap_reader_close; the caller keeps fd.
 * Errors: those of cap_reader_open_fd (a one-line detail when detail is
 * not NULL), CAP_E_IO when fd cannot be opened again or the seek fails,
 * CAP_E_MISUSE (fd < 0, out NULL, end before begin, fd not a regular
 * file). */
CAP_API cap_result cap_chunks_open(cap_reader **out, int fd, uint64_t begin,
                                   uint64_t end, char *detail,
                                   size_t detail_size);

#ifdef __cplusplus
}
#endif
#endif
