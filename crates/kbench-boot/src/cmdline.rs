//! The user's words for a booted kernel's command line (`--kernel-arg`, and a side's
//! own `--kernel-arg-a`/`-b`), checked before anything boots or any job is written.

/// The prefix of the words kbench itself puts on the command line for its guest
/// (`kbench.session=`, `kbench.suite=`, ...): a user's word with it would change what
/// the guest runs or which boot its log claims to be.
pub const KBENCH_WORD_PREFIX: &str = "kbench.";

/// Why a word cannot go on a kernel command line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelWordError {
    #[error("{0:?}: an empty word")]
    Empty(String),
    /// A space, a newline or a quote would split the word or swallow the words after
    /// it (the kernel reads `"` as quoting, u-boot's command `'`).
    #[error("{0:?}: one word, without spaces, newlines, control characters or quotes")]
    NotOneWord(String),
    #[error("{0:?}: kbench.* words are kbench's own, for its guest")]
    Kbench(String),
}

/// `word` as it may go on a kernel command line, or why not.
pub fn check_kernel_word(word: &str) -> Result<(), KernelWordError> {
    if word.is_empty() {
        return Err(KernelWordError::Empty(word.into()));
    }
    if word
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '"' || c == '\'')
    {
        return Err(KernelWordError::NotOneWord(word.into()));
    }
    if word.starts_with(KBENCH_WORD_PREFIX) {
        return Err(KernelWordError::Kbench(word.into()));
    }
    Ok(())
}

/// The labels of an A/B's two sides: the user's (`given`), else `vm-<release>` (`vm-a`,
/// `vm-b` for an image without one) with `+WORD` for each of the side's own words, so
/// that a label says what differs. Two default labels that are still the same (one
/// image, the same words: an A/A) end in `-a` and `-b`. Two the same when the user gave
/// one are returned as they are, for the caller to refuse.
pub fn side_labels(
    given: [Option<&str>; 2],
    releases: [&str; 2],
    own_words: [&[String]; 2],
) -> [String; 2] {
    let default = |side: usize| {
        let base = match releases[side] {
            "" => format!("vm-{}", SIDE_NAMES[side]),
            release => format!("vm-{release}"),
        };
        own_words[side]
            .iter()
            .fold(base, |label, word| format!("{label}+{word}"))
    };
    let mut labels = [0, 1].map(|side| given[side].map_or_else(|| default(side), str::to_string));
    if labels[0] == labels[1] && given == [None, None] {
        for (label, name) in labels.iter_mut().zip(SIDE_NAMES) {
            label.push('-');
            label.push_str(name);
        }
    }
    labels
}

const SIDE_NAMES: [&str; 2] = ["a", "b"];

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn default_labels_say_what_differs_and_an_a_a_ends_in_a_and_b() {
        const R: &str = "6.12.117+deb12-cloud-amd64";
        let none: Vec<String> = Vec::new();
        let pti = words(&["pti=on"]);
        assert_eq!(
            side_labels([None, None], [R, R], [&none, &pti]),
            [format!("vm-{R}"), format!("vm-{R}+pti=on")]
        );
        let two = words(&["pti=on", "idle=poll"]);
        assert_eq!(
            side_labels([None, None], ["6.1.0", R], [&two, &none]),
            ["vm-6.1.0+pti=on+idle=poll".to_string(), format!("vm-{R}")]
        );
        assert_eq!(
            side_labels([None, None], [R, R], [&pti, &pti]),
            [format!("vm-{R}+pti=on-a"), format!("vm-{R}+pti=on-b")]
        );
        assert_eq!(
            side_labels([None, None], ["", ""], [&none, &none]),
            ["vm-a", "vm-b"]
        );
        assert_eq!(
            side_labels([Some("base"), None], [R, R], [&none, &none]),
            ["base".to_string(), format!("vm-{R}")]
        );
        assert_eq!(
            side_labels([Some(&format!("vm-{R}")), None], [R, R], [&none, &none]),
            [format!("vm-{R}"), format!("vm-{R}")],
            "the user's label collides: the caller refuses"
        );
    }

    #[test]
    fn ordinary_words_pass_and_the_rest_say_why_not() {
        for good in [
            "pti=on",
            "mitigations=off",
            "idle=poll",
            "isolcpus=1,2",
            "quiet",
        ] {
            assert_eq!(check_kernel_word(good), Ok(()), "{good}");
        }
        assert_eq!(
            check_kernel_word(""),
            Err(KernelWordError::Empty(String::new()))
        );
        for bad in [
            "pti=on idle=poll",
            "a\nb",
            "tab\tx",
            "x=\"y",
            "it's",
            "a\u{1}",
        ] {
            assert_eq!(
                check_kernel_word(bad),
                Err(KernelWordError::NotOneWord(bad.into())),
                "{bad:?}"
            );
        }
        assert_eq!(
            check_kernel_word("kbench.runs=9"),
            Err(KernelWordError::Kbench("kbench.runs=9".into()))
        );
        assert_eq!(
            KernelWordError::NotOneWord("a b".into()).to_string(),
            "\"a b\": one word, without spaces, newlines, control characters or quotes"
        );
    }
}
