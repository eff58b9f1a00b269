/*
 * sampler.h - the device sampler (internal): the machine's own evidence,
 * read on the producer's writer thread and recorded as ordinary counters.
 *
 * Sources (Linux and Android), each read under an optional root directory
 * (tests point it at a fake sysfs/procfs tree):
 *   /sys/devices/system/cpu/cpufreq/policyN/scaling_cur_freq
 *                                  cpuN.freq_mhz (one per cluster)
 *   /sys/class/thermal/thermal_zoneN/{type,temp}
 *                                  thermal.<type>.temp_c
 *   /sys/class/power_supply/<name>/{power_now | current_now+voltage_now,
 *                                  capacity, temp}
 *                                  power.<name>.power_w, .capacity_pct, .temp_c
 *   /proc/self/statm, /proc/self/stat
 *                                  proc.rss_mib, proc.cpu_pct
 *   /sys/class/hwmon/hwmonN/{name,temp1_input,power1_average|power1_input,
 *                                  freq1_input}
 *                                  gpu.<driver>.temp_c, .power_w, .freq_mhz
 *                                  for GPU drivers (amdgpu, i915, xe, nouveau,
 *                                  radeon, msm, panfrost); hwmon.<name>.temp_c
 *                                  for the others (coretemp, k10temp, ...)
 *   /sys/class/devfreq/<dev>/cur_freq, GPU devices only (kgsl, mali, gpu)
 *                                  gpu.<dev>.freq_mhz
 *   /sys/class/drm/cardN/gt_act_freq_mhz (i915)
 *                                  gpu.cardN.freq_mhz
 *   NVML (libnvidia-ml.so.1, dlopen'ed at run time; never with a test root)
 *                                  gpuN.temp_c, gpuN.sm_freq_mhz,
 *                                  gpuN.power_w, gpuN.power_limit_w,
 *                                  gpuN.util_pct, gpuN.mem_used_mib,
 *                                  gpuN.throttle_power_flag,
 *                                  gpuN.throttle_thermal_flag,
 *                                  gpuN.throttle_hw_slowdown_flag
 *                                  (1 while NVML reports that reason, so a
 *                                  bin's mean is the share of its samples)
 *
 * A family with nothing to read is logged once when the sampler starts; a
 * counter whose file stops reading is logged once and skipped from then on.
 */
#ifndef CAP_SAMPLER_H
#define CAP_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

typedef struct cap__sampler cap__sampler;

/* Receives one sample. `id_slot` belongs to the sampler and stays valid
 * until cap__sampler_free: the callee may cache the counter's name id in
 * it (0 until then). */
typedef void (*cap__sample_fn)(void *user, const char *name,
                               uint32_t *id_slot, double value);

/* Log one line (no newline). */
typedef void (*cap__sample_log_fn)(void *user, const char *line);

/* Find the sources under `root` ("" or NULL: the real /sys and /proc; any
 * other directory: a test tree, and NVML is not loaded). Logs one line per
 * family that has nothing to read and one summary line. `mono_ns` is the
 * time of discovery (the base of proc.cpu_pct). Returns NULL when out of
 * memory. Free with cap__sampler_free. */
cap__sampler *cap__sampler_new(const char *root, uint64_t mono_ns,
                               cap__sample_log_fn log, void *log_user);

/* Read every live source now and pass each value to fn. A source that
 * cannot be read is logged once and never read again. Returns the number
 * of values passed. */
size_t cap__sampler_sample(cap__sampler *s, uint64_t mono_ns,
                           cap__sample_fn fn, void *user);

/* Number of counters still sampled. */
size_t cap__sampler_count(const cap__sampler *s);

/* Release everything (and NVML, when it was loaded). Accepts NULL. */
void cap__sampler_free(cap__sampler *s);

#endif
