//! Invalid pipelines: exact messages and caret positions; name-resolution helpers.

use crate::pipeline::{
    edit_distance, parse_pipeline, suggest, unknown_option_error, unknown_pass_error,
    PipelineError, Span,
};

/// Each case: input, message, 1-based column of the caret.
const INVALID: &[(&str, &str, usize)] = &[
    (
        "builtin.module(cse",
        "expected ')' to close 'builtin.module(' opened at column 15",
        19,
    ),
    (
        "builtin.module(func.func(cse)",
        "expected ')' to close 'builtin.module(' opened at column 15",
        30,
    ),
    (
        "builtin.module(",
        "expected ')' to close 'builtin.module(' opened at column 15",
        16,
    ),
    (
        "builtin.module(cse}",
        "expected ',' or ')' after 'cse', found '}'",
        19,
    ),
    (
        "builtin.module(cse))",
        "unexpected ')' with no matching '('",
        20,
    ),
    ("cse)", "unexpected ')' with no matching '('", 4),
    (
        "cse canonicalize",
        "expected ',' or end of pipeline after 'cse', found 'c'",
        5,
    ),
    ("cse,,dce", "expected pass or op name, found ','", 5),
    ("cse,", "expected pass or op name, found end of pipeline", 5),
    (
        "builtin.module(cse,)",
        "expected pass or op name, found ')'",
        20,
    ),
    ("(cse)", "expected pass or op name, found '('", 1),
    (",", "expected pass or op name, found ','", 1),
    (
        "cs\u{e9}",
        "expected ',' or end of pipeline after 'cs', found '\u{e9}'",
        3,
    ),
    (
        "\u{1f600}",
        "expected pass or op name, found '\u{1f600}'",
        1,
    ),
    (
        "cse\u{1}",
        "expected ',' or end of pipeline after 'cse', found '\\u{1}'",
        4,
    ),
    (
        "cse{a=1",
        "expected '}' to close options of 'cse' opened at column 4",
        8,
    ),
    (
        "cse{",
        "expected '}' to close options of 'cse' opened at column 4",
        5,
    ),
    (
        "builtin.module(cse{a=1)",
        "expected '}' to close options of 'cse' opened at column 19, found ')'",
        23,
    ),
    ("cse{=1}", "expected option name or '}', found '='", 5),
    ("cse{a=1 ,b=2}", "expected option name or '}', found ','", 9),
    (
        "cse{a\"b\"}",
        "expected '=', whitespace or '}' after option 'a', found '\"'",
        6,
    ),
    ("cse{a=\"x}", "unterminated \"...\" value of option 'a'", 7),
    ("cse{a='x y}", "unterminated '...' value of option 'a'", 7),
    ("cse{a={x", "unclosed '{' in value of option 'a'", 7),
    ("cse{a=b(c d", "unclosed '(' in value of option 'a'", 8),
    (
        "cse{a=b(c d}",
        "mismatched '}' in value of option 'a': expected ')' to close '(' opened at column 8",
        12,
    ),
    (
        "cse{a={x)}",
        "mismatched ')' in value of option 'a': expected '}' to close '{' opened at column 7",
        9,
    ),
    ("cse{a=x]}", "unmatched ']' in value of option 'a'", 8),
    (
        "builtin.module(cse{a=1}(dce))",
        "expected ',' or ')' after 'cse', found '('",
        24,
    ),
    (
        "builtin.module(\n  cse",
        "expected ')' to close 'builtin.module(' opened at line 1, column 15",
        6,
    ),
];

fn parse_error(text: &str) -> PipelineError {
    match parse_pipeline(text) {
        Ok(pipeline) => panic!("{text:?} parsed as {pipeline:?}"),
        Err(error) => error,
    }
}

/// The 1-based column of the caret in a rendering.
fn caret_column(rendered: &str) -> usize {
    let caret_line = rendered
        .lines()
        .find(|line| line.trim_start().starts_with('^'))
        .expect("a caret line");
    caret_line.chars().take_while(|c| *c != '^').count() + 1
}

#[test]
fn invalid_pipelines_report_message_and_column() {
    for (input, message, column) in INVALID {
        let error = parse_error(input);
        assert_eq!(error.message, *message, "message for {input:?}");
        let rendered = error.render(input);
        assert_eq!(
            caret_column(&rendered),
            *column,
            "caret for {input:?}:\n{rendered}"
        );
    }
}

#[test]
fn render_draws_the_caret_under_the_column() {
    let text = "builtin.module(cse";
    let error = parse_error(text);
    assert_eq!(
        error.render(text),
        "error: expected ')' to close 'builtin.module(' opened at column 15\n\
         builtin.module(cse\n                  ^"
    );
}

#[test]
fn render_underlines_spans_and_prints_notes() {
    let text = "builtin.module(ipu-canonicalise)";
    let error = unknown_pass_error(
        "ipu-canonicalise",
        Span::new(15, 16),
        ["ipu-canonicalize", "cse", "canonicalize", "cse"],
    );
    assert_eq!(
        error.render(text),
        "error: 'ipu-canonicalise' does not refer to a registered pass or pass pipeline; did you mean 'ipu-canonicalize'?\n\
         builtin.module(ipu-canonicalise)\n               ^~~~~~~~~~~~~~~~\n\
         note: valid passes: canonicalize, cse, ipu-canonicalize"
    );
}

#[test]
fn render_keeps_tabs_and_picks_the_right_line() {
    let text = "builtin.module(\n\tcse{a=\"x}";
    let error = parse_error(text);
    assert_eq!(
        error.render(text),
        "error: unterminated \"...\" value of option 'a'\n\
         \tcse{a=\"x}\n\t      ^"
    );
}

#[test]
fn render_never_panics_on_bad_offsets() {
    let text = "a\u{e9}b\nc";
    for offset in 0..12 {
        for len in [0, 1, 2, 50, usize::MAX] {
            let error = PipelineError::new("m", Span::new(offset, len));
            let rendered = error.render(text);
            assert!(rendered.starts_with("error: m\n"));
        }
    }
    let error = PipelineError::new("m", Span::new(usize::MAX, usize::MAX));
    assert_eq!(error.render(""), "error: m\n\n^");
}

#[test]
fn unknown_pass_without_close_candidate_only_lists() {
    let error = unknown_pass_error("frobnicate", Span::new(0, 10), ["cse", "canonicalize"]);
    assert_eq!(
        error.message,
        "'frobnicate' does not refer to a registered pass or pass pipeline"
    );
    assert_eq!(error.notes, ["valid passes: canonicalize, cse"]);
    let error = unknown_pass_error("x", Span::new(0, 1), []);
    assert_eq!(error.notes, ["no passes are registered"]);
}

#[test]
fn unknown_option_names_pass_and_lists_options_in_order() {
    let valid = ["tiles".to_string(), "precision".to_string()];
    let error = unknown_option_error("ipu-foo", "tile", Span::new(8, 4), &valid);
    assert_eq!(
        error.message,
        "pass 'ipu-foo' has no option 'tile'; did you mean 'tiles'? valid options: tiles, precision"
    );
    let error = unknown_option_error("ipu-foo", "zzzzzz", Span::new(8, 6), &valid);
    assert_eq!(
        error.message,
        "pass 'ipu-foo' has no option 'zzzzzz'; valid options: tiles, precision"
    );
    let error = unknown_option_error("cse", "x", Span::new(4, 1), &[]);
    assert_eq!(
        error.message,
        "pass 'cse' has no option 'x'; it takes no options"
    );
}

#[test]
fn suggestions_use_edit_distance() {
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    assert_eq!(edit_distance("ab", "ba"), 1);
    assert_eq!(edit_distance("", "abc"), 3);
    assert_eq!(edit_distance("\u{e9}t\u{e9}", "ete"), 2);
    let passes = ["cse", "canonicalize", "ipu-canonicalize", "symbol-dce"];
    assert_eq!(
        suggest("ipu-canonicalise", passes),
        Some("ipu-canonicalize")
    );
    assert_eq!(suggest("canonicalise", passes), Some("canonicalize"));
    assert_eq!(suggest("ces", passes), Some("cse"));
    assert_eq!(suggest("symbol_dce", passes), Some("symbol-dce"));
    assert_eq!(suggest("inline", passes), None);
    assert_eq!(suggest("cse", passes), None, "an exact name is not a typo");
    // Ties go to the alphabetically first candidate, whatever the order given.
    assert_eq!(suggest("ab", ["ac", "aa"]), Some("aa"));
    assert_eq!(suggest("ab", ["aa", "ac"]), Some("aa"));
}
