#!/usr/bin/env bash
# read_capture - reads standard input as it reads a file: the same stdout,
# stderr and exit status (the file's name replaced by "-"), damaged and
# truncated captures included, and from a pipe.
#   read_capture_stdin.sh READ_CAPTURE   (run from the repository root)
set -u
tool=$1 fail=0
export NO_COLOR=1
for f in fixtures/demo.cap fixtures/demo-truncated.cap fixtures/demo-corrupt.cap \
         fixtures/counted-losses.cap; do
  for opts in "" "--tree --strict"; do
    # shellcheck disable=SC2086
    want_out=$("$tool" $opts "$f" 2>/tmp/rc_stdin_err.$$; echo "rc=$?")
    want_err=$(sed "s|$f|-|g" /tmp/rc_stdin_err.$$)
    want_out=$(printf "%s" "$want_out" | sed "s|$f|-|g")
    # shellcheck disable=SC2086
    got_out=$(cat "$f" | "$tool" $opts - 2>/tmp/rc_stdin_err.$$; echo "rc=$?")
    got_err=$(cat /tmp/rc_stdin_err.$$)
    if [ "$want_out" != "$got_out" ] || [ "$want_err" != "$got_err" ]; then
      echo "FAIL $f $opts: read from - differs"
      diff <(printf "%s\n%s" "$want_out" "$want_err") \
           <(printf "%s\n%s" "$got_out" "$got_err") | head -10
      fail=1
    else
      echo "ok   $f $opts"
    fi
  done
done
rm -f /tmp/rc_stdin_err.$$
exit $fail
