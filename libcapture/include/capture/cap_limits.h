/*
 * cap_limits.h - the limits of the capture format, shared by every part
 * of libcapture that writes or reads a capture (the producer of capture.h,
 * the explicit writer of cap_writer.h, the reader of cap_reader.h) and by
 * programs that check their input against them. Types and macros only.
 */
#ifndef CAP_LIMITS_H
#define CAP_LIMITS_H

#define CAP_MAX_NAME_ID 0xffffffu /* ids fit 24 bits; keep them dense */
#define CAP_MAX_THREADS 65536u
#define CAP_MAX_TRACKS 256u
#define CAP_MAX_DEPTH 1024u        /* deepest scope nesting per thread */
#define CAP_MAX_GPU_SPANS 65536u   /* spans in one GPU frame batch */
#define CAP_MAX_NAME_LEN 4096u     /* bytes in a name, file or meta value */

#endif
