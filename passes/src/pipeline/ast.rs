//! The pipeline AST: what a `--pass-pipeline` string says, with the byte span of every piece so
//! later stages (pass lookup, option parsing) can point their errors at the offending text.

/// A byte range of the pipeline text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Span {
    /// Byte offset of the first byte.
    pub offset: usize,
    /// Length in bytes; 0 for a position (such as the end of the text).
    pub len: usize,
}

impl Span {
    pub fn new(offset: usize, len: usize) -> Self {
        Self { offset, len }
    }

    /// The span from `start` (inclusive) to `end` (exclusive).
    pub fn between(start: usize, end: usize) -> Self {
        Self {
            offset: start,
            len: end.saturating_sub(start),
        }
    }

    /// Byte offset one past the last byte.
    pub fn end(&self) -> usize {
        self.offset + self.len
    }
}

/// A value and the span of the text it was read from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Spanned<T> {
    pub fn new(value: T, span: Span) -> Self {
        Self { value, span }
    }

    /// A value built by a program rather than parsed (empty span at offset 0).
    pub fn unspanned(value: T) -> Self {
        Self {
            value,
            span: Span::default(),
        }
    }
}

/// How an option value was written; kept so printing gives back text that parses to the same
/// value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueStyle {
    /// `key` with no `=`: a flag (LLVM's option parser reads it as `true` for booleans).
    Flag,
    /// `key=text`: the raw text, which may hold lists (`1,2,3`), nested braces (`{a b}`) or
    /// quoted segments (`"a b",c`), all kept verbatim.
    Plain,
    /// `key="text"` or `key='text'`: the quotes are removed from the value; the character
    /// is the quote used.
    Quoted(char),
}

/// One `key=value` inside a pass's `{...}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PassOption {
    pub key: Spanned<String>,
    /// The value text, quotes removed for quoted values. The span covers the whole written value
    /// including quotes (an empty span just after the key for flags).
    pub value: Spanned<String>,
    pub style: ValueStyle,
}

impl PassOption {
    /// An option built by a program; the style is chosen so the value prints back unchanged.
    pub fn new(key: impl Into<String>, value: impl Into<String>) -> Self {
        let value = value.into();
        let style = super::printer::style_for_value(&value);
        Self {
            key: Spanned::unspanned(key.into()),
            value: Spanned::unspanned(value),
            style,
        }
    }

    /// True when the value was written in quotes.
    pub fn is_quoted(&self) -> bool {
        matches!(self.style, ValueStyle::Quoted(_))
    }

    /// The span to blame for a bad value: the value itself, or the key for a flag.
    pub fn value_blame_span(&self) -> Span {
        match self.style {
            ValueStyle::Flag => self.key.span,
            _ => self.value.span,
        }
    }
}

/// One element of a pipeline list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Element {
    /// A pass or named pipeline: `name` or `name{options}`.
    Pass {
        name: Spanned<String>,
        options: Vec<PassOption>,
        span: Span,
    },
    /// A nested pipeline on an op anchor: `func.func(...)`, or op-agnostic `any(...)`.
    Nested {
        anchor: Spanned<String>,
        elements: Vec<Element>,
        span: Span,
    },
}

/// The anchor name of an op-agnostic nested pipeline.
pub const ANY_ANCHOR: &str = "any";

impl Element {
    /// The pass name or the anchor op name.
    pub fn name(&self) -> &Spanned<String> {
        match self {
            Element::Pass { name, .. } => name,
            Element::Nested { anchor, .. } => anchor,
        }
    }

    /// The whole element's span.
    pub fn span(&self) -> Span {
        match self {
            Element::Pass { span, .. } | Element::Nested { span, .. } => *span,
        }
    }

    /// True for `any(...)`.
    pub fn is_any(&self) -> bool {
        matches!(self, Element::Nested { anchor, .. } if anchor.value == ANY_ANCHOR)
    }

    /// A copy with every span set to the empty span at offset 0, for comparing structure.
    pub fn without_spans(&self) -> Element {
        match self {
            Element::Pass { name, options, .. } => Element::Pass {
                name: Spanned::unspanned(name.value.clone()),
                options: options
                    .iter()
                    .map(|option| PassOption {
                        key: Spanned::unspanned(option.key.value.clone()),
                        value: Spanned::unspanned(option.value.value.clone()),
                        style: option.style,
                    })
                    .collect(),
                span: Span::default(),
            },
            Element::Nested {
                anchor, elements, ..
            } => Element::Nested {
                anchor: Spanned::unspanned(anchor.value.clone()),
                elements: elements.iter().map(Element::without_spans).collect(),
                span: Span::default(),
            },
        }
    }
}

/// A parsed pipeline: `anchor(elements...)` when the text is a single `op-name(...)`, otherwise
/// a bare element list (`cse, canonicalize`) to be added to a pass manager the caller chooses.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Pipeline {
    pub anchor: Option<Spanned<String>>,
    pub elements: Vec<Element>,
}

impl Pipeline {
    /// A copy with every span cleared: two pipelines that print the same compare equal.
    pub fn without_spans(&self) -> Pipeline {
        Pipeline {
            anchor: self
                .anchor
                .as_ref()
                .map(|anchor| Spanned::unspanned(anchor.value.clone())),
            elements: self.elements.iter().map(Element::without_spans).collect(),
        }
    }

    /// True when the pipeline holds no passes at all.
    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }
}
