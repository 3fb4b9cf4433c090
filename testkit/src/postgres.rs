//! A real Postgres server for one test: Debian's `postgresql` binaries
//! (`/usr/lib/postgresql/<version>/bin`), a fresh cluster in a temp
//! directory, listening on 127.0.0.1 only, stopped when dropped. As root
//! (CI's containers) the server runs as the `postgres` user, which Postgres
//! requires. `None`, with a skip notice, where the binaries are absent (a
//! failure where CI set CAPSPEC_REQUIRE_POSTGRES).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{TempDir, skip};

/// A running Postgres server.
pub struct Postgres {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    as_postgres: bool,
    _dir: TempDir,
}

impl Postgres {
    /// Start a fresh server (trust authentication on 127.0.0.1).
    pub fn start() -> Option<Postgres> {
        let Some(bin) = binaries() else {
            skip(Some("CAPSPEC_REQUIRE_POSTGRES"), "Postgres is absent (apt-get install postgresql): the Postgres store is not tested");
            return None;
        };
        let dir = TempDir::new("postgres");
        let data = dir.path().join("data");
        let as_postgres = is_root();
        if as_postgres {
            std::fs::create_dir_all(&data).unwrap();
            let status = Command::new("chown").args(["-R", "postgres:postgres"]).arg(dir.path()).status().unwrap();
            assert!(status.success(), "chown the cluster's directory to postgres");
        }
        let server = Postgres { bin, data, port: free_port(), as_postgres, _dir: dir };
        server.run("initdb", &["--auth=trust", "--username=postgres", "--no-sync", "-D"], &[&server.data]);
        server.restart();
        Some(server)
    }

    /// Its URL: `postgres://postgres@127.0.0.1:PORT/DATABASE`, the database
    /// created when absent.
    pub fn url(&self, database: &str) -> String {
        let exists = Command::new("psql")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres", "-tAc"])
            .arg(format!("SELECT 1 FROM pg_database WHERE datname = '{database}'"))
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "1");
        if !exists {
            let out = Command::new("psql").args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres", "-c"]).arg(format!("CREATE DATABASE {database}")).output().unwrap();
            assert!(out.status.success(), "create database {database}: {}", String::from_utf8_lossy(&out.stderr));
        }
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// Stop the server (fast shutdown), to test a store that went away.
    pub fn stop(&self) {
        self.run("pg_ctl", &["-w", "-m", "fast", "-D"], &[&self.data, Path::new("stop")]);
    }

    /// Start it (again, after [`Postgres::stop`]), on 127.0.0.1 only.
    pub fn restart(&self) {
        let options = format!("-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=on", self.port, self.data.display());
        self.run("pg_ctl", &["-w", "-l"], &[&self.data.join("log"), Path::new("-o"), Path::new(&options), Path::new("-D"), &self.data, Path::new("start")]);
    }

    /// One of the server's tools, run as the user the server runs as.
    fn command(&self, tool: &str) -> Command {
        let program = self.bin.join(tool);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        }
    }

    fn run(&self, tool: &str, args: &[&str], paths: &[&Path]) {
        let out = self.command(tool).args(args).args(paths).output().unwrap_or_else(|e| panic!("{tool} runs: {e}"));
        assert!(out.status.success(), "{tool} {args:?}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self.command("pg_ctl").args(["-w", "-m", "immediate", "-D"]).arg(&self.data).arg("stop").output();
    }
}

/// The newest installed version's `bin` directory.
fn binaries() -> Option<PathBuf> {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql").ok()?.filter_map(|e| e.ok().map(|e| e.path().join("bin"))).filter(|b| b.join("initdb").is_file()).collect();
    versions.sort();
    versions.pop()
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
