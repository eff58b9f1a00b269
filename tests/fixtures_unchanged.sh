#!/usr/bin/env bash
# Regenerate the capture fixtures into a scratch folder and compare them
# with the committed ones: a byte that changed means the format (or the
# writer) changed, which needs a spec entry and new fixtures.
set -eu
gen=$1 fixtures=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" "$tmp"
status=0
for f in "$tmp"/*.cap; do
  name=$(basename "$f")
  if ! cmp -s "$f" "$fixtures/$name"; then
    echo "FAIL $name: the writer no longer produces the committed bytes"
    status=1
  else
    echo "ok   $name"
  fi
done
exit $status
