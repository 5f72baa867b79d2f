//! What a session recorded of the machine it ran on: the snapshot kbench-sys captures,
//! what a boot adds to it (the guest's own words and the host's view of qemu), and any
//! key this version does not know, kept so that a copy loses nothing.
//!
//! It is stored as one JSON object with its keys sorted, as the store has always written
//! it: the snapshot's keys, the boot's `proc_version` and `vm_*` keys beside them.
use kbench_sys::EnvSnapshot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A session's environment. Read from an object it never fails: one whose known keys do
/// not have their types (a hand-made database, another tool's export) keeps every key
/// in [`SessionEnvironment::other`], with no snapshot.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionEnvironment {
    /// The machine as kbench-sys captured it; `None` when the stored keys did not read as
    /// one.
    pub snapshot: Option<EnvSnapshot>,
    /// What a boot of `vm-ab` or `import-console` added; empty for a session run here.
    pub boot: BootEnvironment,
    /// Where the kernel came from, when kbench was told or built it.
    pub kernel: KernelSource,
    /// Keys neither of the two knows, as they were.
    pub other: BTreeMap<String, serde_json::Value>,
}

/// Where the running kernel came from, beyond its release and version string (which
/// the snapshot has): what orders sessions along a tree's history.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelSource {
    /// The commit it was built from: `--commit REV` or `$KBENCH_COMMIT` as given, or
    /// the full hash when kbench built it (`bisect`). A Debian kernel's package version
    /// is in the snapshot's `kernel_version` already (`Debian 6.1.119-1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_commit: Option<String>,
}

/// What a boot adds to the guest's snapshot.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BootEnvironment {
    /// The guest's /proc/version, which has the compiler line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proc_version: Option<String>,
    /// The cpufreq governor the guest set (`none` without cpufreq).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm_governor: Option<String>,
    /// Where the guest's framed lines went: the console or the virtio-serial port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm_channel: Option<String>,
    /// What the workloads' probes cost per call in the guest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm_call_cost_ns: Option<CallCosts>,
    /// The sha256 of the guest's /proc/config.gz text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm_kernel_config_sha256: Option<String>,
    /// Seconds since the guest kernel started at each step of the boot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm_uptime_s: Option<GuestUptimes>,
    /// The accelerator qemu ran with: `kvm` or `tcg`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm_accel: Option<String>,
    /// Which host CPU each vCPU thread was pinned to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm_vcpu_pins: Option<Vec<VcpuPin>>,
    /// Why the accelerator is the one it is (why not KVM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm_accel_reason: Option<String>,
    /// How long qemu ran, wall clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm_qemu_wall_s: Option<f64>,
    /// What the reader of these figures should know of the accelerator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm_notice: Option<String>,
    /// What the guest's clock counted: `instructions` for a counted boot (TCG's
    /// icount); absent for wall time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm_clock: Option<crate::Clock>,
    /// icount's shift for a counted boot: 2^shift ns of guest time an instruction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm_icount_shift: Option<u32>,
}

/// What the workloads' own probes cost per call in a guest, ns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CallCosts {
    /// getcpu, with which tasks sample where they run.
    pub getcpu: f64,
    /// The clock read around every timed section.
    pub clock_monotonic: f64,
}

/// Seconds since the guest kernel started: at /init, at the suite's first and last run,
/// and at the results. BEGIN says the first, END all four.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct GuestUptimes {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_start: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_end: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results: Option<f64>,
}

/// One vCPU thread and the host CPU it runs on only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VcpuPin {
    pub vcpu: u32,
    pub thread_id: i32,
    pub host_cpu: u32,
}

/// The stored form: one object of the three parts' keys.
#[derive(Serialize, Deserialize)]
struct Flat<S, B, K> {
    #[serde(flatten)]
    snapshot: S,
    #[serde(flatten)]
    boot: B,
    #[serde(flatten)]
    kernel: K,
    #[serde(flatten)]
    other: BTreeMap<String, serde_json::Value>,
}

impl SessionEnvironment {
    /// What the session's time figures measure: wall time unless a counted boot says.
    pub fn clock(&self) -> crate::Clock {
        self.boot.vm_clock.unwrap_or_default()
    }

    /// A session run here: the snapshot alone.
    pub fn of(snapshot: EnvSnapshot) -> SessionEnvironment {
        SessionEnvironment {
            snapshot: Some(snapshot),
            ..SessionEnvironment::default()
        }
    }

    /// The machine the environment describes: its host name and CPU models,
    /// `host: model + model`, the identity a calibration also matches on and the store
    /// keeps beside each session.
    pub fn machine(&self) -> String {
        let host = self.hostname().unwrap_or("unknown host");
        let models = self.cpu_models();
        if models.is_empty() {
            host.to_string()
        } else {
            format!("{host}: {}", models.join(" + "))
        }
    }

    /// Which of several machines of one host name and CPU models it is
    /// (`kbench_sys::machine_id`), from the snapshot or, when there is none, from the
    /// keys kept; `None` for environments recorded before ids, or without one.
    pub fn machine_id(&self) -> Option<&str> {
        match &self.snapshot {
            Some(snapshot) => snapshot.machine_id.as_deref(),
            None => self.other.get("machine_id")?.as_str(),
        }
    }

    /// The host name, from the snapshot or, when there is none, from the keys kept.
    fn hostname(&self) -> Option<&str> {
        match &self.snapshot {
            Some(snapshot) => snapshot.hostname.as_deref(),
            None => self.other.get("hostname")?.as_str(),
        }
    }

    /// The CPU models that are text, from the snapshot or, when there is none, from the
    /// keys kept.
    fn cpu_models(&self) -> Vec<&str> {
        if let Some(snapshot) = &self.snapshot {
            return snapshot.cpu_models.iter().map(String::as_str).collect();
        }
        self.other
            .get("cpu_models")
            .and_then(|m| m.as_array())
            .map(|m| m.iter().filter_map(|m| m.as_str()).collect())
            .unwrap_or_default()
    }

    /// The environment as the JSON object it is stored as.
    pub fn to_json(&self) -> serde_json::Value {
        let flat = Flat {
            snapshot: self.snapshot.as_ref(),
            boot: &self.boot,
            kernel: &self.kernel,
            other: self.other.clone(),
        };
        // Serialising plain data into a value fails only for a map with keys that are
        // not strings, which these have none of.
        serde_json::to_value(flat).unwrap_or(serde_json::Value::Null)
    }

    /// Reads a stored environment object; see [`SessionEnvironment`] for what does not
    /// read.
    pub fn from_json(object: serde_json::Map<String, serde_json::Value>) -> SessionEnvironment {
        let value = serde_json::Value::Object(object);
        match Flat::<EnvSnapshot, BootEnvironment, KernelSource>::deserialize(&value) {
            Ok(flat) => SessionEnvironment {
                snapshot: Some(flat.snapshot),
                boot: flat.boot,
                kernel: flat.kernel,
                other: flat.other,
            },
            Err(_) => {
                let serde_json::Value::Object(other) = value else {
                    unreachable!("built as an object above")
                };
                SessionEnvironment {
                    other: other.into_iter().collect(),
                    ..SessionEnvironment::default()
                }
            }
        }
    }
}

impl Serialize for SessionEnvironment {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Through a JSON value, whose object keeps its keys sorted: the text is the one
        // earlier versions stored, so an export of a copy is the export of the original.
        self.to_json().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SessionEnvironment {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
        Ok(SessionEnvironment::from_json(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn host_and_models_name_the_machine() {
        let env: SessionEnvironment = serde_json::from_value(
            json!({"hostname": "rk3399", "cpu_models": ["Cortex-A53", "Cortex-A72"]}),
        )
        .unwrap();
        assert_eq!(env.machine(), "rk3399: Cortex-A53 + Cortex-A72");
        assert_eq!(SessionEnvironment::default().machine(), "unknown host");
    }

    #[test]
    fn keys_of_the_wrong_type_are_kept_and_name_the_machine_as_the_store_does() {
        // Schema migration 6 names these machines in SQL: text values only.
        let odd = json!({"hostname": 7, "cpu_models": ["EPYC", 3], "vm_accel": "tcg"});
        let env: SessionEnvironment = serde_json::from_value(odd.clone()).unwrap();
        assert_eq!(env.machine(), "unknown host: EPYC");
        assert_eq!(env.to_json(), odd, "nothing lost");
    }

    #[test]
    fn the_stored_text_is_sorted_and_reads_back_the_same() {
        let mut env = SessionEnvironment::of(EnvSnapshot {
            hostname: Some("h".into()),
            cmdline: Some("quiet".into()),
            ..EnvSnapshot::default()
        });
        env.boot.vm_accel = Some("tcg".into());
        env.boot.vm_uptime_s = Some(GuestUptimes {
            init: Some(1.5),
            ..GuestUptimes::default()
        });
        env.other.insert("a_newer_key".into(), json!([1, 2]));
        let text = serde_json::to_string(&env).unwrap();
        let keys: Vec<String> =
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&text)
                .unwrap()
                .keys()
                .cloned()
                .collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        assert!(
            text.starts_with(r#"{"a_newer_key":[1,2],"arch":null,"aslr":null,"#),
            "{text}"
        );
        assert!(text.contains(r#""vm_uptime_s":{"init":1.5}"#), "{text}");
        let back: SessionEnvironment = serde_json::from_str(&text).unwrap();
        assert_eq!(back, env);
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
    }
}
