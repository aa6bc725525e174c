//! The target table: IPU21/C600 (and other IPU targets) constants, each with its source tag.
pub struct Target;
