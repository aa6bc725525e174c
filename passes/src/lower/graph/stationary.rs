//! Matmuls on the activation-stationary GEMM ([`crate::strategies::gemm_stationary`]): the
//! weights' homes the host writes, per round the weights phase and the GEMM calls into the
//! panels' partials, the reduction tree's phases and reduce-adds, and the result's slots the
//! host reads.

use super::*;
use crate::strategies::gemm_stationary::{self, Moved, StationaryGrid, WEIGHT_ROWS};
use crate::strategies::gemm_waves::WavesResult;
use crate::strategies::split_gemm::panel_pieces;
use ipu_dialects::plan::GemmActivationStationaryPlan;

impl Lowering<'_> {
    /// Matmul `index` as the planned activation-stationary GEMM: its left operand the result
    /// a product in waves kept on its tiles (through a GeLU, in place), its right operand a
    /// host value, its result read by the host alone.
    pub(super) fn gemm_stationary(
        &mut self,
        index: usize,
        plan: &GemmActivationStationaryPlan,
    ) -> Result<(), LowerError> {
        let whole = OperatorPlan::GemmActivationStationary(plan.clone());
        let fail = |why: String| not_followed("ipu.matmul", index, Some(&whole), why);
        let (a, b, c) = self.pinned_product(index, &whole)?;
        if !crate::tiling::candidate::returned_only(self.graph, c) {
            return Err(fail(
                "its result is read on the device (only the host reads it)".into(),
            ));
        }
        let Some(producer) = self.waves.get(&a).cloned() else {
            return Err(fail(
                "its left operand is not a product in waves kept on its tiles".into(),
            ));
        };
        if producer.grid.result != WavesResult::Kept {
            return Err(fail("its left operand was evacuated to its homes".into()));
        }
        let vb = &self.graph.values[b];
        let Some((k, n)) = single_matrix(&vb.shape) else {
            return Err(fail("a batched right operand".into()));
        };
        let (k, n) = (to_u32(k)?, to_u32(n)?);
        if vb.element != plan.precision || self.graph.values[c].element != plan.precision {
            return Err(fail(format!(
                "a right operand of {:?}, the plan computes in {:?}",
                vb.element, plan.precision
            )));
        }
        let grid =
            StationaryGrid::planned((producer.grid.m, k, n), plan, self.tiles).map_err(fail)?;
        gemm_stationary::chainable(&producer.grid, &grid).map_err(fail)?;
        let provenance = self.provenance(index);
        let tiles: Vec<u32> = (0..grid.tiles()).collect();
        let (w_slots, w_slot) = grid.w_slots();
        let eb = grid.input.bytes();
        let pb = grid.partials().bytes();
        let partial = grid.partial_bytes();
        let mut buffer = |name: &str, class, bytes| {
            self.program
                .buffer(format!("{provenance}.{name}"), class, bytes, tiles.clone())
        };
        let standard = MemoryClass::Standard;
        let w_home = buffer("b.home", grid.weights, w_slots * w_slot);
        let inbox = buffer(
            "b.panels",
            grid.weights,
            grid.round * grid.calls_per_panel() * grid.panel_bytes(),
        );
        let partials = buffer(
            "c.partials",
            standard,
            grid.round * gemm_stationary::TREE_SLOTS * partial,
        );
        let result = buffer("c.home", standard, grid.result_slots() * partial);
        // The host writes every weight block once, AMP-right, into its home slot.
        let mut pieces = Vec::new();
        for bk in 0..k / WEIGHT_ROWS {
            for j in 0..grid.panels {
                let (tile, slot) = grid.w_home(bk, j);
                panel_pieces(
                    tile,
                    Place::at(w_home, slot * w_slot),
                    (0, WEIGHT_ROWS * grid.cb),
                    WEIGHT_ROWS,
                    (bk * WEIGHT_ROWS, j * grid.cb),
                    (k, n),
                    eb,
                    &mut pieces,
                );
            }
        }
        self.stream(b, pieces)?;
        let counts = grid.row_counts();
        let entry = |rows: u32| counts.iter().position(|&c| c == rows).unwrap_or(0) as u32;
        let slot_of =
            |p: u32, s: u32| Place::at(partials, (p * gemm_stationary::TREE_SLOTS + s) * partial);
        for t in 0..grid.rounds() {
            let first = grid.round_panels(t).start;
            // The round's weight blocks, group by group, into the K-range tiles' panels.
            let mut moves = Vec::new();
            grid.for_each_move(grid.phase(t, 0), |from, to, bytes, moved| {
                let Moved::Weight { b: bk, j, g } = moved else {
                    return;
                };
                let (_, slot) = grid.w_home(bk, j);
                moves.push(super::super::program::Move::between(
                    (
                        from,
                        Place::at(w_home, slot * w_slot + g * WEIGHT_ROWS * 16 * eb),
                    ),
                    (to, Place::at(inbox, grid.inbox_offset(bk, j - first, g))),
                    bytes,
                ));
            });
            // A home that reads its own block copies it into its panel.
            let mut runs = Vec::new();
            for j in grid.round_panels(t) {
                for bk in (0..k / WEIGHT_ROWS).filter(|&bk| grid.home_reads(bk, j)) {
                    let (home, slot) = grid.w_home(bk, j);
                    for g in 0..grid.cb / 16 {
                        runs.push(Run {
                            tile: home,
                            kernel: self.program.kernel(grid.home_copy()),
                            args: vec![
                                Arg::Address(Place::at(
                                    w_home,
                                    slot * w_slot + g * WEIGHT_ROWS * 16 * eb,
                                )),
                                Arg::Address(Place::at(inbox, grid.inbox_offset(bk, j - first, g))),
                            ],
                        });
                    }
                }
            }
            if !runs.is_empty() {
                runs.sort_by_key(|run| run.tile);
                self.program.run.push(TileStep::Compute {
                    provenance: format!("{provenance}.weights"),
                    runs,
                });
            }
            let phase = self.program.exchange_phases() as u32;
            self.program.run.push(TileStep::Exchange { phase, moves });
            // Every tile's calls into each panel's partial (its own slot).
            let mut runs = Vec::new();
            for r in 0..grid.gm {
                let rows = grid.row_block(r).1;
                for q in 0..grid.gk {
                    let tile = grid.tile(r, q);
                    for j in grid.round_panels(t) {
                        for i in 0..grid.calls_per_panel() {
                            runs.push(Run {
                                tile,
                                kernel: self.program.kernel(grid.call(i)),
                                args: vec![
                                    Arg::Address(Place::at(
                                        producer.buffer,
                                        i * grid.kb / 16 * rows * 16 * eb,
                                    )),
                                    Arg::Address(Place::at(
                                        inbox,
                                        ((j - first) * grid.calls_per_panel() + i)
                                            * grid.panel_bytes(),
                                    )),
                                    Arg::Address(slot_of(j - first, 0)),
                                    Arg::Value(entry(rows)),
                                    Arg::Value(0),
                                    Arg::Value(0),
                                ],
                            });
                        }
                    }
                }
            }
            runs.sort_by_key(|run| run.tile);
            self.program.run.push(TileStep::Compute {
                provenance: provenance.clone(),
                runs,
            });
            // The tree: each level's partials into their receivers' slots, then one
            // reduce-add per received partial (the root's last into the result's slot).
            let tree = grid.tree();
            for level in 1..=grid.levels {
                let mut moves = Vec::new();
                grid.for_each_move(grid.phase(t, level), |from, to, bytes, moved| {
                    let Moved::Partial {
                        j,
                        from: source,
                        to: destination,
                        ..
                    } = moved
                    else {
                        return;
                    };
                    moves.push(super::super::program::Move::between(
                        (from, slot_of(j - first, source)),
                        (to, slot_of(j - first, destination)),
                        bytes,
                    ));
                });
                let phase = self.program.exchange_phases() as u32;
                self.program.run.push(TileStep::Exchange { phase, moves });
                // One reduce-add per received partial (slots a largest block apart: every
                // add spans that many rows), the root's last into the result's slot.
                let kernel = self.program.kernel(grid.reduce(grid.max_rows()));
                let mut runs = Vec::new();
                for r in 0..grid.gm {
                    for j in grid.round_panels(t) {
                        let p = j - first;
                        for (root, adds) in &tree[level as usize - 1].adds {
                            let tile = grid.at(r, j, *root);
                            for (n, &(read, written)) in adds.iter().enumerate() {
                                let destination =
                                    if level == grid.levels && *root == 0 && n + 1 == adds.len() {
                                        Place::at(result, grid.result_slot(j) * partial)
                                    } else {
                                        slot_of(p, written)
                                    };
                                runs.push(Run {
                                    tile,
                                    kernel,
                                    args: vec![
                                        Arg::Address(slot_of(p, read)),
                                        Arg::Address(destination),
                                    ],
                                });
                            }
                        }
                    }
                }
                runs.sort_by_key(|run| run.tile);
                self.program.run.push(TileStep::Compute {
                    provenance: format!("{provenance}.reduce"),
                    runs,
                });
            }
        }
        self.program.ops.push((provenance, "ipu.matmul".into(), 0));
        let mut read = Vec::new();
        for r in 0..grid.gm {
            let (row0, rows) = grid.row_block(r);
            for j in 0..grid.panels {
                panel_pieces(
                    grid.at(r, j, 0),
                    Place::at(result, grid.result_slot(j) * partial),
                    (0, rows * grid.cb),
                    rows,
                    (row0, j * grid.cb),
                    (grid.m, grid.n),
                    pb,
                    &mut read,
                );
            }
        }
        self.read_back.insert(c, read);
        Ok(())
    }
}
