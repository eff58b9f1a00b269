#!/usr/bin/env bash
# capture_convert x.cap x.pftrace (docs/CONVERT.md, "Perfetto"): every
# capture fixture exported, decoded with protoc (--decode_raw, then the
# project's own schema tests/perfetto_min.proto) and checked against
# read_capture by tests/perfetto_check.py: one END per BEGIN on every track,
# thread names, per-name calls and self times from the decoded pairs (to
# 1 ns; 1 ns a scope on TSC captures), frames (name, start, duration),
# waits in category "wait". Then the same on the streaming path (a root of
# more than CVT_PERFETTO_HOLD_MAX scopes), --frames/--seconds/--slowest
# against the capture cut the same way, standard output, and the exact
# packets that open a small trace.
#   perfetto_out.sh CAPTURE_CONVERT READ_CAPTURE
# Run from the repository root. Skipped (exit 77), saying so, without
# protoc (Debian: protobuf-compiler) or python3.
set -u
convert=$1 read=$2 fail=0
export NO_COLOR=1
for tool in protoc python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool not found (protoc: Debian's protobuf-compiler)"
    exit 77
  fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check="python3 tests/perfetto_check.py protoc tests $read"

one() { # what, capture, trace, warnings file: decode, then check
  if ! protoc --decode_raw <"$3" >/dev/null 2>"$tmp/raw.err"; then
    echo "FAIL $1: protoc --decode_raw: $(head -1 "$tmp/raw.err")"
    fail=1
    return
  fi
  if ! res=$($check "$2" "$3" "$4"); then
    echo "FAIL $1: $res"
    fail=1
  fi
}

n=0
for f in fixtures/*.cap fixtures/gpu/*.cap; do
  if ! "$convert" "$f" "$tmp/t.pftrace" 2>"$tmp/w"; then
    echo "FAIL $f: capture_convert exit $?: $(head -1 "$tmp/w")"
    fail=1
    continue
  fi
  one "$f" "$f" "$tmp/t.pftrace" "$tmp/w"
  n=$((n + 1))
done

# the streaming path: a thread writes a root's scopes as they end once it
# holds more than CVT_PERFETTO_HOLD_MAX of them
for f in fixtures/demo.cap fixtures/game-sim-base.cap fixtures/outside-frames.cap \
         fixtures/demo-truncated.cap fixtures/gpu/h200_vk_passes.cap; do
  CVT_PERFETTO_HOLD_MAX=3 "$convert" "$f" "$tmp/s.pftrace" 2>"$tmp/w"
  one "$f (streamed)" "$f" "$tmp/s.pftrace" "$tmp/w"
  n=$((n + 1))
done

# slicing: the trace of a slice is the trace of the capture cut so
for s in "--frames 10:20" "--seconds 1:2" "--slowest 2"; do
  # shellcheck disable=SC2086
  "$convert" $s fixtures/game-sim-base.cap "$tmp/cut.cap" 2>/dev/null
  # shellcheck disable=SC2086
  "$convert" $s fixtures/game-sim-base.cap "$tmp/cut.pftrace" 2>"$tmp/w"
  one "game-sim-base.cap $s" "$tmp/cut.cap" "$tmp/cut.pftrace" "$tmp/w"
  "$convert" "$tmp/cut.cap" "$tmp/direct.pftrace" 2>/dev/null
  if [ "$(protoc --decode_raw <"$tmp/cut.pftrace" | md5sum)" != \
       "$(protoc --decode_raw <"$tmp/direct.pftrace" | md5sum)" ]; then
    echo "FAIL $s: not the trace of the capture cut so"
    fail=1
  fi
  n=$((n + 1))
done

# standard output gives the file's bytes
"$convert" fixtures/demo.cap "$tmp/d.pftrace" 2>/dev/null
"$convert" --to perfetto fixtures/demo.cap - >"$tmp/stdout.pftrace" 2>/dev/null
if ! cmp -s "$tmp/d.pftrace" "$tmp/stdout.pftrace"; then
  echo "FAIL --to perfetto to standard output: not the file's bytes"
  fail=1
fi

# the packets that open a thread's sequence, exactly: its track and
# defaults, its clock, names interned at their first use, waits in the
# category "wait" (the packets of sequence 3, thread main, first 150 lines)
"$convert" fixtures/waits-and-strays.cap "$tmp/w.pftrace" 2>/dev/null
protoc -Itests --decode=pf.Trace tests/perfetto_min.proto <"$tmp/w.pftrace" |
  awk '/^packet \{/ { b = "" } { b = b $0 "\n" }
       /^\}/ { if (b ~ /trusted_packet_sequence_id: 3\n/) printf "%s", b }' |
  head -n 150 >"$tmp/head.txt"
if ! diff -u fixtures/expected/perfetto-waits-and-strays-head.txt \
     "$tmp/head.txt" >"$tmp/d"; then
  echo "FAIL waits-and-strays.pftrace: thread main's first packets differ:"
  head -30 "$tmp/d"
  fail=1
fi

# a Perfetto trace is written, never read
if "$convert" "$tmp/w.pftrace" "$tmp/x.cap" 2>"$tmp/e"; then
  echo "FAIL reading a .pftrace succeeded"
  fail=1
elif ! grep -q "perfetto cannot be read" "$tmp/e"; then
  echo "FAIL reading a .pftrace: $(cat "$tmp/e")"
  fail=1
fi

[ "$fail" = 0 ] && echo "ok: $n traces checked against read_capture"
exit "$fail"
