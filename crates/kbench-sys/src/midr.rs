//! arm64 Main ID Register (MIDR_EL1) decoding: implementer and part number to core name.
//!
//! Part numbers come from Arm's Technical Reference Manuals ("MIDR_EL1 bit descriptions"),
//! as collected in Linux's `arch/arm64/include/asm/cputype.h`.

/// A decoded MIDR_EL1 value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Midr(pub u64);

impl Midr {
    /// Parses the `regs/identification/midr_el1` form (`0x00000000410fd034`).
    pub fn parse(text: &str) -> Option<Midr> {
        let text = text.trim();
        let hex = text
            .strip_prefix("0x")
            .or_else(|| text.strip_prefix("0X"))
            .unwrap_or(text);
        u64::from_str_radix(hex, 16).ok().map(Midr)
    }

    /// Builds a MIDR from the `/proc/cpuinfo` fields (architecture fixed at 0xf, as arm64
    /// reports it).
    pub fn from_fields(implementer: u32, variant: u32, part: u32, revision: u32) -> Midr {
        let value = ((implementer as u64 & 0xff) << 24)
            | ((variant as u64 & 0xf) << 20)
            | (0xf << 16)
            | ((part as u64 & 0xfff) << 4)
            | (revision as u64 & 0xf);
        Midr(value)
    }

    /// Bits 31:24, the implementer (0x41 = Arm).
    pub fn implementer(self) -> u32 {
        ((self.0 >> 24) & 0xff) as u32
    }

    /// Bits 23:20, the major revision (the `r` in `r1p2`).
    pub fn variant(self) -> u32 {
        ((self.0 >> 20) & 0xf) as u32
    }

    /// Bits 15:4, the primary part number.
    pub fn part(self) -> u32 {
        ((self.0 >> 4) & 0xfff) as u32
    }

    /// Bits 3:0, the minor revision (the `p` in `r1p2`).
    pub fn revision(self) -> u32 {
        (self.0 & 0xf) as u32
    }

    /// The core name (`Cortex-A53`), or `arm64 0xII/0xPPP` for parts not in the table.
    pub fn core_name(self) -> String {
        match core_info(self.implementer(), self.part()) {
            Some(info) => info.name.to_string(),
            None => format!("arm64 {:#04x}/{:#05x}", self.implementer(), self.part()),
        }
    }

    /// The performance tier of the core, see [`CoreInfo::tier`]; 0 when unknown.
    pub fn tier(self) -> u8 {
        core_info(self.implementer(), self.part()).map_or(0, |i| i.tier)
    }

    /// The register value in the sysfs form, `0x00000000410fd034`.
    pub fn to_hex(self) -> String {
        format!("{:#018x}", self.0)
    }
}

/// What kbench knows about a core design.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoreInfo {
    /// The marketing name, e.g. `Cortex-A78`.
    pub name: &'static str,
    /// A coarse performance tier used to order classes when the kernel gives no
    /// `cpu_capacity`: 1 = in-order efficiency core, 2 = out-of-order "big" core,
    /// 3 = the widest cores (Cortex-X, Neoverse V).
    pub tier: u8,
}

/// Arm Ltd. implementer code.
pub const IMPLEMENTER_ARM: u32 = 0x41;
/// Qualcomm implementer code.
pub const IMPLEMENTER_QUALCOMM: u32 = 0x51;

/// (implementer, part, name, tier).
const CORES: &[(u32, u32, &str, u8)] = &[
    (0x41, 0xd01, "Cortex-A32", 1),
    (0x41, 0xd02, "Cortex-A34", 1),
    (0x41, 0xd03, "Cortex-A53", 1),
    (0x41, 0xd04, "Cortex-A35", 1),
    (0x41, 0xd05, "Cortex-A55", 1),
    (0x41, 0xd06, "Cortex-A65", 1),
    (0x41, 0xd07, "Cortex-A57", 2),
    (0x41, 0xd08, "Cortex-A72", 2),
    (0x41, 0xd09, "Cortex-A73", 2),
    (0x41, 0xd0a, "Cortex-A75", 2),
    (0x41, 0xd0b, "Cortex-A76", 2),
    (0x41, 0xd0c, "Neoverse-N1", 2),
    (0x41, 0xd0d, "Cortex-A77", 2),
    (0x41, 0xd0e, "Cortex-A76AE", 2),
    (0x41, 0xd40, "Neoverse-V1", 3),
    (0x41, 0xd41, "Cortex-A78", 2),
    (0x41, 0xd42, "Cortex-A78AE", 2),
    (0x41, 0xd43, "Cortex-A65AE", 1),
    (0x41, 0xd44, "Cortex-X1", 3),
    (0x41, 0xd46, "Cortex-A510", 1),
    (0x41, 0xd47, "Cortex-A710", 2),
    (0x41, 0xd48, "Cortex-X2", 3),
    (0x41, 0xd49, "Neoverse-N2", 2),
    (0x41, 0xd4a, "Neoverse-E1", 1),
    (0x41, 0xd4b, "Cortex-A78C", 2),
    (0x41, 0xd4c, "Cortex-X1C", 3),
    (0x41, 0xd4d, "Cortex-A715", 2),
    (0x41, 0xd4e, "Cortex-X3", 3),
    (0x41, 0xd4f, "Neoverse-V2", 3),
    (0x41, 0xd80, "Cortex-A520", 1),
    (0x41, 0xd81, "Cortex-A720", 2),
    (0x41, 0xd82, "Cortex-X4", 3),
    (0x41, 0xd83, "Neoverse-V3AE", 3),
    (0x41, 0xd84, "Neoverse-V3", 3),
    (0x41, 0xd85, "Cortex-X925", 3),
    (0x41, 0xd87, "Cortex-A725", 2),
    (0x41, 0xd89, "Cortex-A720AE", 2),
    (0x41, 0xd8b, "C1-Pro", 2),
    (0x41, 0xd8c, "C1-Ultra", 3),
    (0x41, 0xd8e, "Neoverse-N3", 2),
    // Qualcomm's Kryo cores up to the 4xx series report their own implementer code.
    (0x51, 0x201, "Kryo", 2),
    (0x51, 0x205, "Kryo", 2),
    (0x51, 0x211, "Kryo", 2),
    (0x51, 0x800, "Kryo-2xx-Gold", 2),
    (0x51, 0x801, "Kryo-2xx-Silver", 1),
    (0x51, 0x802, "Kryo-3xx-Gold", 2),
    (0x51, 0x803, "Kryo-3xx-Silver", 1),
    (0x51, 0x804, "Kryo-4xx-Gold", 2),
    (0x51, 0x805, "Kryo-4xx-Silver", 1),
    (0x51, 0xc00, "Falkor", 2),
    (0x51, 0x001, "Oryon", 3),
    (0x48, 0xd01, "TaiShan-v110", 2),
    (0x46, 0x001, "A64FX", 2),
    (0x4e, 0x004, "Carmel", 2),
    (0x61, 0x022, "Apple-Icestorm", 1),
    (0x61, 0x023, "Apple-Firestorm", 3),
    (0xc0, 0xac3, "AmpereOne", 2),
];

/// The core design for an implementer and part number, if kbench knows it.
pub fn core_info(implementer: u32, part: u32) -> Option<CoreInfo> {
    CORES
        .iter()
        .find(|(imp, p, _, _)| *imp == implementer && *p == part)
        .map(|&(_, _, name, tier)| CoreInfo { name, tier })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_sysfs_midr() {
        let midr = Midr::parse("0x00000000410fd034\n").unwrap();
        assert_eq!(midr.implementer(), 0x41);
        assert_eq!(midr.part(), 0xd03);
        assert_eq!(midr.variant(), 0);
        assert_eq!(midr.revision(), 4);
        assert_eq!(midr.core_name(), "Cortex-A53");
        assert_eq!(Midr::from_fields(0x41, 0, 0xd03, 4), midr);
        assert_eq!(midr.to_hex(), "0x00000000410fd034");
    }

    #[test]
    fn names_the_cores_the_issue_lists() {
        let expect = [
            (0xd03, "Cortex-A53"),
            (0xd05, "Cortex-A55"),
            (0xd07, "Cortex-A57"),
            (0xd08, "Cortex-A72"),
            (0xd09, "Cortex-A73"),
            (0xd0a, "Cortex-A75"),
            (0xd0b, "Cortex-A76"),
            (0xd0d, "Cortex-A77"),
            (0xd41, "Cortex-A78"),
            (0xd46, "Cortex-A510"),
            (0xd80, "Cortex-A520"),
            (0xd47, "Cortex-A710"),
            (0xd4d, "Cortex-A715"),
            (0xd81, "Cortex-A720"),
            (0xd44, "Cortex-X1"),
            (0xd48, "Cortex-X2"),
            (0xd4e, "Cortex-X3"),
            (0xd82, "Cortex-X4"),
            (0xd0c, "Neoverse-N1"),
            (0xd49, "Neoverse-N2"),
            (0xd40, "Neoverse-V1"),
            (0xd4f, "Neoverse-V2"),
        ];
        for (part, name) in expect {
            assert_eq!(core_info(IMPLEMENTER_ARM, part).unwrap().name, name);
        }
        assert_eq!(
            Midr::from_fields(0x41, 0, 0xfff, 0).core_name(),
            "arm64 0x41/0xfff"
        );
    }
}
