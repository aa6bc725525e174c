//! `ipu inspect pkg.ipuexe [--bindings] [--tile N]`.

use anyhow::Context;
use ipu_runtime::{inspect, Package};

use super::{Failure, InspectArgs};

pub fn command(args: &InspectArgs) -> Result<(), Failure> {
    let (package, layout) = Package::read_with_layout(&args.package)
        .with_context(|| format!("reading package '{}'", args.package.display()))
        .map_err(Failure::Input)?;
    let text = if args.bindings {
        inspect::bindings(&package, &layout)
    } else if let Some(tile) = args.tile {
        inspect::tile(&package, &layout, tile).map_err(Failure::input)?
    } else {
        inspect::summary(&package, &layout)
    };
    print!("{text}");
    Ok(())
}
