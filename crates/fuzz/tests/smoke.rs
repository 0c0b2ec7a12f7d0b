//! Every harness, a few seconds each (about 45 s for 15, within the suite's fuzzing
//! budget of 60 s): the checked-in corpus and its mutations must give no panic, abort or
//! hang. `scripts/fuzz.sh` runs the same harnesses for as long as asked.

#[test]
fn every_harness_runs_clean_for_a_few_seconds() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perfbase-fuzz"))
        .args(["--seconds", "3", "--seed", "20261125"])
        .output()
        .expect("the fuzzer ran");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "findings:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Each harness ran and accepted some inputs: the corpus reaches past the syntax.
    for line in stdout.lines().skip(1) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let runs: u64 = words[1].parse().unwrap_or(0);
        let accepted: u64 = words[4].parse().unwrap_or(0);
        assert!(runs > 100 && accepted > 0, "{line}");
    }
}
