//! Property tests: cpulists round-trip and no input panics.
use kbench_sys::{format_cpulist, parse_cpulist};
use proptest::prelude::*;

proptest! {
    #[test]
    fn format_then_parse_round_trips(cpus in proptest::collection::vec(0u32..4096, 0..200)) {
        let mut expected = cpus.clone();
        expected.sort_unstable();
        expected.dedup();
        let text = format_cpulist(&cpus);
        prop_assert_eq!(parse_cpulist(&text).unwrap(), expected.clone());
        prop_assert_eq!(format_cpulist(&expected), text);
    }

    #[test]
    fn parse_never_panics(text in "[0-9,:/ \\-a-z]{0,40}") {
        let _ = parse_cpulist(&text);
    }

    #[test]
    fn parse_then_format_is_canonical(text in "([0-9]{1,3}(-[0-9]{1,3})?)(,[0-9]{1,3}(-[0-9]{1,3})?){0,6}") {
        if let Ok(cpus) = parse_cpulist(&text) {
            let canonical = format_cpulist(&cpus);
            prop_assert_eq!(parse_cpulist(&canonical).unwrap(), cpus);
        }
    }
}
