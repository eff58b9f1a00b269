/*
 * cap_result.h - the one error channel of libcapture.
 *
 * Every fallible call returns a cap_result. Zero is success, positive values
 * are non-error outcomes (CAP_DONE), negative values are errors. Names and
 * messages come from one list (CAP_RESULT_LIST) so they cannot drift.
 */
#ifndef CAP_RESULT_H
#define CAP_RESULT_H

#include "cap_export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(enum name, value, message) */
#define CAP_RESULT_LIST(X)                                                     \
    X(CAP_OK, 0, "success")                                                    \
    X(CAP_DONE, 1, "no more events")                                           \
    X(CAP_E_NOT_CAPTURE, -1, "not a capture file (bad magic)")                 \
    X(CAP_E_CORRUPT, -2, "corrupt data (checksum or encoding error)")          \
    X(CAP_E_TRUNCATED, -3, "file cut short (no footer; recording stopped "     \
                           "before close)")                                    \
    X(CAP_E_VERSION, -4, "unsupported format version")                         \
    X(CAP_E_IO, -5, "input/output error")                                      \
    X(CAP_E_NOMEM, -6, "out of memory")                                        \
    X(CAP_E_MISUSE, -7, "invalid argument or call order")                      \
    X(CAP_E_LIMIT, -8, "a limit of the format was exceeded")                   \
    X(CAP_E_STOPPED, -9, "recording stopped after an earlier error")         \
    X(CAP_E_CHANGED, -10, "the file changed while it was being read "         \
                          "(replaced, cut short or rewritten)")

typedef enum cap_result {
#define CAP__RESULT_ENUM(name, value, msg) name = value,
    CAP_RESULT_LIST(CAP__RESULT_ENUM)
#undef CAP__RESULT_ENUM
} cap_result;

/* The enumerator's name ("CAP_E_CORRUPT"), or "CAP_E_UNKNOWN" for a value
 * outside the list. Returns a static string: never free it. */
CAP_API const char *cap_result_name(cap_result r);

/* A one-line human message for r, lower case, no trailing period. Static
 * string: never free it. */
CAP_API const char *cap_result_message(cap_result r);

#ifdef __cplusplus
}
#endif
#endif
