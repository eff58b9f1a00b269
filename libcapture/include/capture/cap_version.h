/*
 * cap_version.h - which libcapture a program was compiled against, and
 * which it runs with.
 *
 * The macros are the headers' version (test them with #if); cap_version()
 * is the library's, so a program linked against a shared libcapture can
 * compare the two. Versions follow semantic versioning; until 1.0 a minor
 * release may change the API, and the shared library's soname
 * (libcapture.so.N) changes with every incompatible ABI change.
 */
#ifndef CAP_VERSION_H
#define CAP_VERSION_H

#include "cap_export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CAP_VERSION_MAJOR 0
#define CAP_VERSION_MINOR 1
#define CAP_VERSION_PATCH 0
/* "MAJOR.MINOR.PATCH" */
#define CAP_VERSION_STRING "0.1.0"
/* One comparable number: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define CAP_VERSION_NUMBER                                                     \
    (CAP_VERSION_MAJOR * 10000 + CAP_VERSION_MINOR * 100 + CAP_VERSION_PATCH)

/* The running library's version, "MAJOR.MINOR.PATCH". A static string:
 * never free it. Cannot fail. */
CAP_API const char *cap_version(void);

#ifdef __cplusplus
}
#endif
#endif
