#!/usr/bin/env bash
# Run a tool over the cases in a .cases file and compare its whole stdout,
# stderr and exit status with fixtures/expected/<case>.{out,err}.
#   run_cases.sh TOOL CASES_FILE EXPECTED_DIR [--update]
# Run from the repository root (cases name files relative to it).
# A case's arguments are split at spaces and passed as they are: no quotes
# (a quote would reach the tool as a character) and no file-name expansion,
# so a glob such as --wait wait* is written bare.
set -u
set -f
tool=$1 cases=$2 expected=$3 update=${4:-}
fail=0 n=0
export NO_COLOR=1
# this script's own files: in CASES_TMPDIR, else TMPDIR, else /tmp (a test
# may point TMPDIR where the tool can make nothing)
tmpd=${CASES_TMPDIR:-${TMPDIR:-/tmp}}
out=$(mktemp -p "$tmpd") err=$(mktemp -p "$tmpd")
trap 'rm -f "$out" "$err"' EXIT
# leading and trailing spaces off, in the shell (a process a field made
# this script's time on a busy machine, where a process costs tens of ms)
trim() { # VAR
  local v=${!1}
  v=${v#"${v%%[! ]*}"}
  v=${v%"${v##*[! ]}"}
  printf -v "$1" "%s" "$v"
}
while IFS='|' read -r name args status; do
  trim name
  [ -z "$name" ] && continue
  case "$name" in \#*) continue ;; esac
  trim args
  trim status
  n=$((n + 1))
  # shellcheck disable=SC2086
  "$tool" $args >"$out" 2>"$err"
  rc=$?
  if [ "$update" = "--update" ]; then
    cp "$out" "$expected/$name.out"
    cp "$err" "$expected/$name.err"
  fi
  ok=1
  if [ "$rc" != "$status" ]; then
    echo "FAIL $name: exit status $rc, expected $status"; ok=0
  fi
  if ! diff -u "$expected/$name.out" "$out" >/dev/null 2>&1; then
    echo "FAIL $name: stdout differs:"; diff -u "$expected/$name.out" "$out" | head -20; ok=0
  fi
  if ! diff -u "$expected/$name.err" "$err" >/dev/null 2>&1; then
    echo "FAIL $name: stderr differs:"; diff -u "$expected/$name.err" "$err" | head -20; ok=0
  fi
  [ $ok = 1 ] && echo "ok   $name" || fail=$((fail + 1))
done <"$cases"
echo "$((n - fail)) passed, $fail failed"
[ $fail = 0 ]
