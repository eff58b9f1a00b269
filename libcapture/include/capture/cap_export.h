/* cap_export.h - symbol visibility for libcapture's public API. */
#ifndef CAP_EXPORT_H
#define CAP_EXPORT_H

#if defined(CAP_BUILDING_LIBRARY) && defined(__GNUC__)
#define CAP_API __attribute__((visibility("default")))
#else
#define CAP_API
#endif

#endif
