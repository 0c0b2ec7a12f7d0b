//! The one document model of a baselines page, and its two renderings: Markdown and a
//! self-contained HTML file. The page's content is decided once (`super::build`); each
//! markup only says how a heading, a paragraph, a list, a table or a block of text looks.

use crate::svg::escape;
use crate::table::md_text;
pub use crate::table::Table;
use std::fmt::Write;

/// A whole page: a title, lines under it, and sections.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub title: String,
    pub intro: Vec<String>,
    pub sections: Vec<Section>,
}

/// A titled part of the page.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub title: String,
    pub blocks: Vec<Block>,
}

/// One piece of a section.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A sub-heading inside a section (a scenario).
    Heading(String),
    Text(String),
    List(Vec<String>),
    Table(Table),
    /// Preformatted text, kept as is (pgbench's closing block).
    Code(String),
    /// An inline SVG chart and its caption: HTML only, the Markdown has the table it draws.
    Figure {
        svg: String,
        caption: String,
    },
}

impl Page {
    /// The page as Markdown (GitHub-flavoured tables).
    pub fn markdown(&self) -> String {
        // Every text may hold what a plan or a server wrote: escaped, as the HTML is.
        let mut out = format!("# {}\n\n", md_text(&self.title));
        for line in &self.intro {
            let _ = writeln!(out, "{}  ", md_text(line));
        }
        for s in &self.sections {
            let _ = write!(out, "\n## {}\n", md_text(&s.title));
            for b in &s.blocks {
                if matches!(b, Block::Figure { .. }) {
                    continue; // a chart draws a table the Markdown already has
                }
                out.push('\n');
                match b {
                    Block::Heading(h) => {
                        let _ = writeln!(out, "### {}", md_text(h));
                    }
                    Block::Text(t) => {
                        let _ = writeln!(out, "{}", md_text(t));
                    }
                    Block::List(items) => {
                        for i in items {
                            let _ = writeln!(out, "- {}", md_text(i));
                        }
                    }
                    Block::Table(t) => t.markdown(&mut out),
                    Block::Code(c) => {
                        // A fence longer than any run of backticks inside, so none ends it.
                        let fence = "`".repeat(longest_run(c, '`').max(2) + 1);
                        let _ = writeln!(
                            out,
                            "{fence}\n{}\n{fence}",
                            c.trim_end()
                                .lines()
                                .map(perfbase_core::redact::printable)
                                .collect::<Vec<_>>()
                                .join("\n")
                        );
                    }
                    Block::Figure { .. } => {}
                }
            }
        }
        out
    }

    /// The page as one HTML file that needs nothing else (no script, no network).
    pub fn html(&self) -> String {
        let mut out = String::from(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        );
        let _ = write!(
            out,
            "<title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
            escape(&self.title),
            escape(&self.title)
        );
        if !self.intro.is_empty() {
            out.push_str("<p class=\"intro\">");
            let lines: Vec<String> = self.intro.iter().map(|l| escape(l)).collect();
            out.push_str(&lines.join("<br>"));
            out.push_str("</p>\n");
        }
        for s in &self.sections {
            let _ = writeln!(out, "<section><h2>{}</h2>", escape(&s.title));
            for b in &s.blocks {
                match b {
                    Block::Heading(h) => {
                        let _ = writeln!(out, "<h3>{}</h3>", escape(h));
                    }
                    Block::Text(t) => {
                        let _ = writeln!(out, "<p>{}</p>", escape(t));
                    }
                    Block::List(items) => {
                        out.push_str("<ul>");
                        for i in items {
                            let _ = write!(out, "<li>{}</li>", escape(i));
                        }
                        out.push_str("</ul>\n");
                    }
                    Block::Table(t) => t.html(&mut out),
                    Block::Code(c) => {
                        let _ = writeln!(out, "<pre>{}</pre>", escape(c.trim_end()));
                    }
                    Block::Figure { svg, caption } => crate::svg::figure(&mut out, svg, caption),
                }
            }
            out.push_str("</section>\n");
        }
        out.push_str("</body></html>\n");
        out
    }
}

pub(crate) const STYLE: &str =
    "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;\
padding:0 1em;color:#222}h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;margin-top:2em}\
table{border-collapse:collapse;margin:.6em 0}th,td{border:1px solid #ddd;padding:3px 8px;\
text-align:right}th{background:#f4f4f4}td.l,th.l{text-align:left}pre{background:#f6f6f6;\
padding:.6em;overflow:auto}.intro{color:#555}td.fail{color:#b42318;font-weight:600}\
figure{margin:14px 0 22px}figcaption{color:#57606a;font-size:12.5px;margin-top:4px}\
svg.chart{display:block;width:100%;max-width:980px;height:auto;background:#fff;\
border:1px solid #d0d7de;border-radius:6px}svg.chart text{fill:#1f2328;font-family:inherit}\
svg.chart .title{font-size:15px;font-weight:600}svg.chart .legend{font-size:12px}\
svg.chart .tick{font-size:11px;fill:#57606a}svg.chart .label{font-size:12px;fill:#24292f}\
svg.chart .mark{font-size:11px;font-weight:600}svg.chart .grid{stroke:#eaeef2;stroke-width:1}\
svg.chart .axis{stroke:#8c959f;stroke-width:1}";

/// The longest run of `c` in `text`.
fn longest_run(text: &str, c: char) -> usize {
    text.split(|x| x != c).map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_markups_carry_every_block_and_escape_what_they_must() {
        let page = Page {
            title: "Baselines <dev>".into(),
            intro: vec!["run 7".into()],
            sections: vec![Section {
                title: "API".into(),
                blocks: vec![
                    Block::Heading("health".into()),
                    Block::Table(Table::new(
                        &["step", "p99 ms"],
                        vec![vec!["a|b".into(), "1.5".into()]],
                        1,
                    )),
                    Block::List(vec!["x & y".into()]),
                    Block::Code("tps = 1".into()),
                ],
            }],
        };
        let md = page.markdown();
        assert!(md.starts_with("# Baselines \\<dev>\n"), "{md}");
        assert!(
            md.contains("| step | p99 ms |\n|---|---:|\n| a\\|b | 1.5 |"),
            "{md}"
        );
        assert!(
            md.contains("### health") && md.contains("- x & y") && md.contains("```\ntps = 1\n```")
        );
        let html = page.html();
        assert!(html.contains("<h1>Baselines &lt;dev&gt;</h1>"), "{html}");
        assert!(
            html.contains("<td class=\"l\">a|b</td><td>1.5</td>"),
            "{html}"
        );
        assert!(html.contains("<li>x &amp; y</li>") && html.contains("<pre>tps = 1</pre>"));
        assert!(!html.contains("<script"));
    }
}
