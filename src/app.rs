//! Dispatch: each command to what runs it. Protocol commands (cli/NAME.rs) and plan files
//! become a plan and run; the others read the store or serve.

use crate::cli::{Cli, Command, RunArgs};
use crate::exit::{bad_input, AppError, Exit};
use crate::runner::RunOptions;
use crate::store::StoreOptions;
use std::path::PathBuf;

/// Runs one command. A command whose product is what it prints fails unless all of it
/// reached standard output.
pub fn run(cli: Cli) -> Result<Exit, AppError> {
    let product = prints_its_product(&cli.command);
    let exit = dispatch(cli)?;
    if product {
        crate::out::product_written()?;
    }
    Ok(exit)
}

/// Whether `command`'s product is its standard output (not a run's, whose result is saved).
fn prints_its_product(command: &Command) -> bool {
    #[cfg(feature = "k8s")]
    if matches!(command, Command::K8s(_)) {
        return true;
    }
    matches!(
        command,
        Command::History(_)
            | Command::Show(_)
            | Command::Baseline(_)
            | Command::Compare(_)
            | Command::Trend(_)
            | Command::Report(_)
            | Command::Import(_)
            | Command::Completions(_)
            | Command::Man
    )
}

fn dispatch(cli: Cli) -> Result<Exit, AppError> {
    match cli.command {
        Command::Protocol(p) => p.run(),
        Command::Run(a) => {
            let store = a.save.options()?;
            run_plan(*a, &store, None)
        }
        Command::Script(a) => crate::runner::launch(a.plan(&a.load.save.options()?)?),
        Command::Serve(a) => crate::serve::serve(a),
        Command::Demo(a) => {
            let store = a.save.options()?;
            crate::serve::demo(a, &store)
        }
        Command::History(a) => {
            if let Some(crate::cli::HistoryAction::Prune(p)) = a.action {
                let store = p.store.options();
                return crate::trend::prune(p, &store);
            }
            let mut store = a.store.options();
            store.labels = crate::store::parse_labels(&a.labels)?;
            crate::inspect::history(a, &store)
        }
        Command::Show(a) => {
            let store = a.store.options();
            crate::inspect::show(a, &store)
        }
        Command::Baseline(a) => {
            let store = a.store.options();
            crate::inspect::baseline(a, &store)
        }
        Command::Compare(a) => {
            let store = a.store.options();
            crate::inspect::compare(a, &store)
        }
        Command::Trend(a) => {
            let store = a.store.options();
            crate::trend::trend(*a, &store)
        }
        Command::Report(a) => {
            let store = a.store.options();
            crate::inspect::report(a, &store)
        }
        #[cfg(feature = "k8s")]
        Command::K8s(a) => crate::k8s::k8s(a),
        Command::Agent(a) => agent(*a),
        Command::Merge(a) => {
            let store = a.store.options();
            crate::merge::merge(a, &store)
        }
        Command::Import(a) => crate::import::import(a),
        Command::Ui(a) => crate::ui::ui(a),
        Command::Completions(a) => completions(a.shell),
        Command::Man => shell_text(|cmd, out| clap_mangen::Man::new(cmd.clone()).render(out)),
    }
}

/// `perfbase agent`: its heartbeat and stop watch, the barrier when asked, then the plan's
/// segment.
fn agent(mut a: crate::cli::AgentArgs) -> Result<Exit, AppError> {
    let store = crate::agent::store_options(&a)?;
    crate::agent::watch(&a, &store)?;
    let mut clock = None;
    if a.barrier {
        // A bad plan fails here, not in every agent after all of them met.
        crate::plan::load(&a.run.plan, a.run.scale).map_err(|e| bad_input(e.to_string()))?;
        let (start, offset) = crate::agent::barrier(&a, &store)?;
        a.run.segment.start_at = Some(start);
        clock = Some(offset);
    }
    run_plan(a.run, &store, clock)
}

/// `perfbase completions SHELL`.
fn completions(shell: clap_complete::Shell) -> Result<Exit, AppError> {
    shell_text(|cmd, out| {
        clap_complete::generate(shell, cmd, "perfbase", out);
        Ok(())
    })
}

/// `perfbase completions SHELL` and `perfbase man`: text made from the one clap definition of
/// the flags, so it cannot drift from them, written to stdout.
fn shell_text(
    make: impl FnOnce(&mut clap::Command, &mut Vec<u8>) -> std::io::Result<()>,
) -> Result<Exit, AppError> {
    use clap::CommandFactory as _;
    let mut cmd = Cli::command();
    let mut text = Vec::new();
    make(&mut cmd, &mut text).map_err(|e| bad_input(format!("cannot render: {e}")))?;
    out!("{}", String::from_utf8_lossy(&text));
    Ok(Exit::Success)
}

/// `.perfbase/runs/<plan>-<UTC time>`, claimed by creating it: a second run of the plan in
/// the same second gets `…-2` (then `-3`…) instead of sharing the folder and overwriting the
/// first one's result.
fn default_out(name: &str) -> Result<PathBuf, AppError> {
    let stamp = crate::env::format_utc(std::time::SystemTime::now(), "%Y%m%dT%H%M%SZ");
    let runs = PathBuf::from(".perfbase/runs");
    let cannot = |e: std::io::Error| bad_input(format!("{}: cannot create: {e}", runs.display()));
    std::fs::create_dir_all(&runs).map_err(cannot)?;
    let base = format!("{}-{stamp}", crate::plan::slug(name));
    for n in 1u32.. {
        let dir = runs.join(if n == 1 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 10_000 => continue,
            Err(e) => return Err(cannot(e)),
        }
    }
    unreachable!("the loop returns by its 10,000th name")
}

fn run_plan(
    a: RunArgs,
    store: &StoreOptions,
    clock: Option<crate::runner::ClockOffset>,
) -> Result<Exit, AppError> {
    let mut plan = crate::plan::load(&a.plan, a.scale).map_err(|e| bad_input(e.to_string()))?;
    if !a.monitor.is_empty() {
        let m = &mut plan.monitor;
        if m.selectors.is_empty() {
            // No [monitor] in the plan: the same idle baseline as --monitor elsewhere.
            m.idle = crate::monitoring::DEFAULT_IDLE;
        }
        m.selectors.extend(a.monitor.iter().cloned());
    }
    if let Some(idle) = a.monitor_idle {
        plan.monitor.idle = idle;
    }
    if a.dry_run {
        out!("{}", crate::plan::describe(&plan));
        return Ok(Exit::Success);
    }
    let dir = match a.out.clone() {
        Some(dir) => dir,
        None => default_out(&plan.name)?,
    };
    let mut options = RunOptions::plan_file(dir, a.threads, a.quiet, store, "plan");
    a.metrics.check()?;
    crate::cli::check_outputs(&[("--jsonl", &a.jsonl), ("--hdr-log", &a.hdr_log)])?;
    options.hdr_log = a.hdr_log.clone();
    options.jsonl = a.jsonl.clone();
    options.metrics = a.metrics.options();
    options.live = a.live.options()?;
    options.segment = a.segment.segment()?;
    options.start_at = a.segment.start_at;
    options.clock = clock;
    crate::runner::launch((plan, options))
}
