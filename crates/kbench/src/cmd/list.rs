//! `kbench list`: every label in the database.
use crate::session::DbArgs;

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: ListArgs) -> anyhow::Result<i32> {
    let store = args.db.open()?;
    let labels = store.labels().map_err(crate::session::store_error)?;
    if labels.is_empty() {
        println!(
            "no runs in {} yet: kbench run --label NAME",
            store.path().display()
        );
        return Ok(0);
    }
    println!(
        "{:<28} {:>8} {:>6} {:>5}  {:<19}  last",
        "label", "sessions", "runs", "boots", "first"
    );
    for l in labels {
        println!(
            "{:<28} {:>8} {:>6} {:>5}  {:<19}  {}",
            l.label,
            l.sessions,
            l.runs,
            l.boots,
            utc(l.first_unix_ns),
            utc(l.last_unix_ns)
        );
    }
    Ok(0)
}

/// `YYYY-MM-DD HH:MM:SS` in UTC (Howard Hinnant's civil-from-days algorithm).
pub fn utc(unix_ns: u64) -> String {
    let secs = unix_ns / 1_000_000_000;
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_dates() {
        assert_eq!(super::utc(0), "1970-01-01 00:00:00");
        assert_eq!(super::utc(1_796_001_643_000_000_000), "2026-11-30 01:20:43");
        assert_eq!(super::utc(951_782_400_000_000_000), "2000-02-29 00:00:00");
    }
}
