//! Helpers for testing capabilities in-process: a scripted approver that
//! records what it was asked, and a minimal executor.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use crate::gate::{Approval, ApprovalRequest, Approver, BoxFuture, Gate, Mode, SessionAllow};
use crate::run::Run;

/// Answers approval requests from a script, in order; when the script runs
/// out it denies. Every request is recorded.
#[derive(Default)]
pub struct ScriptedApprover {
    answers: Mutex<VecDeque<Approval>>,
    asked: Mutex<Vec<ApprovalRequest>>,
}

impl ScriptedApprover {
    /// An approver answering each ask with the next of `answers` (then denying).
    pub fn new(answers: impl IntoIterator<Item = Approval>) -> Arc<ScriptedApprover> {
        Arc::new(ScriptedApprover { answers: Mutex::new(answers.into_iter().collect()), asked: Mutex::new(Vec::new()) })
    }

    /// Every request so far.
    pub fn asked(&self) -> Vec<ApprovalRequest> {
        self.asked.lock().unwrap().clone()
    }

    /// Queue more answers.
    pub fn push(&self, answer: Approval) {
        self.answers.lock().unwrap().push_back(answer);
    }
}

impl Approver for ScriptedApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        self.asked.lock().unwrap().push(request.clone());
        let answer = self.answers.lock().unwrap().pop_front().unwrap_or_else(|| Approval::Deny("the test script has no more answers".into()));
        Box::pin(async move { answer })
    }
}

/// A run in `mode` whose approver follows `approver`, in the session `session`.
pub fn run(mode: Mode, approver: Arc<ScriptedApprover>, session: &SessionAllow) -> Run {
    Run::new(Gate::new(mode, approver, session.clone()))
}

/// Drive a future to completion on the current thread, as a test calls an
/// impl: on a tokio runtime of its own (with every driver tokio was built
/// with, so impls that sleep, read files or spawn work), or, inside a
/// runtime already (`#[tokio::test]`), by polling it on this thread, where
/// the runtime's context stays current.
pub fn block_on<F: Future>(future: F) -> F::Output {
    if tokio::runtime::Handle::try_current().is_err() {
        if let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() {
            return runtime.block_on(future);
        }
    }
    poll_here(future)
}

fn poll_here<F: Future>(future: F) -> F::Output {
    struct ThreadWaker(std::thread::Thread);
    impl Wake for ThreadWaker {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(v) => return v,
            Poll::Pending => std::thread::park(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    /// An impl's body as users write it: tokio's timer and blocking pool.
    async fn uses_tokio() -> u32 {
        tokio::time::sleep(Duration::from_millis(5)).await;
        tokio::task::spawn_blocking(|| 41).await.unwrap() + 1
    }

    #[test]
    fn block_on_runs_futures_that_use_tokio() {
        assert_eq!(super::block_on(uses_tokio()), 42);
    }

    #[test]
    fn block_on_inside_a_runtime_polls_in_its_context() {
        // Nesting a runtime would panic ("Cannot start a runtime from within a runtime").
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let got = runtime.block_on(async { super::block_on(async { tokio::runtime::Handle::try_current().is_ok() }) });
        assert!(got, "the future ran in the runtime's context");
    }
}
