//! Valid pipelines: structure, spans and canonical printing.

use crate::pipeline::{parse_pipeline, Element, PassOption, Pipeline, Span, ValueStyle};

fn parse(text: &str) -> Pipeline {
    match parse_pipeline(text) {
        Ok(pipeline) => pipeline,
        Err(error) => panic!("{text:?} failed to parse:\n{}", error.render(text)),
    }
}

/// Each case: input, then its canonical printed form.
const VALID: &[(&str, &str)] = &[
    ("", ""),
    ("   ", ""),
    ("cse", "cse"),
    ("cse,canonicalize", "cse, canonicalize"),
    ("builtin.module()", "builtin.module()"),
    ("builtin.module(cse)", "builtin.module(cse)"),
    (
        "builtin.module(func.func(cse,canonicalize),ipu-canonicalize)",
        "builtin.module(func.func(cse, canonicalize), ipu-canonicalize)",
    ),
    (
        " builtin.module ( func.func ( cse , canonicalize ) ,\n\tipu-canonicalize ) ",
        "builtin.module(func.func(cse, canonicalize), ipu-canonicalize)",
    ),
    ("builtin.module(any(cse))", "builtin.module(any(cse))"),
    ("any(cse, any(canonicalize))", "any(cse, any(canonicalize))"),
    (
        "builtin.module(func.func(any(cse)),gpu.module(gpu.func(cse)))",
        "builtin.module(func.func(any(cse)), gpu.module(gpu.func(cse)))",
    ),
    (
        "func.func(cse),func.func(dce)",
        "func.func(cse), func.func(dce)",
    ),
    ("cse{}", "cse"),
    ("cse{ }", "cse"),
    ("cse {a=1}", "cse{a=1}"),
    (
        "canonicalize{max-iterations=10}",
        "canonicalize{max-iterations=10}",
    ),
    (
        "canonicalize{  max-iterations=10   region-simplify=normal top-down=true }",
        "canonicalize{max-iterations=10 region-simplify=normal top-down=true}",
    ),
    ("p{key=value key2=1,2,3}", "p{key=value key2=1,2,3}"),
    ("p{key3=\"quoted value\"}", "p{key3=\"quoted value\"}"),
    ("p{key3='single quoted'}", "p{key3='single quoted'}"),
    ("p{k=\"a, b}, (c\"}", "p{k=\"a, b}, (c\"}"),
    ("p{key4={nested braces}}", "p{key4={nested braces}}"),
    ("p{k={a {b c} d}}", "p{k={a {b c} d}}"),
    ("p{k={a=1 b={c=2}} j=3}", "p{k={a=1 b={c=2}} j=3}"),
    (
        "inline{op-pipelines=func.func(cse, canonicalize)}",
        "inline{op-pipelines=func.func(cse, canonicalize)}",
    ),
    ("p{k=[1, 2, 3]}", "p{k=[1, 2, 3]}"),
    ("p{k=\"a b\",c}", "p{k=\"a b\",c}"),
    ("p{k=x\"y z\"}", "p{k=x\"y z\"}"),
    ("p{k=}", "p{k=}"),
    ("p{k=\"\"}", "p{k=\"\"}"),
    ("p{flag}", "p{flag}"),
    ("p{flag other=1 last}", "p{flag other=1 last}"),
    ("p{k=a\u{e9}\u{1f600}}", "p{k=a\u{e9}\u{1f600}}"),
    (
        "builtin.module(ipu-compile{tiles=64 precision=fp8},symbol-dce)",
        "builtin.module(ipu-compile{tiles=64 precision=fp8}, symbol-dce)",
    ),
];

#[test]
fn valid_pipelines_parse_and_print_canonically() {
    for (input, canonical) in VALID {
        let pipeline = parse(input);
        assert_eq!(pipeline.to_string(), *canonical, "printing {input:?}");
        let reparsed = parse(canonical);
        assert_eq!(
            reparsed.without_spans(),
            pipeline.without_spans(),
            "round trip of {input:?}"
        );
        assert_eq!(reparsed.to_string(), *canonical, "printing is idempotent");
    }
}

#[test]
fn anchored_pipeline_has_anchor_and_spans() {
    let text = "builtin.module(func.func(cse, canonicalize), ipu-canonicalize)";
    let pipeline = parse(text);
    let anchor = pipeline.anchor.as_ref().expect("anchored");
    assert_eq!(anchor.value, "builtin.module");
    assert_eq!(anchor.span, Span::new(0, 14));
    assert_eq!(pipeline.elements.len(), 2);
    let Element::Nested {
        anchor,
        elements,
        span,
    } = &pipeline.elements[0]
    else {
        panic!("expected a nested element");
    };
    assert_eq!(anchor.value, "func.func");
    assert_eq!(
        &text[span.offset..span.end()],
        "func.func(cse, canonicalize)"
    );
    let names: Vec<&str> = elements.iter().map(|e| e.name().value.as_str()).collect();
    assert_eq!(names, ["cse", "canonicalize"]);
    let canonicalize = elements[1].name();
    assert_eq!(
        &text[canonicalize.span.offset..canonicalize.span.end()],
        "canonicalize"
    );
    let last = &pipeline.elements[1];
    assert_eq!(
        &text[last.span().offset..last.span().end()],
        "ipu-canonicalize"
    );
}

#[test]
fn bare_list_has_no_anchor() {
    let pipeline = parse("cse, func.func(canonicalize)");
    assert!(pipeline.anchor.is_none());
    assert_eq!(pipeline.elements.len(), 2);
    assert!(parse("").is_empty());
}

#[test]
fn any_is_an_op_agnostic_nesting() {
    let pipeline = parse("builtin.module(any(cse))");
    assert!(pipeline.elements[0].is_any());
    assert!(!parse("builtin.module(func.func(cse))").elements[0].is_any());
}

fn options_of(pipeline: &Pipeline) -> &[PassOption] {
    match &pipeline.elements[0] {
        Element::Pass { options, .. } => options,
        Element::Nested { .. } => panic!("expected a pass"),
    }
}

#[test]
fn option_values_keep_their_text_and_style() {
    let text = r#"p{key=value key2=1,2,3 key3="quoted value" key4={nested braces} flag k5='x y'}"#;
    let pipeline = parse(text);
    let options = options_of(&pipeline);
    let seen: Vec<(&str, &str, ValueStyle)> = options
        .iter()
        .map(|o| (o.key.value.as_str(), o.value.value.as_str(), o.style))
        .collect();
    assert_eq!(
        seen,
        [
            ("key", "value", ValueStyle::Plain),
            ("key2", "1,2,3", ValueStyle::Plain),
            ("key3", "quoted value", ValueStyle::Quoted('"')),
            ("key4", "{nested braces}", ValueStyle::Plain),
            ("flag", "", ValueStyle::Flag),
            ("k5", "x y", ValueStyle::Quoted('\'')),
        ]
    );
    assert!(options[2].is_quoted());
    // Value spans cover the written value, quotes included.
    let span = options[2].value.span;
    assert_eq!(&text[span.offset..span.end()], "\"quoted value\"");
    let span = options[3].value.span;
    assert_eq!(&text[span.offset..span.end()], "{nested braces}");
    let key = &options[1].key;
    assert_eq!(&text[key.span.offset..key.span.end()], "key2");
    // A flag's value span is empty, just after the key; errors blame the key instead.
    assert_eq!(options[4].value.span.len, 0);
    assert_eq!(options[4].value_blame_span(), options[4].key.span);
}

#[test]
fn pass_element_span_covers_options() {
    let text = "builtin.module(cse{a=1 b=\"x y\"})";
    let pipeline = parse(text);
    let span = pipeline.elements[0].span();
    assert_eq!(&text[span.offset..span.end()], "cse{a=1 b=\"x y\"}");
}

#[test]
fn programmatic_options_choose_a_printable_style() {
    let cases = [
        ("plain", "k=plain"),
        ("1,2,3", "k=1,2,3"),
        ("a b", "k=\"a b\""),
        ("say \"hi\" now", "k='say \"hi\" now'"),
        ("{a b}", "k={a b}"),
        ("a}b", "k=\"a}b\""),
        ("\"q\"", "k='\"q\"'"),
        ("", "k="),
    ];
    for (value, printed) in cases {
        let option = PassOption::new("k", value);
        assert_eq!(option.to_string(), printed, "value {value:?}");
        let text = format!("p{{{printed}}}");
        let pipeline = parse(&text);
        assert_eq!(options_of(&pipeline)[0].value.value, value);
    }
}
