//! The package format: round trips, determinism, layout, and validation of what a package
//! adds to its image.

use ipu_device::image::Step;
use ipu_device::Precision;
use ipu_runtime::package::{FileLayout, PACKAGE_FORMAT_VERSION};
use ipu_runtime::{BindingRole, Package, PackageError};

use crate::fixture;
use crate::lock::scratch;

fn refused(package: &Package) -> String {
    let error = package.to_bytes().expect_err("validation refuses it");
    error.to_string()
}

#[test]
fn round_trip_is_exact_and_deterministic() {
    let package = fixture::package();
    let bytes = package.to_bytes().unwrap();
    assert_eq!(
        bytes,
        fixture::package().to_bytes().unwrap(),
        "same input, same bytes"
    );
    let (read, layout) = Package::from_bytes_with_layout(&bytes).unwrap();
    assert_eq!(read, package);
    assert_eq!(read.compiler, "0.1.0");
    assert_eq!(&bytes[8..12], PACKAGE_FORMAT_VERSION.to_le_bytes());

    // The layout points at the bytes themselves.
    let FileLayout {
        file_bytes,
        sections,
        segments,
        weights,
        objects,
    } = layout;
    assert_eq!(file_bytes, bytes.len() as u64);
    assert_eq!(sections.len(), 10);
    assert_eq!(segments.len(), fixture::TILES as usize);
    let (_, offset, length) = &weights[0];
    let bias = &package.binding("b").unwrap().data;
    assert_eq!(
        &bytes[*offset as usize..(*offset + *length) as usize],
        bias.as_slice()
    );
    assert_eq!(objects.len(), 1);
}

#[test]
fn write_is_atomic_and_read_back() {
    let dir = scratch("package-write");
    let path = dir.join("model.ipuexe");
    fixture::package().write(&path).unwrap();
    // Overwriting leaves no temporary files behind.
    fixture::package().write(&path).unwrap();
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["model.ipuexe"]);
    assert_eq!(Package::read(&path).unwrap(), fixture::package());
    let missing = Package::read(&dir.join("absent.ipuexe")).unwrap_err();
    assert!(missing.to_string().contains("absent.ipuexe"), "{missing}");
}

#[test]
fn identical_objects_are_stored_once() {
    let mut package = fixture::package();
    let object = package.objects.values().next().unwrap().clone();
    package.embed_object(0, object).unwrap();
    assert_eq!(package.objects.len(), 1);
    assert_eq!(package.kernels[0].object, package.kernels[1].object);
    let bytes = package.to_bytes().unwrap();
    let (read, layout) = Package::from_bytes_with_layout(&bytes).unwrap();
    assert_eq!(read, package);
    assert_eq!(layout.objects.len(), 1);
}

#[test]
fn image_errors_are_refused() {
    let mut package = fixture::package();
    let base = package.image.tiles[0].segments[0].address;
    package.image.add_segment(0, base + 16, vec![1; 8]);
    assert!(refused(&package).contains("overlap"));

    let mut package = fixture::package();
    package.image.add_segment(5000, base, vec![1; 8]);
    assert!(refused(&package).contains("tile 5000 is out of range"));

    let mut package = fixture::package();
    package.image.target = "gc200".into();
    assert!(refused(&package).contains("unknown target 'gc200'"));
}

#[test]
fn binding_errors_are_refused() {
    let mut package = fixture::package();
    package.bindings[0].pieces[1].address += 4;
    assert!(refused(&package).contains("differs from its stream slice"));

    let mut package = fixture::package();
    package.bindings[0].shape = vec![3, 8];
    assert!(refused(&package).contains("the tensor has 96 bytes"));

    let mut package = fixture::package();
    package.bindings[0].shape = vec![u64::MAX, 4];
    assert!(refused(&package).contains("overflows"));

    let mut package = fixture::package();
    package.bindings[2].pieces[2].offset = 0;
    assert!(refused(&package).contains("more than one tile slice"));

    let mut package = fixture::package();
    package.bindings[0].shape = vec![5, 8];
    assert!(refused(&package).contains("are in no piece"));

    let mut package = fixture::package();
    package.bindings[1].data.pop();
    assert!(refused(&package).contains("holds 31 data bytes, expected 32"));

    let mut package = fixture::package();
    package.bindings[2].role = BindingRole::Input;
    assert!(refused(&package).contains("is an input but stream 'y' is DeviceToHost"));

    let mut package = fixture::package();
    package.bindings[0].scale_exp = 3;
    assert!(refused(&package).contains("carry no scale"));

    let mut package = fixture::package();
    package.bindings.remove(0);
    assert!(refused(&package).contains("streams 'x', which no binding describes"));
}

#[test]
fn call_plan_and_kernel_errors_are_refused() {
    let mut package = fixture::package();
    package.calls[1].program = "train".into();
    assert!(refused(&package).contains("unknown program 'train'"));

    let mut package = fixture::package();
    package.profile_plan.ops[0].provenance = "loc(unknown)".into();
    assert!(refused(&package).contains("matches no compute step"));

    let mut package = fixture::package();
    package.kernels[0].name = "gemm".into();
    assert!(refused(&package).contains("recorded as 'gemm'"));

    let mut package = fixture::package();
    package.kernels[1].object = None;
    assert!(refused(&package).contains("used by no kernel"));

    let mut package = fixture::package();
    package.objects.values_mut().next().unwrap().bytes.push(0);
    assert!(refused(&package).contains("hashes to"));

    let mut package = fixture::package();
    package.device_config.writes[0].value = 0;
    assert!(refused(&package).contains("is outside 1..=1000000"));
}

#[test]
fn phases_are_the_host_steps_of_the_program() {
    let package = fixture::package();
    let phases = package.call("run").unwrap().phases(&package.image);
    let streams: Vec<_> = phases.iter().map(|p| (p.step, p.stream.as_str())).collect();
    assert_eq!(streams, [(0, "x"), (4, "y")]);
    assert!(matches!(
        package.image.program("run").unwrap().steps[1],
        Step::Repeat { .. }
    ));
}

#[test]
fn tensors_gather_and_scatter_through_pieces() {
    let package = fixture::package();
    let y = package.binding("y").unwrap();
    let tensor: Vec<u8> = (0..128u8).collect();
    let stream = y.to_stream(&tensor).unwrap();
    // Tile 0's slice holds row 3.
    assert_eq!(&stream[..32], &tensor[96..128]);
    assert_eq!(y.from_stream(&stream).unwrap(), tensor);
    let error = y.to_stream(&tensor[..100]).unwrap_err();
    assert!(matches!(error, PackageError::TensorLength { .. }));
}

/// A file with a valid checksum but invalid content (as a buggy or hostile writer would make
/// it) is refused by the reader's own validation.
#[test]
fn reader_validates_what_the_writer_would_have_refused() {
    let read_error = |package: &Package| {
        let bytes = package.to_bytes_unvalidated().unwrap();
        Package::from_bytes(&bytes).unwrap_err().to_string()
    };
    let mut package = fixture::package();
    let base = package.image.tiles[0].segments[0].address;
    package.image.add_segment(0, base + 8, vec![1; 8]);
    assert!(read_error(&package).contains("overlap"));

    let mut package = fixture::package();
    package.bindings[0].pieces[0].offset = 1 << 40;
    let error = read_error(&package);
    assert!(error.contains("the tensor has 128 bytes"), "{error}");

    let mut package = fixture::package();
    package.image.streams[0].slices[0].address = 0x10;
    package.bindings[0].pieces[0].address = 0x10;
    let error = read_error(&package);
    assert!(error.contains("outside SRAM"), "{error}");

    let mut package = fixture::package();
    package.image.format_version = 99;
    let error = read_error(&package);
    assert!(error.contains("image format version 99"), "{error}");
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Strided pieces gather each tile's slice run by run: the transposed `x` puts row t of the
/// original input on tile t, and scattering gives the tensor back.
#[test]
fn strided_pieces_gather_and_scatter_run_by_run() {
    let package = fixture::transposed_package();
    let (tiles, cols) = (fixture::TILES as usize, fixture::COLS as usize);
    let x = fixture::input();
    let xt = f32_bytes(&fixture::transpose(&x, tiles, cols));
    let binding = package.binding("x").unwrap();
    let stream = binding.to_stream(&xt).unwrap();
    assert_eq!(stream, f32_bytes(&x), "tile t's slice is row t of x");
    assert_eq!(binding.from_stream(&stream).unwrap(), xt);
    // The output: tile t holds row t - 1 of y, which is column t - 1 of the bound y^T.
    let y = package.binding("y").unwrap();
    let tensor: Vec<u8> = (0..128u8).collect();
    let stream = y.to_stream(&tensor).unwrap();
    let column = |c: usize| -> Vec<u8> {
        (0..cols)
            .flat_map(|r| tensor[(r * tiles + c) * 4..][..4].to_vec())
            .collect()
    };
    assert_eq!(&stream[..32], column(tiles - 1).as_slice());
    assert_eq!(&stream[32..64], column(0).as_slice());
    assert_eq!(y.from_stream(&stream).unwrap(), tensor);
    // Runs that overlap (stride below the run length) gather the same bytes twice.
    let mut overlapping = binding.clone();
    overlapping.pieces[0].runs = 2;
    overlapping.pieces[0].stride = 8;
    overlapping.pieces[0].offset = 0;
    let stream = overlapping.to_stream(&xt).unwrap();
    assert_eq!(&stream[..16], &xt[..16]);
    assert_eq!(&stream[16..32], &xt[8..24]);
}

#[test]
fn strided_packages_round_trip() {
    let package = fixture::transposed_package();
    let bytes = package.to_bytes().unwrap();
    assert_eq!(&bytes[8..12], PACKAGE_FORMAT_VERSION.to_le_bytes());
    assert_eq!(Package::from_bytes(&bytes).unwrap(), package);
}

/// Padded pieces: each run's last `pad` bytes are zeros on the device, written by the
/// host and dropped when read back; a piece of padding only carries zeros. A 3 x 3 f32
/// tensor streamed as 3 runs of 12 tensor bytes and 4 zero bytes, then 8 zero bytes.
#[test]
fn padded_pieces_write_zeros_and_drop_them_on_read() {
    use ipu_runtime::package::{Binding, BindingPiece};
    let tensor = f32_bytes(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    let binding = Binding {
        name: "x".into(),
        role: BindingRole::Input,
        stream: "x".into(),
        precision: Precision::F32,
        scale_exp: 0,
        shape: vec![3, 3],
        iterations: 1,
        pieces: vec![
            BindingPiece {
                runs: 3,
                stride: 12,
                pad: 4,
                ..BindingPiece::contiguous(0, 0, 0, 48)
            },
            BindingPiece {
                pad: 8,
                ..BindingPiece::contiguous(0, 48, 0, 8)
            },
        ],
        data: Vec::new(),
    };
    let stream = binding.to_stream(&tensor).unwrap();
    let expected = f32_bytes(&[
        1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0, 0.0, 7.0, 8.0, 9.0, 0.0, 0.0, 0.0,
    ]);
    assert_eq!(stream, expected);
    // Read back (whatever the device holds in the padding), the tensor without it.
    let mut device = stream.clone();
    device[12..16].copy_from_slice(&f32_bytes(&[42.0]));
    device[48..56].copy_from_slice(&f32_bytes(&[-1.0, -2.0]));
    assert_eq!(binding.from_stream(&device).unwrap(), tensor);
    // Padding longer than a run is refused by the gather, not a panic.
    let mut long = binding.clone();
    long.pieces[0].pad = 20;
    let error = long.to_stream(&tensor).unwrap_err().to_string();
    assert!(
        error.contains("pads each of its 16-byte runs with 20 zero bytes"),
        "{error}"
    );
}

/// A stack streamed one slice per write: the stream is each slice's gather in turn (the
/// pieces place one slice, slice e's tensor offsets moved by e slices); a binding whose
/// slices are not its leading axis, or an output in slices, is refused.
#[test]
fn sliced_bindings_stream_one_slice_per_write() {
    use ipu_runtime::package::{Binding, BindingPiece};
    // A 3 x 2 x 2 f32 stack; each slice is read transposed (two runs of 4 bytes, 8 apart).
    let tensor = f32_bytes(&(0..12).map(|v| v as f32).collect::<Vec<_>>());
    let binding = Binding {
        name: "ws".into(),
        role: BindingRole::Input,
        stream: "ws".into(),
        precision: Precision::F32,
        scale_exp: 0,
        shape: vec![3, 2, 2],
        iterations: 3,
        pieces: vec![
            BindingPiece {
                runs: 2,
                stride: 8,
                ..BindingPiece::contiguous(0, 0, 0, 8)
            },
            BindingPiece {
                runs: 2,
                stride: 8,
                ..BindingPiece::contiguous(0, 8, 4, 8)
            },
        ],
        data: Vec::new(),
    };
    assert_eq!(binding.slice_bytes(), Some(16));
    let expected: Vec<f32> = [0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11]
        .iter()
        .map(|&v| v as f32)
        .collect();
    assert_eq!(binding.to_stream(&tensor).unwrap(), f32_bytes(&expected));
    // Slices that are not the leading axis.
    let mut uneven = binding.clone();
    uneven.iterations = 5;
    let error = uneven.to_stream(&tensor).unwrap_err().to_string();
    assert!(
        error.contains("binding 'ws' is streamed in 5 slices but its shape is [3, 2, 2]"),
        "{error}"
    );
}

/// A change to the fixture package.
type Mutation = fn(&mut Package);

/// Each rule of a strided piece, with the binding, piece and run in the message. The writer
/// refuses them and so does the reader of a file an unvalidated writer made.
#[test]
fn strided_piece_errors_are_refused() {
    let cases: [(Mutation, &str); 14] = [
        (
            |p| p.bindings[2].iterations = 2,
            "binding 'y' is streamed in 2 slices but its shape is",
        ),
        (
            |p| p.bindings[0].pieces[1].pad = 8,
            "binding 'x' piece 1 pads each of its 4-byte runs with 8 zero bytes",
        ),
        (
            |p| p.bindings[0].pieces[1].pad = 2,
            "binding 'x' piece 1 pads each of its 4-byte runs with 2 zero bytes",
        ),
        // A run of padding only reads nothing: column 1 comes from nowhere.
        (
            |p| p.bindings[0].pieces[1].pad = 4,
            "binding 'x': tensor bytes 4..8 are in no piece",
        ),
        (
            |p| p.bindings[0].pieces[1].runs = 0,
            "binding 'x' piece 1 has 0 runs of 32 bytes: runs must be at least 1 and divide the bytes",
        ),
        (
            |p| p.bindings[0].pieces[2].runs = 3,
            "binding 'x' piece 2 has 3 runs of 32 bytes",
        ),
        // 16 runs of 2 bytes split f32 elements.
        (
            |p| p.bindings[0].pieces[0].runs = 16,
            "binding 'x' piece 0 run 0 (tensor bytes 0..2) splits 4-byte elements",
        ),
        (
            |p| p.bindings[0].pieces[1].offset = 6,
            "binding 'x' piece 1 run 0 (tensor bytes 6..10) splits 4-byte elements",
        ),
        (
            |p| p.bindings[0].pieces[1].stride = 18,
            "binding 'x' piece 1 run 1 (tensor bytes 22..26) splits 4-byte elements",
        ),
        // The last run of tile 3's column starts past the last row.
        (
            |p| p.bindings[0].pieces[3].offset = 16,
            "binding 'x' piece 3 run 7 covers tensor bytes 128..132, the tensor has 128 bytes",
        ),
        (
            |p| p.bindings[2].pieces[3].offset = 20,
            "binding 'y' piece 3 run 7 covers tensor bytes 132..136, the tensor has 128 bytes",
        ),
        (
            |p| p.bindings[1].pieces[0].stride = 32,
            "binding 'b' piece 0 is one run but records stride 32",
        ),
        // Tiles 2 and 3 both gather column 2; column 3 comes from nowhere.
        (
            |p| p.bindings[0].pieces[3].offset = 8,
            "binding 'x': tensor bytes 12..16 are in no piece (the next run is piece 0 run 1)",
        ),
        // Tile 1 reads every other element of the first rows: its run 1 is also column 2.
        (
            |p| p.bindings[2].pieces[1].stride = 8,
            "binding 'y': output bytes 8..12 are read from more than one tile slice (piece 1 run 1 and piece 3 run 0)",
        ),
    ];
    for (mutate, expected) in cases {
        let mut package = fixture::transposed_package();
        mutate(&mut package);
        let written = refused(&package);
        assert!(
            written.contains(expected),
            "expected '{expected}' in: {written}"
        );
        let bytes = package.to_bytes_unvalidated().unwrap();
        let read = Package::from_bytes(&bytes).unwrap_err().to_string();
        assert_eq!(read, written);
    }
}

/// Unvalidated strided bindings give errors from the gather and scatter, never a panic.
#[test]
fn unvalidated_strided_bindings_do_not_panic() {
    let package = fixture::transposed_package();
    let tensor = vec![0u8; 128];
    for (runs, stride, offset) in [(0, 16, 0), (3, 16, 0), (8, u64::MAX, 0), (8, 16, u64::MAX)] {
        let mut binding = package.binding("x").unwrap().clone();
        binding.pieces[2].runs = runs;
        binding.pieces[2].stride = stride;
        binding.pieces[2].offset = offset;
        let error = binding.to_stream(&tensor).unwrap_err().to_string();
        assert!(error.contains("binding 'x' piece 2"), "{error}");
        let error = binding.from_stream(&tensor).unwrap_err().to_string();
        assert!(error.contains("binding 'x' piece 2"), "{error}");
    }
}

/// A 1024 x 1024 f16 tensor streamed column by column (every element its own run: about a
/// million runs per binding, an input and an output) validates, gathers and scatters in
/// well under a second on an optimized build; a per-run allocation or a quadratic check
/// would not.
#[test]
fn a_million_strided_runs_validate_and_stream_quickly() {
    use ipu_device::image::{DeviceImage, StreamBinding, StreamDirection, StreamSlice};
    use ipu_device::{Precision, Target};
    use ipu_runtime::{Binding, BindingPiece};

    const N: u32 = 1024;
    const COLUMN: u32 = N * 2;
    const COLUMNS_PER_TILE: u32 = 16;
    let base = Target::c600().memory.sram_base.value;
    let mut image = DeviceImage::new("c600");
    let mut bindings = Vec::new();
    for (name, direction, role, region) in [
        (
            "t",
            StreamDirection::HostToDevice,
            BindingRole::Input,
            0x10000,
        ),
        (
            "u",
            StreamDirection::DeviceToHost,
            BindingRole::Output,
            0x20000,
        ),
    ] {
        let pieces: Vec<BindingPiece> = (0..N)
            .map(|column| BindingPiece {
                tile: column / COLUMNS_PER_TILE,
                address: base + region + column % COLUMNS_PER_TILE * COLUMN,
                offset: u64::from(column) * 2,
                bytes: COLUMN,
                runs: N,
                stride: u64::from(COLUMN),
                pad: 0,
            })
            .collect();
        image.streams.push(StreamBinding {
            name: name.into(),
            direction,
            slices: pieces
                .iter()
                .map(|p| StreamSlice {
                    tile: p.tile,
                    address: p.address,
                    bytes: p.bytes,
                })
                .collect(),
        });
        bindings.push(Binding {
            name: name.into(),
            role,
            stream: name.into(),
            precision: Precision::F16,
            scale_exp: 0,
            shape: vec![u64::from(N), u64::from(N)],
            iterations: 1,
            pieces,
            data: Vec::new(),
        });
    }
    let mut package = Package::new("transpose", image);
    package.bindings = bindings;
    let started = std::time::Instant::now();
    package.validate().expect("two million runs validate");
    let validated = started.elapsed();
    let tensor: Vec<u8> = (0..N * N)
        .flat_map(|i| (i as u16).wrapping_mul(7).to_le_bytes())
        .collect();
    let started = std::time::Instant::now();
    let stream = package.bindings[0].to_stream(&tensor).unwrap();
    let back = package.bindings[1].from_stream(&stream).unwrap();
    let streamed = started.elapsed();
    eprintln!("2 x {N}^2 runs: validated in {validated:?}, gathered and scattered in {streamed:?}");
    // The stream is the tensor transposed: column c is slice c.
    let element = |bytes: &[u8], i: usize| u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]);
    for (c, r) in [(0, 0), (1, 0), (0, 1), (517, 300), (1023, 1023)] {
        assert_eq!(
            element(&stream, c * N as usize + r),
            element(&tensor, r * N as usize + c)
        );
    }
    assert_eq!(back, tensor);
    // Generous bounds: they catch a quadratic check, not a slow machine.
    assert!(validated.as_secs() < 30 && streamed.as_secs() < 30);
}
