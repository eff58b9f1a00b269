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

typedef struct args {
    const char *base, *new_;
    cap_diff_options o;
    size_t top;
    const char *scope;
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
          "  --threshold PCT    noise threshold: smaller changes never count "
          "(default 2)\n"
          "  --alpha A          significance level after Holm correction "
          "(default 0.05)\n"
          "  --min-frames N     frames a scope needs on each side (default "
          "10)\n"
          "  --top N            show the N largest changes (default 20; 0: "
          "all)\n"
          "  --scope NAME       compare this scope only (and the frame time)\n"
          "  --by-path          match scopes by call path, not by name\n"
          "  --skip-seconds S   drop the first S seconds of both runs "
          "(warm-up)\n"
          "  --seed N           bootstrap seed (default 1)\n"
          "  --resamples N      bootstrap resamples (default 2000)\n"
          "  --csv              CSV (RFC 4180) with every row\n"
          "  -h, --help         this help\n"
          "  --version          the version, then exit\n"
          "\n"
          "Verdicts: regressed / improved (p < alpha after Holm and the "
          "whole interval\nbeyond the threshold), unchanged (interval within "
          "the threshold), inconclusive,\ninsufficient (too few frames), "
          "added / removed.\n"
          "Exit status: 0 nothing regressed; 1 at least one regression; 2 "
          "usage error\nor unreadable input.\n",
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
           O_SEED, O_RES, O_CSV };
    static const struct option opts[] = {
        {"threshold", required_argument, 0, O_THR},
        {"alpha", required_argument, 0, O_ALPHA},
        {"min-frames", required_argument, 0, O_MIN},
        {"top", required_argument, 0, O_TOP},
        {"scope", required_argument, 0, O_SCOPE},
        {"by-path", no_argument, 0, O_PATH},
        {"skip-seconds", required_argument, 0, O_SKIP},
        {"seed", required_argument, 0, O_SEED},
        {"resamples", required_argument, 0, O_RES},
        {"csv", no_argument, 0, O_CSV},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    a->top = 20;
    a->o.seed = 1;
    double v;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case O_THR:
            if (number("--threshold", optarg, 1e-9, 1000, &a->o.threshold_pct))
                return -1;
            break;
        case O_ALPHA:
            if (number("--alpha", optarg, 1e-12, 0.999999, &a->o.alpha))
                return -1;
            break;
        case O_MIN:
            if (number("--min-frames", optarg, 2, 1e9, &v))
                return -1;
            a->o.min_frames = (size_t)v;
            break;
        case O_TOP:
            if (number("--top", optarg, 0, 1e9, &v))
                return -1;
            a->top = (size_t)v;
            break;
        case O_SEED:
            if (number("--seed", optarg, 0, 1.8e19, &v))
                return -1;
            a->o.seed = (uint64_t)v;
            break;
        case O_RES:
            if (number("--resamples", optarg, 100, 1e7, &v))
                return -1;
            a->o.resamples = (size_t)v;
            break;
        case O_SKIP:
            if (number("--skip-seconds", optarg, 0, 1e9, &a->skip_seconds))
                return -1;
            break;
        case O_SCOPE: a->scope = optarg; break;
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
    if (a->scope && an_find_scope(mb, AN_CPU, a->scope) < 0 &&
        an_find_scope(mb, AN_GPU, a->scope) < 0 &&
        an_find_scope(mn, AN_CPU, a->scope) < 0 &&
        an_find_scope(mn, AN_GPU, a->scope) < 0) {
        fprintf(stderr, "capture_diff: no scope named '%s' in either run\n",
                a->scope);
        an_free(mb);
        an_free(mn);
        return EXIT_USAGE;
    }
    an_diff d;
    r = an_diff_run(&d, mb, mn, &a->o, a->scope);
    int status = EXIT_USAGE;
    if (r != CAP_OK) {
        fprintf(stderr, "capture_diff: comparison failed: %s\n",
                cap_result_message(r));
    } else {
        int colour = !a->csv && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
        an_diff_report(stdout, &d, &a->o, a->csv, colour, a->csv ? 0 : a->top);
        status = d.regressed ? EXIT_REGRESSED : EXIT_SAME;
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
