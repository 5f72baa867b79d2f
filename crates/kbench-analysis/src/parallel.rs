//! Work spread over the machine's CPUs, for the parts of a comparison that are
//! independent of each other: the two labels, and the rows of a key. Results come
//! back in the order asked, so a report is the same whatever the CPU count.
use std::panic::resume_unwind;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `(on_other(), here())`: `on_other` on a thread of its own, `here` on this one.
pub fn join<A: Send, B>(on_other: impl FnOnce() -> A + Send, here: impl FnOnce() -> B) -> (A, B) {
    std::thread::scope(|scope| {
        let other = scope.spawn(on_other);
        let here = here();
        let other = other.join().unwrap_or_else(|panic| resume_unwind(panic));
        (other, here)
    })
}

/// `items.iter().map(f).collect()`, with as many threads as there are CPUs, each
/// taking the next item when it is done with one (rows differ widely in cost).
pub fn map_ordered<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len());
    if workers <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let take = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                return done;
            };
            done.push((i, f(item)));
        }
    };
    let mut numbered: Vec<(usize, R)> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..workers).map(|_| scope.spawn(take)).collect();
        threads
            .into_iter()
            .flat_map(|t| t.join().unwrap_or_else(|panic| resume_unwind(panic)))
            .collect()
    });
    numbered.sort_by_key(|(i, _)| *i);
    numbered.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_the_order_asked_whatever_each_item_costs() {
        let items: Vec<u64> = (0..200).collect();
        let slow_first = |&i: &u64| {
            // Early items take longest, so threads finish out of order.
            std::thread::sleep(std::time::Duration::from_micros(200 - i));
            i * i
        };
        let expected: Vec<u64> = items.iter().map(|i| i * i).collect();
        assert_eq!(map_ordered(&items, slow_first), expected);
        assert_eq!(map_ordered(&items[..1], slow_first), vec![0]);
        assert!(map_ordered(&items[..0], slow_first).is_empty());
    }

    #[test]
    fn join_returns_both_in_the_order_given() {
        let here = std::thread::current().id();
        let (other, this) = join(
            || std::thread::current().id(),
            || std::thread::current().id(),
        );
        assert_ne!(other, here);
        assert_eq!(this, here);
    }

    #[test]
    #[should_panic(expected = "row 7")]
    fn a_panic_in_a_worker_reaches_the_caller() {
        let items: Vec<u32> = (0..10).collect();
        map_ordered(&items, |&i| assert!(i != 7, "row {i}"));
    }
}
