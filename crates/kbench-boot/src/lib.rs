//! What kbench needs to boot a kernel under test: a reproducible initramfs around a
//! static kbench, the kernel itself out of a Debian package or an image file, the
//! user's words for its command line ([`cmdline`]), qemu's command line and the watch
//! over one boot ([`qemu`], vCPU pinning through [`qmp`]), a LAVA job that boots two
//! kernels on a board ([`lava`]) and the boots of a board's or LAVA's log ([`imported`]), the driver modules a guest loads ([`modules`]), and a
//! boot's console log turned into the session and runs stored of it ([`stored`]); a
//! bisection's git worktree and build cache ([`tree`]).
#[macro_use]
extern crate kbench_term;

pub mod bisect;
pub mod boot_ab;
pub mod cmdline;
pub mod deb;
pub mod elf;
pub mod guest;
pub mod imported;
pub mod init;
pub mod initramfs;
pub mod keep;
pub mod lava;
pub mod machine;
pub mod modules;
pub mod qemu;
pub mod qmp;
pub mod stored;
pub mod tree;

pub use deb::{kernel_from_deb, kernel_from_path, DebError, KernelImage};
pub use initramfs::{Initramfs, InitramfsError};
