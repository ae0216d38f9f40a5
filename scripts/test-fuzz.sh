#!/usr/bin/env bash
# Fuzz smoke test: builds the cargo-fuzz targets of fuzz/ once, then runs each for a short
# time starting from its committed corpus (fuzz/corpus/<target>/, read-only here: new inputs
# go to a temporary directory). Fails if any target finds a crash (saved under
# fuzz/artifacts/<target>/). Installs cargo-fuzz and a nightly toolchain (with rustup) if
# missing, and fails, with a message on stderr, whenever a target could not run: no nightly
# toolchain and none installable, no cargo-fuzz, a build failure, no target selected, or a
# target that executed no input. It never skips.
#
#   FUZZ_SECONDS   seconds per target (default 40: 7 targets + a fresh build stay under 8 minutes)
#   FUZZ_TARGETS   space-separated subset (default: every target)
set -euo pipefail
cd "$(dirname "$0")/.."

die() {
  echo "fuzz: FAILED: $*" >&2
  exit 1
}

seconds="${FUZZ_SECONDS:-40}"
targets="${FUZZ_TARGETS:-json_scan json_roundtrip framing session http_headers client embedded_runner}"
# libFuzzer reads -max_total_time=0 as "no limit": insist on a positive whole number.
[[ "$seconds" =~ ^[0-9]+$ ]] && ((10#$seconds > 0)) ||
  die "FUZZ_SECONDS must be a positive number of seconds, not '$seconds'"
read -r -a targets <<<"$targets"
((${#targets[@]})) || die "FUZZ_TARGETS selects no target"

# cargo-fuzz needs nightly (-Z flags, sanitizers). Check that it runs, not only that
# rustup lists it; `cargo +nightly` below then uses it whatever the default toolchain is.
command -v rustup >/dev/null 2>&1 ||
  die "rustup not found: a nightly toolchain is required and this script installs it with rustup"
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  echo "fuzz: installing the nightly toolchain (cargo-fuzz needs it)"
  rustup toolchain install nightly --profile minimal ||
    die "no nightly toolchain, and 'rustup toolchain install nightly --profile minimal' failed"
  rustup run nightly rustc --version >/dev/null 2>&1 ||
    die "the nightly toolchain was installed but its rustc does not run"
fi
echo "fuzz: $(rustup run nightly rustc --version)"

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz"
  cargo install cargo-fuzz --locked || die "cargo-fuzz is missing and could not be installed"
  cargo fuzz --version >/dev/null 2>&1 || die "cargo-fuzz was installed but 'cargo fuzz' does not run"
fi

cd fuzz
echo "fuzz: building every target (nightly, ASan)"
cargo +nightly fuzz build || die "building the fuzz targets failed"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failed=()
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t" "artifacts/$t" "corpus/$t"
  echo "fuzz: $t for ${seconds}s"
  if ! cargo +nightly fuzz run "$t" "$scratch/$t" "corpus/$t" -- \
      -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
      -artifact_prefix="artifacts/$t/" 2>"$scratch/$t.log"; then
    tail -n 60 "$scratch/$t.log" >&2
    failed+=("$t")
    continue
  fi
  grep -E '^(Done|stat::number_of_executed_units)' "$scratch/$t.log" || true
  # A run that exits 0 must have fuzzed: libFuzzer's final stats count executed inputs.
  units=$(sed -n 's/^stat::number_of_executed_units: *\([0-9][0-9]*\).*/\1/p' "$scratch/$t.log" | tail -n 1)
  if [ -z "$units" ] || [ "$units" -eq 0 ]; then
    tail -n 60 "$scratch/$t.log" >&2
    echo "fuzz: $t exited 0 but executed no input (no 'stat::number_of_executed_units' > 0)" >&2
    failed+=("$t")
  fi
done

if ((${#failed[@]})); then
  echo "fuzz: FAILED: ${failed[*]} (reproducers, if any, in fuzz/artifacts/; replay one with" >&2
  echo "      'cd fuzz && cargo +nightly fuzz run <target> <file>')" >&2
  exit 1
fi
echo "fuzz: no crashes in ${targets[*]} (${seconds}s each)"
