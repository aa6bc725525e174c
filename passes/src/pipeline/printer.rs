//! Printing pipelines in MLIR's canonical form: `builtin.module(func.func(cse, canonicalize))`,
//! options as `pass{key=value key2="quoted value"}`. Printing then parsing gives the same AST
//! (up to spans).

use std::fmt;

use super::ast::{Element, PassOption, Pipeline, ValueStyle};
use super::parser::is_plain_value;

/// How a value should be written so that it parses back to exactly `value`.
///
/// A value holding both quote characters and text that needs quoting (whitespace, an unbalanced
/// bracket) has no spelling in MLIR's grammar; it is written in double quotes and will not read
/// back the same.
pub fn style_for_value(value: &str) -> ValueStyle {
    if is_plain_value(value) {
        ValueStyle::Plain
    } else if !value.contains('"') {
        ValueStyle::Quoted('"')
    } else if !value.contains('\'') {
        ValueStyle::Quoted('\'')
    } else {
        ValueStyle::Quoted('"')
    }
}

/// `value` as it should appear after `key=`: verbatim when it scans as one plain value,
/// otherwise quoted.
pub fn format_option_value(value: &str) -> String {
    write_value(value, style_for_value(value))
}

fn write_value(value: &str, style: ValueStyle) -> String {
    match style {
        ValueStyle::Flag | ValueStyle::Plain => value.to_string(),
        ValueStyle::Quoted(quote) => {
            // A program may have built a quoted value holding its own quote character.
            let quote = if value.contains(quote) {
                if quote == '"' {
                    '\''
                } else {
                    '"'
                }
            } else {
                quote
            };
            format!("{quote}{value}{quote}")
        }
    }
}

impl fmt::Display for PassOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.style {
            ValueStyle::Flag => write!(f, "{}", self.key.value),
            style => write!(
                f,
                "{}={}",
                self.key.value,
                write_value(&self.value.value, style)
            ),
        }
    }
}

fn write_list(f: &mut fmt::Formatter<'_>, elements: &[Element]) -> fmt::Result {
    for (index, element) in elements.iter().enumerate() {
        if index > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{element}")?;
    }
    Ok(())
}

impl fmt::Display for Element {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Element::Pass { name, options, .. } => {
                f.write_str(&name.value)?;
                if !options.is_empty() {
                    f.write_str("{")?;
                    for (index, option) in options.iter().enumerate() {
                        if index > 0 {
                            f.write_str(" ")?;
                        }
                        write!(f, "{option}")?;
                    }
                    f.write_str("}")?;
                }
                Ok(())
            }
            Element::Nested {
                anchor, elements, ..
            } => {
                write!(f, "{}(", anchor.value)?;
                write_list(f, elements)?;
                f.write_str(")")
            }
        }
    }
}

impl fmt::Display for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.anchor {
            Some(anchor) => {
                write!(f, "{}(", anchor.value)?;
                write_list(f, &self.elements)?;
                f.write_str(")")
            }
            None => write_list(f, &self.elements),
        }
    }
}
