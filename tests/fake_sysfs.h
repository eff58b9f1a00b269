/*
 * fake_sysfs.h - a fake sysfs/procfs tree for the device sampler's tests
 * (the producer reads it when CAP__SAMPLE_ROOT names its root).
 *
 * fake_root() makes an empty tree under /tmp; fake_set() writes one file
 * (its folders made as needed; replaced whole, so a sample never reads it
 * half written); fake_remove_tree() deletes it all.
 */
#ifndef FAKE_SYSFS_H
#define FAKE_SYSFS_H

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A fresh empty root; the string lives in buf. NULL on failure. */
static inline char *fake_root(char *buf, size_t size)
{
    snprintf(buf, size, "/tmp/cap_fake_sysfs_XXXXXX");
    return mkdtemp(buf);
}

/* root/rel := the formatted text, with a newline. 0 on success. */
static inline int fake_set(const char *root, const char *rel, const char *fmt,
                           ...)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(path, 0755) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    /* written beside, then renamed over: a sampler reading the file at
     * that moment sees the old value or the new one, never an empty file */
    char tmp[520];
    snprintf(tmp, sizeof tmp, "%s.new", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    if (fclose(f) != 0)
        return -1;
    return rename(tmp, path);
}

static inline int fake_unlink_one(const char *p, const struct stat *sb,
                                  int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static inline void fake_remove_tree(const char *root)
{
    nftw(root, fake_unlink_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The scripted device: a CPU cluster clock, a SoC zone, a battery's
 * power; the process's RSS and CPU time. */
static inline int fake_device(const char *root, double cpu_mhz, double soc_c,
                              double battery_w)
{
    int r = 0;
    r |= fake_set(root, "sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq",
                  "%.0f", cpu_mhz * 1000);
    r |= fake_set(root, "sys/class/thermal/thermal_zone0/type", "soc");
    r |= fake_set(root, "sys/class/thermal/thermal_zone0/temp", "%.0f",
                  soc_c * 1000);
    r |= fake_set(root, "sys/class/power_supply/battery/power_now", "%.0f",
                  battery_w * 1e6);
    r |= fake_set(root, "proc/self/statm", "20000 12800 300 10 0 900 0");
    r |= fake_set(root, "proc/self/stat",
                  "4242 (game (main)) S 1 4242 4242 0 -1 4194560 100 0 0 0 "
                  "250 50 0 0 20 0 3 0 100 1000000 12800");
    return r;
}

#endif
