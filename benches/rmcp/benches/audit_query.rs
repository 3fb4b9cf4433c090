//! `audit query --principal` over a log of 1,000,000 records (DESIGN §15):
//! the records written through the audit log itself (decision records of
//! 1,000 principals' calls, chained and committed in groups), then the
//! query by one principal timed: the median of 20, in SQLite and, where
//! Debian's postgresql is installed, in a Postgres server of its own. Then
//! a lone caller's records, one at a time: what one record adds to one
//! client's audited call (it waits for two).
//!
//! `cargo bench --manifest-path benches/rmcp/Cargo.toml --bench audit_query [-- RECORDS]`

use std::time::Instant;

use capspec::audit::{AuditRecord, AuditSink, Decided, RecordKind};
use capspec_store::{AuditLog, AuditOptions, Query, Store};
use serde_json::json;

const PRINCIPALS: usize = 1000;

fn main() {
    let records = std::env::args().skip(1).find_map(|a| a.parse::<usize>().ok()).unwrap_or(1_000_000);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let dir = std::env::temp_dir().join(format!("capspec-bench-query-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let postgres = capspec_testkit::postgres::Postgres::start();
    let mut stores = vec![("SQLite", format!("sqlite:{}/store.db", dir.display()))];
    if let Some(pg) = &postgres {
        stores.push(("Postgres", pg.url("query")));
    }
    println!("audit query --principal over {records} records ({PRINCIPALS} principals), median of 20");
    for (name, url) in stores {
        let (filled, median, rows) = rt.block_on(measure(&url, records));
        println!("  {name:<9} filled in {filled:>6.1} s ({:.0} records/s); the query: {median:>7.2} ms for {rows} records", records as f64 / filled);
        let (p50, p99) = rt.block_on(lone(&url));
        println!("  {name:<9} one caller, one record at a time: {p50:>5.0} µs median, {p99:>5.0} µs p99 from handing it over to its commit");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

async fn measure(url: &str, records: usize) -> (f64, f64, usize) {
    let store = Store::open(url).await.expect("the store opens");
    let log = AuditLog::start(store.clone(), AuditOptions { instance: "bench".into(), named: true, key: [7; 32], keep_arguments: false }).await.expect("the log starts");
    let began = Instant::now();
    let mut pending = tokio::task::JoinSet::new();
    for i in 0..records {
        let log = log.clone();
        pending.spawn(async move { log.decision(record(i)).await.expect("stored") });
        if pending.len() >= 2048 {
            pending.join_next().await;
        }
    }
    while pending.join_next().await.is_some() {}
    let filled = began.elapsed().as_secs_f64();
    let query = Query { principal: Some("user-42".into()), ..Query::default() };
    let mut times = Vec::new();
    let mut rows = 0;
    for _ in 0..20 {
        let began = Instant::now();
        rows = store.query(&query).await.expect("the query runs").len();
        times.push(began.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    (filled, times[times.len() / 2], rows)
}

/// A lone caller's records, one at a time (what one client's audited call
/// waits for, twice): the median and p99 of 5,000 round trips, from
/// handing a record to the log until its commit is reported.
async fn lone(url: &str) -> (f64, f64) {
    let store = Store::open(url).await.expect("the store opens");
    let log = AuditLog::start(store, AuditOptions { instance: "lone".into(), named: true, key: [7; 32], keep_arguments: false }).await.expect("the log starts");
    let mut times = Vec::with_capacity(5000);
    for i in 0..5500 {
        let began = Instant::now();
        log.decision(record(i)).await.expect("stored");
        if i >= 500 {
            times.push(began.elapsed().as_secs_f64() * 1e6);
        }
    }
    log.close().await;
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], times[times.len() * 99 / 100])
}

fn record(i: usize) -> AuditRecord {
    AuditRecord {
        kind: RecordKind::Decision,
        time_ms: 1_796_256_000_000 + i as u64,
        call: i as u64,
        principal: format!("user-{}", i % PRINCIPALS),
        groups: vec!["team".into()],
        surface: "tools".into(),
        request: Some(format!("{i}")),
        trace_id: None,
        capability: "notes.read_note".into(),
        category: Some("read".into()),
        mode: "default".into(),
        decision: Some(Decided::Allowed),
        reason: None,
        policies: Vec::new(),
        answered_by: None,
        upstream: None,
        args: Some(json!({"title": format!("note {i}")})),
        sent_args: None,
        status: None,
        duration_ms: None,
        result: None,
    }
}
