#!/bin/sh
# smoke.sh - build the libFuzzer targets and run each one briefly (for CI).
#
#   fuzz/smoke.sh [TOTAL_SECONDS] [BUILD_DIR]
#
# TOTAL_SECONDS (default 60) is shared between the targets that exist
# (fuzz_reader and fuzz_analysis always; fuzz_stream and fuzz_remote, the
# live client side, with the converters; fuzz_chrome and fuzz_puffin once
# their importers are in tools/convert/). BUILD_DIR (default build-fuzz) is configured with
# clang and -Dfuzz=true when it does not exist yet.
#
# Seeds: fixtures/ and ../shared/corpus (when present), copied into a
# scratch corpus so nothing in the tree is written. A crash, leak,
# sanitizer report or timeout fails the script and leaves the input under
# BUILD_DIR/fuzz-artifacts/: turn it into a fixture and a regression test
# (see docs/FUZZING.md).
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
total=${1:-60}
dir=${2:-$src/build-fuzz}
shared=$src/../shared/corpus

if [ ! -f "$dir/build.ninja" ]; then
    CC=clang meson setup "$dir" "$src" -Dfuzz=true >/dev/null
fi
ninja -C "$dir" build.ninja >/dev/null # regenerate if meson files changed
targets=$(ninja -C "$dir" -t targets all |
          sed -n 's/^\(fuzz\/fuzz_[a-z_]*\): .*/\1/p' | sort -u)
[ -n "$targets" ] || { echo "smoke.sh: no fuzz targets in $dir" >&2; exit 1; }
# shellcheck disable=SC2086 # one word per target
ninja -C "$dir" $targets fuzz/seed_raw >/dev/null
n=$(echo "$targets" | wc -w)
per=$(( (total + n - 1) / n ))

# seed DIR PATTERN MAXBYTES ROOTS...: copy matching files into DIR
seed() {
    to=$1 pat=$2 max=$3
    shift 3
    for root in "$@"; do
        [ -d "$root" ] || continue
        find "$root" -type f -name "$pat" -size -"$max"c \
            -exec cp {} "$to"/ \; 2>/dev/null || true
    done
}

# FUZZ_KEEP=DIR keeps each target's final corpus and log in DIR/<target>
# (to measure coverage after a long run, see docs/FUZZING.md).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$dir/fuzz-artifacts"
status=0
for t in $targets; do
    name=$(basename "$t")
    mkdir -p "$scratch/$name"
    case $name in
    fuzz_reader) seed "$scratch/$name" '*.cap' 131072 "$src/fixtures"
                 # the same captures with uncompressed chunks (seed_raw.c)
                 for f in "$scratch/$name"/*.cap; do
                     "$dir/fuzz/seed_raw" "$f" "${f%.cap}-raw.cap" || true
                 done
                 maxlen=65536 ;;
    fuzz_analysis|fuzz_folded_out|fuzz_chrome_out|fuzz_perfetto_out|\
    fuzz_svg_out|fuzz_stream|fuzz_remote)
                 seed "$scratch/$name" '*.cap' 131072 "$src/fixtures"
                 for f in "$scratch/$name"/*.cap; do
                     "$dir/fuzz/seed_raw" "$f" "${f%.cap}-raw.cap" || true
                 done
                 maxlen=65536 ;;
    fuzz_chrome) seed "$scratch/$name" '*.json' 65536 "$src/fixtures" \
                      "$shared/chrome-trace"
                 maxlen=65536 ;;
    fuzz_puffin) seed "$scratch/$name" '*.puffin' 65536 "$src/fixtures" \
                      "$shared/puffin"
                 maxlen=65536 ;;
    *) maxlen=65536 ;;
    esac
    echo "== $name: $per s, $(find "$scratch/$name" -type f | wc -l) seeds"
    if ! "$dir/$t" -max_total_time="$per" -timeout=10 -rss_limit_mb=2048 \
        -max_len="$maxlen" -print_final_stats=1 \
        -artifact_prefix="$dir/fuzz-artifacts/$name-" \
        "$scratch/$name" >"$scratch/$name.log" 2>&1; then
        status=1
        echo "smoke.sh: $name FAILED; log tail:" >&2
        tail -n 40 "$scratch/$name.log" >&2
    fi
    grep -E '^stat::(number_of_executed_units|peak_rss_mb)|cov: ' \
        "$scratch/$name.log" | tail -n 3
    if [ -n "${FUZZ_KEEP:-}" ]; then
        mkdir -p "$FUZZ_KEEP"
        rm -rf "${FUZZ_KEEP:?}/$name"
        cp -r "$scratch/$name" "$FUZZ_KEEP/$name"
        cp "$scratch/$name.log" "$FUZZ_KEEP/$name.log"
    fi
done
exit $status
