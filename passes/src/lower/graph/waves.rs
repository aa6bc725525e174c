//! Matmuls on the output-stationary GEMM in waves ([`crate::strategies::gemm_waves`]): the
//! homes the host writes (or a chain's previous product left), the panel phases and GEMM
//! calls of every wave, the evacuation of each wave's results to their homes, the GeLU that
//! runs in place on them, and the pieces the host reads them back from.

use super::*;
use crate::strategies::gemm_waves::{self, Moved, WavesGrid, WavesResult};
use crate::strategies::split_gemm::panel_pieces;
use ipu_device::kernels::spec::GeluForm;
use ipu_dialects::plan::GemmWavesPlan;

/// A value a waves product left: its blocks where `grid.result` says, in `buffer` (the
/// accumulators of a kept result; the homes, slot `wave`, of an evacuated one).
#[derive(Debug, Clone)]
pub(super) struct WavesValue {
    pub grid: WavesGrid,
    pub buffer: BufferId,
}

impl WavesValue {
    /// Tile and place of block (r, c).
    fn block(&self, r: u32, c: u32) -> (u32, Place) {
        match self.grid.result {
            WavesResult::Kept => (self.grid.tile(r, c), Place::at(self.buffer, 0)),
            WavesResult::Evacuated { .. } => {
                let (tile, slot) = self.grid.out_home(r, c);
                (
                    tile,
                    Place::at(self.buffer, slot * self.grid.slot_bytes()[2]),
                )
            }
        }
    }

    /// The host pieces that read the value (AMP-output order, or row-major blocks).
    pub fn read_pieces(&self) -> Vec<HostPiece> {
        let grid = &self.grid;
        let pb = grid.partials().bytes();
        let mut pieces = Vec::new();
        for r in 0..grid.gm {
            let (row0, rows) = grid.row_block(r);
            for c in 0..grid.gn {
                let (tile, place) = self.block(r, c);
                if grid.result == (WavesResult::Evacuated { row_major: true }) {
                    pieces.extend((0..rows).map(|i| {
                        HostPiece::contiguous(
                            tile,
                            Place::at(place.buffer, place.offset + i * grid.cb * pb),
                            (u64::from(row0 + i) * u64::from(grid.n) + u64::from(c * grid.cb))
                                * u64::from(pb),
                            grid.cb * pb,
                        )
                    }));
                } else {
                    panel_pieces(
                        tile,
                        place,
                        (0, rows * grid.cb),
                        rows,
                        (row0, c * grid.cb),
                        (grid.m, grid.n),
                        pb,
                        &mut pieces,
                    );
                }
            }
        }
        pieces
    }
}

/// The buffers of one waves program, on every tile of a wave.
struct WavesBuffers {
    a_home: BufferId,
    b_home: BufferId,
    a_panel: BufferId,
    b_panel: BufferId,
    acc: BufferId,
    /// The evacuation's buffers (unused by a kept result).
    landing: BufferId,
    out_home: BufferId,
    /// The row-major homes of a result a GeLU reads.
    rows_home: Option<BufferId>,
}

impl Lowering<'_> {
    /// Matmul `index` as the planned waves (see the strategy's module docs): a plain product
    /// in the plan's precision of a host left operand, or of the one the chain's previous
    /// product left on its tiles, whose result the waves can leave
    /// ([`gemm_waves::result_role`]: the chain's next product runs in waves when `plans` say
    /// so).
    pub(super) fn gemm_waves(
        &mut self,
        index: usize,
        plan: &GemmWavesPlan,
        plans: &[Option<OperatorPlan>],
    ) -> Result<(), LowerError> {
        let whole = OperatorPlan::GemmWaves(plan.clone());
        let fail = |why: String| not_followed("ipu.matmul", index, Some(&whole), why);
        let (a, b, c) = self.pinned_product(index, &whole)?;
        let in_waves = |other: usize| {
            matches!(
                plans.get(other),
                Some(Some(
                    OperatorPlan::GemmWaves(_) | OperatorPlan::GemmActivationStationary(_)
                ))
            )
        };
        let result = gemm_waves::result_role(self.graph, index, in_waves).map_err(fail)?;
        let (va, vb, vc) = (
            &self.graph.values[a],
            &self.graph.values[b],
            &self.graph.values[c],
        );
        let (m, k) = view_2d(&va.shape)?;
        let (Some((kb_rows, n)), Some(_)) = (single_matrix(&vb.shape), single_matrix(&va.shape))
        else {
            return Err(fail("a batched operand".into()));
        };
        let n = to_u32(n)?;
        if to_u32(kb_rows)? != k {
            return Err(fail(format!("K of {k} and {kb_rows} differ")));
        }
        if va.element != plan.precision || vb.element != plan.precision {
            return Err(fail(format!(
                "operands of {:?} and {:?}, the plan computes in {:?}",
                va.element, vb.element, plan.precision
            )));
        }
        let grid = WavesGrid::planned((m, k, n), plan, self.tiles)
            .and_then(|grid| grid.with_result(result))
            .map_err(fail)?;
        if vc.element != grid.partials() {
            return Err(fail(format!(
                "the result must be {:?} (the GEMM partials), not {:?}",
                grid.partials(),
                vc.element
            )));
        }
        // A chained left operand: the previous product's kept accumulators are the A homes.
        let chained = match self.waves.get(&a) {
            Some(value) => {
                if value.grid.result != WavesResult::Kept {
                    return Err(fail(
                        "the left operand is a product in waves evacuated to its homes".into(),
                    ));
                }
                if grid.replicated {
                    return Err(fail(
                        "a replicated left operand comes from the host, not a chain".into(),
                    ));
                }
                gemm_waves::chainable(&value.grid, &grid).map_err(fail)?;
                Some(value.buffer)
            }
            None => {
                self.host(index, a, "ipu.matmul", "left operand")?;
                None
            }
        };
        let provenance = self.provenance(index);
        let buffers = self.waves_buffers(&grid, &provenance, chained);
        let (a_pieces, b_pieces) = home_pieces(&grid, &buffers);
        if chained.is_none() {
            self.stream(a, a_pieces)?;
        }
        self.stream(b, b_pieces)?;
        let [_, _, out_slot] = grid.slot_bytes();
        for w in 0..grid.waves {
            for s in 0..grid.panels {
                self.waves_phase(&grid, &buffers, grid.phase(w, s));
                let runs = self.waves_calls(&grid, &buffers, (w, s));
                self.program.run.push(TileStep::Compute {
                    provenance: provenance.clone(),
                    runs,
                });
            }
            if result == WavesResult::Kept {
                continue;
            }
            self.waves_phase(&grid, &buffers, grid.phase(w, grid.panels));
            let copy = self.program.kernel(grid.copy());
            let mut runs = Vec::new();
            for r in grid.wave_rows(w) {
                let rows = grid.row_block(r).1;
                for c in 0..grid.gn {
                    let (tile, slot) = grid.out_home(r, c);
                    let home = Place::at(buffers.out_home, slot * out_slot);
                    // A block whose home is its own tile was not moved: copied from its
                    // accumulator.
                    let landed = if tile == grid.tile(r, c) {
                        buffers.acc
                    } else {
                        buffers.landing
                    };
                    runs.push(Run {
                        tile,
                        kernel: copy,
                        args: vec![Arg::Address(Place::at(landed, 0)), Arg::Address(home)],
                    });
                    if let Some(rows_home) = buffers.rows_home {
                        // The transition back to row-major, for the GeLU that reads it.
                        runs.push(Run {
                            tile,
                            kernel: self.program.kernel(grid.transition(rows)),
                            args: vec![
                                Arg::Address(home),
                                Arg::Address(Place::at(rows_home, slot * out_slot)),
                            ],
                        });
                    }
                }
            }
            runs.sort_by_key(|run| run.tile);
            self.program.run.push(TileStep::Compute {
                provenance: format!("{provenance}.evacuate"),
                runs,
            });
        }
        self.program.ops.push((provenance, "ipu.matmul".into(), 0));
        let buffer = match result {
            WavesResult::Kept => buffers.acc,
            WavesResult::Evacuated { .. } => buffers.rows_home.unwrap_or(buffers.out_home),
        };
        self.waves.insert(c, WavesValue { grid, buffer });
        Ok(())
    }

    /// The operands and result of matmul `index`, which a pinned GEMM (`plan`: in waves, or
    /// activation-stationary) runs: a plain product of the entry function (not in a repeat
    /// body) whose right operand the host writes.
    pub(super) fn pinned_product(
        &self,
        index: usize,
        plan: &OperatorPlan,
    ) -> Result<(ValueId, ValueId, ValueId), LowerError> {
        let fail = |why: &str| not_followed("ipu.matmul", index, Some(plan), why);
        let op = &self.graph.ops[index];
        if !matches!(
            op.kind,
            OpKind::Matmul {
                transpose_lhs: false,
                transpose_rhs: false
            }
        ) {
            return Err(fail("a transposed operand"));
        }
        self.host(index, op.operands[1], "ipu.matmul", "right operand")?;
        if !self.prefix.is_empty() {
            return Err(fail("a product in a repeat body"));
        }
        Ok((op.operands[0], op.operands[1], op.results[0]))
    }

    /// `ipu.gelu` (op `index`) in place on the blocks a waves product left, block by block.
    pub(super) fn waves_gelu(&mut self, index: usize) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let (x, y) = (op.operands[0], op.results[0]);
        let OpKind::Gelu { tanh } = op.kind else {
            return Err(unsupported(
                op.kind.name(),
                format!("op {index}: only a GeLU runs in place on a product in waves"),
            ));
        };
        let value = self.waves[&x].clone();
        let grid = &value.grid;
        let form = if tanh { GeluForm::Tanh } else { GeluForm::Erf };
        let mut runs = Vec::new();
        for r in 0..grid.gm {
            let rows = grid.row_block(r).1;
            let kernel = self.program.kernel(KernelSpec::Gelu {
                precision: grid.partials(),
                form,
                elements: rows * grid.cb,
            });
            for c in 0..grid.gn {
                let (tile, place) = value.block(r, c);
                runs.push(Run {
                    tile,
                    kernel,
                    args: vec![Arg::Address(place), Arg::Address(place)],
                });
            }
        }
        runs.sort_by_key(|run| run.tile);
        let provenance = self.provenance(index);
        self.program.run.push(TileStep::Compute {
            provenance: provenance.clone(),
            runs,
        });
        self.program.ops.push((provenance, "ipu.gelu".into(), 0));
        self.waves.insert(y, value);
        Ok(())
    }

    /// The program's buffers on every tile of a wave; a chain's A homes are `chained_a`.
    fn waves_buffers(
        &mut self,
        grid: &WavesGrid,
        provenance: &str,
        chained_a: Option<BufferId>,
    ) -> WavesBuffers {
        let tiles: Vec<u32> = (0..grid.tiles()).collect();
        let [a, b, out] = grid.slot_bytes();
        let [a_slots, b_slots, out_slots] = grid.home_slots();
        let mut buffer = |name: &str, class, bytes| {
            self.program
                .buffer(format!("{provenance}.{name}"), class, bytes, tiles.clone())
        };
        let standard = MemoryClass::Standard;
        let evacuated = grid.result != WavesResult::Kept;
        let row_major = grid.result == (WavesResult::Evacuated { row_major: true });
        let a_home = match chained_a {
            Some(home) => home,
            None => buffer("a.home", grid.left, a * a_slots),
        };
        WavesBuffers {
            a_home,
            b_home: buffer("b.home", grid.weights, b * b_slots),
            a_panel: if grid.replicated {
                0
            } else {
                buffer("a.panel", grid.left, a)
            },
            b_panel: buffer("b.panel", grid.weights, b),
            acc: buffer("c.amp_output", standard, out),
            landing: if evacuated {
                buffer("c.landing", standard, out)
            } else {
                0
            },
            out_home: if evacuated {
                buffer("c.home", standard, out * out_slots)
            } else {
                0
            },
            rows_home: row_major.then(|| buffer("c.rows", standard, out * out_slots)),
        }
    }

    /// Exchange phase `phase` of the waves, as the strategy generates it: panels from their
    /// homes into the panel buffers, accumulators into the landing buffers.
    fn waves_phase(&mut self, grid: &WavesGrid, buffers: &WavesBuffers, phase: u32) {
        let [a_slot, b_slot, _] = grid.slot_bytes();
        let mut moves = Vec::new();
        grid.for_each_move(phase, |from, to, bytes, moved| {
            let (source, destination) = match moved {
                Moved::A { r, s } => (
                    Place::at(buffers.a_home, grid.a_home(r, s).1 * a_slot),
                    Place::at(buffers.a_panel, 0),
                ),
                Moved::B { s, c } => (
                    Place::at(buffers.b_home, grid.b_home(s, c).1 * b_slot),
                    Place::at(buffers.b_panel, 0),
                ),
                Moved::Result { .. } => (Place::at(buffers.acc, 0), Place::at(buffers.landing, 0)),
            };
            moves.push(super::super::program::Move::between(
                (from, source),
                (to, destination),
                bytes,
            ));
        });
        self.push_exchange(moves);
    }

    /// Every tile's GEMM call of panel `s` in wave `w`, reading a panel in place on its home.
    fn waves_calls(
        &mut self,
        grid: &WavesGrid,
        buffers: &WavesBuffers,
        (w, s): (u32, u32),
    ) -> Vec<Run> {
        let kernel = self.program.kernel(grid.call(s));
        let counts = grid.row_counts();
        let [a_slot, b_slot, _] = grid.slot_bytes();
        let mut runs = Vec::new();
        for r in grid.wave_rows(w) {
            let rows = grid.row_block(r).1;
            let entry = counts.iter().position(|&count| count == rows).unwrap_or(0) as u32;
            for c in 0..grid.gn {
                let tile = grid.tile(r, c);
                let (a_tile, a_at) = grid.a_home(r, s);
                let (b_tile, b_at) = grid.b_home(s, c);
                let a_place = if a_tile == tile || grid.replicated {
                    Place::at(buffers.a_home, a_at * a_slot)
                } else {
                    Place::at(buffers.a_panel, 0)
                };
                let b_place = if b_tile == tile {
                    Place::at(buffers.b_home, b_at * b_slot)
                } else {
                    Place::at(buffers.b_panel, 0)
                };
                // One call per column chunk: its 16-column groups are contiguous in the
                // AMP-right panel and in the AMP-output accumulator.
                let eb = grid.input.bytes();
                let pb = grid.partials().bytes();
                let kp = grid.panel_rows(s);
                for q in 0..grid.calls_per_panel() {
                    let groups = q * grid.call_columns / 16;
                    runs.push(Run {
                        tile,
                        kernel,
                        args: vec![
                            Arg::Address(a_place),
                            Arg::Address(Place::at(
                                b_place.buffer,
                                b_place.offset + groups * kp * 16 * eb,
                            )),
                            Arg::Address(Place::at(buffers.acc, groups * rows * 16 * pb)),
                            Arg::Value(entry),
                            Arg::Value(0),
                            Arg::Value(0),
                        ],
                    });
                }
            }
        }
        runs.sort_by_key(|run| run.tile);
        runs
    }
}

/// The host pieces writing A's and B's panels into their homes, in AMP-left and AMP-right
/// order (16-column groups, zero padding past K).
fn home_pieces(grid: &WavesGrid, buffers: &WavesBuffers) -> (Vec<HostPiece>, Vec<HostPiece>) {
    let eb = grid.input.bytes();
    let [a_slot, b_slot, _] = grid.slot_bytes();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for s in 0..grid.panels {
        let kp = grid.panel_rows(s);
        let k0 = s * grid.kb;
        for r in 0..grid.gm {
            let (row0, rows) = grid.row_block(r);
            let (_, slot) = grid.a_home(r, s);
            // AMP-left: 16-column groups of the panel's K, each `rows` rows.
            for tile in grid.a_holders(r, s) {
                panel_pieces(
                    tile,
                    Place::at(buffers.a_home, slot * a_slot),
                    (0, rows * kp),
                    rows,
                    (row0, k0),
                    (grid.m, grid.k),
                    eb,
                    &mut a,
                );
            }
        }
        for c in 0..grid.gn {
            let (tile, slot) = grid.b_home(s, c);
            // AMP-right: 16-column groups of the block's columns, each the panel's K rows.
            panel_pieces(
                tile,
                Place::at(buffers.b_home, slot * b_slot),
                (0, kp * grid.cb),
                kp,
                (k0, c * grid.cb),
                (grid.k, grid.n),
                eb,
                &mut b,
            );
        }
    }
    (a, b)
}
