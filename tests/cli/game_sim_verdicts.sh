#!/usr/bin/env bash
# examples/game_sim with --ramp 30 (every work scope 1.3x slower by the end),
# with and without --fps-cap: read_capture --over-time must say headroom is
# being eaten under the cap, and throttling without it; never "did more
# work", never a cold start.
#   game_sim_verdicts.sh GAME_SIM READ_CAPTURE
# game_sim's truth holds only when its threads get the CPU they ask for: on
# a machine busier than its cores the test is skipped (exit 77). A run that
# misses is retried once with another seed (timing noise), then fails.
# The uncapped case is reported but does not fail the test yet: on two
# shared cores game_sim's six threads preempt each other unevenly, and the
# table's "uneven growth: did more work" row wins over throttling (issue
# #11 stays open for it).
# CAP_GAME_SIM_FORCE=1 runs it whatever the load.
set -u
sim=$1 read=$2
cores=$(nproc)
load=$(cut -d' ' -f1 /proc/loadavg)
if [ -z "${CAP_GAME_SIM_FORCE:-}" ] &&
   awk -v l="$load" -v c="$cores" 'BEGIN { exit !(l > c) }'; then
  echo "skipped: load average $load on $cores cores; game_sim needs idle cores"
  exit 77
fi
export NO_COLOR=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
waits=(--wait 'wait*' --wait '*_wait')
# check NAME GAME_SIM_ARGS -- MUST_MATCH MUST_NOT_MATCH
check() {
  name=$1 args=$2 want=$3 never=$4
  for seed in 1 2; do
    # shellcheck disable=SC2086
    "$sim" "$work/g.cap" --seed $seed --ramp 30 --seconds 4 --workers 1 \
      $args >/dev/null || { echo "FAIL $name: game_sim failed"; return 1; }
    "$read" --over-time --bins 4 "${waits[@]}" "$work/g.cap" >"$work/r.txt" 2>&1
    if grep -qE "$want" "$work/r.txt" && ! grep -qE "$never" "$work/r.txt"; then
      echo "ok   $name (seed $seed): $(grep -oE "$want" "$work/r.txt" | head -1)"
      return 0
    fi
    echo "miss $name (seed $seed):"; grep -E '^  [A-Z]|all CPU' "$work/r.txt"
  done
  echo "FAIL $name"
  return 1
}
fail=0
check capped "--fps-cap 30 --scale 0.25" "eating its headroom" \
  "did more work|throttling|not warm" || fail=1
check uncapped "--scale 0.5" "throttling signature" \
  "did more work|eating its headroom|not warm" ||
  echo "known gap: the uncapped ramp is not yet called throttling (issue #11)"
exit $fail
