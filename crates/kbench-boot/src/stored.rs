//! A boot's console log turned into what is stored of it: the guest's session under the
//! host's label, with what the guest and the host said of the boot in its environment,
//! and its runs; or, when the log cannot be trusted, a failed session saying why. Shared
//! by `kbench vm-ab` (its own boots) and `kbench import-console` (a board's).
use crate::qemu::ICOUNT_SHIFT;
use crate::qmp::VcpuPin;
use kbench_console::payload::Received;
use kbench_record::{
    counted_value, BootEnvironment, Clock, GuestUptimes, KernelSource, NewSession,
    SessionEnvironment, StoredRun,
};

/// The notice a TCG run carries, in the output and in its sessions.
pub const TCG_NOTICE: &str = "qemu ran under TCG (emulation): its timings measure the emulator, not the kernel; use the verdicts to check that both kernels work, not which is faster";

/// The notice a counted boot carries instead: what its figures are, and what they
/// cannot see.
pub const COUNTED_NOTICE: &str = "qemu ran under TCG with icount (--clock instructions): every time figure is the guest's instructions executed (1 ns of guest time = 1 instruction), repeatable from boot to boot and blind to the host's load; they cannot see caches, the TLB, branch prediction or memory latency";

/// What the reader of a boot's figures should know first, if anything: what a TCG
/// guest's timings measure, or what a counted clock counts.
pub fn boot_notice(accel: Option<&str>, clock: Clock) -> Option<&'static str> {
    match (clock, accel) {
        (Clock::Instructions, _) => Some(COUNTED_NOTICE),
        (Clock::Wall, Some("tcg")) => Some(TCG_NOTICE),
        (Clock::Wall, _) => None,
    }
}

/// What the host saw of a boot beyond its log.
#[derive(Debug, Default)]
pub struct HostView {
    /// Why the host gave up on the boot, or qemu died.
    pub failure: Option<String>,
    /// The vCPU threads pinned and where, for the record.
    pub vcpu_pins: Vec<VcpuPin>,
    /// Why qemu ran under the accelerator it did (`--accel auto`'s probe).
    pub accel_reason: Option<String>,
    /// Seconds from qemu's start to its exit, as the host timed them.
    pub qemu_wall_s: Option<f64>,
    /// The id of the machine qemu ran on (`kbench_sys::machine_id`): a guest with no
    /// id of its own (qemu gives it none) takes it, so that the guests of two hosts of
    /// one model are two machines.
    pub machine_id: Option<String>,
}

/// Where the sessions of booted kernels are stored, and what their logs must show.
#[derive(Debug, Clone, Copy)]
pub struct BootTarget<'a> {
    pub label: &'a str,
    /// The kernel release the boot must report; empty when unknown.
    pub expected_release: &'a str,
    /// qemu's accelerator, for a boot kbench started itself.
    pub accel: Option<&'a str>,
    /// The session kind: `vm-ab`, `console`, `lava`.
    pub kind: &'a str,
    /// The log holds other boots too (a board's capture of several): their lines are
    /// no reason to refuse this one's.
    pub shared_log: bool,
    /// The sha256 of the booted kernel's configuration (as the store keys configs),
    /// when it is known: a guest reporting another config booted another kernel.
    pub kernel_config_sha256: Option<&'a str>,
    /// The host's command line, which the session keeps.
    pub command_line: &'a str,
    /// Where the booted kernel came from, when the host knows (a bisection's commit).
    pub kernel: &'a KernelSource,
    /// What the guest's clock measured: a counted boot's time figures are stored as
    /// instructions.
    pub clock: Clock,
}

/// A boot as it is to be stored.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgedBoot {
    pub session: NewSession,
    /// The guest's runs, or the one failed `boot` run saying why the boot failed.
    pub runs: Vec<StoredRun>,
    /// Why this boot's results cannot be used, with how far it got.
    pub failure: Option<String>,
}

/// A boot that cannot be stored.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StoreBootError {
    #[error("the boot session {uuid} of {label} is stored already (the same console log twice?): storing it again would count its runs twice")]
    StoredAlready { uuid: String, label: String },
}

impl StoreBootError {
    /// Whether the user can fix it (exit status 2): every case is a log given twice.
    pub fn is_usage(&self) -> bool {
        matches!(self, StoreBootError::StoredAlready { .. })
    }
}

impl JudgedBoot {
    /// Reads one boot's log (the framed lines of `nonce`) and judges it. `now_unix_ns`
    /// starts the session of a guest that sent none.
    pub fn judge(
        target: &BootTarget<'_>,
        nonce: &str,
        log: &str,
        host: &HostView,
        now_unix_ns: u64,
    ) -> JudgedBoot {
        let parsed = kbench_console::parse(log, nonce);
        let received = Received::read(&parsed);
        let failure = failure(&parsed, &received, target, host);
        let mut session = boot_session(&received, target, host, now_unix_ns);
        // A failed boot (one that replayed another's output, or died) is a boot of its
        // own, and the complete log of the guest's session may come later.
        if failure.is_some() {
            session.uuid = None;
        }
        let runs = match &failure {
            None if target.clock == Clock::Instructions => {
                received.records.into_iter().map(counted_run).collect()
            }
            None => received.records,
            Some(reason) => vec![StoredRun {
                workload: "boot".into(),
                error: Some(reason.clone()),
                exit_status: Some(1),
                ..StoredRun::default()
            }],
        };
        JudgedBoot {
            session,
            runs,
            failure,
        }
    }

    /// Given the label the store already holds this session's identity under, if any:
    /// the same label is the same log stored twice; another is a copy, which becomes a
    /// session of its own.
    pub fn settle_identity(&mut self, stored_under: Option<&str>) -> Result<(), StoreBootError> {
        match (stored_under, &self.session.uuid) {
            (Some(label), Some(uuid)) if label == self.session.label => {
                Err(StoreBootError::StoredAlready {
                    uuid: uuid.clone(),
                    label: label.to_string(),
                })
            }
            (Some(_), _) => {
                self.session.uuid = None;
                Ok(())
            }
            (None, _) => Ok(()),
        }
    }
}

/// A run of a counted boot, its time figures as the instructions they are. The record
/// keeps the guest's own figures, in the guest's ns.
fn counted_run(mut run: StoredRun) -> StoredRun {
    for value in &mut run.values {
        *value = counted_value(value, ICOUNT_SHIFT);
    }
    run
}

/// Why this boot's results cannot be used, with how far it got, if they cannot.
fn failure(
    parsed: &kbench_console::Parsed,
    received: &Received,
    target: &BootTarget<'_>,
    host: &HostView,
) -> Option<String> {
    let foreign: &[String] = if target.shared_log {
        &[]
    } else {
        &parsed.other_nonces
    };
    let begin = received.begin.as_ref();
    let reported = Reported {
        runs: received.records.len(),
        planned: begin.and_then(|b| b.planned_runs),
    };
    boot_failure(
        parsed,
        foreign,
        host.failure.as_deref(),
        begin.is_some(),
        received.error.clone(),
        begin.and_then(|b| b.kernel_release.as_deref()),
        target.expected_release,
    )
    .or_else(|| {
        config_mismatch(
            begin.and_then(|b| b.kernel_config_sha256.as_deref()),
            target.kernel_config_sha256,
        )
    })
    .map(|reason| reported.explain(reason))
}

/// The boot's session: the guest's own, under the target's label, with what the guest
/// and the host said of the boot added to its environment.
fn boot_session(
    received: &Received,
    target: &BootTarget<'_>,
    host: &HostView,
    now_unix_ns: u64,
) -> NewSession {
    let mut session = received
        .begin
        .as_ref()
        .and_then(|b| b.session.clone())
        .unwrap_or_else(|| NewSession {
            // The workspace's version, which the binary shares.
            kbench_version: env!("CARGO_PKG_VERSION").to_string(),
            started_unix_ns: now_unix_ns,
            ..NewSession::default()
        });
    session.label = target.label.to_string();
    session.kind = target.kind.into();
    session.command_line = target.command_line.to_string();
    if let Some(env) = session.environment.as_mut() {
        add_boot_environment(env, received, target, host);
        env.kernel = target.kernel.clone();
    }
    session
}

fn add_boot_environment(
    env: &mut SessionEnvironment,
    received: &Received,
    target: &BootTarget<'_>,
    host: &HostView,
) {
    // Every boot has its own nonce: it proves the log's origin, and is no difference
    // between the kernels' environments.
    if let Some(cmdline) = env.snapshot.as_mut().and_then(|s| s.cmdline.as_mut()) {
        let kept: Vec<&str> = cmdline
            .split(' ')
            .filter(|w| !w.starts_with("kbench.session="))
            .collect();
        *cmdline = kept.join(" ");
    }
    if let Some(snapshot) = env.snapshot.as_mut() {
        if snapshot.machine_id.is_none() {
            snapshot.machine_id = host.machine_id.clone();
        }
    }
    let begin = received.begin.as_ref();
    // What the guest said of itself beyond the snapshot: its compiler line (which
    // /proc/version has), the governor it set, its channel and probe costs; BEGIN has
    // the uptime at /init, END the rest.
    let uptimes = match &received.end {
        Some(end) => end.uptime_s.map(|u| GuestUptimes {
            init: u.init,
            suite_start: u.suite_start,
            suite_end: u.suite_end,
            results: u.results,
        }),
        None => begin.and_then(|b| b.uptime_s).map(|u| GuestUptimes {
            init: u.init,
            ..GuestUptimes::default()
        }),
    };
    env.boot = BootEnvironment {
        proc_version: begin.and_then(|b| b.proc_version.clone()),
        vm_governor: begin.and_then(|b| b.governor.clone()),
        vm_channel: begin.and_then(|b| b.channel.clone()),
        vm_call_cost_ns: begin.and_then(|b| b.call_cost_ns),
        vm_kernel_config_sha256: begin.and_then(|b| b.kernel_config_sha256.clone()),
        vm_uptime_s: uptimes,
        // What the host saw of qemu.
        vm_accel: target.accel.map(String::from),
        vm_vcpu_pins: (!host.vcpu_pins.is_empty()).then(|| host.vcpu_pins.clone()),
        vm_accel_reason: host.accel_reason.clone(),
        vm_qemu_wall_s: host.qemu_wall_s,
        vm_notice: boot_notice(target.accel, target.clock).map(String::from),
        vm_clock: (target.clock == Clock::Instructions).then_some(Clock::Instructions),
        vm_icount_shift: (target.clock == Clock::Instructions).then_some(ICOUNT_SHIFT),
    };
}

/// Why a boot's results cannot be used, if they cannot.
fn boot_failure(
    parsed: &kbench_console::Parsed,
    foreign_nonces: &[String],
    host_failure: Option<&str>,
    begun: bool,
    guest_error: Option<String>,
    release: Option<&str>,
    expected_release: &str,
) -> Option<String> {
    if !foreign_nonces.is_empty() {
        return Some(format!(
            "the console log is of another boot (nonce {})",
            foreign_nonces.join(", ")
        ));
    }
    // What the guest's log says first; then what the host saw, which a panicked
    // kernel that hangs (panic=0) also needs: that the host gave up on it.
    let from_log = match (parsed.panics.first(), guest_error) {
        (Some(panic), _) => Some(format!("the kernel died: {panic}")),
        (None, Some(error)) => Some(format!("kbench in the guest: {error}")),
        (None, None) => None,
    };
    match (from_log, host_failure) {
        (Some(log), Some(host)) => return Some(format!("{log}; {host}")),
        (Some(log), None) => return Some(log),
        (None, Some(host)) => return Some(host.to_string()),
        (None, None) => {}
    }
    if !begun {
        return Some("no BEGIN record: kbench never reported from the guest".into());
    }
    if let Some(release) = release {
        if !expected_release.is_empty() && release != expected_release {
            return Some(format!("booted kernel {release}, not {expected_release}"));
        }
    }
    if !parsed.complete {
        return Some(format!(
            "incomplete results: {} message(s) lost, {} bad line(s), END {}",
            parsed.lost_messages,
            parsed.bad_lines,
            if parsed.ended { "seen" } else { "missing" }
        ));
    }
    None
}

/// A guest whose /proc/config.gz is not the config the host was given booted another
/// kernel than the one meant (or the wrong config was given).
fn config_mismatch(guest: Option<&str>, given: Option<&str>) -> Option<String> {
    let (guest, given) = (guest?, given?);
    (guest != given).then(|| {
        format!("the guest's /proc/config.gz (sha256 {guest}) is not the kernel config given (sha256 {given})")
    })
}

/// How far a boot got, for the reason it failed.
struct Reported {
    runs: usize,
    planned: Option<u64>,
}

impl Reported {
    fn explain(&self, reason: String) -> String {
        match self.planned {
            Some(planned) => format!("{reason} ({} of {planned} runs reported)", self.runs),
            None => reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_console::payload::{Begin, BeginUptimes, End, EndUptimes, Outgoing};
    use kbench_console::Emitter;

    const TARGET: BootTarget<'static> = BootTarget {
        label: "vm-a",
        expected_release: "6.12.0",
        accel: Some("tcg"),
        kind: "vm-ab",
        shared_log: false,
        kernel_config_sha256: None,
        command_line: "kbench vm-ab",
        kernel: &KernelSource {
            kernel_commit: None,
        },
        clock: Clock::Wall,
    };

    fn guest_log(begin: &Begin, runs: &[StoredRun], end: Option<&End>) -> String {
        let mut emitter = Emitter::new("n1");
        let messages = std::iter::once(Outgoing::Begin(begin))
            .chain(runs.iter().map(Outgoing::Record))
            .chain([Outgoing::End(end)]);
        let mut log = String::new();
        for message in messages {
            for line in emitter.lines(message.kind(), &message.payload().unwrap()) {
                log += &line;
                log += "\n";
            }
        }
        log
    }

    fn begin() -> Begin {
        Begin {
            kernel_release: Some("6.12.0".into()),
            governor: Some("none".into()),
            planned_runs: Some(2),
            uptime_s: Some(BeginUptimes { init: Some(1.0) }),
            session: Some(NewSession {
                label: "guest".into(),
                environment: serde_json::from_value(serde_json::json!({
                    "cmdline": "quiet kbench.session=n1 kbench.runs=1"
                }))
                .unwrap(),
                uuid: Some("u-1".into()),
                ..NewSession::default()
            }),
            ..Begin::default()
        }
    }

    fn run() -> StoredRun {
        StoredRun {
            workload: "sched/pipe".into(),
            exit_status: Some(0),
            ..StoredRun::default()
        }
    }

    #[test]
    fn an_intact_boot_keeps_the_guests_session_and_runs_under_the_hosts_label() {
        let end = End {
            uptime_s: Some(EndUptimes {
                init: Some(1.0),
                results: Some(9.5),
                ..EndUptimes::default()
            }),
        };
        let log = guest_log(&begin(), &[run(), run()], Some(&end));
        let host = HostView {
            qemu_wall_s: Some(10.0),
            ..HostView::default()
        };
        let boot = JudgedBoot::judge(&TARGET, "n1", &log, &host, 7);
        assert_eq!(boot.failure, None);
        assert_eq!(boot.runs, [run(), run()]);
        let session = &boot.session;
        assert_eq!(
            (
                session.label.as_str(),
                session.kind.as_str(),
                session.uuid.as_deref()
            ),
            ("vm-a", "vm-ab", Some("u-1"))
        );
        // As stored: the snapshot's keys and the boot's beside them.
        let env = session.environment.as_ref().unwrap().to_json();
        assert_eq!(
            env["cmdline"], "quiet kbench.runs=1",
            "the nonce is dropped"
        );
        assert_eq!(env["vm_governor"], "none");
        assert_eq!(env["vm_accel"], "tcg");
        assert_eq!(env["vm_notice"], TCG_NOTICE);
        assert_eq!(env["vm_qemu_wall_s"], 10.0);
        assert_eq!(
            env["vm_uptime_s"],
            serde_json::json!({"init": 1.0, "results": 9.5}),
            "END's uptimes"
        );
        assert!(env.get("vm_channel").is_none(), "not sent, not stored");
    }

    #[test]
    fn a_counted_boot_stores_its_times_as_instructions_and_says_its_clock() {
        let mut timed = run();
        timed.values = vec![
            kbench_record::Value {
                metric: "usecs_per_op".into(),
                value: 10.833,
                unit: "us/op".into(),
                higher_is_better: false,
                primary: true,
            },
            kbench_record::Value {
                metric: "csw_per_op".into(),
                value: 2.0,
                unit: "csw/op".into(),
                higher_is_better: false,
                primary: false,
            },
        ];
        let log = guest_log(&begin(), &[timed], Some(&End::default()));
        let counted = BootTarget {
            clock: Clock::Instructions,
            ..TARGET
        };
        let boot = JudgedBoot::judge(&counted, "n1", &log, &HostView::default(), 7);
        assert_eq!(boot.failure, None);
        let values: Vec<(&str, f64, &str)> = boot.runs[0]
            .values
            .iter()
            .map(|v| (v.metric.as_str(), v.value, v.unit.as_str()))
            .collect();
        assert_eq!(
            values,
            [
                ("insns_per_op", 10_833.0, "insns/op"),
                ("csw_per_op", 2.0, "csw/op")
            ]
        );
        let env = boot.session.environment.unwrap();
        assert_eq!(env.clock(), Clock::Instructions);
        let json = env.to_json();
        assert_eq!(json["vm_clock"], "instructions");
        assert_eq!(json["vm_icount_shift"], 0);
        assert_eq!(json["vm_notice"], COUNTED_NOTICE);
        // A timed boot says nothing of a clock: absent is wall time, as before.
        let timed = JudgedBoot::judge(&TARGET, "n1", &log, &HostView::default(), 7);
        let env = timed.session.environment.unwrap();
        assert_eq!(env.clock(), Clock::Wall);
        assert!(env.to_json().get("vm_clock").is_none());
        assert_eq!(timed.runs[0].values[0].metric, "usecs_per_op");
    }

    #[test]
    fn a_boot_that_failed_is_one_failed_run_and_an_identity_of_its_own() {
        let mut wrong = begin();
        wrong.kernel_release = Some("6.1.0".into());
        let log = guest_log(&wrong, &[run()], None);
        let boot = JudgedBoot::judge(&TARGET, "n1", &log, &HostView::default(), 7);
        assert_eq!(
            boot.failure.as_deref(),
            Some("booted kernel 6.1.0, not 6.12.0 (1 of 2 runs reported)")
        );
        assert_eq!(boot.runs.len(), 1);
        assert_eq!(boot.runs[0].workload, "boot");
        assert_eq!(boot.session.uuid, None);
        // The empty END of a failed guest: BEGIN's uptime is the one there is.
        let env = boot.session.environment.unwrap().to_json();
        assert_eq!(env["vm_uptime_s"], serde_json::json!({"init": 1.0}));

        let silent = JudgedBoot::judge(&TARGET, "n1", "", &HostView::default(), 7);
        assert_eq!(
            silent.failure.as_deref(),
            Some("no BEGIN record: kbench never reported from the guest")
        );
        assert_eq!(silent.session.started_unix_ns, 7);
    }

    #[test]
    fn a_session_stored_already_under_this_label_is_refused_and_a_copy_gets_its_own_identity() {
        let log = guest_log(&begin(), &[run()], Some(&End::default()));
        let boot = JudgedBoot::judge(&TARGET, "n1", &log, &HostView::default(), 7);
        let mut again = boot.clone();
        assert_eq!(
            again.settle_identity(Some("vm-a")),
            Err(StoreBootError::StoredAlready {
                uuid: "u-1".into(),
                label: "vm-a".into()
            })
        );
        let mut copy = boot.clone();
        copy.settle_identity(Some("elsewhere")).unwrap();
        assert_eq!(copy.session.uuid, None);
        let mut new = boot;
        new.settle_identity(None).unwrap();
        assert_eq!(new.session.uuid.as_deref(), Some("u-1"));
    }
}
