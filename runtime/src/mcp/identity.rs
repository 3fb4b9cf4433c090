//! The server's identity (DESIGN §10): the `serverInfo` (`name`,
//! `version`, `title`) and `instructions` a client is told are the
//! project's. capspec's own text about its surface is appended to the
//! project's instructions, never replaces them. (`McpHost::with_identity`
//! is in `options.rs`, `capspec::server_identity!` at the crate root.)

use rmcp::model::Implementation;

/// What a served server says it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerIdentity {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// `serverInfo.title`, a name for people.
    pub title: Option<String>,
    /// What `initialize` tells the client first.
    pub instructions: Option<String>,
}

impl ServerIdentity {
    /// A server named `name` at `version`, with no title and no
    /// instructions of its own.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> ServerIdentity {
        ServerIdentity { name: name.into(), version: version.into(), title: None, instructions: None }
    }

    /// With a human title.
    pub fn with_title(self, title: impl Into<String>) -> ServerIdentity {
        ServerIdentity { title: Some(title.into()), ..self }
    }

    /// With instructions; capspec's text about the surface follows them.
    pub fn with_instructions(self, instructions: impl Into<String>) -> ServerIdentity {
        ServerIdentity { instructions: Some(instructions.into()), ..self }
    }
}

/// The `serverInfo` and instructions of a host whose own text about its
/// surface is `surface_text`.
pub(super) fn info(identity: Option<&ServerIdentity>, surface_text: &str) -> (Implementation, String) {
    let Some(identity) = identity else {
        return (Implementation::new("capspec", env!("CARGO_PKG_VERSION")), surface_text.to_string());
    };
    let mut implementation = Implementation::new(identity.name.clone(), identity.version.clone());
    if let Some(title) = &identity.title {
        implementation = implementation.with_title(title.clone());
    }
    let instructions = match identity.instructions.as_deref().map(str::trim_end).filter(|i| !i.is_empty()) {
        Some(own) => format!("{own}\n\n{surface_text}"),
        None => surface_text.to_string(),
    };
    (implementation, instructions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_s_instructions_come_first_and_capspec_s_follow() {
        let identity = ServerIdentity::new("sqlite-mcp", "1.3.0").with_title("SQLite").with_instructions("Use sql_query for reads.\n");
        let (server, text) = info(Some(&identity), "capspec host (modules: db).");
        assert_eq!((server.name.as_str(), server.version.as_str(), server.title.as_deref()), ("sqlite-mcp", "1.3.0", Some("SQLite")));
        assert_eq!(text, "Use sql_query for reads.\n\ncapspec host (modules: db).");
        let (server, text) = info(None, "capspec host (modules: db).");
        assert_eq!((server.name.as_str(), text.as_str()), ("capspec", "capspec host (modules: db)."));
    }
}
