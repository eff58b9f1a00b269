/*
 * cap_record.h - the 16-byte event record of a recording thread's buffer.
 *
 * Internal (cap__ names), public only because capture.h's inline hot path
 * stores these records. The layout is owned by the writer side: its bulk
 * path (src/writer/writer_records.h) encodes ranges of them into blocks,
 * and the producer (capture.h, src/producer/) includes this header to fill
 * them. Not a file format: records never reach the disk as such.
 */
#ifndef CAP_RECORD_H
#define CAP_RECORD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cap__rec {
    uint64_t tick;
    uint32_t word; /* name id (30 bits) | kind << 30 */
    uint32_t aux;
} cap__rec;

#define CAP__KIND_BEGIN 0u
#define CAP__KIND_END 1u
#define CAP__KIND_SHIFT 30

#ifdef __cplusplus
}
#endif
#endif
