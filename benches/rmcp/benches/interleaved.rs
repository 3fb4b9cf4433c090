//! The `tools/call` round trips of `benches/rmcp.rs`, interleaved: each
//! round calls every server in turn, a block of calls each, in an order
//! that rotates with the round. Run one after another (as divan and
//! criterion run functions), each server meets a different stretch of a
//! shared machine, and on a busy one the medians then compare stretches,
//! not servers; interleaved, every server meets the same ones. Within a
//! block the first calls are not timed, so each server is timed with its
//! own code and data in cache, as in a process serving only it.
//!
//! `cargo bench --manifest-path benches/rmcp/Cargo.toml --bench interleaved [-- ROUNDS]`
//! prints, per server, the fastest call, quartiles and median, and each
//! median over the first (plain rmcp) server's. One thread
//! (`current_thread`): the figure is the work client and server do.

use std::time::Instant;

use capspec_rmcp_compare::{PeekMetaServer, PeekServer, StoredRouterServer, capspec_session, connect};
use rmcp::model::CallToolRequestParams;
use serde_json::json;

/// Calls to one server in a row.
const BLOCK: usize = 25;
/// The first calls of a block, not timed.
const SETTLE: usize = 5;
/// Rounds before timing starts.
const WARM_UP: usize = 10;

fn main() {
    // `cargo bench` passes `--bench`; a number is the count of rounds.
    let rounds = std::env::args().skip(1).find_map(|a| a.parse::<usize>().ok()).unwrap_or(150);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    // Each serves the one tool `peek`; the first is the ratios' baseline.
    let servers = rt.block_on(async {
        [
            ("rmcp #[tool_router(server_handler)]", connect(PeekServer).await),
            ("  the same + capspec's receipt in _meta", connect(PeekMetaServer).await),
            ("rmcp, router kept in the server", connect(StoredRouterServer::default()).await),
            ("capspec McpSession (tools surface)", connect(capspec_session()).await),
        ]
    });
    let args = json!({"note_id": "n1"}).as_object().cloned().expect("an object");
    let mut micros: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds * (BLOCK - SETTLE)); servers.len()];
    for round in 0..WARM_UP + rounds {
        for k in 0..servers.len() {
            let which = (round + k) % servers.len();
            let (_, client) = &servers[which];
            for call in 0..BLOCK {
                let params = CallToolRequestParams::new("peek").with_arguments(args.clone());
                let start = Instant::now();
                let result = rt.block_on(client.call_tool(params)).expect("a result");
                let elapsed = start.elapsed();
                assert_ne!(result.is_error, Some(true), "peek failed: {result:?}");
                if round >= WARM_UP && call >= SETTLE {
                    micros[which].push(elapsed.as_secs_f64() * 1e6);
                }
            }
        }
    }
    for times in &mut micros {
        times.sort_by(f64::total_cmp);
    }
    let at = |times: &[f64], q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    let baseline = at(&micros[0], 0.5);
    println!("tools/call round trips, {rounds} interleaved rounds of {} timed calls per server (µs)", BLOCK - SETTLE);
    println!("{:<42} {:>8} {:>8} {:>8} {:>8} {:>7}", "server", "fastest", "p25", "median", "p75", "ratio");
    for ((label, _), times) in servers.iter().zip(&micros) {
        let median = at(times, 0.5);
        println!("{label:<42} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>6.3}×", times[0], at(times, 0.25), median, at(times, 0.75), median / baseline);
    }
}
