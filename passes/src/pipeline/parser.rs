//! Parser for MLIR's textual pass-pipeline grammar:
//!
//! ```text
//! pipeline   ::= op-name `(` element-list? `)` | element-list?
//! element-list ::= element (`,` element)*
//! element    ::= op-name `(` element-list? `)`        (nested; `any` is op-agnostic)
//!              | pass-name options?
//! options    ::= `{` (key (`=` value)?)* `}`           (options separated by whitespace)
//! value      ::= quoted | plain
//! quoted     ::= `"` [^"]* `"` | `'` [^']* `'`
//! plain      ::= text up to whitespace, `}` or `)` outside of `{}`, `()`, `[]` and quotes
//! ```
//!
//! Whitespace is allowed between all tokens. Plain values keep their text verbatim (lists
//! `1,2,3`, nested braces `{a b}`, quoted segments `"a b",c`) so upstream passes receive it as
//! MLIR would hand it to them.

use super::ast::{Element, PassOption, Pipeline, Span, Spanned, ValueStyle};
use super::error::{describe_position, PipelineError};

/// Deeper nesting is refused rather than risking the stack on hostile input.
pub const MAX_NESTING_DEPTH: usize = 64;

/// Parses a pipeline string.
///
/// A text that is exactly one `op-name(...)` is an anchored pipeline; anything else is a bare
/// element list (possibly empty).
pub fn parse_pipeline(text: &str) -> Result<Pipeline, PipelineError> {
    let mut parser = Parser::new(text);
    let mut elements = parser.parse_list(None, 0)?;
    if elements.len() == 1 && matches!(elements[0], Element::Nested { .. }) {
        if let Some(Element::Nested {
            anchor, elements, ..
        }) = elements.pop()
        {
            return Ok(Pipeline {
                anchor: Some(anchor),
                elements,
            });
        }
    }
    Ok(Pipeline {
        anchor: None,
        elements,
    })
}

/// Parses a pass's option list alone, either braced (`{a=1 b=x,y}`, as
/// [`PassOptions::print`](super::PassOptions::print) writes it) or bare (`a=1 b=x,y`).
pub fn parse_option_list(text: &str) -> Result<Vec<PassOption>, PipelineError> {
    let mut parser = Parser::new(text);
    parser.skip_whitespace();
    let options = if parser.peek() == Some(b'{') {
        let open = parser.pos;
        parser.pos += 1;
        parser.parse_options("options", open, Terminator::Brace)?
    } else {
        parser.parse_options("options", parser.pos, Terminator::End)?
    };
    parser.skip_whitespace();
    if parser.peek().is_some() {
        return Err(parser.error_here("expected end of option list"));
    }
    Ok(options)
}

/// Characters of pass names, op names and option keys.
fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.')
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Terminator {
    Brace,
    End,
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            bytes: text.as_bytes(),
            pos: 0,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn column(&self, offset: usize) -> String {
        describe_position(self.text, offset)
    }

    /// The span of the character at `pos` (empty at the end).
    fn char_span(&self, pos: usize) -> Span {
        let len = self
            .text
            .get(pos..)
            .and_then(|rest| rest.chars().next())
            .map_or(0, char::len_utf8);
        Span::new(pos, len)
    }

    /// `'c'` for the character at `pos`, or `end of pipeline`.
    fn found_at(&self, pos: usize) -> String {
        match self.text.get(pos..).and_then(|rest| rest.chars().next()) {
            Some(c) if c.is_control() => format!("'{}'", c.escape_debug()),
            Some(c) => format!("'{c}'"),
            None => "end of pipeline".to_string(),
        }
    }

    fn error_here(&self, expected: &str) -> PipelineError {
        PipelineError::new(
            format!("{expected}, found {}", self.found_at(self.pos)),
            self.char_span(self.pos),
        )
    }

    fn parse_name(&mut self, what: &str) -> Result<Spanned<String>, PipelineError> {
        let start = self.pos;
        while self.peek().is_some_and(is_name_byte) {
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.error_here(&format!("expected {what}")));
        }
        Ok(Spanned::new(
            self.text[start..self.pos].to_string(),
            Span::between(start, self.pos),
        ))
    }

    /// Parses elements until the end of the text (`open` is None) or the `)` closing the
    /// nesting opened by `open = (anchor, offset of '(')`.
    fn parse_list(
        &mut self,
        open: Option<(&str, usize)>,
        depth: usize,
    ) -> Result<Vec<Element>, PipelineError> {
        let mut elements = Vec::new();
        self.skip_whitespace();
        match (self.peek(), open) {
            (None, None) => return Ok(elements),
            (Some(b')'), Some(_)) => {
                self.pos += 1;
                return Ok(elements);
            }
            (None, Some((anchor, paren))) => return Err(self.unclosed(anchor, paren)),
            _ => {}
        }
        loop {
            self.skip_whitespace();
            let element = self.parse_element(depth)?;
            let after = match &element {
                Element::Pass { name, .. } => format!("'{}'", name.value),
                Element::Nested { anchor, .. } => format!("'{}(...)'", anchor.value),
            };
            elements.push(element);
            self.skip_whitespace();
            match (self.peek(), open) {
                (Some(b','), _) => self.pos += 1,
                (Some(b')'), Some(_)) => {
                    self.pos += 1;
                    return Ok(elements);
                }
                (None, None) => return Ok(elements),
                (None, Some((anchor, paren))) => return Err(self.unclosed(anchor, paren)),
                (Some(b')'), None) => {
                    return Err(PipelineError::new(
                        "unexpected ')' with no matching '('",
                        Span::new(self.pos, 1),
                    ));
                }
                (Some(_), Some(_)) => {
                    return Err(self.error_here(&format!("expected ',' or ')' after {after}")));
                }
                (Some(_), None) => {
                    return Err(
                        self.error_here(&format!("expected ',' or end of pipeline after {after}"))
                    );
                }
            }
        }
    }

    fn unclosed(&self, anchor: &str, paren: usize) -> PipelineError {
        PipelineError::new(
            format!(
                "expected ')' to close '{anchor}(' opened at {}",
                self.column(paren)
            ),
            Span::new(self.pos, 0),
        )
    }

    fn parse_element(&mut self, depth: usize) -> Result<Element, PipelineError> {
        let start = self.pos;
        let name = self.parse_name("pass or op name")?;
        self.skip_whitespace();
        match self.peek() {
            Some(b'(') => {
                if depth >= MAX_NESTING_DEPTH {
                    return Err(PipelineError::new(
                        format!("pipeline nested deeper than {MAX_NESTING_DEPTH} levels"),
                        Span::new(self.pos, 1),
                    ));
                }
                let paren = self.pos;
                self.pos += 1;
                let elements = self.parse_list(Some((&name.value, paren)), depth + 1)?;
                Ok(Element::Nested {
                    anchor: name,
                    elements,
                    span: Span::between(start, self.pos),
                })
            }
            Some(b'{') => {
                let brace = self.pos;
                self.pos += 1;
                let options = self.parse_options(&name.value, brace, Terminator::Brace)?;
                Ok(Element::Pass {
                    name,
                    options,
                    span: Span::between(start, self.pos),
                })
            }
            _ => {
                let span = name.span;
                Ok(Element::Pass {
                    name,
                    options: Vec::new(),
                    span,
                })
            }
        }
    }

    /// Parses options up to and including the closing `}` (or to the end of the text).
    fn parse_options(
        &mut self,
        pass: &str,
        brace: usize,
        terminator: Terminator,
    ) -> Result<Vec<PassOption>, PipelineError> {
        let mut options = Vec::new();
        loop {
            self.skip_whitespace();
            match self.peek() {
                Some(b'}') if terminator == Terminator::Brace => {
                    self.pos += 1;
                    return Ok(options);
                }
                None if terminator == Terminator::End => return Ok(options),
                None | Some(b')') if terminator == Terminator::Brace => {
                    let found = match self.peek() {
                        Some(_) => format!(", found {}", self.found_at(self.pos)),
                        None => String::new(),
                    };
                    return Err(PipelineError::new(
                        format!(
                            "expected '}}' to close options of '{pass}' opened at {}{found}",
                            self.column(brace)
                        ),
                        self.char_span(self.pos),
                    ));
                }
                Some(byte) if is_name_byte(byte) => {}
                _ => {
                    let expected = match terminator {
                        Terminator::Brace => "expected option name or '}'",
                        Terminator::End => "expected option name",
                    };
                    return Err(self.error_here(expected));
                }
            }
            let key = self.parse_name("option name")?;
            match self.peek() {
                Some(b'=') => {
                    self.pos += 1;
                    let (value, style) = self.parse_value(&key.value)?;
                    options.push(PassOption { key, value, style });
                }
                None => options.push(flag(key)),
                Some(byte) if byte.is_ascii_whitespace() || byte == b'}' || byte == b')' => {
                    options.push(flag(key));
                }
                Some(_) => {
                    return Err(self.error_here(&format!(
                        "expected '=', whitespace or '}}' after option '{}'",
                        key.value
                    )));
                }
            }
        }
    }

    /// Scans one value: up to whitespace, `}` or `)` that is outside brackets and quotes.
    fn parse_value(&mut self, key: &str) -> Result<(Spanned<String>, ValueStyle), PipelineError> {
        let start = self.pos;
        // Closing byte and offset of each open bracket.
        let mut open: Vec<(u8, usize)> = Vec::new();
        // End (exclusive) of the quoted segment that starts the value, if it starts with one.
        let mut leading_quote_end = None;
        while let Some(byte) = self.peek() {
            if open.is_empty() && (byte.is_ascii_whitespace() || byte == b'}' || byte == b')') {
                break;
            }
            match byte {
                b'"' | b'\'' => {
                    let quote = self.pos;
                    let Some(length) = self.bytes[quote + 1..].iter().position(|&b| b == byte)
                    else {
                        return Err(PipelineError::new(
                            format!(
                                "unterminated {q}...{q} value of option '{key}'",
                                q = char::from(byte)
                            ),
                            Span::new(quote, 1),
                        ));
                    };
                    self.pos = quote + length + 2;
                    if quote == start {
                        leading_quote_end = Some(self.pos);
                    }
                }
                b'{' => open.push((b'}', self.pos)),
                b'(' => open.push((b')', self.pos)),
                b'[' => open.push((b']', self.pos)),
                b'}' | b')' | b']' => match open.pop() {
                    Some((closer, _)) if closer == byte => {}
                    Some((closer, opened)) => {
                        return Err(PipelineError::new(
                            format!(
                                "mismatched '{}' in value of option '{key}': expected '{}' to \
                                 close {} opened at {}",
                                char::from(byte),
                                char::from(closer),
                                self.found_at(opened),
                                self.column(opened)
                            ),
                            Span::new(self.pos, 1),
                        ));
                    }
                    None => {
                        return Err(PipelineError::new(
                            format!("unmatched ']' in value of option '{key}'"),
                            Span::new(self.pos, 1),
                        ));
                    }
                },
                _ => {}
            }
            if !matches!(byte, b'"' | b'\'') {
                self.pos += 1;
            }
        }
        if let Some(&(_, opened)) = open.last() {
            return Err(PipelineError::new(
                format!(
                    "unclosed {} in value of option '{key}'",
                    self.found_at(opened)
                ),
                Span::new(opened, 1),
            ));
        }
        let span = Span::between(start, self.pos);
        if leading_quote_end == Some(self.pos) {
            let quote = char::from(self.bytes[start]);
            let content = self.text[start + 1..self.pos - 1].to_string();
            return Ok((Spanned::new(content, span), ValueStyle::Quoted(quote)));
        }
        Ok((
            Spanned::new(self.text[start..self.pos].to_string(), span),
            ValueStyle::Plain,
        ))
    }
}

fn flag(key: Spanned<String>) -> PassOption {
    let value = Spanned::new(String::new(), Span::new(key.span.end(), 0));
    PassOption {
        key,
        value,
        style: ValueStyle::Flag,
    }
}

/// True when `text` scans as exactly one plain (unquoted) value, so it can be printed as is.
pub(crate) fn is_plain_value(text: &str) -> bool {
    let mut parser = Parser::new(text);
    matches!(
        parser.parse_value(""),
        Ok((_, ValueStyle::Plain)) if parser.pos == text.len()
    )
}
