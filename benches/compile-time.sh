#!/usr/bin/env bash
# The compile-time cost of #[capability]: one crate with N capability impls
# carrying the attribute, against the same fns without it (both compile the
# same generated bindings). Prints the median of RUNS rebuilds of the crate
# itself (dependencies are built once, first).
#
#   bash benches/compile-time.sh [N=1000] [RUNS=3]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000}
RUNS=${2:-3}
REPO=$(pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export CARGO_TARGET_DIR="$REPO/target/compile-time"

cargo run --quiet --release -p capspec-benches --example write_specs -- "$WORK" "$N"
cat > "$WORK/capspec.toml" <<TOML
specs = "specs"
[generate]
rust = "host/src/generated"
js = "host/guest"
catalog = "host/catalog"
TOML
cargo run --quiet -p xtask -- sync --root "$WORK" > /dev/null

make_crate() { # $1 = with|without
  local dir="$WORK/host"
  cat > "$dir/Cargo.toml" <<TOML
[package]
name = "compile-time-host"
version = "0.0.0"
edition = "2024"
publish = false
[dependencies]
capspec = { path = "$REPO/runtime" }
[workspace]
TOML
  printf 'pub mod generated;\nmod impls;\n' > "$dir/src/lib.rs"
  {
    echo "#![allow(dead_code)]"
    for spec in "$WORK"/specs/*.yaml; do
      module=$(basename "$spec" .yaml)
      for cap in $(grep -o 'name: cap_[0-9_]*' "$spec" | cut -d' ' -f2); do
        [ "$1" = with ] && echo "#[capspec::capability(crate::generated::$module::$cap)]"
        echo "async fn $cap(_run: &capspec::Run, _args: crate::generated::$module::$cap::Args) -> capspec::CapResult<()> { Ok(()) }"
      done
    done
  } > "$dir/src/impls.rs"
}

measure() { # $1 = with|without → median seconds
  make_crate "$1"
  (cd "$WORK/host" && cargo build --quiet 2> /dev/null) # dependencies, once
  local times=()
  for _ in $(seq "$RUNS"); do
    touch "$WORK/host/src/lib.rs"
    local start end
    start=$(date +%s.%N)
    (cd "$WORK/host" && cargo build --quiet)
    end=$(date +%s.%N)
    times+=("$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')")
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"
}

without=$(measure without)
with=$(measure with)
echo "capabilities: $N (debug build of the host crate, median of $RUNS)"
echo "without #[capability]: ${without} s"
echo "with #[capability]:    ${with} s"
echo "added: $(awk -v a="$without" -v b="$with" 'BEGIN { printf "%.1f", (b - a) * 100 / a }')%"
