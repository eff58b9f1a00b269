# Sourced by the timing tests that run examples/game_sim (a program whose
# truth holds only when its threads get the CPU they ask for): how much CPU
# other programs took while a command of the test ran. The load average
# lags a minute; /proc/stat's busy time minus this shell's children's CPU
# time over the wall time is what the others took during the run.
#
#   others_start            before the command  } in the test's shell,
#   others_stop             after it            } not in a $(...)
#   others_cores            then: prints the cores others used, e.g. 0.12
#   others_disturbed X      exit 0 when X is above a quarter of a core
#
# Needs $work (or $dir): a scratch directory of the test.
others_busy_s() {
  awk '/^cpu / { print ($2 + $3 + $4 + $7 + $8 + $9) / 100; exit }' /proc/stat
}
# (`times` must run in the test's shell, not in a $(...) subshell)
others_children_s() {
  times >"${work:-$dir}/.times"
  awk 'NR == 2 { gsub(/[ms]/, " "); print $1 * 60 + $2 + $3 * 60 + $4 }' \
    "${work:-$dir}/.times"
}
others_start() {
  others_children_s >"${work:-$dir}/.c0"
  others_b0=$(others_busy_s)
  others_t0=$(date +%s.%N)
}
others_stop() {
  others_children_s >"${work:-$dir}/.c1"
  others_b1=$(others_busy_s)
  others_t1=$(date +%s.%N)
}
others_cores() {
  awk -v b0="$others_b0" -v b1="$others_b1" \
    -v c0="$(cat "${work:-$dir}/.c0")" -v c1="$(cat "${work:-$dir}/.c1")" \
    -v t0="$others_t0" -v t1="$others_t1" \
    'BEGIN { o = (b1 - b0) - (c1 - c0); printf "%.2f", o / (t1 - t0) }'
}
others_disturbed() {
  awk -v o="$1" 'BEGIN { exit !(o > 0.25) }'
}
