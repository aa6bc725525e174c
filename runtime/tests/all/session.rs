//! A hand-built package through a whole session: ownership, device, configuration, load, host
//! exchange, `initialize` and `run`, outputs and the profile, with the seed's log lines.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

use ipu_runtime::npy::Tensor;
use ipu_runtime::profile::StepKind;
use ipu_runtime::session::{run_package, Session, SessionOptions};
use ipu_runtime::{Package, ProfileFile, SessionError};

use crate::fixture;
use crate::lock::scratch;

/// Captures formatted log lines of the current thread.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

thread_local! {
    /// Where this thread's log lines go while [`with_logs`] runs on it.
    static CAPTURE: std::cell::RefCell<Option<Captured>> = const { std::cell::RefCell::new(None) };
}

/// The writer of the binary's one subscriber: the current thread's capture, if any.
struct ThreadWriter;

impl Write for ThreadWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        CAPTURE.with(|capture| {
            if let Some(captured) = capture.borrow().as_ref() {
                captured.0.lock().unwrap().extend_from_slice(bytes);
            }
        });
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs `f` and returns what it logged on this thread. One global subscriber serves every
/// test of the binary: callsites cache whether any subscriber wants them, and with scoped
/// subscribers a callsite first hit by another test thread could cache "never" while this
/// test's subscriber was being set up (a race rebuilding the cache did not close); with one
/// global subscriber every callsite's interest is decided against it.
fn with_logs<T>(f: impl FnOnce() -> T) -> (T, String) {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let subscriber = tracing_subscriber::fmt()
            .with_writer(|| ThreadWriter)
            .with_ansi(false)
            .without_time()
            .with_target(false)
            .finish();
        tracing::subscriber::set_global_default(subscriber)
            .expect("no other test of this binary installs a subscriber");
    });
    let captured = Captured::default();
    CAPTURE.with(|capture| *capture.borrow_mut() = Some(captured.clone()));
    let result = f();
    CAPTURE.with(|capture| *capture.borrow_mut() = None);
    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    (result, text)
}

fn inputs() -> BTreeMap<String, Tensor> {
    let x = Tensor::new(
        vec![u64::from(fixture::TILES), u64::from(fixture::COLS)],
        fixture::input(),
    )
    .unwrap();
    BTreeMap::from([("x".to_string(), x)])
}

#[test]
fn package_runs_end_to_end_with_the_seed_log_lines() {
    let dir = scratch("session");
    let path = dir.join("model-final.ipuexe");
    let ((outcome, profile_path), logs) = with_logs(|| {
        fixture::package().write(&path).expect("write");
        let package = Package::read(&path).expect("read");
        let mut options = SessionOptions::new(&dir);
        let config = dir.join("device.cfg");
        std::fs::write(&config, "# slower sync\nexchange.sync_cycles = 120\n").unwrap();
        options.config_file = Some(config);
        let outcome = run_package(package, &options, fixture::runner(), &inputs()).expect("run");
        let profile_path = dir.join("profile-final.ipuprof");
        outcome.profile.write(&profile_path).expect("profile");
        (outcome, profile_path)
    });
    assert_eq!(outcome.outputs["y"].data, fixture::expected_output());
    assert_eq!(outcome.outputs["y"].shape, vec![4, 8]);

    let lock = dir.join("device.lock");
    let expected = [
        "writing application package tiles=1472".to_string(),
        "application package written".to_string(),
        "reading application package".to_string(),
        "application package read tiles=1472 compiler=0.1.0".to_string(),
        format!("waiting for hardware ownership path={}", lock.display()),
        format!("acquired hardware ownership path={}", lock.display()),
        "opening IPU device path=\"sim:c600\"".to_string(),
        "IPU device attached path=sim:c600".to_string(),
        "initializing IPU device".to_string(),
        "IPU device initialized".to_string(),
        "replaying device configuration register_writes=2".to_string(),
        "loading application tile_count=1472 final_mark=23".to_string(),
        "application loaded and initial synchronization completed tile_count=1472".to_string(),
        "starting host exchange session startup_mark=23".to_string(),
        "attaching host exchange pages pages=2".to_string(),
        "host exchange session started".to_string(),
        "invoking streaming host exchange call call=\"initialize\" command=0 phases=1".to_string(),
        "invoking streaming host exchange call call=\"run\" command=0 phases=2".to_string(),
        "profile written".to_string(),
    ];
    let mut rest = logs.as_str();
    for line in &expected {
        let at = rest
            .find(line.as_str())
            .unwrap_or_else(|| panic!("missing (in order) '{line}' in:\n{logs}"));
        rest = &rest[at + line.len()..];
    }

    let profile = ProfileFile::read(&profile_path).expect("read profile");
    assert_eq!(profile.tiles, 1472);
    assert_eq!(profile.runs.len(), 1, "the plan profiles `run` only");
    let run = &profile.runs[0];
    assert_eq!(run.program, "run");
    // One kernel sample per tile for the add; the exchange and host steps are global.
    assert_eq!(run.kernel_samples.len(), fixture::TILES as usize);
    let samples = run.tile_samples(2, &profile.kernels);
    let kinds: Vec<StepKind> = samples.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [
            StepKind::HostWrite,
            StepKind::Compute,
            StepKind::Exchange,
            StepKind::HostRead
        ]
    );
    let compute = samples[1];
    assert_eq!(compute.provenance, Some(fixture::ADD_LOCATION));
    assert_eq!(compute.kernel, Some("add_f32_r1_c8_b1"));
    assert!(compute.end > compute.start);
    assert!(samples.windows(2).all(|w| w[0].end <= w[1].start));
    assert_eq!(run.ops.len(), 1);
    let op = &run.ops[0];
    assert_eq!(op.op.as_deref(), Some("ipu.add"));
    assert_eq!(op.kernel_model_cycles, 1);
    assert_eq!(op.estimated_cycles, Some(20));
    assert_eq!(op.achieved_cycles, compute.end - compute.start);
    assert_eq!(op.kernel_runs, 4);
    // Samples: 3 global steps x 1472 tiles + 4 tiles' compute.
    assert_eq!(profile.sample_count(), 3 * 1472 + 4);
}

/// Bindings laid over the tiles by strided runs: the host gathers the transposed input into
/// the rows the tiles add and scatters their rows back into the transposed output.
#[test]
fn transposed_bindings_run_end_to_end() {
    let dir = scratch("transposed");
    let path = dir.join("model.ipuexe");
    fixture::transposed_package().write(&path).unwrap();
    let package = Package::read(&path).unwrap();
    let (tiles, cols) = (fixture::TILES as usize, fixture::COLS as usize);
    let xt = Tensor::new(
        vec![cols as u64, tiles as u64],
        fixture::transpose(&fixture::input(), tiles, cols),
    )
    .unwrap();
    let inputs = BTreeMap::from([("x".to_string(), xt)]);
    let outcome = run_package(
        package,
        &SessionOptions::new(&dir),
        fixture::runner(),
        &inputs,
    )
    .unwrap();
    assert_eq!(outcome.outputs["y"].shape, vec![cols as u64, tiles as u64]);
    assert_eq!(
        outcome.outputs["y"].data,
        fixture::transpose(&fixture::expected_output(), tiles, cols)
    );
}

#[test]
fn sessions_refuse_misuse_with_clear_errors() {
    let dir = scratch("misuse");
    let mut options = SessionOptions::new(&dir);
    options.device = "/dev/ipu0".into();
    let error = Session::open(&options, fixture::runner())
        .err()
        .expect("no hardware");
    assert!(
        error.to_string().contains("no IPU hardware driver"),
        "{error}"
    );

    options.device = "sim:c600".into();
    let mut session = Session::open(&options, fixture::runner()).expect("open");
    let error = session.call("run", &inputs()).unwrap_err();
    assert!(matches!(error, SessionError::Order(_)), "{error}");
    session.load(fixture::package()).expect("load");
    session.start_host_exchange().expect("start");
    let error = session.call("run", &BTreeMap::new()).unwrap_err();
    assert!(error.to_string().contains("needs input 'x'"), "{error}");
    let mut wrong = inputs();
    wrong.insert("z".into(), Tensor::new(vec![1], vec![0.0]).unwrap());
    let error = session.call("run", &wrong).unwrap_err();
    assert!(error.to_string().contains("'z' is not an input"), "{error}");
    let bad_shape = BTreeMap::from([(
        "x".to_string(),
        Tensor::new(vec![32], fixture::input()).unwrap(),
    )]);
    let error = session.call("run", &bad_shape).unwrap_err();
    assert!(error.to_string().contains("has shape [32]"), "{error}");
    let error = session.call("train", &inputs()).unwrap_err();
    assert!(
        error.to_string().contains("no host call 'train'"),
        "{error}"
    );
    // Before `initialize` streams the bias in, its memory is zero: y = x.
    let result = session
        .call("run", &inputs())
        .expect("run before initialize");
    assert_eq!(result.outputs["y"].data, fixture::input());
    session
        .call("initialize", &BTreeMap::new())
        .expect("initialize");
    let result = session.call("run", &inputs()).expect("run");
    assert_eq!(result.outputs["y"].data, fixture::expected_output());
}

#[test]
fn bad_device_configuration_is_refused() {
    let dir = scratch("config");
    let config = dir.join("device.cfg");
    std::fs::write(&config, "clock_hz = 5\n").unwrap();
    let mut options = SessionOptions::new(&dir);
    options.config_file = Some(config.clone());
    let mut session = Session::open(&options, fixture::runner()).expect("open");
    let error = session.load(fixture::package()).unwrap_err();
    assert!(
        error.to_string().contains("clock_hz = 5 is outside"),
        "{error}"
    );
    std::fs::write(&config, "clock_mhz = 1300\n").unwrap();
    let error = ipu_runtime::DeviceConfig::read(&config).unwrap_err();
    assert!(
        error
            .to_string()
            .contains(":1: unknown register 'clock_mhz'"),
        "{error}"
    );
}

#[test]
fn configuration_changes_the_simulated_device() {
    let run_with = |config: &str| {
        let dir = scratch(&format!("clock-{}", config.len()));
        let path = dir.join("device.cfg");
        std::fs::write(&path, config).unwrap();
        let mut options = SessionOptions::new(&dir);
        options.config_file = Some(path);
        run_package(fixture::package(), &options, fixture::runner(), &inputs())
            .expect("run")
            .profile
    };
    let base = run_with("");
    let slow = run_with("exchange.phase_cycles = 5000\nclock_hz = 1_000_000_000\n");
    assert_eq!(slow.clock_hz, 1e9);
    assert!(slow.runs[0].total_cycles > base.runs[0].total_cycles + 4000);
}

/// Every tile of the C600: write, read, load and run, with one sample per tile per step.
#[test]
fn whole_chip_package_runs() {
    let tiles = 1472;
    let dir = scratch("whole-chip");
    let path = dir.join("model.ipuexe");
    let started = std::time::Instant::now();
    fixture::package_with(tiles).write(&path).unwrap();
    let package = Package::read(&path).unwrap();
    let x = Tensor::new(
        vec![u64::from(tiles), u64::from(fixture::COLS)],
        fixture::input_with(tiles),
    )
    .unwrap();
    let inputs = BTreeMap::from([("x".to_string(), x)]);
    let outcome = run_package(
        package,
        &SessionOptions::new(&dir),
        fixture::runner(),
        &inputs,
    )
    .unwrap();
    assert_eq!(
        outcome.outputs["y"].data,
        fixture::expected_output_with(tiles)
    );
    assert_eq!(outcome.load.summary.tiles_with_images, tiles as usize);
    assert_eq!(outcome.load.executed_steps["run"], 5);
    assert_eq!(outcome.profile.sample_count(), 3 * 1472 + 1472);
    eprintln!(
        "whole chip: package, load and run in {:?}",
        started.elapsed()
    );
}

/// Inputs and weights from `.npy` files (a weight file replaces the package's values),
/// outputs written back as `.npy`, seeded inputs reproducible by seed.
#[test]
fn tensors_from_files_and_seeds() {
    use ipu_runtime::inputs::{file_name, read_tensors, seeded_inputs, write_tensors};
    use ipu_runtime::NpyDtype;

    let dir = scratch("tensors");
    let package = fixture::package();
    let mut given = inputs();
    let bias = Tensor::new(vec![u64::from(fixture::COLS)], vec![100.0; 8]).unwrap();
    given.insert("b".into(), bias);
    write_tensors(&given, &dir.join("in"), NpyDtype::F32).unwrap();
    let read = read_tensors(&package, &dir.join("in")).unwrap();
    assert_eq!(read, given);
    let outcome = run_package(
        package.clone(),
        &SessionOptions::new(&dir),
        fixture::runner(),
        &read,
    )
    .unwrap();
    let expected: Vec<f32> = fixture::input().iter().map(|v| v + 100.0).collect();
    assert_eq!(outcome.outputs["y"].data, expected);
    let paths = write_tensors(&outcome.outputs, &dir.join("out"), NpyDtype::F16).unwrap();
    assert_eq!(paths, [dir.join("out").join("y.npy")]);
    assert_eq!(Tensor::read(&paths[0]).unwrap().data, expected);

    let seeded = seeded_inputs(&package, 7);
    assert_eq!(seeded, seeded_inputs(&package, 7));
    assert_ne!(seeded, seeded_inputs(&package, 8));
    assert_eq!(seeded["x"].shape, vec![4, 8]);
    run_package(
        package,
        &SessionOptions::new(&dir),
        fixture::runner(),
        &seeded,
    )
    .unwrap();
    assert_eq!(file_name("%arg0/x"), "_arg0_x.npy");
}

/// The fixture with the real kernel compiler instead of the plain-Rust runner: the Add kernel
/// is compiled from MLIR through the content-addressed cache, its object is embedded in the
/// package (and deduplicated), and the session's outputs match the plain-Rust ones.
#[test]
fn compiled_kernels_end_to_end() {
    use ipu_device::kernels::{KernelCache, KernelLibrary};
    use ipu_runtime::package::KernelObject;

    let cache = KernelCache::new(
        std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kernel-cache"),
    );
    let mut package = fixture::package();
    let add = package.image.kernels[0].clone();
    let entry = cache.ensure(&add).expect("the add kernel compiles");
    package
        .embed_object(0, KernelObject::from_cache_entry(&entry).unwrap())
        .unwrap();
    let dir = scratch("compiled");
    let path = dir.join("model.ipuexe");
    package.write(&path).unwrap();
    let package = Package::read(&path).unwrap();
    assert_eq!(package.objects.len(), 2);
    let object = &package.objects[package.kernels[0].object.as_ref().unwrap()];
    assert_eq!(object.cache_key, entry.metadata.key);

    let library = std::sync::Arc::new(KernelLibrary::new(cache));
    let outcome = run_package(package, &SessionOptions::new(&dir), library, &inputs()).unwrap();
    assert_eq!(outcome.outputs["y"].data, fixture::expected_output());
}

/// Other table targets open by name; a package built for another target is refused at load.
#[test]
fn packages_load_only_on_their_target() {
    let dir = scratch("bow");
    let mut options = SessionOptions::new(&dir);
    options.device = "sim:bow".into();
    let mut session = Session::open(&options, fixture::runner()).expect("sim:bow opens");
    assert_eq!(session.target().name, "bow");
    let error = session.load(fixture::package()).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("built for target 'c600', the device is 'bow'"),
        "{error}"
    );
    drop(session);
    options.device = "sim:gc200".into();
    let error = Session::open(&options, fixture::runner()).err().unwrap();
    assert!(
        error.to_string().contains("unknown target 'gc200'"),
        "{error}"
    );
}
