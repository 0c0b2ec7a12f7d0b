//! `[targets]`: each target's protocol and URL, checked by its protocol's plan file, and the
//! settings that apply to it.

use super::context::Ctx;
use super::fields::TargetInfo;
use super::file::{self, PlanFile};
use super::model::PlanError;
use crate::backend::Kind;
use std::collections::BTreeMap;

/// Every target of the plan, by name.
pub(super) fn targets<'r>(
    cx: &Ctx<'_>,
    raw: &'r PlanFile,
) -> Result<BTreeMap<String, TargetInfo<'r>>, PlanError> {
    let mut targets = BTreeMap::new();
    for (name, t) in &raw.targets {
        let field = format!("targets.{name}.url");
        let url_text = cx.url(&t.url, &field)?;
        let kind = kind_of(cx, (name, t), &url_text)?;
        if !kind.built() {
            let feature = kind.name();
            return Err(cx.err(
                &t.url,
                &field,
                format!(
                    "this perfbase was built without the `{feature}` feature; build it with \
                     `cargo build --features {feature}` (all protocols are in the default build)"
                ),
            ));
        }
        // Each protocol's driver checks its URL now, so a bad one is an error at its line.
        let shown = perfbase_core::redact::url(t.url.get_ref());
        let url = super::protocols::check_url(kind, &url_text, &shown)
            .map_err(|e| cx.err(&t.url, &field, e))?;
        fields_fit(cx, (name, t), kind)?;
        targets.insert(name.clone(), (t, kind, url_text, url));
    }
    Ok(targets)
}

/// The protocol a target speaks: its URL's scheme, or `protocol = "NAME"` on an http(s)://
/// URL for the protocols above HTTP.
fn kind_of(
    cx: &Ctx<'_>,
    (name, t): (&str, &file::TargetDef),
    url_text: &str,
) -> Result<Kind, PlanError> {
    let scheme = url_text.split("://").next().unwrap_or_default();
    let Some(kind) = Kind::of(scheme).filter(|_| url_text.contains("://")) else {
        let schemes: Vec<String> = Kind::ALL
            .iter()
            .flat_map(|k| k.schemes())
            .map(|s| format!("{s}://"))
            .collect();
        return Err(cx.err(
            &t.url,
            format!("targets.{name}.url"),
            format!(
                "'{}': use an {} or {} URL",
                perfbase_core::redact::url(t.url.get_ref()),
                schemes[..schemes.len() - 1].join(", "),
                schemes[schemes.len() - 1]
            ),
        ));
    };
    let Some(p) = &t.protocol else {
        return Ok(kind);
    };
    let above = Kind::ALL
        .iter()
        .copied()
        .find(|k| k.above_http() && k.name() == p.get_ref().as_str());
    match (kind, above) {
        (Kind::Http, Some(above)) => Ok(above),
        _ => {
            let names: Vec<String> = Kind::above_http_names()
                .iter()
                .map(|n| format!("\"{n}\""))
                .collect();
            Err(cx.err(
                p,
                format!("targets.{name}.protocol"),
                format!(
                    "the protocols above HTTP are {}, on an http:// or https:// URL",
                    names.join(", ")
                ),
            ))
        }
    }
}

/// A target's settings beyond `url` and `headers` are each for some protocols (as their plan
/// files say): one set on a target of another is an error naming the protocols it is for.
fn fields_fit(
    cx: &Ctx<'_>,
    (name, t): (&str, &file::TargetDef),
    kind: Kind,
) -> Result<(), PlanError> {
    let set = [
        ("keepalive", t.keepalive.is_some()),
        ("insecure", t.insecure.is_some()),
        ("cacert", t.cacert.is_some()),
        ("http2", t.http2.is_some()),
        ("streams", t.streams.is_some()),
        ("token_env", t.token_env.is_some()),
        ("token_file", t.token_file.is_some()),
    ];
    let Some((f, _)) = set
        .iter()
        .find(|(f, set)| *set && !super::protocols::target_fields(kind).contains(f))
    else {
        return Ok(());
    };
    let for_kinds: Vec<Kind> = Kind::ALL
        .iter()
        .copied()
        .filter(|k| super::protocols::target_fields(*k).contains(f))
        .collect();
    Err(cx.err(
        &t.url,
        format!("targets.{name}.{f}"),
        format!("applies to {} targets only", Kind::describe(&for_kinds)),
    ))
}
