#!/usr/bin/env bash
# Fuzz smoke test: builds the cargo-fuzz targets of fuzz/ once, then runs each for a short
# time starting from its committed corpus (fuzz/corpus/<target>/, read-only here: new inputs
# go to a temporary directory). Fails if any target finds a crash (saved under
# fuzz/artifacts/<target>/). Installs cargo-fuzz and a nightly toolchain if missing; skips,
# with a message, only when nightly cannot be installed.
#
#   FUZZ_SECONDS   seconds per target (default 40: 4 targets + a fresh build stay under 5 minutes)
#   FUZZ_TARGETS   space-separated subset (default: every target)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-40}"
targets="${FUZZ_TARGETS:-json_scan json_roundtrip framing session}"

if ! rustup toolchain list | grep -q '^nightly'; then
  echo "fuzz: installing the nightly toolchain (cargo-fuzz needs it)"
  if ! rustup toolchain install nightly --profile minimal; then
    echo "fuzz: SKIPPED: no nightly toolchain and it cannot be installed here"
    exit 0
  fi
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi

cd fuzz
echo "fuzz: building every target (nightly, ASan)"
cargo +nightly fuzz build

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failed=()
for t in $targets; do
  mkdir -p "$scratch/$t" "artifacts/$t" "corpus/$t"
  echo "fuzz: $t for ${seconds}s"
  if ! cargo +nightly fuzz run "$t" "$scratch/$t" "corpus/$t" -- \
      -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
      -artifact_prefix="artifacts/$t/" 2>"$scratch/$t.log"; then
    tail -n 60 "$scratch/$t.log"
    failed+=("$t")
  else
    grep -E '^(Done|stat::number_of_executed_units)' "$scratch/$t.log" || true
  fi
done

if ((${#failed[@]})); then
  echo "fuzz: FAILED: ${failed[*]} (reproducers in fuzz/artifacts/; replay one with"
  echo "      'cd fuzz && cargo +nightly fuzz run <target> <file>')"
  exit 1
fi
echo "fuzz: no crashes"
