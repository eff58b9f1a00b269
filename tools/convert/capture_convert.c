/*
 * capture_convert - convert between captures and the formats of the table
 * below (Chrome trace JSON, folded stacks, puffin, SVG flame graphs).
 *
 *   capture_convert [options] IN OUT
 *
 * The command line is parsed into a `cli` value first (cli_parse, no side
 * effects but messages), then run (cli_run): one row of cvt_formats per
 * format, {name, extensions, import, export}. Conversions between two
 * formats other than a capture go through a temporary capture (JSON ->
 * folded: JSON -> .cap -> folded). Exit status: tools/common/tool_exit.h.
 */
#include "cvt.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool_args.h"
#include "tool_exit.h"
#include "tool_source.h"
#include "tool_version.h"

#define TOOL "capture_convert"

/* The formats: one row each. The first is the capture itself. */
static const cvt_format cvt_formats[] = {
    {"cap", ".cap", cvt_cap_to_cap, cvt_cap_to_cap},
    {"json", ".json .json.gz", cvt_chrome_to_cap, cvt_cap_to_chrome},
    {"folded", ".folded", NULL, cvt_cap_to_folded},
    {"puffin", ".puffin", cvt_puffin_to_cap, NULL},
    {"svg", ".svg", NULL, cvt_cap_to_svg},
    {"perfetto", ".pftrace .perfetto-trace", NULL, cvt_cap_to_perfetto},
};
#define NFORMATS (sizeof cvt_formats / sizeof cvt_formats[0])
#define CAP_FORMAT (&cvt_formats[0])

#define CVT_MAX_GPU_THREADS 16

typedef struct cli {
    const char *in, *out;
    const cvt_format *from, *to;
    cvt_options opt;
    const char *gpu[CVT_MAX_GPU_THREADS]; /* --gpu-thread, in order */
    size_t n_gpu;
    cvt_slice slice;         /* --frames, --seconds, --slowest */
    int context_given;
    char slice_text[96];
    int help;
} cli;

/* The names of the formats read (reading 1) or written, "a, b or c". */
static void format_list(FILE *f, int reading, const char *sep)
{
    size_t n = 0, k = 0;
    for (size_t i = 0; i < NFORMATS; i++)
        n += (reading ? cvt_formats[i].import : cvt_formats[i].export) != NULL;
    for (size_t i = 0; i < NFORMATS; i++) {
        if (!(reading ? cvt_formats[i].import : cvt_formats[i].export))
            continue;
        if (k)
            fputs(k + 1 == n ? " or " : sep, f);
        fputs(cvt_formats[i].name, f);
        k++;
    }
}

static void usage(FILE *f)
{
    fputs(
        "usage: capture_convert [options] IN OUT\n"
        "\n"
        "Convert a frame-profiling capture to or from another format.\n"
        "\n"
        "  IN, OUT              files; OUT may be '-' (standard output) with\n"
        "                       --to; formats come from the extensions:\n",
        f);
    for (size_t i = 0; i < NFORMATS; i++)
        fprintf(f, "%23s%s: %s%s\n", "", cvt_formats[i].name,
                cvt_formats[i].extensions,
                !cvt_formats[i].import ? " (written only)"
                : !cvt_formats[i].export ? " (read only)" : "");
    fputs("  --from FORMAT        format of IN: ", f);
    format_list(f, 1, ", ");
    fputs("\n                       (default: from IN's extension)\n"
          "  --to FORMAT          format of OUT: ", f);
    format_list(f, 0, ", ");
    fputs("\n                       (default: from OUT's extension)\n"
        "  --frame-scope NAME   importers: each top-level occurrence of the\n"
        "                       scope NAME is one frame; NAME may be a glob\n"
        "                       ('ProfilerStep#*': numbered steps are frames)\n"
        "                       (default: none; a Chrome trace written by\n"
        "                       capture_convert keeps its frames)\n"
        "  --gpu-thread NAME    Chrome importer: import the thread NAME as a\n"
        "                       GPU track on the CPU clock; repeat it for\n"
        "                       several streams, one track each (default:\n"
        "                       none)\n"
        "  --frames A:B         capture -> capture: keep frames A to B-1 (by\n"
        "                       index; A: or :B leave a side open)\n"
        "  --seconds A:B        capture -> capture: keep the frames that begin\n"
        "                       A to B seconds after the first frame\n"
        "  --slowest N          capture -> capture: keep the N slowest frames,\n"
        "                       each with --context frames either side\n"
        "  --context K          frames kept either side of each slowest frame\n"
        "                       (default: 2)\n"
        "  --weight self-us|calls\n"
        "                       folded output: self time in microseconds or\n"
        "                       call counts (default: self-us)\n"
        "  --format-version V   capture output: the version of the capture\n"
        "                       format written, 1.1, 2.0, 3.0, 3.1 or 4.0\n"
        "                       (default: 3.1: about a fifth smaller than\n"
        "                       2.0 on varied timings, its frames listed in\n"
        "                       the footer). 4.0 is 3.1 in groups of blocks\n"
        "                       (smaller in small blocks; readers older than\n"
        "                       4.0 refuse it), 3.0 is 3.1 without the list,\n"
        "                       2.0 for readers older than format 3.0, 1.1\n"
        "                       for those older than 2.0\n"
        "  -h, --help           show this help\n"
        "  --version            show the version\n"
        "\n"
        "Conversions: json -> cap, puffin -> cap, cap -> json, cap -> folded,\n"
        "cap -> svg (a flame graph: one per thread and GPU track, widths by\n"
        "total time), cap -> perfetto (Perfetto's protobuf trace, .pftrace),\n"
        "cap -> cap (recovers a capture cut short into a complete\n"
        "one, or cuts a slice of frames with every name it uses), and\n"
        "json or puffin -> json, folded, svg or perfetto through a temporary\n"
        "capture.\n"
        "cap -> cap with --format-version re-saves a capture in that version\n"
        "(the same events; read_capture reports it the same).\n"
        "Warnings go to standard error, one line each. An output that "
        "cannot be\nwritten exits 3.\n\n",
        f);
    tool_exit_help(f);
}

static int ends_with(const char *s, const char *suffix, size_t k)
{
    size_t n = strlen(s);
    return n >= k && strncmp(s + n - k, suffix, k) == 0;
}

static const cvt_format *fmt_by_name(const char *s)
{
    for (size_t i = 0; i < NFORMATS; i++)
        if (strcmp(s, cvt_formats[i].name) == 0)
            return &cvt_formats[i];
    return NULL;
}

/* The format whose extension path ends with, or NULL. */
static const cvt_format *fmt_by_ext(const char *path)
{
    for (size_t i = 0; i < NFORMATS; i++) {
        const char *e = cvt_formats[i].extensions;
        while (*e) {
            size_t k = strcspn(e, " ");
            if (ends_with(path, e, k))
                return &cvt_formats[i];
            e += k;
            e += strspn(e, " ");
        }
    }
    return NULL;
}

/* "A:B", "A:" or ":B" (kind CVT_SLICE_FRAMES: frame indices, or
 * CVT_SLICE_SECONDS) into *s. Returns 0, or -1 when malformed. */
static int parse_range(cvt_slice *s, cvt_slice_kind kind, const char *v)
{
    const char *colon = strchr(v, ':');
    if (!colon)
        return -1;
    double a = 0, b = INFINITY;
    char *end;
    if (colon > v) {
        errno = 0;
        a = strtod(v, &end);
        if (end != colon || errno || !(a >= 0) || !isfinite(a))
            return -1;
    }
    if (colon[1]) {
        errno = 0;
        b = strtod(colon + 1, &end);
        if (*end || errno || !(b >= 0) || !isfinite(b))
            return -1;
    }
    if (!(a < b))
        return -1;
    if (kind == CVT_SLICE_FRAMES &&
        (a != floor(a) || (isfinite(b) && b != floor(b))))
        return -1;
    s->kind = kind;
    s->a = a;
    s->b = b;
    return 0;
}

enum { O_FROM = 1, O_TO, O_FRAME_SCOPE, O_GPU_THREAD, O_WEIGHT, O_FRAMES,
       O_SECONDS, O_SLOWEST, O_CONTEXT, O_FORMAT_VERSION, O_HELP };

static const tool_opt opts[] = {
    {"from", 0, 1, O_FROM},               {"to", 0, 1, O_TO},
    {"frame-scope", 0, 1, O_FRAME_SCOPE}, {"gpu-thread", 0, 1, O_GPU_THREAD},
    {"weight", 0, 1, O_WEIGHT},           {"frames", 0, 1, O_FRAMES},
    {"seconds", 0, 1, O_SECONDS},         {"slowest", 0, 1, O_SLOWEST},
    {"context", 0, 1, O_CONTEXT},
    {"format-version", 0, 1, O_FORMAT_VERSION},
    {"help", 'h', 0, O_HELP}};

/* --from and --to. Returns 0, or -1 after a message. */
static int take_format(cli *c, const tool_args *t, int id)
{
    const cvt_format *f = fmt_by_name(t->value);
    int reading = id == O_FROM;
    if (!f || !(reading ? f->import : f->export)) {
        fprintf(stderr, "%s: %s '%s': expected ", TOOL,
                reading ? "--from" : "--to", t->value);
        format_list(stderr, reading, ", ");
        fputc('\n', stderr);
        return -1;
    }
    if (reading)
        c->from = f;
    else
        c->to = f;
    return 0;
}

/* --frames, --seconds and --slowest. Returns 0, or -1 after a message. */
static int take_slice(cli *c, const tool_args *t, int id)
{
    const char *name = id == O_FRAMES    ? "--frames"
                       : id == O_SECONDS ? "--seconds"
                                         : "--slowest";
    if (c->slice.kind != CVT_SLICE_NONE)
        return tool_usage_error(TOOL, "give one of --frames, --seconds and "
                                      "--slowest");
    if (id == O_SLOWEST) {
        if (tool_parse_count(TOOL, name, t->value, 1, UINT64_MAX,
                             &c->slice.n))
            return -1;
        c->slice.kind = CVT_SLICE_SLOWEST;
    } else if (parse_range(&c->slice, id == O_FRAMES ? CVT_SLICE_FRAMES
                                                     : CVT_SLICE_SECONDS,
                           t->value)) {
        return tool_usage_error(TOOL, "%s '%s': expected A:B, A: or :B with "
                                      "0 <= A < B", name, t->value);
    }
    snprintf(c->slice_text, sizeof c->slice_text, "%s %s", name, t->value);
    c->slice.text = c->slice_text;
    c->opt.slice = &c->slice;
    return 0;
}

/* One option into *c. Returns 0, 1 for --help, or -1 after a message. */
static int take_option(cli *c, const tool_args *t, int id)
{
    switch (id) {
    case O_FROM: case O_TO: return take_format(c, t, id);
    case O_FRAME_SCOPE: c->opt.frame_scope = t->value; return 0;
    case O_GPU_THREAD:
        if (c->n_gpu >= CVT_MAX_GPU_THREADS)
            return tool_usage_error(TOOL, "--gpu-thread given more than %d "
                                          "times", CVT_MAX_GPU_THREADS);
        c->gpu[c->n_gpu++] = t->value;
        c->opt.gpu_threads = c->gpu;
        c->opt.n_gpu_threads = c->n_gpu;
        return 0;
    case O_WEIGHT:
        if (strcmp(t->value, "self-us") != 0 && strcmp(t->value, "calls") != 0)
            return tool_usage_error(TOOL, "--weight '%s': expected self-us "
                                          "or calls", t->value);
        c->opt.weight = t->value;
        return 0;
    case O_FRAMES: case O_SECONDS: case O_SLOWEST:
        return take_slice(c, t, id);
    case O_CONTEXT:
        c->context_given = 1;
        return tool_args_count(t, 0, 1000000, &c->slice.context);
    case O_FORMAT_VERSION:
        return tool_args_format_version(t, &c->opt.format_major,
                                        &c->opt.no_frame_list);
    default: return 1; /* O_HELP */
    }
}

/* path's format f (NULL: unknown) cannot be read (reading) or written:
 * one line, then -1. */
static int no_format(const char *path, const cvt_format *f, int reading)
{
    fprintf(stderr, "%s: %s: %s%s; use --%s ", TOOL, path,
            f ? f->name : "cannot tell the format from the extension",
            !f ? "" : reading ? " cannot be read" : " cannot be written",
            reading ? "from" : "to");
    format_list(stderr, reading, ", ");
    fputc('\n', stderr);
    return -1;
}

/* IN and OUT's formats, from --from and --to or the extensions. Returns 0,
 * or -1 after a message. */
static int pick_formats(cli *c)
{
    if (!c->from)
        c->from = fmt_by_ext(c->in);
    if (!c->to)
        c->to = fmt_by_ext(c->out);
    if (!c->from || !c->from->import)
        return no_format(c->in, c->from, 1);
    if (!c->to || !c->to->export)
        return no_format(c->out, c->to, 0);
    return 0;
}

/* Parse argv into *c. Returns 0, or -1 after a message on stderr. */
static int cli_parse(int argc, char **argv, cli *c)
{
    memset(c, 0, sizeof *c);
    c->opt.weight = "self-us";
    c->slice.context = 2;
    tool_args t;
    if (tool_args_init(&t, TOOL, argc, argv, opts, sizeof opts / sizeof *opts))
        return -1;
    int id, rc = 0;
    while (rc == 0 && (id = tool_args_next(&t)) != TOOL_ARGS_END)
        rc = id < 0 ? -1 : take_option(c, &t, id);
    if (rc == 1) {
        c->help = 1;
        rc = 0;
    } else if (rc == 0 && t.noperands != 2) {
        rc = tool_usage_error(TOOL, t.noperands > 2 ? "too many arguments "
                                                      "('%s'); see --help"
                                                    : "expected IN and OUT; "
                                                      "see --help",
                              t.noperands > 2 ? t.operands[2] : "");
    } else if (rc == 0 && c->context_given &&
               c->slice.kind != CVT_SLICE_SLOWEST) {
        rc = tool_usage_error(TOOL, "--context goes with --slowest");
    } else if (rc == 0) {
        c->in = t.operands[0];
        c->out = t.operands[1];
        rc = pick_formats(c);
    }
    tool_args_free(&t);
    return rc;
}

/* Whether IN and OUT name the same existing file. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Options that do not fit the conversion: a usage error (-1 after a
 * message) or warnings (0), with *o adjusted. */
static int check_fit(const cli *c, cvt_options *o)
{
    if (strcmp(c->in, "-") == 0)
        return tool_usage_error(TOOL, "reading standard input is not "
                                      "supported; give a file");
    if (strcmp(c->out, "-") != 0 && same_file(c->in, c->out))
        return tool_usage_error(TOOL, "IN and OUT are the same file (%s)",
                                c->in);
    if (c->slice.kind != CVT_SLICE_NONE &&
        (c->from != CAP_FORMAT ||
         (c->to != CAP_FORMAT && c->to->export != cvt_cap_to_perfetto)))
        return tool_usage_error(TOOL, "--frames, --seconds and --slowest cut "
                                      "a capture into a capture (.cap to "
                                      ".cap)");
    if (c->from == CAP_FORMAT && (o->frame_scope || o->n_gpu_threads))
        fprintf(stderr, "warning: --frame-scope and --gpu-thread apply to "
                        "importers; ignored when reading a capture\n");
    if (strcmp(c->to->name, "folded") != 0 && strcmp(o->weight, "self-us") != 0)
        fprintf(stderr, "warning: --weight applies to folded output; "
                        "ignored\n");
    if (c->to != CAP_FORMAT && o->format_major) {
        fprintf(stderr, "warning: --format-version applies to capture output; "
                        "ignored\n");
        o->format_major = 0; /* a temporary capture is written as usual */
    }
    if (strcmp(c->from->name, "json") != 0 && c->from != CAP_FORMAT &&
        o->n_gpu_threads)
        fprintf(stderr, "warning: --gpu-thread applies to Chrome traces; "
                        "ignored\n");
    return 0;
}

/* IN -> a temporary capture -> OUT. */
static cap_result through_capture(const cli *c, const cvt_options *o)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    size_t n = strlen(dir) + 32;
    char *tmp = malloc(n);
    if (!tmp)
        return CAP_E_NOMEM;
    snprintf(tmp, n, "%s/capture_convert-XXXXXX", dir);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "error: cannot create a temporary file in %s: %s\n",
                dir, strerror(errno));
        free(tmp);
        return CAP_E_IO;
    }
    close(fd);
    cap_result rc = c->from->import(c->in, tmp, o);
    if (rc == CAP_E_IO)
        fprintf(stderr, "error: the temporary capture %s could not be "
                        "written\n", tmp);
    if (rc == CAP_OK) {
        rc = c->to->export(tmp, c->out, o);
        if (rc != CAP_OK && rc != CAP_E_NOMEM)
            rc = CAP_E_IO; /* our own temporary file failed */
    }
    unlink(tmp);
    free(tmp);
    return rc;
}

static tool_exit cli_run(const cli *c)
{
    cvt_options o = c->opt;
    o.diag = stderr;
    o.title = c->in;
    if (check_fit(c, &o) != 0)
        return TOOL_EXIT_USAGE;
    /* the input opens, or it is a usage error (missing, a folder...) */
    tool_source src;
    tool_source_parse(&src, c->in);
    src.kind = TOOL_SOURCE_FILE; /* IN is a file, whatever its name */
    if (tool_source_open(&src, TOOL, NULL, NULL) != TOOL_EXIT_OK)
        return TOOL_EXIT_USAGE;
    tool_source_close(&src);
    cap_result rc;
    if (c->from == CAP_FORMAT)
        rc = c->to->export(c->in, c->out, &o);
    else if (c->to == CAP_FORMAT)
        rc = c->from->import(c->in, c->out, &o);
    else
        rc = through_capture(c, &o);
    return tool_exit_of_result(rc);
}

int main(int argc, char **argv)
{
    if (tool_version(argc, argv, TOOL))
        return tool_version_done();
    cli c;
    if (cli_parse(argc, argv, &c) != 0)
        return TOOL_EXIT_USAGE;
    if (c.help) {
        usage(stdout);
        return fflush(stdout) == 0 ? TOOL_EXIT_OK : TOOL_EXIT_INCOMPLETE;
    }
    return (int)cli_run(&c);
}
