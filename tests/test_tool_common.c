/*
 * test_tool_common.c - tools/common: the option walker, the value parsers,
 * sources and the exit table, with the message each failure prints.
 *
 * stderr is sent to a temporary file around each call that may print, so
 * that every message is checked whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tool_args.h"
#include "tool_exit.h"
#include "tool_source.h"

/* ---- stderr capture ------------------------------------------------------ */

static int saved_fd = -1;
static FILE *cap_file;

static void capture_begin(void)
{
    fflush(stderr);
    cap_file = tmpfile();
    assert_non_null(cap_file);
    saved_fd = dup(STDERR_FILENO);
    dup2(fileno(cap_file), STDERR_FILENO);
}

/* What was printed since capture_begin (static buffer). */
static const char *capture_end(void)
{
    static char buf[1024];
    fflush(stderr);
    dup2(saved_fd, STDERR_FILENO);
    close(saved_fd);
    rewind(cap_file);
    size_t n = fread(buf, 1, sizeof buf - 1, cap_file);
    buf[n] = 0;
    fclose(cap_file);
    return buf;
}

enum { O_SECONDS = 1, O_CSV, O_HELP, O_QUIET };
static const tool_opt opts[] = {{"seconds", 0, 1, O_SECONDS},
                                {"csv", 0, 0, O_CSV},
                                {"help", 'h', 0, O_HELP},
                                {"quiet", 'q', 0, O_QUIET}};

/* ---- the walker ------------------------------------------------------------ */

static void options_and_operands_come_in_order(void **state)
{
    (void)state;
    char *argv[] = {"tool", "a.cap", "--seconds", "2", "-", "--csv",
                    "--seconds=3", "-q", "b.cap", NULL};
    tool_args t;
    assert_int_equal(tool_args_init(&t, "tool", 9, argv, opts, 4), 0);
    assert_int_equal(tool_args_next(&t), O_SECONDS);
    assert_string_equal(t.option, "--seconds");
    assert_string_equal(t.value, "2");
    assert_int_equal(tool_args_next(&t), O_CSV);
    assert_null(t.value);
    assert_int_equal(tool_args_next(&t), O_SECONDS);
    assert_string_equal(t.value, "3");
    assert_int_equal(tool_args_next(&t), O_QUIET);
    assert_int_equal(tool_args_next(&t), TOOL_ARGS_END);
    assert_int_equal(t.noperands, 3);
    assert_string_equal(t.operands[0], "a.cap");
    assert_string_equal(t.operands[1], "-");
    assert_string_equal(t.operands[2], "b.cap");
    assert_false(t.seen_split);
    assert_int_equal(t.split, 3);
    tool_args_free(&t);
}

static void a_double_dash_ends_the_options_and_splits_the_operands(void **state)
{
    (void)state;
    char *argv[] = {"tool", "a", "b", "--", "--csv", "c", NULL};
    tool_args t;
    assert_int_equal(tool_args_init(&t, "tool", 6, argv, opts, 4), 0);
    assert_int_equal(tool_args_next(&t), TOOL_ARGS_END);
    assert_true(t.seen_split);
    assert_int_equal(t.split, 2);
    assert_int_equal(t.noperands, 4);
    assert_string_equal(t.operands[2], "--csv"); /* an operand after -- */
    tool_args_free(&t);
}

static void usage_errors_print_one_line_each(void **state)
{
    (void)state;
    static const struct {
        char *arg;
        const char *message;
    } cases[] = {
        {"--frobnicate", "tool: unknown option '--frobnicate' (see --help)\n"},
        {"--sec", "tool: unknown option '--sec' (see --help)\n"},
        {"-x", "tool: unknown option '-x' (see --help)\n"},
        {"-hq", "tool: unknown option '-hq' (see --help)\n"},
        {"--csv=1", "tool: --csv takes no value (see --help)\n"},
        {"--seconds", "tool: --seconds needs a value (see --help)\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *argv[] = {"tool", cases[i].arg, NULL};
        tool_args t;
        assert_int_equal(tool_args_init(&t, "tool", 2, argv, opts, 4), 0);
        capture_begin();
        int id = tool_args_next(&t);
        const char *err = capture_end();
        assert_int_equal(id, TOOL_ARGS_ERROR);
        assert_string_equal(err, cases[i].message);
        tool_args_free(&t);
    }
}

/* ---- values ---------------------------------------------------------------- */

static void numbers_are_checked_against_their_range(void **state)
{
    (void)state;
    double v = -1;
    assert_int_equal(tool_parse_number("t", "--x", "2.5", 0, 10, &v), 0);
    assert_true(v == 2.5);
    capture_begin();
    assert_int_equal(tool_parse_number("t", "--x", "11", 0, 10, &v), -1);
    assert_string_equal(capture_end(),
                        "t: --x needs a number in [0, 10], not '11'\n");
    capture_begin();
    assert_int_equal(tool_parse_number("t", "--x", "nan", 0, 1.0 / 0.0, &v),
                     -1);
    assert_string_equal(capture_end(), "t: --x needs a number >= 0, not 'nan'\n");
    capture_begin();
    assert_int_equal(tool_parse_number("t", "--x", "1x", 0, 10, &v), -1);
    capture_end();
    assert_true(v == 2.5); /* untouched on failure */
}

static void counts_are_whole_numbers(void **state)
{
    (void)state;
    uint64_t n = 0;
    assert_int_equal(tool_parse_count("t", "--n", "42", 1, 100, &n), 0);
    assert_int_equal(n, 42);
    static const char *const bad[] = {"0", "101", "1.5", "-3", "+3", " 3", "",
                                      "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        capture_begin();
        int rc = tool_parse_count("t", "--n", bad[i], 1, 100, &n);
        const char *err = capture_end();
        if (rc != -1 || strncmp(err, "t: --n needs a whole number in [1, 100]",
                                39) != 0)
            fail_msg("'%s': rc %d, %s", bad[i], rc, err);
    }
    capture_begin();
    assert_int_equal(tool_parse_count("t", "--n", "x", 1, UINT64_MAX, &n), -1);
    assert_string_equal(capture_end(),
                        "t: --n needs a whole number >= 1, not 'x'\n");
}

static void durations_take_a_unit(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        double want;
    } ok[] = {{"2", 2}, {"2s", 2}, {"250ms", 0.25}, {"1.5min", 90},
              {"2h", 7200}, {"0.001", 0.001}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        double v = -1;
        assert_int_equal(tool_parse_seconds("t", "--s", ok[i].s, 0, 1e9, &v),
                         0);
        assert_true(v > ok[i].want * (1 - 1e-12) &&
                    v < ok[i].want * (1 + 1e-12));
    }
    static const char *const bad[] = {"2 s", "2sec", "ms", "-1", "2x", "3h"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double v;
        capture_begin();
        int rc = tool_parse_seconds("t", "--s", bad[i], 0, 7200, &v);
        const char *err = capture_end();
        if (rc != -1 || !strstr(err, "--s needs a duration in [0, 7200] s"))
            fail_msg("'%s': rc %d, %s", bad[i], rc, err);
    }
}

static void format_versions_are_the_four_written(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        unsigned major;
        int no_list;
    } ok[] = {{"1.1", 1, 0}, {"2.0", 2, 0}, {"3.0", 3, 1}, {"3.1", 3, 0}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        unsigned major = 9;
        int no_list = 9;
        assert_int_equal(tool_parse_format_version("t", "--v", ok[i].s, &major,
                                                   &no_list),
                         0);
        assert_int_equal(major, ok[i].major);
        assert_int_equal(no_list, ok[i].no_list);
    }
    unsigned major;
    int no_list;
    capture_begin();
    assert_int_equal(tool_parse_format_version("t", "--v", "3", &major,
                                               &no_list),
                     -1);
    assert_string_equal(capture_end(),
                        "t: --v '3': expected 1.1, 2.0, 3.0, 3.1 or 4.0\n");
}

static void option_values_name_the_option_without_its_value(void **state)
{
    (void)state;
    char *argv[] = {"tool", "--seconds=abc", NULL};
    tool_args t;
    assert_int_equal(tool_args_init(&t, "tool", 2, argv, opts, 4), 0);
    assert_int_equal(tool_args_next(&t), O_SECONDS);
    double v;
    capture_begin();
    assert_int_equal(tool_args_seconds(&t, 0, 10, &v), -1);
    const char *err = capture_end();
    assert_non_null(strstr(err, "tool: --seconds needs a duration"));
    assert_non_null(strstr(err, "not 'abc'\n"));
    tool_args_free(&t);
}

/* ---- sources --------------------------------------------------------------- */

static void addresses_split_at_the_last_colon(void **state)
{
    (void)state;
    char host[64], port[8];
    assert_int_equal(tool_address_split("127.0.0.1:7000", host, sizeof host,
                                        port, sizeof port),
                     0);
    assert_string_equal(host, "127.0.0.1");
    assert_string_equal(port, "7000");
    assert_int_equal(tool_address_split("[::1]:65535", host, sizeof host, port,
                                        sizeof port),
                     0);
    assert_string_equal(host, "::1");
    assert_string_equal(port, "65535");
    static const char *const bad[] = {"host", ":80", "host:", "host:0",
                                      "host:65536", "host:8x", "[]:80",
                                      "host:123456"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (tool_address_split(bad[i], host, sizeof host, port,
                               sizeof port) == 0)
            fail_msg("'%s' split as an address", bad[i]);
}

static void sources_are_told_apart(void **state)
{
    (void)state;
    tool_source s;
    tool_source_parse(&s, "-");
    assert_int_equal(s.kind, TOOL_SOURCE_STDIN);
    tool_source_parse(&s, "localhost:7000");
    assert_int_equal(s.kind, TOOL_SOURCE_ADDRESS);
    assert_string_equal(s.host, "localhost");
    assert_string_equal(s.port, "7000");
    tool_source_parse(&s, "run.cap");
    assert_int_equal(s.kind, TOOL_SOURCE_FILE);
    assert_int_equal(s.fd, -1);
    /* a file whose name looks like an address is a file */
    char dir[] = "/tmp/tool_common-XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(chdir(dir), 0);
    FILE *f = fopen("a:1", "w");
    assert_non_null(f);
    fclose(f);
    tool_source_parse(&s, "a:1");
    assert_int_equal(s.kind, TOOL_SOURCE_FILE);
    assert_int_equal(tool_source_open(&s, "t", NULL, NULL), TOOL_EXIT_OK);
    assert_true(s.fd >= 0);
    assert_string_equal(s.path, "a:1");
    tool_source_close(&s);
    assert_int_equal(s.fd, -1);
    unlink("a:1");
    assert_int_equal(chdir("/"), 0);
    rmdir(dir);
}

static void missing_inputs_and_folders_are_usage_errors(void **state)
{
    (void)state;
    tool_source s;
    tool_source_parse(&s, "/nonexistent/x.cap");
    capture_begin();
    assert_int_equal(tool_source_open(&s, "t", NULL, NULL), TOOL_EXIT_USAGE);
    assert_string_equal(capture_end(), "t: /nonexistent/x.cap: cannot open: "
                                       "No such file or directory\n");
    tool_source_parse(&s, "/");
    capture_begin();
    assert_int_equal(tool_source_open(&s, "t", NULL, NULL), TOOL_EXIT_USAGE);
    assert_string_equal(capture_end(), "t: /: cannot open: Is a directory\n");
    /* a live source without a recorder (a build without the converters) */
    tool_source_parse(&s, "localhost:7000");
    capture_begin();
    assert_int_equal(tool_source_open(&s, "t", NULL, NULL), TOOL_EXIT_USAGE);
    assert_non_null(strstr(capture_end(), "t: localhost:7000: this build "
                                          "reads no live source"));
}

static tool_exit record_cut(void *user, const tool_source *src,
                            const char *path)
{
    (void)src;
    *(int *)user += 1;
    FILE *f = fopen(path, "w");
    if (!f)
        return TOOL_EXIT_USAGE;
    fputs("CAP", f);
    fclose(f);
    return TOOL_EXIT_INCOMPLETE; /* cut short, but written */
}

static void a_live_source_is_recorded_into_memory(void **state)
{
    (void)state;
    tool_source s;
    int calls = 0;
    tool_source_parse(&s, "localhost:7000");
    assert_int_equal(tool_source_open(&s, "t", record_cut, &calls),
                     TOOL_EXIT_INCOMPLETE);
    assert_int_equal(calls, 1);
    assert_true(s.fd >= 0);
    assert_non_null(strstr(s.path, "/proc/self/fd/"));
    char buf[8] = "";
    FILE *f = fopen(s.path, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "CAP");
    tool_source_close(&s);
}

/* ---- the exit table -------------------------------------------------------- */

static void the_exit_table_has_four_statuses_and_names(void **state)
{
    (void)state;
    assert_int_equal(TOOL_EXIT_OK, 0);
    assert_int_equal(TOOL_EXIT_FINDING, 1);
    assert_int_equal(TOOL_EXIT_USAGE, 2);
    assert_int_equal(TOOL_EXIT_INCOMPLETE, 3);
    assert_string_equal(tool_exit_name(TOOL_EXIT_USAGE), "TOOL_EXIT_USAGE");
    assert_string_equal(tool_exit_name((tool_exit)7), "TOOL_EXIT_UNKNOWN");
    assert_non_null(strstr(tool_exit_message(TOOL_EXIT_FINDING), "regression"));
    assert_int_equal(tool_exit_worst(TOOL_EXIT_FINDING, TOOL_EXIT_INCOMPLETE),
                     TOOL_EXIT_INCOMPLETE);
    assert_int_equal(tool_exit_worst(TOOL_EXIT_OK, TOOL_EXIT_FINDING),
                     TOOL_EXIT_FINDING);
}

static void results_map_to_statuses(void **state)
{
    (void)state;
    assert_int_equal(tool_exit_of_result(CAP_OK), TOOL_EXIT_OK);
    assert_int_equal(tool_exit_of_result(CAP_E_IO), TOOL_EXIT_INCOMPLETE);
    assert_int_equal(tool_exit_of_result(CAP_E_NOMEM), TOOL_EXIT_INCOMPLETE);
    static const cap_result input[] = {CAP_E_NOT_CAPTURE, CAP_E_CORRUPT,
                                       CAP_E_TRUNCATED, CAP_E_VERSION,
                                       CAP_E_MISUSE, CAP_E_LIMIT,
                                       CAP_E_CHANGED};
    for (size_t i = 0; i < sizeof input / sizeof input[0]; i++)
        assert_int_equal(tool_exit_of_result(input[i]), TOOL_EXIT_USAGE);
}

static void the_help_table_wraps_under_its_first_word(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    tool_exit_help(f);
    fclose(f);
    assert_non_null(strstr(text, "Exit status:\n  0  done: the report or "
                                 "output was written\n"));
    assert_non_null(strstr(text, "\n  2  usage error or unreadable input (a "
                                 "bad option, a missing, damaged or\n     "
                                 "unreachable input): nothing written\n"));
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        assert_non_null(nl);
        assert_true(nl - line <= 79);
        line = nl + 1;
    }
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(options_and_operands_come_in_order),
        cmocka_unit_test(a_double_dash_ends_the_options_and_splits_the_operands),
        cmocka_unit_test(usage_errors_print_one_line_each),
        cmocka_unit_test(numbers_are_checked_against_their_range),
        cmocka_unit_test(counts_are_whole_numbers),
        cmocka_unit_test(durations_take_a_unit),
        cmocka_unit_test(format_versions_are_the_four_written),
        cmocka_unit_test(option_values_name_the_option_without_its_value),
        cmocka_unit_test(addresses_split_at_the_last_colon),
        cmocka_unit_test(sources_are_told_apart),
        cmocka_unit_test(missing_inputs_and_folders_are_usage_errors),
        cmocka_unit_test(a_live_source_is_recorded_into_memory),
        cmocka_unit_test(the_exit_table_has_four_statuses_and_names),
        cmocka_unit_test(results_map_to_statuses),
        cmocka_unit_test(the_help_table_wraps_under_its_first_word),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
