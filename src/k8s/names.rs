//! Kubernetes' own rules for the names and values `perfbase k8s` writes into manifests,
//! checked before anything is written or applied: a name the API server would refuse (or a
//! value that would change the manifest's meaning, like a line break) is exit 2 here,
//! naming the flag and the rule, not a failed apply or a Job that never starts.

use crate::cli::K8sArgs;
use crate::exit::{bad_input, AppError};

/// Longest Job name: its merge Job adds `-merge`, and the name must stay a 63-character
/// label (the Job controller copies it into the pods' `job-name` label).
const MAX_NAME: usize = 63 - "-merge".len();

/// An RFC 1123 label: at most `max` lower-case letters, digits and `-`, starting and ending
/// with a letter or digit. Namespaces and Job names follow it.
fn is_label(s: &str, max: usize) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= max
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// An RFC 1123 subdomain (a Secret's name): dot-separated labels, at most 253 characters.
fn is_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(|l| is_label(l, 63))
}

/// A ConfigMap or Secret key: letters, digits, `-`, `_` and `.`, at most 253, not `.` or `..`.
fn is_key(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// A label value (the run id is the agents' store label and goes into their arguments):
/// at most 63 letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit.
fn is_label_value(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// An image reference (`[registry[:port]/]path[:tag][@sha256:digest]`): the path in lower
/// case (`a-z0-9`, `.`, `_`, `-`, `/`), a tag of at most 128 letters, digits, `_`, `.` and
/// `-`, no space or control character anywhere.
fn is_image(s: &str) -> bool {
    if s.is_empty() || s.len() > 4096 || s.bytes().any(|c| c <= b' ' || c >= 0x7f) {
        return false;
    }
    let (name, digest) = s.split_once('@').unwrap_or((s, ""));
    if !digest.is_empty() {
        let Some((algo, hex)) = digest.split_once(':') else {
            return false;
        };
        if algo.is_empty() || hex.len() < 32 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return false;
        }
    }
    // A tag is after the last ':' that follows the last '/' (a registry's port is before it).
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let (path, tag) = match name[last_slash..].rfind(':') {
        Some(i) => (&name[..last_slash + i], &name[last_slash + i + 1..]),
        None => (name, ""),
    };
    let (registry, repo) = match path.split_once('/') {
        // A first part with '.' or ':' or "localhost" is a registry host.
        Some((host, rest)) if host.contains(['.', ':']) || host == "localhost" => (host, rest),
        _ => ("", path),
    };
    let registry_ok = registry
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b':'));
    let repo_ok = !repo.is_empty()
        && repo.split('/').all(|part| {
            !part.is_empty()
                && part.bytes().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'.' | b'_' | b'-')
                })
        });
    let tag_ok = tag.len() <= 128
        && tag
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'));
    // A ':' with nothing after it is no tag.
    let tag_ok = tag_ok && (tag.is_empty() != name[last_slash..].contains(':'));
    registry_ok && repo_ok && tag_ok
}

/// The suffixes of Kubernetes quantities that make sense for CPU: cores or millicores.
const CPU_SUFFIXES: &[&str] = &["", "m"];
/// …and for memory: bytes, or decimal (`k`, `M` … `E`) or binary (`Ki` … `Ei`) multiples; not
/// `m`, which Kubernetes reads as thousandths of a byte (`512m` is not 512 MB).
const MEMORY_SUFFIXES: &[&str] = &[
    "", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
];

/// A Kubernetes quantity, positive: a decimal number (at most 3 decimals) and one of
/// `suffixes`. (Kubernetes also reads exponents, `1e3`; they are refused here as unusual.)
fn is_quantity(s: &str, suffixes: &[&str]) -> bool {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(end);
    let decimals = number.split_once('.').map_or(0, |(_, d)| d.len());
    suffixes.contains(&suffix)
        && number.len() <= 20
        && decimals <= 3
        && number.matches('.').count() <= 1
        && number.parse::<f64>().is_ok_and(|v| v > 0.0)
}

/// A quantity's value in its unit (cores, bytes): the number times its suffix.
fn quantity_value(s: &str) -> f64 {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(end);
    let scale = match suffix {
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        _ => 1.0,
    };
    number.parse::<f64>().unwrap_or(0.0) * scale
}

/// The bounds an agent's resources are held to: a typo (`--cpu 1000000`, `--memory 1Ei`)
/// would leave the pods Pending for ever, and below these an agent cannot run a load.
const CPU_CORES: (f64, f64) = (0.05, 512.0);
const MEMORY_BYTES: (f64, f64) = (64.0 * 1024.0 * 1024.0, 16.0 * 1_099_511_627_776.0);
/// The shortest --deadline: the pods must start, meet at the barrier and load.
const MIN_DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

/// What bounds each pod: --cpu and --memory quantities, and a --deadline to run in.
fn check_resources(a: &K8sArgs) -> Result<(), AppError> {
    let refuse = |flag: &str, value: &str, rule: &str| {
        Err(bad_input(format!(
            "{flag} '{}': {rule}",
            perfbase_core::redact::printable(value)
        )))
    };
    if !is_quantity(&a.cpu, CPU_SUFFIXES) {
        return refuse(
            "--cpu",
            &a.cpu,
            "give CPU as a Kubernetes quantity: cores (1, 2, 1.5) or millicores (500m), \
             e.g. --cpu 2",
        );
    }
    if !is_quantity(&a.memory, MEMORY_SUFFIXES) {
        return refuse(
            "--memory",
            &a.memory,
            "give memory as a Kubernetes quantity: a number with a suffix such as 512Mi, 1Gi or \
             2G (Ki, Mi, Gi, Ti, k, M, G, T; m would be thousandths of a byte), e.g. --memory 1Gi",
        );
    }
    let cores = quantity_value(&a.cpu);
    if !(CPU_CORES.0..=CPU_CORES.1).contains(&cores) {
        return refuse(
            "--cpu",
            &a.cpu,
            "an agent takes from 50m to 512 cores; no node has more, and less cannot run a load",
        );
    }
    let bytes = quantity_value(&a.memory);
    if !(MEMORY_BYTES.0..=MEMORY_BYTES.1).contains(&bytes) {
        return refuse(
            "--memory",
            &a.memory,
            "an agent takes from 64Mi to 16Ti; no node has more, and less cannot hold its \
             histograms",
        );
    }
    if let Some(d) = a.deadline.filter(|d| *d < MIN_DEADLINE) {
        return refuse(
            "--deadline",
            &if d.is_zero() {
                "0s".to_string()
            } else {
                format!("{d:?}")
            },
            "the agents need at least 1 min to start, meet at the barrier and load; give e.g. \
             --deadline 2h",
        );
    }
    Ok(())
}

/// Checks every name and value `perfbase k8s` puts into its manifests; `file` is the plan's
/// file name, the ConfigMap's key.
pub fn check(a: &K8sArgs, file: &str) -> Result<(), AppError> {
    let refuse = |flag: &str, value: &str, rule: &str| {
        Err(bad_input(format!(
            "{flag} '{}': {rule}",
            perfbase_core::redact::printable(value)
        )))
    };
    if let Some(ns) = &a.namespace {
        if !is_label(ns, 63) {
            return refuse(
                "--namespace",
                ns,
                "a namespace is at most 63 lower-case letters, digits and '-', starting and \
                 ending with a letter or digit (RFC 1123 label)",
            );
        }
    }
    if let Some(name) = &a.name {
        if !is_label(name, MAX_NAME) {
            return refuse(
                "--name",
                name,
                &format!(
                    "a Job's name is at most {MAX_NAME} lower-case letters, digits and '-', \
                     starting and ending with a letter or digit (its merge Job adds '-merge')"
                ),
            );
        }
    }
    if !is_subdomain(&a.store_secret) {
        return refuse(
            "--store-secret",
            &a.store_secret,
            "a Secret's name is lower-case letters, digits, '-' and '.', at most 253 (RFC 1123 \
             subdomain)",
        );
    }
    if !is_key(&a.store_key) {
        return refuse(
            "--store-key",
            &a.store_key,
            "a Secret's key is letters, digits, '-', '_' and '.', at most 253",
        );
    }
    if let Some(id) = &a.run_id {
        if !is_label_value(id) {
            return refuse(
                "--run-id",
                id,
                "a run id is at most 63 letters, digits, '-', '_' and '.', starting and ending \
                 with a letter or digit",
            );
        }
    }
    if !is_image(&a.image) {
        return refuse(
            "--image",
            &a.image,
            "an image is [registry[:port]/]path[:tag][@sha256:digest], its path in lower case, \
             with no space",
        );
    }
    check_resources(a)?;
    if !is_key(file) {
        return refuse(
            "the plan's file name",
            file,
            "it is the ConfigMap's key: letters, digits, '-', '_' and '.', at most 253; rename \
             the file",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_rules() {
        assert!(is_label("perfbase-demo-1", 63));
        for bad in [
            "",
            "Caps",
            "with space",
            "a/b",
            "new\nline",
            "-lead",
            "trail-",
            &"x".repeat(64),
        ] {
            assert!(!is_label(bad, 63), "{bad:?}");
        }
        assert!(is_subdomain("perfbase-store.v1"));
        assert!(!is_subdomain("Perfbase") && !is_subdomain("a..b"));
        assert!(is_key("url") && is_key("PG_URL.v2") && !is_key("a b") && !is_key(".."));
        assert!(is_label_value("nightly-42") && !is_label_value("a,b") && !is_label_value("x\n"));
        for good in ["1", "2.5", "500m", "0.25", "16"] {
            assert!(is_quantity(good, CPU_SUFFIXES), "{good}");
        }
        for good in ["1Gi", "512Mi", "2G", "1.5Gi", "1000000", "64k"] {
            assert!(is_quantity(good, MEMORY_SUFFIXES), "{good}");
        }
        for bad in [
            "", "0", "-1", "1 Gi", " 1", "1gb", "1GiB", "abc", ".", "1.23456", "1e3", "1..2",
        ] {
            assert!(!is_quantity(bad, MEMORY_SUFFIXES), "{bad:?}");
            assert!(!is_quantity(bad, CPU_SUFFIXES), "{bad:?}");
        }
        // Millibytes and gibicores are Kubernetes quantities, but not what anyone means.
        assert!(!is_quantity("512m", MEMORY_SUFFIXES) && !is_quantity("1Gi", CPU_SUFFIXES));
        for good in [
            "perfbase",
            "perfbase:0.1",
            "localhost:5000/perfbase:dev",
            "ghcr.io/acme/perfbase:v1.2_rc-3",
            "registry.example:443/a/b@sha256:0123456789abcdef0123456789abcdef",
        ] {
            assert!(is_image(good), "{good}");
        }
        for bad in [
            "",
            "Perfbase",
            "perf base",
            "perfbase:\n",
            "a//b",
            "x:",
            "a@sha256:zz",
        ] {
            assert!(!is_image(bad), "{bad:?}");
        }
    }
}
