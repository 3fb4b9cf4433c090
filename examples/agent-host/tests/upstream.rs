//! `agent-host serve --upstreams DIR` mounts the repository's upstream
//! module `kg` (the reference knowledge-graph server from npm, pinned in
//! specs/kg.yaml) beside its Rust modules: one guest action reads a file
//! through the Rust `workspace` module and stores it in the upstream
//! server, every call through the one gate, receipts naming the server.
//! Skips with a notice where node or the server is absent; CI (which
//! installs it) sets CAPSPEC_REQUIRE_NODE_TOOLS so it may not.

use capspec_testkit::{TempDir, repo_root, skip};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_mounts_the_upstream_module_beside_the_rust_ones() {
    let server = repo_root().join("tests/ts/node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    let node = std::process::Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if !node || !server.is_file() {
        skip(Some("CAPSPEC_REQUIRE_NODE_TOOLS"), "node or the pinned MCP servers are not installed (run `npm ci --prefix tests/ts`); skipping");
        return;
    }
    let workspace = TempDir::new("agent-host-upstream");
    workspace.write("note.txt", "remember the milk\n");
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"));
    command.args(["serve", "--mode", "auto", "--upstreams"]).arg(repo_root()).arg("--workspace").arg(workspace.path());
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.expect("agent-host answers initialize");
    let tools = client.list_all_tools().await.unwrap();
    let description = tools.iter().find(|t| t.name == "execute_code").and_then(|t| t.description.as_deref()).unwrap();
    assert!(description.contains("`import kg from \"@capspec/host/kg\";`") && description.contains("`import workspace from"), "both kinds of module: {description}");
    // The graph file persists under target/: a name of this run's own.
    let entity = format!("note-{}", std::process::id());
    let code = format!(
        "import workspace from '@capspec/host/workspace'; import kg from '@capspec/host/kg';\n\
         export default async () => {{ const {{ content }} = await workspace.read_file({{ path: 'note.txt' }});\n\
         await kg.create_entities({{ entities: [{{ name: '{entity}', entityType: 'note', observations: [content] }}] }});\n\
         return (await kg.open_nodes({{ names: ['{entity}'] }})).entities[0].observations; }}"
    );
    let args = json!({"code": code}).as_object().cloned().unwrap();
    let result = client.call_tool(CallToolRequestParams::new("execute_code").with_arguments(args)).await.unwrap();
    let report = result.structured_content.clone().unwrap_or(Value::Null);
    assert_eq!(report["result"], json!(["remember the milk\n"]), "{report:#}");
    let receipts: Vec<(String, Value)> = report["receipts"].as_array().unwrap().iter().map(|r| (r["capability"].as_str().unwrap().to_string(), r["upstream"].clone())).collect();
    assert_eq!(receipts, [
        ("workspace.read_file".to_string(), Value::Null),
        ("kg.create_entities".to_string(), json!("kg")),
        ("kg.open_nodes".to_string(), json!("kg")),
    ]);
    client.cancel().await.unwrap();
}
