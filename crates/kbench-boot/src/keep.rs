//! A boot kept in the store: its session, runs, console log and kernel config in one
//! transaction, as `vm-ab` and a bisection make them and `import-console` reads them
//! from a board's log; the sink of a schedule of boots.
use crate::bisect::BootKeeper;
use crate::machine::Boot;
use crate::stored::{BootTarget, HostView, JudgedBoot};
use kbench_record::sequential::SequentialLook;
use kbench_record::stored::SessionWithRuns;
use kbench_runner::RunSink;
use kbench_store::Store;

/// Stores one boot: its session with the guest's environment and runs when its log is
/// intact and of this boot, else a failed session with the reason; the console log is
/// kept with it either way, all in one transaction. True when it succeeded.
/// `kernel_config` is the text `target.kernel_config_sha256` is the hash of.
pub fn store_boot(
    store: &mut Store,
    target: &BootTarget<'_>,
    kernel_config: Option<&str>,
    nonce: &str,
    log: &str,
    host: &HostView,
) -> anyhow::Result<bool> {
    let boot = JudgedBoot::judge(
        target,
        nonce,
        log,
        host,
        kbench_workloads::measure::unix_now_ns(),
    );
    store_judged(store, boot, log, kernel_config)
}

/// Stores a boot judged already (see [`store_boot`]). True when it succeeded.
pub fn store_judged(
    store: &mut Store,
    mut boot: JudgedBoot,
    log: &str,
    kernel_config: Option<&str>,
) -> anyhow::Result<bool> {
    if let Some(uuid) = &boot.session.uuid {
        let stored_under = store.label_of_uuid(uuid)?;
        boot.settle_identity(stored_under.as_deref())?;
    }
    if let Some(reason) = &boot.failure {
        errln!("kbench: boot of {} failed: {reason}", boot.session.label);
    }
    store.insert_boot(&kbench_store::NewBoot {
        session: &boot.session,
        console_log: log,
        kernel_config,
        runs: &boot.runs,
        ended_unix_ns: kbench_workloads::measure::unix_now_ns(),
    })?;
    Ok(boot.failure.is_none())
}

/// The store, as the sink of a schedule of boots: each boot stored as it comes (one a
/// resumed bisection found stored already is not stored again), and each look of its
/// sequential decision kept with `design`.
pub struct BootStore<'a> {
    pub store: &'a mut Store,
    pub design: Option<i64>,
}

impl RunSink<Boot> for BootStore<'_> {
    fn accept(&mut self, _side: usize, boot: Boot) -> anyhow::Result<()> {
        if boot.stored_before {
            return Ok(());
        }
        store_judged(
            self.store,
            boot.judged,
            &boot.console_log,
            boot.kernel_config.as_deref(),
        )?;
        Ok(())
    }

    fn keep_look(&mut self, look: &SequentialLook) -> anyhow::Result<()> {
        if let Some(design) = self.design {
            self.store.insert_sequential_look(design, look)?;
        }
        Ok(())
    }
}

impl BootKeeper for BootStore<'_> {
    fn kept_sessions(&mut self, label: &str) -> anyhow::Result<Vec<SessionWithRuns>> {
        let mut whole = kbench_store::export::whole_sessions(self.store, label)?;
        whole.sort_by_key(|(row, _)| row.id);
        Ok(whole.into_iter().map(|(_, s)| s).collect())
    }
}
