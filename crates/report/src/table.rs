//! The one table model of every report: a run's report (Markdown and HTML), the baselines
//! page and the terminal (plain text, see `text`). What a table holds is decided once, by
//! whoever builds it; `markdown`, `html` and `text` only say how it looks. A cell says what it
//! is (a word, a figure, code, a verdict), never which markup shows it.

use crate::svg::escape;
use std::fmt::Write;

pub mod text;

/// A table: its column heads and rows of cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub head: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    /// Which columns hold words (left-aligned); the others hold figures (right-aligned).
    pub words: Vec<bool>,
    /// The HTML class of the table (a style of the HTML report's own, such as `endpoints`).
    pub class: Option<&'static str>,
    /// An HTML class for each row that has one (`fail`, `knee`, `op`): a style only, what it
    /// means is in the row's cells too.
    pub row_classes: Vec<Option<&'static str>>,
}

/// One cell: its text, what the text is, and tags after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub text: String,
    pub look: Look,
    pub tags: Vec<Tag>,
    /// Where the text leads, in HTML (a page of `perfbase ui`); the other markups show the
    /// text alone.
    pub link: Option<String>,
}

/// A word that marks a cell (a sweep step's `knee`): in parentheses after the text in Markdown,
/// a badge in HTML, with `title` as its tooltip.
#[derive(Debug, Clone, PartialEq)]
pub struct Tag {
    pub text: &'static str,
    /// The badge's HTML class (`knee`, `op`).
    pub class: &'static str,
    pub title: Option<String>,
}

/// What a cell's text is, for a markup that shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    Plain,
    /// Taken from the target or the user as is (an endpoint, an error message): code type.
    Code,
    /// A figure that needs a reader's eye (success under 100 %): red in HTML, plain in Markdown.
    Alarm,
    /// A verdict that passed.
    Pass,
    /// A verdict that failed: red in HTML, bold in Markdown.
    Fail,
}

impl Cell {
    pub fn new(text: impl Into<String>, look: Look) -> Cell {
        Cell {
            text: text.into(),
            look,
            tags: Vec::new(),
            link: None,
        }
    }

    /// The same cell leading to `href` in HTML.
    pub fn link(mut self, href: impl Into<String>) -> Cell {
        self.link = Some(href.into());
        self
    }

    /// The same cell with a tag after its text.
    pub fn tag(mut self, tag: Tag) -> Cell {
        self.tags.push(tag);
        self
    }

    pub fn code(text: impl Into<String>) -> Cell {
        Cell::new(text, Look::Code)
    }

    /// A success ratio as a percentage, alarming below 1.
    pub fn success(ratio: f64) -> Cell {
        let look = if ratio < 1.0 {
            Look::Alarm
        } else {
            Look::Plain
        };
        Cell::new(format!("{:.2} %", ratio * 100.0), look)
    }

    /// `pass` or `FAIL`.
    pub fn verdict(passed: bool) -> Cell {
        if passed {
            Cell::new("pass", Look::Pass)
        } else {
            Cell::new("FAIL", Look::Fail)
        }
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell::new(text, Look::Plain)
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::new(text, Look::Plain)
    }
}

impl Table {
    /// A table whose first `text_columns` columns hold words, the rest figures.
    pub fn new(head: &[&str], rows: Vec<Vec<Cell>>, text_columns: usize) -> Table {
        Table {
            head: head.iter().map(|h| h.to_string()).collect(),
            rows,
            words: (0..head.len()).map(|i| i < text_columns).collect(),
            class: None,
            row_classes: Vec::new(),
        }
    }

    /// The same table with these columns (0-based) holding words too.
    pub fn words_in(mut self, columns: &[usize]) -> Table {
        for &c in columns {
            if let Some(w) = self.words.get_mut(c) {
                *w = true;
            }
        }
        self
    }

    /// The same table with an HTML class for each row (in row order).
    pub fn row_classes(mut self, classes: Vec<Option<&'static str>>) -> Table {
        self.row_classes = classes;
        self
    }

    fn is_words(&self, column: usize) -> bool {
        self.words.get(column).copied().unwrap_or(false)
    }

    /// The same table with an HTML class.
    pub fn class(mut self, class: &'static str) -> Table {
        self.class = Some(class);
        self
    }

    /// GitHub-flavoured Markdown, figures right-aligned; ends with its last row's newline.
    pub fn markdown(&self, out: &mut String) {
        let head: Vec<String> = self.head.iter().map(|h| md_cell_text(h)).collect();
        let _ = writeln!(out, "| {} |", head.join(" | "));
        let rule: Vec<&str> = (0..self.head.len())
            .map(|i| if self.is_words(i) { "---" } else { "---:" })
            .collect();
        let _ = writeln!(out, "|{}|", rule.join("|"));
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(md_cell).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
    }

    /// An HTML `<table>`, every text escaped; ends with a newline.
    pub fn html(&self, out: &mut String) {
        match self.class {
            Some(c) => {
                let _ = write!(out, "<table class=\"{c}\"><tr>");
            }
            None => out.push_str("<table><tr>"),
        }
        for (i, h) in self.head.iter().enumerate() {
            let l = if self.is_words(i) { " class=\"l\"" } else { "" };
            let _ = write!(out, "<th{l}>{}</th>", escape(h));
        }
        out.push_str("</tr>\n");
        for (r, row) in self.rows.iter().enumerate() {
            match self.row_classes.get(r).copied().flatten() {
                Some(c) => {
                    let _ = write!(out, "<tr class=\"{c}\">");
                }
                None => out.push_str("<tr>"),
            }
            for (i, c) in row.iter().enumerate() {
                html_cell(out, c, self.is_words(i));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
    }
}

/// Text from anywhere (a plan's names, a server's `Server` header, an error body) made inert
/// in Markdown: every control character escaped as [`perfbase_core::redact::printable`] does
/// (a line break would split a table row or start a block), and a backslash before each
/// character that could start markup: `\\`, `` ` ``, `*`, `[` (links and images), `<` and `>`
/// (raw HTML, autolinks), `|` (a table cell's end), `~` (strike-through), `_` at the edge of a
/// word (emphasis; inside a word it is inert, so `http_4xx` stays readable) and `&` before a
/// letter or `#` (an entity).
pub fn md_text(s: &str) -> String {
    md_escape(s, true)
}

/// [`md_text`] for a table cell, where no block starts: `-` stays `-`.
fn md_cell_text(s: &str) -> String {
    md_escape(s, false)
}

fn md_escape(s: &str, line_start: bool) -> String {
    let s = perfbase_core::redact::printable(s);
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        let spaced = |j: usize| chars.get(j).is_none_or(|c| c.is_whitespace());
        let word = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_some_and(|c| c.is_alphanumeric())
        };
        let escape = match c {
            '\\' | '`' | '*' | '[' | '|' | '~' => true,
            // A tag or an autolink starts with a letter, '/', '!' or '?' after the '<'.
            '<' => chars
                .get(i + 1)
                .is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?')),
            // At the start of a line: a quote; a heading, a list item or a rule when a space
            // (or nothing) follows.
            '>' => line_start && i == 0,
            '#' | '-' | '+' => line_start && i == 0 && spaced(i + 1),
            // `1. ` or `1) ` at the start: an ordered list item.
            '.' | ')' => {
                line_start && i > 0 && chars[..i].iter().all(char::is_ascii_digit) && spaced(i + 1)
            }
            '_' => !(word(i.checked_sub(1)) && word(Some(i + 1))),
            '&' => chars
                .get(i + 1)
                .is_some_and(|n| n.is_ascii_alphabetic() || *n == '#'),
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Text inside a Markdown code span, where backslashes are literal: control characters
/// escaped, a backtick (which would end the span) made a quote, and `|` escaped, as GitHub's
/// tables require even there.
pub fn md_code(s: &str) -> String {
    perfbase_core::redact::printable(s)
        .replace('`', "'")
        .replace('|', "\\|")
}

fn md_cell(c: &Cell) -> String {
    let mut text = match c.look {
        // A backtick inside would end the code span early.
        Look::Code => format!("`{}`", md_code(&c.text)),
        Look::Fail => format!("**{}**", md_cell_text(&c.text)),
        Look::Plain | Look::Alarm | Look::Pass => md_cell_text(&c.text),
    };
    for t in &c.tags {
        let _ = write!(text, " ({})", md_cell_text(t.text));
    }
    text
}

fn html_cell(out: &mut String, c: &Cell, left: bool) {
    let tone = match c.look {
        Look::Alarm | Look::Fail => Some("fail"),
        Look::Pass => Some("pass"),
        Look::Plain | Look::Code => None,
    };
    let _ = match (left, tone) {
        (true, Some(t)) => write!(out, "<td class=\"l {t}\">"),
        (true, None) => write!(out, "<td class=\"l\">"),
        (false, Some(t)) => write!(out, "<td class=\"{t}\">"),
        (false, None) => write!(out, "<td>"),
    };
    let mut text = escape(&c.text);
    if c.look == Look::Code {
        text = format!("<code>{text}</code>");
    }
    match &c.link {
        Some(href) => {
            let _ = write!(out, "<a href=\"{}\">{text}</a>", escape(href));
        }
        None => out.push_str(&text),
    }
    for t in &c.tags {
        let _ = match &t.title {
            Some(title) => write!(
                out,
                "<span class=\"tag {}\" title=\"{}\">{}</span>",
                t.class,
                escape(title),
                escape(t.text)
            ),
            None => write!(
                out,
                "<span class=\"tag {}\">{}</span>",
                t.class,
                escape(t.text)
            ),
        };
    }
    out.push_str("</td>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        Table::new(
            &["endpoint", "p99 ms", "success", "verdict"],
            vec![vec![
                Cell::code("GET /a|b`c"),
                "1.5".into(),
                Cell::success(0.995),
                Cell::verdict(false),
            ]],
            1,
        )
    }

    #[test]
    fn markdown_aligns_figures_and_keeps_cells_whole() {
        let mut md = String::new();
        sample().markdown(&mut md);
        assert_eq!(
            md,
            "| endpoint | p99 ms | success | verdict |\n|---|---:|---:|---:|\n\
             | `GET /a\\|b'c` | 1.5 | 99.50 % | **FAIL** |\n"
        );
    }

    #[test]
    fn markdown_text_is_inert() {
        // Issue 30, item 8: a hostile name or Server header cannot make a link, an image,
        // raw HTML, emphasis, a new row or a new block, and plain figures stay readable.
        assert_eq!(
            md_text("[click](http://x) ![i](y) <img src=x> *b* _e_ ~~s~~ a|b `c` &amp;"),
            "\\[click](http://x) !\\[i](y) \\<img src=x> \\*b\\* \\_e\\_ \\~\\~s\\~\\~ a\\|b \\`c\\` \\&amp;"
        );
        // The escape's own backslash is escaped: the page shows `\x0a`.
        assert_eq!(md_text("row\n| x | y |"), "row\\\\x0a\\| x \\| y \\|");
        assert_eq!(md_cell_text("- x"), "- x");
        assert_eq!(md_text("# h"), "\\# h");
        assert_eq!(md_text("> q"), "\\> q");
        assert_eq!(md_text("1. item"), "1\\. item");
        assert_eq!(
            md_text("p < 0.001, http_4xx, 1.5 ms, a-b, x > y, 3 & 4"),
            "p < 0.001, http_4xx, 1.5 ms, a-b, x > y, 3 & 4"
        );
        assert_eq!(md_code("a`b|c\u{1b}"), "a'b\\|c\\x1b");
    }

    #[test]
    fn html_escapes_and_marks_what_needs_an_eye() {
        let mut html = String::new();
        sample().class("endpoints").html(&mut html);
        assert!(
            html.starts_with(
                "<table class=\"endpoints\"><tr><th class=\"l\">endpoint</th><th>p99 ms</th>"
            ),
            "{html}"
        );
        assert!(
            html.contains(
                "<tr><td class=\"l\"><code>GET /a|b`c</code></td><td>1.5</td>\
                 <td class=\"fail\">99.50 %</td><td class=\"fail\">FAIL</td></tr>"
            ),
            "{html}"
        );
        let mut plain = String::new();
        Table::new(&["x"], vec![vec![Cell::verdict(true)]], 0).html(&mut plain);
        assert!(plain.contains("<td class=\"pass\">pass</td>"), "{plain}");
        let knee = Tag {
            text: "knee",
            class: "knee",
            title: Some("p99 <3x".into()),
        };
        let tagged = Table::new(&["step"], vec![vec![Cell::from("300/s").tag(knee)]], 1)
            .row_classes(vec![Some("knee")]);
        let mut md = String::new();
        tagged.markdown(&mut md);
        assert!(md.ends_with("| 300/s (knee) |\n"), "{md}");
        let mut h = String::new();
        tagged.html(&mut h);
        assert!(
            h.contains(
                "<tr class=\"knee\"><td class=\"l\">300/s<span class=\"tag knee\" \
                 title=\"p99 &lt;3x\">knee</span></td></tr>"
            ),
            "{h}"
        );
        let mut esc = String::new();
        Table::new(&["<x>"], vec![vec!["a & b".into()]], 1).html(&mut esc);
        assert!(
            esc.contains("<th class=\"l\">&lt;x&gt;</th>")
                && esc.contains("<td class=\"l\">a &amp; b</td>")
        );
    }
}
