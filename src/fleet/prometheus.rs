//! A [`MetricSet`] in the OpenMetrics text format, written by `prometheus-client`
//! (a collector that encodes on scrape from data already at hand: nothing is kept
//! between scrapes, no registry lives on).
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `latte_latency_seconds` | histogram | component (, thread, thread_serial) |
//! | `latte_latency_quantile_seconds` | gauge | component, quantile (, thread, thread_serial) |
//! | `latte_samples_seen_total`, `latte_samples_lost_total` | counter | component (, thread, thread_serial) |
//! | `latte_samples_bypass`, `latte_samples_outliers` | gauge | component (, thread, thread_serial) |
//! | `latte_anomalies_total` | counter | kind (, thread, thread_serial) |
//! | `latte_clock_info` | info | clock, frequency_hz, hypervisor |

use super::metrics::{MetricSet, QUANTILES, Series, Thread};
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric as _, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::{Registry, Unit};
use std::fmt::Error as FmtError;

/// The `Content-Type` of what [`encode`] writes.
pub(crate) const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The metric set as OpenMetrics text (ends with `# EOF`).
pub(crate) fn encode(set: MetricSet) -> Result<String, FmtError> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Collector(set)));
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry)?;
    Ok(text)
}

#[derive(Debug)]
struct Collector(MetricSet);

/// A series' labels: component, then the thread's if there is one.
fn labels(s: &Series) -> Vec<(&'static str, &str)> {
    let mut labels = vec![("component", s.component.as_str())];
    labels.extend(s.thread.iter().flat_map(Thread::labels));
    labels
}

impl prometheus_client::collector::Collector for Collector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), FmtError> {
        self.histograms(&mut encoder)?;
        self.quantiles(&mut encoder)?;
        self.counts(&mut encoder)?;
        self.anomalies(&mut encoder)?;
        let set = &self.0;
        let frequency = format!("{:.0}", set.frequency_hz);
        let info = [
            ("clock", set.clock.as_str()),
            ("frequency_hz", frequency.as_str()),
            ("hypervisor", set.hypervisor),
        ];
        let help =
            "The clock latte reads, its calibrated frequency, and whether a hypervisor runs.";
        encoder
            .encode_descriptor("latte_clock", help, None, MetricType::Info)?
            .encode_info(&info)
    }
}

impl Collector {
    /// Sample counts: counters for what only grows, gauges for what cleaning may
    /// lower again.
    fn counts(&self, encoder: &mut DescriptorEncoder) -> Result<(), FmtError> {
        type Pick = fn(&Series) -> u64;
        let counts: [(&str, &str, MetricType, Pick); 4] = [
            (
                "latte_samples_seen",
                "Samples recorded (folded or lost).",
                MetricType::Counter,
                |s| s.seen,
            ),
            (
                "latte_samples_lost",
                "Samples overwritten in their ring before latte read them.",
                MetricType::Counter,
                |s| s.lost,
            ),
            (
                "latte_samples_bypass",
                "Samples the cleaning rule flags as OS preemption (BYPASS); they stay in every figure.",
                MetricType::Gauge,
                |s| s.bypass,
            ),
            (
                "latte_samples_outliers",
                "Samples the cleaning rule flags as outliers (IQR fences); they stay in every figure.",
                MetricType::Gauge,
                |s| s.outliers,
            ),
        ];
        for (name, help, kind, pick) in counts {
            let mut family = encoder.encode_descriptor(name, help, None, kind)?;
            for s in &self.0.series {
                let labels = labels(s);
                let metric = family.encode_family(&labels)?;
                match kind {
                    MetricType::Counter => ConstCounter::new(pick(s)).encode(metric)?,
                    _ => ConstGauge::new(i64::try_from(pick(s)).unwrap_or(i64::MAX))
                        .encode(metric)?,
                }
            }
        }
        Ok(())
    }

    fn anomalies(&self, encoder: &mut DescriptorEncoder) -> Result<(), FmtError> {
        let help = "Misuse and clock anomalies latte counted, by kind.";
        let mut family =
            encoder.encode_descriptor("latte_anomalies", help, None, MetricType::Counter)?;
        for (thread, kind, count) in &self.0.anomalies {
            let mut labels = vec![("kind", *kind)];
            labels.extend(thread.iter().flat_map(Thread::labels));
            ConstCounter::new(*count).encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }

    fn histograms(&self, encoder: &mut DescriptorEncoder) -> Result<(), FmtError> {
        let set = &self.0;
        let help = "Latency of each component over the whole run (every folded sample).";
        let unit = Unit::Seconds;
        let mut family =
            encoder.encode_descriptor("latte_latency", help, Some(&unit), MetricType::Histogram)?;
        for s in &set.series {
            let bounds = set.bounds.iter().copied().chain([f64::INFINITY]);
            let buckets: Vec<(f64, u64)> = bounds.zip(s.buckets.iter().copied()).collect();
            let labels = labels(s);
            family
                .encode_family(&labels)?
                .encode_histogram::<NoLabelSet>(s.sum, s.count, &buckets, None)?;
        }
        Ok(())
    }

    fn quantiles(&self, encoder: &mut DescriptorEncoder) -> Result<(), FmtError> {
        let help = "Whole-run quantiles of each component's latency (every folded sample).";
        let unit = Unit::Seconds;
        let mut family = encoder.encode_descriptor(
            "latte_latency_quantile",
            help,
            Some(&unit),
            MetricType::Gauge,
        )?;
        for s in &self.0.series {
            for (q, value) in QUANTILES.iter().zip(s.quantiles) {
                let q = q.to_string();
                let mut labels = labels(s);
                labels.push(("quantile", q.as_str()));
                ConstGauge::new(value).encode(family.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_has_cumulative_buckets_counters_and_info() {
        let set = MetricSet {
            clock: "TSC".into(),
            frequency_hz: 2.6e9,
            hypervisor: "yes",
            bounds: vec![1e-6, 1e-3],
            series: vec![Series {
                component: "say \"hi\"".into(),
                buckets: vec![2, 3, 1],
                count: 6,
                seen: 7,
                lost: 1,
                ..Series::default()
            }],
            anomalies: vec![(None, "clock_backwards", 4)],
        };
        let text = encode(set).unwrap();
        assert!(
            text.contains(
                "latte_latency_seconds_bucket{le=\"0.001\",component=\"say \\\"hi\\\"\"} 5"
            ),
            "{text}"
        );
        assert!(
            text.contains("le=\"+Inf\",component=\"say \\\"hi\\\"\"} 6"),
            "{text}"
        );
        assert!(text.contains("latte_latency_seconds_count{component=\"say \\\"hi\\\"\"} 6"));
        assert!(text.contains("latte_samples_seen_total{component=\"say \\\"hi\\\"\"} 7"));
        assert!(text.contains("latte_anomalies_total{kind=\"clock_backwards\"} 4"));
        assert!(text.contains(
            "latte_clock_info{clock=\"TSC\",frequency_hz=\"2600000000\",hypervisor=\"yes\"} 1"
        ));
        assert!(text.ends_with("# EOF\n"));
    }
}
