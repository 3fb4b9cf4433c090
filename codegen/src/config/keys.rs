//! Every key `capspec.toml` defines, once: its section, its default and
//! what it does. The reader accepts exactly these keys (anything else is
//! `config/unknown-key`), and `check --help` and the book's configuration
//! reference are printed from this table.

/// One key of `capspec.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// The section: `""` for the top level, else `generate`, `coverage`,
    /// `code_first`, `policy`, `allow` (each `[[allow]]` entry) or
    /// `upstream` (each `[upstream.NAME]`).
    pub section: &'static str,
    /// The key.
    pub name: &'static str,
    /// Its value when absent, as TOML (`""` when it has none).
    pub default: &'static str,
    /// What it does.
    pub summary: &'static str,
}

macro_rules! keys {
    ($($section:literal $name:literal = $default:literal, $summary:literal;)*) => {
        /// Every key, by section, in the order the reference lists them.
        pub const ALL: &[Key] = &[$(Key { section: $section, name: $name, default: $default, summary: $summary },)*];
    };
}

keys! {
    "" "specs" = "", "the spec directory, searched recursively for *.yaml and *.yml (required)";
    "" "snapshot" = "\"<specs>/categories.snap\"", "the category snapshot file";
    "" "generate" = "", "where and what to generate (a table)";
    "" "coverage" = "", "where impls and tests are (a table)";
    "" "code_first" = "", "Cargo packages whose #[derive(Capability)] specs join the YAML ones (a table)";
    "" "allow" = "", "suppressions: an array of tables, each one finding and its reason";
    "" "upstream" = "", "MCP servers whose tools modules pin: a table of tables, one per server";
    "" "policy" = "", "the Cedar policies (a table)";
    "" "serve" = "", "what `serve` keeps (a table)";
    "" "surface" = "", "named surfaces `serve` offers beside /mcp: a table of tables, one per surface";
    "" "check" = "", "what `check` holds the project to (a table)";
    "generate" "rust" = "\"src/generated\"", "the Rust bindings";
    "generate" "js" = "\"guest\"", "the guest JS facades and their .d.ts";
    "generate" "catalog" = "\"catalog\"", "the prompt catalog, capabilities.json and the Cedar schema";
    "generate" "specifier" = "\"@capspec/host\"", "the guest import prefix: \"@capspec/host/<module>\"";
    "generate" "bridge" = "\"capspec:bridge\"", "the private bridge module the facades import";
    "generate" "editor_schema" = "", "where to write the spec format's JSON Schema for editors (not written unless set)";
    "generate" "providers" = "[]", "provider tool files to write: \"openai\", \"anthropic\", \"gemini\"";
    "coverage" "sources" = "[\"src\"]", "scanned for #[capability] fns and #[derive(Capability)] structs";
    "coverage" "tests" = "[\"tests\"]", "scanned for tests that exercise capabilities";
    "code_first" "packages" = "[]", "packages whose derives sync and check export by building their lib tests";
    "code_first" "record" = "\"<specs>/code-first.json\"", "the generated record of what they last exported";
    "check" "features" = "[[]]", "the cargo feature sets (each on top of the default features) an impl must be compiled in to count";
    "policy" "dir" = "\"policies\"", "the directory of .cedar files and tests.yaml";
    "serve" "store" = "\"sqlite:.capspec/store.db\"", "the serve store (the audit log): sqlite:PATH (relative to the root), or postgres://… shared by instances";
    "serve" "name" = "", "the served server's name in serverInfo (default: the root package's name)";
    "serve" "version" = "", "its version in serverInfo (default: the root package's version)";
    "serve" "title" = "", "its human title in serverInfo";
    "serve" "instructions" = "", "what initialize tells clients; capspec's text about the surface is appended, never replaces it";
    "allow" "rule" = "", "the rule it suppresses: coverage/*, breaking/*, lint/*, upstream/added or policy/unreachable";
    "allow" "capability" = "", "the capability it applies to (its name), or";
    "allow" "file" = "", "the file it applies to, relative to the root";
    "allow" "reason" = "", "why the finding is accepted (required; not TODO)";
    "upstream" "command" = "", "a stdio server: the program and its arguments";
    "upstream" "url" = "", "or a Streamable HTTP server's URL";
    "upstream" "token_env" = "", "an environment variable holding its bearer token";
    "upstream" "auth" = "", "\"oauth\": OAuth 2.1, logged in once with `auth login NAME`";
    "upstream" "client_id" = "", "with auth = \"oauth\": a client the server's authorization server registered";
    "upstream" "client_metadata_url" = "", "with auth = \"oauth\": a Client ID Metadata Document the project publishes";
    "upstream" "scopes" = "", "with auth = \"oauth\": the scopes to ask for (default: what its metadata names)";
    "upstream" "credentials" = "\"operator\"", "with auth = \"oauth\": \"operator\" (one log-in) or \"per-user\" (each person's own)";
    "upstream" "env" = "{}", "added to a stdio server's environment";
    "upstream" "cwd" = "\".\"", "a stdio server's working directory";
    "upstream" "start" = "\"eager\"", "\"eager\" (at serve's start) or \"lazy\" (at its first call)";
    "upstream" "timeout_ms" = "60000", "for connecting and listing, and for each mounted call";
    "surface" "modules" = "[]", "the modules it mounts (empty: every module)";
    "surface" "capabilities" = "[]", "globs over qualified names it serves among them, e.g. \"notes.*\" (empty: all)";
    "surface" "groups" = "[]", "the groups whose members may connect (empty: everyone); others get 403";
    "surface" "mode" = "", "its permission mode: plan, default, accept-edits or auto (else serve's --mode)";
    "surface" "path" = "\"/mcp/<NAME>\"", "where it is served over HTTP, beside /mcp";
}

/// The keys of `section`.
pub fn of(section: &str) -> Vec<&'static str> {
    ALL.iter().filter(|k| k.section == section).map(|k| k.name).collect()
}

/// How a section is written in `capspec.toml`.
pub fn heading(section: &str) -> &'static str {
    match section {
        "" => "capspec.toml",
        "generate" => "[generate]",
        "coverage" => "[coverage]",
        "code_first" => "[code_first]",
        "policy" => "[policy]",
        "serve" => "[serve]",
        "check" => "[check]",
        "allow" => "[[allow]]",
        "upstream" => "[upstream.NAME]",
        "surface" => "[surface.NAME]",
        other => unreachable!("no config section `{other}`"),
    }
}

/// The sections, in the table's order.
pub fn sections() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for k in ALL {
        if !out.contains(&k.section) {
            out.push(k.section);
        }
    }
    out
}

/// The keys as `check --help` prints them: one line each, by section.
pub fn help() -> String {
    let mut out = String::from("PROJECT CONFIG (capspec.toml, in the root; paths relative to it):\n");
    for section in sections() {
        if !section.is_empty() {
            out.push_str(&format!("  {}\n", heading(section)));
        }
        for k in ALL.iter().filter(|k| k.section == section) {
            let default = if k.default.is_empty() { String::new() } else { format!(" = {}", k.default) };
            out.push_str(&format!("    {:<36} {}\n", format!("{}{default}", k.name), k.summary));
        }
    }
    out.pop();
    out
}
