//! LAVA job logs (`kbench import-console`): the console lines of a log, and the boots
//! of a `kbench lava-job` job with the kernel each ran.
use kbench_console::lava::namespace_side;
use kbench_import::lava::{console_text, looks_like_lava_log, read_lava_job};

/// A log read both ways `import-console` reads it: as one capture (`--label`) and as
/// the boots of an A/B job (`--label-a`, `--label-b`).
pub fn lava_log(data: &[u8]) {
    let log = crate::lossy_text(data);
    let lava = looks_like_lava_log(&log);
    let console = console_text(&log);
    if !lava {
        assert_eq!(
            console, log,
            "a capture that is not a LAVA log is read as it is"
        );
    }
    let Some(job) = read_lava_job(&log) else {
        return;
    };
    assert!(lava, "boots read from a text that is not a LAVA log");
    assert!(!job.boots.is_empty(), "a job without boots");
    for (i, boot) in job.boots.iter().enumerate() {
        assert_eq!(
            namespace_side(&boot.namespace),
            Some(boot.side),
            "{}",
            boot.namespace
        );
        let earlier = &job.boots[..i];
        assert!(
            earlier.iter().all(|b| b.namespace != boot.namespace),
            "{} read as two boots",
            boot.namespace
        );
        if let Some(first) = &boot.repeats {
            assert!(
                earlier.iter().any(|b| b.namespace == *first),
                "{} repeats {first}, which is not an earlier boot",
                boot.namespace
            );
        }
        assert!(
            boot.console.is_empty() || boot.console.ends_with('\n'),
            "{}: a console cut inside a line",
            boot.namespace
        );
    }
}
