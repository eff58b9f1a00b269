/*
 * tool_exit.h - the one exit-status table of every libcapture tool.
 *
 * read_capture, capture_diff, capture_convert and capture_remote all exit
 * with one of these four statuses, and mean the same by each. Names and
 * messages come from one list (TOOL_EXIT_LIST), so the enum, the --help
 * text (and so the man pages, made from --help by help2man) and
 * docs/EXIT-CODES.md cannot drift apart.
 *
 * When several apply to one run (a regression found and the SVG picture
 * not written), the larger status wins: see tool_exit_worst.
 */
#ifndef TOOL_EXIT_H
#define TOOL_EXIT_H

#include <stdio.h>

#include <capture/cap_result.h>

/* X(enum name, status, what it means: one line of --help) */
#define TOOL_EXIT_LIST(X)                                                      \
    X(TOOL_EXIT_OK, 0, "done: the report or output was written")              \
    X(TOOL_EXIT_FINDING, 1, "a finding that gates: capture_diff found a "      \
                            "regression")                                      \
    X(TOOL_EXIT_USAGE, 2, "usage error or unreadable input (a bad option, a "  \
                          "missing, damaged or unreachable input): nothing "   \
                          "written")                                           \
    X(TOOL_EXIT_INCOMPLETE, 3, "written, but with warnings under --strict, "   \
                               "or with output or I/O failing (a file not "    \
                               "written, a recording cut short)")

typedef enum tool_exit {
#define TOOL__EXIT_ENUM(name, status, msg) name = status,
    TOOL_EXIT_LIST(TOOL__EXIT_ENUM)
#undef TOOL__EXIT_ENUM
} tool_exit;

/* The enumerator's name ("TOOL_EXIT_USAGE"), or "TOOL_EXIT_UNKNOWN" for a
 * value outside the list. A static string. */
const char *tool_exit_name(tool_exit e);

/* The one-line meaning of e, as --help states it; "unknown exit status"
 * outside the list. A static string. */
const char *tool_exit_message(tool_exit e);

/* Print the table as the last paragraph of a tool's --help:
 * "Exit status:" then one indented line per status, wrapped at 79
 * columns. */
void tool_exit_help(FILE *f);

/* The larger of two statuses (the one to report when both apply). */
static inline tool_exit tool_exit_worst(tool_exit a, tool_exit b)
{
    return a > b ? a : b;
}

/* The status of a step that read an input and wrote an output, from the
 * cap_result it returned (the converters of tools/convert/cvt.h):
 * CAP_OK is TOOL_EXIT_OK; CAP_E_IO and CAP_E_NOMEM (the output or the
 * system failed) are TOOL_EXIT_INCOMPLETE; any other error is the input's
 * (not a capture, corrupt, cut short, a newer version...):
 * TOOL_EXIT_USAGE. */
tool_exit tool_exit_of_result(cap_result r);

#endif
