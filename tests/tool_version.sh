#!/bin/sh
# tool_version.sh SRCDIR VERSION MANDIR TOOL... - every tool answers
# --version with exactly "NAME (libcapture) VERSION" and exit status 0,
# lists --version in its --help, and has a man page NAME.1 in MANDIR
# (unless MANDIR is "none": help2man was not found) that help2man made from
# it, with the exit table (tools/common/tool_exit.h). And every main under
# SRCDIR/tools calls tool_version(), so a new tool cannot be added without
# it.
set -u
src=$1 version=$2 mandir=$3
shift 3
fail=0
mains=$(grep -rl --include='*.c' '^int main(' "$src/tools")
while read -r c; do
    if grep -q 'tool_version(argc, argv' "$c"; then
        echo "ok   ${c#"$src"/} handles --version (tools/common/tool_version.h)"
    else
        echo "FAIL ${c#"$src"/} has a main without tool_version() (tools/common/tool_version.h)"
        fail=1
    fi
done <<EOF
$mains
EOF
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
       grep -q -- '-\\-version' "$page" &&
       grep -q '^\.SS "Exit status:"' "$page"; then
        echo "ok   $page"
    else
        echo "FAIL $page: missing, not $name's man page of version $version, or without the exit table"
        fail=1
    fi
done
exit $fail
