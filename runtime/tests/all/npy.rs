//! `.npy` files and seeded generators.

use ipu_runtime::npy::{NpyDtype, Sigma, Tensor};

use crate::lock::scratch;

#[test]
fn npy_round_trips_in_f32_and_f16() {
    let tensor = Tensor::new(
        vec![2, 3, 4],
        (0..24).map(|v| v as f32 * 0.25 - 2.0).collect(),
    )
    .unwrap();
    for dtype in [NpyDtype::F32, NpyDtype::F16] {
        let bytes = tensor.to_npy(dtype);
        // NumPy aligns the data to 64 bytes.
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        assert_eq!(Tensor::from_npy(&bytes, "t.npy").unwrap(), tensor);
    }
    let path = scratch("npy").join("t.npy");
    tensor.write(&path, NpyDtype::F32).unwrap();
    assert_eq!(Tensor::read(&path).unwrap(), tensor);
}

#[test]
fn npy_reads_numpy_spellings() {
    // As numpy 1.x writes a 1-D float32 array, and a version 2.0 header with a scalar.
    let mut file = b"\x93NUMPY\x01\x00".to_vec();
    let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }          \n";
    file.extend_from_slice(&(header.len() as u16).to_le_bytes());
    file.extend_from_slice(header.as_bytes());
    for v in [1.0f32, 2.0, 3.0] {
        file.extend_from_slice(&v.to_le_bytes());
    }
    let tensor = Tensor::from_npy(&file, "a.npy").unwrap();
    assert_eq!((tensor.shape, tensor.data), (vec![3], vec![1.0, 2.0, 3.0]));

    let mut file = b"\x93NUMPY\x02\x00".to_vec();
    let header = "{\"shape\": (), \"fortran_order\": False, \"descr\": \"<f2\"}\n";
    file.extend_from_slice(&(header.len() as u32).to_le_bytes());
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(&half::f16::from_f32(1.5).to_le_bytes());
    let tensor = Tensor::from_npy(&file, "s.npy").unwrap();
    assert_eq!((tensor.shape, tensor.data), (vec![], vec![1.5]));
}

#[test]
fn npy_headers_are_validated() {
    let good = Tensor::new(vec![2], vec![1.0, 2.0])
        .unwrap()
        .to_npy(NpyDtype::F32);
    let with_header = |header: &str, data: usize| {
        let mut file = b"\x93NUMPY\x01\x00".to_vec();
        file.extend_from_slice(&(header.len() as u16).to_le_bytes());
        file.extend_from_slice(header.as_bytes());
        file.extend(std::iter::repeat_n(0u8, data));
        Tensor::from_npy(&file, "bad.npy").unwrap_err().to_string()
    };
    assert!(with_header(
        "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
        8
    )
    .contains("dtype '>f4' is not supported"));
    assert!(with_header(
        "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
        16
    )
    .contains("dtype '<i8'"));
    assert!(with_header(
        "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }",
        8
    )
    .contains("Fortran"));
    assert!(with_header(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
        8
    )
    .contains("shape [3] has 12 bytes of data, the file holds 8"));
    assert!(with_header(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }",
        8
    )
    .contains("the file holds 8"));
    assert!(with_header("{'descr': '<f4', 'shape': (2,), }", 8).contains("missing 'fortran_order'"));
    assert!(with_header("['descr']", 8).contains("not a dict"));
    let mut bad_version = good.clone();
    bad_version[6] = 9;
    assert!(Tensor::from_npy(&bad_version, "v.npy")
        .unwrap_err()
        .to_string()
        .contains("version 9.0"));
    assert!(Tensor::from_npy(b"PK\x03\x04zip", "z.npy")
        .unwrap_err()
        .to_string()
        .contains("bad magic"));
}

#[test]
fn gaussian_inputs_are_seeded_with_the_documented_sigma() {
    let a = Tensor::gaussian(vec![256, 256], Sigma::INPUT, 42);
    assert_eq!(a, Tensor::gaussian(vec![256, 256], Sigma::INPUT, 42));
    assert_ne!(a, Tensor::gaussian(vec![256, 256], Sigma::INPUT, 43));
    let n = a.data.len() as f64;
    let mean = a.data.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    let var = a
        .data
        .iter()
        .map(|&v| (f64::from(v) - mean).powi(2))
        .sum::<f64>()
        / n;
    assert!(mean.abs() < 0.01, "{mean}");
    assert!((var.sqrt() - 1.0).abs() < 0.01, "{}", var.sqrt());
    let w = Tensor::gaussian(vec![1024, 64], Sigma::weight(1024), 1);
    let sd =
        (w.data.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>() / w.data.len() as f64).sqrt();
    assert!((sd - 1.0 / 32.0).abs() < 0.001, "{sd}");
    // An odd count uses the first value of the last pair.
    assert_eq!(Tensor::gaussian(vec![3], 1.0, 5).data.len(), 3);
}
