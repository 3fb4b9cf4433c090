//! How `init` edits the manifests it does not own: an entry added to a
//! table, capspec's own entries rewritten to a new source (their other
//! keys kept), a workspace member added; nothing else is touched.

/// What [`set_entry`] did to a dependency entry.
pub(super) enum Entry {
    /// It was absent and is added.
    Added,
    /// It was there with another value (the old line), and is rewritten.
    Replaced(String),
    /// It was there with another value (the old line), and is kept: no
    /// source flag asked for a change.
    Kept(String),
    /// It was there, unchanged.
    Same,
}

impl Entry {
    pub(super) fn describe(&self, table: &str, key: &str) -> String {
        match self {
            Entry::Added | Entry::Same => format!("[{table}] {key}"),
            Entry::Replaced(old) | Entry::Kept(old) => format!("[{table}] {key}: was `{}`", old.trim()),
        }
    }
}

/// The keys of a dependency entry that say where it comes from: a new
/// source replaces these and keeps every other key (`features`,
/// `default-features`, `optional`, `package`, …).
pub(super) const SOURCE_KEYS: [&str; 7] = ["version", "path", "git", "rev", "branch", "tag", "registry"];

/// Set `key`'s entry in `[table]` to `line` (`key = value`): add it when
/// absent; when its source differs, rewrite the source keys if `rewrite`
/// (keeping the entry's other keys), else keep it. Nothing else in the
/// manifest changes.
pub(super) fn set_entry(text: &mut String, table: &str, key: &str, line: &str, rewrite: bool) -> Entry {
    let value = line.split_once('=').map_or(line, |(_, v)| v).trim();
    let new: toml_edit::Value = value.parse().expect("init writes valid TOML values");
    // A manifest toml_edit cannot read, cargo cannot either: add the entry
    // line by line and let `cargo metadata` say what is wrong.
    let Ok(mut doc) = text.parse::<toml_edit::DocumentMut>() else {
        add_entry(text, table, key, line);
        return Entry::Added;
    };
    let Some(item) = doc.get_mut(table).and_then(|t| t.get_mut(key)).filter(|i| !i.is_none()) else {
        add_entry(text, table, key, line);
        return Entry::Added;
    };
    let old = shown(key, item);
    let merged = with_source(item, &new);
    if entries(item) == entries(&merged) {
        return Entry::Same;
    }
    if !rewrite {
        return Entry::Kept(old);
    }
    *item = merged;
    *text = doc.to_string();
    Entry::Replaced(old)
}

/// `item` with its source keys replaced by `new`'s. An entry that is only
/// a version string becomes `new` as it is.
pub(super) fn with_source(item: &toml_edit::Item, new: &toml_edit::Value) -> toml_edit::Item {
    let location = |v: &toml_edit::Value| -> Vec<(String, toml_edit::Value)> {
        match v {
            toml_edit::Value::InlineTable(t) => t.iter().filter(|(k, _)| SOURCE_KEYS.contains(k)).map(|(k, v)| (k.to_string(), v.clone())).collect(),
            other => vec![("version".to_string(), other.clone())],
        }
    };
    match item {
        toml_edit::Item::Value(toml_edit::Value::InlineTable(old)) => {
            let mut table = toml_edit::InlineTable::new();
            for (k, v) in location(new) {
                table.insert(&k, v.decorated(" ", " "));
            }
            for (k, v) in old.iter().filter(|(k, _)| !SOURCE_KEYS.contains(k)) {
                table.insert(k, v.clone().decorated(" ", " "));
            }
            table.fmt();
            toml_edit::Item::Value(toml_edit::Value::InlineTable(table).decorated(" ", ""))
        }
        toml_edit::Item::Table(old) => {
            let mut table = old.clone();
            table.retain(|k, _| !SOURCE_KEYS.contains(&k));
            let kept: Vec<(String, toml_edit::Item)> = table.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
            table.clear();
            for (k, v) in location(new) {
                table.insert(&k, toml_edit::value(v.decorated(" ", "")));
            }
            for (k, v) in kept {
                table.insert(&k, v);
            }
            toml_edit::Item::Table(table)
        }
        _ => toml_edit::Item::Value(new.clone().decorated(" ", "")),
    }
}

/// An entry's keys and values as text, ignoring layout: what decides
/// whether a rewrite changes anything.
pub(super) fn entries(item: &toml_edit::Item) -> Vec<(String, String)> {
    let flat = |v: &toml_edit::Value| v.clone().decorated("", "").to_string();
    let mut out: Vec<(String, String)> = match item {
        toml_edit::Item::Value(toml_edit::Value::InlineTable(t)) => t.iter().map(|(k, v)| (k.to_string(), flat(v))).collect(),
        toml_edit::Item::Table(t) => t.iter().filter_map(|(k, v)| v.as_value().map(|v| (k.to_string(), flat(v)))).collect(),
        toml_edit::Item::Value(v) => vec![("version".to_string(), flat(v))],
        _ => Vec::new(),
    };
    out.sort();
    out
}

/// An entry as one line, `key = value`, as a report shows it.
pub(super) fn shown(key: &str, item: &toml_edit::Item) -> String {
    match item {
        toml_edit::Item::Table(t) => {
            let inline = t.clone().into_inline_table();
            format!("{key} = {}", toml_edit::Value::InlineTable(inline).decorated("", ""))
        }
        toml_edit::Item::Value(v) => format!("{key} = {}", v.clone().decorated("", "")),
        other => format!("{key} = {}", other.to_string().trim()),
    }
}

/// Whether a TOML text has the table `[name]` (a header line).
pub(super) fn has_table(text: &str, name: &str) -> bool {
    text.lines().any(|l| l.trim() == format!("[{name}]"))
}

/// Add `line` (the entry for `key`) to `[table]`, creating the table at the
/// end; `false` when the table already has `key`.
pub(super) fn add_entry(text: &mut String, table: &str, key: &str, line: &str) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    if entry_line(&lines, table, key).is_some() {
        return false;
    }
    match table_span(&lines, table) {
        Some((at, _)) => {
            let mut new: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            new.insert(at + 1, line.to_string());
            *text = new.join("\n") + "\n";
        }
        None => {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("[{table}]\n{line}\n"));
        }
    }
    true
}

/// `[table]`'s header line, and where its entries end.
pub(super) fn table_span(lines: &[&str], table: &str) -> Option<(usize, usize)> {
    let header = format!("[{table}]");
    let at = lines.iter().position(|l| l.trim() == header)?;
    let end = lines[at + 1..].iter().position(|l| l.trim_start().starts_with('[')).map_or(lines.len(), |i| at + 1 + i);
    Some((at, end))
}

/// The line of `key`'s entry in `[table]`.
pub(super) fn entry_line(lines: &[&str], table: &str, key: &str) -> Option<usize> {
    let (at, end) = table_span(lines, table)?;
    (at + 1..end).find(|&i| lines[i].split('=').next().is_some_and(|k| k.trim() == key))
}

/// Add `member` to `[workspace] members`; `false` when it is there already
/// or the manifest has no `[workspace]` table. A `[workspace]` table without
/// `members` (a package that is a workspace of its own, as a crate kept
/// apart from an enclosing workspace is) lists the package and `member`.
pub(super) fn add_member(text: &mut String, member: &str) -> bool {
    let quoted = format!("\"{member}\"");
    let lines: Vec<&str> = text.lines().collect();
    let Some((header, _)) = table_span(&lines, "workspace") else { return false };
    // Where each line starts, in bytes (a CRLF line's `\r` included).
    let starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let offset = |line: usize| starts.get(line).copied().unwrap_or(text.len());
    let Some(at) = entry_line(&lines, "workspace", "members") else {
        let listed = if table_span(&lines, "package").is_some() { format!("\".\", {quoted}") } else { quoted };
        let mut after_header = offset(header + 1);
        if !text[..after_header].ends_with('\n') {
            text.insert(after_header, '\n');
            after_header += 1;
        }
        text.insert_str(after_header, &format!("members = [{listed}]\n"));
        return true;
    };
    let start = offset(at);
    let Some(open) = text[start..].find('[').map(|i| start + i) else { return false };
    let Some(close) = text[open..].find(']').map(|i| open + i) else { return false };
    if text[open..close].contains(&quoted) {
        return false;
    }
    let inside = text[open + 1..close].trim();
    let insert = if inside.is_empty() { quoted } else { format!("{quoted}, ") };
    text.insert_str(open + 1, &insert);
    true
}

#[cfg(test)]
mod tests {
    use super::add_member;

    /// A crate that is a workspace of its own (`[workspace]` and no
    /// `members`, as a crate kept apart from an enclosing workspace declares
    /// itself) lists itself and the xtask, so `cargo xtask` finds it.
    #[test]
    fn a_workspace_table_without_members_gains_the_package_and_the_member() {
        let mut text = "[package]\nname = \"notes-server\"\n\n[dependencies]\nserde = \"1\"\n\n[workspace]\n".to_string();
        assert!(add_member(&mut text, "xtask"));
        assert!(text.ends_with("[workspace]\nmembers = [\".\", \"xtask\"]\n"), "{text}");
        let parsed: toml::Table = text.parse().unwrap();
        assert_eq!(parsed["workspace"]["members"].as_array().unwrap().len(), 2);
        // Again: nothing more.
        assert!(!add_member(&mut text, "xtask"));
        // No newline at the end, CRLF lines, a table after it.
        let mut crlf = "[package]\r\nname = \"a\"\r\n[workspace]".to_string();
        assert!(add_member(&mut crlf, "xtask"));
        assert_eq!(crlf, "[package]\r\nname = \"a\"\r\n[workspace]\nmembers = [\".\", \"xtask\"]\n");
        let mut between = "[workspace]\nresolver = \"2\"\n\n[dependencies]\n".to_string();
        assert!(add_member(&mut between, "xtask"));
        assert_eq!(between, "[workspace]\nmembers = [\"xtask\"]\nresolver = \"2\"\n\n[dependencies]\n");
    }

    /// A listed member is added to the list, once; a comment naming
    /// `members` before the table is not the key.
    #[test]
    fn a_members_list_gains_the_member_once() {
        let mut text = "# members of the team: see README\n[workspace]\nmembers = [\"host\"]\n".to_string();
        assert!(add_member(&mut text, "xtask"));
        assert_eq!(text, "# members of the team: see README\n[workspace]\nmembers = [\"xtask\", \"host\"]\n");
        assert!(!add_member(&mut text, "xtask"));
        assert!(!add_member(&mut "[package]\nname = \"a\"\n".to_string(), "xtask"));
    }
}
