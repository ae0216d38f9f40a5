#!/usr/bin/env bash
# The Cortex-M firmware (examples/firmware) end to end: installs what it needs, runs the
# host unit tests of its self-contained modules (decimal fixed point, dice notation), builds
# the release image, checks its flash/RAM budget with arm-none-eabi-size, and drives it in
# QEMU (mps2-an386) with the official MCP TypeScript SDK client and raw 2026-07-28 requests.
# Prints the sizes and the QEMU round-trip times. Run from anywhere; called by scripts/test.sh.
#
# Budget (issue #4): flash (text + rodata + data initializers) <= FIRMWARE_FLASH_BUDGET
# (default 32 KiB), static RAM (data + bss) <= FIRMWARE_RAM_BUDGET (default 8 KiB), no heap.
set -euo pipefail
cd "$(dirname "$0")/.."

FLASH_BUDGET="${FIRMWARE_FLASH_BUDGET:-32768}"
RAM_BUDGET="${FIRMWARE_RAM_BUDGET:-8192}"
FW="$PWD/examples/firmware"
ELF="$(realpath -m "${CARGO_TARGET_DIR:-$FW/target}")/thumbv7em-none-eabihf/release/mcp-firmware"

step() { printf '\n==> firmware: %s\n' "$*"; }

step "install: Rust targets, qemu-system-arm, binutils-arm-none-eabi, node"
rustup target add thumbv7em-none-eabihf thumbv6m-none-eabi >/dev/null 2>&1 \
  || rustup target add thumbv7em-none-eabihf thumbv6m-none-eabi
missing=()
command -v qemu-system-arm >/dev/null || missing+=(qemu-system-arm)
command -v arm-none-eabi-size >/dev/null || missing+=(binutils-arm-none-eabi)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
command -v python3 >/dev/null || missing+=(python3)
if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
qemu-system-arm --version | head -n 1

step "mcp-embedded with defmt (thumbv7em-none-eabihf)"
cargo check -q -p mcp-rs-embedded --features defmt --target thumbv7em-none-eabihf

step "host unit tests of the firmware's own modules (decimal fixed point, dice notation)"
tests_dir=$(mktemp -d)
trap 'rm -rf "$tests_dir"' EXIT
for module in decimal dice; do
  rustc --edition 2021 --test -o "$tests_dir/$module" "$FW/src/$module.rs"
  "$tests_dir/$module" -q
done

step "format and clippy (the firmware is its own workspace)"
(cd "$FW" && cargo fmt -- --check && cargo clippy -q --release -- -D warnings)

step "build the release image (opt-level z, fat LTO, panic abort)"
(cd "$FW" && cargo build -q --release)

step "footprint (arm-none-eabi-size)"
arm-none-eabi-size -A "$ELF" | awk 'NR<=2 || /^\.(vector_table|text|rodata|data|bss|uninit|heap)/'
read -r text data bss _ < <(arm-none-eabi-size "$ELF" | awk 'NR==2')
flash=$((text + data))
ram=$((data + bss))
heap_symbols=$(arm-none-eabi-nm "$ELF" | grep -cE '__rust_alloc|__rg_alloc|__rust_alloc_error_handler' || true)
printf 'flash: %d bytes (%.1f KiB) of %d budget\n' "$flash" "$(awk -v b="$flash" 'BEGIN{print b/1024}')" "$FLASH_BUDGET"
printf 'static RAM: %d bytes (%.1f KiB) of %d budget (1 KiB receive + 2 KiB transmit buffers, 512 B UART ring)\n' \
  "$ram" "$(awk -v b="$ram" 'BEGIN{print b/1024}')" "$RAM_BUDGET"
printf 'heap: %s\n' "$([ "$heap_symbols" -eq 0 ] && echo none || echo "ALLOCATOR LINKED ($heap_symbols symbols)")"

step "end to end in QEMU: TypeScript SDK client + raw 2026-07-28 requests"
(
  cd "$FW/interop"
  # Reinstall when an installed version differs from the pinned one (SDK, Ajv).
  stale=$(node -e '
    const deps = require("./package.json").dependencies;
    const have = (n) => { try { return require(`./node_modules/${n}/package.json`).version } catch { return "" } };
    console.log(Object.entries(deps).some(([n, v]) => have(n) !== v) ? "yes" : "no");')
  if [ "$stale" = yes ]; then
    npm install --no-package-lock --no-audit --no-fund --loglevel=error
  fi
  timeout 240 node test.mjs
)

step "end to end in QEMU: our own client (mcp-tokio), both eras"
MCP_FIRMWARE_ELF="$ELF" timeout 300 cargo test -q -p mcp-rs-tokio --test client_firmware -- --ignored --nocapture

step "budget check"
status=0
if [ "$flash" -gt "$FLASH_BUDGET" ]; then
  echo "FAIL: flash $flash bytes exceeds the budget of $FLASH_BUDGET bytes by $((flash - FLASH_BUDGET))"
  status=1
fi
if [ "$ram" -gt "$RAM_BUDGET" ]; then
  echo "FAIL: static RAM $ram bytes exceeds the budget of $RAM_BUDGET bytes by $((ram - RAM_BUDGET))"
  status=1
fi
if [ "$heap_symbols" -ne 0 ]; then
  echo "FAIL: a heap allocator is linked into the firmware"
  status=1
fi
[ "$status" -eq 0 ] && echo "ok: flash $flash <= $FLASH_BUDGET, RAM $ram <= $RAM_BUDGET, no heap"
exit "$status"
