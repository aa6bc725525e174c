//! Capturing MLIR diagnostics as plain data and printing them like mlir-opt.

use std::sync::{Arc, Mutex};

use melior::{diagnostic::DiagnosticSeverity, Context};

use crate::verify_diagnostics::{Diagnostic, Severity};

/// Collected diagnostics of one context.
#[derive(Clone, Default)]
pub struct Collector(
    Arc<Mutex<Vec<Diagnostic>>>,
    Arc<Mutex<(Option<String>, Option<String>)>>,
);

impl Collector {
    /// Attaches to `context`; every diagnostic (and its notes) is recorded, none is printed.
    pub fn attach(context: &Context) -> Collector {
        let collector = Collector::default();
        let sink = collector.0.clone();
        let names = collector.1.clone();
        context.attach_diagnostic_handler(move |diagnostic| {
            let mut found = vec![convert(&diagnostic)];
            for index in 0..diagnostic.note_count() {
                if let Ok(note) = diagnostic.note(index) {
                    let mut note = convert(&note);
                    note.severity = Severity::Note;
                    found.push(note);
                }
            }
            if let Ok(names) = names.lock() {
                if let (Some(temporary), Some(user)) = (&names.1, &names.0) {
                    for diagnostic in &mut found {
                        if diagnostic.file.as_deref() == Some(temporary.as_str()) {
                            diagnostic.file = Some(user.clone());
                        }
                    }
                }
            }
            if let Ok(mut all) = sink.lock() {
                all.extend(found);
            }
            true
        });
        collector
    }

    /// The file name diagnostics should show.
    pub fn set_file_name(&self, name: &str) {
        if let Ok(mut names) = self.1.lock() {
            names.0 = Some(name.to_string());
        }
    }

    /// A temporary file whose diagnostics belong to the file set by `set_file_name`.
    pub fn map_file(&self, temporary: &str) {
        if let Ok(mut names) = self.1.lock() {
            names.1 = Some(temporary.to_string());
        }
    }

    pub fn take(&self) -> Vec<Diagnostic> {
        self.0
            .lock()
            .map(|mut all| std::mem::take(&mut *all))
            .unwrap_or_default()
    }

    pub fn has_errors(&self) -> bool {
        self.0
            .lock()
            .map(|all| all.iter().any(|d| d.severity == Severity::Error))
            .unwrap_or(false)
    }
}

fn convert(diagnostic: &melior::diagnostic::Diagnostic) -> Diagnostic {
    let severity = match diagnostic.severity() {
        DiagnosticSeverity::Error => Severity::Error,
        DiagnosticSeverity::Warning => Severity::Warning,
        DiagnosticSeverity::Note => Severity::Note,
        DiagnosticSeverity::Remark => Severity::Remark,
    };
    let message = diagnostic.to_string();
    match parse_location(&diagnostic.location().to_string()) {
        Some((file, line, column)) => {
            Diagnostic::new(severity, line, column, message).in_file(file)
        }
        None => Diagnostic::unknown(severity, message),
    }
}

/// Finds the first `"file":line:col` in a printed location (`loc("f.mlir":3:5)`, also inside
/// call-site or fused locations).
pub fn parse_location(text: &str) -> Option<(String, u32, u32)> {
    let start = text.find('"')?;
    let rest = &text[start + 1..];
    let end = rest.find('"')?;
    let file = rest[..end].to_string();
    let after = rest[end + 1..].strip_prefix(':')?;
    let mut numbers = after.splitn(3, |c: char| !c.is_ascii_digit());
    let line: u32 = numbers.next()?.parse().ok()?;
    let column: u32 = numbers.next()?.parse().ok()?;
    Some((file, line, column))
}

/// Prints a diagnostic like mlir-opt: `file:line:col: error: message`.
pub fn render(diagnostic: &Diagnostic) -> String {
    match (&diagnostic.file, diagnostic.line, diagnostic.column) {
        (Some(file), Some(line), Some(column)) => {
            format!(
                "{file}:{line}:{column}: {}: {}",
                diagnostic.severity, diagnostic.message
            )
        }
        _ => format!(
            "loc(unknown): {}: {}",
            diagnostic.severity, diagnostic.message
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse_from_printed_forms() {
        assert_eq!(
            parse_location(r#"loc("a/b.mlir":3:15)"#),
            Some(("a/b.mlir".into(), 3, 15))
        );
        assert_eq!(
            parse_location(r#"loc(callsite("x.mlir":4:2 at "y.mlir":9:1))"#),
            Some(("x.mlir".into(), 4, 2))
        );
        assert_eq!(parse_location("loc(unknown)"), None);
    }
}
