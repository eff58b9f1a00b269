/*
 * codec/decls.c - CLOCK, NAMES, THREADS, TRACKS, STATS and NAME_FLAGS
 * entries: see codec/decls.h.
 */
#include "codec/decls.h"

#include <math.h>

#include "capture/cap_limits.h"

uint64_t capc_list_count(capf_cur *b)
{
    return capf_cur_varint_max(b, (uint64_t)(b->end - b->p));
}

void capc_clock_put(capf_buf *t, uint64_t tick, uint64_t mono_ns)
{
    capf_buf_varint(t, tick);
    capf_buf_varint(t, mono_ns);
}

int capc_clock_get(capf_cur *b, uint64_t *tick, uint64_t *mono_ns)
{
    *tick = capf_cur_varint(b);
    *mono_ns = capf_cur_varint(b);
    return b->bad ? -1 : 0;
}

void capc_name_put(capf_buf *t, uint32_t id, const char *name,
                   const char *file, uint32_t line)
{
    capf_buf_varint(t, id);
    capf_buf_str(t, name);
    capf_buf_str(t, file);
    capf_buf_varint(t, line);
}

void capc_name_flags_put(capf_buf *t, uint32_t id, uint32_t flags)
{
    capf_buf_varint(t, id);
    capf_buf_varint(t, flags);
}

void capc_thread_put(capf_buf *t, uint32_t tid, const char *name)
{
    capf_buf_varint(t, tid);
    capf_buf_str(t, name);
}

void capc_track_put(capf_buf *t, uint32_t track, const char *name,
                    double period_ns)
{
    capf_buf_varint(t, track);
    capf_buf_str(t, name);
    capf_buf_f64(t, period_ns);
}

int capc_track_get(capf_cur *b, uint32_t *track, const uint8_t **name,
                   size_t *name_len, double *period_ns)
{
    *track = (uint32_t)capf_cur_varint_max(b, CAP_MAX_TRACKS - 1);
    capf_cur_str(b, name, name_len);
    double per = capf_cur_f64(b);
    *period_ns = per;
    return b->bad || !isfinite(per) || per <= 0 ? -1 : 0;
}

void capc_stat_put(capf_buf *t, uint64_t kind, uint64_t subject,
                   uint64_t count)
{
    capf_buf_varint(t, kind);
    capf_buf_varint(t, subject);
    capf_buf_varint(t, count);
}

int capc_stat_get(capf_cur *b, uint64_t *kind, uint64_t *subject,
                  uint64_t *count)
{
    *kind = capf_cur_varint(b);
    *subject = capf_cur_varint(b);
    *count = capf_cur_varint(b);
    return b->bad ? -1 : 0;
}
