#!/usr/bin/env bash
# capture_diff with three runs a side on examples/game_sim, whose truth is
# known (issue #16; docs/STATISTICS.md section 15).
#
#   diff_runs_game_sim.sh GAME_SIM CAPTURE_DIFF
#
# Records three base runs, three runs of the same code (other seeds), three
# with physics_broadphase 10 % slower, and for the spread case two base
# runs with physics_broadphase 4 and 8 % slower and three new runs with 9,
# 13 and 17 %. Then:
#   - same code, 3 vs 3: exit 0;
#   - +10 %, 3 vs 3: exit 1 with physics_broadphase the only regression
#     that gates;
#   - runs that differ between themselves (+0/4/8 % against +9/13/17 %):
#     one pair (+0 against +9 %) exits 1 naming physics_broadphase, the
#     three runs a side exit 0 with that row the only one that gates
#     within run-to-run spread (waits may be too).
# Runs are at --scale 0.5, two workers, --fps-cap 100: the nine of the
# first two cases 300 frames (3 s each), the five more of the spread case
# 150. Three runs a side detect +10 % among game_sim's 56 rows only when
# the run medians agree to about 0.7 % (docs/STATISTICS.md section 15,
# "Power"): a median of 150 frames of a scope with +-5 % jitter already
# varies by 0.4 % from run to run, and at 150 frames one live run in six
# missed the slowdown. Every run must hold its planted truth (the scope's
# median within 3 % of nominal x scale x factor); one that misses was
# preempted across the scope's deadline and is recorded again (six extra
# attempts in all), and when that is not enough the test exits 77 (meson's
# skip), never 0. A case that misses records every run again (below).
# Ends with "N passed, N failed".
set -u
sim=$1 diff=$2
. "$(dirname "$0")/skip_if_sanitized.sh"
frames=${DIFF_RUNS_FRAMES:-300}
spread_frames=${DIFF_RUNS_SPREAD_FRAMES:-150}
scale=0.5
name=physics_broadphase
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
nominal_us=$("$sim" --help | awk -v s="$name" '$1 == s { print $3 }')
retries=6

# The scope's median self time per frame in a run, in ms.
median_of() {
  "$diff" --csv "$1" "$1" 2>/dev/null | awk -F, -v s="$name" '$2 == s { print $5 }'
}

# Record OUT with SEED, the scope PCT % slower, until its median is within
# 3 % of its nominal time; returns 1 when the attempts ran out.
record() { # OUT SEED PCT [FRAMES]
  local out=$1 seed=$2 pct=$3 n=${4:-$frames} m
  while :; do
    if ! "$sim" "$dir/$out" --seed "$seed" --frames "$n" --scale "$scale" \
        --fps-cap 100 --workers 2 --slow "$name:$pct" >"$dir/$out.log" 2>&1; then
      echo "FAIL game_sim $out (seed $seed) did not record:"
      cat "$dir/$out.log"
      exit 1
    fi
    m=$(median_of "$dir/$out")
    awk -v m="$m" -v n="$nominal_us" -v k="$scale" -v p="$pct" \
      'BEGIN { w = n * k * (1 + p / 100) / 1000; exit !(m > w * 0.97 && m < w * 1.03) }' &&
      return 0
    echo "note: $name took $m ms in $out, not its nominal time (load: $(cut -d' ' -f1-3 /proc/loadavg))"
    [ "$retries" = 0 ] && return 1
    retries=$((retries - 1))
  done
}

# Every run of the test, seeds moved by 1000 a round (ROUND 0, 1, ...)
record_all() { # ROUND
  local o=$((1000 * $1)) short=0 i
  retries=6
  for i in 1 2 3; do
    record "base$i.cap" $((o + 1100 + i)) 0 || short=1
    record "same$i.cap" $((o + 1200 + i)) 0 || short=1
    record "slow$i.cap" $((o + 1300 + i)) 10 || short=1
  done
  record spread_b2.cap $((o + 1402)) 4 "$spread_frames" || short=1
  record spread_b3.cap $((o + 1403)) 8 "$spread_frames" || short=1
  record spread_n1.cap $((o + 1501)) 9 "$spread_frames" || short=1
  record spread_n2.cap $((o + 1502)) 13 "$spread_frames" || short=1
  record spread_n3.cap $((o + 1503)) 17 "$spread_frames" || short=1
  if [ "$short" = 1 ]; then
    echo "SKIP: the machine was too loaded to record the planted truth"
    exit 77
  fi
}

# The names of the rows that gate (not waits, not the frame row; game_sim's
# names need no CSV quoting) and either regressed (COL "gating") or have
# column COL equal to WANT, space separated.
rows_where() { # CSV COL WANT
  awk -F, -v col="$2" -v want="$3" '
    NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
    $(at["gates"]) != "1" { next }
    col == "gating" && $(at["verdict"]) == "regressed" { print $2 }
    col != "gating" && (col in at) && $(at[col]) == want { print $2 }' "$1" |
    sort | tr '\n' ' ' | sed 's/ $//'
}

pass=0 fail=0 misses=""
wait_opts=(--wait submit_jobs --wait handoff)
check() { # LABEL WANT_RC WANT_GATING WANT_WITHIN -- capture_diff arguments
  local label=$1 want_rc=$2 want=$3 want_within=$4 rc got within
  shift 4
  "$diff" "${wait_opts[@]}" --csv "$@" >"$dir/out.csv" 2>"$dir/out.err"
  rc=$?
  got=$(rows_where "$dir/out.csv" gating "")
  within=$(rows_where "$dir/out.csv" within_spread 1)
  if [ "$rc" = "$want_rc" ] && [ "$got" = "$want" ] && [ "$within" = "$want_within" ]; then
    echo "ok   $label: exit $rc${want:+, regressed: $want}${want_within:+, within run-to-run spread: $want_within}"
    pass=$((pass + 1))
  else
    echo "miss $label: exit $rc, regressed: '$got', within run-to-run spread: '$within'"
    "$diff" "${wait_opts[@]}" --top 8 "$@"
    misses="$misses${misses:+; }$label"
    fail=$((fail + 1))
  fi
}
# A round whose runs miss a case is recorded again (new seeds), once by
# default (DIFF_RUNS_ROUNDS=2 rounds in all); when the last round misses
# too the test is skipped (exit 77), naming the load, never failed: the
# analysis is checked on committed recordings of such runs
# (capture_diff_cli's diff-runs-* cases, in the quick lane).
# DIFF_GAME_SIM_FORCE=1 fails it instead.
rounds=${DIFF_RUNS_ROUNDS:-2}
d=$dir
for round in $(seq 0 $((rounds - 1))); do
  pass=0 fail=0 misses=""
  [ "$round" -gt 0 ] && echo "     recording every run again (round $round, load: $(cut -d' ' -f1-3 /proc/loadavg))"
  record_all "$round"
  check "same code, 3 vs 3" 0 "" "" \
    "$d/base1.cap" "$d/base2.cap" "$d/base3.cap" -- "$d/same1.cap" "$d/same2.cap" "$d/same3.cap"
  check "$name +10 %, 3 vs 3" 1 "$name" "" \
    "$d/base1.cap" "$d/base2.cap" "$d/base3.cap" -- "$d/slow1.cap" "$d/slow2.cap" "$d/slow3.cap"
  awk -F, -v s="$name" '$2 == s && $5 > 0 {
    printf "     (%s: p after Holm %s, run sd %.2f %% of its base median)\n", s, $15, 100 * $29 / $5 }' "$d/out.csv"
  check "$name +0 against +9 %, one pair" 1 "$name" "" "$d/base1.cap" "$d/spread_n1.cap"
  check "$name +0/4/8 against +9/13/17 %, 3 vs 3" 0 "" "$name" \
    "$d/base1.cap" "$d/spread_b2.cap" "$d/spread_b3.cap" -- \
    "$d/spread_n1.cap" "$d/spread_n2.cap" "$d/spread_n3.cap"
  [ "$fail" = 0 ] && break
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] && exit 0
if [ -n "${DIFF_GAME_SIM_FORCE:-}" ]; then
  echo "FAIL: $rounds rounds missed ($misses in the last)"
  exit 1
fi
echo "SKIP: $rounds rounds missed ($misses in the last; load average $(cut -d' ' -f1-3 /proc/loadavg))"
exit 77
