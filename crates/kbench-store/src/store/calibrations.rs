//! A machine's noise, measured by A/A sessions.
use super::handle::Store;
use crate::cells;
use crate::db::{parse_json, to_i64};
use crate::error::StoreError;
use serde::{Deserialize, Serialize};

/// A machine's noise, measured by A/A sessions, to be stored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NewCalibration {
    pub label: String,
    pub created_unix_ns: u64,
    pub kbench_version: String,
    /// Which machine (JSON, written and read by the analysis).
    pub fingerprint: serde_json::Value,
    pub sessions: u64,
    pub boots: u64,
    pub components: Vec<CalibrationComponent>,
}

/// The noise of one metric (or pooled percentile) of one comparison key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationComponent {
    pub workload: String,
    pub params: String,
    pub variant: String,
    pub metric: String,
    pub pooled_quantile: Option<f64>,
    /// JSON, written and read by the analysis.
    pub components: serde_json::Value,
}

/// A stored calibration, without its components.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationRow {
    pub id: i64,
    pub label: String,
    pub created_unix_ns: u64,
    pub kbench_version: String,
    pub fingerprint: serde_json::Value,
    pub sessions: u64,
    pub boots: u64,
}

impl Store {
    /// Stores a calibration and its components in one transaction.
    pub fn insert_calibration(&mut self, c: &NewCalibration) -> Result<i64, StoreError> {
        self.in_transaction(|db| {
            let id = db
                .query_one(
                    "INSERT INTO calibrations (label, created_unix_ns, kbench_version, fingerprint,
                                               sessions, boots)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
                    cells![
                        &c.label,
                        to_i64(c.created_unix_ns),
                        &c.kbench_version,
                        c.fingerprint.to_string(),
                        to_i64(c.sessions),
                        to_i64(c.boots)
                    ],
                )?
                .i64(0)?;
            for m in &c.components {
                db.execute(
                    "INSERT INTO calibration_components (calibration_id, workload, params, variant,
                                                         metric, pooled_quantile, components)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    cells![
                        id,
                        &m.workload,
                        &m.params,
                        &m.variant,
                        &m.metric,
                        m.pooled_quantile,
                        m.components.to_string()
                    ],
                )?;
            }
            Ok(id)
        })
    }

    /// Every calibration, oldest first.
    pub fn calibrations(&self) -> Result<Vec<CalibrationRow>, StoreError> {
        let rows = self.db().query(
            "SELECT id, label, created_unix_ns, kbench_version, fingerprint, sessions, boots
             FROM calibrations ORDER BY created_unix_ns, id",
            &[],
        )?;
        rows.into_iter()
            .map(|mut r| {
                Ok(CalibrationRow {
                    id: r.i64(0)?,
                    label: r.text(1)?,
                    created_unix_ns: r.u64(2)?,
                    kbench_version: r.text(3)?,
                    fingerprint: parse_json(r.opt_str(4)?).unwrap_or_default(),
                    sessions: r.u64(5)?,
                    boots: r.u64(6)?,
                })
            })
            .collect()
    }

    /// The components of calibration `id`.
    pub fn calibration_components(&self, id: i64) -> Result<Vec<CalibrationComponent>, StoreError> {
        let rows = self.db().query(
            "SELECT workload, params, variant, metric, pooled_quantile, components
             FROM calibration_components WHERE calibration_id = ?1",
            cells![id],
        )?;
        rows.into_iter()
            .map(|mut r| {
                Ok(CalibrationComponent {
                    workload: r.text(0)?,
                    params: r.text(1)?,
                    variant: r.text(2)?,
                    metric: r.text(3)?,
                    pooled_quantile: r.opt_f64(4)?,
                    components: parse_json(r.opt_str(5)?).unwrap_or_default(),
                })
            })
            .collect()
    }
}
