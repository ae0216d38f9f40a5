#!/usr/bin/env bash
# The real-hardware image (examples/firmware-w5500, issue #22): a Raspberry Pi Pico (RP2040)
# with a WIZnet W5500 serving MCP over Streamable HTTP (embassy-net). QEMU has no RP2040
# machine, so it is compiled, never run: installs what it needs, checks format and clippy,
# builds the release image (one build), prints its flash and static RAM and the bytes each
# connection slot costs (from the image's symbols), fails if a heap allocator is linked, and
# checks the README's footprint row against the image.
# Run from anywhere; called by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

BOARD=pico-w5500
FW="$PWD/examples/firmware-w5500"
FWSH="$PWD/scripts/firmware.sh"

step() { printf '\n==> firmware-w5500: %s\n' "$*"; }

step "install: Rust target thumbv6m-none-eabi, binutils-arm-none-eabi"
rustup target add thumbv6m-none-eabi >/dev/null 2>&1 || rustup target add thumbv6m-none-eabi
if ! command -v arm-none-eabi-size >/dev/null || ! command -v arm-none-eabi-nm >/dev/null; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends binutils-arm-none-eabi >/dev/null
fi

step "format and clippy (the image is its own workspace)"
(cd "$FW" && cargo fmt -- --check && cargo clippy -q --release -- -D warnings)

step "build the release image (opt-level z, fat LTO, panic abort)"
start=$(date +%s)
ELF=$("$FWSH" elf "$BOARD")
echo "built in $(($(date +%s) - start)) s"

step "footprint (arm-none-eabi-size, arm-none-eabi-nm)"
arm-none-eabi-size -A "$ELF" | awk 'NR<=2 || /^\.(boot2|vector_table|text|rodata|data|bss|uninit)/'
read -r flash ram < <("$FWSH" size "$BOARD" | awk -v b="$BOARD" '$1 == b { print $2, $3 }')
printf 'flash (boot2 + text + data): %d bytes (%.1f KiB of 2 MiB)\n' "$flash" "$(awk -v b="$flash" 'BEGIN{print b/1024}')"
printf 'static RAM (data + bss): %d bytes (%.1f KiB of 264 KiB; the task futures are statics, the stack comes on top)\n' \
  "$ram" "$(awk -v b="$ram" 'BEGIN{print b/1024}')"
heap_symbols=$(arm-none-eabi-nm "$ELF" | grep -cE '__rust_alloc|__rg_alloc|__rust_alloc_error_handler|__rust_no_alloc_shim' || true)
if [ "$heap_symbols" -ne 0 ]; then
  echo "FAIL: a heap allocator is linked into the firmware ($heap_symbols symbols)"
  exit 1
fi
echo "heap: none"

# A connection slot is one slot task's future (its Slot, its socket's buffers, the TcpSocket
# and the serve future: all locals of the task) plus its socket's entry in embassy-net's
# StackResources (SLOTS + 2 entries: the slots', the overflow socket's and DHCP's).
slots=$(sed -nE 's/^const SLOTS: usize = ([0-9]+);.*/\1/p' "$FW/src/main.rs")
symbol_size() {
  local hex
  hex=$(arm-none-eabi-nm -S -C "$ELF" | awk -v s="$1" '$4 ~ s { print $2; exit }')
  [ -n "$hex" ] && echo $((16#$hex))
}
pool=$(symbol_size 'slot_task::POOL$')
resources=$(symbol_size '::RESOURCES$')
if [ -z "$slots" ] || [ -z "$pool" ] || [ -z "$resources" ]; then
  echo "FAIL: cannot find SLOTS in src/main.rs or slot_task::POOL / RESOURCES in the image"
  exit 1
fi
per_slot=$((pool / slots + resources / (slots + 2)))
echo "connection slots: $slots; per slot: $((pool / slots)) B (task: Slot, socket buffers, serve future) + $((resources / (slots + 2))) B (embassy-net socket) = $per_slot B"

step "the README's footprint row matches the image (within FIRMWARE_README_SLACK bytes, default 256)"
slack="${FIRMWARE_README_SLACK:-256}"
row=$(grep -E "^\| \`$BOARD\` \|" README.md || true)
if [ -z "$row" ]; then
  echo "FAIL: README.md has no footprint row for $BOARD"
  exit 1
fi
readme_flash=$(awk -F'|' '{ gsub(/[ ,]/, "", $5); print $5 }' <<<"$row")
readme_ram=$(awk -F'|' '{ gsub(/[ ,]/, "", $6); print $6 }' <<<"$row")
readme_slot=$(sed -nE 's/.* ([0-9,]+) B per connection slot.*/\1/p' <<<"$row" | tr -d ,)
if [ -z "$readme_slot" ]; then
  echo "FAIL: README.md's $BOARD row does not say 'N B per connection slot'"
  exit 1
fi
status=0
for what in flash ram slot; do
  case $what in
    flash) have=$flash readme=$readme_flash ;;
    ram) have=$ram readme=$readme_ram ;;
    slot) have=$per_slot readme=$readme_slot ;;
  esac
  diff=$((readme - have))
  if [ "${diff#-}" -gt "$slack" ]; then
    echo "FAIL: README.md says $BOARD has $readme B of $what; the image has $have"
    status=1
  fi
done
[ "$status" -eq 0 ] || exit 1
echo "ok: README $readme_flash / $readme_ram / $readme_slot per slot, image $flash / $ram / $per_slot"
