//! A [`MetricSet`] in Prometheus's two text formats: the classic one
//! (`text/plain; version=0.0.4`, what `promtool check metrics` reads), served unless
//! the scraper's `Accept` asks for OpenMetrics, and OpenMetrics 1.0
//! (`application/openmetrics-text`), which Prometheus asks for first.
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `latte_latency_seconds` | histogram | component (, thread, thread_serial) |
//! | `latte_latency_quantile_seconds` | summary: p50, p99, p99.9, `_sum`, `_count` | component, quantile (, thread, thread_serial) |
//! | `latte_samples_seen_total`, `latte_samples_lost_total` | counter | component (, thread, thread_serial) |
//! | `latte_samples_bypass`, `latte_samples_outliers` | gauge | component (, thread, thread_serial) |
//! | `latte_anomalies_total` | counter | kind (, thread, thread_serial) |
//! | `latte_clock_info` | info (OpenMetrics), gauge of 1 (classic) | clock, frequency_hz, hypervisor |
//!
//! The formats differ in a few rules, all here: a counter's `HELP` and `TYPE` name
//! it with its `_total` suffix in the classic format and without it in OpenMetrics;
//! only OpenMetrics has `# UNIT`, the `info` type and the closing `# EOF`, and escapes
//! `"` in help text. Why latte writes them itself rather than with
//! `prometheus-client`: docs/design.md ("Exporters").

use latte::exporter::{Frames, MetricSet, QUANTILES, Series, Thread};
use std::fmt::Write as _;

/// Which text format a scrape gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// `text/plain; version=0.0.4`.
    Classic,
    /// `application/openmetrics-text; version=1.0.0`.
    OpenMetrics,
}

impl Format {
    /// The format an `Accept` header asks for: OpenMetrics if it names
    /// `application/openmetrics-text` with a weight above zero and at least that of
    /// `text/plain`; the classic format otherwise (no header, `*/*`, `text/plain`).
    pub(crate) fn negotiate(accept: Option<&str>) -> Format {
        let (mut open_metrics, mut plain) = (0.0f64, 0.0f64);
        for range in accept.unwrap_or("").split(',') {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or("").to_ascii_lowercase();
            let weight = parts
                .filter_map(|p| p.strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f64>().ok())
                .unwrap_or(1.0);
            match media.as_str() {
                "application/openmetrics-text" => open_metrics = open_metrics.max(weight),
                "text/plain" => plain = plain.max(weight),
                _ => {}
            }
        }
        if open_metrics > 0.0 && open_metrics >= plain {
            Format::OpenMetrics
        } else {
            Format::Classic
        }
    }

    /// The answer's `Content-Type`.
    pub(crate) fn content_type(self) -> &'static str {
        match self {
            Format::Classic => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// A metric family's type.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
    Summary,
    Info,
}

/// The text of one scrape.
struct Text {
    out: String,
    format: Format,
}

/// A series' labels: component, then the thread's if there is one.
fn labels(s: &Series) -> Vec<(&'static str, &str)> {
    let mut labels = vec![("component", s.component.as_str())];
    labels.extend(s.thread.iter().flat_map(Thread::labels));
    labels
}

/// A number as Prometheus reads it: `+Inf`, `-Inf`, `NaN`, else the shortest text
/// that reads back the same (`dtoa`: `1e-8`, `0.000001`, `1.0`).
fn number(v: f64) -> String {
    match v {
        f64::INFINITY => "+Inf".into(),
        f64::NEG_INFINITY => "-Inf".into(),
        v if v.is_nan() => "NaN".into(),
        v => dtoa::Buffer::new().format_finite(v).to_owned(),
    }
}

/// `text` with `\`, a line feed and (if `quote`) `"` escaped by a backslash.
fn escape(text: &str, quote: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '"' if quote => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out
}

impl Text {
    /// A family's `HELP`, `TYPE` and (OpenMetrics) `UNIT` lines. `name` is the
    /// family's name as OpenMetrics gives it (without a counter's `_total`, an info's
    /// `_info`).
    fn family(&mut self, name: &str, kind: Kind, unit: Option<&str>, help: &str) {
        let open = self.format == Format::OpenMetrics;
        let (name, kind) = match (kind, open) {
            (Kind::Counter, false) => (format!("{name}_total"), "counter"),
            (Kind::Info, false) => (format!("{name}_info"), "gauge"),
            (Kind::Counter, true) => (name.to_owned(), "counter"),
            (Kind::Info, true) => (name.to_owned(), "info"),
            (Kind::Gauge, _) => (name.to_owned(), "gauge"),
            (Kind::Histogram, _) => (name.to_owned(), "histogram"),
            (Kind::Summary, _) => (name.to_owned(), "summary"),
        };
        let help = escape(help, open);
        let _ = writeln!(self.out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        if let (Some(unit), true) = (unit, open) {
            let _ = writeln!(self.out, "# UNIT {name} {unit}");
        }
    }

    /// One sample line.
    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: &str) {
        self.out.push_str(name);
        for (i, (key, v)) in labels.iter().enumerate() {
            let open = if i == 0 { '{' } else { ',' };
            let _ = write!(self.out, "{open}{key}=\"{}\"", escape(v, true));
        }
        if !labels.is_empty() {
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {value}");
    }

    fn histograms(&mut self, set: &MetricSet) {
        let name = "latte_latency_seconds";
        let help = "Latency of each component over the whole run (every folded sample).";
        self.family(name, Kind::Histogram, Some("seconds"), help);
        for s in &set.series {
            let labels = labels(s);
            let bounds = set.bounds.iter().copied().chain([f64::INFINITY]);
            let mut cumulative = 0;
            for (bound, count) in bounds.zip(&s.buckets) {
                cumulative += count;
                let le = number(bound);
                let mut with_le = labels.clone();
                with_le.push(("le", &le));
                self.sample(&format!("{name}_bucket"), &with_le, &cumulative.to_string());
            }
            self.sample(&format!("{name}_sum"), &labels, &number(s.sum));
            self.sample(&format!("{name}_count"), &labels, &s.count.to_string());
        }
    }

    fn quantiles(&mut self, set: &MetricSet) {
        let name = "latte_latency_quantile_seconds";
        let help = "Whole-run quantiles of each component's latency (exact ranks over every \
                    folded sample); _sum and _count as the histogram's.";
        self.family(name, Kind::Summary, Some("seconds"), help);
        for s in &set.series {
            let labels = labels(s);
            for (q, value) in QUANTILES.iter().zip(s.quantiles) {
                let q = q.to_string();
                let mut with_q = labels.clone();
                with_q.push(("quantile", &q));
                self.sample(name, &with_q, &number(value));
            }
            self.sample(&format!("{name}_sum"), &labels, &number(s.sum));
            self.sample(&format!("{name}_count"), &labels, &s.count.to_string());
        }
    }

    /// Sample counts: counters for what only grows, gauges for what cleaning may lower
    /// again.
    fn counts(&mut self, set: &MetricSet) {
        type Pick = fn(&Series) -> u64;
        let counts: [(&str, &str, Kind, Pick); 4] = [
            (
                "latte_samples_seen",
                "Samples recorded (folded or lost).",
                Kind::Counter,
                |s| s.seen,
            ),
            (
                "latte_samples_lost",
                "Samples overwritten in their ring before latte read them.",
                Kind::Counter,
                |s| s.lost,
            ),
            (
                "latte_samples_bypass",
                "Samples the cleaning rule flags as OS preemption (BYPASS); they stay in every figure.",
                Kind::Gauge,
                |s| s.bypass,
            ),
            (
                "latte_samples_outliers",
                "Samples the cleaning rule flags as outliers (IQR fences); they stay in every figure.",
                Kind::Gauge,
                |s| s.outliers,
            ),
        ];
        for (name, help, kind, pick) in counts {
            self.family(name, kind, None, help);
            let sample = match kind {
                Kind::Counter => format!("{name}_total"),
                _ => name.to_owned(),
            };
            for s in &set.series {
                self.sample(&sample, &labels(s), &pick(s).to_string());
            }
        }
    }

    fn anomalies(&mut self, set: &MetricSet) {
        let help = "Misuse and clock anomalies latte counted, by kind.";
        self.family("latte_anomalies", Kind::Counter, None, help);
        for a in &set.anomalies {
            let mut labels = vec![("kind", a.kind)];
            labels.extend(a.thread.iter().flat_map(Thread::labels));
            self.sample("latte_anomalies_total", &labels, &a.count.to_string());
        }
    }

    fn frames(&mut self, set: &MetricSet) {
        if set.frames.is_empty() {
            return;
        }
        for counter in &Frames::COUNTERS {
            let name = format!("latte_{}", counter.words.join("_"));
            self.family(&name, Kind::Counter, None, counter.help);
            for f in &set.frames {
                let labels: Vec<(&str, &str)> = f.thread.iter().flat_map(Thread::labels).collect();
                let value = (counter.value)(f).to_string();
                self.sample(&format!("{name}_total"), &labels, &value);
            }
        }
    }

    fn clock(&mut self, set: &MetricSet) {
        let help =
            "The clock latte reads, its calibrated frequency, and whether a hypervisor runs.";
        self.family("latte_clock", Kind::Info, None, help);
        let frequency = format!("{:.0}", set.frequency_hz);
        let labels = [
            ("clock", set.clock.as_str()),
            ("frequency_hz", frequency.as_str()),
            ("hypervisor", set.hypervisor),
        ];
        self.sample("latte_clock_info", &labels, "1");
    }
}

/// The metric set as the text of one scrape in `format`.
pub(crate) fn encode(set: &MetricSet, format: Format) -> String {
    let mut text = Text {
        out: String::new(),
        format,
    };
    text.histograms(set);
    text.quantiles(set);
    text.counts(set);
    text.anomalies(set);
    text.frames(set);
    text.clock(set);
    if format == Format::OpenMetrics {
        text.out.push_str("# EOF\n");
    }
    text.out
}

#[cfg(test)]
mod tests {
    use super::*;
    use latte::exporter::Anomaly;

    fn set() -> MetricSet {
        let mut set = MetricSet::default();
        set.clock = "TSC".into();
        set.frequency_hz = 2.6e9;
        set.hypervisor = "yes";
        set.bounds = vec![1e-6, 1e-3];
        set.series = vec![Series {
            component: "say \"hi\"".into(),
            buckets: vec![2, 3, 1],
            count: 6,
            sum: 0.5,
            quantiles: [1e-6, 2e-3, 0.25],
            seen: 7,
            lost: 1,
            ..Series::default()
        }];
        set.anomalies = vec![Anomaly {
            thread: None,
            kind: "clock_backwards",
            count: 4,
        }];
        set
    }

    #[test]
    fn the_text_has_cumulative_buckets_counters_and_info() {
        let text = encode(&set(), Format::OpenMetrics);
        let has = |line: &str| assert!(text.contains(&format!("{line}\n")), "{line}:\n{text}");
        has(r#"latte_latency_seconds_bucket{component="say \"hi\"",le="0.001"} 5"#);
        has(r#"latte_latency_seconds_bucket{component="say \"hi\"",le="+Inf"} 6"#);
        has(r#"latte_latency_seconds_count{component="say \"hi\""} 6"#);
        has("# TYPE latte_samples_seen counter");
        has(r#"latte_samples_seen_total{component="say \"hi\""} 7"#);
        has(r#"latte_anomalies_total{kind="clock_backwards"} 4"#);
        has("# TYPE latte_clock info");
        has(r#"latte_clock_info{clock="TSC",frequency_hz="2600000000",hypervisor="yes"} 1"#);
        has("# UNIT latte_latency_quantile_seconds seconds");
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn the_classic_text_names_counters_by_total_and_has_a_summary_and_no_info() {
        let text = encode(&set(), Format::Classic);
        let has = |line: &str| assert!(text.contains(&format!("{line}\n")), "{line}:\n{text}");
        has("# HELP latte_samples_seen_total Samples recorded (folded or lost).");
        has("# TYPE latte_samples_seen_total counter");
        has("# TYPE latte_anomalies_total counter");
        has("# TYPE latte_latency_quantile_seconds summary");
        has(r#"latte_latency_quantile_seconds{component="say \"hi\"",quantile="0.99"} 0.002"#);
        has(r#"latte_latency_quantile_seconds_sum{component="say \"hi\""} 0.5"#);
        has(r#"latte_latency_quantile_seconds_count{component="say \"hi\""} 6"#);
        has("# TYPE latte_clock_info gauge");
        assert!(!text.contains("# UNIT") && !text.contains("# EOF") && !text.contains(" info\n"));
    }

    #[test]
    fn accept_chooses_openmetrics_only_when_asked() {
        // What Prometheus 2.x sends.
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
                          version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(Format::negotiate(Some(prometheus)), Format::OpenMetrics);
        for classic in [
            None,
            Some("*/*"),
            Some("text/plain;version=0.0.4"),
            Some("text/plain, application/openmetrics-text;q=0.5"),
            Some("application/openmetrics-text;q=0"),
        ] {
            assert_eq!(Format::negotiate(classic), Format::Classic, "{classic:?}");
        }
        assert_eq!(
            Format::negotiate(Some("Application/OpenMetrics-Text; version=1.0.0")),
            Format::OpenMetrics
        );
    }

    #[test]
    fn help_and_label_values_are_escaped_as_each_format_wants() {
        assert_eq!(escape("a\\b\n\"c\"", true), "a\\\\b\\n\\\"c\\\"");
        assert_eq!(escape("a\\b\n\"c\"", false), "a\\\\b\\n\"c\"");
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(1e-8), "1e-8");
        assert_eq!(number(1.0), "1.0");
    }

    #[test]
    fn frames_are_counters_per_thread_and_absent_without_frames() {
        let mut set = set();
        assert!(!encode(&set, Format::Classic).contains("latte_frames"));
        set.frames = vec![Frames {
            thread: Some(Thread {
                name: "main".into(),
                serial: "1".into(),
            }),
            frames: 600,
            over_budget: 4,
        }];
        for format in [Format::Classic, Format::OpenMetrics] {
            let text = encode(&set, format);
            assert!(text.contains("# TYPE latte_frames_over_budget"), "{text}");
            assert!(
                text.contains(r#"latte_frames_total{thread="main",thread_serial="1"} 600"#),
                "{text}"
            );
            assert!(
                text.contains(
                    r#"latte_frames_over_budget_total{thread="main",thread_serial="1"} 4"#
                ),
                "{text}"
            );
        }
    }
}
