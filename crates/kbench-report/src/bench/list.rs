//! What `perf bench` prints when it runs nothing: its collections, a collection's
//! benchmarks, and what it does not know.

/// The collections, under perf bench's usage line `usage`.
pub fn collections(usage: &str) -> String {
    format!(
        "\n Usage: \n\t{usage}\n\n        # List of all available benchmark collections:\n\n{:>14}: {}\n{:>14}: {}\n\n",
        "sched", "Scheduler and IPC benchmarks", "all", "All benchmarks"
    )
}

/// The benchmarks of `collection`, each as (name, summary).
pub fn benchmarks<'a>(
    collection: &str,
    workloads: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> String {
    let mut out =
        format!("\n        # List of available benchmarks for collection '{collection}':\n\n");
    for (name, summary) in workloads {
        out.push_str(&format!("{name:>14}: {summary}\n"));
    }
    out.push_str(&format!(
        "{:>14}: {}\n\n",
        "all", "Run all scheduler benchmarks"
    ));
    out
}

/// A benchmark `collection` does not have.
pub fn unknown_benchmark(collection: &str, name: &str) -> String {
    format!("Unknown benchmark: '{name}' for collection '{collection}'\n")
}

/// A collection perf bench does not have.
pub fn unknown_collection(collection: &str) -> String {
    format!("Unknown collection: '{collection}'\n")
}
