#!/bin/sh
# tool_version.sh VERSION MANDIR TOOL... - every tool answers --version
# with exactly "NAME (libcapture) VERSION" and exit status 0, lists
# --version in its --help, and has a man page NAME.1 in MANDIR (unless
# MANDIR is "none": help2man was not found) that help2man made from it.
set -u
version=$1 mandir=$2
shift 2
fail=0
for tool in "$@"; do
    name=$(basename "$tool")
    out=$("$tool" --version 2>&1)
    rc=$?
    if [ "$rc" = 0 ] && [ "$out" = "$name (libcapture) $version" ]; then
        echo "ok   $name --version: $out"
    else
        echo "FAIL $name --version: exit $rc, '$out', expected '$name (libcapture) $version'"
        fail=1
    fi
    if "$tool" --help | grep -q -- '--version'; then
        echo "ok   $name --help lists --version"
    else
        echo "FAIL $name --help does not list --version"
        fail=1
    fi
    [ "$mandir" = none ] && continue
    page=$mandir/$name.1
    upper=$(echo "$name" | tr '[:lower:]' '[:upper:]')
    if [ -f "$page" ] &&
       grep -q "^\.TH $upper \"1\" \".*\" \"libcapture $version\"" "$page" &&
       grep -q -- '-\\-version' "$page"; then
        echo "ok   $page"
    else
        echo "FAIL $page: missing, or not $name's man page of version $version"
        fail=1
    fi
done
exit $fail
