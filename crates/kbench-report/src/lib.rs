//! Renderers: one file per output format behind one trait per kind of result.
pub mod bench;
pub mod bisect;
pub mod calibration;
pub mod compare;
pub mod env;
pub mod exec;
pub mod format;
pub mod history;
pub mod html;
pub mod list;
pub mod plausible;
pub mod push;
pub mod run;
pub mod sequential;
pub mod show;
pub mod stat;
pub mod words;

/// `text` cut to at most `width` characters, a `~` marking the cut.
pub fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('~');
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn truncation_marks_the_cut_and_counts_characters() {
        assert_eq!(super::truncate("pipe", 24), "pipe");
        assert_eq!(
            super::truncate("wakeup:--wakes 300 --gap-us 1000", 10),
            "wakeup:--~"
        );
        assert_eq!(super::truncate("µµµµ", 3), "µµ~");
    }
}
