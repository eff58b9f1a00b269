#!/usr/bin/env bash
# read_capture - reads standard input as it reads a file: the same stdout,
# stderr and exit status (the file's name replaced by "-"), damaged and
# truncated captures included, and from a pipe; and a pipe by name (a
# FIFO, a shell's <(...)) the same way, read once.
#   read_capture_stdin.sh READ_CAPTURE   (run from the repository root)
set -u
tool=$1 fail=0
export NO_COLOR=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# same WHAT: got_out/got_err against want_out/want_err, one line said
same() {
  if [ "$want_out" != "$got_out" ] || [ "$want_err" != "$got_err" ]; then
    echo "FAIL $f $opts: read from $1 differs"
    diff <(printf "%s\n%s" "$want_out" "$want_err") \
         <(printf "%s\n%s" "$got_out" "$got_err") | head -10
    fail=1
  else
    echo "ok   $f $opts ($1)"
  fi
}

for f in fixtures/demo.cap fixtures/demo-truncated.cap fixtures/demo-corrupt.cap \
         fixtures/counted-losses.cap; do
  for opts in "" "--tree --strict"; do
    # shellcheck disable=SC2086
    want_out=$("$tool" $opts "$f" 2>"$tmp/err"; echo "rc=$?")
    want_err=$(sed "s|$f|-|g" "$tmp/err")
    want_out=$(printf "%s" "$want_out" | sed "s|$f|-|g")
    # a pipe, not a file: "< $f" would hand the tool a seekable file
    # shellcheck disable=SC2086,SC2002
    got_out=$(cat "$f" | "$tool" $opts - 2>"$tmp/err"; echo "rc=$?")
    got_err=$(cat "$tmp/err")
    same -
    # a FIFO by name: its bytes arrive once, so a tool that opened it
    # twice would wait for a second writer forever (timeout: a failure)
    rm -f "$tmp/fifo"
    mkfifo "$tmp/fifo"
    timeout 10 cat "$f" > "$tmp/fifo" &
    # shellcheck disable=SC2086
    got_out=$(timeout 20 "$tool" $opts "$tmp/fifo" 2>"$tmp/err"; echo "rc=$?")
    wait
    got_out=$(printf "%s" "$got_out" | sed "s|$tmp/fifo|-|g")
    got_err=$(sed "s|$tmp/fifo|-|g" "$tmp/err")
    same "a FIFO"
  done
done
exit $fail
