//! Property tests of the kernel config reader on generated configs: every value reads
//! back whatever way `n` is written and whatever comments surround it, the
//! differences are exactly the options whose values differ, and no text panics.
use kbench_sys::kconfig::{differences, ConfigValue, KernelConfig};
use proptest::prelude::*;
use std::collections::BTreeMap;

fn value() -> impl Strategy<Value = ConfigValue> {
    prop_oneof![
        Just(ConfigValue::Yes),
        Just(ConfigValue::Module),
        Just(ConfigValue::No),
        "[^\n]{0,16}".prop_map(ConfigValue::Str),
        (-5000i64..100_000).prop_map(|n| ConfigValue::Number(n.to_string())),
        (0u64..u64::MAX).prop_map(|n| ConfigValue::Number(format!("0x{n:x}"))),
    ]
}

/// Option names drawn from a small pool, so that two configs share many of them.
fn config() -> impl Strategy<Value = BTreeMap<String, ConfigValue>> {
    proptest::collection::btree_map("CONFIG_[A-D][A-D0-9_]{0,2}", value(), 0..40)
}

/// The three ways a config says `n`: Kconfig's comment, `=n`, and no line at all.
#[derive(Debug, Clone, Copy)]
enum NoSpelling {
    NotSetComment,
    EqualsN,
    Absent,
}

fn no_spelling() -> impl Strategy<Value = NoSpelling> {
    prop_oneof![
        Just(NoSpelling::NotSetComment),
        Just(NoSpelling::EqualsN),
        Just(NoSpelling::Absent),
    ]
}

/// A config's text as Kconfig would write it, with comments and blank lines between.
fn render(
    options: &BTreeMap<String, ConfigValue>,
    spellings: &[NoSpelling],
    comments: &[bool],
) -> String {
    let mut text = String::from("#\n# Automatically generated file; DO NOT EDIT.\n#\n");
    for (i, (name, value)) in options.iter().enumerate() {
        if comments.get(i).copied().unwrap_or(false) {
            text.push_str("\n#\n# a menu\n#\n");
        }
        match (value, spellings[i % spellings.len()]) {
            (ConfigValue::No, NoSpelling::NotSetComment) => {
                text.push_str(&format!("# {name} is not set\n"))
            }
            (ConfigValue::No, NoSpelling::Absent) => {}
            (value, _) => text.push_str(&format!("{name}={value}\n")),
        }
    }
    text
}

fn spellings() -> impl Strategy<Value = Vec<NoSpelling>> {
    proptest::collection::vec(no_spelling(), 1..8)
}

fn comments() -> impl Strategy<Value = Vec<bool>> {
    proptest::collection::vec(any::<bool>(), 0..40)
}

proptest! {
    #[test]
    fn every_value_reads_back(
        options in config(),
        spellings in spellings(),
        comments in comments(),
    ) {
        let parsed = KernelConfig::parse(&render(&options, &spellings, &comments));
        prop_assert_eq!(parsed.ignored_lines(), 0);
        for (name, value) in &options {
            prop_assert_eq!(parsed.value(name), value);
        }
        let set = options.values().filter(|v| v.is_set()).count();
        prop_assert_eq!(parsed.set_count(), set);
    }

    #[test]
    fn differences_are_the_options_whose_values_differ(
        a in config(),
        b in config(),
        spellings_a in spellings(),
        spellings_b in spellings(),
    ) {
        let pa = KernelConfig::parse(&render(&a, &spellings_a, &[]));
        let pb = KernelConfig::parse(&render(&b, &spellings_b, &[]));
        let no = ConfigValue::No;
        let mut expected: Vec<(String, ConfigValue, ConfigValue)> = a
            .keys()
            .chain(b.keys())
            .map(|k| {
                let va = a.get(k).unwrap_or(&no).clone();
                let vb = b.get(k).unwrap_or(&no).clone();
                (k.clone(), va, vb)
            })
            .filter(|(_, va, vb)| va != vb)
            .collect();
        expected.sort();
        expected.dedup();
        let got: Vec<(String, ConfigValue, ConfigValue)> = differences(&pa, &pb)
            .into_iter()
            .map(|d| (d.option, d.base, d.new))
            .collect();
        prop_assert_eq!(&got, &expected);
        let mirrored: Vec<(String, ConfigValue, ConfigValue)> = differences(&pb, &pa)
            .into_iter()
            .map(|d| (d.option, d.new, d.base))
            .collect();
        prop_assert_eq!(&mirrored, &expected);
        for d in differences(&pa, &pb) {
            prop_assert_eq!(d.is_change(), d.base.is_set() && d.new.is_set());
        }
    }

    #[test]
    fn how_n_is_written_never_makes_a_difference(
        options in config(),
        spellings_a in spellings(),
        spellings_b in spellings(),
        comments in comments(),
    ) {
        let pa = KernelConfig::parse(&render(&options, &spellings_a, &comments));
        let pb = KernelConfig::parse(&render(&options, &spellings_b, &[]));
        prop_assert!(differences(&pa, &pb).is_empty());
    }

    #[test]
    fn a_value_round_trips_through_its_spelling(v in value()) {
        prop_assert_eq!(ConfigValue::parse(&v.to_string()), Some(v));
    }

    #[test]
    fn no_text_panics(text in "(CONFIG_[A-Z]{0,3}|# |=|\"|\\\\|y|m|n|0x|[0-9]| is not set|\n|\r| |.){0,60}") {
        let c = KernelConfig::parse(&text);
        let _ = differences(&c, &KernelConfig::default());
    }
}
