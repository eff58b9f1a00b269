/*
 * tool_version.h - `--version` for every tool, the same way.
 *
 * Called first in main, before the tool's own option parsing: any argument
 * "--version" (before a "--") prints "NAME (libcapture) VERSION" on stdout,
 * VERSION being the library's (cap_version()), and the tool exits 0.
 */
#ifndef TOOL_VERSION_H
#define TOOL_VERSION_H

#include <stdio.h>
#include <string.h>

#include <capture/cap_version.h>

#include "tool_exit.h"

/* 1 when argv asks for the version (it was printed: exit 0 if
 * tool_version_done() succeeds), 0 otherwise. */
static inline int tool_version(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            printf("%s (libcapture) %s\n", name, cap_version());
            return 1;
        }
    }
    return 0;
}

/* Exit status after tool_version printed: TOOL_EXIT_OK, or
 * TOOL_EXIT_INCOMPLETE when stdout failed. */
static inline int tool_version_done(void)
{
    return fflush(stdout) == 0 && !ferror(stdout) ? TOOL_EXIT_OK
                                                  : TOOL_EXIT_INCOMPLETE;
}

#endif
