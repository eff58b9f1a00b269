#!/usr/bin/env bash
# The four real puffin captures of ../shared/corpus import, and read_capture's
# report (ranking and tree) on each equals the committed expected output.
#   puffin_reports.sh CAPTURE_CONVERT READ_CAPTURE CORPUS_DIR EXPECTED_DIR [--update]
set -u
conv=$(realpath "$1") read=$(realpath "$2") corpus=$3 expected=$(realpath "$4") update=${5:-}
if [ ! -d "$corpus/puffin" ]; then
  echo "skipped: $corpus/puffin is absent (a clone without ../shared)"
  exit 77
fi
export NO_COLOR=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fail=0 n=0
for v in 1 2 3 4; do
  src="$corpus/puffin/capture_PFD$v.puffin"
  out="capture_PFD$v.cap"
  n=$((n + 1))
  if ! "$conv" "$src" "$out" 2>conv.err; then
    echo "FAIL PFD$v: import failed: $(cat conv.err)"; fail=$((fail + 1)); continue
  fi
  for report in "" "--tree"; do
    name="puffin-PFD$v${report:+-tree}"
    # shellcheck disable=SC2086
    "$read" $report "$out" >got.out 2>got.err
    rc=$?
    if [ "$update" = "--update" ]; then
      cp got.out "$expected/$name.out"; cp got.err "$expected/$name.err"
    fi
    if [ $rc -ne 0 ] || ! cmp -s got.out "$expected/$name.out" ||
       ! cmp -s got.err "$expected/$name.err"; then
      echo "FAIL $name (exit $rc)"; diff -u "$expected/$name.out" got.out | head -20
      diff -u "$expected/$name.err" got.err | head -5
      fail=$((fail + 1))
    else
      echo "ok   $name"
    fi
  done
done
echo "$((n - fail)) passed, $fail failed"
[ $fail = 0 ]
