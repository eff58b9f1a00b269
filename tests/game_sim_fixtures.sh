#!/usr/bin/env bash
# The analysis of the timing tests, on committed recordings of their
# game_sim runs: the outcome depends on the code only, never on the
# machine's load (the quick lane; the live runs are in the full run).
#
#   game_sim_fixtures.sh READ_CAPTURE CAPTURE_DIFF FIXTURES
#       read_capture --over-time on fixtures/game-sim-verdicts-CASE.cap
#       says what tests/cli/game_sim_verdicts.sh asks of a live run (the
#       cases: tests/game_sim_verdict_cases.sh); capture_diff, with
#       tests/diff_game_sim.sh's options, exits 0 with nothing that gates
#       on game-sim-ab-base.cap against game-sim-ab-same.cap (the same
#       code, another seed), and 1 with physics_broadphase the only
#       regression that gates against game-sim-ab-slow.cap (that scope
#       10 % slower).
#   game_sim_fixtures.sh --record GAME_SIM READ_CAPTURE CAPTURE_DIFF FIXTURES
#       makes those recordings again, as the live tests make theirs
#       (the verdict runs 2 s long, not 4: half the bytes for the tests
#       that read every fixture), each run again (another seed) until its
#       report holds (at most 10 runs). game_sim needs the cores it asks for: on a busy machine
#       pass a wrapper that runs it at a real-time priority, e.g. a script
#       `exec chrt -f 10 build/examples/game_sim/game_sim "$@"` (how the
#       committed ones were made, on 2 cores shared with other builds).
# Ends with "N passed, N failed"; exit 1 when any fails.
set -u
here=$(dirname "$0")
. "$here/game_sim_verdict_cases.sh"
record=0
if [ "${1:-}" = --record ]; then
  record=1 sim=$2
  shift 2
fi
read=$1 diff=$2 fixtures=$3
export NO_COLOR=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
slow_name=physics_broadphase
# tests/diff_game_sim.sh's runs and options
ab_sim_args="--frames 150 --scale 0.5 --fps-cap 100 --workers 2"
ab_opts=(--wait submit_jobs --wait handoff)

# the rows that regressed and gate, from capture_diff's CSV
gating() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
    $(at["verdict"]) == "regressed" && $(at["gates"]) == "1" { print $2 }' "$1" |
    sort | tr '\n' ' ' | sed 's/ $//'
}
# ab_judge BASE NEW WANT_RC WANT: capture_diff's exit status and the rows
# that gate; 0 when both are as wanted, the outcome in $ab_got
ab_judge() {
  local rc
  "$diff" "${ab_opts[@]}" --csv "$1" "$2" >"$work/ab.csv" 2>"$work/ab.err"
  rc=$?
  ab_got="exit $rc, gating: '$(gating "$work/ab.csv")'"
  [ "$ab_got" = "exit $3, gating: '$4'" ]
}

if [ $record = 1 ]; then
  for c in $verdict_cases; do
    verdict_case "$c"
    for seed in $(seq 1 10); do
      # shellcheck disable=SC2086
      "$sim" "$work/g.cap" --seed "$seed" $verdict_sim_args $vc_args \
        --seconds 2 >/dev/null || exit 1
      verdict_read "$read" "$work/g.cap" >"$work/r.txt"
      if verdict_judge "$work/r.txt"; then
        cp "$work/g.cap" "$fixtures/game-sim-verdicts-$c.cap"
        echo "recorded game-sim-verdicts-$c.cap (seed $seed)"
        continue 2
      fi
      echo "miss $c (seed $seed), recording again"
    done
    echo "FAIL $c: 10 runs missed"
    exit 1
  done
  for attempt in $(seq 0 9); do
    # shellcheck disable=SC2086
    "$sim" "$work/base.cap" --seed $((1001 + attempt)) $ab_sim_args >/dev/null &&
      "$sim" "$work/same.cap" --seed $((3001 + attempt)) $ab_sim_args >/dev/null &&
      "$sim" "$work/slow.cap" --seed $((2001 + attempt)) $ab_sim_args \
        --slow "$slow_name:10" >/dev/null || exit 1
    if ab_judge "$work/base.cap" "$work/same.cap" 0 "" &&
        ab_judge "$work/base.cap" "$work/slow.cap" 1 "$slow_name"; then
      for f in base same slow; do
        cp "$work/$f.cap" "$fixtures/game-sim-ab-$f.cap"
      done
      echo "recorded game-sim-ab-{base,same,slow}.cap (seeds $((1001 + attempt)), $((3001 + attempt)), $((2001 + attempt)))"
      exit 0
    fi
    echo "miss A/B (attempt $attempt: $ab_got), recording again"
  done
  echo "FAIL A/B: 10 attempts missed"
  exit 1
fi

for c in $verdict_cases; do
  verdict_case "$c"
  f=$fixtures/game-sim-verdicts-$c.cap
  verdict_read "$read" "$f" >"$work/r.txt"
  if verdict_judge "$work/r.txt"; then
    echo "ok   $c: ${vc_want[*]}"
    pass=$((pass + 1))
  else
    echo "FAIL $c: $f, want: ${vc_want[*]}; never: $vc_never"
    grep -E '^  [A-Z]|all CPU' "$work/r.txt"
    fail=$((fail + 1))
  fi
done
ab() { # LABEL NEW WANT_RC WANT
  if ab_judge "$fixtures/game-sim-ab-base.cap" "$fixtures/game-sim-ab-$2.cap" "$3" "$4"; then
    echo "ok   $1: $ab_got"
    pass=$((pass + 1))
  else
    echo "FAIL $1: $ab_got, want exit $3, gating: '$4'"
    "$diff" "${ab_opts[@]}" --top 8 "$fixtures/game-sim-ab-base.cap" \
      "$fixtures/game-sim-ab-$2.cap"
    fail=$((fail + 1))
  fi
}
ab "same code" same 0 ""
ab "$slow_name +10 %" slow 1 "$slow_name"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
