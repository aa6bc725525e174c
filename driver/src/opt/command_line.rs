//! ipu-opt's command line, read the way mlir-opt (LLVM's `cl`) reads it: `-name` and `--name`
//! alike, `-name=value` or `-name value` for options with values, `-flag=true|false|1|0` for
//! boolean flags, the last of a repeated single-value option wins, and every registered pass or
//! pass pipeline (ours and MLIR's) is a flag of its own (`-cse`, `-canonicalize='max-iterations=3'`)
//! that builds the pipeline in command-line order. What is not an option, a pass or the input is
//! an error (exit code 1, as mlir-opt), never read as `-o <rest>` or `-p <rest>`.

use clap::{ArgAction, CommandFactory, FromArgMatches};
use ipu_passes::{
    mlir_cxx::{self, lookup, LlvmOption, Registered},
    pipeline::{parse_option_list, Element, Span, Spanned},
    Registry,
};

use super::OptArgs;

/// Set when the command line asks for MLIR's action logging, profiling or debug counters.
static ACTION_OPTIONS: std::sync::OnceLock<()> = std::sync::OnceLock::new();

/// Whether MLIR's action handlers must be installed on contexts (see [`parse`]).
pub fn action_options_given() -> bool {
    ACTION_OPTIONS.get().is_some()
}

/// A command line ipu-opt refuses, with mlir-opt's wording.
#[derive(Debug)]
pub struct CommandLineError(pub String);

/// What the command line asks for.
pub struct CommandLine {
    pub args: OptArgs,
    /// Pass and pipeline flags, in order, each with the op it must run on when it is restricted
    /// to one (nested implicitly under that op, as mlir-opt does).
    pub pass_flags: Vec<PassFlag>,
    /// `--help` / `--help-hidden` / `--version`: print this and exit 0.
    pub print_and_exit: Option<String>,
}

/// One pass or pipeline given as a flag.
#[derive(Clone, Debug)]
pub struct PassFlag {
    pub element: Element,
    pub anchor: Option<String>,
}

/// How an option of ours takes a value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    /// A boolean flag: `-flag`, `-flag=true|false|1|0`.
    Flag,
    /// A value that may be omitted (`-split-input-file`, `-split-input-file=marker`).
    OptionalValue,
    /// A value, attached with `=` or the next argument.
    Value { repeatable: bool },
}

struct Known {
    long: String,
    short: Option<char>,
    shape: Shape,
}

fn known_options() -> Vec<Known> {
    OptArgs::command()
        .get_arguments()
        .filter(|argument| !argument.is_positional())
        .filter_map(|argument| {
            let long = match (argument.get_long(), argument.get_short()) {
                (Some(long), _) => long.to_string(),
                (None, Some(short)) => short.to_string(),
                (None, None) => return None,
            };
            let takes_value = argument.get_action().takes_values();
            let optional = argument
                .get_num_args()
                .is_some_and(|range| range.min_values() == 0);
            let shape = if !takes_value {
                Shape::Flag
            } else if optional {
                Shape::OptionalValue
            } else {
                Shape::Value {
                    repeatable: matches!(argument.get_action(), ArgAction::Append),
                }
            };
            Some(Known {
                long,
                short: argument.get_short(),
                shape,
            })
        })
        .collect()
}

/// LLVM's boolean values.
fn boolean(name: &str, value: &str) -> Result<bool, CommandLineError> {
    match value {
        "" | "true" | "TRUE" | "True" | "1" => Ok(true),
        "false" | "FALSE" | "False" | "0" => Ok(false),
        _ => Err(CommandLineError(format!(
            "for the --{name} option: '{value}' is invalid value for boolean argument! Try 0 or 1"
        ))),
    }
}

/// Reads the command line (`arguments[0]` is the program name).
pub fn parse(arguments: Vec<String>, registry: &Registry) -> Result<CommandLine, CommandLineError> {
    mlir_cxx::register_command_line_options();
    let known = known_options();
    // Options MLIR itself reads (printing defaults, context, debug counters, action logging),
    // handed to LLVM's parser as mlir-opt would have parsed them.
    let mut forwarded: Vec<String> = Vec::new();
    let mut normalized: Vec<(String, Option<String>)> = Vec::new();
    let mut positional: Vec<String> = Vec::new();
    let mut pass_flags = Vec::new();
    let mut print_and_exit = None;
    let mut rest = arguments.into_iter().skip(1);
    let mut only_positional = false;
    while let Some(argument) = rest.next() {
        if only_positional || argument == "-" || !argument.starts_with('-') {
            positional.push(argument);
            continue;
        }
        if argument == "--" {
            only_positional = true;
            continue;
        }
        let body = argument
            .strip_prefix("--")
            .unwrap_or(&argument[1..])
            .to_string();
        let (name, value) = match body.split_once('=') {
            Some((name, value)) => (name.to_string(), Some(value.to_string())),
            None => (body.clone(), None),
        };
        match name.as_str() {
            "help" | "help-hidden" | "help-list" | "help-list-hidden" => {
                print_and_exit = Some(help_text(registry));
                continue;
            }
            "version" => {
                print_and_exit = Some(version_text());
                continue;
            }
            _ => {}
        }
        let option = known.iter().find(|option| {
            option.long == name
                || (name.chars().count() == 1 && option.short == name.chars().next())
        });
        if let Some(option) = option {
            let long = option.long.clone();
            if long.len() > 1 && mlir_cxx::command_line_option(&long).is_some() {
                let value = match (option.shape, &value) {
                    (Shape::Value { .. }, None) => None,
                    _ => value.clone(),
                };
                if option.shape == Shape::Flag || value.is_some() {
                    forwarded.push(match value {
                        Some(value) => format!("--{long}={value}"),
                        None => format!("--{long}"),
                    });
                }
            }
            match option.shape {
                Shape::Flag => {
                    let on = boolean(&long, value.as_deref().unwrap_or(""))?;
                    normalized.retain(|(existing, _)| *existing != long);
                    if on {
                        normalized.push((long, None));
                    }
                }
                Shape::OptionalValue => {
                    normalized.retain(|(existing, _)| *existing != long);
                    normalized.push((long, value));
                }
                Shape::Value { repeatable } => {
                    let value = match value {
                        Some(value) => value,
                        None => rest.next().ok_or_else(|| {
                            CommandLineError(format!("for the --{long} option: requires a value!"))
                        })?,
                    };
                    if !repeatable {
                        normalized.retain(|(existing, _)| *existing != long);
                    }
                    normalized.push((long, Some(value)));
                }
            }
            continue;
        }
        if let Some(flag) = pass_flag(&name, value.as_deref(), registry)? {
            pass_flags.push(flag);
            continue;
        }
        if let Some(kind) = mlir_cxx::command_line_option(&name) {
            forwarded.push(match (value, kind) {
                (Some(value), _) => format!("--{name}={value}"),
                (None, LlvmOption::Value) => {
                    let value = rest.next().ok_or_else(|| {
                        CommandLineError(format!("for the --{name} option: requires a value!"))
                    })?;
                    format!("--{name}={value}")
                }
                (None, LlvmOption::FlagOrOptionalValue) => format!("--{name}"),
            });
            continue;
        }
        let mut message =
            format!("Unknown command line argument '{argument}'.  Try: 'ipu-opt --help'");
        let candidates: Vec<&str> = known
            .iter()
            .map(|option| option.long.as_str())
            .chain(registry.known_names())
            .collect();
        if let Some(near) = ipu_passes::pipeline::suggest(&name, candidates) {
            message.push_str(&format!("\nipu-opt: Did you mean '--{near}'?"));
        }
        return Err(CommandLineError(message));
    }
    if positional.len() > 1 {
        return Err(CommandLineError(format!(
            "Too many positional arguments specified!\nCan specify at most 1 positional arguments: See: ipu-opt --help (extra: '{}')",
            positional[1]
        )));
    }
    let args = read_options(&forwarded, normalized, positional)?;
    Ok(CommandLine {
        args,
        pass_flags,
        print_and_exit,
    })
}

/// Hands the options MLIR reads to LLVM's parser, then reads ours (last value wins) with clap.
fn read_options(
    forwarded: &[String],
    normalized: Vec<(String, Option<String>)>,
    positional: Vec<String>,
) -> Result<OptArgs, CommandLineError> {
    let actions = forwarded.iter().any(|option| {
        [
            "--log-actions-to",
            "--log-mlir-actions-filter",
            "--profile-actions-to",
            "--mlir-enable-debugger-hook",
            "--mlir-debug-counter",
        ]
        .iter()
        .any(|name| option.starts_with(name))
    });
    if actions {
        let _ = ACTION_OPTIONS.set(());
    }
    mlir_cxx::parse_command_line(forwarded).map_err(|message| {
        CommandLineError(
            message
                .strip_prefix("ipu-opt: ")
                .unwrap_or(&message)
                .to_string(),
        )
    })?;
    let mut clap_arguments = vec!["ipu-opt".to_string()];
    for (name, value) in normalized {
        match (name.chars().count(), value) {
            // A short-only option (`-o`): clap takes its value as the next word.
            (1, Some(value)) => {
                clap_arguments.push(format!("-{name}"));
                clap_arguments.push(value);
            }
            (_, Some(value)) => clap_arguments.push(format!("--{name}={value}")),
            (_, None) => clap_arguments.push(format!("--{name}")),
        }
    }
    clap_arguments.push("--".to_string());
    clap_arguments.extend(positional);
    let matches = OptArgs::command()
        .try_get_matches_from(clap_arguments)
        .map_err(|error| CommandLineError(clap_message(&error)))?;
    let args = OptArgs::from_arg_matches(&matches)
        .map_err(|error| CommandLineError(clap_message(&error)))?;
    Ok(args)
}

/// clap's message without its usage footer, on one line (`error: invalid value ...`).
fn clap_message(error: &clap::Error) -> String {
    let text = error.to_string();
    text.lines()
        .next()
        .unwrap_or("error: invalid command line")
        .trim()
        .to_string()
}

/// A registered pass or pipeline named as a flag, with its options (`-name='a=1 b=2'`).
fn pass_flag(
    name: &str,
    value: Option<&str>,
    registry: &Registry,
) -> Result<Option<PassFlag>, CommandLineError> {
    let anchor = if let Some(info) = registry.pass(name) {
        let pass = (info.create)(&[]).map_err(|error| CommandLineError(error.message))?;
        Some(pass.anchor().to_string()).filter(|anchor| !anchor.is_empty())
    } else if registry.pipeline(name).is_some() {
        None
    } else if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
    {
        return Ok(None);
    } else {
        match lookup(name) {
            Some(Registered::Pass { anchor, .. }) => anchor,
            Some(Registered::Pipeline) => None,
            None => return Ok(None),
        }
    };
    let options = match value {
        Some(text) => parse_option_list(text).map_err(|error| {
            CommandLineError(format!("for the --{name} option: {}", error.message))
        })?,
        None => Vec::new(),
    };
    Ok(Some(PassFlag {
        element: Element::Pass {
            name: Spanned::new(name.to_string(), Span::default()),
            options,
            span: Span::default(),
        },
        anchor,
    }))
}

/// `--version`: ours, then the LLVM and MLIR build it links (LLVM's own version text).
fn version_text() -> String {
    format!(
        "ipu-opt {}\n{}\n",
        env!("CARGO_PKG_VERSION"),
        ipu_passes::mlir_cxx::llvm_version_text()
    )
}

/// `--help`: our options (clap's listing), then the passes and pipelines that are flags.
fn help_text(registry: &Registry) -> String {
    let mut text = OptArgs::command()
        .override_usage("ipu-opt [options] <input file>")
        .render_long_help()
        .to_string();
    text.push_str("\nPasses and pass pipelines (each also a flag: -<name>[='<options>']):\n");
    text.push_str(&super::list_passes(registry));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_words(words: &[&str]) -> Result<CommandLine, CommandLineError> {
        ipu_passes::register_upstream_passes();
        let registry = Registry::with_builtin();
        let mut arguments = vec!["ipu-opt".to_string()];
        arguments.extend(words.iter().map(|word| word.to_string()));
        parse(arguments, &registry)
    }

    #[test]
    fn single_and_double_dash_options_and_values() {
        let line = parse_words(&[
            "in.mlir",
            "-split-input-file",
            "-pass-pipeline",
            "builtin.module(cse)",
            "--mlir-print-ir-after=cse",
            "-o",
            "out.mlir",
        ])
        .unwrap();
        assert_eq!(line.args.input, "in.mlir");
        assert_eq!(line.args.output, "out.mlir");
        assert_eq!(
            line.args.pass_pipeline.as_deref(),
            Some("builtin.module(cse)")
        );
        assert_eq!(line.args.print_ir_after, vec!["cse".to_string()]);
        assert!(line.args.split_input_file.is_some());
    }

    #[test]
    fn boolean_flags_take_values() {
        let line = parse_words(&[
            "-mlir-disable-threading=true",
            "--allow-unregistered-dialect=1",
            "--mlir-print-op-generic=false",
        ])
        .unwrap();
        assert!(line.args.disable_threading);
        assert!(line.args.allow_unregistered_dialect);
        assert!(!line.args.print_op_generic);
        let error = parse_words(&["--mlir-print-op-generic=maybe"])
            .err()
            .unwrap();
        assert!(
            error
                .0
                .contains("'maybe' is invalid value for boolean argument"),
            "{}",
            error.0
        );
    }

    #[test]
    fn pass_flags_keep_order_and_anchor() {
        let line = parse_words(&[
            "-cse",
            "-canonicalize=max-iterations=3 top-down=false",
            "-affine-scalrep",
            "-ipu-canonicalize",
        ])
        .unwrap();
        let names: Vec<String> = line
            .pass_flags
            .iter()
            .map(|flag| flag.element.to_string())
            .collect();
        assert_eq!(
            names,
            vec![
                "cse",
                "canonicalize{max-iterations=3 top-down=false}",
                "affine-scalrep",
                "ipu-canonicalize"
            ]
        );
        assert_eq!(line.pass_flags[2].anchor.as_deref(), Some("func.func"));
        assert_eq!(line.pass_flags[0].anchor, None);
    }

    #[test]
    fn unknown_options_are_errors_not_output_files() {
        let error = parse_words(&["-output-split-markr=XYZ"]).err().unwrap();
        assert!(error
            .0
            .starts_with("Unknown command line argument '-output-split-markr=XYZ'"));
        assert!(
            error.0.contains("Did you mean '--output-split-marker'"),
            "{}",
            error.0
        );
        assert!(parse_words(&["-oout.mlir"]).is_err());
        assert!(parse_words(&["-pbuiltin.module(cse)"]).is_err());
        let line = parse_words(&["-output-split-marker=XYZ"]).unwrap();
        assert_eq!(line.args.output_split_marker, "XYZ");
        assert_eq!(line.args.output, "-");
    }

    #[test]
    fn the_last_pass_pipeline_wins() {
        let line = parse_words(&[
            "--pass-pipeline=builtin.module(canonicalize)",
            "--pass-pipeline=builtin.module(cse)",
        ])
        .unwrap();
        assert_eq!(
            line.args.pass_pipeline.as_deref(),
            Some("builtin.module(cse)")
        );
    }
}
