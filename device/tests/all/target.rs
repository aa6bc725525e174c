//! The target table: geometry, topology, memory map, peak rates, selection by name.

use std::collections::BTreeSet;

use ipu_device::precision::{MemoryClass, Precision};
use ipu_device::target::{GemmKernelDate, Source, Target, TargetError};

fn targets() -> Vec<Target> {
    vec![Target::c600(), Target::bow()]
}

#[test]
fn tile_count_is_the_physical_grid() {
    for target in targets() {
        assert_eq!(target.geometry.tiles.value, 1472, "{}", target.name);
        assert_eq!(
            target.geometry.physical_rows.value * target.geometry.physical_columns.value,
            1472
        );
        assert_eq!(
            (
                target.geometry.physical_rows.value,
                target.geometry.physical_columns.value
            ),
            (23, 64)
        );
        assert_eq!(target.physical_tiles(), 1472);
    }
}

#[test]
fn logical_to_physical_is_a_bijection_and_inverts() {
    for target in targets() {
        let mut seen = BTreeSet::new();
        for tile in 0..target.geometry.tiles.value {
            let physical = target.logical_to_physical(tile).expect("in range");
            assert!(
                physical.row < 23 && physical.column < 64,
                "tile {tile} -> {physical:?}"
            );
            assert_eq!(physical.index, physical.row * 64 + physical.column);
            assert!(
                seen.insert(physical.index),
                "physical index {} used twice",
                physical.index
            );
            assert_eq!(target.physical_to_logical(physical.index), Ok(tile));
        }
        assert_eq!(seen.len(), 1472);
    }
}

#[test]
fn logical_pairs_are_physical_pairs_and_share_a_bus_only_where_the_table_says() {
    let target = Target::c600();
    assert_eq!(target.exchange.send_bus_tiles.value, 1);
    let mut shared = Target::c600();
    shared.exchange.send_bus_tiles.value = 2;
    assert_eq!(target.exchange.pair_mask.value, 2);
    for k in 0..target.geometry.tiles.value / 2 {
        let even = target.logical_to_physical(2 * k).expect("in range");
        let odd = target.logical_to_physical(2 * k + 1).expect("in range");
        assert_eq!(
            target.physical_pair(even.index),
            Ok(odd.index),
            "logical pair {k}"
        );
        assert_eq!(even.index ^ 2, odd.index);
        assert!(!target.same_bus(even.index, odd.index));
        assert!(!target.logical_same_bus(2 * k, 2 * k + 1));
        assert!(shared.same_bus(even.index, odd.index));
        assert!(shared.logical_same_bus(2 * k, 2 * k + 1));
        assert_eq!(even.row, odd.row);
    }
    // Neighbouring pairs never share a bus; a tile is on its own.
    assert!(!shared.logical_same_bus(1, 2));
    assert!(!shared.same_bus(0, 1));
    assert!(target.same_bus(5, 5));
}

#[test]
fn pairs_snake_down_and_up_column_blocks() {
    // Consecutive logical pairs are vertical neighbours within a column block; a block turns
    // at the top or bottom row into the next block's column (at most 3 columns on).
    let target = Target::c600();
    let rows = target.geometry.physical_rows.value;
    for pair in 1..target.geometry.tiles.value / 2 {
        let a = target
            .logical_to_physical(2 * (pair - 1))
            .expect("in range");
        let b = target.logical_to_physical(2 * pair).expect("in range");
        if pair % rows == 0 {
            assert_eq!(a.row, b.row, "turn at pair {pair}: {a:?} -> {b:?}");
            assert!(a.row == 0 || a.row == rows - 1);
            assert!(
                b.column > a.column && b.column - a.column <= 3,
                "{a:?} -> {b:?}"
            );
        } else {
            assert_eq!(a.column, b.column, "pair {pair}: {a:?} -> {b:?}");
            assert_eq!(a.row.abs_diff(b.row), 1);
        }
    }
}

#[test]
fn topology_rejects_out_of_range_tiles() {
    let target = Target::c600();
    let error = target.logical_to_physical(1472).expect_err("out of range");
    assert!(matches!(
        error,
        TargetError::LogicalTileOutOfRange {
            tile: 1472,
            tiles: 1472,
            ..
        }
    ));
    assert!(error.to_string().contains("1472"), "{error}");
    assert!(target.physical_to_logical(1472).is_err());
    assert!(target.physical_pair(5000).is_err());
    assert!(!target.logical_same_bus(0, 9999));
}

#[test]
fn memory_map_is_consistent() {
    let target = Target::c600();
    let memory = &target.memory;
    assert_eq!(memory.sram_base.value + memory.sram_bytes.value, 0xe8000);
    assert_eq!(memory.sram_bytes.value, 624 * 1024);
    assert_eq!(memory.standard_end.value, memory.interleaved_start.value);
    assert_eq!(target.planned_budget_bytes(), 586_960);
    assert_eq!(
        target.budget_bytes(MemoryClass::Standard) + target.budget_bytes(MemoryClass::Interleaved),
        586_960
    );
    assert!(target.planned_budget_bytes() < memory.loadable_limit.value - memory.sram_base.value);
}

#[test]
fn regions_and_elements() {
    let target = Target::c600();
    assert_eq!(target.region_of(0x4c000), Ok(MemoryClass::Standard));
    assert_eq!(target.region_of(0x7ffff), Ok(MemoryClass::Standard));
    assert_eq!(target.region_of(0x80000), Ok(MemoryClass::Interleaved));
    assert_eq!(target.region_of(0xe7fff), Ok(MemoryClass::Interleaved));
    assert!(target.region_of(0xe8000).is_err());
    assert!(target.region_of(0x4bfff).is_err());
    assert!(target.is_interleaved(0x90000));
    assert!(!target.is_interleaved(0x50000));
    assert!(!target.is_interleaved(0x10));

    let first = target.element_of(0x4c000).expect("in SRAM");
    assert_eq!(
        (first.index, first.start, first.bytes),
        (0, 0x4c000, 16 * 1024)
    );
    let last_standard = target.element_of(0x7ffff).expect("in SRAM");
    assert_eq!((last_standard.index, last_standard.start), (12, 0x7c000));
    // Interleaved memory contends in 32 KiB pairs.
    let first_pair = target.element_of(0x80000).expect("in SRAM");
    assert_eq!((first_pair.index, first_pair.bytes), (13, 32 * 1024));
    assert_eq!(target.element_of(0x87fff).map(|e| e.index), Ok(13));
    assert_eq!(target.element_of(0x88000).map(|e| e.index), Ok(14));
    assert_eq!(target.element_of(0xe7fff).map(|e| e.index), Ok(25));
    assert_eq!(target.element_count(), 26);
    let error = target.element_of(0xe8000).expect_err("outside SRAM");
    assert!(error.to_string().contains("0xe8000"), "{error}");

    assert!(target.is_loadable(0xe7000, 0xbb0));
    assert!(!target.is_loadable(0xe7000, 0xbb1));
    assert!(!target.is_loadable(0x4b000, 16));
}

#[test]
fn peak_flops() {
    let c600 = Target::c600();
    let tflops = |p| c600.peak_flops(p) / 1e12;
    assert!(
        (tflops(Precision::F16) - 282.6).abs() < 0.05,
        "{}",
        tflops(Precision::F16)
    );
    assert!((tflops(Precision::F8E4M3) - 565.2).abs() < 0.05);
    assert!((tflops(Precision::F8E5M2) - 565.2).abs() < 0.05);
    assert!((tflops(Precision::F32) - 70.65).abs() < 0.05);
    assert_eq!(c600.peak_flops_per_tile_cycle(Precision::F16), 128);
    let bow = Target::bow();
    assert!((bow.peak_flops(Precision::F16) / 1e12 - 348.6).abs() < 0.1);
}

#[test]
fn by_name_selects_and_errors_list_known_targets() {
    for name in ["c600", "ipu21", "sim:c600"] {
        assert_eq!(
            Target::by_name(name).map(|t| t.name),
            Ok("c600".to_string())
        );
    }
    assert_eq!(Target::by_name("bow").map(|t| t.clock_hz.value), Ok(1.85e9));
    let error = Target::by_name("gc2").expect_err("unknown");
    let message = error.to_string();
    assert!(message.contains("gc2"), "{message}");
    for known in Target::NAMES {
        assert!(message.contains(known), "{message} should list {known}");
    }
}

/// The dated C600s differ from the table's only in the AMP GEMM weight feed, with their
/// sources (5caa8bf's published, 6d83c64's fitted to the GEMM 4096^3 replay, its interleaved
/// feed derived from the published gap), and in scheduling exchanges as the measured runs
/// did. Every name round-trips.
#[test]
fn dated_targets_carry_their_kernel_constants() {
    use ipu_device::target::{
        GemmKernelDate, Replay, Source, JULY_ATTENTION_MERGE, JULY_ATTENTION_UPDATE,
        JULY_GEMM_FEED_STANDARD,
    };
    for name in Target::NAMES {
        assert_eq!(
            Target::by_name(&format!("sim:{name}")).map(|t| t.name),
            Ok(name.to_string())
        );
    }
    let c600 = Target::c600();
    let august = Target::by_name("c600-5caa8bf").unwrap();
    let july = Target::c600_dated(GemmKernelDate::July);
    let feeds = |t: &Target| {
        (
            t.kernels.gemm_weight_feed_interleaved,
            t.kernels.gemm_weight_feed_standard,
        )
    };
    assert_eq!(feeds(&c600).0.value, 940);
    assert_eq!(feeds(&august).0.value, 1157);
    assert_eq!(feeds(&august).1.value, 1280);
    assert_eq!(feeds(&august).1.source, Source::HwC600);
    assert_eq!(feeds(&july).1.value, JULY_GEMM_FEED_STANDARD);
    assert_eq!(feeds(&july).1.source, Source::Fitted(Replay::Gemm4096));
    assert_eq!(feeds(&july).0.value, JULY_GEMM_FEED_STANDARD - 123);
    assert_eq!(feeds(&july).0.source, Source::Derived);
    let fitted = Source::Fitted(Replay::FlashAttentionH768AndB8);
    for (constant, value) in [
        (
            &july.kernels.attention_rows_update_per_panel_row,
            JULY_ATTENTION_UPDATE,
        ),
        (
            &july.kernels.attention_rows_merge_per_panel_row,
            JULY_ATTENTION_MERGE,
        ),
    ] {
        assert_eq!(
            constant.as_ref().map(|c| (c.value, c.source)),
            Some((value, fitted))
        );
    }
    assert!(august.kernels.attention_rows_update_per_panel_row.is_none());
    assert!(c600.kernels.attention_rows_merge_per_panel_row.is_none());
    // Everything else is the table's.
    for dated in [&august, &july] {
        let mut same = (*dated).clone();
        same.name = c600.name.clone();
        same.kernels.gemm_weight_feed_interleaved = c600.kernels.gemm_weight_feed_interleaved;
        same.kernels.gemm_weight_feed_standard = c600.kernels.gemm_weight_feed_standard;
        // ... the July flash attention's softmax and merge ...
        same.kernels.attention_rows_update_per_panel_row = None;
        same.kernels.attention_rows_merge_per_panel_row = None;
        // ... and the measured runs' exchange scheduler.
        assert!(dated.exchange.anchor_schedule.value);
        assert!(!c600.exchange.anchor_schedule.value);
        same.exchange.anchor_schedule = c600.exchange.anchor_schedule;
        assert_eq!(same, c600);
    }
}

#[test]
fn every_constant_has_a_source_tag() {
    // The table serializes with a source next to every value; count that nothing is untagged.
    for target in [Target::c600(), Target::c600_dated(GemmKernelDate::July)] {
        let json = serde_json::to_value(&target).expect("serializable");
        let mut untagged = Vec::new();
        walk(&json, &mut untagged, "target");
        assert!(
            untagged.is_empty(),
            "{}: constants without a source tag: {untagged:?}",
            target.name
        );
    }
    fn walk(value: &serde_json::Value, untagged: &mut Vec<String>, path: &str) {
        if let Some(object) = value.as_object() {
            if object.contains_key("value") {
                assert!(object.contains_key("source"), "{path} has no source");
                return;
            }
            for (key, child) in object {
                walk(child, untagged, &format!("{path}.{key}"));
            }
        } else if !value.is_string() {
            untagged.push(path.to_string());
        }
    }
    assert_eq!(Target::c600().clock_hz.source, Source::HwC600);
}
