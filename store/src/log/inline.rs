//! The writer of a SQLite store's chain, on the caller's own thread. A
//! record's caller that finds nobody committing commits, there and then:
//! it chains the records waiting (its own first), writes them in one
//! transaction on the log's own connection, and answers each. Callers that
//! arrive meanwhile wait, and their records form the next group, which the
//! next caller or a task beside it commits. So a lone caller's record costs
//! one SQLite transaction and no hand-off to another thread: on a machine
//! whose idle threads wake slowly, a hand-off and its answer cost more than
//! the write (BENCHMARKS.md, "One audited call, one client").
//!
//! The connection is rusqlite's: sqlx runs each SQLite connection on a
//! thread of its own, so a statement through it is two hand-offs. It never
//! waits for a lock on the caller's thread: a commit that finds the store
//! locked by another writer (another process's chain) goes again on
//! Tokio's blocking pool, where it may wait.
//!
//! The WAL is never checkpointed by this connection: a checkpoint copies
//! the WAL into the database and syncs it, which would stall every call
//! waiting on that commit (tens of milliseconds). A task beside the log
//! checkpoints instead, after commits, without blocking it; only a WAL
//! that outgrows [`WAL_BOUND`] is checkpointed in a way that makes the
//! writer wait.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{ErrorCode, TransactionBehavior, params};
use sqlx::Row;
use tokio::sync::{mpsc, watch};

use super::chain::{Chain, GROUP, Pending, Record, Why, taken_over, unavailable};
use crate::Store;

/// The least time between two checkpoints of a SQLite store's WAL.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(100);

/// WAL pages a passive checkpoint may leave behind before the next one
/// restarts the WAL, waiting for the writer (32 MiB of 4 KiB pages): under
/// a load that never pauses, passive checkpoints alone would let it grow.
pub(crate) const WAL_BOUND: i64 = 8192;

/// How long a commit moved off the caller's thread waits for another
/// writer's lock.
const BUSY: Duration = Duration::from_secs(5);

/// A SQLite chain's log: the records waiting, and the committer when
/// nobody commits.
pub(super) struct Inline {
    state: Mutex<State>,
    runtime: tokio::runtime::Handle,
}

struct State {
    /// Records handed over and not yet taken into a commit.
    queue: Vec<Pending>,
    /// The committer, while nobody commits. Whoever takes it commits the
    /// queue; it is put back only when the queue is empty, so a record
    /// waiting always has someone to commit it.
    parked: Option<Box<Committer>>,
    /// Every handle of the log has gone: the last to commit ends it.
    closing: bool,
    /// The committer was lost: nothing more is recorded.
    stopped: bool,
}

const STOPPED: &str = "the audit log's writer has stopped";

/// What commits: the connection, the chain's head, and the claim on it.
pub(super) struct Committer {
    connection: rusqlite::Connection,
    chain: Chain,
    store: Store,
    lease: crate::lease::Lease,
    /// Told after each commit: the checkpointer's cue.
    committed: mpsc::Sender<()>,
    /// Ends the lease's renewals.
    keeping: watch::Sender<bool>,
    keeper: tokio::task::JoinHandle<()>,
    ended: watch::Sender<bool>,
}

impl Inline {
    /// The log of `chain` in the SQLite store `store`, written through
    /// `connection` (see [`open`]).
    pub(super) fn start(store: Store, connection: rusqlite::Connection, chain: Chain, lease: crate::lease::Lease, ended: watch::Sender<bool>) -> Arc<Inline> {
        let (committed, poked) = mpsc::channel(1);
        tokio::spawn(checkpoints(store.clone(), poked));
        let (keeping, done) = watch::channel(false);
        let keeper = tokio::spawn(lease.keeper(&store, done));
        let committer = Committer { connection, chain, store, lease, committed, keeping, keeper, ended };
        Arc::new(Inline {
            state: Mutex::new(State { queue: Vec::new(), parked: Some(Box::new(committer)), closing: false, stopped: false }),
            runtime: tokio::runtime::Handle::current(),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hand `pending` over, committing it here when nobody else commits.
    /// Nothing here awaits while it holds the committer, so a caller that
    /// stops waiting (a cancelled request) never takes it away.
    pub(super) fn send(self: &Arc<Self>, pending: Pending) {
        let committer = {
            let mut state = self.state();
            if state.stopped {
                let _ = pending.1.send(Err(STOPPED.into()));
                return;
            }
            state.queue.push(pending);
            state.parked.take()
        };
        // The queue was empty: the first group starts with this record.
        if let Some(committer) = committer.and_then(|c| self.commit_next(c)) {
            let mut state = self.state();
            if state.queue.is_empty() && !state.closing {
                state.parked = Some(committer);
            } else {
                drop(state);
                // This caller has its answer; whoever waits now is
                // committed for by a task.
                self.runtime.spawn(self.clone().drain(committer));
            }
        }
    }

    /// Commit groups until none waits; then park the committer, or end the
    /// log when every handle has gone.
    async fn drain(self: Arc<Self>, mut committer: Box<Committer>) {
        loop {
            let ends = {
                let mut state = self.state();
                match (state.queue.is_empty(), state.closing) {
                    (false, _) => false,
                    (true, closing) => {
                        if !closing {
                            state.parked = Some(committer);
                            return;
                        }
                        true
                    }
                }
            };
            if ends {
                return committer.end().await;
            }
            committer = match self.commit_next(committer) {
                Some(committer) => committer,
                None => return,
            };
            tokio::task::yield_now().await;
        }
    }

    /// Commit the next group waiting (at most [`GROUP`] records) and
    /// answer its callers. A group that finds the store locked by another
    /// writer is committed by a task on the blocking pool, which takes the
    /// committer with it (`None`) and goes on from there.
    fn commit_next(self: &Arc<Self>, mut committer: Box<Committer>) -> Option<Box<Committer>> {
        let group: Vec<Pending> = {
            let mut state = self.state();
            let n = state.queue.len().min(GROUP);
            state.queue.drain(..n).collect()
        };
        if group.is_empty() {
            return Some(committer);
        }
        let mut rows = Vec::with_capacity(group.len());
        committer.chain.extend(&mut rows, &group);
        match committer.commit(&rows, false) {
            Err(e) if matches!(e.sqlite_error_code(), Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)) => {
                let this = self.clone();
                self.runtime.spawn(async move {
                    let waited = tokio::task::spawn_blocking(move || {
                        let outcome = committer.commit(&rows, true);
                        committer.answer(group, &rows, outcome);
                        committer
                    })
                    .await;
                    match waited {
                        Ok(committer) => this.drain(committer).await,
                        Err(_) => this.stop(),
                    }
                });
                None
            }
            outcome => {
                committer.answer(group, &rows, outcome);
                Some(committer)
            }
        }
    }

    /// The committer is gone (its commit panicked): every record waiting,
    /// and every one handed over later, is refused.
    fn stop(&self) {
        let mut state = self.state();
        state.stopped = true;
        for (_, done) in state.queue.drain(..) {
            let _ = done.send(Err(STOPPED.into()));
        }
    }

    /// Every handle has gone: end the log once nobody commits.
    pub(super) fn close(&self) {
        let mut state = self.state();
        state.closing = true;
        if let Some(committer) = state.parked.take() {
            drop(state);
            self.runtime.spawn(committer.end());
        }
    }
}

impl Committer {
    /// Take the group's outcome: on success the chain's head moves to its
    /// last row and the checkpointer is told; each caller gets the outcome.
    fn answer(&mut self, group: Vec<Pending>, rows: &[Record], outcome: rusqlite::Result<()>) {
        let outcome = match outcome {
            Ok(()) => {
                let last = rows.last().expect("a group holds a record");
                (self.chain.seq, self.chain.hash) = (last.seq, last.hash.clone());
                let _ = self.committed.try_send(());
                Ok(())
            }
            Err(e) => {
                // The chain goes on from what the store holds: a record
                // written behind this log's back takes its sequence number.
                if let Ok(Some(head)) = self.head() {
                    (self.chain.seq, self.chain.hash) = head;
                }
                Err(self.unavailable(&e))
            }
        };
        for (_, done) in group {
            let _ = done.send(outcome.clone());
        }
    }

    /// The chain's newest record as the store holds it, else its
    /// checkpoint (`None`: neither).
    fn head(&self) -> rusqlite::Result<Option<(i64, String)>> {
        use rusqlite::OptionalExtension;
        let instance = &self.lease.instance;
        let newest = self.connection.query_row("SELECT seq, hash FROM audit_records WHERE instance = ?1 ORDER BY seq DESC LIMIT 1", [instance], |r| Ok((r.get(0)?, r.get(1)?))).optional()?;
        match newest {
            Some(head) => Ok(Some(head)),
            None => self.connection.query_row("SELECT seq, hash FROM audit_checkpoints WHERE instance = ?1", [instance], |r| Ok((r.get(0)?, r.get(1)?))).optional(),
        }
    }

    /// The rows in one transaction. Unless `wait`, a lock held by another
    /// writer fails it at once (`SQLITE_BUSY`), so the caller's thread never
    /// waits on another process.
    fn commit(&mut self, rows: &[Record], wait: bool) -> rusqlite::Result<()> {
        if self.lease.is_lost() {
            // Told apart in `unavailable`, which looks at the lease first.
            return Err(rusqlite::Error::InvalidQuery);
        }
        self.connection.busy_timeout(if wait { BUSY } else { Duration::ZERO })?;
        let instance = &self.lease.instance;
        let tx = self.connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        {
            let mut insert = tx.prepare_cached(INSERT)?;
            for r in rows {
                insert.execute(params![instance, r.seq, r.kind, r.time_ms, r.principal, r.capability, r.decision, r.status, r.args_hmac, r.body, r.prev, r.hash, r.sent_hmac])?;
            }
        }
        tx.commit()
    }

    /// Why a commit failed, in capspec's words; the driver's text goes to
    /// the server's log.
    fn unavailable(&self, e: &rusqlite::Error) -> String {
        let instance = &self.lease.instance;
        if self.lease.is_lost() {
            return taken_over(instance);
        }
        tracing::warn!("the audit store `{}` did not take a group of records of the chain `{instance}`: {e}", self.store.url());
        let why = match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Why::Busy,
            Some(ErrorCode::ConstraintViolation) => Why::Duplicate,
            Some(ErrorCode::CannotOpen | ErrorCode::SystemIoFailure | ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => Why::Unreachable,
            _ => Why::Refused,
        };
        unavailable("SQLite", why, instance)
    }

    /// End the log: stop renewing the lease, give the chain up, and say
    /// it has ended.
    async fn end(self: Box<Self>) {
        let Committer { connection, store, lease, keeping, keeper, ended, .. } = *self;
        drop(connection);
        let _ = keeping.send(true);
        let _ = keeper.await;
        lease.release(&store).await;
        let _ = ended.send(true);
    }
}

/// The log's own connection to the store's file: WAL (the store set it),
/// NORMAL syncs (a commit is in the OS's hands before it returns, so a
/// killed process loses nothing it committed), and no checkpoints of its
/// own.
pub(super) fn open(path: &std::path::Path) -> rusqlite::Result<rusqlite::Connection> {
    let connection = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    connection.pragma_update(None, "synchronous", "NORMAL")?;
    connection.pragma_update(None, "wal_autocheckpoint", 0)?;
    connection.set_prepared_statement_cache_capacity(4);
    Ok(connection)
}

/// Checkpoint a SQLite store's WAL beside the writer, at most every
/// [`CHECKPOINT_EVERY`] while it commits, until it stops. A passive
/// checkpoint copies what it can without waiting for the writer; when it
/// leaves more than [`WAL_BOUND`] pages behind (a load with no pause for it
/// to catch up), a restarting one waits for the writer's commit in progress
/// and starts the WAL over.
async fn checkpoints(store: Store, mut committed: mpsc::Receiver<()>) {
    while committed.recv().await.is_some() {
        tokio::time::sleep(CHECKPOINT_EVERY).await;
        while committed.try_recv().is_ok() {}
        let passive = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)").fetch_one(store.pool()).await;
        let behind = passive.and_then(|row| Ok(row.try_get::<i64, _>(1)? - row.try_get::<i64, _>(2)?));
        match behind {
            Ok(pages) if pages > WAL_BOUND => {
                if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(RESTART)").execute(store.pool()).await {
                    tracing::warn!("could not checkpoint the store `{}`: {e}", store.url());
                }
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("could not checkpoint the store `{}`: {e}", store.url()),
        }
    }
}

const INSERT: &str = "INSERT INTO audit_records (instance, seq, kind, time_ms, principal, capability, decision, status, args_hmac, body, prev_hash, hash, sent_hmac) \
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";
