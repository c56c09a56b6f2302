//! The first difference between two JSON values, as a path into them.

use serde_json::Value;

/// Where `actual` first differs from `expected` (depth first, object keys in `expected`'s
/// order, then keys only `actual` has), with both values there; `None` if they are equal.
pub fn first_difference(expected: &Value, actual: &Value) -> Option<String> {
    diff_at("$", expected, actual)
}

fn diff_at(path: &str, expected: &Value, actual: &Value) -> Option<String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (key, ev) in e {
                let here = format!("{path}.{key}");
                match a.get(key) {
                    Some(av) => {
                        if let Some(d) = diff_at(&here, ev, av) {
                            return Some(d);
                        }
                    }
                    None => return Some(format!("{here}: expected {ev}, missing")),
                }
            }
            a.iter()
                .find(|(key, _)| !e.contains_key(*key))
                .map(|(key, av)| format!("{path}.{key}: not expected, got {av}"))
        }
        (Value::Array(e), Value::Array(a)) => {
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                if let Some(d) = diff_at(&format!("{path}[{i}]"), ev, av) {
                    return Some(d);
                }
            }
            (e.len() != a.len())
                .then(|| format!("{path}: expected {} element(s), got {}", e.len(), a.len()))
        }
        _ => (expected != actual).then(|| format!("{path}: expected {expected}, got {actual}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_values_have_no_difference() {
        let v = json!([{"a": 1, "b": [1, 2, {"c": null}]}]);
        assert_eq!(first_difference(&v, &v.clone()), None);
    }

    #[test]
    fn the_first_differing_leaf_is_named() {
        let e = json!([{"a": 1, "b": [1, 2, {"c": null}]}, {"a": 5}]);
        let a = json!([{"a": 1, "b": [1, 2, {"c": 0}]}, {"a": 6}]);
        assert_eq!(
            first_difference(&e, &a).unwrap(),
            "$[0].b[2].c: expected null, got 0"
        );
    }

    #[test]
    fn missing_extra_and_length_differences_are_named() {
        assert_eq!(
            first_difference(&json!({"a": 1}), &json!({})).unwrap(),
            "$.a: expected 1, missing"
        );
        assert_eq!(
            first_difference(&json!({}), &json!({"z": true})).unwrap(),
            "$.z: not expected, got true"
        );
        assert_eq!(
            first_difference(&json!([1]), &json!([1, 2])).unwrap(),
            "$: expected 1 element(s), got 2"
        );
        assert_eq!(
            first_difference(&json!("x"), &json!(["x"])).unwrap(),
            "$: expected \"x\", got [\"x\"]"
        );
    }
}
