/*
 * cap_vulkan.h - GPU scopes from Vulkan timestamp queries (optional part of
 * libcapture, built when Meson finds Vulkan: option `vulkan`).
 *
 * Which writer: the ring records into the producer's capture (capture.h,
 * cap_gpu_frame), the one for a running program. GPU spans that already
 * have their ticks (an importer, a test) go straight to cap_writer.h's
 * cap_writer_gpu_frame instead; pkg-config: libcapture_vulkan.
 *
 * Quick use (one ring per queue, on the thread that records and submits):
 *
 *     cap_open("run.cap", NULL);
 *     cap_vk_ring_options o = {0};
 *     o.get_instance_proc_addr = vkGetInstanceProcAddr;
 *     o.instance = inst; o.physical_device = gpu; o.device = dev;
 *     o.queue = queue; o.queue_family_index = family;
 *     o.calibration = which;   // from cap_vk_calibration_extension, or NONE
 *     cap_vk_ring *ring;
 *     cap_vk_ring_create(&ring, &o);
 *     uint32_t blur = cap_name_register("blur", __FILE__, __LINE__);
 *     for (;;) {
 *         CAP_FRAME_MARK();
 *         cap_vk_ring_frame_begin(ring);        // harvests finished slots
 *         vkBeginCommandBuffer(cmd, ...);
 *         cap_vk_scope s = cap_vk_ring_scope_begin(ring, cmd, blur,
 *                                                  CAP_VK_NO_SCOPE);
 *         vkCmdDispatch(cmd, ...);
 *         cap_vk_ring_scope_end(ring, cmd, s);
 *         vkEndCommandBuffer(cmd);
 *         vkQueueSubmit(queue, 1, &submit, fence);
 *         cap_vk_ring_frame_end(ring);          // after the frame's submits
 *     }
 *     vkDeviceWaitIdle(dev);
 *     cap_vk_ring_destroy(ring);                // records the last frames
 *     cap_close();
 *
 * Model. Timestamps written by the GPU are read back a few frames later,
 * never waited for. The ring holds CAP_VK_RING_SLOTS slots (a triple-
 * buffered swapchain plus one submit); each owns a query pool of
 * 2 x max_scopes timestamps, the parent links and names of its frame's
 * scopes, and a fence. cap_vk_ring_frame_begin harvests every slot whose
 * fence has signalled (vkGetFenceStatus, vkGetQueryPoolResults with
 * VK_QUERY_RESULT_WITH_AVAILABILITY_BIT, never VK_QUERY_RESULT_WAIT_BIT) and
 * takes a free slot; when all slots are still in flight the frame goes
 * untimed (counted, see cap_gpu_untimed) instead of stalling. The first
 * scope of a frame records vkCmdResetQueryPool for the slot into its command
 * buffer; each scope writes a timestamp at its begin (top of pipe) and end
 * (bottom of pipe). cap_vk_ring_frame_end submits an empty batch with the
 * slot's fence to the queue: that fence signals once every command
 * submitted before it has completed, so a slot is read only after its
 * frame's GPU work has finished.
 *
 * What goes into the capture (the one opened with cap_open): a GPU track
 * per ring (cap_gpu_track, with the device's timestampPeriod), each timed
 * frame's spans as one cap_gpu_frame batch tagged with the CPU frame that
 * was current at cap_vk_ring_frame_begin (cap_frame_current), untimed
 * frames and dropped spans (cap_gpu_untimed), and, when the device was
 * created with VK_KHR_calibrated_timestamps or VK_EXT_calibrated_timestamps
 * and offers the device and CLOCK_MONOTONIC time domains, calibration
 * samples (cap_gpu_calibrate) at creation and about every second after
 * (several samples each time, keeping the one of smallest deviation) so
 * readers place spans on the CPU axis. Without calibration spans keep their
 * exact durations and nesting and are read as uncalibrated.
 *
 * Checks, never trust. Results are masked to the queue family's
 * timestampValidBits; a pair's duration is the masked difference, so a
 * counter that wraps inside a pair still gives the right duration. The
 * ring extends masked ticks to 64 bits so positions stay continuous across
 * wraps: forward from the tick predicted for the moment the frame began,
 * by the calibration (exact for a frame harvested within one wrap of the
 * latest sample: 4.3 s for 32 bits at 1 ns) or, uncalibrated, by the latest
 * tick read and when it was read (exact within one wrap of that read).
 * A pair whose masked duration is 0 (non-increasing) or over one second is
 * dropped and counted, never clamped, and its children are re-parented to
 * its parent. A scope whose pair was never written (a command buffer that
 * was not submitted, a scope never ended) is recorded as not measured
 * (cap_gpu_span.measured = 0), distinct from a zero duration.
 *
 * Inert ring: when the queue family's timestampValidBits is 0, or the
 * device's timestampPeriod is not finite and positive, the ring creates no
 * query pool, no fence and no track; every call returns at once and
 * records nothing (scope_begin returns CAP_VK_NO_SCOPE). Every function
 * also accepts a NULL ring and then does nothing, so a program may ignore a
 * failed cap_vk_ring_create.
 *
 * Linking: libcapture never links the Vulkan loader. Every Vulkan function
 * the ring calls is looked up through the get_instance_proc_addr pointer
 * the caller passes (vkGetInstanceProcAddr, then vkGetDeviceProcAddr).
 *
 * Threads: a ring is not thread-safe. Call it from one thread at a time,
 * the one that submits to its queue: cap_vk_ring_frame_end submits to the
 * queue, which Vulkan requires to be externally synchronised.
 */
#ifndef CAP_VULKAN_H
#define CAP_VULKAN_H

#include <stdint.h>

#include <vulkan/vulkan.h>

#include "cap_export.h"
#include "cap_result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Slots in a ring: three frames in flight (a triple-buffered swapchain)
 * plus the one being recorded. */
#define CAP_VK_RING_SLOTS 4u

/* Scopes a frame may open by default, and at most. */
#define CAP_VK_DEFAULT_SCOPES 64u
#define CAP_VK_MAX_SCOPES 4096u

/* A GPU scope of the frame being recorded: its index among the frame's
 * scopes, or CAP_VK_NO_SCOPE (the frame is untimed, the ring inert or the
 * frame's scopes exhausted). Pass it as a later scope's parent and to
 * cap_vk_ring_scope_end. */
typedef int32_t cap_vk_scope;
#define CAP_VK_NO_SCOPE ((cap_vk_scope)-1)

/* Which calibrated-timestamps extension the device was created with. */
typedef enum cap_vk_calibration {
    CAP_VK_CALIBRATION_NONE = 0,
    CAP_VK_CALIBRATION_EXT, /* VK_EXT_calibrated_timestamps */
    CAP_VK_CALIBRATION_KHR  /* VK_KHR_calibrated_timestamps */
} cap_vk_calibration;

/* cap_vk_ring_options.flags: pretend the device said otherwise (tests, and
 * to try a narrower counter on a device that has a wide one). */
#define CAP_VK_PRETEND_VALID_BITS 0x1u /* use pretend_valid_bits */
#define CAP_VK_PRETEND_PERIOD 0x2u     /* use pretend_period_ns */
/* cap_vk_ring_options.flags: the device was created with the hostQueryReset
 * feature (Vulkan 1.2 or VK_EXT_host_query_reset). The ring then resets a
 * slot's queries from the host (vkResetQueryPool) at creation and after
 * each harvest, and records no vkCmdResetQueryPool: needed on queue
 * families that cannot reset queries in a command buffer (transfer-only,
 * some video families), and it makes a slot whose reset would have been
 * in an unsubmitted command buffer read as not measured rather than stale. */
#define CAP_VK_HOST_QUERY_RESET 0x4u

/* How to create a ring. Zero-initialise, then fill the Vulkan handles; a
 * zero field takes the default beside it. The handles are borrowed: they
 * must outlive the ring. */
typedef struct cap_vk_ring_options {
    PFN_vkGetInstanceProcAddr get_instance_proc_addr; /* required */
    VkInstance instance;               /* required */
    VkPhysicalDevice physical_device;  /* required */
    VkDevice device;                   /* required */
    VkQueue queue;                     /* required: the queue the timed
                                          command buffers are submitted to */
    uint32_t queue_family_index;       /* that queue's family */
    const char *track_name;            /* copied; default
                                          "vulkan queue family <n>" */
    uint32_t max_scopes;               /* scopes per frame; default
                                          CAP_VK_DEFAULT_SCOPES, at most
                                          CAP_VK_MAX_SCOPES */
    cap_vk_calibration calibration;    /* the extension enabled on device;
                                          default none (uncalibrated) */
    const VkAllocationCallbacks *allocator; /* for the ring's Vulkan
                                               objects; may be NULL */
    uint32_t flags;                    /* CAP_VK_PRETEND_*,
                                          CAP_VK_HOST_QUERY_RESET */
    uint32_t pretend_valid_bits;       /* 0..64, with CAP_VK_PRETEND_VALID_BITS;
                                          0 makes the ring inert */
    double pretend_period_ns;          /* with CAP_VK_PRETEND_PERIOD; not
                                          finite and positive: inert */
} cap_vk_ring_options;

/* What a ring found and did (cap_vk_ring_get_info). */
typedef struct cap_vk_ring_info {
    int inert;                   /* 1: no timing at all (see above) */
    uint32_t valid_bits;         /* in use (the family's, or pretended) */
    double period_ns;            /* in use */
    uint32_t track;              /* the capture's GPU track, UINT32_MAX when
                                    inert */
    int calibrated;              /* calibration samples are being taken */
    uint64_t calibrations;       /* samples recorded (cap_gpu_calibrate) */
    uint64_t last_deviation_ns;  /* maxDeviation of the latest sample */
    uint64_t min_deviation_ns;   /* smallest maxDeviation recorded so far */
    uint64_t max_deviation_ns;   /* largest */
    uint64_t frames_timed;       /* frames harvested into the capture */
    uint64_t frames_untimed;     /* frames that found every slot in flight,
                                    or whose slot was lost */
    uint64_t spans;              /* measured spans recorded */
    uint64_t spans_unmeasured;   /* spans recorded as not measured */
    uint64_t spans_invalid;      /* pairs dropped (non-increasing, over one
                                    second) and scopes over max_scopes */
} cap_vk_ring_info;

typedef struct cap_vk_ring cap_vk_ring;

/* The calibrated-timestamps device extension to enable on
 * `physical_device` so the ring can calibrate: "VK_KHR_calibrated_timestamps"
 * when offered, else "VK_EXT_calibrated_timestamps", else NULL. *which (may
 * be NULL) gets the matching cap_vk_calibration to put in the options.
 * Returns a static string: never free it. Errors: NULL and
 * CAP_VK_CALIBRATION_NONE when an argument is NULL or the query fails. */
CAP_API const char *cap_vk_calibration_extension(
    PFN_vkGetInstanceProcAddr get_instance_proc_addr, VkInstance instance,
    VkPhysicalDevice physical_device, cap_vk_calibration *which);

/* Create a ring for one queue, recording into the capture that is open
 * (cap_open). Reads the family's timestampValidBits and the device's
 * timestampPeriod; when they cannot time, the ring is inert (see above) and
 * this still succeeds. Otherwise creates CAP_VK_RING_SLOTS query pools and
 * fences, declares the GPU track and takes a first calibration sample.
 * On success *out owns the ring until cap_vk_ring_destroy.
 * Errors (*out is NULL): CAP_E_MISUSE (out or opt NULL, a required handle
 * or function missing, queue_family_index out of range, max_scopes over
 * CAP_VK_MAX_SCOPES, pretend_valid_bits over 64, no capture open),
 * CAP_E_NOMEM (host or device memory for the pools, fences or ring). */
CAP_API cap_result cap_vk_ring_create(cap_vk_ring **out,
                                      const cap_vk_ring_options *opt);

/* Record every frame still in flight, waiting for it (at most 5 s in all:
 * the one call of the ring that waits; never call it on the frame path).
 * Ends a frame left open first. Frames not finished by then are counted as
 * untimed. The ring stays usable. For the end of a run, after
 * vkDeviceWaitIdle, so cap_vk_ring_get_info shows final counters. NULL or
 * inert ring: no-op. */
CAP_API void cap_vk_ring_flush(cap_vk_ring *ring);

/* Flush (cap_vk_ring_flush), then free the ring and its Vulkan objects.
 * Call it before cap_close, once the device no longer executes command
 * buffers that use the ring's queries (after vkDeviceWaitIdle, typically).
 * Accepts NULL. */
CAP_API void cap_vk_ring_destroy(cap_vk_ring *ring);

/* Begin the GPU side of a frame, on the thread that records it and after
 * the CPU frame began (cap_frame_mark): take a calibration sample when the
 * last one is about a second old, record every slot whose work has
 * finished (never waiting), then take a free slot for this frame. With
 * every slot in flight the frame is untimed: its scopes return
 * CAP_VK_NO_SCOPE and it is counted. A frame begun without ending the
 * previous one ends it first (as cap_vk_ring_frame_end). */
CAP_API void cap_vk_ring_frame_begin(cap_vk_ring *ring);

/* Open a GPU scope named `name` (an id from cap_name_register) in the
 * frame's command buffer `cmd`, a child of `parent` (a scope of the same
 * frame, or CAP_VK_NO_SCOPE for a root): nesting is by declared parent,
 * never by call order. Records a timestamp write (top of pipe), preceded
 * for the frame's first scope by the reset of the slot's queries, so the
 * first scope must be in a command buffer that is submitted, outside a
 * render pass. Returns the scope, or CAP_VK_NO_SCOPE when the frame is not
 * timed, the ring is inert or NULL, name is 0 or the frame already holds
 * max_scopes scopes (counted as invalid). A parent that is not an earlier
 * scope of this frame makes the scope a root. With CAP_VK_HOST_QUERY_RESET
 * no reset is recorded and any command buffer may hold the first scope. */
CAP_API cap_vk_scope cap_vk_ring_scope_begin(cap_vk_ring *ring,
                                             VkCommandBuffer cmd,
                                             uint32_t name,
                                             cap_vk_scope parent);

/* Close `scope` in command buffer `cmd` (bottom-of-pipe timestamp). cmd
 * may differ from the one that opened it; both must be submitted before
 * cap_vk_ring_frame_end, or the scope reads as not measured.
 * CAP_VK_NO_SCOPE, a scope already ended or not of this frame: no-op. */
CAP_API void cap_vk_ring_scope_end(cap_vk_ring *ring, VkCommandBuffer cmd,
                                   cap_vk_scope scope);

/* End the frame after its last vkQueueSubmit: submits an empty batch to
 * the queue with the slot's fence (the fence signals when every command
 * submitted before it has completed). Scopes still open are recorded as
 * not measured. If that submit fails the slot is given up (the frame is
 * counted untimed) and the ring turns inert: the device is likely lost.
 * No frame begun: no-op. */
CAP_API void cap_vk_ring_frame_end(cap_vk_ring *ring);

/* Copy the ring's state and counters into *out (zeroed, with inert = 1 and
 * track = UINT32_MAX, for a NULL ring). out must not be NULL. */
CAP_API void cap_vk_ring_get_info(const cap_vk_ring *ring,
                                  cap_vk_ring_info *out);

#ifdef __cplusplus
}
#endif
#endif
