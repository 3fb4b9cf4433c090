//! Order-preserving parallel map over the machine's cores, with scoped
//! threads (no dependency). Results come back in input order, so output
//! never depends on scheduling.

/// `items.map(f)`, split across the available cores.
pub fn map<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(items.len().max(1));
    if threads <= 1 || items.len() < 8 {
        return items.into_iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let mut chunks: Vec<Vec<T>> = Vec::new();
    let mut items = items.into_iter();
    loop {
        let part: Vec<T> = items.by_ref().take(chunk).collect();
        if part.is_empty() {
            break;
        }
        chunks.push(part);
    }
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = chunks.into_iter().map(|part| scope.spawn(move || part.into_iter().map(f).collect::<Vec<R>>())).collect();
        handles.into_iter().flat_map(|h| h.join().expect("a parallel worker panicked")).collect()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_order() {
        let out = super::map((0..1000).collect(), |i: i32| i * 2);
        assert_eq!(out, (0..1000).map(|i| i * 2).collect::<Vec<_>>());
    }
}
