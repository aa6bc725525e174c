//! Pipeline errors that point at the offending character, and the helpers later stages use to
//! report unknown passes and options with suggestions.

use super::ast::Span;

/// An error at a byte range of the pipeline text.
///
/// `Display` gives the one-line message; [`PipelineError::render`] adds the pipeline line, a
/// caret under the offending column and the notes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PipelineError {
    pub message: String,
    /// Byte offset of the offending text (may equal the text length: "at the end").
    pub offset: usize,
    /// Length in bytes of the offending text; 0 for a position.
    pub len: usize,
    /// Extra lines printed after the caret as `note: ...` (e.g. the list of valid passes).
    pub notes: Vec<String>,
}

impl PipelineError {
    pub fn new(message: impl Into<String>, span: Span) -> Self {
        Self {
            message: message.into(),
            offset: span.offset,
            len: span.len,
            notes: Vec::new(),
        }
    }

    /// The same error with one more note.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    pub fn span(&self) -> Span {
        Span::new(self.offset, self.len)
    }

    /// The message, the line of `source` holding the error, a caret line under it, and the
    /// notes. Never panics, whatever the offsets.
    ///
    /// ```text
    /// error: expected ')' to close 'builtin.module(' opened at column 15
    /// builtin.module(cse
    ///                   ^
    /// ```
    pub fn render(&self, source: &str) -> String {
        let offset = floor_char_boundary(source, self.offset);
        let line_start = source[..offset].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[offset..]
            .find('\n')
            .map_or(source.len(), |i| offset + i);
        let line = source[line_start..line_end].trim_end_matches('\r');
        // Tabs are copied into the padding so the caret lines up whatever the tab width.
        let padding: String = source[line_start..offset]
            .chars()
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let underline_end = floor_char_boundary(source, self.offset.saturating_add(self.len))
            .clamp(offset, line_end);
        let underlined = source[offset..underline_end].chars().count();
        let mut out = format!("error: {}\n{line}\n{padding}^", self.message);
        for _ in 1..underlined {
            out.push('~');
        }
        for note in &self.notes {
            out.push_str("\nnote: ");
            out.push_str(note);
        }
        out
    }
}

/// The largest char boundary of `text` at or before `offset` (clamped to the text).
pub(crate) fn floor_char_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// `column N` (1-based, in characters), or `line L, column N` for multi-line text.
pub(crate) fn describe_position(text: &str, offset: usize) -> String {
    let offset = floor_char_boundary(text, offset);
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..offset].chars().count() + 1;
    if text.contains('\n') {
        let line = before.matches('\n').count() + 1;
        format!("line {line}, column {column}")
    } else {
        format!("column {column}")
    }
}

/// The candidate closest to `name` by edit distance (adjacent transpositions count as one
/// edit), if it is close enough to be a plausible typo. Ties go to the alphabetically first
/// candidate so the answer does not depend on the candidates' order.
pub fn suggest<'a, I>(name: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let name_len = name.chars().count();
    // A third of the name's length, at least one: "tile" -> "tiles", "cse" -> "dce", but not
    // "ab" -> "xyz".
    let limit = name_len.div_ceil(3).max(1);
    candidates
        .into_iter()
        .filter(|candidate| *candidate != name)
        .map(|candidate| (edit_distance(name, candidate), candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min()
        .map(|(_, candidate)| candidate)
}

/// Optimal-string-alignment distance over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut rows = vec![0usize; (a.len() + 1) * width];
    for (j, cell) in rows.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        rows[i * width] = i;
        for j in 1..=b.len() {
            let substitution = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[(i - 1) * width + j] + 1)
                .min(rows[i * width + j - 1] + 1)
                .min(rows[(i - 1) * width + j - 1] + substitution);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[(i - 2) * width + j - 2] + 1);
            }
            rows[i * width + j] = best;
        }
    }
    rows[a.len() * width + b.len()]
}

/// `'ipu-canonicalise' does not refer to a registered pass or pass pipeline; did you mean
/// 'ipu-canonicalize'?` at `span`, with a note
/// listing the valid passes (sorted, deduplicated).
pub fn unknown_pass_error<'a, I>(name: &str, span: Span, valid_passes: I) -> PipelineError
where
    I: IntoIterator<Item = &'a str>,
{
    let mut valid: Vec<&str> = valid_passes.into_iter().collect();
    valid.sort_unstable();
    valid.dedup();
    // MLIR's words, so tests written against mlir-opt match; the suggestion and list are ours.
    let mut message = format!("'{name}' does not refer to a registered pass or pass pipeline");
    if let Some(suggestion) = suggest(name, valid.iter().copied()) {
        message.push_str(&format!("; did you mean '{suggestion}'?"));
    }
    let error = PipelineError::new(message, span);
    if valid.is_empty() {
        error.with_note("no passes are registered")
    } else {
        error.with_note(format!("valid passes: {}", valid.join(", ")))
    }
}

/// The message for an option a pass does not have; valid options are listed in the order given
/// (their declaration order).
pub fn unknown_option_message(pass: &str, key: &str, valid_options: &[String]) -> String {
    let mut message = format!("pass '{pass}' has no option '{key}'");
    if valid_options.is_empty() {
        message.push_str("; it takes no options");
        return message;
    }
    if let Some(suggestion) = suggest(key, valid_options.iter().map(String::as_str)) {
        message.push_str(&format!("; did you mean '{suggestion}'?"));
        message.push_str(&format!(" valid options: {}", valid_options.join(", ")));
    } else {
        message.push_str(&format!("; valid options: {}", valid_options.join(", ")));
    }
    message
}

/// [`unknown_option_message`] at the key's span.
pub fn unknown_option_error(
    pass: &str,
    key: &str,
    span: Span,
    valid_options: &[String],
) -> PipelineError {
    PipelineError::new(unknown_option_message(pass, key, valid_options), span)
}
