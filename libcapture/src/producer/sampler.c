/*
 * sampler.c - the device sampler: clocks, temperatures, power and the
 * process's own memory and CPU time, read from sysfs, procfs and NVML on
 * the producer's writer thread (sampler.h lists the sources and names).
 *
 * Every source is found once (cap__sampler_new) and then read by opening,
 * reading and closing one small file per counter per sample: sysfs values
 * are regenerated on each open, and a test may rewrite its fake files
 * between samples. NVML is loaded with dlopen: no build-time dependency,
 * and a machine without the NVIDIA driver only logs one line.
 */
#include "producer/sampler.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME_MAX_LEN 96
#define PATH_LEN 384
#define MAX_ENTRIES 64 /* per directory scanned */
#define MAX_NVML 16

typedef enum src_kind {
    K_FILE,     /* one number, times scale */
    K_POWER_VI, /* |current_now| x voltage_now, times scale */
    K_RSS,      /* /proc/self/statm resident pages, in MiB */
    K_CPU,      /* /proc/self/stat utime+stime over wall time, percent */
    K_NVML
} src_kind;

typedef enum nv_what {
    NV_TEMP,
    NV_SM_CLOCK,
    NV_POWER,
    NV_POWER_LIMIT,
    NV_UTIL,
    NV_MEM_USED,
    NV_THROTTLE_POWER,
    NV_THROTTLE_THERMAL,
    NV_THROTTLE_HW
} nv_what;

typedef struct src {
    src_kind kind;
    char name[NAME_MAX_LEN];
    uint32_t id; /* the producer's name id, cached by its callback */
    char path[PATH_LEN];
    char path2[PATH_LEN];
    double scale;
    unsigned dev; /* NVML device index */
    nv_what what;
    int dead;
} src;

/* NVML, declared here (nvml.h is never needed to build). Handles are
 * pointers to an opaque struct; every call returns 0 on success. */
typedef struct nv_memory {
    unsigned long long total, free, used;
} nv_memory;
typedef struct nv_utilization {
    unsigned gpu, memory;
} nv_utilization;
typedef int (*nv_void_fn)(void);
typedef int (*nv_count_fn)(unsigned *);
typedef int (*nv_handle_fn)(unsigned, void **);
typedef int (*nv_sensor_fn)(void *, int, unsigned *);
typedef int (*nv_uint_fn)(void *, unsigned *);
typedef int (*nv_u64_fn)(void *, unsigned long long *);
typedef int (*nv_mem_fn)(void *, nv_memory *);
typedef int (*nv_util_fn)(void *, nv_utilization *);

#define NV_TEMPERATURE_GPU 0
#define NV_CLOCK_SM 1
/* nvmlClocksThrottleReasons / nvmlClocksEventReasons bits */
#define NV_R_SW_POWER_CAP 0x4ull
#define NV_R_HW_SLOWDOWN 0x8ull
#define NV_R_SW_THERMAL 0x20ull
#define NV_R_HW_THERMAL 0x40ull
#define NV_R_HW_POWER_BRAKE 0x80ull

typedef struct nvml {
    void *lib;
    nv_void_fn shutdown;
    nv_sensor_fn temperature;
    nv_sensor_fn clock;
    nv_uint_fn power, power_limit;
    nv_u64_fn reasons;
    nv_mem_fn memory;
    nv_util_fn utilization;
    void *dev[MAX_NVML];
    unsigned ndev;
    /* one reasons read per device per sample */
    unsigned long long reasons_v[MAX_NVML];
    uint64_t reasons_seq[MAX_NVML];
    int reasons_ok[MAX_NVML];
} nvml;

struct cap__sampler {
    src *v;
    size_t n, cap;
    char root[PATH_LEN];
    int test_root;
    cap__sample_log_fn log;
    void *log_user;
    long page_bytes, clk_tck;
    double cpu_prev_s; /* utime + stime at the previous sample */
    uint64_t mono_prev; /* ...and when it was read */
    uint64_t seq; /* samples taken */
    nvml nv;
};

static void slog(cap__sampler *s, const char *fmt, ...)
{
    if (!s->log)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    s->log(s->log_user, line);
}

/* ---- reading files ---------------------------------------------------- */

/* Up to size-1 bytes of the file at path; -1 (errno set) when unreadable
 * or empty. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t k;
    do
        k = read(fd, buf, size - 1);
    while (k < 0 && errno == EINTR);
    int e = errno;
    close(fd);
    if (k <= 0) {
        errno = k < 0 ? e : ENODATA;
        return -1;
    }
    buf[k] = 0;
    return k;
}

/* The number a sysfs file holds; -1 (errno set) when it holds none. */
static int read_number(const char *path, double *out)
{
    char buf[64];
    if (read_small(path, buf, sizeof buf) < 0)
        return -1;
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end == buf || errno || !isfinite(v)) {
        errno = EINVAL;
        return -1;
    }
    *out = v;
    return 0;
}

/* First line of a text file, trimmed; -1 when unreadable. */
static int read_word(const char *path, char *out, size_t size)
{
    if (read_small(path, out, size) < 0)
        return -1;
    out[strcspn(out, "\r\n")] = 0;
    size_t n = strlen(out);
    while (n && isspace((unsigned char)out[n - 1]))
        out[--n] = 0;
    return n ? 0 : -1;
}

/* A name part: lower case letters, digits and '_' only. */
static void sanitize(char *dst, size_t size, const char *src_)
{
    size_t k = 0;
    for (const char *c = src_; *c && k + 1 < size; c++) {
        unsigned char ch = (unsigned char)*c;
        dst[k++] = isalnum(ch) ? (char)tolower(ch) : '_';
    }
    dst[k] = 0;
    if (!k && size > 1)
        snprintf(dst, size, "unknown");
}

/* a/b/c into out; 0 when it did not fit (then the path reads nothing) */
static int path3(char *out, size_t size, const char *a, const char *b,
                 const char *c)
{
    int k = snprintf(out, size, "%s/%s/%s", a, b, c);
    if (k < 0 || (size_t)k >= size) {
        out[0] = 0;
        return 0;
    }
    return 1;
}

static int natural_cmp(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    size_t px = strcspn(x, "0123456789"), py = strcspn(y, "0123456789");
    int c = px == py ? strncmp(x, y, px) : strcmp(x, y);
    if (c || px != py)
        return c;
    unsigned long nx = strtoul(x + px, NULL, 10), ny = strtoul(y + py, NULL, 10);
    return nx < ny ? -1 : nx > ny ? 1 : strcmp(x, y);
}

/* Entries of dir starting with prefix, in natural order (policy2 before
 * policy10). Returns the count (at most MAX_ENTRIES); names are freed by
 * free_list. -1 when the directory cannot be opened. */
static int list_dir(const char *dir, const char *prefix, char **names)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    size_t pl = strlen(prefix);
    struct dirent *e;
    while (n < MAX_ENTRIES && (e = readdir(d))) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, pl) != 0)
            continue;
        char *c = strdup(e->d_name);
        if (c)
            names[n++] = c;
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, natural_cmp);
    return n;
}

static void free_list(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
}

/* root + path */
static void at(const cap__sampler *s, char *out, size_t size, const char *fmt,
               ...)
{
    size_t k = (size_t)snprintf(out, size, "%s", s->root);
    if (k >= size)
        k = size - 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out + k, size - k, fmt, ap);
    va_end(ap);
}

static int has_name(const cap__sampler *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i].name, name) == 0)
            return 1;
    return 0;
}

/* Append a source; returns it, or NULL when out of memory or the name is
 * taken. */
static src *add(cap__sampler *s, src_kind kind, const char *name)
{
    if (has_name(s, name))
        return NULL;
    if (s->n == s->cap) {
        size_t c = s->cap ? s->cap * 2 : 32;
        src *v = realloc(s->v, c * sizeof *v);
        if (!v)
            return NULL;
        s->v = v;
        s->cap = c;
    }
    src *x = &s->v[s->n++];
    memset(x, 0, sizeof *x);
    x->kind = kind;
    x->scale = 1;
    snprintf(x->name, sizeof x->name, "%s", name);
    return x;
}

/* A file source, added only when it reads now. */
static int add_file(cap__sampler *s, const char *name, const char *path,
                    double scale)
{
    double v;
    if (read_number(path, &v) != 0)
        return 0;
    src *x = add(s, K_FILE, name);
    if (!x)
        return 0;
    snprintf(x->path, sizeof x->path, "%s", path);
    x->scale = scale;
    return 1;
}

/* ---- discovery ------------------------------------------------------- */

static int find_cpufreq(cap__sampler *s)
{
    char dir[PATH_LEN], path[PATH_LEN], name[NAME_MAX_LEN];
    char *ent[MAX_ENTRIES];
    at(s, dir, sizeof dir, "/sys/devices/system/cpu/cpufreq");
    int n = list_dir(dir, "policy", ent);
    int found = 0;
    for (int i = 0; i < n; i++) {
        (void)path3(path, sizeof path, dir, ent[i], "scaling_cur_freq");
        snprintf(name, sizeof name, "cpu%s.freq_mhz", ent[i] + 6);
        found += add_file(s, name, path, 1e-3); /* kHz */
    }
    free_list(ent, n > 0 ? n : 0);
    if (!found)
        slog(s, "device sampler: no CPU clock under %s (cpufreq): skipped", dir);
    return found;
}

static int find_thermal(cap__sampler *s)
{
    char dir[PATH_LEN], path[PATH_LEN], type[64], part[64],
        name[NAME_MAX_LEN];
    char *ent[MAX_ENTRIES];
    at(s, dir, sizeof dir, "/sys/class/thermal");
    int n = list_dir(dir, "thermal_zone", ent);
    int found = 0;
    for (int i = 0; i < n; i++) {
        (void)path3(path, sizeof path, dir, ent[i], "type");
        if (read_word(path, type, sizeof type) != 0)
            snprintf(type, sizeof type, "%s", ent[i]);
        sanitize(part, sizeof part, type);
        snprintf(name, sizeof name, "thermal.%s.temp_c", part);
        if (has_name(s, name)) /* two zones of one type */
            snprintf(name, sizeof name, "thermal.%s_%s.temp_c", part,
                     ent[i] + 12);
        (void)path3(path, sizeof path, dir, ent[i], "temp");
        found += add_file(s, name, path, 1e-3); /* millidegrees */
    }
    free_list(ent, n > 0 ? n : 0);
    if (!found)
        slog(s, "device sampler: no thermal zone under %s: skipped", dir);
    return found;
}

static int find_power(cap__sampler *s)
{
    char dir[PATH_LEN], path[PATH_LEN], path2[PATH_LEN], part[64],
        name[NAME_MAX_LEN];
    char *ent[MAX_ENTRIES];
    at(s, dir, sizeof dir, "/sys/class/power_supply");
    int n = list_dir(dir, "", ent);
    int found = 0;
    for (int i = 0; i < n; i++) {
        sanitize(part, sizeof part, ent[i]);
        snprintf(name, sizeof name, "power.%s.power_w", part);
        (void)path3(path, sizeof path, dir, ent[i], "power_now");
        double a, b;
        if (add_file(s, name, path, 1e-6)) { /* microwatts */
            found++;
        } else {
            (void)path3(path, sizeof path, dir, ent[i], "current_now");
            (void)path3(path2, sizeof path2, dir, ent[i], "voltage_now");
            src *x;
            if (read_number(path, &a) == 0 && read_number(path2, &b) == 0 &&
                (x = add(s, K_POWER_VI, name))) {
                snprintf(x->path, sizeof x->path, "%s", path);
                snprintf(x->path2, sizeof x->path2, "%s", path2);
                x->scale = 1e-12; /* microamps x microvolts */
                found++;
            }
        }
        snprintf(name, sizeof name, "power.%s.capacity_pct", part);
        (void)path3(path, sizeof path, dir, ent[i], "capacity");
        found += add_file(s, name, path, 1);
        snprintf(name, sizeof name, "power.%s.temp_c", part);
        (void)path3(path, sizeof path, dir, ent[i], "temp");
        found += add_file(s, name, path, 0.1); /* tenths of a degree */
    }
    free_list(ent, n > 0 ? n : 0);
    if (!found)
        slog(s, "device sampler: no battery or power reading under %s: "
                "skipped",
             dir);
    return found;
}

static const char *const gpu_drivers[] = {"amdgpu", "radeon",  "i915",
                                          "xe",     "nouveau", "msm",
                                          "panfrost", "lima",   "adreno"};

static int is_gpu_driver(const char *name)
{
    for (size_t i = 0; i < sizeof gpu_drivers / sizeof gpu_drivers[0]; i++)
        if (strncmp(name, gpu_drivers[i], strlen(gpu_drivers[i])) == 0)
            return 1;
    return 0;
}

static int find_gpu_sysfs(cap__sampler *s)
{
    char dir[PATH_LEN], path[PATH_LEN], drv[64], part[64], name[NAME_MAX_LEN];
    char *ent[MAX_ENTRIES];
    int found = 0;
    /* hwmon: GPU drivers' temperature, power and clock; CPU sensors'
     * temperature */
    at(s, dir, sizeof dir, "/sys/class/hwmon");
    int n = list_dir(dir, "hwmon", ent);
    for (int i = 0; i < n; i++) {
        (void)path3(path, sizeof path, dir, ent[i], "name");
        if (read_word(path, drv, sizeof drv) != 0)
            continue;
        sanitize(part, sizeof part, drv);
        int gpu = is_gpu_driver(part);
        const char *pre = gpu ? "gpu" : "hwmon";
        snprintf(name, sizeof name, "%s.%s.temp_c", pre, part);
        if (has_name(s, name))
            snprintf(name, sizeof name, "%s.%s_%s.temp_c", pre, part,
                     ent[i] + 5);
        (void)path3(path, sizeof path, dir, ent[i], "temp1_input");
        found += add_file(s, name, path, 1e-3);
        if (!gpu)
            continue;
        snprintf(name, sizeof name, "gpu.%s.power_w", part);
        (void)path3(path, sizeof path, dir, ent[i], "power1_average");
        if (!add_file(s, name, path, 1e-6)) {
            (void)path3(path, sizeof path, dir, ent[i], "power1_input");
            found += add_file(s, name, path, 1e-6);
        } else {
            found++;
        }
        snprintf(name, sizeof name, "gpu.%s.freq_mhz", part);
        (void)path3(path, sizeof path, dir, ent[i], "freq1_input");
        found += add_file(s, name, path, 1e-6); /* Hz */
    }
    free_list(ent, n > 0 ? n : 0);
    /* devfreq: GPU devices (Adreno's kgsl-3d0, Mali, "*.gpu") */
    at(s, dir, sizeof dir, "/sys/class/devfreq");
    n = list_dir(dir, "", ent);
    for (int i = 0; i < n; i++) {
        if (!strstr(ent[i], "gpu") && !strstr(ent[i], "kgsl") &&
            !strstr(ent[i], "mali") && !strstr(ent[i], "3d"))
            continue;
        sanitize(part, sizeof part, ent[i]);
        snprintf(name, sizeof name, "gpu.%s.freq_mhz", part);
        (void)path3(path, sizeof path, dir, ent[i], "cur_freq");
        found += add_file(s, name, path, 1e-6);
    }
    free_list(ent, n > 0 ? n : 0);
    /* i915: the actual GT frequency */
    at(s, dir, sizeof dir, "/sys/class/drm");
    n = list_dir(dir, "card", ent);
    for (int i = 0; i < n; i++) {
        if (strchr(ent[i], '-')) /* connectors: card0-HDMI-A-1 */
            continue;
        snprintf(name, sizeof name, "gpu.%s.freq_mhz", ent[i]);
        (void)path3(path, sizeof path, dir, ent[i], "gt_act_freq_mhz");
        found += add_file(s, name, path, 1);
    }
    free_list(ent, n > 0 ? n : 0);
    if (!found)
        slog(s, "device sampler: no GPU clock or temperature under %s/sys "
                "(hwmon, devfreq, drm): skipped",
             s->root);
    return found;
}

/* utime + stime of the process in seconds, from /proc/self/stat. */
static int read_cpu_seconds(const cap__sampler *s, const char *path,
                            double *out)
{
    char buf[1024];
    char *p;
    unsigned long ut, st;
    if (read_small(path, buf, sizeof buf) < 0)
        return -1;
    if (!(p = strrchr(buf, ')')) ||
        sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
               &ut, &st) != 2) {
        errno = EINVAL;
        return -1;
    }
    *out = (double)(ut + st) / (double)s->clk_tck;
    return 0;
}

static int find_proc(cap__sampler *s, uint64_t mono_ns)
{
    char path[PATH_LEN], buf[256];
    int found = 0;
    src *x;
    at(s, path, sizeof path, "/proc/self/statm");
    if (read_small(path, buf, sizeof buf) >= 0 &&
        (x = add(s, K_RSS, "proc.rss_mib"))) {
        snprintf(x->path, sizeof x->path, "%s", path);
        found++;
    } else {
        slog(s, "device sampler: cannot read %s: %s; proc.rss_mib skipped",
             path, strerror(errno));
    }
    at(s, path, sizeof path, "/proc/self/stat");
    if (read_cpu_seconds(s, path, &s->cpu_prev_s) == 0 &&
        (x = add(s, K_CPU, "proc.cpu_pct"))) {
        snprintf(x->path, sizeof x->path, "%s", path);
        s->mono_prev = mono_ns;
        found++;
    } else {
        slog(s, "device sampler: cannot read %s: %s; proc.cpu_pct skipped",
             path, strerror(errno));
    }
    return found;
}

/* ---- NVML --------------------------------------------------------------- */

static void *sym2(void *lib, const char *a, const char *b)
{
    void *f = dlsym(lib, a);
    return f || !b ? f : dlsym(lib, b);
}

static int find_nvml(cap__sampler *s)
{
    nvml *nv = &s->nv;
    if (s->test_root) {
        slog(s, "device sampler: NVML not loaded (a test root is set)");
        return 0;
    }
    nv->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nv->lib) {
        slog(s, "device sampler: NVML not loaded (libnvidia-ml.so.1: not "
                "found): NVIDIA GPUs not sampled");
        return 0;
    }
    nv_void_fn init = (nv_void_fn)sym2(nv->lib, "nvmlInit_v2", "nvmlInit");
    nv_count_fn count = (nv_count_fn)sym2(nv->lib, "nvmlDeviceGetCount_v2",
                                          "nvmlDeviceGetCount");
    nv_handle_fn handle = (nv_handle_fn)sym2(
        nv->lib, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    nv->shutdown = (nv_void_fn)sym2(nv->lib, "nvmlShutdown", NULL);
    nv->temperature = (nv_sensor_fn)sym2(nv->lib, "nvmlDeviceGetTemperature", NULL);
    nv->clock = (nv_sensor_fn)sym2(nv->lib, "nvmlDeviceGetClockInfo", NULL);
    nv->power = (nv_uint_fn)sym2(nv->lib, "nvmlDeviceGetPowerUsage", NULL);
    nv->power_limit =
        (nv_uint_fn)sym2(nv->lib, "nvmlDeviceGetEnforcedPowerLimit", NULL);
    nv->reasons = (nv_u64_fn)sym2(nv->lib, "nvmlDeviceGetCurrentClocksEventReasons",
                                  "nvmlDeviceGetCurrentClocksThrottleReasons");
    nv->memory = (nv_mem_fn)sym2(nv->lib, "nvmlDeviceGetMemoryInfo", NULL);
    nv->utilization =
        (nv_util_fn)sym2(nv->lib, "nvmlDeviceGetUtilizationRates", NULL);
    unsigned ndev = 0;
    int rc = -1;
    if (!init || !count || !handle || (rc = init()) != 0 || count(&ndev) != 0) {
        slog(s, "device sampler: NVML found but not usable (%s): NVIDIA GPUs "
                "not sampled",
             !init || !count || !handle ? "symbols missing" : "init failed");
        if (rc == 0 && nv->shutdown)
            nv->shutdown();
        dlclose(nv->lib);
        memset(nv, 0, sizeof *nv);
        return 0;
    }
    if (ndev > MAX_NVML)
        ndev = MAX_NVML;
    int found = 0;
    for (unsigned d = 0; d < ndev; d++) {
        if (handle(d, &nv->dev[nv->ndev]) != 0)
            continue;
        unsigned k = nv->ndev++;
        static const struct {
            nv_what what;
            const char *suffix;
        } whats[] = {
            {NV_TEMP, "temp_c"},
            {NV_SM_CLOCK, "sm_freq_mhz"},
            {NV_POWER, "power_w"},
            {NV_POWER_LIMIT, "power_limit_w"},
            {NV_UTIL, "util_pct"},
            {NV_MEM_USED, "mem_used_mib"},
            {NV_THROTTLE_POWER, "throttle_power_flag"},
            {NV_THROTTLE_THERMAL, "throttle_thermal_flag"},
            {NV_THROTTLE_HW, "throttle_hw_slowdown_flag"},
        };
        for (size_t w = 0; w < sizeof whats / sizeof whats[0]; w++) {
            char name[NAME_MAX_LEN];
            snprintf(name, sizeof name, "gpu%u.%s", d, whats[w].suffix);
            src *x = add(s, K_NVML, name);
            if (!x)
                continue;
            x->dev = k;
            x->what = whats[w].what;
            found++;
        }
    }
    if (!found) {
        slog(s, "device sampler: NVML sees no GPU: NVIDIA GPUs not sampled");
        if (nv->shutdown)
            nv->shutdown();
        dlclose(nv->lib);
        memset(nv, 0, sizeof *nv);
    }
    return found;
}

/* 0 and the value, or -1 when NVML cannot give it. */
static int nvml_read(cap__sampler *s, const src *x, double *out)
{
    nvml *nv = &s->nv;
    void *d = nv->dev[x->dev];
    unsigned u = 0;
    switch (x->what) {
    case NV_TEMP:
        if (!nv->temperature || nv->temperature(d, NV_TEMPERATURE_GPU, &u))
            return -1;
        *out = u;
        return 0;
    case NV_SM_CLOCK:
        if (!nv->clock || nv->clock(d, NV_CLOCK_SM, &u))
            return -1;
        *out = u;
        return 0;
    case NV_POWER:
        if (!nv->power || nv->power(d, &u))
            return -1;
        *out = u * 1e-3; /* milliwatts */
        return 0;
    case NV_POWER_LIMIT:
        if (!nv->power_limit || nv->power_limit(d, &u))
            return -1;
        *out = u * 1e-3;
        return 0;
    case NV_UTIL: {
        nv_utilization ut;
        if (!nv->utilization || nv->utilization(d, &ut))
            return -1;
        *out = ut.gpu;
        return 0;
    }
    case NV_MEM_USED: {
        nv_memory m;
        if (!nv->memory || nv->memory(d, &m))
            return -1;
        *out = (double)m.used / (1024.0 * 1024.0);
        return 0;
    }
    case NV_THROTTLE_POWER:
    case NV_THROTTLE_THERMAL:
    case NV_THROTTLE_HW: {
        unsigned k = x->dev;
        if (nv->reasons_seq[k] != s->seq) {
            nv->reasons_seq[k] = s->seq;
            nv->reasons_ok[k] = nv->reasons && nv->reasons(d, &nv->reasons_v[k]) == 0;
        }
        if (!nv->reasons_ok[k])
            return -1;
        unsigned long long r = nv->reasons_v[k];
        unsigned long long mask =
            x->what == NV_THROTTLE_POWER     ? NV_R_SW_POWER_CAP | NV_R_HW_POWER_BRAKE
            : x->what == NV_THROTTLE_THERMAL ? NV_R_SW_THERMAL | NV_R_HW_THERMAL
                                             : NV_R_HW_SLOWDOWN;
        *out = (r & mask) ? 1.0 : 0.0;
        return 0;
    }
    }
    return -1;
}

/* ---- public ------------------------------------------------------------ */

cap__sampler *cap__sampler_new(const char *root, uint64_t mono_ns,
                               cap__sample_log_fn log, void *log_user)
{
    cap__sampler *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->log = log;
    s->log_user = log_user;
    if (root && *root) {
        snprintf(s->root, sizeof s->root, "%s", root);
        size_t k = strlen(s->root);
        while (k > 1 && s->root[k - 1] == '/')
            s->root[--k] = 0;
        s->test_root = 1;
    }
    s->page_bytes = sysconf(_SC_PAGESIZE);
    if (s->page_bytes <= 0)
        s->page_bytes = 4096;
    s->clk_tck = sysconf(_SC_CLK_TCK);
    if (s->clk_tck <= 0)
        s->clk_tck = 100;
    int cpu = find_cpufreq(s);
    int th = find_thermal(s);
    int pw = find_power(s);
    int gpu = find_gpu_sysfs(s);
    int pr = find_proc(s, mono_ns);
    int nv = find_nvml(s);
    slog(s,
         "device sampler: %zu counters (CPU clocks %d, thermal %d, power %d, "
         "GPU sysfs %d, process %d, NVML %d)",
         s->n, cpu, th, pw, gpu, pr, nv);
    return s;
}

static void kill_src(cap__sampler *s, src *x, int err)
{
    x->dead = 1;
    slog(s, "device sampler: cannot read %s: %s; %s skipped from now on",
         x->kind == K_NVML ? "NVML" : x->path, err ? strerror(err) : "no value",
         x->name);
}

size_t cap__sampler_sample(cap__sampler *s, uint64_t mono_ns,
                           cap__sample_fn fn, void *user)
{
    if (!s)
        return 0;
    s->seq++;
    size_t out = 0;
    for (size_t i = 0; i < s->n; i++) {
        src *x = &s->v[i];
        if (x->dead)
            continue;
        double v = 0, b = 0;
        char buf[1024];
        switch (x->kind) {
        case K_FILE:
            if (read_number(x->path, &v) != 0) {
                kill_src(s, x, errno);
                continue;
            }
            v *= x->scale;
            break;
        case K_POWER_VI:
            if (read_number(x->path, &v) != 0 || read_number(x->path2, &b) != 0) {
                kill_src(s, x, errno);
                continue;
            }
            v = fabs(v) * b * x->scale;
            break;
        case K_RSS: {
            unsigned long size, res;
            if (read_small(x->path, buf, sizeof buf) < 0 ||
                sscanf(buf, "%lu %lu", &size, &res) != 2) {
                kill_src(s, x, errno);
                continue;
            }
            v = (double)res * (double)s->page_bytes / (1024.0 * 1024.0);
            break;
        }
        case K_CPU: {
            double cpu_s;
            if (read_cpu_seconds(s, x->path, &cpu_s) != 0) {
                kill_src(s, x, errno);
                continue;
            }
            if (mono_ns <= s->mono_prev)
                continue; /* no time passed: no rate */
            v = (cpu_s - s->cpu_prev_s) /
                ((double)(mono_ns - s->mono_prev) * 1e-9) * 100.0;
            s->cpu_prev_s = cpu_s;
            s->mono_prev = mono_ns;
            break;
        }
        case K_NVML:
            if (nvml_read(s, x, &v) != 0) {
                kill_src(s, x, 0);
                continue;
            }
            break;
        }
        fn(user, x->name, &x->id, v);
        out++;
    }
    return out;
}

size_t cap__sampler_count(const cap__sampler *s)
{
    size_t k = 0;
    for (size_t i = 0; s && i < s->n; i++)
        k += !s->v[i].dead;
    return k;
}

void cap__sampler_free(cap__sampler *s)
{
    if (!s)
        return;
    if (s->nv.lib) {
        if (s->nv.shutdown)
            s->nv.shutdown();
        dlclose(s->nv.lib);
    }
    free(s->v);
    free(s);
}
