/*
 * capture_convert - convert between captures, Chrome trace JSON, folded
 * stacks and puffin captures.
 *
 *   capture_convert [options] IN OUT
 *
 * The command line is parsed into a `cli` value first (cli_parse, no side
 * effects but messages), then run (cli_run). Conversions that have no
 * direct converter go through a temporary capture (JSON -> folded:
 * JSON -> .cap -> folded). Exit codes: 0 ok, 1 the output could not be
 * written, 2 usage error or unreadable input.
 */
#include "cvt.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../tool_version.h"

typedef enum fmt {
    F_NONE, F_CAP, F_JSON, F_FOLDED, F_PUFFIN, F_SVG, F_PERFETTO
} fmt;

static const char *const fmt_names[] = {"?", "cap", "json", "folded", "puffin",
                                        "svg", "perfetto"};

#define CVT_MAX_GPU_THREADS 16

typedef struct cli {
    const char *in, *out;
    fmt from, to;
    cvt_options opt;
    const char *gpu[CVT_MAX_GPU_THREADS]; /* --gpu-thread, in order */
    size_t n_gpu;
    cvt_slice slice;         /* --frames, --seconds, --slowest */
    int context_given;
    char slice_text[96];
    int help;
} cli;

static void usage(FILE *f)
{
    fputs(
        "usage: capture_convert [options] IN OUT\n"
        "\n"
        "Convert a frame-profiling capture to or from another format.\n"
        "\n"
        "  IN, OUT              files; OUT may be '-' (standard output) with\n"
        "                       --to; formats come from the extensions:\n"
        "                       .cap, .json or .json.gz, .folded, .puffin,\n"
        "                       .svg (a flame graph, written only), .pftrace\n"
        "                       (Perfetto's own trace, written only)\n"
        "  --from FORMAT        format of IN: cap, json, puffin\n"
        "                       (default: from IN's extension)\n"
        "  --to FORMAT          format of OUT: cap, json, folded, svg,\n"
        "                       perfetto\n"
        "                       (default: from OUT's extension)\n"
        "  --frame-scope NAME   importers: each top-level occurrence of the\n"
        "                       scope NAME is one frame; NAME may be a glob\n"
        "                       ('ProfilerStep#*': numbered steps are frames)\n"
        "                       (default: none; a Chrome trace written by\n"
        "                       capture_convert keeps its frames)\n"
        "  --gpu-thread NAME    Chrome importer: import the thread NAME as a\n"
        "                       GPU track on the CPU clock; repeat it for\n"
        "                       several streams, one track each (default:\n"
        "                       none)\n"
        "  --frames A:B         capture -> capture or perfetto: keep frames\n"
        "                       A to B-1 (by index; A: or :B leave a side\n"
        "                       open)\n"
        "  --seconds A:B        capture -> capture or perfetto: keep the\n"
        "                       frames that begin A to B seconds after the\n"
        "                       first frame\n"
        "  --slowest N          capture -> capture or perfetto: keep the N\n"
        "                       slowest frames, each with --context frames\n"
        "                       either side\n"
        "  --context K          frames kept either side of each slowest frame\n"
        "                       (default: 2)\n"
        "  --weight self-us|calls\n"
        "                       folded output: self time in microseconds or\n"
        "                       call counts (default: self-us)\n"
        "  --format-version V   capture output: the version of the capture\n"
        "                       format written, 1.1, 2.0, 3.0 or 3.1\n"
        "                       (default: 3.1, the most compact: about a\n"
        "                       fifth smaller than 2.0 on varied timings,\n"
        "                       its frames listed in the footer). 3.0 is\n"
        "                       3.1 without that list, 2.0 for readers older\n"
        "                       than format 3.0, 1.1 for those older than\n"
        "                       2.0\n"
        "  -h, --help           show this help\n"
        "  --version            show the version\n"
        "\n"
        "Conversions: json -> cap, puffin -> cap, cap -> json, cap -> folded,\n"
        "cap -> perfetto (Perfetto's protobuf trace, which ui.perfetto.dev\n"
        "opens; a third of the JSON's size or less),\n"
        "cap -> svg (a flame graph: one per thread and GPU track, widths by\n"
        "total time), cap -> cap (recovers a capture cut short into a complete\n"
        "one, or cuts a slice of frames with every name it uses), and\n"
        "json or puffin -> json, folded, svg or perfetto through a temporary\n"
        "capture.\n"
        "cap -> cap with --format-version re-saves a capture in that version\n"
        "(the same events; read_capture reports it the same).\n"
        "Warnings go to standard error, one line each.\n"
        "\n"
        "Exit status: 0 converted, 1 the output could not be written,\n"
        "2 usage error or unreadable input.\n",
        f);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static fmt fmt_by_name(const char *s)
{
    for (int i = F_CAP; i <= F_PERFETTO; i++)
        if (strcmp(s, fmt_names[i]) == 0)
            return (fmt)i;
    return F_NONE;
}

static fmt fmt_by_ext(const char *path)
{
    if (ends_with(path, ".cap"))
        return F_CAP;
    if (ends_with(path, ".json") || ends_with(path, ".json.gz"))
        return F_JSON;
    if (ends_with(path, ".folded"))
        return F_FOLDED;
    if (ends_with(path, ".puffin"))
        return F_PUFFIN;
    if (ends_with(path, ".svg"))
        return F_SVG;
    if (ends_with(path, ".pftrace") || ends_with(path, ".perfetto-trace"))
        return F_PERFETTO;
    return F_NONE;
}

/* "A:B", "A:" or ":B" (which 5: frame indices, 6: seconds) or N (7:
 * --slowest) into *s. Returns 0, or -1 when malformed. */
static int parse_slice(cvt_slice *s, int which, const char *v)
{
    if (which == 7) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        if (!*v || *end || errno || v[0] == '-' || n == 0)
            return -1;
        s->kind = CVT_SLICE_SLOWEST;
        s->n = n;
        return 0;
    }
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
    if (which == 5 && (a != floor(a) || (isfinite(b) && b != floor(b))))
        return -1;
    s->kind = which == 5 ? CVT_SLICE_FRAMES : CVT_SLICE_SECONDS;
    s->a = a;
    s->b = b;
    return 0;
}

/* Parse argv into *c. Returns 0, or 2 after a message on err. */
static int cli_parse(int argc, char **argv, cli *c, FILE *err)
{
    memset(c, 0, sizeof *c);
    c->opt.weight = "self-us";
    c->slice.context = 2;
    const char *pos[2];
    int npos = 0, only_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || strcmp(a, "-") == 0) {
            if (npos == 2) {
                fprintf(err, "capture_convert: too many arguments ('%s'); "
                             "see --help\n", a);
                return 2;
            }
            pos[npos++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_pos = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            c->help = 1;
            return 0;
        }
        static const char *const with_value[] = {
            "--from", "--to", "--frame-scope", "--gpu-thread", "--weight",
            "--frames", "--seconds", "--slowest", "--context",
            "--format-version"};
        const char *val = NULL;
        int which = -1;
        for (int k = 0; k < (int)(sizeof with_value / sizeof *with_value);
             k++) {
            size_t n = strlen(with_value[k]);
            if (strncmp(a, with_value[k], n) == 0 &&
                (a[n] == '\0' || a[n] == '=')) {
                which = k;
                if (a[n] == '=') {
                    val = a + n + 1;
                } else if (i + 1 < argc) {
                    val = argv[++i];
                } else {
                    fprintf(err, "capture_convert: %s needs a value; see "
                                 "--help\n", a);
                    return 2;
                }
                break;
            }
        }
        if (which < 0) {
            fprintf(err, "capture_convert: unknown option '%s'; see --help\n",
                    a);
            return 2;
        }
        switch (which) {
        case 0:
        case 1: {
            fmt f = fmt_by_name(val);
            if (f == F_NONE ||
                (which == 0 &&
                 (f == F_FOLDED || f == F_SVG || f == F_PERFETTO)) ||
                (which == 1 && f == F_PUFFIN)) {
                fprintf(err, "capture_convert: %s '%s': expected %s\n",
                        with_value[which], val,
                        which == 0 ? "cap, json or puffin"
                                   : "cap, json, folded, svg or perfetto");
                return 2;
            }
            if (which == 0)
                c->from = f;
            else
                c->to = f;
            break;
        }
        case 2:
            c->opt.frame_scope = val;
            break;
        case 3:
            if (c->n_gpu >= CVT_MAX_GPU_THREADS) {
                fprintf(err, "capture_convert: --gpu-thread given more than "
                             "%d times\n", CVT_MAX_GPU_THREADS);
                return 2;
            }
            c->gpu[c->n_gpu++] = val;
            c->opt.gpu_threads = c->gpu;
            c->opt.n_gpu_threads = c->n_gpu;
            break;
        case 4:
            if (strcmp(val, "self-us") != 0 && strcmp(val, "calls") != 0) {
                fprintf(err, "capture_convert: --weight '%s': expected "
                             "self-us or calls\n", val);
                return 2;
            }
            c->opt.weight = val;
            break;
        case 5:
        case 6:
        case 7:
            if (c->slice.kind != CVT_SLICE_NONE) {
                fprintf(err, "capture_convert: give one of --frames, "
                             "--seconds and --slowest\n");
                return 2;
            }
            if (parse_slice(&c->slice, which, val)) {
                fprintf(err, "capture_convert: %s '%s': expected %s\n",
                        with_value[which], val,
                        which == 7 ? "a whole number above 0"
                                   : "A:B, A: or :B with 0 <= A < B");
                return 2;
            }
            snprintf(c->slice_text, sizeof c->slice_text, "%s %s",
                     with_value[which], val);
            c->slice.text = c->slice_text;
            c->opt.slice = &c->slice;
            break;
        case 8: {
            char *end;
            errno = 0;
            unsigned long long k = strtoull(val, &end, 10);
            if (!*val || *end || errno || val[0] == '-' || k > 1000000) {
                fprintf(err, "capture_convert: --context '%s': expected a "
                             "whole number from 0 to 1000000\n", val);
                return 2;
            }
            c->slice.context = k;
            c->context_given = 1;
            break;
        }
        case 9:
            c->opt.format_major = strcmp(val, "1.1") == 0   ? 1
                                  : strcmp(val, "2.0") == 0 ? 2
                                  : strcmp(val, "3.0") == 0 ||
                                          strcmp(val, "3.1") == 0
                                      ? 3
                                      : 0;
            c->opt.no_frame_list = strcmp(val, "3.0") == 0;
            if (!c->opt.format_major) {
                fprintf(err, "capture_convert: --format-version '%s': "
                             "expected 1.1, 2.0, 3.0 or 3.1\n", val);
                return 2;
            }
            break;
        }
    }
    if (npos != 2) {
        fprintf(err, "capture_convert: expected IN and OUT; see --help\n");
        return 2;
    }
    if (c->context_given && c->slice.kind != CVT_SLICE_SLOWEST) {
        fprintf(err, "capture_convert: --context goes with --slowest\n");
        return 2;
    }
    c->in = pos[0];
    c->out = pos[1];
    if (!c->from)
        c->from = fmt_by_ext(c->in);
    if (!c->to)
        c->to = fmt_by_ext(c->out);
    if (!c->from || c->from == F_FOLDED || c->from == F_SVG ||
        c->from == F_PERFETTO) {
        fprintf(err, "capture_convert: %s: %s; use --from cap, json or "
                     "puffin\n", c->in,
                c->from ? "folded stacks, SVG and Perfetto traces cannot be "
                          "read"
                        : "cannot tell the format from the extension");
        return 2;
    }
    if (!c->to || c->to == F_PUFFIN) {
        fprintf(err, "capture_convert: %s: %s; use --to cap, json, folded, "
                     "svg or perfetto\n", c->out,
                c->to ? "puffin cannot be written"
                      : "cannot tell the format from the extension");
        return 2;
    }
    return 0;
}

/* Whether IN and OUT name the same existing file. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

typedef int (*importer)(const char *, const char *, const cvt_options *);

static int cli_run(const cli *c, FILE *err)
{
    cvt_options o = c->opt;
    o.diag = err;
    o.title = c->in;
    if (strcmp(c->in, "-") == 0) {
        fprintf(err, "capture_convert: reading standard input is not "
                     "supported; give a file\n");
        return 2;
    }
    if (strcmp(c->out, "-") != 0 && same_file(c->in, c->out)) {
        fprintf(err, "capture_convert: IN and OUT are the same file (%s)\n",
                c->in);
        return 2;
    }
    if (c->slice.kind != CVT_SLICE_NONE &&
        (c->from != F_CAP || (c->to != F_CAP && c->to != F_PERFETTO))) {
        fprintf(err, "capture_convert: --frames, --seconds and --slowest "
                     "cut a capture into a capture (.cap to .cap)\n");
        return 2;
    }
    if (c->from == F_CAP && (o.frame_scope || o.n_gpu_threads))
        fprintf(err, "warning: --frame-scope and --gpu-thread apply to "
                     "importers; ignored when reading a capture\n");
    if (c->to != F_FOLDED && strcmp(o.weight, "self-us") != 0)
        fprintf(err, "warning: --weight applies to folded output; ignored\n");
    if (c->to != F_CAP && o.format_major) {
        fprintf(err, "warning: --format-version applies to capture output; "
                     "ignored\n");
        o.format_major = 0; /* a temporary capture is written as usual */
    }
    if (c->from == F_PUFFIN && o.n_gpu_threads)
        fprintf(err, "warning: --gpu-thread applies to Chrome traces; "
                     "ignored\n");

    importer imp = c->from == F_JSON ? cvt_chrome_to_cap
                   : c->from == F_PUFFIN ? cvt_puffin_to_cap
                                         : NULL;
    importer exp = c->to == F_JSON ? cvt_cap_to_chrome
                   : c->to == F_FOLDED ? cvt_cap_to_folded
                   : c->to == F_SVG ? cvt_cap_to_svg
                   : c->to == F_PERFETTO ? cvt_cap_to_perfetto
                                       : cvt_cap_to_cap;
    if (!imp)
        return exp(c->in, c->out, &o);
    if (c->to == F_CAP)
        return imp(c->in, c->out, &o);

    /* two steps through a temporary capture */
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    size_t n = strlen(dir) + 32;
    char *tmp = malloc(n);
    if (!tmp)
        return 2;
    snprintf(tmp, n, "%s/capture_convert-XXXXXX", dir);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(err, "error: cannot create a temporary file in %s: %s\n", dir,
                strerror(errno));
        free(tmp);
        return 1;
    }
    close(fd);
    int rc = imp(c->in, tmp, &o);
    if (rc == CVT_EXIT_OUTPUT)
        fprintf(err, "error: the temporary capture %s could not be "
                     "written\n", tmp);
    if (rc == CVT_OK) {
        rc = exp(tmp, c->out, &o);
        if (rc == CVT_EXIT_INPUT)
            rc = CVT_EXIT_OUTPUT; /* our own temporary file failed */
    }
    unlink(tmp);
    free(tmp);
    return rc;
}

int main(int argc, char **argv)
{
    if (tool_version(argc, argv, "capture_convert"))
        return tool_version_done();
    cli c;
    int rc = cli_parse(argc, argv, &c, stderr);
    if (rc)
        return rc;
    if (c.help) {
        usage(stdout);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    return cli_run(&c, stderr);
}
