use super::*;
use crate::split_input::{split_input, DEFAULT_SPLIT_MARKER};

const FILE: &str = "t.mlir";

fn error(line: u32, message: &str) -> Diagnostic {
    Diagnostic::new(Severity::Error, line, 1, message)
}

/// Verifies the whole `text` as one chunk and returns the rendered report ("" when it passes).
fn report(text: &str, diagnostics: &[Diagnostic]) -> String {
    report_mode(text, diagnostics, VerifyMode::All)
}

fn report_mode(text: &str, diagnostics: &[Diagnostic], mode: VerifyMode) -> String {
    match verify_with_mode(&Chunk::whole(text), FILE, diagnostics, mode) {
        Ok(()) => String::new(),
        Err(failure) => failure.to_string(),
    }
}

fn kinds(text: &str, diagnostics: &[Diagnostic]) -> Vec<(ProblemKind, u32)> {
    match verify(&Chunk::whole(text), FILE, diagnostics) {
        Ok(()) => Vec::new(),
        Err(failure) => failure
            .problems
            .iter()
            .map(|problem| match problem.location {
                ProblemLocation::File { line, .. } => (problem.kind, line),
                ProblemLocation::Unknown => (problem.kind, 0),
            })
            .collect(),
    }
}

#[test]
fn no_expectations_and_no_diagnostics_passes() {
    assert_eq!(report("module {}\n", &[]), "");
}

#[test]
fn expectation_without_designator_applies_to_its_own_line() {
    let text = "%0 = foo // expected-error {{bad foo}}\n";
    assert_eq!(report(text, &[error(1, "this is a bad foo here")]), "");
    assert_eq!(
        kinds(text, &[error(2, "bad foo")]),
        vec![
            (ProblemKind::UnexpectedDiagnostic, 2),
            (ProblemKind::NotProduced, 1)
        ]
    );
}

#[test]
fn plus_and_minus_offsets() {
    let text =
        "// expected-error@+2 {{two below}}\n\nop\nop2\n// expected-warning@-1 {{one above}}\n";
    let diagnostics = [
        error(3, "two below"),
        Diagnostic::new(Severity::Warning, 4, 7, "one above"),
    ];
    assert_eq!(report(text, &diagnostics), "");
    // @+0 is the line itself.
    assert_eq!(
        report("x // expected-error@+0 {{x}}\n", &[error(1, "x")]),
        ""
    );
}

#[test]
fn above_skips_expectation_lines_and_attaches_to_the_closest_code_line() {
    let text = "\
op1
// expected-error@above {{first}}
// expected-note@above {{second}}
";
    let diagnostics = [
        error(1, "first"),
        Diagnostic::new(Severity::Note, 1, 1, "second"),
    ];
    assert_eq!(report(text, &diagnostics), "");
}

#[test]
fn below_skips_expectation_lines_and_attaches_to_the_next_non_expectation_line() {
    let text = "\
// expected-error@below {{a}}
// expected-error@below {{b}}
// a comment is a non-expectation line too
op
";
    assert_eq!(report(text, &[error(3, "a"), error(3, "b")]), "");
    assert_eq!(
        kinds(text, &[error(4, "a"), error(3, "b")]),
        vec![
            (ProblemKind::UnexpectedDiagnostic, 4),
            (ProblemKind::NotProduced, 1)
        ]
    );
}

#[test]
fn unknown_matches_only_diagnostics_without_location() {
    let text = "// expected-error@unknown {{nowhere}}\nop\n";
    assert_eq!(
        report(
            text,
            &[Diagnostic::unknown(Severity::Error, "from nowhere")]
        ),
        ""
    );
    assert_eq!(
        report(text, &[error(1, "nowhere")]),
        "t.mlir:1:1: error: unexpected error: nowhere\n\
         // expected-error@unknown {{nowhere}}\n\
         ^\n\
         <unknown>:0: error: expected error \"nowhere\" was not produced"
    );
    assert_eq!(
        report("op\n", &[Diagnostic::unknown(Severity::Remark, "lost")]),
        "<unknown>:0: error: unexpected remark: lost"
    );
}

#[test]
fn regex_expectations_mix_literal_text_and_regex_parts() {
    let text = "op // expected-error-re {{'ipu.add' op ({{[0-9]+}}) lhs {{.*}} [x]}}\n";
    assert_eq!(
        report(text, &[error(1, "'ipu.add' op (42) lhs tensor<4xf32> [x]")]),
        ""
    );
    // Parentheses and brackets outside {{ }} are literal.
    assert_eq!(
        kinds(text, &[error(1, "'ipu.add' op 42 lhs a [x]")]),
        vec![
            (ProblemKind::UnexpectedDiagnostic, 1),
            (ProblemKind::NotProduced, 1)
        ]
    );
    // The regex searches anywhere in the message.
    assert_eq!(
        report(
            "op // expected-remark-re {{{{b+}}}}\n",
            &[Diagnostic::new(Severity::Remark, 1, 1, "abbbc")]
        ),
        ""
    );
    // The pieces are LLVM's POSIX extended regexes, as in mlir-opt: an empty piece is an
    // invalid regex (mlir-opt-22 says the same), character classes are POSIX.
    assert!(
        report("op // expected-error-re {{a{{}}b}}\n", &[error(1, "xaby")])
            .starts_with("t.mlir:1:7: error: invalid regex: empty (sub)expression\n")
    );
    assert_eq!(
        report(
            "op // expected-error-re {{x{{[[:digit:]]+}}y}}\n",
            &[error(1, "x42y")]
        ),
        ""
    );
}

#[test]
fn bad_regexes_are_reported_at_their_line() {
    let text = "op\n// expected-error-re@above {{a {{[}}}}\n";
    let failure = report(text, &[error(1, "a [")]);
    assert!(
        failure.starts_with("t.mlir:2:4: error: invalid regex: brackets ([ ]) not balanced\n"),
        "{failure}"
    );
    assert!(failure.contains("\n   ^~~~~~~\n"), "{failure}");
    // The diagnostic it was meant for is then unexpected.
    assert!(failure.contains("t.mlir:1:1: error: unexpected error: a ["));

    let text = "op // expected-error-re {{a {{[0-9]+}}\n";
    assert_eq!(
        kinds(text, &[]),
        vec![(ProblemKind::MalformedExpectation, 1)]
    );
    assert!(report(text, &[]).contains("error: found start of regex with no end '}}'"));
}

#[test]
fn one_expectation_matches_every_identical_diagnostic_on_its_line() {
    let text = "op op // expected-error {{needs a parent}}\n";
    assert_eq!(
        report(
            text,
            &[error(1, "needs a parent"), error(1, "needs a parent")]
        ),
        ""
    );
}

#[test]
fn count_suffixes_are_rejected_because_mlir_has_none() {
    let text = "op // expected-error 2 {{twice}}\n";
    let failure = report(text, &[error(1, "twice"), error(1, "twice")]);
    assert!(
        failure.starts_with(
            "t.mlir:1:7: error: 'expected-error' does not take a count: one expectation matches"
        ),
        "{failure}"
    );
}

#[test]
fn notes_are_expected_and_reported_like_any_severity() {
    let text = "\
// expected-error@+2 {{bad op}}
// expected-note@+1 {{see here}}
op
";
    let diagnostics = [
        error(3, "bad op"),
        Diagnostic::new(Severity::Note, 3, 1, "see here"),
    ];
    assert_eq!(report(text, &diagnostics), "");
    let failure = report(
        "op\n",
        &[
            error(1, "bad op"),
            Diagnostic::new(Severity::Note, 1, 1, "see here"),
        ],
    );
    assert_eq!(
        failure,
        "t.mlir:1:1: error: unexpected error: bad op\nop\n^\n\
         t.mlir:1:1: error: unexpected note: see here\nop\n^"
    );
}

#[test]
fn unexpected_diagnostics_are_reported_at_their_location_with_a_caret() {
    let text = "func.func @f() {\n  %0 = foo.bar\n}\n";
    let diagnostic = Diagnostic::new(Severity::Warning, 2, 8, "custom op 'foo.bar' is unknown");
    assert_eq!(
        report(text, &[diagnostic]),
        "t.mlir:2:8: error: unexpected warning: custom op 'foo.bar' is unknown\n  %0 = foo.bar\n       ^"
    );
    // A location in another file has no snippet.
    let elsewhere = Diagnostic::new(Severity::Error, 7, 3, "in other file").in_file("other.mlir");
    assert_eq!(
        report(text, &[elsewhere]),
        "other.mlir:7:3: error: unexpected error: in other file"
    );
    // ... and an expectation on that line of *this* file does not match it.
    assert_eq!(
        kinds(
            "x // expected-error {{in other file}}\n",
            &[Diagnostic::new(Severity::Error, 1, 3, "in other file").in_file("other.mlir")]
        ),
        vec![
            (ProblemKind::UnexpectedDiagnostic, 1),
            (ProblemKind::NotProduced, 1)
        ]
    );
    // Naming the input file explicitly is the same as naming none.
    assert_eq!(
        report(
            "x // expected-error {{here}}\n",
            &[Diagnostic::new(Severity::Error, 1, 3, "here").in_file(FILE)]
        ),
        ""
    );
}

#[test]
fn missing_diagnostics_are_reported_at_the_expectation_with_the_text_underlined() {
    let text = "  // expected-error@+1 {{nope}}\nop\n";
    assert_eq!(
        report(text, &[]),
        "t.mlir:1:6: error: expected error \"nope\" was not produced\n  // expected-error@+1 {{nope}}\n     ^~~~"
    );
    let text = "op // expected-warning-re {{a{{.}}}}\n";
    assert_eq!(
        report(text, &[]),
        "t.mlir:1:7: error: expected warning \"a{{.}}\" was not produced\nop // expected-warning-re {{a{{.}}}}\n      ^~~~~~"
    );
}

#[test]
fn wrong_severity_is_a_near_miss() {
    let text = "// expected-warning@+1 {{parent op}}\nop\n";
    assert_eq!(
        report(text, &[error(2, "expects parent op")]),
        "t.mlir:1:4: error: 'error' diagnostic emitted when expecting a 'warning'\n\
         // expected-warning@+1 {{parent op}}\n   ^\n\
         t.mlir:1:4: error: expected warning \"parent op\" was not produced\n\
         // expected-warning@+1 {{parent op}}\n   ^~~~~~~~~"
    );
}

#[test]
fn column_is_not_compared() {
    let text = "op // expected-error {{x}}\n";
    assert_eq!(
        report(text, &[Diagnostic::new(Severity::Error, 1, 99, "x")]),
        ""
    );
}

#[test]
fn only_expected_mode_ignores_other_diagnostics() {
    let text = "op // expected-error {{wanted}}\n";
    let diagnostics = [
        error(1, "wanted"),
        error(1, "something else"),
        Diagnostic::unknown(Severity::Warning, "stray"),
    ];
    assert_eq!(
        report_mode(text, &diagnostics, VerifyMode::OnlyExpected),
        ""
    );
    assert_eq!(
        kinds(text, &diagnostics),
        vec![
            (ProblemKind::UnexpectedDiagnostic, 1),
            (ProblemKind::UnexpectedDiagnostic, 0)
        ]
    );
    assert_eq!(
        report_mode(text, &[], VerifyMode::OnlyExpected),
        "t.mlir:1:7: error: expected error \"wanted\" was not produced\n\
         op // expected-error {{wanted}}\n      ^~~~~~"
    );
    assert_eq!("".parse(), Ok(VerifyMode::All));
    assert_eq!("all".parse(), Ok(VerifyMode::All));
    assert_eq!("only-expected".parse(), Ok(VerifyMode::OnlyExpected));
    assert!("some".parse::<VerifyMode>().is_err());
}

#[test]
fn malformed_expectations_are_errors_at_their_line() {
    let cases: &[(&str, &str)] = &[
        (
            "// expected-error@+1 nobraces\nop\n",
            "t.mlir:1:4: error: 'expected-error' must be followed by the expected message in '{{...}}'",
        ),
        (
            "// expected-error {{no end\n",
            "t.mlir:1:4: error: the message of 'expected-error' must end with '}}' at the end of the line",
        ),
        (
            "// expected-error {{text}} trailing\n",
            "t.mlir:1:4: error: the message of 'expected-error' must end with '}}' at the end of the line",
        ),
        (
            "op\n// expected-note@sideways {{x}}\n",
            "t.mlir:2:4: error: 'expected-note' has an invalid designator '@sideways'; expected @+N, @-N, @above, @below or @unknown",
        ),
        (
            "// expected-remark@+ {{x}}\nop\n",
            "t.mlir:1:4: error: 'expected-remark' has an invalid designator '@+'",
        ),
        (
            "// expected-error\nop\n",
            "t.mlir:1:4: error: 'expected-error' must be followed by the expected message",
        ),
        (
            "op\n// expected-error@+5 {{x}}\n",
            "t.mlir:2:4: error: 'expected-error@+5' refers to line 7, outside the checked input (lines 1-2)",
        ),
        (
            "op\n// expected-warning-re@-2 {{x}}\n",
            "t.mlir:2:4: error: 'expected-warning-re@-2' refers to line 0, outside the checked input (lines 1-2)",
        ),
        (
            "// expected-error@+99999999999999999999 {{x}}\n",
            "t.mlir:1:4: error: 'expected-error@+4294967295' refers to line 4294967296, outside",
        ),
        (
            "// expected-error@above {{x}}\nop\n",
            "t.mlir:1:4: error: 'expected-error@above' has no line above it to apply to",
        ),
        (
            "op\n// expected-error@below {{x}}\n",
            "t.mlir:2:4: error: 'expected-error@below' has no line below it to apply to",
        ),
    ];
    for (text, expected_start) in cases {
        let failure = report(text, &[]);
        assert!(
            failure.starts_with(expected_start),
            "for {text:?}:\n{failure}\nshould start with\n{expected_start}"
        );
        assert!(
            kinds(text, &[])
                .iter()
                .all(|(kind, _)| *kind == ProblemKind::MalformedExpectation),
            "{text:?}"
        );
    }
}

#[test]
fn prose_and_code_mentioning_expected_are_not_expectations() {
    let text = concat!(
        "// This file checks that expected-error works; expected-errors are fine.\n",
        "// expected-error-prone code follows, and expected-remarkable things.\n",
        "// CHECK: error: 'expected-error@+9' refers to line 12; `expected-note@below` has no line\n",
        "\"test.op\"() {msg = \"expected-error {{\"} : () -> ()\n",
    );
    assert_eq!(report(text, &[]), "");
}

#[test]
fn well_formed_expectation_wins_over_an_earlier_malformed_one_on_the_line() {
    let text = "op // expected-error@bad, expected-error {{real}}\n";
    assert_eq!(report(text, &[error(1, "real")]), "");
}

#[test]
fn problems_are_ordered_malformed_then_diagnostics_then_missing() {
    let text = "\
// expected-error@+1 {{missing}}
op
// expected-error@sideways {{bad}}
// expected-error@unknown {{lost}}
";
    assert_eq!(
        kinds(text, &[error(2, "surprise")]),
        vec![
            (ProblemKind::MalformedExpectation, 3),
            (ProblemKind::UnexpectedDiagnostic, 2),
            (ProblemKind::NotProduced, 1),
            (ProblemKind::NotProduced, 0),
        ]
    );
}

#[test]
fn split_chunks_use_original_line_numbers() {
    let buffer = "\
op0
// -----
// expected-error@+1 {{in second}}
op1
// -----
op2 // expected-error@-3 {{points into the previous chunk}}
// expected-error@+1 {{never}}
op3
";
    let chunks = split_input(buffer, DEFAULT_SPLIT_MARKER);
    assert_eq!(chunks.len(), 3);
    assert!(verify(&chunks[0], FILE, &[]).is_ok());
    assert!(verify(&chunks[1], FILE, &[error(4, "in second")]).is_ok());
    // Diagnostic lines are original-file lines: line 2 of the chunk is not line 2 of the file.
    assert!(verify(&chunks[1], FILE, &[error(2, "in second")]).is_err());
    let failure = verify(&chunks[2], FILE, &[error(6, "surprise")])
        .err()
        .map(|failure| failure.to_string())
        .unwrap_or_default();
    assert_eq!(
        failure,
        "t.mlir:6:8: error: 'expected-error@-3' refers to line 3, outside the checked input (lines 5-8)\n\
         op2 // expected-error@-3 {{points into the previous chunk}}\n       ^\n\
         t.mlir:6:1: error: unexpected error: surprise\n\
         op2 // expected-error@-3 {{points into the previous chunk}}\n^\n\
         t.mlir:7:4: error: expected error \"never\" was not produced\n\
         // expected-error@+1 {{never}}\n   ^~~~~"
    );
}

#[test]
fn unexpected_diagnostic_outside_the_chunk_has_no_snippet() {
    let buffer = "a\n// -----\nb\n";
    let chunks = split_input(buffer, DEFAULT_SPLIT_MARKER);
    let failure = verify(&chunks[1], FILE, &[error(1, "stray")])
        .err()
        .map(|failure| failure.to_string())
        .unwrap_or_default();
    assert_eq!(failure, "t.mlir:1:1: error: unexpected error: stray");
}

#[test]
fn crlf_lines_and_tabs() {
    let text = "\top // expected-error {{x}}\r\n";
    assert_eq!(report(text, &[error(1, "x")]), "");
    assert_eq!(
        report(text, &[]),
        "t.mlir:1:8: error: expected error \"x\" was not produced\n\top // expected-error {{x}}\n\t      ^"
    );
}

#[test]
fn arbitrary_bytes_never_panic() {
    let pieces = [
        "expected-",
        "error",
        "-re",
        "@",
        "+",
        "-",
        "above",
        "below",
        "unknown",
        "{{",
        "}}",
        "{",
        "}",
        "9",
        " ",
        "\n",
        "//",
        "é",
        "\t",
        "\r",
        "(",
        "[",
    ];
    // A deterministic walk over combinations of the pieces.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..2000 {
        let mut text = String::new();
        for _ in 0..12 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            text.push_str(pieces[(state >> 33) as usize % pieces.len()]);
        }
        let chunks = split_input(&text, DEFAULT_SPLIT_MARKER);
        for chunk in &chunks {
            let diagnostics = [
                error(1, "x"),
                Diagnostic::unknown(Severity::Note, "y"),
                Diagnostic::new(Severity::Warning, u32::MAX, u32::MAX, ""),
                Diagnostic::new(Severity::Remark, 0, 0, "z"),
            ];
            let _ = verify(chunk, FILE, &diagnostics).map_err(|failure| failure.to_string());
        }
    }
}

#[test]
fn combined_chunk_results_list_missing_expectations_last() {
    let buffer = "\
// expected-error@unknown {{lost}}
// expected-error@+1 {{first missing}}
op
// -----
op // expected-warning {{wrong kind}}
// -----
op
";
    let chunks = split_input(buffer, DEFAULT_SPLIT_MARKER);
    let diagnostics = [
        vec![],
        vec![error(5, "wrong kind")],
        vec![error(7, "surprise")],
    ];
    let results = chunks
        .iter()
        .zip(&diagnostics)
        .map(|(chunk, diagnostics)| verify(chunk, FILE, diagnostics));
    let order: Vec<(ProblemKind, u32)> = combine_chunk_results(results)
        .err()
        .map(|failure| failure.problems)
        .unwrap_or_default()
        .iter()
        .map(|problem| match problem.location {
            ProblemLocation::File { line, .. } => (problem.kind, line),
            ProblemLocation::Unknown => (problem.kind, 0),
        })
        .collect();
    assert_eq!(
        order,
        vec![
            (ProblemKind::WrongSeverity, 5),
            (ProblemKind::UnexpectedDiagnostic, 7),
            (ProblemKind::NotProduced, 2),
            (ProblemKind::NotProduced, 5),
            (ProblemKind::NotProduced, 0),
        ]
    );
    assert_eq!(combine_chunk_results([Ok(()), Ok(())]), Ok(()));
}
