//! What kbench needs to boot a kernel under test: a reproducible initramfs around a
//! static kbench, and the kernel itself out of a Debian package or an image file.
pub mod deb;
pub mod elf;
pub mod initramfs;

pub use deb::{kernel_from_deb, kernel_from_path, DebError, KernelImage};
pub use initramfs::{Initramfs, InitramfsError};
