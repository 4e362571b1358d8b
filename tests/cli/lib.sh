# Shared by the CLI tests: source after setting bin (the draplane binary).
# Sets tmp (removed on exit) and fail; run ARGS... runs the binary and sets rc,
# out and err (trailing newlines dropped); the expect_* helpers record a
# failure with the command's output instead of stopping.
set -u
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() {
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  out=$(cat "$tmp/out")
  err=$(cat "$tmp/err")
}
bad() {
  echo "FAIL: $1"
  shift
  for l in "$@"; do echo "  $l"; done
  echo "  rc=$rc"; echo "  stdout:"; sed 's/^/    /' "$tmp/out" | head -40; echo "  stderr:"; sed 's/^/    /' "$tmp/err" | head -40
  fail=1
}
expect_rc() { [ "$rc" = "$2" ] || bad "$1: exit code" "want $2"; }
expect_out() { [ "$out" = "$2" ] || bad "$1: stdout" "want:" "$2"; }
expect_err() { [ "$err" = "$2" ] || bad "$1: stderr" "want:" "$2"; }
expect_out_line() { grep -qxF -- "$2" "$tmp/out" || bad "$1: stdout lacks the line" "want: $2"; }
expect_out_has() { grep -qF -- "$2" "$tmp/out" || bad "$1: stdout lacks" "want: $2"; }
expect_err_has() { grep -qF -- "$2" "$tmp/err" || bad "$1: stderr lacks" "want: $2"; }
