//! Order-preserving parallel map over the machine's cores, with scoped
//! threads (no dependency). Workers take the next item as they finish the
//! last (items differ in cost, so a fixed split would leave a core idle),
//! and results come back in input order, so output never depends on
//! scheduling.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `items.map(f)`, split across the available cores.
pub fn map<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(items.len().max(1));
    if threads <= 1 || items.len() < 8 {
        return items.into_iter().map(f).collect();
    }
    let count = items.len();
    // Each item is taken exactly once, by whichever worker claims its index.
    let slots: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
    let next = AtomicUsize::new(0);
    let (f, slots, next) = (&f, &slots, &next);
    let mut results: Vec<Option<R>> = std::iter::repeat_with(|| None).take(count).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= count {
                            break done;
                        }
                        let item = slots[i].lock().expect("no worker panics holding a slot").take().expect("each item is taken once");
                        done.push((i, f(item)));
                    }
                })
            })
            .collect();
        for worker in workers {
            for (i, r) in worker.join().expect("a parallel worker panicked") {
                results[i] = Some(r);
            }
        }
    });
    results.into_iter().map(|r| r.expect("every item was mapped")).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_order() {
        let out = super::map((0..1000).collect(), |i: i32| i * 2);
        assert_eq!(out, (0..1000).map(|i| i * 2).collect::<Vec<_>>());
    }

    #[test]
    fn keeps_order_when_items_differ_in_cost() {
        let out = super::map((0..64u64).collect(), |i| {
            std::thread::sleep(std::time::Duration::from_micros((64 - i) * 50));
            i
        });
        assert_eq!(out, (0..64).collect::<Vec<_>>());
    }
}
