//! The parameters of a run: options read, defaults resolved (the CPUs from this
//! process's affinity) and checked, and the schedule of gaps they make.
use crate::cpus;
use crate::perfopt::ParsedOptions;
use crate::wakechan::Mech;
use crate::WorkloadError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

const DEFAULT_WAKES: i32 = 2_000;
const DEFAULT_WARMUP: i32 = 100;
const DEFAULT_GAP_US: i32 = 2_000;
const DEFAULT_GAP_JITTER_PCT: i32 = 25;
const DEFAULT_WAKER_SPIN_US: i32 = 50;
const DEFAULT_SEED: u64 = 1;
/// Bounds that keep the pre-allocated sample arrays and the run length sane.
const MAX_WAKES: i32 = 1_000_000;
const MAX_GAP_US: i32 = 10_000_000;
const MAX_DELAY_US: i32 = 1_000_000;

/// What B is doing when the wake arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Idle,
    Preempt,
    PingPong,
    SameCpu,
}

impl Mode {
    const NAMES: &'static str = "idle, preempt, pingpong or same-cpu";

    pub fn parse(name: &str) -> Option<Mode> {
        match name {
            "idle" => Some(Mode::Idle),
            "preempt" => Some(Mode::Preempt),
            "pingpong" => Some(Mode::PingPong),
            "same-cpu" => Some(Mode::SameCpu),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Idle => "idle",
            Mode::Preempt => "preempt",
            Mode::PingPong => "pingpong",
            Mode::SameCpu => "same-cpu",
        }
    }
}

/// The parameters of one run, defaults resolved and validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    pub mode: Mode,
    pub mech: Mech,
    pub waker_cpu: u32,
    pub wakee_cpu: u32,
    pub wakes: u32,
    pub warmup: u32,
    pub gap_us: u32,
    pub gap_jitter_pct: u32,
    pub waker_spin_us: u32,
    pub seed: u64,
    pub inject_delay_us: u32,
    /// Trace the wake phases through tracefs.
    pub trace: bool,
}

impl Params {
    /// Resolves defaults (CPUs from this process's affinity) and validates; every
    /// user mistake is a one-line [`WorkloadError::Usage`].
    pub fn from_parsed(parsed: &ParsedOptions) -> Result<Self, WorkloadError> {
        let mode = parse_choice(parsed, "mode", "idle", Mode::parse, Mode::NAMES)?;
        let mech = parse_choice(parsed, "mech", "futex", Mech::parse, Mech::NAMES)?;
        let (waker_cpu, wakee_cpu) = resolve_cpus(parsed, mode)?;
        let trace = parsed.bool("trace") == Some(true);
        if trace {
            if mode == Mode::PingPong {
                return Err(WorkloadError::Usage(
                    "--trace needs a gap between wakes: use --mode idle, preempt or same-cpu"
                        .into(),
                ));
            }
            crate::waketrace::check_privilege()?;
        }
        Ok(Self {
            mode,
            mech,
            waker_cpu,
            wakee_cpu,
            wakes: bounded(parsed, "wakes", DEFAULT_WAKES, 1, MAX_WAKES)?,
            warmup: bounded(parsed, "warmup", DEFAULT_WARMUP, 0, MAX_WAKES)?,
            gap_us: bounded(parsed, "gap-us", DEFAULT_GAP_US, 0, MAX_GAP_US)?,
            gap_jitter_pct: bounded(parsed, "gap-jitter-pct", DEFAULT_GAP_JITTER_PCT, 0, 100)?,
            waker_spin_us: bounded(
                parsed,
                "waker-spin-us",
                DEFAULT_WAKER_SPIN_US,
                0,
                MAX_GAP_US,
            )?,
            seed: parsed.u64("seed").unwrap_or(DEFAULT_SEED),
            inject_delay_us: bounded(parsed, "inject-delay-us", 0, 0, MAX_DELAY_US)?,
            trace,
        })
    }

    pub(super) fn params_map(&self) -> BTreeMap<String, serde_json::Value> {
        let mut params = BTreeMap::from([
            ("mode".into(), self.mode.as_str().into()),
            ("mech".into(), self.mech.as_str().into()),
            ("waker-cpu".into(), self.waker_cpu.into()),
            ("wakee-cpu".into(), self.wakee_cpu.into()),
            ("wakes".into(), self.wakes.into()),
            ("warmup".into(), self.warmup.into()),
            ("gap-us".into(), self.gap_us.into()),
            ("gap-jitter-pct".into(), self.gap_jitter_pct.into()),
            ("waker-spin-us".into(), self.waker_spin_us.into()),
            ("seed".into(), self.seed.into()),
            ("inject-delay-us".into(), self.inject_delay_us.into()),
        ]);
        // Only when set: traced runs pay for their events and are never pooled with
        // untraced ones, and untraced records keep the parameters they always had.
        if self.trace {
            params.insert("trace".into(), true.into());
        }
        params
    }

    pub(super) fn total_wakes(&self) -> usize {
        self.warmup as usize + self.wakes as usize
    }
}

/// A `Str` option that must name one of a few choices.
pub(crate) fn parse_choice<T>(
    parsed: &ParsedOptions,
    long: &str,
    default: &str,
    parse: fn(&str) -> Option<T>,
    names: &str,
) -> Result<T, WorkloadError> {
    let given = parsed.str(long).flatten();
    let name = given.as_deref().unwrap_or(default);
    parse(name).ok_or_else(|| {
        WorkloadError::Usage(format!(
            "--{long} {name}: unknown {long} (expected {names})"
        ))
    })
}

/// An `Int` option within `min..=max`, or its default.
pub(crate) fn bounded(
    parsed: &ParsedOptions,
    long: &str,
    default: i32,
    min: i32,
    max: i32,
) -> Result<u32, WorkloadError> {
    let value = parsed.int(long).unwrap_or(default);
    if (min..=max).contains(&value) {
        Ok(value.unsigned_abs())
    } else {
        Err(WorkloadError::Usage(format!(
            "--{long} {value}: must be between {min} and {max}"
        )))
    }
}

/// The waker and wakee CPUs: as given (checked against the usable CPUs), else the
/// first usable CPU and a partner that is not its SMT sibling.
fn resolve_cpus(parsed: &ParsedOptions, mode: Mode) -> Result<(u32, u32), WorkloadError> {
    let allowed = cpus::allowed_cpus()?;
    let (waker, wakee) = (
        cpus::given_cpu(parsed, "waker-cpu", &allowed)?,
        cpus::given_cpu(parsed, "wakee-cpu", &allowed)?,
    );
    if mode == Mode::SameCpu {
        let first = allowed
            .first()
            .copied()
            .ok_or_else(|| WorkloadError::Unsupported("no usable CPU".into()))?;
        return match (waker, wakee) {
            (Some(a), Some(b)) if a != b => Err(WorkloadError::Usage(format!(
                "--mode same-cpu: --waker-cpu {a} and --wakee-cpu {b} must be the same CPU"
            ))),
            (Some(cpu), _) | (None, Some(cpu)) => Ok((cpu, cpu)),
            (None, None) => Ok((first, first)),
        };
    }
    let (waker, wakee) = cpus::complete_pair(
        (waker, wakee),
        &allowed,
        &format!("--mode {}", mode.as_str()),
    )?;
    if waker == wakee {
        return Err(WorkloadError::Usage(format!(
            "--waker-cpu and --wakee-cpu are both {waker}: use --mode same-cpu for one CPU"
        )));
    }
    Ok((waker, wakee))
}

/// The gap before each wake: `gap_us` +- `gap_jitter_pct` %, uniform, from the seeded
/// RNG (so a seed reproduces the schedule, and the jitter keeps wakes from locking onto
/// the tick).
pub(super) fn jittered_gaps_ns(p: &Params) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let base_ns = f64::from(p.gap_us) * 1e3;
    let jitter = f64::from(p.gap_jitter_pct) / 100.0;
    (0..p.total_wakes())
        .map(|_| {
            let factor = if jitter > 0.0 {
                1.0 + rng.random_range(-jitter..=jitter)
            } else {
                1.0
            };
            (base_ns * factor).max(0.0) as u64
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perfopt::OptValue;

    fn parsed(values: Vec<(&'static str, OptValue)>) -> ParsedOptions {
        ParsedOptions {
            values,
            ..ParsedOptions::default()
        }
    }

    #[test]
    fn bad_choices_and_counts_are_usage_errors() {
        let cases = vec![
            parsed(vec![("mode", OptValue::Str(Some("sleepy".into())))]),
            parsed(vec![("mech", OptValue::Str(Some("signal".into())))]),
            parsed(vec![("wakes", OptValue::Int(0))]),
            parsed(vec![("gap-jitter-pct", OptValue::Int(101))]),
            parsed(vec![("wakee-cpu", OptValue::Int(-1))]),
            parsed(vec![("waker-cpu", OptValue::Int(100_000))]),
        ];
        for case in cases {
            match Params::from_parsed(&case) {
                Err(WorkloadError::Usage(message)) => assert!(!message.contains('\n')),
                other => panic!("{case:?}: expected a usage error, got {other:?}"),
            }
        }
    }

    #[test]
    fn same_cpu_mode_uses_one_cpu() {
        let p = Params::from_parsed(&parsed(vec![(
            "mode",
            OptValue::Str(Some("same-cpu".into())),
        )]))
        .unwrap();
        assert_eq!(p.waker_cpu, p.wakee_cpu);
    }

    #[test]
    fn gaps_are_jittered_within_bounds_and_reproducible() {
        let p = Params {
            mode: Mode::Idle,
            mech: Mech::Futex,
            waker_cpu: 0,
            wakee_cpu: 1,
            wakes: 1000,
            warmup: 0,
            gap_us: 2000,
            gap_jitter_pct: 25,
            waker_spin_us: 50,
            seed: 7,
            inject_delay_us: 0,
            trace: false,
        };
        let gaps = jittered_gaps_ns(&p);
        assert_eq!(gaps, jittered_gaps_ns(&p));
        assert!(gaps.iter().all(|&g| (1_500_000..=2_500_000).contains(&g)));
        let spread = gaps.iter().max().unwrap() - gaps.iter().min().unwrap();
        assert!(spread > 500_000, "jitter should use most of its range");
        let other = jittered_gaps_ns(&Params { seed: 8, ..p });
        assert_ne!(gaps, other);
    }
}
