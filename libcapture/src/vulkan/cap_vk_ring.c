/*
 * cap_vk_ring.c - a ring of Vulkan timestamp-query slots feeding the
 * capture's GPU tracks (see include/capture/cap_vulkan.h for the model).
 *
 * Slot life: FREE -> RECORDING (frame_begin took it) -> PENDING (frame_end
 * submitted its fence) -> harvested in a later frame_begin once the fence
 * has signalled -> FREE. A slot is only ever read after its fence, which
 * signals after every command submitted before it, so a query without
 * availability at harvest was never written (lesson 13, 14).
 */
#include "capture/cap_vulkan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/capture.h"

#include "cap_vk_logic.h"

/* Calibration samples taken each time; the one of smallest deviation is
 * kept. */
#define CAL_SAMPLES 5
/* How long cap_vk_ring_flush waits for slots still in flight. */
#define DESTROY_WAIT_NS UINT64_C(5000000000)

/* VK_KHR_calibrated_timestamps reuses the EXT's structures and enums under
 * new names, with the same values and signatures; older headers only have
 * the EXT spelling, so the ring uses that for both. */
#define EXT_NAME_KHR "VK_KHR_calibrated_timestamps"
#define EXT_NAME_EXT "VK_EXT_calibrated_timestamps"

enum slot_state { SLOT_FREE = 0, SLOT_RECORDING, SLOT_PENDING, SLOT_LOST };

typedef struct vk_slot {
    VkQueryPool pool;
    VkFence fence;
    enum slot_state state;
    uint64_t cpu_frame;
    uint64_t begin_mono; /* CLOCK_MONOTONIC at frame_begin */
    uint64_t seq;        /* submission order of PENDING slots */
    uint32_t count;
    int reset_recorded;
    cap__vk_scope_rec *scopes;
} vk_slot;

typedef struct vk_fns {
    PFN_vkDestroyQueryPool destroy_query_pool;
    PFN_vkGetQueryPoolResults get_query_pool_results;
    PFN_vkCmdResetQueryPool cmd_reset_query_pool;
    PFN_vkCmdWriteTimestamp cmd_write_timestamp;
    PFN_vkDestroyFence destroy_fence;
    PFN_vkResetFences reset_fences;
    PFN_vkGetFenceStatus get_fence_status;
    PFN_vkWaitForFences wait_for_fences;
    PFN_vkQueueSubmit queue_submit;
    PFN_vkGetCalibratedTimestampsEXT get_calibrated_timestamps;
    PFN_vkResetQueryPool reset_query_pool; /* host reset, when enabled */
} vk_fns;

struct cap_vk_ring {
    vk_fns fn;
    VkDevice device;
    VkQueue queue;
    const VkAllocationCallbacks *allocator;
    int has_objects; /* pools and fences exist */
    int active;      /* timing: has_objects and the device not lost */
    uint32_t valid_bits;
    double period_ns;
    uint32_t track;
    uint32_t max_scopes;
    vk_slot slots[CAP_VK_RING_SLOTS];
    int current;    /* RECORDING slot, or -1 */
    int frame_open; /* a frame was begun (timed or not) and not ended */
    uint64_t seq;
    uint64_t ref;      /* latest 64-bit tick read (anchor without
                          calibration) */
    uint64_t ref_mono; /* CLOCK_MONOTONIC when it was read */
    int have_ref;
    int calibrated;
    uint64_t recal_ns;
    uint64_t last_cal_mono; /* when calibration was last attempted */
    int have_cal;           /* the latest sample kept: */
    uint64_t cal_tick;      /* its device tick, extended to 64 bits */
    uint64_t cal_mono;      /* its CLOCK_MONOTONIC ns */
    uint64_t *results; /* 2 * max_scopes queries x (value, availability) */
    int32_t *map;
    cap_gpu_span *spans;
    cap_vk_ring_info info;
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

static int has_extension(PFN_vkGetInstanceProcAddr gipa, VkInstance instance,
                         VkPhysicalDevice pd, const char *name)
{
    PFN_vkEnumerateDeviceExtensionProperties enumerate =
        (PFN_vkEnumerateDeviceExtensionProperties)gipa(
            instance, "vkEnumerateDeviceExtensionProperties");
    if (!enumerate)
        return 0;
    uint32_t n = 0;
    if (enumerate(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0)
        return 0;
    VkExtensionProperties *p = calloc(n, sizeof *p);
    if (!p)
        return 0;
    int found = 0;
    VkResult r = enumerate(pd, NULL, &n, p);
    if (r == VK_SUCCESS || r == VK_INCOMPLETE)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(p[i].extensionName, name) == 0;
    free(p);
    return found;
}

const char *cap_vk_calibration_extension(
    PFN_vkGetInstanceProcAddr get_instance_proc_addr, VkInstance instance,
    VkPhysicalDevice physical_device, cap_vk_calibration *which)
{
    if (which)
        *which = CAP_VK_CALIBRATION_NONE;
    if (!get_instance_proc_addr || !instance || !physical_device)
        return NULL;
    if (has_extension(get_instance_proc_addr, instance, physical_device,
                      EXT_NAME_KHR)) {
        if (which)
            *which = CAP_VK_CALIBRATION_KHR;
        return EXT_NAME_KHR;
    }
    if (has_extension(get_instance_proc_addr, instance, physical_device,
                      EXT_NAME_EXT)) {
        if (which)
            *which = CAP_VK_CALIBRATION_EXT;
        return EXT_NAME_EXT;
    }
    return NULL;
}

/* 1 when the physical device calibrates both the device and the
 * CLOCK_MONOTONIC domains. */
static int domains_ok(PFN_vkGetInstanceProcAddr gipa, VkInstance instance,
                      VkPhysicalDevice pd, cap_vk_calibration which)
{
    PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT get =
        (PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)gipa(
            instance, which == CAP_VK_CALIBRATION_KHR
                          ? "vkGetPhysicalDeviceCalibrateableTimeDomainsKHR"
                          : "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT");
    if (!get)
        return 0;
    uint32_t n = 0;
    if (get(pd, &n, NULL) != VK_SUCCESS || n == 0)
        return 0;
    VkTimeDomainEXT *d = calloc(n, sizeof *d);
    if (!d)
        return 0;
    int device = 0, mono = 0;
    VkResult r = get(pd, &n, d);
    if (r == VK_SUCCESS || r == VK_INCOMPLETE)
        for (uint32_t i = 0; i < n; i++) {
            device |= d[i] == VK_TIME_DOMAIN_DEVICE_EXT;
            mono |= d[i] == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
        }
    free(d);
    return device && mono;
}

/* Take CAL_SAMPLES calibrated pairs, keep the one of smallest deviation,
 * extend its device tick to 64 bits and record it. */
static void calibrate(cap_vk_ring *ring)
{
    const VkCalibratedTimestampInfoEXT info[2] = {
        {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, NULL,
         VK_TIME_DOMAIN_DEVICE_EXT},
        {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, NULL,
         VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT},
    };
    uint64_t gpu[CAL_SAMPLES], cpu[CAL_SAMPLES], dev[CAL_SAMPLES];
    size_t n = 0;
    for (int k = 0; k < CAL_SAMPLES; k++) {
        uint64_t ts[2] = {0, 0}, d = 0;
        if (ring->fn.get_calibrated_timestamps(ring->device, 2, info, ts,
                                               &d) != VK_SUCCESS)
            continue;
        gpu[n] = ts[0];
        cpu[n] = ts[1];
        dev[n] = d;
        n++;
    }
    ring->last_cal_mono = mono_ns();
    int best = cap__vk_best_sample(dev, n);
    if (best < 0)
        return;
    /* Extend the masked tick next to where the previous sample says the
     * counter is now (or the latest span without one). */
    uint64_t masked = gpu[best] & cap__vk_mask(ring->valid_bits);
    uint64_t tick;
    if (ring->have_cal)
        tick = cap__vk_unwrap(masked,
                              cap__vk_predict_tick(ring->cal_tick,
                                                   ring->cal_mono, cpu[best],
                                                   ring->period_ns),
                              ring->valid_bits);
    else if (ring->have_ref)
        tick = cap__vk_unwrap(masked, ring->ref, ring->valid_bits);
    else
        tick = cap__vk_extend_first(masked, ring->valid_bits);
    ring->have_cal = 1;
    ring->cal_tick = tick;
    ring->cal_mono = cpu[best];
    cap_gpu_calibrate(ring->track, tick, cpu[best], dev[best]);
    cap_vk_ring_info *i = &ring->info;
    if (i->calibrations == 0 || dev[best] < i->min_deviation_ns)
        i->min_deviation_ns = dev[best];
    if (i->calibrations == 0 || dev[best] > i->max_deviation_ns)
        i->max_deviation_ns = dev[best];
    i->last_deviation_ns = dev[best];
    i->calibrations++;
}

static void count_untimed(cap_vk_ring *ring, uint64_t frames)
{
    ring->info.frames_untimed += frames;
    cap_gpu_untimed(ring->track, frames, 0);
}

static void count_invalid(cap_vk_ring *ring, uint64_t spans)
{
    ring->info.spans_invalid += spans;
    cap_gpu_untimed(ring->track, 0, spans);
}

/* Turn the finished slot's results into one batch of spans. */
static void record_slot(cap_vk_ring *ring, vk_slot *s)
{
    uint32_t queries = 2 * s->count;
    VkResult r = ring->fn.get_query_pool_results(
        ring->device, s->pool, 0, queries,
        (size_t)queries * 2 * sizeof(uint64_t), ring->results,
        2 * sizeof(uint64_t),
        VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
    if (r != VK_SUCCESS && r != VK_NOT_READY) {
        count_untimed(ring, 1);
        return;
    }
    /* Extend the frame's masked ticks forward from a lower bound: the tick
     * predicted for the moment the frame began, from the calibration, else
     * from the latest tick read and when it was read, else the first
     * written begin (the scopes' begins come in recording order). */
    uint64_t low = 0;
    if (ring->have_cal) {
        low = cap__vk_frame_low(ring->cal_tick, ring->cal_mono, s->begin_mono,
                                ring->period_ns, ring->info.max_deviation_ns);
    } else if (ring->have_ref) {
        low = cap__vk_frame_low(ring->ref, ring->ref_mono, s->begin_mono,
                                ring->period_ns, 0);
    } else {
        for (uint32_t i = 0; i < s->count; i++)
            if (ring->results[4 * i + 1]) {
                low = cap__vk_extend_first(ring->results[4 * i],
                                           ring->valid_bits);
                break;
            }
    }
    uint64_t latest = ring->ref;
    cap__vk_build_stats st;
    size_t n = cap__vk_build_spans(s->scopes, s->count, ring->results,
                                   ring->valid_bits, ring->period_ns, low,
                                   &latest, ring->map, ring->spans, &st);
    if (st.measured) {
        ring->ref = latest;
        ring->ref_mono = mono_ns();
        ring->have_ref = 1;
    }
    if (n)
        cap_gpu_frame(ring->track, s->cpu_frame, ring->spans, n);
    if (st.invalid)
        count_invalid(ring, st.invalid);
    ring->info.spans += st.measured;
    ring->info.spans_unmeasured += st.unmeasured;
    ring->info.frames_timed++;
}

/* The device is gone: stop timing, keep the objects for destroy. */
static void stop(cap_vk_ring *ring)
{
    ring->active = 0;
    for (unsigned i = 0; i < CAP_VK_RING_SLOTS; i++) {
        vk_slot *s = &ring->slots[i];
        if (s->state == SLOT_PENDING || s->state == SLOT_RECORDING) {
            s->state = SLOT_LOST;
            count_untimed(ring, 1);
        }
    }
    ring->current = -1;
}

/* Record every PENDING slot whose fence has signalled, oldest first,
 * stopping at the first still in flight so batches stay in order. */
static void harvest(cap_vk_ring *ring)
{
    for (;;) {
        vk_slot *oldest = NULL;
        for (unsigned i = 0; i < CAP_VK_RING_SLOTS; i++) {
            vk_slot *s = &ring->slots[i];
            if (s->state == SLOT_PENDING && (!oldest || s->seq < oldest->seq))
                oldest = s;
        }
        if (!oldest)
            return;
        VkResult r = ring->fn.get_fence_status(ring->device, oldest->fence);
        if (r == VK_NOT_READY)
            return;
        if (r != VK_SUCCESS) {
            stop(ring);
            return;
        }
        record_slot(ring, oldest);
        if (ring->fn.reset_query_pool)
            ring->fn.reset_query_pool(ring->device, oldest->pool, 0,
                                      2 * ring->max_scopes);
        oldest->state = SLOT_FREE;
    }
}

static void destroy_objects(cap_vk_ring *ring)
{
    for (unsigned i = 0; i < CAP_VK_RING_SLOTS; i++) {
        vk_slot *s = &ring->slots[i];
        if (s->pool && ring->fn.destroy_query_pool)
            ring->fn.destroy_query_pool(ring->device, s->pool,
                                        ring->allocator);
        if (s->fence && ring->fn.destroy_fence)
            ring->fn.destroy_fence(ring->device, s->fence, ring->allocator);
        free(s->scopes);
    }
    free(ring->results);
    free(ring->map);
    free(ring->spans);
    free(ring);
}

#define LOAD_DEV(field, name)                                                  \
    do {                                                                       \
        ring->fn.field = (PFN_##name)gdpa(opt->device, #name);                 \
        if (!ring->fn.field)                                                   \
            goto misuse;                                                       \
    } while (0)

cap_result cap_vk_ring_create(cap_vk_ring **out, const cap_vk_ring_options *opt)
{
    if (!out)
        return CAP_E_MISUSE;
    *out = NULL;
    if (!opt || !opt->get_instance_proc_addr || !opt->instance ||
        !opt->physical_device || !opt->device || !opt->queue)
        return CAP_E_MISUSE;
    if (opt->max_scopes > CAP_VK_MAX_SCOPES ||
        ((opt->flags & CAP_VK_PRETEND_VALID_BITS) &&
         opt->pretend_valid_bits > 64))
        return CAP_E_MISUSE;
    PFN_vkGetInstanceProcAddr gipa = opt->get_instance_proc_addr;
    PFN_vkGetPhysicalDeviceProperties get_props =
        (PFN_vkGetPhysicalDeviceProperties)gipa(
            opt->instance, "vkGetPhysicalDeviceProperties");
    PFN_vkGetPhysicalDeviceQueueFamilyProperties get_families =
        (PFN_vkGetPhysicalDeviceQueueFamilyProperties)gipa(
            opt->instance, "vkGetPhysicalDeviceQueueFamilyProperties");
    PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)gipa(
        opt->instance, "vkGetDeviceProcAddr");
    if (!get_props || !get_families || !gdpa)
        return CAP_E_MISUSE;

    VkPhysicalDeviceProperties props;
    get_props(opt->physical_device, &props);
    uint32_t nfam = 0;
    get_families(opt->physical_device, &nfam, NULL);
    if (opt->queue_family_index >= nfam)
        return CAP_E_MISUSE;
    VkQueueFamilyProperties *fam = calloc(nfam, sizeof *fam);
    if (!fam)
        return CAP_E_NOMEM;
    get_families(opt->physical_device, &nfam, fam);
    uint32_t valid_bits = fam[opt->queue_family_index].timestampValidBits;
    free(fam);
    double period = (double)props.limits.timestampPeriod;
    if (opt->flags & CAP_VK_PRETEND_VALID_BITS)
        valid_bits = opt->pretend_valid_bits;
    if (opt->flags & CAP_VK_PRETEND_PERIOD)
        period = opt->pretend_period_ns;

    cap_vk_ring *ring = calloc(1, sizeof *ring);
    if (!ring)
        return CAP_E_NOMEM;
    ring->device = opt->device;
    ring->queue = opt->queue;
    ring->allocator = opt->allocator;
    ring->valid_bits = valid_bits;
    ring->period_ns = period;
    ring->track = UINT32_MAX;
    ring->current = -1;
    ring->info.valid_bits = valid_bits;
    ring->info.period_ns = period;
    ring->info.track = UINT32_MAX;
    ring->info.inert = 1;
    if (cap__vk_is_inert(valid_bits, period)) {
        /* Nothing to create, nothing to do per frame. */
        *out = ring;
        return CAP_OK;
    }

    ring->max_scopes = opt->max_scopes ? opt->max_scopes : CAP_VK_DEFAULT_SCOPES;
    LOAD_DEV(destroy_query_pool, vkDestroyQueryPool);
    LOAD_DEV(get_query_pool_results, vkGetQueryPoolResults);
    LOAD_DEV(cmd_reset_query_pool, vkCmdResetQueryPool);
    LOAD_DEV(cmd_write_timestamp, vkCmdWriteTimestamp);
    LOAD_DEV(destroy_fence, vkDestroyFence);
    LOAD_DEV(reset_fences, vkResetFences);
    LOAD_DEV(get_fence_status, vkGetFenceStatus);
    LOAD_DEV(wait_for_fences, vkWaitForFences);
    LOAD_DEV(queue_submit, vkQueueSubmit);
    PFN_vkCreateQueryPool create_pool =
        (PFN_vkCreateQueryPool)gdpa(opt->device, "vkCreateQueryPool");
    PFN_vkCreateFence create_fence =
        (PFN_vkCreateFence)gdpa(opt->device, "vkCreateFence");
    if (!create_pool || !create_fence)
        goto misuse;
    if (opt->flags & CAP_VK_HOST_QUERY_RESET) {
        ring->fn.reset_query_pool =
            (PFN_vkResetQueryPool)gdpa(opt->device, "vkResetQueryPool");
        if (!ring->fn.reset_query_pool)
            ring->fn.reset_query_pool = (PFN_vkResetQueryPool)gdpa(
                opt->device, "vkResetQueryPoolEXT");
        if (!ring->fn.reset_query_pool)
            goto misuse;
    }

    if (opt->calibration != CAP_VK_CALIBRATION_NONE &&
        domains_ok(gipa, opt->instance, opt->physical_device,
                   opt->calibration))
        ring->fn.get_calibrated_timestamps =
            (PFN_vkGetCalibratedTimestampsEXT)gdpa(
                opt->device, opt->calibration == CAP_VK_CALIBRATION_KHR
                                 ? "vkGetCalibratedTimestampsKHR"
                                 : "vkGetCalibratedTimestampsEXT");

    size_t m = ring->max_scopes;
    ring->results = calloc(4 * m, sizeof *ring->results);
    ring->map = calloc(m, sizeof *ring->map);
    ring->spans = calloc(m, sizeof *ring->spans);
    if (!ring->results || !ring->map || !ring->spans)
        goto nomem;
    const VkQueryPoolCreateInfo qpi = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
        .queryType = VK_QUERY_TYPE_TIMESTAMP,
        .queryCount = 2 * ring->max_scopes,
    };
    const VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    for (unsigned i = 0; i < CAP_VK_RING_SLOTS; i++) {
        vk_slot *s = &ring->slots[i];
        s->scopes = calloc(m, sizeof *s->scopes);
        if (!s->scopes)
            goto nomem;
        if (create_pool(opt->device, &qpi, opt->allocator, &s->pool) !=
            VK_SUCCESS) {
            s->pool = VK_NULL_HANDLE;
            goto nomem;
        }
        if (create_fence(opt->device, &fci, opt->allocator, &s->fence) !=
            VK_SUCCESS) {
            s->fence = VK_NULL_HANDLE;
            goto nomem;
        }
        if (ring->fn.reset_query_pool)
            ring->fn.reset_query_pool(opt->device, s->pool, 0,
                                      2 * ring->max_scopes);
    }

    char name[64];
    const char *track_name = opt->track_name;
    if (!track_name) {
        snprintf(name, sizeof name, "vulkan queue family %u",
                 opt->queue_family_index);
        track_name = name;
    }
    ring->track = cap_gpu_track(track_name, period);
    if (ring->track == UINT32_MAX)
        goto misuse;
    ring->has_objects = 1;
    ring->active = 1;
    ring->recal_ns = cap__vk_recalibration_ns(valid_bits, period);
    ring->calibrated = ring->fn.get_calibrated_timestamps != NULL;
    ring->info.inert = 0;
    ring->info.track = ring->track;
    ring->info.calibrated = ring->calibrated;
    if (ring->calibrated)
        calibrate(ring);
    *out = ring;
    return CAP_OK;

misuse:
    destroy_objects(ring);
    return CAP_E_MISUSE;
nomem:
    destroy_objects(ring);
    return CAP_E_NOMEM;
}

void cap_vk_ring_flush(cap_vk_ring *ring)
{
    if (!ring || !ring->active)
        return;
    if (ring->frame_open)
        cap_vk_ring_frame_end(ring);
    if (!ring->active)
        return;
    VkFence wait[CAP_VK_RING_SLOTS];
    uint32_t n = 0;
    for (unsigned i = 0; i < CAP_VK_RING_SLOTS; i++)
        if (ring->slots[i].state == SLOT_PENDING)
            wait[n++] = ring->slots[i].fence;
    if (n)
        (void)ring->fn.wait_for_fences(ring->device, n, wait, VK_TRUE,
                                       DESTROY_WAIT_NS);
    harvest(ring);
    if (!ring->active)
        return;
    /* Still in flight after the wait: given up, so destroy may free. */
    for (unsigned i = 0; i < CAP_VK_RING_SLOTS; i++)
        if (ring->slots[i].state == SLOT_PENDING) {
            ring->slots[i].state = SLOT_LOST;
            count_untimed(ring, 1);
        }
}

void cap_vk_ring_destroy(cap_vk_ring *ring)
{
    if (!ring)
        return;
    cap_vk_ring_flush(ring);
    destroy_objects(ring);
}

void cap_vk_ring_frame_begin(cap_vk_ring *ring)
{
    if (!ring || !ring->active)
        return;
    if (ring->frame_open)
        cap_vk_ring_frame_end(ring);
    if (!ring->active)
        return;
    harvest(ring);
    if (!ring->active)
        return;
    if (ring->calibrated && mono_ns() - ring->last_cal_mono >= ring->recal_ns)
        calibrate(ring);
    ring->frame_open = 1;
    for (unsigned i = 0; i < CAP_VK_RING_SLOTS; i++) {
        vk_slot *s = &ring->slots[i];
        if (s->state != SLOT_FREE)
            continue;
        uint64_t f = cap_frame_current();
        s->state = SLOT_RECORDING;
        s->cpu_frame = f == UINT64_MAX ? 0 : f;
        s->begin_mono = mono_ns();
        s->count = 0;
        s->reset_recorded = 0;
        ring->current = (int)i;
        return;
    }
    /* Every slot in flight: this frame goes untimed, never waits. */
    count_untimed(ring, 1);
}

cap_vk_scope cap_vk_ring_scope_begin(cap_vk_ring *ring, VkCommandBuffer cmd,
                                     uint32_t name, cap_vk_scope parent)
{
    if (!ring || !ring->active || ring->current < 0 || !cmd || name == 0)
        return CAP_VK_NO_SCOPE;
    vk_slot *s = &ring->slots[ring->current];
    if (s->count >= ring->max_scopes) {
        count_invalid(ring, 1);
        return CAP_VK_NO_SCOPE;
    }
    if (!s->reset_recorded && !ring->fn.reset_query_pool) {
        ring->fn.cmd_reset_query_pool(cmd, s->pool, 0, 2 * ring->max_scopes);
        s->reset_recorded = 1;
    }
    uint32_t i = s->count++;
    s->scopes[i].name = name;
    s->scopes[i].parent =
        parent >= 0 && (uint32_t)parent < i ? parent : CAP_VK_NO_SCOPE;
    s->scopes[i].ended = 0;
    ring->fn.cmd_write_timestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                                 s->pool, 2 * i);
    return (cap_vk_scope)i;
}

void cap_vk_ring_scope_end(cap_vk_ring *ring, VkCommandBuffer cmd,
                           cap_vk_scope scope)
{
    if (!ring || !ring->active || ring->current < 0 || !cmd || scope < 0)
        return;
    vk_slot *s = &ring->slots[ring->current];
    if ((uint32_t)scope >= s->count || s->scopes[scope].ended)
        return;
    ring->fn.cmd_write_timestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                                 s->pool, 2 * (uint32_t)scope + 1);
    s->scopes[scope].ended = 1;
}

void cap_vk_ring_frame_end(cap_vk_ring *ring)
{
    if (!ring || !ring->active || !ring->frame_open)
        return;
    ring->frame_open = 0;
    if (ring->current < 0)
        return;
    vk_slot *s = &ring->slots[ring->current];
    ring->current = -1;
    if (s->count == 0) {
        /* Nothing recorded: nothing to wait for. */
        s->state = SLOT_FREE;
        ring->info.frames_timed++;
        return;
    }
    if (ring->fn.reset_fences(ring->device, 1, &s->fence) != VK_SUCCESS ||
        ring->fn.queue_submit(ring->queue, 0, NULL, s->fence) != VK_SUCCESS) {
        s->state = SLOT_LOST;
        count_untimed(ring, 1);
        stop(ring);
        return;
    }
    s->state = SLOT_PENDING;
    s->seq = ++ring->seq;
}

void cap_vk_ring_get_info(const cap_vk_ring *ring, cap_vk_ring_info *out)
{
    if (!out)
        return;
    if (!ring) {
        memset(out, 0, sizeof *out);
        out->inert = 1;
        out->track = UINT32_MAX;
        return;
    }
    *out = ring->info;
}
