/* version.c - the version of the library a program runs with. */
#include "capture/cap_version.h"

const char *cap_version(void)
{
    return CAP_VERSION_STRING;
}
