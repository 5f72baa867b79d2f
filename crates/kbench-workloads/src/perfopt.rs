//! A pure re-implementation of the command-line behaviour of perf's option
//! parser (libsubcmd), as used by `perf bench` and its benchmarks.
//!
//! kbench aims to be a drop-in for `perf bench sched …`, so scripts that feed
//! it perf command lines must see the same acceptance, the same values, the
//! same error texts and the same exit codes. Everything here follows the
//! behaviour described in `docs/perf-compat.md` §1.3 and observed on Debian
//! perf 6.1.187; no perf source is reproduced.
//!
//! The module never prints and never exits: [`Parser::parse`] returns either
//! the parsed values or a [`ParseExit`] holding exactly what perf would print
//! on stdout and stderr and the status it would exit with.
//!
//! Summary of the grammar (see the doc for the details):
//! - short options bundle (`-Tl 100`), take attached (`-l100`) or separate
//!   (`-l 100`) values, and `-h` anywhere in a bundle asks for help;
//! - long options take `--loop=100` or `--loop 100`, may be abbreviated to a
//!   unique prefix, and may be negated with `--no-<name>`;
//! - `--` ends parsing; other non-option words are collected, not rejected;
//! - `--help`, `--help-all`, `--list-opts` and `--list-cmds` are built in.
//!
//! Where perf's behaviour is undefined or the doc leaves it open, kbench
//! chooses, and documents at the spot:
//! - options without a short name sort after all lettered ones in the help,
//!   by long name (perf's own rule, e.g. in `perf stat -h`), and show four
//!   spaces where the `-X, ` would be;
//! - perf sometimes reads past the end of a word (`--no`, `-h ''`); the
//!   following words are used as perf's memory layout would give them, and
//!   the environment beyond them is taken to match nothing;
//! - words after `--` go to [`ParsedOptions::after_double_dash`], not `rest`;
//! - switches are characters, not bytes, so non-ASCII input never splits a
//!   UTF-8 sequence (perf would print a partial byte).

use std::fmt::Write as _;

/// Exit status perf uses for help output and every parse error.
pub const EXIT_USAGE: i32 = 129;
/// Exit status perf uses after `--list-opts` / `--list-cmds`.
pub const EXIT_LIST: i32 = 130;

/// Width of the left (option) column of the help, and the gap after it.
const USAGE_OPTS_WIDTH: usize = 24;
const USAGE_GAP: usize = 2;

/// What kind of value an option takes, mirroring libsubcmd's option types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptKind {
    /// `OPT_BOOLEAN`: no value; `--no-<name>` sets it false.
    Bool,
    /// `OPT_INTEGER`: C `int`, parsed with base-10 `strtol` over the whole
    /// string and truncated to 32 bits; a sign is allowed.
    Int,
    /// `OPT_UINTEGER`: `unsigned int`; a leading `-` is rejected ("expects an
    /// unsigned numerical value"), otherwise like [`OptKind::Int`].
    UInt,
    /// `OPT_U64`: a leading `-` is rejected, then base-10 `strtoull`.
    U64,
    /// `OPT_STRING` or a value-taking `OPT_CALLBACK`; `argh` is the value's
    /// placeholder in the help, e.g. `"SEND,RECV"` shows as `<SEND,RECV>`.
    Str {
        /// Placeholder shown between `<` and `>` in the help line.
        argh: &'static str,
    },
}

/// One option of a parser table. Table order matters: it is the order of
/// `--list-opts`, of abbreviation resolution and of the usage lines printed
/// after a value error, exactly as in perf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptSpec {
    /// The single-character switch, if any (`'l'` for `-l`).
    pub short: Option<char>,
    /// The long name without dashes (`"loop"` for `--loop`).
    pub long: &'static str,
    /// What value the option takes.
    pub kind: OptKind,
    /// The help text shown by `-h`.
    pub help: &'static str,
}

/// One parsed option value.
#[derive(Debug, Clone, PartialEq)]
pub enum OptValue {
    /// A boolean switch; `false` for `--no-<name>`.
    Bool(bool),
    /// A signed 32-bit integer (`0` for `--no-<name>`, as perf does).
    Int(i32),
    /// An unsigned 32-bit integer (`0` for `--no-<name>`).
    UInt(u32),
    /// An unsigned 64-bit integer (`0` for `--no-<name>`).
    U64(u64),
    /// A string; `None` for `--no-<name>`.
    Str(Option<String>),
}

/// The result of a successful parse.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedOptions {
    /// Every option given, as (long name, value), in command-line order.
    /// An option given twice appears twice; the accessors return the last.
    pub values: Vec<(&'static str, OptValue)>,
    /// Non-option words (a lone `-` counts as one). With
    /// [`Parser::stop_at_non_option`], everything from the first non-option
    /// word on, unparsed.
    pub rest: Vec<String>,
    /// The words after a `--`, which ends option parsing. libsubcmd hands
    /// them back to its caller after the non-option words; the sched
    /// benchmarks ignore them, but the `perf bench` front end (which stops at
    /// the first non-option) accepts `perf bench -- sched pipe`, so a caller
    /// emulating it should treat these like `rest`.
    pub after_double_dash: Vec<String>,
}

impl ParsedOptions {
    /// The last value given for `long`, of any kind.
    pub fn last(&self, long: &str) -> Option<&OptValue> {
        self.values
            .iter()
            .rev()
            .find(|(name, _)| *name == long)
            .map(|(_, value)| value)
    }

    /// The last value of the boolean option `long`, if it was given.
    pub fn bool(&self, long: &str) -> Option<bool> {
        match self.last(long)? {
            OptValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The last value of the [`OptKind::Int`] option `long`, if given.
    pub fn int(&self, long: &str) -> Option<i32> {
        match self.last(long)? {
            OptValue::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// The last value of the [`OptKind::UInt`] option `long`, if given.
    pub fn uint(&self, long: &str) -> Option<u32> {
        match self.last(long)? {
            OptValue::UInt(v) => Some(*v),
            _ => None,
        }
    }

    /// The last value of the [`OptKind::U64`] option `long`, if given.
    pub fn u64(&self, long: &str) -> Option<u64> {
        match self.last(long)? {
            OptValue::U64(v) => Some(*v),
            _ => None,
        }
    }

    /// The last value of the [`OptKind::Str`] option `long`, if given:
    /// `Some(None)` means the last occurrence was `--no-<name>`.
    pub fn str(&self, long: &str) -> Option<Option<String>> {
        match self.last(long)? {
            OptValue::Str(s) => Some(s.clone()),
            _ => None,
        }
    }
}

/// What perf would print and exit with instead of running: help (`-h`,
/// stderr, 129), `--list-opts` (stdout, 130) or a parse error (stderr, 129).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseExit {
    /// Text for standard output.
    pub stdout: String,
    /// Text for standard error.
    pub stderr: String,
    /// Process exit status.
    pub code: i32,
}

impl ParseExit {
    fn stderr(stderr: String) -> Self {
        ParseExit {
            stdout: String::new(),
            stderr,
            code: EXIT_USAGE,
        }
    }

    fn listing(stdout: String) -> Self {
        ParseExit {
            stdout,
            stderr: String::new(),
            code: EXIT_LIST,
        }
    }
}

/// A perf-style option parser over a table of [`OptSpec`]s.
#[derive(Debug, Clone, Copy)]
pub struct Parser<'a> {
    /// The usage string, e.g. `"perf bench sched pipe <options>"`.
    pub usage: &'a str,
    /// The option table.
    pub specs: &'a [OptSpec],
    /// Stop at the first non-option word (perf's top-level `perf bench`
    /// options are parsed like this); otherwise non-options are skipped.
    pub stop_at_non_option: bool,
}

/// How the user spelled the option that failed, which decides the name in
/// the error line and which help lines follow the usage.
#[derive(Debug, Clone, Copy)]
enum Spelling<'w> {
    /// `-x`: errors say ``switch `x'`` and show that switch's help line.
    Short(char),
    /// `--word…`: errors say ``option `name'`` (``no-name`` when negated) and
    /// show the lines of options whose long name starts with the whole word
    /// after `--`, `=value` included.
    Long {
        /// Everything after `--` as typed.
        word: &'w str,
        /// Index of the typed word in `args`.
        index: usize,
        negated: bool,
    },
}

/// Why parsing stopped, before it is rendered into a [`ParseExit`].
#[derive(Debug)]
enum Stop<'w> {
    /// `-h`, `--help` or `--help-all`; the words after it filter the list.
    Help {
        filter: &'w [String],
    },
    ListOpts,
    ListCmds,
    /// A value problem for a known option.
    Value {
        spec: usize,
        spelling: Spelling<'w>,
        reason: &'static str,
    },
    /// A validation failure reported by the caller's check.
    Check {
        message: String,
        spelling: Spelling<'w>,
    },
    Ambiguous {
        word: &'w str,
        index: usize,
        first: (usize, bool),
        second: (usize, bool),
    },
    UnknownSwitch(char),
    UnknownOption(&'w str),
    /// `-thread` when `--thread` was meant.
    DashTypo(&'w str),
}

/// The result of matching a long option word against the table.
enum LongMatch<'w> {
    Found {
        spec: usize,
        negated: bool,
        attached: Option<&'w str>,
    },
    Ambiguous {
        first: (usize, bool),
        second: (usize, bool),
    },
    Unknown,
}

impl<'a> Parser<'a> {
    /// Parses `args` (without the program or benchmark name) as perf would.
    pub fn parse(&self, args: &[String]) -> Result<ParsedOptions, ParseExit> {
        self.parse_with_check(args, |_, _| Ok(()))
    }

    /// Like [`Parser::parse`], but calls `check(long, value)` for each value
    /// as soon as it is parsed, the way perf runs an option's callback
    /// during parsing. An `Err(message)` stops parsing like a failing perf
    /// callback: `message`, then the short usage and the help lines for the
    /// option as it was spelled (none for `--name=value`), exit 129. This is
    /// what pipe `-G` needs for "it should have two cgroup names: …".
    pub fn parse_with_check(
        &self,
        args: &[String],
        check: impl FnMut(&'static str, &OptValue) -> Result<(), String>,
    ) -> Result<ParsedOptions, ParseExit> {
        let mut run = Run {
            parser: self,
            args,
            pos: 0,
            parsed: ParsedOptions::default(),
            check,
        };
        match run.words() {
            Ok(()) => Ok(run.parsed),
            Err(stop) => Err(self.render(stop, args)),
        }
    }

    /// The full help text exactly as perf lays it out for `-h`: an empty
    /// line, the usage line, an empty line, the sorted option lines and a
    /// final empty line.
    pub fn help(&self) -> String {
        self.help_filtered(&[])
    }

    /// The output of a callback-style validation error for option `long`
    /// found after parsing (e.g. pipe `-G` without a comma): the message
    /// line, an empty line, the usage line, an empty line and that option's
    /// help line(s); stderr, exit 129. This matches perf when the option was
    /// given as `-G x` or `--cgroups x`; for `--cgroups=x` perf prints no
    /// help line, which [`Parser::parse_with_check`] reproduces.
    pub fn option_error(&self, long: &str, message_line: &str) -> ParseExit {
        let mut out = line_terminated(message_line);
        out.push_str(&self.short_usage());
        for spec in self.specs.iter().filter(|s| s.long == long) {
            out.push_str(&option_help_line(spec));
        }
        ParseExit::stderr(out)
    }

    /// `--list-opts` output: each long name as `--name `, then a newline, in
    /// table order.
    pub fn list_opts(&self) -> String {
        let mut out: String = self
            .specs
            .iter()
            .map(|s| format!("--{} ", s.long))
            .collect();
        out.push('\n');
        out
    }

    /// `"\n Usage: <usage>\n\n"`: what follows every value error.
    fn short_usage(&self) -> String {
        format!("\n Usage: {}\n\n", self.usage)
    }

    /// The help text, listing only the options that match one of `filter`
    /// (all options when `filter` is empty), as `-h word…` does.
    fn help_filtered(&self, filter: &[String]) -> String {
        let mut out = format!("\n Usage: {}\n\n", self.usage);
        for spec in sorted_for_help(self.specs) {
            if filter.is_empty() || filter.iter().any(|w| help_word_selects(w, spec)) {
                out.push_str(&option_help_line(spec));
            }
        }
        out.push('\n');
        out
    }

    fn render(&self, stop: Stop<'_>, args: &[String]) -> ParseExit {
        match stop {
            Stop::Help { filter } => ParseExit::stderr(self.help_filtered(filter)),
            Stop::ListOpts => ParseExit::listing(self.list_opts()),
            Stop::ListCmds => ParseExit::listing("\n".to_string()),
            Stop::Value {
                spec,
                spelling,
                reason,
            } => {
                let name = self.error_name(spec, spelling);
                // perf's error line has no newline of its own: the usage's
                // leading newline ends it, so no empty line follows.
                let mut out = format!(" Error: {name} {reason}");
                out.push_str(&self.usage_after_error(spelling, args));
                ParseExit::stderr(out)
            }
            Stop::Check { message, spelling } => {
                let mut out = line_terminated(&message);
                out.push_str(&self.usage_after_error(spelling, args));
                ParseExit::stderr(out)
            }
            Stop::Ambiguous {
                word,
                index,
                first,
                second,
            } => {
                let mut out = format!(
                    " Error: Ambiguous option: {word} (could be --{}{} or --{}{})\n",
                    negation_prefix(first.1),
                    self.specs[first.0].long,
                    negation_prefix(second.1),
                    self.specs[second.0].long,
                );
                let spelling = Spelling::Long {
                    word,
                    index,
                    negated: false,
                };
                out.push_str(&self.usage_after_error(spelling, args));
                ParseExit::stderr(out)
            }
            Stop::UnknownSwitch(c) => {
                ParseExit::stderr(format!("  Error: unknown switch `{c}'\n{}", self.help()))
            }
            Stop::UnknownOption(word) => {
                ParseExit::stderr(format!("  Error: unknown option `{word}'\n{}", self.help()))
            }
            Stop::DashTypo(word) => ParseExit::stderr(format!(
                " Error: did you mean `--{word}` (with two dashes ?)\n"
            )),
        }
    }

    /// ``switch `x'``, ``option `name'`` or ``option `no-name'``.
    fn error_name(&self, spec: usize, spelling: Spelling<'_>) -> String {
        let spec = &self.specs[spec];
        match spelling {
            Spelling::Short(c) => format!("switch `{c}'"),
            Spelling::Long { negated, .. } => {
                format!("option `{}{}'", negation_prefix(negated), spec.long)
            }
        }
    }

    /// The usage block perf prints after an error: a newline, the usage line,
    /// an empty line, then the help lines for the option as spelled. For a short switch that is
    /// the first option with that letter. For a long word, perf lists every
    /// option whose name starts with the whole word typed after `--` (so
    /// none for `--name=value`), plus, when that word is a prefix of `no-`,
    /// the options whose names start with the text three bytes into the
    /// word; that reads past the word into the following command-line
    /// words, which is reproduced here, and into the environment after the
    /// last one, which is treated as matching nothing.
    fn usage_after_error(&self, spelling: Spelling<'_>, args: &[String]) -> String {
        let mut out = self.short_usage();
        match spelling {
            Spelling::Short(c) => {
                if let Some(spec) = self.specs.iter().find(|s| s.short == Some(c)) {
                    out.push_str(&option_help_line(spec));
                }
            }
            Spelling::Long { word, index, .. } => {
                let past_no = text_three_bytes_into(word, args.get(index + 1..).unwrap_or(&[]));
                for spec in self.specs {
                    if spec.long.starts_with(word) {
                        out.push_str(&option_help_line(spec));
                    }
                    if "no-".starts_with(word) {
                        if let Some(tail) = &past_no {
                            if spec.long.starts_with(tail.as_str()) {
                                out.push_str(&option_help_line(spec));
                            }
                        }
                    }
                }
            }
        }
        out
    }
}

/// State of one parse: the words, the cursor and what has been parsed.
struct Run<'p, 'w, F> {
    parser: &'p Parser<'p>,
    args: &'w [String],
    pos: usize,
    parsed: ParsedOptions,
    check: F,
}

impl<'p, 'w, F> Run<'p, 'w, F>
where
    F: FnMut(&'static str, &OptValue) -> Result<(), String>,
{
    /// The main loop over the words of the command line.
    fn words(&mut self) -> Result<(), Stop<'w>> {
        while self.pos < self.args.len() {
            let word: &'w str = &self.args[self.pos];
            if !word.starts_with('-') || word == "-" {
                if self.parser.stop_at_non_option {
                    self.parsed.rest.extend_from_slice(&self.args[self.pos..]);
                    return Ok(());
                }
                self.parsed.rest.push(word.to_string());
            } else if let Some(long) = word.strip_prefix("--") {
                if long.is_empty() {
                    let after = &self.args[self.pos + 1..];
                    self.parsed.after_double_dash.extend_from_slice(after);
                    return Ok(());
                }
                self.long_word(long)?;
            } else {
                self.short_word(&word[1..])?;
            }
            self.pos += 1;
        }
        Ok(())
    }

    /// The words after the current one, which `-h` uses as a filter.
    fn following_words(&self) -> &'w [String] {
        self.args.get(self.pos + 1..).unwrap_or(&[])
    }

    /// A `-…` word: a bundle of switches, the last of which may take the
    /// rest of the word (or the next word) as its value.
    fn short_word(&mut self, bundle: &'w str) -> Result<(), Stop<'w>> {
        let mut at = 0;
        while let Some(c) = bundle[at..].chars().next() {
            if c == 'h' {
                return Err(Stop::Help {
                    filter: self.following_words(),
                });
            }
            let after = at + c.len_utf8();
            let Some(spec) = self.parser.specs.iter().position(|s| s.short == Some(c)) else {
                return Err(unknown_in_bundle(c, &bundle[after..]));
            };
            let attached = Some(&bundle[after..]).filter(|rest| !rest.is_empty());
            if self.parser.specs[spec].kind != OptKind::Bool {
                let value = self.take_value(spec, Spelling::Short(c), attached, false)?;
                return self.record(spec, value, Spelling::Short(c));
            }
            self.record(spec, OptValue::Bool(true), Spelling::Short(c))?;
            if at == 0 && attached.is_some() {
                self.check_dash_typo(bundle)?;
            }
            at = after;
        }
        Ok(())
    }

    /// perf's guard against `-thread` for `--thread`: once the first letter
    /// of a bundle of three or more letters turned out to be a plain
    /// switch, the bundle is rejected if it starts with `no-` or is a prefix
    /// of some long option name.
    fn check_dash_typo(&self, bundle: &'w str) -> Result<(), Stop<'w>> {
        if bundle.len() < 3 {
            return Ok(());
        }
        let looks_long = bundle.starts_with("no-")
            || self.parser.specs.iter().any(|s| s.long.starts_with(bundle));
        if looks_long {
            return Err(Stop::DashTypo(bundle));
        }
        Ok(())
    }

    /// A `--…` word (`long` excludes the dashes).
    fn long_word(&mut self, long: &'w str) -> Result<(), Stop<'w>> {
        match long {
            "help-all" | "help" => {
                return Err(Stop::Help {
                    filter: self.following_words(),
                })
            }
            "list-opts" => return Err(Stop::ListOpts),
            "list-cmds" => return Err(Stop::ListCmds),
            _ => {}
        }
        match match_long(self.parser.specs, long) {
            LongMatch::Found {
                spec,
                negated,
                attached,
            } => {
                let spelling = Spelling::Long {
                    word: long,
                    index: self.pos,
                    negated,
                };
                let value = self.take_value(spec, spelling, attached, negated)?;
                self.record(spec, value, spelling)
            }
            LongMatch::Ambiguous { first, second } => Err(Stop::Ambiguous {
                word: long,
                index: self.pos,
                first,
                second,
            }),
            LongMatch::Unknown => Err(Stop::UnknownOption(long)),
        }
    }

    /// Stores a value and runs the caller's check on it.
    fn record(
        &mut self,
        spec: usize,
        value: OptValue,
        spelling: Spelling<'w>,
    ) -> Result<(), Stop<'w>> {
        let long = self.parser.specs[spec].long;
        if let Err(message) = (self.check)(long, &value) {
            return Err(Stop::Check { message, spelling });
        }
        self.parsed.values.push((long, value));
        Ok(())
    }

    /// Works out the value of option `spec`, consuming the next word when
    /// the value is neither attached nor implied, like perf's `get_value`.
    fn take_value(
        &mut self,
        spec: usize,
        spelling: Spelling<'w>,
        attached: Option<&'w str>,
        negated: bool,
    ) -> Result<OptValue, Stop<'w>> {
        let kind = self.parser.specs[spec].kind;
        let fail = |reason| Stop::Value {
            spec,
            spelling,
            reason,
        };
        let is_long = matches!(spelling, Spelling::Long { .. });
        if attached.is_some() && (negated || (is_long && kind == OptKind::Bool)) {
            return Err(fail("takes no value"));
        }
        if negated {
            return Ok(unset_value(kind));
        }
        if kind == OptKind::Bool {
            return Ok(OptValue::Bool(true));
        }
        let text = match attached {
            Some(text) => text,
            None => self.next_word().ok_or_else(|| fail("requires a value"))?,
        };
        parse_value(kind, text).map_err(fail)
    }

    /// Consumes and returns the next word, whatever it looks like (perf
    /// takes `-1` in `-g -1` as the value).
    fn next_word(&mut self) -> Option<&'w str> {
        let word = self.args.get(self.pos + 1)?;
        self.pos += 1;
        Some(word)
    }
}

/// The error for an unknown letter inside a short bundle. perf rebuilds the
/// word from the offending letter on with a leading dash, so a `-` inside a
/// bundle (`-t-x`) is reported as the unknown long option `x`.
fn unknown_in_bundle<'w>(c: char, after: &'w str) -> Stop<'w> {
    if c == '-' {
        Stop::UnknownOption(after)
    } else {
        Stop::UnknownSwitch(c)
    }
}

/// The value `--no-<name>` gives: false, zero or no string.
fn unset_value(kind: OptKind) -> OptValue {
    match kind {
        OptKind::Bool => OptValue::Bool(false),
        OptKind::Int => OptValue::Int(0),
        OptKind::UInt => OptValue::UInt(0),
        OptKind::U64 => OptValue::U64(0),
        OptKind::Str { .. } => OptValue::Str(None),
    }
}

/// Converts a value word, returning perf's reason text on failure.
fn parse_value(kind: OptKind, text: &str) -> Result<OptValue, &'static str> {
    const NOT_NUMBER: &str = "expects a numerical value";
    const NOT_UNSIGNED: &str = "expects an unsigned numerical value";
    match kind {
        OptKind::Bool => Ok(OptValue::Bool(true)),
        OptKind::Str { .. } => Ok(OptValue::Str(Some(text.to_string()))),
        // C `int = strtol(...)`: truncation to the low 32 bits.
        OptKind::Int => c_strtol(text)
            .map(|v| OptValue::Int(v as i32))
            .ok_or(NOT_NUMBER),
        _ if text.starts_with('-') => Err(NOT_UNSIGNED),
        // perf parses unsigned int with strtol too, then truncates.
        OptKind::UInt => c_strtol(text)
            .map(|v| OptValue::UInt(v as u32))
            .ok_or(NOT_NUMBER),
        OptKind::U64 => c_strtoull(text).map(OptValue::U64).ok_or(NOT_NUMBER),
    }
}

/// The pieces of a C number: optional whitespace, an optional sign and
/// decimal digits. `None` unless the whole text is consumed. As in C, a text
/// with no digits leaves the end pointer at the start, so it is accepted
/// (as zero) only when it is empty.
struct CNumber {
    negative: bool,
    /// The magnitude, saturated at 2^64 so overflow stays detectable.
    magnitude: u128,
}

fn c_number(text: &str) -> Option<CNumber> {
    if text.is_empty() {
        return Some(CNumber {
            negative: false,
            magnitude: 0,
        });
    }
    let body = text.trim_start_matches(is_c_space);
    let (negative, unsigned) = match body.as_bytes().first() {
        Some(b'-') => (true, &body[1..]),
        Some(b'+') => (false, &body[1..]),
        _ => (false, body),
    };
    if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let cap = 1u128 << 64;
    let magnitude = unsigned.bytes().fold(0u128, |acc, digit| {
        (acc * 10 + u128::from(digit - b'0')).min(cap)
    });
    Some(CNumber {
        negative,
        magnitude,
    })
}

/// C `isspace` in the C locale.
fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r')
}

/// glibc `strtol` base 10 on a 64-bit `long`, whole string required;
/// out-of-range values clamp to `LONG_MIN`/`LONG_MAX`.
fn c_strtol(text: &str) -> Option<i64> {
    let n = c_number(text)?;
    let value = if n.negative {
        let min_magnitude = i128::from(i64::MIN).unsigned_abs();
        i64::try_from(-(n.magnitude.min(min_magnitude) as i128)).unwrap_or(i64::MIN)
    } else {
        i64::try_from(n.magnitude).unwrap_or(i64::MAX)
    };
    Some(value)
}

/// glibc `strtoull` base 10, whole string required; out of range gives
/// `ULLONG_MAX`, and a `-` sign (possible after leading whitespace) negates
/// modulo 2^64.
fn c_strtoull(text: &str) -> Option<u64> {
    let n = c_number(text)?;
    let magnitude = u64::try_from(n.magnitude).unwrap_or(u64::MAX);
    if n.negative && magnitude != u64::MAX {
        Some(magnitude.wrapping_neg())
    } else {
        Some(magnitude)
    }
}

/// Matches the text after `--` against the table the way perf does: an
/// exact name (optionally with `=value`) wins; otherwise a unique prefix of
/// a name (or of `no-<name>`) is accepted; two prefix matches and no exact
/// one are ambiguous. perf's quirks are kept: a word that is itself a
/// prefix of `no-` (`--n`, `--no`) also abbreviates every negated option,
/// and only the part before `=` is compared when abbreviating.
fn match_long<'w>(specs: &[OptSpec], word: &'w str) -> LongMatch<'w> {
    let (name_part, value_part) = match word.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (word, None),
    };
    let mut latest: Option<(usize, bool)> = None;
    let mut earlier: Option<(usize, bool)> = None;
    let mut attached: Option<&'w str> = None;
    for (index, spec) in specs.iter().enumerate() {
        let found = match exact_long(spec.long, word) {
            Some(found) => Some(found),
            None => {
                let Some(negated) = abbreviates(spec.long, word, name_part) else {
                    continue;
                };
                if latest.is_some() {
                    earlier = latest;
                }
                if !negated && value_part.is_some() {
                    attached = value_part;
                }
                latest = Some((index, negated));
                None
            }
        };
        let Some((negated, rest)) = found else {
            continue;
        };
        if rest.is_empty() {
            return LongMatch::Found {
                spec: index,
                negated,
                attached,
            };
        }
        if let Some(value) = rest.strip_prefix('=') {
            return LongMatch::Found {
                spec: index,
                negated,
                attached: Some(value),
            };
        }
    }
    match (earlier, latest) {
        (Some(first), Some(second)) => LongMatch::Ambiguous { first, second },
        (None, Some((spec, negated))) => LongMatch::Found {
            spec,
            negated,
            attached,
        },
        _ => LongMatch::Unknown,
    }
}

/// An exact spelling of option `long` at the start of `word`: `long…`,
/// `no-long…`, or (for options whose own name starts with `no-`) the name
/// without it, meaning the negation. Returns (negated, text after the name).
fn exact_long<'w>(long: &str, word: &'w str) -> Option<(bool, &'w str)> {
    if let Some(rest) = word.strip_prefix(long) {
        return Some((false, rest));
    }
    if let Some(rest) = long
        .strip_prefix("no-")
        .and_then(|base| word.strip_prefix(base))
    {
        return Some((true, rest));
    }
    let rest = word.strip_prefix("no-")?.strip_prefix(long)?;
    Some((true, rest))
}

/// Whether `word` (with `name_part` its text before any `=`) abbreviates
/// option `long`; `Some(true)` for an abbreviated negation.
fn abbreviates(long: &str, word: &str, name_part: &str) -> Option<bool> {
    if let Some(base) = long.strip_prefix("no-") {
        if base.starts_with(word) {
            return Some(true);
        }
    }
    if long.starts_with(name_part) {
        return Some(false);
    }
    if "no-".starts_with(word) {
        return Some(true);
    }
    let negated = word.strip_prefix("no-")?;
    long.starts_with(negated).then_some(true)
}

/// `"no-"` for negated spellings, `""` otherwise.
fn negation_prefix(negated: bool) -> &'static str {
    if negated {
        "no-"
    } else {
        ""
    }
}

/// `line` with exactly one trailing newline added if it had none.
fn line_terminated(line: &str) -> String {
    let mut out = line.to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// The string perf reads three bytes into `word` when it tests whether an
/// option name starts with the text after `no-`. For `word` shorter than
/// three bytes that is past the word's terminating NUL, in the following
/// command-line words (laid out one after another, NUL-terminated); beyond
/// them lies the environment, for which `None` is returned.
fn text_three_bytes_into(word: &str, following: &[String]) -> Option<String> {
    let mut memory: Vec<u8> = Vec::new();
    for text in std::iter::once(word).chain(following.iter().map(String::as_str)) {
        memory.extend_from_slice(text.as_bytes());
        memory.push(0);
    }
    let tail = memory.get(3..)?;
    let end = tail.iter().position(|&b| b == 0)?;
    Some(String::from_utf8_lossy(&tail[..end]).into_owned())
}

/// The options in help order: by lower-cased short name, options without
/// one after all letters (perf sorts them as if their letter were the one
/// after `z`), ties broken by long name.
fn sorted_for_help(specs: &[OptSpec]) -> Vec<&OptSpec> {
    let mut sorted: Vec<&OptSpec> = specs.iter().collect();
    sorted.sort_by(|a, b| help_sort_key(a).cmp(&help_sort_key(b)));
    sorted
}

fn help_sort_key(spec: &OptSpec) -> (u32, &str) {
    let after_z = u32::from('z') + 1;
    let letter = spec
        .short
        .map_or(after_z, |c| u32::from(c.to_ascii_lowercase()));
    (letter, spec.long)
}

/// Whether a word after `-h` selects `spec` for listing: a one-letter word
/// names a short switch; a longer word matches a long name exactly or
/// appears in the help text ignoring ASCII case; a dashed word `-x` or
/// `--name` names the switch or the long option. A lone `-` selects the
/// options without a short name (perf compares the byte after the dash,
/// NUL, with their missing letter). An empty word selects everything (perf
/// reads past it, and the empty string occurs in every help text).
fn help_word_selects(word: &str, spec: &OptSpec) -> bool {
    if let Some(dashed) = word.strip_prefix('-') {
        let second = dashed.chars().next();
        return second == spec.short
            || dashed
                .strip_prefix('-')
                .is_some_and(|long| long == spec.long);
    }
    if word.len() == 1 {
        return spec.short == word.chars().next();
    }
    spec.long == word
        || spec
            .help
            .to_ascii_lowercase()
            .contains(&word.to_ascii_lowercase())
}

/// One option's help line(s): `    -X, --long <n>`, padded to column 24 plus
/// a two-space gap, then the help; when the left part is wider than 24, the
/// help goes on the next line after 26 spaces. Options without a short name
/// show four spaces in its place: `        --long`.
fn option_help_line(spec: &OptSpec) -> String {
    let mut left = String::from("    ");
    match spec.short {
        Some(c) => {
            let _ = write!(left, "-{c}, ");
        }
        None => left.push_str("    "),
    }
    let _ = write!(left, "--{}", spec.long);
    match spec.kind {
        OptKind::Bool => {}
        OptKind::Int | OptKind::UInt | OptKind::U64 => left.push_str(" <n>"),
        OptKind::Str { argh } => {
            let _ = write!(left, " <{argh}>");
        }
    }
    let pad = if left.len() <= USAGE_OPTS_WIDTH {
        USAGE_OPTS_WIDTH - left.len()
    } else {
        left.push('\n');
        USAGE_OPTS_WIDTH
    };
    format!("{left}{:pad$}{}\n", "", spec.help, pad = pad + USAGE_GAP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtol_matches_glibc_edge_cases() {
        assert_eq!(c_strtol(""), Some(0));
        assert_eq!(c_strtol("  010"), Some(10));
        assert_eq!(c_strtol("+7"), Some(7));
        assert_eq!(c_strtol("-5"), Some(-5));
        assert_eq!(c_strtol(" "), None);
        assert_eq!(c_strtol("-"), None);
        assert_eq!(c_strtol("0x10"), None);
        assert_eq!(c_strtol("1.5"), None);
        assert_eq!(c_strtol("5 "), None);
        assert_eq!(c_strtol("99999999999999999999"), Some(i64::MAX));
        assert_eq!(c_strtol("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(c_strtol("-99999999999999999999"), Some(i64::MIN));
    }

    #[test]
    fn strtoull_matches_glibc_edge_cases() {
        assert_eq!(c_strtoull("18446744073709551615"), Some(u64::MAX));
        assert_eq!(c_strtoull("18446744073709551616"), Some(u64::MAX));
        assert_eq!(c_strtoull(" -5"), Some(u64::MAX - 4));
        assert_eq!(c_strtoull("x"), None);
    }

    #[test]
    fn reading_past_a_short_word_follows_argv_layout() {
        assert_eq!(text_three_bytes_into("no-", &[]), Some(String::new()));
        assert_eq!(
            text_three_bytes_into("no", &["group".into()]),
            Some("group".into())
        );
        assert_eq!(
            text_three_bytes_into("n", &["xgroup".into()]),
            Some("group".into())
        );
        assert_eq!(text_three_bytes_into("no", &[]), None);
    }

    #[test]
    fn help_line_wraps_after_column_24() {
        let spec = OptSpec {
            short: Some('G'),
            long: "cgroups",
            kind: OptKind::Str { argh: "SEND,RECV" },
            help: "Put sender and receivers in given cgroups",
        };
        assert_eq!(
            option_help_line(&spec),
            "    -G, --cgroups <SEND,RECV>\n                          Put sender and receivers in given cgroups\n"
        );
    }
}
