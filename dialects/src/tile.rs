//! Typed views of the `ipu_tile` ops (declared in `dialects/irdl/ipu_tile.irdl.mlir`): the low
//! level of a design after `ipu-lower-to-tiles`, a nested `builtin.module` of step and
//! declaration ops without SSA values.
//!
//! A view wraps an `OperationRef` whose name matched ([`TileOp::of`]) and reads each attribute
//! the IRDL declaration lists as a typed value, with a located [`AttributeError`] when it is
//! missing or of another kind. The meaning of the values (ids, tiles, row layouts, address
//! ranges against a target) is checked by the reader of tile programs in `ipu-passes`.

use melior::ir::{
    attribute::{DenseI32ArrayAttribute, DenseI64ArrayAttribute, IntegerAttribute},
    operation::OperationLike,
    Attribute, OperationRef,
};

use crate::ipu::{op_name, string_value};

/// Marks a nested module as a tile program and gives the device's tile count.
pub const TILES_ATTRIBUTE: &str = "ipu_tile.tiles";
/// The graph function a tile program implements.
pub const FUNCTION_ATTRIBUTE: &str = "ipu_tile.function";
/// The target table the program was lowered for.
pub const TARGET_ATTRIBUTE: &str = "ipu_tile.target";

/// An attribute of a tile op (or of a tile module) that is missing or of the wrong kind: the
/// op's name, its location and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{op} at {location}: {detail}")]
pub struct AttributeError {
    pub op: String,
    pub location: String,
    pub detail: String,
}

impl AttributeError {
    /// The error `detail` at `op`.
    pub fn at(op: OperationRef, detail: impl std::fmt::Display) -> AttributeError {
        AttributeError {
            op: op_name(&op),
            location: op.location().to_string(),
            detail: detail.to_string(),
        }
    }
}

/// The attribute `name` of `op`.
pub fn required<'c>(op: OperationRef<'c, '_>, name: &str) -> Result<Attribute<'c>, AttributeError> {
    op.attribute(name)
        .map_err(|_| AttributeError::at(op, format!("missing attribute '{name}'")))
}

/// The integer attribute `name` of `op`.
pub fn integer(op: OperationRef, name: &str) -> Result<i64, AttributeError> {
    IntegerAttribute::try_from(required(op, name)?)
        .map(|value| value.value())
        .map_err(|_| AttributeError::at(op, format!("'{name}' is not an integer")))
}

/// The integer attribute `name` of `op`, in `0..2^32`.
pub fn unsigned(op: OperationRef, name: &str) -> Result<u32, AttributeError> {
    let value = integer(op, name)?;
    u32::try_from(value)
        .map_err(|_| AttributeError::at(op, format!("'{name}' = {value} is outside 0..2^32")))
}

/// The string attribute `name` of `op`.
pub fn string(op: OperationRef, name: &str) -> Result<String, AttributeError> {
    string_value(required(op, name)?)
        .ok_or_else(|| AttributeError::at(op, format!("'{name}' is not a string")))
}

/// The dense integer array attribute `name` of `op` (`array<i64: ...>` or `array<i32: ...>`).
pub fn integers(op: OperationRef, name: &str) -> Result<Vec<i64>, AttributeError> {
    let value = required(op, name)?;
    if let Ok(array) = DenseI64ArrayAttribute::try_from(value) {
        return (0..array.len())
            .map(|i| array.element(i).map_err(|e| AttributeError::at(op, e)))
            .collect();
    }
    if let Ok(array) = DenseI32ArrayAttribute::try_from(value) {
        return (0..array.len())
            .map(|i| {
                array
                    .element(i)
                    .map(i64::from)
                    .map_err(|e| AttributeError::at(op, e))
            })
            .collect();
    }
    Err(AttributeError::at(
        op,
        format!("'{name}' is not a dense integer array"),
    ))
}

macro_rules! tile_views {
    ($(
        $(#[$doc:meta])*
        $view:ident = $name:literal {
            $($(#[$field_doc:meta])* $field:ident : $read:ident -> $ty:ty),* $(,)?
        }
    )*) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Copy)]
            pub struct $view<'c, 'a> {
                op: OperationRef<'c, 'a>,
            }

            impl<'c, 'a> $view<'c, 'a> {
                /// The op's full name.
                pub const NAME: &'static str = $name;

                /// The attributes this view reads by name.
                pub const ATTRIBUTES: &'static [&'static str] = &[$(stringify!($field)),*];

                /// The underlying operation.
                pub fn operation(&self) -> OperationRef<'c, 'a> {
                    self.op
                }

                $(
                    $(#[$field_doc])*
                    pub fn $field(&self) -> Result<$ty, AttributeError> {
                        $read(self.op, stringify!($field))
                    }
                )*
            }
        )*

        /// A tile op, by kind.
        #[derive(Clone, Copy)]
        pub enum TileOp<'c, 'a> {
            $($view($view<'c, 'a>),)*
        }

        impl<'c, 'a> TileOp<'c, 'a> {
            /// The names of every `ipu_tile` op.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// The view of `op`, `None` when it is not an `ipu_tile` op.
            pub fn of(op: OperationRef<'c, 'a>) -> Option<TileOp<'c, 'a>> {
                match op_name(&op).as_str() {
                    $($name => Some(TileOp::$view($view { op })),)*
                    _ => None,
                }
            }

            /// The underlying operation.
            pub fn operation(&self) -> OperationRef<'c, 'a> {
                match self {
                    $(TileOp::$view(view) => view.op,)*
                }
            }

            /// Each op's name and the attributes its view reads by name.
            pub const VIEWS: &'static [(&'static str, &'static [&'static str])] =
                &[$(($name, $view::ATTRIBUTES)),*];
        }
    };
}

tile_views! {
    /// A kernel specialization: the `index` runs refer to it by, its seed-style `name` and its
    /// full parameters `spec` (the device's `KernelSpec` as JSON).
    KernelOp = "ipu_tile.kernel" {
        index: integer -> i64,
        name: string -> String,
        spec: string -> String,
    }
    /// A logical buffer: `bytes` bytes of memory `class` on each of `tiles`, live over the
    /// `[first, last]` steps of the run program; placed, at one `address` on every tile.
    BufferOp = "ipu_tile.buffer" {
        id: integer -> i64,
        name: string -> String,
        class: string -> String,
        bytes: unsigned -> u32,
        tiles: integers -> Vec<i64>,
        live: integers -> Vec<i64>,
        /// The placed address (present after storage placement: see [`BufferOp::is_placed`]).
        address: unsigned -> u32,
    }
    /// A host stream of a model tensor (its pieces: [`StreamOp::pieces`]).
    StreamOp = "ipu_tile.stream" {
        name: string -> String,
        role: string -> String,
        precision: string -> String,
        shape: integers -> Vec<i64>,
        /// The FP8 scale exponent, when present ([`StreamOp::has_scale_exp`]).
        scale_exp: integer -> i64,
        /// Slices streamed one per write, when present ([`StreamOp::has_iterations`]).
        iterations: integer -> i64,
    }
    /// The host writes a stream into tile memory.
    HostWriteOp = "ipu_tile.host_write" {
        program: string -> String,
        stream: string -> String,
    }
    /// Tile memory of a stream is read back to the host.
    HostReadOp = "ipu_tile.host_read" {
        program: string -> String,
        stream: string -> String,
    }
    /// A compute step: kernel runs of every tile, as records (see the IRDL declaration).
    ComputeOp = "ipu_tile.compute" {
        program: string -> String,
        provenance: string -> String,
        runs: integers -> Vec<i64>,
    }
    /// An exchange phase: its moves as records; scheduled, its `schedule` rows, key and cycles.
    ExchangeOp = "ipu_tile.exchange" {
        program: string -> String,
        phase: unsigned -> u32,
        moves: integers -> Vec<i64>,
        schedule: integers -> Vec<i64>,
        schedule_key: integer -> i64,
        cycles: integer -> i64,
    }
    /// A global sync with no exchange.
    SyncOp = "ipu_tile.sync" {
        program: string -> String,
    }
    /// A structured repeat of the `steps` step ops that follow, `count` times.
    RepeatOp = "ipu_tile.repeat" {
        program: string -> String,
        count: unsigned -> u32,
        steps: unsigned -> u32,
    }
    /// A planned graph op for the profile: provenance, op name and the planner's cycles.
    ProfiledOp = "ipu_tile.op" {
        provenance: string -> String,
        op: string -> String,
        estimate: integer -> i64,
    }
    /// Package support memory of every tile, and the address ranges left for planned data.
    SupportOp = "ipu_tile.support" {
        linked_end: unsigned -> u32,
        profile_bytes: unsigned -> u32,
        exchange_table_bytes: unsigned -> u32,
        host_code_bytes: unsigned -> u32,
        generated_code_bytes: unsigned -> u32,
        code_address: unsigned -> u32,
        standard_ranges: integers -> Vec<i64>,
        interleaved_ranges: integers -> Vec<i64>,
    }
    /// Emitted tile code: the tiles that run code, the placed program's costed cycles and its
    /// scheduled exchange cycles.
    CodeOp = "ipu_tile.code" {
        tiles: integers -> Vec<i64>,
        final_cycles: integer -> i64,
        final_exchange: integer -> i64,
    }
}

impl BufferOp<'_, '_> {
    /// Whether storage placement gave the buffer an address.
    pub fn is_placed(&self) -> bool {
        self.op.has_attribute("address")
    }
}

impl<'c> StreamOp<'c, '_> {
    /// Whether the stream names an FP8 scale exponent.
    pub fn has_scale_exp(&self) -> bool {
        self.op.attribute("scale_exp").is_ok()
    }

    /// Whether the stream is written in slices (a repeat's per-iteration stack).
    pub fn has_iterations(&self) -> bool {
        self.op.attribute("iterations").is_ok()
    }

    /// The `pieces` attribute (one dense array of rows, or an array of per-piece arrays).
    pub fn pieces(&self) -> Result<Attribute<'c>, AttributeError> {
        required(self.op, "pieces")
    }

    /// A weight's `value` (a dense elements attribute of the tensor).
    pub fn value(&self) -> Result<Attribute<'c>, AttributeError> {
        required(self.op, "value")
    }
}

impl ExchangeOp<'_, '_> {
    /// Whether `ipu-lower-exchanges` stored a schedule.
    pub fn is_scheduled(&self) -> bool {
        self.op.has_attribute("schedule")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{create_context, parse_module};
    use melior::ir::block::BlockLike;

    #[test]
    fn views_read_the_declared_attributes_and_name_what_is_wrong() {
        let context = create_context(false).expect("context");
        let source = r#"
module @m.tiles attributes {ipu_tile.function = "m", ipu_tile.tiles = 4 : i64} {
  "ipu_tile.buffer"() {id = 0 : i64, name = "op0.a", class = "standard", bytes = 64 : i64, tiles = array<i32: 0, 1>, live = array<i64: 0, 3>} : () -> ()
  "ipu_tile.repeat"() {program = "run", count = -2 : i64, steps = 1 : i64} : () -> ()
  "ipu_tile.sync"() {program = "initialize"} : () -> ()
}
"#;
        let module = parse_module(&context, source).expect("parse");
        // The source's single top-level module is the parsed module itself.
        let inner = module.as_operation();
        assert_eq!(integer(inner, TILES_ATTRIBUTE), Ok(4));
        assert_eq!(string(inner, FUNCTION_ATTRIBUTE).as_deref(), Ok("m"));
        let block = module.body();
        let ops: Vec<_> = std::iter::successors(block.first_operation(), |op| op.next_in_block())
            .map(|op| TileOp::of(op).expect("a tile op"))
            .collect();
        let TileOp::BufferOp(buffer) = ops[0] else {
            panic!("a buffer first");
        };
        assert_eq!(buffer.id(), Ok(0));
        assert_eq!(buffer.name().as_deref(), Ok("op0.a"));
        assert_eq!(buffer.tiles(), Ok(vec![0, 1]));
        assert_eq!(buffer.live(), Ok(vec![0, 3]));
        assert!(!buffer.is_placed());
        let missing = buffer.address().unwrap_err();
        assert_eq!(missing.op, "ipu_tile.buffer");
        assert_eq!(missing.detail, "missing attribute 'address'");
        assert!(missing.to_string().starts_with("ipu_tile.buffer at loc("));
        let TileOp::RepeatOp(repeat) = ops[1] else {
            panic!("a repeat second");
        };
        assert_eq!(
            repeat.count().unwrap_err().detail,
            "'count' = -2 is outside 0..2^32"
        );
        let TileOp::SyncOp(sync) = ops[2] else {
            panic!("a sync third");
        };
        assert_eq!(sync.program().as_deref(), Ok("initialize"));
        assert_eq!(
            string(buffer.operation(), "id").unwrap_err().detail,
            "'id' is not a string"
        );
        assert_eq!(
            integers(buffer.operation(), "name").unwrap_err().detail,
            "'name' is not a dense integer array"
        );
        assert!(TileOp::of(inner).is_none());
        assert!(integer(inner, TARGET_ATTRIBUTE).is_err());
        assert_eq!(TileOp::NAMES.len(), 12);
    }

    /// Every op the IRDL declaration lists has a view, and every attribute it requires is
    /// read by the view (a stream's `pieces` by its own accessor).
    #[test]
    fn the_views_cover_the_irdl_declaration() {
        let declared: Vec<(String, Vec<String>)> = crate::context::IRDL_IPU_TILE
            .split("irdl.operation @")
            .skip(1)
            .map(|body| {
                let name = body.split_whitespace().next().unwrap_or("").to_string();
                let attributes = body
                    .split("irdl.attributes {")
                    .nth(1)
                    .and_then(|rest| rest.split('}').next())
                    .unwrap_or("")
                    .split(',')
                    .filter_map(|entry| entry.split('"').nth(1).map(str::to_string))
                    .collect();
                (format!("ipu_tile.{name}"), attributes)
            })
            .collect();
        assert_eq!(declared.len(), TileOp::VIEWS.len());
        for (name, attributes) in &declared {
            assert!(!attributes.is_empty(), "{name} declares no attributes");
            let (_, read) = TileOp::VIEWS
                .iter()
                .find(|(view, _)| view == name)
                .unwrap_or_else(|| panic!("no view of {name}"));
            for attribute in attributes {
                assert!(
                    read.contains(&attribute.as_str())
                        || (name == StreamOp::NAME && attribute == "pieces"),
                    "{name}: the view does not read '{attribute}'"
                );
            }
        }
    }
}
