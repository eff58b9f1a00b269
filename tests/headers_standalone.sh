#!/usr/bin/env bash
# Each public header compiles on its own, as C11 with every warning, and
# capture.h also as C++ (it is meant to be usable from C++ engines), with
# and without CAP_DISABLE.
#   headers_standalone.sh INCLUDE_DIR
set -u
inc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc=${CC:-cc}
cxx=${CXX:-c++}
fail=0 n=0
have_vulkan=0
printf '#include <vulkan/vulkan.h>\n' | $cc -E -x c - >/dev/null 2>&1 && have_vulkan=1
for h in "$inc"/capture/*.h; do
  name=$(basename "$h")
  if [ "$name" = cap_vulkan.h ] && [ $have_vulkan = 0 ]; then
    echo "skip $name: no Vulkan headers here (the vulkan option is off)"
    continue
  fi
  printf '#include <capture/%s>\nint main(void) { return 0; }\n' "$name" >"$tmp/t.c"
  n=$((n + 1))
  if $cc -std=c11 -Wall -Wextra -Werror -pedantic-errors -Wno-error=pedantic \
      -I"$inc" -c "$tmp/t.c" -o "$tmp/t.o" 2>"$tmp/err"; then
    echo "ok   $name (C11)"
  else
    echo "FAIL $name (C11)"; cat "$tmp/err"; fail=$((fail + 1))
  fi
done
if command -v "$cxx" >/dev/null 2>&1; then
  for def in "" "-DCAP_DISABLE"; do
    n=$((n + 1))
    cat >"$tmp/t.cpp" <<'CPP'
#include <capture/capture.h>
static int work(int x) { CAP_SCOPE("work"); return x * 2; }
int main() {
    CAP_FRAME_MARK();
    CAP_BEGIN("explicit");
    int v = work(21);
    CAP_END();
    CAP_COUNTER("value", v);
    return v == 42 ? 0 : 1;
}
CPP
    if $cxx -std=c++11 -Wall -Wextra -Werror $def -I"$inc" -c "$tmp/t.cpp" -o "$tmp/t.o" 2>"$tmp/err"; then
      echo "ok   capture.h (C++11 $def)"
    else
      echo "FAIL capture.h (C++11 $def)"; cat "$tmp/err"; fail=$((fail + 1))
    fi
  done
else
  echo "skip: no C++ compiler ($cxx), capture.h not checked as C++"
fi
echo "$((n - fail)) passed, $fail failed"
[ $fail = 0 ]
