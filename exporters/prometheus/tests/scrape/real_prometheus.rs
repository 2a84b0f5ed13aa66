//! A real Prometheus server scrapes latte's `/metrics` endpoint every second, with its
//! own negotiation (it asks for OpenMetrics first); what it stored (sample counts,
//! `histogram_quantile(0.99, ...)`, the summary's p99, the frame counters) must agree
//! with latte's own report. Needs the `prometheus` binary (Debian's package).

use latte::{Data, Id, ReportOptions, Unit};
use latte_prometheus::Prometheus;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

static FAST: Id = Id::new("fleet_prom_fast");
static SLOW: Id = Id::new("fleet_prom_slow");

/// The Prometheus process and its data directory, removed when the test ends, also on
/// failure.
pub(super) struct Server {
    child: Child,
    dir: PathBuf,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Server {
    /// What Prometheus says of its scrapes: each target's health and last error.
    pub(super) fn targets(&self) -> String {
        let url = format!("http://127.0.0.1:{}/api/v1/targets", self.port);
        let Ok(mut answer) = ureq::get(&url).call() else {
            return "Prometheus does not answer".into();
        };
        let text = answer.body_mut().read_to_string().unwrap_or_default();
        let body: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let targets = body["data"]["activeTargets"].as_array().cloned();
        let lines = targets
            .unwrap_or_default()
            .into_iter()
            .map(|t| format!("{} {} {}", t["scrapeUrl"], t["health"], t["lastError"]));
        lines.collect::<Vec<_>>().join("; ")
    }
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Starts Prometheus scraping `target` every second; `None` (after saying why) if the
/// binary is not installed and not required.
fn start_prometheus(target: &str) -> Option<Server> {
    start_prometheus_with(&[target.to_owned()], &[])
}

/// Starts Prometheus scraping `targets` every second, with the command-line `flags`
/// added (`--enable-feature=native-histograms`); `None` (after saying why) if the
/// binary is not installed and not required.
pub(super) fn start_prometheus_with(targets: &[String], flags: &[&str]) -> Option<Server> {
    if !super::installed("prometheus") {
        return None;
    }
    let targets: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
    let targets = targets.join(", ");
    let port = free_port();
    let dir = std::env::temp_dir().join(format!("latte-prometheus-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: latte\n    static_configs:\n      - targets: [{targets}]\n"
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.join("log")).unwrap();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .args(flags)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    Some(Server { child, dir, port })
}

/// The values of an instant query, by the `component` label.
fn query(prometheus: &Server, promql: &str) -> Vec<(String, f64)> {
    query_by(prometheus, promql, "component")
}

/// The values of an instant query, by the label `by` (empty if the result has none);
/// nothing while Prometheus is not up yet.
pub(super) fn query_by(prometheus: &Server, promql: &str, by: &str) -> Vec<(String, f64)> {
    let url = format!("http://127.0.0.1:{}/api/v1/query", prometheus.port);
    let Ok(mut answer) = ureq::get(&url).query("query", promql).call() else {
        return Vec::new(); // not up yet
    };
    let text = answer.body_mut().read_to_string().unwrap_or_default();
    let body: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let results = body["data"]["result"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    results
        .iter()
        .map(|r| {
            let component = r["metric"][by].as_str().unwrap_or("").to_owned();
            let value = r["value"][1]
                .as_str()
                .unwrap_or("NaN")
                .parse()
                .unwrap_or(f64::NAN);
            (component, value)
        })
        .collect()
}

/// Waits (with a deadline) until `promql` gives `want` for `component`.
fn wait_for(prometheus: &Server, promql: &str, component: &str, want: f64) -> f64 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let got = query(prometheus, promql)
            .into_iter()
            .find(|(c, _)| c == component)
            .map(|(_, v)| v);
        if got == Some(want) || Instant::now() > deadline {
            return got.unwrap_or(f64::NAN);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Log-spaced bounds, 25 % apart, from 10 ns to ~100 us.
fn bounds() -> Vec<Duration> {
    let mut bounds = vec![10.0f64];
    while *bounds.last().unwrap() < 100_000.0 {
        bounds.push(bounds.last().unwrap() * 1.25);
    }
    bounds
        .iter()
        .map(|ns| Duration::from_nanos(*ns as u64))
        .collect()
}

#[test]
fn prometheus_stores_what_latte_reports() {
    let _turn = super::agent_turn();
    let endpoint = Prometheus::bind("127.0.0.1:0").unwrap().buckets(bounds());
    let (guard, addr) = super::serve(endpoint, |b| b.unit(Unit::Time).data(Data::Raw));
    let target = addr.to_string();
    let Some(prometheus) = start_prometheus(&target) else {
        return;
    };
    for i in 0..20_000u64 {
        latte::record(&FAST, 100 + i % 1_000); // ticks
    }
    for i in 0..3_000u64 {
        latte::record(&SLOW, 20_000 + (i * 37) % 50_000);
    }
    let report = latte::Report::collect(&ReportOptions {
        unit: Unit::Time,
        data: Data::Raw,
        ..ReportOptions::default()
    });
    let bounds_s: Vec<f64> = bounds().iter().map(Duration::as_secs_f64).collect();
    for (id, n) in [(&FAST, 20_000), (&SLOW, 3_000)] {
        let name = id.name();
        let row = report
            .all_threads
            .iter()
            .find(|r| r.component == name)
            .unwrap();
        assert_eq!(row.stats.samples, n, "{name}: latte's own count");
        let count = format!("latte_latency_seconds_count{{component=\"{name}\"}}");
        let stored = wait_for(&prometheus, &count, name, n as f64);
        assert_eq!(
            stored, n as f64,
            "{name}: the sample count Prometheus stored"
        );
        let seen = format!("latte_samples_seen_total{{component=\"{name}\"}}");
        assert_eq!(
            wait_for(&prometheus, &seen, name, n as f64),
            row.stats.seen as f64
        );

        check_p99(&prometheus, name, row.stats.p99 * 1e-9, &bounds_s);
    }
    guard.stop().unwrap();
}

/// The summary's p99 is latte's `p99` (seconds), and `histogram_quantile` is within the
/// bucket that holds it.
fn check_p99(prometheus: &Server, name: &str, p99: f64, bounds_s: &[f64]) {
    let promql =
        format!("histogram_quantile(0.99, latte_latency_seconds_bucket{{component=\"{name}\"}})");
    let estimate = query(prometheus, &promql)[0].1;
    // The summary's p99 is latte's own, exactly (seconds, as Prometheus parsed it).
    let summary =
        format!("latte_latency_quantile_seconds{{component=\"{name}\",quantile=\"0.99\"}}");
    let stored_p99 = query(prometheus, &summary)
        .first()
        .map_or(f64::NAN, |r| r.1);
    assert!(
        (stored_p99 - p99).abs() <= p99 * 1e-9,
        "{name}: the summary's p99 {stored_p99} vs latte's {p99}"
    );
    // The bucket holding latte's p99 bounds Prometheus's estimate.
    let i = bounds_s.partition_point(|b| *b < p99);
    let (low, high) = (bounds_s[i.saturating_sub(1)], bounds_s[i]);
    eprintln!(
        "{name}: latte p99 {p99:.3e} s, Prometheus {estimate:.3e} s, bucket ({low:.3e}, {high:.3e}]"
    );
    assert!(
        (estimate - p99).abs() <= high - low,
        "{name}: histogram_quantile {estimate} vs latte's p99 {p99}: more than the bucket width {} apart",
        high - low
    );
}

/// A thread's frames, `slow` of them spinning `spin` inside a scope.
fn mark_frames(thread: &str, frames: u64, slow: &[u64], spin: Duration) {
    static WORK: Id = Id::new("fleet_prom_frame_work");
    let slow = slow.to_vec();
    std::thread::Builder::new()
        .name(thread.to_owned())
        .spawn(move || {
            latte::latte_frame!();
            for k in 1..=frames {
                let _work = latte::scope(&WORK, latte::Mode::Fast, latte::Mode::Fast);
                let began = Instant::now();
                while slow.contains(&k) && began.elapsed() < spin {
                    std::hint::spin_loop();
                }
                drop(_work);
                latte::latte_frame!();
            }
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn prometheus_stores_the_frame_counters() {
    let _turn = super::agent_turn();
    // With the thread label: the counters of this test's thread alone.
    let endpoint = Prometheus::bind("127.0.0.1:0").unwrap().thread_label(true);
    let budget = Duration::from_millis(10);
    let (guard, addr) = super::serve(endpoint, |b| b.frame_budget(budget));
    let Some(prometheus) = start_prometheus(&addr.to_string()) else {
        return;
    };
    mark_frames("prom-frames", 20, &[5, 12], Duration::from_millis(30));
    let report = latte::Report::collect(&ReportOptions {
        frame_budget: Some(budget),
        ..ReportOptions::default()
    });
    let thread = report.threads.iter().find(|t| t.name == "prom-frames");
    let frames = thread.and_then(|t| t.per_frame.clone()).expect("frames");
    let over = frames.over_budget.unwrap();
    assert!(over >= 2, "the two slow frames, at least: {over}");
    let stored = |metric: &str, want: u64| {
        let promql = format!("{metric}{{thread=\"prom-frames\"}}");
        wait_for(&prometheus, &promql, "", want as f64)
    };
    assert_eq!(stored("latte_frames_total", 20), 20.0);
    assert_eq!(stored("latte_frames_over_budget_total", over), over as f64);
    guard.stop().unwrap();
}
