//! The writer of a Postgres store's chain: a task that takes the records
//! callers hand it and commits them in groups, one statement per group, on
//! the connection it keeps. A caller waits for the commit of the group that
//! holds its record.

use tokio::sync::mpsc;

use super::chain::{Chain, GROUP, Pending, Record, Why, head, taken_over, unavailable};
use crate::Store;

pub(super) struct Writer {
    pub(super) store: Store,
    /// The connection commits go through, kept between groups.
    pub(super) connection: Option<sqlx::pool::PoolConnection<sqlx::Any>>,
    pub(super) instance: String,
    /// This process's claim on the chain.
    pub(super) lease: crate::lease::Lease,
}

impl Writer {
    /// Commit groups in order, pipelined: while one group commits, the
    /// records that arrive meanwhile are gathered and chained on from its
    /// last row, so the next commit starts as soon as this one ends. A
    /// commit that fails leaves the chain at what the store holds, and the
    /// rows chained on it are made again.
    pub(super) async fn run(mut self, mut chain: Chain, mut receiver: mpsc::Receiver<Pending>) -> Writer {
        let (mut group, mut rows) = (Vec::new(), Vec::new());
        loop {
            if group.is_empty() {
                match receiver.recv().await {
                    Some(first) => group.push(first),
                    None => return self,
                }
            }
            while group.len() < GROUP {
                match receiver.try_recv() {
                    Ok(next) => group.push(next),
                    Err(_) => break,
                }
            }
            chain.extend(&mut rows, &group);
            let (mut next, mut next_rows) = (Vec::new(), Vec::<Record>::new());
            let outcome = {
                let commit = self.commit(&rows);
                tokio::pin!(commit);
                loop {
                    tokio::select! {
                        biased;
                        outcome = &mut commit => break outcome,
                        Some(pending) = receiver.recv(), if next.len() < GROUP => {
                            let row = chain.row(&pending.0, next_rows.last().or(rows.last()));
                            next_rows.push(row);
                            next.push(pending);
                        }
                    }
                }
            };
            if outcome.is_ok() {
                let last = rows.last().expect("a group holds a record");
                (chain.seq, chain.hash) = (last.seq, last.hash.clone());
            } else {
                next_rows.clear();
                if let Ok(stored) = head(&self.store, &self.instance).await {
                    // A commit whose answer was lost may have landed: the
                    // chain goes on from what the store holds.
                    (chain.seq, chain.hash) = stored;
                }
            }
            for (_, done) in group {
                let _ = done.send(outcome.clone());
            }
            (group, rows) = (next, next_rows);
        }
    }

    /// The group in one statement (one round trip to the database, and
    /// atomic by itself), on the connection the writer keeps: its rows go
    /// as one JSON array bound once, which the database unpacks, so the
    /// statement is the same for every group (prepared once) and binding
    /// costs the same for one row or 256. A failed commit lets the
    /// connection go; the next takes a fresh one.
    async fn commit(&mut self, rows: &[Record]) -> Result<(), String> {
        if self.lease.is_lost() {
            return Err(taken_over(&self.instance));
        }
        let cells: Vec<_> = rows
            .iter()
            .map(|r| (r.seq, &r.kind, r.time_ms, &r.principal, &r.capability, &r.decision, &r.status, &r.args_hmac, &r.body, &r.prev, &r.hash, &r.sent_hmac))
            .collect();
        let cells = serde_json::to_string(&cells).expect("strings and numbers serialize");
        // A kept connection may have died while idle (a restarted Postgres):
        // then the group goes again once, on a fresh connection.
        let reused = self.connection.is_some();
        match self.execute(&cells).await {
            Err(_) if reused => self.execute(&cells).await,
            done => done,
        }
        .map_err(|e| {
            tracing::warn!("the audit store `{}` did not take a group of records of the chain `{}`: {e}", self.store.url(), self.instance);
            let why = match &e {
                sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::PoolClosed => Why::Unreachable,
                sqlx::Error::Database(db) if db.is_unique_violation() => Why::Duplicate,
                _ => Why::Refused,
            };
            unavailable("Postgres", why, &self.instance)
        })
    }

    async fn execute(&mut self, cells: &str) -> Result<(), sqlx::Error> {
        let connection = match &mut self.connection {
            Some(connection) => connection,
            none => none.insert(self.store.pool().acquire().await?),
        };
        let done = sqlx::query(INSERT).bind(&self.instance).bind(cells).execute(&mut **connection).await;
        if done.is_err() {
            self.connection = None;
        }
        done.map(|_| ())
    }
}

/// A group's rows from the JSON array bound as `$2`, each row an array of
/// its cells in the order of the column list.
const INSERT: &str = "INSERT INTO audit_records (instance, seq, kind, time_ms, principal, capability, decision, status, args_hmac, body, prev_hash, hash, sent_hmac) \
    SELECT $1, (r ->> 0)::bigint, r ->> 1, (r ->> 2)::bigint, r ->> 3, r ->> 4, r ->> 5, r ->> 6, r ->> 7, r ->> 8, r ->> 9, r ->> 10, r ->> 11 FROM json_array_elements($2::text::json) AS r";
