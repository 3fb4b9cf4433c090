//! Streamable HTTP under load: capspec's server (`capspec::mcp::serve_http`,
//! the tools surface over the bench registry, default mode) against rmcp's
//! own `StreamableHttpService` serving the same one tool, `peek` — plain,
//! and returning capspec's receipt in `_meta` — and capspec again with the
//! receipts left out of its results. One Rust load client drives
//! all of them (no Node in the measured path), on both protocol revisions:
//!
//! - 2025-11-25: `SESSIONS` sessions (initialize, `notifications/initialized`,
//!   then `Mcp-Session-Id` on every call), set up before timing;
//! - 2026-07-28: stateless, every call carrying the per-request `_meta`
//!   (protocol version, client capabilities) and the routing headers.
//!
//! Each batch is `SESSIONS` concurrent clients × `CALLS` `tools/call`s, each
//! client on its own keep-alive connection. Rounds interleave the servers
//! and revisions in an order that rotates, so each meets the same stretches
//! of a shared machine. Printed per server and revision: calls per second
//! (median over the batches), p50 and p99 latency over every call, and the
//! ratios to plain rmcp on the same revision: of the medians, and the median
//! of each round's ratio (a row's batch over rmcp's of the same round, which
//! ran seconds before or after it), with its quartiles. And the CPU time
//! each call cost this process's threads (servers and client alike; Linux's
//! schedstat), as a median and per round over rmcp's: what the machine pays
//! per call, which idle gaps in a batch do not move.
//!
//! capspec's server runs twice: behind the shared token, and as an OAuth
//! resource server (DESIGN §13) whose `SESSIONS` clients each hold their own
//! RS256 access token, signed with the fixture key of tests/fixtures/oauth.
//! Then token validation alone, against one client's unloaded round trip:
//! a token's first request (its signature verified against the cached
//! keys; RS256, and ES256) and every later one (the verified token looked up), and the RS256
//! signature alone on the server's ring beside RustCrypto's `rsa` and
//! aws-lc-rs with its parsed public key kept.
//!
//! capspec's server runs twice more with the shared token, recording every
//! call in the audit log (DESIGN §15): to SQLite, and to a Postgres server of
//! its own where Debian's postgresql is installed.
//!
//! `cargo bench --manifest-path benches/rmcp/Cargo.toml --bench http [-- ROUNDS] [audit|serving] [split] [clients=N] [calls=N] [workers=N] [only=S:R]`
//!
//! With `audit`, only the rows the audit log's ratios need run (plain rmcp,
//! capspec behind the shared token, and the audited servers), and token
//! validation is left out. With `serving`, only plain rmcp, rmcp with the
//! receipt and capspec behind the shared token (with its receipts and
//! without) run: no audit store's
//! writes after a batch reach into the next. `clients=N` runs N clients at
//! once instead of `SESSIONS`, making as many calls per batch between them
//! (`clients=1`: what an audited call adds to one client's round trip).
//! `calls=N`: each of the `SESSIONS` clients' share of a batch is N calls
//! (`CALLS` unless given); longer batches, less noise in each. `workers=N`:
//! the servers' and the client's runtime on N threads (2 unless given; with
//! 1, nothing crosses between cores). `split`: the client on a runtime of
//! its own (as many threads), so the servers' threads' CPU per call is read
//! apart from the client's: what serving costs, without what the client
//! pays to parse a larger answer. `only=S:R` runs
//! the S-th server's batches on revision R alone (0: 2025-11-25), for a
//! profiler, and prints no figures.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use capspec_rmcp_compare::{PeekMetaServer, PeekServer, capspec_host};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use jsonwebtoken::crypto::rust_crypto;
use tokio::net::{TcpListener, TcpStream};

/// Concurrent clients (sessions on 2025-11-25) per batch.
const SESSIONS: usize = 32;
/// Calls each client makes per batch, unless `calls=N` says.
const CALLS: usize = 20;
/// Rounds before timing starts.
const WARM_UP: usize = 2;
const TOKEN: &str = "bench-token";

#[derive(Clone, Copy, PartialEq)]
enum Revision {
    Sessions,
    Stateless,
}

impl Revision {
    fn name(self) -> &'static str {
        match self {
            Revision::Sessions => "2025-11-25",
            Revision::Stateless => "2026-07-28",
        }
    }
}

fn main() {
    let rounds = std::env::args().skip(1).find_map(|a| a.parse::<usize>().ok()).unwrap_or(12);
    let audit_only = std::env::args().skip(1).any(|a| a == "audit");
    let serving_only = std::env::args().skip(1).any(|a| a == "serving");
    let clients = std::env::args().skip(1).find_map(|a| a.strip_prefix("clients=").and_then(|n| n.parse::<usize>().ok())).unwrap_or(SESSIONS).clamp(1, SESSIONS);
    // `workers=N`: the runtime's worker threads (2, the machine's cores, unless given).
    let workers = std::env::args().skip(1).find_map(|a| a.strip_prefix("workers=").and_then(|n| n.parse::<usize>().ok())).unwrap_or(2).max(1);
    let per_batch = SESSIONS * std::env::args().skip(1).find_map(|a| a.strip_prefix("calls=").and_then(|n| n.parse::<usize>().ok())).unwrap_or(CALLS).max(1);
    // `only=S:R`: server S's row on revision R (0: 2025-11-25, 1: 2026-07-28)
    // alone, for a profiler; nothing is compared.
    let only = std::env::args().skip(1).find_map(|a| a.strip_prefix("only=").and_then(|o| o.split_once(':')).and_then(|(s, r)| Some((s.parse::<usize>().ok()?, r.parse::<usize>().ok()?))));
    let split = std::env::args().skip(1).any(|a| a == "split");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(workers).thread_name(SERVER_THREADS).enable_all().build().expect("runtime");
    // With `split`, the client's tasks run on threads of their own.
    let client_rt = split.then(|| tokio::runtime::Builder::new_multi_thread().worker_threads(workers).thread_name("client").enable_all().build().expect("runtime"));
    let client_rt = client_rt.as_ref().unwrap_or(&rt);
    let shared: Arc<[String]> = Arc::from([TOKEN.to_string()]);
    // The resource server first: it installs jsonwebtoken's provider (ring),
    // which signing the tokens would otherwise settle on RustCrypto.
    let resource_server = Arc::new(rt.block_on(oauth_server()));
    assert!(!std::ptr::eq(jsonwebtoken::crypto::CryptoProvider::try_get_default().expect("installed"), &rust_crypto::DEFAULT_PROVIDER), "the server verifies on ring");
    let tokens: Arc<[String]> = (0..SESSIONS).map(|i| oauth_token(&format!("user-{i}"))).collect();
    // The audit log's stores: SQLite in a temp directory, and a Postgres
    // server of its own on this machine where Debian's postgresql is installed.
    let sqlite = std::env::temp_dir().join(format!("capspec-bench-audit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&sqlite);
    // With `serving`, no store runs beside the rows measured.
    let postgres = if serving_only { None } else { capspec_testkit::postgres::Postgres::start() };
    let servers: Vec<(&str, SocketAddr, Arc<[String]>)> = rt.block_on(async {
        let mut servers = vec![
            ("rmcp StreamableHttpService", rmcp_http(PeekServer).await, shared.clone()),
            ("  the same + capspec's receipt in _meta", rmcp_http(PeekMetaServer).await, shared.clone()),
            ("capspec serve_http (tools surface)", capspec_http(capspec::mcp::Auth::Token(TOKEN.into())).await, shared.clone()),
            ("  the same, receipts left out of results", capspec_served(capspec_host().without_result_receipts(), capspec::mcp::Auth::Token(TOKEN.into())).await, shared.clone()),
        ];
        if serving_only {
            return servers;
        }
        servers.push(("  the same, OAuth (a JWT per client)", capspec_http(capspec::mcp::Auth::OAuth(resource_server)).await, tokens.clone()));
        servers.push(("  the same token, audit log to SQLite", capspec_audited(&format!("sqlite:{}/store.db", sqlite.display())).await, shared.clone()));
        if let Some(pg) = &postgres {
            servers.push(("  the same token, audit log to Postgres", capspec_audited(&pg.url("bench")).await, shared.clone()));
        }
        servers
    });
    let revisions = [Revision::Sessions, Revision::Stateless];
    // [server][revision]: per-batch calls/s, and every call's latency (µs).
    let mut rates = vec![vec![Vec::new(); 2]; servers.len()];
    let mut latencies = vec![vec![Vec::new(); 2]; servers.len()];
    // CPU time per call, every thread of this process (servers and client).
    let mut cpu = vec![vec![Vec::new(); 2]; servers.len()];
    // With `split`: the servers' threads' alone.
    let mut server_cpu = vec![vec![Vec::new(); 2]; servers.len()];
    let measured = |s: usize| match (audit_only, serving_only) {
        (true, _) => matches!(s, 0 | 2 | 5 | 6),
        (_, true) => s <= 3,
        _ => true,
    };
    let runs: Vec<(usize, usize)> = (0..servers.len()).filter(|&s| measured(s)).flat_map(|s| (0..2).map(move |r| (s, r))).filter(|&run| only.is_none_or(|o| o == run)).collect();
    if let Some((s, r)) = only {
        assert!(!runs.is_empty(), "only={s}:{r}: no such row");
        let mut times = Vec::new();
        for round in 0..WARM_UP + rounds {
            let (_, t, _) = client_rt.block_on(batch(servers[s].1, revisions[r], &servers[s].2, clients, per_batch));
            if round >= WARM_UP {
                times.extend(t);
            }
        }
        times.sort_by(f64::total_cmp);
        println!("{} on {}: {rounds} batches of {clients} clients, p50 {:.0} µs, for a profiler", servers[s].0.trim(), revisions[r].name(), times[times.len() / 2]);
        return;
    }
    for round in 0..WARM_UP + rounds {
        for k in 0..runs.len() {
            let (s, r) = runs[(round + k) % runs.len()];
            let (rate, times, cpu_us) = client_rt.block_on(batch(servers[s].1, revisions[r], &servers[s].2, clients, per_batch));
            if round >= WARM_UP {
                rates[s][r].push(rate);
                cpu[s][r].push(cpu_us.all);
                server_cpu[s][r].push(cpu_us.servers);
                latencies[s][r].extend(times);
            }
        }
    }
    let at = |v: &[f64], q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    // Each row's batch over plain rmcp's in the same round, which ran
    // seconds apart: the ratio a slow stretch of the machine moves least.
    // Calls/s and CPU per call, [server][revision], each sorted; `rates`
    // and `cpu` are still in round order here.
    let per_round: Vec<Vec<Vec<f64>>> = (0..servers.len()).map(|s| paired(&rates, s, 0)).collect();
    let over_receipt = paired(&rates, 2, 1);
    let cpu_round: Vec<Vec<Vec<f64>>> = (0..servers.len()).map(|s| paired(&cpu, s, 0)).collect();
    let cpu_over_receipt = paired(&cpu, 2, 1);
    let server_round: Vec<Vec<Vec<f64>>> = (0..servers.len()).map(|s| paired(&server_cpu, s, 0)).collect();
    let server_over_receipt = paired(&server_cpu, 2, 1);
    for row in cpu.iter_mut().chain(server_cpu.iter_mut()).flatten() {
        row.sort_by(f64::total_cmp);
    }
    println!("Streamable HTTP, {clients} clients × {} tools/call per batch, {rounds} interleaved rounds", per_batch / clients);
    println!("rate ×: median calls/s over rmcp's; per round: the median of each round's ratio to rmcp's batch of that round (p25–p75);");
    println!("CPU µs: CPU time per call, every thread of this process (servers and client; not a Postgres server), median; CPU ×: per round, over rmcp's");
    println!("{:<42} {:<11} {:>9} {:>9} {:>9} {:>8} {:>8}  {:<23} {:>7}  CPU ×", "server", "revision", "calls/s", "p50 µs", "p99 µs", "rate ×", "p99 ×", "per round ×", "CPU µs");
    for (r, revision) in revisions.iter().enumerate() {
        for row in rates.iter_mut().chain(latencies.iter_mut()) {
            row[r].sort_by(f64::total_cmp);
        }
        let (base_rate, base_p99) = (at(&rates[0][r], 0.5), at(&latencies[0][r], 0.99));
        for (s, (label, ..)) in servers.iter().enumerate().filter(|&(s, _)| measured(s)) {
            let (rate, p50, p99) = (at(&rates[s][r], 0.5), at(&latencies[s][r], 0.5), at(&latencies[s][r], 0.99));
            let (per_round, cpu_per_round) = (quartiles(&per_round[s][r]), quartiles(&cpu_round[s][r]));
            println!("{label:<42} {:<11} {rate:>9.0} {p50:>9.0} {p99:>9.0} {:>7.3}× {:>7.3}×  {per_round:<23} {:>7.1}  {cpu_per_round}", revision.name(), rate / base_rate, p99 / base_p99, at(&cpu[s][r], 0.5));
        }
        if measured(1) {
            let (rate, cpu) = (quartiles(&over_receipt[r]), quartiles(&cpu_over_receipt[r]));
            println!("  capspec against rmcp returning the same receipt, {}: per round {rate} the calls/s, {cpu} the CPU per call", revision.name());
        }
        if split {
            for (s, (label, ..)) in servers.iter().enumerate().filter(|&(s, _)| measured(s)) {
                println!("  the servers' threads alone, {label}, {}: {:.1} µs per call, per round {} rmcp's", revision.name().trim(), at(&server_cpu[s][r], 0.5), quartiles(&server_round[s][r]));
            }
            if measured(1) {
                println!("  the servers' threads alone, capspec against rmcp returning the same receipt, {}: per round {}", revision.name(), quartiles(&server_over_receipt[r]));
            }
        }
        let shared = at(&rates[2][r], 0.5);
        if measured(4) {
            println!("  OAuth against the shared token, {}: {:.3}× the calls/s", revision.name(), at(&rates[4][r], 0.5) / shared);
        }
        let shared_p99 = at(&latencies[2][r], 0.99);
        for (s, store) in [(5, "SQLite"), (6, "Postgres")] {
            if s < servers.len() && measured(s) {
                let (rate, p99) = (at(&rates[s][r], 0.5), at(&latencies[s][r], 0.99));
                let added = at(&latencies[s][r], 0.5) - at(&latencies[2][r], 0.5);
                println!("  audit to {store} against none, {}: {:.3}× the calls/s, {:.3}× the p99, {added:+.0} µs on the median", revision.name(), rate / shared, p99 / shared_p99);
            }
        }
    }
    // The SQLite store is the bench's alone: it goes with the run.
    let _ = std::fs::remove_dir_all(&sqlite);
    if audit_only || serving_only {
        return;
    }
    // Token validation alone, against one client's round trip unloaded.
    let round_trip = rt.block_on(solo(servers[2].1, &servers[2].2));
    let server = rt.block_on(oauth_server());
    let first_requests = |tokens: &[String]| -> Vec<f64> {
        let headers: Vec<String> = tokens.iter().map(|token| format!("Bearer {token}")).collect();
        let mut times = Vec::with_capacity(headers.len());
        for header in &headers {
            let began = Instant::now();
            rt.block_on(server.admit(Some(header.as_bytes()))).expect("admitted");
            times.push(began.elapsed().as_secs_f64() * 1e6);
        }
        times
    };
    let fresh: Vec<String> = (0..VERIFIED).map(|i| oauth_token(&format!("fresh-{i}"))).collect();
    let mut first = first_requests(&fresh);
    let mut first_es256 = first_requests(&(0..VERIFIED).map(|i| signed(&format!("es-{i}"), jsonwebtoken::Algorithm::ES256)).collect::<Vec<_>>());
    let known = format!("Bearer {}", fresh[0]);
    let mut again = Vec::with_capacity(LOOKUPS);
    for _ in 0..LOOKUPS {
        let began = Instant::now();
        rt.block_on(server.admit(Some(known.as_bytes()))).expect("admitted");
        again.push(began.elapsed().as_secs_f64() * 1e6);
    }
    // The RS256 signature alone: ring (the server's provider) and RustCrypto's `rsa`.
    let (message, signature) = fresh[0].rsplit_once('.').expect("a JWS");
    let key = jsonwebtoken::DecodingKey::from_rsa_pem(&std::fs::read(fixture("rsa.pub.pem")).expect("the fixture key")).expect("a PEM key");
    let alg = jsonwebtoken::Algorithm::RS256;
    let mut ring = Vec::with_capacity(VERIFIED);
    let mut rsa = Vec::with_capacity(VERIFIED);
    let mut parsed = Vec::with_capacity(VERIFIED);
    let raw = base64_url(signature);
    let jwk: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(fixture("jwks.json")).expect("the fixture JWKS")).expect("JSON");
    let rsa_jwk = jwk["keys"].as_array().expect("keys").iter().find(|k| k["kty"] == "RSA").expect("an RSA key");
    let components = aws_lc_rs::signature::RsaPublicKeyComponents { n: base64_url(rsa_jwk["n"].as_str().expect("n")), e: base64_url(rsa_jwk["e"].as_str().expect("e")) };
    let kept = components.to_parsed_public_key(&aws_lc_rs::signature::RSA_PKCS1_2048_8192_SHA256).expect("an RSA key");
    for _ in 0..VERIFIED {
        let began = Instant::now();
        assert!(jsonwebtoken::crypto::verify(signature, message.as_bytes(), &key, alg).expect("verifies"));
        ring.push(began.elapsed().as_secs_f64() * 1e6);
        let began = Instant::now();
        assert!((rust_crypto::DEFAULT_PROVIDER.verifier_factory)(&alg, &key).expect("a verifier").verify(message.as_bytes(), &raw).is_ok());
        rsa.push(began.elapsed().as_secs_f64() * 1e6);
        let began = Instant::now();
        assert!(kept.verify_sig(message.as_bytes(), &raw).is_ok());
        parsed.push(began.elapsed().as_secs_f64() * 1e6);
    }
    for v in [&mut first, &mut first_es256, &mut again, &mut ring, &mut rsa, &mut parsed] {
        v.sort_by(f64::total_cmp);
    }
    let (first, first_es256, again, ring, rsa, parsed) = (at(&first, 0.5), at(&first_es256, 0.5), at(&again, 0.5), at(&ring, 0.5), at(&rsa, 0.5), at(&parsed, 0.5));
    println!("Token validation (RS256, keys cached), medians; one client's tools/call round trip unloaded: {round_trip:.1} µs");
    println!("  a token's first request (signature verified): {first:>8.2} µs  {:>6.1} % of the round trip", 100.0 * first / round_trip);
    println!("  the same, an ES256 token:                    {first_es256:>8.2} µs  {:>6.1} % of the round trip", 100.0 * first_es256 / round_trip);
    println!("  a token already verified (looked up):        {again:>8.2} µs  {:>6.1} % of the round trip", 100.0 * again / round_trip);
    println!("  the signature alone, ring (the server's):    {ring:>8.2} µs  {:>6.1} % of the round trip", 100.0 * ring / round_trip);
    println!("  the signature alone, RustCrypto's rsa:       {rsa:>8.2} µs  {:>6.1} % of the round trip  ({:.1}× ring)", 100.0 * rsa / round_trip, rsa / ring);
    println!("  the signature alone, aws-lc-rs, parsed key:  {parsed:>8.2} µs  {:>6.1} % of the round trip  ({:.2}× ring)", 100.0 * parsed / round_trip, parsed / ring);
}

/// A JWS part's bytes (base64url, no padding).
fn base64_url(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text).expect("base64url")
}

/// Distinct tokens verified once each, for the first-request figure.
const VERIFIED: usize = 200;
/// Lookups of one verified token.
const LOOKUPS: usize = 20_000;
/// The audience the OAuth server is for (its `--resource`).
const RESOURCE: &str = "http://127.0.0.1/mcp";
const ISSUER: &str = "http://127.0.0.1/issuer";

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/oauth").join(name)
}

/// An access token for `sub`, as an identity provider signs one: RS256,
/// every category scope, valid for an hour.
fn oauth_token(sub: &str) -> String {
    signed(sub, jsonwebtoken::Algorithm::RS256)
}

/// The same token signed with RS256 (`rsa-1`) or ES256 (`ec-1`).
fn signed(sub: &str, alg: jsonwebtoken::Algorithm) -> String {
    let (key, kid) = match alg {
        jsonwebtoken::Algorithm::ES256 => (jsonwebtoken::EncodingKey::from_ec_pem(&std::fs::read(fixture("ec.pem")).expect("the fixture key")).expect("a PEM key"), "ec-1"),
        _ => (jsonwebtoken::EncodingKey::from_rsa_pem(&std::fs::read(fixture("rsa.pem")).expect("the fixture key")).expect("a PEM key"), "rsa-1"),
    };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_secs();
    let claims = json!({"iss": ISSUER, "sub": sub, "aud": RESOURCE, "exp": now + 3600, "scope": "capspec:read capspec:write capspec:execute capspec:external"});
    let header = jsonwebtoken::Header { kid: Some(kid.into()), ..jsonwebtoken::Header::new(alg) };
    jsonwebtoken::encode(&header, &claims, &key).expect("signs")
}

/// The resource server: the fixture issuer's keys, from its JWKS file.
async fn oauth_server() -> capspec::mcp::oauth::ResourceServer {
    let options = capspec::mcp::oauth::OAuthOptions { issuer: ISSUER.into(), resource: RESOURCE.into(), groups_claim: "groups".into(), jwks_file: Some(fixture("jwks.json")) };
    capspec::mcp::oauth::ResourceServer::discover(options).await.expect("a resource server")
}

/// One client alone: the median round trip of `tools/call` on 2025-11-25, in µs.
async fn solo(addr: SocketAddr, bearers: &Arc<[String]>) -> f64 {
    let mut client = Client::connect(addr, Revision::Sessions, bearers[0].clone()).await;
    let mut times: Vec<f64> = Vec::with_capacity(LOOKUPS / 10);
    for i in 0..LOOKUPS / 10 {
        let began = Instant::now();
        client.call_peek(i).await;
        times.push(began.elapsed().as_secs_f64() * 1e6);
    }
    client.close().await;
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// One batch: `clients` clients set up (not timed), then all calling at
/// once, `per_batch` calls between them. Calls per second over the batch,
/// each call's latency in µs, and the process's CPU time per call in µs.
/// CPU time per call in a batch, µs: every thread of this process, and the
/// servers' runtime's threads alone.
struct CpuPerCall {
    all: f64,
    servers: f64,
}

async fn batch(addr: SocketAddr, revision: Revision, bearers: &Arc<[String]>, clients: usize, per_batch: usize) -> (f64, Vec<f64>, CpuPerCall) {
    let calls = per_batch / clients;
    let clients: Vec<usize> = (0..clients).collect();
    let mut connected = Vec::with_capacity(clients.len());
    for i in clients {
        connected.push(Client::connect(addr, revision, bearers[i % bearers.len()].clone()).await);
    }
    let (cpu, servers_cpu) = (cpu_ns(|_| true), cpu_ns(|name| name == SERVER_THREADS));
    let start = Instant::now();
    let tasks: Vec<_> = connected
        .into_iter()
        .map(|mut client| {
            tokio::spawn(async move {
                let mut times = Vec::with_capacity(calls);
                for i in 0..calls {
                    let began = Instant::now();
                    client.call_peek(i).await;
                    times.push(began.elapsed().as_secs_f64() * 1e6);
                }
                client.close().await;
                times
            })
        })
        .collect();
    let mut times = Vec::with_capacity(per_batch);
    for task in tasks {
        times.extend(task.await.expect("a client task"));
    }
    let elapsed = start.elapsed();
    let per_call = |ns: u64, before: u64| ns.saturating_sub(before) as f64 / 1e3 / times.len() as f64;
    let cpu = CpuPerCall { all: per_call(cpu_ns(|_| true), cpu), servers: per_call(cpu_ns(|name| name == SERVER_THREADS), servers_cpu) };
    (times.len() as f64 / elapsed.as_secs_f64(), times, cpu)
}

/// Sorted ratios as `median× (p25–p75)`.
fn quartiles(sorted: &[f64]) -> String {
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    format!("{:.3}× ({:.3}–{:.3})", at(0.5), at(0.25), at(0.75))
}

/// Row `s`'s figure over row `base`'s in the same round, on each revision,
/// sorted: `figures[row][revision]` holds one figure per round, in order.
fn paired(figures: &[Vec<Vec<f64>>], s: usize, base: usize) -> Vec<Vec<f64>> {
    (0..2)
        .map(|r| {
            let mut ratios: Vec<f64> = figures[s][r].iter().zip(&figures[base][r]).map(|(x, b)| x / b).collect();
            ratios.sort_by(f64::total_cmp);
            ratios
        })
        .collect()
}

/// The name of the servers' runtime's threads.
const SERVER_THREADS: &str = "server";

/// CPU time this process's threads whose name `named` takes have run, in
/// ns (Linux's `/proc/self/task/*/comm` and `schedstat`); 0 where there is
/// none to read.
fn cpu_ns(named: impl Fn(&str) -> bool) -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return 0 };
    tasks
        .flatten()
        .filter(|task| std::fs::read_to_string(task.path().join("comm")).is_ok_and(|name| named(name.trim_end())))
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// One client on one keep-alive HTTP/1.1 connection.
struct Client {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    revision: Revision,
    session: Option<String>,
    next_id: u64,
    /// `Authorization`'s value: `Bearer <token>`.
    authorization: String,
}

impl Client {
    async fn connect(addr: SocketAddr, revision: Revision, bearer: String) -> Client {
        let stream = TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.expect("handshake");
        tokio::spawn(connection);
        let mut client = Client { sender, revision, session: None, next_id: 1, authorization: format!("Bearer {bearer}") };
        if revision == Revision::Sessions {
            let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "capspec-load", "version": "1"}});
            let (headers, _) = client.post("initialize", None, json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})).await;
            client.session = Some(headers.get("mcp-session-id").expect("a session id").to_str().expect("ASCII").to_string());
            client.post("notifications/initialized", None, json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        }
        client
    }

    /// `tools/call` of `peek`; panics unless the result is a success.
    async fn call_peek(&mut self, i: usize) {
        let id = self.next_id;
        self.next_id += 1;
        let mut params = json!({"name": "peek", "arguments": {"note_id": format!("n{i}")}});
        if self.revision == Revision::Stateless {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "capspec-load", "version": "1"},
            });
        }
        let (_, body) = self.post("tools/call", Some("peek"), json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})).await;
        let reply = response_of(&body).unwrap_or_else(|| panic!("no JSON-RPC response in {}", String::from_utf8_lossy(&body)));
        assert_eq!(reply["id"], id, "{reply}");
        assert!(reply["result"]["isError"] != json!(true) && reply.get("error").is_none(), "peek failed: {reply}");
    }

    async fn close(mut self) {
        if let Some(session) = self.session.take() {
            let request = hyper::Request::delete("/mcp")
                .header("host", "127.0.0.1")
                .header("authorization", self.authorization.as_str())
                .header("mcp-session-id", session)
                .body(Full::new(Bytes::new()))
                .expect("a request");
            let _ = self.sender.send_request(request).await;
        }
    }

    async fn post(&mut self, method: &str, name: Option<&str>, body: Value) -> (hyper::HeaderMap, Bytes) {
        let mut request = hyper::Request::post("/mcp")
            .header("host", "127.0.0.1")
            .header("authorization", self.authorization.as_str())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", self.revision.name());
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        if self.revision == Revision::Stateless {
            request = request.header("mcp-method", method);
            if let Some(name) = name {
                request = request.header("mcp-name", name);
            }
        }
        let request = request.body(Full::new(Bytes::from(body.to_string()))).expect("a request");
        self.sender.ready().await.expect("connection ready");
        let response = self.sender.send_request(request).await.expect("a response");
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.expect("a body").to_bytes();
        assert!(status.is_success(), "{method}: {status} {}", String::from_utf8_lossy(&bytes));
        (headers, bytes)
    }
}

/// The JSON-RPC response in a body: the body itself (JSON), or the SSE
/// `data:` line carrying it.
fn response_of(body: &[u8]) -> Option<Value> {
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        return Some(value);
    }
    std::str::from_utf8(body)
        .ok()?
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message.get("id").is_some())
}

/// capspec's HTTP server on a loopback port, admitting as `auth` says.
async fn capspec_http(auth: capspec::mcp::Auth) -> SocketAddr {
    capspec_served(capspec_host(), auth).await
}

async fn capspec_served(host: capspec::mcp::McpHost, auth: capspec::mcp::Auth) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(capspec::mcp::serve_http(host, listener, capspec::mcp::HttpOptions::with_auth(auth)));
    addr
}

/// capspec's server behind the shared token, recording every call in the
/// audit log of the store at `url` (DESIGN §15).
async fn capspec_audited(url: &str) -> SocketAddr {
    let store = capspec_store::Store::open(url).await.expect("the store opens");
    let options = capspec_store::AuditOptions { instance: "bench".into(), named: true, key: [7; 32], keep_arguments: false };
    let log = capspec_store::AuditLog::start(store, options).await.expect("the audit log starts");
    capspec_served(capspec_host().with_audit(log), capspec::mcp::Auth::Token(TOKEN.into())).await
}

/// rmcp's `StreamableHttpService` for `server`, on hyper as capspec serves
/// it (HTTP/1.1, a task per connection), with the same transport settings
/// and nothing in front.
async fn rmcp_http<S: ServerHandler + Clone + Send + Sync + 'static>(server: S) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("an address");
    let config = StreamableHttpServerConfig::default().with_sse_keep_alive(None).disable_allowed_hosts();
    let service = StreamableHttpService::new(move || Ok(server.clone()), Arc::new(LocalSessionManager::default()), config);
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.expect("accept");
            let _ = stream.set_nodelay(true);
            let service = service.clone();
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                    let mut service = service.clone();
                    async move {
                        let (parts, body) = request.into_parts();
                        let bytes = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                        let response = tower_service::Service::call(&mut service, hyper::Request::from_parts(parts, Full::new(bytes))).await;
                        Ok::<_, Infallible>(response.unwrap_or_else(|never| match never {}))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), handler).await;
            });
        }
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    addr
}
