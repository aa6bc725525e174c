//! `ipu-compile`: the registered pipeline of the stage passes, and the package build's trace.
//!
//! `ipu-compile{target tiles precision fp8-scale finalists compile-kernels function}` expands to
//!
//! ```text
//! ipu-lower-mid{...}, ipu-select-finalist{...}, ipu-lower-to-tiles{...}, ipu-plan-kernels{...},
//! ipu-place-storage{...}, ipu-lower-exchanges{...}, ipu-optimize-exchange-placement{...},
//! ipu-emit-tile-code{...}
//! ```
//!
//! so the verifier, IR printing (`--mlir-print-ir-after=ipu-place-storage`), timing and
//! statistics run between its stages like between any passes. Each stage logs its phases of
//! the seed's package build ([`crate::build_trace`]).

use crate::lower::passes::{
    EmitTileCodeOptions, LowerExchangesOptions, LowerToTilesOptions,
    OptimizeExchangePlacementOptions, PlaceStorageOptions, PlanKernelsOptions,
};
use crate::lower_mid::{LowerMidOptions, WeightMemory};
use crate::pipeline::{PassOption, PassOptions, PipelineError};
use crate::planner::PrecisionPolicy;
use crate::select_finalist::SelectFinalistOptions;

crate::pass_options! {
    /// Options of the `ipu-compile` pipeline (forwarded to its stages).
    pub struct CompileOptions for "ipu-compile" {
        /// Target table name (c600, bow).
        target: String = "c600".to_string(),
        /// Tiles of the device the program runs on.
        tiles: u32 = 1472,
        /// Precision policy for GEMM inputs: native (operands' own types), f32, f16 or fp8.
        precision: PrecisionPolicy = PrecisionPolicy::F16,
        /// FP8 scale exponent; empty: chosen from constant data ranges (0 where unknown).
        fp8_scale: Option<i64> = None,
        /// Finalists planning retains and selection schedules.
        finalists: u32 = 4,
        /// Compile kernels through the kernel cache.
        compile_kernels: bool = true,
        /// Function to compile; empty: the first that is not a repeat body.
        function: String = String::new(),
        /// File with plan constraints as JSON (ipu-lower-mid's constraints-file).
        constraints_file: String = String::new(),
        /// Tile counts plans may use (empty: all tiles).
        active_tiles: Vec<u32> = Vec::new(),
        /// Partial plans kept per format group by the planner's beam.
        beam_width: u32 = 8,
        /// Candidates per op kept before the beam (best standalone cost first).
        candidates_per_op: u32 = 24,
        /// Per-tile memory budget in bytes; empty: the target table's planned-data budget.
        memory_budget: Option<u64> = None,
        /// Memory class of GEMM weights.
        weight_memory: WeightMemory = WeightMemory::Auto,
        /// JSON file of function-argument data ranges for FP8 scales (ipu-lower-mid's).
        calibration: String = String::new(),
        /// File to write the chosen plans to (the constraints form; reproduces the compile).
        dump_plans: String = String::new(),
    }
}

/// The stages `ipu-compile{options}` runs, as pipeline text.
pub fn expand_compile(options: &[PassOption]) -> Result<String, PipelineError> {
    let options = CompileOptions::from_pass_options(options)?;
    let target = options.target.clone();
    let stages = [
        LowerMidOptions {
            target: target.clone(),
            tiles: options.tiles,
            precision: options.precision,
            fp8_scale: options.fp8_scale,
            finalists: options.finalists,
            constraints_file: options.constraints_file.clone(),
            active_tiles: options.active_tiles.clone(),
            beam_width: options.beam_width,
            candidates_per_op: options.candidates_per_op,
            memory_budget: options.memory_budget,
            weight_memory: options.weight_memory,
            calibration: options.calibration.clone(),
            dump_plans: options.dump_plans.clone(),
            ..LowerMidOptions::default()
        }
        .print_pass(),
        SelectFinalistOptions {
            finalists: options.finalists,
            ..SelectFinalistOptions::default()
        }
        .print_pass(),
        LowerToTilesOptions {
            target: target.clone(),
            function: options.function.clone(),
            ..LowerToTilesOptions::default()
        }
        .print_pass(),
        PlanKernelsOptions {
            target: target.clone(),
            compile: options.compile_kernels,
        }
        .print_pass(),
        PlaceStorageOptions {
            target: target.clone(),
        }
        .print_pass(),
        LowerExchangesOptions {
            target: target.clone(),
            ..LowerExchangesOptions::default()
        }
        .print_pass(),
        OptimizeExchangePlacementOptions {
            target: target.clone(),
        }
        .print_pass(),
        EmitTileCodeOptions { target }.print_pass(),
    ];
    Ok(stages.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{parse_pipeline, Element};

    fn passes(pipeline: &crate::pipeline::Pipeline) -> Vec<(String, Vec<PassOption>)> {
        pipeline
            .elements
            .iter()
            .map(|element| match element {
                Element::Pass { name, options, .. } => (name.value.clone(), options.clone()),
                Element::Nested { .. } => panic!("a nested element in {pipeline:?}"),
            })
            .collect()
    }

    /// The expansion forwards every option to the stage that takes it and parses back.
    #[test]
    fn options_reach_their_stages() {
        let parsed = parse_pipeline(
            "ipu-compile{target=bow tiles=64 precision=fp8 fp8-scale=-3 finalists=2 compile-kernels=false function=f}",
        )
        .expect("parses");
        let text = expand_compile(&passes(&parsed)[0].1).expect("expands");
        let stages = passes(&parse_pipeline(&text).expect("the expansion parses"));
        let names: Vec<&str> = stages.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(
            names,
            [
                "ipu-lower-mid",
                "ipu-select-finalist",
                "ipu-lower-to-tiles",
                "ipu-plan-kernels",
                "ipu-place-storage",
                "ipu-lower-exchanges",
                "ipu-optimize-exchange-placement",
                "ipu-emit-tile-code"
            ]
        );
        let lower_mid = LowerMidOptions::from_pass_options(&stages[0].1).unwrap();
        assert_eq!(
            (
                lower_mid.target.as_str(),
                lower_mid.tiles,
                lower_mid.precision,
                lower_mid.fp8_scale,
                lower_mid.finalists
            ),
            ("bow", 64, PrecisionPolicy::Fp8, Some(-3), 2)
        );
        let select = SelectFinalistOptions::from_pass_options(&stages[1].1).unwrap();
        assert_eq!(select.finalists, 2);
        let lower = LowerToTilesOptions::from_pass_options(&stages[2].1).unwrap();
        assert_eq!(
            (lower.target.as_str(), lower.function.as_str()),
            ("bow", "f")
        );
        let kernels = PlanKernelsOptions::from_pass_options(&stages[3].1).unwrap();
        assert_eq!((kernels.target.as_str(), kernels.compile), ("bow", false));
        for (name, options) in &stages[4..] {
            assert!(
                options
                    .iter()
                    .any(|o| o.key.value == "target" && o.value.value == "bow"),
                "{name} does not get target=bow"
            );
        }
    }
}
