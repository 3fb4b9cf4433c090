//! A chain's records as stored: how a record becomes its row (its body as
//! RFC 8785 JSON, arguments and results as keyed hashes, linked to the row
//! before), the chain's head in the store, and what a caller reads when a
//! commit fails. Both committers ([`super::inline`], [`super::task`]) build
//! on it.

use capspec::audit::AuditRecord;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::Value;
use sha2::{Digest, Sha256};
use sqlx::Row;
use tokio::sync::oneshot;

use crate::{Store, StoreError, fail};

/// The hash before an instance's first record.
pub(crate) const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Most records one commit takes.
pub(super) const GROUP: usize = 256;

/// How the log records.
#[derive(Clone)]
pub struct AuditOptions {
    /// This instance's name: its records form one chain, continued after a
    /// restart under the same name. A chain has one live writer (see
    /// `named`).
    pub instance: String,
    /// The operator chose `instance` (`--instance`): when a live process
    /// already writes that chain, the log does not start, naming it. Else
    /// (a default name) the log takes the first of `instance`,
    /// `instance#2`, … that no live process writes.
    pub named: bool,
    /// The key of the keyed hashes (`StateKey::audit_key`).
    pub key: [u8; 32],
    /// Keep argument values too, not only their keyed hash
    /// (`--audit-arguments`).
    pub keep_arguments: bool,
}

pub(super) type Pending = (AuditRecord, oneshot::Sender<Result<(), String>>);

/// The last sequence number and hash of `instance`'s chain: its newest
/// record, else its checkpoint, else the genesis.
pub(crate) async fn head(store: &Store, instance: &str) -> Result<(i64, String), StoreError> {
    let what = || format!("cannot read the audit chain of `{instance}` in `{}`", store.url());
    let last = sqlx::query("SELECT seq, hash FROM audit_records WHERE instance = $1 ORDER BY seq DESC LIMIT 1").bind(instance).fetch_optional(store.pool()).await.map_err(|e| fail(&what(), e))?;
    if let Some(row) = last {
        return Ok((row.try_get(0).map_err(|e| fail(&what(), e))?, row.try_get(1).map_err(|e| fail(&what(), e))?));
    }
    let checkpoint = sqlx::query("SELECT seq, hash FROM audit_checkpoints WHERE instance = $1").bind(instance).fetch_optional(store.pool()).await.map_err(|e| fail(&what(), e))?;
    match checkpoint {
        Some(row) => Ok((row.try_get(0).map_err(|e| fail(&what(), e))?, row.try_get(1).map_err(|e| fail(&what(), e))?)),
        None => Ok((0, GENESIS.to_string())),
    }
}

/// RFC 8785 canonical JSON: the bytes hashes are taken over.
pub(crate) fn canonical(value: &Value) -> String {
    let mut out = String::new();
    capspec_dialects::pin::canonical(value, &mut out);
    out
}

/// The keyed hash (HMAC-SHA-256, hex) of a value's canonical JSON.
pub fn keyed_hash(key: &[u8; 32], value: &Value) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(canonical(value).as_bytes());
    hex(&mac.finalize().into_bytes())
}

/// SHA-256 (hex) of `prev_hash` followed by `body`: a record's link.
pub(crate) fn link(prev_hash: &str, body: &str) -> String {
    let mut sha = Sha256::new();
    sha.update(prev_hash.as_bytes());
    sha.update(body.as_bytes());
    hex(&sha.finalize())
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes.iter().flat_map(|b| [DIGITS[usize::from(b >> 4)] as char, DIGITS[usize::from(b & 15)] as char]).collect()
}

/// One stored record: its columns and its body.
pub(super) struct Record {
    pub(super) seq: i64,
    pub(super) time_ms: i64,
    pub(super) kind: String,
    pub(super) principal: String,
    pub(super) capability: String,
    pub(super) decision: Option<String>,
    pub(super) status: Option<String>,
    pub(super) args_hmac: Option<String>,
    pub(super) sent_hmac: Option<String>,
    pub(super) body: String,
    pub(super) prev: String,
    pub(super) hash: String,
}

/// The chain as the writer extends it: how a record becomes its row, and
/// the head the next row links to (the last row committed).
pub(super) struct Chain {
    pub(super) options: AuditOptions,
    pub(super) seq: i64,
    pub(super) hash: String,
}

impl Chain {
    /// Rows for the records of `group` that have none yet, each linked to
    /// the row before it in `rows`, the first to the committed head.
    pub(super) fn extend(&self, rows: &mut Vec<Record>, group: &[Pending]) {
        for (record, _) in &group[rows.len()..] {
            let row = self.row(record, rows.last());
            rows.push(row);
        }
    }

    /// `record`'s row after `before` (else after the committed head).
    pub(super) fn row(&self, record: &AuditRecord, before: Option<&Record>) -> Record {
        let (seq, prev) = match before {
            Some(row) => (row.seq + 1, row.hash.clone()),
            None => (self.seq + 1, self.hash.clone()),
        };
        let args_hmac = record.args.as_ref().map(|a| keyed_hash(&self.options.key, a));
        let sent_hmac = record.sent_args.as_ref().map(|a| keyed_hash(&self.options.key, a));
        let result_hmac = record.result.as_ref().filter(|r| !r.is_null()).map(|r| keyed_hash(&self.options.key, r));
        let body = super::body::body(
            record,
            &super::body::Extra {
                instance: &self.options.instance,
                seq,
                keep_arguments: self.options.keep_arguments,
                args_hmac: args_hmac.as_deref(),
                sent_hmac: sent_hmac.as_deref(),
                result_hmac: result_hmac.as_deref(),
            },
        );
        let hash = link(&prev, &body);
        Record {
            seq,
            time_ms: record.time_ms as i64,
            kind: record.kind.as_str().to_string(),
            principal: record.principal.clone(),
            capability: record.capability.clone(),
            decision: record.decision.map(|d| d.as_str().to_string()),
            status: record.status.clone(),
            args_hmac,
            sent_hmac,
            body,
            prev,
            hash,
        }
    }
}

/// Why a group of records was not committed.
pub(super) enum Why {
    Unreachable,
    Duplicate,
    Busy,
    Refused,
}

/// What a caller whose call did not run reads, in capspec's words; the
/// driver's own text goes to the server's log.
pub(super) fn unavailable(kind: &str, why: Why, instance: &str) -> String {
    let why = match why {
        Why::Unreachable => "the store could not be reached".to_string(),
        Why::Duplicate => format!("a record of the chain `{instance}` was already there (something else writes this chain)"),
        Why::Busy => "the store stayed busy".to_string(),
        Why::Refused => "the store refused the write".to_string(),
    };
    format!("the audit store ({kind}) did not take the call's record: {why}. Try again; if it persists, the server's operator finds the detail in its log")
}

/// What a caller reads once another process took this one's chain.
pub(super) fn taken_over(instance: &str) -> String {
    format!("another process took over this server's audit chain `{instance}`, so this one records nothing more; restart it")
}
