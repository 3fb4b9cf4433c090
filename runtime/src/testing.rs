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

/// Drive a future to completion on the current thread.
pub fn block_on<F: Future>(future: F) -> F::Output {
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
