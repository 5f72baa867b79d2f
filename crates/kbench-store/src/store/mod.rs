//! The run database: open and migrate, write sessions and runs, read them back, on
//! either backend ([`crate::sqlite`], the default, or [`crate::postgres`], a lab's
//! shared store), with the same queries and the same semantics.
//!
//! Every run is its own transaction, so a crash loses at most the run in flight; a
//! session written whole (an import, a boot, a push) is one transaction.
//!
//! [`Store`] and its connection are in `handle`; its reads and writes are grouped by
//! what they touch, each file an `impl Store` of its own.
mod calibrations;
mod handle;
mod imports;
mod kernel_configs;
mod labels;
mod runs;
mod scope;
mod sessions;
mod summaries;
mod whole;

pub use crate::db::{busy_timeout, BUSY_TIMEOUT_ENV};
pub use crate::error::StoreError;
pub use crate::sqlite::{is_busy, is_disk_full, is_read_only};
pub use calibrations::{CalibrationComponent, CalibrationRow, NewCalibration};
pub use handle::{default_path, Backend, Store};
pub use kbench_record::stored::{SessionWithRuns, SummaryRow};
pub use labels::{check_label, LabelInfo, LabelKernel, MachineLabel};
pub use runs::RunRow;
pub use scope::SessionScope;
pub use sessions::{new_session_uuid, SessionRow};
pub use whole::{NewBoot, PushedSession};
