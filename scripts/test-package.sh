#!/usr/bin/env bash
# The four publishable crates package and build from their packages alone.
#
# `cargo package` of each (dependencies between them resolved through cargo's temporary
# local registry), verified: every package is unpacked and built on its own with all its
# features. Also checks what goes in: the licenses (identical to the root copies) and the
# README, no tests or test data, and a size bound.
set -euo pipefail
cd "$(dirname "$0")/.."

crates=(mcp-rs-core mcp-rs-macros mcp-rs-tokio mcp-rs-embedded)
declare -A folder=([mcp-rs-core]=mcp-core [mcp-rs-macros]=mcp-macros [mcp-rs-tokio]=mcp-tokio [mcp-rs-embedded]=mcp-embedded)
max_kib=400 # compressed .crate size bound per package

fail() { echo "test-package: $*" >&2; exit 1; }

for crate in "${crates[@]}"; do
  dir=${folder[$crate]}
  for file in LICENSE-MIT LICENSE-APACHE; do
    cmp -s "$file" "$dir/$file" || fail "$dir/$file differs from the root $file (copy it again)"
  done
  list=$(cargo package --list --allow-dirty -p "$crate")
  for file in LICENSE-MIT LICENSE-APACHE README.md Cargo.toml src/lib.rs; do
    grep -qx "$file" <<<"$list" || fail "$crate: $file is not in the package"
  done
  if grep -E '^tests/(spec|fixtures|ui)/' <<<"$list" >/dev/null; then
    fail "$crate: test data in the package: $(grep -E '^tests/' <<<"$list" | head -3)"
  fi
done

# Verified packaging. --allow-dirty so uncommitted work can be checked too; the published
# packages come from a clean tree anyway.
# The tests are excluded from the packages on purpose; cargo's warning for each is dropped.
# Cargo verifies each package against the others through a temporary local registry, and
# extracts those crates once per registry path into its source cache; an extraction left by
# an earlier run of this script in the same checkout would be reused, stale. Drop ours.
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/mcp-rs-*

cargo package --workspace --exclude mcp-examples --exclude mcp-httpload \
  --all-features --allow-dirty 2> >(grep -v '^warning: ignoring test ' >&2)

target=${CARGO_TARGET_DIR:-target}
version=$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "mcp-rs-core"))')
for crate in "${crates[@]}"; do
  file="$target/package/$crate-$version.crate"
  [ -f "$file" ] || fail "$file missing"
  kib=$(( $(stat -c %s "$file") / 1024 ))
  files=$(tar -tzf "$file" | wc -l)
  echo "$crate $version: $kib KiB compressed, $files files"
  [ "$kib" -le "$max_kib" ] || fail "$crate: $kib KiB is over $max_kib KiB (exclude more in its Cargo.toml)"
done
echo "test-package: ok"
