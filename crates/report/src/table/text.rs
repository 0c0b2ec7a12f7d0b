//! The plain-text rendering of a [`Table`], for the terminal: aligned columns (words left,
//! figures right), a header line, and a failing row in red when colour is on. How wide each
//! column is and what separates it from the last is the [`Layout`]'s, not the table's: the
//! terminal's tables were laid out by hand before, each its own way (fixed widths that a long
//! cell overflows on its row only, a column as wide as its widest name, names cut with or
//! without an ellipsis), and a layout reproduces each of them exactly.

use super::{Cell, Table};
use std::fmt::Write;

/// How a table is laid out as text.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// What every line starts with.
    pub indent: &'static str,
    pub columns: Vec<Column>,
    /// Whether the column heads make the first line.
    pub header: bool,
    /// Whether trailing spaces are cut from each line (an empty last cell leaves none).
    pub trim_end: bool,
}

/// One column's width and the space before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// What separates the column from the one before (the first has the indent instead).
    pub gap: &'static str,
    /// The width cells are padded to. A longer cell overflows it, on its own row only, unless
    /// `fit` widens the whole column.
    pub width: usize,
    /// The column is as wide as its widest cell (the head's too when shown), at least `width`.
    pub fit: bool,
    /// Cells longer than this many characters are cut to it.
    pub max: Option<usize>,
    /// A cut cell ends with `…`, so a reader knows there was more.
    pub ellipsis: bool,
}

impl Column {
    /// A column padded to `width`, one space after the one before.
    pub const fn fixed(width: usize) -> Column {
        Column {
            gap: " ",
            width,
            fit: false,
            max: None,
            ellipsis: false,
        }
    }

    /// A column as wide as its widest cell, one space after the one before.
    pub const fn fit() -> Column {
        Column {
            fit: true,
            ..Column::fixed(0)
        }
    }

    /// The same column, this far from the one before.
    pub const fn gap(self, gap: &'static str) -> Column {
        Column { gap, ..self }
    }

    /// The same column, at least `width` wide.
    pub const fn at_least(self, width: usize) -> Column {
        Column { width, ..self }
    }

    /// The same column with its cells cut to `max` characters.
    pub const fn cut(self, max: usize) -> Column {
        Column {
            max: Some(max),
            ..self
        }
    }

    /// The same column with its cells cut to `max` characters, the last of them `…`.
    pub const fn cut_with_ellipsis(self, max: usize) -> Column {
        Column {
            ellipsis: true,
            ..self.cut(max)
        }
    }
}

impl Layout {
    /// Lines that start with `indent`, a header line first.
    pub fn new(indent: &'static str, columns: Vec<Column>) -> Layout {
        Layout {
            indent,
            columns,
            header: true,
            trim_end: false,
        }
    }

    /// Every column as wide as its widest cell, two spaces apart, trailing spaces cut: the
    /// layout for a table that has no hand-made one.
    pub fn fitted(columns: usize) -> Layout {
        let column = Column::fit().gap("  ");
        Layout::new("", vec![column; columns]).trimmed()
    }

    /// The same layout without the header line.
    pub fn without_header(mut self) -> Layout {
        self.header = false;
        self
    }

    /// The same layout with trailing spaces cut from each line.
    pub fn trimmed(mut self) -> Layout {
        self.trim_end = true;
        self
    }
}

/// A cell's text as the terminal shows it: tags in parentheses after it, as in Markdown.
/// A cell's text for a terminal: its control characters escaped, since a cell may hold text
/// from outside (a label, a series' name, a server's words) and every terminal table is
/// drawn here.
fn cell_text(c: &Cell) -> String {
    let mut text = perfbase_core::redact::printable(&c.text).into_owned();
    for t in &c.tags {
        let _ = write!(text, " ({})", t.text);
    }
    text
}

/// `text` cut to `max` characters (the last `…` with `ellipsis`).
fn cut(text: String, max: Option<usize>, ellipsis: bool) -> String {
    match max {
        Some(max) if text.chars().count() > max => {
            if ellipsis && max > 0 {
                let mut cut: String = text.chars().take(max - 1).collect();
                cut.push('…');
                cut
            } else {
                text.chars().take(max).collect()
            }
        }
        _ => text,
    }
}

impl Table {
    /// Plain text laid out by `layout`, one line per row, each ending with a newline. With
    /// `colour`, a row whose style is `fail` is red from end to end: the terminal reader scans
    /// lines, so the whole line is what must stand out.
    pub fn text(&self, layout: &Layout, colour: bool, out: &mut String) {
        let columns = self.head.len().max(layout.columns.len());
        let texts: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|row| {
                (0..columns)
                    .map(|i| row.get(i).map(cell_text).unwrap_or_default())
                    .collect()
            })
            .collect();
        let head: Vec<String> = (0..columns)
            .map(|i| self.head.get(i).cloned().unwrap_or_default())
            .collect();
        let widths: Vec<usize> = (0..columns)
            .map(|i| {
                let c = layout.columns.get(i).copied().unwrap_or(Column::fixed(0));
                if !c.fit {
                    return c.width;
                }
                let shown = layout.header.then_some(&head).into_iter().chain(&texts);
                let widest = shown.map(|r| r[i].chars().count()).max().unwrap_or(0);
                let widest = c.max.map_or(widest, |m| widest.min(m));
                widest.max(c.width)
            })
            .collect();
        let line = |cells: &[String]| {
            let mut line = layout.indent.to_string();
            for (i, text) in cells.iter().enumerate() {
                let c = layout.columns.get(i).copied().unwrap_or(Column::fixed(0));
                if i > 0 {
                    line.push_str(c.gap);
                }
                let text = cut(text.clone(), c.max, c.ellipsis);
                let pad = " ".repeat(widths[i].saturating_sub(text.chars().count()));
                if self.is_words(i) {
                    line.push_str(&text);
                    line.push_str(&pad);
                } else {
                    line.push_str(&pad);
                    line.push_str(&text);
                }
            }
            if layout.trim_end {
                line.truncate(line.trim_end().len());
            }
            line
        };
        if layout.header {
            let _ = writeln!(out, "{}", line(&head));
        }
        for (r, cells) in texts.iter().enumerate() {
            let failed = self.row_classes.get(r).copied().flatten() == Some("fail");
            if failed && colour {
                let _ = writeln!(out, "\x1b[31m{}\x1b[0m", line(cells));
            } else {
                let _ = writeln!(out, "{}", line(cells));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Look;

    fn sample() -> Table {
        Table::new(
            &["name", "kind", "n", "verdict"],
            vec![
                vec![
                    "a name too long".into(),
                    "x".into(),
                    "1,000".into(),
                    Cell::verdict(false),
                ],
                vec![
                    "b".into(),
                    "a kind too long".into(),
                    "2".into(),
                    Cell::verdict(true),
                ],
            ],
            2,
        )
        .row_classes(vec![Some("fail"), None])
    }

    #[test]
    fn fixed_columns_let_a_long_cell_overflow_its_own_row_only() {
        let layout = Layout::new(
            "  ",
            vec![
                Column::fit().at_least(3).cut_with_ellipsis(8),
                Column::fixed(6),
                Column::fixed(5),
                Column::fixed(0).gap("  "),
            ],
        );
        let mut out = String::new();
        sample().text(&layout, false, &mut out);
        assert_eq!(
            out,
            "  name     kind       n  verdict\n\
             \x20 a name … x      1,000  FAIL\n\
             \x20 b        a kind too long     2  pass\n"
        );
    }

    #[test]
    fn colour_marks_a_failing_row_and_trimming_cuts_trailing_spaces() {
        let layout = Layout::fitted(4).without_header();
        let mut out = String::new();
        sample().text(&layout, true, &mut out);
        assert_eq!(
            out,
            "\x1b[31ma name too long  x                1,000  FAIL\x1b[0m\n\
             b                a kind too long      2  pass\n"
        );
        let mut tagged = String::new();
        let step = Cell::new("c=1", Look::Code).tag(crate::table::Tag {
            text: "knee",
            class: "knee",
            title: None,
        });
        Table::new(&["step", ""], vec![vec![step, "".into()]], 2).text(
            &Layout::fitted(2),
            true,
            &mut tagged,
        );
        assert_eq!(tagged, "step\nc=1 (knee)\n");
    }
}
