//! `ipu profile report|trace|query|compare`.

use std::path::Path;

use anyhow::{anyhow, Context};
use ipu_runtime::query::{self, GroupBy, SortBy};
use ipu_runtime::{report, trace, Package, ProfileFile};

use super::{CompareArgs, Failure, GroupByArg, QueryArgs, ReportArgs, SortArg, TraceArgs};

fn read_profile(path: &Path) -> Result<ProfileFile, Failure> {
    if !path.exists() {
        return Err(Failure::input(anyhow!(
            "cannot read profile '{}': no such file",
            path.display()
        )));
    }
    ProfileFile::read(path)
        .with_context(|| format!("reading profile '{}'", path.display()))
        .map_err(Failure::Input)
}

/// Writes by the tools' one output rule ([`ipu_runtime::output`]): never one of `inputs`,
/// device nodes written in place, regular files atomically.
fn write_output(path: &Path, inputs: &[&Path], bytes: &[u8]) -> Result<(), Failure> {
    ipu_runtime::output::write_output(path, inputs, bytes)
        .with_context(|| format!("writing '{}'", path.display()))
        .map_err(Failure::Input)
}

/// `ipu profile report p.ipuprof -o report.html [--package pkg.ipuexe]`.
pub fn report(args: &ReportArgs) -> Result<(), Failure> {
    let profile = read_profile(&args.profile)?;
    let package = match &args.package {
        Some(path) => Some(
            Package::read(path)
                .with_context(|| format!("reading package '{}'", path.display()))
                .map_err(Failure::Input)?,
        ),
        None => None,
    };
    let mut html = report::html(&profile, package.as_ref());
    if let Some(dir) = &args.sweep {
        let svg = pareto_svg(dir)?;
        let section = format!(
            "<h2>sweep <code>{}</code>: simulated cycles against peak memory per tile</h2>\n<figure class=\"pareto\">{svg}</figure>\n",
            report::escape_text(&dir.display().to_string())
        );
        if let Some(at) = html.find("<h2>timeline") {
            html.insert_str(at, &section);
        }
    }
    let mut inputs = vec![args.profile.as_path()];
    inputs.extend(args.package.as_deref());
    write_output(&args.output, &inputs, html.as_bytes())?;
    println!("report={}", args.output.display());
    Ok(())
}

/// The Pareto plot `ipu sweep` wrote into `dir`, checked to be an SVG image without scripts
/// or external references (it is inlined into the report).
fn pareto_svg(dir: &Path) -> Result<String, Failure> {
    let path = dir.join("pareto.svg");
    if !dir.is_dir() {
        return Err(Failure::input(anyhow!(
            "sweep directory '{}' is not a directory",
            dir.display()
        )));
    }
    let text = std::fs::read_to_string(&path)
        .with_context(|| {
            format!(
                "reading the sweep's Pareto plot '{}' (written by ipu sweep when a point succeeded)",
                path.display()
            )
        })
        .map_err(Failure::Input)?;
    let start = text
        .find("<svg")
        .ok_or_else(|| Failure::input(anyhow!("'{}' is not an SVG image", path.display())))?;
    let lower = text.to_ascii_lowercase();
    if lower.contains("<script") || lower.contains("href=") || lower.contains("<foreignobject") {
        return Err(Failure::input(anyhow!(
            "'{}' holds scripts or external references; refusing to inline it",
            path.display()
        )));
    }
    Ok(text[start..].to_string())
}

/// `ipu profile compare a.ipuprof b.ipuprof -o cmp.html`.
pub fn compare(args: &CompareArgs) -> Result<(), Failure> {
    let a = read_profile(&args.a)?;
    let b = read_profile(&args.b)?;
    let html = ipu_runtime::compare::html(
        &a,
        &args.a.display().to_string(),
        &b,
        &args.b.display().to_string(),
    );
    write_output(&args.output, &[&args.a, &args.b], html.as_bytes())?;
    println!("compare={}", args.output.display());
    if let (Some(x), Some(y)) = (
        ipu_runtime::compare::device_cycles(&a),
        ipu_runtime::compare::device_cycles(&b),
    ) {
        println!(
            "deviceProgramCycles A={x} B={y} change={:+.2}%",
            ipu_runtime::compare::change_percent(x, y)
        );
    }
    Ok(())
}

/// `ipu profile trace p.ipuprof -o trace.json`.
pub fn trace(args: &TraceArgs) -> Result<(), Failure> {
    let profile = read_profile(&args.profile)?;
    let json = serde_json::to_vec(&trace::chrome_trace(&profile))
        .map_err(|e| Failure::failed(anyhow!(e).context("encoding the trace")))?;
    write_output(&args.output, &[&args.profile], &json)?;
    println!("trace={}", args.output.display());
    Ok(())
}

/// `ipu profile query p.ipuprof --group-by kernel|op|tile|phase [--sort ...] [--json]`.
pub fn query(args: &QueryArgs) -> Result<(), Failure> {
    let profile = read_profile(&args.profile)?;
    let group = match args.group_by {
        GroupByArg::Kernel => GroupBy::Kernel,
        GroupByArg::Op => GroupBy::Op,
        GroupByArg::Tile => GroupBy::Tile,
        GroupByArg::Phase => GroupBy::Phase,
    };
    let sort = match args.sort {
        SortArg::Cycles => SortBy::Cycles,
        SortArg::Count => SortBy::Count,
        SortArg::Name => SortBy::Name,
    };
    let rows = query::query(&profile, group, sort, args.limit);
    if args.json {
        let text = serde_json::to_string_pretty(&rows)
            .map_err(|e| Failure::failed(anyhow!(e).context("encoding the rows")))?;
        println!("{text}");
    } else {
        print!("{}", query::table(&rows));
    }
    Ok(())
}
