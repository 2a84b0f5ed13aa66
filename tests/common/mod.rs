//! Helpers shared by the integration tests.
#![allow(dead_code)]

#[cfg(feature = "json")]
pub mod trace_events;

use latte::Capture;
use latte::collect::{ComponentCapture, Sample, ThreadCapture};

/// The calling thread's part of a fresh capture.
pub fn mine() -> ThreadCapture {
    let name = std::thread::current().name().map(str::to_owned);
    let capture = latte::capture();
    let name = name.expect("test threads are named");
    capture
        .threads
        .into_iter()
        .find(|t| t.name == name && !t.exited)
        .expect("this thread has recorded")
}

/// The calling thread's component `id`, or `None` if it never stored a sample of it.
pub fn my_component(id: &str) -> Option<ComponentCapture> {
    mine().component(id).cloned()
}

/// Every thread named `name` in `capture`.
pub fn named<'a>(capture: &'a Capture, name: &'a str) -> impl Iterator<Item = &'a ThreadCapture> {
    capture.threads.iter().filter(move |t| t.name == name)
}

/// The calling thread's retained samples of `id`, over all its call-tree nodes
/// (panics if it has none).
pub fn my_samples(id: &str) -> Vec<Sample> {
    let samples = mine().samples(id);
    assert!(!samples.is_empty(), "no samples of {id}");
    samples
}

/// A cloneable in-memory sink for agent tests.
#[derive(Clone, Default)]
pub struct SharedSink(pub std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl SharedSink {
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }

    /// Every JSON report written so far (the agent writes one per line).
    pub fn json_reports(&self) -> Vec<serde_json::Value> {
        self.text()
            .lines()
            .map(|l| serde_json::from_str(l).expect("one JSON report per line"))
            .collect()
    }
}

impl std::io::Write for SharedSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The row of `component` in `thread`'s section of a JSON report, if any.
pub fn json_row<'a>(
    report: &'a serde_json::Value,
    thread: &str,
    component: &str,
) -> Option<&'a serde_json::Value> {
    report["threads"]
        .as_array()?
        .iter()
        .filter(|t| t["name"] == thread)
        .flat_map(|t| t["rows"].as_array().into_iter().flatten())
        .find(|r| r["component"] == component)
        .map(|r| &r["stats"])
}

/// Runs `body` on a new thread named `name`, waits for it to exit, and returns its
/// capture (the first thread of that name: give each thread its own).
pub fn on_named_thread(name: &str, body: impl FnOnce() + Send + 'static) -> ThreadCapture {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(body)
        .unwrap()
        .join()
        .unwrap();
    latte::capture()
        .thread(name)
        .expect("the thread recorded")
        .clone()
}

/// The state every test of a binary shares: the one agent, the recorder's settings
/// (ring capacity, stack depth, memory cap, slowest, exited threads kept), which stay
/// after an agent stops, and the whole run that `latte::collect::reset()` clears.
static PROCESS: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Taken by a test that starts an agent, calls `latte::collect::reset()` or changes a
/// recorder setting: no other test holding [`exclusive`] or [`shared`] runs meanwhile.
/// When it drops, the settings are back at their defaults (an agent started and
/// stopped with them). Poison-tolerant: a failed test does not fail the next.
pub fn exclusive() -> Exclusive {
    Exclusive {
        agent: None,
        _turn: PROCESS.write().unwrap_or_else(|e| e.into_inner()),
    }
}

/// [`exclusive`], with a quiet agent (no final report, output discarded) running with
/// `settings` until the guard drops: the test's rings and threads get them.
pub fn exclusive_with(settings: impl FnOnce(latte::Builder) -> latte::Builder) -> Exclusive {
    let mut turn = exclusive();
    let quiet = latte::builder().final_report(false).sink(std::io::sink());
    turn.agent = Some(settings(quiet).start().expect("valid test settings"));
    turn
}

/// Taken by a test that records or reads latte's state with the default settings, in a
/// binary where other tests change them ([`exclusive`]): it runs beside other shared
/// tests, never beside an exclusive one.
pub fn shared() -> std::sync::RwLockReadGuard<'static, ()> {
    PROCESS.read().unwrap_or_else(|e| e.into_inner())
}

/// A test's turn alone with the process's state ([`exclusive`]).
pub struct Exclusive {
    agent: Option<latte::Guard>,
    _turn: std::sync::RwLockWriteGuard<'static, ()>,
}

impl Drop for Exclusive {
    fn drop(&mut self) {
        let stopped = self.agent.take().map_or(Ok(()), latte::Guard::stop);
        let restored = stopped.and_then(|()| {
            latte::builder()
                .final_report(false)
                .sink(std::io::sink())
                .ring_capacity(latte::collect::Limit::RING_CAPACITY.default)
                .stack_depth(latte::collect::Limit::STACK_DEPTH.default)
                .memory_cap(latte::collect::Limit::MEMORY_CAP.default as u64)
                .slowest(latte::collect::Limit::SLOWEST.default)
                .max_exited_threads(latte::collect::Limit::EXITED_THREADS.default)
                .start()?
                .stop()
        });
        // A test that failed may have left its agent running: its own failure is the
        // one to report.
        if let Err(e) = restored
            && !std::thread::panicking()
        {
            panic!("the defaults could not be restored (an agent left running?): {e}");
        }
    }
}

/// latte's documented memory bound after thread churn (docs/design.md, "Memory"):
/// live threads' stacks, tables and a touched ring page each; per kept exited thread
/// ~200 B plus 8 B per retained sample; 8 B x capacity for the fold of one id; at most
/// 16 pooled rings; one whole-run histogram per kept thread (live, exited, and the
/// fold) of one id, and one for the id in the series' open block, each 16 KiB for
/// values below 2,048 ticks (8 KiB more per doubling above): the churn tests' values
/// stay below 2,048, and the series' closed blocks of their few distinct values (at
/// most `Series::MAX_BLOCKS` blocks of a few hundred bytes) fit in what the series'
/// table leaves of its 16 KiB.
pub fn churn_bound(f: &latte::collect::Footprint, max_exited: u64, samples_per_thread: u64) -> u64 {
    // The churn tests run with the default ring capacity.
    let capacity = latte::collect::Limit::RING_CAPACITY.default as u64;
    assert!(
        f.histograms <= f.live_threads + max_exited + 2,
        "one histogram per kept thread, and the series' one: {f:?}"
    );
    f.histograms * 16 * 1024
        + f.live_threads * (2048 + 4096 + 64)
        + max_exited * (128 + 16 + 48 + 8 * samples_per_thread)
        + (8 * capacity + 48)
        + 16 * (4096 + 64)
}

/// Asserts the footprint after `threads` churned threads: at most `max_exited` kept,
/// the rest folded, and `bytes` under [`churn_bound`]. Returns the bound.
pub fn assert_churn_footprint(
    f: &latte::collect::Footprint,
    threads: u64,
    max_exited: u64,
    samples_per_thread: u64,
) -> u64 {
    assert!(f.exited_threads <= max_exited, "{f:?}");
    assert_eq!(f.exited_threads + f.merged_threads, threads, "{f:?}");
    let bound = churn_bound(f, max_exited, samples_per_thread);
    assert!(
        f.bytes <= bound,
        "footprint {} B over bound {bound} B: {f:?}",
        f.bytes
    );
    bound
}

/// Checks a ring written by writer `k` with values `k << seq_bits | sequence`: every
/// sample is the writer's own, whole and in order, the first at the capture's `first`
/// index and the last below `seen`. Returns the sequence numbers.
pub fn sequenced(thread: &str, c: &ComponentCapture, k: u64, seq_bits: u32) -> Vec<u64> {
    let seqs: Vec<u64> = c
        .samples
        .iter()
        .map(|s| {
            assert_eq!(
                s.ticks() >> seq_bits,
                k,
                "{thread}: sample {:#x} of another thread in {}",
                s.ticks(),
                c.name
            );
            s.ticks() & ((1 << seq_bits) - 1)
        })
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1),
        "{thread} {}: gap or reorder",
        c.name
    );
    if let (Some(&first), Some(&last)) = (seqs.first(), seqs.last()) {
        assert_eq!(first, c.first, "{thread} {}: first", c.name);
        assert!(
            last < c.seen,
            "{thread} {}: sample {last} beyond seen {}",
            c.name,
            c.seen
        );
    }
    assert_eq!(c.seen, c.samples.len() as u64 + c.overwritten());
    seqs
}

/// Runs `threads` short-lived threads named `<prefix><n>`, `wave` at a time, each
/// recording `0..per_thread` under `id`; after each wave (all joined) calls
/// `after_wave(wave_index)`.
pub fn churn(
    threads: usize,
    wave: usize,
    prefix: &str,
    id: &'static latte::Id,
    per_thread: u64,
    mut after_wave: impl FnMut(usize),
) {
    for w in 0..threads / wave {
        let handles: Vec<_> = (0..wave)
            .map(|i| {
                std::thread::Builder::new()
                    .name(format!("{prefix}{}", w * wave + i))
                    .spawn(move || (0..per_thread).for_each(|v| latte::record(id, v)))
                    .unwrap()
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
        after_wave(w);
    }
}

/// The capacity a ring created now gets: records once under a fresh `name` and reads
/// the new ring back.
pub fn new_ring_capacity(name: &'static str) -> usize {
    latte::record(&latte::Id::new(name), 1);
    my_component(name).expect("just recorded").capacity
}

/// xorshift64*: small, seeded, deterministic test data (failures reproduce).
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in (0, 1].
    pub fn unit(&mut self) -> f64 {
        ((self.next() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }
}

/// Starts and stops an agent: fails if one is still running.
pub fn assert_a_new_agent_can_start() {
    latte::builder()
        .sink(std::io::sink())
        .final_report(false)
        .start()
        .unwrap()
        .stop()
        .unwrap();
}

/// Per interval of an interval log (`Builder::hlog`), the count of the histogram
/// tagged `tag`, in order. Only complete lines are read: a process killed mid-write
/// may leave the last one short.
pub fn hlog_interval_counts(path: &std::path::Path, tag: &str) -> Vec<u64> {
    use base64::Engine;
    use hdrhistogram::serialization::Deserializer;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    let bytes = std::fs::read(path).unwrap();
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut counts = Vec::new();
    for entry in IntervalLogIterator::new(&bytes[..complete]) {
        if let LogEntry::Interval(h) = entry.expect("complete lines are well formed")
            && h.tag().map(|t| t.as_str()) == Some(tag)
        {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(h.encoded_histogram())
                .unwrap();
            let hist: hdrhistogram::Histogram<u64> = Deserializer::new()
                .deserialize(&mut decoded.as_slice())
                .unwrap();
            counts.push(hist.len());
        }
    }
    counts
}

/// The runner cargo started this test binary with (`CARGO_TARGET_<TRIPLE>_RUNNER`, read
/// from the environment the test inherited), if any: for a cross-built test, the
/// emulator (`qemu-aarch64-static -L ...` in `.ci/aarch64.sh`).
pub fn runner() -> Option<String> {
    let prefix = format!(
        "CARGO_TARGET_{}_",
        std::env::consts::ARCH.to_ascii_uppercase()
    );
    std::env::vars()
        .find(|(k, v)| k.starts_with(&prefix) && k.ends_with("_RUNNER") && !v.trim().is_empty())
        .map(|(_, v)| v)
}

/// Whether this test runs under qemu-user: the runner is a qemu binary. Then what the
/// host kernel counts for the test's threads (page faults, CPU time) includes the
/// emulator's own work on those threads.
pub fn under_qemu() -> bool {
    runner().is_some_and(|r| {
        r.split_whitespace()
            .next()
            .and_then(|program| std::path::Path::new(program).file_name())
            .is_some_and(|name| name.to_string_lossy().starts_with("qemu-"))
    })
}

/// The name libtest gives the test function `name` of the module `module` (its
/// `module_path!()`): the path without the crate, as `--exact` wants it.
pub fn test_name(module: &str, name: &str) -> String {
    match module.split_once("::") {
        Some((_, path)) => format!("{path}::{name}"),
        None => name.to_owned(),
    }
}

/// A command that runs this test binary again, as a child process: directly, or
/// through the runner cargo started it with ([`runner`]). Cross-testing under
/// qemu-user needs it: the kernel cannot run an aarch64 binary by itself, only the
/// emulator can.
pub fn this_test_binary() -> std::process::Command {
    let exe = std::env::current_exe().unwrap();
    let Some(runner) = runner() else {
        return std::process::Command::new(exe);
    };
    let mut words = runner.split_whitespace();
    let mut command = std::process::Command::new(words.next().expect("a non-empty runner"));
    command.args(words).arg(exe);
    command
}

/// The column titles of a table's header line, each with the column where it ends
/// (columns are one space apart and some titles hold a space, so the line is read by
/// the titles themselves: `Column::ALL`'s headers, a longer one tried before a title
/// that starts it, P99.9 before P99). Numbers are right-aligned: each cell of a row
/// ends where its title ends. The header is ASCII, so bytes are display columns.
pub fn header_titles(line: &str) -> Vec<(&'static str, usize)> {
    let mut titles: Vec<&'static str> = latte::report::Column::ALL
        .iter()
        .map(|c| c.header())
        .collect();
    titles.sort_by_key(|t| std::cmp::Reverse(t.len()));
    let mut out = Vec::new();
    let mut at = 0;
    while at < line.trim_end().len() {
        at += line[at..].len() - line[at..].trim_start().len();
        let title = titles
            .iter()
            .copied()
            .find(|t| line[at..].starts_with(t))
            .unwrap_or_else(|| panic!("no column title at {at} in {line:?}"));
        at += title.len();
        out.push((title, at));
    }
    out
}
