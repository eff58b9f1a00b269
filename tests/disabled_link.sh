#!/bin/sh
# disabled_link.sh INCLUDE_DIR - with -DCAP_DISABLE a program needs no
# library at all.
#
# Lists every CAP_API function of capture.h from the header itself, then
# builds a program that takes the address of each (which needs a definition:
# an inline no-op, or the library) with -DCAP_DISABLE and links it without
# -lcapture: a function without its no-op line fails the compile or the
# link. The README's recording example is built the same way and run: it
# must not create its capture file. Control: the same program without
# CAP_DISABLE must fail to link, or the check could not see a missing no-op.
set -u
inc=$(cd "$1" && pwd)
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
hdr=$inc/capture/capture.h

fns=$(grep -o 'CAP_API[^(;]*(' "$hdr" | sed 's/($//' | awk '{ print $NF }' |
      sed 's/^\**//' | grep -v '^cap__' | sort -u)
n=$(echo "$fns" | grep -c .)
for must in cap_open cap_frame_mark cap_gpu_frame; do
    if ! echo "$fns" | grep -qx "$must"; then
        echo "FAIL: $must is not among the $n functions listed from $hdr:"
        echo "$fns"
        exit 1
    fi
done

{
    echo '#include <capture/capture.h>'
    echo '#include <stdio.h>'
    echo 'typedef void (*any_fn)(void);'
    echo 'static any_fn const fns[] = {'
    for f in $fns; do echo "    (any_fn)$f,"; done
    echo '};'
    echo 'int main(void)'
    echo '{'
    echo '    size_t n = 0;'
    echo '    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)'
    echo '        n += fns[i] != NULL;'
    printf '    printf("%%zu functions\\n", n);\n'
    echo '    return 0;'
    echo '}'
} >"$tmp/all.c"

cat >"$tmp/readme.c" <<'C'
#include <capture/capture.h>
#include <stdio.h>
void update(void);
void render(void);
double rss_mib(void); /* unused when compiled out: not static */
void update(void) {}
void render(void) {}
double rss_mib(void) { return 1.0; }
int main(void)
{
    cap_open("run.cap", NULL);
    CAP_THREAD("main");
    for (int running = 3; running; running--) {
        CAP_FRAME_MARK();
        { CAP_SCOPE("update"); update(); }
        CAP_BEGIN("render"); render(); CAP_END();
        CAP_COUNTER("rss_mib", rss_mib());
    }
    cap_producer_stats st;
    cap_get_stats(&st);
    printf("stats %llu, status %d\n", (unsigned long long)st.events,
           (int)cap_status());
    return cap_close() != CAP_OK;
}
C

fail=0
flags="-std=c11 -Wall -Wextra -Werror -O0 -I$inc"
# shellcheck disable=SC2086
if $cc $flags -DCAP_DISABLE "$tmp/all.c" -o "$tmp/all" 2>"$tmp/err" &&
   out=$("$tmp/all") && [ "$out" = "$n functions" ]; then
    echo "ok   all $n CAP_API functions of capture.h link without -lcapture"
else
    echo "FAIL: with -DCAP_DISABLE, a program naming every function of capture.h"
    echo "      does not build without the library (a no-op line missing?):"
    cat "$tmp/err"; fail=1
fi
# shellcheck disable=SC2086
if (cd "$tmp" && $cc $flags -DCAP_DISABLE readme.c -o readme 2>err &&
    out=$(./readme) && [ "$out" = "stats 0, status 0" ] && [ ! -e run.cap ]); then
    echo "ok   README's example links without -lcapture, runs, writes no file"
else
    echo "FAIL: README's example with -DCAP_DISABLE:"; cat "$tmp/err"
    ls -l "$tmp"; fail=1
fi
# shellcheck disable=SC2086
if $cc $flags "$tmp/all.c" -o "$tmp/control" 2>/dev/null; then
    echo "FAIL: control: without CAP_DISABLE the program links without -lcapture,"
    echo "      so this check cannot see a missing no-op"
    fail=1
else
    echo "ok   control: without CAP_DISABLE it needs the library"
fi
exit $fail
