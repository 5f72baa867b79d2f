//! What kbench's messages carry, typed: the guest writes a [`Begin`], one
//! [`StoredRun`] per REC, an error's text and an [`End`]; the host reads them back from
//! a [`Parsed`] capture as [`Received`].
//!
//! The JSON of BEGIN and END has its keys in alphabetical order (the order of
//! `serde_json`'s maps, as the first guests wrote them); REC is the run's own
//! serialisation. Every field of BEGIN and END is read leniently: one a guest of
//! another version wrote in another shape, or not at all, is `None`, and the rest of
//! the message still counts.
use crate::{Kind, Parsed};
use kbench_record::{NewSession, StoredRun};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

/// BEGIN: the boot, before its first run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Begin {
    /// The protocol version ([`crate::VERSION`]).
    #[serde(default, deserialize_with = "lenient")]
    pub version: Option<u32>,
    /// `uname -r` in the guest.
    #[serde(default, deserialize_with = "lenient")]
    pub kernel_release: Option<String>,
    /// /proc/version, which has the compiler line.
    #[serde(default, deserialize_with = "lenient")]
    pub proc_version: Option<String>,
    /// The cpufreq governor the guest set (`none` without cpufreq).
    #[serde(default, deserialize_with = "lenient")]
    pub governor: Option<String>,
    /// Where the framed lines go: the console or the virtio-serial port.
    #[serde(default, deserialize_with = "lenient")]
    pub channel: Option<String>,
    /// The runs the suite makes if none fails, warm-ups included.
    #[serde(default, deserialize_with = "lenient")]
    pub planned_runs: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub call_cost_ns: Option<CallCosts>,
    /// The sha256 of /proc/config.gz's text, when the kernel has one (IKCONFIG).
    #[serde(default, deserialize_with = "lenient")]
    pub kernel_config_sha256: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub uptime_s: Option<BeginUptimes>,
    /// The guest's session: its boot id, environment and identity.
    #[serde(default, deserialize_with = "lenient")]
    pub session: Option<NewSession>,
}

/// What the workloads' own probes cost per call in the guest: the environment a boot
/// stores keeps it.
pub use kbench_record::CallCosts;

/// Seconds since the kernel started, at /init.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct BeginUptimes {
    pub init: Option<f64>,
}

/// END: the last message of a boot that ran its suite.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct End {
    #[serde(default, deserialize_with = "lenient")]
    pub uptime_s: Option<EndUptimes>,
}

/// Seconds since the kernel started: kbench's own cost per boot is the time from /init
/// to the first run and from the last run to the results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct EndUptimes {
    pub init: Option<f64>,
    pub suite_start: Option<f64>,
    pub suite_end: Option<f64>,
    pub results: Option<f64>,
}

/// One message as the guest sends it.
#[derive(Debug, Clone, Copy)]
pub enum Outgoing<'a> {
    Begin(&'a Begin),
    Record(&'a StoredRun),
    /// What failed, as text.
    Error(&'a str),
    /// END; `None` (an empty payload) after an error, with no uptimes to give.
    End(Option<&'a End>),
}

impl Outgoing<'_> {
    pub fn kind(&self) -> Kind {
        match self {
            Outgoing::Begin(_) => Kind::Begin,
            Outgoing::Record(_) => Kind::Record,
            Outgoing::Error(_) => Kind::Error,
            Outgoing::End(_) => Kind::End,
        }
    }

    /// The bytes [`crate::Emitter::lines`] frames.
    pub fn payload(&self) -> Result<Vec<u8>, serde_json::Error> {
        match self {
            Outgoing::Begin(begin) => sorted_json(begin),
            Outgoing::Record(run) => serde_json::to_vec(run),
            Outgoing::Error(text) => Ok(text.as_bytes().to_vec()),
            Outgoing::End(Some(end)) => sorted_json(end),
            Outgoing::End(None) => Ok(Vec::new()),
        }
    }
}

/// JSON with every object's keys in alphabetical order, through `serde_json::Value`.
fn sorted_json(value: &impl Serialize) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(&serde_json::to_value(value)?)
}

/// What one boot's capture holds of kbench's messages.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Received {
    /// The first BEGIN, when its payload is JSON.
    pub begin: Option<Begin>,
    /// Every REC that reads as a run.
    pub records: Vec<StoredRun>,
    /// The first ERR's text.
    pub error: Option<String>,
    /// The first END, when its payload is JSON (a guest that failed sends an empty one).
    pub end: Option<End>,
}

impl Received {
    pub fn read(parsed: &Parsed) -> Received {
        let payloads = |kind: Kind| {
            parsed
                .messages
                .iter()
                .filter(move |m| m.kind == kind)
                .map(|m| m.payload.as_slice())
        };
        Received {
            begin: payloads(Kind::Begin).next().and_then(json_object),
            records: payloads(Kind::Record)
                .filter_map(|p| serde_json::from_slice(p).ok())
                .map(StoredRun::with_facts)
                .collect(),
            error: payloads(Kind::Error)
                .next()
                .map(|p| String::from_utf8_lossy(p).into_owned()),
            end: payloads(Kind::End).next().and_then(json_object),
        }
    }
}

/// A payload that is JSON, with what of `T` it holds: the message arrived even when
/// none of its fields reads.
fn json_object<T: DeserializeOwned + Default>(payload: &[u8]) -> Option<T> {
    let value: serde_json::Value = serde_json::from_slice(payload).ok()?;
    Some(T::deserialize(value).unwrap_or_default())
}

/// A field that is absent, null or of another shape is `None`.
fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let value = serde_json::Value::deserialize(deserializer)?;
    Ok(T::deserialize(value).ok())
}
