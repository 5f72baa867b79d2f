//! kbench's run database (SQLite, or a lab's PostgreSQL) and its exports. It stores what
//! kbench-import's readers return ([`Imported`]) without linking them.
mod backend_errors;
pub mod db;
pub mod designs;
pub mod error;
pub mod export;
pub mod kernel_config;
pub mod location;
pub mod machine;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod push;
pub mod rows;
pub mod schema;
pub mod sqlite;
pub mod store;

pub use kbench_record::{
    legacy_primary, AbSide, ImportSource, Imported, ImportedRun, ImportedSummary, NewSession,
    RawJson, StoredRun, Value,
};
pub use kernel_config::config_hash;
pub use location::Location;
pub use machine::{machine_id_of, machine_key, machine_of, machine_with_id, split_machine_key};
pub use rows::rows_of;
pub use store::{
    check_label, default_path, Backend, CalibrationComponent, CalibrationRow, LabelInfo,
    LabelKernel, MachineLabel, NewBoot, NewCalibration, PushedSession, RunRow, SessionRow,
    SessionScope, SessionWithRuns, Store, StoreError, SummaryRow,
};
