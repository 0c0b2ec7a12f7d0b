//! What a protocol's plan file (`plan/NAME.rs`) answers ([`Fields`]), and how a workload's
//! table becomes that protocol's fields: read once its target says which protocol it is, with
//! every field the protocol does not have an error that names the protocols it is for.

use super::context::Ctx;
use super::file::S;
use super::model::{PlanError, Workload};
use crate::backend::{Backend, Kind};
use perfbase_drivers::workload::Corpus;
use serde::de::DeserializeOwned;
use std::sync::Arc;
use toml::de::{DeValue, ValueDeserializer};
use toml::Spanned;
use url::Url;

/// A target as the workloads use it: as written, its protocol, its URL with `${ENV}`
/// expanded, and that URL parsed (when its protocol's workloads want it).
pub(super) type TargetInfo<'r> = (&'r super::file::TargetDef, Kind, String, Option<Url>);

/// A protocol's workload fields: a serde struct in the protocol's own plan file, unknown
/// fields denied.
pub(super) trait Fields: DeserializeOwned {
    /// The target fields its targets take beyond `url` and `headers`.
    const TARGET_FIELDS: &'static [&'static str];
    /// Its target's URL checked now, so a bad one is an error at the target's line; parsed
    /// when its workloads want it.
    fn url(url_text: &str, shown: &str) -> Result<Option<Url>, String>;
    /// The workload (or a suite of them) these fields describe.
    fn read(self, at: &At<'_>) -> Result<Made, PlanError>;
}

/// Where a workload is read: what every protocol's reader needs besides its own fields.
pub(super) struct At<'a> {
    pub cx: &'a Ctx<'a>,
    pub name: &'a str,
    /// `workloads.NAME`, the head of its fields' names in errors.
    pub field: &'a str,
    /// Its `target = "…"`, where errors about the workload as a whole point.
    pub target_field: &'a S<String>,
    pub target: &'a TargetInfo<'a>,
    /// The target's URL as results show it (a `${VAR}` stays a name).
    pub shown_url: &'a str,
    pub corpora: &'a [Arc<Corpus>],
}

impl At<'_> {
    /// An error about the workload as a whole, at its `target` line.
    pub fn err(&self, field: impl Into<String>, message: impl Into<String>) -> PlanError {
        self.cx.err(self.target_field, field, message)
    }

    /// `workloads.NAME.f`.
    pub fn f(&self, f: &str) -> String {
        format!("{}.{f}", self.field)
    }

    /// The target's URL with `${ENV}` expanded.
    pub fn url(&self) -> &str {
        &self.target.2
    }
}

/// A workload's table as written, with the places of its fields.
pub(super) type Table<'t> = Spanned<DeValue<'t>>;

/// What a workload's fields made.
pub(super) enum Made {
    /// A workload whole (HTTP's label and headers are its own).
    Workload(Workload),
    /// One backend and what its label calls it.
    One(Backend, String),
    /// A suite: the backend of each operation, in order.
    Suite(Vec<(String, Backend)>),
}

/// The workload table `table` read as protocol `F`'s fields (its `target` taken out), then
/// read into what it makes. A field `F` does not have is an error naming the protocols it is
/// for; `names` lists each protocol's fields.
pub(super) fn read_as<F: Fields>(
    at: &At<'_>,
    table: &Table<'_>,
    names: fn(Kind) -> &'static [&'static str],
) -> Result<Made, PlanError> {
    let cx = at.cx;
    let own = match table.get_ref() {
        DeValue::Table(t) => t
            .iter()
            .filter(|(k, _)| k.get_ref().as_ref() != "target")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        _ => Default::default(),
    };
    let value = Spanned::new(table.span(), DeValue::Table(own));
    let fields = F::deserialize(ValueDeserializer::from(value)).map_err(|e| {
        let offset = e.span().map_or(table.span().start, |s| s.start);
        let message = e.message().trim();
        let unknown = message
            .strip_prefix("unknown field `")
            .and_then(|m| m.split_once('`'))
            .map(|(name, _)| name);
        let Some(name) = unknown else {
            let field = super::context::toml_field(cx.text, offset);
            return cx.err_at(
                cx.line(offset),
                field,
                super::context::toml_message(message),
            );
        };
        let for_kinds: Vec<Kind> = Kind::ALL
            .iter()
            .copied()
            .filter(|k| names(*k).contains(&name))
            .collect();
        let text = if for_kinds.is_empty() {
            format!(
                "unknown field; {} workloads take {}",
                at.target.1.shown(),
                {
                    let mut own = names(at.target.1).to_vec();
                    own.sort_unstable();
                    own.join(", ")
                }
            )
        } else {
            format!(
                "applies to {} targets, not to target '{}'",
                Kind::describe(&for_kinds),
                at.target_field.get_ref()
            )
        };
        cx.err_at(cx.line(offset), at.f(name), text)
    })?;
    fields.read(at)
}

/// The names of `F`'s fields, as its serde derive gives them (renames included): what a
/// field that belongs to another protocol is checked against.
pub(super) fn names_of<F: DeserializeOwned>() -> &'static [&'static str] {
    use serde::de::{Error as _, Visitor};
    type E = serde::de::value::Error;
    struct Names<'a>(&'a mut &'static [&'static str]);
    impl<'de> serde::Deserializer<'de> for Names<'_> {
        type Error = E;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, E> {
            Err(E::custom("a struct's field names only"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, E> {
            *self.0 = fields;
            Err(E::custom("names taken"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    let mut fields: &'static [&'static str] = &[];
    let _ = F::deserialize(Names(&mut fields));
    fields
}

/// A URL the url crate parses (HTTP, SQL, Vault, WebSocket), or the error showing it redacted.
pub(super) fn parsed(url_text: &str, shown: &str) -> Result<Option<Url>, String> {
    Url::parse(url_text)
        .map(Some)
        .map_err(|e| format!("invalid URL '{shown}': {e}"))
}

/// A suite's operations (`builtin` or `command` = "suite"), each as that field would name it
/// (at the suite's line); `None` for a workload of one operation. `all` are the protocol's
/// operations; `operations` picks some, in order.
fn suite_ops(
    at: &At<'_>,
    chosen: &Option<S<String>>,
    operations: &Option<S<Vec<String>>>,
    all: &[&str],
) -> Result<Option<Vec<S<String>>>, PlanError> {
    let cx = at.cx;
    let Some(chosen) = chosen.as_ref().filter(|c| c.get_ref() == "suite") else {
        if let Some(o) = operations {
            return Err(cx.err(
                o,
                at.f("operations"),
                "pick operations of a suite only (builtin or command = \"suite\")",
            ));
        }
        return Ok(None);
    };
    let picked: Vec<String> = match operations {
        None => all.iter().map(|s| s.to_string()).collect(),
        Some(o) => {
            let f = at.f("operations");
            if o.get_ref().is_empty() {
                return Err(cx.err(o, &f, "name at least one operation"));
            }
            if let Some(op) = o.get_ref().iter().find(|op| !all.contains(&op.as_str())) {
                return Err(cx.err(
                    o,
                    &f,
                    format!("unknown operation '{op}'; use {}", all.join(", ")),
                ));
            }
            o.get_ref().clone()
        }
    };
    let span = chosen.span();
    Ok(Some(
        picked
            .into_iter()
            .map(|op| S::new(span.clone(), op))
            .collect(),
    ))
}

/// The field naming a workload's operation or `suite`, its `operations`, and every operation
/// the protocol has.
pub(super) type OperationFields<'f> = (
    &'f Option<S<String>>,
    &'f Option<S<Vec<String>>>,
    &'f [&'f str],
);

/// A workload whose operation field (`command`, `builtin`) names one operation or the suite:
/// `one` reads the fields as they are, or, for a suite, once per operation with `set`
/// naming that operation in a copy of them.
pub(super) fn one_or_suite<F: Clone>(
    at: &At<'_>,
    fields: &F,
    (chosen, operations, all): OperationFields<'_>,
    set: impl Fn(&mut F, S<String>),
    one: impl Fn(&F) -> Result<(Backend, String), PlanError>,
) -> Result<Made, PlanError> {
    let Some(ops) = suite_ops(at, chosen, operations, all)? else {
        let (backend, what) = one(fields)?;
        return Ok(Made::One(backend, what));
    };
    let mut made = Vec::new();
    for op in ops {
        let mut f = fields.clone();
        let name = op.get_ref().clone();
        set(&mut f, op);
        made.push((name, one(&f)?.0));
    }
    Ok(Made::Suite(made))
}

/// The names of operation type `O`'s operations.
pub(super) fn op_names<O: perfbase_drivers::Operation>() -> Vec<&'static str> {
    O::ALL.iter().map(|o| o.name()).collect()
}

/// `v` read as one of `T`'s names (a flag's `ValueEnum`, so flags and plans share their
/// choices and their error), or `default` when the field is absent.
pub(super) fn pick<T: clap::ValueEnum + Copy>(
    cx: &Ctx<'_>,
    field: &str,
    v: &Option<S<String>>,
    default: T,
) -> Result<T, PlanError> {
    match v {
        None => Ok(default),
        Some(v) => {
            crate::backend::options::choose(v.get_ref(), |_| true).map_err(|e| cx.err(v, field, e))
        }
    }
}

/// A positive number field, or `default`.
pub(super) fn positive_or(
    cx: &Ctx<'_>,
    field: &str,
    v: &Option<S<i64>>,
    default: u64,
) -> Result<u64, PlanError> {
    match v {
        Some(v) => cx.positive(v, field),
        None => Ok(default),
    }
}

/// A text field, or `default`.
pub(super) fn text_or(v: &Option<S<String>>, default: &str) -> String {
    v.as_ref()
        .map_or_else(|| default.to_string(), |s| s.get_ref().clone())
}

/// A flag field: false when absent.
pub(super) fn flag(v: &Option<S<bool>>) -> bool {
    v.as_ref().is_some_and(|b| *b.get_ref())
}

/// The operation a workload's `command` names (`suite` is expanded before this), or an error
/// at its line listing the names of `product`'s operations.
pub(super) fn command<O: perfbase_drivers::Operation>(
    at: &At<'_>,
    command: &Option<S<String>>,
    product: &str,
    suite: bool,
) -> Result<O, PlanError> {
    let names = O::names();
    let or_suite = if suite { "suite or " } else { "" };
    match command {
        Some(c) => O::from_name(c.get_ref()).ok_or_else(|| {
            at.cx.err(
                c,
                at.f("command"),
                format!(
                    "unknown {product} {} '{}'; use {or_suite}one of {names}",
                    if suite { "operation" } else { "command" },
                    c.get_ref()
                ),
            )
        }),
        None => Err(at.err(
            at.f("command"),
            format!("a {product} workload needs `command`: {or_suite}one of {names}"),
        )),
    }
}
