#!/bin/bash
# `draplane cel eval EXPR [--device FILE]` end to end (DESIGN.md's CLI contract,
# issue 4): prints the value in CEL literal form and exits 0; a compile or runtime
# error goes to stderr (compile errors as cel-go prints them: `ERROR: <input>:L:C:
# message`, the source line and a caret) with exit 2 and nothing on stdout.
# Checked: selectors true/false against a YAML and a JSON device (bare attribute
# names live in the driver's domain, unknown domains read as empty maps), literal
# output forms, compile errors with line:column and caret, runtime errors (missing
# map key, version compared with a string, overflow, division by zero, cost limit,
# no device bound), error absorption of && and ||, the quantity and semver
# libraries, device file errors naming the field, usage errors.
# Usage: cel_eval_test.sh DRAPLANE_BINARY SOURCE_DIR
bin=$1
src=$2
. "$src/tests/cli/lib.sh"
# ok EXPR WANT_STDOUT [cel eval args...]: exit 0, exact value, empty stderr.
ok() {
  local expr=$1 want=$2
  shift 2
  run cel eval "$expr" "$@"
  if [ "$rc" != 0 ] || [ "$out" != "$want" ] || [ -n "$err" ]; then bad "eval $expr" "want exit 0, stdout: $want"; fi
}
# err EXPR WANT_STDERR [args...]: exit 2, empty stdout, exact stderr.
err() {
  local expr=$1 want=$2
  shift 2
  run cel eval "$expr" "$@"
  if [ "$rc" != 2 ] || [ -n "$out" ] || [ "$err" != "$want" ]; then bad "eval $expr" "want exit 2, stderr: $want"; fi
}
# err_has EXPR WANT_SUBSTRING [args...]: exit 2, empty stdout, stderr contains.
err_has() {
  local expr=$1 want=$2
  shift 2
  run cel eval "$expr" "$@"
  if [ "$rc" != 2 ] || [ -n "$out" ] || ! grep -qF -- "$want" "$tmp/err"; then bad "eval $expr" "want exit 2, stderr containing: $want"; fi
}

# A full H100 as the gpu.nvidia.com driver publishes it (SPEC §4), plus its driver.
cat >"$tmp/h100.yaml" <<'EOF'
driver: gpu.nvidia.com
name: gpu-0
attributes:
  type: {string: gpu}
  productName: {string: NVIDIA H100 80GB HBM3}
  architecture: {string: Hopper}
  driverVersion: {version: 550.54.15}
  cudaComputeCapability: {version: 9.0.0}
  index: {int: 0}
  mig: {bool: false}
  resource.kubernetes.io/pcieRoot: {string: pci0000:64}
capacity:
  memory: {value: 81559Mi}
  multiprocessors: 132
EOF
# The same shape as JSON: a shareable device with 40Gi.
cat >"$tmp/a100.json" <<'EOF'
{"driver": "gpu.nvidia.com",
 "attributes": {"productName": {"string": "NVIDIA A100-SXM4-40GB"}, "index": {"int": 3}},
 "capacity": {"memory": {"value": "40Gi"}},
 "allowMultipleAllocations": true}
EOF
H=(--device "$tmp/h100.yaml")
J=(--device "$tmp/a100.json")

# ---------------------------------------------------------------- selectors true / false
ok 'device.driver == "gpu.nvidia.com"' true "${H[@]}"
ok 'device.driver == "gpu.amd.com"' false "${H[@]}"
ok "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'" true "${H[@]}"
ok "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'" false "${H[@]}"
ok 'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")' true "${H[@]}"
ok 'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")' false "${J[@]}"
ok 'device.attributes["gpu.nvidia.com"].productName.matches("^NVIDIA (H100|H200)")' true "${H[@]}"
ok 'device.attributes["gpu.nvidia.com"].index == 0 && !device.attributes["gpu.nvidia.com"].mig' true "${H[@]}"
# The 000 seed's selector, on capacity.
ok 'device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("40Gi"))' true "${H[@]}"
ok 'device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("40Gi"))' false "${J[@]}"
ok 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40960Mi"))' 0 "${J[@]}"
ok 'device.capacity["gpu.nvidia.com"].multiprocessors.asInteger()' 132 "${H[@]}"
ok 'device.attributes["gpu.nvidia.com"].index == 3 && device.allowMultipleAllocations' true "${J[@]}"
ok 'device.allowMultipleAllocations' false "${H[@]}"
# Qualified names live in their own domain; unknown domains are empty maps.
ok 'device.attributes["resource.kubernetes.io"].pcieRoot' '"pci0000:64"' "${H[@]}"
ok '"pcieRoot" in device.attributes["gpu.nvidia.com"]' false "${H[@]}"
ok 'device.attributes["example.com"].size()' 0 "${H[@]}"
ok '"model" in device.attributes["example.com"]' false "${H[@]}"
# Version attributes are semvers.
ok 'device.attributes["gpu.nvidia.com"].driverVersion' 'semver("550.54.15")' "${H[@]}"
ok 'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.0.0"))' true "${H[@]}"
ok 'device.attributes["gpu.nvidia.com"].cudaComputeCapability.isLessThan(semver("9.0.0"))' false "${H[@]}"
ok 'device.attributes["gpu.nvidia.com"].driverVersion.major()' 550 "${H[@]}"

# The selectors of the repository's DeviceClasses (examples/gpu): gpu, then mig.
sels=$(sed -n 's/^      expression: "\(.*\)"$/\1/p' "$src/examples/gpu/deviceclasses.yaml")
if [ "$(printf '%s\n' "$sels" | wc -l)" != 2 ]; then
  echo "FAIL: expected two selectors in $src/examples/gpu/deviceclasses.yaml, got: $sels"; fail=1
else
  ok "$(printf '%s\n' "$sels" | sed -n 1p)" true "${H[@]}"
  ok "$(printf '%s\n' "$sels" | sed -n 2p)" false "${H[@]}"
  # The device.driver guard: another driver's device is false, not "no such key".
  printf 'driver: gpu.amd.com\n' >"$tmp/amd.yaml"
  ok "$(printf '%s\n' "$sels" | sed -n 1p)" false --device "$tmp/amd.yaml"
fi

# ---------------------------------------------------------------- output forms
ok '1 + 2' 3
ok '42' 42
ok '-7 / 2' -3
ok '1u' 1u
ok '1.5' 1.5
ok '2.0' 2.0
ok '"text"' '"text"'
ok '"a\nb"' '"a\nb"'
ok 'b"ab"' 'b"ab"'
ok 'null' null
ok '[1, 2]' '[1, 2]'
ok '{"a": [1, 2]}' '{"a": [1, 2]}'
ok '"NVIDIA H100".lowerAscii()' '"nvidia h100"'
ok 'device.capacity["gpu.nvidia.com"].memory' 'quantity("81559Mi")' "${H[@]}"
ok 'dyn(1) == 1.0' true

# ---------------------------------------------------------------- compile errors
err 'device.driver ==' "ERROR: <input>:1:17: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}
 | device.driver ==
 | ................^" "${H[@]}"
err '(1 + 2' "ERROR: <input>:1:7: Syntax error: mismatched input '<EOF>' expecting ')'
 | (1 + 2
 | ......^"
# Line and column on the second line of a multi-line selector.
err 'device.driver == "gpu.nvidia.com" &&
  foo > 1' "ERROR: <input>:2:3: undeclared reference to 'foo' (in container '')
 |   foo > 1
 | ..^" "${H[@]}"
err 'quantity(1)' "ERROR: <input>:1:9: found no matching overload for 'quantity' applied to '(int)'
 | quantity(1)
 | ........^"
err '1 == 1.0' "ERROR: <input>:1:3: found no matching overload for '_==_' applied to '(int, double)'
 | 1 == 1.0
 | ..^"
# Quantities and semvers compare only through their methods.
err 'quantity("1Gi") < quantity("2Gi")' "ERROR: <input>:1:17: found no matching overload for '_<_' applied to '(kubernetes.Quantity, kubernetes.Quantity)'
 | quantity(\"1Gi\") < quantity(\"2Gi\")
 | ................^"
err 'semver("1.2.3") == "1.2.3"' "ERROR: <input>:1:17: found no matching overload for '_==_' applied to '(kubernetes.Semver, string)'
 | semver(\"1.2.3\") == \"1.2.3\"
 | ................^"
err 'device.foo' "ERROR: <input>:1:7: undefined field 'foo'
 | device.foo
 | ......^" "${H[@]}"

# ---------------------------------------------------------------- runtime errors
err 'device.attributes["gpu.nvidia.com"].model == "H100"' 'no such key: model' "${H[@]}"
err 'device.attributes["gpu.nvidia.com"]["model"]' 'no such key: model' "${H[@]}"
err '{"a": 1}["b"]' 'no such key: b'
ok '"a" in {"a": 1}' true
# A version attribute compared with a string is a runtime error, not false.
err_has 'device.attributes["gpu.nvidia.com"].driverVersion == "550.54.15"' 'no such overload' "${H[@]}"
err '9223372036854775807 + 1' 'integer overflow'
err '1 / 0' 'division by zero'
# Errors are absorbed by && and || in either order.
ok 'false && (1 / 0 == 1)' false
ok '(1 / 0 == 1) && false' false
ok '(1 / 0 == 1) || true' true
ok 'device.driver == "x" && device.attributes["gpu.nvidia.com"].model == "H100"' false "${H[@]}"
err 'true && (1 / 0 == 1)' 'division by zero'
# The runtime cost budget stops hostile nested comprehensions.
err_has 'lists.range(1000).all(i, lists.range(1000).all(j, lists.range(1000).all(k, true)))' 'actual cost limit exceeded'
# Without --device nothing is bound to `device`.
err 'device.driver' 'no such attribute(s): device'

# ---------------------------------------------------------------- quantity library
ok 'quantity("1.5Gi").compareTo(quantity("1536Mi"))' 0
ok 'quantity("1") == quantity("1000m")' true
ok 'quantity("1Gi") == quantity("1G")' false
ok 'quantity("40Gi").isLessThan(quantity("80Gi"))' true
ok 'quantity("100m").isInteger()' false
ok 'quantity("2k").asInteger()' 2000
ok 'sign(quantity("-5"))' -1  # quantity.go declares sign global only
ok 'quantity("1Gi").add(quantity("512Mi"))' 'quantity("1536Mi")'
ok 'quantity("1Gi").add(quantity("512Mi")) == quantity("1536Mi")' true
ok 'quantity("1Gi").sub(1)' 'quantity("1073741823")'
ok 'quantity("1.5").asApproximateFloat()' 1.5
ok 'isQuantity("1.5Gi")' true
ok 'isQuantity("abc")' false
err 'quantity("abc")' "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)\$'"

# ---------------------------------------------------------------- semver library
ok 'semver("1.2.3").major()' 1
ok 'semver("1.2.3").minor()' 2
ok 'semver("1.2.3").patch()' 3
ok 'semver("1.2.3").isLessThan(semver("1.10.0"))' true
ok 'semver("1.2.3").isGreaterThan(semver("1.2.3"))' false
ok 'semver("1.2.3").compareTo(semver("1.2.3"))' 0
ok 'semver("2.0.0").compareTo(semver("1.9.9"))' 1
ok 'semver("1.0.0-alpha").isLessThan(semver("1.0.0"))' true
ok 'isSemver("1.2.3")' true
ok 'isSemver("v1.2")' false
ok 'isSemver("v1.2", true)' true
ok 'semver("v1.2", true)' 'semver("1.2.0")'
ok 'semver("v1.2", true) == semver("1.2.0")' true
err 'semver("1.2")' 'No Major.Minor.Patch elements found'  # blang/semver's error

# ---------------------------------------------------------------- device file errors
printf 'attributes: {}\n' >"$tmp/nodriver.yaml"
err true "$tmp/nodriver.yaml: driver: Required value" --device "$tmp/nodriver.yaml"
printf 'driver: x\nattrs: {}\n' >"$tmp/unknown.yaml"
err true "$tmp/unknown.yaml: device file: unknown field \"attrs\"" --device "$tmp/unknown.yaml"
printf 'driver: x\nattributes:\n  a: {float: 1}\n' >"$tmp/kind.yaml"
err true "$tmp/kind.yaml: attributes[a].float: unknown field" --device "$tmp/kind.yaml"
printf 'driver: x\nattributes:\n  a: {int: 1, bool: true}\n' >"$tmp/two.yaml"
err true "$tmp/two.yaml: attributes[a]: must have exactly one of int, bool, string, version" --device "$tmp/two.yaml"
printf 'driver: x\ncapacity:\n  mem: {value: 12zz}\n' >"$tmp/qty.yaml"
err_has true "$tmp/qty.yaml: capacity[mem].value: quantities must match the regular expression" --device "$tmp/qty.yaml"
printf 'driver: [\n' >"$tmp/syntax.yaml"
err_has true "$tmp/syntax.yaml: device file: " --device "$tmp/syntax.yaml"
err true "$tmp/missing.yaml: cannot open file" --device "$tmp/missing.yaml"

# ---------------------------------------------------------------- usage
run cel eval
if [ "$rc" != 2 ] || ! grep -qF "EXPR is required" "$tmp/err"; then bad "cel eval without EXPR" "want exit 2, EXPR is required"; fi
run cel eval true --device "$tmp/h100.yaml" extra
if [ "$rc" != 2 ] || ! grep -qF "The following argument was not expected: extra" "$tmp/err"; then bad "cel eval with two expressions" "want exit 2"; fi

[ "$fail" = 0 ] && echo "cel eval CLI: all checks passed"
exit $fail
