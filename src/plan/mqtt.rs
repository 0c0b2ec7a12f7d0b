//! The workload fields of an mqtt:// target: the QoS and the message size.

use super::fields::{self, At, Made};
use super::file::S;
use super::model::PlanError;
use crate::backend::mqtt::MqttTarget;
use crate::backend::Backend;
use perfbase_drivers::mqtt::{MqttDriver, MqttOptions};
use serde::Deserialize;
use url::Url;

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct Fields {
    /// QoS 0 or 1.
    qos: Option<S<i64>>,
    /// Message bytes (default 128).
    size: Option<S<i64>>,
}

impl fields::Fields for Fields {
    const TARGET_FIELDS: &'static [&'static str] = &[];

    fn url(url_text: &str, _: &str) -> Result<Option<Url>, String> {
        MqttDriver::new(url_text, Default::default()).map_err(|e| e.to_string())?;
        Ok(None)
    }

    fn read(self, at: &At<'_>) -> Result<Made, PlanError> {
        let qos = match &self.qos {
            Some(q) if matches!(*q.get_ref(), 0 | 1) => *q.get_ref() as u8,
            Some(q) => return Err(at.cx.err(q, at.f("qos"), "use 0 or 1")),
            None => 0,
        };
        let options = MqttOptions {
            qos,
            message_size: fields::positive_or(at.cx, &at.f("size"), &self.size, 128)? as usize,
        };
        let url = at.url().to_string();
        MqttDriver::new(&url, options).map_err(|e| at.err(at.field, e.to_string()))?;
        Ok(Made::One(
            Backend::Mqtt(MqttTarget { url, options }),
            format!("qos {qos}"),
        ))
    }
}
