//! JSON columns kept as their stored text and parsed only when a caller asks: reading
//! thousands of runs should not build thousands of JSON trees nobody looks at.
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// JSON text as stored (a run's record, rusage, tasks).
///
/// It serializes as the JSON it holds (not as a string), so exports are unchanged, and
/// deserializes from any JSON value. Two are equal when they hold the same JSON value,
/// however written (key order, spacing).
#[derive(Clone)]
pub struct RawJson(String);

impl RawJson {
    /// `value` as JSON text; `None` if it cannot be serialized.
    pub fn from_value<T: Serialize + ?Sized>(value: &T) -> Option<RawJson> {
        serde_json::to_string(value).ok().map(RawJson)
    }

    /// Text read back from a database, taken as JSON without checking (it is checked
    /// when parsed).
    pub fn from_stored(text: String) -> RawJson {
        RawJson(text)
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Parsed as `T`; `None` when it is not one.
    pub fn parse<T: DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_str(&self.0).ok()
    }

    /// Parsed as a generic JSON value; `None` when the text is not JSON.
    pub fn value(&self) -> Option<serde_json::Value> {
        self.parse()
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &RawJson) -> bool {
        self.0 == other.0 || (self.value().is_some() && self.value() == other.value())
    }
}

impl std::fmt::Debug for RawJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for RawJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let value: serde_json::Value =
            serde_json::from_str(&self.0).map_err(serde::ser::Error::custom)?;
        value.serialize(s)
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawJson, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        Ok(RawJson(value.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_as_the_json_it_holds() {
        let raw = RawJson::from_value(&serde_json::json!({"a": [1, 2.5, "x"]})).unwrap();
        assert_eq!(raw.as_str(), r#"{"a":[1,2.5,"x"]}"#);
        let outer = serde_json::to_string(&serde_json::json!({ "r": raw })).unwrap();
        assert_eq!(outer, r#"{"r":{"a":[1,2.5,"x"]}}"#);
        let back: RawJson = serde_json::from_str(r#"{"a":[1,2.5,"x"]}"#).unwrap();
        assert_eq!(back, raw);
        let spaced = RawJson::from_stored(r#"{"b": 2, "a": 1}"#.into());
        assert_eq!(spaced, RawJson::from_stored(r#"{"a":1,"b":2}"#.into()));
        assert_ne!(spaced, RawJson::from_stored(r#"{"a":1}"#.into()));
        assert_eq!(raw.value().unwrap()["a"][2], "x");
    }

    #[test]
    fn bad_text_fails_only_when_read() {
        let raw = RawJson::from_stored("{not json".into());
        assert_eq!(raw.value(), None);
        assert!(serde_json::to_string(&raw).is_err());
    }
}
