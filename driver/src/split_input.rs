//! `--split-input-file`: cut one input buffer into independently processed chunks, the way
//! mlir-opt does, and join the chunks' outputs back together.
//!
//! A chunk boundary is a line whose text, ignoring surrounding whitespace, is exactly the split
//! marker (`// -----` unless `--split-input-file=<marker>` names another). mlir-opt splits on the
//! marker as a substring anywhere in the buffer; we split on whole lines only, so a chunk always
//! starts at column 1 of a line of the original file and its diagnostics keep the original file's
//! line *and* column numbers. The marker line itself belongs to no chunk.
//!
//! Lines that look like a mistyped marker (`// ----`, `// ------`, `// ----- x`) are reported as
//! near misses (mlir-opt warns about them too) instead of silently merging two test cases.

use std::borrow::Cow;
use std::fmt;

/// mlir-opt's default split marker, for both input splitting and output joining.
pub const DEFAULT_SPLIT_MARKER: &str = "// -----";

/// One independently processed piece of a split input buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk<'a> {
    /// Position of the chunk in the file, 0-based.
    pub index: usize,
    /// The chunk's text: whole lines of the original buffer, without the marker lines around
    /// them. Ends with the newline before the next marker, if there was one.
    pub text: &'a str,
    /// Line of the original buffer on which `text` starts, 1-based.
    pub start_line: u32,
}

impl<'a> Chunk<'a> {
    /// The whole buffer as one chunk (no `--split-input-file`).
    pub fn whole(buffer: &'a str) -> Self {
        Chunk {
            index: 0,
            text: buffer,
            start_line: 1,
        }
    }

    /// Number of lines in the chunk (a final line without a newline counts; the empty text after
    /// a final newline does not).
    pub fn line_count(&self) -> u32 {
        count_lines(self.text)
    }

    /// Last line of the original buffer that belongs to the chunk (inclusive). For an empty chunk
    /// this is `start_line - 1`, so `start_line..=end_line` is empty.
    pub fn end_line(&self) -> u32 {
        (self.start_line + self.line_count()).saturating_sub(1)
    }

    /// Maps a 1-based line of `text` to the line of the original buffer.
    pub fn original_line(&self, chunk_line: u32) -> u32 {
        self.start_line.saturating_add(chunk_line).saturating_sub(1)
    }

    /// Whether a line of the original buffer lies inside this chunk.
    pub fn contains_line(&self, original_line: u32) -> bool {
        (self.start_line..=self.end_line()).contains(&original_line)
    }

    /// The chunk's text preceded by `start_line - 1` empty lines. Parsing this (with the input
    /// file's name as the source name) makes MLIR's locations, and so every diagnostic and every
    /// printed `loc(...)`, carry the original file's line numbers, as mlir-opt 22 does. Columns
    /// are unchanged because chunks start at a line start.
    pub fn source_with_original_lines(&self) -> Cow<'a, str> {
        if self.start_line <= 1 {
            return Cow::Borrowed(self.text);
        }
        let padding = (self.start_line - 1) as usize;
        let mut padded = String::with_capacity(padding + self.text.len());
        padded.extend(std::iter::repeat_n('\n', padding));
        padded.push_str(self.text);
        Cow::Owned(padded)
    }
}

/// Splits `buffer` into chunks at lines equal to `marker` (whitespace around it is ignored). An
/// empty or all-whitespace `marker` means [`DEFAULT_SPLIT_MARKER`]. Always returns at least one
/// chunk; empty chunks (two adjacent markers, a marker on the first or last line) are kept,
/// because mlir-opt processes them too (each prints an empty module).
pub fn split_input<'a>(buffer: &'a str, marker: &str) -> Vec<Chunk<'a>> {
    let marker = effective_marker(marker);
    let mut chunks = Vec::new();
    let mut chunk_start_byte = 0usize;
    let mut chunk_start_line = 1u32;
    for line in lines_with_offsets(buffer) {
        if line.text.trim() != marker {
            continue;
        }
        chunks.push(Chunk {
            index: chunks.len(),
            text: &buffer[chunk_start_byte..line.start],
            start_line: chunk_start_line,
        });
        chunk_start_byte = line.end_including_newline;
        chunk_start_line = line.number.saturating_add(1);
    }
    chunks.push(Chunk {
        index: chunks.len(),
        text: &buffer[chunk_start_byte..],
        start_line: chunk_start_line,
    });
    chunks
}

/// A line that looks like a mistyped split marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NearMiss {
    /// 1-based line in the buffer.
    pub line: u32,
    /// 1-based byte column where the marker-like text starts.
    pub column: u32,
    /// The whole line, for the source snippet.
    pub line_text: String,
}

impl NearMiss {
    /// Formats the warning the way mlir-opt does, with the source line and a caret.
    pub fn render(&self, file_name: &str) -> String {
        let caret_indent: String = self
            .line_text
            .chars()
            .take(self.column.saturating_sub(1) as usize)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        format!(
            "{file_name}:{}:{}: warning: near miss with file split marker\n{}\n{caret_indent}^",
            self.line, self.column, self.line_text
        )
    }
}

impl fmt::Display for NearMiss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}: near miss with file split marker: {:?}",
            self.line, self.line_text
        )
    }
}

/// Lines that start like the marker (its text less the last two characters) but are not exactly
/// the marker. mlir-opt uses the same two-character slack for its warning. Markers shorter than
/// three characters have no meaningful prefix and never produce near misses.
pub fn split_marker_near_misses(buffer: &str, marker: &str) -> Vec<NearMiss> {
    let marker = effective_marker(marker);
    let prefix_chars = marker.chars().count().saturating_sub(2);
    if prefix_chars == 0 {
        return Vec::new();
    }
    let prefix: String = marker.chars().take(prefix_chars).collect();
    let mut misses = Vec::new();
    for line in lines_with_offsets(buffer) {
        let trimmed = line.text.trim();
        if trimmed == marker || !trimmed.starts_with(prefix.as_str()) {
            continue;
        }
        let leading = line.text.len() - line.text.trim_start().len();
        misses.push(NearMiss {
            line: line.number,
            column: u32::try_from(leading + 1).unwrap_or(u32::MAX),
            line_text: line.text.to_string(),
        });
    }
    misses
}

/// Joins per-chunk outputs the way mlir-opt does: `marker` and a newline between consecutive
/// outputs (a chunk that failed contributes an empty output, so its markers still appear). An
/// empty `marker` means [`DEFAULT_SPLIT_MARKER`].
pub fn join_outputs<S: AsRef<str>>(outputs: &[S], marker: &str) -> String {
    let separator = format!("{}\n", effective_marker(marker));
    let mut joined = String::new();
    for (position, output) in outputs.iter().enumerate() {
        if position > 0 {
            joined.push_str(&separator);
        }
        joined.push_str(output.as_ref());
    }
    joined
}

fn effective_marker(marker: &str) -> &str {
    let trimmed = marker.trim();
    if trimmed.is_empty() {
        DEFAULT_SPLIT_MARKER
    } else {
        trimmed
    }
}

/// Number of lines in `text`, counting a final unterminated line.
pub(crate) fn count_lines(text: &str) -> u32 {
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    let unterminated = usize::from(!text.is_empty() && !text.ends_with('\n'));
    u32::try_from(newlines + unterminated).unwrap_or(u32::MAX)
}

pub(crate) struct Line<'a> {
    /// 1-based.
    pub number: u32,
    /// Byte offset of the line start.
    pub start: usize,
    /// Byte offset just past the line's `\n` (or the buffer end).
    pub end_including_newline: usize,
    /// The line without its `\n` and without a trailing `\r`.
    pub text: &'a str,
}

/// The lines of `text` with their byte offsets; no empty line after a final newline.
pub(crate) fn lines_with_offsets(text: &str) -> impl Iterator<Item = Line<'_>> {
    let mut start = 0usize;
    let mut number = 0u32;
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let rest = &text[start..];
        let (line_len, newline_len) = match rest.find('\n') {
            Some(position) => (position, 1),
            None => (rest.len(), 0),
        };
        let raw = &rest[..line_len];
        number = number.saturating_add(1);
        let line = Line {
            number,
            start,
            end_including_newline: start + line_len + newline_len,
            text: raw.strip_suffix('\r').unwrap_or(raw),
        };
        start += line_len + newline_len;
        Some(line)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_marker_gives_one_chunk_starting_at_line_one() {
        let chunks = split_input("module {}\n", DEFAULT_SPLIT_MARKER);
        assert_eq!(
            chunks,
            vec![Chunk {
                index: 0,
                text: "module {}\n",
                start_line: 1
            }]
        );
        assert_eq!(chunks[0].line_count(), 1);
        assert_eq!(chunks[0].end_line(), 1);
    }

    #[test]
    fn split_keeps_original_line_numbers() {
        let buffer = "a\nb\n// -----\nc\n\nd\n// -----\ne";
        let chunks = split_input(buffer, DEFAULT_SPLIT_MARKER);
        let summary: Vec<(usize, &str, u32, u32)> = chunks
            .iter()
            .map(|c| (c.index, c.text, c.start_line, c.end_line()))
            .collect();
        assert_eq!(
            summary,
            vec![(0, "a\nb\n", 1, 2), (1, "c\n\nd\n", 4, 6), (2, "e", 8, 8),]
        );
        // Line 3 of chunk 1 ("d") is line 6 of the file.
        assert_eq!(chunks[1].original_line(3), 6);
        assert!(chunks[1].contains_line(4) && chunks[1].contains_line(6));
        assert!(!chunks[1].contains_line(3) && !chunks[1].contains_line(7));
    }

    #[test]
    fn marker_with_surrounding_whitespace_and_crlf_splits() {
        let buffer = "a\r\n  // -----  \r\nb\r\n";
        let chunks = split_input(buffer, DEFAULT_SPLIT_MARKER);
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].text, "a\r\n");
        assert_eq!(chunks[1].text, "b\r\n");
        assert_eq!(chunks[1].start_line, 3);
    }

    #[test]
    fn marker_inside_a_line_does_not_split() {
        let buffer = "a // -----\nb\n";
        assert_eq!(split_input(buffer, DEFAULT_SPLIT_MARKER).len(), 1);
    }

    #[test]
    fn empty_chunks_are_kept() {
        let buffer = "// -----\n// -----\n";
        let chunks = split_input(buffer, DEFAULT_SPLIT_MARKER);
        let summary: Vec<(&str, u32)> = chunks.iter().map(|c| (c.text, c.start_line)).collect();
        assert_eq!(summary, vec![("", 1), ("", 2), ("", 3)]);
        assert_eq!(chunks[0].end_line(), 0);
        assert!(!chunks[0].contains_line(1));
        assert_eq!(split_input("", DEFAULT_SPLIT_MARKER).len(), 1);
    }

    #[test]
    fn custom_marker() {
        let buffer = "a\n// -----\nb\n#### split\nc\n";
        let chunks = split_input(buffer, "#### split");
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].text, "a\n// -----\nb\n");
        assert_eq!((chunks[1].text, chunks[1].start_line), ("c\n", 5));
        // An empty marker means the default.
        assert_eq!(split_input(buffer, "").len(), 2);
        assert_eq!(split_input(buffer, "  ")[1].start_line, 3);
    }

    #[test]
    fn padded_source_reproduces_original_lines() {
        let buffer = "a\n// -----\nb\nc\n";
        let chunks = split_input(buffer, DEFAULT_SPLIT_MARKER);
        assert_eq!(chunks[0].source_with_original_lines(), "a\n");
        let padded = chunks[1].source_with_original_lines();
        assert_eq!(padded, "\n\nb\nc\n");
        assert_eq!(padded.lines().nth(2), Some("b"));
    }

    #[test]
    fn near_misses_are_found_with_their_position() {
        let buffer = "a\n// ----\n  // ------\n// ----- x\n// -----\n//===--===//\n// -- note\n";
        let misses = split_marker_near_misses(buffer, DEFAULT_SPLIT_MARKER);
        let where_: Vec<(u32, u32)> = misses.iter().map(|m| (m.line, m.column)).collect();
        assert_eq!(where_, vec![(2, 1), (3, 3), (4, 1)]);
        assert_eq!(
            misses[1].render("f.mlir"),
            "f.mlir:3:3: warning: near miss with file split marker\n  // ------\n  ^"
        );
        assert!(split_marker_near_misses("a\n-\n", "--").is_empty());
    }

    #[test]
    fn join_puts_the_marker_between_outputs() {
        let outputs = ["module {\n}\n\n", "", "module {\n}\n\n"];
        assert_eq!(
            join_outputs(&outputs, DEFAULT_SPLIT_MARKER),
            "module {\n}\n\n// -----\n// -----\nmodule {\n}\n\n"
        );
        assert_eq!(join_outputs(&["x\n"], ""), "x\n");
        assert_eq!(join_outputs::<&str>(&[], ""), "");
        assert_eq!(join_outputs(&["x\n", "y\n"], "// ===="), "x\n// ====\ny\n");
    }

    #[test]
    fn count_lines_handles_unterminated_last_line() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\n\n"), 2);
        assert_eq!(count_lines("a\nb"), 2);
    }
}
