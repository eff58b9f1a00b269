/* tool_exit.c - names, messages and --help text of the exit table. */
#include "tool_exit.h"

#include <string.h>

const char *tool_exit_name(tool_exit e)
{
    switch (e) {
#define TOOL__EXIT_NAME(name, status, msg) case name: return #name;
        TOOL_EXIT_LIST(TOOL__EXIT_NAME)
#undef TOOL__EXIT_NAME
    }
    return "TOOL_EXIT_UNKNOWN";
}

const char *tool_exit_message(tool_exit e)
{
    switch (e) {
#define TOOL__EXIT_MSG(name, status, msg) case name: return msg;
        TOOL_EXIT_LIST(TOOL__EXIT_MSG)
#undef TOOL__EXIT_MSG
    }
    return "unknown exit status";
}

/* One status: "  N  " then the message, words wrapped at 79 columns with
 * the continuation lines under the message's first word. */
static void help_line(FILE *f, tool_exit e)
{
    const char *s = tool_exit_message(e);
    int col = fprintf(f, "  %d  ", (int)e);
    const int indent = col;
    while (*s) {
        size_t w = strcspn(s, " ");
        if (col > indent && col + 1 + (int)w > 79) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        fwrite(s, 1, w, f);
        col += (int)w;
        s += w;
        while (*s == ' ')
            s++;
    }
    fputc('\n', f);
}

void tool_exit_help(FILE *f)
{
    fputs("Exit status:\n", f);
#define TOOL__EXIT_HELP(name, status, msg) help_line(f, name);
    TOOL_EXIT_LIST(TOOL__EXIT_HELP)
#undef TOOL__EXIT_HELP
    fputs("When several apply, the larger status is given.\n", f);
}

tool_exit tool_exit_of_result(cap_result r)
{
    if (r == CAP_OK || r == CAP_DONE)
        return TOOL_EXIT_OK;
    if (r == CAP_E_IO || r == CAP_E_NOMEM)
        return TOOL_EXIT_INCOMPLETE;
    return TOOL_EXIT_USAGE;
}
