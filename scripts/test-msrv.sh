#!/usr/bin/env bash
# The publishable crates build on their minimum supported Rust version (the workspace's
# `rust-version`), with every feature; their tests too, where the dev-dependencies allow.
#
# The workspace's own Cargo.lock and target/ are left alone: the sources are copied to
# <target>/msrv/workspace, a lockfile is resolved there preferring dependency versions whose
# `rust-version` the MSRV satisfies (falling back to newer ones only when none fits), and
# the MSRV toolchain checks against that lockfile with its own target dir
# (<target>/msrv/target).
set -euo pipefail
cd "$(dirname "$0")/.."

msrv=$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' Cargo.toml)
[ -n "$msrv" ] || { echo "test-msrv: no rust-version in Cargo.toml" >&2; exit 1; }
crates=(-p mcp-rs-core -p mcp-rs-macros -p mcp-rs-tokio -p mcp-rs-embedded)

rustup toolchain install "$msrv" --profile minimal

target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
root="$target/msrv"
copy="$root/workspace"
rm -rf "$copy"
mkdir -p "$copy"
# The tracked and new (not ignored) files of the working tree, copied with their times so
# that cargo does not rebuild unchanged crates; the lockfile is made anew below.
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' file; do if [ -e "$file" ]; then printf '%s\0' "$file"; fi; done |
  xargs -0 cp -a --parents -t "$copy"

cd "$copy"
rm -f Cargo.lock
# The workspace uses resolver 2, so the MSRV-aware fallback is asked for explicitly; the
# default toolchain's cargo resolves (it needs cargo >= 1.84) and writes a lockfile (version 4)
# that the MSRV's cargo reads.
export CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS=fallback
cargo generate-lockfile
# What the fallback cannot see: simple_asn1 0.6.4 (under jsonwebtoken, feature `jwt`)
# declares no rust-version but needs time >= 0.3.47, and time 0.3.46+ needs Rust 1.88.
# A user on Rust 1.85 needs the same two pins.
for pin in simple_asn1@0.6.3 time@0.3.45; do
  cargo update --quiet "${pin%@*}" --precise "${pin#*@}"
done

export CARGO_TARGET_DIR="$root/target"
echo "test-msrv: Rust $msrv, libraries with all features"
cargo "+$msrv" check --locked "${crates[@]}" --all-features --lib
# mcp-rs-core's tests are left out: its dev-dependency criterion 0.8 needs Rust 1.86
# (f64::next_up), and cargo builds every dev-dependency for any test target.
echo "test-msrv: Rust $msrv, all targets of mcp-rs-macros, mcp-rs-tokio, mcp-rs-embedded"
cargo "+$msrv" check --locked -p mcp-rs-macros -p mcp-rs-tokio -p mcp-rs-embedded \
  --all-features --all-targets
echo "test-msrv: ok (Rust $msrv)"
