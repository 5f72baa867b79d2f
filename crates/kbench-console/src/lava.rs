//! How the two ends of a LAVA A/B job name its boots: `lava-job` writes one namespace
//! per boot, and `import-console` reads the kernel of each console line back from it.

/// One of the two kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelSide {
    A,
    B,
}

impl KernelSide {
    pub fn letter(self) -> &'static str {
        match self {
            KernelSide::A => "a",
            KernelSide::B => "b",
        }
    }

    /// Side 0 is A, any other B.
    pub fn of_index(side: usize) -> KernelSide {
        match side {
            0 => KernelSide::A,
            _ => KernelSide::B,
        }
    }
}

/// The LAVA namespace of the `index`-th boot (from 0): it ties the boot's deploy, boot
/// and test actions together, and in the job's log it says which kernel a console line
/// came from, since every boot shares one kernel command line.
pub fn namespace(index: usize, side: KernelSide) -> String {
    format!("kbench-{:02}-{}", index + 1, side.letter())
}

/// The kernel of a namespace [`namespace`] wrote; None for any other namespace.
pub fn namespace_side(namespace: &str) -> Option<KernelSide> {
    let rest = namespace.strip_prefix("kbench-")?;
    let (number, letter) = rest.split_once('-')?;
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match letter {
        "a" => Some(KernelSide::A),
        "b" => Some(KernelSide::B),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_name_the_boot_and_its_kernel() {
        let sides = [KernelSide::A, KernelSide::B, KernelSide::B, KernelSide::A];
        let names: Vec<String> = sides
            .iter()
            .enumerate()
            .map(|(i, &s)| namespace(i, s))
            .collect();
        assert_eq!(
            names,
            ["kbench-01-a", "kbench-02-b", "kbench-03-b", "kbench-04-a"]
        );
        for (name, side) in names.iter().zip(sides) {
            assert_eq!(namespace_side(name), Some(side));
        }
        for other in [
            "common",
            "kbench-a",
            "kbench--a",
            "kbench-1-c",
            "kbench-x1-a",
            "kbench-01-a-b",
        ] {
            assert_eq!(namespace_side(other), None, "{other}");
        }
    }
}
