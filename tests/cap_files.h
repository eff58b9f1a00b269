/*
 * cap_files.h - call a function on every capture (*.cap) under a folder,
 * recursively (folders are names without a dot). For tests that check a
 * property on every fixture; cap_files_temp: an empty file of the test's
 * own to generate a capture into.
 */
#ifndef CAP_FILES_H
#define CAP_FILES_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void cap_files_walk(const char *dir, void (*fn)(const char *path))
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        size_t l = strlen(e->d_name);
        if (l > 4 && strcmp(e->d_name + l - 4, ".cap") == 0)
            fn(p);
        else if (!strchr(e->d_name, '.'))
            cap_files_walk(p, fn);
    }
    closedir(d);
}

/* Make an empty file /tmp/cap_<test>_XXXXXX, its name in path (at least
 * 64 bytes). Returns 0, or -1 when it cannot be made. The caller unlinks
 * it. */
static inline int cap_files_temp(char *path, size_t size, const char *test)
{
    if (snprintf(path, size, "/tmp/cap_%s_XXXXXX", test) >= (int)size)
        return -1;
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

#endif
