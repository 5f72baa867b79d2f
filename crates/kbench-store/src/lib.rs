//! kbench's run database (SQLite, or a lab's PostgreSQL) and the importers and
//! exporters around it.
pub mod db;
pub mod export;
pub mod import;
pub mod json;
pub mod kernel_config;
pub mod location;
pub mod machine;
pub mod postgres;
pub mod push;
pub mod record;
pub mod schema;
pub mod sqlite;
pub mod store;

pub use json::RawJson;
pub use kernel_config::config_hash;
pub use location::Location;
pub use machine::machine_of;
pub use record::legacy_primary;
pub use store::{
    default_path, AbSide, Backend, CalibrationComponent, CalibrationRow, ImportSource, LabelInfo,
    MachineLabel, NewBoot, NewCalibration, NewSession, PushedSession, RunRow, SessionRow,
    SessionWithRuns, Store, StoreError, StoredRun, SummaryRow, Value,
};
