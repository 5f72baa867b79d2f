//! The binary's side of a boot (`vm-ab`, `import-console`, `initramfs`): kbench-boot
//! judges a boot's log, and this stores it; kbench-boot's errors reach the user with
//! the exit status they call for.
use crate::session;
use kbench_boot::stored::{BootTarget, HostView, JudgedBoot};
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
    let mut boot = JudgedBoot::judge(target, nonce, log, host, session::unix_now_ns());
    if let Some(uuid) = &boot.session.uuid {
        let stored_under = store.label_of_uuid(uuid)?;
        boot.settle_identity(stored_under.as_deref())?;
    }
    if let Some(reason) = &boot.failure {
        errln!("kbench: boot of {} failed: {reason}", target.label);
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

/// The hash a guest's /proc/config.gz is compared with.
pub fn config_sha256(config: Option<&str>) -> Option<String> {
    config.map(kbench_store::config_hash)
}
