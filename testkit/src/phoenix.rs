//! A real OTLP backend for one test: Arize Phoenix, installed from PyPI at
//! the versions `tests/otlp/requirements.txt` pins, into
//! `tests/otlp/.venv` (by `.ci/run`). It stores the spans it receives
//! (OTLP over http/protobuf and gRPC) in SQLite under a temp directory,
//! listens on 127.0.0.1 only, makes no request of its own to the internet,
//! and answers queries over its REST API. Stopped when dropped. `None`,
//! with a skip notice, where the venv is absent (a failure where CI set
//! CAPSPEC_REQUIRE_OTLP_BACKEND).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::postgres::free_port;
use crate::{TempDir, repo_root, skip};

/// A running Phoenix server.
pub struct Phoenix {
    child: Child,
    python: PathBuf,
    http: u16,
    grpc: u16,
    _dir: TempDir,
}

impl Phoenix {
    /// Start a fresh server and wait until it answers (its start takes
    /// half a minute on two cores).
    pub fn start() -> Option<Phoenix> {
        let python = repo_root().join("tests/otlp/.venv/bin/python");
        if !python.is_file() {
            skip(Some("CAPSPEC_REQUIRE_OTLP_BACKEND"), "Arize Phoenix is absent (python3 -m venv tests/otlp/.venv && tests/otlp/.venv/bin/pip install -r tests/otlp/requirements.txt): the OTLP export is not tested against a backend");
            return None;
        }
        // Its ports are chosen free before its half-minute start, so another
        // test may take one first: a start that finds one taken is tried
        // again on new ones.
        for attempt in 1..=3 {
            match Phoenix::spawn(&python) {
                Ok(server) => return Some(server),
                Err(log) if log.contains("address already in use") && attempt < 3 => continue,
                Err(log) => panic!("Phoenix exited: {log}"),
            }
        }
        unreachable!("the last attempt returns or panics")
    }

    /// One start on two ports found free; its log when it exits first.
    fn spawn(python: &std::path::Path) -> Result<Phoenix, String> {
        let dir = TempDir::new("phoenix");
        let (http, grpc) = (free_port(), free_port());
        let child = Command::new(python)
            .args(["-m", "phoenix.server.main", "serve"])
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", http.to_string())
            .env("PHOENIX_GRPC_PORT", grpc.to_string())
            .env("PHOENIX_WORKING_DIR", dir.path())
            .env("PHOENIX_ALLOW_EXTERNAL_RESOURCES", "false")
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("phoenix.log")).unwrap())
            .spawn()
            .expect("Phoenix starts");
        let mut server = Phoenix { child, python: python.to_path_buf(), http, grpc, _dir: dir };
        let deadline = Instant::now() + Duration::from_secs(180);
        while server.get("/healthz").is_none() {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!("({status}) {}", std::fs::read_to_string(server._dir.path().join("phoenix.log")).unwrap_or_default()));
            }
            assert!(Instant::now() < deadline, "Phoenix did not answer within 180 s");
            std::thread::sleep(Duration::from_millis(500));
        }
        Ok(server)
    }

    /// Its OTLP endpoint over http/protobuf (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub fn http_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.http)
    }

    /// Its OTLP endpoint over gRPC.
    pub fn grpc_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.grpc)
    }

    /// Every span stored in `project` (the `default` one unless the spans'
    /// resource names another), as the REST API gives them (OTLP's JSON
    /// shape: `trace_id`, `span_id`, `parent_span_id`, `name`,
    /// `attributes` as `[{key, value}]`).
    pub fn spans(&self, project: &str) -> Vec<serde_json::Value> {
        let body = self.get(&format!("/v1/projects/{project}/spans/otlpv1?limit=1000")).unwrap_or_default();
        let page: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        page["data"].as_array().cloned().unwrap_or_default()
    }

    /// GET `path` with Python's own HTTP client; `None` unless 200.
    fn get(&self, path: &str) -> Option<String> {
        let script = "import sys, urllib.request\ntry:\n    print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())\nexcept Exception:\n    sys.exit(1)";
        let out = Command::new(&self.python).args(["-c", script, &format!("http://127.0.0.1:{}{path}", self.http)]).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
