//! A plan `perfbase k8s` puts in a ConfigMap must hold no credential: anyone who can read the
//! namespace reads the ConfigMap. The rule is the importers' (`redact::is_written_secret`):
//! under a secret-looking name (a header, a query parameter, a JSON member, a form field),
//! any text besides `${VAR}` and `{{…}}` is a credential written out.

use perfbase_core::redact::is_written_secret;

/// Where the plan writes a credential out (`workloads.api.headers.Authorization`), if it
/// does; never the value.
pub(super) fn written(doc: &toml::Table) -> Option<String> {
    doc.iter().find_map(|(k, v)| value(k, k, v))
}

/// `v`, at `path` under key `key`.
fn value(path: &str, key: &str, v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => string(path, key, s),
        toml::Value::Table(t) => t
            .iter()
            .find_map(|(k, v)| value(&format!("{path}.{k}"), k, v)),
        toml::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| value(&format!("{path}[{i}]"), key, v)),
        _ => None,
    }
}

/// A string: secret under its own key; or a JSON body, a query or a form with a member,
/// parameter or field that is.
fn string(path: &str, key: &str, s: &str) -> Option<String> {
    if is_written_secret(key, s) {
        return Some(path.to_string());
    }
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(s) {
        return member(path, "", &json);
    }
    let pairs = s.split_once('?').map_or(s, |(_, q)| q);
    pairs.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        is_written_secret(k, v).then(|| format!("{path} ({k}=)"))
    })
}

/// A JSON value under member `key` of the body at `path`.
fn member(path: &str, key: &str, v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => {
            is_written_secret(key, s).then(|| format!("{path} (JSON member \"{key}\")"))
        }
        serde_json::Value::Object(o) => o.iter().find_map(|(k, v)| member(path, k, v)),
        serde_json::Value::Array(items) => items.iter().find_map(|v| member(path, key, v)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(plan: &str) -> Option<String> {
        written(&plan.parse().unwrap())
    }

    #[test]
    fn credentials_anywhere_in_a_plan_are_found_and_variables_are_not() {
        let cases = [
            (
                "[workloads.w.headers]\nAuthorization = \"Bearer abc\"",
                "workloads.w.headers.Authorization",
            ),
            (
                "[workloads.w]\nheaders = { X-Api-Key = \"k1\" }",
                "workloads.w.headers.X-Api-Key",
            ),
            (
                "[workloads.w]\nbody = '{\"user\": \"a\", \"password\": \"hunter2\"}'",
                "workloads.w.body (JSON member \"password\")",
            ),
            (
                "[workloads.w]\npath = \"/x?a=1&token=t0k\"",
                "workloads.w.path (token=)",
            ),
            (
                "[[journeys.j.steps]]\nheaders.Authorization = \"Bearer S{{x}}\"",
                "journeys.j.steps[0].headers.Authorization",
            ),
        ];
        for (plan, want) in cases {
            assert_eq!(found(plan).as_deref(), Some(want), "{plan}");
        }
        let clean = "[workloads.w]\npath = \"/x?token=${T}\"\nbody = '{\"password\": \"${P}\"}'\n\
                     headers = { Authorization = \"Bearer {{token}}\", Accept = \"a/b\" }";
        assert_eq!(found(clean), None);
    }
}
