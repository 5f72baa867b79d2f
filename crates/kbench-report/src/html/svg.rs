//! The small SVG toolkit of the report: one escape function for every piece of text,
//! linear and log scales, nice ticks with a bounded count, and an element writer
//! whose colours are CSS classes (so dark mode and print restyle them).
use std::fmt::Write;

/// Text for HTML or SVG content and attribute values: the five characters markup
/// reserves become entities, and control characters (which XML 1.0 forbids) are
/// dropped. Everything a report shows passes through here.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

/// The most ticks an axis gets, whatever its range: a range of 1e-14 must not make
/// a million of them.
pub const MAX_TICKS: usize = 8;

/// A linear map from a data interval onto a pixel interval.
#[derive(Debug, Clone, Copy)]
pub struct Linear {
    lo: f64,
    hi: f64,
    from_px: f64,
    to_px: f64,
}

impl Linear {
    /// A scale over `[lo, hi]`; a zero-width range is widened around its value so that
    /// points still land mid-axis.
    pub fn new(lo: f64, hi: f64, from_px: f64, to_px: f64) -> Linear {
        let (lo, hi) = if hi > lo {
            (lo, hi)
        } else {
            let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.05 };
            (lo - pad, lo + pad)
        };
        Linear {
            lo,
            hi,
            from_px,
            to_px,
        }
    }

    /// `values`' range, padded by 5% each side.
    pub fn fit(values: impl IntoIterator<Item = f64>, from_px: f64, to_px: f64) -> Option<Linear> {
        let (lo, hi) = finite_range(values)?;
        let pad = (hi - lo) * 0.05;
        Some(Linear::new(lo - pad, hi + pad, from_px, to_px))
    }

    pub fn px(&self, v: f64) -> f64 {
        self.from_px + (v - self.lo) / (self.hi - self.lo) * (self.to_px - self.from_px)
    }

    pub fn domain(&self) -> (f64, f64) {
        (self.lo, self.hi)
    }

    pub fn ticks(&self) -> Vec<f64> {
        nice_ticks(self.lo, self.hi)
    }

    /// The ticks with their labels ([`tick_labels`]).
    pub fn labelled_ticks(&self) -> Vec<(f64, String)> {
        let ticks = self.ticks();
        let labels = tick_labels(&ticks);
        ticks.into_iter().zip(labels).collect()
    }
}

/// A base-10 log map; only for positive data.
#[derive(Debug, Clone, Copy)]
pub struct Log10 {
    linear: Linear,
}

impl Log10 {
    /// None unless `lo` and `hi` are positive and finite.
    pub fn new(lo: f64, hi: f64, from_px: f64, to_px: f64) -> Option<Log10> {
        (lo > 0.0 && hi > 0.0 && lo.is_finite() && hi.is_finite()).then(|| Log10 {
            linear: Linear::new(lo.log10(), hi.log10(), from_px, to_px),
        })
    }

    pub fn px(&self, v: f64) -> f64 {
        self.linear.px(v.log10())
    }
}

/// The smallest and largest finite values, if any.
pub fn finite_range(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// Round tick values in `[lo, hi]` at a step of 1, 2 or 5 times a power of ten, at
/// most [`MAX_TICKS`] of them.
pub fn nice_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return Vec::new();
    }
    let raw = (hi - lo) / (MAX_TICKS - 1) as f64;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|s| (hi - lo) / s <= (MAX_TICKS - 1) as f64)
        .unwrap_or(10.0 * power);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last)
        .take(MAX_TICKS)
        .map(|i| i as f64 * step)
        .collect()
}

/// A tick label: few digits, no float noise (`0.30000000000000004`).
pub fn tick_text(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let magnitude = v.abs().log10().floor();
    let decimals = if magnitude >= 3.0 {
        0
    } else {
        (2.0 - magnitude).max(0.0) as usize
    };
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// The labels of evenly spaced ticks, each with the decimals their step needs to tell
/// neighbours apart (`11.62, 11.64`, never `11.6, 11.6`) and all with the same; a lone
/// tick is labelled as [`tick_text`] does.
pub fn tick_labels(ticks: &[f64]) -> Vec<String> {
    let step = match ticks {
        [a, b, ..] => (b - a).abs(),
        _ => return ticks.iter().map(|t| tick_text(*t)).collect(),
    };
    if !(step.is_finite() && step > 0.0) {
        return ticks.iter().map(|t| tick_text(*t)).collect();
    }
    // A step of 1, 2 or 5 times 10^-k needs k decimals; the epsilon keeps a step of
    // 0.1 computed as 0.09999999999999964 at one.
    let decimals = (-step.log10() - 1e-6).ceil().max(0.0) as usize;
    ticks
        .iter()
        .map(|t| {
            let text = format!("{t:.decimals$}");
            // `-0.00` is a zero.
            if text
                .trim_start_matches('-')
                .chars()
                .all(|c| c == '0' || c == '.')
            {
                text.trim_start_matches('-').to_string()
            } else {
                text
            }
        })
        .collect()
}

/// An SVG element being written. Coordinates are pixels, rounded to a tenth.
pub struct Svg {
    out: String,
}

/// Pixels with one decimal: enough for a screen, and the file stays small.
pub fn px(v: f64) -> String {
    let rounded = (v * 10.0).round() / 10.0;
    if rounded == rounded.trunc() {
        format!("{}", rounded as i64)
    } else {
        format!("{rounded:.1}")
    }
}

impl Svg {
    /// An inline SVG of `width` x `height` with its accessible title and description.
    pub fn new(width: f64, height: f64, title: &str, desc: &str) -> Svg {
        let mut out = String::new();
        let _ = write!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\"><title>{}</title><desc>{}</desc>",
            px(width),
            px(height),
            px(width),
            px(height),
            escape(title),
            escape(desc)
        );
        Svg { out }
    }

    pub fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, class: &str) {
        let _ = write!(
            self.out,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"{class}\"/>",
            px(x1),
            px(y1),
            px(x2),
            px(y2)
        );
    }

    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, class: &str) {
        let _ = write!(
            self.out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"{class}\"/>",
            px(x),
            px(y),
            px(w.max(0.0)),
            px(h.max(0.0))
        );
    }

    /// A text at (x, y); `anchor` is `start`, `middle` or `end`.
    pub fn text(&mut self, x: f64, y: f64, anchor: &str, class: &str, text: &str) {
        let _ = write!(
            self.out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"{anchor}\" class=\"{class}\">{}</text>",
            px(x),
            px(y),
            escape(text)
        );
    }

    /// A text read bottom to top, centred on (x, y): a y axis's unit.
    pub fn vertical_text(&mut self, x: f64, y: f64, class: &str, text: &str) {
        let _ = write!(
            self.out,
            "<text x=\"{x}\" y=\"{y}\" text-anchor=\"middle\" transform=\"rotate(-90 {x} {y})\" class=\"{class}\">{}</text>",
            escape(text),
            x = px(x),
            y = px(y)
        );
    }

    pub fn polyline(&mut self, points: &[(f64, f64)], class: &str) {
        if points.is_empty() {
            return;
        }
        let coords: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{},{}", px(*x), px(*y)))
            .collect();
        let _ = write!(
            self.out,
            "<polyline points=\"{}\" class=\"{class}\"/>",
            coords.join(" ")
        );
    }

    /// A marker of `shape` centred at (x, y), with a tooltip.
    pub fn marker(&mut self, shape: Shape, x: f64, y: f64, class: &str, tooltip: &str) {
        let r = 3.5;
        let element = match shape {
            Shape::Circle => format!(
                "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" class=\"{class}\">",
                px(x),
                px(y),
                px(r)
            ),
            Shape::Square => format!(
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"{class}\">",
                px(x - r),
                px(y - r),
                px(2.0 * r),
                px(2.0 * r)
            ),
        };
        let closing = match shape {
            Shape::Circle => "</circle>",
            Shape::Square => "</rect>",
        };
        let _ = write!(
            self.out,
            "{element}<title>{}</title>{closing}",
            escape(tooltip)
        );
    }

    pub fn finish(mut self) -> String {
        self.out.push_str("</svg>");
        self.out
    }
}

/// The marker shape of a side: colour is never the only cue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    Circle,
    Square,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_bounded_for_any_range() {
        assert_eq!(nice_ticks(0.0, 10.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        for (lo, hi) in [(1.0, 1.0 + 1e-14), (0.0, 1e300), (-5.0, 3.0), (1e-9, 2e-9)] {
            let ticks = nice_ticks(lo, hi);
            assert!(ticks.len() <= MAX_TICKS, "{lo}..{hi}: {ticks:?}");
            assert!(ticks
                .iter()
                .all(|t| *t >= lo - 1e-12 * lo.abs() && *t <= hi * 1.0000001 + 1e-300));
        }
        assert!(nice_ticks(1.0, 1.0).is_empty());
        assert!(nice_ticks(f64::NAN, 1.0).is_empty());
    }

    #[test]
    fn escape_leaves_no_markup() {
        assert_eq!(
            escape("<script>\"a\" & 'b'</script>\u{7}"),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
    }

    #[test]
    fn tick_labels_carry_no_float_noise() {
        assert_eq!(tick_text(0.30000000000000004), "0.3");
        assert_eq!(tick_text(1500.0), "1500");
        assert_eq!(tick_text(-2.5), "-2.5");
        assert_eq!(tick_text(0.000125), "0.000125");
    }

    #[test]
    fn tick_labels_tell_neighbouring_ticks_apart() {
        // A narrow range: five ticks between 11.6 and 11.7.
        let ticks = nice_ticks(11.61, 11.69);
        let labels = tick_labels(&ticks);
        assert_eq!(labels, ["11.62", "11.64", "11.66", "11.68"]);
        let s = Linear::new(11.615, 11.705, 0.0, 100.0);
        let labels: Vec<String> = s.labelled_ticks().into_iter().map(|(_, l)| l).collect();
        assert_eq!(labels, ["11.62", "11.64", "11.66", "11.68", "11.70"]);
        for (lo, hi) in [
            (11.6, 11.7),
            (0.0, 1.0),
            (-0.3, 0.3),
            (1e-9, 2e-9),
            (999.9, 1000.1),
            (1.0, 1.0 + 1e-12),
            (-5.0, 3.0),
            (12_345.0, 12_346.0),
        ] {
            let labels = tick_labels(&nice_ticks(lo, hi));
            for pair in labels.windows(2) {
                assert_ne!(pair[0], pair[1], "{lo}..{hi}: {labels:?}");
            }
            let negative_zero = |l: &String| l.starts_with('-') && l.parse::<f64>() == Ok(0.0);
            assert!(!labels.iter().any(negative_zero), "{lo}..{hi}: {labels:?}");
        }
        assert_eq!(
            tick_labels(&nice_ticks(0.0, 10.0)),
            ["0", "2", "4", "6", "8", "10"]
        );
        assert_eq!(
            tick_labels(&nice_ticks(-0.3, 0.3)),
            ["-0.2", "-0.1", "0.0", "0.1", "0.2"]
        );
        assert_eq!(tick_labels(&[2.5]), ["2.5"]);
    }

    #[test]
    fn a_zero_width_range_still_maps_inside_the_axis() {
        let s = Linear::new(5.0, 5.0, 0.0, 100.0);
        assert!((s.px(5.0) - 50.0).abs() < 1e-9);
        assert!(Log10::new(0.0, 10.0, 0.0, 1.0).is_none());
    }
}
