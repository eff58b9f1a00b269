/*
 * range.h - a reader limited to a run of chunks (internal to libcapture:
 * chunks.c opens its chunk readers with it).
 */
#ifndef CAP_READER_RANGE_H
#define CAP_READER_RANGE_H

#include <stdint.h>

#include "capture/cap_reader.h"

/* Make r, a reader of a regular file just opened (no event read yet),
 * read the chunks that start in [begin, end) and nothing else: it seeks to
 * begin (a chunk header's offset) and returns CAP_DONE, not
 * CAP_E_TRUNCATED, once the next chunk would start at or past end (end 0:
 * read on to the end of the file). The file's header and META chunk were
 * read by the open, so names, periods and metadata are as for a whole
 * read; declarations made in chunks before begin are not known.
 * Errors: CAP_E_MISUSE (r NULL, a stream, events already read, end before
 * begin, begin before the META chunk's end or past the file), CAP_E_IO
 * (the seek failed; cap_reader_detail says why). */
cap_result cap__reader_range(cap_reader *r, uint64_t begin, uint64_t end);

#endif
