//! What a fleet's merged distribution is worth: 4 processes record known, different
//! latency distributions and push them to one collector (OTLP/HTTP, decoded with
//! `opentelemetry-proto`), once as exponential histograms and once over the classic
//! explicit buckets. Merged as a backend merges them, the exponential histograms' p50,
//! p99 and p99.9 are within 1% of the exact quantiles of all the samples together;
//! the same for the classic buckets (read as `histogram_quantile` reads them) is
//! printed, to show what they lose.
//!
//! `cargo test -p latte-telemetry-otlp --test push fidelity -- --nocapture` prints the
//! table (docs/fleet.md quotes it). The processes are this test binary run again with
//! `LATTE_FIDELITY_CHILD` set.

use crossbeam_channel::{Receiver, unbounded};
use latte::Id;
use latte::exporter::Exponential;
use latte_otlp::{Histograms, Otlp};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::metrics::v1::metric::Data as MetricData;
use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

static WAIT: Id = Id::new("fidelity_wait");

/// Samples per process.
const SAMPLES: usize = 40_000;
/// Each process's values, log-uniform from the first bound to the second (seconds):
/// a fast path, a slower one, a wide one and one with a long tail.
const RANGES: [(f64, f64); 4] = [
    (10e-6, 40e-6),
    (30e-6, 200e-6),
    (100e-6, 2e-3),
    (5e-6, 50e-3),
];

/// Process `k`'s values in seconds, before they become counter ticks.
fn values(k: usize) -> impl Iterator<Item = f64> {
    let (lo, hi) = RANGES[k];
    (0..SAMPLES).map(move |i| lo * (hi / lo).powf((i as f64 + 0.5) / SAMPLES as f64))
}

/// A value in seconds as the counter ticks a process of `hz` records for it.
fn ticks(seconds: f64, hz: f64) -> u64 {
    (seconds * hz).round() as u64
}

/// The child: records its values and pushes them to the two URLs given, exponential
/// to the first, explicit to the second; the final push at stop has them all.
fn child(k: usize, exponential: &str, explicit: &str) {
    let hz = latte::analyze::calibration().ticks_per_ns * 1e9;
    for v in values(k) {
        latte::record(&WAIT, ticks(v, hz));
    }
    let interval = Duration::from_secs(3_600); // only the final push
    let guard = latte::builder()
        .exporter(Otlp::new(exponential, interval))
        .exporter(Otlp::new(explicit, interval).histograms(Histograms::Explicit))
        .final_report(false)
        .sink(std::io::sink())
        .start()
        .unwrap();
    guard.stop().unwrap();
}

/// A collector on 127.0.0.1 answering 200 to every POST, handing over the decoded
/// bodies (`decoding`'s, the path left out).
fn collector() -> (String, Receiver<ExportMetricsServiceRequest>) {
    let (url, pushed) = super::decoding::collector(Duration::ZERO);
    let (tx, rx) = unbounded();
    std::thread::spawn(move || {
        for (_, decoded) in pushed {
            if let Ok(request) = decoded {
                let _ = tx.send(request);
            }
        }
    });
    (url, rx)
}

/// A resource attribute of the push.
fn resource(request: &ExportMetricsServiceRequest, key: &str) -> AnyValue {
    let resource = request.resource_metrics[0].resource.as_ref().unwrap();
    let kv = resource.attributes.iter().find(|kv| kv.key == key).unwrap();
    kv.value.clone().unwrap().value.unwrap()
}

/// What one process pushed: its counter frequency, and `fidelity_wait`'s histogram.
enum Pushed {
    Exponential(f64, Exponential),
    Explicit(Vec<f64>, Vec<u64>),
}

fn pushed(request: &ExportMetricsServiceRequest) -> Option<(i64, Pushed)> {
    let pid: i64 = match resource(request, "process.pid") {
        AnyValue::StringValue(pid) => pid.parse().ok()?,
        AnyValue::IntValue(pid) => pid,
        _ => return None,
    };
    let hz = match resource(request, "latte.clock.frequency_hz") {
        AnyValue::DoubleValue(hz) => hz,
        AnyValue::StringValue(hz) => hz.parse().unwrap(),
        other => panic!("frequency {other:?}"),
    };
    let scope = &request.resource_metrics[0].scope_metrics[0];
    let latency = scope.metrics.iter().find(|m| m.name == "latte.latency")?;
    let mine = |attributes: &[opentelemetry_proto::tonic::common::v1::KeyValue]| {
        attributes.iter().any(|kv| {
            kv.key == "component"
                && kv.value.as_ref().and_then(|v| v.value.as_ref())
                    == Some(&AnyValue::StringValue("fidelity_wait".into()))
        })
    };
    let histogram = match latency.data.as_ref()? {
        MetricData::ExponentialHistogram(h) => {
            let p = h.data_points.iter().find(|p| mine(&p.attributes))?;
            let positive = p.positive.clone().unwrap_or_default();
            Pushed::Exponential(
                hz,
                Exponential {
                    scale: p.scale,
                    zero_count: p.zero_count,
                    offset: positive.offset,
                    counts: positive.bucket_counts,
                },
            )
        }
        MetricData::Histogram(h) => {
            let p = h.data_points.iter().find(|p| mine(&p.attributes))?;
            Pushed::Explicit(p.explicit_bounds.clone(), p.bucket_counts.clone())
        }
        _ => return None,
    };
    Some((pid, histogram))
}

/// The `q`-quantile of explicit buckets summed over processes, as Prometheus's
/// `histogram_quantile` reads classic buckets: linear within the bucket holding the
/// rank, the first bucket from 0, the last (`+Inf`) at the highest bound.
fn classic_quantile(bounds: &[f64], counts: &[u64], q: f64) -> f64 {
    let total: u64 = counts.iter().sum();
    let rank = q * total as f64;
    let mut below = 0.0;
    for (i, &c) in counts.iter().enumerate() {
        let above = below + c as f64;
        if above >= rank && c > 0 {
            let Some(&high) = bounds.get(i) else {
                return *bounds.last().unwrap();
            };
            let low = if i == 0 { 0.0 } else { bounds[i - 1] };
            return low + (high - low) * (rank - below) / c as f64;
        }
        below = above;
    }
    *bounds.last().unwrap()
}

/// Runs the 4 processes, pushing to the two URLs; returns their pids.
fn run_children(exponential_url: &str, explicit_url: &str) -> Vec<i64> {
    let me = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..RANGES.len())
        .map(|k| {
            Command::new(&me)
                .args([
                    "--exact",
                    "fidelity::four_processes_merge_within_one_percent_of_the_exact_quantiles",
                ])
                .env("LATTE_FIDELITY_CHILD", k.to_string())
                .env(
                    "LATTE_FIDELITY_URLS",
                    format!("{exponential_url} {explicit_url}"),
                )
                .spawn()
                .unwrap()
        })
        .collect();
    let pids = children.iter().map(|c| i64::from(c.id())).collect();
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a child failed");
    }
    pids
}

/// Each process's last push of each kind (its final state), by (pid, exponential).
fn last_pushes(
    exponential: &Receiver<ExportMetricsServiceRequest>,
    explicit: &Receiver<ExportMetricsServiceRequest>,
    processes: usize,
) -> BTreeMap<(i64, bool), Pushed> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut last = BTreeMap::new();
    while last.len() < 2 * processes {
        let timeout = deadline.saturating_duration_since(Instant::now());
        let request = crossbeam_channel::select! {
            recv(exponential) -> r => r.unwrap(),
            recv(explicit) -> r => r.unwrap(),
            default(timeout) => panic!("only {} of {} pushes came", last.len(), 2 * processes),
        };
        if let Some((pid, histogram)) = pushed(&request) {
            let is_exponential = matches!(histogram, Pushed::Exponential(..));
            last.insert((pid, is_exponential), histogram);
        }
    }
    last
}

#[test]
fn four_processes_merge_within_one_percent_of_the_exact_quantiles() {
    if let Ok(k) = std::env::var("LATTE_FIDELITY_CHILD") {
        let urls = std::env::var("LATTE_FIDELITY_URLS").unwrap();
        let (exponential, explicit) = urls.split_once(' ').unwrap();
        child(k.parse().unwrap(), exponential, explicit);
        return;
    }
    let (exponential_url, exponential) = collector();
    let (explicit_url, explicit) = collector();
    let pids = run_children(&exponential_url, &explicit_url);
    let last = last_pushes(&exponential, &explicit, pids.len());

    // The exact quantiles of every sample of the four, as each process recorded them;
    // the exponential histograms merged; the classic buckets summed.
    let mut exact: Vec<f64> = Vec::with_capacity(SAMPLES * RANGES.len());
    let mut merged: Option<Exponential> = None;
    let (mut bounds, mut classic) = (Vec::new(), Vec::<u64>::new());
    for (k, pid) in pids.iter().enumerate() {
        let Some(Pushed::Exponential(hz, e)) = last.get(&(*pid, true)) else {
            panic!("no exponential push of process {k}");
        };
        exact.extend(values(k).map(|v| ticks(v, *hz) as f64 / hz));
        assert_eq!(e.count(), SAMPLES as u64, "process {k} pushed every sample");
        match &mut merged {
            Some(m) => m.merge(e),
            None => merged = Some(e.clone()),
        }
        let Some(Pushed::Explicit(b, c)) = last.get(&(*pid, false)) else {
            panic!("no explicit push of process {k}");
        };
        bounds.clone_from(b);
        classic.resize(c.len(), 0);
        classic.iter_mut().zip(c).for_each(|(sum, n)| *sum += n);
    }
    let merged = merged.unwrap();
    exact.sort_by(f64::total_cmp);
    println!(
        "4 processes x {SAMPLES} samples, merged: scale {} ({} buckets); explicit: {} bounds",
        merged.scale,
        merged.counts.len(),
        bounds.len()
    );
    println!("quantile  exact        exponential  error     classic      error");
    for q in [0.5, 0.99, 0.999] {
        let truth = exact[latte::report::rank(q, exact.len() as u64) as usize - 1];
        let e = merged.quantile(q);
        let c = classic_quantile(&bounds, &classic, q);
        let (e_err, c_err) = (e / truth - 1.0, c / truth - 1.0);
        println!(
            "p{:<7} {:>9.3} us {:>9.3} us {:>+8.3}%  {:>9.3} us {:>+8.2}%",
            q * 100.0,
            truth * 1e6,
            e * 1e6,
            e_err * 100.0,
            c * 1e6,
            c_err * 100.0
        );
        assert!(
            e_err.abs() < 0.01,
            "p{q}: exponential {e} against exact {truth}"
        );
    }
}
