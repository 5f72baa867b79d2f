//! Two machines of one model, as a lab has them: the same host name and CPU models,
//! told apart by their ids.
mod common;
use kbench_sys::machine_id::{self, IdSource};
use kbench_sys::EnvSnapshot;

/// The two trees' snapshots, which must agree on what named a machine before ids.
fn pair(a: &str, b: &str) -> (EnvSnapshot, EnvSnapshot) {
    let (a, b) = (
        EnvSnapshot::capture(&common::fixture(a)),
        EnvSnapshot::capture(&common::fixture(b)),
    );
    assert!(a.hostname.is_some());
    assert_eq!(a.hostname, b.hostname);
    assert!(!a.cpu_models.is_empty());
    assert_eq!(a.cpu_models, b.cpu_models);
    (a, b)
}

#[test]
fn two_x86_hosts_of_one_image_differ_by_their_dmi_uuids() {
    let (a, b) = pair("lab-x86-a", "lab-x86-b");
    let (id_a, id_b) = (a.machine_id.unwrap(), b.machine_id.unwrap());
    assert!(
        id_a.starts_with("dmi:") && id_b.starts_with("dmi:"),
        "{id_a} {id_b}"
    );
    assert_ne!(id_a, id_b);
    // Both carry the one /etc/machine-id of the image they were installed from: that
    // source alone would have pooled them.
    let file =
        |name| std::fs::read_to_string(common::fixture_dir(name).join("etc/machine-id")).unwrap();
    assert_eq!(file("lab-x86-a"), file("lab-x86-b"));
}

#[test]
fn two_boards_of_one_type_differ_by_their_device_tree_serials() {
    let (a, b) = pair("lab-rk3399-a", "lab-rk3399-b");
    let (id_a, id_b) = (a.machine_id.unwrap(), b.machine_id.unwrap());
    assert!(
        id_a.starts_with("dt:") && id_b.starts_with("dt:"),
        "{id_a} {id_b}"
    );
    assert_ne!(id_a, id_b);
    assert_eq!(
        machine_id::raw(&common::fixture("lab-rk3399-a")).map(|(s, _)| s),
        Some(IdSource::DtSerial)
    );
}

#[test]
fn fixtures_without_ids_have_none() {
    for name in [
        "rk3399",
        "sd888",
        "i7-12700",
        "visionfive2",
        "xeon-2s",
        "vm2",
    ] {
        let snapshot = EnvSnapshot::capture(&common::fixture(name));
        assert_eq!(snapshot.machine_id, None, "{name}");
    }
}
