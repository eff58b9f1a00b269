#!/usr/bin/env bash
# capture_convert IN.cap OUT.cap is a faithful copy: for every capture
# fixtures/*.cap and fixtures/gpu/*.cap, converted with --format-version
# 1.1, 2.0 and 3.0, every read_capture report of the copy (the ranking,
# --tree, --split, --over-time, --frames --csv, --csv), its stdout,
# stderr and exit status, is the original's, masking only the file's
# path (the capture line and the warnings name it) and the format version
# on the capture line. What capture_convert itself says on stderr is
# compared too: nothing for an intact capture; for a damaged one, the
# damage it copied around and that the copy does not say it (see
# docs/CONVERT.md). Line for line, in order.
#   convert_faithful.sh CAPTURE_CONVERT READ_CAPTURE
# Run from the repository root.
set -u
convert=$1 read=$2 fail=0 n=0
export NO_COLOR=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# report FILE OPTS: the report with FILE's path and version masked
report() {
  # shellcheck disable=SC2086
  "$read" $2 "$1" >"$tmp/out" 2>"$tmp/err"
  echo "rc=$?"
  sed "1s|^capture   $1 (format [0-9.]*)$|capture   FILE (format V)|; s|$1|FILE|g" \
    "$tmp/out"
  echo "--- stderr"
  sed "s|$1|FILE|g" "$tmp/err"
}

# What capture_convert says beyond nothing: for a damaged input, the
# damage it copied around and that the copy, complete, does not warn about
# it (docs/CONVERT.md).
R="which is complete: what the damage lost is not in it either, and reading it does not warn about the damage (keep the input)"
expect_convert() { # fixture -> expected stderr of capture_convert
  case "$(basename "$1")" in
  demo-corrupt.cap)
    echo "warning: IN: chunk at offset 2909: payload checksum mismatch; copying what can be read"
    echo "warning: IN: recovered into OUT, $R" ;;
  demo-truncated.cap)
    echo "warning: IN: file ends inside the chunk at offset 13778 (10 of 2681 payload bytes present); copying what can be read"
    echo "warning: IN: recovered into OUT, $R" ;;
  esac
}

# The original's report as the copy must give it: a damaged input's copy
# is complete, so its one damage line is not there.
expect_report() { # fixture report-file
  case "$(basename "$1")" in
  demo-corrupt.cap | demo-truncated.cap)
    grep -v '^warning: FILE: \(file is truncated\|[0-9]* damaged chunks\? skipped\)' "$2" ;;
  *) cat "$2" ;;
  esac
}

for f in fixtures/*.cap fixtures/gpu/*.cap; do
  b=$(basename "$f" .cap)
  for opts in "" "--tree" "--split" "--over-time" "--frames --csv" "--csv"; do
    report "$f" "$opts" >"$tmp/$b-orig${opts// /}"
  done
  for v in 1.1 2.0 3.0; do
    n=$((n + 1)) ok=1
    out="$tmp/$b-$v.cap"
    "$convert" --format-version "$v" "$f" "$out" 2>"$tmp/cerr"
    rc=$?
    if [ $rc != 0 ]; then
      echo "FAIL $f $v: capture_convert exit status $rc"; ok=0
    fi
    want=$(expect_convert "$f")
    got=$(sed "s|$f|IN|g; s|$out|OUT|g" "$tmp/cerr")
    if [ "$want" != "$got" ]; then
      echo "FAIL $f $v: capture_convert stderr differs:"
      diff <(printf "%s\n" "$want") <(printf "%s\n" "$got") | head -10; ok=0
    fi
    for opts in "" "--tree" "--split" "--over-time" "--frames --csv" "--csv"; do
      expect_report "$f" "$tmp/$b-orig${opts// /}" >"$tmp/want"
      report "$out" "$opts" >"$tmp/got"
      if ! diff "$tmp/want" "$tmp/got" >"$tmp/diff"; then
        echo "FAIL $f $v read_capture $opts differs (< original, > copy):"
        head -12 "$tmp/diff"; ok=0
      fi
    done
    if [ $ok = 1 ]; then
      echo "ok   $f --format-version $v"
    else
      fail=$((fail + 1))
    fi
  done
done
echo "$((n - fail)) passed, $fail failed"
[ $fail = 0 ]
