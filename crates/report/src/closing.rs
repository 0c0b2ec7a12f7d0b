//! A protocol's closing figures ([`Closing`]) laid out, their numbers formatted: one text for
//! the terminal, report.md and the page alike.

use crate::terminal::render_consumed;
pub use perfbase_core::closing::{Closing, Part};
use std::fmt::Write as _;

/// The closings as text, one line each (a block's title, then its body).
pub fn text(closings: &[Closing]) -> String {
    let mut out = String::new();
    for c in closings {
        match c {
            Closing::Line(parts) => {
                let _ = writeln!(out, "{}", line(parts));
            }
            Closing::Detail(parts) => {
                let _ = writeln!(out, "  {}", line(parts));
            }
            Closing::Block { title, body } => {
                if let Some(title) = title {
                    let _ = writeln!(out, "{title}");
                }
                out.push_str(&text(body));
            }
            Closing::Consumed {
                measurement,
                consumers,
                left,
            } => out.push_str(&render_consumed(measurement, *consumers, *left)),
        }
    }
    out
}

fn line(parts: &[Part]) -> String {
    parts
        .iter()
        .map(|p| match p {
            Part::Words(w) => w.clone(),
            Part::Count(n) => crate::thousands(*n),
            Part::Fixed(v, decimals) => format!("{v:.decimals$}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_details_and_blocks_are_laid_out_and_counts_get_separators() {
        let closings = vec![
            Closing::Line(vec!["Messages: ".into(), 12345u64.into(), " sent".into()]),
            Closing::Block {
                title: Some("pgbench, step 1:".into()),
                body: vec![Closing::Detail(vec![
                    "tps = ".into(),
                    Part::Fixed(1234.5, 6),
                ])],
            },
        ];
        assert_eq!(
            text(&closings),
            "Messages: 12,345 sent\npgbench, step 1:\n  tps = 1234.500000\n"
        );
    }
}
