//! One module per subcommand; `main.rs` only wires them to clap.
pub mod stat;
pub mod env;
