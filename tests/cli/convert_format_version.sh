#!/usr/bin/env bash
# capture_convert --format-version: a capture re-saved as 1.1, 2.0, 3.0,
# 3.1 or 4.0 (and a 4.0 capture re-saved as each) says that version in read_capture's header line, and every other line
# of its reports (ranking and --tree), stdout and stderr, is what the
# default conversion gives (which writes 3.1, the library's default); the
# default's
# ranking is the committed expected report of the original fixture. (The
# copy is faithful to the original, tests/cli/convert_faithful.sh; the
# default conversion is the reference here.)
# Exact comparisons throughout.
#   convert_format_version.sh CAPTURE_CONVERT READ_CAPTURE
# Run from the repository root.
set -u
convert=$1 read=$2 fail=0
export NO_COLOR=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # what, expected text, got text
  if [ "$2" != "$3" ]; then
    echo "FAIL $1"
    diff <(printf "%s\n" "$2") <(printf "%s\n" "$3") | head -10
    fail=1
  fi
}

# fixture | its expected ranking (fixtures/expected/)
while read -r f rank; do
  b=$(basename "$f" .cap)
  # the default, for the warnings a re-saved capture gives
  "$convert" "$f" "$tmp/$b-default.cap" 2>"$tmp/err"
  check "$f default: exit status" "0" "$?"
  check "$f default: stderr" "" "$(cat "$tmp/err")"
  for opts in "" "--tree"; do
    "$read" $opts "$tmp/$b-default.cap" >"$tmp/$b-default$opts.out" \
      2>"$tmp/$b-default$opts.err"
  done
  check "$f default: header" \
    "capture   $tmp/$b-default.cap (format 3.1)" \
    "$(head -1 "$tmp/$b-default.out")"
  check "$f default: ranking" "$(sed 1d "fixtures/expected/$rank.out")" \
    "$(sed 1d "$tmp/$b-default.out")"
  for v in 1.1 2.0 3.0 3.1 4.0; do
    out="$tmp/$b-$v.cap" before=$fail
    "$convert" --format-version "$v" "$f" "$out" 2>"$tmp/err"
    check "$f $v: exit status" "0" "$?"
    check "$f $v: stderr" "" "$(cat "$tmp/err")"
    for opts in "" "--tree"; do
      want=$tmp/$b-default$opts.out
      got_out=$("$read" $opts "$out" 2>"$tmp/err"; echo "rc=$?")
      got_err=$(sed "s|$out|X|g" "$tmp/err")
      check "$f $v $opts: header" "capture   $out (format $v)" \
        "$(printf "%s\n" "$got_out" | head -1)"
      check "$f $v $opts: report" "$(sed 1d "$want"; echo "rc=0")" \
        "$(printf "%s\n" "$got_out" | sed 1d)"
      check "$f $v $opts: stderr" \
        "$(sed "s|$tmp/$b-default.cap|X|g" "$tmp/$b-default$opts.err")" \
        "$got_err"
    done
    [ $fail = "$before" ] && echo "ok   $f --format-version $v"
  done
done <<'CASES'
fixtures/demo.cap            demo-ranking
fixtures/scope-residuals.cap scope-residuals
fixtures/scope-residuals-4.0-groups.cap scope-residuals-4.0-groups
CASES

# An importer writes the version asked for too: a Chrome trace (with its
# GPU thread) imported as 1.1, 3.0 and 3.1 reads as the default import
# does.
j=fixtures/convert/chrome-gpu-thread.json
imp="--frame-scope frame --gpu-thread gpu"
# shellcheck disable=SC2086
"$convert" $imp "$j" "$tmp/json-default.cap" 2>"$tmp/err"
check "$j default: exit status" "0" "$?"
for opts in "" "--tree"; do
  "$read" $opts "$tmp/json-default.cap" >"$tmp/json-default$opts.out" 2>&1
done
check "$j default: header" "capture   $tmp/json-default.cap (format 3.1)" \
  "$(head -1 "$tmp/json-default.out")"
for v in 1.1 3.0 3.1 4.0; do
  out="$tmp/json-$v.cap" before=$fail
  # shellcheck disable=SC2086
  "$convert" $imp --format-version "$v" "$j" "$out" 2>"$tmp/err-$v"
  check "$j $v: exit status" "0" "$?"
  check "$j $v: stderr" "$(cat "$tmp/err")" "$(cat "$tmp/err-$v")"
  for opts in "" "--tree"; do
    got=$("$read" $opts "$out" 2>&1)
    check "$j $v $opts: header" "capture   $out (format $v)" \
      "$(printf "%s\n" "$got" | head -1)"
    check "$j $v $opts: report" "$(sed 1d "$tmp/json-default$opts.out")" \
      "$(printf "%s\n" "$got" | sed 1d)"
  done
  [ $fail = "$before" ] && echo "ok   $j --format-version $v"
done
exit $fail
