//! A mutation fuzzer on the stable toolchain: seeds from a checked-in corpus, mutated (bit
//! flips, interesting bytes, inserted or deleted ranges, duplicated chunks, splices between
//! inputs, tokens from the harness's dictionary), each run under `catch_unwind`.
//!
//! It is not coverage-guided. Its one feedback is the harness's own verdict: an input the
//! parser accepted joins the pool, so mutations keep reaching the validation and expansion
//! code behind the syntax. Why this and not libFuzzer or AFL: both need a nightly compiler or
//! an LLVM matching rustc's for their instrumentation, which this machine's registries do not
//! give; this runs wherever `cargo` does, in CI too.
//!
//! A panic is caught, and its input saved. An abort (stack overflow, failed allocation) or a
//! hang cannot be caught in-process, so the current input always sits in a memory-mapped
//! file (`<harness>.current`, no system call per run), and a watchdog thread ends the process
//! when one input runs past the hang limit; the parent (`main`) then saves that file.

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Panicking inputs saved per harness and session; the rest are counted.
pub const MAX_SAVED: usize = 10;
/// Longest input the mutator makes.
pub const MAX_INPUT: usize = 64 * 1024;
/// The longest input the request, scrub and journey harnesses take: a request's fields and a
/// server's error sample are short, and longer inputs would only slow the runs down.
pub const SHORT: usize = 4096;

/// One harness: a name, the function that feeds an input to the parser (true when the parser
/// accepted it), and the tokens its format is made of.
pub struct Harness {
    pub name: &'static str,
    pub run: fn(&[u8]) -> bool,
    pub dictionary: &'static [&'static str],
}

/// xorshift64*: fast, good enough to pick mutations, reproducible from a seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const INTERESTING: &[&[u8]] = &[
    b"0",
    b"-1",
    b"1e400",
    b"nan",
    b"inf",
    b"18446744073709551616",
    b"9223372036854775808",
    b"4294967296",
    b"\"",
    b"'",
    b"\\",
    b"\r\n",
    b"\n",
    b"\0",
    b"${",
    b"}",
    b"{{",
    b"}}",
    b"[",
    b"]",
    b"=",
    b":",
    b"@",
    b"/",
    b"%",
    b"%ff",
    b"\xff",
    b"\xc3\xa9",
    b" ",
    b"\t",
    b",",
];

/// A mutation of `input`, using `other` for splices and `dictionary` for tokens.
pub fn mutate(rng: &mut Rng, input: &[u8], other: &[u8], dictionary: &[&str]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = out.len();
        match rng.below(9) {
            0 if len > 0 => {
                let i = rng.below(len);
                out[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                out[i] = rng.next() as u8;
            }
            2 if len > 0 => {
                let start = rng.below(len);
                let end = (start + 1 + rng.below(16)).min(len);
                out.drain(start..end);
            }
            3 if len > 0 => {
                let start = rng.below(len);
                let end = (start + 1 + rng.below(64)).min(len);
                let chunk = out[start..end].to_vec();
                let at = rng.below(len + 1);
                out.splice(at..at, chunk);
            }
            4 if !other.is_empty() => {
                let start = rng.below(other.len());
                let end = (start + 1 + rng.below(128)).min(other.len());
                let at = rng.below(len + 1);
                out.splice(at..at, other[start..end].iter().copied());
            }
            5 | 6 if !dictionary.is_empty() => {
                let token = dictionary[rng.below(dictionary.len())].as_bytes();
                let at = rng.below(len + 1);
                out.splice(at..at, token.iter().copied());
            }
            7 => {
                let token = INTERESTING[rng.below(INTERESTING.len())];
                let at = rng.below(len + 1);
                if rng.below(2) == 0 && at < len {
                    // Replace a run of digits or a word with the token.
                    let end = out[at..]
                        .iter()
                        .position(|b| !b.is_ascii_alphanumeric())
                        .map_or(len, |p| at + p.max(1));
                    out.splice(at..end, token.iter().copied());
                } else {
                    out.splice(at..at, token.iter().copied());
                }
            }
            _ => {
                let at = rng.below(len + 1);
                out.insert(at, rng.next() as u8);
            }
        }
    }
    out.truncate(MAX_INPUT);
    out
}

/// What a session found.
#[derive(Default, Debug)]
pub struct Report {
    pub runs: u64,
    pub accepted: u64,
    /// Saved inputs that panicked, with the panic's message.
    pub crashes: Vec<(PathBuf, String)>,
    /// Further panicking inputs, beyond the first [`MAX_SAVED`], counted only.
    pub unsaved: u64,
}

/// The input being run, in a memory-mapped file, so an abort or hang leaves it behind.
pub struct Current {
    map: *mut u8,
    capacity: usize,
}

impl Current {
    pub fn create(path: &Path) -> std::io::Result<Current> {
        use std::os::fd::AsRawFd;
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        let capacity = 8 + MAX_INPUT;
        f.set_len(capacity as u64)?;
        // SAFETY: a fresh shared mapping of a file of `capacity` bytes that this process
        // alone writes; it stays mapped for the life of the process.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                capacity,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Current {
            map: map.cast(),
            capacity,
        })
    }

    fn set(&mut self, input: &[u8]) {
        let n = input.len().min(self.capacity - 8);
        // SAFETY: the mapping holds `capacity` bytes: 8 for the length, then the input.
        unsafe {
            std::ptr::copy_nonoverlapping((n as u64).to_le_bytes().as_ptr(), self.map, 8);
            std::ptr::copy_nonoverlapping(input.as_ptr(), self.map.add(8), n);
        }
    }

    /// The input a `<harness>.current` file holds.
    pub fn read(path: &Path) -> Option<Vec<u8>> {
        let bytes = std::fs::read(path).ok()?;
        let n = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?) as usize;
        bytes.get(8..8 + n).map(<[u8]>::to_vec)
    }
}

/// Runs `harness` from `seeds` until `until` passes or `max_runs` inputs have run. Panicking
/// inputs are written to `crash_dir`; `hang` is the longest one input may take.
pub fn fuzz(
    harness: &Harness,
    seeds: Vec<Vec<u8>>,
    seed: u64,
    (until, max_runs): (Instant, u64),
    current: &mut Current,
    hang: Duration,
    crash_dir: &Path,
) -> Report {
    let mut rng = Rng::new(seed);
    let mut pool: Vec<Vec<u8>> = if seeds.is_empty() {
        vec![Vec::new()]
    } else {
        seeds
    };
    let seed_count = pool.len();
    let mut report = Report::default();
    let started_at = Arc::new(AtomicU64::new(0));
    let epoch = Instant::now();
    watchdog(Arc::clone(&started_at), epoch, hang, harness.name);
    static LAST_PANIC: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());
    panic::set_hook(Box::new(|info| {
        *LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()) = info.to_string();
    }));
    // Every seed first, as is.
    let mut next_seed = 0;
    while Instant::now() < until && report.runs < max_runs {
        let input = if next_seed < seed_count {
            next_seed += 1;
            pool[next_seed - 1].clone()
        } else {
            let a = &pool[rng.below(pool.len())];
            let b = &pool[rng.below(pool.len())];
            mutate(&mut rng, a, b, harness.dictionary)
        };
        current.set(&input);
        started_at.store(epoch.elapsed().as_millis() as u64 + 1, Ordering::Relaxed);
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| (harness.run)(&input)));
        started_at.store(0, Ordering::Relaxed);
        report.runs += 1;
        match outcome {
            Ok(true) => {
                report.accepted += 1;
                // Keep accepted inputs as new starting points, a bounded pool.
                if pool.len() < 4096 {
                    pool.push(input);
                } else {
                    let i = seed_count + rng.below(pool.len() - seed_count);
                    pool[i] = input;
                }
            }
            Ok(false) => {}
            Err(_) if report.crashes.len() >= MAX_SAVED => report.unsaved += 1,
            Err(_) => {
                let path =
                    crash_dir.join(format!("{}-panic-{}", harness.name, report.crashes.len()));
                let _ = std::fs::create_dir_all(crash_dir);
                let _ = std::fs::write(&path, &input);
                let message = LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()).clone();
                report.crashes.push((path, message));
            }
        }
    }
    let _ = panic::take_hook();
    report
}

/// Ends the process (exit 70) when one input runs longer than `hang`.
fn watchdog(started_at: Arc<AtomicU64>, epoch: Instant, hang: Duration, name: &'static str) {
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(100));
        let at = started_at.load(Ordering::Relaxed);
        if at > 0 {
            let now = epoch.elapsed().as_millis() as u64 + 1;
            if now.saturating_sub(at) > hang.as_millis() as u64 {
                eprintln!("perfbase-fuzz: {name}: one input ran over {hang:?}: a hang");
                std::process::exit(70);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_stay_bounded_and_vary() {
        let mut rng = Rng::new(7);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let m = mutate(&mut rng, b"rate = 10\n", b"[plan]", &["duration"]);
            assert!(m.len() <= MAX_INPUT);
            seen.insert(m);
        }
        assert!(
            seen.len() > 500,
            "{} distinct mutations of 1000",
            seen.len()
        );
    }
}
