//! `kbench history` on real sessions of this machine: a dozen A/A labels show no change
//! point, and six more beside a CPU hog show one, between the last quiet label and the
//! first hogged one. The sessions run in one boot, so sessions are the units.
mod common;

use common::{json_on, ok_on, one_line_error, TempDb};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::process::Command;

/// pipe with both tasks on one CPU: the CPU of the hog, when there is one.
const WORKLOAD: &str = "pipe:-l 3000 --placement same-cpu";

/// Two sessions of four runs for each label, kbench confined to `cpu`, in a seeded
/// random order: this machine's speed shifts by 10 % from one minute to the next with
/// the other work on it, and a shift that fell between two labels run one after the
/// other would be a real change of the history. In random order a shift falls on
/// sessions of every label alike, and the labels stay exchangeable, as the permutation
/// test assumes.
fn sessions(db: &Path, labels: &[String], cpu: u32, seed: u64) {
    let mut order: Vec<&String> = labels.iter().chain(labels).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    for name in order {
        let out = Command::new("taskset")
            .args(["-c", &cpu.to_string(), common::kbench_bin()])
            .args(["run", "--runs", "4", "--label", name, WORKLOAD])
            .env("KBENCH_DB", db)
            .output()
            .expect("taskset (util-linux)");
        common::assert_success(&out, &["run", name]);
    }
}

fn names(range: std::ops::RangeInclusive<u32>) -> Vec<String> {
    range.map(|i| format!("k{i:02}")).collect()
}

/// Each history here makes up to three tests of no change (the A/A dozen; the two
/// segments either side of the hog's change): at p ≤ 0.001 they hold 997 runs in
/// 1000, and 4999 permutations still place a step this large at p = 0.0002.
const STRICT: [&str; 4] = ["--significance", "0.001", "--permutations", "4999"];

/// `kbench history --metric usecs_per_op` with `args` then `labels`, strictly.
fn history_args<'a>(args: &[&'a str], labels: &'a [String]) -> Vec<&'a str> {
    let mut all = vec!["history", "--metric", "usecs_per_op"];
    all.extend(STRICT);
    all.extend(args);
    all.extend(labels.iter().map(String::as_str));
    all
}

/// The history of `labels` in the order given.
fn history(db: &Path, labels: &[String]) -> serde_json::Value {
    json_on(
        db,
        &history_args(&["--by", "label", "--format", "json"], labels),
    )
}

#[test]
fn a_dozen_quiet_labels_show_no_change_and_a_hog_is_found_where_it_began() {
    let temp = TempDb::new();
    let db = &temp.path;
    let (_, quiet) = common::busy_and_quiet_cpus();
    let quiet_labels = names(1..=12);
    sessions(db, &quiet_labels, quiet, 12);
    let aa = history(db, &quiet_labels);
    let histories = aa["histories"].as_array().unwrap();
    assert_eq!(histories.len(), 1, "{aa:#}");
    assert_eq!(histories[0]["level"], "session");
    assert_eq!(histories[0]["labels"].as_array().unwrap().len(), 12);
    assert_eq!(histories[0]["changes"], serde_json::json!([]), "{aa:#}");

    let hogged_labels = names(13..=18);
    {
        let _hog = common::Hog::on_cpu(quiet, 2);
        sessions(db, &hogged_labels, quiet, 6);
    }
    let all_labels: Vec<String> = quiet_labels.iter().chain(&hogged_labels).cloned().collect();
    let all = history(db, &all_labels);
    let changes = all["histories"][0]["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{all:#}");
    assert_eq!(changes[0]["before"], "k12");
    assert_eq!(changes[0]["after"], "k13");
    assert_eq!(changes[0]["regression"], true);
    let step_pct = changes[0]["step"]["change_pct"].as_f64().unwrap();
    assert!(step_pct > 20.0, "the hog slows pipe: {step_pct}%");

    // Every label of the database by date (each label's first session): the quiet
    // labels in the random order they began in, then the hogged ones.
    let by_date = json_on(db, &history_args(&["--format", "json"], &[]));
    let h = &by_date["histories"][0];
    let order: Vec<&str> = h["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["label"].as_str().unwrap())
        .collect();
    assert!(
        order[..12]
            .iter()
            .all(|l| quiet_labels.iter().any(|q| q == l)),
        "{order:?}"
    );
    assert_eq!(h["changes"].as_array().unwrap().len(), 1, "{by_date:#}");
    assert_eq!(h["changes"][0]["index"], 12, "{by_date:#}");

    // The text names the change, its step and the command that examines it.
    let text = ok_on(db, &history_args(&["--by", "label"], &all_labels));
    eprintln!("{text}");
    assert!(text.contains("-- change between k12 and k13: +"), "{text}");
    assert!(text.contains("a regression"), "{text}");
    assert!(
        text.contains("kbench compare k12 k13 --machine '"),
        "{text}"
    );
    // The page: the plot with its change marked, the tables, drawn by Chromium.
    let page_path = temp.dir().join("history.html");
    let path_arg = page_path.to_str().unwrap();
    ok_on(
        db,
        &history_args(
            &["--by", "label", "--format", "html", "-o", path_arg],
            &all_labels,
        ),
    );
    let page = std::fs::read_to_string(&page_path).unwrap();
    assert_eq!(page.matches("<svg").count(), 1, "one plot");
    assert!(
        page.contains("class=\"change\""),
        "the change point is drawn"
    );
    assert!(page.contains("<td>k12 → k13</td>"), "and listed");
    assert!(!page.to_lowercase().contains("<script"));
    common::render_in_chromium(&page_path);

    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("18 labels in the order given, sessions as units"),
        "{text}"
    );
}

#[test]
fn bad_history_requests_get_one_line_and_exit_two() {
    let temp = TempDb::new();
    let db = &temp.path;
    ok_on(db, &["run", "--runs", "1", "--label", "k01", "pipe:-l 200"]);
    for (args, says) in [
        (vec!["history", "nosuch"], "no runs labelled 'nosuch'"),
        (
            vec!["history", "--machine", "elsewhere"],
            "no runs on machine 'elsewhere'",
        ),
        (
            vec!["history", "--significance", "1.5"],
            "not a probability",
        ),
        (vec!["history", "--permutations", "3"], "--permutations"),
        (vec!["history", "--by", "kernel"], "--by"),
        (
            vec!["history", "--by", "commit"],
            "no commit recorded for k01",
        ),
        (
            vec!["history", "--metric", "usec_per_op"],
            "no runs of --metric usec_per_op",
        ),
    ] {
        let out = common::kbench_on(db, &args);
        let line = one_line_error(&out, 2, &args);
        assert!(line.contains(says), "{args:?}: {line}");
    }
    // One label: a history of one point, no change point to look for.
    let one = json_on(db, &["history", "--format", "json"]);
    assert_eq!(one["histories"][0]["changes"], serde_json::json!([]));
}

/// `git -C repo args`, which must succeed; its output trimmed.
fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        common::text(&out.stderr)
    );
    common::text(&out.stdout).trim().to_string()
}

#[test]
fn labels_are_ordered_along_the_tree_by_the_commits_they_recorded() {
    let temp = TempDb::new();
    let db = &temp.path;
    let repo = temp.dir().join("linux");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "master"]);
    let commits: Vec<String> = (1..=6)
        .map(|i| {
            git(
                &repo,
                &[
                    "-c",
                    "user.name=k",
                    "-c",
                    "user.email=k@example.org",
                    "commit",
                    "-q",
                    "--allow-empty",
                    "-m",
                    &format!("c{i}"),
                ],
            );
            git(&repo, &["rev-parse", "HEAD"])
        })
        .collect();
    git(&repo, &["tag", "v3", &commits[2]]);
    // Run out of the tree's order; one label names its commit by a tag, one through
    // $KBENCH_COMMIT.
    for i in [4, 1, 6, 2, 5, 3] {
        let label = format!("k{i}");
        let commit = if i == 3 {
            "v3".to_string()
        } else {
            commits[i - 1].clone()
        };
        let mut run = common::kbench_command();
        run.args([
            "run",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--label",
            &label,
            "pipe:-l 200",
        ])
        .env("KBENCH_DB", db);
        if i == 5 {
            run.env("KBENCH_COMMIT", &commit);
        } else {
            run.args(["--commit", &commit]);
        }
        let out = run.output().unwrap();
        common::assert_success(&out, &["run", &label]);
    }
    let tree = repo.to_str().unwrap();
    let h = json_on(
        db,
        &[
            "history", "--by", "commit", "--tree", tree, "--format", "json",
        ],
    );
    let order: Vec<&str> = h["histories"][0]["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["label"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["k1", "k2", "k3", "k4", "k5", "k6"], "{h:#}");
    assert_eq!(h["histories"][0]["labels"][2]["commit"], "v3");
    assert_eq!(
        h["histories"][0]["labels"][4]["commit"],
        commits[4].as_str()
    );

    // `list` shows each label's kernel and commit.
    let list = ok_on(db, &["list"]);
    let k4 = list.lines().find(|l| l.starts_with("k4 ")).unwrap();
    assert!(k4.ends_with(&format!(" @ {}", &commits[3][..12])), "{list}");
    assert!(
        list.lines()
            .any(|l| l.starts_with("k3 ") && l.ends_with(" @ v3")),
        "{list}"
    );

    // A label without a commit, a commit the tree does not have, a commit that is no
    // revision: one line each.
    ok_on(
        db,
        &[
            "run",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--label",
            "plain",
            "pipe:-l 200",
        ],
    );
    let args = ["history", "--by", "commit", "--tree", tree];
    let line = one_line_error(&common::kbench_on(db, &args), 2, &args);
    assert!(line.contains("no commit recorded for plain"), "{line}");
    let args = [
        "run",
        "--runs",
        "1",
        "--label",
        "x",
        "--commit",
        "two words",
        "pipe:-l 200",
    ];
    let line = one_line_error(&common::kbench_on(db, &args), 2, &args);
    assert!(line.contains("is not a git revision"), "{line}");
    let elsewhere = temp.dir().join("other");
    std::fs::create_dir(&elsewhere).unwrap();
    git(&elsewhere, &["init", "-q"]);
    let args = [
        "history",
        "--by",
        "commit",
        "--tree",
        elsewhere.to_str().unwrap(),
        "k1",
        "k2",
    ];
    let line = one_line_error(&common::kbench_on(db, &args), 2, &args);
    assert!(line.contains("no commit"), "{line}");
}
