// Reads the versions of actix-web and sqlx that Cargo.lock pins, for the Server header: the
// versions this binary was really built with.
use std::fs;

fn locked_version(lock: &str, name: &str) -> String {
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == format!("name = \"{name}\"") {
            if let Some(v) = lines.next().and_then(|l| l.strip_prefix("version = \"")) {
                return v.trim_end_matches('"').to_string();
            }
        }
    }
    panic!("{name} is not in Cargo.lock");
}

fn main() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    let lock = fs::read_to_string("Cargo.lock").expect("Cargo.lock beside Cargo.toml");
    println!(
        "cargo:rustc-env=STACK_ACTIX_VERSION={}",
        locked_version(&lock, "actix-web")
    );
    println!(
        "cargo:rustc-env=STACK_SQLX_VERSION={}",
        locked_version(&lock, "sqlx")
    );
}
