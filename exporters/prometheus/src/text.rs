//! Metric families in Prometheus's two text formats: the classic one
//! (`text/plain; version=0.0.4`, what `promtool check metrics` reads) and OpenMetrics
//! 1.0 (`application/openmetrics-text`). Which one a scrape gets:
//! [`Format`](super::format::Format).
//!
//! The formats differ in a few rules, all here: a counter's `HELP` and `TYPE` name
//! it with its `_total` suffix in the classic format and without it in OpenMetrics;
//! only OpenMetrics has `# UNIT`, the `info` type and the closing `# EOF`, and escapes
//! `"` in help text. Why latte writes them itself rather than with
//! `prometheus-client`: docs/design.md ("Exporters").

use crate::families::{Family, Kind, Value};
use latte::exporter::QUANTILES;
use std::fmt::Write as _;

/// The text of one scrape.
struct Text {
    out: String,
    open_metrics: bool,
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
    /// A family's `HELP`, `TYPE` and (OpenMetrics) `UNIT` lines.
    fn header(&mut self, family: &Family) {
        let open = self.open_metrics;
        let name = if open {
            family.name.clone()
        } else {
            family.classic_name()
        };
        let kind = match (family.kind, open) {
            (Kind::Counter, _) => "counter",
            (Kind::Gauge, _) | (Kind::Info, false) => "gauge",
            (Kind::Info, true) => "info",
            (Kind::Histogram, _) => "histogram",
            (Kind::Summary, _) => "summary",
        };
        let help = escape(family.help, open);
        let _ = writeln!(self.out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        if let (Some(unit), true) = (family.unit, open) {
            let _ = writeln!(self.out, "# UNIT {name} {unit}");
        }
    }

    /// One sample line: `name{labels} value`, with `extra` labels after the series'.
    fn sample(
        &mut self,
        name: &str,
        labels: &[(&str, String)],
        extra: &[(&str, &str)],
        value: &str,
    ) {
        self.out.push_str(name);
        let all = labels
            .iter()
            .map(|(k, v)| (*k, v.as_str()))
            .chain(extra.iter().copied());
        for (i, (key, v)) in all.enumerate() {
            let open = if i == 0 { '{' } else { ',' };
            let _ = write!(self.out, "{open}{key}=\"{}\"", escape(v, true));
        }
        if !labels.is_empty() || !extra.is_empty() {
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {value}");
    }

    /// A family's header and sample lines.
    fn family(&mut self, family: &Family) {
        self.header(family);
        let name = family.classic_name();
        for metric in &family.metrics {
            let labels = &metric.labels;
            match metric.value {
                Value::Count(n) => self.sample(&name, labels, &[], &n.to_string()),
                Value::Info => self.sample(&name, labels, &[], "1"),
                Value::Histogram(s, bounds) => {
                    let bounds = bounds.iter().copied().chain([f64::INFINITY]);
                    let mut cumulative = 0;
                    for (bound, count) in bounds.zip(&s.buckets) {
                        cumulative += count;
                        let (bucket, le) = (format!("{name}_bucket"), number(bound));
                        self.sample(&bucket, labels, &[("le", &le)], &cumulative.to_string());
                    }
                    self.totals(&name, labels, s.sum, s.count);
                }
                Value::Summary(s) => {
                    for (q, value) in QUANTILES.iter().zip(s.quantiles) {
                        let q = q.to_string();
                        self.sample(&name, labels, &[("quantile", &q)], &number(value));
                    }
                    self.totals(&name, labels, s.sum, s.count);
                }
            }
        }
    }

    /// A histogram's or a summary's `_sum` and `_count`.
    fn totals(&mut self, name: &str, labels: &[(&str, String)], sum: f64, count: u64) {
        self.sample(&format!("{name}_sum"), labels, &[], &number(sum));
        self.sample(&format!("{name}_count"), labels, &[], &count.to_string());
    }
}

/// `families` as the text of one scrape: OpenMetrics if `open_metrics`, else the
/// classic format.
pub(crate) fn encode(families: &[Family], open_metrics: bool) -> String {
    let mut text = Text {
        out: String::new(),
        open_metrics,
    };
    for family in families {
        text.family(family);
    }
    if open_metrics {
        text.out.push_str("# EOF\n");
    }
    text.out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::{example_set as set, families};
    use latte::exporter::{Frames, MetricSet, Thread};

    fn text(set: &MetricSet, open_metrics: bool) -> String {
        encode(&families(set), open_metrics)
    }

    #[test]
    fn the_text_has_cumulative_buckets_counters_and_info() {
        let text = text(&set(), true);
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
        let text = text(&set(), false);
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
    fn help_and_label_values_are_escaped_as_each_format_wants() {
        assert_eq!(escape("a\\b\n\"c\"", true), "a\\\\b\\n\\\"c\\\"");
        assert_eq!(escape("a\\b\n\"c\"", false), "a\\\\b\\n\"c\"");
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(1e-8), "1e-8");
        assert_eq!(number(1.0), "1.0");
    }

    #[test]
    fn allocations_are_counters_per_component_and_absent_without_the_allocator() {
        let mut set = set();
        assert!(!text(&set, false).contains("latte_allocat"));
        set.components[0].allocs = Some(latte::alloc::Allocs::new(12, 3_000, 11, 2_900));
        for open_metrics in [false, true] {
            let text = text(&set, open_metrics);
            let has = |line: &str| assert!(text.contains(&format!("{line}\n")), "{line}:\n{text}");
            has(r#"latte_allocations_total{component="say \"hi\""} 12"#);
            has(r#"latte_allocated_bytes_total{component="say \"hi\""} 3000"#);
        }
    }

    #[test]
    fn frames_are_counters_per_thread_and_absent_without_frames() {
        let mut set = set();
        assert!(!text(&set, false).contains("latte_frames"));
        set.frames = vec![Frames {
            thread: Some(Thread {
                name: "main".into(),
                serial: "1".into(),
            }),
            frames: 600,
            over_budget: 4,
        }];
        for open_metrics in [false, true] {
            let text = text(&set, open_metrics);
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
