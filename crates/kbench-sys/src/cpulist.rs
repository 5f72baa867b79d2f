//! The kernel's cpulist form (`0-3,6`), as in `/sys/devices/system/cpu/online`.
use crate::SysError;

/// CPU ids at or above this are rejected: the kernel's NR_CPUS tops out at 8192, and the cap
/// keeps a typo such as `0-4000000000` from allocating gigabytes.
pub const MAX_CPU_ID: u32 = 1 << 16;

/// The most CPUs a list may name, counting each repeat: the kernel never repeats one,
/// and without a bound `0-65535,0-65535,...` in a 64 KiB file would expand to half a
/// billion ids (gigabytes, minutes) before the duplicates are dropped.
const MAX_LISTED: usize = 4 * MAX_CPU_ID as usize;

/// Parses a cpulist: comma-separated CPU ids and ranges `N-M`, with the kernel's optional
/// stride `N-M:used/group` (`0-15:2/4` = 0,1,4,5,8,9,12,13). Whitespace around the list and
/// items is ignored; an empty list gives an empty vector. The result is sorted, without
/// duplicates.
pub fn parse_cpulist(input: &str) -> Result<Vec<u32>, SysError> {
    let mut cpus = Vec::new();
    for item in input.trim().split(',') {
        let item = item.trim();
        if item.is_empty() {
            if input.trim().is_empty() {
                continue;
            }
            return Err(cpulist_error(input, "empty item between commas"));
        }
        push_item(input, item, &mut cpus)?;
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Adds the CPUs of one item (`6`, `0-3` or `0-15:2/4`) to `cpus`.
fn push_item(input: &str, item: &str, cpus: &mut Vec<u32>) -> Result<(), SysError> {
    let (range, stride) = match item.split_once(':') {
        Some((range, stride)) => (range, Some(stride)),
        None => (item, None),
    };
    let (first, last) = match range.split_once('-') {
        Some((a, b)) => (parse_id(input, a)?, parse_id(input, b)?),
        None => {
            let id = parse_id(input, range)?;
            (id, id)
        }
    };
    if first > last {
        return Err(cpulist_error(
            input,
            &format!("range {range} goes backwards"),
        ));
    }
    let (used, group) = match stride {
        None => (1, 1),
        Some(s) => parse_stride(input, s)?,
    };
    let mut start = first;
    while start <= last {
        let end = start.saturating_add(used - 1).min(last);
        if cpus.len() + (end - start) as usize >= MAX_LISTED {
            return Err(cpulist_error(
                input,
                &format!("names over {MAX_LISTED} CPUs, counting repeats"),
            ));
        }
        cpus.extend(start..=end);
        match start.checked_add(group) {
            Some(next) => start = next,
            None => break,
        }
    }
    Ok(())
}

/// Parses the `used/group` part of a strided range.
fn parse_stride(input: &str, stride: &str) -> Result<(u32, u32), SysError> {
    let bad = || cpulist_error(input, &format!("bad stride '{stride}' (want used/group)"));
    let (used, group) = stride.split_once('/').ok_or_else(bad)?;
    let used: u32 = used.trim().parse().map_err(|_| bad())?;
    let group: u32 = group.trim().parse().map_err(|_| bad())?;
    if used == 0 || group == 0 || used > group {
        return Err(bad());
    }
    Ok((used, group))
}

/// Parses one CPU id, rejecting ids at or above [`MAX_CPU_ID`].
fn parse_id(input: &str, text: &str) -> Result<u32, SysError> {
    let text = text.trim();
    let id: u32 = text
        .parse()
        .map_err(|_| cpulist_error(input, &format!("'{text}' is not a CPU number")))?;
    if id >= MAX_CPU_ID {
        return Err(cpulist_error(input, &format!("CPU {id} is out of range")));
    }
    Ok(id)
}

fn cpulist_error(input: &str, reason: &str) -> SysError {
    SysError::Cpulist {
        input: input.trim().to_string(),
        reason: reason.to_string(),
    }
}

/// Formats CPU ids in the kernel's cpulist form: sorted, duplicates dropped, consecutive ids
/// folded into ranges (`[0, 1, 2, 3, 6]` → `0-3,6`; two in a row print as `0-1`, as the
/// kernel does). An empty slice gives an empty string.
pub fn format_cpulist(cpus: &[u32]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_kernel_forms() {
        assert_eq!(parse_cpulist("0-3,6\n").unwrap(), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_cpulist("").unwrap(), Vec::<u32>::new());
        assert_eq!(parse_cpulist("\n").unwrap(), Vec::<u32>::new());
        assert_eq!(parse_cpulist("5").unwrap(), vec![5]);
        assert_eq!(parse_cpulist(" 3, 1 ,1").unwrap(), vec![1, 3]);
        assert_eq!(
            parse_cpulist("0-15:2/4").unwrap(),
            vec![0, 1, 4, 5, 8, 9, 12, 13]
        );
    }

    #[test]
    fn rejects_garbage_with_a_reason() {
        for bad in [
            "a",
            "1-",
            "-1",
            "3-1",
            "1,,2",
            "0-99999999",
            "0-3:0/4",
            "0-3:5/4",
            &["0-65535"; 5].join(","),
        ] {
            let err = parse_cpulist(bad).unwrap_err().to_string();
            assert!(err.contains("invalid CPU list"), "{bad}: {err}");
        }
    }

    #[test]
    fn every_cpu_a_few_times_over_is_still_a_list() {
        let four_times = ["0-65535"; 4].join(",");
        assert_eq!(
            parse_cpulist(&four_times).unwrap().len(),
            MAX_CPU_ID as usize
        );
        let strided = ["0-65535:1/2"; 8].join(",");
        assert_eq!(
            parse_cpulist(&strided).unwrap().len(),
            MAX_CPU_ID as usize / 2
        );
    }

    #[test]
    fn formats_ranges_like_the_kernel() {
        assert_eq!(format_cpulist(&[6, 0, 1, 2, 3]), "0-3,6");
        assert_eq!(format_cpulist(&[0, 1]), "0-1");
        assert_eq!(format_cpulist(&[]), "");
        assert_eq!(format_cpulist(&[4, 4, 2]), "2,4");
    }
}
