//! One CSV line per row and compared label, RFC 4180 quoting, for spreadsheets and
//! scripts. Every row is there whatever the layout.
use super::{
    design_text, diagnostic_text, metric_text, settle_short, CompareFormat, CompareReport,
    Compared, Layout,
};

pub struct CsvFormat;

const HEADER: &str = "base,new,workload,metric,role,unit,params,variant,cpu_classes,placement,n_a,n_b,design,units_a,units_b,median_a,median_b,shift_pct,ci_low_pct,ci_high_pct,p_value,q_value,delta_pct,verdict,runs_needed,units_needed,diagnostics,settle";

fn field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

fn number<T: ToString>(value: Option<T>) -> String {
    value.map(|v| v.to_string()).unwrap_or_default()
}

impl CompareFormat for CsvFormat {
    fn render(&self, compared: Compared<'_>, _: Layout) -> String {
        let reports = compared.reports();
        let mut out = format!("{HEADER}\n");
        for r in reports {
            rows(&mut out, r);
        }
        out
    }
}

fn rows(out: &mut String, r: &CompareReport) {
    for row in &r.rows {
        let fields = [
            field(&r.base.label),
            field(&r.new.label),
            field(&row.workload),
            field(&metric_text(row)),
            if row.is_primary() {
                "primary"
            } else {
                "secondary"
            }
            .to_string(),
            field(&row.unit),
            field(&row.params),
            field(&row.variant),
            field(&row.cpu_classes),
            row.placement
                .map(|p| p.as_str())
                .unwrap_or_default()
                .to_string(),
            row.n_a.to_string(),
            row.n_b.to_string(),
            field(&design_text(row)),
            row.units_a.to_string(),
            row.units_b.to_string(),
            number(row.median_a),
            number(row.median_b),
            number(row.shift_pct),
            number(row.ci_low_pct),
            number(row.ci_high_pct),
            number(row.p_value),
            number(row.q_value),
            row.delta_pct.to_string(),
            row.verdict.as_str().to_string(),
            number(row.runs_needed),
            number(row.units_needed),
            field(
                &row.diagnostics
                    .iter()
                    .map(|d| diagnostic_text(d, r))
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
            field(
                &row.settle
                    .as_ref()
                    .map(|s| settle_short(s, row.level()))
                    .unwrap_or_default(),
            ),
        ];
        out.push_str(&fields.join(","));
        out.push('\n');
    }
}
