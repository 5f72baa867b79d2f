//! Dates in UTC, as reports and the store's refusals name a session's start.

/// `YYYY-MM-DD HH:MM:SS` in UTC.
pub fn utc(unix_ns: u64) -> String {
    let rem = unix_ns / 1_000_000_000 % 86_400;
    format!(
        "{} {:02}:{:02}:{:02}",
        civil_date(unix_ns),
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// `2026-12-01` from nanoseconds since the epoch (UTC), by the civil-from-days
/// algorithm (Hinnant).
pub fn civil_date(unix_ns: u64) -> String {
    let days = (unix_ns / 86_400_000_000_000) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
