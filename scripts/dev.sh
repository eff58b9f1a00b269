#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine: installs what is missing,
# builds, then runs the job asked for.
#
#   scripts/dev.sh report [read_capture options]   report on the bundled capture
#   scripts/dev.sh test                            build and run the whole suite
#   scripts/dev.sh test --quick                    build, run the quick lane only
#   scripts/dev.sh build                           build only
set -euo pipefail
cd "$(dirname "$0")/.."

# Build and test dependencies, from Debian 12's packages.
PKGS=(gcc g++ libc6-dev pkg-config meson ninja-build python3
      libzstd-dev libcsv-dev libcmocka-dev zlib1g-dev
      libyajl-dev liblz4-dev libxxhash-dev
      libvulkan-dev glslang-tools mesa-vulkan-drivers
      clang libclang-rt-14-dev binutils zstd time
      cmake help2man
      protobuf-compiler) # protoc: tests/cli/perfetto_out.sh decodes .pftrace
# For the test command only: the browser that checks the pictures
# (tests/browser_check.sh); the check is skipped, saying so, without it.
TEST_PKGS=(chromium)

install_missing() {
  local missing=()
  for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$p")
  done
  # Node.js and npm run the DuckDB round trip of docs/FLEET.md; a machine
  # that has them from elsewhere keeps its own
  command -v node >/dev/null || missing+=(nodejs)
  command -v npm >/dev/null || missing+=(npm)
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "dev.sh: installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

install_test_tools() {
  local p sudo=""
  for p in "${TEST_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' &&
      continue
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "dev.sh: installing $p" >&2
    { $sudo apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
        --no-install-recommends "$p" >&2; } ||
      echo "dev.sh: $p could not be installed; the tests that need it skip" >&2
  done
}

build() {
  install_missing
  if [ ! -f build/build.ninja ]; then
    meson setup build --werror >&2
  fi
  ninja -C build >&2
}

cmd=${1:-report}
shift || true
case "$cmd" in
  report)
    build
    exec build/tools/read_capture "$@" fixtures/demo.cap
    ;;
  test)
    # The whole suite (what CI runs): the normal build's tests, then the
    # suite again under ASan+UBSan and the threaded tests under TSan
    # (tests/sanitizers.sh), then a 60-second smoke run of every fuzz
    # target (fuzz/smoke.sh), then libcapture built and used as other
    # projects do: pkg-config, Meson subproject, CMake, shared and
    # library-only builds (tests/downstream.sh).
    # --quick (or CAP_QUICK=1): the quick lane only, meson's tests outside
    # the suite 'slow' (unit tests, CLI golden tests, the timing tests'
    # analysis on committed recordings; at most 90 s on 2 cores once
    # built), none of the steps after them. Other arguments go to
    # `meson test` (test names, --suite, ...).
    quick=${CAP_QUICK:-0}
    if [ "${1:-}" = --quick ]; then
      quick=1
      shift
    fi
    build
    status=0
    # (the counts below come from this run's log, never an earlier one's)
    rm -f build/meson-logs/testlog.json
    if [ "$quick" = 1 ]; then
      meson test -C build --print-errorlogs --no-suite slow "$@" || status=$?
    else
      install_test_tools
      meson test -C build --print-errorlogs "$@" || status=$?
    fi
    counts=$(python3 - build/meson-logs/testlog.json <<'PY'
import json, sys
ok = bad = skip = 0
try:
    lines = open(sys.argv[1]).readlines()
except OSError:
    lines = []
for line in lines:
    r = json.loads(line).get("result")
    if r in ("OK", "EXPECTEDFAIL"): ok += 1
    elif r == "SKIP": skip += 1
    else: bad += 1
print(ok, bad, skip)
PY
)
    read -r ok bad skip <<<"$counts"
    if [ "$quick" != 1 ]; then
      for step in "tests/sanitizers.sh" "fuzz/smoke.sh 60" "tests/downstream.sh"; do
        echo "== $step" >&2
        # shellcheck disable=SC2086
        if sh $step; then ok=$((ok + 1)); else bad=$((bad + 1)); status=1; fi
      done
    fi
    # one closing line that any CI reader understands
    echo "$ok passed, $bad failed, $skip skipped"
    [ "$bad" -eq 0 ] || status=1
    exit $status
    ;;
  build)
    build
    ;;
  *)
    echo "usage: scripts/dev.sh report|test [--quick]|build" >&2
    exit 2
    ;;
esac
