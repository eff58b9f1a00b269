/*
 * tmp_dir.h - a scratch folder per test group, for cmocka's group setup
 * and teardown: setup_dir makes /tmp/cap_test_<TMP_DIR_NAME>_XXXXXX into
 * tmpdir, teardown_dir removes it with everything in it. Define
 * TMP_DIR_NAME (a string) before including.
 */
#ifndef TMP_DIR_H
#define TMP_DIR_H

#include <stdio.h>
#include <stdlib.h>

#ifndef TMP_DIR_NAME
#error "define TMP_DIR_NAME before including tmp_dir.h"
#endif

static char tmpdir[256];

static int setup_dir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/cap_test_%s_XXXXXX", TMP_DIR_NAME);
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
