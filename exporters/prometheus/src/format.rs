//! Which format a scrape gets, from its `Accept` header, and the scrape's body in it.
//!
//! - Prometheus's **protobuf** format (`application/vnd.google.protobuf;
//!   proto=io.prometheus.client.MetricFamily; encoding=delimited`), which a Prometheus
//!   started with `--enable-feature=native-histograms` asks for first: the only one
//!   that carries native histograms ([`protobuf`](super::protobuf)).
//! - **OpenMetrics 1.0** (`application/openmetrics-text`), which Prometheus asks for
//!   first otherwise.
//! - The **classic text** (`text/plain; version=0.0.4`, what `promtool check metrics`
//!   reads), for everyone else: no header, `*/*`, `text/plain`.

use crate::families::families;
use crate::{protobuf, text};
use latte::exporter::MetricSet;

/// The media type of Prometheus's protobuf format.
const PROTOBUF: &str = "application/vnd.google.protobuf";
/// The message its `proto` parameter must name (if it names one).
const PROTOBUF_MESSAGE: &str = "io.prometheus.client.MetricFamily";

/// What format a scrape gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// `text/plain; version=0.0.4`.
    Classic,
    /// `application/openmetrics-text; version=1.0.0`.
    OpenMetrics,
    /// Length-delimited `io.prometheus.client.MetricFamily` messages.
    Protobuf,
}

impl Format {
    /// The format an `Accept` header weighs highest, of those latte writes: protobuf
    /// (only as `io.prometheus.client.MetricFamily`, delimited), OpenMetrics, or the
    /// classic text. On a tie the richer format wins; a weight of 0 refuses a format;
    /// without a header, or one naming none of them, it is the classic text.
    pub(crate) fn negotiate(accept: Option<&str>) -> Format {
        let (mut protobuf, mut open_metrics, mut plain) = (0.0f64, 0.0f64, 0.0f64);
        for range in accept.unwrap_or("").split(',') {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or("").to_ascii_lowercase();
            let (mut weight, mut ours) = (1.0, true);
            for (key, value) in parts.filter_map(|p| p.split_once('=')) {
                let value = value.trim().trim_matches('"');
                match key.trim().to_ascii_lowercase().as_str() {
                    "q" => weight = value.parse().unwrap_or(0.0),
                    "proto" => ours &= value == PROTOBUF_MESSAGE,
                    "encoding" => ours &= value.eq_ignore_ascii_case("delimited"),
                    _ => {}
                }
            }
            match media.as_str() {
                PROTOBUF if ours => protobuf = protobuf.max(weight),
                "application/openmetrics-text" => open_metrics = open_metrics.max(weight),
                "text/plain" => plain = plain.max(weight),
                _ => {}
            }
        }
        if protobuf > 0.0 && protobuf >= open_metrics && protobuf >= plain {
            Format::Protobuf
        } else if open_metrics > 0.0 && open_metrics >= plain {
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
            Format::Protobuf => {
                "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; \
                 encoding=delimited"
            }
        }
    }

    /// The body of a scrape of `set` in this format.
    pub(crate) fn encode(self, set: &MetricSet) -> Vec<u8> {
        let families = families(set);
        match self {
            Format::Protobuf => protobuf::encode(&families),
            Format::Classic => text::encode(&families, false).into_bytes(),
            Format::OpenMetrics => text::encode(&families, true).into_bytes(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `/metrics` text of the demo's report on a fixed counter (written by the
    /// library's `tests/mock_clock/demo.rs`), classic and OpenMetrics, as snapshots:
    /// what a scrape answers stays byte for byte while the code beneath it changes.
    #[test]
    fn the_demo_report_s_metrics_text_is_the_snapshot() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/demo-mock-report.json"
        );
        let json = std::fs::read_to_string(path).unwrap();
        let report: latte::Report = serde_json::from_str(&json).unwrap();
        let set = MetricSet::of(&report, &latte::exporter::Buckets::default(), false);
        let text = |format: Format| String::from_utf8(format.encode(&set)).unwrap();
        insta::assert_snapshot!("demo_classic", text(Format::Classic));
        insta::assert_snapshot!("demo_openmetrics", text(Format::OpenMetrics));
    }

    #[test]
    fn accept_chooses_openmetrics_only_when_asked() {
        // What Prometheus 2.x sends without native histograms.
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
    fn accept_chooses_protobuf_for_the_metric_family_message_delimited() {
        // What Prometheus 2.42 sends with --enable-feature=native-histograms.
        let native = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;\
                      encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.8,\
                      application/openmetrics-text;version=0.0.1;q=0.75,\
                      text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(Format::negotiate(Some(native)), Format::Protobuf);
        let plain = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily";
        assert_eq!(Format::negotiate(Some(plain)), Format::Protobuf);
        for not_ours in [
            // Another message, another encoding, refused, or weighed lower.
            "application/vnd.google.protobuf;proto=other.Message;encoding=delimited",
            "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text",
            "application/vnd.google.protobuf;q=0, text/plain",
            "application/vnd.google.protobuf;q=0.2, text/plain;q=0.5",
        ] {
            assert_eq!(
                Format::negotiate(Some(not_ours)),
                Format::Classic,
                "{not_ours}"
            );
        }
        assert!(
            Format::Protobuf
                .content_type()
                .contains("encoding=delimited")
        );
    }
}
