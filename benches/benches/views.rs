//! What a caller sees (DESIGN §10) at scale, side by side in one run: a
//! `tools/list` of a tools surface of 10,000 capabilities (100 modules of
//! 100), the list built for the caller and written as its JSON-RPC result:
//!
//! - `no_policies`: the host enforces no policy, so everyone is shown the
//!   one list built at start;
//! - `new_principal`: 1,000 policies enforced, and each iteration a
//!   principal in groups never seen before, so its view is worked out
//!   (Cedar's partial evaluation of the policies that apply to each
//!   capability) before the list is written;
//! - `seen_principal`: the same policies, a principal whose view is kept.
//!
//! Each with policies twice: a principal outside `owners` (shown 9,000,
//! so its list is shorter to write) and one in it (`_shown_all`: the same
//! 10,000 as `no_policies`, the like-for-like row).
//!
//! The policies: 900 over ten capabilities each whose conditions read the
//! input (they hide nothing), and 100 that forbid modules `m0`…`m9` outside
//! the group `owners` whatever the input (they hide 1,000 capabilities from
//! everyone else). Goals (issue #59): `new_principal` ≤ 2×, `seen_principal`
//! ≤ 1.05× `no_policies`.
//!
//! Each row above is measured on a host of its own, one after another, so
//! a ratio of two rows also carries whatever the machine did between them.
//! After them (with `--bench`), `paired` measures the like-for-like rows
//! interleaved: in each round every row in turn, in a rotating order, on
//! hosts that all exist at once, and each round's ratios to `no_policies`
//! (see BENCHMARKS.md).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use capspec::mcp::McpHost;
use capspec::policy::{Policies, PolicyGate, PolicyMode, Source};
use capspec::{Annotations, BoxFuture, CallError, Category, Forward, Forwarded, Mode, Module, Principal, Registry, Run, Spec};
use serde_json::Value;

/// The allocator of `cargo capspec serve`, which serves named surfaces and
/// policies: with glibc's, a list written after a view's work costs more
/// by the heap that work left behind, not by anything capspec does then.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const MODULES: usize = 100;
const PER_MODULE: usize = 100;

fn main() {
    divan::main();
    if std::env::args().any(|a| a == "--bench") {
        paired();
    }
}

/// Rounds of `paired`, and `tools/list`s per row in each.
const ROUNDS: usize = 60;
const PER_ROUND: usize = 5;

/// The rows measured interleaved (see the module's comment): per round, a
/// row's time is the mean of its `PER_ROUND` lists; printed are the
/// medians and quartiles over the rounds of each row's time and of its
/// ratio to `no_policies` in the same round.
fn paired() {
    let policed = host(Some(policies()));
    let plain = host(None);
    let someone = Principal::with_groups("someone", ["staff"]);
    let owner = Principal::with_groups("owner", ["owners"]);
    let staff = Principal::with_groups("staff", ["staff"]);
    list(&policed, &owner);
    list(&policed, &staff);
    let mut next = 0usize;
    let mut fresh = |owners: bool| -> Vec<Principal> {
        (0..PER_ROUND)
            .map(|_| {
                next += 1;
                Principal::with_groups(format!("user-{next}"), [Some(format!("team-{next}")), owners.then(|| "owners".to_string())].into_iter().flatten())
            })
            .collect()
    };
    const ROWS: [&str; 5] = ["no_policies", "seen_principal_shown_all", "seen_principal", "new_principal_shown_all", "new_principal"];
    let mut times: [Vec<f64>; 5] = Default::default();
    for round in 0..ROUNDS + 2 {
        for k in 0..ROWS.len() {
            let row = (round + k) % ROWS.len();
            let principals = match row {
                0 => vec![someone.clone(); PER_ROUND],
                1 => vec![owner.clone(); PER_ROUND],
                2 => vec![staff.clone(); PER_ROUND],
                3 => fresh(true),
                _ => fresh(false),
            };
            let on = if row == 0 { &plain } else { &policed };
            let start = Instant::now();
            for principal in &principals {
                divan::black_box(list(on, divan::black_box(principal)));
            }
            let took = start.elapsed().as_secs_f64() / PER_ROUND as f64;
            // The first two rounds warm up.
            if round >= 2 {
                times[row].push(took);
            }
        }
    }
    println!("\npaired: {ROUNDS} rounds, each row {PER_ROUND} lists a round, interleaved in a rotating order");
    println!("{:<26} {:>10} {:>10} {:>10}   {:>7} {:>7} {:>7}", "row", "p25", "median", "p75", "× p25", "× med", "× p75");
    for (row, name) in ROWS.iter().enumerate() {
        let ratios: Vec<f64> = times[row].iter().zip(&times[0]).map(|(t, base)| t / base).collect();
        let (t, r) = (quartiles(&times[row]), quartiles(&ratios));
        println!("{name:<26} {:>8.2}ms {:>8.2}ms {:>8.2}ms   {:>7.3} {:>7.3} {:>7.3}", t[0] * 1e3, t[1] * 1e3, t[2] * 1e3, r[0], r[1], r[2]);
    }
}

/// The first quartile, the median and the third quartile of `values`.
fn quartiles(values: &[f64]) -> [f64; 3] {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    [at(0.25), at(0.5), at(0.75)]
}

fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// Does nothing: the bench lists, it does not call.
struct Nothing;

impl Forward for Nothing {
    fn call<'a>(&'a self, _run: &'a Run, args: Value) -> BoxFuture<'a, Result<Value, CallError>> {
        Box::pin(std::future::ready(Ok(args)))
    }
    fn server(&self) -> &str {
        "bench"
    }
}

/// 100 modules of 100 capabilities, each with a small input schema and a catalog line.
fn modules() -> (Vec<Module>, Vec<Forwarded>) {
    let mut modules = Vec::new();
    let mut forwards = Vec::new();
    let nothing: Arc<dyn Forward> = Arc::new(Nothing);
    for m in 0..MODULES {
        let module = leak(format!("m{m}"));
        let mut specs = Vec::new();
        let mut catalog = format!("## {module}\n\nBench module {m}.\n\n`import {module} from \"@capspec/host/{module}\";`\n\n");
        for c in 0..PER_MODULE {
            let name = leak(format!("c{c}"));
            let category = if c % 4 == 0 { Category::Write } else { Category::Read };
            let signature = leak(format!("{name}({{path: string /* The file. */, limit?: int(1..100) = 10}}) → {{lines: string[]}}"));
            catalog.push_str(&format!("- {category} `{signature}`: Does thing {c} of module {m}.\n"));
            specs.push(Spec {
                module,
                name,
                wire_name: leak(format!("{module}_{name}")),
                title: None,
                annotations: Annotations { read_only: category == Category::Read, destructive: false, idempotent: true, open_world: false },
                category,
                description: leak(format!("Does thing {c} of module {m}. It reads a file and returns some of its lines.")),
                summary: leak(format!("Does thing {c} of module {m}.")),
                signature,
                input_schema: r#"{"type":"object","properties":{"path":{"type":"string","description":"The file."},"limit":{"type":"integer","minimum":1,"maximum":100,"default":10}},"required":["path"],"additionalProperties":false}"#,
                output_schema: None,
                user_message: None,
                deferred: false,
                direct: false,
                aliases: &[],
                deprecated: None,
                fingerprint: "bench",
            });
            forwards.push(Forwarded { module, name, forward: nothing.clone() });
        }
        modules.push(Module { name: module, description: "A bench module.", specs: Box::leak(specs.into_boxed_slice()), facade: "", catalog: leak(catalog) });
    }
    (modules, forwards)
}

/// The 1,000 policies (see the module's comment).
fn policies() -> Policies {
    let mut text = String::new();
    for i in 0..900 {
        let actions: Vec<String> = (0..10).map(|j| format!("Capspec::Action::\"m{}.c{}\"", (i * 10 + j) / PER_MODULE % MODULES, (i * 10 + j) % PER_MODULE)).collect();
        let effect = if i % 3 == 0 { "forbid" } else { "permit" };
        text.push_str(&format!("@id(\"input-{i}\")\n{effect}(principal, action in [{}], resource) when {{ context.input has path && context.input.path like \"*.env\" }};\n", actions.join(", ")));
    }
    for i in 0..100 {
        let actions: Vec<String> = (0..10).map(|j| format!("Capspec::Action::\"m{}.c{}\"", i / 10, (i % 10) * 10 + j)).collect();
        text.push_str(&format!("@id(\"owners-{i}\")\nforbid(principal, action in [{}], resource) unless {{ principal in Capspec::Group::\"owners\" }};\n", actions.join(", ")));
    }
    Policies::parse(&[Source { file: "policies/bench.cedar".into(), text }]).expect("the benchmark's policies parse")
}

fn host(policies: Option<Policies>) -> McpHost {
    let (modules, forwards) = modules();
    let registry = Registry::with_forwards(&modules, std::iter::empty(), std::iter::empty(), forwards).expect("the bench registry builds");
    let host = McpHost::tools_surface(registry.mount_all(), Mode::Auto);
    // Both hosts are built twice (`prepare_run` builds the host again), so
    // their tools lie alike in memory: built once, the no-policies host's
    // lie among the temporaries of their building and are slower to read.
    match policies {
        None => host.prepare_run(Run::new),
        Some(policies) => {
            let gate = Arc::new(PolicyGate::new(policies, PolicyMode::Enforce));
            host.prepare_run(move |gate_| Run::new(gate_).with_policies(gate.clone()))
        }
    }
}

/// A `tools/list` as the server answers it: the caller's list, written
/// into its JSON-RPC response as rmcp writes one (the tools serialized
/// straight from their structs, no `serde_json::Value` between).
fn list(host: &McpHost, principal: &Principal) -> usize {
    let tools = host.tools_for(principal);
    let mut out = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":"#.to_vec();
    serde_json::to_writer(&mut out, &tools).expect("serializes");
    out.extend_from_slice(b"}}");
    out.len()
}

#[divan::bench(sample_count = 20)]
fn no_policies(bencher: divan::Bencher) {
    let host = host(None);
    let someone = Principal::with_groups("someone", ["staff"]);
    assert_eq!(host.tools_for(&someone).len(), MODULES * PER_MODULE);
    bencher.bench_local(|| list(&host, divan::black_box(&someone)));
}

/// Each iteration a principal in a group never seen before, plus `extra`
/// (`owners`: shown all 10,000; none: shown 9,000).
fn bench_new(bencher: divan::Bencher, extra: Option<&str>) {
    let host = host(Some(policies()));
    let staff = Principal::with_groups("first", ["staff"]);
    assert_eq!(host.tools_for(&staff).len(), MODULES * PER_MODULE - 1_000, "the owners' modules are hidden");
    let owner = Principal::with_groups("owner", ["owners"]);
    assert_eq!(host.tools_for(&owner).len(), MODULES * PER_MODULE);
    let seen = AtomicUsize::new(0);
    bencher
        .with_inputs(|| {
            let n = seen.fetch_add(1, Ordering::Relaxed);
            Principal::with_groups(format!("user-{n}"), [Some(format!("team-{n}")), extra.map(str::to_string)].into_iter().flatten())
        })
        .bench_local_refs(|principal| list(&host, principal));
}

#[divan::bench(sample_count = 20)]
fn new_principal(bencher: divan::Bencher) {
    bench_new(bencher, None);
}

#[divan::bench(sample_count = 20)]
fn new_principal_shown_all(bencher: divan::Bencher) {
    bench_new(bencher, Some("owners"));
}

fn bench_seen(bencher: divan::Bencher, groups: &[&str]) {
    let host = host(Some(policies()));
    let someone = Principal::with_groups("someone", groups.iter().copied());
    list(&host, &someone);
    bencher.bench_local(|| list(&host, divan::black_box(&someone)));
}

#[divan::bench(sample_count = 20)]
fn seen_principal(bencher: divan::Bencher) {
    bench_seen(bencher, &["staff"]);
}

#[divan::bench(sample_count = 20)]
fn seen_principal_shown_all(bencher: divan::Bencher) {
    bench_seen(bencher, &["owners"]);
}

