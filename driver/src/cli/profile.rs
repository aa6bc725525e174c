//! `ipu profile report|trace|query`.

use std::path::Path;

use anyhow::{anyhow, Context};
use ipu_runtime::query::{self, GroupBy, SortBy};
use ipu_runtime::{report, trace, Package, ProfileFile};

use super::{Failure, GroupByArg, QueryArgs, ReportArgs, SortArg, TraceArgs};

fn read_profile(path: &Path) -> Result<ProfileFile, Failure> {
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
    let html = report::html(&profile, package.as_ref());
    let mut inputs = vec![args.profile.as_path()];
    inputs.extend(args.package.as_deref());
    write_output(&args.output, &inputs, html.as_bytes())?;
    println!("report={}", args.output.display());
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
