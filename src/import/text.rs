//! The plan's text as imports write it: every string quoted by the `toml` crate (never by
//! hand), secrets turned into `${PERFBASE_IMPORT_…}` variables, and the header comment that
//! says what was imported and what to set.

use perfbase_core::redact::is_secret_name;

/// `s` as a TOML string (quoted and escaped by the toml crate).
pub(super) fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// `{ "A" = "1", "B" = "2" }`.
pub(super) fn inline(pairs: &[(String, String)]) -> String {
    let items: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{} = {}", q(k), q(v)))
        .collect();
    format!("{{ {} }}", items.join(", "))
}

/// The variables a plan needs set, in the order first needed.
#[derive(Default)]
pub(super) struct Secrets {
    pub(super) vars: Vec<String>,
}

impl Secrets {
    /// `${PERFBASE_IMPORT_NAME}` for the secret named `name`, remembered for the header.
    pub(super) fn var(&mut self, name: &str) -> String {
        let var = format!(
            "PERFBASE_IMPORT_{}",
            name.chars()
                .map(|c| if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                })
                .collect::<String>()
        );
        if !self.vars.contains(&var) {
            self.vars.push(var.clone());
        }
        format!("${{{var}}}")
    }

    /// A header's value as the plan writes it: a credential becomes a variable (an
    /// `Authorization` keeps its scheme, `Bearer ${…}`).
    pub(super) fn header(&mut self, name: &str, value: &str) -> String {
        if !is_secret_name(name) || value.contains("{{") {
            return value.to_string();
        }
        match value.split_once(' ') {
            Some((scheme, _)) if name.eq_ignore_ascii_case("authorization") => {
                format!("{scheme} {}", self.var(name))
            }
            _ => self.var(name),
        }
    }

    /// A path and query with each secret-named query parameter's value a variable.
    pub(super) fn target(&mut self, url: &url::Url) -> String {
        let mut out = url.path().to_string();
        if let Some(query) = url.query() {
            let parts: Vec<String> = query
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, _)) if is_secret_name(k) => format!("{k}={}", self.var(k)),
                    _ => kv.to_string(),
                })
                .collect();
            out.push('?');
            out.push_str(&parts.join("&"));
        }
        out
    }

    /// A JSON body with each secret-named field's string value a variable; other bodies as
    /// they are. Whether any was replaced, too.
    pub(super) fn body(&mut self, body: &str) -> (String, bool) {
        let Ok(mut v) = serde_json::from_str::<serde_json::Value>(body) else {
            return (body.to_string(), false);
        };
        let mut replaced = false;
        self.walk(&mut v, &mut replaced);
        if replaced {
            (v.to_string(), true)
        } else {
            (body.to_string(), false)
        }
    }

    fn walk(&mut self, v: &mut serde_json::Value, replaced: &mut bool) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, x) in map.iter_mut() {
                    if x.is_string() && is_secret_name(k) {
                        *x = serde_json::Value::String(self.var(k));
                        *replaced = true;
                    } else {
                        self.walk(x, replaced);
                    }
                }
            }
            serde_json::Value::Array(items) => {
                items.iter_mut().for_each(|x| self.walk(x, replaced));
            }
            _ => {}
        }
    }

    /// The header comment's lines for the variables to export.
    pub(super) fn comment(&self) -> String {
        if self.vars.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "# Secrets were not written here; export them before the run (a header's\n\
             # credential without its scheme):\n",
        );
        for v in &self.vars {
            out.push_str(&format!("#   export {v}=…\n"));
        }
        out
    }
}

/// `scheme://host:port` of a URL, the target every imported request goes to.
pub(super) fn origin(url: &url::Url) -> String {
    url.origin().ascii_serialization()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_become_variables_and_the_rest_stays() {
        let mut s = Secrets::default();
        assert_eq!(
            s.header("Authorization", "Bearer abc"),
            "Bearer ${PERFBASE_IMPORT_AUTHORIZATION}"
        );
        assert_eq!(s.header("X-Api-Key", "k1"), "${PERFBASE_IMPORT_X_API_KEY}");
        assert_eq!(s.header("Accept", "text/html"), "text/html");
        let url = url::Url::parse("http://h/p?q=1&api_key=zz").unwrap();
        assert_eq!(s.target(&url), "/p?q=1&api_key=${PERFBASE_IMPORT_API_KEY}");
        let (body, replaced) = s.body(r#"{"user":"u","password":"pw"}"#);
        assert!(replaced && !body.contains("pw"), "{body}");
        assert!(body.contains("${PERFBASE_IMPORT_PASSWORD}"), "{body}");
        assert_eq!(s.vars.len(), 4);
        assert!(s.comment().contains("export PERFBASE_IMPORT_PASSWORD="));
        // Quoted by the toml crate: whatever form it picks reads back as the same text.
        let quoted = format!("v = {}", q("a\"b\n'c"));
        let back: toml::Table = toml::from_str(&quoted).expect("valid TOML");
        assert_eq!(back["v"].as_str(), Some("a\"b\n'c"));
    }
}
