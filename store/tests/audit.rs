//! The audit log as a team relies on it, in SQLite and in a real Postgres
//! server: every call through an audited run leaves a decision record
//! (before it runs) and an outcome record; arguments are kept as keyed
//! hashes, found again by `--arguments`; `verify` finds the first record
//! edited in the database; a restart continues the chain; `purge` keeps it
//! verifiable; and a store that went away stops calls (`audit_unavailable`,
//! the impl not run) until it is back.

use std::sync::Arc;

use capspec::audit::Audit;
use capspec::{ErrorCode, Gate, Mode, Principal, Registry, Run};
use capspec_book::{Notes, generated};
use capspec_store::{AuditLog, AuditOptions, Query, Store, keyed_hash};
use capspec_testkit::TempDir;
use capspec_testkit::postgres::Postgres;
use serde_json::{Value, json};

const KEY: [u8; 32] = [7; 32];

fn options(instance: &str) -> AuditOptions {
    AuditOptions { instance: instance.into(), named: true, key: KEY, keep_arguments: false }
}

fn run(log: &Arc<AuditLog>, who: &str, mode: Mode, notes: &Notes) -> Run {
    Run::new(Gate::headless(mode, "audit test")).with_principal(Principal::with_groups(who, ["team"])).with(notes.clone()).with_audit(Audit::new(log.clone(), "tools"))
}

/// Raw SQL on the store's database, as someone with access to it would.
async fn sql(url: &str, statement: &str) {
    sqlx::any::install_default_drivers();
    let url = match url.strip_prefix("sqlite:") {
        Some(path) => format!("sqlite://{path}"),
        None => url.to_string(),
    };
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    sqlx::query(statement).execute(&pool).await.unwrap();
    pool.close().await;
}

async fn exercise(url: &str) {
    let store = Store::open(url).await.unwrap();
    let log = AuditLog::start(store.clone(), options("host-a")).await.unwrap();
    let session = Registry::new(generated::MODULES).unwrap().mount_all();
    let notes = Notes::default();
    // Reads run, writes ask (and nobody can answer, headless), plan blocks.
    let alice = run(&log, "alice", Mode::AcceptEdits, &notes);
    let created = session.invoke(&alice, "notes.create_note", json!({"title": "plan", "body": "ship it"})).await.unwrap();
    assert_eq!(created, json!({"id": 1}));
    assert_eq!(session.invoke(&alice, "notes.read_note", json!({"title": "plan"})).await.unwrap(), json!("ship it"));
    let bob = run(&log, "bob", Mode::Plan, &notes);
    assert_eq!(session.invoke(&bob, "notes.create_note", json!({"title": "x", "body": "y"})).await.unwrap_err().code, ErrorCode::BlockedInPlanMode);
    assert_eq!(session.invoke(&bob, "notes.read_note", json!({"titel": "plan"})).await.unwrap_err().code, ErrorCode::InvalidArguments);

    // Alice's calls: a decision and an outcome each, in order, arguments as keyed hashes only.
    let records = store.query(&Query { principal: Some("alice".into()), ..Query::default() }).await.unwrap();
    let kinds: Vec<(&str, &str)> = records.iter().map(|r| (r["kind"].as_str().unwrap(), r["capability"].as_str().unwrap())).collect();
    assert_eq!(kinds, [("decision", "notes.create_note"), ("outcome", "notes.create_note"), ("decision", "notes.read_note"), ("outcome", "notes.read_note")]);
    assert_eq!(records[0]["decision"], "allowed");
    assert_eq!(records[0]["groups"], json!(["team"]));
    assert_eq!(records[0]["mode"], "accept_edits");
    assert_eq!(records[1]["status"], "ok");
    assert!(records[1]["duration_ms"].as_f64().is_some());
    let text = serde_json::to_string(&records).unwrap();
    assert!(!text.contains("ship it"), "an argument or result value reached the log: {text}");
    assert_eq!(records[0]["args_hmac"], keyed_hash(&KEY, &json!({"title": "plan", "body": "ship it"})));
    // Bob's refusals: a decision record each, and no outcome (nothing ran).
    let bob_records = store.query(&Query { principal: Some("bob".into()), ..Query::default() }).await.unwrap();
    let decided: Vec<&str> = bob_records.iter().map(|r| r["decision"].as_str().unwrap()).collect();
    assert_eq!(decided, ["denied_gate", "invalid_arguments"]);
    // `--arguments`: the call made with exactly these arguments.
    let by_args = Query { args_hmac: vec![keyed_hash(&KEY, &json!({"body": "ship it", "title": "plan"}))], ..Query::default() };
    let found = store.query(&by_args).await.unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["capability"], "notes.create_note");
    assert_eq!(store.query(&Query { decision: Some("denied_gate".into()), ..Query::default() }).await.unwrap().len(), 1);
    assert!(store.verify().await.unwrap().is_none());

    // A restart under the same name continues the chain, once the log
    // (and every run holding it) has ended.
    drop((alice, bob));
    log.close().await;
    let log = AuditLog::start(store.clone(), options("host-a")).await.unwrap();
    session.invoke(&run(&log, "alice", Mode::AcceptEdits, &notes), "notes.list_notes", json!({})).await.unwrap();
    let all = store.query(&Query::default()).await.unwrap();
    let seqs: Vec<i64> = all.iter().map(|r| r["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, (1..=8).collect::<Vec<_>>());
    assert!(store.verify().await.unwrap().is_none());

    // An edit in the database breaks the chain at that record.
    sql(url, "UPDATE audit_records SET principal = 'mallory' WHERE seq = 3").await;
    let broken = store.verify().await.unwrap().expect("the edit is found");
    assert_eq!((broken.instance.as_str(), broken.seq), ("host-a", 3));
    sql(url, "UPDATE audit_records SET principal = 'alice' WHERE seq = 3").await;
    sql(url, "UPDATE audit_records SET body = replace(body, 'read_note', 'list_notes') WHERE seq = 4").await;
    let broken = store.verify().await.unwrap().expect("the edit is found");
    assert_eq!(broken.seq, 4, "{}", broken.why);
    sql(url, "UPDATE audit_records SET body = replace(body, 'list_notes', 'read_note') WHERE seq = 4").await;
    assert!(store.verify().await.unwrap().is_none());
    sql(url, "DELETE FROM audit_records WHERE seq = 5").await;
    assert_eq!(store.verify().await.unwrap().map(|b| b.seq), Some(6));
    let _ = all;
}

async fn purge_keeps_the_chain(url: &str) {
    let store = Store::open(url).await.unwrap();
    let log = AuditLog::start(store.clone(), options("host-p")).await.unwrap();
    let session = Registry::new(generated::MODULES).unwrap().mount_all();
    let notes = Notes::default();
    for _ in 0..3 {
        session.invoke(&run(&log, "carol", Mode::Default, &notes), "notes.list_notes", json!({})).await.unwrap();
    }
    let future = i64::MAX / 2;
    assert_eq!(store.purge(future).await.unwrap(), 6);
    assert!(store.query(&Query { principal: Some("carol".into()), ..Query::default() }).await.unwrap().is_empty());
    session.invoke(&run(&log, "carol", Mode::Default, &notes), "notes.list_notes", json!({})).await.unwrap();
    let left: Vec<Value> = store.query(&Query { principal: Some("carol".into()), ..Query::default() }).await.unwrap();
    assert_eq!(left.iter().map(|r| r["seq"].as_i64().unwrap()).collect::<Vec<_>>(), [7, 8]);
    assert!(store.verify().await.unwrap().is_none(), "the checkpoint keeps what is left verifiable");
}

/// A commit whose answer never came back may still have landed: the next
/// call is refused (its sequence number is taken), and the log goes on from
/// what the store holds rather than refusing every call after.
async fn a_commit_that_landed_unanswered_does_not_stop_the_log(url: &str) {
    let store = Store::open(url).await.unwrap();
    let log = AuditLog::start(store.clone(), options("host-l")).await.unwrap();
    let session = Registry::new(generated::MODULES).unwrap().mount_all();
    let notes = Notes::default();
    let dan = run(&log, "dan", Mode::Default, &notes);
    let call = || session.invoke(&dan, "notes.list_notes", json!({}));
    call().await.unwrap();
    // The writer's next sequence number, taken behind its back.
    sql(url, "INSERT INTO audit_records (instance, seq, kind, time_ms, principal, capability, decision, status, args_hmac, body, prev_hash, hash) SELECT instance, seq + 1, kind, time_ms, principal, capability, decision, status, args_hmac, body, hash, hash FROM audit_records WHERE instance = 'host-l' AND seq = 2").await;
    assert_eq!(call().await.unwrap_err().code, ErrorCode::AuditUnavailable);
    call().await.expect("the log goes on after the store's head");
    let seqs: Vec<i64> = store.query(&Query { principal: Some("dan".into()), ..Query::default() }).await.unwrap().iter().map(|r| r["seq"].as_i64().unwrap()).collect();
    // The third is the copy (its body still says 2); the chain goes on after it.
    assert_eq!(seqs, [1, 2, 2, 4, 5]);
}

/// `(seq, prev_hash, hash)` of `instance`'s rows, in order.
async fn links(url: &str, instance: &str) -> Vec<(i64, String, String)> {
    use sqlx::Row;
    sqlx::any::install_default_drivers();
    let url = match url.strip_prefix("sqlite:") {
        Some(path) => format!("sqlite://{path}"),
        None => url.to_string(),
    };
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    let rows = sqlx::query("SELECT seq, prev_hash, hash FROM audit_records WHERE instance = $1 ORDER BY seq").bind(instance).fetch_all(&pool).await.unwrap();
    pool.close().await;
    rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect()
}

/// Many callers at once, as a busy server has them: the writer commits a
/// group while it chains the next, and every record lands once, in one
/// unbroken chain. A group refused by the store (its sequence number taken
/// behind the writer's back) fails only its own callers: the records
/// already chained on it are chained again on what the store holds, so no
/// committed row links to a row that is not there.
async fn many_callers_at_once(url: &str) {
    const CALLERS: usize = 32;
    const EACH: usize = 40;
    let store = Store::open(url).await.unwrap();
    let log = AuditLog::start(store.clone(), options("host-c")).await.unwrap();
    let session = Arc::new(Registry::new(generated::MODULES).unwrap().mount_all());
    // Each caller's calls, one after another; the number refused.
    let load = |who: &'static str| {
        let mut callers = tokio::task::JoinSet::new();
        for _ in 0..CALLERS {
            let (log, session) = (log.clone(), session.clone());
            callers.spawn(async move {
                let caller = run(&log, who, Mode::Default, &Notes::default());
                let mut refused = 0;
                for _ in 0..EACH {
                    refused += usize::from(session.invoke(&caller, "notes.list_notes", json!({})).await.is_err());
                }
                refused
            });
        }
        callers.join_all()
    };
    assert_eq!(load("erin").await.iter().sum::<usize>(), 0);
    let chain = links(url, "host-c").await;
    assert_eq!(chain.iter().map(|l| l.0).collect::<Vec<_>>(), (1..=(2 * CALLERS * EACH) as i64).collect::<Vec<_>>(), "a decision and an outcome per call");
    assert!(store.verify().await.unwrap().is_none());

    // A sequence number ahead of the writer, taken behind its back.
    let taken = (3 * CALLERS * EACH) as i64;
    sql(url, &format!("INSERT INTO audit_records (instance, seq, kind, time_ms, principal, capability, body, prev_hash, hash) VALUES ('host-c', {taken}, 'decision', 0, 'intruder', 'x', '{{}}', 'p', 'h')")).await;
    let refused: usize = load("fay").await.iter().sum();
    let chain = links(url, "host-c").await;
    let decided = store.query(&Query { principal: Some("fay".into()), ..Query::default() }).await.unwrap().iter().filter(|r| r["kind"] == "decision").count();
    assert_eq!(decided + refused, CALLERS * EACH, "each call's decision record either landed or its call was refused");
    for pair in chain.windows(2) {
        if pair[1].0 != taken {
            assert_eq!(pair[1].1, pair[0].2, "row {} links to the row before it", pair[1].0);
        }
    }
    assert!(chain.iter().any(|l| l.0 > taken), "the log went on after the taken number");
}

/// A chain has one live writer. Two logs started under one default name
/// (two stdio servers in one project) write two chains, both recording;
/// an operator's name already held is refused, naming the holder; a log
/// that ended gives its chain to the next start, which continues it; a
/// holder whose process is gone, or whose lease went unrenewed, is not in
/// the way, and one on another machine still renewing is.
async fn one_live_writer_per_chain(url: &str) {
    let store = Store::open(url).await.unwrap();
    let default = |name: &str| AuditOptions { instance: name.into(), named: false, key: KEY, keep_arguments: false };
    let session = Registry::new(generated::MODULES).unwrap().mount_all();
    let notes = Notes::default();
    let first = AuditLog::start(store.clone(), default("box:stdio")).await.unwrap();
    let second = AuditLog::start(store.clone(), default("box:stdio")).await.unwrap();
    assert_eq!((first.instance(), second.instance()), ("box:stdio", "box:stdio#2"));
    for log in [&first, &second, &first, &second] {
        session.invoke(&run(log, "hal", Mode::Default, &notes), "notes.list_notes", json!({})).await.expect("both logs record and serve");
    }
    let err = AuditLog::start(store.clone(), options("box:stdio")).await.unwrap_err();
    assert!(err.0.contains("`box:stdio`") && err.0.contains(&format!("process {}", std::process::id())) && err.0.contains("--instance"), "{err}");
    first.close().await;
    let again = AuditLog::start(store.clone(), default("box:stdio")).await.unwrap();
    assert_eq!(again.instance(), "box:stdio", "a chain nobody writes is continued");
    session.invoke(&run(&again, "hal", Mode::Default, &notes), "notes.list_notes", json!({})).await.unwrap();
    assert_eq!(links(url, "box:stdio").await.iter().map(|l| l.0).collect::<Vec<_>>(), [1, 2, 3, 4, 5, 6]);
    assert_eq!(links(url, "box:stdio#2").await.len(), 4);
    assert!(store.verify().await.unwrap().is_none());

    // Leases other processes left: a process of this machine that is gone,
    // a machine that stopped renewing, and one still renewing.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_string();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    sql(url, &format!("INSERT INTO audit_writers (instance, holder, host, pid, seen_ms) VALUES ('gone', 'h1', '{host}', 2147483000, {now}), ('stale', 'h2', 'elsewhere', 7, {}), ('busy', 'h3', 'elsewhere', 7, {now})", now - 60_000)).await;
    for name in ["gone", "stale"] {
        let log = AuditLog::start(store.clone(), options(name)).await.unwrap_or_else(|e| panic!("{name}: {e}"));
        log.close().await;
    }
    let err = AuditLog::start(store.clone(), options("busy")).await.unwrap_err();
    assert!(err.0.contains("process 7 on `elsewhere`"), "{err}");
    again.close().await;
    second.close().await;
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

#[test]
fn the_sqlite_store_records_every_call_and_verifies_its_chain() {
    let dir = TempDir::new("audit-sqlite");
    let url = format!("sqlite:{}/.capspec/store.db", dir.path().display());
    runtime().block_on(exercise(&url));
    let dir = TempDir::new("audit-sqlite-purge");
    runtime().block_on(purge_keeps_the_chain(&format!("sqlite:{}/store.db", dir.path().display())));
    let dir = TempDir::new("audit-sqlite-landed");
    runtime().block_on(a_commit_that_landed_unanswered_does_not_stop_the_log(&format!("sqlite:{}/store.db", dir.path().display())));
    let dir = TempDir::new("audit-sqlite-many");
    runtime().block_on(many_callers_at_once(&format!("sqlite:{}/store.db", dir.path().display())));
    let dir = TempDir::new("audit-sqlite-writers");
    runtime().block_on(one_live_writer_per_chain(&format!("sqlite:{}/store.db", dir.path().display())));
}

/// The writer's connection leaves the WAL to a checkpointer beside it
/// (a checkpoint in its commit would stall every waiting call): the WAL
/// still reaches the database file while the log runs.
#[test]
fn the_sqlite_log_checkpoints_its_wal_while_it_runs() {
    let dir = TempDir::new("audit-sqlite-checkpoint");
    let path = dir.path().join("store.db");
    runtime().block_on(async {
        let store = Store::open(&format!("sqlite:{}", path.display())).await.unwrap();
        let log = AuditLog::start(store.clone(), options("host-w")).await.unwrap();
        let empty = std::fs::metadata(&path).unwrap().len();
        let session = Arc::new(Registry::new(generated::MODULES).unwrap().mount_all());
        let mut callers = tokio::task::JoinSet::new();
        for _ in 0..16 {
            let (log, session) = (log.clone(), session.clone());
            callers.spawn(async move {
                let caller = run(&log, "gus", Mode::Default, &Notes::default());
                for _ in 0..50 {
                    session.invoke(&caller, "notes.list_notes", json!({})).await.unwrap();
                }
            });
        }
        callers.join_all().await;
        let mut size = 0;
        for _ in 0..40 {
            size = std::fs::metadata(&path).unwrap().len();
            if size > empty + 256 * 1024 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert!(size > empty + 256 * 1024, "1,600 records committed, and the database file grew from {empty} to only {size} bytes: nothing checkpointed the WAL");
        assert!(store.verify().await.unwrap().is_none());
    });
}

#[test]
fn a_postgres_store_records_every_call_and_a_call_waits_for_the_store() {
    let Some(pg) = Postgres::start() else { return };
    runtime().block_on(exercise(&pg.url("audit")));
    runtime().block_on(purge_keeps_the_chain(&pg.url("purge")));
    runtime().block_on(many_callers_at_once(&pg.url("many")));
    runtime().block_on(one_live_writer_per_chain(&pg.url("writers")));
    // The store stopped: a call does not run, and says why; back, it does.
    let url = pg.url("away");
    runtime().block_on(async {
        let store = Store::open(&url).await.unwrap();
        let log = AuditLog::start(store.clone(), options("host-b")).await.unwrap();
        let session = Registry::new(generated::MODULES).unwrap().mount_all();
        let notes = Notes::default();
        pg.stop();
        let err = session.invoke(&run(&log, "dave", Mode::AcceptEdits, &notes), "notes.create_note", json!({"title": "t", "body": "b"})).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::AuditUnavailable, "{}", err.message);
        assert!(err.message.contains("did not run"), "{}", err.message);
        pg.restart();
        let mut back = None;
        for _ in 0..20 {
            match session.invoke(&run(&log, "dave", Mode::AcceptEdits, &notes), "notes.create_note", json!({"title": "t", "body": "b"})).await {
                Ok(v) => {
                    back = Some(v);
                    break;
                }
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(250)).await,
            }
        }
        assert_eq!(back, Some(json!({"id": 1})), "the refused call never ran: the first one to run made note 1");
        // A restart nobody called through: the writer's kept connection is
        // gone, and the next call still runs at the first try.
        pg.stop();
        pg.restart();
        let next = session.invoke(&run(&log, "dave", Mode::AcceptEdits, &notes), "notes.create_note", json!({"title": "t", "body": "b"})).await;
        assert_eq!(next.map_err(|e| e.message), Ok(json!({"id": 2})), "a call after a quiet restart");
        assert!(store.verify().await.unwrap().is_none());
    });
}

#[test]
fn a_store_newer_than_this_capspec_is_refused_by_name() {
    let dir = TempDir::new("audit-newer");
    let url = format!("sqlite:{}/store.db", dir.path().display());
    runtime().block_on(async {
        Store::open(&url).await.unwrap();
        sql(&url, "UPDATE capspec_meta SET value = '99' WHERE key = 'schema_version'").await;
        let err = Store::open(&url).await.unwrap_err();
        assert!(err.0.contains("schema version 99, newer than this capspec's 6"), "{err}");
    });
}

/// A SQLite record's caller commits it on its own thread, but never waits
/// there for another writer's lock (another process's chain in the same
/// file): while a transaction elsewhere holds the store, a call waits off
/// the runtime, other tasks keep running (on a runtime of one thread), and
/// the call lands once the lock is let go, its chain verifying.
#[test]
fn a_locked_sqlite_store_is_waited_for_off_the_callers_thread() {
    let dir = TempDir::new("audit-sqlite-locked");
    let path = dir.path().join("store.db");
    let url = format!("sqlite:{}", path.display());
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
        let store = Store::open(&url).await.unwrap();
        let log = AuditLog::start(store.clone(), options("host-k")).await.unwrap();
        let session = Registry::new(generated::MODULES).unwrap().mount_all();
        let notes = Notes::default();
        let eve = run(&log, "eve", Mode::Default, &notes);
        session.invoke(&eve, "notes.list_notes", json!({})).await.unwrap();
        // Another writer takes the store's write lock and holds it.
        let (locked_tx, locked) = std::sync::mpsc::channel();
        let (release_tx, release) = std::sync::mpsc::channel::<()>();
        let holder = std::thread::spawn({
            let url = format!("sqlite://{}", path.display());
            move || {
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                rt.block_on(async {
                    use sqlx::Connection;
                    let mut other = sqlx::SqliteConnection::connect(&url).await.unwrap();
                    sqlx::query("BEGIN IMMEDIATE").execute(&mut other).await.unwrap();
                    locked_tx.send(()).unwrap();
                    release.recv().unwrap();
                    sqlx::query("COMMIT").execute(&mut other).await.unwrap();
                });
            }
        });
        locked.recv().unwrap();
        let began = std::time::Instant::now();
        let call = session.invoke(&eve, "notes.list_notes", json!({}));
        tokio::pin!(call);
        // The runtime's one thread is not held by the waiting commit.
        let mut ticks = 0;
        let waited = loop {
            tokio::select! {
                done = &mut call => break done,
                () = tokio::time::sleep(std::time::Duration::from_millis(20)) => {
                    ticks += 1;
                    if ticks == 10 {
                        release_tx.send(()).unwrap();
                    }
                }
            }
        };
        waited.expect("the call lands once the lock is let go");
        assert!(ticks >= 10, "the call ended after {ticks} ticks, before the lock was let go");
        assert!(began.elapsed() < std::time::Duration::from_secs(4));
        holder.join().unwrap();
        let records = store.query(&Query { principal: Some("eve".into()), ..Query::default() }).await.unwrap();
        assert_eq!(records.len(), 4, "two calls, a decision and an outcome each");
        assert!(store.verify().await.unwrap().is_none());
    });
}
