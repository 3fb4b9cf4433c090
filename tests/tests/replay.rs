//! A resumed action's replay (DESIGN §10), in process: calls made before are
//! answered from the journal and never run again; another call at a
//! journaled position ends the action with `replay_diverged` and nothing
//! runs after it; asks pending at once are asked one after the other; and
//! `Date` and `Math.random` come from the state. (The real clients drive
//! the same through `agent-host serve`: tests/py/code_mode_e2e.py and
//! tests/ts/mcp-v2.mjs.)

use std::sync::Arc;

use capspec::guest::{Guest, GuestError, GuestLimits};
use capspec::replay::{Answer, AskedCall, Journal, JournalEntry, Replay};
use capspec::{GateDecision, Gate, Mode, Run, Status};
use capspec_tests::canary::{self, Counters, TEN_READS_THEN_A_WRITE};
use serde_json::{Value, json};

fn guest() -> Guest {
    Guest::new(canary::registry().mount_all()).limits(GuestLimits::DEFAULT)
}

/// A run in `mode` through `replay`, counting the canary impls it runs.
fn run(mode: Mode, replay: &Arc<Replay>, counters: &Arc<Counters>) -> Run {
    Run::new(Gate::headless(mode, "replay test")).with(counters.clone()).with_replay(replay.clone())
}

fn digest(args: Value) -> String {
    capspec_dialects::pin::digest(&args)
}

fn poked(title: &str, saved: &str) -> JournalEntry {
    JournalEntry {
        capability: "canary.poke".into(),
        args: digest(json!({"title": title})),
        decision: GateDecision::Approved,
        result: Ok(json!({"saved": saved})),
        micros: 1500,
        upstream: None,
    }
}

const POKE_TWICE: &str = r#"import { poke } from "@capspec/host/canary";
export default async () => [await poke({ title: "t" }), await poke({ title: "u" })];"#;

#[test]
fn journaled_calls_are_answered_from_the_journal_and_never_run_again() {
    let journal = Journal { entries: [(0, poked("t", "as journaled"))].into(), ..Journal::default() };
    let replay = Arc::new(Replay::new(journal, None, 0.0, 1, true));
    let counters = Arc::new(Counters::default());
    let run = run(Mode::Auto, &replay, &counters);
    let outcome = guest().run(&run, POKE_TWICE);
    assert_eq!(outcome.error, None);
    // The first value is what the call returned when it ran; the second is new.
    assert_eq!(outcome.result, Some(json!([{"saved": "as journaled"}, {"saved": "u"}])));
    assert_eq!(counters.total(), 1, "only the new call ran");
    let receipts = run.receipts();
    assert_eq!(receipts.iter().map(|r| (r.decision, r.status)).collect::<Vec<_>>(), [(Some(GateDecision::Approved), Status::Ok), (Some(GateDecision::Auto), Status::Ok)]);
    assert_eq!(receipts[0].duration.as_micros(), 1500, "a replayed call's receipt is the one it had");
    // The new call is journaled at its position, for the next round.
    let after = replay.journal();
    assert_eq!(after.entries.keys().copied().collect::<Vec<_>>(), [0, 1]);
    assert_eq!(after.entries[&1].args, digest(json!({"title": "u"})));
}

#[test]
fn another_call_at_a_journaled_position_ends_the_action_and_nothing_runs_after_it() {
    let journal = Journal { entries: [(0, poked("t", "t")), (1, poked("u", "u"))].into(), ..Journal::default() };
    let replay = Arc::new(Replay::new(journal, None, 0.0, 1, true));
    let counters = Arc::new(Counters::default());
    let run = run(Mode::Auto, &replay, &counters);
    // Position 1 now pokes "v"; the action would go on to poke "w" and catch errors.
    let outcome = guest().run(
        &run,
        r#"import { poke } from "@capspec/host/canary";
export default async () => {
  await poke({ title: "t" });
  try { await poke({ title: "v" }); } catch (e) { await poke({ title: "after " + e.code }); }
  return "finished";
};"#,
    );
    let Some(GuestError::Diverged { message }) = &outcome.error else { panic!("{:?}", outcome.error) };
    assert!(message.contains("position 1"), "{message}");
    assert!(message.contains("`canary.poke` with other arguments"), "{message}");
    assert!(message.contains(&digest(json!({"title": "u"}))) && message.contains(&digest(json!({"title": "v"}))), "names both calls: {message}");
    assert_eq!(outcome.result, None);
    assert_eq!(counters.total(), 0, "no call ran: the journaled one is replayed, the diverged one and everything after never run");
    assert_eq!(run.receipts().last().map(|r| r.status), Some(Status::Refused));
    assert_eq!(serde_json::to_value(&outcome.error).unwrap()["kind"], "replay_diverged");
}

#[test]
fn asks_pending_at_once_are_asked_one_after_the_other_and_each_call_runs_once() {
    let action = r#"import { poke } from "@capspec/host/canary";
export default async () => (await Promise.all([poke({ title: "a" }), poke({ title: "b" })])).map((r) => r.saved);"#;
    let counters = Arc::new(Counters::default());
    let mut journal = Journal::default();
    let mut answer = None;
    let mut asked = Vec::new();
    for _round in 0..3 {
        let replay = Arc::new(Replay::new(journal.clone(), answer, 5.0, 7, true));
        let run = run(Mode::Default, &replay, &counters);
        let outcome = guest().run(&run, action);
        let Some((position, request)) = replay.suspended() else {
            assert_eq!(outcome.error, None);
            assert_eq!(outcome.result, Some(json!(["a", "b"])));
            assert_eq!(run.receipts().iter().map(|r| r.decision).collect::<Vec<_>>(), [Some(GateDecision::Approved); 2]);
            break;
        };
        assert_eq!(outcome.error, Some(GuestError::Suspended { capability: "canary.poke".into() }));
        asked.push((position, request.args["title"].clone()));
        journal = replay.journal();
        journal.asked = Some(AskedCall { position, capability: request.capability.clone(), args: digest(request.args.clone()) });
        answer = Some(Answer::Accept { for_action: false });
    }
    assert_eq!(asked, [(0, json!("a")), (1, json!("b"))], "the lower position asks first, the other in the next round");
    assert_eq!(counters.total(), 2, "each write ran exactly once");
}

#[test]
fn an_approval_for_the_rest_of_the_action_covers_later_calls_to_that_capability() {
    let counters = Arc::new(Counters::default());
    let first = Arc::new(Replay::new(Journal::default(), None, 0.0, 1, true));
    guest().run(&run(Mode::Default, &first, &counters), POKE_TWICE);
    let (position, request) = first.suspended().expect("the first poke asks");
    let mut journal = first.journal();
    journal.asked = Some(AskedCall { position, capability: request.capability, args: digest(request.args) });
    let second = Arc::new(Replay::new(journal, Some(Answer::Accept { for_action: true }), 0.0, 1, true));
    let outcome = guest().run(&run(Mode::Default, &second, &counters), POKE_TWICE);
    assert_eq!(outcome.error, None, "the second poke did not ask");
    assert_eq!(outcome.result, Some(json!([{"saved": "t"}, {"saved": "u"}])));
    assert!(second.journal().allowed.contains("canary.poke"));
}

#[test]
fn date_and_math_random_come_from_the_state() {
    let action = r#"export default () => [Date.now(), new Date().getTime(), typeof Date(), new Date(0).getTime(), Math.random(), Math.random()];"#;
    let values = |clock: f64, seed: u64| {
        let replay = Arc::new(Replay::new(Journal::default(), None, clock, seed, true));
        guest().run(&run(Mode::Auto, &replay, &Arc::new(Counters::default())), action).result.expect("a value")
    };
    let a = values(1_767_225_600_000.0, 42);
    assert_eq!(a, values(1_767_225_600_000.0, 42), "the same state, the same values");
    assert_eq!(a[0].as_f64(), Some(1_767_225_600_000.0));
    assert_eq!(a[1], a[0]);
    assert_eq!(a[2], "string");
    assert_eq!(a[3], json!(0), "an explicit date is untouched");
    let (r1, r2) = (a[4].as_f64().unwrap(), a[5].as_f64().unwrap());
    assert!((0.0..1.0).contains(&r1) && (0.0..1.0).contains(&r2) && r1 != r2, "{r1} {r2}");
    assert_ne!(values(1_767_225_600_000.0, 43)[4], a[4], "another seed, other values");
}

#[test]
fn a_round_trip_through_the_sealed_state_runs_each_call_once_and_the_state_stays_small() {
    use capspec::mcp::resume::{Request, round};
    use capspec::mcp::{APPROVAL_INPUT, ReplayBounds, StateKey};
    let key = StateKey::random();
    let counters = Arc::new(Counters::default());
    let fresh = || Run::new(Gate::headless(Mode::Default, "replay test")).with(counters.clone());
    let first = Request { code: TEN_READS_THEN_A_WRITE, state: None, responses: None, can_ask: true };
    let (outcome, _, asked) = round(&guest(), fresh(), &key, ReplayBounds::default(), first).expect("a first round");
    assert_eq!(outcome.error, Some(GuestError::Suspended { capability: "canary.poke".into() }));
    let state = asked.expect("the write asks").request_state.expect("with a state");
    // The goal: ≤ 4 KiB for ten calls with small results.
    assert!(state.len() <= 4096, "{} bytes", state.len());
    eprintln!("the 10-call action's requestState: {} bytes", state.len());
    assert_eq!(counters.total(), 10, "the ten reads ran; the write waits");
    let accept: capspec::mcp::resume::InputResponses = serde_json::from_value(json!({ APPROVAL_INPUT: {"action": "accept", "content": {}} })).unwrap();
    let retry = Request { code: TEN_READS_THEN_A_WRITE, state: Some(&state), responses: Some(&accept), can_ask: true };
    let (outcome, run, asked) = round(&guest(), fresh(), &key, ReplayBounds::default(), retry).expect("the retry's state opens");
    assert!(asked.is_none());
    assert_eq!(outcome.result, Some(json!([10, "note-0,note-1,note-2,note-3,note-4,note-5,note-6,note-7,note-8,note-9".len()])));
    assert_eq!(counters.total(), 11, "the reads were answered from the journal; the write ran once");
    assert_eq!(run.receipts().len(), 11, "the receipts cover every call of the action, each once");
    // A state that does not open, or opens for another principal, is refused by name.
    let other = Request { code: TEN_READS_THEN_A_WRITE, state: Some(&state), responses: Some(&accept), can_ask: true };
    let err = round(&guest(), fresh().with_principal(capspec::Principal::new("mallory")), &key, ReplayBounds::default(), other).err().unwrap();
    assert!(err.contains("issued to `local`, not to `mallory`"), "{err}");
    let forged = Request { code: TEN_READS_THEN_A_WRITE, state: Some("cs1.AAAA"), responses: Some(&accept), can_ask: true };
    assert!(round(&guest(), fresh(), &key, ReplayBounds::default(), forged).err().unwrap().contains("forged or altered"));
}
