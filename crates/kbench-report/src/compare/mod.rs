//! The verdict of `kbench compare`, one file per format behind [`CompareFormat`] (the
//! page, `html::HtmlFormat`, is one of them), and the words they share.
mod csv;
mod json;
mod markdown;
pub mod table;
pub(crate) mod text;

pub use csv::CsvFormat;
pub use json::JsonFormat;
pub use markdown::MarkdownFormat;
pub use text::TextFormat;
// The shared words, where the binary's commands have always found them; their home is
// crate::words.
use crate::words::{advice_text, from_text};
pub use crate::words::{civil_date, figure, p_text, percent, unit_word, utc, wrap};

pub use kbench_analysis::model::*;
use kbench_analysis::plots::PlotData;
use kbench_analysis::Comparisons;
use kbench_record::PlacementKind;
use kbench_stats::sequential::{NoiseAdvice, PRACTICAL_UNITS_PER_SIDE};
use kbench_stats::{Design, Level, NoiseSource, UnitsToSettle};
use kbench_sys::kconfig::ConfigDifference;

/// How much a format shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// One screen: the primary rows, and the notes of the rows that have any.
    #[default]
    Compact,
    /// Every row with every diagnostic (`--full`).
    Full,
}

impl Layout {
    /// [`Layout::Full`] when `--full` was given, else [`Layout::Compact`].
    pub fn full_if(full: bool) -> Layout {
        match full {
            true => Layout::Full,
            false => Layout::Compact,
        }
    }
}

/// What every format renders: the comparisons of one or more labels against one base,
/// each report one label against the base, and, when the labels were read from the
/// store here, what the comparisons read (the page draws its plots from it).
#[derive(Debug, Clone, Copy)]
pub struct Compared<'a> {
    reports: &'a [CompareReport],
    loaded: Option<&'a Comparisons>,
}

impl<'a> Compared<'a> {
    /// The reports, in the order the NEW labels were asked.
    pub fn reports(&self) -> &'a [CompareReport] {
        self.reports
    }

    /// The plot data of each report, drawn from the labels it read; without them (reports
    /// read back from JSON) each report's plot data is empty.
    pub fn plots(&self) -> Vec<PlotData> {
        match self.loaded {
            Some(comparisons) => kbench_analysis::plots::plot_each(comparisons),
            None => vec![PlotData::default(); self.reports.len()],
        }
    }
}

impl<'a> From<&'a Comparisons> for Compared<'a> {
    fn from(comparisons: &'a Comparisons) -> Self {
        Compared {
            reports: &comparisons.reports,
            loaded: Some(comparisons),
        }
    }
}

impl<'a> From<&'a [CompareReport]> for Compared<'a> {
    fn from(reports: &'a [CompareReport]) -> Self {
        Compared {
            reports,
            loaded: None,
        }
    }
}

impl<'a> From<&'a Vec<CompareReport>> for Compared<'a> {
    fn from(reports: &'a Vec<CompareReport>) -> Self {
        Compared::from(reports.as_slice())
    }
}

/// One way of printing comparisons; `format::Format` names each and finds its renderer.
pub trait CompareFormat {
    fn render(&self, compared: Compared<'_>, layout: Layout) -> String;
}

/// `6.12.0-1-amd64 @ 1a2b3c4d5e6f`: the release and, when recorded, the commit (a hash
/// cut to twelve characters, a name as given).
pub fn kernel_text(release: Option<&str>, commit: Option<&str>) -> String {
    let release = release.unwrap_or("-");
    match commit {
        Some(c) if c.len() == 40 && c.chars().all(|ch| ch.is_ascii_hexdigit()) => {
            format!("{release} @ {}", &c[..12])
        }
        Some(c) => format!("{release} @ {c}"),
        None => release.to_string(),
    }
}

/// One line per real workload of a comparison: its change, and what the micro
/// result that predicts the most for it predicts, through which event.
pub fn carried_lines(r: &CompareReport) -> Vec<String> {
    r.carried.iter().map(carried_line).collect()
}

/// [`carried_lines`] of every report, each led by its NEW label when there are several.
pub fn carried_lines_of_all(reports: &[CompareReport]) -> Vec<String> {
    let several = reports.len() > 1;
    reports
        .iter()
        .flat_map(|r| {
            let lead = if several {
                format!("{}: ", r.new.label)
            } else {
                String::new()
            };
            carried_lines(r)
                .into_iter()
                .map(move |line| format!("{lead}{line}"))
        })
        .collect()
}

fn carried_line(c: &kbench_analysis::carried::CarriedChange) -> String {
    let name = c.workload.rsplit('/').next().unwrap_or(&c.workload);
    let observed = interval_text(c.observed_pct, c.observed_low_pct, c.observed_high_pct);
    let lead = format!("{name} {}: {observed}", c.variant);
    let Some(p) = &c.prediction else {
        return format!("{lead}; no micro result here shares an event with it");
    };
    let micro = p
        .micro_workload
        .rsplit('/')
        .next()
        .unwrap_or(&p.micro_workload);
    let (event, events) = event_words(p.event);
    let predicted = interval_text(
        Some(p.predicted_pct),
        p.predicted_low_pct,
        p.predicted_high_pct,
    );
    format!(
        "{lead}; {micro}'s {:+.2}% ({:+.1} ns per {event}) predicts {predicted} \
         at {:.2} {events} per op of {} ns",
        p.micro_shift_pct,
        p.ns_per_event,
        p.real_events_per_op,
        figure(Some(c.time_per_op_ns))
    )
}

/// `+0.40% [-1.1, +1.9]`, or the estimate alone without an interval.
fn interval_text(estimate: Option<f64>, low: Option<f64>, high: Option<f64>) -> String {
    match (low, high) {
        (Some(lo), Some(hi)) => format!("{} [{lo:+.2}, {hi:+.2}]", percent(estimate)),
        _ => percent(estimate),
    }
}

/// The event as a line names it, one and several.
fn event_words(event: kbench_analysis::plausible::Event) -> (&'static str, &'static str) {
    use kbench_analysis::plausible::Event;
    match event {
        Event::Csw => ("context switch", "context switches"),
        Event::Wake => ("wake", "wakes"),
        Event::IpiCall => ("call IPI", "call IPIs"),
        Event::Ipi => ("IPI", "IPIs"),
        Event::IpiResched => ("resched IPI", "resched IPIs"),
        Event::Irq => ("IRQ", "IRQs"),
        Event::Syscall => ("syscall", "syscalls"),
        Event::Migration => ("migration", "migrations"),
        Event::Softirq => ("softirq", "softirqs"),
    }
}

/// The metric as a reader names it: `wake_latency p99 pooled` for a pooled row.
pub fn metric_text(row: &CompareRow) -> String {
    match &row.kind {
        RowKind::PooledPercentile { series, quantile } => format!(
            "{series} {} pooled",
            kbench_analysis::calibration::quantile_name(*quantile)
        ),
        _ => row.metric.clone(),
    }
}

/// A side's label.
fn side_label(r: &CompareReport, side: SideName) -> &str {
    r.label(side)
}

/// "75 runs, 3 sessions, 1 boot".
pub fn side_counts(s: &SideSummary) -> String {
    let count = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "{}, {}, {}",
        count(s.runs, "run"),
        count(s.sessions, "session"),
        count(s.boots, "boot")
    )
}

/// The design in a few words: "runs interleaved", "3 vs 3 sessions", "4 paired boots".
pub fn design_text(row: &CompareRow) -> String {
    if row.kind == RowKind::Summary {
        return "summaries".into();
    }
    match row.design {
        None | Some(Design::Interleaved) => "runs interleaved in one session".into(),
        Some(Design::Paired(level)) => {
            format!("{} paired {}", row.units_b, unit_word(level, row.units_b))
        }
        Some(Design::Unpaired(level)) => format!(
            "{} vs {} {}",
            row.units_a,
            row.units_b,
            unit_word(level, row.units_b.max(row.units_a))
        ),
    }
}

/// `+1.29% [+0.50%, +2.10%]`.
pub fn change_text(row: &CompareRow) -> String {
    format!(
        "{} [{}, {}]",
        percent(row.shift_pct),
        percent(row.ci_low_pct),
        percent(row.ci_high_pct)
    )
}

/// The verdict and what would settle it, in words.
pub fn verdict_text(row: &CompareRow) -> String {
    let mut out = row.verdict.as_str().to_uppercase();
    if let Some(settle) = &row.settle {
        out.push_str(&format!(": {}", settle_words(settle, row.level())));
        return out;
    }
    // A report written before `settle`: the point estimate alone.
    if let Some(runs) = row.runs_needed {
        out.push_str(&format!(": about {runs} runs per side would settle it"));
    }
    if let Some(units) = row.units_needed {
        let level = row.level();
        out.push_str(&format!(
            ": about {units} {} per side would settle it",
            unit_word(level, units)
        ));
    }
    out
}

/// The range of an estimate: `5-31`, or `5 to beyond any practical number`.
fn settle_range(low: usize, high: Option<usize>) -> String {
    match high {
        Some(high) => format!("{low}-{high}"),
        None => format!("{low} to beyond any practical number"),
    }
}

/// What would settle a row, briefly: `≈9 sessions per side, 5-31`.
pub fn settle_short(settle: &UnitsToSettle, level: Level) -> String {
    match settle {
        UnitsToSettle::Unknown { .. } => format!(
            "{} per side unknown: no noise estimate",
            unit_word(level, 2)
        ),
        UnitsToSettle::About {
            per_side,
            low,
            high,
            ..
        } => format!(
            "≈{per_side} {} per side, {}",
            unit_word(level, *per_side),
            settle_range(*low, *high)
        ),
        UnitsToSettle::BeyondPractical { .. } => format!(
            ">{PRACTICAL_UNITS_PER_SIDE} {} per side",
            unit_word(level, 2)
        ),
    }
}

/// What would settle a row, in words: the number with its range and where the noise
/// estimate came from, or why there is no number, or what to do instead of more units.
pub fn settle_words(settle: &UnitsToSettle, level: Level) -> String {
    let units = unit_word(level, 2);
    match settle {
        UnitsToSettle::Unknown { .. } => format!(
            "how many {units} per side would settle it is unknown: there is no estimate of the noise (2 {units} a side{} would give one)",
            if level == Level::Run { "" } else { ", or `kbench calibrate`," }
        ),
        UnitsToSettle::About {
            per_side,
            low,
            high,
            df,
            from,
        } => format!(
            "about {per_side} {} per side would settle it ({}: the noise, estimated {} with {} df, is itself uncertain)",
            unit_word(level, *per_side),
            settle_range(*low, *high),
            from_text(*from, level),
            df_text(*df)
        ),
        UnitsToSettle::BeyondPractical { at_least, df, from } => format!(
            "more than {PRACTICAL_UNITS_PER_SIDE} {units} per side would settle it (at least {at_least}: the noise, estimated {} with {} df, is itself uncertain): shrink the noise instead: {}",
            from_text(*from, level),
            df_text(*df),
            advice_text(&shrink_advice(level), level)
        ),
    }
}

/// What shrinks the noise of a unit of `level`: more runs only help a session or boot.
fn shrink_advice(level: Level) -> Vec<NoiseAdvice> {
    match level {
        Level::Run => vec![NoiseAdvice::Placement],
        Level::Session | Level::Boot => vec![
            NoiseAdvice::Placement,
            NoiseAdvice::MoreRunsPerUnit,
            NoiseAdvice::Kvm,
        ],
    }
}

/// Degrees of freedom as whole numbers where they are (Satterthwaite's are not).
fn df_text(df: f64) -> String {
    if (df - df.round()).abs() < 0.05 {
        format!("{df:.0}")
    } else {
        format!("{df:.1}")
    }
}

fn runs_list(runs: &[u32]) -> String {
    format!(
        "run{} {}",
        if runs.len() == 1 { "" } else { "s" },
        kbench_sys::format_cpulist(runs)
    )
}

fn class_runs_text(label: &str, classes: &[ClassRuns]) -> String {
    if classes.len() == 1 {
        return format!("{label}: all runs on {}", classes[0].class);
    }
    let parts: Vec<String> = classes
        .iter()
        .map(|c| {
            format!(
                "{} on {} (CPUs {})",
                runs_list(&c.runs),
                c.class,
                kbench_sys::format_cpulist(&c.cpus)
            )
        })
        .collect();
    format!("{label}: {}", parts.join(", "))
}

/// Where runs ran, in words: "on one CPU".
pub fn placement_words(kind: PlacementKind) -> &'static str {
    match kind {
        PlacementKind::SameCpu => "on one CPU",
        PlacementKind::CrossCpu => "across CPUs",
        PlacementKind::Mixed => "moving between CPUs",
    }
}

/// Where a group of runs ran, in words: "9 runs on one CPU".
pub fn placement_runs_words(kind: PlacementKind, runs: usize) -> String {
    let plural = if runs == 1 { "" } else { "s" };
    format!("{runs} run{plural} {}", placement_words(kind))
}

/// "9 runs on one CPU: 1.7020 us/op; 16 across CPUs: 13.020 us/op" (medians).
pub fn placement_groups_text(groups: &[PlacementRuns], unit: &str) -> String {
    groups
        .iter()
        .map(|g| {
            let value = figure(Some(g.median));
            let value = if unit.is_empty() {
                value
            } else {
                format!("{value} {unit}")
            };
            format!(
                "{}: {value}",
                placement_runs_words(g.placement, g.runs.len())
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn placement_groups_or_none(groups: &[PlacementRuns]) -> String {
    if groups.is_empty() {
        "no placement recorded".into()
    } else {
        placement_groups_text(groups, "")
    }
}

/// A diagnostic in words, naming the side by its label.
pub fn diagnostic_text(d: &Diagnostic, r: &CompareReport) -> String {
    match d {
        Diagnostic::Outliers { side, runs } => format!(
            "{}: outlier run(s) {} flagged, kept",
            side_label(r, *side),
            runs.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
        ),
        Diagnostic::WithoutOutliers { verdict, shift_pct } => format!(
            "without the outliers the verdict would be {verdict} ({})",
            percent(*shift_pct)
        ),
        Diagnostic::Bimodal { side } => {
            format!("{}: bimodal (two populations of runs)", side_label(r, *side))
        }
        Diagnostic::Drift { side, pct_per_run } => format!(
            "{}: drifts over run order ({pct_per_run:+.2}%/run)",
            side_label(r, *side)
        ),
        Diagnostic::ShapeChanged => {
            "the distribution's shape changed, not only its location (KS)".into()
        }
        Diagnostic::WithinResolution { resolution_ns } => format!(
            "the pooled percentiles lie at most one tick of the trace's clock ({}) apart, where its ties decide: no change claimed",
            crate::words::duration_text(*resolution_ns as f64)
        ),
        Diagnostic::FailedRuns { side, count } => format!(
            "{}: {count} failed run(s) excluded and not averaged in",
            side_label(r, *side)
        ),
        Diagnostic::ClassMix { base, new } => format!(
            "runs used different CPU classes, so this pooled row mixes them and the rows per class follow; {}; {}",
            class_runs_text(&r.base.label, base),
            class_runs_text(&r.new.label, new)
        ),
        Diagnostic::ModesAreClasses { side, medians } => format!(
            "{}: bimodal, and its modes are its CPU classes ({}): not noise",
            side_label(r, *side),
            medians
                .iter()
                .map(|(class, m)| format!("{class} median {}", figure(Some(*m))))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Diagnostic::PlacementMix {
            base,
            new,
            rows_follow,
        } => format!(
            "{}; {}: {}; {}: {} (medians)",
            if *rows_follow {
                "runs ran with different placements, so this row mixes them and the rows per placement follow"
            } else {
                "the sides ran with different placements, so this row compares two populations: pin them with --placement"
            },
            r.base.label,
            placement_groups_or_none(base),
            r.new.label,
            placement_groups_or_none(new)
        ),
        Diagnostic::ModesArePlacements { side, groups } => format!(
            "{}: its runs split by placement, with no overlap ({}): two populations, not noise",
            side_label(r, *side),
            placement_groups_text(groups, "")
        ),
        Diagnostic::NotSignificantAfterBh {
            rows,
            q,
            row_verdict,
        } => format!(
            "alone this row would say {row_verdict}; not significant after Benjamini-Hochberg across {rows} rows (q={q:.3})"
        ),
        Diagnostic::Pooled {
            samples_a,
            samples_b,
            runs_a,
            runs_b,
        } => format!(
            "pooled over {samples_a} and {samples_b} samples from {runs_a} and {runs_b} runs; the interval resamples runs, not samples"
        ),
        Diagnostic::NoReplication { level } => {
            let word = level.as_str();
            format!(
                "one {word} a side: a {word} effect cannot be told from the change, so no claim; run 3 {word}s per side, or `kbench calibrate` once"
            )
        }
        Diagnostic::BorrowedNoise {
            level,
            source,
            unit_cv_pct,
            df,
        } => format!(
            "one {} on a side: the {}-to-{} spread ({unit_cv_pct:.2}%, {df:.0} df) is borrowed from {}",
            level.as_str(),
            level.as_str(),
            level.as_str(),
            match source {
                NoiseSource::Calibration => "this machine's calibration",
                NoiseSource::OtherSide => "the other side's units",
            }
        ),
        Diagnostic::DeltaRaised {
            delta_pct,
            level,
            units,
        } => format!(
            "delta raised to {delta_pct:.2}%: the smallest change this machine resolves with {units} {} a side",
            unit_word(*level, *units)
        ),
        Diagnostic::SummaryOnly => {
            "summary-based (mean, standard error, n): no outlier, drift or shape diagnostics possible"
                .into()
        }
        Diagnostic::Engine { text } => text.clone(),
    }
}

/// A record not compared, in words.
pub fn not_compared_text(n: &NotCompared, r: &CompareReport) -> String {
    match n {
        NotCompared::VariantsDiffer {
            workload,
            base,
            new,
        } => format!(
            "{workload}: variants differ ({base} in {}, {new} in {}): never compared",
            r.base.label, r.new.label
        ),
        NotCompared::ParamsDiffer {
            workload,
            differences,
        } => format!(
            "{workload}: parameters differ ({}): never pooled",
            differences
                .iter()
                .map(|(k, a, b)| format!("{k} {a} in {}, {b} in {}", r.base.label, r.new.label))
                .collect::<Vec<_>>()
                .join("; ")
        ),
        NotCompared::OnlyIn {
            side,
            workload,
            variant,
            params,
        } => format!(
            "{workload} [{variant}] {params}: only in {}",
            side_label(r, *side)
        ),
    }
}

/// A note about a side, in words.
pub fn note_text(n: &ReportNote, r: &CompareReport) -> String {
    match n {
        ReportNote::AllRunsFailed {
            side,
            attempted,
            first_error,
        } => format!(
            "{}: every one of its {attempted} runs failed{}",
            side_label(r, *side),
            first_error
                .as_ref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        ),
        ReportNote::SessionsDiffer { side, keys } => format!(
            "{}: its sessions differ among themselves in {}",
            side_label(r, *side),
            keys.join(", ")
        ),
        ReportNote::OneBoot { side } => one_boot_text(side_label(r, *side)),
        ReportNote::NothingToCompare => {
            "nothing to compare: the labels share no workload with the same parameters".into()
        }
        ReportNote::Counted => "counted boots (--clock instructions): every time figure is \
            the instructions the guest executed, blind to the host's load; caches, the TLB, \
            branch prediction and memory latency are not seen"
            .into(),
    }
}

/// The note of labels that ran in one boot only.
pub fn one_boot_text(labels: &str) -> String {
    format!(
        "{labels}: one boot only; boot-to-boot variation is not sampled (run again after a reboot)"
    )
}

/// How many differing options the one-screen note names before `--full` is needed.
const CONFIG_OPTIONS_NAMED: usize = 3;

/// An option's two values: `CONFIG_HZ 250 -> 1000`.
pub fn config_difference_text(d: &ConfigDifference) -> String {
    format!("{} {} -> {}", d.option, d.base, d.new)
}

/// "469 options differ".
fn config_count_text(c: &ConfigComparison) -> String {
    let n = c.differences.len();
    if n == 1 {
        "1 option differs".into()
    } else {
        format!("{n} options differ")
    }
}

/// "469 options differ: 31 changed, 190 set in A only, 248 set in B only" (the
/// kinds there are).
pub fn config_counts_text(r: &CompareReport, c: &ConfigComparison) -> String {
    let kinds: Vec<String> = [
        (c.changed, "changed".to_string()),
        (c.only_base, format!("set in {} only", r.base.label)),
        (c.only_new, format!("set in {} only", r.new.label)),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    format!("{}: {}", config_count_text(c), kinds.join(", "))
}

/// The sides without a known config: "v6.1-ptr" or "v6.1-ptr and v6.12".
fn unknown_sides_text(r: &CompareReport, sides: &[SideName]) -> String {
    sides
        .iter()
        .map(|s| side_label(r, *s))
        .collect::<Vec<_>>()
        .join(" and ")
}

/// Which machines were compared, when the labels span several.
pub fn machines_note_text(r: &CompareReport) -> Option<String> {
    let left_out = |label: &str, machines: &[String]| {
        (!machines.is_empty())
            .then(|| format!("{label}'s runs on {} left out", machines.join(", ")))
    };
    match r.machines.as_ref()? {
        MachinesCompared::One {
            machine,
            base_left_out,
            new_left_out,
        } => {
            let out: Vec<String> = [
                left_out(&r.base.label, base_left_out),
                left_out(&r.new.label, new_left_out),
            ]
            .into_iter()
            .flatten()
            .collect();
            Some(if out.is_empty() {
                format!("machine: {machine} only")
            } else {
                format!("machine: {machine} only ({})", out.join("; "))
            })
        }
        MachinesCompared::Across { base, new } => Some(format!(
            "across machines: each machine is one unit, its boots and sessions within it \
             (boots counted are machines); {}: {}; {}: {}",
            r.base.label,
            base.join(", "),
            r.new.label,
            new.join(", ")
        )),
    }
}

/// The kernel configs in one line for the one-screen notes: the count and the first
/// options; `None` when the configs are the same or neither is known.
pub fn config_note_text(r: &CompareReport) -> Option<String> {
    match &r.config_differences {
        ConfigDifferences::Compared(c) if c.differences.is_empty() => None,
        ConfigDifferences::Compared(c) => {
            let named: Vec<String> = c
                .differences
                .iter()
                .take(CONFIG_OPTIONS_NAMED)
                .map(config_difference_text)
                .collect();
            let more = if c.differences.len() > named.len() {
                ", ...; --full lists all"
            } else {
                ""
            };
            Some(format!(
                "kernel config: {} ({}{more})",
                config_count_text(c),
                named.join(", ")
            ))
        }
        ConfigDifferences::Unknown { sides } if sides.len() == 1 => Some(format!(
            "kernel config: not compared, unknown for {}",
            unknown_sides_text(r, sides)
        )),
        ConfigDifferences::Unknown { .. } => None,
    }
}

/// What the kernel configs' comparison found, in one line: the counts and hashes, the
/// same config, or why nothing was compared.
pub fn config_status_text(r: &CompareReport) -> String {
    match &r.config_differences {
        ConfigDifferences::Compared(c) if c.same_text => format!(
            "the same config (sha256 {}), {} options set",
            short_hash(&c.base_hash),
            c.base_options_set
        ),
        ConfigDifferences::Compared(c) if c.differences.is_empty() => format!(
            "no option differs, {} set; the texts differ (sha256 {} -> {}) in comments or order only",
            c.base_options_set,
            short_hash(&c.base_hash),
            short_hash(&c.new_hash)
        ),
        ConfigDifferences::Compared(c) => format!(
            "{}; sha256 {} ({} options set) -> {} ({})",
            config_counts_text(r, c),
            short_hash(&c.base_hash),
            c.base_options_set,
            short_hash(&c.new_hash),
            c.new_options_set
        ),
        ConfigDifferences::Unknown { sides } => {
            format!("not compared: unknown for {}", unknown_sides_text(r, sides))
        }
    }
}

/// Every option the configs set differently, in the report's order.
pub fn config_differences(r: &CompareReport) -> &[ConfigDifference] {
    match &r.config_differences {
        ConfigDifferences::Compared(c) => &c.differences,
        ConfigDifferences::Unknown { .. } => &[],
    }
}

/// The kernel configs in full: the status line, then every differing option.
pub fn config_lines(r: &CompareReport) -> Vec<String> {
    std::iter::once(config_status_text(r))
        .chain(config_differences(r).iter().map(config_difference_text))
        .collect()
}

/// The first 12 hex digits of a sha256, as `git` shortens its hashes.
fn short_hash(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

/// The noise model of the header: which calibration, and its warnings.
pub fn noise_text(r: &CompareReport) -> String {
    let Some(c) = &r.calibration else {
        return "noise: no calibration of this machine (kbench calibrate): a side with one session or boot borrows nothing, so rows with one a side make no claim".into();
    };
    let date = civil_date(c.created_unix_ns);
    let mut out = format!(
        "noise: calibrated here {date}, {} session{}{}",
        c.sessions,
        if c.sessions == 1 { "" } else { "s" },
        if c.boots > 1 {
            format!(" in {} boots", c.boots)
        } else {
            String::new()
        }
    );
    if let Some(cv) = c.headline_between_session_cv_pct {
        out.push_str(&format!(": between-session CV {cv:.1}%"));
    }
    for w in &c.warnings {
        out.push_str(&match w {
            CalibrationWarning::OtherKernel {
                calibrated,
                compared,
            } => format!("; made on kernel {calibrated}, not {compared}"),
            CalibrationWarning::Old {
                age_days,
                limit_days,
            } => format!("; {age_days:.0} days old (over {limit_days:.0})"),
            CalibrationWarning::OtherVersion { calibrated } => {
                format!("; made by kbench {calibrated}")
            }
        });
    }
    out
}

/// The delta in words.
pub fn delta_text(r: &CompareReport) -> String {
    if r.delta.explicit {
        format!("delta {}%", r.delta.pct)
    } else {
        format!(
            "delta {}% or what this machine resolves, whichever is larger",
            r.delta.pct
        )
    }
}
