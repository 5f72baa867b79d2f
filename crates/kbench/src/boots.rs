//! The binary's side of a boot (`vm-ab`, `bisect`, `import-console`, `initramfs`):
//! kbench-boot judges a boot's log, and this stores it; kbench-boot's errors reach the
//! user with the exit status they call for.
use crate::session;
use kbench_boot::machine::Boot;
use kbench_boot::stored::{BootTarget, HostView, JudgedBoot};
use kbench_record::sequential::SequentialLook;
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
    let boot = JudgedBoot::judge(target, nonce, log, host, session::unix_now_ns());
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
        ended_unix_ns: session::unix_now_ns(),
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

impl kbench_runner::RunSink<Boot> for BootStore<'_> {
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

/// The hash a guest's /proc/config.gz is compared with.
pub fn config_sha256(config: Option<&str>) -> Option<String> {
    config.map(kbench_store::config_hash)
}
