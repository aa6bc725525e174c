//! Unit tests of the pipeline grammar, its errors and typed options.

mod errors;
mod options;
mod parse;
mod random;
