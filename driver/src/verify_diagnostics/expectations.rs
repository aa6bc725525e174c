//! Reading `expected-*` comments out of a chunk: the syntax, the designators resolved to lines of
//! the original file, and the `-re` patterns compiled. See the parent module for the semantics.

use ipu_passes::mlir_cxx::LlvmRegex;

use super::{Problem, ProblemKind, ProblemLocation, Severity, Snippet};
use crate::split_input::{lines_with_offsets, Chunk};

/// The line an expectation applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    /// A line of the original file.
    Line(u32),
    Unknown,
}

#[derive(Debug)]
pub(super) enum Matcher {
    Contains,
    Regex(LlvmRegex),
}

#[derive(Debug)]
pub(super) struct Expectation {
    pub(super) severity: Severity,
    pub(super) target: Target,
    /// The message exactly as written between the outer `{{` and `}}`.
    pub(super) written: String,
    pub(super) matcher: Matcher,
    pub(super) file: String,
    /// Where the `expected-` text is, in the original file.
    pub(super) line: u32,
    pub(super) column: u32,
    pub(super) line_text: String,
    pub(super) matched: bool,
}

impl Expectation {
    pub(super) fn matches(&self, message: &str) -> bool {
        match &self.matcher {
            Matcher::Contains => message.contains(&self.written),
            Matcher::Regex(regex) => regex.is_match(message),
        }
    }

    pub(super) fn problem(&self, kind: ProblemKind, message: String, underline: u32) -> Problem {
        Problem {
            kind,
            location: ProblemLocation::File {
                file: self.file.clone(),
                line: self.line,
                column: Some(self.column),
            },
            message,
            snippet: Some(Snippet {
                line_text: self.line_text.clone(),
                column: self.column,
                underline,
            }),
        }
    }
}

pub(super) struct ParsedExpectations {
    pub(super) expectations: Vec<Expectation>,
    pub(super) problems: Vec<Problem>,
}

/// Designator as written, before it is resolved to a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Designator {
    ThisLine,
    Offset(i64),
    Above,
    Below,
    Unknown,
}

/// The syntax of one expectation on a line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Syntax<'a> {
    severity: Severity,
    is_regex: bool,
    designator: Designator,
    written: &'a str,
}

/// What a line holds.
enum LineContent<'a> {
    /// Not an expectation: `@above`/`@below` attach to such lines.
    Code,
    Expectation {
        column: u32,
        syntax: Syntax<'a>,
    },
    Malformed {
        column: u32,
        message: String,
    },
}

const EXPECTED: &str = "expected-";

pub(super) fn parse_expectations(chunk: &Chunk<'_>, file_name: &str) -> ParsedExpectations {
    let mut expectations: Vec<Expectation> = Vec::new();
    let mut problems = Vec::new();
    let mut last_code_line: Option<u32> = None;
    // Expectations waiting for the next code line (`@below`), by index in `expectations`.
    let mut waiting_below: Vec<usize> = Vec::new();
    let first_line = chunk.start_line;
    let last_line = chunk.end_line();

    for source in lines_with_offsets(chunk.text) {
        let line = chunk.original_line(source.number);
        let malformed = |column: u32, message: String, underline: u32| Problem {
            kind: ProblemKind::MalformedExpectation,
            location: ProblemLocation::File {
                file: file_name.to_string(),
                line,
                column: Some(column),
            },
            message,
            snippet: Some(Snippet {
                line_text: source.text.to_string(),
                column,
                underline,
            }),
        };
        let (column, syntax) = match classify_line(source.text) {
            LineContent::Code => {
                for index in waiting_below.drain(..) {
                    if let Some(expectation) = expectations.get_mut(index) {
                        expectation.target = Target::Line(line);
                    }
                }
                last_code_line = Some(line);
                continue;
            }
            LineContent::Malformed { column, message } => {
                problems.push(malformed(column, message, 1));
                continue;
            }
            LineContent::Expectation { column, syntax } => (column, syntax),
        };
        let spelled = spelling(&syntax);
        let target = match syntax.designator {
            Designator::ThisLine => Target::Line(line),
            Designator::Unknown => Target::Unknown,
            Designator::Above => match last_code_line {
                Some(above) => Target::Line(above),
                None => {
                    problems.push(malformed(
                        column,
                        format!("'{spelled}@above' has no line above it to apply to"),
                        1,
                    ));
                    continue;
                }
            },
            // Resolved when the next code line is seen; a placeholder until then.
            Designator::Below => Target::Unknown,
            Designator::Offset(offset) => {
                let designated = i64::from(line) + offset;
                if designated < i64::from(first_line) || designated > i64::from(last_line) {
                    let offset_text = if offset < 0 {
                        format!("{offset}")
                    } else {
                        format!("+{offset}")
                    };
                    problems.push(malformed(
                        column,
                        format!(
                            "'{spelled}@{offset_text}' refers to line {designated}, outside the \
                             checked input (lines {first_line}-{last_line})"
                        ),
                        1,
                    ));
                    continue;
                }
                // In range of a u32 line number, checked just above.
                Target::Line(u32::try_from(designated).unwrap_or(line))
            }
        };
        let matcher = if syntax.is_regex {
            match compile_expected_regex(syntax.written) {
                Ok(regex) => Matcher::Regex(regex),
                Err(message) => {
                    let underline =
                        u32::try_from(syntax.written.chars().count().max(1)).unwrap_or(u32::MAX);
                    problems.push(malformed(column, message, underline));
                    continue;
                }
            }
        } else {
            Matcher::Contains
        };
        if syntax.designator == Designator::Below {
            waiting_below.push(expectations.len());
        }
        expectations.push(Expectation {
            severity: syntax.severity,
            target,
            written: syntax.written.to_string(),
            matcher,
            file: file_name.to_string(),
            line,
            column,
            line_text: source.text.to_string(),
            matched: false,
        });
    }

    // `@below` with no code line after it: drop the expectation, report it where it is written.
    let mut dangling: Vec<usize> = waiting_below;
    dangling.sort_unstable();
    for index in dangling.into_iter().rev() {
        if index < expectations.len() {
            let expectation = expectations.remove(index);
            problems.push(expectation.problem(
                ProblemKind::MalformedExpectation,
                format!(
                    "'expected-{}@below' has no line below it to apply to",
                    expectation.severity
                ),
                1,
            ));
        }
    }
    problems.sort_by_key(|problem| match problem.location {
        ProblemLocation::File { line, column, .. } => (line, column),
        ProblemLocation::Unknown => (0, None),
    });
    ParsedExpectations {
        expectations,
        problems,
    }
}

fn spelling(syntax: &Syntax<'_>) -> String {
    let suffix = if syntax.is_regex { "-re" } else { "" };
    format!("{EXPECTED}{}{suffix}", syntax.severity)
}

/// Finds the expectation on a line, if any. Like mlir-opt, the first occurrence of
/// `expected-<severity>` that forms a well-formed expectation wins, anywhere on the line. Failing
/// that, an unquoted occurrence inside a `//` comment that is clearly meant as one (followed by
/// `@`, `{`, a count or nothing) is reported as malformed; anything else is prose.
fn classify_line(text: &str) -> LineContent<'_> {
    let mut search_from = 0usize;
    let mut first_malformed: Option<(usize, String)> = None;
    while let Some(relative) = text.get(search_from..).and_then(|rest| rest.find(EXPECTED)) {
        let at = search_from + relative;
        match parse_expectation_at(text, at) {
            Attempt::Parsed(syntax) => {
                return LineContent::Expectation {
                    column: column_of(at),
                    syntax,
                }
            }
            Attempt::Malformed(message) => {
                let before = text.get(..at).unwrap_or("");
                let in_comment = before.contains("//");
                // `'expected-error@+1'` in a comment or a CHECK line talks about an expectation.
                let quoted = before.ends_with(['\'', '"', '`']);
                if in_comment && !quoted && first_malformed.is_none() {
                    first_malformed = Some((at, message));
                }
            }
            Attempt::NotAnExpectation => {}
        }
        search_from = at + EXPECTED.len();
    }
    match first_malformed {
        Some((at, message)) => LineContent::Malformed {
            column: column_of(at),
            message,
        },
        None => LineContent::Code,
    }
}

fn column_of(byte_offset: usize) -> u32 {
    u32::try_from(byte_offset + 1).unwrap_or(u32::MAX)
}

enum Attempt<'a> {
    Parsed(Syntax<'a>),
    Malformed(String),
    NotAnExpectation,
}

fn skip_blanks(text: &str) -> &str {
    text.trim_start_matches([' ', '\t'])
}

fn parse_expectation_at(text: &str, at: usize) -> Attempt<'_> {
    let Some(after_prefix) = text.get(at + EXPECTED.len()..) else {
        return Attempt::NotAnExpectation;
    };
    let Some((severity, mut rest)) = [
        Severity::Error,
        Severity::Warning,
        Severity::Note,
        Severity::Remark,
    ]
    .into_iter()
    .find_map(|severity| {
        after_prefix
            .strip_prefix(severity.as_str())
            .map(|rest| (severity, rest))
    }) else {
        return Attempt::NotAnExpectation;
    };
    let is_regex = match rest.strip_prefix("-re") {
        Some(after_re) => {
            rest = after_re;
            true
        }
        None => false,
    };
    let spelled = spelling(&Syntax {
        severity,
        is_regex,
        designator: Designator::ThisLine,
        written: "",
    });

    // Decide whether this is meant as an expectation at all.
    let meant = match rest.chars().next() {
        None | Some('@') | Some('{') => true,
        Some(' ') | Some('\t') => matches!(
            skip_blanks(rest).chars().next(),
            None | Some('@') | Some('{') | Some('0'..='9')
        ),
        Some(_) => false,
    };
    if !meant {
        return Attempt::NotAnExpectation;
    }

    let mut designator = Designator::ThisLine;
    // Blanks may separate the severity from its designator (`expected-error @+1 {{...}}`).
    if let Some(after_at) = skip_blanks(rest).strip_prefix('@') {
        let word_len = after_at
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '+' || c == '-'))
            .unwrap_or(after_at.len());
        let word = &after_at[..word_len];
        designator = match word {
            "above" => Designator::Above,
            "below" => Designator::Below,
            "unknown" => Designator::Unknown,
            _ => match parse_offset(word) {
                Some(offset) => Designator::Offset(offset),
                None => {
                    return Attempt::Malformed(format!(
                        "'{spelled}' has an invalid designator '@{word}'; expected @+N, @-N, \
                         @above, @below or @unknown"
                    ))
                }
            },
        };
        rest = &after_at[word_len..];
    }
    rest = skip_blanks(rest);
    if rest.starts_with(|c: char| c.is_ascii_digit()) {
        return Attempt::Malformed(format!(
            "'{spelled}' does not take a count: one expectation matches every diagnostic on its \
             line with that text"
        ));
    }
    let Some(body) = rest.strip_prefix("{{") else {
        return Attempt::Malformed(format!(
            "'{spelled}' must be followed by the expected message in '{{{{...}}}}'"
        ));
    };
    let body = body.trim_end_matches([' ', '\t']);
    let Some(written) = body.strip_suffix("}}") else {
        return Attempt::Malformed(format!(
            "the message of '{spelled}' must end with '}}}}' at the end of the line"
        ));
    };
    Attempt::Parsed(Syntax {
        severity,
        is_regex,
        designator,
        written,
    })
}

/// `+N` or `-N` with decimal digits.
fn parse_offset(word: &str) -> Option<i64> {
    let (sign, digits) = if let Some(digits) = word.strip_prefix('+') {
        (1, digits)
    } else {
        (-1, word.strip_prefix('-')?)
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Offsets beyond any file length are reported as out of range, not as overflow.
    let magnitude: i64 = digits.parse().unwrap_or(i64::from(u32::MAX));
    Some(sign * magnitude.min(i64::from(u32::MAX)))
}

/// Builds the regex of an `expected-*-re` message as mlir-opt does: text outside `{{...}}` is
/// literal, each `{{...}}` piece is an LLVM (POSIX extended) regex, checked on its own so an
/// error names LLVM's reason; the result searches anywhere in the diagnostic message.
fn compile_expected_regex(written: &str) -> Result<LlvmRegex, String> {
    let mut pattern = String::new();
    let mut rest = written;
    while let Some(open) = rest.find("{{") {
        pattern.push_str(&LlvmRegex::escape(&rest[..open]));
        let after_open = &rest[open + 2..];
        let Some(close) = after_open.find("}}") else {
            return Err("found start of regex with no end '}}'".to_string());
        };
        let piece = &after_open[..close];
        LlvmRegex::new(piece).map_err(|error| format!("invalid regex: {error}"))?;
        pattern.push('(');
        pattern.push_str(piece);
        pattern.push(')');
        rest = &after_open[close + 2..];
    }
    pattern.push_str(&LlvmRegex::escape(rest));
    LlvmRegex::new(&pattern).map_err(|error| format!("invalid regex: {error}"))
}
