#!/usr/bin/env bash
# The rule by which tests/diff_game_sim.sh skips a miss that the machine
# made (tests/game_sim_lateness.sh), on hand-made game_sim reports and
# capture_diff CSV rows with exact expectations: the boundary either way,
# a wanted row, a wait, a scope never late, two rows of which one is
# explained. Exit 0 when every case holds, 1 otherwise.
set -u
. "$(dirname "$0")/game_sim_lateness.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0 fail=0

# A --truth-report: the summary line, then "late NAME N M MS_LATE MS_SPUN"
# for each "NAME MS_LATE" pair (printf repeats its format over them).
report() { # FILE then "NAME MS_LATE" pairs
  local f=$1
  shift
  echo "game_sim: 300 of 8400 spins ended over 20 us late, by 9.000 ms in all" >"$f"
  printf 'late %s 10 450 %s 22.400\n' "$@" >>"$f"
}

# capture_diff --csv: its header, then a row per "NAME VERDICT CI_LOW_MS
# BAND_MS GATES" (the columns the rule reads: 2, 16, 19, 21, 23).
csv() { # FILE then rows of five words
  local f=$1
  shift
  echo "track,name,base_n,new_n,base_median_ms,new_median_ms,base_mean_ms,new_mean_ms,base_p95_ms,new_p95_ms,delta_pct,ci_low_pct,ci_high_pct,p_value,p_adjusted,verdict,band_pct,delta_ms,ci_low_ms,ci_high_ms,band_ms,wait,gates,block" >"$f"
  printf 'cpu,%s,150,150,0.15,0.19,0.15,0.19,0.18,0.23,29.9,29.4,30.5,1e-30,1e-28,%s,6.7,0.045,%s,0.046,%s,0,%s,1\n' \
    "$@" >>"$f"
}

expect() { # LABEL WANT_RC WANT_LINES -- machine_made arguments
  local label=$1 want_rc=$2 want_lines=$3 out rc
  shift 4
  out=$(machine_made "$@")
  rc=$?
  local lines=0
  [ -n "$out" ] && lines=$(printf '%s\n' "$out" | wc -l)
  if [ "$rc" = "$want_rc" ] && [ "$lines" = "$want_lines" ]; then
    echo "ok   $label"
    pass=$((pass + 1))
  else
    echo "FAIL $label: exit $rc (want $want_rc), $lines lines (want $want_lines):"
    printf '%s\n' "$out"
    fail=$((fail + 1))
  fi
}

# particles_simulate regressed: interval from 0.044384 ms a frame, band
# 0.010148 ms, 150 frames; the base run 0.814 ms late in all.
csv "$dir/one.csv" particles_simulate regressed 0.044384 0.010148 1
report "$dir/base.log" particles_simulate 0.814
report "$dir/new_same.log" particles_simulate 0.627
expect "as lately as the base run: the code's" 1 1 -- \
  "$dir/base.log" "$dir/new_same.log" "$dir/one.csv" "" 150
# (6.000 - 0.814) / 150 = 0.034573: 0.044384 - 0.034573 = 0.009811 <= band
report "$dir/new_6.log" particles_simulate 6.000
expect "5.186 ms more late: within the band without it, the machine's" 0 1 -- \
  "$dir/base.log" "$dir/new_6.log" "$dir/one.csv" "" 150
# (5.900 - 0.814) / 150 = 0.033907: 0.044384 - 0.033907 = 0.010477 > band
report "$dir/new_59.log" particles_simulate 5.900
expect "5.086 ms more late: still past the band, the code's" 1 1 -- \
  "$dir/base.log" "$dir/new_59.log" "$dir/one.csv" "" 150
expect "the same over 300 frames: half a frame's lateness, the code's" 1 1 -- \
  "$dir/base.log" "$dir/new_6.log" "$dir/one.csv" "" 300
expect "a row the case wants is not the machine's to explain" 1 0 -- \
  "$dir/base.log" "$dir/new_6.log" "$dir/one.csv" "particles_simulate" 150
report "$dir/new_other.log" skin_bones 50.0
expect "a scope never late in either run: the code's" 1 1 -- \
  "$dir/base.log" "$dir/new_other.log" "$dir/one.csv" "" 150
csv "$dir/wait.csv" wait_jobs regressed 0.044384 0.010148 0 \
  particles_simulate unchanged 0.0 0.010148 1
expect "a wait that does not gate and an unchanged row: nothing to explain" 1 0 -- \
  "$dir/base.log" "$dir/new_6.log" "$dir/wait.csv" "" 150
csv "$dir/two.csv" particles_simulate regressed 0.044384 0.010148 1 \
  skin_bones regressed 0.044384 0.010148 1
expect "two rows, one explained: the code's" 1 2 -- \
  "$dir/base.log" "$dir/new_6.log" "$dir/two.csv" "" 150
report "$dir/new_both.log" particles_simulate 6.000 skin_bones 6.000
expect "two rows, both explained: the machine's" 0 2 -- \
  "$dir/base.log" "$dir/new_both.log" "$dir/two.csv" "" 150
expect "a wanted row beside an explained one: the machine's" 0 1 -- \
  "$dir/base.log" "$dir/new_both.log" "$dir/two.csv" "skin_bones" 150

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
