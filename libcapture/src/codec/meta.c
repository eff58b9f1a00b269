/*
 * codec/meta.c - META_KV (0x10) and ORIGIN (0x11): see codec/meta.h.
 */
#include "codec/meta.h"

#include <math.h>

void capc_meta_kv_put(capf_buf *t, const char *key, const char *value)
{
    capf_buf_str(t, key);
    capf_buf_str(t, value);
}

cap_result capc_meta_kv_count(capf_cur *b, uint64_t len, uint64_t *n)
{
    *n = capf_cur_varint_max(b, len);
    return b->bad ? CAP_E_CORRUPT : CAP_OK;
}

int capc_meta_kv_get(capf_cur *b, const uint8_t **key, size_t *key_len,
                     const uint8_t **value, size_t *value_len)
{
    capf_cur_str(b, key, key_len);
    capf_cur_str(b, value, value_len);
    return b->bad ? -1 : 0;
}

void capc_origin_put(capf_buf *t, const char *clock_source,
                     double period_ns, uint64_t origin_tick,
                     uint64_t origin_mono_ns, int64_t origin_unix_ns)
{
    capf_buf_str(t, clock_source);
    capf_buf_f64(t, period_ns);
    capf_buf_varint(t, origin_tick);
    capf_buf_varint(t, origin_mono_ns);
    capf_buf_varint(t, capf_zigzag(origin_unix_ns));
}

cap_result capc_origin_get(capf_cur *b, const uint8_t **clock_source,
                           size_t *clock_source_len, double *period_ns,
                           uint64_t *origin_tick, uint64_t *origin_mono_ns,
                           int64_t *origin_unix_ns)
{
    capf_cur_str(b, clock_source, clock_source_len);
    double per = capf_cur_f64(b);
    *origin_tick = capf_cur_varint(b);
    *origin_mono_ns = capf_cur_varint(b);
    *origin_unix_ns = capf_unzigzag(capf_cur_varint(b));
    *period_ns = per;
    if (b->bad || !isfinite(per) || per <= 0)
        return CAP_E_CORRUPT;
    return CAP_OK;
}
