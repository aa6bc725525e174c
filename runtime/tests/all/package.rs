//! The package format: round trips, determinism, layout, and validation of what a package
//! adds to its image.

use ipu_device::image::Step;
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
    assert_eq!(sections.len(), 9);
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
