/*
 * vk_passes - a headless Vulkan program that times named GPU passes.
 *
 * Each frame records one command buffer with four compute passes
 * ("integrate" and "collide" nested in "simulate", then "blur" and
 * "reduce"), each inside a GPU scope of a cap_vk_ring, with CPU scopes
 * around waiting, recording and submitting. It writes a capture, then prints
 * what the device offers for timing: name, driver, timestampPeriod, the
 * queue family's timestampValidBits, calibration and its deviation.
 *
 * On a queue family without compute, the passes do transfer work instead
 * (fills and copies of the same buffers), so the ring can be tried on every
 * family a device has, including narrow-timestamp ones.
 *
 * Exit codes: 0 success, 1 usage, 2 setup or a Vulkan call failed, 3 --check
 * found a problem in the capture, 77 no Vulkan device (test harnesses read
 * 77 as "skipped").
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vulkan/vulkan.h>

#include <capture/cap_reader.h>
#include <capture/cap_vulkan.h>
#include <capture/capture.h>

#include "alu.h"
#include "blur.h"
#include "reduce.h"

#define MAX_IN_FLIGHT 3
#define EXIT_NO_DEVICE 77
#define N_PASSES 5

typedef struct options {
    unsigned frames;
    const char *out;
    unsigned device;
    int family; /* -1: first with compute and timestamps */
    unsigned elements;
    unsigned iterations;
    unsigned in_flight;
    int host_reset;
    int pretend_bits; /* -1: none */
    int check;
    int transfer; /* transfer passes even on a compute family */
} options;

typedef struct app {
    VkInstance instance;
    VkPhysicalDevice gpu;
    VkDevice device;
    VkQueue queue;
    uint32_t family;
    VkQueueFamilyProperties fam;
    VkPhysicalDeviceProperties props;
    char driver[VK_MAX_DRIVER_NAME_SIZE + VK_MAX_DRIVER_INFO_SIZE + 4];
    const char *calib_ext;
    cap_vk_calibration calib;
    int host_reset; /* hostQueryReset enabled on the device */
    int compute;    /* the family runs compute; else transfer passes */
    VkBuffer buf[3];
    VkDeviceMemory mem[3];
    VkDeviceSize size[3];
    VkDescriptorSetLayout dsl;
    VkDescriptorPool dpool;
    VkDescriptorSet set_ab, set_bc;
    VkPipelineLayout layout;
    VkShaderModule mod[3];
    VkPipeline alu, blur, reduce;
    VkCommandPool pool;
    VkCommandBuffer cmd[MAX_IN_FLIGHT];
    VkFence fence[MAX_IN_FLIGHT];
} app;

/* Pass names and their declared parents (index into this table, -1 root). */
static const char *const pass_name[N_PASSES] = {"simulate", "integrate",
                                                "collide", "blur", "reduce"};
static const int pass_parent[N_PASSES] = {-1, 0, 0, -1, -1};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: vk_passes [options]\n"
            "  --frames N            frames to run (default 100)\n"
            "  --out FILE            capture to write (default vk_passes.cap)\n"
            "  --device N            physical device index (default 0)\n"
            "  --queue-family N      queue family to time (default: the first\n"
            "                        with compute and timestamps)\n"
            "  --elements N          floats per buffer (default 32768)\n"
            "  --iterations N        ALU iterations per element (default 8)\n"
            "  --in-flight N         frames in flight, 1..3 (default 2)\n"
            "  --host-reset          reset queries from the host (needs\n"
            "                        hostQueryReset; automatic on families\n"
            "                        without graphics or compute)\n"
            "  --pretend-valid-bits N  time as if the family had N valid bits\n"
            "  --transfer            fill/copy passes instead of compute (the\n"
            "                        default on families without compute)\n"
            "  --check               read the capture back and verify it\n"
            "exit: 0 ok, 1 usage, 2 setup or Vulkan failure, 3 check "
            "failed, 77 no Vulkan device\n");
}

static int parse_uint(const char *s, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v > 0x7fffffffUL)
        return -1;
    *out = (unsigned)v;
    return 0;
}

static int parse_args(int argc, char **argv, options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        unsigned v = 0;
        int has_value = i + 1 < argc;
#define UINT_OPT(flag, field)                                                  \
    if (strcmp(a, flag) == 0) {                                                \
        if (!has_value || parse_uint(argv[++i], &v) != 0)                      \
            return -1;                                                         \
        field;                                                                 \
        continue;                                                              \
    }
        UINT_OPT("--frames", o->frames = v)
        UINT_OPT("--device", o->device = v)
        UINT_OPT("--queue-family", o->family = (int)v)
        UINT_OPT("--elements", o->elements = v)
        UINT_OPT("--iterations", o->iterations = v)
        UINT_OPT("--in-flight", o->in_flight = v)
        UINT_OPT("--pretend-valid-bits", o->pretend_bits = (int)v)
#undef UINT_OPT
        if (strcmp(a, "--out") == 0 && has_value) {
            o->out = argv[++i];
            continue;
        }
        if (strcmp(a, "--host-reset") == 0) {
            o->host_reset = 1;
            continue;
        }
        if (strcmp(a, "--check") == 0) {
            o->check = 1;
            continue;
        }
        if (strcmp(a, "--transfer") == 0) {
            o->transfer = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        }
        return -1;
    }
    if (o->frames == 0 || o->elements < 256 || o->in_flight < 1 ||
        o->in_flight > MAX_IN_FLIGHT || o->pretend_bits > 64)
        return -1;
    return 0;
}

#define VKCHECK(call)                                                          \
    do {                                                                       \
        VkResult vk_r_ = (call);                                               \
        if (vk_r_ != VK_SUCCESS) {                                             \
            fprintf(stderr, "vk_passes: %s failed: VkResult %d\n", #call,      \
                    (int)vk_r_);                                               \
            return -1;                                                         \
        }                                                                      \
    } while (0)

static void family_flags(VkQueueFlags f, char *buf, size_t n)
{
    static const struct {
        VkQueueFlags bit;
        const char *name;
    } names[] = {
        {VK_QUEUE_GRAPHICS_BIT, "graphics"},
        {VK_QUEUE_COMPUTE_BIT, "compute"},
        {VK_QUEUE_TRANSFER_BIT, "transfer"},
        {VK_QUEUE_SPARSE_BINDING_BIT, "sparse"},
        {VK_QUEUE_PROTECTED_BIT, "protected"},
        {0x20 /* VK_QUEUE_VIDEO_DECODE_BIT_KHR */, "video-decode"},
        {0x40 /* VK_QUEUE_VIDEO_ENCODE_BIT_KHR */, "video-encode"},
        {0x100 /* VK_QUEUE_OPTICAL_FLOW_BIT_NV */, "optical-flow"},
    };
    buf[0] = 0;
    size_t len = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (f & names[i].bit) {
            int w = snprintf(buf + len, n - len, "%s%s", len ? "|" : "",
                             names[i].name);
            if (w < 0 || (size_t)w >= n - len)
                return;
            len += (size_t)w;
        }
}

static int create_instance(app *a)
{
    const VkApplicationInfo ai = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "vk_passes",
        .apiVersion = VK_API_VERSION_1_2,
    };
    const VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pApplicationInfo = &ai,
    };
    VkResult r = vkCreateInstance(&ci, NULL, &a->instance);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED) {
        a->instance = VK_NULL_HANDLE;
        fprintf(stderr, "vk_passes: no Vulkan driver (VkResult %d)\n", (int)r);
        return 1;
    }
    VKCHECK(r);
    return 0;
}

static int pick_device(app *a, const options *o)
{
    uint32_t n = 0;
    VKCHECK(vkEnumeratePhysicalDevices(a->instance, &n, NULL));
    if (n == 0 || o->device >= n) {
        fprintf(stderr, "vk_passes: no Vulkan device %u (%u found)\n",
                o->device, n);
        return 1;
    }
    VkPhysicalDevice *all = calloc(n, sizeof *all);
    if (!all)
        return -1;
    VkResult r = vkEnumeratePhysicalDevices(a->instance, &n, all);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(all);
        return -1;
    }
    a->gpu = all[o->device];
    free(all);
    vkGetPhysicalDeviceProperties(a->gpu, &a->props);
    snprintf(a->driver, sizeof a->driver, "version 0x%08x",
             a->props.driverVersion);
    if (a->props.apiVersion >= VK_API_VERSION_1_2) {
        VkPhysicalDeviceDriverProperties dp = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES,
        };
        VkPhysicalDeviceProperties2 p2 = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
            .pNext = &dp,
        };
        vkGetPhysicalDeviceProperties2(a->gpu, &p2);
        snprintf(a->driver, sizeof a->driver, "%s %s", dp.driverName,
                 dp.driverInfo);
    }

    uint32_t nf = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(a->gpu, &nf, NULL);
    VkQueueFamilyProperties *fam = calloc(nf ? nf : 1, sizeof *fam);
    if (!fam)
        return -1;
    vkGetPhysicalDeviceQueueFamilyProperties(a->gpu, &nf, fam);
    int chosen = o->family;
    printf("queue families:\n");
    for (uint32_t i = 0; i < nf; i++) {
        char flags[160];
        family_flags(fam[i].queueFlags, flags, sizeof flags);
        printf("  %u: %-40s queues %u, timestampValidBits %u\n", i, flags,
               fam[i].queueCount, fam[i].timestampValidBits);
        if (chosen < 0 && (fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
            fam[i].timestampValidBits > 0)
            chosen = (int)i;
    }
    if (chosen < 0 || (uint32_t)chosen >= nf) {
        fprintf(stderr, "vk_passes: no usable queue family\n");
        free(fam);
        return 1;
    }
    a->family = (uint32_t)chosen;
    a->fam = fam[chosen];
    free(fam);
    a->compute =
        (a->fam.queueFlags & VK_QUEUE_COMPUTE_BIT) != 0 && !o->transfer;
    if (!a->compute && !(a->fam.queueFlags & (VK_QUEUE_TRANSFER_BIT |
                                              VK_QUEUE_GRAPHICS_BIT)))
        fprintf(stderr, "vk_passes: family %u reports neither compute nor "
                        "transfer; trying transfer commands anyway\n",
                a->family);
    return 0;
}

static int create_device(app *a, const options *o)
{
    const float prio = 1.0f;
    const VkDeviceQueueCreateInfo qi = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = a->family,
        .queueCount = 1,
        .pQueuePriorities = &prio,
    };
    a->calib_ext = cap_vk_calibration_extension(vkGetInstanceProcAddr,
                                                a->instance, a->gpu, &a->calib);
    const char *ext[1];
    uint32_t next = 0;
    if (a->calib_ext)
        ext[next++] = a->calib_ext;

    /* hostQueryReset: needed where the family cannot reset queries in a
     * command buffer (no graphics, no compute), or when asked. */
    int want_host = o->host_reset ||
                    !(a->fam.queueFlags &
                      (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT));
    VkPhysicalDeviceHostQueryResetFeatures hqr = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES,
    };
    if (want_host && a->props.apiVersion >= VK_API_VERSION_1_2) {
        VkPhysicalDeviceFeatures2 f2 = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
            .pNext = &hqr,
        };
        vkGetPhysicalDeviceFeatures2(a->gpu, &f2);
    }
    a->host_reset = want_host && hqr.hostQueryReset;
    if (want_host && !a->host_reset)
        fprintf(stderr, "vk_passes: hostQueryReset unavailable; resetting "
                        "queries in command buffers\n");
    hqr.hostQueryReset = a->host_reset ? VK_TRUE : VK_FALSE;
    const VkDeviceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = a->host_reset ? &hqr : NULL,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &qi,
        .enabledExtensionCount = next,
        .ppEnabledExtensionNames = ext,
    };
    VKCHECK(vkCreateDevice(a->gpu, &ci, NULL, &a->device));
    vkGetDeviceQueue(a->device, a->family, 0, &a->queue);
    return 0;
}

static int create_buffer(app *a, int i, VkDeviceSize size)
{
    const VkBufferCreateInfo bi = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
        .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                 VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    VKCHECK(vkCreateBuffer(a->device, &bi, NULL, &a->buf[i]));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(a->device, a->buf[i], &req);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(a->gpu, &mp);
    uint32_t type = UINT32_MAX;
    for (uint32_t t = 0; t < mp.memoryTypeCount; t++) {
        if (!(req.memoryTypeBits & (1u << t)))
            continue;
        if (mp.memoryTypes[t].propertyFlags &
            VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) {
            type = t;
            break;
        }
        if (type == UINT32_MAX)
            type = t;
    }
    if (type == UINT32_MAX)
        return -1;
    const VkMemoryAllocateInfo mi = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = type,
    };
    VKCHECK(vkAllocateMemory(a->device, &mi, NULL, &a->mem[i]));
    VKCHECK(vkBindBufferMemory(a->device, a->buf[i], a->mem[i], 0));
    a->size[i] = size;
    return 0;
}

static int create_pipeline(app *a, int i, const uint32_t *code, size_t bytes,
                           VkPipeline *out)
{
    const VkShaderModuleCreateInfo si = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = bytes,
        .pCode = code,
    };
    VKCHECK(vkCreateShaderModule(a->device, &si, NULL, &a->mod[i]));
    const VkComputePipelineCreateInfo pi = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = a->mod[i],
                  .pName = "main"},
        .layout = a->layout,
    };
    VKCHECK(vkCreateComputePipelines(a->device, VK_NULL_HANDLE, 1, &pi, NULL,
                                     out));
    return 0;
}

static void write_set(app *a, VkDescriptorSet set, VkBuffer b0, VkBuffer b1)
{
    const VkDescriptorBufferInfo info[2] = {
        {b0, 0, VK_WHOLE_SIZE},
        {b1, 0, VK_WHOLE_SIZE},
    };
    VkWriteDescriptorSet w[2];
    for (int i = 0; i < 2; i++)
        w[i] = (VkWriteDescriptorSet){
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
            .dstSet = set,
            .dstBinding = (uint32_t)i,
            .descriptorCount = 1,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .pBufferInfo = &info[i],
        };
    vkUpdateDescriptorSets(a->device, 2, w, 0, NULL);
}

static int create_resources(app *a, const options *o)
{
    VkDeviceSize n = o->elements;
    if (create_buffer(a, 0, n * 4) || create_buffer(a, 1, n * 4) ||
        create_buffer(a, 2, ((n + 255) / 256) * 4))
        return -1;
    const VkCommandPoolCreateInfo cpi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = a->family,
    };
    VKCHECK(vkCreateCommandPool(a->device, &cpi, NULL, &a->pool));
    const VkCommandBufferAllocateInfo cai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = a->pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = MAX_IN_FLIGHT,
    };
    VKCHECK(vkAllocateCommandBuffers(a->device, &cai, a->cmd));
    const VkFenceCreateInfo fci = {
        .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO,
        .flags = VK_FENCE_CREATE_SIGNALED_BIT,
    };
    for (int i = 0; i < MAX_IN_FLIGHT; i++)
        VKCHECK(vkCreateFence(a->device, &fci, NULL, &a->fence[i]));
    if (!a->compute)
        return 0;

    const VkDescriptorSetLayoutBinding b[2] = {
        {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT,
         NULL},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT,
         NULL},
    };
    const VkDescriptorSetLayoutCreateInfo dli = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = 2,
        .pBindings = b,
    };
    VKCHECK(vkCreateDescriptorSetLayout(a->device, &dli, NULL, &a->dsl));
    const VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 4};
    const VkDescriptorPoolCreateInfo dpi = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = 2,
        .poolSizeCount = 1,
        .pPoolSizes = &ps,
    };
    VKCHECK(vkCreateDescriptorPool(a->device, &dpi, NULL, &a->dpool));
    const VkDescriptorSetLayout layouts[2] = {a->dsl, a->dsl};
    const VkDescriptorSetAllocateInfo dai = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorPool = a->dpool,
        .descriptorSetCount = 2,
        .pSetLayouts = layouts,
    };
    VkDescriptorSet sets[2];
    VKCHECK(vkAllocateDescriptorSets(a->device, &dai, sets));
    a->set_ab = sets[0];
    a->set_bc = sets[1];
    write_set(a, a->set_ab, a->buf[0], a->buf[1]);
    write_set(a, a->set_bc, a->buf[1], a->buf[2]);
    const VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 12};
    const VkPipelineLayoutCreateInfo pli = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &a->dsl,
        .pushConstantRangeCount = 1,
        .pPushConstantRanges = &pcr,
    };
    VKCHECK(vkCreatePipelineLayout(a->device, &pli, NULL, &a->layout));
    if (create_pipeline(a, 0, alu_spv, sizeof alu_spv, &a->alu) ||
        create_pipeline(a, 1, blur_spv, sizeof blur_spv, &a->blur) ||
        create_pipeline(a, 2, reduce_spv, sizeof reduce_spv, &a->reduce))
        return -1;
    return 0;
}

static void barrier(VkCommandBuffer cmd, int compute)
{
    const VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT |
                         VK_ACCESS_TRANSFER_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT |
                         VK_ACCESS_SHADER_WRITE_BIT |
                         VK_ACCESS_TRANSFER_READ_BIT |
                         VK_ACCESS_TRANSFER_WRITE_BIT,
    };
    VkPipelineStageFlags st = VK_PIPELINE_STAGE_TRANSFER_BIT;
    if (compute)
        st |= VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    vkCmdPipelineBarrier(cmd, st, st, 0, 1, &mb, 0, NULL, 0, NULL);
}

static void dispatch_alu(app *a, VkCommandBuffer cmd, uint32_t count,
                         uint32_t iterations, float k)
{
    struct {
        uint32_t count, iterations;
        float k;
    } pc = {count, iterations, k};
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, a->alu);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, a->layout, 0,
                            1, &a->set_ab, 0, NULL);
    vkCmdPushConstants(cmd, a->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                       sizeof pc, &pc);
    vkCmdDispatch(cmd, (count + 63) / 64, 1, 1);
}

static void dispatch_2(app *a, VkCommandBuffer cmd, VkPipeline p,
                       VkDescriptorSet set, uint32_t count, uint32_t arg,
                       uint32_t group)
{
    const uint32_t pc[2] = {count, arg};
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, a->layout, 0,
                            1, &set, 0, NULL);
    vkCmdPushConstants(cmd, a->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                       sizeof pc, pc);
    vkCmdDispatch(cmd, (count + group - 1) / group, 1, 1);
}

/* The work of pass i (0 "simulate" has none of its own). */
static void pass_work(app *a, VkCommandBuffer cmd, int i, const options *o,
                      unsigned frame)
{
    uint32_t n = o->elements;
    if (a->compute) {
        switch (i) {
        case 1:
            dispatch_alu(a, cmd, n, o->iterations, 1.37f);
            break;
        case 2:
            dispatch_alu(a, cmd, n, o->iterations / 2 + 1, 2.11f);
            break;
        case 3:
            dispatch_2(a, cmd, a->blur, a->set_ab, n, 4, 64);
            break;
        case 4:
            dispatch_2(a, cmd, a->reduce, a->set_bc, n, 0, 256);
            break;
        default:
            return;
        }
    } else {
        const VkBufferCopy c = {0, 0, a->size[0]};
        switch (i) {
        case 1:
            vkCmdFillBuffer(cmd, a->buf[0], 0, VK_WHOLE_SIZE,
                            0x3e800000u + frame);
            break;
        case 2:
            vkCmdCopyBuffer(cmd, a->buf[0], a->buf[1], 1, &c);
            break;
        case 3:
            vkCmdCopyBuffer(cmd, a->buf[1], a->buf[0], 1, &c);
            break;
        case 4:
            vkCmdFillBuffer(cmd, a->buf[2], 0, VK_WHOLE_SIZE, frame);
            break;
        default:
            return;
        }
    }
    barrier(cmd, a->compute);
}

/* Frame `frame`'s work into cmd, each pass in a scope of the ring; with
 * no ring (NULL) the same work untimed. */
static int record(app *a, cap_vk_ring *ring, VkCommandBuffer cmd,
                  const uint32_t *names, const options *o, unsigned frame)
{
    VKCHECK(vkResetCommandBuffer(cmd, 0));
    const VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    VKCHECK(vkBeginCommandBuffer(cmd, &bi));
    /* Work of earlier frames used the same buffers. */
    barrier(cmd, a->compute);
    if (frame == 0)
        vkCmdFillBuffer(cmd, a->buf[0], 0, VK_WHOLE_SIZE, 0x3e800000u);
    barrier(cmd, a->compute);
    cap_vk_scope scope[N_PASSES];
    for (int i = 0; i < N_PASSES; i++) {
        if (!ring) {
            pass_work(a, cmd, i, o, frame);
            continue;
        }
        /* Close open scopes that are not ancestors of pass i. */
        for (int j = i - 1; j >= 0; j--) {
            int anc = 0;
            for (int p = pass_parent[i]; p >= 0; p = pass_parent[p])
                anc |= p == j;
            if (!anc && scope[j] != CAP_VK_NO_SCOPE) {
                cap_vk_ring_scope_end(ring, cmd, scope[j]);
                scope[j] = CAP_VK_NO_SCOPE;
            }
        }
        cap_vk_scope parent =
            pass_parent[i] >= 0 ? scope[pass_parent[i]] : CAP_VK_NO_SCOPE;
        scope[i] = cap_vk_ring_scope_begin(ring, cmd, names[i], parent);
        pass_work(a, cmd, i, o, frame);
    }
    for (int j = N_PASSES - 1; ring && j >= 0; j--)
        if (scope[j] != CAP_VK_NO_SCOPE)
            cap_vk_ring_scope_end(ring, cmd, scope[j]);
    VKCHECK(vkEndCommandBuffer(cmd));
    return 0;
}

/* Every pass's work once, untimed, waited for: a driver may compile a
 * pipeline at its first dispatch (lavapipe here: frame 0's integrate took
 * 216 ms against 0.5-1 ms after), which frame 0 would otherwise time as
 * the pass's cost; under a loaded machine that span passed the ring's
 * one-second limit for a pair and was dropped as invalid, failing
 * --check. An engine warms its pipelines the same way. */
static int warm_up(app *a, const options *o)
{
    VkCommandBuffer cmd = a->cmd[0];
    if (record(a, NULL, cmd, NULL, o, 0) != 0)
        return -1;
    const VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .commandBufferCount = 1,
        .pCommandBuffers = &cmd,
    };
    VKCHECK(vkQueueSubmit(a->queue, 1, &si, VK_NULL_HANDLE));
    VKCHECK(vkQueueWaitIdle(a->queue));
    return 0;
}

static int run_frames(app *a, cap_vk_ring *ring, const options *o,
                      cap_vk_ring_info *info)
{
    uint32_t names[N_PASSES];
    for (int i = 0; i < N_PASSES; i++)
        names[i] = cap_name_register(pass_name[i], __FILE__, __LINE__);
    int failed = warm_up(a, o) != 0;
    for (unsigned f = 0; f < o->frames && !failed; f++) {
        CAP_FRAME_MARK();
        unsigned k = f % o->in_flight;
        {
            CAP_SCOPE("wait");
            if (vkWaitForFences(a->device, 1, &a->fence[k], VK_TRUE,
                                UINT64_MAX) != VK_SUCCESS ||
                vkResetFences(a->device, 1, &a->fence[k]) != VK_SUCCESS)
                failed = 1;
        }
        if (failed)
            break;
        cap_vk_ring_frame_begin(ring);
        {
            CAP_SCOPE("record");
            failed = record(a, ring, a->cmd[k], names, o, f) != 0;
        }
        if (failed)
            break;
        {
            CAP_SCOPE("submit");
            const VkSubmitInfo si = {
                .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                .commandBufferCount = 1,
                .pCommandBuffers = &a->cmd[k],
            };
            failed = vkQueueSubmit(a->queue, 1, &si, a->fence[k]) !=
                     VK_SUCCESS;
        }
        cap_vk_ring_frame_end(ring);
    }
    /* A last frame that waits for the GPU: the windows of the final
     * frames' spans end here. */
    CAP_FRAME_MARK();
    {
        CAP_SCOPE("drain");
        vkDeviceWaitIdle(a->device);
        cap_vk_ring_flush(ring);
    }
    cap_vk_ring_get_info(ring, info);
    cap_vk_ring_destroy(ring);
    cap_frame_end();
    return failed ? -1 : 0;
}

/* ---- --check: read the capture back ------------------------------------ */

typedef struct frame_win {
    int64_t begin, end;
} frame_win;

typedef struct pass_stat {
    uint64_t n;
    double sum_ns, min_ns, max_ns;
} pass_stat;

static int check_capture(const options *o, const cap_vk_ring_info *info)
{
    uint64_t deviation_ns = info->max_deviation_ns;
    char detail[256];
    cap_reader *r = NULL;
    cap_result res = cap_reader_open(&r, o->out, detail, sizeof detail);
    if (res != CAP_OK) {
        fprintf(stderr, "vk_passes: cannot read %s: %s\n", o->out, detail);
        return 3;
    }
    size_t nf = o->frames + 4;
    frame_win *win = calloc(nf, sizeof *win);
    /* Spans of frame f, per pass: calibrated begin/end, depth, parent. */
    typedef struct span_rec {
        uint64_t frame;
        int pass;
        uint32_t depth, parent_name;
        int measured, calibrated;
        int64_t begin, end, dur;
    } span_rec;
    size_t cap_spans = (size_t)o->frames * N_PASSES + 16, ns = 0;
    span_rec *sp = calloc(cap_spans, sizeof *sp);
    if (!win || !sp) {
        free(win);
        free(sp);
        cap_reader_close(r);
        return 3;
    }
    cap_event ev;
    int problems = 0;
    while ((res = cap_reader_next(r, &ev)) != CAP_DONE) {
        if (res != CAP_OK) {
            fprintf(stderr, "vk_passes: reading %s: %s\n", o->out,
                    cap_reader_detail(r));
            problems++;
            if (res != CAP_E_CORRUPT && res != CAP_E_TRUNCATED)
                break;
            continue;
        }
        if (ev.kind == CAP_EV_FRAME && ev.u.frame.index < nf) {
            win[ev.u.frame.index].begin = ev.u.frame.begin_ns;
            win[ev.u.frame.index].end = ev.u.frame.end_ns;
        } else if (ev.kind == CAP_EV_GPU_SPAN && ns < cap_spans) {
            const cap_ev_gpu_span *g = &ev.u.gpu_span;
            const char *name = cap_reader_name(r, g->name);
            const char *pname =
                g->parent_name ? cap_reader_name(r, g->parent_name) : NULL;
            int pass = -1;
            for (int i = 0; i < N_PASSES; i++)
                if (name && strcmp(name, pass_name[i]) == 0)
                    pass = i;
            if (pass < 0)
                continue;
            span_rec *s = &sp[ns++];
            s->frame = g->cpu_frame;
            s->pass = pass;
            s->depth = g->depth;
            s->measured = g->measured;
            s->calibrated = g->calibrated;
            s->begin = g->begin_ns;
            s->end = g->end_ns;
            s->dur = g->duration_ns;
            int want = pass_parent[pass];
            if (want < 0 ? pname != NULL
                         : (!pname || strcmp(pname, pass_name[want]) != 0)) {
                fprintf(stderr,
                        "vk_passes: check: frame %" PRIu64 " %s has parent "
                        "%s\n",
                        s->frame, pass_name[pass], pname ? pname : "(none)");
                problems++;
            }
        }
    }
    const cap_reader_stats *st = cap_reader_get_stats(r);
    /* The window of frame f's spans: from the frame's begin (its work was
     * submitted inside it) to the end of frame f + in_flight, inside which
     * the fence wait for frame f returned (the drain frame for the last
     * ones), widened by the calibration deviation plus 1 ms for clock-rate
     * drift between samples. */
    int64_t tol = (int64_t)deviation_ns + 1000000;
    pass_stat ps[N_PASSES];
    memset(ps, 0, sizeof ps);
    uint64_t per_frame[N_PASSES] = {0};
    uint64_t in_window = 0, calibrated = 0;
    for (size_t i = 0; i < ns; i++) {
        span_rec *s = &sp[i];
        if (!s->measured)
            continue;
        per_frame[s->pass]++;
        pass_stat *p = &ps[s->pass];
        double d = (double)s->dur;
        if (p->n == 0 || d < p->min_ns)
            p->min_ns = d;
        if (p->n == 0 || d > p->max_ns)
            p->max_ns = d;
        p->sum_ns += d;
        p->n++;
        if (s->dur <= 0) {
            problems++;
            fprintf(stderr, "vk_passes: check: non-positive duration\n");
        }
        if (!s->calibrated || s->frame >= o->frames)
            continue;
        calibrated++;
        uint64_t last = s->frame + o->in_flight;
        if (last > o->frames)
            last = o->frames; /* the drain frame */
        if (s->begin >= win[s->frame].begin - tol &&
            s->end <= win[last].end + tol)
            in_window++;
        else if (calibrated - in_window <= 5)
            fprintf(stderr,
                    "vk_passes: check: frame %" PRIu64 " %s at [%.3f, %.3f] ms,"
                    " window [%.3f, %.3f] ms\n",
                    s->frame, pass_name[s->pass], (double)s->begin / 1e6,
                    (double)s->end / 1e6, (double)win[s->frame].begin / 1e6,
                    (double)win[last].end / 1e6);
    }
    printf("passes (GPU time per frame):\n");
    for (int i = 0; i < N_PASSES; i++)
        printf("  %-10s depth %d  n %5" PRIu64
               "  mean %10.1f us  min %10.1f us  max %10.1f us\n",
               pass_name[i], pass_parent[i] >= 0 ? 1 : 0, ps[i].n,
               ps[i].n ? ps[i].sum_ns / (double)ps[i].n / 1e3 : 0.0,
               ps[i].min_ns / 1e3, ps[i].max_ns / 1e3);
    printf("calibrated spans within their frame window: %" PRIu64
           " of %" PRIu64 "\n",
           in_window, calibrated);
    printf("reader: gpu spans %" PRIu64 ", not measured %" PRIu64
           ", invalid %" PRIu64 ", untimed frames %" PRIu64 "\n",
           st->gpu_spans, st->gpu_unmeasured, st->gpu_invalid,
           st->gpu_untimed_frames);
    if (info->inert) {
        /* An inert ring times nothing: the capture must say nothing. */
        if (st->gpu_spans || st->gpu_unmeasured || st->gpu_untimed_frames) {
            fprintf(stderr, "vk_passes: check: inert ring left GPU data\n");
            problems++;
        }
    } else {
        for (int i = 0; i < N_PASSES; i++) {
            if (per_frame[i] + st->gpu_untimed_frames >= o->frames)
                continue;
            fprintf(stderr,
                    "vk_passes: check: pass %s has %" PRIu64
                    " spans for %u frames\n",
                    pass_name[i], per_frame[i], o->frames);
            problems++;
        }
    }
    if (calibrated && in_window != calibrated) {
        fprintf(stderr, "vk_passes: check: %" PRIu64
                        " calibrated spans outside their window\n",
                calibrated - in_window);
        problems++;
    }
    free(win);
    free(sp);
    cap_reader_close(r);
    if (problems) {
        fprintf(stderr, "vk_passes: check: %d problem(s)\n", problems);
        return 3;
    }
    printf("check: ok\n");
    return 0;
}

static void destroy_app(app *a)
{
    if (a->device) {
        vkDeviceWaitIdle(a->device);
        vkDestroyPipeline(a->device, a->alu, NULL);
        vkDestroyPipeline(a->device, a->blur, NULL);
        vkDestroyPipeline(a->device, a->reduce, NULL);
        for (int i = 0; i < 3; i++)
            vkDestroyShaderModule(a->device, a->mod[i], NULL);
        vkDestroyPipelineLayout(a->device, a->layout, NULL);
        vkDestroyDescriptorPool(a->device, a->dpool, NULL);
        vkDestroyDescriptorSetLayout(a->device, a->dsl, NULL);
        for (int i = 0; i < MAX_IN_FLIGHT; i++)
            vkDestroyFence(a->device, a->fence[i], NULL);
        vkDestroyCommandPool(a->device, a->pool, NULL);
        for (int i = 0; i < 3; i++) {
            vkDestroyBuffer(a->device, a->buf[i], NULL);
            vkFreeMemory(a->device, a->mem[i], NULL);
        }
        vkDestroyDevice(a->device, NULL);
    }
    if (a->instance)
        vkDestroyInstance(a->instance, NULL);
}

int main(int argc, char **argv)
{
    options o = {100, "vk_passes.cap", 0, -1, 32768, 8, 2, 0, -1, 0, 0};
    if (parse_args(argc, argv, &o) != 0) {
        usage(stderr);
        return 1;
    }
    app a;
    memset(&a, 0, sizeof a);
    int r = create_instance(&a);
    if (r == 0)
        r = pick_device(&a, &o);
    if (r == 0)
        r = create_device(&a, &o);
    if (r == 0)
        r = create_resources(&a, &o);
    if (r != 0) {
        destroy_app(&a);
        return r > 0 ? EXIT_NO_DEVICE : 2;
    }
    const cap_meta_kv meta[] = {{"program", "vk_passes"},
                                {"gpu", a.props.deviceName},
                                {"gpu_driver", a.driver}};
    cap_capture_options co;
    memset(&co, 0, sizeof co);
    co.meta = meta;
    co.meta_count = sizeof meta / sizeof meta[0];
    if (cap_open(o.out, &co) != CAP_OK) {
        fprintf(stderr, "vk_passes: cannot write %s\n", o.out);
        destroy_app(&a);
        return 2;
    }
    CAP_THREAD("main");
    char track[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE + 32];
    snprintf(track, sizeof track, "%s queue family %u", a.props.deviceName,
             a.family);
    cap_vk_ring_options ro;
    memset(&ro, 0, sizeof ro);
    ro.get_instance_proc_addr = vkGetInstanceProcAddr;
    ro.instance = a.instance;
    ro.physical_device = a.gpu;
    ro.device = a.device;
    ro.queue = a.queue;
    ro.queue_family_index = a.family;
    ro.track_name = track;
    ro.calibration = a.calib;
    if (a.host_reset)
        ro.flags |= CAP_VK_HOST_QUERY_RESET;
    if (o.pretend_bits >= 0) {
        ro.flags |= CAP_VK_PRETEND_VALID_BITS;
        ro.pretend_valid_bits = (uint32_t)o.pretend_bits;
    }
    cap_vk_ring *ring = NULL;
    cap_result rr = cap_vk_ring_create(&ring, &ro);
    if (rr != CAP_OK)
        fprintf(stderr, "vk_passes: GPU timing off: %s\n",
                cap_result_message(rr));
    cap_vk_ring_info info;
    int failed = run_frames(&a, ring, &o, &info) != 0;
    cap_result cr = cap_close();

    char flags[160];
    family_flags(a.fam.queueFlags, flags, sizeof flags);
    printf("device: %s\n", a.props.deviceName);
    printf("driver: %s\n", a.driver);
    printf("vulkan api: %u.%u.%u\n", VK_API_VERSION_MAJOR(a.props.apiVersion),
           VK_API_VERSION_MINOR(a.props.apiVersion),
           VK_API_VERSION_PATCH(a.props.apiVersion));
    printf("queue family: %u (%s)\n", a.family, flags);
    printf("timestampPeriod: %g ns\n", (double)a.props.limits.timestampPeriod);
    printf("timestampValidBits: %u", a.fam.timestampValidBits);
    if (o.pretend_bits >= 0)
        printf(" (timed as if %d)", o.pretend_bits);
    printf("\n");
    printf("passes: %s, %u elements, %u iterations, %u frames in flight\n",
           a.compute ? "compute" : "transfer", o.elements, o.iterations,
           o.in_flight);
    printf("query reset: %s\n", a.host_reset ? "host" : "command buffer");
    printf("calibration: %s\n",
           info.calibrated ? a.calib_ext
           : info.inert    ? "off (ring inert)"
           : a.calib_ext   ? "extension present, time domains missing: off"
                           : "not available (spans uncalibrated)");
    if (info.calibrated)
        printf("calibration deviation: last %" PRIu64 " ns, min %" PRIu64
               " ns, max %" PRIu64 " ns over %" PRIu64 " samples\n",
               info.last_deviation_ns, info.min_deviation_ns,
               info.max_deviation_ns, info.calibrations);
    printf("ring: %s; frames timed %" PRIu64 ", untimed %" PRIu64
           "; spans %" PRIu64 ", not measured %" PRIu64 ", invalid %" PRIu64
           "\n",
           info.inert ? "inert" : "timing", info.frames_timed,
           info.frames_untimed, info.spans, info.spans_unmeasured,
           info.spans_invalid);
    printf("capture: %s\n", o.out);
    destroy_app(&a);
    if (failed) {
        fprintf(stderr, "vk_passes: a Vulkan call failed\n");
        return 2;
    }
    if (cr != CAP_OK) {
        fprintf(stderr, "vk_passes: capture: %s\n", cap_result_message(cr));
        return 2;
    }
    return o.check ? check_capture(&o, &info) : 0;
}
