#!/usr/bin/env bash
# Runs every check and test of the workspace, installing what it needs first.
# This is the README's test command and what CI (.ci/run) runs on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "toolchain: targets and components"
rustup target add thumbv7em-none-eabihf thumbv6m-none-eabi
rustup component add rustfmt clippy >/dev/null 2>&1 || true

step "format"
cargo fmt --all -- --check

step "clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets -- -D warnings

step "docs (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

step "mcp-core without alloc on Cortex-M (thumbv7em-none-eabihf, thumbv6m-none-eabi)"
for target in thumbv7em-none-eabihf thumbv6m-none-eabi; do
  cargo build -p mcp-rs-core --no-default-features --target "$target"
  cargo build -p mcp-rs-core --no-default-features --features client --target "$target"
  cargo build -p mcp-rs-core --features serde --target "$target"
done

step "feature matrix (mcp-core)"
for features in "" "serde" "pagination" "deferred" "listen" "batch" "resources" "prompts" "completion" "input-required" "requests" "render-once" "rotation" "client" "skills" "tasks" "full" "macros" "alloc" "std" "serde,std"; do
  cargo clippy -p mcp-rs-core --no-default-features --features "$features" --quiet -- -D warnings
done

step "feature matrix (mcp-tokio)"
for features in "" "http" "jwt" "macros" "stdio" "socket" "client" "client,http" "tls" "oauth" "validate"; do
  cargo clippy -p mcp-rs-tokio --no-default-features --features "$features" --quiet -- -D warnings
done

step "feature matrix (mcp-embedded)"
for features in "" "requests" "http" "prompts" "tasks" "http,tasks" "http,requests,prompts,tasks"; do
  cargo clippy -p mcp-rs-embedded --no-default-features --features "$features" --quiet -- -D warnings
done

step "unit, integration and doc tests"
cargo test --workspace

step "mcp-core without pagination (the firmware's lists: one page, no cursor)"
cargo test -p mcp-rs-core --no-default-features --test lists_unpaged

# Further suites (interop with official SDKs, a load-balanced cluster, firmware in QEMU,
# fuzzing) live in scripts/test-*.sh; each installs what it needs.
for suite in scripts/test-*.sh; do
  [ -e "$suite" ] || continue
  step "suite: $suite"
  bash "$suite"
done

step "all checks passed"
