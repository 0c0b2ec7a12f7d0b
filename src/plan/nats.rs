//! The workload fields of a nats:// target: the mode and the message size.

use super::fields::{self, At, Made};
use super::file::S;
use super::model::PlanError;
use crate::backend::nats::{NatsModeName, NatsTarget};
use crate::backend::options::name_of;
use crate::backend::Backend;
use perfbase_drivers::nats::{NatsDriver, NatsOptions};
use serde::Deserialize;
use url::Url;

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct Fields {
    /// `pubsub` (default), `request` or `jetstream`.
    mode: Option<S<String>>,
    /// Message bytes (default 128).
    size: Option<S<i64>>,
}

impl fields::Fields for Fields {
    const TARGET_FIELDS: &'static [&'static str] = &[];

    fn url(url_text: &str, _: &str) -> Result<Option<Url>, String> {
        NatsDriver::new(url_text, Default::default()).map_err(|e| e.to_string())?;
        Ok(None)
    }

    fn read(self, at: &At<'_>) -> Result<Made, PlanError> {
        let mode = fields::pick(at.cx, &at.f("mode"), &self.mode, NatsModeName::Pubsub)?;
        let options = NatsOptions {
            mode: mode.mode(),
            message_size: fields::positive_or(at.cx, &at.f("size"), &self.size, 128)? as usize,
        };
        let url = at.url().to_string();
        NatsDriver::new(&url, options).map_err(|e| at.err(at.field, e.to_string()))?;
        Ok(Made::One(
            Backend::Nats(NatsTarget { url, options }),
            name_of(mode),
        ))
    }
}
