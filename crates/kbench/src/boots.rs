//! The binary's side of a boot (`vm-ab`, `bisect`, `import-console`, `initramfs`):
//! kbench-boot judges a boot's log, and this stores it; kbench-boot's errors reach the
//! user with the exit status they call for.
pub use kbench_boot::keep::{store_boot, BootStore};
