//! Files of numbers, one per line, as `kbench stat` compares them: the parsing only,
//! so it can be tested and fuzzed without files.
use std::fmt;

/// Why a text is not a file of numbers. The caller adds the file's name: the errors
/// carry only the 1-based line ([`NumbersError::line`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NumbersError {
    /// A line that reads as a number but is infinite or NaN (`inf`, `1e999`).
    NotFinite { line: usize, text: String },
    /// A line that is not a number at all.
    NotANumber { line: usize, text: String },
    /// Only blank lines and comments.
    NoNumbers,
}

impl NumbersError {
    /// The 1-based line at fault, `None` when the text as a whole is (no numbers).
    pub fn line(&self) -> Option<usize> {
        match self {
            NumbersError::NotFinite { line, .. } | NumbersError::NotANumber { line, .. } => {
                Some(*line)
            }
            NumbersError::NoNumbers => None,
        }
    }
}

impl fmt::Display for NumbersError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NumbersError::NotFinite { text, .. } => write!(f, "not a finite number: {text:?}"),
            NumbersError::NotANumber { text, .. } => write!(f, "not a number: {text:?}"),
            NumbersError::NoNumbers => f.write_str("no numbers found"),
        }
    }
}

impl std::error::Error for NumbersError {}

/// Reads one finite number per line; `#` starts a comment and blank lines are
/// skipped. At least one number is required: an empty side has no statistics.
pub fn parse_numbers(text: &str) -> Result<Vec<f64>, NumbersError> {
    let mut values = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let content = line.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let line = index + 1;
        let text = content.to_string();
        match content.parse::<f64>() {
            Ok(v) if v.is_finite() => values.push(v),
            Ok(_) => return Err(NumbersError::NotFinite { line, text }),
            Err(_) => return Err(NumbersError::NotANumber { line, text }),
        }
    }
    if values.is_empty() {
        return Err(NumbersError::NoNumbers);
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_blank_lines_are_skipped() {
        let text = "# run times in ms\n\n1.5\n 2 # a comment\n-3e2\n";
        assert_eq!(parse_numbers(text), Ok(vec![1.5, 2.0, -300.0]));
    }

    #[test]
    fn bad_lines_are_named_by_number() {
        let err = parse_numbers("1\nabc\n").unwrap_err();
        assert_eq!(err.line(), Some(2));
        assert_eq!(err.to_string(), "not a number: \"abc\"");
        let err = parse_numbers("1\n\ninf\n").unwrap_err();
        assert_eq!(err.line(), Some(3));
        assert_eq!(err.to_string(), "not a finite number: \"inf\"");
        assert_eq!(
            parse_numbers("NaN"),
            Err(NumbersError::NotFinite {
                line: 1,
                text: "NaN".into()
            })
        );
    }

    #[test]
    fn a_text_without_numbers_is_refused() {
        for text in ["", "\n\n", "# only a comment\n"] {
            assert_eq!(
                parse_numbers(text),
                Err(NumbersError::NoNumbers),
                "{text:?}"
            );
        }
    }
}
