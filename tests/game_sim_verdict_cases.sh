# Sourced by tests/cli/game_sim_verdicts.sh (live runs) and
# tests/game_sim_fixtures.sh (the committed recordings of the same runs):
# the four cases of read_capture --over-time on examples/game_sim --ramp 30,
# what game_sim is run with and what the report must and must not say.
#
#   verdict_cases                  the case names
#   verdict_case NAME              sets vc_args (game_sim's options),
#                                  vc_never (an ERE the report must not
#                                  match) and vc_want (EREs it must match)
#   verdict_read READ_CAPTURE CAP  the report, on stdout and stderr
#   verdict_judge REPORT           exit 0 when REPORT holds every vc_want
#                                  and not vc_never
verdict_cases="capped uncapped bimodal bimodal-steady"
# every case: every work scope 1.3x slower by the end of a 4 s run, one
# worker (bimodal-steady sets --ramp 0 after it)
verdict_sim_args="--ramp 30 --seconds 4 --workers 1"
verdict_case() {
  case $1 in
  capped)
    vc_args="--fps-cap 30 --scale 0.25" vc_never="did more work|not warm"
    vc_want=("eating its headroom" "throttling signature") ;;
  uncapped)
    vc_args="--scale 0.5" vc_never="did more work|not warm"
    vc_want=("throttling signature") ;;
  bimodal)
    vc_args="--scale 0.5 --bimodal" vc_never="did more work|not warm"
    vc_want=("two groups all along the capture" "throttling signature") ;;
  bimodal-steady)
    vc_args="--scale 0.5 --bimodal --ramp 0"
    vc_never="did more work|not warm|grew|rose|throttling"
    vc_want=("two groups all along the capture" "steady across the bins") ;;
  *) echo "verdict_case: no case $1" >&2; return 1 ;;
  esac
}
verdict_read() {
  NO_COLOR=1 "$1" --over-time --bins 4 --wait 'wait*' --wait '*_wait' "$2" 2>&1
}
verdict_judge() {
  local want
  for want in "${vc_want[@]}"; do
    grep -qE "$want" "$1" || return 1
  done
  ! grep -qE "$vc_never" "$1"
}
