//! perf's arithmetic on its printed figures, reproduced exactly.
//!
//! perf reads gettimeofday, so every figure starts from whole microseconds; the
//! milliseconds it prints are truncated, not rounded; ops/sec is a C `(int)` cast,
//! which on x86-64 turns NaN and out-of-range values into INT_MIN.

/// Elapsed time in whole microseconds, as a timeval difference would hold it.
pub fn whole_us(total_ns: u64) -> u64 {
    total_ns / 1_000
}

/// `<sec>.<msec>` with the milliseconds truncated and zero-padded: `1.445`.
pub fn total_time(total_ns: u64) -> String {
    let us = whole_us(total_ns);
    format!("{}.{:03}", us / 1_000_000, (us % 1_000_000) / 1_000)
}

/// `usecs/op`: microseconds over the (signed) loop count, as doubles.
pub fn usecs_per_op(total_ns: u64, loops: f64) -> f64 {
    whole_us(total_ns) as f64 / loops
}

/// `ops/sec`: `(int)(loops / (us / 1e6))` with x86-64's conversion of NaN and
/// out-of-range values to `INT_MIN`.
pub fn ops_per_sec(total_ns: u64, loops: f64) -> i32 {
    c_int_cast(loops / (whole_us(total_ns) as f64 / 1e6))
}

/// C's `(int)` of a double on x86-64: truncation toward zero, INT_MIN when the value
/// does not fit (cvttsd2si's "integer indefinite").
pub fn c_int_cast(value: f64) -> i32 {
    let truncated = value.trunc();
    if truncated.is_nan() || truncated < i32::MIN as f64 || truncated > i32::MAX as f64 {
        i32::MIN
    } else {
        truncated as i32
    }
}

/// C's `%14lf`: six decimals, right-aligned in 14 columns; `inf`, `-inf`, `-nan`
/// spelled as glibc does.
pub fn c_14lf(value: f64) -> String {
    let text = if value.is_nan() {
        // x86-64 produces the negative quiet NaN for 0.0/0.0; glibc prints its sign.
        if value.is_sign_negative() {
            "-nan"
        } else {
            "nan"
        }
        .to_string()
    } else if value.is_infinite() {
        if value > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{value:.6}")
    };
    format!("{text:>14}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn total_time_truncates_milliseconds() {
        assert_eq!(total_time(1_445_999_999), "1.445");
        assert_eq!(total_time(83_999), "0.000");
        assert_eq!(total_time(12_000_000_000), "12.000");
    }

    #[test]
    fn per_op_figures_match_perfs_transcripts() {
        // docs/perf-compat.md §1.1: 84,930 us for 20,000 loops printed 4.246500 and 235488.
        let ns = 84_930_000;
        assert_eq!(c_14lf(usecs_per_op(ns, 20_000.0)), "      4.246500");
        assert_eq!(ops_per_sec(ns, 20_000.0), 235_488);
        // -l 0: inf and 0.
        assert_eq!(c_14lf(usecs_per_op(1_000, 0.0)), "           inf");
        assert_eq!(ops_per_sec(1_000, 0.0), 0);
        // -l -5 over 817 us: -163.400000 and -6119.
        assert_eq!(c_14lf(usecs_per_op(817_000, -5.0)), "   -163.400000");
        assert_eq!(ops_per_sec(817_000, -5.0), -6119);
    }

    #[test]
    fn c_cast_of_nan_and_overflow_is_int_min() {
        assert_eq!(c_int_cast(f64::NAN), i32::MIN);
        assert_eq!(c_int_cast(1e12), i32::MIN);
        assert_eq!(c_int_cast(-2.9), -2);
    }
}
