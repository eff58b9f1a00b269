#!/bin/sh
# downstream.sh [WORKDIR] - libcapture as other projects use it.
#
# Builds and installs libcapture into temporary prefixes under WORKDIR
# (default build-downstream/, kept so that later runs rebuild only what
# changed; -j2), then builds tests/downstream/app.c, which records a
# capture and reads it back, by every recipe of docs/USING.md ("Using libcapture
# in your project":
#   lib-only      the recording library alone (-Dtools/tests/convert/vulkan
#                 disabled): it finds no dependency but zstd, zlib, threads,
#                 libm, libdl, and builds nothing but libcapture
#   meson         a Meson project, dependency('libcapture') via pkg-config
#   subproject    the same project with libcapture in subprojects/ (a
#                 symlink): no tools, no tests of ours in the consumer;
#                 with -Dlibcapture:tools=enabled the tools, still no test
#   cmake         a CMake project through pkg_check_modules
#   plain         cc ... $(pkg-config --cflags --libs libcapture), and
#                 cc ... -lcapture -lzstd -lz -lpthread -lm -ldl
#   shared        -Ddefault_library=shared: every target links, the
#                 producer tests and those that take the library's objects
#                 pass, meson install puts the man pages,
#                 app runs against libcapture.so.0
#   readme        the recipes above are word for word those in docs/USING.md
# Needs meson, ninja, pkg-config, cmake, python3 and a C compiler.
# Prints one line per step and a closing "N passed, N failed".
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
w=${1:-$src/build-downstream}
mkdir -p "$w" && w=$(cd "$w" && pwd)
cc=${CC:-cc}
pass=0 fail=0

step() {
    name=$1
    shift
    if "$@" >"$w/$name.log" 2>&1; then
        echo "ok   $name"
        pass=$((pass + 1))
    else
        echo "FAIL $name (log: $w/$name.log)"
        tail -n 25 "$w/$name.log" | sed 's/^/    /'
        fail=$((fail + 1))
    fi
}

# meson setup, or a reconfigure that keeps the objects of the last run.
setup() {
    dir=$1
    shift
    if [ -f "$dir/build.ninja" ]; then
        meson setup --reconfigure "$dir" "$@"
    else
        meson setup "$dir" "$@"
    fi
}

# A fresh copy of app.c (and of a recipe file $2) in directory $1.
consumer() {
    mkdir -p "$1" && cp "$src/tests/downstream/app.c" "$1/" &&
        if [ $# -gt 1 ]; then cp "$2" "$1/"; fi
}

run_app() {
    "$1" "$w/$2.cap" && [ -s "$w/$2.cap" ]
}

prefix=$w/prefix
pcpath=$prefix/lib/pkgconfig

lib_only() {
    setup "$w/lib" "$src" --prefix="$prefix" --libdir=lib --werror \
        -Dtools=disabled -Dconvert=disabled -Dtests=disabled \
        -Dvulkan=disabled -Dbench=false &&
        ninja -C "$w/lib" -j2 &&
        rm -rf "$prefix" && meson install -C "$w/lib" --no-rebuild &&
        python3 - "$w/lib/meson-info" <<'PY'
import json, sys
info = sys.argv[1]
deps = {d["name"] for d in json.load(open(info + "/intro-dependencies.json"))}
# threads, m and dl are the C library's own (glibc 2.34+ has dlopen in libc;
# the device sampler loads NVML with it at run time, when present)
extra = deps - {"libzstd", "zlib", "threads", "m", "dl"}
targets = sorted(t["name"] for t in json.load(open(info + "/intro-targets.json")))
print("dependencies:", sorted(deps), "targets:", targets)
if extra:
    sys.exit("the library-only build needs more than zstd and zlib: %s" % sorted(extra))
if targets != ["capture"]:
    sys.exit("the library-only build builds more than libcapture: %s" % targets)
PY
}

meson_pc() {
    consumer "$w/meson" "$src/tests/downstream/meson/meson.build" &&
        PKG_CONFIG_PATH=$pcpath setup "$w/meson/build" "$w/meson" \
            --wrap-mode=nofallback &&
        ninja -C "$w/meson/build" -j2 &&
        run_app "$w/meson/build/app" meson
}

subproject() {
    d=$w/subproject
    consumer "$d" "$src/tests/downstream/meson/meson.build" &&
        mkdir -p "$d/subprojects" && ln -sfn "$src" "$d/subprojects/libcapture" &&
        setup "$d/build" "$d" --force-fallback-for=libcapture &&
        ninja -C "$d/build" -j2 &&
        run_app "$d/build/app" subproject &&
        python3 - "$d/build/meson-info" <<'PY'
import json, sys
info = sys.argv[1]
tests = [t["name"] for t in json.load(open(info + "/intro-tests.json"))]
targets = sorted(t["name"] for t in json.load(open(info + "/intro-targets.json")))
print("tests:", tests, "targets:", targets)
if tests:
    sys.exit("libcapture as a subproject adds tests to the consumer: %s" % tests)
tools = {"read_capture", "capture_diff", "capture_convert"} & set(targets)
if tools:
    sys.exit("libcapture as a subproject builds tools: %s" % sorted(tools))
PY
    # Asked for, the tools come, still without a test (configure only).
    setup "$d/build-tools" "$d" --force-fallback-for=libcapture \
        -Dlibcapture:tools=enabled &&
        python3 - "$d/build-tools/meson-info" <<'PY'
import json, sys
info = sys.argv[1]
tests = [t["name"] for t in json.load(open(info + "/intro-tests.json"))]
targets = {t["name"] for t in json.load(open(info + "/intro-targets.json"))}
print("with -Dlibcapture:tools=enabled: tests", tests)
if tests or "read_capture" not in targets:
    sys.exit("-Dlibcapture:tools=enabled: tests %s, read_capture %s" %
             (tests, "read_capture" in targets))
PY
}

cmake_pc() {
    consumer "$w/cmake" "$src/tests/downstream/cmake/CMakeLists.txt" &&
        PKG_CONFIG_PATH=$pcpath cmake -S "$w/cmake" -B "$w/cmake/build" &&
        cmake --build "$w/cmake/build" -j 2 &&
        run_app "$w/cmake/build/app" cmake
}

# The commands README shows, run in a directory holding app.c: through
# pkg-config, and without it against the static library (the prefix given
# by CPATH and LIBRARY_PATH, as if it were /usr/local).
# shellcheck disable=SC2016
plain_cmd='cc -o app app.c $(pkg-config --cflags --libs libcapture)'
bare_cmd='cc -o app app.c -lcapture -lzstd -lz -lpthread -lm -ldl'
plain() {
    consumer "$w/plain" &&
        for cmd in "$plain_cmd" "$bare_cmd"; do
            (cd "$w/plain" && rm -f app && export PKG_CONFIG_PATH="$pcpath" &&
             export CPATH="$prefix/include" LIBRARY_PATH="$prefix/lib" &&
             echo "$cmd" && eval "$(echo "$cmd" | sed "s/^cc /$cc /")") &&
                run_app "$w/plain/app" plain || return 1
        done
}

# meson install put a man page of every tool in PREFIX/share/man/man1
# (when help2man is there: the man option).
installed_man() {
    command -v help2man >/dev/null || { echo "no help2man: no man pages"; return 0; }
    for t in read_capture capture_diff capture_convert; do
        [ -s "$1/share/man/man1/$t.1" ] || { echo "no man page $t.1"; return 1; }
    done
}

# shellcheck disable=SC2046
shared() {
    sp=$w/prefix-shared
    setup "$w/shared" "$src" --prefix="$sp" --libdir=lib --werror \
        -Ddefault_library=shared &&
        ninja -C "$w/shared" -j2 &&
        meson test -C "$w/shared" --no-rebuild --print-errorlogs \
            producer writer_records threads sampler evidence &&
        rm -rf "$sp" && meson install -C "$w/shared" --no-rebuild &&
        installed_man "$sp" &&
        { ! pkg-config --exists vulkan ||
          PKG_CONFIG_PATH=$sp/lib/pkgconfig pkg-config --print-errors \
              --cflags --libs libcapture_vulkan; } &&
        consumer "$w/shared-app" &&
        $cc -o "$w/shared-app/app" "$w/shared-app/app.c" \
            $(PKG_CONFIG_PATH=$sp/lib/pkgconfig pkg-config --cflags --libs libcapture) &&
        readelf -d "$w/shared-app/app" | grep 'NEEDED.*libcapture\.so\.0' &&
        LD_LIBRARY_PATH=$sp/lib run_app "$w/shared-app/app" shared
}

readme() {
    python3 - "$src" "$plain_cmd" "$bare_cmd" <<'PY'
import sys
src, commands = sys.argv[1], sys.argv[2:]
readme = open(src + "/docs/USING.md").read()
bad = 0
for f in ["tests/downstream/meson/meson.build",
          "tests/downstream/cmake/CMakeLists.txt"]:
    if open(src + "/" + f).read() not in readme:
        print("docs/USING.md does not show %s word for word" % f)
        bad = 1
for c in commands:
    if c not in readme:
        print("docs/USING.md does not show the command %r" % c)
        bad = 1
sys.exit(bad)
PY
}

step lib-only lib_only
step meson meson_pc
step subproject subproject
step cmake cmake_pc
step plain plain
step shared shared
step readme readme
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
