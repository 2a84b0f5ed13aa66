//! Own binary: it installs the global `tracing` subscriber, which cannot be taken back.
//!
//! Instrumented futures on a multi-threaded tokio runtime: one busy sample per span,
//! the sum of its polls wherever they ran; with per-poll samples on, one per poll;
//! one lifetime per future; no anomaly on any worker.

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
    let layer = LatteLayer::new().per_poll(true).span_lifetimes(true);
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer)).unwrap();
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
    let samples = |id: &str| -> Vec<u64> {
        capture
            .threads
            .iter()
            .filter_map(|t| t.component(id))
            .flat_map(|c| c.samples.iter().map(|s| s.ticks()))
            .collect()
    };
    for span in ["tokio_task", "tokio_outer"] {
        // One busy sample per span, on whichever worker closed it.
        let busy = samples(span);
        assert_eq!(busy.len(), TASKS, "{span}");
        // Each task is polled YIELDS + 1 times, plus the enter tracing makes when it
        // drops the inner future in its span: one per-poll sample each.
        let polls = samples(&format!("{span} (poll)"));
        assert_eq!(polls.len(), TASKS * (YIELDS + 2), "{span}");
        // The busy totals add up exactly the per-poll ticks, across the workers.
        let sum = |v: &[u64]| v.iter().sum::<u64>();
        assert_eq!(sum(&busy), sum(&polls), "{span}");
        assert_eq!(samples(&format!("{span} (lifetime)")).len(), TASKS);
    }
    for t in &capture.threads {
        assert_eq!(t.anomalies.total(), 0, "{}: {:?}", t.name, t.anomalies);
    }
}
