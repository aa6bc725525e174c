//! Kernel cycle models against the published figures, and their shape.

use ipu_device::cost::{
    add_cycles, add_group_bias_cycles, amp_single_tile_cycles, exchange_phase_cycles,
    gemm_call_cycles, ideal_gemm_cycles, kernel_call_cycles, kernel_cycles, CostError,
};
use ipu_device::kernels::spec::{ElementOrder, GeluForm, KernelSpec};
use ipu_device::precision::{MemoryClass, Precision};
use ipu_device::target::Target;

const PRECISIONS: [Precision; 4] = [
    Precision::F32,
    Precision::F16,
    Precision::F8E4M3,
    Precision::F8E5M2,
];

#[test]
fn bow_amp_curve_is_4n_plus_335_within_5_percent() {
    let bow = Target::bow();
    let mut sizes: Vec<u32> = (4..=11).map(|p| 1 << p).collect();
    sizes.extend([24, 48, 100, 300, 1000, 1500, 2000]);
    for n in sizes {
        let model = amp_single_tile_cycles(n, &bow) as f64;
        let published = 4.0 * f64::from(n) + 335.0;
        let error = (model - published).abs() / published;
        assert!(
            error <= 0.05,
            "N = {n}: model {model} vs published {published} ({:.1} %)",
            error * 100.0
        );
    }
}

#[test]
fn bow_amp_curve_reproduces_published_efficiency() {
    let bow = Target::bow();
    // Ideal: 16 x 16 MACs per row at 64 MACs/cycle.
    let efficiency = |n: u32| f64::from(n) * 256.0 / 64.0 / amp_single_tile_cycles(n, &bow) as f64;
    assert!(
        (efficiency(2048) - 0.961).abs() < 0.01,
        "N = 2048: {:.4}",
        efficiency(2048)
    );
    assert!(
        (efficiency(64) - 0.438).abs() < 0.01,
        "N = 64: {:.4}",
        efficiency(64)
    );
}

fn gemm(input: Precision, weights: MemoryClass, k: u32, c: u32, rows: Vec<u32>) -> KernelSpec {
    let partials = if input == Precision::F32 {
        Precision::F32
    } else {
        Precision::F16
    };
    KernelSpec::Gemm {
        input,
        partials,
        weights,
        k,
        c,
        rows,
        accumulate: false,
    }
}

#[test]
fn c600_gemm_call_matches_the_calibrated_formula() {
    let c600 = Target::c600();
    for rows in 1..=64u64 {
        let interleaved = 294 + 64 * rows + 4 * 940;
        let standard = 294 + 64 * rows + 4 * 1063;
        let r = rows as u32;
        assert_eq!(
            gemm_call_cycles(Precision::F16, MemoryClass::Interleaved, 64, 64, r, &c600),
            interleaved
        );
        assert_eq!(
            gemm_call_cycles(Precision::F16, MemoryClass::Standard, 64, 64, r, &c600),
            standard
        );
        let spec = gemm(Precision::F16, MemoryClass::Interleaved, 64, 64, vec![r]);
        assert_eq!(kernel_cycles(&spec, &c600), interleaved);
    }
}

#[test]
fn gemm_generalizes_by_mac_rate_and_weight_bytes() {
    let c600 = Target::c600();
    // FP8 at 128 MACs/cycle: 32 cycles per row for K = 64, C = 64; half the weight bytes.
    assert_eq!(
        gemm_call_cycles(
            Precision::F8E4M3,
            MemoryClass::Interleaved,
            64,
            64,
            10,
            &c600
        ),
        294 + 320 + 4 * 470
    );
    // F32 at 16 MACs/cycle: 256 cycles per row; twice the weight bytes.
    assert_eq!(
        gemm_call_cycles(Precision::F32, MemoryClass::Interleaved, 64, 64, 2, &c600),
        294 + 512 + 4 * 1880
    );
    // C is padded to 16-column groups.
    assert_eq!(
        gemm_call_cycles(Precision::F16, MemoryClass::Interleaved, 64, 17, 4, &c600),
        gemm_call_cycles(Precision::F16, MemoryClass::Interleaved, 64, 32, 4, &c600)
    );
    // Standard-memory weights are slower at every shape.
    for k in [16, 32, 64, 128] {
        let fast = gemm_call_cycles(Precision::F16, MemoryClass::Interleaved, k, 64, 8, &c600);
        let slow = gemm_call_cycles(Precision::F16, MemoryClass::Standard, k, 64, 8, &c600);
        assert!(slow > fast, "k = {k}");
    }
}

#[test]
fn gemm_call_costs_the_selected_row_entry() {
    let c600 = Target::c600();
    let spec = gemm(
        Precision::F8E4M3,
        MemoryClass::Interleaved,
        32,
        64,
        vec![32, 34],
    );
    let r32 = gemm_call_cycles(
        Precision::F8E4M3,
        MemoryClass::Interleaved,
        32,
        64,
        32,
        &c600,
    );
    let r34 = gemm_call_cycles(
        Precision::F8E4M3,
        MemoryClass::Interleaved,
        32,
        64,
        34,
        &c600,
    );
    assert_eq!(
        kernel_call_cycles(&spec, &[0, 0, 0, 0, 0, 0], &c600),
        Ok(r32)
    );
    assert_eq!(
        kernel_call_cycles(&spec, &[0, 0, 0, 1, 0, 0], &c600),
        Ok(r34)
    );
    assert_eq!(kernel_cycles(&spec, &c600), r34);
    let error = kernel_call_cycles(&spec, &[0, 0, 0, 2, 0, 0], &c600).expect_err("no entry 2");
    assert!(matches!(
        error,
        CostError::GemmRowEntry {
            index: 2,
            count: 2,
            ..
        }
    ));
    assert!(error.to_string().contains("entry 2"), "{error}");
    assert!(kernel_call_cycles(&spec, &[0, 0], &c600).is_err());
}

#[test]
fn ideal_gemm_and_the_published_4096_cube_anchor() {
    let c600 = Target::c600();
    let ideal = ideal_gemm_cycles(4096, 4096, 4096, Precision::F16, 1472, &c600);
    assert_eq!(ideal, (4096u64 * 4096 * 4096).div_ceil(64 * 1472));
    // ipu-stack measured 2,262,696 cycles = 32.2 % of peak on hardware.
    let fraction = ideal as f64 / 2_262_696.0;
    assert!((fraction - 0.322).abs() < 0.002, "{fraction}");
    assert_eq!(
        ideal_gemm_cycles(128, 128, 128, Precision::F8E4M3, 1, &c600),
        128 * 128 * 128 / 128
    );
    assert_eq!(ideal_gemm_cycles(1, 1, 1, Precision::F16, 0, &c600), 1);
}

#[test]
fn exchange_phase_is_fixed_cost_plus_busiest_endpoint() {
    let c600 = Target::c600();
    let fixed = u64::from(c600.exchange.phase_cycles.value);
    assert_eq!(exchange_phase_cycles(0, 0, &c600), fixed);
    assert_eq!(exchange_phase_cycles(1000, 4000, &c600), fixed + 1000);
    assert_eq!(exchange_phase_cycles(4001, 4000, &c600), fixed + 1001);
    assert_eq!(exchange_phase_cycles(8, 3, &c600), fixed + 2);
}

#[test]
fn calibrated_vector_kernels() {
    let c600 = Target::c600();
    let add = KernelSpec::Add {
        precision: Precision::F16,
        rows: 4,
        cols: 256,
        b_rows: 1,
    };
    assert_eq!(kernel_cycles(&add, &c600), 1024 / 16 + 11);
    let cast = KernelSpec::Cast {
        from: Precision::F32,
        to: Precision::F8E4M3,
        elements: 800,
    };
    assert_eq!(kernel_cycles(&cast, &c600), 800 * 5 / 8 + 11);
    let gelu = KernelSpec::Gelu {
        precision: Precision::F16,
        form: GeluForm::Tanh,
        elements: 100,
    };
    assert_eq!(kernel_cycles(&gelu, &c600), 1011);
    let erf = KernelSpec::Gelu {
        precision: Precision::F16,
        form: GeluForm::Erf,
        elements: 100,
    };
    assert!(kernel_cycles(&erf, &c600) > kernel_cycles(&gelu, &c600));
    let copy = KernelSpec::Copy { bytes: 800 };
    assert_eq!(kernel_cycles(&copy, &c600), 111);
    let pack = KernelSpec::Rearrange {
        order: ElementOrder::AmpLeft,
        to_amp: true,
        precision: Precision::F16,
        offset: 0,
        rows: 31,
        rows_padded: 32,
        cols: 32,
        cols_padded: 32,
    };
    assert_eq!(kernel_cycles(&pack, &c600), 4 * 32 * 32 + 11);
    let reduce = KernelSpec::ReduceAdd {
        partials_precision: Precision::F16,
        output: Precision::F16,
        elements: 512,
        partials: 1,
    };
    assert_eq!(kernel_cycles(&reduce, &c600), 1024 + 11);
}

#[test]
fn transpose_is_a_per_element_shuffle_and_scale_a_vector_multiply() {
    let c600 = Target::c600();
    let transpose = |precision, rows, cols| KernelSpec::Transpose {
        precision,
        rows,
        cols,
    };
    // 4 cycles per element (the AMP-left pack's shuffle rate) + the 11-cycle launch, whatever
    // the element size, and the same for a block and its transpose.
    for precision in PRECISIONS {
        assert_eq!(
            kernel_cycles(&transpose(precision, 16, 32), &c600),
            4 * 16 * 32 + 11,
            "{precision:?}"
        );
        assert_eq!(
            kernel_cycles(&transpose(precision, 3, 50), &c600),
            kernel_cycles(&transpose(precision, 50, 3), &c600)
        );
    }
    // As expensive per element as packing the same block into the AMP-left order.
    let pack = KernelSpec::Rearrange {
        order: ElementOrder::AmpLeft,
        to_amp: true,
        precision: Precision::F16,
        offset: 0,
        rows: 32,
        rows_padded: 32,
        cols: 32,
        cols_padded: 32,
    };
    assert_eq!(
        kernel_cycles(&transpose(Precision::F16, 32, 32), &c600),
        kernel_cycles(&pack, &c600)
    );
    // Scale runs at the add's vector rate: 16 f16 or 8 f32 elements per cycle, rounded up.
    let scale = |precision, elements| KernelSpec::Scale {
        precision,
        elements,
    };
    assert_eq!(kernel_cycles(&scale(Precision::F16, 1024), &c600), 64 + 11);
    assert_eq!(kernel_cycles(&scale(Precision::F16, 1025), &c600), 65 + 11);
    assert_eq!(kernel_cycles(&scale(Precision::F32, 1024), &c600), 128 + 11);
    let add = KernelSpec::Add {
        precision: Precision::F32,
        rows: 7,
        cols: 33,
        b_rows: 1,
    };
    assert_eq!(
        kernel_cycles(&scale(Precision::F32, 7 * 33), &c600),
        kernel_cycles(&add, &c600)
    );
    // The value is a run-time argument: it does not change the cost.
    assert_eq!(
        kernel_call_cycles(&scale(Precision::F16, 100), &[0, 0, 0], &c600),
        kernel_call_cycles(
            &scale(Precision::F16, 100),
            &[0, 0, f32::MAX.to_bits()],
            &c600
        )
    );
}

#[test]
fn add_group_bias_costs_exactly_an_add_of_its_elements() {
    let c600 = Target::c600();
    let spec = |precision, rows, elements| KernelSpec::AddGroupBias {
        precision,
        rows,
        elements,
    };
    // elements / vector rate (16 f16 or 8 f32 per cycle) + the 11-cycle launch; no per-group
    // term (the target table has no sourced one).
    assert_eq!(
        kernel_cycles(&spec(Precision::F16, 8, 1024), &c600),
        64 + 11
    );
    assert_eq!(kernel_cycles(&spec(Precision::F32, 3, 48), &c600), 6 + 11);
    assert_eq!(kernel_cycles(&spec(Precision::F16, 1, 16), &c600), 1 + 11);
    for target in [Target::c600(), Target::bow()] {
        for precision in [Precision::F16, Precision::F32] {
            for (rows, elements) in [(1u32, 16u32), (4, 144), (64, 4096), (7, 1008)] {
                let cycles = kernel_cycles(&spec(precision, rows, elements), &target);
                assert_eq!(cycles, add_cycles(precision, 1, elements, &target));
                assert_eq!(cycles, add_group_bias_cycles(precision, elements, &target));
                let add = KernelSpec::Add {
                    precision,
                    rows: 1,
                    cols: elements,
                    b_rows: 1,
                };
                assert_eq!(cycles, kernel_cycles(&add, &target));
                // Neither rows nor the run-time start change the cost.
                for start in [0, rows - 1] {
                    assert_eq!(
                        kernel_call_cycles(
                            &spec(precision, rows, elements),
                            &[0, 0, 0, start],
                            &target
                        ),
                        Ok(cycles)
                    );
                }
                assert_eq!(
                    kernel_cycles(&spec(precision, rows + 5, elements), &target),
                    cycles
                );
            }
        }
    }
}

#[test]
fn attention_block_and_finish_cycle_models() {
    let c600 = Target::c600();
    let block = |precision, rows, keys, width, causal| KernelSpec::AttentionBlock {
        precision,
        rows,
        keys,
        width,
        causal,
    };
    // Per row: keys exps at 5 cycles (softmax's exp), then keys * width multiply-adds and width
    // rescales at the F32 vector rate (8/cycle), rounded up once; + the 11-cycle launch.
    // 4 rows, 32 keys, 64 wide: 4 * 32 * 5 = 640 exps, 4 * (32 * 64 + 64) / 8 = 1056.
    assert_eq!(
        kernel_cycles(&block(Precision::F16, 4, 32, 64, false), &c600),
        640 + 1056 + 11
    );
    // 3 rows, 5 keys, 7 wide: 75 + ceil(3 * (35 + 7) / 8) = 75 + 16.
    assert_eq!(
        kernel_cycles(&block(Precision::F32, 3, 5, 7, true), &c600),
        75 + 16 + 11
    );
    // The state is f32 whatever the input, and causal masking (run-time offsets) is not
    // discounted.
    for (rows, keys, width) in [(1, 1, 1), (5, 40, 33), (16, 128, 64)] {
        let f16 = kernel_cycles(&block(Precision::F16, rows, keys, width, false), &c600);
        assert_eq!(
            f16,
            kernel_cycles(&block(Precision::F32, rows, keys, width, false), &c600)
        );
        assert_eq!(
            f16,
            kernel_cycles(&block(Precision::F16, rows, keys, width, true), &c600)
        );
        let expected = u64::from(rows) * u64::from(keys) * 5
            + (u64::from(rows) * (u64::from(keys) * u64::from(width) + u64::from(width)))
                .div_ceil(8)
            + 11;
        assert_eq!(f16, expected, "{rows} x {keys} x {width}");
    }
    // The arguments (scale, offsets) do not change the cost.
    let spec = block(Precision::F16, 4, 32, 64, true);
    assert_eq!(
        kernel_call_cycles(&spec, &[0, 0, 0, 0, 0, 0, 0, 0], &c600),
        kernel_call_cycles(&spec, &[0, 0, 0, 0, 0, f32::MAX.to_bits(), 7, 100], &c600)
    );
    // Finish: one f32 division per element at 8/cycle, rounded up, + launch; the output
    // precision only changes the store.
    let finish = |precision, rows, width| KernelSpec::AttentionFinish {
        precision,
        rows,
        width,
    };
    assert_eq!(
        kernel_cycles(&finish(Precision::F16, 4, 64), &c600),
        32 + 11
    );
    assert_eq!(kernel_cycles(&finish(Precision::F32, 3, 7), &c600), 3 + 11);
    assert_eq!(
        kernel_cycles(&finish(Precision::F16, 5, 33), &c600),
        kernel_cycles(&finish(Precision::F32, 5, 33), &c600)
    );
}

/// One representative spec per variant, built from a size vector so each size can be grown.
fn specs(precision: Precision, sizes: [u32; 4]) -> Vec<(&'static str, KernelSpec)> {
    let mut specs = matrix_specs(precision, sizes);
    specs.extend(elementwise_and_row_specs(precision, sizes));
    specs.extend(attention_specs(precision, sizes));
    specs
}

/// The GEMM, cast and rearrangement specs of [`specs`].
fn matrix_specs(precision: Precision, sizes: [u32; 4]) -> Vec<(&'static str, KernelSpec)> {
    let [first, second, third, fourth] = sizes;
    vec![
        (
            "gemm",
            gemm(
                precision,
                MemoryClass::Interleaved,
                first,
                second,
                vec![third, fourth],
            ),
        ),
        (
            "gemm_standard",
            gemm(precision, MemoryClass::Standard, first, second, vec![third]),
        ),
        (
            "cast_to_f16",
            KernelSpec::Cast {
                from: precision,
                to: Precision::F16,
                elements: first,
            },
        ),
        (
            "cast_from_f32",
            KernelSpec::Cast {
                from: Precision::F32,
                to: precision,
                elements: first,
            },
        ),
        (
            "rearrange",
            KernelSpec::Rearrange {
                order: ElementOrder::AmpLeft,
                to_amp: true,
                precision,
                offset: 0,
                rows: first,
                rows_padded: first.saturating_add(third),
                cols: second,
                cols_padded: second.saturating_add(fourth),
            },
        ),
        (
            "rearrange_row_major",
            KernelSpec::Rearrange {
                order: ElementOrder::RowMajor,
                to_amp: false,
                precision,
                offset: 0,
                rows: first,
                rows_padded: first.saturating_add(third),
                cols: second,
                cols_padded: second.saturating_add(fourth),
            },
        ),
    ]
}

/// The elementwise, row-wise, reduction and data-movement specs of [`specs`].
fn elementwise_and_row_specs(
    precision: Precision,
    sizes: [u32; 4],
) -> Vec<(&'static str, KernelSpec)> {
    let [first, second, third, _] = sizes;
    vec![
        (
            "add",
            KernelSpec::Add {
                precision,
                rows: first,
                cols: second,
                b_rows: 1,
            },
        ),
        (
            "gelu_tanh",
            KernelSpec::Gelu {
                precision,
                form: GeluForm::Tanh,
                elements: first,
            },
        ),
        (
            "gelu_erf",
            KernelSpec::Gelu {
                precision,
                form: GeluForm::Erf,
                elements: first,
            },
        ),
        (
            "softmax",
            KernelSpec::Softmax {
                precision,
                rows: first,
                cols: second,
                causal: third % 2 == 0,
            },
        ),
        (
            "layer_norm",
            KernelSpec::LayerNorm {
                precision,
                rows: first,
                cols: second,
                epsilon_nano: 10,
            },
        ),
        (
            "reduce_add",
            KernelSpec::ReduceAdd {
                partials_precision: precision,
                output: precision,
                elements: first,
                partials: second,
            },
        ),
        ("copy", KernelSpec::Copy { bytes: first }),
        (
            "fill",
            KernelSpec::Fill {
                precision,
                elements: first,
            },
        ),
        (
            "transpose",
            KernelSpec::Transpose {
                precision,
                rows: first,
                cols: second,
            },
        ),
        (
            "scale",
            KernelSpec::Scale {
                precision,
                elements: first,
            },
        ),
    ]
}

/// The attention and group-bias specs of [`specs`].
fn attention_specs(precision: Precision, sizes: [u32; 4]) -> Vec<(&'static str, KernelSpec)> {
    let [first, second, third, fourth] = sizes;
    vec![
        (
            "attention_block",
            KernelSpec::AttentionBlock {
                precision,
                rows: first,
                keys: second,
                width: third,
                causal: fourth % 2 == 0,
            },
        ),
        (
            "attention_finish",
            KernelSpec::AttentionFinish {
                precision,
                rows: first,
                width: second,
            },
        ),
        (
            "add_group_bias",
            KernelSpec::AddGroupBias {
                precision,
                rows: second,
                elements: first.saturating_mul(16),
            },
        ),
    ]
}

#[test]
fn every_variant_costs_more_than_a_launch_and_grows_with_its_sizes() {
    for target in [Target::c600(), Target::bow()] {
        let launch = u64::from(target.kernels.launch_overhead.value);
        for precision in PRECISIONS {
            let base = [1u32, 1, 1, 1];
            for (name, spec) in specs(precision, base) {
                let cycles = kernel_cycles(&spec, &target);
                assert!(
                    cycles > launch,
                    "{name} {precision:?}: {cycles} cycles <= launch {launch}"
                );
            }
            // Grow each size parameter alone through a ladder and check no cost decreases.
            for which in 0..4 {
                let mut previous: Option<Vec<u64>> = None;
                for size in [1u32, 2, 3, 7, 16, 17, 64, 100, 1000, 4096] {
                    let mut sizes = base;
                    sizes[which] = size;
                    let costs: Vec<u64> = specs(precision, sizes)
                        .iter()
                        .map(|(_, spec)| kernel_cycles(spec, &target))
                        .collect();
                    if let Some(previous) = &previous {
                        for ((name, _), (before, after)) in specs(precision, sizes)
                            .iter()
                            .zip(previous.iter().zip(&costs))
                        {
                            assert!(
                                after >= before,
                                "{name} {precision:?}: size {which} -> {size} made it cheaper ({before} -> {after})"
                            );
                        }
                    }
                    previous = Some(costs);
                }
            }
        }
    }
}

#[test]
fn size_parameters_that_scale_the_work_strictly_increase_the_cost() {
    let c600 = Target::c600();
    for precision in PRECISIONS {
        let small = specs(precision, [64, 64, 64, 64]);
        let large = specs(precision, [4096, 4096, 4096, 4096]);
        for ((name, small), (_, large)) in small.iter().zip(&large) {
            assert!(
                kernel_cycles(large, &c600) > kernel_cycles(small, &c600),
                "{name} {precision:?}"
            );
        }
    }
}

#[test]
fn extreme_sizes_saturate_instead_of_overflowing() {
    let c600 = Target::c600();
    for precision in PRECISIONS {
        for (name, spec) in specs(precision, [u32::MAX; 4]) {
            let cycles = kernel_cycles(&spec, &c600);
            // The cheapest per-element model is a 16-lane vector op (F16 or FP8 scale), so
            // u32::MAX elements cost at least u32::MAX / 16; a wrapped count would be far less.
            assert!(
                cycles > u64::from(u32::MAX) / 16,
                "{name} {precision:?}: {cycles}"
            );
        }
    }
    assert_eq!(
        exchange_phase_cycles(u64::MAX, 0, &c600),
        u64::from(c600.exchange.phase_cycles.value) + u64::MAX / 4 + 1
    );
    assert!(ideal_gemm_cycles(u64::MAX, u64::MAX, u64::MAX, Precision::F16, 1, &c600) == u64::MAX);
}

/// A host stream is bounded by the host link (all tiles share it): the ipu-stack upload the
/// rate comes from (453,752,832 B in ~116 ms on a C600) takes ~116 ms of simulated time, and
/// a small stream spread over many tiles costs its bytes over the link, not the busiest tile's
/// bytes at the tile exchange rate.
#[test]
fn host_streams_are_bounded_by_the_host_link() {
    let target = Target::c600();
    let upload = 453_752_832u64;
    let cycles = ipu_device::cost::host_link_cycles(upload, &target);
    let seconds = cycles as f64 / target.clock_hz.value;
    assert!((seconds - 0.116).abs() < 0.001, "{seconds} s");
    // 1 MiB over 1024 tiles (1 KiB each): the link, not the tiles, sets the time.
    let total = 1 << 20;
    let link = ipu_device::cost::host_link_cycles(total, &target);
    assert!(link > 1024 / 4, "{link}");
    assert_eq!(
        ipu_device::cost::host_stream_cycles(1024, total, &target),
        u64::from(target.exchange.phase_cycles.value) + link
    );
    // Even one tile holding a whole stream receives it faster (4 B/cycle at 1.5 GHz) than the
    // C600's link delivers it (3.9 GB/s): the link sets every host step's time.
    assert_eq!(
        ipu_device::cost::host_stream_cycles(4096, 4096, &target),
        u64::from(target.exchange.phase_cycles.value)
            + ipu_device::cost::host_link_cycles(4096, &target)
    );
    assert!(ipu_device::cost::host_link_cycles(4096, &target) > 4096 / 4);
}
