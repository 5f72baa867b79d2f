//! `kbench lava-job` and the way back, `kbench import-console --label-a --label-b`.
//! There is no LAVA server here, so the job is checked against the keys LAVA documents
//! (its job-definition pages, named at each check), read back by two YAML parsers
//! (yaml-rust2, and PyYAML, LAVA's own, when python3-yaml is installed), and its
//! monitor regexes are run on the lines the real console emitter writes. The import is
//! checked on a LAVA-format log of an A/B job whose boots carry real run records.
mod common;
#[path = "../../kbench-store/tests/pg/mod.rs"]
mod pg;

use common::{kbench, one_line_error, text};
use kbench_console::{Emitter, Kind, READY_LINE};
use regex::Regex;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const KERNEL_A: &str = "https://lab.example/kernels/a/Image";
const KERNEL_B: &str = "https://lab.example/kernels/b/Image";
const DTB_A: &str = "https://lab.example/kernels/a/rk3399-rock-pi-4b.dtb";
const DTB_B: &str = "https://lab.example/kernels/b/rk3399-rock-pi-4b.dtb";
const INITRAMFS: &str = "https://lab.example/kbench/init.cpio.gz";

/// The options of a typical job: two boots per kernel, device trees, a suite.
fn job_args() -> Vec<&'static str> {
    vec![
        "lava-job",
        "--kernel-a",
        KERNEL_A,
        "--kernel-b",
        KERNEL_B,
        "--initramfs",
        INITRAMFS,
        "--device-type",
        "rk3399-rock-pi-4b",
        "--boots",
        "2",
        "--dtb-a",
        DTB_A,
        "--dtb-b",
        DTB_B,
        "--label-a",
        "v6.12",
        "--label-b",
        "v6.12+patch",
        "--suite",
        "pipe:-l 2000 --placement same-cpu",
        "--suite",
        "ipi",
        "--runs",
        "7",
    ]
}

/// The job kbench writes for `args`, as YAML text and as parsed by yaml-rust2.
fn job(args: &[&str]) -> (String, Value) {
    let out = kbench(args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let yaml = text(&out.stdout);
    let docs = yaml_rust2::YamlLoader::load_from_str(&yaml).expect("the job is YAML");
    assert_eq!(docs.len(), 1, "one document");
    (yaml, to_json(&docs[0]))
}

fn to_json(yaml: &yaml_rust2::Yaml) -> Value {
    use yaml_rust2::Yaml;
    match yaml {
        Yaml::String(s) => Value::String(s.clone()),
        Yaml::Integer(i) => json!(i),
        Yaml::Real(r) => json!(r.parse::<f64>().unwrap()),
        Yaml::Boolean(b) => json!(b),
        Yaml::Null => Value::Null,
        Yaml::Array(items) => Value::Array(items.iter().map(to_json).collect()),
        Yaml::Hash(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.as_str().expect("string keys").to_string(), to_json(v)))
                .collect(),
        ),
        other => panic!("unexpected YAML node {other:?}"),
    }
}

fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("a mapping: {value}"))
        .keys()
        .map(String::as_str)
        .collect()
}

fn assert_keys_within(value: &Value, documented: &[&str], what: &str) {
    for key in keys(value) {
        assert!(
            documented.contains(&key),
            "{what}: '{key}' is no documented key"
        );
    }
}

/// A LAVA timeout (timeouts.md, "Timeout syntax"): one unit with a whole number, and
/// `skip` ("Skipping timeout") where the job goes on past it.
fn timeout_minutes(value: &Value) -> u64 {
    assert_keys_within(value, &["minutes", "skip"], "a timeout");
    assert!(value.get("skip").is_none_or(Value::is_boolean), "{value}");
    let minutes = value["minutes"].as_u64().expect("a whole number");
    assert!(minutes >= 1);
    minutes
}

#[test]
fn the_job_has_the_documented_keys_and_boots_the_kernels_abba() {
    let (_, job) = job(&job_args());
    // job.md: the top-level elements, and which are required of a single-node job.
    assert_keys_within(
        &job,
        &[
            "job_name",
            "device_type",
            "device",
            "worker",
            "tags",
            "timeouts",
            "visibility",
            "priority",
            "context",
            "environment",
            "secrets",
            "metadata",
            "actions",
            "notify",
            "protocols",
        ],
        "top level",
    );
    for required in [
        "job_name",
        "device_type",
        "timeouts",
        "visibility",
        "actions",
    ] {
        assert!(job.get(required).is_some(), "job.md requires {required}");
    }
    let name = job["job_name"].as_str().unwrap();
    assert!((1..=200).contains(&name.chars().count()), "{name}");
    assert_eq!(job["device_type"], "rk3399-rock-pi-4b");
    assert_eq!(job["visibility"], "public");
    assert_eq!(job["priority"], "medium");
    // job.md, context: only the allowed context variables.
    assert_eq!(keys(&job["context"]), ["extra_kernel_args"]);
    let nonce = job["metadata"]["kbench.session"].as_str().unwrap();
    let cmdline = job["context"]["extra_kernel_args"].as_str().unwrap();
    assert!(
        cmdline.contains(&format!("kbench.session={nonce} "))
            && cmdline.contains("kbench.runs=7")
            && cmdline.contains("kbench.suite=\"pipe:-l 2000 --placement same-cpu;ipi\""),
        "{cmdline}"
    );
    assert_eq!(job["metadata"]["kbench.order"], "a b b a");
    assert_eq!(
        job["metadata"]["kbench.import"],
        "kbench import-console JOB.log --label-a v6.12 --label-b v6.12+patch"
    );

    // timeouts.md: `job` is required, named connection timeouts go under `connections`.
    let timeouts = &job["timeouts"];
    assert_keys_within(
        timeouts,
        &["job", "action", "actions", "connection", "connections"],
        "timeouts",
    );
    let job_minutes = timeout_minutes(&timeouts["job"]);
    let monitor_wait = timeout_minutes(&timeouts["connections"]["lava-test-monitor"]);

    let actions = job["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 3 * 4, "a deploy, a boot and a test per boot");
    let mut action_minutes = 0;
    let mut namespaces = Vec::new();
    for (boot, triple) in actions.chunks(3).enumerate() {
        let kinds: Vec<&str> = triple.iter().map(|a| keys(a)[0]).collect();
        assert_eq!(kinds, ["deploy", "boot", "test"], "boot {boot}");
        assert!(
            triple.iter().all(|a| keys(a).len() == 1),
            "one action per entry"
        );
        let (deploy, boot_action, test) =
            (&triple[0]["deploy"], &triple[1]["boot"], &triple[2]["test"]);
        let namespace = deploy["namespace"].as_str().unwrap().to_string();
        assert_eq!(boot_action["namespace"], namespace.as_str());
        assert_eq!(test["namespace"], namespace.as_str());
        namespaces.push(namespace.clone());
        // job.md, actions: the keys every action may have, and each type's own.
        let common = [
            "timeout",
            "timeouts",
            "namespace",
            "connection-namespace",
            "failure_retry",
            "failure_retry_interval",
            "repeat",
        ];
        // deploy/to-tftp.md
        let tftp = [
            "to",
            "kernel",
            "dtb",
            "dtbo",
            "modules",
            "ramdisk",
            "nfsrootfs",
            "persistent_nfs",
            "tee",
            "preseed",
            "extra_files",
            "os",
        ];
        assert_keys_within(deploy, &[&common[..], &tftp[..]].concat(), "deploy");
        // boot/method-u-boot.md and boot/common.md
        let u_boot = [
            "method",
            "commands",
            "prompts",
            "auto_login",
            "reset",
            "transfer_overlay",
        ];
        assert_keys_within(boot_action, &[&common[..], &u_boot[..]].concat(), "boot");
        // test.md, Monitors
        assert_keys_within(test, &[&common[..], &["monitors"][..]].concat(), "test");
        action_minutes += timeout_minutes(&deploy["timeout"])
            + timeout_minutes(&boot_action["timeout"])
            + timeout_minutes(&test["timeout"]);

        let side = if boot == 0 || boot == 3 { "a" } else { "b" };
        assert!(
            namespace.ends_with(&format!("-{side}")),
            "ABBA: {namespace}"
        );
        let (kernel, dtb) = if side == "a" {
            (KERNEL_A, DTB_A)
        } else {
            (KERNEL_B, DTB_B)
        };
        assert_eq!(deploy["to"], "tftp");
        assert_keys_within(&deploy["kernel"], &["url", "type", "compression"], "kernel");
        assert_eq!(deploy["kernel"]["url"], kernel);
        assert_eq!(deploy["kernel"]["type"], "image");
        assert_eq!(keys(&deploy["dtb"]), ["url"]);
        assert_eq!(deploy["dtb"]["url"], dtb);
        let ramdisk = &deploy["ramdisk"];
        assert_keys_within(
            ramdisk,
            &[
                "url",
                "compression",
                "header",
                "install_modules",
                "install_overlay",
            ],
            "ramdisk",
        );
        assert_eq!(ramdisk["url"], INITRAMFS);
        assert_eq!(ramdisk["compression"], "gz");
        assert_eq!(ramdisk["install_overlay"], false);
        assert_eq!(ramdisk["install_modules"], false);
        assert_eq!(boot_action["method"], "u-boot");
        assert_eq!(boot_action["commands"], "ramdisk");

        let monitors = test["monitors"].as_array().unwrap();
        assert_eq!(monitors.len(), 1);
        let monitor = &monitors[0];
        assert_eq!(
            keys(monitor),
            ["end", "fixupdict", "name", "pattern", "start"]
        );
        let name = monitor["name"].as_str().unwrap();
        assert!(
            name.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)),
            "a suite name LAVA keeps as it is: {name}"
        );
        for (_, result) in monitor["fixupdict"].as_object().unwrap() {
            assert!(["pass", "fail", "skip", "unknown"].contains(&result.as_str().unwrap()));
        }
        for key in ["start", "end", "pattern"] {
            assert_eq!(
                monitor[key],
                monitors_of(&job)[0][key],
                "one monitor for all boots"
            );
        }
        // A test that times out ends by its own, skippable, timeout: the next boot runs.
        assert_eq!(test["timeout"]["skip"], true);
        assert!(
            deploy["timeout"].get("skip").is_none() && boot_action["timeout"].get("skip").is_none()
        );
        assert!(monitor_wait > timeout_minutes(&test["timeout"]));
    }
    // timeouts.md: no action timeout is larger than the job's, and all of them fit.
    assert!(
        action_minutes <= job_minutes,
        "{action_minutes} > {job_minutes}"
    );
    let mut distinct = namespaces.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "a namespace per boot: {namespaces:?}");
    assert!(
        namespaces.iter().all(|n| n != "common"),
        "`common` is LAVA's own"
    );
}

fn monitors_of(job: &Value) -> Vec<&Value> {
    job["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a.get("test"))
        .map(|t| &t["monitors"][0])
        .collect()
}

#[test]
fn options_change_what_they_say() {
    let mut args = job_args();
    args.retain(|a| !a.starts_with("--dtb") && !a.contains(".dtb"));
    args.extend([
        "--quick",
        "--kernel-type",
        "zimage",
        "--initramfs-compression",
        "none",
        "--initramfs-uboot-header",
        "--priority",
        "70",
        "--visibility",
        "group:kernel,lab",
        "--job-name",
        "on",
        "--boot-timeout-minutes",
        "3",
        "--test-timeout-minutes",
        "90",
        "--kernel-arg",
        "earlycon",
    ]);
    args.retain(|a| !a.starts_with("pipe:") && *a != "ipi");
    while let Some(i) = args.iter().position(|a| *a == "--suite") {
        args.remove(i);
    }
    let (_, job) = job(&args);
    assert_eq!(
        job["job_name"], "on",
        "a YAML 1.1 boolean spelling stays a string"
    );
    assert_eq!(job["priority"], 70);
    assert_eq!(job["visibility"], json!({"group": ["kernel", "lab"]}));
    let cmdline = job["context"]["extra_kernel_args"].as_str().unwrap();
    assert!(
        cmdline.contains(" kbench.quick") && cmdline.ends_with(" earlycon"),
        "{cmdline}"
    );
    assert!(!cmdline.contains("kbench.suite"), "{cmdline}");
    assert_eq!(
        job["timeouts"]["connections"]["lava-test-monitor"]["minutes"],
        91
    );
    let deploy = &job["actions"][0]["deploy"];
    assert_eq!(deploy["kernel"]["type"], "zimage");
    assert!(deploy.get("dtb").is_none());
    assert!(deploy["ramdisk"].get("compression").is_none());
    assert_eq!(deploy["ramdisk"]["header"], "u-boot");
    assert_eq!(job["actions"][1]["boot"]["timeout"]["minutes"], 3);
    assert_eq!(job["actions"][2]["test"]["timeout"]["minutes"], 90);
}

#[test]
fn pyyaml_reads_the_job_as_yaml_rust2_does() {
    let probe = Command::new("python3").args(["-c", "import yaml"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIP: no python3 with PyYAML (scripts/test.sh installs python3-yaml)");
        return;
    }
    let mut args = job_args();
    let label_b = args.iter().position(|a| *a == "v6.12+patch").unwrap();
    args[label_b] = "1:20";
    args.extend(["--job-name", "yes"]);
    let (yaml, job) = job(&args);
    let mut python = Command::new("python3")
        .args([
            "-c",
            "import sys, json, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut python.stdin.take().unwrap(), yaml.as_bytes()).unwrap();
    let out = python.wait_with_output().unwrap();
    assert!(out.status.success());
    let by_pyyaml: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(by_pyyaml, job);
    assert_eq!(
        by_pyyaml["metadata"]["kbench.label-b"], "1:20",
        "not sexagesimal 80"
    );
    assert_eq!(by_pyyaml["job_name"], "yes", "not true");
}

/// What LAVA's monitor does with a console stream (test.md, Monitors; its dispatcher
/// waits for `start`, then repeatedly takes whichever of `end` and `pattern` matches
/// first, `end` winning a tie, until `end`): the test cases it records.
fn lava_monitor_results(monitor: &Value, console: &str) -> Option<Vec<(String, String)>> {
    let start = Regex::new(monitor["start"].as_str().unwrap()).unwrap();
    let end = Regex::new(monitor["end"].as_str().unwrap()).unwrap();
    let pattern = Regex::new(monitor["pattern"].as_str().unwrap()).unwrap();
    let mut at = start.find(console)?.end();
    let mut results = Vec::new();
    loop {
        let next_end = end.find_at(console, at);
        let next_result = pattern.captures_at(console, at);
        match (next_end, next_result) {
            (Some(e), Some(c)) if c.get(0).unwrap().start() < e.start() => {
                let case = c["test_case_id"].to_lowercase();
                let raw = &c["result"];
                let result = monitor["fixupdict"][raw]
                    .as_str()
                    .unwrap_or(raw)
                    .to_string();
                results.push((case, result));
                at = c.get(0).unwrap().end();
            }
            (Some(_), _) => return Some(results),
            (None, _) => return None,
        }
    }
}

#[test]
fn the_monitor_matches_the_guests_lines_and_no_printk() {
    let (_, job) = job(&job_args());
    let monitor = monitors_of(&job)[0].clone();
    let nonce = job["metadata"]["kbench.session"].as_str().unwrap();
    let regex = |key: &str| Regex::new(monitor[key].as_str().unwrap()).unwrap();
    let (start, end, pattern) = (regex("start"), regex("end"), regex("pattern"));

    let mut emitter = Emitter::new(nonce);
    let begin = emitter.lines(Kind::Begin, &[b'{'; 700]);
    let record = emitter.lines(Kind::Record, b"{\"ops\":42}");
    let finish = emitter.lines(Kind::End, b"");
    assert!(begin.len() > 1, "a BEGIN in several parts");
    let mut failing = Emitter::new(nonce);
    let error = failing.lines(Kind::Error, b"preparing workers: No such file or directory");
    let mut stranger = Emitter::new("another-job");
    let foreign: Vec<String> = [Kind::Begin, Kind::End]
        .into_iter()
        .flat_map(|k| stranger.lines(k, b"{}"))
        .collect();
    let printk = [
        "[    0.000000] Linux version 6.12.0 (gcc 12.2.0) #1 SMP PREEMPT",
        "[    1.234567] random: crng init done",
        "[   12.500000] BEGIN END ERR 1/1",
        "U-Boot 2024.01 (Jan 08 2024 - 00:00:00 +0000)",
    ];

    assert!(start.is_match(READY_LINE));
    let caps = pattern.captures(&begin[0]).expect("BEGIN's first part");
    assert_eq!((&caps["result"], &caps["test_case_id"]), ("BEGIN", "BEGIN"));
    let after_printk = format!("[    2.000000] rcu: stall{}", error[0]);
    let caps = pattern
        .captures(&after_printk)
        .expect("an ERR, even after a printk on its line");
    assert_eq!(&caps["result"], "ERR");
    for line in begin[1..].iter().chain(&record).chain(&finish) {
        assert!(!pattern.is_match(line), "{line}");
    }
    assert!(end.is_match(&finish[0]));
    for line in begin.iter().chain(&record).chain(&error) {
        assert!(!end.is_match(line), "{line}");
    }
    for line in printk
        .iter()
        .copied()
        .chain(foreign.iter().map(String::as_str))
    {
        for (name, re) in [("start", &start), ("end", &end), ("pattern", &pattern)] {
            assert!(!re.is_match(line), "{name} matched {line}");
        }
    }

    // The whole of one boot as LAVA reads it: results only after the ready line.
    let console: String = printk
        .iter()
        .map(|l| l.to_string())
        .chain([READY_LINE.to_string()])
        .chain(begin.iter().cloned())
        .chain(["[   30.000000] printk between two records".to_string()])
        .chain(record.iter().cloned())
        .chain(finish.iter().cloned())
        .map(|l| l + "\r\n")
        .collect();
    assert_eq!(
        lava_monitor_results(&monitor, &console),
        Some(vec![("begin".to_string(), "pass".to_string())])
    );
    let failed: String = [READY_LINE.to_string()]
        .into_iter()
        .chain(error.iter().cloned())
        .chain(failing.lines(Kind::End, b""))
        .map(|l| l + "\r\n")
        .collect();
    assert_eq!(
        lava_monitor_results(&monitor, &failed),
        Some(vec![("err".to_string(), "fail".to_string())])
    );
    let no_end = console.replace(&finish[0], "");
    assert_eq!(lava_monitor_results(&monitor, &no_end), None, "times out");
}

#[test]
fn bad_options_are_one_line_and_exit_2() {
    let with = |replace: &str, by: &str| -> Vec<String> {
        let mut args: Vec<String> = job_args().iter().map(|a| a.to_string()).collect();
        if let Some(i) = args.iter().position(|a| a == replace) {
            args[i] = by.to_string();
        } else {
            args.extend(by.split(' ').map(str::to_string));
        }
        args
    };
    let cases = [
        with(KERNEL_A, "scp://lab/Image"),
        with(KERNEL_B, "lab.example/Image"),
        with(INITRAMFS, "http://lab/init cpio.gz"),
        with(DTB_B, "file:dtb"),
        with("2", "0"),
        with("7", "0"),
        with("v6.12+patch", "v6.12"),
        with("v6.12", "bad label"),
        with("rk3399-rock-pi-4b", "rock pi"),
        with("ipi", "nosuchworkload"),
        with("ipi", "pipe:-l 10;ipi"),
        with("ipi", "pipe:--no-such-option"),
        with("--priority", "--priority urgent"),
        with("--priority", "--priority 101"),
        with("--visibility", "--visibility group:"),
        with("--kernel-type", "--kernel-type bzimage"),
        with("--boot-timeout-minutes", "--boot-timeout-minutes 0"),
        with("--kernel-arg", "--kernel-arg it's"),
        with("--job-name", &format!("--job-name {}", "x".repeat(201))),
        with("--quick", "--quick"),
    ];
    let mut no_dtb_b: Vec<String> = job_args().iter().map(|a| a.to_string()).collect();
    let i = no_dtb_b.iter().position(|a| a == "--dtb-b").unwrap();
    no_dtb_b.drain(i..i + 2);
    for args in cases.iter().chain([&no_dtb_b]) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = kbench(&args);
        one_line_error(&out, 2, &args);
        assert!(out.stdout.is_empty(), "{args:?}: no job on stdout");
    }
}

#[test]
fn output_goes_to_the_file_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("job.yaml");
    let mut args = job_args();
    args.extend(["-o", file.to_str().unwrap()]);
    let out = kbench(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(
        written.starts_with("job_name: ") && written.ends_with('\n'),
        "{written}"
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("a b b a")
            && stderr.contains("kbench import-console JOB.log --label-a v6.12"),
        "{stderr}"
    );
    let missing = dir.path().join("no/such/dir/job.yaml");
    args.pop();
    args.push(missing.to_str().unwrap());
    let out = kbench(&args);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr).lines().count(), 1);
}

/// Real run records: a short `kbench run` on this machine.
fn real_runs(
    dir: &Path,
) -> (
    Vec<kbench_store::StoredRun>,
    Option<kbench_record::SessionEnvironment>,
) {
    let db = dir.join("source.db");
    let out = kbench(&[
        "run",
        "pipe:-l 500 --placement same-cpu",
        "--runs",
        "3",
        "--label",
        "source",
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let store = kbench_store::Store::open(&db).unwrap();
    let runs: Vec<kbench_store::StoredRun> = store
        .runs("source")
        .unwrap()
        .into_iter()
        .map(|r| r.run)
        .collect();
    let environment = store.sessions("source").unwrap()[0].environment.clone();
    (runs, environment)
}

/// The console of one boot as the guest writes it: its BEGIN says which boot it is.
fn boot_console(
    nonce: &str,
    boot_id: &str,
    release: &str,
    runs: &[kbench_store::StoredRun],
    environment: &Option<kbench_record::SessionEnvironment>,
) -> Vec<String> {
    let session = kbench_store::NewSession {
        label: "guest".into(),
        kind: "boot".into(),
        boot_id: Some(boot_id.into()),
        started_unix_ns: 1_780_000_000_000_000_000,
        kbench_version: "0.1.0".into(),
        command_line: format!(
            "console=ttyS2,1500000n8 root=/dev/ram0 kbench.session={nonce} kbench.runs=3"
        ),
        seed: None,
        environment: environment.clone(),
        source: None,
        interleave_group: None,
        // As a guest makes it when its session begins.
        uuid: Some(kbench_store::store::new_session_uuid()),
    };
    let begin = json!({"version": 1, "kernel_release": release, "session": session});
    let mut emitter = Emitter::new(nonce);
    let mut lines = vec![
        "U-Boot 2024.01 (Jan 08 2024 - 00:00:00 +0000)".to_string(),
        "Starting kernel ...".to_string(),
        format!("[    0.000000] Linux version {release} (gcc 12.2.0) #1 SMP PREEMPT"),
        "[    2.100000] Freeing unused kernel memory: 4096K".to_string(),
        READY_LINE.to_string(),
    ];
    lines.extend(emitter.lines(Kind::Begin, begin.to_string().as_bytes()));
    for run in runs {
        lines.extend(emitter.lines(Kind::Record, &serde_json::to_vec(run).unwrap()));
    }
    lines.extend(emitter.lines(Kind::End, b""));
    lines.push("[   20.000000] reboot: Power down".into());
    lines
}

/// A LAVA job log (what `lavacli jobs logs` gives): one double-quoted flow mapping per
/// line, actions started with their namespace, console lines at level `target`.
fn lava_log(boots: &[(&str, Vec<String>)]) -> String {
    let entry = |level: &str, msg: &str| {
        format!("- {{\"dt\": \"2026-12-01T10:00:00.000000+00:00\", \"lvl\": \"{level}\", \"msg\": {}}}\n", serde_json::to_string(msg).unwrap())
    };
    let mut log = entry("info", "lava-dispatcher, installed at version: 2026.08");
    for (i, (namespace, console)) in boots.iter().enumerate() {
        let n = 3 * i + 1;
        log += &entry(
            "info",
            &format!("start: {n} tftp-deploy (timeout 00:10:00) [{namespace}]"),
        );
        log += &entry(
            "debug",
            &format!("start: {n}.1 download-retry (timeout 00:10:00) [{namespace}]"),
        );
        log += &entry(
            "info",
            &format!("end: {n} tftp-deploy (duration 00:00:04) [{namespace}]"),
        );
        log += &entry(
            "info",
            &format!(
                "start: {} uboot-action (timeout 00:05:00) [{namespace}]",
                n + 1
            ),
        );
        let (boot_lines, test_lines) = console.split_at(2.min(console.len()));
        for line in boot_lines {
            log += &entry("target", line);
        }
        log += &entry(
            "info",
            &format!(
                "start: {} lava-test-monitor (timeout 00:30:00) [{namespace}]",
                n + 2
            ),
        );
        log += &entry("info", "Waiting for start message: kbench: ready");
        for line in test_lines {
            log += &entry("target", line);
        }
        log += "- {\"dt\": \"2026-12-01T10:00:00.000000+00:00\", \"lvl\": \"results\", \"msg\": {\"case\": \"begin\", \"result\": \"pass\"}}\n";
        log += &format!("- {{\"dt\": \"2026-12-01T10:00:00.000000+00:00\", \"lvl\": \"feedback\", \"msg\": \"late output\", \"ns\": \"{namespace}\"}}\n");
    }
    log += &entry("info", "start: 99 finalize (timeout 00:10:00) [common]");
    log += &entry("target", "U-Boot 2024.01 (Jan 08 2024 - 00:00:00 +0000)");
    log
}

fn sqlite_count(db: &Path, sql: &str, label: &str) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(sql, [label], |r| r.get(0)).unwrap()
}

const MEASURED_SESSIONS: &str =
    "SELECT count(DISTINCT s.id) FROM sessions s JOIN runs r ON r.session_id = s.id
     WHERE s.label = ?1 AND r.error IS NULL AND r.warmup = 0";
const SESSIONS: &str = "SELECT count(*) FROM sessions WHERE label = ?1";
const BOOTS: &str = "SELECT count(DISTINCT boot_id) FROM sessions WHERE label = ?1";

/// The log of an ABBA job of four boots, each running real runs of this machine, and
/// each boot's console.
type Consoles = Vec<(&'static str, Vec<String>)>;
fn four_boot_job_log(dir: &Path) -> (PathBuf, Consoles) {
    let (runs, environment) = real_runs(dir);
    assert!(runs.iter().filter(|r| !r.warmup).count() >= 3);
    let nonce = "lava18ed24c28433b3131578";
    let release = |ns: &str| {
        if ns.ends_with("-a") {
            "6.12.0-a"
        } else {
            "6.12.0-b"
        }
    };
    let namespaces = ["kbench-01-a", "kbench-02-b", "kbench-03-b", "kbench-04-a"];
    let consoles: Consoles = namespaces
        .iter()
        .enumerate()
        .map(|(i, ns)| {
            (
                *ns,
                boot_console(
                    nonce,
                    &format!("boot-{i}"),
                    release(ns),
                    &runs,
                    &environment,
                ),
            )
        })
        .collect();
    let log_file = dir.join("job.log");
    std::fs::write(&log_file, lava_log(&consoles)).unwrap();
    (log_file, consoles)
}

#[test]
fn a_jobs_log_is_imported_straight_into_the_shared_store() {
    let Some(db) = pg::fresh_database("lava_import_console") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (log_file, _) = four_boot_job_log(dir.path());
    let import = || {
        kbench(&[
            "import-console",
            log_file.to_str().unwrap(),
            "--label-a",
            "base",
            "--label-b",
            "patched",
            "--db",
            &db,
        ])
    };
    let out = import();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let count = |sql: &str| pg::sql_value(&db, sql);
    assert_eq!(
        count("SELECT count(DISTINCT boot_id) FROM sessions WHERE label = 'patched'"),
        "2"
    );
    assert_eq!(
        count("SELECT count(*) FROM sessions WHERE console_log IS NULL"),
        "0",
        "every boot keeps its console log"
    );
    let compare = kbench(&["compare", "base", "patched", "--db", &db]);
    assert!(compare.status.success(), "{}", text(&compare.stderr));
    // The same log again: its boots' sessions are there, by their UUIDs.
    let again = import();
    let stderr = text(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is stored already"), "{stderr}");
    assert_eq!(count("SELECT count(*) FROM sessions"), "4");
}

#[test]
fn an_ab_jobs_log_is_imported_as_one_session_per_boot_under_its_kernels_label() {
    let dir = tempfile::tempdir().unwrap();
    let (log_file, consoles) = four_boot_job_log(dir.path());
    let log = log_file.to_str().unwrap();
    let db = dir.path().join("lab.db");
    let db_arg = db.to_str().unwrap();

    let out = kbench(&[
        "import-console",
        log,
        "--label-a",
        "base",
        "--label-b",
        "patched",
        "--commit-b",
        "v6.12-rc3-17-gdeadbeef",
        "--db",
        db_arg,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).trim(),
        "kbench import-console: 4 boot(s): 2 of base, 2 of patched, 0 failed"
    );
    // --commit-b went with kernel B's boots only (`history --by commit`).
    let commits: Vec<(String, Option<String>)> = rusqlite::Connection::open(&db)
        .unwrap()
        .prepare("SELECT label, json_extract(environment, '$.kernel_commit') FROM sessions")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (label, commit) in &commits {
        let expected = (label == "patched").then_some("v6.12-rc3-17-gdeadbeef");
        assert_eq!(commit.as_deref(), expected, "{commits:?}");
    }
    let args = [
        "import-console",
        log,
        "--label",
        "x",
        "--commit",
        "two words",
    ];
    let out = kbench(&[&args[..], &["--db", db_arg]].concat());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("is not a git revision"));
    for label in ["base", "patched"] {
        assert_eq!(sqlite_count(&db, MEASURED_SESSIONS, label), 2, "{label}");
        assert_eq!(sqlite_count(&db, BOOTS, label), 2, "{label}: two boots");
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    let environment: String = conn
        .query_row(
            "SELECT environment FROM sessions WHERE label = 'patched' LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        !environment.contains("kbench.session="),
        "the nonce is no environment difference"
    );
    let kinds: String = conn
        .query_row(
            "SELECT group_concat(DISTINCT kind) FROM sessions",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kinds, "lava");

    let compare = kbench(&[
        "compare", "base", "patched", "--format", "json", "--db", db_arg,
    ]);
    assert!(compare.status.success(), "{}", text(&compare.stderr));
    let report: Value = serde_json::from_slice(&compare.stdout).unwrap();
    for side in ["base", "new"] {
        assert_eq!(report[side]["boots"], 2, "{side}: {report}");
    }
    let rows = report["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        assert_eq!(
            row["design"],
            json!({"kind": "unpaired", "level": "boot"}),
            "boots are the units: {row}"
        );
    }

    let out = kbench(&["import-console", log, "--label", "all", "--db", db_arg]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "one label for two kernels' boots"
    );
    assert_eq!(
        text(&out.stderr).lines().count(),
        1,
        "{}",
        text(&out.stderr)
    );
    // A job of one's own (no kbench namespaces), in LAVA's double-quoted log format.
    let own_job = dir.path().join("own-job.log");
    std::fs::write(&own_job, lava_log(&[("boot1", consoles[1].1.clone())])).unwrap();
    let out = kbench(&[
        "import-console",
        own_job.to_str().unwrap(),
        "--label",
        "board",
        "--db",
        db_arg,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(sqlite_count(&db, MEASURED_SESSIONS, "board"), 1);
    let serial = dir.path().join("serial.log");
    std::fs::write(&serial, consoles[0].1.join("\n")).unwrap();
    let out = kbench(&[
        "import-console",
        serial.to_str().unwrap(),
        "--label-a",
        "x",
        "--label-b",
        "y",
        "--db",
        db_arg,
    ]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a serial capture names no kernel per boot"
    );
    assert_eq!(text(&out.stderr).lines().count(), 1);
    for labels in [
        &["--label-a", "x"][..],
        &["--label-a", "x", "--label-b", "x"],
        &["--label-a", "x", "--label-b", "bad label"],
        &["--label", "x", "--label-a", "y", "--label-b", "z"],
        &[],
    ] {
        let out = kbench(&[&["import-console", log, "--db", db_arg][..], labels].concat());
        assert_eq!(out.status.code(), Some(2), "{labels:?}");
        assert_eq!(text(&out.stderr).lines().count(), 1, "{labels:?}");
    }
    let before = sqlite_count(&db, SESSIONS, "base");
    assert_eq!(before, 2, "nothing was stored by the refused imports");
}

#[test]
fn a_boot_that_died_and_a_replayed_boot_are_stored_failed() {
    let dir = tempfile::tempdir().unwrap();
    let (runs, environment) = real_runs(dir.path());
    let nonce = "lava0042";
    let first = boot_console(nonce, "boot-0", "6.12.0-a", &runs, &environment);
    let second = boot_console(nonce, "boot-1", "6.12.0-b", &runs, &environment);
    let died = vec![
        "Starting kernel ...".to_string(),
        "[    1.000000] Kernel panic - not syncing: VFS: Unable to mount root fs".to_string(),
    ];
    let log = lava_log(&[
        ("kbench-01-a", first.clone()),
        ("kbench-02-b", second),
        ("kbench-03-b", died),
        ("kbench-04-a", first),
    ]);
    let log_file = dir.path().join("job.log");
    std::fs::write(&log_file, log).unwrap();
    let db = dir.path().join("lab.db");
    let out = kbench(&[
        "import-console",
        log_file.to_str().unwrap(),
        "--label-a",
        "base",
        "--label-b",
        "patched",
        "--db",
        db.to_str().unwrap(),
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("kbench-04-a") && stderr.contains("kbench-01-a"),
        "{stderr}"
    );
    assert!(stderr.contains("Kernel panic"), "{stderr}");
    assert_eq!(
        sqlite_count(&db, SESSIONS, "base"),
        2,
        "the replay is kept as a failed boot"
    );
    assert_eq!(sqlite_count(&db, MEASURED_SESSIONS, "base"), 1);
    assert_eq!(
        sqlite_count(&db, SESSIONS, "patched"),
        2,
        "the boot that died is kept"
    );
    assert_eq!(sqlite_count(&db, MEASURED_SESSIONS, "patched"), 1);
}
