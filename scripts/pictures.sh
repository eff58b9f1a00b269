#!/bin/sh
# Draw the pictures of the bundled capture fixtures/demo.cap and take a
# screenshot of each in headless Chromium, for docs/pictures/:
#
#   scripts/pictures.sh [OUTDIR]     (default: docs/pictures)
#
# Needs the tools built (scripts/dev.sh build) and chromium installed
# (scripts/dev.sh test installs it). Each picture is written as SVG and
# as a PNG of exactly its size.
set -eu
cd "$(dirname "$0")/.."
out=${1:-docs/pictures}
mkdir -p "$out"
rc=build/tools/read_capture
cv=build/tools/convert/capture_convert
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "pictures.sh: no chromium installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

$rc --tree --svg "$out/demo-flame.svg" fixtures/demo.cap >/dev/null
$rc --svg "$out/demo-frames.svg" fixtures/demo.cap >/dev/null
$rc --svg "$out/h200-frames.svg" fixtures/gpu/h200_vk_passes.cap >/dev/null
$cv fixtures/gpu/h200_vk_passes.cap "$out/h200-flame.svg"

for svg in "$out"/*.svg; do
  size=$(sed -n 's/.*<svg [^>]*width="\([0-9]*\)" height="\([0-9]*\)".*/\1,\2/p' "$svg" | head -1)
  timeout -k 5 60 "$browser" --headless --no-sandbox --disable-gpu \
    --disable-background-networking --disable-component-update --no-first-run \
    --user-data-dir="$tmp/profile" --hide-scrollbars --window-size="$size" \
    --screenshot="${svg%.svg}.png" "file://$(pwd)/$svg" >/dev/null 2>&1
  echo "$svg -> ${svg%.svg}.png ($size)"
done
