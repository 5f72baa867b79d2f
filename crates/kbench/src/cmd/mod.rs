//! One module per subcommand; `main.rs` only wires them to clap.
pub mod ab;
pub mod bench;
pub mod calibrate;
pub mod compare;
pub mod completions;
pub mod env;
pub mod exec;
pub mod export;
pub mod import;
pub mod import_console;
pub mod initramfs;
pub mod list;
pub mod manpage;
pub mod run;
pub mod show;
pub mod stat;
pub mod vm_ab;
