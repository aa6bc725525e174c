//! Device sessions: own a device, open and initialize it, replay its configuration, load an
//! application package, start host exchange and invoke the package's host calls.
//!
//! ```ignore
//! let mut session = Session::open(&SessionOptions::new("artifacts/model"), runner)?;
//! session.configure(&package.device_config)?;   // + SessionOptions::config file
//! session.load(package)?;
//! session.start_host_exchange()?;
//! session.call("initialize", &BTreeMap::new())?;  // weights from the package
//! let outputs = session.call("run", &inputs)?;    // inputs by binding name
//! let profile = session.profile_file()?;
//! ```
//! [`run_package`] does all of it. Each step logs the line the seed system logged.
//!
//! The only device kind in this build is the simulator (`sim:c600`, `sim:bow`): the session
//! holds a [`Simulator`] of the named target; a hardware path such as `/dev/ipu0` is refused.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ipu_device::image::StreamDirection;
use ipu_device::numerics::{decode_bytes, encode_bytes, Rounding};
use ipu_device::sim::{LoadReport, Profile, SimError, SimOptions, Simulator};
use ipu_device::{KernelRunner, Target};
use tracing::{debug, info};

use crate::config::{ConfigError, DeviceConfig};
use crate::lock::{DeviceLock, LockError};
use crate::npy::Tensor;
use crate::package::{BindingRole, Package, PackageError};
use crate::profile::ProfileFile;

/// The device a session opens when none is named.
pub const DEFAULT_DEVICE: &str = "sim:c600";

/// How to open a session.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// Device name: `sim:<target>`.
    pub device: String,
    /// Directory of the device's ownership lock (`<dir>/device.lock`).
    pub lock_dir: PathBuf,
    /// How long to wait for ownership; `None` waits as long as it takes.
    pub lock_timeout: Option<Duration>,
    /// A device configuration file replayed after the package's writes.
    pub config_file: Option<PathBuf>,
}

impl SessionOptions {
    pub fn new(lock_dir: impl Into<PathBuf>) -> SessionOptions {
        SessionOptions {
            device: DEFAULT_DEVICE.to_string(),
            lock_dir: lock_dir.into(),
            lock_timeout: None,
            config_file: None,
        }
    }
}

/// Why a session step failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("device '{device}': {detail}")]
    Device { device: String, detail: String },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Package(#[from] PackageError),
    /// Boxed: simulator errors carry whole hazard descriptions, and every session result
    /// would otherwise be as large as the largest of them.
    #[error("simulated device: {0}")]
    Sim(Box<SimError>),
    #[error("session: {0}")]
    Order(&'static str),
    #[error("the package has no host call '{name}' (calls: {known})")]
    UnknownCall { name: String, known: String },
    #[error("host call '{call}' needs input '{binding}', which was not given")]
    MissingInput { call: String, binding: String },
    #[error("'{name}' is not an input or weight of the package (inputs and weights: {known})")]
    UnknownInput { name: String, known: String },
    #[error("input '{binding}' has shape {found:?}, the package expects {expected:?}")]
    InputShape {
        binding: String,
        expected: Vec<u64>,
        found: Vec<u64>,
    },
    #[error("binding '{binding}': {detail}")]
    Numerics { binding: String, detail: String },
}

impl From<SimError> for SessionError {
    fn from(error: SimError) -> Self {
        SessionError::Sim(Box::new(error))
    }
}

/// An open simulated device.
struct Device {
    name: String,
    target: Target,
    options: SimOptions,
    runner: Arc<dyn KernelRunner>,
    sim: Simulator,
}

impl Device {
    fn open(name: &str, runner: Arc<dyn KernelRunner>) -> Result<Device, SessionError> {
        info!(path = ?name, "opening IPU device");
        let Some(target_name) = name.strip_prefix("sim:") else {
            return Err(SessionError::Device {
                device: name.to_string(),
                detail: "this build has no IPU hardware driver; use a simulated device (sim:c600, sim:bow)".into(),
            });
        };
        let target = Target::by_name(target_name).map_err(|e| SessionError::Device {
            device: name.to_string(),
            detail: e.to_string(),
        })?;
        let options = SimOptions::default();
        let sim = Simulator::new(target.clone(), Arc::clone(&runner)).with_options(options);
        info!(path = %name, "IPU device attached");
        Ok(Device {
            name: name.to_string(),
            target,
            options,
            runner,
            sim,
        })
    }

    /// Applies configuration writes; the simulator is rebuilt with the new parameters (it
    /// holds nothing yet: configuration precedes loading).
    fn configure(&mut self, config: &DeviceConfig) {
        config.apply(&mut self.target, &mut self.options);
        self.sim = Simulator::new(self.target.clone(), Arc::clone(&self.runner))
            .with_options(self.options);
    }
}

/// Outputs of one host call.
#[derive(Debug, Clone)]
pub struct CallResult {
    /// Output tensors by binding name (f32 values decoded from the device precision).
    pub outputs: BTreeMap<String, Tensor>,
    /// The simulator's profile of the call's program.
    pub profile: Profile,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    Initialized,
    Configured,
    Loaded,
    HostExchange,
}

/// A session on one owned device. Ownership is released when the session drops.
pub struct Session {
    device: Device,
    stage: Stage,
    config_file: Option<PathBuf>,
    package: Option<Package>,
    profiles: Vec<Profile>,
    // Dropped last: the device is released only after everything else.
    _lock: DeviceLock,
}

impl Session {
    /// Takes ownership of the device (waiting for another session to end), opens and
    /// initializes it.
    pub fn open(
        options: &SessionOptions,
        runner: Arc<dyn KernelRunner>,
    ) -> Result<Session, SessionError> {
        let lock = DeviceLock::acquire(
            &DeviceLock::path_in(&options.lock_dir),
            options.lock_timeout,
        )?;
        let device = Device::open(&options.device, runner)?;
        info!("initializing IPU device");
        // The simulator starts with zeroed, unallocated SRAM: initialization is resetting it,
        // which Simulator::new did.
        info!("IPU device initialized");
        Ok(Session {
            device,
            stage: Stage::Initialized,
            config_file: options.config_file.clone(),
            package: None,
            profiles: Vec::new(),
            _lock: lock,
        })
    }

    pub fn target(&self) -> &Target {
        &self.device.target
    }

    /// Replays `writes` (normally the package's) and then the session's configuration file.
    pub fn configure(&mut self, writes: &DeviceConfig) -> Result<(), SessionError> {
        if self.stage != Stage::Initialized {
            return Err(SessionError::Order(
                "the device configuration is replayed once, before loading",
            ));
        }
        writes.validate("application package")?;
        let mut all = writes.clone();
        if let Some(path) = &self.config_file {
            all.writes.extend(DeviceConfig::read(path)?.writes);
        }
        info!(
            register_writes = all.writes.len(),
            "replaying device configuration"
        );
        self.device.configure(&all);
        self.stage = Stage::Configured;
        Ok(())
    }

    /// Loads the package's image: validation, the simulator's hazard analysis (what the
    /// hardware would punish: the `hardwareTest`), initial segments. Returns what loading
    /// counted.
    pub fn load(&mut self, package: Package) -> Result<LoadReport, SessionError> {
        if self.stage == Stage::Initialized {
            self.configure(&package.device_config)?;
        }
        if self.stage != Stage::Configured {
            return Err(SessionError::Order("a session loads one application"));
        }
        package.validate()?;
        let tiles = self.device.target.geometry.tiles.value;
        // The loader streams tile images one physical row of the grid at a time and marks
        // each row's completion; the last mark is where host exchange starts.
        let final_mark = self.final_mark();
        info!(tile_count = tiles, final_mark, "loading application");
        let report = self.device.sim.load(&package.image)?;
        debug!(
            tiles_with_images = report.summary.tiles_with_images,
            segment_bytes = report.summary.segment_bytes,
            kernel_runs = report.summary.kernel_runs,
            transfers = report.summary.transfers,
            embedded_objects = package.objects.len(),
            "application image loaded"
        );
        info!(
            tile_count = tiles,
            "application loaded and initial synchronization completed"
        );
        self.package = Some(package);
        self.stage = Stage::Loaded;
        Ok(report)
    }

    fn final_mark(&self) -> u32 {
        let geometry = &self.device.target.geometry;
        geometry
            .tiles
            .value
            .div_ceil(geometry.physical_columns.value.max(1))
    }

    /// Starts host exchange: one page per stream direction the bindings use.
    pub fn start_host_exchange(&mut self) -> Result<(), SessionError> {
        if self.stage != Stage::Loaded {
            return Err(SessionError::Order(
                "host exchange starts once, after loading",
            ));
        }
        info!(
            startup_mark = self.final_mark(),
            "starting host exchange session"
        );
        let package = self.package()?;
        let directions: std::collections::BTreeSet<_> = package
            .bindings
            .iter()
            .map(|b| b.role.direction())
            .collect();
        info!(pages = directions.len(), "attaching host exchange pages");
        info!("host exchange session started");
        self.stage = Stage::HostExchange;
        Ok(())
    }

    fn package(&self) -> Result<&Package, SessionError> {
        self.package
            .as_ref()
            .ok_or(SessionError::Order("no application is loaded"))
    }

    /// Invokes host call `name`: stages the call's host-to-device streams (weights from the
    /// package, inputs from `inputs` by binding name), runs its program, reads its outputs.
    pub fn call(
        &mut self,
        name: &str,
        inputs: &BTreeMap<String, Tensor>,
    ) -> Result<CallResult, SessionError> {
        if self.stage != Stage::HostExchange {
            return Err(SessionError::Order(
                "host calls need a started host exchange session",
            ));
        }
        let package = self
            .package
            .as_ref()
            .ok_or(SessionError::Order("no application is loaded"))?;
        let known_inputs = || {
            package
                .bindings
                .iter()
                .filter(|b| b.role != BindingRole::Output)
                .map(|b| b.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        // Inputs, and weights that replace the package's values; a name the call does not
        // stream is accepted (one map can serve `initialize` and `run`).
        for given in inputs.keys() {
            let is_input = package
                .binding(given)
                .is_some_and(|b| b.role != BindingRole::Output);
            if !is_input {
                return Err(SessionError::UnknownInput {
                    name: given.clone(),
                    known: known_inputs(),
                });
            }
        }
        let call = package
            .call(name)
            .ok_or_else(|| SessionError::UnknownCall {
                name: name.to_string(),
                known: package
                    .calls
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        let phases = call.phases(&package.image);
        info!(call = ?call.name, command = call.command, phases = phases.len(), "invoking streaming host exchange call");
        for phase in phases
            .iter()
            .filter(|p| p.direction == StreamDirection::HostToDevice)
        {
            let binding = package.binding_of_stream(&phase.stream).ok_or_else(|| {
                SessionError::Package(PackageError::UnboundStream {
                    call: call.name.clone(),
                    step: phase.step,
                    stream: phase.stream.clone(),
                })
            })?;
            let given = inputs.get(&binding.name);
            let tensor_bytes = match (binding.role, given) {
                (BindingRole::Weight, None) => binding.data.clone(),
                _ => {
                    let tensor = given.ok_or_else(|| SessionError::MissingInput {
                        call: call.name.clone(),
                        binding: binding.name.clone(),
                    })?;
                    if tensor.shape != binding.shape {
                        return Err(SessionError::InputShape {
                            binding: binding.name.clone(),
                            expected: binding.shape.clone(),
                            found: tensor.shape.clone(),
                        });
                    }
                    encode_bytes(
                        &tensor.data,
                        binding.precision,
                        binding.scale_exp,
                        Rounding::NearestEvenSaturating,
                    )
                    .map_err(|e| SessionError::Numerics {
                        binding: binding.name.clone(),
                        detail: e.to_string(),
                    })?
                }
            };
            let stream = binding.to_stream(&tensor_bytes)?;
            self.device.sim.write_stream(&binding.stream, &stream)?;
        }
        let profile = self.device.sim.run(&call.program)?;
        let mut outputs = BTreeMap::new();
        for phase in phases
            .iter()
            .filter(|p| p.direction == StreamDirection::DeviceToHost)
        {
            let Some(binding) = package.binding_of_stream(&phase.stream) else {
                continue;
            };
            if outputs.contains_key(&binding.name) {
                continue;
            }
            let stream = self.device.sim.read_stream(&binding.stream)?;
            let bytes = binding.from_stream(stream)?;
            let data = decode_bytes(&bytes, binding.precision, binding.scale_exp).map_err(|e| {
                SessionError::Numerics {
                    binding: binding.name.clone(),
                    detail: e.to_string(),
                }
            })?;
            outputs.insert(
                binding.name.clone(),
                Tensor {
                    shape: binding.shape.clone(),
                    data,
                },
            );
        }
        debug!(call = %name, cycles = profile.total_cycles, "host exchange call completed");
        self.profiles.push(profile.clone());
        Ok(CallResult { outputs, profile })
    }

    /// The profile of the calls so far whose programs the package's profile plan names (all
    /// calls when the plan names none).
    pub fn profile_file(&self) -> Result<ProfileFile, SessionError> {
        let package = self.package()?;
        let wanted = &package.profile_plan.programs;
        let runs: Vec<Profile> = self
            .profiles
            .iter()
            .filter(|p| wanted.is_empty() || wanted.contains(&p.program))
            .cloned()
            .collect();
        Ok(ProfileFile::from_sim(package, &self.device.target, &runs))
    }

    /// The device name (`sim:c600`).
    pub fn device_name(&self) -> &str {
        &self.device.name
    }
}

/// What [`run_package`] returns.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// What loading counted (it passed the simulator's hazard analysis).
    pub load: LoadReport,
    pub outputs: BTreeMap<String, Tensor>,
    pub profile: ProfileFile,
}

/// Opens a session, loads `package`, calls `initialize` (when the package has it) and `run`
/// with `inputs` (input tensors, and weight tensors that replace the package's values, by
/// binding name), and returns the outputs of `run` and the profile.
pub fn run_package(
    package: Package,
    options: &SessionOptions,
    runner: Arc<dyn KernelRunner>,
    inputs: &BTreeMap<String, Tensor>,
) -> Result<RunOutcome, SessionError> {
    let mut session = Session::open(options, runner)?;
    let writes = package.device_config.clone();
    session.configure(&writes)?;
    let has_initialize = package.call("initialize").is_some();
    let load = session.load(package)?;
    session.start_host_exchange()?;
    if has_initialize {
        session.call("initialize", inputs)?;
    }
    let result = session.call("run", inputs)?;
    Ok(RunOutcome {
        load,
        outputs: result.outputs,
        profile: session.profile_file()?,
    })
}
