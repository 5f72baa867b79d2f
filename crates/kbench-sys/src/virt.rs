//! Is this a virtual machine, and under which hypervisor?
//!
//! IPIs and timers inside a guest cost VM exits, so a VM result does not transfer to bare
//! metal; kbench records what it finds and the checklist says so.
use crate::cpuinfo::CpuInfo;
use crate::Sysroot;
use serde::{Deserialize, Serialize};

/// What the machine says about virtualization.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Virtualization {
    /// The hypervisor when one is detected (`KVM`, `Xen`, `VMware`, `Hyper-V`, `QEMU
    /// virt`, `unknown`).
    pub hypervisor: Option<String>,
    /// The facts that led to the verdict, for the record.
    pub evidence: Vec<String>,
}

impl Virtualization {
    /// True when a hypervisor was detected.
    pub fn is_vm(&self) -> bool {
        self.hypervisor.is_some()
    }

    /// Looks at DMI, `/sys/hypervisor`, the device tree, the clocksources and the x86
    /// `hypervisor` CPU flag, most specific first.
    pub fn detect(root: &Sysroot, cpuinfo: &CpuInfo) -> Virtualization {
        let mut named: Option<String> = None;
        let mut evidence = Vec::new();
        let mut note = |name: Option<&str>, fact: String| {
            if named.is_none() {
                named = name.map(String::from);
            }
            evidence.push(fact);
        };
        let vendor = root.read_value("/sys/class/dmi/id/sys_vendor");
        let product = root.read_value("/sys/class/dmi/id/product_name");
        if let Some(name) = hypervisor_from_dmi(vendor.as_deref(), product.as_deref()) {
            let fact = format!(
                "DMI: {} / {}",
                vendor.as_deref().unwrap_or("-"),
                product.as_deref().unwrap_or("-")
            );
            note(Some(name), fact);
        }
        if let Some(kind) = root.read_value("/sys/hypervisor/type") {
            let name = if kind == "xen" { "Xen" } else { "unknown" };
            note(Some(name), format!("/sys/hypervisor/type: {kind}"));
        }
        for dt in [
            "/proc/device-tree/hypervisor/compatible",
            "/sys/firmware/devicetree/base/hypervisor/compatible",
        ] {
            if let Some(compat) = root.read_value(dt) {
                let compat = compat.replace('\0', " ");
                let name = if compat.contains("xen") {
                    "Xen"
                } else {
                    "unknown"
                };
                note(
                    Some(name),
                    format!("device tree hypervisor: {}", compat.trim()),
                );
                break;
            }
        }
        // QEMU's arm64 `virt` machine (TCG or KVM) names itself in the device tree's
        // root; nothing else on arm64 says "emulated".
        for dt in [
            "/proc/device-tree/compatible",
            "/sys/firmware/devicetree/base/compatible",
        ] {
            if let Some(compat) = root.read_value(dt) {
                if compat.split('\0').any(|c| c.trim() == "linux,dummy-virt") {
                    note(
                        Some("QEMU virt"),
                        "device tree: linux,dummy-virt (QEMU's virt machine)".to_string(),
                    );
                }
                break;
            }
        }
        let clocksources = root
            .read("/sys/devices/system/clocksource/clocksource0/available_clocksource")
            .unwrap_or_default();
        for source in clocksources.split_whitespace() {
            if let Some(name) = hypervisor_from_clocksource(source) {
                note(Some(name), format!("clocksource {source} available"));
            }
        }
        if cpuinfo.has_flag("hypervisor") {
            note(Some("unknown"), "cpuinfo flag 'hypervisor'".to_string());
        }
        Virtualization {
            hypervisor: named,
            evidence,
        }
    }
}

fn hypervisor_from_dmi(vendor: Option<&str>, product: Option<&str>) -> Option<&'static str> {
    let vendor = vendor.unwrap_or("");
    let product = product.unwrap_or("");
    let either = |needle: &str| vendor.contains(needle) || product.contains(needle);
    if either("QEMU")
        || either("KVM")
        || vendor == "Amazon EC2"
        || product.contains("Google Compute Engine")
    {
        Some("KVM")
    } else if either("VMware") {
        Some("VMware")
    } else if either("VirtualBox") || vendor.contains("innotek") {
        Some("VirtualBox")
    } else if vendor.contains("Microsoft") && product.contains("Virtual Machine") {
        Some("Hyper-V")
    } else if either("Xen") {
        Some("Xen")
    } else if either("Parallels") {
        Some("Parallels")
    } else {
        None
    }
}

fn hypervisor_from_clocksource(source: &str) -> Option<&'static str> {
    match source {
        "kvm-clock" => Some("KVM"),
        "xen" => Some("Xen"),
        s if s.starts_with("hyperv") => Some("Hyper-V"),
        _ => None,
    }
}
