/*
 * cap_files.h - call a function on every capture (*.cap) under a folder,
 * recursively (folders are names without a dot). For tests that check a
 * property on every fixture.
 */
#ifndef CAP_FILES_H
#define CAP_FILES_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>

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

#endif
