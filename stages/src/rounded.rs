//! Floats as JSON output shows them: rounded to 3 decimals (`0.519`, not
//! `0.51875`; `0.667`, not `0.6666666666666666`), one rule for every score,
//! signal and weight a user reads. Values inside the compiler keep their full
//! precision; only their serialised form is rounded.

use serde::Serializer;

/// `value` rounded to 3 decimals.
pub fn round(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// Serialises an `f64` rounded to 3 decimals (`#[serde(serialize_with =
/// "crate::rounded::serialize")]`).
///
/// # Errors
///
/// The serialiser's.
pub fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(round(*value))
}

/// [`serialize`] for an `Option<f64>` (`None` as `null`).
///
/// # Errors
///
/// The serialiser's.
pub fn option<S: Serializer>(value: &Option<f64>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => serializer.serialize_some(&round(*value)),
        None => serializer.serialize_none(),
    }
}

/// Rounds every float inside a JSON value to 3 decimals (integers, strings
/// and the structure stay as they are): for reports built as JSON values.
pub fn round_floats(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Number(number) if number.is_f64() => {
            if let Some(rounded) = number
                .as_f64()
                .and_then(|f| serde_json::Number::from_f64(round(f)))
            {
                *number = rounded;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(round_floats),
        serde_json::Value::Object(fields) => fields.values_mut().for_each(round_floats),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn three_decimals() {
        assert!((super::round(0.518_75) - 0.519).abs() < 1e-12);
        assert_eq!(
            serde_json::to_string(&serde_json::json!(super::round(2.0 / 3.0))).unwrap(),
            "0.667"
        );
        let mut value = serde_json::json!({"a": [0.123_456, 7], "b": {"c": 2.0 / 3.0}});
        super::round_floats(&mut value);
        assert_eq!(value.to_string(), r#"{"a":[0.123,7],"b":{"c":0.667}}"#);
    }
}
