/*
 * fuzz_convert.c - libFuzzer targets: the Chrome JSON and puffin importers
 * and the folded-stack and Chrome exporters on arbitrary bytes (one
 * executable per converter: FUZZ_IMPORTER names the cvt_* function at
 * compile time).
 *
 * The importer writes its capture to /dev/null and its diagnostics to a
 * null stream. Any exit code is fine (2 is the documented answer to bad
 * input); a crash, sanitizer report, leak or hang is a bug.
 */
#include "cvt.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_input.h"

#ifndef FUZZ_IMPORTER
#error "define FUZZ_IMPORTER (a cvt_* conversion function of cvt.h)"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *null_diag;
    if (!null_diag) {
        null_diag = fopen("/dev/null", "w");
        if (!null_diag)
            abort();
    }
    char path[64];
    fuzz_input_path(data, size, path, sizeof path);
    cvt_options o = {.diag = null_diag};
    (void)FUZZ_IMPORTER(path, "/dev/null", &o);
    return 0;
}
