//! What a session's time figures measure. A session run on a machine, or a guest booted
//! under KVM or plain TCG, reads the wall clock. A guest booted under TCG with icount
//! at a fixed shift reads a clock that advances with the instructions its vCPUs
//! execute (2^shift ns an instruction), so its "time" is a count of instructions, and
//! is stored as one: `usecs_per_op` becomes `insns_per_op`, `*_ns` becomes `*_insns`.
//! Figures of the two clocks are never pooled or compared with each other.
use crate::stored::Value;
use serde::{Deserialize, Serialize};

/// The clock behind a session's time figures.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    /// Wall time: what every session measured before counted boots, and any session
    /// that does not say.
    #[default]
    Wall,
    /// Instructions executed by the guest (TCG's icount).
    Instructions,
}

impl Clock {
    pub fn as_str(self) -> &'static str {
        match self {
            Clock::Wall => "wall",
            Clock::Instructions => "instructions",
        }
    }

    /// The unit of a duration read with this clock, as a latency series' figures are:
    /// `ns`, or `insns` counted (at icount shift 0, one per ns).
    pub fn duration_unit(self) -> &'static str {
        match self {
            Clock::Wall => "ns",
            Clock::Instructions => "insns",
        }
    }

    /// Whether this is wall time, the clock a record says nothing of (for serde's
    /// `skip_serializing_if`).
    pub fn is_wall(&self) -> bool {
        *self == Clock::Wall
    }

    /// What each of the two clocks' figures is in a sentence: "timed", "counted".
    pub fn adjective(self) -> &'static str {
        match self {
            Clock::Wall => "timed",
            Clock::Instructions => "counted",
        }
    }
}

impl std::str::FromStr for Clock {
    type Err = String;
    fn from_str(s: &str) -> Result<Clock, String> {
        match s {
            "wall" => Ok(Clock::Wall),
            "instructions" => Ok(Clock::Instructions),
            other => Err(format!("unknown clock '{other}' (wall or instructions)")),
        }
    }
}

/// A time unit's length in ns, for the units kbench's workloads and importers declare.
fn unit_ns(unit: &str) -> Option<f64> {
    Some(match unit {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    })
}

/// The name's time word made a count: `usecs_per_op` -> `insns_per_op`, `total_sec` ->
/// `total_insns`, `ipi_round_trip_p50_ns` -> `ipi_round_trip_p50_insns`,
/// `ops_per_sec` -> `ops_per_ginsns`; a name with no time word gets `_insns`.
fn counted_name(name: &str, rate: bool) -> String {
    let time_word = |w: &str| {
        matches!(
            w,
            "ns" | "nsecs" | "us" | "usecs" | "ms" | "msecs" | "s" | "sec" | "secs"
        )
    };
    let count_word = if rate { "ginsns" } else { "insns" };
    let mut found = false;
    let words: Vec<&str> = name
        .split('_')
        .map(|w| {
            if time_word(w) && !found {
                found = true;
                count_word
            } else {
                w
            }
        })
        .collect();
    if found {
        words.join("_")
    } else {
        format!("{name}_{count_word}")
    }
}

/// `value` as a counted clock gives it, where its unit is a time (`ns`, `us/op`, `s`)
/// or a rate over time (`ops/s`): guest time at icount shift `icount_shift` is
/// 2^shift ns an instruction, so a time becomes instructions (`insns`, `insns/op`) and
/// a rate becomes events per 10^9 instructions (`ops/Ginsns`). Counts (`csw/op`,
/// `IPI/op`) are as they were.
pub fn counted_value(value: &Value, icount_shift: u32) -> Value {
    let ns_per_insn = f64::from(1u32 << icount_shift.min(20));
    let (head, per) = match value.unit.split_once('/') {
        Some((head, per)) => (head, Some(per)),
        None => (value.unit.as_str(), None),
    };
    let mut counted = value.clone();
    if let Some(ns) = unit_ns(head) {
        counted.value = value.value * ns / ns_per_insn;
        counted.unit = match per {
            Some(per) => format!("insns/{per}"),
            None => "insns".into(),
        };
        counted.metric = counted_name(&value.metric, false);
    } else if let Some(ns) = per.and_then(unit_ns) {
        // Events per unit of time to events per 10^9 instructions.
        counted.value = value.value / ns * ns_per_insn * 1e9;
        counted.unit = format!("{head}/Ginsns");
        counted.metric = counted_name(&value.metric, true);
    }
    counted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(metric: &str, v: f64, unit: &str) -> Value {
        Value {
            metric: metric.into(),
            value: v,
            unit: unit.into(),
            higher_is_better: false,
            primary: true,
        }
    }

    fn counted(metric: &str, v: f64, unit: &str, shift: u32) -> (String, f64, String) {
        let c = counted_value(&value(metric, v, unit), shift);
        (c.metric, c.value, c.unit)
    }

    #[test]
    fn times_become_instructions_and_counts_stay() {
        // (metric, value, unit) timed -> as counted at shift 0.
        let cases = [
            (
                ("usecs_per_op", 10.833, "us/op"),
                ("insns_per_op", 10_833.0, "insns/op"),
            ),
            (
                ("ipi_round_trip_p50_ns", 1531.0, "ns"),
                ("ipi_round_trip_p50_insns", 1531.0, "insns"),
            ),
            (("total_sec", 0.5, "s"), ("total_insns", 5e8, "insns")),
            (
                ("task_clock_ns_per_op", 800.0, "ns/op"),
                ("task_clock_insns_per_op", 800.0, "insns/op"),
            ),
            (("csw_per_op", 2.0, "csw/op"), ("csw_per_op", 2.0, "csw/op")),
            (
                ("resched_ipis_per_op", 1.0, "IPI/op"),
                ("resched_ipis_per_op", 1.0, "IPI/op"),
            ),
        ];
        for ((metric, v, unit), (want_metric, want_v, want_unit)) in cases {
            assert_eq!(
                counted(metric, v, unit, 0),
                (want_metric.into(), want_v, want_unit.into()),
                "{metric}"
            );
        }
    }

    #[test]
    fn a_rate_is_per_giga_instruction_and_the_shift_scales_both() {
        assert_eq!(
            counted("ops_per_sec", 100_000.0, "ops/s", 0),
            ("ops_per_ginsns".into(), 100_000.0, "ops/Ginsns".into())
        );
        // shift 2: each instruction is 4 ns of guest time.
        assert_eq!(counted("usecs_per_op", 4.0, "us/op", 2).1, 1000.0);
        assert_eq!(counted("ops_per_sec", 1000.0, "ops/s", 2).1, 4000.0);
    }

    #[test]
    fn the_clock_reads_its_own_name_back() {
        for clock in [Clock::Wall, Clock::Instructions] {
            assert_eq!(clock.as_str().parse::<Clock>(), Ok(clock));
        }
        assert!("cycles".parse::<Clock>().is_err());
        assert_eq!(
            serde_json::to_value(Clock::Instructions).unwrap(),
            "instructions"
        );
    }
}
