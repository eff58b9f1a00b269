#!/bin/sh
# sanitizers.sh - build libcapture twice with sanitizers and run the tests.
#
#   tests/sanitizers.sh [OUTDIR]
#
# OUTDIR (default: the repository root) receives two Meson build dirs:
#   build-asan  AddressSanitizer + UndefinedBehaviorSanitizer (leaks
#               included): the whole test suite runs there;
#   build-tsan  ThreadSanitizer: the threaded producer tests (suite
#               "threads") run there.
# Any sanitizer report fails the test that produced it (halt_on_error, no
# recovery from UBSan), so the script exits non-zero. Called by .ci/run.
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src}
mkdir -p "$out"
out=$(cd "$out" && pwd)

export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1

# setup DIR OPTIONS...: configure DIR (or reconfigure it) with OPTIONS.
setup() {
    dir=$1
    shift
    if [ -f "$dir/build.ninja" ]; then
        meson configure "$dir" "$@" >/dev/null
    else
        meson setup "$dir" "$src" "$@" >/dev/null
    fi
    ninja -C "$dir" >/dev/null
}

start=$(date +%s)
echo "== ASan+UBSan build: $out/build-asan"
setup "$out/build-asan" -Dbuildtype=debugoptimized -Dwerror=true \
    -Db_sanitize=address,undefined -Db_lundef=false \
    "-Dc_args=-fno-sanitize-recover=all -fno-omit-frame-pointer"
echo "== ASan+UBSan: the whole suite"
meson test -C "$out/build-asan" --print-errorlogs --timeout-multiplier 3

echo "== TSan build: $out/build-tsan"
setup "$out/build-tsan" -Dbuildtype=debugoptimized -Dwerror=true \
    -Db_sanitize=thread -Db_lundef=false "-Dc_args=-fno-omit-frame-pointer"
# Some kernels randomise mmap more than this TSan runtime can map around
# ("unexpected memory mapping"); running without ASLR avoids it.
norand=""
if command -v setarch >/dev/null 2>&1 && setarch "$(uname -m)" -R true 2>/dev/null; then
    norand="setarch $(uname -m) -R"
fi
echo "== TSan: suite 'threads'"
$norand meson test -C "$out/build-tsan" --suite threads --print-errorlogs \
    --timeout-multiplier 5
echo "== sanitizers: passed in $(( $(date +%s) - start )) s"
