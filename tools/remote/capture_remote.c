/*
 * capture_remote - record a fixed window of a live capture from another
 * machine: capture_remote HOST:PORT OUT.cap [--seconds N] [--skip-seconds S]
 * [--frames N] [--connect-timeout S] [--idle-timeout S] [--format-version V].
 *
 * Option parsing here; the recording is remote.c's (rem_record).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "remote.h"
#include "tool_args.h"
#include "tool_exit.h"
#include "tool_version.h"

#define TOOL "capture_remote"

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
          "                       1.1, 2.0, 3.0, 3.1 or 4.0 (default: 3.1), as\n"
          "                       in capture_convert: 3.0 is 3.1\n"
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
          "Durations (N, S) are seconds, or a number with a unit: ms, s,\n"
          "min, h. A recording that stops early (Ctrl-C, the program ended,\n"
          "the connection dropped, nothing arrived for the idle timeout: the\n"
          "reason is printed), and an OUT.cap that cannot be written, exit 3;\n"
          "a source that cannot be reached within the timeout, or that does\n"
          "not send a capture (it closed the connection at once: full or\n"
          "over; it sent nothing; it sent something else), exits 2.\n\n",
          f);
    tool_exit_help(f);
}

enum { O_SECONDS = 1, O_SKIP, O_FRAMES, O_TIMEOUT, O_IDLE, O_FORMAT, O_QUIET,
       O_HELP };

static const tool_opt opts[] = {
    {"seconds", 0, 1, O_SECONDS},         {"skip-seconds", 0, 1, O_SKIP},
    {"frames", 0, 1, O_FRAMES},           {"connect-timeout", 0, 1, O_TIMEOUT},
    {"idle-timeout", 0, 1, O_IDLE},       {"format-version", 0, 1, O_FORMAT},
    {"quiet", 'q', 0, O_QUIET},           {"help", 'h', 0, O_HELP}};

/* One option into *o. Returns 0, 1 for --help, or -1 after a message. */
static int take_option(rem_options *o, const tool_args *t, int id)
{
    switch (id) {
    case O_SECONDS: return tool_args_seconds(t, 1e-3, 1e9, &o->seconds);
    case O_SKIP: return tool_args_seconds(t, 0, 1e9, &o->skip_seconds);
    case O_FRAMES: return tool_args_count(t, 1, UINT64_MAX, &o->frames);
    case O_TIMEOUT: return tool_args_seconds(t, 0.1, 1e9, &o->connect_timeout);
    case O_IDLE: return tool_args_seconds(t, 0.1, 1e9, &o->idle_timeout);
    case O_FORMAT:
        return tool_args_format_version(t, &o->format_major,
                                        &o->no_frame_list);
    case O_QUIET: o->quiet = 1; return 0;
    default: return 1; /* O_HELP */
    }
}

int main(int argc, char **argv)
{
    if (tool_version(argc, argv, TOOL))
        return tool_version_done();
    rem_options o = {.tool = TOOL, .connect_timeout = 10};
    tool_args t;
    if (tool_args_init(&t, TOOL, argc, argv, opts, sizeof opts / sizeof *opts))
        return TOOL_EXIT_USAGE;
    int id, rc = 0;
    while (rc == 0 && (id = tool_args_next(&t)) != TOOL_ARGS_END)
        rc = id < 0 ? -1 : take_option(&o, &t, id);
    if (rc == 0 && t.noperands != 2)
        rc = tool_usage_error(TOOL, "give HOST:PORT and OUT.cap (see --help)");
    if (rc == 0) {
        o.source = t.operands[0];
        o.out = t.operands[1];
    }
    tool_args_free(&t);
    if (rc == 1) {
        usage(stdout);
        return fflush(stdout) == 0 ? TOOL_EXIT_OK : TOOL_EXIT_INCOMPLETE;
    }
    if (rc != 0)
        return TOOL_EXIT_USAGE;
    o.progress = isatty(STDERR_FILENO);
    return (int)rem_record(&o);
}
