//! Multiple-comparison control across the rows of one report.

/// Benjamini-Hochberg adjusted p-values (Benjamini & Hochberg 1995), the step-up
/// q_(i) = min_{j ≥ i} min(1, m·p_(j)/j), returned in input order (as R's
/// `p.adjust(p, "BH")`). Rejecting rows with q ≤ α controls the false-discovery rate at α.
/// NaN entries stay NaN and do not count towards m.
pub fn benjamini_hochberg(p_values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p_values.len())
        .filter(|&i| !p_values[i].is_nan())
        .collect();
    order.sort_by(|&i, &j| p_values[i].total_cmp(&p_values[j]));
    let m = order.len() as f64;
    let mut adjusted = vec![f64::NAN; p_values.len()];
    let mut running_min: f64 = 1.0;
    for (rank, &index) in order.iter().enumerate().rev() {
        let scaled = p_values[index].clamp(0.0, 1.0) * m / (rank + 1) as f64;
        running_min = running_min.min(scaled);
        adjusted[index] = running_min;
    }
    adjusted
}
