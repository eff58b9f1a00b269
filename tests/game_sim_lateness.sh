# Sourced by the tests that compare live runs of examples/game_sim
# (tests/diff_game_sim.sh): whether the machine, not the code, made a
# regression that capture_diff reported. tests/lateness_rule.sh checks it.
#
# A work scope's self time is its spins (busy waits to a deadline) plus
# the time past a deadline in which the thread did not run. game_sim
# --truth-report counts the spins that ended over 20 us late, by scope
# ("late NAME N_LATE N_SPINS MS_LATE MS_SPUN"). A guest that loses its
# CPU in bursts to its host leaves no trace in /proc/stat but shows there.
#
#   late_ms LOG NAME     ms by which NAME's spins ended late in the run
#                        whose --truth-report is in LOG (0 when none)
#   machine_made BASE_LOG NEW_LOG CSV WANT FRAMES
#                        the rows of capture_diff's CSV that regressed and
#                        gate but WANT (space separated) does not name,
#                        one line each with both runs' lateness; exit 0
#                        when there is one and lateness explains every
#                        one: its interval's low end, less NEW's extra
#                        lateness per frame (FRAMES frames), no longer
#                        clears its band
late_ms() {
  awk -v s="$2" '$1 == "late" && $2 == s { m = $5 } END { print m + 0 }' "$1"
}

machine_made() {
  local base=$1 new=$2 csv=$3 want=$4 frames=$5
  local name low band lb ln explained=0 unexplained=0
  while IFS=, read -r name low band; do
    case " $want " in *" $name "*) continue ;; esac
    lb=$(late_ms "$base" "$name")
    ln=$(late_ms "$new" "$name")
    if awk -v l="$low" -v b="$band" -v lb="$lb" -v ln="$ln" -v f="$frames" \
        'BEGIN { exit !(l - (ln - lb) / f <= b) }'; then
      explained=$((explained + 1))
    else
      unexplained=$((unexplained + 1))
    fi
    echo "$name: late by $lb ms in the base run, $ln ms in the new one" \
      "(interval from $low ms per frame, band $band ms)"
  done < <(awk -F, 'NR > 1 && $16 == "regressed" && $23 == "1" { print $2 "," $19 "," $21 }' "$csv")
  [ "$explained" -gt 0 ] && [ "$unexplained" = 0 ]
}
