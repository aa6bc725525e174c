//! Typed options: parsing, printing, errors and round trips for every supported type.

use crate::pipeline::{parse_pipeline, Element, OptionError, OptionInfo, PassOptions};

crate::option_enum! {
    /// Storage precision.
    pub enum Precision {
        Fp32 = "fp32",
        Fp16 = "fp16",
        Fp8 = "fp8",
    }
}

/// A type outside the macros that already has `FromStr` and `Display`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TileId(u16);

impl std::str::FromStr for TileId {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let digits = text.strip_prefix('t').ok_or("tile ids look like t17")?;
        digits
            .parse()
            .map(TileId)
            .map_err(|_| "bad tile number".to_string())
    }
}

impl std::fmt::Display for TileId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "t{}", self.0)
    }
}

crate::impl_option_value!(TileId, "tile id");

crate::pass_options! {
    /// Options of a test pass covering every supported type.
    pub struct AllOptions for "ipu-test" {
        /// Turn the pass on.
        enabled: bool = false,
        /// Upper bound on iterations;
        /// more lines join the help.
        max_iterations: u32 = 10,
        offset: i64 = -3,
        small: u8 = 7,
        scale: f64 = 0.5,
        ratio: f32 = 1.25,
        label: String = "default label".to_string(),
        precision: Precision = Precision::Fp16,
        tile: TileId = TileId(3),
        tiles: Vec<u32> = vec![1, 2, 3],
        names: Vec<String> = Vec::new(),
        seed: Option<u64> = None,
        fallback: Option<Precision> = Some(Precision::Fp32),
    }
}

crate::pass_options! {
    /// A pass without options.
    pub struct NoOptions for "ipu-nothing" {}
}

const DEFAULTS_PRINTED: &str = "{enabled=false max-iterations=10 offset=-3 small=7 scale=0.5 \
    ratio=1.25 label=\"default label\" precision=fp16 tile=t3 tiles=1,2,3 names= seed= \
    fallback=fp32}";

fn parse(text: &str) -> AllOptions {
    match AllOptions::parse(text) {
        Ok(options) => options,
        Err(error) => panic!("{text:?}:\n{}", error.render(text)),
    }
}

fn parse_error(text: &str) -> String {
    match AllOptions::parse(text) {
        Ok(options) => panic!("{text:?} parsed as {options:?}"),
        Err(error) => error.message,
    }
}

#[test]
fn defaults_print_every_option() {
    assert_eq!(AllOptions::default().print(), DEFAULTS_PRINTED);
    assert_eq!(parse(DEFAULTS_PRINTED), AllOptions::default());
    assert_eq!(parse("{}"), AllOptions::default());
    assert_eq!(parse(""), AllOptions::default());
    assert_eq!(
        AllOptions::default().print_pass(),
        format!("ipu-test{DEFAULTS_PRINTED}")
    );
}

#[test]
fn describe_lists_types_defaults_and_help() {
    let described = AllOptions::describe();
    assert_eq!(described.len(), 13);
    assert_eq!(
        described[1],
        OptionInfo {
            name: "max-iterations".to_string(),
            type_name: "u32".to_string(),
            default: "10".to_string(),
            help: "Upper bound on iterations; more lines join the help.".to_string(),
        }
    );
    let types: Vec<(&str, &str, &str)> = described
        .iter()
        .map(|info| {
            (
                info.name.as_str(),
                info.type_name.as_str(),
                info.default.as_str(),
            )
        })
        .collect();
    assert_eq!(
        types,
        [
            ("enabled", "bool", "false"),
            ("max-iterations", "u32", "10"),
            ("offset", "i64", "-3"),
            ("small", "u8", "7"),
            ("scale", "f64", "0.5"),
            ("ratio", "f32", "1.25"),
            ("label", "string", "\"default label\""),
            ("precision", "one of fp32|fp16|fp8", "fp16"),
            ("tile", "tile id", "t3"),
            ("tiles", "comma-separated list of u32", "1,2,3"),
            ("names", "comma-separated list of string", ""),
            ("seed", "optional u64", ""),
            ("fallback", "optional one of fp32|fp16|fp8", "fp32"),
        ]
    );
    assert_eq!(described[10].help, "");
    assert_eq!(AllOptions::pass_name(), "ipu-test");
}

#[test]
fn values_of_every_type_parse() {
    let options = parse(concat!(
        "{enabled=1 max-iterations=4294967295 offset=-9223372036854775808 small=255 ",
        "scale=-1e-3 ratio=3 label='a \"b\" c' precision=fp8 tile=t1471 tiles=4 ",
        "names=\"x y\",'p,q',{r,s} seed=42 fallback=}"
    ));
    assert_eq!(
        options,
        AllOptions {
            enabled: true,
            max_iterations: u32::MAX,
            offset: i64::MIN,
            small: 255,
            scale: -0.001,
            ratio: 3.0,
            label: "a \"b\" c".to_string(),
            precision: Precision::Fp8,
            tile: TileId(1471),
            tiles: vec![4],
            names: vec!["x y".to_string(), "p,q".to_string(), "{r,s}".to_string()],
            seed: Some(42),
            fallback: None,
        }
    );
}

#[test]
fn bool_accepts_true_false_one_zero_and_flag() {
    for (text, expected) in [
        ("enabled=true", true),
        ("enabled=1", true),
        ("enabled", true),
        ("enabled=false", false),
        ("enabled=0", false),
    ] {
        assert_eq!(parse(text).enabled, expected, "{text}");
    }
    assert_eq!(
        parse_error("enabled=yes"),
        "invalid value 'yes' for option 'enabled' of pass 'ipu-test': expected bool \
         (use true, false, 1 or 0)"
    );
}

#[test]
fn value_errors_name_pass_option_value_and_type() {
    let cases = [
        (
            "max-iterations=-1",
            "invalid value '-1' for option 'max-iterations' of pass 'ipu-test': expected u32 \
             (invalid digit found in string)",
        ),
        (
            "small=300",
            "invalid value '300' for option 'small' of pass 'ipu-test': expected u8 \
             (number too large to fit in target type)",
        ),
        (
            "max-iterations",
            "invalid value '' for option 'max-iterations' of pass 'ipu-test': expected u32 \
             (cannot parse integer from empty string)",
        ),
        (
            "scale=fast",
            "invalid value 'fast' for option 'scale' of pass 'ipu-test': expected f64 \
             (invalid float literal)",
        ),
        (
            "precision=fp61",
            "invalid value 'fp61' for option 'precision' of pass 'ipu-test': expected one of \
             fp32|fp16|fp8 (did you mean 'fp16'?)",
        ),
        (
            "precision=bf16x",
            "invalid value 'bf16x' for option 'precision' of pass 'ipu-test': expected one of \
             fp32|fp16|fp8 ('bf16x' is not one of fp32, fp16, fp8)",
        ),
        (
            "tile=17",
            "invalid value '17' for option 'tile' of pass 'ipu-test': expected tile id \
             (tile ids look like t17)",
        ),
        (
            "tiles=1,x,3",
            "invalid value '1,x,3' for option 'tiles' of pass 'ipu-test': expected \
             comma-separated list of u32 (element 2 'x': invalid digit found in string)",
        ),
        (
            "seed=-5",
            "invalid value '-5' for option 'seed' of pass 'ipu-test': expected optional u64 \
             (invalid digit found in string)",
        ),
    ];
    for (text, message) in cases {
        assert_eq!(parse_error(text), message, "{text}");
    }
}

#[test]
fn set_reports_list_structure_errors() {
    // The pipeline lexer refuses unbalanced text first; `set` called directly must too.
    let mut options = AllOptions::default();
    let error = options.set("tiles", "1,{2").expect_err("unbalanced");
    assert_eq!(
        error.to_string(),
        concat!(
            "invalid value '1,{2' for option 'tiles' of pass 'ipu-test': expected ",
            "comma-separated list of u32 (missing '}' in list)"
        )
    );
    let error = options.set("names", "a,'b").expect_err("unterminated");
    assert_eq!(
        error.to_string(),
        concat!(
            "invalid value 'a,'b' for option 'names' of pass 'ipu-test': expected ",
            "comma-separated list of string (unterminated ' in list element)"
        )
    );
}

#[test]
fn unknown_and_repeated_keys() {
    assert_eq!(
        parse_error("tile=t1 tilez=1"),
        "pass 'ipu-test' has no option 'tilez'; did you mean 'tile'? valid options: enabled, \
         max-iterations, offset, small, scale, ratio, label, precision, tile, tiles, names, \
         seed, fallback"
    );
    assert_eq!(
        parse_error("max_iterations=3"),
        "pass 'ipu-test' has no option 'max_iterations'; did you mean 'max-iterations'? valid \
         options: enabled, max-iterations, offset, small, scale, ratio, label, precision, tile, \
         tiles, names, seed, fallback"
    );
    assert_eq!(
        parse_error("small=1 small=2"),
        "option 'small' of pass 'ipu-test' is given more than once"
    );
    assert_eq!(
        NoOptions::parse("{x=1}").map_err(|e| e.message),
        Err("pass 'ipu-nothing' has no option 'x'; it takes no options".to_string())
    );
    assert_eq!(NoOptions::default().print(), "{}");
    assert!(NoOptions::describe().is_empty());
    let mut options = AllOptions::default();
    assert_eq!(
        options.set("nope", "1"),
        Err(OptionError::UnknownOption {
            pass: "ipu-test".to_string(),
            key: "nope".to_string(),
            valid: AllOptions::option_names(),
        })
    );
}

#[test]
fn errors_in_a_pipeline_point_at_the_key_or_value() {
    let text = "builtin.module(ipu-test{small=1 tiles=1,x,3}, ipu-test{tilez=2}, \
                ipu-test{seed=1 seed=2}, ipu-test{small})";
    let pipeline = parse_pipeline(text).expect("pipeline parses");
    let blamed: Vec<String> = pipeline
        .elements
        .iter()
        .map(|element| {
            let Element::Pass { options, .. } = element else {
                panic!("expected passes");
            };
            let error = AllOptions::from_pass_options(options).expect_err("bad options");
            text[error.offset..error.offset + error.len].to_string()
        })
        .collect();
    assert_eq!(blamed, ["1,x,3", "tilez", "seed", "small"]);
    let Element::Pass { options, .. } = &pipeline.elements[0] else {
        panic!("expected a pass");
    };
    let error = AllOptions::from_pass_options(options).expect_err("bad value");
    let rendered = error.render(text);
    let caret_line = rendered.lines().nth(2).expect("caret line");
    assert_eq!(caret_line.trim_start(), "^~~~~");
    assert_eq!(caret_line.find('^'), text.find("1,x,3"));
}

/// Values chosen to stress printing: quotes, separators, brackets, empties, extremes.
fn tricky_values() -> Vec<AllOptions> {
    let strings = [
        "",
        "plain",
        "a b",
        "x,y",
        "{a b}",
        "a}b",
        "(",
        "say \"hi\"",
        "it's",
        "\"quoted\"",
        "tab\there",
        "\u{e9}t\u{e9} \u{1f600}",
        "k=v}",
    ];
    let mut values = Vec::new();
    for (index, label) in strings.iter().enumerate() {
        let names: Vec<String> = strings
            .iter()
            .skip(index)
            .take(4)
            .map(|s| s.to_string())
            .collect();
        values.push(AllOptions {
            enabled: index % 2 == 0,
            max_iterations: index as u32 * 1_000_003,
            offset: if index % 2 == 0 {
                i64::MAX
            } else {
                -(index as i64)
            },
            small: u8::MAX - index as u8,
            scale: [0.1, -1e300, f64::MIN_POSITIVE, f64::INFINITY, 0.0, -0.0][index % 6],
            ratio: [f32::MAX, 1e-7, -2.5][index % 3],
            label: label.to_string(),
            precision: Precision::ALL[index % 3],
            tile: TileId(index as u16 * 100),
            tiles: (0..index as u32).collect(),
            names,
            seed: if index % 3 == 0 {
                None
            } else {
                Some(u64::MAX - index as u64)
            },
            fallback: [None, Some(Precision::Fp8)][index % 2],
        });
    }
    values
}

#[test]
fn print_then_parse_round_trips_every_type() {
    for options in tricky_values() {
        let printed = options.print();
        assert_eq!(parse(&printed), options, "printed as {printed}");
        // The printed options also survive a trip through a whole pipeline.
        let text = format!("builtin.module({})", options.print_pass());
        let pipeline = parse_pipeline(&text).expect("pipeline parses");
        let Element::Pass {
            options: parsed, ..
        } = &pipeline.elements[0]
        else {
            panic!("expected a pass");
        };
        assert_eq!(AllOptions::from_pass_options(parsed), Ok(options.clone()));
        assert_eq!(
            parse_pipeline(&pipeline.to_string()).map(|p| p.without_spans()),
            Ok(pipeline.without_spans())
        );
    }
}

#[test]
fn list_elements_that_print_empty_keep_their_place() {
    let options = AllOptions {
        names: vec![String::new()],
        ..AllOptions::default()
    };
    assert_eq!(parse(&options.print()).names, [""]);
    let options = AllOptions {
        names: vec!["".into(), "a".into(), "".into()],
        ..AllOptions::default()
    };
    assert_eq!(parse(&options.print()).names, ["", "a", ""]);
}
