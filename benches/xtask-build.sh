#!/usr/bin/env bash
# Clean build time of the xtask `cargo capspec init` writes, as a project's CI
# pays it: `cargo new`, `init --capspec-path CHECKOUT`, then `cargo build -p
# xtask` into an empty target directory (offline, with this repo's lock
# file), median of RUNS. With LIVE=1 the xtask also enables capspec-cli's
# feature `live` (the MCP client), for comparison.
#
#   bash benches/xtask-build.sh CHECKOUT [RUNS]
#
# CHECKOUT is a capspec checkout whose `cargo-capspec` is built at
# CHECKOUT/target/debug/cargo-capspec (or given as CAPSPEC_BIN).
set -euo pipefail
checkout=$(cd "$1" && pwd)
runs=${2:-3}
bin=${CAPSPEC_BIN:-$checkout/target/debug/cargo-capspec}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
cargo new --quiet --vcs none demo
cp "$checkout/Cargo.lock" demo/Cargo.lock
(cd demo && "$bin" capspec init --capspec-path "$checkout" >/dev/null)
if [ "${LIVE:-0}" = 1 ]; then
  sed -i 's/features = \["mimalloc"\]/features = ["mimalloc", "live"]/' demo/xtask/Cargo.toml
fi
times=()
for _ in $(seq "$runs"); do
  rm -rf target
  start=$(date +%s.%N)
  (cd demo && CARGO_NET_OFFLINE=true CARGO_TARGET_DIR="$scratch/target" cargo build --quiet -p xtask)
  end=$(date +%s.%N)
  times+=("$(echo "$end - $start" | bc)")
done
printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "xtask clean build: median %.1f s of %d (%s)\n", a[int((NR + 1) / 2)], NR, "'"${times[*]}"'" }'
