//! Reading the audit log back: `audit query` (filtered by the indexed
//! columns), `audit verify` (every chain, link by link) and `audit purge`
//! (old records dropped, a checkpoint kept so the rest still verifies).

use serde_json::Value;
use sqlx::Row;
use sqlx::any::AnyRow;

use crate::log::{GENESIS, canonical, link};
use crate::{Store, StoreError, fail};

/// Which records `audit query` returns; every filter set must hold.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// Calls of this principal.
    pub principal: Option<String>,
    /// Calls of this capability (`module.name`).
    pub capability: Option<String>,
    /// Decision records with this decision (`allowed`, `denied_policy`, …).
    pub decision: Option<String>,
    /// At or after this time (ms since the epoch).
    pub since_ms: Option<i64>,
    /// Before this time (ms since the epoch).
    pub until_ms: Option<i64>,
    /// Calls whose arguments have one of these keyed hashes, as they ran
    /// (defaults applied, values coerced) or as the client sent them.
    /// Empty: any arguments.
    pub args_hmac: Vec<String>,
    /// At most this many records (the newest).
    pub limit: Option<i64>,
}

/// The first link of a chain that does not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The instance whose chain breaks.
    pub instance: String,
    /// The sequence number of the record that breaks it.
    pub seq: i64,
    /// What is wrong there.
    pub why: String,
}

impl Store {
    /// The records `query` selects, oldest first, each as its stored body.
    pub async fn query(&self, query: &Query) -> Result<Vec<Value>, StoreError> {
        let (sql, binds) = statement(query);
        let mut q = sqlx::query(&sql);
        for bind in binds {
            q = match bind {
                Bind::Text(t) => q.bind(t),
                Bind::Int(i) => q.bind(i),
            };
        }
        let rows = q.fetch_all(self.pool()).await.map_err(|e| fail(&format!("cannot query the audit log in `{}`", self.url()), e))?;
        let mut out: Vec<Value> = rows.iter().map(|r| r.try_get::<String, _>(0).ok().and_then(|b| serde_json::from_str(&b).ok()).unwrap_or(Value::Null)).collect();
        out.reverse();
        Ok(out)
    }

    /// Walk every instance's chain from its checkpoint: the first record
    /// whose sequence, link, hash or columns do not hold, if any.
    pub async fn verify(&self) -> Result<Option<Broken>, StoreError> {
        let what = || format!("cannot read the audit log in `{}`", self.url());
        let instances = sqlx::query("SELECT DISTINCT instance FROM audit_records ORDER BY instance").fetch_all(self.pool()).await.map_err(|e| fail(&what(), e))?;
        for row in instances {
            let instance: String = row.try_get(0).map_err(|e| fail(&what(), e))?;
            let checkpoint = sqlx::query("SELECT seq, hash FROM audit_checkpoints WHERE instance = $1").bind(&instance).fetch_optional(self.pool()).await.map_err(|e| fail(&what(), e))?;
            let (mut seq, mut hash) = match checkpoint {
                Some(c) => (c.try_get::<i64, _>(0).map_err(|e| fail(&what(), e))?, c.try_get::<String, _>(1).map_err(|e| fail(&what(), e))?),
                None => (0, GENESIS.to_string()),
            };
            let rows = sqlx::query("SELECT seq, kind, principal, capability, decision, status, args_hmac, body, prev_hash, hash, sent_hmac FROM audit_records WHERE instance = $1 ORDER BY seq")
                .bind(&instance)
                .fetch_all(self.pool())
                .await
                .map_err(|e| fail(&what(), e))?;
            for row in rows {
                let at: i64 = row.try_get(0).map_err(|e| fail(&what(), e))?;
                let broken = |why: String| Some(Broken { instance: instance.clone(), seq: at, why });
                if at != seq + 1 {
                    return Ok(broken(format!("record {at} follows record {seq}: the records between are missing")));
                }
                if let Some(why) = check(&row, &hash) {
                    return Ok(broken(why));
                }
                seq = at;
                hash = row.try_get(9).map_err(|e| fail(&what(), e))?;
            }
        }
        Ok(None)
    }

    /// Drop the records older than `before_ms`, keeping for each instance a
    /// checkpoint (the last dropped record's sequence and hash) from which
    /// `verify` walks the rest. The number of records dropped.
    pub async fn purge(&self, before_ms: i64) -> Result<u64, StoreError> {
        let what = || format!("cannot purge the audit log in `{}`", self.url());
        let mut tx = self.pool().begin().await.map_err(|e| fail(&what(), e))?;
        let lasts = sqlx::query("SELECT instance, MAX(seq) FROM audit_records WHERE time_ms < $1 GROUP BY instance").bind(before_ms).fetch_all(&mut *tx).await.map_err(|e| fail(&what(), e))?;
        let mut dropped = 0;
        for last in lasts {
            let instance: String = last.try_get(0).map_err(|e| fail(&what(), e))?;
            let seq: i64 = last.try_get(1).map_err(|e| fail(&what(), e))?;
            let hash: String = sqlx::query("SELECT hash FROM audit_records WHERE instance = $1 AND seq = $2").bind(&instance).bind(seq).fetch_one(&mut *tx).await.and_then(|r| r.try_get(0)).map_err(|e| fail(&what(), e))?;
            sqlx::query("DELETE FROM audit_checkpoints WHERE instance = $1").bind(&instance).execute(&mut *tx).await.map_err(|e| fail(&what(), e))?;
            sqlx::query("INSERT INTO audit_checkpoints (instance, seq, hash, time_ms) VALUES ($1, $2, $3, $4)").bind(&instance).bind(seq).bind(&hash).bind(before_ms).execute(&mut *tx).await.map_err(|e| fail(&what(), e))?;
            let done = sqlx::query("DELETE FROM audit_records WHERE instance = $1 AND seq <= $2").bind(&instance).bind(seq).execute(&mut *tx).await.map_err(|e| fail(&what(), e))?;
            dropped += done.rows_affected();
        }
        tx.commit().await.map_err(|e| fail(&what(), e))?;
        Ok(dropped)
    }
}

/// The `SELECT` that answers `query`, and its parameters in order.
fn statement(query: &Query) -> (String, Vec<Bind>) {
    let mut sql = String::from("SELECT body FROM audit_records WHERE 1 = 1");
    let mut binds: Vec<Bind> = Vec::new();
    let mut filter = |column: &str, op: &str, value: Bind| {
        binds.push(value);
        sql.push_str(&format!(" AND {column} {op} ${}", binds.len()));
    };
    if let Some(p) = &query.principal {
        filter("principal", "=", Bind::Text(p.clone()));
    }
    if let Some(c) = &query.capability {
        filter("capability", "=", Bind::Text(c.clone()));
    }
    if let Some(d) = &query.decision {
        filter("decision", "=", Bind::Text(d.clone()));
    }
    if let Some(t) = query.since_ms {
        filter("time_ms", ">=", Bind::Int(t));
    }
    if let Some(t) = query.until_ms {
        filter("time_ms", "<", Bind::Int(t));
    }
    if !query.args_hmac.is_empty() {
        let mut any = Vec::new();
        for h in &query.args_hmac {
            for column in ["args_hmac", "sent_hmac"] {
                binds.push(Bind::Text(h.clone()));
                any.push(format!("{column} = ${}", binds.len()));
            }
        }
        sql.push_str(&format!(" AND ({})", any.join(" OR ")));
    }
    sql.push_str(" ORDER BY time_ms DESC, instance DESC, seq DESC");
    if let Some(limit) = query.limit {
        sql.push_str(&format!(" LIMIT {}", limit.max(0)));
    }
    (sql, binds)
}

enum Bind {
    Text(String),
    Int(i64),
}

/// Why `row` does not hold as the link after `prev_hash`, if it does not:
/// its link, its hash over its body, and its columns against its body.
fn check(row: &AnyRow, prev_hash: &str) -> Option<String> {
    let text = |i: usize| row.try_get::<Option<String>, _>(i).ok().flatten();
    let body = text(7).unwrap_or_default();
    let (stored_prev, stored_hash) = (text(8).unwrap_or_default(), text(9).unwrap_or_default());
    if stored_prev != prev_hash {
        return Some("its link to the record before does not match that record's hash".into());
    }
    if link(&stored_prev, &body) != stored_hash {
        return Some("its content does not match its hash: it was changed after it was written".into());
    }
    let parsed: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    if canonical(&parsed) != body {
        return Some("its content is not what the log writes".into());
    }
    let field = |name: &str| parsed.get(name).and_then(Value::as_str).map(str::to_string);
    for (i, name) in [(1, "kind"), (2, "principal"), (3, "capability"), (4, "decision"), (5, "status"), (6, "args_hmac"), (10, "sent_hmac")] {
        if text(i) != field(name) {
            return Some(format!("its `{name}` column differs from its content: it was changed after it was written"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use sqlx::Row;

    use super::{Query, statement};
    use crate::Store;

    /// `audit query --arguments` reads the argument hashes' indexes (partial,
    /// on the rows that have a hash): the store does not scan the log.
    #[test]
    fn a_query_by_arguments_is_answered_from_the_indexes() {
        let dir = capspec_testkit::TempDir::new("query-plan");
        let url = format!("sqlite:{}/store.db", dir.path().display());
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
            let store = Store::open(&url).await.unwrap();
            let query = Query { args_hmac: vec!["ab".repeat(32), "cd".repeat(32)], ..Query::default() };
            let (sql, binds) = statement(&query);
            let sql = format!("EXPLAIN QUERY PLAN {sql}");
            let mut explain = sqlx::query(&sql);
            for bind in binds {
                explain = match bind {
                    super::Bind::Text(t) => explain.bind(t),
                    super::Bind::Int(i) => explain.bind(i),
                };
            }
            let plan: Vec<String> = explain.fetch_all(store.pool()).await.unwrap().iter().map(|r| r.try_get::<String, _>(3).unwrap()).collect();
            let plan = plan.join("\n");
            assert!(plan.contains("audit_by_arguments") && plan.contains("audit_by_sent_arguments"), "{plan}");
            assert!(!plan.contains("SCAN audit_records"), "{plan}");
        });
    }
}
