#!/usr/bin/env bash
# capture_diff's "(heavy frames)" row on examples/game_sim --bimodal, whose
# mix is known (docs/STATISTICS.md section 17).
#
#   diff_mix_game_sim.sh GAME_SIM CAPTURE_DIFF
#
# Records, at --scale 0.5 with two workers:
#   - uncapped, 3 s: 25 heavy frames in each 50 (base), the same with
#     another seed, and 35 heavy in 50 (--heavy-frames 35);
#   - under --fps-cap 100, 4 s: 25 heavy in 50, and 45 in 50.
# Then:
#   - 25 against 35, uncapped: the row is there, 50 % -> 70 % heavy within
#     5 points, regressed, and capture_diff exits 1;
#   - 25 against 25: the row is there and neither regressed nor improved;
#   - under the cap the frame times do not split, the CPU work does: the
#     row says so and 25 against 45 regressed, exit 1.
# A pair whose frames did not split at all (a machine loaded enough to
# blur the groups) is recorded again, twice at most; when the row is still
# missing the test exits 77 (meson's skip), never 0. Ends with "N passed,
# N failed"; exit 1 when any fails.
set -u
sim=$1 diff=$2
case "${DIFF_GAME_SIM_SANITIZE:-none}" in
  none | "") ;;
  *) echo "SKIP: a timing test, and this build is sanitized ($DIFF_GAME_SIM_SANITIZE)"
     exit 77 ;;
esac
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
passed=0 failed=0 skipped=0

record() { # OUT SEED HEAVY SECONDS [ARGS...]
  local out=$1 seed=$2 heavy=$3 seconds=$4
  shift 4
  if ! "$sim" "$dir/$out" --bimodal --heavy-frames "$heavy" --seed "$seed" \
      --seconds "$seconds" --scale 0.5 --workers 2 "$@" \
      >"$dir/$out.log" 2>&1; then
    echo "FAIL game_sim $out did not record:"
    cat "$dir/$out.log"
    exit 1
  fi
}

# The "(heavy frames)" CSV row of BASE against NEW: "base% new% verdict",
# empty when there is none; the text report in $dir/last.txt, the exit
# status in $dir/last.rc.
mix_row() { # BASE NEW
  "$diff" "$dir/$1" "$dir/$2" >"$dir/last.txt" 2>&1
  echo $? >"$dir/last.rc"
  "$diff" --csv "$dir/$1" "$dir/$2" 2>/dev/null |
    awk -F, '$2 == "(heavy frames)" { printf "%.1f %.1f %s\n", $5, $6, $16 }'
}

ok() { echo "ok   $1"; passed=$((passed + 1)); }
bad() {
  echo "FAIL $1"
  sed 's/^/     /' "$dir/last.txt" | head -40
  failed=$((failed + 1))
}

# Record the pair (base and new arguments) until the row appears; prints
# the row, or nothing after three attempts.
pair() { # NAME SECONDS BASE_HEAVY NEW_HEAVY SEED_BASE SEED_NEW [ARGS...]
  local name=$1 seconds=$2 hb=$3 hn=$4 sb=$5 sn=$6 row attempt
  shift 6
  for attempt in 1 2 3; do
    record "$name-base.cap" $((sb + 100 * attempt)) "$hb" "$seconds" "$@"
    record "$name-new.cap" $((sn + 100 * attempt)) "$hn" "$seconds" "$@"
    row=$(mix_row "$name-base.cap" "$name-new.cap")
    if [ -n "$row" ]; then
      echo "$row"
      return
    fi
    echo "     $name: no (heavy frames) row on attempt $attempt, recording again" >&2
  done
}

# uncapped, 25 against 35 heavy frames in 50
row=$(pair heavier 3 25 35 1 2)
if [ -z "$row" ]; then
  echo "SKIP heavier: the frames never split in two groups (machine load)"
  skipped=$((skipped + 1))
else
  set -- $row
  if awk -v b="$1" -v n="$2" 'BEGIN { exit !(b > 45 && b < 55 && n > 65 && n < 75) }' &&
     [ "$3" = regressed ] && [ "$(cat "$dir/last.rc")" = 1 ] &&
     grep -q '^      (heavy frames) .* regressed$' "$dir/last.txt"; then
    ok "heavier mix: $1 % -> $2 % heavy, $3, exit 1"
  else
    bad "heavier mix: $row, exit $(cat "$dir/last.rc") (want ~50 -> ~70, regressed, exit 1)"
  fi
fi

# uncapped, the same mix with other seeds
row=$(pair same 3 25 25 3 4)
if [ -z "$row" ]; then
  echo "SKIP same: the frames never split in two groups (machine load)"
  skipped=$((skipped + 1))
else
  set -- $row
  if [ "$3" != regressed ] && [ "$3" != improved ]; then
    ok "same mix: $1 % -> $2 % heavy, $3"
  else
    bad "same mix: $row (want neither regressed nor improved)"
  fi
fi

# under a cap: grouped by the CPU work per frame
row=$(pair capped 4 25 45 5 6 --fps-cap 100)
if [ -z "$row" ]; then
  echo "SKIP capped: the work never split in two groups (machine load)"
  skipped=$((skipped + 1))
else
  set -- $row
  if [ "$3" = regressed ] && [ "$(cat "$dir/last.rc")" = 1 ] &&
     grep -q 'the CPU work per frame falls in two groups' "$dir/last.txt"; then
    ok "capped, heavier mix by CPU work: $1 % -> $2 % heavy, $3, exit 1"
  else
    bad "capped, heavier mix: $row, exit $(cat "$dir/last.rc") (want the CPU work's groups, regressed, exit 1)"
  fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || exit 1
[ "$skipped" -eq 0 ] || exit 77
exit 0
