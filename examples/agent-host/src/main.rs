//! agent-host: the reference host for the repo's `specs/`.
//!
//! Not built yet: it will embed the generated bindings, implement every
//! capability and run guest JavaScript actions through the gate. Until then
//! it says so and exits with a usage error.

fn main() -> std::process::ExitCode {
    eprintln!("agent-host: not built yet — the reference host arrives with the runtime and guest host; see README.md");
    std::process::ExitCode::from(2)
}
