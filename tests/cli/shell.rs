//! What the shell gets from the one clap definition: completion scripts and the man page.

use crate::common::*;
use std::process::Command;

fn sh(script: &str) -> (bool, String) {
    let bin = assert_cmd::cargo::cargo_bin("perfbase");
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .env("PB", bin)
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// bash loads the completion script and completes subcommands and flags from it.
#[test]
fn bash_completion_loads_and_completes() {
    let (ok, text) = sh(r#"source <("$PB" completions bash) || exit 1
complete -p perfbase || exit 1
COMP_WORDS=(perfbase mo); COMP_CWORD=1; _perfbase perfbase mo perfbase; echo "words: ${COMPREPLY[*]}"
COMP_WORDS=(perfbase mongo --ke); COMP_CWORD=2; _perfbase perfbase --ke mongo; echo "flags: ${COMPREPLY[*]}""#);
    assert!(ok, "{text}");
    assert!(text.contains("words: mongo"), "{text}");
    assert!(text.contains("flags: --keyspace"), "{text}");
    for shell in ["zsh", "fish"] {
        let (ok, text) = sh(&format!(r#""$PB" completions {shell}"#));
        assert!(ok && text.contains("perfbase"), "{shell}: {text}");
    }
    let (ok, text) = sh(r#""$PB" completions tcsh"#);
    assert!(!ok && text.contains("invalid value 'tcsh'"), "{text}");
}

/// The man page renders with man(1) and lists the subcommands.
#[test]
fn the_man_page_renders() {
    let (ok, text) = sh(r#""$PB" man | MANWIDTH=100 man -l - 2>&1"#);
    assert!(ok, "{text}");
    for part in [
        "NAME",
        "SYNOPSIS",
        "perfbase-mongo",
        "perfbase-http",
        "Load-test services",
    ] {
        assert!(text.contains(part), "{part} missing in:\n{text}");
    }
}

/// clap reads `{n}` in help text as a line break, so a `{{n}}` placeholder used to show as
/// `{`, a new line and `}` (issue 47, item 17): no command's help breaks a brace so, and the
/// placeholders show whole.
#[test]
fn no_help_breaks_a_placeholder_across_lines() {
    let dir = tmp();
    let (_, top, _) = pb(dir.path(), &["--help"]);
    let commands: Vec<String> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(commands.len() > 20, "{top}");
    for c in &commands {
        let (_, help, _) = pb(dir.path(), &[c, "--help"]);
        let lines: Vec<&str> = help.lines().collect();
        for w in lines.windows(2) {
            assert!(
                !(w[0].ends_with('{') && w[1].trim_start().starts_with('}')),
                "perfbase {c} --help breaks a placeholder:\n{}\n{}",
                w[0],
                w[1]
            );
        }
    }
    for (c, placeholder) in [
        ("grpc", "{{ n }}"),
        ("ws", "{{ n }}"),
        ("mongo", "{{ key }}"),
    ] {
        let (_, help, _) = pb(dir.path(), &[c, "--help"]);
        assert!(help.contains(placeholder), "{c}: {help}");
    }
}
