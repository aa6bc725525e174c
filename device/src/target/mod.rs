//! The target table: every IPU constant the planner's cost model and the simulator use, each
//! with its source tag, in one place so the two can never drift apart.
//!
//! Source tags (see `shared/design/IPU21.md`): `HwC600` calibrated on C600 hardware by a public
//! calibration project; `HwBow` measured on Bow hardware; `PopLibs` from the vendor library's
//! source; `Doc` vendor documentation; `Derived` arithmetic from the others; `Fitted(replay)`
//! fitted to one of the anchor's hardware measurements (`shared/design/ANCHOR-PLANS.md`), named
//! by the replay it came from (`device/tests/all/fidelity.rs` replays it).

mod memory;
mod topology;

pub use memory::MemoryElement;
pub use topology::PhysicalTile;

use serde::{Deserialize, Serialize};

use crate::precision::Precision;

/// Where a constant comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Source {
    HwC600,
    HwBow,
    PopLibs,
    Doc,
    Derived,
    Fitted(Replay),
}

/// The anchor's hardware measurements a constant can be fitted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Replay {
    /// Root tile 0 multicasting 1-4,148 words to tiles 32 and 53 (commit e4eb9ab): each
    /// receiver's cycles are a fixed part plus one per word.
    Multicast,
    /// The SigLIP MLP's up-projection exchange (commit 5caa8bf): 18 phases in which 18
    /// consecutive tiles (nine physical pairs) each multicast 2 x 16,384 B to 80 tiles,
    /// measured at 159,852 cycles.
    SiglipMlpUpProjection,
    /// The F16 GEMM 4096^3 on 1,472 tiles (commit 6d83c64, 2026-07-19): 2,262,696 cycles in
    /// 128 GEMM calls of 89-90 rows x K 64 x C 64 per tile between panel multicasts.
    Gemm4096,
    /// The flash attention runs at hidden 768 (batch 1, 12 query rows per tile) and 1152
    /// (batch 8, 94 rows), commit 170bf3d: their online-softmax and merge kernels' costs,
    /// fitted jointly to both (the other two runs check them).
    FlashAttentionH768AndB8,
}

/// The AMP GEMM kernels of the anchor's measured runs, by date ([`Target::c600_dated`]); the
/// table's own ([`Target::c600`]) are the latest (commit 7f01179: 940 / 1,063).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GemmKernelDate {
    /// Commit 6d83c64, 2026-07-19: the GEMM 4096^3 and the 8-layer MLP runs.
    July,
    /// Commit 5caa8bf, 2026-08-12: the SigLIP MLP run.
    August,
}

/// The July flash attention's online-softmax update per 16-score panel row and merge per
/// 16-column panel row, fitted to [`Replay::FlashAttentionH768AndB8`]: the two unknowns of
/// those two programs under the July GEMM feed and our exchange model (about 7.8 cycles per
/// score over three passes, 6.9 per merged element).
pub const JULY_ATTENTION_UPDATE: u32 = 125;
pub const JULY_ATTENTION_MERGE: u32 = 111;

/// The July kernel's standard-memory weight feed, fitted to [`Replay::Gemm4096`]
/// (`examples/replay/gemm_4096_f16.plan.json`; BENCHMARKS.md "Fidelity: whole-program GEMM
/// replays"): the integer that brings that replay closest to the hardware, each unit 512
/// cycles of it (128 calls of 4 groups). 1492 before route time was modelled; the route's
/// +666 cycles made 1491 the closest.
pub const JULY_GEMM_FEED_STANDARD: u32 = 1491;

/// A constant and its source tag.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sourced<T> {
    pub value: T,
    pub source: Source,
}

pub const fn sourced<T>(value: T, source: Source) -> Sourced<T> {
    Sourced { value, source }
}

/// Geometry: tile count and the logical-to-physical topology.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Geometry {
    pub tiles: Sourced<u32>,
    /// Physical grid rows x columns (23 x 64 on IPU21).
    pub physical_rows: Sourced<u32>,
    pub physical_columns: Sourced<u32>,
    pub workers_per_tile: Sourced<u32>,
}

/// Tile memory map. Addresses are absolute tile addresses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryMap {
    pub sram_base: Sourced<u32>,
    pub sram_bytes: Sourced<u32>,
    /// Memory element size: instruction fetch, exchange send-read and receive-write contend
    /// per element.
    pub element_bytes: Sourced<u32>,
    /// Region 0: standard memory, the only region that supports instruction fetch.
    pub standard_start: Sourced<u32>,
    pub standard_end: Sourced<u32>,
    /// Region 1: interleaved memory (128-bit loads), interleave factor below.
    pub interleaved_start: Sourced<u32>,
    pub interleaved_end: Sourced<u32>,
    pub interleave_factor: Sourced<u32>,
    /// First address the loader cannot populate.
    pub loadable_limit: Sourced<u32>,
    /// Bytes left for planned data after runtime and support reservations.
    pub standard_budget: Sourced<u32>,
    pub interleaved_budget: Sourced<u32>,
    /// Default support reservation in standard memory (exchange tables, host programs, code).
    pub support_reservation: Sourced<u32>,
}

/// Exchange and sync.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    pub bytes_per_cycle: Sourced<u32>,
    /// Cost of one exchange phase: global sync, row start and receive latency (fitted: the
    /// least-squares fixed part of the multicast replay's eight receive times after
    /// subtracting one cycle per word and each receiver's route time, 521.25 for both
    /// receivers; 542 before route time was modelled, Poplar's 600 before that).
    pub phase_cycles: Sourced<u32>,
    /// The two components PopLibs heuristics use, recorded beside the calibrated total.
    pub sync_cycles: Sourced<u32>,
    pub phase_fixed_cycles: Sourced<u32>,
    /// Receivers select the source about this many events after phase start. Paid again by
    /// a receiver each time it switches to another sending tile within a phase (the first
    /// selection is in `phase_cycles`): the SigLIP MLP's measured exchange (ANCHOR-PLANS.md
    /// section 4), whose weight and reduction phases chain 4-20 senders into one tile, is
    /// 5 % above a model charging it once per phase and within 2.5 % charging it per switch
    /// (device/tests/all/fidelity_siglip.rs).
    pub latency_events: Sourced<u32>,
    pub max_transfer_words: Sourced<u32>,
    /// Physical tiles t and t ^ pair_mask are a pair (they share the 64-bit exchange resources
    /// of paired transfers).
    pub pair_mask: Sourced<u32>,
    /// Tiles whose sends share one send bus: 1 (each tile sends at `bytes_per_cycle` on its
    /// own) or 2 (a physical pair's sends serialize). Fitted: in the SigLIP MLP's measured
    /// up-projection (ANCHOR-PLANS.md section 4) nine pairs send 32 KiB each concurrently and
    /// the 18 phases took 159,852 cycles; with pairs serialized they could not take under
    /// 18 x 16,384 (device/tests/all/fidelity.rs replays it).
    #[serde(default = "one_tile_per_send_bus")]
    pub send_bus_tiles: Sourced<u32>,
    /// Route time per folded physical column between a sender and a receiver (see
    /// `topology`): a receive's last word lands this many cycles per column later. Fitted to
    /// the multicast timing table, whose two receivers (folded columns 31 and 10 from the
    /// root's 0) finish 21 cycles apart at every size. A table without it has no route time
    /// (its phase cost then holds the average route, as 542 did).
    #[serde(default = "no_route_time")]
    pub route_cycles_per_column: Sourced<u32>,
    /// Schedule each exchange phase as the anchor's stack did (slot-synchronized colourings of
    /// its multicast groups, `ANCHOR-PLANS.md` "How they measured"): its measured runs ran such
    /// schedules, so a dated target (`Target::c600_dated`) schedules so and a replay runs the
    /// program the hardware ran. False on the table's own C600 (our list scheduler).
    #[serde(default = "our_scheduler")]
    pub anchor_schedule: Sourced<bool>,
    /// Bytes per second over the host link (host <-> device streams, all tiles together):
    /// ipu-stack uploaded 453,752,832 B in 76 batches in ~116 ms on a C600.
    pub host_link_bytes_per_second: Sourced<u64>,
}

fn no_route_time() -> Sourced<u32> {
    sourced(0, Source::Derived)
}

fn our_scheduler() -> Sourced<bool> {
    sourced(false, Source::Derived)
}

fn one_tile_per_send_bus() -> Sourced<u32> {
    sourced(1, Source::Fitted(Replay::SiglipMlpUpProjection))
}

/// AMP (accumulating matrix product) rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Amp {
    pub macs_per_cycle_f32: Sourced<u32>,
    pub macs_per_cycle_f16: Sourced<u32>,
    pub macs_per_cycle_f8: Sourced<u32>,
    /// Output columns the AMP produces per pass: weights are fed in groups of this many columns
    /// (the "16-column group" of the calibrated GEMM call and of the [N x 16] @ [16 x 16] curve).
    pub group_columns: Sourced<u32>,
}

impl Amp {
    /// MACs per cycle per tile for inputs in `precision`.
    pub fn macs_per_cycle(&self, precision: Precision) -> u32 {
        match precision {
            Precision::F32 => self.macs_per_cycle_f32.value,
            Precision::F16 => self.macs_per_cycle_f16.value,
            Precision::F8E4M3 | Precision::F8E5M2 => self.macs_per_cycle_f8.value,
        }
    }
}

/// Kernel cycle-model constants (per call, at the tile).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelCosts {
    pub launch_overhead: Sourced<u32>,
    /// AMP GEMM call: fixed + per-row + per-16-column-group weight feed.
    pub gemm_fixed: Sourced<u32>,
    pub gemm_per_row_per_64_columns: Sourced<u32>,
    pub gemm_weight_feed_interleaved: Sourced<u32>,
    pub gemm_weight_feed_standard: Sourced<u32>,
    /// Single-tile AMP curve [N x 16] @ [16 x 16] ~ slope * N + intercept.
    pub amp_curve_slope: Sourced<u32>,
    pub amp_curve_intercept: Sourced<u32>,
    pub local_copy_bytes_per_cycle: Sourced<u32>,
    pub six_worker_copy_call: Sourced<u32>,
    /// Standard -> interleaved copy: bytes / divisor + launch.
    pub standard_to_interleaved_divisor: Sourced<u32>,
    pub gelu_cycles_per_element: Sourced<u32>,
    pub add_elements_per_cycle: Sourced<u32>,
    pub cast_bytes_per_cycle: Sourced<u32>,
    pub amp_left_pack_cycles_per_element: Sourced<u32>,
    pub reduction_output_bytes_per_cycle: Sourced<u32>,
    /// The K and C block of the calibrated GEMM call (`gemm_*` above were measured at K = 64,
    /// C = 64, F16 inputs); the cost model scales from this point (see `crate::cost`).
    pub gemm_calibration_k: Sourced<u32>,
    pub gemm_calibration_c: Sourced<u32>,
    /// GeLU in the exact erf form. The IPU has a hardware tanh but no erf, so erf is evaluated
    /// as a polynomial/rational approximation plus an exp: we charge twice the tanh form.
    pub gelu_erf_cycles_per_element: Sourced<u32>,
    /// One exp per element (softmax). The tanh-form GeLU (10 cycles) is one transcendental plus
    /// about as much polynomial work again, so one transcendental is charged half of it.
    pub exp_cycles_per_element: Sourced<u32>,
    /// One reciprocal square root per row (layer norm), charged like one transcendental
    /// evaluated by a single worker.
    pub rsqrt_cycles_per_row: Sourced<u32>,
    /// The rows formulation's attention kernels as a dated target's stack compiled them
    /// (plain compiled code where ours is priced at the vector rates): the online-softmax
    /// update per 16-key panel row of scores (its three passes over a row: the maximum, the
    /// exps, the sum) and the merge into the f32 output per 16-column panel row. `None`: the
    /// derived model of `crate::cost`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention_rows_update_per_panel_row: Option<Sourced<u32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention_rows_merge_per_panel_row: Option<Sourced<u32>>,
}

/// One IPU target, selectable by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    pub name: String,
    pub clock_hz: Sourced<f64>,
    pub geometry: Geometry,
    pub memory: MemoryMap,
    pub exchange: Exchange,
    pub amp: Amp,
    pub kernels: KernelCosts,
}

/// Errors from the target table: unknown names, tiles and addresses outside the target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("unknown target '{name}'; known targets: {known}")]
    Unknown { name: String, known: String },
    #[error("logical tile {tile} is out of range: target {target} has {tiles} tiles (0..{tiles})")]
    LogicalTileOutOfRange {
        tile: u32,
        tiles: u32,
        target: String,
    },
    #[error(
        "physical tile index {index} is out of range: target {target} has {rows} x {columns} = {tiles} physical tiles"
    )]
    PhysicalTileOutOfRange {
        index: u32,
        rows: u32,
        columns: u32,
        tiles: u32,
        target: String,
    },
    #[error("address {address:#x} is outside tile SRAM {start:#x}..{end:#x} of target {target}")]
    AddressOutOfRange {
        address: u32,
        start: u32,
        end: u32,
        target: String,
    },
}

impl Target {
    /// Peak AMP throughput of the whole chip in FLOP/s for inputs in `precision`: every tile's
    /// AMP busy every cycle, one MAC = 2 FLOP. [Derived] 1472 x 64 x 2 x 1.5e9 = 282.6 TFLOP/s
    /// for F16 on the C600, 565.2 TFLOP/s for FP8.
    pub fn peak_flops(&self, precision: Precision) -> f64 {
        f64::from(self.geometry.tiles.value)
            * f64::from(self.amp.macs_per_cycle(precision))
            * 2.0
            * self.clock_hz.value
    }

    /// Peak AMP throughput of one tile in FLOP per cycle.
    pub fn peak_flops_per_tile_cycle(&self, precision: Precision) -> u64 {
        2 * u64::from(self.amp.macs_per_cycle(precision))
    }

    /// Names accepted by [`Target::by_name`].
    pub const NAMES: &'static [&'static str] = &["c600", "bow", "c600-5caa8bf", "c600-6d83c64"];

    /// Selects a target by name (`c600`, `ipu21` and `sim:c600` name the C600; `bow` the Bow;
    /// `c600-<commit>` the C600 with the AMP GEMM kernel of that date, [`Target::c600_dated`]).
    pub fn by_name(name: &str) -> Result<Target, TargetError> {
        let short = name.strip_prefix("sim:").unwrap_or(name);
        match short {
            "c600" | "ipu21" => Ok(Target::c600()),
            "bow" => Ok(Target::bow()),
            "c600-5caa8bf" => Ok(Target::c600_dated(GemmKernelDate::August)),
            "c600-6d83c64" => Ok(Target::c600_dated(GemmKernelDate::July)),
            _ => Err(TargetError::Unknown {
                name: name.to_string(),
                known: Self::NAMES.join(", "),
            }),
        }
    }

    /// The IPU21 on a C600 card at 1.5 GHz.
    pub fn c600() -> Target {
        use Source::*;
        Target {
            name: "c600".to_string(),
            clock_hz: sourced(1.5e9, HwC600),
            geometry: Geometry {
                tiles: sourced(1472, HwC600),
                physical_rows: sourced(23, HwC600),
                physical_columns: sourced(64, HwC600),
                workers_per_tile: sourced(6, Doc),
            },
            memory: MemoryMap {
                sram_base: sourced(0x4c000, HwC600),
                sram_bytes: sourced(638_976, HwC600),
                element_bytes: sourced(16 * 1024, HwC600),
                standard_start: sourced(0x4c000, HwC600),
                standard_end: sourced(0x80000, HwC600),
                interleaved_start: sourced(0x80000, HwC600),
                interleaved_end: sourced(0xe8000, HwC600),
                interleave_factor: sourced(2, HwC600),
                loadable_limit: sourced(0xe7bb0, HwC600),
                standard_budget: sourced(162_080, HwC600),
                interleaved_budget: sourced(424_880, HwC600),
                support_reservation: sourced(3 * 16 * 1024, HwC600),
            },
            exchange: Exchange {
                bytes_per_cycle: sourced(4, PopLibs),
                phase_cycles: sourced(521, Fitted(Replay::Multicast)),
                sync_cycles: sourced(90, PopLibs),
                phase_fixed_cycles: sourced(100, PopLibs),
                latency_events: sourced(112, HwC600),
                max_transfer_words: sourced(4148, HwC600),
                pair_mask: sourced(2, HwC600),
                send_bus_tiles: one_tile_per_send_bus(),
                route_cycles_per_column: sourced(1, Fitted(Replay::Multicast)),
                anchor_schedule: our_scheduler(),
                host_link_bytes_per_second: sourced(453_752_832 * 1000 / 116, HwC600),
            },
            amp: Amp {
                macs_per_cycle_f32: sourced(16, PopLibs),
                macs_per_cycle_f16: sourced(64, PopLibs),
                macs_per_cycle_f8: sourced(128, Derived),
                group_columns: sourced(16, HwC600),
            },
            kernels: KernelCosts {
                launch_overhead: sourced(11, HwC600),
                gemm_fixed: sourced(294, HwC600),
                gemm_per_row_per_64_columns: sourced(64, HwC600),
                gemm_weight_feed_interleaved: sourced(940, HwC600),
                gemm_weight_feed_standard: sourced(1063, HwC600),
                amp_curve_slope: sourced(4, HwBow),
                amp_curve_intercept: sourced(335, HwBow),
                local_copy_bytes_per_cycle: sourced(8, HwC600),
                six_worker_copy_call: sourced(288, HwC600),
                standard_to_interleaved_divisor: sourced(6, HwC600),
                gelu_cycles_per_element: sourced(10, HwC600),
                add_elements_per_cycle: sourced(16, HwC600),
                cast_bytes_per_cycle: sourced(8, HwC600),
                amp_left_pack_cycles_per_element: sourced(4, HwC600),
                reduction_output_bytes_per_cycle: sourced(1, HwC600),
                gemm_calibration_k: sourced(64, HwC600),
                gemm_calibration_c: sourced(64, HwC600),
                gelu_erf_cycles_per_element: sourced(20, Derived),
                exp_cycles_per_element: sourced(5, Derived),
                rsqrt_cycles_per_row: sourced(10, Derived),
                attention_rows_update_per_panel_row: None,
                attention_rows_merge_per_panel_row: None,
            },
        }
    }

    /// The C600 as the anchor's stack drove it at that date: its AMP GEMM kernel's weight feed
    /// per 16-column group per 64-K block (`ANCHOR-PLANS.md`, "Kernel constants by date") and
    /// its exchange scheduler (`Exchange::anchor_schedule`), everything else the table's. The
    /// measured runs ran so; a replay of one says which date it runs on.
    pub fn c600_dated(date: GemmKernelDate) -> Target {
        use Source::*;
        let mut target = Target::c600();
        let (name, interleaved, standard) = match date {
            // 5caa8bf (2026-08-12): published, 1,157 / 1,280.
            GemmKernelDate::August => {
                ("c600-5caa8bf", sourced(1157, HwC600), sourced(1280, HwC600))
            }
            // 6d83c64 (2026-07-19): unpublished ("an older version again"). The standard feed
            // is fitted to the GEMM 4096^3 replay (the only unknown of that program under our
            // exchange model: its 128 calls per tile take what the measured cycles leave after
            // the modelled exchange); the interleaved one keeps the standard-interleaved gap of
            // both published dates (123 cycles).
            GemmKernelDate::July => (
                "c600-6d83c64",
                sourced(JULY_GEMM_FEED_STANDARD - 123, Derived),
                sourced(JULY_GEMM_FEED_STANDARD, Fitted(Replay::Gemm4096)),
            ),
        };
        target.name = name.to_string();
        target.exchange.anchor_schedule = sourced(true, HwC600);
        target.kernels.gemm_weight_feed_interleaved = interleaved;
        target.kernels.gemm_weight_feed_standard = standard;
        if date == GemmKernelDate::July {
            // The flash attention runs (170bf3d, the same day and AMP kernel): their softmax
            // and merge, fitted to two of the four runs (BENCHMARKS.md, "Fidelity").
            let fitted = |cycles| Some(sourced(cycles, Fitted(Replay::FlashAttentionH768AndB8)));
            target.kernels.attention_rows_update_per_panel_row = fitted(JULY_ATTENTION_UPDATE);
            target.kernels.attention_rows_merge_per_panel_row = fitted(JULY_ATTENTION_MERGE);
        }
        target
    }

    /// The Bow IPU (same IPU architecture generation as GC200 geometry) at its measured 1.85 GHz.
    pub fn bow() -> Target {
        let mut target = Target::c600();
        target.name = "bow".to_string();
        target.clock_hz = sourced(1.85e9, Source::HwBow);
        // Bow has no FP8 AMP path; FP8 inputs would be converted to F16 first.
        target.amp.macs_per_cycle_f8 = sourced(64, Source::Derived);
        // No Bow host-link measurement: the C600's rate stands in for it.
        target.exchange.host_link_bytes_per_second = sourced(
            target.exchange.host_link_bytes_per_second.value,
            Source::Derived,
        );
        target
    }
}
