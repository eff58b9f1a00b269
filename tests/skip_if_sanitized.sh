# Sourced by the timing tests on game_sim (diff_game_sim.sh,
# diff_runs_game_sim.sh, diff_mix_game_sim.sh, cli/game_sim_verdicts.sh):
# under a sanitizer the program runs several times slower and its timings
# say nothing, so the test exits 77 (meson's skip), saying why. meson
# passes the build's b_sanitize in DIFF_GAME_SIM_SANITIZE.
case "${DIFF_GAME_SIM_SANITIZE:-none}" in
  none | "") ;;
  *) echo "SKIP: a timing test, and this build is sanitized ($DIFF_GAME_SIM_SANITIZE)"
     exit 77 ;;
esac
