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

use thiserror::Error;

use crate::split_input::{lines_with_offsets, Chunk};

mod expectations;

use expectations::{parse_expectations, Expectation, ParsedExpectations, Target};

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

#[cfg(test)]
mod tests;
