//! The JSON tool-call entrance: one request text in, one reply text out,
//! through `invoke` like every other entrance.

use serde_json::Value;

use crate::error::{CallError, ErrorCode};
use crate::registry::Mounted;
use crate::run::Run;

impl Mounted {
    /// The JSON tool-call entrance: `{"name": …, "arguments": {…}}` in,
    /// `{"result": …}` or `{"error", "message", "capability"}` out.
    pub async fn invoke_json(&self, run: &Run, request: &str) -> String {
        #[derive(serde::Deserialize)]
        struct ToolCall {
            name: String,
            #[serde(default)]
            arguments: Value,
        }
        let reply = match serde_json::from_str::<ToolCall>(request) {
            Ok(call) => match self.invoke(run, &call.name, call.arguments).await {
                Ok(result) => serde_json::json!({ "result": result }),
                Err(e) => serde_json::to_value(&e).expect("errors serialize"),
            },
            Err(e) => serde_json::to_value(CallError::new(ErrorCode::InvalidArguments, format!("a tool call is {{\"name\": string, \"arguments\": object}}: {e}"), String::new()))
                .expect("errors serialize"),
        };
        reply.to_string()
    }
}
