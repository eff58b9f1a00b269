#!/bin/sh
# check_compiled_out.sh NM OBJDUMP DISABLED ENABLED
#
# DISABLED was built with -DCAP_DISABLE: it must neither define nor
# reference any cap_ symbol (no call into libcapture) and must hold no
# time-stamp counter read (no inlined hot path). ENABLED, the same source
# built normally, must show both, so the check is known to see them.
# OBJDUMP may be "none" (then the instruction check is skipped).
nm=$1 objdump=$2 off=$3 on=$4
syms() { "$nm" "$1" | awk '{ print $NF }' | grep -E '^cap_'; }
reads() { "$objdump" -d "$1" | grep -E '[[:space:]](rdtsc|rdtscp)([[:space:]]|$)|cntvct_el0'; }
status=0
if found=$(syms "$off"); then
    echo "FAIL: $off (built with -DCAP_DISABLE) still has libcapture symbols:"
    echo "$found"
    status=1
fi
if ! syms "$on" >/dev/null; then
    echo "FAIL: control $on shows no cap_ symbol: the check cannot see them"
    status=1
fi
if [ "$objdump" != none ]; then
    if found=$(reads "$off"); then
        echo "FAIL: $off still reads the time-stamp counter:"
        echo "$found"
        status=1
    fi
    if ! reads "$on" >/dev/null; then
        echo "FAIL: control $on has no counter read: the check cannot see it"
        status=1
    fi
fi
[ $status -eq 0 ] && echo "ok: $off carries no instrumentation"
exit $status
