/* tool_args.c - the option walker and value parsers (tool_args.h). */
#include "tool_args.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tool_usage_error(const char *tool, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", tool);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return -1;
}

int tool_args_init(tool_args *a, const char *tool, int argc, char **argv,
                   const tool_opt *opts, size_t nopts)
{
    memset(a, 0, sizeof *a);
    a->tool = tool;
    a->argc = argc;
    a->argv = argv;
    a->opts = opts;
    a->nopts = nopts;
    a->i = 1;
    a->operands = calloc(argc > 0 ? (size_t)argc : 1, sizeof *a->operands);
    if (!a->operands)
        return tool_usage_error(tool, "out of memory");
    return 0;
}

void tool_args_free(tool_args *a)
{
    free(a->operands);
    a->operands = NULL;
    a->noperands = 0;
}

/* The option named s[0..len) (long) or the letter s[0] (len 0). */
static const tool_opt *find_opt(const tool_args *a, const char *s, size_t len,
                                int letter)
{
    for (size_t k = 0; k < a->nopts; k++) {
        const tool_opt *o = &a->opts[k];
        if (letter ? o->letter == *s
                   : strlen(o->name) == len && strncmp(o->name, s, len) == 0)
            return o;
    }
    return NULL;
}

int tool_args_next(tool_args *a)
{
    a->option = a->value = NULL;
    while (a->i < a->argc) {
        char *s = a->argv[a->i++];
        if (a->seen_split || s[0] != '-' || s[1] == '\0') {
            a->operands[a->noperands++] = s;
            continue;
        }
        if (strcmp(s, "--") == 0) {
            a->seen_split = 1;
            a->split = a->noperands;
            continue;
        }
        const tool_opt *o;
        const char *eq = NULL;
        if (s[1] == '-') {
            eq = strchr(s + 2, '=');
            size_t len = eq ? (size_t)(eq - (s + 2)) : strlen(s + 2);
            o = find_opt(a, s + 2, len, 0);
        } else {
            o = s[2] == '\0' ? find_opt(a, s + 1, 0, 1) : NULL;
        }
        a->option = s;
        if (!o)
            return tool_usage_error(a->tool, "unknown option '%s' (see --help)",
                                    s);
        if (o->takes_value) {
            if (eq)
                a->value = eq + 1;
            else if (a->i < a->argc)
                a->value = a->argv[a->i++];
            else
                return tool_usage_error(a->tool, "%s needs a value (see "
                                        "--help)", s);
        } else if (eq) {
            return tool_usage_error(a->tool, "--%s takes no value (see "
                                    "--help)", o->name);
        }
        return o->id;
    }
    if (!a->seen_split)
        a->split = a->noperands;
    return TOOL_ARGS_END;
}

/* ---- values ------------------------------------------------------------ */

/* "OPT needs ... in [min, max]" or ">= min" when max is not finite. */
static int range_error(const char *tool, const char *opt, const char *what,
                       double min, double max, const char *unit,
                       const char *s)
{
    if (isfinite(max))
        return tool_usage_error(tool, "%s needs %s in [%g, %g]%s, not '%s'",
                                opt, what, min, max, unit, s);
    return tool_usage_error(tool, "%s needs %s >= %g%s, not '%s'", opt, what,
                            min, unit, s);
}

/* strtod over all of s[0..) but for a suffix at *end; 0 or -1. */
static int read_double(const char *s, double *v, char **end)
{
    errno = 0;
    *v = strtod(s, end);
    return errno || *end == s || !isfinite(*v) ? -1 : 0;
}

int tool_parse_number(const char *tool, const char *opt, const char *s,
                      double min, double max, double *out)
{
    double v;
    char *end;
    if (read_double(s, &v, &end) != 0 || *end || !(v >= min) || !(v <= max))
        return range_error(tool, opt, "a number", min, max, "", s);
    *out = v;
    return 0;
}

int tool_parse_count(const char *tool, const char *opt, const char *s,
                     uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end || errno || v < min || v > max) {
        if (max == UINT64_MAX)
            return tool_usage_error(tool, "%s needs a whole number >= %llu, "
                                    "not '%s'", opt, (unsigned long long)min,
                                    s);
        return tool_usage_error(tool, "%s needs a whole number in [%llu, "
                                "%llu], not '%s'", opt,
                                (unsigned long long)min,
                                (unsigned long long)max, s);
    }
    *out = (uint64_t)v;
    return 0;
}

int tool_parse_seconds(const char *tool, const char *opt, const char *s,
                       double min, double max, double *out)
{
    static const struct { const char *unit; double scale; } units[] = {
        {"", 1}, {"s", 1}, {"ms", 1e-3}, {"min", 60}, {"h", 3600}};
    double v;
    char *end;
    if (read_double(s, &v, &end) == 0) {
        for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
            if (strcmp(end, units[k].unit) != 0)
                continue;
            v *= units[k].scale;
            if (v >= min && v <= max) {
                *out = v;
                return 0;
            }
            break;
        }
    }
    return range_error(tool, opt, "a duration", min, max,
                       " s (or a number with ms, s, min, h)", s);
}

int tool_parse_format_version(const char *tool, const char *opt,
                              const char *s, unsigned *major,
                              int *no_frame_list)
{
    static const struct { const char *name; unsigned major; int no_list; }
        versions[] = {{"1.1", 1, 0}, {"2.0", 2, 0}, {"3.0", 3, 1},
                      {"3.1", 3, 0}, {"4.0", 4, 0}};
    for (size_t k = 0; k < sizeof versions / sizeof versions[0]; k++) {
        if (strcmp(s, versions[k].name) == 0) {
            *major = versions[k].major;
            *no_frame_list = versions[k].no_list;
            return 0;
        }
    }
    return tool_usage_error(tool, "%s '%s': expected 1.1, 2.0, 3.0, 3.1 or 4.0",
                            opt, s);
}

/* The option as it names itself in messages: "--name" without "=VALUE". */
static const char *opt_name(const tool_args *a, char *buf, size_t n)
{
    const char *eq = strchr(a->option, '=');
    if (!eq)
        return a->option;
    snprintf(buf, n, "%.*s", (int)(eq - a->option), a->option);
    return buf;
}

int tool_args_number(const tool_args *a, double min, double max, double *out)
{
    char buf[64];
    return tool_parse_number(a->tool, opt_name(a, buf, sizeof buf), a->value,
                             min, max, out);
}

int tool_args_count(const tool_args *a, uint64_t min, uint64_t max,
                    uint64_t *out)
{
    char buf[64];
    return tool_parse_count(a->tool, opt_name(a, buf, sizeof buf), a->value,
                            min, max, out);
}

int tool_args_seconds(const tool_args *a, double min, double max, double *out)
{
    char buf[64];
    return tool_parse_seconds(a->tool, opt_name(a, buf, sizeof buf), a->value,
                              min, max, out);
}

int tool_args_format_version(const tool_args *a, unsigned *major,
                             int *no_frame_list)
{
    char buf[64];
    return tool_parse_format_version(a->tool, opt_name(a, buf, sizeof buf),
                                     a->value, major, no_frame_list);
}
