//! Matmuls on the output-stationary GEMM in waves ([`crate::strategies::gemm_waves`]): the
//! homes the host writes, the panel phases and GEMM calls of every wave, the evacuation of
//! each wave's results to their homes, and the pieces the host reads them back from.

use super::*;
use crate::strategies::gemm_waves::{Moved, WavesGrid};
use crate::strategies::split_gemm::panel_pieces;
use ipu_dialects::plan::GemmWavesPlan;

/// The buffers of one waves program, on every tile of a wave.
struct WavesBuffers {
    a_home: BufferId,
    b_home: BufferId,
    a_panel: BufferId,
    b_panel: BufferId,
    acc: BufferId,
    landing: BufferId,
    out_home: BufferId,
}

impl Lowering<'_> {
    /// Matmul `index` as the planned waves (see the strategy's module docs): a plain product
    /// of two host operands in the plan's precision, whose result only the host reads.
    pub(super) fn gemm_waves(
        &mut self,
        index: usize,
        plan: &GemmWavesPlan,
    ) -> Result<(), LowerError> {
        let whole = OperatorPlan::GemmWaves(plan.clone());
        let fail = |why: String| not_followed("ipu.matmul", index, Some(&whole), why);
        let op = &self.graph.ops[index];
        let (a, b, c) = (op.operands[0], op.operands[1], op.results[0]);
        if !matches!(
            op.kind,
            OpKind::Matmul {
                transpose_lhs: false,
                transpose_rhs: false
            }
        ) {
            return Err(fail("a transposed operand".into()));
        }
        self.host(index, a, "ipu.matmul", "left operand")?;
        self.host(index, b, "ipu.matmul", "right operand")?;
        if !self.prefix.is_empty() || !crate::tiling::candidate::returned_only(self.graph, c) {
            return Err(fail(
                "its result is read on the device (the waves leave it where only the host reads it)"
                    .into(),
            ));
        }
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
        let grid = WavesGrid::planned((m, k, n), plan, self.tiles).map_err(fail)?;
        if vc.element != grid.partials() {
            return Err(fail(format!(
                "the result must be {:?} (the GEMM partials), not {:?}",
                grid.partials(),
                vc.element
            )));
        }
        let provenance = self.provenance(index);
        let buffers = self.waves_buffers(&grid, &provenance);
        let (a_pieces, b_pieces) = home_pieces(&grid, &buffers);
        self.stream(a, a_pieces)?;
        self.stream(b, b_pieces)?;
        for w in 0..grid.waves {
            for s in 0..grid.panels {
                self.waves_phase(&grid, &buffers, w * (grid.panels + 1) + s);
                let runs = self.waves_calls(&grid, &buffers, (w, s));
                self.program.run.push(TileStep::Compute {
                    provenance: provenance.clone(),
                    runs,
                });
            }
            self.waves_phase(&grid, &buffers, w * (grid.panels + 1) + grid.panels);
            let copy = self.program.kernel(grid.copy());
            let [_, _, out_slot] = grid.slot_bytes();
            let mut runs: Vec<Run> = grid
                .wave_rows(w)
                .flat_map(|r| (0..grid.gn).map(move |c| (r, c)))
                .map(|(r, c)| {
                    let (tile, slot) = grid.out_home(r, c);
                    Run {
                        tile,
                        kernel: copy,
                        args: vec![
                            Arg::Address(Place::at(buffers.landing, 0)),
                            Arg::Address(Place::at(buffers.out_home, slot * out_slot)),
                        ],
                    }
                })
                .collect();
            runs.sort_by_key(|run| run.tile);
            self.program.run.push(TileStep::Compute {
                provenance: format!("{provenance}.evacuate"),
                runs,
            });
        }
        self.program.ops.push((provenance, "ipu.matmul".into(), 0));
        let mut read = Vec::new();
        let pb = grid.partials().bytes();
        for r in 0..grid.gm {
            let (row0, rows) = grid.row_block(r);
            for c in 0..grid.gn {
                let (tile, slot) = grid.out_home(r, c);
                panel_pieces(
                    tile,
                    Place::at(buffers.out_home, slot * out_slot_bytes(&grid)),
                    (0, rows * grid.cb),
                    rows,
                    (row0, c * grid.cb),
                    (m, n),
                    pb,
                    &mut read,
                );
            }
        }
        self.returned.insert(c, read);
        Ok(())
    }

    fn waves_buffers(&mut self, grid: &WavesGrid, provenance: &str) -> WavesBuffers {
        let tiles: Vec<u32> = (0..grid.tiles()).collect();
        let [a, b, out] = grid.slot_bytes();
        let [a_slots, b_slots, out_slots] = grid.home_slots();
        let mut buffer = |name: &str, class, bytes| {
            self.program
                .buffer(format!("{provenance}.{name}"), class, bytes, tiles.clone())
        };
        let standard = MemoryClass::Standard;
        WavesBuffers {
            a_home: buffer("a.home", grid.left, a * a_slots),
            b_home: buffer("b.home", grid.weights, b * b_slots),
            a_panel: buffer("a.panel", grid.left, a),
            b_panel: buffer("b.panel", grid.weights, b),
            acc: buffer("c.amp_output", standard, out),
            landing: buffer("c.landing", standard, out),
            out_home: buffer("c.home", standard, out * out_slots),
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
            moves.push(super::super::program::Move {
                source_tile: from,
                source,
                destinations: to.to_vec(),
                destination,
                bytes,
            });
        });
        if !moves.is_empty() {
            let phase = self.program.exchange_phases() as u32;
            self.program.run.push(TileStep::Exchange { phase, moves });
        }
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
                let a_place = if a_tile == tile {
                    Place::at(buffers.a_home, a_at * a_slot)
                } else {
                    Place::at(buffers.a_panel, 0)
                };
                let b_place = if b_tile == tile {
                    Place::at(buffers.b_home, b_at * b_slot)
                } else {
                    Place::at(buffers.b_panel, 0)
                };
                runs.push(Run {
                    tile,
                    kernel,
                    args: vec![
                        Arg::Address(a_place),
                        Arg::Address(b_place),
                        Arg::Address(Place::at(buffers.acc, 0)),
                        Arg::Value(entry),
                        Arg::Value(0),
                        Arg::Value(0),
                    ],
                });
            }
        }
        runs.sort_by_key(|run| run.tile);
        runs
    }
}

fn out_slot_bytes(grid: &WavesGrid) -> u32 {
    grid.slot_bytes()[2]
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
            let (tile, slot) = grid.a_home(r, s);
            // AMP-left: 16-column groups of the panel's K, each `rows` rows.
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
