#!/usr/bin/env bash
# The firmware (examples/firmware) end to end, on each board (issue #21): installs what it
# needs, runs the host unit tests of its self-contained modules (decimal fixed point, dice
# notation), builds the release image for each board, prints the footprint table and checks
# it against the budgets and against the README's table, and drives each image in QEMU with
# the official MCP TypeScript SDK clients (1.x in the initialize era, 2.x in 2026-07-28) and
# raw 2026-07-28 requests (the boards side by side), plus our own client (mcp-tokio) on
# mps2-an386. Prints the sizes and the QEMU
# round-trip times. Run from anywhere; called by scripts/test.sh.
#
# Boards (scripts/firmware.sh boards): mps2-an386 (thumbv7em-none-eabihf), microbit
# (thumbv6m-none-eabi) and riscv (riscv32imac-unknown-none-elf, QEMU sifive_e).
#
# Budgets: flash (text + rodata + data initializers) and static RAM (data + bss), no heap.
# Each board's default is in scripts/firmware.sh's table; FIRMWARE_FLASH_BUDGET and
# FIRMWARE_RAM_BUDGET override them for every board, FIRMWARE_FLASH_BUDGET_<BOARD> and
# FIRMWARE_RAM_BUDGET_<BOARD> (board upper-cased, `-` as `_`, e.g.
# FIRMWARE_FLASH_BUDGET_MICROBIT) for one. FIRMWARE_BOARDS chooses the boards (default: the
# three above).
set -euo pipefail
cd "$(dirname "$0")/.."

FW="$PWD/examples/firmware"
FWSH="$PWD/scripts/firmware.sh"
BOARDS_TESTED="${FIRMWARE_BOARDS:-mps2-an386 microbit riscv}"

step() { printf '\n==> firmware: %s\n' "$*"; }

step "install: Rust targets, qemu-system-arm, qemu-system-misc (riscv32), binutils for ARM and RISC-V, node"
targets=(thumbv7em-none-eabihf thumbv6m-none-eabi riscv32imac-unknown-none-elf)
rustup target add "${targets[@]}" >/dev/null 2>&1 || rustup target add "${targets[@]}"
missing=()
command -v qemu-system-arm >/dev/null || missing+=(qemu-system-arm)
command -v qemu-system-riscv32 >/dev/null || missing+=(qemu-system-misc)
command -v arm-none-eabi-size >/dev/null || missing+=(binutils-arm-none-eabi)
command -v riscv64-unknown-elf-size >/dev/null || missing+=(binutils-riscv64-unknown-elf)
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
qemu-system-riscv32 --version | head -n 1

step "mcp-embedded with defmt (thumbv7em-none-eabihf)"
cargo check -q -p mcp-rs-embedded --features defmt --target thumbv7em-none-eabihf

step "host unit tests of the firmware's own modules (decimal fixed point, dice notation)"
tests_dir=$(mktemp -d)
trap 'rm -rf "$tests_dir"' EXIT
for module in decimal dice; do
  rustc --edition 2021 --test -o "$tests_dir/$module" "$FW/src/$module.rs"
  "$tests_dir/$module" -q
done

# The board table: name, crate, target, binary, machine, flash budget, RAM budget.
board_field() { "$FWSH" boards | awk -F'\t' -v b="$1" -v f="$2" '$1 == b { print $f }'; }

step "format and clippy for each board's target (the firmware is its own workspace)"
(cd "$FW" && cargo fmt -- --check)
for board in $BOARDS_TESTED; do
  (cd "$FW" && cargo clippy -q --release --target "$(board_field "$board" 3)" -- -D warnings)
done

step "build the release images (opt-level z, fat LTO, panic abort)"
for board in $BOARDS_TESTED; do
  "$FWSH" elf "$board" >/dev/null
done

step "footprint (arm-none-eabi-size, riscv64-unknown-elf-size)"
status=0
declare -A FLASH RAM
printf '%-12s %-30s %-11s %10s %10s %10s %10s  %s\n' board target machine "flash (B)" budget "RAM (B)" budget heap
for board in $BOARDS_TESTED; do
  target=$(board_field "$board" 3)
  machine=$(board_field "$board" 5)
  key=$(echo "$board" | tr 'a-z-' 'A-Z_')
  flash_var="FIRMWARE_FLASH_BUDGET_$key"
  ram_var="FIRMWARE_RAM_BUDGET_$key"
  flash_budget="${!flash_var:-${FIRMWARE_FLASH_BUDGET:-$(board_field "$board" 6)}}"
  ram_budget="${!ram_var:-${FIRMWARE_RAM_BUDGET:-$(board_field "$board" 7)}}"
  read -r _ flash ram < <("$FWSH" size "$board" | awk 'NR == 2')
  FLASH[$board]=$flash
  RAM[$board]=$ram
  elf=$("$FWSH" elf "$board")
  case "$target" in thumb*) nm=arm-none-eabi-nm ;; *) nm=riscv64-unknown-elf-nm ;; esac
  heap_symbols=$("$nm" "$elf" | grep -cE '__rust_alloc|__rg_alloc|__rust_alloc_error_handler' || true)
  printf '%-12s %-30s %-11s %10d %10s %10d %10s  %s\n' "$board" "$target" "$machine" "$flash" "$flash_budget" \
    "$ram" "$ram_budget" "$([ "$heap_symbols" -eq 0 ] && echo none || echo "ALLOCATOR LINKED")"
  if [ "$flash_budget" != - ] && [ "$flash" -gt "$flash_budget" ]; then
    echo "FAIL: $board: flash $flash bytes exceeds the budget of $flash_budget bytes by $((flash - flash_budget)) ($flash_var)"
    status=1
  fi
  if [ "$ram_budget" != - ] && [ "$ram" -gt "$ram_budget" ]; then
    echo "FAIL: $board: static RAM $ram bytes exceeds the budget of $ram_budget bytes by $((ram - ram_budget)) ($ram_var)"
    status=1
  fi
  if [ "$heap_symbols" -ne 0 ]; then
    echo "FAIL: $board: a heap allocator is linked into the firmware"
    status=1
  fi
done

step "the README's footprint table matches the images (within FIRMWARE_README_SLACK bytes, default 256)"
slack="${FIRMWARE_README_SLACK:-256}"
for board in $BOARDS_TESTED; do
  # The row: | `board` | target | machine | flash | static RAM | budget |
  row=$(grep -E "^\| \`$board\` \|" README.md || true)
  if [ -z "$row" ]; then
    echo "FAIL: README.md has no footprint row for $board"
    status=1
    continue
  fi
  readme_flash=$(awk -F'|' '{ gsub(/[ ,]/, "", $5); print $5 }' <<<"$row")
  readme_ram=$(awk -F'|' '{ gsub(/[ ,]/, "", $6); print $6 }' <<<"$row")
  diff_flash=$((readme_flash - ${FLASH[$board]}))
  diff_ram=$((readme_ram - ${RAM[$board]}))
  if [ "${diff_flash#-}" -gt "$slack" ] || [ "${diff_ram#-}" -gt "$slack" ]; then
    echo "FAIL: README.md says $board has $readme_flash B flash and $readme_ram B RAM; the image has ${FLASH[$board]} and ${RAM[$board]}"
    status=1
  else
    echo "ok: $board: README $readme_flash / $readme_ram, image ${FLASH[$board]} / ${RAM[$board]}"
  fi
done

step "end to end in QEMU, each board: TypeScript SDK 1.x (initialize era) and 2.x (2026-07-28) clients + raw 2026-07-28 requests"
(
  cd "$FW/interop"
  # Reinstall when an installed version differs from the pinned one (SDKs 1.x and 2.x, Ajv).
  stale=$(node -e '
    const deps = require("./package.json").dependencies;
    const have = (n) => { try { return require(`./node_modules/${n}/package.json`).version } catch { return "" } };
    console.log(Object.entries(deps).some(([n, v]) => have(n) !== v) ? "yes" : "no");')
  if [ "$stale" = yes ]; then
    npm install --no-package-lock --no-audit --no-fund --loglevel=error
  fi
  # The boards side by side (an idle image sleeps in WFI, so they share two cores well);
  # each one's output is printed once it is done.
  pids=()
  for board in $BOARDS_TESTED; do
    FIRMWARE_BOARD="$board" timeout 300 node test.mjs >"$tests_dir/interop-$board.log" 2>&1 &
    pids+=($!)
  done
  failed=0
  i=0
  for board in $BOARDS_TESTED; do
    if wait "${pids[$i]}"; then
      echo "--- $board: passed"
    else
      echo "--- $board: FAILED"
      failed=1
    fi
    cat "$tests_dir/interop-$board.log"
    i=$((i + 1))
  done
  exit "$failed"
)

step "end to end in QEMU: our own client (mcp-tokio), both eras, on mps2-an386"
MCP_FIRMWARE_ELF="$("$FWSH" elf mps2-an386)" timeout 300 cargo test -q -p mcp-rs-tokio --test client_firmware -- --ignored --nocapture

step "verdict"
if [ "$status" -eq 0 ]; then
  echo "ok: every board within its flash and RAM budget, no heap, README footprint table current"
else
  echo "FAIL: see the footprint and README checks above"
fi
exit "$status"
