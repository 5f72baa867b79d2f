//! Which machine a session ran on, as the store keeps it: a level of replication
//! above boots, never pooled by compare unless asked.

/// The machine a session's environment snapshot describes: its host name and CPU
/// models, `host: model + model`, the identity a calibration also matches on. `None`
/// when the session recorded no environment (most imports). Schema migration 6 fills
/// older sessions with the same text in SQL; a test holds the two to one answer.
pub fn machine_of(environment: Option<&serde_json::Value>) -> Option<String> {
    let environment = environment?.as_object()?;
    let host = environment
        .get("hostname")
        .and_then(|h| h.as_str())
        .unwrap_or("unknown host");
    let models: Vec<&str> = environment
        .get("cpu_models")
        .and_then(|m| m.as_array())
        .map(|m| m.iter().filter_map(|m| m.as_str()).collect())
        .unwrap_or_default();
    Some(if models.is_empty() {
        host.to_string()
    } else {
        format!("{host}: {}", models.join(" + "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn host_and_models_name_the_machine() {
        let env = json!({"hostname": "rk3399", "cpu_models": ["Cortex-A53", "Cortex-A72"]});
        assert_eq!(
            machine_of(Some(&env)).as_deref(),
            Some("rk3399: Cortex-A53 + Cortex-A72")
        );
        assert_eq!(
            machine_of(Some(&json!({"cpu_models": []}))).as_deref(),
            Some("unknown host")
        );
        assert_eq!(machine_of(None), None);
        assert_eq!(machine_of(Some(&json!("not an object"))), None);
    }
}
