#!/usr/bin/env bash
# --frames under a file size limit (ulimit -f): past its memory the pack
# would go on in a temporary file larger than the limit (about 60 KB for
# fixtures/throttling.cap with one chunk in memory), and a write past the
# limit ends the program with SIGXFSZ; read_capture gives the pack up
# before and reads the capture again. The rows are those of the exact
# report, and so is the exit status.
#   frames_file_limit.sh READ_CAPTURE   (run from the repository root)
set -u -o pipefail
tool=$1
cap=fixtures/throttling.cap
want=$("$tool" --frames --csv "$cap" 2>/dev/null | md5sum) || {
  echo "FAIL: the exact report of $cap fails"; exit 1; }
got=$( (ulimit -f 8
        CAP_SERIES_BUDGET=1 CAP_PACK_BYTES=1 "$tool" --frames --csv "$cap" \
          2>/dev/null) | md5sum)
rc=$?
if [ "$rc" != 0 ]; then
  echo "FAIL: under ulimit -f 8 read_capture exits $rc"; exit 1
fi
if [ "$got" != "$want" ]; then
  echo "FAIL: under ulimit -f 8 the rows differ from the exact report"; exit 1
fi
echo "ok: --frames under ulimit -f 8 (pack given up, read again): same rows"
