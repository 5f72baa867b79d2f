//! Sequential designs and their looks ([`kbench_record::sequential`]): written by the
//! commands that look after every unit, read back by a later compare of the labels.
use crate::cells;
use crate::db::to_i64;
use crate::db::Row;
use crate::error::StoreError;
use crate::store::Store;
use kbench_record::sequential::{
    Boundary, DesignRecord, DesignedBy, Level, LookOutcome, LookRow, RecordedDesign,
    SequentialLook, SequentialOptions,
};

impl Store {
    /// Records a design before its first look; its id, for the looks.
    pub fn insert_sequential_design(&mut self, d: &DesignRecord) -> Result<i64, StoreError> {
        self.in_transaction(|db| {
            db.query_one(
                "INSERT INTO sequential_designs (base_label, new_label, designed_by,
                     created_unix_ns, kbench_version, command_line, alpha, delta_pct,
                     max_units_per_side, max_time_s, use_calibration, boundary)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING id",
                cells![
                    &d.base_label,
                    &d.new_label,
                    d.by.as_str(),
                    to_i64(d.created_unix_ns),
                    &d.kbench_version,
                    &d.command_line,
                    d.options.alpha,
                    d.options.delta_pct,
                    to_i64(d.options.max_units_per_side as u64),
                    d.max_time_s,
                    d.options.use_calibration,
                    d.options.boundary.as_str()
                ],
            )?
            .i64(0)
        })
    }

    /// Records one look (every metric's row) under design `design_id`, whole or not at
    /// all.
    pub fn insert_sequential_look(
        &mut self,
        design_id: i64,
        look: &SequentialLook,
    ) -> Result<(), StoreError> {
        self.in_transaction(|db| {
            for r in &look.rows {
                db.execute(
                    "INSERT INTO sequential_looks (design_id, look_index, at_unix_ns, workload,
                         params, variant, metric, n_a, n_b, shift_pct, low_pct, high_pct, outcome,
                         unit_level)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                    cells![
                        design_id,
                        to_i64(look.index),
                        to_i64(look.at_unix_ns),
                        &r.workload,
                        &r.params,
                        &r.variant,
                        &r.metric,
                        to_i64(r.n_a),
                        to_i64(r.n_b),
                        r.shift_pct,
                        r.interval_pct.map(|i| i.0),
                        r.interval_pct.map(|i| i.1),
                        r.outcome.as_str(),
                        r.unit_level.map(Level::as_str)
                    ],
                )?;
            }
            Ok(())
        })
    }

    /// The newest design of BASE against NEW, with its looks, if one was recorded.
    pub fn sequential_design(
        &self,
        base_label: &str,
        new_label: &str,
    ) -> Result<Option<RecordedDesign>, StoreError> {
        let row = self.db().query_opt(
            "SELECT id, base_label, new_label, designed_by, created_unix_ns, kbench_version,
                    command_line, alpha, delta_pct, max_units_per_side, max_time_s,
                    use_calibration, boundary
             FROM sequential_designs WHERE base_label = ?1 AND new_label = ?2
             ORDER BY created_unix_ns DESC, id DESC LIMIT 1",
            cells![base_label, new_label],
        )?;
        let Some(row) = row else {
            return Ok(None);
        };
        let (id, design) = design_of(row)?;
        let looks = self.sequential_looks(id)?;
        Ok(Some(RecordedDesign { id, design, looks }))
    }

    fn sequential_looks(&self, design_id: i64) -> Result<Vec<SequentialLook>, StoreError> {
        let rows = self.db().query(
            "SELECT look_index, at_unix_ns, workload, params, variant, metric, n_a, n_b,
                    shift_pct, low_pct, high_pct, outcome, unit_level
             FROM sequential_looks WHERE design_id = ?1
             ORDER BY look_index, workload, params, variant, metric",
            cells![design_id],
        )?;
        let mut looks: Vec<SequentialLook> = Vec::new();
        for mut r in rows {
            let (index, at_unix_ns) = (r.u64(0)?, r.u64(1)?);
            let outcome_text = r.text(11)?;
            let outcome = LookOutcome::parse(&outcome_text).ok_or_else(|| {
                StoreError::Corrupt(format!("a sequential look's outcome {outcome_text:?}"))
            })?;
            let unit_level = match r.opt_str(12)? {
                Some(text) => Some(Level::parse(text).ok_or_else(|| {
                    StoreError::Corrupt(format!("a sequential look's unit level {text:?}"))
                })?),
                None => None,
            };
            let interval_pct = match (r.opt_f64(9)?, r.opt_f64(10)?) {
                (Some(low), Some(high)) => Some((low, high)),
                _ => None,
            };
            let row = LookRow {
                workload: r.text(2)?,
                params: r.text(3)?,
                variant: r.text(4)?,
                metric: r.text(5)?,
                n_a: r.u64(6)?,
                n_b: r.u64(7)?,
                shift_pct: r.opt_f64(8)?,
                interval_pct,
                outcome,
                unit_level,
            };
            match looks.last_mut().filter(|l| l.index == index) {
                Some(look) => look.rows.push(row),
                None => looks.push(SequentialLook {
                    index,
                    at_unix_ns,
                    rows: vec![row],
                }),
            }
        }
        Ok(looks)
    }
}

fn design_of(mut r: Row) -> Result<(i64, DesignRecord), StoreError> {
    let by_text = r.text(3)?;
    let by = DesignedBy::parse(&by_text)
        .ok_or_else(|| StoreError::Corrupt(format!("a sequential design by {by_text:?}")))?;
    let design = DesignRecord {
        base_label: r.text(1)?,
        new_label: r.text(2)?,
        by,
        created_unix_ns: r.u64(4)?,
        kbench_version: r.text(5)?,
        command_line: r.text(6)?,
        options: SequentialOptions {
            alpha: r.f64(7)?,
            delta_pct: r.f64(8)?,
            max_units_per_side: r.u64(9)? as usize,
            use_calibration: r.i64(11)? != 0,
            boundary: match r.opt_str(12)? {
                None => Boundary::AlwaysValid,
                Some(text) => Boundary::parse(text).ok_or_else(|| {
                    StoreError::Corrupt(format!("a sequential design's boundary {text:?}"))
                })?,
            },
        },
        max_time_s: r.opt_f64(10)?,
    };
    Ok((r.i64(0)?, design))
}
