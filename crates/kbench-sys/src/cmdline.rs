//! Kernel command line parameters (`/proc/cmdline`), split as the kernel splits them.

/// One word of a kernel command line: `name`, or `name=value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param<'a> {
    /// Up to the first `=` (the whole word when there is none).
    pub name: &'a str,
    /// After the first `=`; `None` for a bare `name`, `Some("")` for `name=`.
    pub value: Option<&'a str>,
}

/// The words of a kernel command line, as the kernel's `next_arg()` reads them: spaces
/// between double quotes do not split a word, the quotes around a value (`name="a b"`)
/// or around a whole word (`"name=a b"`) are dropped, and any other quote is kept as
/// it is. Every word is given, the init's after a bare `--` too.
pub fn params(cmdline: &str) -> Params<'_> {
    Params {
        rest: cmdline.trim_start_matches(is_space),
    }
}

/// The iterator of [`params`].
#[derive(Debug, Clone)]
pub struct Params<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Params<'a> {
    type Item = Param<'a>;

    fn next(&mut self) -> Option<Param<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        let (param, rest) = next_arg(self.rest);
        self.rest = rest.trim_start_matches(is_space);
        Some(param)
    }
}

/// The kernel's `isspace()` in ASCII (which, unlike Rust's, counts vertical tab).
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// The first word of `args` (which starts with no space) and what follows it, as
/// lib/cmdline.c's `next_arg()`.
fn next_arg(args: &str) -> (Param<'_>, &str) {
    let quoted = args.starts_with('"');
    let args = if quoted { &args[1..] } else { args };
    let bytes = args.as_bytes();
    let mut in_quote = quoted;
    let mut equals = None;
    let mut i = 0;
    while i < bytes.len() {
        let c = char::from(bytes[i]);
        if is_space(c) && !in_quote {
            break;
        }
        if equals.is_none() && c == '=' {
            equals = Some(i);
        }
        if c == '"' {
            in_quote = !in_quote;
        }
        i += 1;
    }
    // Every index here is of an ASCII byte, so every slice is on a char boundary.
    let ends_in_quote = i > 0 && bytes[i - 1] == b'"';
    let mut end = i;
    let mut value_start = None;
    if let Some(equals) = equals {
        let mut start = equals + 1;
        if start < i && bytes[start] == b'"' {
            start += 1;
            if ends_in_quote {
                end = i - 1;
            }
        }
        value_start = Some(start);
    }
    if quoted && ends_in_quote {
        end = i - 1;
    }
    let param = match (equals, value_start) {
        (Some(equals), Some(start)) => Param {
            name: &args[..equals],
            value: Some(if start < end { &args[start..end] } else { "" }),
        },
        _ => Param {
            name: &args[..end],
            value: None,
        },
    };
    let rest = if i < args.len() { &args[i + 1..] } else { "" };
    (param, rest)
}

/// The value of the last `name=value` parameter, as the kernel applies the last one.
/// Arguments after a bare `--` belong to init and are ignored. A bare `name` gives `""`.
pub fn kernel_param(cmdline: &str, name: &str) -> Option<String> {
    let mut found = None;
    for param in params(cmdline) {
        if param.name == "--" && param.value.is_none() {
            break;
        }
        if param.name == name {
            found = Some(param.value.unwrap_or("").to_string());
        }
    }
    found
}

/// The CPUs of an `isolcpus=` value: flags (`nohz`, `domain`, `managed_irq`) are dropped and
/// the rest is read as a cpulist. `None` if the CPU part is malformed.
pub fn isolcpus_cpus(value: &str) -> Option<Vec<u32>> {
    let cpus: Vec<&str> = value
        .split(',')
        .filter(|item| !item.chars().any(|c| c.is_ascii_alphabetic() || c == '_'))
        .collect();
    crate::parse_cpulist(&cpus.join(",")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_last_parameter_before_init_args() {
        let cmdline = "ro isolcpus=1 quiet isolcpus=nohz,domain,2-3 -- isolcpus=7";
        assert_eq!(
            kernel_param(cmdline, "isolcpus").as_deref(),
            Some("nohz,domain,2-3")
        );
        assert_eq!(kernel_param(cmdline, "quiet").as_deref(), Some(""));
        assert_eq!(kernel_param(cmdline, "nohz_full"), None);
        assert_eq!(
            isolcpus_cpus("nohz,domain,managed_irq,2-3,6"),
            Some(vec![2, 3, 6])
        );
    }

    fn words(cmdline: &str) -> Vec<(&str, Option<&str>)> {
        params(cmdline).map(|p| (p.name, p.value)).collect()
    }

    #[test]
    fn double_quotes_group_a_value_with_spaces_as_the_kernel_reads_them() {
        assert_eq!(
            words(" a=\"x y\"  \"b=z w\" c= d\t-- e \"f\""),
            [
                ("a", Some("x y")),
                ("b", Some("z w")),
                ("c", Some("")),
                ("d", None),
                ("--", None),
                ("e", None),
                ("f", None),
            ]
        );
        // A quote inside a value is kept: only those around it are dropped.
        assert_eq!(
            words("a=x\"y z\" b"),
            [("a", Some("x\"y z\"")), ("b", None)]
        );
        // An unclosed quote takes the rest of the line.
        assert_eq!(words("a=\"x y"), [("a", Some("x y"))]);
        assert_eq!(words("a=\" b"), [("a", Some(" b"))]);
        assert_eq!(words("a=\""), [("a", Some(""))]);
        assert_eq!(words("\""), [("", None)]);
        assert_eq!(words("é=ü x"), [("é", Some("ü")), ("x", None)]);
        assert!(words(" \n ").is_empty());
    }

    #[test]
    fn a_quoted_value_with_spaces_is_one_parameter() {
        // Split at every space, this was `"1` and a word `2"`.
        let cmdline = "quiet isolcpus=\"1 2\" nohz_full=\"3\"";
        assert_eq!(kernel_param(cmdline, "isolcpus").as_deref(), Some("1 2"));
        assert_eq!(kernel_param(cmdline, "nohz_full").as_deref(), Some("3"));
        assert_eq!(kernel_param(cmdline, "2\""), None);
    }
}
