//! `/proc/cpuinfo`: one block of `key : value` lines per processor, on every architecture.
use std::collections::BTreeMap;

/// The parsed `/proc/cpuinfo`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuInfo {
    /// One entry per `processor : N` block, in file order.
    pub processors: Vec<ProcessorInfo>,
    /// Lines outside any processor block (arm32 and some riscv kernels put `Hardware`,
    /// `Revision`, `Serial` there).
    pub global: BTreeMap<String, String>,
}

/// One processor block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcessorInfo {
    /// The logical CPU number from the `processor` line.
    pub cpu: Option<u32>,
    /// Every `key : value` line of the block (keys as printed, e.g. `model name`).
    pub fields: BTreeMap<String, String>,
}

impl ProcessorInfo {
    /// The value of a field, if present and non-empty.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// A numeric field written in hex (`0x41`) or decimal (`15`).
    pub fn get_number(&self, key: &str) -> Option<u64> {
        parse_number(self.get(key)?)
    }

    /// The model name with runs of spaces collapsed (`Intel(R) Core(TM) i7-12700`).
    pub fn model_name(&self) -> Option<String> {
        let raw = self
            .get("model name")
            .or_else(|| self.get("cpu model"))
            .or_else(|| self.get("cpu"))?;
        Some(raw.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    /// The arm64 MIDR built from the `CPU implementer/variant/part/revision` lines.
    pub fn midr(&self) -> Option<crate::midr::Midr> {
        let implementer = self.get_number("CPU implementer")? as u32;
        let part = self.get_number("CPU part")? as u32;
        let variant = self.get_number("CPU variant").unwrap_or(0) as u32;
        let revision = self.get_number("CPU revision").unwrap_or(0) as u32;
        Some(crate::midr::Midr::from_fields(
            implementer,
            variant,
            part,
            revision,
        ))
    }

    /// The x86 `flags` (or arm64 `Features`) words.
    pub fn flags(&self) -> Vec<&str> {
        self.get("flags")
            .or_else(|| self.get("Features"))
            .map(|f| f.split_whitespace().collect())
            .unwrap_or_default()
    }
}

/// Parses a number in `0x..` hex or decimal.
pub fn parse_number(text: &str) -> Option<u64> {
    let text = text.trim();
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

impl CpuInfo {
    /// Parses the text of `/proc/cpuinfo`. Never fails: unknown lines are kept as fields,
    /// lines without a colon are skipped.
    pub fn parse(text: &str) -> CpuInfo {
        let mut info = CpuInfo::default();
        let mut current: Option<ProcessorInfo> = None;
        for line in text.lines() {
            // A blank line ends a processor block; what follows belongs to no processor.
            if line.trim().is_empty() {
                if let Some(done) = current.take() {
                    info.processors.push(done);
                }
                continue;
            }
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let (key, value) = (key.trim().to_string(), value.trim().to_string());
            if key == "processor" {
                if let Some(done) = current.take() {
                    info.processors.push(done);
                }
                current = Some(ProcessorInfo {
                    cpu: value.parse().ok(),
                    fields: BTreeMap::new(),
                });
                continue;
            }
            match current.as_mut() {
                Some(block) => block.fields.insert(key, value),
                None => info.global.insert(key, value),
            };
        }
        if let Some(done) = current.take() {
            info.processors.push(done);
        }
        info
    }

    /// Reads and parses `/proc/cpuinfo` under the root; empty if missing.
    pub fn read(root: &crate::Sysroot) -> CpuInfo {
        root.read("/proc/cpuinfo")
            .map(|t| CpuInfo::parse(&t))
            .unwrap_or_default()
    }

    /// The block for a logical CPU.
    pub fn processor(&self, cpu: u32) -> Option<&ProcessorInfo> {
        self.processors.iter().find(|p| p.cpu == Some(cpu))
    }

    /// The distinct model names, in order of first appearance.
    pub fn model_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for name in self.processors.iter().filter_map(|p| p.model_name()) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    /// True if any processor lists the flag (x86 `flags`).
    pub fn has_flag(&self, flag: &str) -> bool {
        self.processors.iter().any(|p| p.flags().contains(&flag))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_arm64_and_x86_blocks() {
        let text = "processor\t: 0\nBogoMIPS\t: 48.00\nCPU implementer\t: 0x41\nCPU variant\t: 0x0\n\
                    CPU part\t: 0xd03\nCPU revision\t: 4\n\nprocessor\t: 4\nmodel name\t: Intel(R)  Core\n\
                    flags\t\t: fpu hypervisor\n\nHardware\t: Rockchip\n";
        let info = CpuInfo::parse(text);
        assert_eq!(info.processors.len(), 2);
        assert_eq!(
            info.processor(0).unwrap().midr().unwrap().core_name(),
            "Cortex-A53"
        );
        assert_eq!(
            info.processor(4).unwrap().model_name().unwrap(),
            "Intel(R) Core"
        );
        assert!(info.has_flag("hypervisor"));
        assert_eq!(info.global.get("Hardware").unwrap(), "Rockchip");
    }
}
