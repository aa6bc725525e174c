//! Loading compiled kernels and running them on a tile's memory ([`KernelRunner`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use super::cache::{CachedKernel, KernelCache};
use super::error::KernelError;
use super::spec::{KernelRunError, KernelRunner, KernelSpec};

/// MLIR's descriptor of a rank-1 memref, as `_mlir_ciface_*` entry points take it.
#[repr(C)]
struct MemRef1D<T> {
    allocated: *mut T,
    aligned: *mut T,
    offset: i64,
    size: i64,
    stride: i64,
}

/// `_mlir_ciface_<entry>(memory, args)`: tile memory as `memref<?xi8>`, args as `memref<?xi32>`.
type EntryFn = unsafe extern "C" fn(*mut MemRef1D<u8>, *mut MemRef1D<u32>);

/// A compiled kernel mapped into this process.
pub struct LoadedKernel {
    spec: KernelSpec,
    name: String,
    /// One per entry, in [`KernelSpec::entries`] order (GEMM: per row count).
    entries: Vec<EntryFn>,
    cached: CachedKernel,
    // Keeps the code the entry pointers point into mapped; dropped last.
    _library: libloading::Library,
}

impl std::fmt::Debug for LoadedKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedKernel")
            .field("name", &self.name)
            .field("library", &self.cached.library)
            .finish()
    }
}

impl LoadedKernel {
    /// Opens the entry's shared library and resolves every entry point.
    pub fn open(spec: &KernelSpec, cached: CachedKernel) -> Result<Self, KernelError> {
        let name = spec.name();
        let load_error = |detail: String| KernelError::Load {
            kernel: name.clone(),
            path: cached.library.clone(),
            detail,
        };
        // SAFETY: the library is one our compiler produced (validated against its recorded
        // hash); it has no initializers with side effects.
        let library = unsafe { libloading::Library::new(&cached.library) }
            .map_err(|e| load_error(e.to_string()))?;
        let mut entries = Vec::new();
        for (symbol, _) in spec.entries() {
            let c_symbol = format!("_mlir_ciface_{symbol}\0");
            // SAFETY: the symbol was generated with exactly the `EntryFn` signature
            // (source::module_text, llvm.emit_c_interface).
            let function = unsafe { library.get::<EntryFn>(c_symbol.as_bytes()) }
                .map_err(|e| load_error(format!("symbol _mlir_ciface_{symbol}: {e}")))?;
            entries.push(*function);
        }
        Ok(LoadedKernel {
            spec: spec.clone(),
            name,
            entries,
            cached,
            _library: library,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn spec(&self) -> &KernelSpec {
        &self.spec
    }

    pub fn cache_entry(&self) -> &CachedKernel {
        &self.cached
    }

    /// Runs the kernel after checking every argument ([`KernelSpec::check_call`]).
    pub fn run(&self, tile_memory: &mut [u8], args: &[u32]) -> Result<(), KernelRunError> {
        self.spec.check_call(tile_memory.len(), args)?;
        // A GEMM object holds an entry per row count, selected by argument 3.
        let entry = if self.spec.is_gemm() {
            args[3] as usize
        } else {
            0
        };
        let function = self
            .entries
            .get(entry)
            .ok_or_else(|| KernelRunError::Other {
                kernel: self.name.clone(),
                detail: format!("entry {entry} missing ({} loaded)", self.entries.len()),
            })?;
        let memory_ptr = tile_memory.as_mut_ptr();
        let mut memory = MemRef1D {
            allocated: memory_ptr,
            aligned: memory_ptr,
            offset: 0,
            size: tile_memory.len() as i64,
            stride: 1,
        };
        let args_ptr = args.as_ptr() as *mut u32;
        let mut arguments = MemRef1D {
            allocated: args_ptr,
            aligned: args_ptr,
            offset: 0,
            size: args.len() as i64,
            stride: 1,
        };
        // SAFETY: check_call proved every byte the kernel touches lies inside `tile_memory`, the
        // kernel only reads `args`, and both descriptors outlive the call.
        unsafe { function(&mut memory, &mut arguments) };
        Ok(())
    }
}

#[derive(Default)]
struct Slot {
    loaded: OnceLock<Arc<LoadedKernel>>,
    /// Serializes building within this process (other processes are handled by the cache).
    building: Mutex<()>,
}

/// Compiled kernels by spec, loaded on first use. Send + Sync: the simulator runs kernels
/// from many threads; after the first call of a spec, a run takes only a read lock.
pub struct KernelLibrary {
    cache: KernelCache,
    slots: RwLock<HashMap<KernelSpec, Arc<Slot>>>,
}

impl KernelLibrary {
    pub fn new(cache: KernelCache) -> Self {
        KernelLibrary {
            cache,
            slots: RwLock::new(HashMap::new()),
        }
    }

    /// A library over the cache at its default location.
    pub fn from_env() -> Result<Self, KernelError> {
        Ok(Self::new(KernelCache::from_env()?))
    }

    pub fn cache(&self) -> &KernelCache {
        &self.cache
    }

    /// The loaded kernel for `spec`, compiling it through the cache if needed.
    pub fn load(&self, spec: &KernelSpec) -> Result<Arc<LoadedKernel>, KernelError> {
        let slot = self.slot(spec);
        if let Some(kernel) = slot.loaded.get() {
            return Ok(Arc::clone(kernel));
        }
        // A poisoned lock only means another builder panicked; building again is safe.
        let _building = slot
            .building
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(kernel) = slot.loaded.get() {
            return Ok(Arc::clone(kernel));
        }
        let cached = self.cache.ensure(spec)?;
        let kernel = Arc::new(LoadedKernel::open(spec, cached)?);
        Ok(Arc::clone(slot.loaded.get_or_init(|| kernel)))
    }

    /// Loads every spec (e.g. before a simulation), failing on the first error.
    pub fn load_all<'a>(
        &self,
        specs: impl IntoIterator<Item = &'a KernelSpec>,
    ) -> Result<(), KernelError> {
        specs
            .into_iter()
            .try_for_each(|spec| self.load(spec).map(|_| ()))
    }

    fn slot(&self, spec: &KernelSpec) -> Arc<Slot> {
        if let Some(slot) = self
            .slots
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(spec)
        {
            return Arc::clone(slot);
        }
        let mut slots = self.slots.write().unwrap_or_else(|p| p.into_inner());
        Arc::clone(slots.entry(spec.clone()).or_default())
    }
}

impl KernelRunner for KernelLibrary {
    fn run(
        &self,
        spec: &KernelSpec,
        tile_memory: &mut [u8],
        args: &[u32],
    ) -> Result<(), KernelRunError> {
        let kernel = self.load(spec).map_err(|e| KernelRunError::Other {
            kernel: spec.name(),
            detail: e.to_string(),
        })?;
        kernel.run(tile_memory, args)
    }
}
