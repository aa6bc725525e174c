//! Seeded random pipelines round-trip; random and mutated text never panics.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::pipeline::{
    parse_pipeline, style_for_value, Element, PassOption, Pipeline, Spanned, ValueStyle,
    MAX_NESTING_DEPTH,
};

const NAME_BYTES: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789-_.";

fn random_name(rng: &mut ChaCha8Rng) -> String {
    let len = rng.random_range(1..9);
    (0..len)
        .map(|_| char::from(NAME_BYTES[rng.random_range(0..NAME_BYTES.len())]))
        .collect()
}

/// A value with balanced structure: lists, nested braces, parentheses, quoted segments.
fn structured_value(rng: &mut ChaCha8Rng, depth: usize) -> String {
    let pieces = rng.random_range(1..4);
    let mut value = String::new();
    for _ in 0..pieces {
        match rng.random_range(0..7) {
            0 | 1 => value.push_str(&random_name(rng)),
            2 => value.push(','),
            3 if depth < 3 => {
                value.push('{');
                value.push_str(&structured_value(rng, depth + 1));
                value.push(' ');
                value.push_str(&structured_value(rng, depth + 1));
                value.push('}');
            }
            4 if depth < 3 => {
                value.push('(');
                value.push_str(&structured_value(rng, depth + 1));
                value.push_str(", ");
                value.push_str(&structured_value(rng, depth + 1));
                value.push(')');
            }
            5 => value.push_str("\"q s,}\""),
            _ => value.push_str("=1"),
        }
    }
    value
}

const VALUE_CHARS: &[char] = &[
    'a', 'b', '1', ' ', ',', '{', '}', '(', ')', '[', ']', '=', '"', '\'', '\t', '\u{e9}', '-',
];

fn random_value(rng: &mut ChaCha8Rng) -> Option<PassOption> {
    let key = random_name(rng);
    if rng.random_range(0..8) == 0 {
        return Some(PassOption {
            key: Spanned::unspanned(key),
            value: Spanned::unspanned(String::new()),
            style: ValueStyle::Flag,
        });
    }
    let value = if rng.random_bool(0.5) {
        structured_value(rng, 0)
    } else {
        let len = rng.random_range(0..10);
        (0..len)
            .map(|_| VALUE_CHARS[rng.random_range(0..VALUE_CHARS.len())])
            .collect()
    };
    // Values needing quotes that hold both quote characters have no spelling.
    let representable = match style_for_value(&value) {
        ValueStyle::Quoted(quote) => !value.contains(quote),
        _ => true,
    };
    representable.then(|| PassOption::new(key, value))
}

fn random_elements(rng: &mut ChaCha8Rng, depth: usize) -> Vec<Element> {
    let count = rng.random_range(usize::from(depth == 0)..4);
    (0..count)
        .map(|_| {
            if depth < 4 && rng.random_range(0..4) == 0 {
                let anchor = if rng.random_bool(0.3) {
                    "any".to_string()
                } else {
                    random_name(rng)
                };
                Element::Nested {
                    anchor: Spanned::unspanned(anchor),
                    elements: random_elements(rng, depth + 1),
                    span: Default::default(),
                }
            } else {
                let options = (0..rng.random_range(0..4))
                    .filter_map(|_| random_value(rng))
                    .collect();
                Element::Pass {
                    name: Spanned::unspanned(random_name(rng)),
                    options,
                    span: Default::default(),
                }
            }
        })
        .collect()
}

fn random_pipeline(rng: &mut ChaCha8Rng) -> Pipeline {
    let mut elements = random_elements(rng, 0);
    let anchor = rng
        .random_bool(0.7)
        .then(|| Spanned::unspanned(random_name(rng)));
    // A bare list of one nested element reads back as an anchored pipeline.
    if anchor.is_none() && elements.len() == 1 && matches!(elements[0], Element::Nested { .. }) {
        elements.push(Element::Pass {
            name: Spanned::unspanned("cse".to_string()),
            options: Vec::new(),
            span: Default::default(),
        });
    }
    Pipeline { anchor, elements }
}

#[test]
fn random_pipelines_round_trip() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x1b0_2025);
    for _ in 0..3000 {
        let pipeline = random_pipeline(&mut rng);
        let printed = pipeline.to_string();
        let parsed = match parse_pipeline(&printed) {
            Ok(parsed) => parsed,
            Err(error) => panic!("{pipeline:?}\n{}", error.render(&printed)),
        };
        assert_eq!(parsed.without_spans(), pipeline, "printed as {printed}");
        assert_eq!(parsed.to_string(), printed);
    }
}

/// Checks the no-panic contract on one input, and round-trips whatever parses.
fn check_never_panics(text: &str) {
    match parse_pipeline(text) {
        Ok(pipeline) => {
            let printed = pipeline.to_string();
            let reparsed = parse_pipeline(&printed)
                .unwrap_or_else(|error| panic!("{text:?} -> {printed:?}: {error}"));
            assert_eq!(
                reparsed.without_spans(),
                pipeline.without_spans(),
                "{text:?}"
            );
        }
        Err(error) => {
            assert!(
                error.offset + error.len <= text.len(),
                "{text:?}: {error:?}"
            );
            assert!(text.is_char_boundary(error.offset), "{text:?}: {error:?}");
            let _ = error.render(text);
        }
    }
}

const FUZZ_CHARS: &[char] = &[
    'a',
    'b',
    'c',
    '.',
    '-',
    '_',
    '(',
    ')',
    '{',
    '}',
    '[',
    ']',
    ',',
    '=',
    '"',
    '\'',
    ' ',
    '\n',
    '\t',
    '\u{0}',
    '\u{e9}',
    '\u{1f600}',
    '\\',
];

#[test]
fn random_text_never_panics() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..20_000 {
        let len = rng.random_range(0..24);
        let text: String = (0..len)
            .map(|_| FUZZ_CHARS[rng.random_range(0..FUZZ_CHARS.len())])
            .collect();
        check_never_panics(&text);
    }
    for _ in 0..5_000 {
        let len = rng.random_range(0..32);
        let bytes: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        check_never_panics(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn mutated_pipelines_never_panic() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for _ in 0..3000 {
        let printed = random_pipeline(&mut rng).to_string();
        let mut chars: Vec<char> = printed.chars().collect();
        for _ in 0..rng.random_range(1..4) {
            let at = rng.random_range(0..=chars.len());
            let replacement = FUZZ_CHARS[rng.random_range(0..FUZZ_CHARS.len())];
            match rng.random_range(0..3) {
                0 => chars.insert(at, replacement),
                1 if at < chars.len() => {
                    chars.remove(at);
                }
                _ if at < chars.len() => chars[at] = replacement,
                _ => {}
            }
        }
        check_never_panics(&chars.into_iter().collect::<String>());
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let text = "a(".repeat(100_000);
    let error = parse_pipeline(&text).expect_err("too deep");
    assert_eq!(
        error.message,
        format!("pipeline nested deeper than {MAX_NESTING_DEPTH} levels")
    );
    assert_eq!(error.offset, 2 * MAX_NESTING_DEPTH + 1);
    let ok = format!(
        "{}cse{}",
        "a(".repeat(MAX_NESTING_DEPTH),
        ")".repeat(MAX_NESTING_DEPTH)
    );
    assert!(parse_pipeline(&ok).is_ok());
    let braces = format!("p{{k={}", "{".repeat(100_000));
    let error = parse_pipeline(&braces).expect_err("unclosed");
    assert_eq!(error.message, "unclosed '{' in value of option 'k'");
}
