//! Any builder settings, any sample values: nothing panics or hangs; `start()` either succeeds or returns an `Error` with a message (and then
//! changed nothing: a new agent can start); an agent that started records, reports
//! on request and stops; and every report renders as a table, as JSON and as CSV.
//!
//! Each case starts at most one agent and stops it before the next (one agent per
//! process; the test holds `common::exclusive()` over all its cases). Settings stay
//! after an agent stops, so each case records on a fresh thread, under ids of its own.
//! Ring capacities above 2^16 are left to `limits.rs`, which checks 2^28 without
//! making 2 GiB rings.

use crate::common::{self, SharedSink};
use latte::clock::ClockChoice;
use latte::report::JsonStyle;
use latte::report::{Bypass, Fences};
use latte::{Builder, Cleaning, Data, Format, Id, Mode, Report, ReportOptions, Unit};
use proptest::prelude::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Every setting the builder has, as drawn.
#[derive(Clone, Debug)]
struct Settings {
    clock: Option<ClockChoice>,
    ring_capacity: Option<usize>,
    stack_depth: Option<usize>,
    memory_cap: Option<Cap>,
    periodic: Option<Duration>,
    drain_pace: Option<(Duration, Duration)>,
    slowest: Option<usize>,
    max_exited_threads: Option<usize>,
    options: ReportOptions,
    format: Format,
    final_report: bool,
    hlog: Hlog,
    drain_cpus: Option<Vec<usize>>,
    drain_nice: Option<i32>,
}

/// The memory cap.
#[derive(Clone, Copy, Debug)]
enum Cap {
    Bytes(u64),
    /// Room for this many more rings of the case's capacity (1,024 samples unless it
    /// sets one) than are charged when the case starts: its three ids meet the cap.
    Rings(u64),
}

/// Where the interval log goes.
#[derive(Clone, Copy, Debug)]
enum Hlog {
    Off,
    /// A new file in the temporary directory.
    Temp,
    /// Under a directory that does not exist.
    NoSuchDirectory,
    /// The temporary directory itself.
    ADirectory,
}

/// What the case records, on a fresh thread.
#[derive(Clone, Debug)]
struct Samples {
    values: Vec<u64>,
    pulses: usize,
    nested_scopes: usize,
}

fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        Just(Duration::ZERO),
        Just(Duration::from_nanos(1)),
        Just(Duration::from_micros(999)),
        Just(Duration::from_millis(1)),
        (1u64..=20).prop_map(Duration::from_millis),
        Just(Duration::from_secs(60)),
        Just(Duration::from_secs(61)),
        Just(Duration::MAX),
        (any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
    ]
}

fn size(specials: &'static [usize]) -> impl Strategy<Value = usize> {
    prop_oneof![
        3 => proptest::sample::select(specials),
        1 => any::<usize>(),
    ]
}

/// Any `f64`, the awkward ones often.
fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        proptest::sample::select(vec![
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -1.0,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            1.5,
            10.0,
            f64::MAX,
        ]),
        any::<f64>(),
        0.0..100.0,
    ]
}

fn cleaning() -> impl Strategy<Value = Cleaning> {
    let bypass = (float(), float()).prop_map(|(factor, floor_ns)| Bypass { factor, floor_ns });
    let fences = (float(), float()).prop_map(|(k, zero_iqr_fraction)| Fences {
        k,
        zero_iqr_fraction,
    });
    (proptest::option::of(bypass), proptest::option::of(fences))
        .prop_map(|(bypass, fences)| Cleaning { bypass, fences })
}

fn options() -> impl Strategy<Value = ReportOptions> {
    (
        prop_oneof![Just(Unit::Cycles), Just(Unit::Time)],
        prop_oneof![Just(Data::Raw), Just(Data::Calibrated)],
        prop_oneof![Just(Cleaning::default()), Just(Cleaning::OFF), cleaning()],
    )
        .prop_map(|(unit, data, cleaning)| ReportOptions {
            unit,
            data,
            cleaning,
            ..ReportOptions::default()
        })
}

fn ring_capacity() -> impl Strategy<Value = usize> {
    let capacities = &[0, 1, 2, 3, 4, 1000, 1024, 1 << 16, 1 << 29, usize::MAX];
    // Valid capacities are at most 2^16 (see the module docs).
    size(capacities).prop_map(|n| {
        if n.is_power_of_two() && n > 1 << 16 && n <= 1 << 28 {
            1 << 16
        } else {
            n
        }
    })
}

/// Around one and two rings of 1,024 samples (8 KiB each), the default, the largest.
fn memory_cap() -> impl Strategy<Value = Cap> {
    prop_oneof![
        2 => proptest::sample::select(vec![0, 1, 8191, 8192, 16384, 1 << 30, u64::MAX])
            .prop_map(Cap::Bytes),
        1 => any::<u64>().prop_map(Cap::Bytes),
        3 => (0u64..4).prop_map(Cap::Rings),
    ]
}

fn hlog() -> impl Strategy<Value = Hlog> {
    prop_oneof![
        12 => Just(Hlog::Off),
        2 => Just(Hlog::Temp),
        1 => Just(Hlog::NoSuchDirectory),
        1 => Just(Hlog::ADirectory),
    ]
}

/// The drain's CPUs and niceness.
fn placement() -> impl Strategy<Value = (Option<Vec<usize>>, Option<i32>)> {
    (
        sometimes(proptest::sample::select(vec![
            vec![],
            vec![0],
            vec![1 << 20],
        ])),
        sometimes(proptest::sample::select(vec![i32::MIN, -1, 0, 19, 20])),
    )
}

/// A setting set in 15% of cases, left at its default otherwise. Most settings are
/// drawn from values around their limits, invalid ones among them: were each set half
/// the time, a case would start an agent once in about 30 (2 of 64 cases, measured),
/// and the agent's side of the property would barely run. This way about a case in
/// three starts (a seed's cases accumulate over CI runs).
fn sometimes<S: Strategy>(setting: S) -> impl Strategy<Value = Option<S::Value>> {
    proptest::option::weighted(0.15, setting)
}

fn settings() -> impl Strategy<Value = Settings> {
    let clock = sometimes(prop_oneof![
        Just(ClockChoice::Auto),
        Just(ClockChoice::Hardware),
        Just(ClockChoice::Os),
    ]);
    let depths = &[0, 1, 2, 64, 4096, 4097, usize::MAX];
    let slowest = &[0, 1, 10, 1000, 1001, usize::MAX];
    let exited = &[0, 1, 256, usize::MAX];
    (
        (
            clock,
            sometimes(ring_capacity()),
            sometimes(size(depths)),
            sometimes(memory_cap()),
        ),
        (
            sometimes(duration()),
            sometimes((duration(), duration())),
            sometimes(size(slowest)),
            sometimes(size(exited)),
        ),
        (options(), any::<bool>(), any::<bool>(), hlog(), placement()),
    )
        .prop_map(
            |((clock, ring_capacity, stack_depth, memory_cap), rest, last)| {
                let (periodic, drain_pace, slowest, max_exited_threads) = rest;
                let (options, json, final_report, hlog, (drain_cpus, drain_nice)) = last;
                Settings {
                    clock,
                    ring_capacity,
                    stack_depth,
                    memory_cap,
                    periodic,
                    drain_pace,
                    slowest,
                    max_exited_threads,
                    options,
                    format: if json {
                        Format::Json
                    } else {
                        Format::default()
                    },
                    final_report,
                    hlog,
                    drain_cpus,
                    drain_nice,
                }
            },
        )
}

fn samples() -> impl Strategy<Value = Samples> {
    let value = prop_oneof![
        proptest::sample::select(vec![
            0,
            1,
            latte::collect::Sample::MAX_TICKS,
            latte::collect::Sample::MAX_TICKS + 1,
            u64::MAX,
        ]),
        any::<u64>(),
        0u64..10_000,
    ];
    (
        proptest::collection::vec(value, 0..24),
        0usize..5,
        0usize..6,
    )
        .prop_map(|(values, pulses, nested_scopes)| Samples {
            values,
            pulses,
            nested_scopes,
        })
}

/// The builder for `s`, writing to `sink`; the interval log's path, if any.
fn builder(s: &Settings, sink: &SharedSink, case: u64) -> (Builder, Option<PathBuf>) {
    let mut b = latte::builder()
        .sink(sink.clone())
        .unit(s.options.unit)
        .data(s.options.data)
        .cleaning(s.options.cleaning)
        .format(s.format.clone())
        .final_report(s.final_report);
    let set = |b: Builder, value: Option<usize>, f: fn(Builder, usize) -> Builder| match value {
        Some(v) => f(b, v),
        None => b,
    };
    b = set(b, s.ring_capacity, Builder::ring_capacity);
    b = set(b, s.stack_depth, Builder::stack_depth);
    b = set(b, s.slowest, Builder::slowest);
    b = set(b, s.max_exited_threads, Builder::max_exited_threads);
    if let Some(choice) = s.clock {
        b = b.clock(choice);
    }
    match s.memory_cap {
        Some(Cap::Bytes(bytes)) => b = b.memory_cap(bytes),
        Some(Cap::Rings(n)) => {
            // The capacity the case's rings will get (an invalid one fails `start`);
            // when the case sets none, 1,024 (an earlier case's may still hold).
            let capacity = s.ring_capacity.unwrap_or(1024);
            if s.ring_capacity.is_none() {
                b = b.ring_capacity(capacity);
            }
            let charged = latte::collect::footprint().memory_cap_used;
            b = b.memory_cap(
                charged.saturating_add(n.saturating_mul((capacity as u64).saturating_mul(8))),
            );
        }
        None => {}
    }
    if let Some(period) = s.periodic {
        b = b.periodic(period);
    }
    if let Some((min, max)) = s.drain_pace {
        b = b.drain_pace(min, max);
    }
    if let Some(cpus) = &s.drain_cpus {
        b = b.drain_cpus(cpus.iter().copied());
    }
    if let Some(nice) = s.drain_nice {
        b = b.drain_nice(nice);
    }
    let temp = std::env::temp_dir();
    let path = match s.hlog {
        Hlog::Off => None,
        Hlog::Temp => Some(temp.join(format!("latte-prop-{}-{case}.hlog", std::process::id()))),
        Hlog::NoSuchDirectory => Some(temp.join("latte-no-such-directory").join("x.hlog")),
        Hlog::ADirectory => Some(temp.clone()),
    };
    if let Some(path) = &path {
        b = b.hlog(path);
    }
    (b, path)
}

/// This case's ids (leaked: an `Id` is `'static`).
struct Ids {
    recorded: &'static Id,
    pulse: &'static Id,
    scope: &'static Id,
}

impl Ids {
    fn new(case: u64) -> Ids {
        let id = |kind: &str| -> &'static Id {
            let name: &'static str = Box::leak(format!("prop/{case}/{kind}").into_boxed_str());
            Box::leak(Box::new(Id::new(name)))
        };
        Ids {
            recorded: id("recorded"),
            pulse: id("pulse"),
            scope: id("scope"),
        }
    }
}

/// Records `samples` on a new thread.
fn record(ids: &Ids, samples: &Samples, case: u64) {
    let (recorded, pulse, scope) = (ids.recorded, ids.pulse, ids.scope);
    let samples = samples.clone();
    std::thread::Builder::new()
        .name(format!("prop-{case}"))
        .spawn(move || {
            samples
                .values
                .iter()
                .for_each(|&v| latte::record(recorded, v));
            (0..samples.pulses).for_each(|_| latte::pulse(pulse));
            (0..samples.nested_scopes).for_each(|_| latte::start(scope, Mode::Mid));
            (0..samples.nested_scopes).for_each(|_| latte::stop(scope, Mode::Hard));
        })
        .unwrap()
        .join()
        .unwrap();
}

/// Whether `Builder::start` accepts `cleaning`: every number finite and at least 0.
fn valid(cleaning: &Cleaning) -> bool {
    let b = cleaning.bypass.iter().flat_map(|b| [b.factor, b.floor_ns]);
    let f = cleaning
        .fences
        .iter()
        .flat_map(|f| [f.k, f.zero_iqr_fraction]);
    b.chain(f).all(|v| v.is_finite() && v >= 0.0)
}

/// Renders `report` as a table and as JSON; the JSON is one line that parses, and
/// reads back as a `Report` unless the cleaning holds a number JSON cannot write
/// (one `start()` refuses).
fn renders(report: &Report) -> Result<(), TestCaseError> {
    let mut table = Vec::new();
    report.write(&mut table, Format::default()).unwrap();
    let table = String::from_utf8(table).unwrap();
    prop_assert!(table.contains("LATTE TELEMETRY"));
    let mut line = Vec::new();
    report.write(&mut line, Format::Json).unwrap();
    let line = String::from_utf8(line).unwrap();
    prop_assert_eq!(line.lines().count(), 1);
    let _: serde_json::Value = serde_json::from_str(&line).unwrap();
    if valid(&report.cleaning) {
        let back: Result<Report, _> = serde_json::from_str(&line);
        prop_assert!(back.is_ok(), "{:?}\n{}", back.err(), line);
    }
    let _: serde_json::Value = serde_json::from_str(&report.to_json(JsonStyle::Pretty)).unwrap();
    Ok(())
}

/// What the agent wrote: every line a JSON report, or tables.
fn sink_holds_reports(sink: &SharedSink, format: &Format) -> Result<(), TestCaseError> {
    let text = sink.text();
    if matches!(format, Format::Json) {
        prop_assert!(!text.is_empty());
        sink.json_reports(); // panics on a line that is not JSON
    } else {
        prop_assert!(text.contains("LATTE TELEMETRY"), "{}", text);
    }
    Ok(())
}

/// Whole-run counts of this case's ids, in a report made with the case's options;
/// every report renders (the whole run, and the case's own capture with its CSV).
fn check_whole_run(
    ids: &Ids,
    samples: &Samples,
    options: &ReportOptions,
    case: u64,
) -> Result<(), TestCaseError> {
    let report = Report::collect(options);
    renders(&report)?;
    // The case's thread alone (the whole capture holds calibration's 80,000 samples).
    let mut capture = latte::capture();
    capture.threads.retain(|t| t.name == format!("prop-{case}"));
    // Past the memory cap (settings stay, so an earlier case's cap may still hold) an
    // id records nothing on the thread, and every record it dropped is counted. From
    // the report, not the capture: a thread folded into `<exited threads>` (a small
    // `max_exited_threads`) keeps its counts there.
    let over_cap = |id: &Id| {
        report
            .threads
            .iter()
            .flat_map(|t| &t.unpaired)
            .filter(|f| f.component == id.name())
            .map(|f| f.counts.over_cap)
            .sum::<u64>()
    };
    let seen = |id: &Id| {
        report
            .all_threads
            .iter()
            .find(|r| r.component == id.name())
            .map_or(0, |r| r.stats.seen)
    };
    let valid = samples
        .values
        .iter()
        .filter(|&&v| v <= latte::collect::Sample::MAX_TICKS)
        .count() as u64;
    prop_assert_eq!(seen(ids.recorded) + over_cap(ids.recorded), valid);
    if over_cap(ids.pulse) > 0 {
        prop_assert_eq!(seen(ids.pulse), 0);
        prop_assert_eq!(over_cap(ids.pulse), samples.pulses as u64);
    } else {
        prop_assert_eq!(seen(ids.pulse), samples.pulses.saturating_sub(1) as u64);
    }
    // A stack shallower than the nesting gives up the oldest frames.
    prop_assert!(seen(ids.scope) + over_cap(ids.scope) <= samples.nested_scopes as u64);

    let calibration = latte::analyze::calibration();
    renders(&Report::from_capture(&capture, calibration, options))?;
    let mut csv = Vec::new();
    capture
        .write_csv(calibration.ticks_per_ns, &mut csv)
        .unwrap();
    let rows = csv.iter().filter(|&&b| b == b'\n').count();
    let retained: usize = capture
        .threads
        .iter()
        .flat_map(|t| &t.components)
        .map(|c| c.samples.len())
        .sum();
    prop_assert_eq!(rows, 1 + retained);
    Ok(())
}

static CASE: AtomicU64 = AtomicU64::new(0);
/// Cases whose settings `start` refused.
static REFUSED: AtomicU64 = AtomicU64::new(0);

fn run(s: &Settings, samples: &Samples) -> Result<(), TestCaseError> {
    let case = CASE.fetch_add(1, Ordering::Relaxed);
    // The whole-run figures count from here: each case's reports hold its own ids,
    // not every earlier case's too.
    latte::collect::reset();
    let sink = SharedSink::default();
    let (builder, hlog) = builder(s, &sink, case);
    let ids = Ids::new(case);
    match builder.start() {
        Err(e) => {
            REFUSED.fetch_add(1, Ordering::Relaxed);
            prop_assert!(!e.to_string().is_empty(), "{:?}", e);
            prop_assert_eq!(&e, &e.clone());
            // Refused: nothing runs, so an agent can start.
            common::assert_a_new_agent_can_start();
            record(&ids, samples, case);
        }
        Ok(guard) => {
            prop_assert!(valid(&s.options.cleaning), "{:?}", s.options.cleaning);
            record(&ids, samples, case);
            prop_assert_eq!(guard.report(), Ok(()));
            sink_holds_reports(&sink, &s.format)?;
            prop_assert_eq!(guard.report_interval(), Ok(()));
            prop_assert_eq!(guard.stop(), Ok(()));
            sink_holds_reports(&sink, &s.format)?;
        }
    }
    if let (Hlog::Temp, Some(path)) = (s.hlog, &hlog) {
        let _ = std::fs::remove_file(path);
    }
    check_whole_run(&ids, samples, &s.options, case)
}

#[test]
fn any_settings_and_values_start_or_refuse_and_every_report_renders() {
    let _one = common::exclusive(); // for every case
    let config = ProptestConfig {
        cases: 32,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(s in settings(), samples in samples())| {
        run(&s, &samples)?;
    });
    let (cases, refused) = (
        CASE.load(Ordering::Relaxed),
        REFUSED.load(Ordering::Relaxed),
    );
    println!(
        "{cases} cases: {} started an agent, {refused} were refused",
        cases - refused
    );
    // Both sides of the property ran (about a case in three starts: each side misses all 32 with odds below 10^-5).
    assert!(
        refused > 0 && refused < cases,
        "{refused} of {cases} refused"
    );
}
