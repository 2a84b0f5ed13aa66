//! The tracing bridge with a real `tracing_subscriber::registry()`: exact counts,
//! lifetimes, event pulses, and the anomaly cases.

mod common;
use common::{mine, my_component};
use latte::Mode;
use latte::collect::SampleKind;
use latte::tracing::LatteLayer;
use tracing_subscriber::layer::SubscriberExt;

fn with_layer<R>(layer: LatteLayer, f: impl FnOnce() -> R) -> R {
    tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), f)
}

#[tracing::instrument]
fn instrumented(n: u64) -> u64 {
    n.wrapping_mul(31)
}

#[test]
fn instrumented_functions_and_manual_spans_have_exact_counts() {
    with_layer(LatteLayer::new(), || {
        for n in 0..25 {
            std::hint::black_box(instrumented(n));
        }
        for _ in 0..7 {
            tracing::info_span!("manual_span").in_scope(|| std::hint::black_box(1));
        }
    });
    assert_eq!(my_component("instrumented").unwrap().samples.len(), 25);
    assert_eq!(my_component("manual_span").unwrap().samples.len(), 7);
    assert_eq!(
        my_component("instrumented (lifetime)")
            .unwrap()
            .samples
            .len(),
        25
    );
    assert_eq!(mine().anomalies.total(), 0);
}

#[test]
fn modes_are_configurable() {
    with_layer(
        LatteLayer::new()
            .modes(Mode::Mid, Mode::Hard)
            .span_lifetimes(false),
        || {
            let _e = tracing::info_span!("bridge_modes").entered();
        },
    );
    let c = my_component("bridge_modes").unwrap();
    assert_eq!(
        c.samples[0].kind(),
        SampleKind::Scope {
            start: Mode::Mid,
            stop: Mode::Hard
        }
    );
    assert!(my_component("bridge_modes (lifetime)").is_none());
}

#[test]
fn a_span_entered_twice_records_two_nested_scopes() {
    with_layer(LatteLayer::new(), || {
        let span = tracing::info_span!("bridge_twice");
        let outer = span.enter();
        let inner = span.enter();
        drop(inner);
        drop(outer);
    });
    let c = my_component("bridge_twice").unwrap();
    assert_eq!(c.samples.len(), 2);
    assert!(
        c.samples[0].ticks() <= c.samples[1].ticks(),
        "inner closes first"
    );
    assert_eq!(mine().anomalies.total(), 0);
}

#[test]
fn exits_out_of_lifo_order_record_both_spans_and_are_counted() {
    with_layer(LatteLayer::new(), || {
        let a = tracing::info_span!("bridge_a");
        let b = tracing::info_span!("bridge_b");
        let c = tracing::info_span!("bridge_c");
        let ga = a.enter();
        let gb = b.enter();
        let gc = c.enter();
        drop(ga); // a closes while b and c are open: both stay open
        drop(gc);
        drop(gb);
    });
    for id in ["bridge_a", "bridge_b", "bridge_c"] {
        assert_eq!(my_component(id).unwrap().samples.len(), 1, "{id}");
    }
    let t = |id| my_component(id).unwrap().samples[0].ticks();
    // c (entered last, closed before b) lies within b; a overlaps both, contains neither.
    assert!(t("bridge_c") <= t("bridge_b"));
    let a = mine().anomalies;
    assert_eq!(
        (a.unordered_stops, a.orphaned_frames, a.unmatched_stops),
        (1, 0, 0)
    );
}

#[test]
fn spans_deeper_than_the_stack_keep_the_innermost_and_pair_afterwards() {
    with_layer(LatteLayer::new(), || {
        let spans: Vec<tracing::Span> = (0..100)
            .map(|_| tracing::info_span!("bridge_deep"))
            .collect();
        let mut entered: Vec<_> = spans.iter().map(|s| s.enter()).collect();
        while let Some(innermost) = entered.pop() {
            drop(innermost);
        }
        for _ in 0..10 {
            let _e = spans[0].enter();
        }
    });
    // Default depth 64: the 36 outermost were given up, their exits absorbed.
    let deep = my_component("bridge_deep").unwrap();
    assert_eq!(deep.seen, 64 + 10);
    let ticks: Vec<u64> = deep.samples[..64].iter().map(|s| s.ticks()).collect();
    assert!(ticks.windows(2).all(|w| w[0] <= w[1]), "{ticks:?}");
    let me = mine();
    assert_eq!(me.frame_counts("bridge_deep").abandoned, 36);
    assert_eq!(me.anomalies.total(), 36, "{:?}", me.anomalies);
}

#[test]
fn an_abandoned_span_exiting_first_leaves_the_held_ones_paired() {
    with_layer(LatteLayer::new(), || {
        let old = tracing::info_span!("bridge_abandoned");
        let spans: Vec<tracing::Span> = (0..64)
            .map(|_| tracing::info_span!("bridge_held"))
            .collect();
        let old_entered = old.enter();
        // The 64th gives up bridge_abandoned, the oldest frame.
        let mut held: Vec<_> = spans.iter().map(|s| s.enter()).collect();
        drop(old_entered); // out of order, and its frame is gone: forgotten
        while let Some(innermost) = held.pop() {
            drop(innermost);
        }
    });
    let held = my_component("bridge_held").unwrap();
    assert_eq!(held.seen, 64);
    // Each exit closed its own frame (innermost first, so durations grow): the held
    // frames moved down intact when the abandoned one was forgotten.
    let ticks: Vec<u64> = held.samples.iter().map(|s| s.ticks()).collect();
    assert!(ticks.windows(2).all(|w| w[0] <= w[1]), "{ticks:?}");
    assert!(my_component("bridge_abandoned").is_none());
    let me = mine();
    assert_eq!(me.frame_counts("bridge_abandoned").abandoned, 1);
    assert_eq!(me.anomalies.total(), 1, "{:?}", me.anomalies);
}

#[test]
fn a_span_entered_on_several_threads_at_once() {
    let dispatch = tracing::Dispatch::new(tracing_subscriber::registry().with(LatteLayer::new()));
    let span =
        tracing::dispatcher::with_default(&dispatch, || tracing::info_span!("bridge_shared"));
    let barrier = std::sync::Barrier::new(4);
    std::thread::scope(|s| {
        for k in 0..4 {
            let (span, dispatch, barrier) = (&span, &dispatch, &barrier);
            std::thread::Builder::new()
                .name(format!("bridge-{k}"))
                .spawn_scoped(s, move || {
                    tracing::dispatcher::with_default(dispatch, || {
                        barrier.wait(); // all four enter the same span concurrently
                        for _ in 0..100 {
                            let _e = span.enter();
                        }
                    })
                })
                .unwrap();
        }
    });
    let capture = latte::capture();
    for k in 0..4 {
        let t = capture.thread(&format!("bridge-{k}")).unwrap();
        assert_eq!(t.component("bridge_shared").unwrap().samples.len(), 100);
        assert_eq!(t.anomalies.total(), 0);
    }
    drop(span);
}

#[test]
fn lifetime_spans_creation_to_close_and_contains_the_busy_time() {
    with_layer(LatteLayer::new(), || {
        let span = tracing::info_span!("bridge_life");
        for _ in 0..3 {
            let _e = span.enter();
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
        drop(span);
    });
    let busy: u64 = my_component("bridge_life")
        .unwrap()
        .samples
        .iter()
        .map(|s| s.ticks())
        .sum();
    let life = my_component("bridge_life (lifetime)").unwrap();
    assert_eq!(life.samples.len(), 1);
    assert!(life.samples[0].ticks() >= busy);
}

#[test]
fn events_can_be_pulses() {
    with_layer(LatteLayer::new().event_pulses(true), || {
        for i in 0..5 {
            tracing::info!(i, "bridge event");
        }
    });
    let pulses: Vec<_> = mine()
        .components
        .into_iter()
        .filter(|c| {
            c.samples.iter().all(|s| s.kind() == SampleKind::Pulse) && c.name.starts_with("event ")
        })
        .collect();
    assert_eq!(pulses.len(), 1, "one callsite, one component");
    assert_eq!(pulses[0].samples.len(), 4);
}

#[test]
fn a_latte_id_field_names_the_component() {
    static STATIC: latte::Id = latte::Id::new("bridge_named_XNAS");
    with_layer(LatteLayer::new(), || {
        for venue in ["XNAS", "XLON", "XNAS"] {
            let name = format!("bridge_named_{venue}");
            tracing::info_span!("bridge_send", latte.id = name.as_str()).in_scope(|| ());
        }
        let venue = "XLON";
        // A `%` value, entered twice (one lifetime, two busy samples).
        let span =
            tracing::info_span!("bridge_send", latte.id = %format_args!("bridge_named_{venue}"));
        span.in_scope(|| ());
        span.in_scope(|| ());
        // A span of the same callsite without the field keeps its static name.
        tracing::info_span!("bridge_send").in_scope(|| ());
    });
    latte::record(&STATIC, 5); // the same component as the field's text
    assert_eq!(my_component("bridge_named_XNAS").unwrap().samples.len(), 3);
    assert_eq!(my_component("bridge_named_XLON").unwrap().samples.len(), 3);
    assert_eq!(my_component("bridge_send").unwrap().samples.len(), 1);
    let lifetimes = |name: &str| {
        my_component(&format!("{name} (lifetime)"))
            .map(|c| c.samples.len())
            .unwrap_or(0)
    };
    assert_eq!(lifetimes("bridge_named_XNAS"), 2);
    assert_eq!(lifetimes("bridge_named_XLON"), 2);
    assert_eq!(mine().anomalies.total(), 0);
}

/// The registry hands a closed span's id out again (a new generation of the same slot
/// after enough reuses): a span must never record under the component of an earlier
/// span that had its id, on the thread that closed it or on another one.
#[test]
fn span_ids_used_again_never_find_an_earlier_span_s_component() {
    const ROUNDS: usize = 40_000;
    const NAMES: [&str; 3] = ["bridge_reuse_0", "bridge_reuse_1", "bridge_reuse_2"];
    let (to_worker, worker_in) = std::sync::mpsc::channel::<Option<tracing::Span>>();
    let (to_main, main_in) = std::sync::mpsc::channel::<tracing::Span>();
    let dispatch = tracing::Dispatch::new(
        tracing_subscriber::registry().with(LatteLayer::new().span_lifetimes(false)),
    );
    let worker_dispatch = dispatch.clone();
    let worker = std::thread::Builder::new()
        .name("bridge-reuse".into())
        .spawn(move || {
            tracing::dispatcher::with_default(&worker_dispatch, || {
                while let Ok(Some(span)) = worker_in.recv() {
                    span.in_scope(|| ());
                    to_main.send(span).unwrap();
                }
            });
            latte::capture().thread("bridge-reuse").unwrap().clone()
        })
        .unwrap();
    let mut ids = std::collections::HashSet::new();
    tracing::dispatcher::with_default(&dispatch, || {
        for round in 0..ROUNDS {
            let span = match round % 3 {
                0 => tracing::info_span!("bridge_reuse_0"),
                1 => tracing::info_span!("bridge_reuse_1"),
                _ => tracing::info_span!("bridge_reuse_2"),
            };
            ids.insert(span.id().unwrap().into_u64());
            span.in_scope(|| ()); // cached on this thread
            to_worker.send(Some(span)).unwrap(); // and on the worker's
            drop(main_in.recv().unwrap()); // closed here
        }
        to_worker.send(None).unwrap();
    });
    let worker = worker.join().unwrap();
    let per_name = (ROUNDS / 3) as u64 + 1;
    for (k, name) in NAMES.iter().enumerate() {
        let expected = per_name - u64::from(k >= ROUNDS % 3);
        for (thread, capture) in [("main", mine()), ("worker", worker.clone())] {
            let seen = capture.component(name).map_or(0, |c| c.seen);
            assert_eq!(seen, expected, "{name} on {thread}");
        }
    }
    assert!(
        ids.len() < ROUNDS,
        "the registry reused span ids ({} distinct in {ROUNDS} spans)",
        ids.len()
    );
}
