//! `--verify-diagnostics`: check the diagnostics a chunk produced against the `expected-*`
//! comments written in it, with mlir-opt's semantics and report format.
//!
//! An expectation is `expected-<severity>[-re][@<designator>] {{<message>}}` with the message
//! running to the `}}` that ends the line:
//!
//! ```mlir
//! // expected-error@+1 {{'ipu.matmul' op contracting dimensions differ: 64 vs 32}}
//! %0 = "ipu.matmul"(%a, %b) : (tensor<4x64xf32>, tensor<32x8xf32>) -> tensor<4x8xf32>
//! // expected-note-re@above {{operand #{{[0-9]+}} defined here}}
//! ```
//!
//! - severity: `error`, `warning`, `note`, `remark`;
//! - `-re`: text outside `{{...}}` inside the message is literal, text inside is a regex;
//! - designators: none (this line), `@+N`/`@-N` (relative), `@above` (the closest line above that
//!   is not itself an expectation), `@below` (the closest such line below), `@unknown` (a
//!   diagnostic with no file location);
//! - a diagnostic matches when it is on the designated line (its column is not compared) and its
//!   message contains the expected text (or the regex finds a match in it). One expectation
//!   matches every such diagnostic: MLIR has no count suffix.
//!
//! Where mlir-opt silently ignores a mistyped expectation (so the test can never fail), we report
//! it as an error at its line: a missing `{{` or `}}`, an unknown designator, a count suffix, a line
//! designator that points outside the checked input, an `@above`/`@below` with nothing to attach
//! to. An `expected-error` inside prose ("expected-error works") is not an expectation.
//!
//! Line numbers are those of the original file throughout: [`Diagnostic::line`] is a line of the
//! original file (what MLIR reports when the chunk is parsed as
//! [`Chunk::source_with_original_lines`]) and problems are reported at original lines.

use std::fmt;
use std::str::FromStr;

use regex::Regex;
use thiserror::Error;

use crate::split_input::{lines_with_offsets, Chunk};

/// Severity of an MLIR diagnostic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Note,
    Remark,
}

impl Severity {
    /// The spelling used in `expected-<severity>` and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
            Severity::Remark => "remark",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One diagnostic the compiler produced. Notes attached to a diagnostic are passed as their own
/// entries, right after it, as MLIR's verifier handler sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// The file named by the location, when it is not the input file (e.g. a
    /// `loc("other.mlir":7:3)` or an `--irdl-file`). `None` means the input file.
    pub file: Option<String>,
    /// 1-based line in the original input file; `None` for a location with no file position.
    pub line: Option<u32>,
    /// 1-based column; not used for matching, only for reporting.
    pub column: Option<u32>,
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic at `line:column` of the input file (original-file line numbers).
    pub fn new(severity: Severity, line: u32, column: u32, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            file: None,
            line: Some(line),
            column: Some(column),
            message: message.into(),
        }
    }

    /// A diagnostic with an unknown location (matched by `@unknown`).
    pub fn unknown(severity: Severity, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            file: None,
            line: None,
            column: None,
            message: message.into(),
        }
    }

    /// The same diagnostic located in another file.
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }
}

/// `--verify-diagnostics=<mode>`, as in mlir-opt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VerifyMode {
    /// Expected diagnostics must appear; unexpected ones and wrong severities are errors.
    #[default]
    All,
    /// Only check that expected diagnostics appear; ignore all others.
    OnlyExpected,
}

/// An unknown `--verify-diagnostics` mode.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown --verify-diagnostics mode '{0}' (expected 'all' or 'only-expected')")]
pub struct UnknownVerifyMode(pub String);

impl FromStr for VerifyMode {
    type Err = UnknownVerifyMode;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "" | "all" => Ok(VerifyMode::All),
            "only-expected" => Ok(VerifyMode::OnlyExpected),
            other => Err(UnknownVerifyMode(other.to_string())),
        }
    }
}

/// What went wrong with one expectation or diagnostic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemKind {
    /// An `expected-*` comment that cannot be checked as written.
    MalformedExpectation,
    /// A diagnostic no expectation asked for.
    UnexpectedDiagnostic,
    /// A diagnostic that matches an expectation's line and text but not its severity.
    WrongSeverity,
    /// An expectation no diagnostic satisfied.
    NotProduced,
}

/// Where a problem is reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProblemLocation {
    Unknown,
    File {
        file: String,
        line: u32,
        column: Option<u32>,
    },
}

/// A source line to show under a problem, with a caret at `column` and `underline - 1` tildes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    pub line_text: String,
    pub column: u32,
    pub underline: u32,
}

/// One verification failure, reported as an `error:` at its location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub kind: ProblemKind,
    pub location: ProblemLocation,
    pub message: String,
    pub snippet: Option<Snippet>,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            ProblemLocation::Unknown => write!(f, "<unknown>:0: error: {}", self.message)?,
            ProblemLocation::File {
                file,
                line,
                column: Some(column),
            } => write!(f, "{file}:{line}:{column}: error: {}", self.message)?,
            ProblemLocation::File {
                file,
                line,
                column: None,
            } => write!(f, "{file}:{line}: error: {}", self.message)?,
        }
        if let Some(snippet) = &self.snippet {
            let indent: String = snippet
                .line_text
                .chars()
                .take(snippet.column.saturating_sub(1) as usize)
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            let tildes = "~".repeat(snippet.underline.saturating_sub(1) as usize);
            write!(f, "\n{}\n{indent}^{tildes}", snippet.line_text)?;
        }
        Ok(())
    }
}

/// The chunk's diagnostics did not match its expectations. Displays every problem the way
/// mlir-opt prints them, one after another (no trailing newline).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}", render_problems(.problems))]
pub struct VerifyFailure {
    /// In report order: malformed expectations (by line), then problems with diagnostics (in
    /// the order the diagnostics were given), then expectations not produced (by line, then
    /// `@unknown` ones).
    pub problems: Vec<Problem>,
}

fn render_problems(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(Problem::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Checks `diagnostics` against the expectations in `chunk` (mode `all`). `file_name` is the
/// input file's name as it should appear in reports.
pub fn verify(
    chunk: &Chunk<'_>,
    file_name: &str,
    diagnostics: &[Diagnostic],
) -> Result<(), VerifyFailure> {
    verify_with_mode(chunk, file_name, diagnostics, VerifyMode::All)
}

/// [`verify`] with an explicit `--verify-diagnostics=<mode>`.
pub fn verify_with_mode(
    chunk: &Chunk<'_>,
    file_name: &str,
    diagnostics: &[Diagnostic],
    mode: VerifyMode,
) -> Result<(), VerifyFailure> {
    let ParsedExpectations {
        mut expectations,
        mut problems,
    } = parse_expectations(chunk, file_name);

    for diagnostic in diagnostics {
        let target = match (&diagnostic.file, diagnostic.line) {
            (_, None) => Some(Target::Unknown),
            (Some(file), Some(_)) if file != file_name => None,
            (_, Some(line)) => Some(Target::Line(line)),
        };
        let mut near_miss = None;
        let mut matched = false;
        for (position, expectation) in expectations.iter_mut().enumerate() {
            if Some(expectation.target) != target || !expectation.matches(&diagnostic.message) {
                continue;
            }
            if expectation.severity == diagnostic.severity {
                expectation.matched = true;
                matched = true;
                break;
            }
            near_miss = Some(position);
        }
        if matched || mode == VerifyMode::OnlyExpected {
            continue;
        }
        match near_miss.and_then(|position| expectations.get(position)) {
            Some(expectation) => problems.push(expectation.problem(
                ProblemKind::WrongSeverity,
                format!(
                    "'{}' diagnostic emitted when expecting a '{}'",
                    diagnostic.severity, expectation.severity
                ),
                1,
            )),
            None => problems.push(unexpected(chunk, file_name, diagnostic)),
        }
    }

    // Expectations are in line order already; `@unknown` ones are reported last, as mlir-opt.
    let (unknown, located): (Vec<&Expectation>, Vec<&Expectation>) = expectations
        .iter()
        .filter(|expectation| !expectation.matched)
        .partition(|expectation| expectation.target == Target::Unknown);
    for expectation in located.into_iter().chain(unknown) {
        let message = format!(
            "expected {} \"{}\" was not produced",
            expectation.severity, expectation.written
        );
        let underline = expectation.written.chars().count().max(1);
        let mut problem = expectation.problem(
            ProblemKind::NotProduced,
            message,
            u32::try_from(underline).unwrap_or(u32::MAX),
        );
        if expectation.target == Target::Unknown {
            problem.location = ProblemLocation::Unknown;
            problem.snippet = None;
        }
        problems.push(problem);
    }

    if problems.is_empty() {
        Ok(())
    } else {
        Err(VerifyFailure { problems })
    }
}

/// Combines the results of the chunks of one file in mlir-opt's report order: mlir-opt checks
/// every chunk with one handler, so problems found while processing come chunk by chunk, and the
/// expectations never produced are listed after all of them (file positions first, then
/// `@unknown` ones).
pub fn combine_chunk_results(
    results: impl IntoIterator<Item = Result<(), VerifyFailure>>,
) -> Result<(), VerifyFailure> {
    let mut immediate = Vec::new();
    let mut not_produced = Vec::new();
    let mut not_produced_unknown = Vec::new();
    for problem in results
        .into_iter()
        .filter_map(Result::err)
        .flat_map(|failure| failure.problems)
    {
        match (problem.kind, &problem.location) {
            (ProblemKind::NotProduced, ProblemLocation::Unknown) => {
                not_produced_unknown.push(problem)
            }
            (ProblemKind::NotProduced, _) => not_produced.push(problem),
            _ => immediate.push(problem),
        }
    }
    immediate.extend(not_produced);
    immediate.extend(not_produced_unknown);
    if immediate.is_empty() {
        Ok(())
    } else {
        Err(VerifyFailure {
            problems: immediate,
        })
    }
}

fn unexpected(chunk: &Chunk<'_>, file_name: &str, diagnostic: &Diagnostic) -> Problem {
    let message = format!("unexpected {}: {}", diagnostic.severity, diagnostic.message);
    let Some(line) = diagnostic.line else {
        return Problem {
            kind: ProblemKind::UnexpectedDiagnostic,
            location: ProblemLocation::Unknown,
            message,
            snippet: None,
        };
    };
    let file = diagnostic
        .file
        .clone()
        .unwrap_or_else(|| file_name.to_string());
    let snippet = if file == file_name && chunk.contains_line(line) {
        let chunk_line = line - chunk.start_line + 1;
        lines_with_offsets(chunk.text)
            .nth(chunk_line as usize - 1)
            .map(|source| Snippet {
                line_text: source.text.to_string(),
                column: diagnostic.column.unwrap_or(1),
                underline: 1,
            })
    } else {
        None
    };
    Problem {
        kind: ProblemKind::UnexpectedDiagnostic,
        location: ProblemLocation::File {
            file,
            line,
            column: diagnostic.column,
        },
        message,
        snippet,
    }
}

/// The line an expectation applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// A line of the original file.
    Line(u32),
    Unknown,
}

#[derive(Debug)]
enum Matcher {
    Contains,
    Regex(Regex),
}

#[derive(Debug)]
struct Expectation {
    severity: Severity,
    target: Target,
    /// The message exactly as written between the outer `{{` and `}}`.
    written: String,
    matcher: Matcher,
    file: String,
    /// Where the `expected-` text is, in the original file.
    line: u32,
    column: u32,
    line_text: String,
    matched: bool,
}

impl Expectation {
    fn matches(&self, message: &str) -> bool {
        match &self.matcher {
            Matcher::Contains => message.contains(&self.written),
            Matcher::Regex(regex) => regex.is_match(message),
        }
    }

    fn problem(&self, kind: ProblemKind, message: String, underline: u32) -> Problem {
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

struct ParsedExpectations {
    expectations: Vec<Expectation>,
    problems: Vec<Problem>,
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

fn parse_expectations(chunk: &Chunk<'_>, file_name: &str) -> ParsedExpectations {
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
    if let Some(after_at) = rest.strip_prefix('@') {
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

/// Bound on a compiled `-re` pattern, so a pathological test line cannot exhaust memory.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Builds the regex of an `expected-*-re` message: text outside `{{...}}` is literal, text inside
/// is a regex; the result searches anywhere in the diagnostic message.
fn compile_expected_regex(written: &str) -> Result<Regex, String> {
    let mut pattern = String::new();
    let mut rest = written;
    while let Some(open) = rest.find("{{") {
        pattern.push_str(&regex::escape(&rest[..open]));
        let after_open = &rest[open + 2..];
        let Some(close) = after_open.find("}}") else {
            return Err("found start of regex with no end '}}'".to_string());
        };
        pattern.push_str("(?:");
        pattern.push_str(&after_open[..close]);
        pattern.push(')');
        rest = &after_open[close + 2..];
    }
    pattern.push_str(&regex::escape(rest));
    regex::RegexBuilder::new(&pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|error| format!("invalid regex: {}", one_line_regex_error(&error)))
}

/// The regex crate's syntax errors are multi-line drawings; keep the line that says what is wrong.
fn one_line_regex_error(error: &regex::Error) -> String {
    let text = error.to_string();
    text.lines()
        .rev()
        .find_map(|line| line.trim().strip_prefix("error: "))
        .map(str::to_string)
        .unwrap_or_else(|| text.split_whitespace().collect::<Vec<_>>().join(" "))
}

#[cfg(test)]
mod tests;
