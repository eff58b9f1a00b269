#!/bin/sh
# exit_codes.sh - every tool keeps the one exit table
# (tools/common/tool_exit.h, docs/EXIT-CODES.md):
#   - an unknown option exits 2 with one line on stderr naming it;
#   - a missing input exits 2 with one line on stderr naming it, and no
#     input at all exits 2 with one line;
#   - --help exits 0 and ends with the same "Exit status:" table in every
#     tool (so the man pages, made from --help, state it too);
#   - an output that cannot be written exits 3, standard output too
#     (--help and --version into /dev/full).
#
#   exit_codes.sh READ_CAPTURE CAPTURE_DIFF CAPTURE_CONVERT [CAPTURE_REMOTE]
#
# Run from the repository root by `meson test exit_codes`.
set -u
if [ $# -lt 3 ]; then
    echo "usage: exit_codes.sh READ_CAPTURE CAPTURE_DIFF CAPTURE_CONVERT" \
         "[CAPTURE_REMOTE]" >&2
    exit 2
fi
read_capture=$1 capture_diff=$2 capture_convert=$3 capture_remote=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0
good=fixtures/demo.cap
missing=$tmp/no-such-capture.cap

# expect STATUS WORD NAME CMD...: CMD exits STATUS with exactly one line on
# stderr, and that line holds WORD.
expect() {
    status=$1 word=$2 name=$3
    shift 3
    n=$((n + 1))
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    lines=$(wc -l <"$tmp/err")
    if [ "$rc" != "$status" ]; then
        echo "FAIL $name: exit status $rc, expected $status"
        sed 's/^/    /' "$tmp/err"
        fail=$((fail + 1))
    elif [ "$lines" -ne 1 ] || ! grep -qF -- "$word" "$tmp/err"; then
        echo "FAIL $name: expected one line on stderr naming '$word':"
        sed 's/^/    /' "$tmp/err"
        fail=$((fail + 1))
    else
        echo "ok   $name: $status, $(cat "$tmp/err")"
    fi
}

# the table as read_capture states it: every tool must state the same
"$read_capture" --help | sed -n '/^Exit status:$/,$p' >"$tmp/table"
if ! grep -q '^  3  ' "$tmp/table"; then
    echo "FAIL read_capture --help has no exit table"
    fail=$((fail + 1))
fi
same_table() {
    name=$1
    shift
    for opt in --help --version; do
        n=$((n + 1))
        "$@" $opt >/dev/full 2>/dev/null
        rc=$?
        if [ "$rc" = 3 ]; then
            echo "ok   $name $opt into a full disk: 3"
        else
            echo "FAIL $name $opt into a full disk: exit status $rc, expected 3"
            fail=$((fail + 1))
        fi
    done
    n=$((n + 1))
    if "$@" --help >"$tmp/help" 2>&1 &&
       sed -n '/^Exit status:$/,$p' "$tmp/help" | cmp -s - "$tmp/table"; then
        echo "ok   $name --help ends with the exit table"
    else
        echo "FAIL $name --help does not end with the exit table"
        fail=$((fail + 1))
    fi
}

expect 2 --frobnicate read_capture-unknown-option \
    "$read_capture" --frobnicate "$good"
expect 2 "$missing" read_capture-missing-input "$read_capture" "$missing"
expect 2 "no capture file given" read_capture-no-input "$read_capture"
expect 2 --frobnicate read_capture-summary-unknown-option \
    "$read_capture" --summary --frobnicate "$good"
expect 2 "$missing" read_capture-summary-missing-input \
    "$read_capture" --summary "$missing"
expect 3 "$tmp/no-dir/x.svg" read_capture-unwritable-svg \
    "$read_capture" --svg "$tmp/no-dir/x.svg" "$good"
same_table read_capture "$read_capture"
same_table read_capture-summary "$read_capture" --summary

expect 2 --frobnicate capture_diff-unknown-option \
    "$capture_diff" --frobnicate "$good" "$good"
expect 2 "$missing" capture_diff-missing-input \
    "$capture_diff" "$good" "$missing"
expect 2 "give two captures" capture_diff-no-input "$capture_diff"
expect 3 "$tmp/no-dir/x.svg" capture_diff-unwritable-svg \
    "$capture_diff" --svg "$tmp/no-dir/x.svg" "$good" "$good"
same_table capture_diff "$capture_diff"

expect 2 --frobnicate capture_convert-unknown-option \
    "$capture_convert" --frobnicate "$good" "$tmp/x.json"
expect 2 "$missing" capture_convert-missing-input \
    "$capture_convert" "$missing" "$tmp/x.json"
expect 2 "expected IN and OUT" capture_convert-no-input "$capture_convert"
expect 2 "$tmp/missing.json" capture_convert-missing-json-input \
    "$capture_convert" "$tmp/missing.json" "$tmp/x.cap"
expect 3 "$tmp/no-dir/x.json" capture_convert-unwritable-output \
    "$capture_convert" "$good" "$tmp/no-dir/x.json"
same_table capture_convert "$capture_convert"

if [ -n "$capture_remote" ]; then
    expect 2 --frobnicate capture_remote-unknown-option \
        "$capture_remote" --frobnicate 127.0.0.1:1 "$tmp/x.cap"
    # nothing listens on port 1: the live input is missing
    expect 2 127.0.0.1:1 capture_remote-missing-input \
        "$capture_remote" --connect-timeout 0.2 127.0.0.1:1 "$tmp/x.cap"
    expect 2 "give HOST:PORT and OUT.cap" capture_remote-no-input \
        "$capture_remote"
    same_table capture_remote "$capture_remote"
fi

echo "$((n - fail)) passed, $fail failed"
[ "$fail" = 0 ]
