//! The campaign's input generators: byte- and structure-aware mutations of real inputs, and
//! grammar-aware pipeline strings and attribute texts. Every generator is a function of its
//! random source only, so a case is reproduced by its seed.

use rand::seq::IndexedRandom;
use rand::Rng;

/// Numbers that break size arithmetic: zero, one, negatives, 32- and 64-bit edges, huge
/// floats and non-numbers.
pub const EXTREME_NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "-2147483648",
    "2147483647",
    "2147483648",
    "4294967296",
    "4611686018427387904",
    "18446744073709551615",
    "1.0e308",
    "-0.0",
    "nan",
    "0x7FC00000",
    "1000000000",
];

/// Bytes that matter to the IR grammar.
const STRUCTURAL_BYTES: &[u8] = b"{}<>()[]\"'%@#!:,=x-0\n\\\0";

/// One mutation of `input` (at least one change; `input` may be empty).
pub fn bytes(rng: &mut impl Rng, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..rng.random_range(1..=4) {
        mutate_once(rng, &mut out);
    }
    out
}

fn mutate_once(rng: &mut impl Rng, out: &mut Vec<u8>) {
    let len = out.len();
    let at = |rng: &mut dyn rand::RngCore| {
        if len == 0 {
            0
        } else {
            rng.random_range(0..len)
        }
    };
    match rng.random_range(0..9) {
        // Flip one bit.
        0 if len > 0 => {
            let i = at(rng);
            out[i] ^= 1 << rng.random_range(0..8);
        }
        // Insert a structural byte.
        1 => {
            let i = if len == 0 {
                0
            } else {
                rng.random_range(0..=len)
            };
            out.insert(i, *STRUCTURAL_BYTES.choose(rng).unwrap_or(&b'x'));
        }
        // Delete a range.
        2 if len > 0 => {
            let i = at(rng);
            let n = rng.random_range(1..=64.min(len - i));
            out.drain(i..i + n);
        }
        // Duplicate a range in place.
        3 if len > 0 => {
            let i = at(rng);
            let n = rng.random_range(1..=256.min(len - i));
            let piece: Vec<u8> = out[i..i + n].to_vec();
            let j = rng.random_range(0..=out.len());
            out.splice(j..j, piece);
        }
        // Replace a number with an extreme one.
        4 => replace_number(rng, out),
        // Swap two lines.
        5 => swap_lines(rng, out),
        // Truncate.
        6 if len > 0 => out.truncate(at(rng)),
        // Overwrite a byte with any value.
        7 if len > 0 => {
            let i = at(rng);
            out[i] = rng.random();
        }
        // Repeat a line many times (deep or long inputs).
        8 => repeat_line(rng, out),
        _ => out.push(*STRUCTURAL_BYTES.choose(rng).unwrap_or(&b'x')),
    }
}

/// Replaces a run of digits (if any) with one of [`EXTREME_NUMBERS`].
pub fn replace_number(rng: &mut impl Rng, out: &mut Vec<u8>) {
    let starts: Vec<usize> = (0..out.len())
        .filter(|&i| out[i].is_ascii_digit() && (i == 0 || !out[i - 1].is_ascii_alphanumeric()))
        .collect();
    let Some(&start) = starts.choose(rng) else {
        return;
    };
    let end = (start..out.len())
        .find(|&i| !out[i].is_ascii_digit() && out[i] != b'.')
        .unwrap_or(out.len());
    let number = EXTREME_NUMBERS.choose(rng).unwrap_or(&"0");
    out.splice(start..end, number.bytes());
}

fn line_ranges(out: &[u8]) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut start = 0;
    for (i, &b) in out.iter().enumerate() {
        if b == b'\n' {
            ranges.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < out.len() {
        ranges.push((start, out.len()));
    }
    ranges
}

fn swap_lines(rng: &mut impl Rng, out: &mut Vec<u8>) {
    let lines = line_ranges(out);
    if lines.len() < 2 {
        return;
    }
    let (a, b) = (
        rng.random_range(0..lines.len()),
        rng.random_range(0..lines.len()),
    );
    let (a, b) = (a.min(b), a.max(b));
    if a == b {
        return;
    }
    let mut swapped = Vec::with_capacity(out.len());
    for (i, &(s, e)) in lines.iter().enumerate() {
        let (s, e) = if i == a {
            lines[b]
        } else if i == b {
            lines[a]
        } else {
            (s, e)
        };
        swapped.extend_from_slice(&out[s..e]);
    }
    *out = swapped;
}

fn repeat_line(rng: &mut impl Rng, out: &mut Vec<u8>) {
    let lines = line_ranges(out);
    let Some(&(s, e)) = lines.choose(rng) else {
        return;
    };
    let line = out[s..e].to_vec();
    let times = [2usize, 50, 2000][rng.random_range(0..3)];
    let mut repeated = Vec::with_capacity(line.len() * times);
    for _ in 0..times {
        repeated.extend_from_slice(&line);
    }
    out.splice(s..e, repeated);
}

/// Pass names a pipeline may name: every registered one (ours and the upstream passes the
/// registry knows), and some that do not exist.
fn pass_names() -> Vec<&'static str> {
    let mut names = ipu_passes::registry::Registry::with_builtin().known_names();
    names.extend(["no-such-pass", ""]);
    names
}

const ANCHORS: &[&str] = &[
    "builtin.module",
    "func.func",
    "any",
    "ipu.repeat",
    "bogus.op",
    "",
];

const OPTIONS: &[&str] = &[
    "tiles",
    "precision",
    "beam-width",
    "candidates-per-op",
    "finalists",
    "memory-budget",
    "fp8-scale",
    "max-iterations",
    "active-tiles",
    "weight-memory",
    "constraints",
    "mappings",
    "target",
    "unknown-option",
];

const VALUES: &[&str] = &[
    "",
    "0",
    "1",
    "16",
    "1472",
    "-1",
    "4294967296",
    "f16",
    "fp8",
    "bf16",
    "c600",
    "bow",
    "true",
    "false",
    "1,2,3",
    "{",
    "}",
    "'",
    "\"x\"",
    "{\"ops\":[]}",
    "interleaved",
    "nan",
];

/// A pipeline string from the textual pipeline grammar, sometimes broken on purpose.
pub fn pipeline(rng: &mut impl Rng) -> String {
    let mut text = pipeline_part(rng, 0);
    if rng.random_bool(0.2) {
        let mut bytes = text.into_bytes();
        mutate_once(rng, &mut bytes);
        // A command-line argument cannot hold a NUL byte, and the kernel bounds its length.
        bytes.retain(|&b| b != 0);
        bytes.truncate(MAX_ARGUMENT_BYTES);
        text = String::from_utf8_lossy(&bytes).into_owned();
    }
    text
}

/// The longest pipeline string generated (the kernel's limit on one argument is 128 KiB).
pub const MAX_ARGUMENT_BYTES: usize = 32 * 1024;

fn pipeline_part(rng: &mut impl Rng, depth: u32) -> String {
    pipeline_from(rng, depth, &pass_names())
}

fn pipeline_from(rng: &mut impl Rng, depth: u32, passes: &[&str]) -> String {
    let anchor = ANCHORS.choose(rng).unwrap_or(&"builtin.module");
    let count = rng.random_range(0..4);
    let mut items = Vec::new();
    for _ in 0..count {
        if depth < 3 && rng.random_bool(0.25) {
            items.push(pipeline_from(rng, depth + 1, passes));
        } else {
            let mut pass = passes.choose(rng).unwrap_or(&"cse").to_string();
            if rng.random_bool(0.4) {
                let options: Vec<String> = (0..rng.random_range(1..3))
                    .map(|_| {
                        format!(
                            "{}={}",
                            OPTIONS.choose(rng).unwrap_or(&"tiles"),
                            VALUES.choose(rng).unwrap_or(&"1")
                        )
                    })
                    .collect();
                pass.push_str(&format!("{{{}}}", options.join(" ")));
            }
            items.push(pass);
        }
    }
    format!("{anchor}({})", items.join(","))
}

/// A small module carrying a random `#ipu.format` on an argument and a random `#ipu.plan`
/// on an op (the attribute codecs), sometimes mutated.
pub fn attribute_module(rng: &mut impl Rng) -> String {
    let number = |rng: &mut dyn rand::RngCore| -> String {
        if rng.random_bool(0.15) {
            EXTREME_NUMBERS.choose(rng).unwrap_or(&"0").to_string()
        } else {
            rng.random_range(0..64u32).to_string()
        }
    };
    let orders = [
        "row_major",
        "amp_left",
        "amp_right",
        "amp_output",
        "bogus",
        "",
    ];
    let classes = ["standard", "interleaved", "neither"];
    let format = format!(
        "#ipu.format<\"{}\", [{}, {}], [{}, {}], [{}, {}], \"{}\", {}>",
        orders.choose(rng).unwrap_or(&"row_major"),
        number(rng),
        number(rng),
        number(rng),
        number(rng),
        number(rng),
        number(rng),
        classes.choose(rng).unwrap_or(&"standard"),
        number(rng)
    );
    let kinds = [
        "pointwise_add",
        "pointwise_gelu",
        "rows",
        "rearrange",
        "gemm_output_stationary",
        "attention_flash",
        "x",
    ];
    let plan = format!(
        "#ipu.plan<\"{}\", {{grid = [{}, {}, {}], order = \"row_major\", precision = \"f16\", tiles = {} : i64}}>",
        kinds.choose(rng).unwrap_or(&"pointwise"),
        number(rng),
        number(rng),
        number(rng),
        number(rng)
    );
    let text = format!(
        "func.func @f(%x: tensor<16x32xf16, {format}>, %y: tensor<16x32xf16>) -> tensor<16x32xf16> {{\n  %r = \"ipu.add\"(%y, %y) {{plan = {plan}}} : (tensor<16x32xf16>, tensor<16x32xf16>) -> tensor<16x32xf16>\n  return %r : tensor<16x32xf16>\n}}\n"
    );
    if rng.random_bool(0.3) {
        String::from_utf8_lossy(&bytes(rng, text.as_bytes())).into_owned()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn generators_are_functions_of_their_seed() {
        let input = b"func.func @f(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {\n  return %x : tensor<4x8xf16>\n}\n";
        for seed in 0..50 {
            let mut a = ChaCha8Rng::seed_from_u64(seed);
            let mut b = ChaCha8Rng::seed_from_u64(seed);
            assert_eq!(bytes(&mut a, input), bytes(&mut b, input));
            let text = pipeline(&mut a);
            assert_eq!(text, pipeline(&mut b));
            assert!(!text.contains('\0') && text.len() <= MAX_ARGUMENT_BYTES);
            assert_eq!(attribute_module(&mut a), attribute_module(&mut b));
        }
    }

    #[test]
    fn mutations_change_their_input_and_handle_empty_ones() {
        let input = b"%v = \"ipu.add\"(%a, %b) : (tensor<16x32xf16>) -> tensor<16x32xf16>\n";
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let changed = (0..200)
            .filter(|_| bytes(&mut rng, input) != input.to_vec())
            .count();
        // A mutation may undo itself (a swap of equal lines, a flip flipped back), rarely.
        assert!(changed >= 190, "{changed} of 200 changed the input");
        for _ in 0..100 {
            let _ = bytes(&mut rng, b"");
        }
        let mut numbers = b"tensor<16x32xf16>".to_vec();
        replace_number(&mut rng, &mut numbers);
        let text = String::from_utf8(numbers).unwrap();
        assert!(
            EXTREME_NUMBERS.iter().any(|n| text.contains(n)),
            "{text} has no extreme number"
        );
    }

    #[test]
    fn pipelines_follow_the_grammar_when_unbroken() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut anchored = 0;
        for _ in 0..200 {
            let text = pipeline(&mut rng);
            if ANCHORS
                .iter()
                .any(|a| !a.is_empty() && text.starts_with(&format!("{a}(")))
            {
                anchored += 1;
            }
        }
        assert!(anchored > 100, "{anchored} of 200 anchored");
    }
}
