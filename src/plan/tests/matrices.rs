use super::*;

fn two_stacks(matrix: &str) -> String {
    format!(
        r#"{BASE}
[[scenarios]]
name = "go pgx"
workload = "lookup"
labels = {{ "web server" = "Go net/http", "SQL driver" = "pgx" }}
app = "pid:4242"
concurrency = [2, 4]
duration = "1s"

[[scenarios]]
name = "go pq"
workload = "lookup"
labels = {{ "web server" = "Go net/http", "SQL driver" = "lib/pq" }}
concurrency = [2, 4]
duration = "1s"

[[scenarios]]
name = "plain"
workload = "lookup"
concurrency = 2
duration = "1s"
{matrix}"#
    )
}

#[test]
fn a_matrix_takes_every_scenario_that_gives_its_labels_and_watches_their_apps() {
    let p = plan(&two_stacks(
        "[[matrices]]\nname = \"servers × drivers\"\nlabels = [\"web server\", \"SQL driver\"]\n",
    ))
    .unwrap();
    assert_eq!(p.matrices.len(), 1);
    assert_eq!(p.matrices[0].labels, ["web server", "SQL driver"]);
    assert_eq!(p.matrices[0].scenarios, ["go pgx", "go pq"]);
    assert_eq!(
        p.scenarios[0].labels,
        [
            ("SQL driver".to_string(), "pgx".to_string()),
            ("web server".to_string(), "Go net/http".to_string())
        ]
    );
    // The app is watched without a [monitor] section, with the default idle baseline.
    assert_eq!(p.monitor.selectors, ["pid:4242"]);
    assert_eq!(p.monitor.idle, crate::monitoring::DEFAULT_IDLE);
}

#[test]
fn a_matrix_that_matches_nothing_or_lists_a_scenario_without_its_labels_is_refused() {
    let none = plan(&two_stacks(
        "[[matrices]]\nname = \"m\"\nlabels = [\"broker\"]\n",
    ))
    .unwrap_err();
    assert_eq!(none.field, "matrices[0].scenarios");
    assert!(
        none.message.contains("no scenario gives the labels broker"),
        "{none}"
    );

    let listed = plan(&two_stacks(
        "[[matrices]]\nname = \"m\"\nlabels = [\"web server\"]\nscenarios = [\"go pgx\", \"plain\"]\n",
    ))
    .unwrap_err();
    assert!(
        listed.message.contains("'plain' does not give every label"),
        "{listed}"
    );

    let empty = plan(&two_stacks("[[matrices]]\nname = \"m\"\nlabels = []\n")).unwrap_err();
    assert_eq!(empty.field, "matrices[0].labels");

    let twice = plan(&two_stacks(
        "[[matrices]]\nname = \"m\"\nlabels = [\"web server\", \"web server\"]\n",
    ))
    .unwrap_err();
    assert!(twice.message.contains("each once"), "{twice}");
}

#[test]
fn an_app_that_is_not_a_monitor_target_names_its_line() {
    let text = two_stacks("").replace("app = \"pid:4242\"", "app = \"pid:forty\"");
    let e = plan(&text).unwrap_err();
    assert_eq!(e.field, "scenarios[0].app");
    assert!(e.message.contains("app is a monitor target"), "{e}");
    let line = text.lines().position(|l| l.starts_with("app =")).unwrap() + 1;
    assert_eq!(e.line, line);
}
