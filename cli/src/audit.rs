//! `audit query|verify|purge` (DESIGN §15): the audit log in the serve
//! store, read from the command line. The store is `capspec-store`'s; this
//! resolves which store (`--store`, else `[serve] store`, else SQLite under
//! the project's `.capspec/`) and prints.

#[cfg(feature = "store")]
use std::path::Path;

use crate::args::AuditCommand;

/// The store `serve` and `audit` use for the project at `root`: `flag`,
/// else `[serve] store` in capspec.toml, else `sqlite:<root>/.capspec/store.db`.
/// A relative `sqlite:` path is relative to the root.
#[cfg(feature = "store")]
pub(crate) fn store_url(root: &Path, flag: Option<&str>) -> String {
    let configured = || capspec_codegen::open(root).ok().and_then(|p| p.config).and_then(|c| c.store);
    let url = flag.map(str::to_string).or_else(configured).unwrap_or_else(|| "sqlite:.capspec/store.db".to_string());
    match url.strip_prefix("sqlite:") {
        Some(path) if !Path::new(path).is_absolute() && !path.starts_with("//") => format!("sqlite:{}", root.join(path).display()),
        _ => url,
    }
}

/// Milliseconds since the epoch of `text`: `YYYY-MM-DD` (midnight UTC) or
/// `YYYY-MM-DDTHH:MM[:SS]Z`.
#[cfg(feature = "store")]
pub(crate) fn parse_time(text: &str) -> Result<i64, String> {
    let bad = || format!("`{text}` is not a date (`2026-12-01`) or a UTC time (`2026-12-01T09:30:00Z`)");
    let (date, time) = match text.split_once('T') {
        Some((d, t)) => (d, Some(t.strip_suffix('Z').ok_or_else(bad)?)),
        None => (text, None),
    };
    let parts: Vec<i64> = date.split('-').map(|p| p.parse().map_err(|_| bad())).collect::<Result<_, _>>()?;
    let [y, m, d] = parts[..] else { return Err(bad()) };
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return Err(bad());
    }
    let clock: Vec<i64> = match time {
        Some(t) => t.split(':').map(|p| p.parse().map_err(|_| bad())).collect::<Result<_, _>>()?,
        None => vec![0, 0],
    };
    let (hh, mm, ss) = match clock[..] {
        [h, m] => (h, m, 0),
        [h, m, s] => (h, m, s),
        _ => return Err(bad()),
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Ok(((days * 24 + hh) * 60 + mm) * 60_000 + ss * 1000)
}

/// `ms` (since the epoch) as a UTC time, `2026-12-03T01:02:03Z`: the form
/// `--since` reads.
#[cfg(any(feature = "live", test))]
pub(crate) fn format_time(ms: i64) -> String {
    let (days, rest) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000) / 1000);
    // The civil date of a day count (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest / 60 % 60, rest % 60)
}

/// Run an `audit` command; the exit code.
#[cfg(not(feature = "store"))]
pub(crate) fn run(_command: AuditCommand) -> u8 {
    eprintln!("error: this build of capspec-cli has no serve store, which `audit` reads: `cargo install --locked --path cli` has it; in an xtask, depend on capspec-cli with `features = [\"store\"]`");
    2
}

/// Run an `audit` command; the exit code.
#[cfg(feature = "store")]
pub(crate) fn run(command: AuditCommand) -> u8 {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return 2;
        }
    };
    match runtime.block_on(live::run(command)) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err}");
            2
        }
    }
}

#[cfg(feature = "store")]
mod live {
    use capspec_store::{Query, Store};
    use serde_json::Value;

    use super::{parse_time, store_url};
    use crate::args::{AuditCommand, AuditFormat, StoreArg};

    async fn open(store: &StoreArg) -> Result<Store, String> {
        let root = store.root.resolve().unwrap_or_else(|_| std::path::PathBuf::from("."));
        Store::open_existing(&store_url(&root, store.store.as_deref())).await.map_err(|e| e.0)
    }

    /// A query that cannot be answered as asked: said, exit 1.
    fn unanswerable(why: impl std::fmt::Display) -> u8 {
        eprintln!("error: {why}");
        1
    }

    /// The project's capabilities and their input schemas, where `root`
    /// is a project whose specs load.
    fn project_inputs(root: &std::path::Path) -> Option<Vec<(String, Value)>> {
        let project = capspec_codegen::open(root).ok()?;
        project.config.as_ref()?;
        let set = &project.loaded.set;
        Some(set.capabilities().map(|(m, c)| (format!("{}.{}", m.name, c.name), capspec_codegen::render::input_schema_json(c))).collect())
    }

    /// The keyed hashes `--arguments` matches: the arguments as typed, and
    /// as the capability's spec makes them (values coerced, defaults
    /// applied) for `capability`, else for each capability they are valid
    /// arguments of.
    fn argument_hashes(key: &[u8; 32], typed: &Value, inputs: &[(String, Value)], capability: Option<&str>) -> Vec<String> {
        use capspec::__internals::{Validator, coerce};
        let mut hashes = vec![capspec_store::keyed_hash(key, typed)];
        for (_, schema) in inputs.iter().filter(|(name, _)| capability.is_none_or(|c| c == name)) {
            let Ok(validator) = Validator::compile(schema) else { continue };
            let Ok(map) = coerce(typed.clone(), &validator) else { continue };
            let mut ran = Value::Object(map);
            validator.apply_defaults(&mut ran);
            let hash = capspec_store::keyed_hash(key, &ran);
            if validator.validate(&ran).is_empty() && !hashes.contains(&hash) {
                hashes.push(hash);
            }
        }
        hashes
    }

    pub(super) async fn run(command: AuditCommand) -> Result<u8, String> {
        match command {
            AuditCommand::Query { store: at, principal, capability, decision, since, until, arguments, state_key_file, format, limit } => {
                let root = at.root.resolve().unwrap_or_else(|_| std::path::PathBuf::from("."));
                let inputs = project_inputs(&root).unwrap_or_default();
                let typed = match arguments {
                    Some(json) => match serde_json::from_str::<Value>(&json) {
                        Ok(value) => Some(value),
                        Err(e) => return Ok(unanswerable(format!("--arguments is not JSON: {e}"))),
                    },
                    None => None,
                };
                let key = match (&typed, state_key_file) {
                    (None, _) => None,
                    (Some(_), Some(file)) => Some(capspec::mcp::StateKey::read_file(&file)?.audit_key()),
                    (Some(_), None) => {
                        return Ok(unanswerable(
                            "--arguments matches by the keyed hash the server made of them, so it needs the server's --state-key-file; without it no record can be matched",
                        ));
                    }
                };
                if let Some(d) = decision.as_deref().filter(|d| !capspec::audit::Decided::ALL.iter().any(|known| known.recorded() && known.as_str() == *d)) {
                    let words = capspec::audit::Decided::ALL.iter().filter(|d| d.recorded()).map(|d| d.as_str()).collect::<Vec<_>>().join(", ");
                    return Ok(unanswerable(format!("no record has the decision `{d}`; the decisions are {words}")));
                }
                let store = open(&at).await?;
                if let Some(c) = capability.as_deref().filter(|c| !inputs.iter().any(|(name, _)| name == c)) {
                    let named = store.query(&Query { capability: Some(c.to_string()), limit: Some(1), ..Query::default() }).await.map_err(|e| e.0)?;
                    if named.is_empty() {
                        return Ok(unanswerable(format!("no capability `{c}` in this project's specs, and no record in `{}` names one: check the name (`module.name`)", store.url())));
                    }
                }
                let args_hmac = match (typed, key) {
                    (Some(typed), Some(key)) => argument_hashes(&key, &typed, &inputs, capability.as_deref()),
                    _ => Vec::new(),
                };
                let query = Query {
                    principal,
                    capability,
                    decision,
                    since_ms: since.as_deref().map(parse_time).transpose()?,
                    until_ms: until.as_deref().map(parse_time).transpose()?,
                    args_hmac,
                    limit,
                };
                let records = store.query(&query).await.map_err(|e| e.0)?;
                print!("{}", render(&records, format));
                Ok(0)
            }
            AuditCommand::Verify { store } => {
                let store = open(&store).await?;
                match store.verify().await.map_err(|e| e.0)? {
                    None => {
                        println!("audit verify: every chain in `{}` holds", store.url());
                        Ok(0)
                    }
                    Some(broken) => {
                        println!("audit verify: the chain of instance `{}` breaks at record {}: {}", broken.instance, broken.seq, broken.why);
                        Ok(1)
                    }
                }
            }
            AuditCommand::Purge { store, before } => {
                let before = parse_time(&before)?;
                let store = open(&store).await?;
                let dropped = store.purge(before).await.map_err(|e| e.0)?;
                println!("audit purge: dropped {dropped} records from `{}`; a checkpoint keeps the rest verifiable", store.url());
                Ok(0)
            }
        }
    }

    fn render(records: &[Value], format: AuditFormat) -> String {
        match format {
            AuditFormat::Json => format!("{}\n", serde_json::to_string_pretty(&Value::Array(records.to_vec())).unwrap_or_default()),
            AuditFormat::Jsonl => records.iter().map(|r| format!("{r}\n")).collect(),
            AuditFormat::Table => {
                let cell = |r: &Value, k: &str| match r.get(k) {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Null) | None => "-".to_string(),
                    Some(v) => v.to_string(),
                };
                let mut out = String::from("time_ms        instance  seq  kind      principal  capability  decision  status\n");
                for r in records {
                    out.push_str(&format!(
                        "{}  {}  {}  {}  {}  {}  {}  {}\n",
                        cell(r, "time_ms"),
                        cell(r, "instance"),
                        cell(r, "seq"),
                        cell(r, "kind"),
                        cell(r, "principal"),
                        cell(r, "capability"),
                        cell(r, "decision"),
                        cell(r, "status")
                    ));
                }
                out
            }
        }
    }
}

#[cfg(all(test, feature = "store"))]
mod tests {
    #[test]
    fn dates_and_times_are_utc_milliseconds() {
        assert_eq!(super::parse_time("1970-01-01"), Ok(0));
        assert_eq!(super::parse_time("2026-12-03"), Ok(1_796_256_000_000));
        assert_eq!(super::parse_time("2026-12-03T01:02:03Z"), Ok(1_796_256_000_000 + 3_723_000));
        assert!(super::parse_time("yesterday").unwrap_err().contains("not a date"));
        for ms in [0, 1_796_256_000_000 + 3_723_000, 951_782_400_000, 4_107_542_399_000] {
            let text = super::format_time(ms);
            assert_eq!(super::parse_time(&text), Ok(ms), "{text}");
        }
        assert_eq!(super::format_time(1_796_256_000_000 + 3_723_000), "2026-12-03T01:02:03Z");
    }
}
