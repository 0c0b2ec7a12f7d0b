//! `--tui`: the run on the whole terminal, redrawn each second from the same [`Frame`] as the
//! web dashboard: the step and time left, requests/s and errors/s as sparklines, the last
//! second's and the step's percentiles, a latency histogram, statuses and error classes,
//! endpoints, perfbase's own CPU with the saturation warning, and the monitored services.
//! `q` or Ctrl-C stops the run as a first Ctrl-C does (the partial result is saved, exit 130).

use super::frame::Frame;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::crossterm::{execute, terminal};
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Bar, BarChart, BarGroup, Block, Borders, Gauge, Paragraph, Row, Sparkline, Table,
};
use ratatui::{Frame as Screen, Terminal};
use std::io::Stdout;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub struct Tui {
    terminal: Terminal<CrosstermBackend<Stdout>>,
    done: Arc<AtomicBool>,
    keys: Option<JoinHandle<()>>,
    title: String,
}

impl Tui {
    /// Takes the terminal over (raw mode, the alternate screen) and starts reading keys.
    pub fn start(title: &str) -> std::io::Result<Tui> {
        terminal::enable_raw_mode()?;
        let mut out = std::io::stdout();
        if let Err(e) = execute!(out, terminal::EnterAlternateScreen) {
            let _ = terminal::disable_raw_mode();
            return Err(e);
        }
        let terminal = Terminal::new(CrosstermBackend::new(out))?;
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        let keys = std::thread::Builder::new()
            .name("perfbase-keys".into())
            .spawn(move || read_keys(&d))?;
        let mut tui = Tui {
            terminal,
            done,
            keys: Some(keys),
            title: title.to_string(),
        };
        let _ = tui.terminal.clear();
        let title = tui.title.clone();
        let _ = tui.terminal.draw(|s| waiting(s, &title));
        Ok(tui)
    }

    /// Redraws the screen from `frame` (the terminal's size is read again each time, so a
    /// resize takes effect at the next second).
    pub fn draw(&mut self, frame: &Frame) {
        let title = &self.title;
        let _ = self.terminal.autoresize();
        let _ = self.terminal.draw(|s| screen(s, title, frame));
    }
}

impl Drop for Tui {
    /// Gives the terminal back as it was, whatever way the run ends.
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(k) = self.keys.take() {
            let _ = k.join();
        }
        let _ = terminal::disable_raw_mode();
        let _ = execute!(
            self.terminal.backend_mut(),
            terminal::LeaveAlternateScreen,
            ratatui::crossterm::cursor::Show
        );
    }
}

/// `q`, `Esc` or Ctrl-C (which raw mode delivers as a key) stop the run; a second Ctrl-C exits
/// at once with 130, as it does without the view, the terminal given back first (a second `q`
/// only waits for the save).
fn read_keys(done: &AtomicBool) {
    let mut asked = false;
    while !done.load(Ordering::Relaxed) {
        if !event::poll(Duration::from_millis(100)).unwrap_or(false) {
            continue;
        }
        let Ok(Event::Key(k)) = event::read() else {
            continue;
        };
        let ctrl_c = k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL);
        if k.kind == KeyEventKind::Press
            && (ctrl_c || matches!(k.code, KeyCode::Char('q') | KeyCode::Esc))
        {
            if asked && ctrl_c {
                let _ = terminal::disable_raw_mode();
                let _ = execute!(
                    std::io::stdout(),
                    terminal::LeaveAlternateScreen,
                    ratatui::crossterm::cursor::Show
                );
                std::process::exit(130);
            }
            asked = true;
            crate::interrupt::stop("stopped from the terminal view".into());
        }
    }
}

fn waiting(s: &mut Screen, title: &str) {
    let p = Paragraph::new(vec![
        Line::from(Span::styled(title.to_string(), bold())),
        Line::from("waiting for the first second of load…   q: stop"),
    ]);
    s.render_widget(p, s.area());
}

fn bold() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}

fn ms(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "–".into()
    }
}

fn screen(s: &mut Screen, title: &str, f: &Frame) {
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Length(3),
            Constraint::Length(5),
            Constraint::Length(9),
            Constraint::Min(4),
            Constraint::Length(1),
        ])
        .split(s.area());
    header(s, rows[0], title, f);
    sparks(s, rows[1], f);
    let mid = halves(rows[2]);
    latency(s, mid[0], f);
    histogram(s, mid[1], f);
    let low = halves(rows[3]);
    endpoints(s, low[0], f);
    resources(s, low[1], f);
    let help = match &f.generator {
        Some(g) if g.saturated => Line::from(Span::styled(
            format!(
                "perfbase uses {:.0} % of its {} core(s): the generator may be the limit   q: stop",
                g.cpu_pct / f64::from(g.cores),
                g.cores
            ),
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        )),
        _ => Line::from("q: stop the run and save what it measured"),
    };
    s.render_widget(Paragraph::new(help), rows[4]);
}

fn halves(r: Rect) -> std::rc::Rc<[Rect]> {
    Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(50), Constraint::Percentage(50)])
        .split(r)
}

fn boxed(title: &str) -> Block<'_> {
    Block::default().borders(Borders::ALL).title(title)
}

fn header(s: &mut Screen, r: Rect, title: &str, f: &Frame) {
    let state = if f.measured {
        "measuring"
    } else {
        "warm-up, not measured"
    };
    let left = f.duration_s.map(|d| (d - f.elapsed_s).max(0.0));
    let label = format!(
        "{} · step {} · {state} · {:.0} s{}{} · phase {} · run {:.0} s{}",
        f.scenario,
        f.step,
        f.elapsed_s,
        f.duration_s
            .map(|d| format!(" of {d:.0} s"))
            .unwrap_or_default(),
        left.map(|l| format!(", {l:.0} s left")).unwrap_or_default(),
        f.phase_index,
        f.run_s,
        f.planned_s
            .map(|p| format!(" of {p:.0} s planned"))
            .unwrap_or_default(),
    );
    let ratio = match (f.planned_s, f.duration_s) {
        (Some(p), _) if p > 0.0 => f.run_s / p,
        (_, Some(d)) if d > 0.0 => f.elapsed_s / d,
        _ => 0.0,
    };
    let g = Gauge::default()
        .block(boxed(title))
        .gauge_style(Style::default().fg(Color::Cyan))
        .label(label)
        .ratio(ratio.clamp(0.0, 1.0));
    s.render_widget(g, r);
}

fn sparks(s: &mut Screen, r: Rect, f: &Frame) {
    let halves = halves(r);
    let width = usize::from(halves[0].width.saturating_sub(2));
    let from = f.seconds.len().saturating_sub(width);
    let rps: Vec<u64> = f.seconds[from..]
        .iter()
        .map(|p| p.rps.round() as u64)
        .collect();
    let eps: Vec<u64> = f.seconds[from..].iter().map(|p| p.errors).collect();
    let title = format!("requests/s: {:.0}", f.second.rps);
    s.render_widget(
        Sparkline::default()
            .block(boxed(&title))
            .style(Style::default().fg(Color::Green))
            .data(&rps),
        halves[0],
    );
    let title = format!("errors/s: {:.0}", f.second.errors_per_s);
    s.render_widget(
        Sparkline::default()
            .block(boxed(&title))
            .style(Style::default().fg(Color::Red))
            .data(&eps),
        halves[1],
    );
}

fn latency(s: &mut Screen, r: Rect, f: &Frame) {
    let block = boxed("latency · status and error classes");
    let inner = block.inner(r);
    s.render_widget(block, r);
    let parts = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Length(4), Constraint::Min(1)])
        .split(inner);
    let row = |name: &str, w: &super::frame::Window| {
        Row::new(vec![
            name.to_string(),
            ms(w.p50_ms),
            ms(w.p90_ms),
            ms(w.p99_ms),
            ms(w.max_ms),
            perfbase_report::thousands(w.requests),
        ])
    };
    let rows = vec![row("last second", &f.second), row("step so far", &f.so_far)];
    let t = Table::new(
        rows,
        [
            Constraint::Length(11),
            Constraint::Length(8),
            Constraint::Length(8),
            Constraint::Length(8),
            Constraint::Length(8),
            Constraint::Min(8),
        ],
    )
    .header(Row::new(vec!["ms", "p50", "p90", "p99", "max", "requests"]).style(bold()));
    s.render_widget(t, parts[0]);
    let classes: Vec<Line> = f
        .statuses
        .iter()
        .chain(&f.classes)
        .map(|(k, v)| Line::from(format!("{k}: {}", perfbase_report::thousands(*v))))
        .collect();
    s.render_widget(Paragraph::new(classes), parts[1]);
}

fn histogram(s: &mut Screen, r: Rect, f: &Frame) {
    let bars: Vec<Bar> = f
        .histogram
        .iter()
        .map(|(label, n)| Bar::default().label(Line::from(label.clone())).value(*n))
        .collect();
    let width = if bars.is_empty() {
        1
    } else {
        (r.width.saturating_sub(2) / bars.len() as u16)
            .saturating_sub(1)
            .clamp(1, 9)
    };
    let chart = BarChart::default()
        .block(boxed("latency histogram, step so far (ms)"))
        .bar_width(width)
        .bar_gap(1)
        .data(BarGroup::default().bars(&bars));
    s.render_widget(chart, r);
}

fn endpoints(s: &mut Screen, r: Rect, f: &Frame) {
    let rows: Vec<Row> = f
        .endpoints
        .iter()
        .map(|e| {
            Row::new(vec![
                e.name.clone(),
                perfbase_report::thousands(e.requests),
                perfbase_report::thousands(e.errors),
                ms(e.p50_ms),
                ms(e.p99_ms),
            ])
        })
        .collect();
    let t = Table::new(
        rows,
        [
            Constraint::Min(16),
            Constraint::Length(10),
            Constraint::Length(8),
            Constraint::Length(9),
            Constraint::Length(9),
        ],
    )
    .header(Row::new(vec!["endpoint", "requests", "errors", "p50 ms", "p99 ms"]).style(bold()))
    .block(boxed("endpoints"));
    s.render_widget(t, r);
}

fn resources(s: &mut Screen, r: Rect, f: &Frame) {
    let rows: Vec<Row> = f
        .targets
        .iter()
        .map(|t| {
            Row::new(vec![
                t.label.clone(),
                format!("{:.1}", t.cpu_pct),
                format!("{:.1}", t.rss_mb),
            ])
        })
        .collect();
    let cores = f.generator.as_ref().map_or(0, |g| g.cores);
    let title = format!("CPU (% of one core; perfbase has {cores}) and memory");
    let t = Table::new(
        rows,
        [
            Constraint::Min(16),
            Constraint::Length(8),
            Constraint::Length(9),
        ],
    )
    .header(Row::new(vec!["process", "CPU %", "RSS MB"]).style(bold()))
    .block(boxed(&title));
    s.render_widget(t, r);
}
