//! Streamed answers: `/stream` (server-sent events or JSON lines, a set number at a set gap,
//! with an optional stall) and an OpenAI-compatible `POST /v1/chat/completions` (and
//! `/v1/completions`) that "generates" N tokens at the configured time to first token and gap
//! between tokens, streamed with `"stream": true`. Made so a client's time to first event,
//! gap percentiles and event counts can be checked against what the service was told to do.

use std::time::Duration;

use bytes::Bytes;
use hyper::header::{HeaderValue, CACHE_CONTROL};
use hyper::{Response, StatusCode};
use serde_json::{json, Value};

use crate::config::Config;
use crate::respond::{json as json_response, response, RefBody};
use crate::timed::Timed;

/// Most events one `/stream` answer sends.
pub(crate) const MAX_EVENTS: u64 = 100_000;
/// Most tokens one completion generates.
pub(crate) const MAX_TOKENS: u64 = 4096;
/// Longest gap, first-event delay or stall `/stream` accepts: ten minutes.
const MAX_WAIT_MS: u64 = 600_000;

fn bad_request(why: String) -> Response<RefBody> {
    json_response(
        StatusCode::BAD_REQUEST,
        json!({ "error": { "message": why, "type": "invalid_request_error" } }).to_string(),
    )
}

/// An event stream's answer: no caching, no buffering by proxies.
fn streamed(content_type: &'static str, frames: Vec<(Duration, Bytes)>) -> Response<RefBody> {
    let mut resp = response(
        StatusCode::OK,
        content_type,
        RefBody::Timed(Box::new(Timed::new(frames))),
    );
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}

/// `/stream?events=N&gap_ms=G&first_ms=F&stall_at=K&stall_ms=S&format=sse|lines`: N events
/// (default 10), the first F ms after the request (default 0), then one every G ms (default
/// 10); event K (1-based) comes S ms later than its turn, and the rest keep their gap after it.
pub(crate) fn stream(query: Option<&str>) -> Response<RefBody> {
    let mut events = 10;
    let (mut gap, mut first, mut stall_at, mut stall) = (10, 0, 0, 0);
    let mut sse = true;
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let number = |max: u64| {
            value
                .parse::<u64>()
                .ok()
                .filter(|v| *v <= max)
                .ok_or_else(|| format!("{key}={value}: give a whole number up to {max}"))
        };
        let set = match key {
            "events" => number(MAX_EVENTS).map(|v| events = v),
            "gap_ms" => number(MAX_WAIT_MS).map(|v| gap = v),
            "first_ms" => number(MAX_WAIT_MS).map(|v| first = v),
            "stall_at" => number(MAX_EVENTS).map(|v| stall_at = v),
            "stall_ms" => number(MAX_WAIT_MS).map(|v| stall = v),
            "format" if value == "sse" || value == "lines" => {
                sse = value == "sse";
                Ok(())
            }
            "format" => Err(format!("format={value}: give sse or lines")),
            _ => Err(format!(
                "{key}: not a /stream parameter (events, gap_ms, first_ms, stall_at, stall_ms, format)"
            )),
        };
        if let Err(why) = set {
            return bad_request(why);
        }
    }
    let frames = (0..events)
        .map(|i| {
            let late = if stall_at > 0 && i + 1 >= stall_at {
                stall
            } else {
                0
            };
            let at = Duration::from_millis(first + i * gap + late);
            let text = if sse {
                format!("id: {i}\ndata: {{\"n\":{i}}}\n\n")
            } else {
                format!("{{\"n\":{i}}}\n")
            };
            (at, Bytes::from(text))
        })
        .collect();
    let content_type = if sse {
        "text/event-stream"
    } else {
        "application/x-ndjson"
    };
    streamed(content_type, frames)
}

/// The words of a message's content: a string, or an array of parts whose `text` counts.
fn words(content: &Value) -> u64 {
    match content {
        Value::String(s) => s.split_whitespace().count() as u64,
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .map(|s| s.split_whitespace().count() as u64)
            .sum(),
        _ => 0,
    }
}

/// What a completion request asked for.
struct Ask {
    model: String,
    stream: bool,
    usage: bool,
    tokens: u64,
    prompt_tokens: u64,
    chat: bool,
}

impl Ask {
    fn read(body: &[u8], chat: bool) -> Result<Ask, String> {
        let v: Value =
            serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
        let tokens = match v.get("max_completion_tokens").or(v.get("max_tokens")) {
            None | Some(Value::Null) => 16,
            Some(t) => t
                .as_u64()
                .filter(|t| (1..=MAX_TOKENS).contains(t))
                .ok_or_else(|| format!("max_tokens: give a whole number from 1 to {MAX_TOKENS}"))?,
        };
        let prompt = if chat {
            v.get("messages")
                .and_then(Value::as_array)
                .ok_or("messages: give an array of {role, content}")?
                .iter()
                .filter_map(|m| m.get("content"))
                .map(words)
                .sum()
        } else {
            v.get("prompt")
                .and_then(Value::as_str)
                .ok_or("prompt: give a string")?
                .split_whitespace()
                .count() as u64
        };
        Ok(Ask {
            model: v
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("perfbase-reference")
                .to_string(),
            stream: v.get("stream").and_then(Value::as_bool).unwrap_or(false),
            usage: v
                .pointer("/stream_options/include_usage")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            tokens,
            prompt_tokens: prompt,
            chat,
        })
    }

    fn usage(&self) -> Value {
        json!({
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.tokens,
            "total_tokens": self.prompt_tokens + self.tokens,
        })
    }

    /// One token's choice: its text, and the finish reason on the last.
    fn choice(&self, i: u64) -> Value {
        let text = format!("tok{i} ");
        let finish = (i + 1 == self.tokens).then_some("length");
        if self.chat {
            let delta = if i == 0 {
                json!({ "role": "assistant", "content": text })
            } else {
                json!({ "content": text })
            };
            json!({ "index": 0, "delta": delta, "finish_reason": finish })
        } else {
            json!({ "index": 0, "text": text, "finish_reason": finish })
        }
    }
}

/// `POST /v1/chat/completions` and `POST /v1/completions`: `max_tokens` tokens (default 16),
/// the first after `config.first_token`, then one every `config.token_gap`; streamed as
/// server-sent events with `"stream": true` (the usage chunk with
/// `stream_options.include_usage`, then `data: [DONE]`), or one JSON answer at the end.
pub(crate) async fn completion(config: &Config, body: &[u8], chat: bool) -> Response<RefBody> {
    let ask = match Ask::read(body, chat) {
        Ok(a) => a,
        Err(why) => return bad_request(why),
    };
    let at = |i: u64| config.first_token + config.token_gap * i as u32;
    let object = if chat {
        "chat.completion"
    } else {
        "text_completion"
    };
    let head = |choices: Value| {
        json!({ "id": "cmpl-perfbase", "object": object, "created": 0, "model": ask.model,
                "choices": choices })
    };
    if !ask.stream {
        tokio::time::sleep(at(ask.tokens - 1)).await;
        let text: String = (0..ask.tokens).map(|i| format!("tok{i} ")).collect();
        let choice = if chat {
            json!({ "index": 0, "message": { "role": "assistant", "content": text },
                    "finish_reason": "length" })
        } else {
            json!({ "index": 0, "text": text, "finish_reason": "length" })
        };
        let mut answer = head(json!([choice]));
        answer["usage"] = ask.usage();
        return json_response(StatusCode::OK, answer.to_string());
    }
    let chunk_object = if chat {
        "chat.completion.chunk"
    } else {
        "text_completion"
    };
    let event = |mut v: Value| {
        v["object"] = json!(chunk_object);
        Bytes::from(format!("data: {v}\n\n"))
    };
    let mut frames: Vec<(Duration, Bytes)> = (0..ask.tokens)
        .map(|i| (at(i), event(head(json!([ask.choice(i)])))))
        .collect();
    let end = at(ask.tokens - 1);
    if ask.usage {
        let mut last = head(json!([]));
        last["usage"] = ask.usage();
        frames.push((end, event(last)));
    }
    frames.push((end, Bytes::from_static(b"data: [DONE]\n\n")));
    streamed("text/event-stream", frames)
}

/// `GET /v1/models`: the one model this service "serves".
pub(crate) fn models() -> Response<RefBody> {
    json_response(
        StatusCode::OK,
        json!({ "object": "list", "data": [ { "id": "perfbase-reference", "object": "model",
                "created": 0, "owned_by": "perfbase" } ] })
        .to_string(),
    )
}
