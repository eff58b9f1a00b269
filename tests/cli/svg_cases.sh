#!/usr/bin/env bash
# Run the picture cases: each runs a tool that writes an SVG into the file
# @SVG@ stands for, then compares the tool's whole stdout, stderr and exit
# status with fixtures/expected/<case>.{out,err} and the picture, byte for
# byte, with fixtures/expected/<case>.svg (no .svg expected: the case must
# write none).
#   svg_cases.sh CASES_FILE EXPECTED_DIR TOOL=PATH... [--update]
# CASES_FILE lines: name | tool | arguments | expected exit status.
# Run from the repository root (cases name files relative to it).
set -u
cases=$1 expected=$2
shift 2
declare -A tools
update=
for a in "$@"; do
  case "$a" in
    --update) update=1 ;;
    *=*) tools[${a%%=*}]=${a#*=} ;;
  esac
done
export NO_COLOR=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# leading and trailing spaces off, in the shell (a process a field made
# this script's time on a busy machine, where a process costs tens of ms)
trim() { # VAR
  local v=${!1}
  v=${v#"${v%%[! ]*}"}
  v=${v%"${v##*[! ]}"}
  printf -v "$1" "%s" "$v"
}
fail=0 n=0
while IFS='|' read -r name tool args status; do
  trim name
  [ -z "$name" ] && continue
  case "$name" in \#*) continue ;; esac
  trim tool
  trim args
  trim status
  n=$((n + 1))
  exe=${tools[$tool]:-}
  if [ -z "$exe" ] || [ ! -x "$exe" ]; then
    echo "FAIL $name: no tool '$tool' given"; fail=$((fail + 1)); continue
  fi
  svg="$tmp/$name.svg"
  rm -f "$svg"
  # shellcheck disable=SC2086
  "$exe" ${args//@SVG@/$svg} >"$tmp/out" 2>"$tmp/err.raw"
  rc=$?
  # the temporary path is not part of the expected text
  sed "s|$tmp/|@TMP@/|g" "$tmp/err.raw" >"$tmp/err"
  if [ -n "$update" ]; then
    cp "$tmp/out" "$expected/$name.out"
    cp "$tmp/err" "$expected/$name.err"
    if [ -f "$svg" ]; then cp "$svg" "$expected/$name.svg"; else rm -f "$expected/$name.svg"; fi
  fi
  ok=1
  if [ "$rc" != "$status" ]; then
    echo "FAIL $name: exit status $rc, expected $status"; ok=0
  fi
  for s in out err; do
    if ! diff -u "$expected/$name.$s" "$tmp/$s" >/dev/null 2>&1; then
      echo "FAIL $name: std$s differs:"; diff -u "$expected/$name.$s" "$tmp/$s" | head -20; ok=0
    fi
  done
  if [ -f "$expected/$name.svg" ]; then
    if [ ! -f "$svg" ]; then
      echo "FAIL $name: no picture written"; ok=0
    elif ! cmp -s "$expected/$name.svg" "$svg"; then
      echo "FAIL $name: the picture differs:"; diff -u "$expected/$name.svg" "$svg" | head -20; ok=0
    fi
  elif [ -f "$svg" ]; then
    echo "FAIL $name: a picture was written, none expected"; ok=0
  fi
  [ $ok = 1 ] && echo "ok   $name" || fail=$((fail + 1))
done <"$cases"
echo "$((n - fail)) passed, $fail failed"
[ $fail = 0 ]
