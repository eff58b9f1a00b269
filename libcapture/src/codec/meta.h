/*
 * codec/meta.h - the META chunk's sections: META_KV (0x10), the capture's
 * key/value pairs, and ORIGIN (0x11), its clock and start; their encoders
 * beside their decoders (format-spec/capture-format.md has the bytes).
 * Internal to libcapture.
 *
 *   META_KV := v n, n x (str key, str value)
 *   ORIGIN  := str clock_source, f64 period_ns, v origin_tick,
 *              v origin_mono_ns, zz origin_unix_ns
 */
#ifndef CAP_CODEC_META_H
#define CAP_CODEC_META_H

#include <stddef.h>
#include <stdint.h>

#include "capture/cap_result.h"
#include "format/format.h"

/* One META_KV pair into t, after v n (capf_buf_varint). */
void capc_meta_kv_put(capf_buf *t, const char *key, const char *value);

/* META_KV's count at b (a body of len bytes): CAP_OK or CAP_E_CORRUPT. */
cap_result capc_meta_kv_count(capf_cur *b, uint64_t len, uint64_t *n);

/* One META_KV pair at b: key and value (not NUL-terminated, pointing
 * into b's bytes) with their lengths. 0, or -1 when malformed. */
int capc_meta_kv_get(capf_cur *b, const uint8_t **key, size_t *key_len,
                     const uint8_t **value, size_t *value_len);

/* ORIGIN's body into t. */
void capc_origin_put(capf_buf *t, const char *clock_source,
                     double period_ns, uint64_t origin_tick,
                     uint64_t origin_mono_ns, int64_t origin_unix_ns);

/* ORIGIN's body at b: the clock source (not NUL-terminated, pointing
 * into b's bytes) and the rest, set whatever the result. CAP_OK, or
 * CAP_E_CORRUPT when malformed or the period is not finite and above 0. */
cap_result capc_origin_get(capf_cur *b, const uint8_t **clock_source,
                           size_t *clock_source_len, double *period_ns,
                           uint64_t *origin_tick, uint64_t *origin_mono_ns,
                           int64_t *origin_unix_ns);

#endif
