//! `ipu inspect` views of the fixture package.

use ipu_runtime::inspect;
use ipu_runtime::Package;

use crate::fixture;

fn read_back() -> (Package, ipu_runtime::package::FileLayout) {
    let bytes = fixture::package().to_bytes().unwrap();
    Package::from_bytes_with_layout(&bytes).unwrap()
}

#[test]
fn summary_names_everything_once() {
    let (package, layout) = read_back();
    let text = inspect::summary(&package, &layout);
    for expected in [
        "package add-roll (compiler 0.1.0, format 6,",
        "target c600 (1472 tiles); 4 tiles with images, 128 segment bytes",
        "kernels: 2 (1 with embedded objects, 1 distinct objects, 1 by spec)",
        "add_f32_r1_c8_b1  by spec",
        "run: 5 steps: 1 compute (4 kernel runs), 1 exchange (4 transfers), 0 sync, 1 repeat, 2 host",
        "initialize: command 0, program initialize, 1 phases [->b]",
        "run: command 0, program run, 2 phases [->x <-y]",
        "weight b F32 [8] over 4 tiles",
        "ipu.add loc(\"model.mlir\":3:10): kernel model 1 cycles, estimated 20",
        "exchange.sync_cycles = 90",
        "data",
    ] {
        assert!(text.contains(expected), "missing '{expected}' in:\n{text}");
    }
}

#[test]
fn bindings_view_lists_pieces_and_weight_offsets() {
    let (package, layout) = read_back();
    let text = inspect::bindings(&package, &layout);
    // Offsets are printed with thousands separators.
    let offset = layout.weights[0].1;
    assert!((1000..1_000_000).contains(&offset));
    let printed = format!("{},{:03}", offset / 1000, offset % 1000);
    assert!(
        text.contains(&format!("data at file offset {printed} (32 bytes)")),
        "{text}"
    );
    assert!(
        text.contains("output y: F32 [4, 8], 128 bytes, stream 'y', 4 pieces"),
        "{text}"
    );
    // Tile 0 holds row 3 of y.
    assert!(
        text.contains("tile    0 0x5c000..0x5c020 <-> tensor bytes 96..128"),
        "{text}"
    );
}

#[test]
fn tile_view_shows_what_touches_the_tile() {
    let (package, layout) = read_back();
    let text = inspect::tile(&package, &layout, 1).unwrap();
    for expected in [
        "tile 1 (physical row 0, column 2)",
        "segments: 1",
        "run step 2 compute loc(\"model.mlir\":3:10): add_f32_r1_c8_b1 args [4000, 8000, c000]",
        "run step 3 exchange phase 0: send 32 bytes from 0x58000 at slot 8",
        "receive 32 bytes from tile 0 into 0x5c000 at slot 0",
        "run step 4 host read 'y'",
        "initialize step 0 host write 'b'",
    ] {
        assert!(text.contains(expected), "missing '{expected}' in:\n{text}");
    }
    let error = inspect::tile(&package, &layout, 1472).unwrap_err();
    assert!(error.to_string().contains("tiles 0..1472"), "{error}");
}
