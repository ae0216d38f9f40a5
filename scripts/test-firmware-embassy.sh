#!/usr/bin/env bash
# The embassy firmware (examples/firmware-embassy) end to end: installs what it needs,
# checks format and clippy, builds the release image, prints its flash and static RAM with
# arm-none-eabi-size (and fails if a heap allocator is linked), then drives it in QEMU
# (mps2-an386) with the official MCP TypeScript SDK clients, 1.x in the initialize era and
# 2.x in the 2026-07-28 era; the test decodes each session's defmt log (semihosting, routed
# to a file) with defmt-print and checks that it names the requests served.
# Run from anywhere; called by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

FW="$PWD/examples/firmware-embassy"
ELF="$(realpath -m "${CARGO_TARGET_DIR:-$FW/target}")/thumbv7em-none-eabihf/release/mcp-firmware-embassy"
DEFMT_PRINT_VERSION=1.2.0

step() { printf '\n==> firmware-embassy: %s\n' "$*"; }

step "install: Rust target, qemu-system-arm, binutils-arm-none-eabi, node, defmt-print"
rustup target add thumbv7em-none-eabihf >/dev/null 2>&1 || rustup target add thumbv7em-none-eabihf
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
if ! defmt-print --version 2>/dev/null | grep -q " $DEFMT_PRINT_VERSION"; then
  cargo install defmt-print --locked --version "$DEFMT_PRINT_VERSION" --quiet
fi
qemu-system-arm --version | head -n 1
defmt-print --version

step "format and clippy (the firmware is its own workspace)"
(cd "$FW" && cargo fmt -- --check && cargo clippy -q --release -- -D warnings)

step "build the release image (opt-level z, fat LTO, panic abort)"
(cd "$FW" && cargo build -q --release)

step "footprint (arm-none-eabi-size)"
arm-none-eabi-size -A "$ELF" | awk 'NR<=2 || /^\.(vector_table|text|rodata|data|bss|uninit|heap)/'
read -r text data bss _ < <(arm-none-eabi-size "$ELF" | awk 'NR==2')
flash=$((text + data))
ram=$((data + bss))
heap_symbols=$(arm-none-eabi-nm "$ELF" | grep -cE '__rust_alloc|__rg_alloc|__rust_alloc_error_handler|__rust_no_alloc_shim' || true)
printf 'flash (text + data): %d bytes (%.1f KiB)\n' "$flash" "$(awk -v b="$flash" 'BEGIN{print b/1024}')"
printf 'static RAM (data + bss): %d bytes (%.1f KiB; the task futures are statics, the stack comes on top)\n' \
  "$ram" "$(awk -v b="$ram" 'BEGIN{print b/1024}')"
if [ "$heap_symbols" -ne 0 ]; then
  echo "FAIL: a heap allocator is linked into the firmware ($heap_symbols symbols)"
  exit 1
fi
echo "heap: none"

step "the README's footprint row matches the image (within FIRMWARE_README_SLACK bytes, default 256)"
slack="${FIRMWARE_README_SLACK:-256}"
row=$(grep -E '^\| `mps2-an386-embassy` \|' README.md || true)
if [ -z "$row" ]; then
  echo "FAIL: README.md has no footprint row for mps2-an386-embassy"
  exit 1
fi
readme_flash=$(awk -F'|' '{ gsub(/[ ,]/, "", $5); print $5 }' <<<"$row")
readme_ram=$(awk -F'|' '{ gsub(/[ ,]/, "", $6); print $6 }' <<<"$row")
diff_flash=$((readme_flash - flash))
diff_ram=$((readme_ram - ram))
if [ "${diff_flash#-}" -gt "$slack" ] || [ "${diff_ram#-}" -gt "$slack" ]; then
  echo "FAIL: README.md says mps2-an386-embassy has $readme_flash B flash and $readme_ram B RAM; the image has $flash and $ram"
  exit 1
fi
echo "ok: README $readme_flash / $readme_ram, image $flash / $ram"

step "end to end in QEMU: TypeScript SDK 1.x (initialize era) and 2.x (2026-07-28), defmt log"
(
  cd "$FW/interop"
  # Reinstall when an installed version differs from the pinned one (SDKs, Ajv).
  stale=$(node -e '
    const deps = require("./package.json").dependencies;
    const have = (n) => { try { return require(`./node_modules/${n}/package.json`).version } catch { return "" } };
    console.log(Object.entries(deps).some(([n, v]) => have(n) !== v) ? "yes" : "no");')
  if [ "$stale" = yes ]; then
    npm install --no-package-lock --no-audit --no-fund --loglevel=error
  fi
  CARGO_TARGET_DIR="$(dirname "$(dirname "$(dirname "$ELF")")")" timeout 240 node test.mjs
)
