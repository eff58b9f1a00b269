/*
 * capture_diff - did it get faster or slower, and is that real?
 *
 *   capture_diff [options] BASE NEW
 *
 * Compares two captures scope by scope with statistics that separate a
 * change from noise, and exits 1 when anything regressed, so a CI job can
 * gate on it. Option parsing (parse_args) is apart from the work (run).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diff.h"
#include "report.h"
#include "tool_version.h"

#define EXIT_SAME 0
#define EXIT_REGRESSED 1
#define EXIT_USAGE 2

#define MAX_PATTERNS 64

typedef struct args {
    const char *base, *new_;
    an_diff_options o;
    const char *exclude[MAX_PATTERNS], *wait[MAX_PATTERNS];
    size_t top;
    double skip_seconds;
    int csv, by_path;
} args;

static void usage(FILE *f)
{
    fputs("usage: capture_diff [options] BASE NEW\n"
          "\n"
          "Compares the per-frame self time of every scope (and the frame "
          "time) of two\ncaptures of the same route.\n"
          "\n"
          "  --threshold PCT    relative band: changes within PCT % of the "
          "base median\n"
          "                     never count (default 5)\n"
          "  --floor-us US      absolute band: changes under US us per frame "
          "never count\n"
          "                     (default 0)\n"
          "  --floor-share PCT  absolute band as a share of the base median "
          "frame time\n"
          "                     (default 0.1); the floor is the larger of the "
          "two\n"
          "  --alpha A          significance level after Holm correction "
          "(default 0.05;\n"
          "                     the interval's level is 1 - 2A)\n"
          "  --min-frames N     frames a scope needs on each side (default "
          "10)\n"
          "  --top N            show the N largest changes (default 20; 0: "
          "all)\n"
          "  --scope NAME       compare this scope only (and the frame time)\n"
          "  --by-path          match scopes by call path, not by name\n"
          "  --exclude GLOB     drop the scopes whose name matches (repeatable)\n"
          "  --wait GLOB        mark the scopes whose name matches as waits "
          "(repeatable);\n"
          "                     scopes the program tagged as waits are marked "
          "anyway\n"
          "  --gate-waits       let regressed waits fail the run too\n"
          "  --skip-seconds S   drop the first S seconds of both runs "
          "(warm-up)\n"
          "  --csv              CSV (RFC 4180) with every row\n"
          "  -h, --help         this help\n"
          "  --version          the version, then exit\n"
          "\n"
          "A scope's band is the larger of the threshold (relative to its "
          "base median)\nand the floor (time per frame). Verdicts: regressed "
          "/ improved (p < alpha after\nHolm and the whole interval past "
          "the band), unchanged (interval inside the\nband), inconclusive, "
          "insufficient (too few frames), added / removed.\n"
          "Waits (time blocked) grow when other work slows: they are judged "
          "but do not\ngate the exit status unless --gate-waits.\n"
          "Exit status: 0 nothing that gates regressed; 1 at least one "
          "regression that\ngates; 2 usage error or unreadable input.\n",
          f);
}

static int number(const char *opt, const char *s, double min, double max,
                  double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= min) || !(v <= max)) {
        fprintf(stderr, "capture_diff: %s needs a number in [%g, %g], not "
                        "'%s'\n",
                opt, min, max, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, args *a)
{
    enum { O_THR = 256, O_ALPHA, O_MIN, O_TOP, O_SCOPE, O_PATH, O_SKIP,
           O_CSV, O_FLOOR_US, O_FLOOR_SHARE, O_EXCLUDE, O_WAIT, O_GATE_WAITS };
    static const struct option opts[] = {
        {"threshold", required_argument, 0, O_THR},
        {"alpha", required_argument, 0, O_ALPHA},
        {"min-frames", required_argument, 0, O_MIN},
        {"top", required_argument, 0, O_TOP},
        {"scope", required_argument, 0, O_SCOPE},
        {"by-path", no_argument, 0, O_PATH},
        {"skip-seconds", required_argument, 0, O_SKIP},
        {"floor-us", required_argument, 0, O_FLOOR_US},
        {"floor-share", required_argument, 0, O_FLOOR_SHARE},
        {"exclude", required_argument, 0, O_EXCLUDE},
        {"wait", required_argument, 0, O_WAIT},
        {"gate-waits", no_argument, 0, O_GATE_WAITS},
        {"csv", no_argument, 0, O_CSV},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    a->top = 20;
    a->o.exclude = a->exclude;
    a->o.wait = a->wait;
    double v;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case O_THR:
            if (number("--threshold", optarg, 1e-9, 1000,
                       &a->o.stat.threshold_pct))
                return -1;
            break;
        case O_ALPHA:
            if (number("--alpha", optarg, 1e-12, 0.49, &a->o.stat.alpha))
                return -1;
            break;
        case O_MIN:
            if (number("--min-frames", optarg, 2, 1e9, &v))
                return -1;
            a->o.stat.min_frames = (size_t)v;
            break;
        case O_FLOOR_US:
            if (number("--floor-us", optarg, 0, 1e9, &a->o.floor_us))
                return -1;
            break;
        case O_FLOOR_SHARE:
            if (number("--floor-share", optarg, 1e-9, 100,
                       &a->o.floor_share_pct))
                return -1;
            break;
        case O_EXCLUDE:
        case O_WAIT: {
            size_t *count = c == O_EXCLUDE ? &a->o.nexclude : &a->o.nwait;
            const char **list = c == O_EXCLUDE ? a->exclude : a->wait;
            if (*count == MAX_PATTERNS) {
                fprintf(stderr, "capture_diff: at most %d %s patterns\n",
                        MAX_PATTERNS, c == O_EXCLUDE ? "--exclude" : "--wait");
                return -1;
            }
            list[(*count)++] = optarg;
            break;
        }
        case O_GATE_WAITS: a->o.gate_waits = 1; break;
        case O_TOP:
            if (number("--top", optarg, 0, 1e9, &v))
                return -1;
            a->top = (size_t)v;
            break;
        case O_SKIP:
            if (number("--skip-seconds", optarg, 0, 1e9, &a->skip_seconds))
                return -1;
            break;
        case O_SCOPE: a->o.only_scope = optarg; break;
        case O_PATH: a->by_path = 1; break;
        case O_CSV: a->csv = 1; break;
        case 'h': return 1;
        case ':':
            fprintf(stderr, "capture_diff: %s needs a value\n", argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "capture_diff: unknown option '%s' (see --help)\n",
                    argv[optind - 1]);
            return -1;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "capture_diff: give two captures, BASE and NEW (see "
                        "--help)\n");
        return -1;
    }
    a->base = argv[optind];
    a->new_ = argv[optind + 1];
    return 0;
}

static void compare_meta(const an_capture *b, const an_capture *n)
{
    static const char *keys[] = {"program", "build", "machine"};
    for (size_t i = 0; i < 3; i++) {
        const char *x = an_meta(b, keys[i]), *y = an_meta(n, keys[i]);
        if (x && y && strcmp(x, y) != 0)
            fprintf(stderr, "warning: the runs differ in %s (base '%s', new "
                            "'%s')%s\n",
                    keys[i], x, y,
                    i == 1 ? ": make sure that is the change under test"
                           : ": the comparison measures that difference too");
    }
    size_t fb = b->nframes, fn = n->nframes;
    if (fb && fn && (fb * 2 < fn || fn * 2 < fb))
        fprintf(stderr, "warning: one run is much shorter than the other "
                        "(%zu frames vs %zu): did both cover the same "
                        "route? (record a fixed window: CAP_SKIP_SECONDS, "
                        "CAP_RECORD_SECONDS)\n",
                fb, fn);
}

static int run(const args *a)
{
    an_options lo = {.skip_seconds = a->skip_seconds, .by_path = a->by_path};
    an_capture *mb = NULL, *mn = NULL;
    char detail[400];
    cap_result r = an_load(&mb, a->base, &lo, detail, sizeof detail);
    if (r != CAP_OK) {
        fprintf(stderr, "capture_diff: %s: %s\n", a->base, detail);
        return EXIT_USAGE;
    }
    r = an_load(&mn, a->new_, &lo, detail, sizeof detail);
    if (r != CAP_OK) {
        fprintf(stderr, "capture_diff: %s: %s\n", a->new_, detail);
        an_free(mb);
        return EXIT_USAGE;
    }
    int colour_err = isatty(STDERR_FILENO) && !getenv("NO_COLOR");
    rep_warnings(stderr, mb, "capture_diff", 0, colour_err);
    rep_warnings(stderr, mn, "capture_diff", 0, colour_err);
    compare_meta(mb, mn);
    const char *scope = a->o.only_scope;
    if (scope && an_find_scope(mb, AN_CPU, scope) < 0 &&
        an_find_scope(mb, AN_GPU, scope) < 0 &&
        an_find_scope(mn, AN_CPU, scope) < 0 &&
        an_find_scope(mn, AN_GPU, scope) < 0) {
        fprintf(stderr, "capture_diff: no scope named '%s' in either run\n",
                scope);
        an_free(mb);
        an_free(mn);
        return EXIT_USAGE;
    }
    an_diff d;
    r = an_diff_run_opts(&d, mb, mn, &a->o);
    int status = EXIT_USAGE;
    if (r != CAP_OK) {
        fprintf(stderr, "capture_diff: comparison failed: %s\n",
                cap_result_message(r));
    } else {
        int colour = !a->csv && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
        an_diff_report(stdout, &d, &a->o.stat, a->csv, colour,
                       a->csv ? 0 : a->top);
        status = d.gating ? EXIT_REGRESSED : EXIT_SAME;
        if (fflush(stdout) != 0) {
            fprintf(stderr, "capture_diff: writing the report failed: %s\n",
                    strerror(errno));
            status = EXIT_USAGE;
        }
        an_diff_free(&d);
    }
    an_free(mb);
    an_free(mn);
    return status;
}

int main(int argc, char **argv)
{
    if (tool_version(argc, argv, "capture_diff"))
        return tool_version_done();
    args a;
    int p = parse_args(argc, argv, &a);
    if (p == 1) {
        usage(stdout);
        return EXIT_SAME;
    }
    if (p != 0)
        return EXIT_USAGE;
    return run(&a);
}
