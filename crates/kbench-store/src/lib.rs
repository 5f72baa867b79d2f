//! kbench's run database (SQLite) and the importers and exporters around it.
pub mod export;
pub mod import;
pub mod json;
pub mod kernel_config;
pub mod record;
pub mod schema;
pub mod store;

pub use json::RawJson;
pub use kernel_config::config_hash;
pub use record::legacy_primary;
pub use store::{
    default_path, AbSide, CalibrationComponent, CalibrationRow, ImportSource, LabelInfo, NewBoot,
    NewCalibration, NewSession, RunRow, SessionRow, SessionWithRuns, Store, StoreError, StoredRun,
    SummaryRow, Value,
};
