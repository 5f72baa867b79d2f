//! Renderers: one file per output format behind one trait per kind of result.
pub mod bench;
pub mod compare;
