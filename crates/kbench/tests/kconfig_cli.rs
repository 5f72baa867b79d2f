//! Kernel configs end to end: sessions keep the config of the kernel they ran on
//! (`$KBENCH_KERNEL_CONFIG`, /proc/config.gz or /boot/config-RELEASE, under
//! `$KBENCH_SYSROOT`), and `kbench compare` lists the options two labels' kernels set
//! differently, in text and JSON; the configs survive export and import. The last
//! test compares the configs of the two real Debian cloud kernels that
//! scripts/fetch-kernels.sh caches.
mod common;
use common::{cached_file, home_kernel_cache, stdout_ok, text, TempDb};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

const BASE_CONFIG: &str = "\
#
# Linux/x86 6.1.0 Kernel Configuration
#
CONFIG_LOCALVERSION=\"\"
CONFIG_HZ_250=y
CONFIG_HZ=250
CONFIG_EXT4_FS=y
CONFIG_PREEMPT_VOLUNTARY=y
# CONFIG_PREEMPT is not set
# CONFIG_KASAN is not set
CONFIG_NR_CPUS=64
";

const NEW_CONFIG: &str = "\
#
# Linux/x86 6.1.0 Kernel Configuration
#
CONFIG_LOCALVERSION=\"+patched\"
CONFIG_HZ_1000=y
CONFIG_HZ=1000
CONFIG_EXT4_FS=m
CONFIG_PREEMPT=y
CONFIG_NR_CPUS=64
";

/// Changed values first, then the options set on one side only, each in name order.
const EXPECTED: [(&str, &str, &str); 7] = [
    ("CONFIG_EXT4_FS", "y", "m"),
    ("CONFIG_HZ", "250", "1000"),
    ("CONFIG_LOCALVERSION", "\"\"", "\"+patched\""),
    ("CONFIG_HZ_1000", "n", "y"),
    ("CONFIG_HZ_250", "y", "n"),
    ("CONFIG_PREEMPT", "n", "y"),
    ("CONFIG_PREEMPT_VOLUNTARY", "y", "n"),
];

/// A temporary database whose kbench runs see only the variables that steer the
/// kernel config a test gives them.
struct Db(TempDb);

impl std::ops::Deref for Db {
    type Target = TempDb;

    fn deref(&self) -> &TempDb {
        &self.0
    }
}

impl Db {
    fn new() -> Db {
        Db(TempDb::new())
    }

    /// kbench with this database and the environment variables given (the others
    /// that steer it removed).
    fn kbench_env(&self, args: &[&str], env: &[(&str, &Path)]) -> Output {
        let mut cmd = self.command(args);
        cmd.env_remove("KBENCH_KERNEL_CONFIG")
            .env_remove("KBENCH_SYSROOT");
        for (name, value) in env {
            cmd.env(name, value);
        }
        cmd.output().expect("run kbench")
    }

    fn ok_env(&self, args: &[&str], env: &[(&str, &Path)]) -> String {
        stdout_ok(self.kbench_env(args, env), args)
    }

    /// One exec session of `true` under `label`, its kernel config from `env`.
    fn exec_session(&self, label: &str, env: &[(&str, &Path)]) {
        self.ok_env(
            &["exec", "--label", label, "--runs", "2", "--", "true"],
            env,
        );
    }

    fn compare_json(&self, base: &str, new: &str) -> serde_json::Value {
        let out = self.ok_env(&["compare", base, new, "--format", "json"], &[]);
        serde_json::from_str(&out).expect("JSON")
    }
}

fn gzip(text: &str) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(text.as_bytes()).unwrap();
    enc.finish().unwrap()
}

/// (option, base, new) of every difference in a compare's JSON.
fn differences(report: &serde_json::Value) -> Vec<(String, String, String)> {
    let field = |d: &serde_json::Value, name: &str| d[name].as_str().unwrap().to_string();
    report["config_differences"]["differences"]
        .as_array()
        .unwrap_or_else(|| panic!("no differences: {}", report["config_differences"]))
        .iter()
        .map(|d| (field(d, "option"), field(d, "base"), field(d, "new")))
        .collect()
}

fn expected() -> Vec<(String, String, String)> {
    EXPECTED
        .iter()
        .map(|(o, b, n)| (o.to_string(), b.to_string(), n.to_string()))
        .collect()
}

/// The text with each run of whitespace as one space: wrapped lines read as one.
fn unwrapped(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn compare_lists_the_options_the_two_kernels_set_differently() {
    let db = Db::new();
    let base = db.file("base.config", BASE_CONFIG.as_bytes());
    // A gzip file, as /proc/config.gz is, reads as well.
    let new = db.file("new.config.gz", &gzip(NEW_CONFIG));
    for (label, config) in [("base", &base), ("new", &new)] {
        db.ok_env(
            &[
                "run",
                "--label",
                label,
                "--runs",
                "2",
                "--warmup",
                "0",
                "pipe:-l 1000",
            ],
            &[("KBENCH_KERNEL_CONFIG", config)],
        );
    }
    assert_eq!(db.count("SELECT count(*) FROM kernel_configs"), 2);
    assert_eq!(
        db.count("SELECT count(*) FROM sessions WHERE kernel_config_hash IS NOT NULL"),
        2
    );

    let report = db.compare_json("base", "new");
    assert_eq!(report["config_differences"]["status"], "compared");
    assert_eq!(differences(&report), expected());
    let counts = &report["config_differences"];
    assert_eq!(
        (
            &counts["changed"],
            &counts["only_base"],
            &counts["only_new"]
        ),
        (&3.into(), &2.into(), &2.into())
    );
    assert_eq!(
        (&counts["base_options_set"], &counts["new_options_set"]),
        (&6.into(), &6.into())
    );

    let compact = unwrapped(&db.ok_env(&["compare", "base", "new"], &[]));
    assert!(
        compact.contains(
            "kernel config: 7 options differ (CONFIG_EXT4_FS y -> m, CONFIG_HZ 250 -> 1000, \
             CONFIG_LOCALVERSION \"\" -> \"+patched\", ...; --full lists all)"
        ),
        "{compact}"
    );
    let full = db.ok_env(&["compare", "base", "new", "--full"], &[]);
    let section = full
        .split("Kernel config:\n")
        .nth(1)
        .expect("a config section");
    assert!(
        unwrapped(section).starts_with(
            "7 options differ: 3 changed, 2 set in base only, 2 set in new only; sha256 "
        ),
        "{section}"
    );
    for (option, base, new) in EXPECTED {
        assert!(
            section.contains(&format!("  {option} {base} -> {new}\n")),
            "{option}: {section}"
        );
    }
    let markdown = db.ok_env(&["compare", "base", "new", "--format", "markdown"], &[]);
    assert!(
        markdown.contains("kernel config: 7 options differ"),
        "{markdown}"
    );

    // Exported and imported under other labels, the sessions keep their configs.
    for (label, copy) in [("base", "base-copy"), ("new", "new-copy")] {
        let export = db.ok_env(&["export", label, "--format", "json"], &[]);
        let file = db.file(&format!("{label}.json"), export.as_bytes());
        db.ok_env(&["import", file.to_str().unwrap(), "--label", copy], &[]);
    }
    assert_eq!(db.count("SELECT count(*) FROM kernel_configs"), 2);
    let copied = db.compare_json("base-copy", "new-copy");
    assert_eq!(differences(&copied), expected());
}

#[test]
fn the_config_comes_from_the_sysroot_boot_or_proc_and_one_kernel_gives_none() {
    let db = Db::new();
    // A machine whose kernel has /boot/config-RELEASE and no /proc/config.gz.
    db.file(
        "boot-machine/proc/sys/kernel/osrelease",
        b"6.1.0-57-cloud-amd64\n",
    );
    db.file(
        "boot-machine/boot/config-6.1.0-57-cloud-amd64",
        BASE_CONFIG.as_bytes(),
    );
    // One that has /proc/config.gz, which comes before its /boot config.
    db.file("proc-machine/proc/sys/kernel/osrelease", b"6.1.0-58\n");
    db.file("proc-machine/proc/config.gz", &gzip(NEW_CONFIG));
    db.file("proc-machine/boot/config-6.1.0-58", b"CONFIG_OTHER=y\n");
    let root = |name: &str| db.dir().join(name);
    let (boot_root, proc_root) = (root("boot-machine"), root("proc-machine"));
    db.exec_session("base", &[("KBENCH_SYSROOT", &boot_root)]);
    db.exec_session("new", &[("KBENCH_SYSROOT", &proc_root)]);
    // A second session of the same kernel shares its config's row.
    db.exec_session("new", &[("KBENCH_SYSROOT", &proc_root)]);
    assert_eq!(db.count("SELECT count(*) FROM kernel_configs"), 2);
    assert_eq!(differences(&db.compare_json("base", "new")), expected());

    // A kernel with neither: its sessions' config is unknown, and compare says so.
    db.file("bare-machine/proc/sys/kernel/osrelease", b"6.1.0-58\n");
    db.exec_session("bare", &[("KBENCH_SYSROOT", &root("bare-machine"))]);
    let report = db.compare_json("base", "bare");
    assert_eq!(report["config_differences"]["status"], "unknown");
    assert_eq!(
        report["config_differences"]["sides"],
        serde_json::json!(["new"])
    );
    let compact = unwrapped(&db.ok_env(&["compare", "base", "bare"], &[]));
    assert!(
        compact.contains("kernel config: not compared, unknown for bare"),
        "{compact}"
    );
}

#[test]
fn a_run_keeps_the_running_kernels_config() {
    let db = Db::new();
    db.exec_session("here", &[]);
    let host = kbench_sys::kconfig::read_running(&kbench_sys::Sysroot::host());
    let stored: Option<String> = db
        .sqlite()
        .query_row("SELECT kernel_config_hash FROM sessions", [], |r| r.get(0))
        .unwrap();
    match host {
        Some(config) => {
            eprintln!("this kernel's config: {}", config.path.display());
            assert_eq!(stored, Some(kbench_store::config_hash(&config.text)));
        }
        None => {
            eprintln!("this kernel has neither /proc/config.gz nor /boot/config-RELEASE");
            assert_eq!(stored, None);
        }
    }
}

#[test]
fn a_kernel_config_variable_naming_no_config_starts_nothing() {
    let db = Db::new();
    let not_config = db.file("notes.txt", b"hello\n");
    let missing = db.dir().join("missing.config");
    for file in [&not_config, &missing] {
        let out = db.kbench_env(
            &["exec", "--label", "x", "--runs", "1", "--", "true"],
            &[("KBENCH_KERNEL_CONFIG", file)],
        );
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("$KBENCH_KERNEL_CONFIG: kernel config"),
            "{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    assert_eq!(db.count("SELECT count(*) FROM sessions"), 0);
}

/// The cached linux-image .debs of scripts/fetch-kernels.sh: `None` (said on stderr)
/// only when the cache is absent and `$KBENCH_KERNEL_CACHE` unset; CI sets it, so
/// there a missing kernel fails the test.
fn debian_kernels() -> Option<(PathBuf, PathBuf)> {
    let set = std::env::var_os("KBENCH_KERNEL_CACHE").filter(|v| !v.is_empty());
    let dir = set
        .clone()
        .map(PathBuf::from)
        .unwrap_or_else(home_kernel_cache);
    match (
        cached_file(&dir, "linux-image-6.1.0-", ".deb"),
        cached_file(&dir, "linux-image-6.12.", ".deb"),
    ) {
        (Some(a), Some(b)) => Some((a, b)),
        _ if set.is_some() => panic!(
            "$KBENCH_KERNEL_CACHE is {} but holds no 6.1 and 6.12 linux-image .deb",
            dir.display()
        ),
        _ => {
            eprintln!(
                "SKIP: no 6.1 and 6.12 kernel .deb in {} (run scripts/fetch-kernels.sh)",
                dir.display()
            );
            None
        }
    }
}

/// The options whose assignment lines differ between two configs, by line sets: no
/// parser, and `# ... is not set` and absent alike left out.
fn options_differing_by_lines(a: &str, b: &str) -> BTreeSet<String> {
    let assignments = |text: &str| -> BTreeSet<String> {
        text.lines()
            .filter(|l| l.starts_with("CONFIG_") && !l.ends_with("=n"))
            .map(str::to_string)
            .collect()
    };
    let (la, lb) = (assignments(a), assignments(b));
    la.symmetric_difference(&lb)
        .map(|l| l.split('=').next().unwrap().to_string())
        .collect()
}

#[test]
fn the_two_debian_cloud_kernels_configs_differ_in_hundreds_of_options() {
    let Some((old, new)) = debian_kernels() else {
        return;
    };
    let db = Db::new();
    let mut texts = Vec::new();
    for (label, deb) in [("v6.1", &old), ("v6.12", &new)] {
        let image = kbench_boot::kernel_from_path(deb).unwrap();
        let config = image.config.expect("the package's /boot/config-RELEASE");
        let parsed = kbench_sys::kconfig::KernelConfig::parse(&config);
        assert_eq!(parsed.ignored_lines(), 0, "{}", deb.display());
        let file = db.file(&format!("{label}.config"), config.as_bytes());
        db.exec_session(label, &[("KBENCH_KERNEL_CONFIG", &file)]);
        texts.push(config);
    }
    let report = db.compare_json("v6.1", "v6.12");
    let listed: BTreeSet<String> = differences(&report)
        .into_iter()
        .map(|(option, _, _)| option)
        .collect();
    let by_lines = options_differing_by_lines(&texts[0], &texts[1]);
    let c = &report["config_differences"];
    eprintln!(
        "{} and {}: {} options differ ({} changed, {} set in 6.1 only, {} in 6.12 only)",
        old.display(),
        new.display(),
        listed.len(),
        c["changed"],
        c["only_base"],
        c["only_new"]
    );
    assert_eq!(listed, by_lines);
    assert!(listed.len() > 100, "{}", listed.len());
    // The compilers differ, so does what they are named.
    assert!(listed.contains("CONFIG_CC_VERSION_TEXT"), "{listed:?}");
    let compact = unwrapped(&db.ok_env(&["compare", "v6.1", "v6.12"], &[]));
    assert!(
        compact.contains(&format!("kernel config: {} options differ (", listed.len())),
        "{compact}"
    );
}
