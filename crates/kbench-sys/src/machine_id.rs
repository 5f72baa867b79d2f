//! Which machine this is when its host name and CPU models do not tell: two boards of
//! one type booting one initramfs report the same of both, and so do two lab hosts
//! installed from one image.
//!
//! The id comes from the first of these the machine has, in this order:
//! 1. DMI `product_uuid` (firmware's, per machine; readable by root only);
//! 2. the device tree's `serial-number` (what arm64 and riscv boards have instead);
//! 3. the first permanent, globally administered MAC address of a physical interface;
//! 4. `/etc/machine-id` (per installation: images cloned to several machines share it).
//!
//! Each is an identifier its owner may not want in a shared database (machine-id(5)
//! asks that it never leave the machine), so the id kept is the source's name and 48
//! bits of a SHA-256 of the value: `dmi:3f2a9c1e0b7d`. A lab tells its machines apart
//! with it; nobody learns the value from it.
use crate::Sysroot;
use sha2::{Digest, Sha256};

/// Where an id came from, its prefix in the id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdSource {
    /// DMI `product_uuid`.
    DmiUuid,
    /// The device tree's `serial-number`.
    DtSerial,
    /// A permanent MAC address.
    Mac,
    /// `/etc/machine-id`.
    MachineIdFile,
}

impl IdSource {
    /// The prefix an id of this source carries.
    pub fn prefix(self) -> &'static str {
        match self {
            IdSource::DmiUuid => "dmi",
            IdSource::DtSerial => "dt",
            IdSource::Mac => "mac",
            IdSource::MachineIdFile => "machine-id",
        }
    }
}

/// The longest `--machine-id` name kept.
pub const MAX_GIVEN_LEN: usize = 64;

/// The machine's id under `root` from the first source it has (module docs), `None`
/// when it has none of them (a qemu guest booted from an initramfs, typically).
pub fn detect(root: &Sysroot) -> Option<String> {
    let (source, value) = raw(root)?;
    Some(hashed(source, &value))
}

/// The first source the machine has and its value, unhashed.
pub fn raw(root: &Sysroot) -> Option<(IdSource, String)> {
    dmi_uuid(root)
        .map(|v| (IdSource::DmiUuid, v))
        .or_else(|| dt_serial(root).map(|v| (IdSource::DtSerial, v)))
        .or_else(|| permanent_mac(root).map(|v| (IdSource::Mac, v)))
        .or_else(|| machine_id_file(root).map(|v| (IdSource::MachineIdFile, v)))
}

/// `source:` and the first 48 bits of SHA-256 over a kbench-specific prefix, the
/// source and the value, in hex.
pub fn hashed(source: IdSource, value: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"kbench machine id\0");
    hasher.update(source.prefix().as_bytes());
    hasher.update(b"\0");
    hasher.update(value.as_bytes());
    let digest = hasher.finalize();
    let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    format!("{}:{hex}", source.prefix())
}

/// Why a `--machine-id` name cannot be kept, or `None` when it can: a name is shown
/// in brackets after the host name, so it must be one line without brackets.
pub fn given_name_problem(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        return Some("is empty".into());
    }
    if name.chars().count() > MAX_GIVEN_LEN {
        return Some(format!("is longer than {MAX_GIVEN_LEN} characters"));
    }
    if name.trim() != name {
        return Some("begins or ends with a space".into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| c.is_control() || matches!(c, '[' | ']'))
    {
        return Some(format!("holds {c:?} (no control characters or brackets)"));
    }
    None
}

/// DMI's system UUID, unless it is one of the placeholders firmware leaves there.
fn dmi_uuid(root: &Sysroot) -> Option<String> {
    let uuid = root
        .read_value("/sys/class/dmi/id/product_uuid")?
        .to_ascii_lowercase();
    let digits: Vec<char> = uuid.chars().filter(|c| *c != '-').collect();
    let is_uuid = digits.len() == 32 && digits.iter().all(char::is_ascii_hexdigit);
    // All zeros (qemu without -uuid), all ones, or one digit throughout: unset.
    let one_digit = digits.iter().all(|d| *d == digits[0]);
    // A sequence some AMI firmware ships on every board.
    const AMI_PLACEHOLDER: &str = "03000200-0400-0500-0006-000700080009";
    (is_uuid && !one_digit && uuid != AMI_PLACEHOLDER).then_some(uuid)
}

/// The device tree's serial number (NUL-terminated in the file), unless empty or zeros.
fn dt_serial(root: &Sysroot) -> Option<String> {
    let serial = root.read("/sys/firmware/devicetree/base/serial-number")?;
    let serial = serial.trim_matches(|c: char| c == '\0' || c.is_whitespace());
    let unset = serial.is_empty() || serial.chars().all(|c| c == '0');
    (!unset).then(|| serial.to_string())
}

/// The MAC address of the physical Ethernet-type interface with the lowest ifindex
/// whose address is permanent (`addr_assign_type` 0) and globally administered: a
/// locally administered one (qemu's 52:54:00:..., a cloud's 02:...) is set by whoever
/// made the machine and may repeat on the next.
fn permanent_mac(root: &Sysroot) -> Option<String> {
    let mut found: Vec<(u32, String)> = root
        .list_dir("/sys/class/net")
        .into_iter()
        .filter_map(|name| {
            let dir = format!("/sys/class/net/{name}");
            let is_physical = root.exists(&format!("{dir}/device"));
            let is_ether = root.read_value(&format!("{dir}/type")).as_deref() == Some("1");
            let is_permanent = root
                .read_value(&format!("{dir}/addr_assign_type"))
                .as_deref()
                == Some("0");
            if !(is_physical && is_ether && is_permanent) {
                return None;
            }
            let address = root
                .read_value(&format!("{dir}/address"))?
                .to_ascii_lowercase();
            let ifindex = root
                .read_parse(&format!("{dir}/ifindex"))
                .unwrap_or(u32::MAX);
            is_global_mac(&address).then_some((ifindex, address))
        })
        .collect();
    found.sort();
    found.into_iter().next().map(|(_, address)| address)
}

/// Six octets, not all zero, neither multicast nor locally administered.
fn is_global_mac(address: &str) -> bool {
    let octets: Vec<u8> = address
        .split(':')
        .filter_map(|o| u8::from_str_radix(o, 16).ok())
        .collect();
    octets.len() == 6
        && address.split(':').count() == 6
        && octets.iter().any(|o| *o != 0)
        && octets[0] & 0b11 == 0
}

/// `/etc/machine-id`: 32 hex digits once systemd has initialised it.
fn machine_id_file(root: &Sysroot) -> Option<String> {
    let id = root.read_value("/etc/machine-id")?.to_ascii_lowercase();
    (id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit()) && id.chars().any(|c| c != '0'))
        .then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn write(root: &Path, rel: &str, content: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    /// A network interface under `root`.
    fn nic(root: &Path, name: &str, ifindex: u32, address: &str, assign: &str, physical: bool) {
        let dir = format!("sys/class/net/{name}");
        write(root, &format!("{dir}/address"), &format!("{address}\n"));
        write(
            root,
            &format!("{dir}/addr_assign_type"),
            &format!("{assign}\n"),
        );
        write(root, &format!("{dir}/type"), "1\n");
        write(root, &format!("{dir}/ifindex"), &format!("{ifindex}\n"));
        if physical {
            std::fs::create_dir_all(root.join(format!("{dir}/device"))).unwrap();
        }
    }

    const MACHINE_ID: &str = "3d1219c7c4c5404aaa1f6d2a48adfda4";
    const UUID: &str = "4C4C4544-0042-3510-8052-B4C04F564E32";

    #[test]
    fn each_source_stands_in_for_the_ones_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = Sysroot::new(dir.path());
        assert_eq!(raw(&root), None, "an empty root has no id");
        write(dir.path(), "etc/machine-id", &format!("{MACHINE_ID}\n"));
        assert_eq!(
            raw(&root),
            Some((IdSource::MachineIdFile, MACHINE_ID.into()))
        );
        nic(dir.path(), "eth0", 2, "B8:27:EB:12:34:56", "0", true);
        assert_eq!(
            raw(&root),
            Some((IdSource::Mac, "b8:27:eb:12:34:56".into()))
        );
        write(
            dir.path(),
            "sys/firmware/devicetree/base/serial-number",
            "10000000a1b2c3d4\0",
        );
        assert_eq!(
            raw(&root),
            Some((IdSource::DtSerial, "10000000a1b2c3d4".into()))
        );
        write(
            dir.path(),
            "sys/class/dmi/id/product_uuid",
            &format!("{UUID}\n"),
        );
        assert_eq!(raw(&root), Some((IdSource::DmiUuid, UUID.to_lowercase())));
        let id = detect(&root).unwrap();
        assert!(
            id.starts_with("dmi:") && id.len() == "dmi:".len() + 12,
            "{id}"
        );
        assert!(
            !id.contains("4c4c4544"),
            "the id does not show the value: {id}"
        );
    }

    #[test]
    fn placeholders_are_no_id() {
        let dir = tempfile::tempdir().unwrap();
        let root = Sysroot::new(dir.path());
        for uuid in [
            "00000000-0000-0000-0000-000000000000",
            "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
            "03000200-0400-0500-0006-000700080009",
            "Not Settable",
        ] {
            write(dir.path(), "sys/class/dmi/id/product_uuid", uuid);
            assert_eq!(dmi_uuid(&root), None, "{uuid}");
        }
        for serial in ["\0", "0000000000000000\0", "  \n"] {
            write(
                dir.path(),
                "sys/firmware/devicetree/base/serial-number",
                serial,
            );
            assert_eq!(dt_serial(&root), None, "{serial:?}");
        }
        for id in ["uninitialized", "00000000000000000000000000000000", ""] {
            write(dir.path(), "etc/machine-id", id);
            assert_eq!(machine_id_file(&root), None, "{id}");
        }
    }

    #[test]
    fn the_mac_is_the_first_permanent_global_one_of_a_physical_interface() {
        let dir = tempfile::tempdir().unwrap();
        let root = Sysroot::new(dir.path());
        // Locally administered (a cloud's, qemu's), random, virtual, zero: none counts.
        nic(dir.path(), "eth0", 2, "02:fc:00:00:00:01", "0", true);
        nic(dir.path(), "ens3", 3, "52:54:00:12:34:56", "0", true);
        nic(dir.path(), "wlan0", 4, "00:1a:2b:3c:4d:5e", "1", true);
        nic(dir.path(), "br0", 1, "00:11:22:33:44:55", "0", false);
        nic(dir.path(), "eth9", 5, "00:00:00:00:00:00", "0", true);
        assert_eq!(permanent_mac(&root), None);
        nic(dir.path(), "eth2", 7, "00:0e:c6:aa:bb:02", "0", true);
        nic(dir.path(), "eth1", 6, "00:0E:C6:AA:BB:01", "0", true);
        assert_eq!(permanent_mac(&root).as_deref(), Some("00:0e:c6:aa:bb:01"));
    }

    #[test]
    fn ids_differ_by_value_and_by_source_and_repeat() {
        let a = hashed(IdSource::DtSerial, "a1");
        assert_eq!(a, hashed(IdSource::DtSerial, "a1"));
        assert_ne!(a, hashed(IdSource::DtSerial, "a2"));
        assert_ne!(a[3..], hashed(IdSource::Mac, "a1")[4..]);
    }

    #[test]
    fn given_names_are_one_line_without_brackets() {
        assert_eq!(given_name_problem("board-7"), None);
        assert_eq!(given_name_problem("rack 3 slot 2"), None);
        for bad in ["", " ", "a]b", "[x", "a\nb", " lead", &"x".repeat(65)] {
            assert!(given_name_problem(bad).is_some(), "{bad:?}");
        }
    }
}
