//! The output formats (`--format`), one table: each format's name and, for a
//! comparison, its renderer, the page among the others.
use crate::compare::{
    CompareFormat, Compared, CsvFormat, JsonFormat, Layout, MarkdownFormat, TextFormat,
};
use crate::html::HtmlFormat;

/// An output format of a comparison, and of the reports that take a `--format` too
/// (plausibility, sequential, history), each of which takes the formats it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Text,
    Markdown,
    Json,
    Csv,
    /// The page of `kbench report`, plots and all.
    Html,
}

impl Format {
    /// Every format, in the order `--format` lists them.
    pub const ALL: [Format; 5] = [
        Format::Text,
        Format::Markdown,
        Format::Json,
        Format::Csv,
        Format::Html,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Markdown => "markdown",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Html => "html",
        }
    }

    /// Its renderer of comparisons.
    pub fn renderer(self) -> &'static dyn CompareFormat {
        match self {
            Format::Text => &TextFormat,
            Format::Markdown => &MarkdownFormat,
            Format::Json => &JsonFormat,
            Format::Csv => &CsvFormat,
            Format::Html => &HtmlFormat,
        }
    }

    /// The comparisons in this format: from the reports alone, or from what the
    /// comparisons read (the page's plots need it).
    pub fn render<'a>(self, compared: impl Into<Compared<'a>>, layout: Layout) -> String {
        self.renderer().render(compared.into(), layout)
    }
}

/// The format named by `--format`, if kbench knows it.
pub fn by_name(name: &str) -> Option<Format> {
    name.parse().ok()
}

/// A name that is no [`Format`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFormat(pub String);

impl std::fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown format '{}'", self.0)
    }
}

impl std::error::Error for UnknownFormat {}

impl std::str::FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(name: &str) -> Result<Format, UnknownFormat> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| UnknownFormat(name.to_string()))
    }
}

/// A history in `format`: JSON, the page with a plot of each history, or text for any
/// other.
pub fn history_in_format(
    report: &kbench_analysis::history::HistoryReport,
    format: Format,
) -> String {
    match format {
        Format::Json => crate::history::json(report),
        Format::Html => crate::html::history::render(report),
        _ => crate::history::text(report),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::CompareReport;

    fn fixture() -> Vec<CompareReport> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/single.json");
        vec![serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()]
    }

    #[test]
    fn every_format_renders_through_the_one_table() {
        let reports = fixture();
        for format in Format::ALL {
            assert_eq!(by_name(format.name()), Some(format));
            let text = format.render(&reports, Layout::Compact);
            assert!(text.contains("v6.1-rtconst"), "{}: {text}", format.name());
        }
        // The page from reports alone: the verdicts and tables, no run to plot.
        let page = Format::Html.render(&reports, Layout::Compact);
        assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
        assert!(page.contains("<h2>Verdicts</h2>"), "{page}");
        assert!(!page.contains("seconds since the first run"), "{page}");
        assert_eq!(by_name("pdf"), None);
    }
}
