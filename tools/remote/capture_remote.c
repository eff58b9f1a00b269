/*
 * capture_remote - record a fixed window of a live capture from another
 * machine: capture_remote HOST:PORT OUT.cap [--seconds N] [--skip-seconds S]
 * [--frames N] [--connect-timeout S] [--idle-timeout S] [--format-version V].
 *
 * Option parsing here; the recording is remote.c's (rem_record).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tool_version.h"
#include "remote.h"

static void usage(FILE *f)
{
    fputs("usage: capture_remote [options] HOST:PORT OUT.cap\n"
          "\n"
          "Connect to a program that serves its capture (CAP_LISTEN=ADDR:PORT,\n"
          "or the listen option of cap_open) and write what it records into\n"
          "OUT.cap, a complete capture file.\n"
          "\n"
          "  --seconds N          record N seconds, then stop (default: until\n"
          "                       the program closes its capture or Ctrl-C)\n"
          "  --skip-seconds S     start S seconds after connecting (default 0)\n"
          "  --frames N           stop after N frames (default: no limit)\n"
          "  --connect-timeout S  keep trying to connect for S seconds "
          "(default 10)\n"
          "  --idle-timeout S     give up when nothing arrives for S seconds\n"
          "                       (default 10; a program that records nothing\n"
          "                       sends nothing)\n"
          "  --format-version V   the version of the capture format written,\n"
          "                       1.1, 2.0, 3.0 or 3.1 (default: 3.1, the most\n"
          "                       compact), as in capture_convert: 3.0 is 3.1\n"
          "                       without the frames listed in the footer, 2.0\n"
          "                       for readers older than format 3.0, 1.1 for\n"
          "                       those older than 2.0\n"
          "  -q, --quiet          no summary line when all went well\n"
          "  -h, --help           this help\n"
          "  --version            the version, then exit\n"
          "\n"
          "The window counts from the first moment the stream holds complete\n"
          "(stream_start_ns): every frame that begins in it is written whole.\n"
          "OUT.cap is written as the stream arrives, so even a killed\n"
          "capture_remote leaves a capture that reads up to its last whole\n"
          "block; Ctrl-C, the program exiting and a dropped connection all\n"
          "leave a complete OUT.cap with what arrived whole. A progress line\n"
          "is shown on a terminal.\n"
          "\n"
          "Exit status: 0 the window was recorded (without a window: the\n"
          "program closed its capture); 1 OUT.cap was written but the\n"
          "recording stopped early (Ctrl-C, the program ended, the connection\n"
          "dropped, nothing arrived for the idle timeout; the reason is\n"
          "printed); 2 usage error; 3 cannot connect within the timeout, or\n"
          "the server does not send a capture (it closed the connection at\n"
          "once: full or over; it sent nothing; it sent something else);\n"
          "4 OUT.cap cannot be written.\n",
          f);
}

static int number(const char *opt, const char *s, double min, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= min) || v > 1e9) {
        fprintf(stderr, "capture_remote: %s needs a number >= %g, not '%s'\n",
                opt, min, s);
        return -1;
    }
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    enum { O_SECONDS = 256, O_SKIP, O_FRAMES, O_TIMEOUT, O_FORMAT, O_IDLE };
    static const struct option opts[] = {
        {"seconds", required_argument, 0, O_SECONDS},
        {"skip-seconds", required_argument, 0, O_SKIP},
        {"frames", required_argument, 0, O_FRAMES},
        {"connect-timeout", required_argument, 0, O_TIMEOUT},
        {"idle-timeout", required_argument, 0, O_IDLE},
        {"format-version", required_argument, 0, O_FORMAT},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    if (tool_version(argc, argv, "capture_remote"))
        return tool_version_done();
    rem_options o = {.tool = "capture_remote", .connect_timeout = 10};
    double v;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":hq", opts, NULL)) != -1) {
        switch (c) {
        case O_SECONDS:
            if (number("--seconds", optarg, 1e-3, &o.seconds))
                return REM_USAGE;
            break;
        case O_SKIP:
            if (number("--skip-seconds", optarg, 0, &o.skip_seconds))
                return REM_USAGE;
            break;
        case O_FRAMES:
            if (number("--frames", optarg, 1, &v))
                return REM_USAGE;
            o.frames = (uint64_t)v;
            break;
        case O_TIMEOUT:
            if (number("--connect-timeout", optarg, 0.1, &o.connect_timeout))
                return REM_USAGE;
            break;
        case O_IDLE:
            if (number("--idle-timeout", optarg, 0.1, &o.idle_timeout))
                return REM_USAGE;
            break;
        case O_FORMAT:
            o.format_major = strcmp(optarg, "1.1") == 0   ? 1
                             : strcmp(optarg, "2.0") == 0 ? 2
                             : strcmp(optarg, "3.0") == 0 ||
                                     strcmp(optarg, "3.1") == 0
                                 ? 3
                                 : 0;
            o.no_frame_list = strcmp(optarg, "3.0") == 0;
            if (!o.format_major) {
                fprintf(stderr, "capture_remote: --format-version '%s': "
                                "expected 1.1, 2.0, 3.0 or 3.1\n", optarg);
                return REM_USAGE;
            }
            break;
        case 'q':
            o.quiet = 1;
            break;
        case 'h':
            usage(stdout);
            return REM_OK;
        case ':':
            fprintf(stderr, "capture_remote: %s needs a value\n",
                    argv[optind - 1]);
            return REM_USAGE;
        default:
            fprintf(stderr, "capture_remote: unknown option '%s' (see --help)\n",
                    argv[optind - 1]);
            return REM_USAGE;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "capture_remote: give HOST:PORT and OUT.cap (see "
                        "--help)\n");
        return REM_USAGE;
    }
    o.source = argv[optind];
    o.out = argv[optind + 1];
    o.progress = isatty(STDERR_FILENO);
    return rem_record(&o);
}
