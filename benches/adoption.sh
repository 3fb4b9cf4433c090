#!/usr/bin/env bash
# What adopting capspec costs a project shaped like a real rmcp server
# (tests/fixtures/migrate/rmcp: rmcp 3.11, tokio, axum, schemars, its own
# tests), in builds on this machine, after the project's own `cargo test`:
#
#   1. the project's `cargo test` (its build before capspec; not counted);
#   2. `cargo capspec init --capspec-path CHECKOUT`;
#   3. the next `cargo test`: the crates it compiles, and whether each is
#      one capspec adds (absent from the project's graph before init) or
#      one the project already built (rebuilt: what init must not cause);
#   4. the first `cargo xtask check` (its build included);
#   5. a later `cargo xtask check`.
#
#   bash benches/adoption.sh CHECKOUT
#
# CHECKOUT is a capspec checkout whose `cargo-capspec` is built at
# CHECKOUT/target/debug/cargo-capspec (or given as CAPSPEC_BIN). Offline:
# the crates must be in cargo's cache (a `cargo test --workspace` of the
# checkout and one build of the fixture fetch them).
set -euo pipefail
checkout=$(cd "$1" && pwd)
bin=${CAPSPEC_BIN:-$checkout/target/debug/cargo-capspec}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp -r "$checkout/tests/fixtures/migrate/rmcp" "$scratch/project"
cd "$scratch/project"
export CARGO_NET_OFFLINE=true CARGO_TARGET_DIR="$scratch/target" CARGO_TERM_COLOR=never
seconds() { echo "$2 - $1" | bc; }
compiled() { grep -E '^\s+Compiling ' "$1" | awk '{ print $2 }' | sort -u; }

start=$(date +%s.%N)
cargo test --quiet --no-run 2> "$scratch/before.log" >/dev/null
end=$(date +%s.%N)
echo "the project's own cargo test build: $(seconds "$start" "$end") s"
cargo tree --prefix none --format '{p}' -e normal,build,dev | awk '{ print $1 }' | sort -u > "$scratch/graph-before"

"$bin" capspec init --capspec-path "$checkout" > "$scratch/init.log" 2>&1 || { cat "$scratch/init.log"; exit 1; }
start=$(date +%s.%N)
cargo test --no-run 2> "$scratch/after.log" >/dev/null
end=$(date +%s.%N)
compiled "$scratch/after.log" > "$scratch/compiled-after"
rebuilt=$(comm -12 "$scratch/compiled-after" "$scratch/graph-before" | grep -vx 'notes-server' || true)
echo "init, then cargo test: $(seconds "$start" "$end") s, $(wc -l < "$scratch/compiled-after") crates compiled"
echo "  of them already built by the project (rebuilt): $(echo -n "$rebuilt" | grep -c . || true)${rebuilt:+ ($(echo $rebuilt))}"

start=$(date +%s.%N)
cargo xtask check > "$scratch/check1.log" 2>&1 || grep -q '^capspec: ' "$scratch/check1.log" || { cat "$scratch/check1.log"; exit 1; }
end=$(date +%s.%N)
echo "first cargo xtask check (its build included): $(seconds "$start" "$end") s ($(tail -1 "$scratch/check1.log"))"
start=$(date +%s.%N)
cargo xtask check > "$scratch/check2.log" 2>&1 || grep -q '^capspec: ' "$scratch/check2.log" || { cat "$scratch/check2.log"; exit 1; }
end=$(date +%s.%N)
echo "a later cargo xtask check: $(seconds "$start" "$end") s ($(tail -1 "$scratch/check2.log"))"
