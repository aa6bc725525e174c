//! Stage passes hand their [`TileDesign`] to the next stage in process: reading a large tile
//! module back (dense arrays element by element, weight constants) costs as much as a stage.
//!
//! A stage that writes a tile module keeps the design it wrote, with the module's
//! *fingerprint*: the context, the module op, and every op's name and attributes as MLIR's
//! uniqued pointers. The next stage takes the design only when the module's fingerprint is
//! still the same, which holds exactly when the IR is the one written (attributes are
//! uniqued per context and never freed while it lives: equal pointers, equal values), so a
//! pass that changed anything in between makes the stage read the IR again.
//!
//! The kept designs are per thread: the stage passes of one compile run one after the other
//! on its thread, and compiles on other threads (parallel tests, a Python user's threads)
//! cannot evict them; a design kept on another thread is simply not found (the IR is read).

use std::cell::RefCell;

use melior::ir::{block::BlockLike, operation::OperationLike, OperationRef, RegionLike};

use super::TileDesign;

/// Designs kept at once (one per tile module of the modules being compiled).
const KEPT: usize = 4;

struct Kept {
    fingerprint: Vec<usize>,
    design: TileDesign,
    schedules_validated: bool,
}

thread_local! {
    static KEPT_DESIGNS: RefCell<Vec<Kept>> = const { RefCell::new(Vec::new()) };
}

/// The fingerprint of tile module `module` (see the module docs).
fn fingerprint(module: OperationRef) -> Vec<usize> {
    // SAFETY (all raw reads below): `module` and its ops are live for this call; the calls
    // only read names, attribute handles and the context handle.
    let mut out = vec![
        unsafe { mlir_sys::mlirOperationGetContext(module.to_raw()) }.ptr as usize,
        module.to_raw().ptr as usize,
    ];
    let mut add_op = |op: OperationRef| {
        let raw = op.to_raw();
        out.push(unsafe { mlir_sys::mlirOperationGetName(raw) }.ptr as usize);
        let count = unsafe { mlir_sys::mlirOperationGetNumAttributes(raw) };
        out.push(count as usize);
        for index in 0..count {
            let named = unsafe { mlir_sys::mlirOperationGetAttribute(raw, index) };
            out.push(named.name.ptr as usize);
            out.push(named.attribute.ptr as usize);
        }
        out.push(op.region_count());
    };
    add_op(module);
    if let Some(block) = module.region(0).ok().and_then(|r| r.first_block()) {
        let mut next = block.first_operation();
        while let Some(op) = next {
            add_op(op);
            next = op.next_in_block();
        }
    }
    out
}

/// Keeps `design`, the design tile module `module` was just written from;
/// `schedules_validated`: every stored schedule was validated at the design's addresses.
pub fn keep(module: OperationRef, design: TileDesign, schedules_validated: bool) {
    let fingerprint = fingerprint(module);
    KEPT_DESIGNS.with_borrow_mut(|kept| {
        kept.retain(|entry| entry.fingerprint[..2] != fingerprint[..2]);
        if kept.len() >= KEPT {
            kept.remove(0);
        }
        kept.push(Kept {
            fingerprint,
            design,
            schedules_validated,
        });
    });
}

/// The design tile module `module` holds and whether its schedules were validated at its
/// addresses, if a stage kept it and the module is unchanged since (taken: a later [`keep`]
/// hands on the next one).
pub fn take(module: OperationRef) -> Option<(TileDesign, bool)> {
    let fingerprint = fingerprint(module);
    KEPT_DESIGNS.with_borrow_mut(|kept| {
        let position = kept
            .iter()
            .position(|entry| entry.fingerprint == fingerprint)?;
        let entry = kept.remove(position);
        Some((entry.design, entry.schedules_validated))
    })
}
