//! The split GEMM's calls and their price: [`SplitGrid::gemm_call`] and
//! [`SplitGrid::reduce_calls`] are what the lowering emits, [`SplitGrid::estimate`] prices
//! them with the device cost model, with the copies and exchange phases of the grid.

use super::*;

impl SplitGrid {
    /// The memory class the GEMM calls read B from: the B home when the weights are resident,
    /// else the B panel.
    pub fn weights_class(&self) -> MemoryClass {
        if self.env.b_resident {
            self.classes.b_home
        } else {
            self.classes.b_panel
        }
    }

    /// The row entries of the GEMM kernels: the distinct row-block sizes, ascending (a call
    /// selects its block's entry).
    pub fn row_entries(&self) -> Vec<u32> {
        let mut entries: Vec<u32> = self.rows.blocks.iter().map(|block| block.1).collect();
        entries.sort_unstable();
        entries.dedup();
        entries
    }

    /// The GEMM call over a K panel of `kp` rows and a chunk of `columns` columns (the first
    /// of a tile initializes its partials, the others `accumulate`): the call the lowering
    /// emits and the estimate prices.
    pub fn gemm_call(
        &self,
        precision: Precision,
        kp: u32,
        columns: u32,
        accumulate: bool,
    ) -> KernelSpec {
        let call = KernelSpec::Gemm {
            input: precision,
            partials: ipu_device::kernels::describe::default_partials(precision),
            weights: self.weights_class(),
            k: kp,
            c: columns,
            rows: self.row_entries(),
            accumulate,
        };
        call.with_row_major(self.a_row_major(), self.c_row_major())
    }

    /// The calls that reduce a range of `elements` partials on its owner: the sum of the
    /// other `gk - 1` tiles' ranges, then the owner's own range added to it.
    pub fn reduce_calls(&self, precision: Precision, elements: u32) -> [KernelSpec; 2] {
        let partials = ipu_device::kernels::describe::default_partials(precision);
        [
            KernelSpec::ReduceAdd {
                partials_precision: partials,
                output: partials,
                elements,
                partials: self.gk - 1,
            },
            KernelSpec::Add {
                precision: partials,
                rows: 1,
                cols: elements,
                b_rows: 1,
            },
        ]
    }

    /// The modelled cycles of the lowering of this grid on the busiest tile, by part, in
    /// closed form, for ranking the thousands of grids of an op: the GEMM and reduce calls
    /// the lowering emits ([`Self::gemm_call`], [`Self::reduce_calls`]) priced by the kernel
    /// cost functions the simulator charges; the copies and exchange phases of a tile with
    /// the largest ranges, each phase by the endpoint rule (`cost::exchange_phase_cycles`).
    /// The grids that become candidates are priced from their emitted copies
    /// ([`Self::home_copy_cycles`]) and transfers instead (`candidates::exchange_phases`).
    pub fn estimate(&self, precision: Precision, target: &Target) -> SplitEstimate {
        let eb = u64::from(precision.bytes());
        let partials = ipu_device::kernels::describe::default_partials(precision);
        let pb = u64::from(partials.bytes());
        let (r, c) = (self.rows.largest(), self.cols.largest());
        // Tiles sharing a send bus (`exchange.send_bus_tiles`: one on the C600, a physical
        // pair on a table whose pairs share one) all send as much as the busiest tile.
        let pair = if self.tiles() > 1 {
            u64::from(target.exchange.send_bus_tiles.value.max(1))
        } else {
            1
        };
        let mut gemm = 0u64;
        let mut exchange = 0u64;
        let mut copies = 0u64;
        let panels = self.panels_of(0);
        // The calls of the tile with the largest block (a call costs its largest row entry,
        // the largest block's): one call spec, its K and columns set per call (grids are
        // ranked by this estimate by the thousand).
        let chunks = self.chunks(0);
        let mut call = self.gemm_call(precision, 0, 0, true);
        for &(_, kp) in panels.iter().filter(|p| p.1 > 0) {
            for &(_, cc) in &chunks {
                if let KernelSpec::Gemm { k, c, .. } | KernelSpec::GemmRowMajor { k, c, .. } =
                    &mut call
                {
                    (*k, *c) = (kp, cc);
                }
                gemm += cost::kernel_cycles(&call, target);
            }
            let a = u64::from(r * kp) * eb;
            let b = u64::from(kp * c) * eb;
            // A gathered from a device value arrives whole (its owners are other tiles).
            let a_own = if self.env.a_device {
                0
            } else {
                u64::from(ranges_max(r * kp, self.gn)) * eb
            };
            let b_own = u64::from(ranges_max(kp * c, self.gm)) * eb;
            let a_moves = self.gn > 1 || self.env.a_device;
            // Resident weights are neither sent nor copied.
            let b_moves = self.gm > 1 && !self.env.b_resident;
            let b_own = if self.env.b_resident { 0 } else { b_own };
            let received =
                (a - a_own.min(a)) * u64::from(a_moves) + (b - b_own.min(b)) * u64::from(b_moves);
            // A tile sends one A range (its home's, or, gathered, about one range's worth
            // of the device value) and its B home range, on its send bus.
            let a_range = u64::from(ranges_max(r * kp, self.gn)) * eb;
            let sent = a_range * u64::from(a_moves) + b_own * u64::from(b_moves);
            if received > 0 {
                exchange += cost::exchange_phase_cycles(pair * sent, received, target);
            }
            copies += cost::copy_cycles(a_own, target) + cost::copy_cycles(b_own, target);
        }
        let mut reduce = 0u64;
        if self.gk > 1 {
            // Every tile sends its other gk - 1 ranges and receives as many.
            let slice = ranges_max(r * c, self.gk);
            let bytes = u64::from(slice) * pb * u64::from(self.gk - 1);
            exchange += cost::exchange_phase_cycles(pair * bytes, bytes, target);
            reduce += self
                .reduce_calls(precision, slice)
                .iter()
                .map(|spec| cost::kernel_cycles(spec, target))
                .sum::<u64>();
        }
        if self.env.row_major {
            // Converted to the row grid: a row tile receives its rows whole, an owner sends
            // its largest range (the estimate ranks grids by the thousand; the candidate's
            // phases carry the exact transfers).
            let rows = self.rows_grid();
            let received = u64::from(rows.rows_padded) * u64::from(self.n) * pb;
            let range = if self.gk > 1 {
                u64::from(ranges_max(r * c, self.gk))
            } else {
                u64::from(r * c)
            };
            exchange += cost::exchange_phase_cycles(pair * range * pb, received, target);
        }
        SplitEstimate {
            gemm,
            copies,
            reduce,
            exchange,
        }
    }

    /// Cycles of the busiest tile's copies of its own ranges into the panels, as the lowering
    /// emits them: one copy call per range of [`SplitGrid::panel_ranges`] on its home (A
    /// gathered from a device value is copied by its owners, which the grid does not know,
    /// and resident weights are not copied).
    pub fn home_copy_cycles(&self, precision: Precision, target: &Target) -> u64 {
        let eb = precision.bytes();
        let mut per_tile = vec![0u64; self.tiles() as usize];
        for panel in 0..self.panels {
            self.home_ranges(panel, |range| {
                if range.operand == Operand::A && self.env.a_device {
                    return;
                }
                let copy = KernelSpec::Copy {
                    bytes: range.len * eb,
                };
                let (i, j, l) = range.at;
                per_tile[self.tile(i, j, l) as usize] += cost::kernel_cycles(&copy, target);
            });
        }
        // The fills zeroing a gathered left operand's padded K.
        for panel in 0..self.panels {
            for (tile, _, elements) in self.pad_fills(panel) {
                let fill = KernelSpec::Fill {
                    precision,
                    elements,
                };
                per_tile[tile as usize] += cost::kernel_cycles(&fill, target);
            }
        }
        per_tile.into_iter().max().unwrap_or(0)
    }
}

/// The modelled cycles of a split GEMM on its busiest tile ([`SplitGrid::estimate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SplitEstimate {
    pub gemm: u64,
    pub copies: u64,
    pub reduce: u64,
    pub exchange: u64,
}

impl SplitEstimate {
    pub fn total(&self) -> u64 {
        self.gemm + self.copies + self.reduce + self.exchange
    }
}
