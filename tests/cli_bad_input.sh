#!/bin/sh
# cli_bad_input.sh - every tool answers bad input with one clear line on
# stderr naming the file, and exit status 2 (the documented "unreadable
# input" status of read_capture, capture_diff and capture_convert).
#
#   cli_bad_input.sh READ_CAPTURE CAPTURE_DIFF CAPTURE_CONVERT
#
# Each argument is the path of a built tool; a path that does not exist is
# skipped, and the script says so. Run by `meson test cli_bad_input`.
#
# Bad inputs: an empty file, random bytes, a capture of a newer major
# version (a valid capture whose header says 4.0, checksum fixed), a
# directory, a missing file. Each tool reads each of them where it takes a
# capture (capture_diff on either side, capture_convert as .cap, and as
# Chrome JSON with --from json). Then, best effort, a capture that another
# process cuts short or overwrites while the tool reads it: any outcome but
# a crash is accepted (the tool may finish first, or report the damage),
# and an exit status of 2 must still come with exactly one line.
set -u

src=$(cd "$(dirname "$0")/.." && pwd)
good=$src/fixtures/demo.cap
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
checks=0

if [ $# -ne 3 ]; then
    echo "usage: cli_bad_input.sh READ_CAPTURE CAPTURE_DIFF CAPTURE_CONVERT" >&2
    exit 2
fi
read_capture=$1 capture_diff=$2 capture_convert=$3
if [ ! -f "$good" ]; then
    echo "cli_bad_input.sh: $good is missing" >&2
    exit 1
fi

# ---- the bad inputs -----------------------------------------------------

: >"$tmp/empty.cap"
: >"$tmp/empty.json"
head -c 4096 /dev/urandom >"$tmp/random.cap"
cp "$tmp/random.cap" "$tmp/random.json"
mkdir "$tmp/directory.cap" "$tmp/directory.json"
missing_cap=$tmp/missing.cap
missing_json=$tmp/missing.json

# A newer major version (255): bytes 8-9 of the header are the major version
# (little endian), bytes 12-15 the CRC-32 of bytes 0-11. gzip's trailer
# holds the CRC-32 of its input, little endian: the header's own layout.
newer=$tmp/newer-major.cap
{
    head -c 8 "$good"
    printf '\377\000'
    dd if="$good" bs=1 skip=10 count=2 2>/dev/null
} >"$tmp/head12"
{
    cat "$tmp/head12"
    gzip -c <"$tmp/head12" | tail -c 8 | head -c 4
    tail -c +17 "$good"
} >"$newer"

# ---- checking one run ---------------------------------------------------

# expect_bad NAME FILE CMD...: CMD must exit 2 with exactly one line on
# stderr, and that line must name FILE.
expect_bad() {
    name=$1 file=$2
    shift 2
    checks=$((checks + 1))
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    lines=$(wc -l <"$tmp/err")
    why=""
    if [ "$rc" -ne 2 ]; then
        why="exit status $rc, expected 2"
    elif [ "$lines" -ne 1 ]; then
        why="$lines lines on stderr, expected 1"
    elif ! grep -qF -- "$file" "$tmp/err"; then
        why="the stderr line does not name $file"
    fi
    if [ -n "$why" ]; then
        failures=$((failures + 1))
        echo "not ok - $name: $why"
        echo "    command: $*"
        sed 's/^/    stderr: /' "$tmp/err" | head -n 5
    else
        echo "ok - $name: $(cat "$tmp/err")"
    fi
}

# run_bad TOOLNAME FILE: every way TOOLNAME reads FILE.
run_bad() {
    tool=$1 file=$2 label=$3
    case $tool in
    read_capture)
        expect_bad "read_capture $label" "$file" "$read_capture" "$file" ;;
    capture_diff)
        expect_bad "capture_diff $label (base)" "$file" \
            "$capture_diff" "$file" "$good"
        expect_bad "capture_diff $label (new)" "$file" \
            "$capture_diff" "$good" "$file" ;;
    capture_convert)
        case $file in
        *.json)
            expect_bad "capture_convert $label" "$file" \
                "$capture_convert" --from json "$file" "$tmp/converted.cap" ;;
        *)
            expect_bad "capture_convert $label" "$file" \
                "$capture_convert" "$file" "$tmp/converted.json" ;;
        esac ;;
    esac
}

# ---- a file that changes while it is read (best effort) -----------------

# A large capture: the cap -> cap copy of every fixture would be small, so
# build one from the largest Chrome trace of ../shared/corpus when both it
# and capture_convert are there, else use the largest fixture.
big=$tmp/big.cap
corpus_big=$src/../shared/corpus/chrome-trace/catapult/multiple_input_latency.json
if [ -x "$capture_convert" ] && [ -f "$corpus_big" ] &&
    "$capture_convert" "$corpus_big" "$big" 2>/dev/null; then
    :
else
    cp "$src/fixtures/throttling.cap" "$big"
fi

# changing TOOLNAME: the tool reads a copy of the big capture that another
# process truncates, or overwrites in the middle, after a short delay.
changing() {
    tool=$1
    for how in truncate overwrite; do
        for delay in 0 0.002 0.01 0.05; do
            f=$tmp/changing-$how.cap
            cp "$big" "$f"
            case $tool in
            read_capture) set -- "$read_capture" "$f" ;;
            capture_diff) set -- "$capture_diff" "$good" "$f" ;;
            capture_convert) set -- "$capture_convert" "$f" "$tmp/changing.json" ;;
            esac
            "$@" >/dev/null 2>"$tmp/err" &
            pid=$!
            sleep "$delay"
            size=$(wc -c <"$f")
            if [ "$how" = truncate ]; then
                truncate -s $((size / 2)) "$f"
            else
                dd if=/dev/urandom of="$f" bs=4096 count=4 \
                    seek=$((size / 8192)) conv=notrunc 2>/dev/null
            fi
            wait "$pid"
            rc=$?
            checks=$((checks + 1))
            lines=$(wc -l <"$tmp/err")
            label="$tool on a capture $how (after ${delay} s) while read"
            if [ "$rc" -gt 3 ]; then
                failures=$((failures + 1))
                echo "not ok - $label: exit status $rc (a crash?)"
                sed 's/^/    stderr: /' "$tmp/err" | head -n 5
            elif [ "$rc" -eq 2 ] && [ "$lines" -ne 1 ]; then
                failures=$((failures + 1))
                echo "not ok - $label: exit 2 with $lines lines on stderr"
                sed 's/^/    stderr: /' "$tmp/err" | head -n 5
            else
                echo "ok - $label: exit $rc, $lines line(s) on stderr"
            fi
        done
    done
}

# ---- every tool that exists ---------------------------------------------

for tool in read_capture capture_diff capture_convert; do
    case $tool in
    read_capture) path=$read_capture ;;
    capture_diff) path=$capture_diff ;;
    *) path=$capture_convert ;;
    esac
    if [ ! -x "$path" ]; then
        echo "skip - $tool: not built yet ($path does not exist)"
        continue
    fi
    run_bad "$tool" "$tmp/empty.cap" "empty file"
    run_bad "$tool" "$tmp/random.cap" "random bytes"
    run_bad "$tool" "$newer" "newer major version"
    run_bad "$tool" "$tmp/directory.cap" "directory"
    run_bad "$tool" "$missing_cap" "missing file"
    if [ "$tool" = capture_convert ]; then
        run_bad "$tool" "$tmp/empty.json" "empty JSON file"
        run_bad "$tool" "$tmp/random.json" "random bytes as JSON"
        run_bad "$tool" "$tmp/directory.json" "directory as JSON"
        run_bad "$tool" "$missing_json" "missing JSON file"
    fi
    changing "$tool"
done

echo "$checks checks, $failures failed"
if [ "$failures" -ne 0 ]; then
    head -c 16 "$tmp/random.cap" | od -An -tx1 | sed 's/^/random bytes began: /'
    exit 1
fi
exit 0
