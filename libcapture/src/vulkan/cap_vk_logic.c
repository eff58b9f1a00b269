/*
 * cap_vk_logic.c - the Vulkan ring's pure logic (see cap_vk_logic.h).
 */
#include "cap_vk_logic.h"

#include <math.h>

uint64_t cap__vk_mask(uint32_t valid_bits)
{
    if (valid_bits == 0)
        return 0;
    if (valid_bits >= 64)
        return UINT64_MAX;
    return (UINT64_C(1) << valid_bits) - 1;
}

int cap__vk_is_inert(uint32_t valid_bits, double period_ns)
{
    return valid_bits == 0 || !isfinite(period_ns) || !(period_ns > 0.0);
}

uint64_t cap__vk_unwrap(uint64_t masked, uint64_t ref, uint32_t valid_bits)
{
    if (valid_bits == 0 || valid_bits >= 64)
        return masked;
    uint64_t mask = cap__vk_mask(valid_bits);
    uint64_t half = UINT64_C(1) << (valid_bits - 1);
    masked &= mask;
    /* Forward distance from ref to masked, modulo the range. */
    uint64_t fwd = (masked - ref) & mask;
    if (fwd <= half)
        return ref + fwd;
    return ref - (((ref - masked) & mask));
}

uint64_t cap__vk_extend_first(uint64_t masked, uint32_t valid_bits)
{
    if (valid_bits == 0 || valid_bits > 60)
        return masked;
    return (masked & cap__vk_mask(valid_bits)) + (UINT64_C(4) << valid_bits);
}

uint64_t cap__vk_unwrap_after(uint64_t masked, uint64_t low,
                              uint32_t valid_bits)
{
    if (valid_bits == 0 || valid_bits >= 64)
        return masked;
    uint64_t mask = cap__vk_mask(valid_bits);
    return low + ((masked - low) & mask);
}

uint64_t cap__vk_frame_low(uint64_t ref_tick, uint64_t ref_mono_ns,
                           uint64_t begin_mono_ns, double period_ns,
                           uint64_t deviation_ns)
{
    uint64_t at = cap__vk_predict_tick(ref_tick, ref_mono_ns, begin_mono_ns,
                                       period_ns);
    double span = begin_mono_ns >= ref_mono_ns
                      ? (double)(begin_mono_ns - ref_mono_ns)
                      : (double)(ref_mono_ns - begin_mono_ns);
    double margin = (double)deviation_ns + CAP__VK_DRIFT_NS +
                    span * CAP__VK_DRIFT_PPM * 1e-6;
    return at - (uint64_t)llround(margin / period_ns);
}

uint64_t cap__vk_predict_tick(uint64_t cal_tick, uint64_t cal_mono_ns,
                              uint64_t mono_ns, double period_ns)
{
    if (mono_ns >= cal_mono_ns)
        return cal_tick +
               (uint64_t)llround((double)(mono_ns - cal_mono_ns) / period_ns);
    return cal_tick -
           (uint64_t)llround((double)(cal_mono_ns - mono_ns) / period_ns);
}

cap__vk_pair cap__vk_check_pair(uint64_t begin, uint64_t begin_avail,
                                uint64_t end, uint64_t end_avail,
                                uint32_t valid_bits, double period_ns,
                                uint64_t *ticks)
{
    if (ticks)
        *ticks = 0;
    if (!begin_avail || !end_avail)
        return CAP__VK_PAIR_UNWRITTEN;
    uint64_t mask = cap__vk_mask(valid_bits);
    uint64_t d = ((end & mask) - (begin & mask)) & mask;
    if (d == 0 || (double)d * period_ns > CAP__VK_MAX_SPAN_NS)
        return CAP__VK_PAIR_INVALID;
    if (ticks)
        *ticks = d;
    return CAP__VK_PAIR_OK;
}

size_t cap__vk_build_spans(const cap__vk_scope_rec *scopes, size_t n,
                           const uint64_t *results, uint32_t valid_bits,
                           double period_ns, uint64_t low, uint64_t *latest,
                           int32_t *map, cap_gpu_span *out,
                           cap__vk_build_stats *stats)
{
    cap__vk_build_stats st = {0, 0, 0};
    uint64_t mask = cap__vk_mask(valid_bits);
    uint64_t last = *latest;
    int any = 0;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        const cap__vk_scope_rec *s = &scopes[i];
        const uint64_t *b = &results[4 * i];     /* begin: value, avail */
        const uint64_t *e = &results[4 * i + 2]; /* end: value, avail */
        /* Nearest kept ancestor: parents precede children, so map[] of
         * every ancestor is already known. */
        int32_t p = s->parent;
        if (p < 0 || (size_t)p >= i)
            p = -1;
        while (p >= 0 && map[p] < 0) {
            int32_t q = scopes[p].parent;
            p = q >= 0 && q < p ? q : -1;
        }
        uint64_t d = 0;
        cap__vk_pair v = s->ended
                             ? cap__vk_check_pair(b[0], b[1], e[0], e[1],
                                                  valid_bits, period_ns, &d)
                             : CAP__VK_PAIR_UNWRITTEN;
        if (v == CAP__VK_PAIR_INVALID) {
            /* A dropped scope passes its place to its kept ancestor. */
            map[i] = -1;
            st.invalid++;
            continue;
        }
        cap_gpu_span *o = &out[kept];
        o->name = s->name;
        o->parent = p >= 0 ? map[p] : -1;
        o->measured = v == CAP__VK_PAIR_OK;
        o->begin_tick = 0;
        o->end_tick = 0;
        if (o->measured) {
            o->begin_tick = cap__vk_unwrap_after(b[0] & mask, low, valid_bits);
            o->end_tick = o->begin_tick + d;
            if (!any || o->end_tick > last)
                last = o->end_tick;
            any = 1;
            st.measured++;
        } else {
            st.unmeasured++;
        }
        map[i] = (int32_t)kept++;
    }
    if (any)
        *latest = last;
    if (stats)
        *stats = st;
    return kept;
}

int cap__vk_best_sample(const uint64_t *deviations, size_t count)
{
    if (count == 0)
        return -1;
    size_t best = 0;
    for (size_t i = 1; i < count; i++)
        if (deviations[i] < deviations[best])
            best = i;
    return (int)best;
}

uint64_t cap__vk_recalibration_ns(uint32_t valid_bits, double period_ns)
{
    const uint64_t second = UINT64_C(1000000000);
    if (cap__vk_is_inert(valid_bits, period_ns) || valid_bits >= 64)
        return second;
    double wrap_ns = ldexp(period_ns, (int)valid_bits);
    double quarter = wrap_ns / 4.0;
    if (quarter >= (double)second)
        return second;
    if (quarter < 1.0)
        return 1;
    return (uint64_t)quarter;
}
