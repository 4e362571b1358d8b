#!/bin/bash
# `draplane --help`, `draplane version`, `--help` on every subcommand, and usage
# errors (issue 3's CLI requirements; DESIGN.md's CLI contract for the flags):
#  1. `draplane --help` exits 0 and lists every subcommand (at least validate,
#     convert, cel, allocate, server, scheduler, agent, up, version);
#  2. `draplane version` prints exactly "draplane <project VERSION> (Kubernetes
#     resource.k8s.io/v1, 1.36 semantics)" (version taken from CMakeLists.txt);
#  3. `draplane <sub> --help` (and `-h`) exits 0 with the subcommand's description
#     and its usage line for EVERY subcommand listed in (1), nested ones included
#     (`cel eval`); the flags DESIGN.md's contract names appear in the help;
#  4. an unknown subcommand, an unknown flag, a stray argument or a missing
#     required argument exits 2 with a message on stderr naming the problem and
#     nothing on stdout.
# Usage: help_version_test.sh DRAPLANE_BINARY SOURCE_DIR
bin=$1
src=$2
. "$src/tests/cli/lib.sh"

# ---------------------------------------------------------------- 1. --help
run --help
expect_rc "--help" 0
expect_err "--help" ""
expect_out_line "--help" "draplane: Kubernetes Dynamic Resource Allocation for GPUs and accelerators"
expect_out_line "--help" "Usage: $bin [OPTIONS] SUBCOMMAND"
expect_out_line "--help" "Subcommands:"
# Subcommand names (and descriptions) from the "Subcommands:" section.
sed -n '/^Subcommands:$/,$p' "$tmp/out" | sed -n 's/^  \([a-z][a-z0-9-]*\)  *\(.*\)$/\1\t\2/p' >"$tmp/subs"
subs=$(cut -f1 "$tmp/subs")
for want in version validate convert cel allocate server scheduler agent up; do
  grep -qx "$want" <<<"$subs" || bad "--help: subcommand $want not listed" "listed: $(echo $subs)"
done
# -h is the same help.
cp "$tmp/out" "$tmp/help"
run -h
expect_rc "-h" 0
cmp -s "$tmp/out" "$tmp/help" || bad "-h: differs from --help"
# --help-all shows every subcommand's usage too.
run --help-all
expect_rc "--help-all" 0
for s in $subs; do expect_out_has "--help-all ($s)" "$s"; done

# ---------------------------------------------------------------- 2. version
ver=$(sed -n 's/^project(draplane VERSION \([0-9][0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$ver" ] || { echo "FAIL: no project(draplane VERSION x.y.z) in $src/CMakeLists.txt"; fail=1; }
run version
expect_rc "version" 0
expect_err "version" ""
expect_out "version" "draplane $ver (Kubernetes resource.k8s.io/v1, 1.36 semantics)"
run version --help
expect_rc "version --help" 0
expect_out_line "version --help" "Usage: $bin version [OPTIONS]"

# ---------------------------------------------------------------- 3. <sub> --help
# check_help "SUB [SUB2]" DESCRIPTION: usage line, description first, exit 0.
check_help() {
  local words=$1 desc=$2 flag
  for flag in --help -h; do
    # shellcheck disable=SC2086
    run $words $flag
    expect_rc "$words $flag" 0
    expect_err "$words $flag" ""
    [ "$(head -n1 "$tmp/out")" = "$desc" ] || bad "$words $flag: first line is not the description" "want: $desc"
    grep -q "^Usage: $(printf '%s' "$bin $words" | sed 's/[.[\*^$/]/\\&/g') \[OPTIONS\]" "$tmp/out" ||
      bad "$words $flag: no usage line" "want: Usage: $bin $words [OPTIONS]..."
    expect_out_line "$words $flag" "Options:"
    expect_out_has "$words $flag" "-h,--help"
  done
}
while IFS="$(printf '\t')" read -r s desc; do
  check_help "$s" "$desc"
done <"$tmp/subs"

# Nested subcommands (cel eval): discover them from the parent's help as well.
run cel --help
sed -n '/^Subcommands:$/,$p' "$tmp/out" | sed -n 's/^  \([a-z][a-z0-9-]*\)  *\(.*\)$/\1\t\2/p' >"$tmp/celsubs"
grep -q "^eval	" "$tmp/celsubs" || bad "cel --help: subcommand eval not listed"
while IFS="$(printf '\t')" read -r s desc; do
  check_help "cel $s" "$desc"
done <"$tmp/celsubs"

# The flags of DESIGN.md's CLI contract appear in each subcommand's help.
# help_has "SUB..." FLAG...
help_has() {
  local words=$1
  shift
  # shellcheck disable=SC2086
  run $words --help
  for f in "$@"; do grep -qE -- "(^|[ ,])$f([ ,=]|$)" "$tmp/out" || bad "$words --help: flag $f not shown"; done
}
help_has "validate" -f --filename
help_has "convert" -f --filename --to
help_has "cel eval" --device EXPR
help_has "allocate" --node --policy -f --filename -o --output
help_has "server" --data-dir --listen --store
help_has "agent" --node --server --gpus
help_has "agent inject-xid" --node --gpu --xid --gpu-lost --recover --state-dir --data-dir
help_has "up" --data-dir --listen --demo
help_has "scheduler" --kubeconfig --policy --master --leader-elect --leader-elect-lease-duration --leader-elect-resource-name
help_has "controllers" --kubeconfig --master --leader-elect --leader-elect-renew-deadline --leader-elect-resource-namespace
help_has "server" --tls-cert-file --tls-private-key-file --client-ca-file --token-auth-file --leader-elect --no-scheduler
run cel eval --help
expect_out_line "cel eval --help" "Usage: $bin cel eval [OPTIONS] EXPR"
run allocate --help
expect_out_has "allocate --help" "first-fit"
expect_out_has "allocate --help" "packing"
run server --help
expect_out_has "server --help" "./draplane-data"
expect_out_has "server --help" "127.0.0.1:6443"

# ---------------------------------------------------------------- 4. usage errors
# All usage errors are invalid input: exit 2 (src/cmd/main.cc), stdout empty.
usage_error() {  # usage_error NAME WANT_STDERR_SUBSTRING ARGS...
  local name=$1 want=$2
  shift 2
  run "$@"
  expect_rc "$name" 2
  expect_out "$name" ""
  [ -n "$err" ] || bad "$name: no message on stderr"
  expect_err_has "$name" "$want"
}
usage_error "no subcommand" "A subcommand is required" 
usage_error "unknown flag on validate" "The following argument was not expected: --bogus" validate -f x.yaml --bogus
usage_error "unknown flag on allocate" "The following argument was not expected: --nope" allocate -f x.yaml --nope
usage_error "unknown flag on cel eval" "The following argument was not expected: --bogus" cel eval true --bogus
usage_error "stray argument to version" "The following argument was not expected: extra" version extra
usage_error "validate without -f" "--filename is required" validate
usage_error "cel eval without EXPR" "EXPR is required" cel eval
usage_error "cel without a subcommand" "A subcommand is required" cel
expect_err_has "cel without a subcommand" "Run with --help or --help-all for more information."
usage_error "agent without --node" "--node is required" agent
usage_error "agent inject-xid without --gpu" "--gpu is required" agent inject-xid --node n --xid 79
usage_error "agent inject-xid without an event" "exactly one of --xid CODE" agent inject-xid --node n --gpu gpu-0
usage_error "agent inject-xid with two events" "exactly one of --xid CODE" agent inject-xid --node n --gpu gpu-0 --xid 79 --recover

# An unknown subcommand or top-level flag is named (CLI11 alone would only say
# "A subcommand is required").
usage_error "unknown subcommand names it" "frobnicate" frobnicate
usage_error "unknown top-level flag names it" "--bogus" --bogus
usage_error "unknown cel subcommand names it" "frob" cel frob

[ "$fail" = 0 ] && echo "help/version CLI: all checks passed"
exit $fail
