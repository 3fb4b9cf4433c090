//! `shell`: run programs in the workspace. No shell is involved: the program
//! and its arguments are passed as they are, and the process is killed when
//! its timeout passes.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use capspec::{CapError, CapResult, Run, capability};

use crate::generated::shell as spec;
use crate::workspace::Workspace;

/// Most bytes of stdout or stderr a result carries.
const MAX_OUTPUT: usize = 1024 * 1024;

fn read_all(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut pipe).take(MAX_OUTPUT as u64).read_to_end(&mut buf);
        // Drain the rest so the child never blocks on a full pipe.
        let _ = std::io::copy(&mut pipe, &mut std::io::sink());
        buf
    })
}

#[capability(spec::run_command)]
async fn run_command(run: &Run, args: spec::run_command::Args) -> CapResult<spec::run_command::Output> {
    let ws = Workspace::of(run)?;
    let timeout = Duration::from_millis(args.timeout_ms.max(1) as u64);
    let mut child = Command::new(&args.program)
        .args(args.args)
        .envs(args.env.unwrap_or_default())
        .current_dir(ws.root())
        .stdin(if args.stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| CapError::new(format!("cannot start `{}`: {e}", args.program)))?;
    if let (Some(input), Some(mut stdin)) = (args.stdin, child.stdin.take()) {
        std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
    }
    let stdout = read_all(child.stdout.take().expect("piped"));
    let stderr = read_all(child.stderr.take().expect("piped"));
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if start.elapsed() >= timeout {
            timed_out = true;
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let text = |h: std::thread::JoinHandle<Vec<u8>>| String::from_utf8_lossy(&h.join().unwrap_or_default()).into_owned();
    Ok(spec::run_command::Output {
        exit_code: status.and_then(|s| s.code()).map(i64::from),
        stdout: text(stdout),
        stderr: text(stderr),
        timed_out,
    })
}

#[capability(spec::which_program)]
async fn which_program(_run: &Run, args: spec::which_program::Args) -> CapResult<spec::which_program::Output> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = if args.program.contains('/') {
        None
    } else {
        std::env::split_paths(&path).map(|d| d.join(&args.program)).find(|p| p.is_file())
    };
    Ok(spec::which_program::Output { path: found.map(|p| p.to_string_lossy().into_owned()) })
}

#[capability(spec::get_environment)]
async fn get_environment(_run: &Run, _args: spec::get_environment::Args) -> CapResult<spec::get_environment::Output> {
    let mut names: Vec<String> = std::env::vars_os().map(|(k, _)| k.to_string_lossy().into_owned()).collect();
    names.sort();
    Ok(spec::get_environment::Output { names })
}
