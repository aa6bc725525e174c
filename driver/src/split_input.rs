//! `--split-input-file`: cut one input buffer into independently processed chunks, the way
//! mlir-opt does, and join the chunks' outputs back together.
//!
//! The rule is mlir-opt's: the buffer is cut wherever the marker (`// -----` unless
//! `--split-input-file=<marker>` names another) occurs, anywhere in a line. Splitting looks for
//! the marker less its last two characters (the *prefix*); an occurrence followed by those two
//! characters and at least one more (not `0`) is a split, and the next chunk starts right after
//! the marker (the rest of its line included); any other occurrence (`// ----`, the marker at
//! the very end of the buffer) is a near miss, reported as a warning, and stays in its chunk. A
//! chunk that would be empty does not end at the next marker (so a buffer that starts with the
//! marker keeps the marker's last two characters in its first chunk, as in mlir-opt), and an
//! empty last chunk is dropped. A chunk is parsed at its original line and column, so its
//! diagnostics name the places in the file the user wrote.

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
    /// Byte column of that line at which `text` starts, 1-based (after a marker, the rest of
    /// its line is the chunk's first line).
    pub start_column: u32,
}

impl<'a> Chunk<'a> {
    /// The whole buffer as one chunk (no `--split-input-file`).
    pub fn whole(buffer: &'a str) -> Self {
        Chunk {
            index: 0,
            text: buffer,
            start_line: 1,
            start_column: 1,
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

    /// The chunk's text preceded by `start_line - 1` empty lines and `start_column - 1` spaces.
    /// Parsing this (with the input file's name as the source name) makes MLIR's locations, and
    /// so every diagnostic and every printed `loc(...)`, carry the original file's lines and
    /// columns, as mlir-opt 22 does.
    pub fn source_with_original_lines(&self) -> Cow<'a, str> {
        if self.start_line <= 1 && self.start_column <= 1 {
            return Cow::Borrowed(self.text);
        }
        let lines = self.start_line.saturating_sub(1) as usize;
        let columns = self.start_column.saturating_sub(1) as usize;
        let mut padded = String::with_capacity(lines + columns + self.text.len());
        padded.extend(std::iter::repeat_n('\n', lines));
        padded.extend(std::iter::repeat_n(' ', columns));
        padded.push_str(self.text);
        Cow::Owned(padded)
    }
}

/// Splits `buffer` into chunks at the split marker, by mlir-opt's rule (see the module docs).
/// An empty or all-whitespace `marker` means [`DEFAULT_SPLIT_MARKER`]. Returns no chunk for a
/// buffer with nothing to process (an empty one).
pub fn split_input<'a>(buffer: &'a str, marker: &str) -> Vec<Chunk<'a>> {
    let (ranges, _) = scan(buffer, effective_marker(marker));
    ranges
        .into_iter()
        .enumerate()
        .map(|(index, (start, end))| {
            let (start_line, start_column) = position(buffer, start);
            Chunk {
                index,
                text: &buffer[start..end],
                start_line,
                start_column,
            }
        })
        .collect()
}

/// The chunks' byte ranges and the byte offsets of the near misses, by mlir-opt's rule.
fn scan(buffer: &str, marker: &str) -> (Vec<(usize, usize)>, Vec<usize>) {
    let slack = marker.len().min(2);
    let (prefix, suffix) = marker.split_at(marker.len() - slack);
    if prefix.is_empty() {
        return (vec![(0, buffer.len())], Vec::new());
    }
    // The pieces between occurrences of the prefix, left to right, without overlaps.
    let mut pieces = Vec::new();
    let mut start = 0;
    while let Some(found) = buffer[start..].find(prefix) {
        pieces.push((start, start + found));
        start += found + prefix.len();
    }
    pieces.push((start, buffer.len()));
    let mut chunks = Vec::new();
    let mut near_misses = Vec::new();
    let mut previous: Option<(usize, usize)> = None;
    for (start, end) in pieces {
        let Some(current) = previous.filter(|(from, to)| to > from) else {
            previous = Some((start, end));
            continue;
        };
        let piece = &buffer[start..end];
        let split =
            piece.starts_with(suffix) && piece.len() > slack && piece.as_bytes()[slack] != b'0';
        if split {
            chunks.push(current);
            previous = Some((start + slack, end));
        } else {
            near_misses.push(start);
            previous = Some((current.0, end));
        }
    }
    if let Some((from, to)) = previous.filter(|(from, to)| to > from) {
        chunks.push((from, to));
    }
    (chunks, near_misses)
}

/// The 1-based line and byte column of byte `offset` of `buffer`.
fn position(buffer: &str, offset: usize) -> (u32, u32) {
    let before = &buffer[..offset];
    let line = before.bytes().filter(|&byte| byte == b'\n').count() + 1;
    let column = offset - before.rfind('\n').map_or(0, |newline| newline + 1) + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
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

/// Where the marker's prefix (its text less the last two characters) occurs without making a
/// split (see the module docs): mlir-opt warns about each.
pub fn split_marker_near_misses(buffer: &str, marker: &str) -> Vec<NearMiss> {
    let (_, offsets) = scan(buffer, effective_marker(marker));
    offsets
        .into_iter()
        .map(|offset| {
            let (line, column) = position(buffer, offset);
            let line_start = buffer[..offset]
                .rfind('\n')
                .map_or(0, |newline| newline + 1);
            let line_end = buffer[offset..]
                .find('\n')
                .map_or(buffer.len(), |newline| offset + newline);
            let text = &buffer[line_start..line_end];
            NearMiss {
                line,
                column,
                line_text: text.strip_suffix('\r').unwrap_or(text).to_string(),
            }
        })
        .collect()
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
                start_line: 1,
                start_column: 1,
            }]
        );
        assert_eq!(chunks[0].line_count(), 1);
        assert_eq!(chunks[0].end_line(), 1);
    }

    #[test]
    fn a_chunk_starts_right_after_its_marker_at_the_original_line_and_column() {
        let buffer = "a\nb\n// -----\nc\n\nd\n// -----\ne";
        let chunks = split_input(buffer, DEFAULT_SPLIT_MARKER);
        let summary: Vec<(usize, &str, u32, u32, u32)> = chunks
            .iter()
            .map(|c| (c.index, c.text, c.start_line, c.start_column, c.end_line()))
            .collect();
        assert_eq!(
            summary,
            vec![
                (0, "a\nb\n", 1, 1, 2),
                (1, "\nc\n\nd\n", 3, 9, 6),
                (2, "\ne", 7, 9, 8)
            ]
        );
        // Line 4 of chunk 1 ("d") is line 6 of the file.
        assert_eq!(chunks[1].original_line(4), 6);
        assert!(chunks[1].contains_line(4) && chunks[1].contains_line(6));
        assert!(!chunks[1].contains_line(2) && !chunks[1].contains_line(7));
    }

    #[test]
    fn the_marker_splits_anywhere_in_a_line_as_in_mlir_opt() {
        // Whitespace around the marker stays in the chunks on either side.
        let buffer = "a\r\n  // -----  \r\nb\r\n";
        let chunks = split_input(buffer, DEFAULT_SPLIT_MARKER);
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].text, "a\r\n  ");
        assert_eq!(chunks[1].text, "  \r\nb\r\n");
        assert_eq!((chunks[1].start_line, chunks[1].start_column), (2, 11));
        // After code, and with text after it on the line (mlir-opt-22 then parses ` x`).
        let texts: Vec<&str> = split_input("a // -----\nb\n// ----- x\n", DEFAULT_SPLIT_MARKER)
            .iter()
            .map(|c| c.text)
            .collect();
        assert_eq!(texts, vec!["a ", "\nb\n", " x\n"]);
        // The last two characters followed by `0` do not split (mlir-opt's rule).
        assert_eq!(
            split_input("a\n// -----0\nb\n", DEFAULT_SPLIT_MARKER).len(),
            1
        );
    }

    #[test]
    fn empty_chunks_follow_mlir_opts_rule() {
        // A buffer starting with the marker: its first chunk would be empty, so it runs on and
        // keeps the marker's last two characters (mlir-opt-22 reports an error at 1:7).
        let chunks = split_input("// -----\nmodule {}\n", DEFAULT_SPLIT_MARKER);
        let summary: Vec<(&str, u32, u32)> = chunks
            .iter()
            .map(|c| (c.text, c.start_line, c.start_column))
            .collect();
        assert_eq!(summary, vec![("--\nmodule {}\n", 1, 7)]);
        // Two markers in a row: the chunk between them is the newline.
        let texts: Vec<&str> = split_input("a\n// -----\n// -----\nb\n", DEFAULT_SPLIT_MARKER)
            .iter()
            .map(|c| c.text)
            .collect();
        assert_eq!(texts, vec!["a\n", "\n", "\nb\n"]);
        // A marker ending the buffer is a near miss, not a split; an empty buffer has no chunk.
        assert_eq!(split_input("a\n// -----", DEFAULT_SPLIT_MARKER).len(), 1);
        assert!(split_input("", DEFAULT_SPLIT_MARKER).is_empty());
    }

    #[test]
    fn custom_marker() {
        let buffer = "a\n// -----\nb\n#### split\nc\n";
        let chunks = split_input(buffer, "#### split");
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].text, "a\n// -----\nb\n");
        assert_eq!(
            (chunks[1].text, chunks[1].start_line, chunks[1].start_column),
            ("\nc\n", 4, 11)
        );
        // An empty marker means the default.
        assert_eq!(split_input(buffer, "").len(), 2);
        assert_eq!(split_input(buffer, "  ")[1].start_line, 2);
    }

    #[test]
    fn padded_source_reproduces_original_lines_and_columns() {
        let buffer = "a\n// -----\nb\nc\n";
        let chunks = split_input(buffer, DEFAULT_SPLIT_MARKER);
        assert_eq!(chunks[0].source_with_original_lines(), "a\n");
        let padded = chunks[1].source_with_original_lines();
        assert_eq!(padded, "\n        \nb\nc\n");
        assert_eq!(padded.lines().nth(2), Some("b"));
        let chunks = split_input("x // ----- y\n", DEFAULT_SPLIT_MARKER);
        assert_eq!(chunks[1].source_with_original_lines(), "           y\n");
    }

    #[test]
    fn near_misses_are_found_with_their_position() {
        // mlir-opt-22 on this buffer warns once, at 2:7; the other lines split (`// ------`
        // leaves `-`, `// ----- x` leaves ` x` in the next chunk).
        let buffer = "a\n// ----\n  // ------\n// ----- x\n// -----\n//===--===//\n// -- note\n";
        let misses = split_marker_near_misses(buffer, DEFAULT_SPLIT_MARKER);
        let where_: Vec<(u32, u32)> = misses.iter().map(|m| (m.line, m.column)).collect();
        assert_eq!(where_, vec![(2, 7)]);
        assert_eq!(
            misses[0].render("f.mlir"),
            "f.mlir:2:7: warning: near miss with file split marker\n// ----\n      ^"
        );
        let starts: Vec<(u32, u32)> = split_input(buffer, DEFAULT_SPLIT_MARKER)
            .iter()
            .map(|c| (c.start_line, c.start_column))
            .collect();
        assert_eq!(starts, vec![(1, 1), (3, 11), (4, 9), (5, 9)]);
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
