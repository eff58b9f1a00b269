#!/bin/sh
# Render pictures in headless Chromium and check them as a person would
# look at them (tests/browser/svg_check.js says what is checked).
#   browser_check.sh CHECK_JS SVG_OR_DIR...   (a directory: its *.svg)
# Exit 0 all pass, 1 a check failed, 77 (skipped) when no chromium is
# installed (scripts/dev.sh installs Debian's chromium).
set -u
js=$1
shift
browser=
for b in chromium chromium-browser; do
  if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
if [ -z "$browser" ]; then
  echo "SKIP: no chromium installed (scripts/dev.sh installs Debian's chromium); pictures not checked in a browser"
  exit 77
fi
tmp=$(mktemp -d)
files=
for a in "$@"; do
  if [ -d "$a" ]; then
    for f in "$a"/*.svg; do [ -f "$f" ] && files="$files $f"; done
  else
    files="$files $a"
  fi
done
if [ -z "$files" ]; then
  echo "browser_check.sh: no pictures given" >&2
  exit 1
fi
trap 'rm -rf "$tmp"' EXIT INT TERM
page="$tmp/check.html"
# shellcheck disable=SC2086
python3 - "$js" $files >"$page" <<'PY'
import json, os, sys
pics = [{"name": os.path.basename(p), "svg": open(p, encoding="utf-8").read()}
        for p in sys.argv[2:]]
print("<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head>"
      "<body style=\"margin:0\"><pre id=\"result\">NOT RUN</pre><script>")
# "</" would end the script element early
print("var PICTURES = " + json.dumps(pics).replace("</", "<\\/") + ";")
print(open(sys.argv[1], encoding="utf-8").read().replace("</script", "<\\/script"))
print("</script></body></html>")
PY
# bounded: the page checks synchronously; 60 s covers a slow, shared machine
timeout -k 5 60 "$browser" --headless --no-sandbox --disable-gpu \
  --disable-background-networking --disable-component-update --no-first-run \
  --user-data-dir="$tmp/profile" --window-size=1300,900 \
  --dump-dom "file://$page" >"$tmp/dom" 2>"$tmp/log"
rc=$?
result=$(python3 -c '
import html, re, sys
m = re.search(r"<pre id=\"result\">(.*?)</pre>", open(sys.argv[1]).read(), re.S)
print(html.unescape(m.group(1)) if m else "NO RESULT")' "$tmp/dom")
echo "$result"
case "$result" in
  PASS*) exit 0 ;;
esac
echo "chromium exit status $rc; its last messages:"
tail -5 "$tmp/log"
exit 1
