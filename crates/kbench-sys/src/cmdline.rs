//! Kernel command line parameters (`/proc/cmdline`).

/// The value of the last `name=value` parameter, as the kernel applies the last one.
/// Arguments after a bare `--` belong to init and are ignored. A bare `name` gives `""`.
pub fn kernel_param(cmdline: &str, name: &str) -> Option<String> {
    let mut found = None;
    for word in cmdline.split_whitespace() {
        if word == "--" {
            break;
        }
        match word.split_once('=') {
            Some((key, value)) if key == name => found = Some(value.trim_matches('"').to_string()),
            None if word == name => found = Some(String::new()),
            _ => {}
        }
    }
    found
}

/// The CPUs of an `isolcpus=` value: flags (`nohz`, `domain`, `managed_irq`) are dropped and
/// the rest is read as a cpulist. `None` if the CPU part is malformed.
pub fn isolcpus_cpus(value: &str) -> Option<Vec<u32>> {
    let cpus: Vec<&str> = value
        .split(',')
        .filter(|item| !item.chars().any(|c| c.is_ascii_alphabetic() || c == '_'))
        .collect();
    crate::parse_cpulist(&cpus.join(",")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_last_parameter_before_init_args() {
        let cmdline = "ro isolcpus=1 quiet isolcpus=nohz,domain,2-3 -- isolcpus=7";
        assert_eq!(
            kernel_param(cmdline, "isolcpus").as_deref(),
            Some("nohz,domain,2-3")
        );
        assert_eq!(kernel_param(cmdline, "quiet").as_deref(), Some(""));
        assert_eq!(kernel_param(cmdline, "nohz_full"), None);
        assert_eq!(
            isolcpus_cpus("nohz,domain,managed_irq,2-3,6"),
            Some(vec![2, 3, 6])
        );
    }
}
