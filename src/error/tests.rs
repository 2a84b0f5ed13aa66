//! Every case of `Error`: equality, messages, sources.

use super::*;
use std::error::Error as _;
use std::io::ErrorKind;

fn io(kind: ErrorKind) -> Arc<std::io::Error> {
    Arc::new(std::io::Error::new(kind, "test"))
}

/// One value of every case, in declaration order. `case` below has no catch-all,
/// so a new case must be numbered there, and the test then fails until it is
/// listed here.
fn every_case() -> Vec<Error> {
    vec![
        Error::RingCapacity { requested: 3 },
        Error::StackDepth { requested: 0 },
        Error::Interval {
            requested: Duration::from_nanos(1),
        },
        Error::Slowest { requested: 1_001 },
        Error::DrainPace {
            min: Duration::ZERO,
            max: Duration::from_millis(1),
        },
        Error::Cleaning {
            setting: "Fences::k",
            value: f64::NAN,
        },
        Error::AlreadyRunning,
        Error::AgentStopped,
        Error::Sink(io(ErrorKind::BrokenPipe)),
        Error::Csv(io(ErrorKind::WriteZero)),
        Error::Spawn(io(ErrorKind::OutOfMemory)),
        Error::DrainPlacement(io(ErrorKind::InvalidInput)),
        Error::Hlog(io(ErrorKind::NotFound)),
        Error::ClockAlreadySelected { hardware: true },
        Error::PeriodicReports {
            failed: 2,
            last: Box::new(Error::Sink(io(ErrorKind::BrokenPipe))),
        },
        Error::Signals(io(ErrorKind::Unsupported)),
        Error::MemoryCap {
            cap: 4096,
            ring_bytes: 8192,
        },
        Error::Pattern {
            pattern: "[".into(),
            reason: "invalid range pattern".into(),
        },
        Error::InternLimit { limit: 65_536 },
        Error::Exporter {
            exporter: "prometheus".into(),
            error: io(ErrorKind::AddrInUse),
        },
        Error::NodeLimit { requested: 1 << 30 },
        Error::FlightRecorder {
            window: Duration::ZERO,
            entries: 1000,
        },
        Error::Dump {
            reason: "the flight recorder is off".into(),
        },
        Error::FramesListed { requested: 1 << 20 },
        Error::Allocated {
            thread: "engine".into(),
            count: 2,
            path: vec!["order".into(), "risk".into()],
            size: 48,
        },
    ]
}

fn case(error: &Error) -> usize {
    match error {
        Error::RingCapacity { .. } => 0,
        Error::StackDepth { .. } => 1,
        Error::Interval { .. } => 2,
        Error::Slowest { .. } => 3,
        Error::DrainPace { .. } => 4,
        Error::Cleaning { .. } => 5,
        Error::AlreadyRunning => 6,
        Error::AgentStopped => 7,
        Error::Sink(_) => 8,
        Error::Csv(_) => 9,
        Error::Spawn(_) => 10,
        Error::DrainPlacement(_) => 11,
        Error::Hlog(_) => 12,
        Error::ClockAlreadySelected { .. } => 13,
        Error::PeriodicReports { .. } => 14,
        Error::Signals(_) => 15,
        Error::MemoryCap { .. } => 16,
        Error::Pattern { .. } => 17,
        Error::InternLimit { .. } => 18,
        Error::Exporter { .. } => 19,
        Error::NodeLimit { .. } => 20,
        Error::FlightRecorder { .. } => 21,
        Error::Dump { .. } => 22,
        Error::FramesListed { .. } => 23,
        Error::Allocated { .. } => 24,
    }
}

#[test]
fn every_case_is_listed_once() {
    let cases: Vec<usize> = every_case().iter().map(case).collect();
    assert_eq!(cases, (0..=24).collect::<Vec<_>>());
}

#[test]
fn every_case_equals_itself_and_no_other_case() {
    let all = every_case();
    for (i, a) in all.iter().enumerate() {
        assert_eq!(a, a, "{a:?}");
        assert_eq!(a, &a.clone(), "{a:?}");
        for b in &all[i + 1..] {
            assert_ne!(a, b);
            assert_ne!(b, a);
        }
    }
}

#[test]
fn values_and_io_kinds_count() {
    assert_ne!(
        Error::RingCapacity { requested: 3 },
        Error::RingCapacity { requested: 5 }
    );
    let nan = |setting| Error::Cleaning {
        setting,
        value: f64::NAN,
    };
    assert_eq!(nan("Bypass::factor"), nan("Bypass::factor"));
    assert_ne!(nan("Bypass::factor"), nan("Fences::k"));
    assert_ne!(
        Error::Cleaning {
            setting: "Fences::k",
            value: -1.0
        },
        Error::Cleaning {
            setting: "Fences::k",
            value: -2.0
        }
    );
    assert_ne!(
        Error::DrainPlacement(io(ErrorKind::InvalidInput)),
        Error::DrainPlacement(io(ErrorKind::PermissionDenied))
    );
    // An exporter's error compares by its name and message.
    let exporter = |name: &str, why: &str| Error::Exporter {
        exporter: name.into(),
        error: Arc::from(Box::<dyn std::error::Error + Send + Sync>::from(why)),
    };
    assert_eq!(exporter("otlp", "down"), exporter("otlp", "down"));
    assert_ne!(exporter("otlp", "down"), exporter("prometheus", "down"));
    assert_ne!(exporter("otlp", "down"), exporter("otlp", "slow"));
    // The message of an I/O error does not count, its kind does.
    assert_eq!(
        Error::Csv(io(ErrorKind::WriteZero)),
        Error::Csv(Arc::new(std::io::Error::new(ErrorKind::WriteZero, "other")))
    );
}

#[test]
fn every_message_is_a_sentence_and_io_cases_have_a_source() {
    for error in every_case() {
        let message = error.to_string();
        assert!(message.len() > 20, "{error:?}: {message}");
        let io = matches!(
            error,
            Error::Sink(_)
                | Error::Csv(_)
                | Error::Spawn(_)
                | Error::DrainPlacement(_)
                | Error::Hlog(_)
                | Error::Signals(_)
        );
        let wraps = io
            || matches!(
                error,
                Error::PeriodicReports { .. } | Error::Exporter { .. }
            );
        assert_eq!(error.source().is_some(), wraps, "{error:?}");
        if io {
            assert!(message.contains("test"), "{message}");
        }
    }
}
