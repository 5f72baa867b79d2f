//! One module per subcommand; `main.rs` only wires them to clap.
pub mod bench;
pub mod compare;
pub mod env;
pub mod run;
pub mod stat;
