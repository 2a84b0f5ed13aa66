//! Instrumented futures on a multi-threaded tokio runtime: one busy sample per poll,
//! one lifetime per future, no anomaly on any worker. Own binary: it installs the
//! global subscriber.

use latte::tracing::LatteLayer;
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;

const TASKS: usize = 100;
const YIELDS: usize = 3;

#[tracing::instrument]
async fn tokio_task(i: usize) -> usize {
    for _ in 0..YIELDS {
        tokio::task::yield_now().await; // Pending once: one more poll, maybe elsewhere
    }
    i
}

#[test]
fn instrumented_futures_on_four_workers() {
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(LatteLayer::new()))
        .unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .thread_name("tokio-worker")
        .build()
        .unwrap();
    runtime.block_on(async {
        let tasks: Vec<_> = (0..TASKS)
            .map(|i| tokio::spawn(tokio_task(i).instrument(tracing::info_span!("tokio_outer"))))
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    drop(runtime);
    let capture = latte::capture();
    let total = |id: &str| -> usize {
        capture
            .threads
            .iter()
            .filter_map(|t| t.component(id))
            .map(|c| c.samples.len())
            .sum()
    };
    // Each task is polled YIELDS + 1 times: one busy sample per poll, per span, plus
    // one for the enter tracing makes when it drops the inner future in its span.
    assert_eq!(total("tokio_task"), TASKS * (YIELDS + 2));
    assert_eq!(total("tokio_outer"), TASKS * (YIELDS + 2));
    assert_eq!(total("tokio_task (lifetime)"), TASKS);
    assert_eq!(total("tokio_outer (lifetime)"), TASKS);
    for t in &capture.threads {
        assert_eq!(t.anomalies.total(), 0, "{}: {:?}", t.name, t.anomalies);
    }
}
