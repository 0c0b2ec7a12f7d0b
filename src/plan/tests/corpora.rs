//! Corpora: CSV files with columns and weights (RFC 4180 quoting, errors by the data file's
//! line) and generated random strings.

use super::*;
use perfbase_drivers::workload::Values;

#[test]
fn csv_corpora_with_columns_and_weights() {
    let dir = std::env::temp_dir().join(format!("perfbase-plan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("k.csv"), "id,key,weight\n1,\"a,b\",1\n2,c,3\n").unwrap();
    let text = r#"
[targets.api]
url = "http://127.0.0.1:8080"
[corpora.k]
file = "k.csv"
column = "key"
weight_column = "weight"
pick = "weighted"
[workloads.w]
target = "api"
path = "/x/{{k}}"
[[scenarios]]
name = "s"
workload = "w"
concurrency = 1
"#;
    let p = parse(text, "p.toml", &dir, None).unwrap();
    assert_eq!(
        p.workloads["w"].corpora[0].values,
        Values::List(vec!["a,b".to_string(), "c".to_string()])
    );
    let bad = text.replace("column = \"key\"", "column = \"nope\"");
    let e = parse(&bad, "p.toml", &dir, None).unwrap_err().to_string();
    assert!(
        e.contains("corpora.k.file") && e.contains("no column 'nope'"),
        "{e}"
    );
}

/// A CSV corpus read as RFC 4180: a quoted field may span lines and hold commas and quotes,
/// and a bad row is reported by the data file's own line, after the plan's file, line and
/// field.
#[test]
fn csv_corpora_read_quoted_line_breaks_as_one_record() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("q.csv"),
        "id,text,weight\n1,\"hello, world\nsecond line\",2\n\n  \n2,plain,1\n3,\"say \"\"hi\"\"\",1\n",
    )
    .unwrap();
    let text = r#"
[targets.api]
url = "http://127.0.0.1:8080"
[corpora.k]
file = "q.csv"
column = "text"
weight_column = "weight"
pick = "weighted"
[workloads.w]
target = "api"
method = "POST"
body = "{{k}}"
[[scenarios]]
name = "s"
workload = "w"
concurrency = 1
"#;
    let p = parse(text, "p.toml", dir.path(), None).unwrap();
    let corpus = &p.workloads["w"].corpora[0];
    assert_eq!(
        corpus.values,
        Values::List(vec![
            "hello, world\nsecond line".to_string(),
            "plain".to_string(),
            "say \"hi\"".to_string(),
        ])
    );

    // The bad weight is on line 4 of the data file: the record before it spans lines 2–3.
    std::fs::write(
        dir.path().join("q.csv"),
        "id,text,weight\n1,\"two\nlines\",1\n2,x,heavy\n",
    )
    .unwrap();
    let e = parse(text, "p.toml", dir.path(), None)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("p.toml:5: corpora.k.file: "), "{e}");
    assert!(
        e.contains("q.csv: line 4: the weight ('weight') 'heavy' is not a number"),
        "{e}"
    );

    // A row without the column names its line and what it has.
    std::fs::write(dir.path().join("q.csv"), "id,text,weight\n\n1\n").unwrap();
    let e = parse(text, "p.toml", dir.path(), None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("q.csv: line 3: no column 2 ('text'): the row has 1 field(s)"),
        "{e}"
    );

    // Only blank lines: empty, not a panic.
    std::fs::write(dir.path().join("q.csv"), "\n   \n\n").unwrap();
    let e = parse(text, "p.toml", dir.path(), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("q.csv: the CSV file is empty"), "{e}");
}

#[test]
fn random_corpora_make_random_bodies() {
    let text = r#"
[targets.api]
url = "http://127.0.0.1:8080"
[corpora.blob]
generate = { length = 64, count = 50 }
[workloads.w]
target = "api"
method = "POST"
body = "{{blob}}"
[[scenarios]]
name = "s"
workload = "w"
rate = 1
"#;
    let p = plan(text).unwrap();
    let Values::List(values) = &p.workloads["w"].corpora[0].values else {
        panic!("random strings are a list");
    };
    assert_eq!(values.len(), 50);
    assert!(values
        .iter()
        .all(|v| v.len() == 64 && v.chars().all(|c| c.is_ascii_alphanumeric())));
    let distinct: std::collections::HashSet<_> = values.iter().collect();
    assert_eq!(distinct.len(), 50);
    assert_eq!(
        plan(text).unwrap().workloads["w"].corpora[0].values,
        Values::List(values.clone()),
        "reproducible"
    );
    let bad = text.replace("length = 64, ", "");
    assert!(plan(&bad)
        .unwrap_err()
        .to_string()
        .contains("corpora.blob.generate: give either pattern"));
}
