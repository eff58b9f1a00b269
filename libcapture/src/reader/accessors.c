/*
 * accessors.c - the reader's public getters and setters: names,
 * threads, tracks, META, clocks, ancestors, filter, stats, offsets.
 */
#include "capture/cap_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader_int.h"

/* ---- accessors --------------------------------------------------------- */

const char *cap_reader_detail(const cap_reader *r)
{
    return r ? r->detail : "";
}

const char *cap_reader_name(const cap_reader *r, uint32_t id)
{
    const rd_name *nm = r ? name_peek(r, id) : NULL;
    return nm ? nm->name : NULL;
}

const char *cap_reader_name_file(const cap_reader *r, uint32_t id)
{
    const rd_name *nm = r ? name_peek(r, id) : NULL;
    return nm ? nm->file : NULL;
}

uint32_t cap_reader_name_flags(const cap_reader *r, uint32_t id)
{
    const rd_name *nm = r ? name_peek(r, id) : NULL;
    return nm ? nm->flags : 0;
}

uint32_t cap_reader_name_line(const cap_reader *r, uint32_t id)
{
    const rd_name *nm = r ? name_peek(r, id) : NULL;
    return nm ? nm->line : 0;
}

uint32_t cap_reader_max_name_id(const cap_reader *r)
{
    return r ? r->max_id : 0;
}

const char *cap_reader_thread_name(const cap_reader *r, uint32_t tid)
{
    if (!r || tid >= r->threads_cap)
        return NULL;
    return r->threads[tid];
}

const char *cap_reader_track_name(const cap_reader *r, uint32_t track)
{
    if (!r || track >= CAP_MAX_TRACKS || !r->tracks[track].declared)
        return NULL;
    return r->tracks[track].name;
}

size_t cap_reader_meta_count(const cap_reader *r)
{
    return r ? r->meta_n : 0;
}

const char *cap_reader_meta_key(const cap_reader *r, size_t i)
{
    return r && i < r->meta_n ? r->meta_k[i] : NULL;
}

const char *cap_reader_meta_value(const cap_reader *r, size_t i)
{
    return r && i < r->meta_n ? r->meta_v[i] : NULL;
}

const char *cap_reader_meta_get(const cap_reader *r, const char *key)
{
    if (!r || !key)
        return NULL;
    for (size_t i = 0; i < r->meta_n; i++)
        if (strcmp(r->meta_k[i], key) == 0)
            return r->meta_v[i];
    return NULL;
}

void cap_reader_version(const cap_reader *r, unsigned *major, unsigned *minor)
{
    if (major)
        *major = r ? r->major : 0;
    if (minor)
        *minor = r ? r->minor : 0;
}

int64_t cap_reader_origin_unix_ns(const cap_reader *r)
{
    return r ? r->origin_unix : 0;
}

const char *cap_reader_clock_source(const cap_reader *r)
{
    return r && r->clock_source ? r->clock_source : "";
}

cap_result cap_reader_set_ticks(cap_reader *r, int on)
{
    if (!r || r->sec.end || r->finished)
        return CAP_E_MISUSE;
    r->ticks = on != 0;
    cap__block_clock_reset(r);
    return CAP_OK;
}

cap_result cap_reader_stream_records(cap_reader *r, int on)
{
    if (!r)
        return CAP_E_MISUSE;
    r->nt_recs = RD_HAVE_STREAM && on;
    return CAP_OK;
}

void cap_reader_clock(const cap_reader *r, double *period_ns,
                      uint64_t *origin_tick, uint64_t *origin_mono_ns)
{
    if (period_ns)
        *period_ns = r ? r->meta_period : 0;
    if (origin_tick)
        *origin_tick = r ? r->origin_tick : 0;
    if (origin_mono_ns)
        *origin_mono_ns = r ? r->origin_mono : 0;
}

int cap_reader_block_clock(const cap_reader *r, uint64_t *tick,
                           uint64_t *mono_ns)
{
    int have = r && r->clk_have;
    if (tick)
        *tick = have ? r->clk_tick : 0;
    if (mono_ns)
        *mono_ns = have ? r->clk_mono : 0;
    return have;
}

size_t cap_reader_scope_ancestors(const cap_reader *r, int64_t *begin,
                                  int64_t *children, size_t max)
{
    if (!r)
        return 0;
    for (size_t i = 0; i < r->anc_n && i < max; i++) {
        if (begin)
            begin[i] = r->stk_begin_ns[i];
        if (children) {
            uint64_t ch = r->stk_children[i];
            children[i] = cap_ticks_dur_ns(ch, r->period);
        }
    }
    return r->anc_n;
}

int cap_reader_gpu_span_ticks(const cap_reader *r, uint64_t *begin_tick,
                              uint64_t *end_tick)
{
    const rd_span *s = r && r->last_gpu && r->span_pos
                           ? &r->spans[r->span_pos - 1]
                           : NULL;
    int have = s && s->measured;
    if (begin_tick)
        *begin_tick = have ? s->begin : 0;
    if (end_tick)
        *end_tick = have ? s->begin + s->dur : 0;
    return have;
}

int cap_reader_track_calibration(const cap_reader *r, uint32_t track,
                                 uint64_t *gpu_tick, uint64_t *cpu_tick)
{
    int have = r && track < CAP_MAX_TRACKS && r->tracks[track].calibrated;
    if (gpu_tick)
        *gpu_tick = have ? r->tracks[track].cal_gpu : 0;
    if (cpu_tick)
        *cpu_tick = have ? r->tracks[track].cal_cpu : 0;
    return have;
}

uint64_t cap_reader_track_calibration_deviation(const cap_reader *r,
                                                uint32_t track)
{
    return r && track < CAP_MAX_TRACKS && r->tracks[track].calibrated
               ? r->tracks[track].cal_dev
               : 0;
}

void cap_reader_set_filter(cap_reader *r, unsigned mask)
{
    if (r)
        r->filter = mask;
}

const cap_reader_stats *cap_reader_get_stats(const cap_reader *r)
{
    return r ? &r->st : NULL;
}

uint64_t cap_reader_offset(const cap_reader *r)
{
    return r ? r->off : 0;
}

uint64_t cap_reader_file_size(const cap_reader *r)
{
    return r ? r->size : 0;
}
