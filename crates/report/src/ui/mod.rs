//! The pages of `perfbase ui`, from figures to HTML, with no server and no store in sight:
//! the runs (runs.rs), one run (run.rs: the HTML report's own sections), A vs B (compare.rs:
//! `perfbase compare`'s verdicts), the plans and a plan's trend (plans.rs: the trend's own
//! charts) and the runs in progress (live.rs). Every page is one document with the report's
//! stylesheet, a bar of links and no script (the live page is the dashboard's, which has its
//! own); every text from the store is escaped, and links carry their values percent-encoded.

pub mod compare;
pub mod live;
pub mod plans;
pub mod run;
pub mod runs;

use crate::svg::escape;
use perfbase_core::percent::encode_component;
use std::fmt::Write;

/// Which part of the app a page is of: its link in the bar is marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Runs,
    Plans,
    Live,
}

/// The bar and the few rules the report's stylesheet has no need of.
const UI_STYLE: &str = "nav.ui{display:flex;gap:18px;align-items:baseline;border-bottom:1px \
solid #d0d7de;padding:6px 0 10px;margin-bottom:12px}nav.ui a{text-decoration:none;color:#0969da}\
nav.ui a.on{font-weight:600;color:#1f2328}nav.ui .store{margin-left:auto;color:#57606a;\
font-size:12px}form.filter{display:flex;flex-wrap:wrap;gap:8px;align-items:end;margin:8px 0}\
form.filter label{display:flex;flex-direction:column;font-size:12px;color:#57606a}\
p.pages{display:flex;gap:16px}p.error{color:#b42318;font-weight:600}body{max-width:1500px}\
table.runs td{white-space:nowrap}table.runs td:nth-child(5){white-space:normal;max-width:26em}";

/// A whole page: `title`, the bar with `section` marked and the store's (redacted) name, and
/// `body`.
pub fn page(title: &str, section: Section, store: &str, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 8 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{}{UI_STYLE}</style>\n</head>\n<body data-page=\"{}\">\n\
         <nav class=\"ui\">",
        escape(title),
        crate::html::STYLE,
        match section {
            Section::Runs => "runs",
            Section::Plans => "plans",
            Section::Live => "live",
        }
    );
    for (s, href, name) in [
        (Section::Runs, "/", "Runs"),
        (Section::Plans, "/plans", "Plans"),
        (Section::Live, "/live", "Live"),
    ] {
        let on = if s == section { " class=\"on\"" } else { "" };
        let _ = write!(out, "<a href=\"{href}\"{on}>{name}</a>");
    }
    let _ = writeln!(
        out,
        "<span class=\"store\">{} · perfbase {}</span></nav>",
        escape(store),
        env!("CARGO_PKG_VERSION")
    );
    out.push_str(body);
    out.push_str("</body>\n</html>\n");
    out
}

/// `path?k=v&…`, each value percent-encoded; pairs with an empty value are left out.
pub fn href(path: &str, pairs: &[(&str, &str)]) -> String {
    let mut out = path.to_string();
    let mut sep = '?';
    for (k, v) in pairs.iter().filter(|(_, v)| !v.is_empty()) {
        let _ = write!(out, "{sep}{k}={}", encode_component(v));
        sep = '&';
    }
    out
}

/// A plan's page.
pub fn plan_href(plan: &str) -> String {
    format!("/plans/{}", encode_component(plan))
}

/// A page that says what went wrong with what was asked (a run not found, a bad filter).
pub fn problem(title: &str, text: &str) -> String {
    format!(
        "<h1>{}</h1>\n<p class=\"error\">{}</p>\n",
        escape(title),
        escape(text)
    )
}
