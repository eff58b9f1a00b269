#!/usr/bin/env bash
# CAP_READ_PROFILE (docs/ANALYSIS.md): a chunked load prints one line to
# stderr saying where its drive spent its time; unset or "0", nothing,
# and the report is the same either way. The times are not checked, only
# that each is there.
#   read_profile.sh READ_CAPTURE FIXTURES_DIR
set -u
tool=$1 fx=$2
tmpd=$(mktemp -d -p "${TMPDIR:-/tmp}")
trap 'rm -rf "$tmpd"' EXIT
export NO_COLOR=1 CAP_READ_THREADS=2 CAP_READ_CHUNK_BYTES=1
fail=0
f=$fx/ab-base.cap # 10 blocks: 10 chunks at CAP_READ_CHUNK_BYTES=1
"$tool" "$f" >"$tmpd/plain.out" 2>"$tmpd/plain.err" || fail=1
CAP_READ_PROFILE=0 "$tool" "$f" >"$tmpd/zero.out" 2>"$tmpd/zero.err" || fail=1
CAP_READ_PROFILE=1 "$tool" "$f" >"$tmpd/prof.out" 2>"$tmpd/prof.err" || fail=1
t='[0-9]+\.[0-9]{3} s'
line="^cap_read_profile: chunks 10 threads 2 wall $t busy $t \(cpu $t\)"
line+=" merge $t \(cpu $t, values $t\) wait $t ahead $t inner [0-9]+\$"
if [ -s "$tmpd/plain.err" ] || [ -s "$tmpd/zero.err" ]; then
  echo "FAIL: stderr without CAP_READ_PROFILE:"; cat "$tmpd/plain.err" "$tmpd/zero.err"
  fail=1
fi
if [ "$(wc -l <"$tmpd/prof.err")" -ne 1 ] || ! grep -Eq "$line" "$tmpd/prof.err"; then
  echo "FAIL: CAP_READ_PROFILE=1 stderr is not one profile line:"; cat "$tmpd/prof.err"
  fail=1
fi
if ! cmp -s "$tmpd/plain.out" "$tmpd/prof.out" || ! cmp -s "$tmpd/plain.out" "$tmpd/zero.out"; then
  echo "FAIL: the report differs with CAP_READ_PROFILE"
  fail=1
fi
if [ ! -s "$tmpd/plain.out" ]; then
  echo "FAIL: no report"; fail=1
fi
# a load read whole (one thread, default chunks: below the threads
# that read in chunks) prints nothing
CAP_READ_PROFILE=1 CAP_READ_THREADS=1 env -u CAP_READ_CHUNK_BYTES \
  "$tool" "$f" >/dev/null 2>"$tmpd/one.err" || fail=1
if [ -s "$tmpd/one.err" ]; then
  echo "FAIL: a whole read printed:"; cat "$tmpd/one.err"; fail=1
fi
[ "$fail" = 0 ] && echo "ok: read_profile"
exit "$fail"
