//! The OpenTelemetry exporter variables (`OTEL_EXPORTER_OTLP_*`), read as the
//! specification says (opentelemetry.io/docs/specs/otel/protocol/exporter/): each
//! `OTEL_EXPORTER_OTLP_METRICS_*` replaces its generic `OTEL_EXPORTER_OTLP_*`; the
//! generic endpoint is a base that gets `v1/metrics`, the metrics one is used as it
//! is; an empty variable is an unset one. What the code sets afterwards wins.

use crate::config::{Ca, Compression, Settings, Temporality};
use percent_encoding::percent_decode_str;
use std::time::Duration;

/// Where pushes go when no variable says: a collector on this machine.
pub(crate) const DEFAULT_ENDPOINT: &str = "http://localhost:4318/v1/metrics";

/// The metrics variable of `option` if set, else the generic one: the value and the
/// variable's name.
fn pick(var: &impl Fn(&str) -> Option<String>, option: &str) -> Option<(String, String)> {
    [
        format!("OTEL_EXPORTER_OTLP_METRICS_{option}"),
        format!("OTEL_EXPORTER_OTLP_{option}"),
    ]
    .into_iter()
    .find_map(|name| {
        var(&name)
            .filter(|v| !v.trim().is_empty())
            .map(|v| (name, v))
    })
}

/// The settings the variables `var` looks up give (`std::env::var` in
/// `Otlp::from_env`); the first invalid one is kept as the start's error.
pub(crate) fn settings(var: impl Fn(&str) -> Option<String>) -> Settings {
    let mut settings = Settings::new(DEFAULT_ENDPOINT.into());
    if let Err(e) = read(&var, &mut settings) {
        settings.invalid = Some(e);
    }
    settings
}

fn read(var: &impl Fn(&str) -> Option<String>, s: &mut Settings) -> Result<(), String> {
    refuse_unsupported(var)?;
    let metrics = var("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT").filter(|v| !v.trim().is_empty());
    s.endpoint = match (metrics, var("OTEL_EXPORTER_OTLP_ENDPOINT")) {
        (Some(url), _) => url.trim().to_owned(),
        (None, Some(base)) if !base.trim().is_empty() => metrics_url(base.trim()),
        _ => DEFAULT_ENDPOINT.to_owned(),
    };
    if let Some((name, v)) = pick(var, "HEADERS") {
        for (key, value) in headers(&v).map_err(|e| format!("{name}: {e}"))? {
            s.headers.set(key, value);
        }
    }
    if let Some((name, path)) = pick(var, "CERTIFICATE") {
        let name = if name.contains("_METRICS_") {
            "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE"
        } else {
            "OTEL_EXPORTER_OTLP_CERTIFICATE"
        };
        s.ca = Some(Ca::File(path.trim().into(), Some(name)));
    }
    if let Some((name, v)) = pick(var, "COMPRESSION") {
        s.compression = match v.trim().to_ascii_lowercase().as_str() {
            "gzip" => Compression::Gzip,
            "none" => Compression::None,
            _ => return Err(format!("{name}={v:?}: expected gzip or none")),
        };
    }
    if let Some((name, v)) = pick(var, "TIMEOUT") {
        s.timeout = match v.trim().parse::<u64>() {
            Ok(ms) if ms > 0 => Duration::from_millis(ms),
            _ => {
                return Err(format!(
                    "{name}={v:?}: expected a number of milliseconds above zero"
                ));
            }
        };
    }
    let name = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE";
    if let Some(v) = var(name).filter(|v| !v.trim().is_empty()) {
        s.temporality = match v.trim().to_ascii_lowercase().as_str() {
            "cumulative" => Temporality::Cumulative,
            "delta" => Temporality::Delta,
            "lowmemory" => Temporality::LowMemory,
            _ => {
                return Err(format!(
                    "{name}={v:?}: expected cumulative, delta or lowmemory"
                ));
            }
        };
    }
    Ok(())
}

/// A protocol other than http/protobuf, or a client certificate: neither is supported.
fn refuse_unsupported(var: &impl Fn(&str) -> Option<String>) -> Result<(), String> {
    if let Some((name, v)) = pick(var, "PROTOCOL")
        && v.trim() != "http/protobuf"
    {
        return Err(format!(
            "{name}={v:?}: latte pushes OTLP over HTTP with protobuf only (http/protobuf)"
        ));
    }
    for option in ["CLIENT_KEY", "CLIENT_CERTIFICATE"] {
        if let Some((name, _)) = pick(var, option) {
            return Err(format!(
                "{name} is set: client certificates (mutual TLS) are not supported; \
                 use a header (OTEL_EXPORTER_OTLP_HEADERS) or a local collector"
            ));
        }
    }
    Ok(())
}

/// The metrics URL of a generic endpoint: `v1/metrics` under its path.
fn metrics_url(base: &str) -> String {
    match base.ends_with('/') {
        true => format!("{base}v1/metrics"),
        false => format!("{base}/v1/metrics"),
    }
}

/// `k=v,k2=v2` (W3C Baggage's list, without properties), keys and values trimmed and
/// percent-decoded. The error never shows a value (it may be a secret).
fn headers(list: &str) -> Result<Vec<(String, String)>, String> {
    let decode = |s: &str, what: &str, n: usize| {
        percent_decode_str(s.trim())
            .decode_utf8()
            .map(|s| s.into_owned())
            .map_err(|_| format!("the {what} of entry {n} is not UTF-8 once percent-decoded"))
    };
    let mut headers = Vec::new();
    for (i, entry) in list.split(',').enumerate() {
        if entry.trim().is_empty() {
            continue;
        }
        let Some((key, value)) = entry.split_once('=') else {
            return Err(format!("entry {} is not key=value", i + 1));
        };
        let key = decode(key, "key", i + 1)?;
        if key.is_empty() {
            return Err(format!("entry {} has an empty key", i + 1));
        }
        headers.push((key, decode(value, "value", i + 1)?));
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn from(vars: &[(&str, &str)]) -> Settings {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        settings(move |name| map.get(name).cloned())
    }

    #[test]
    fn the_generic_endpoint_gets_the_metrics_path_and_the_metrics_one_is_kept() {
        assert_eq!(from(&[]).endpoint, DEFAULT_ENDPOINT);
        let generic = [("OTEL_EXPORTER_OTLP_ENDPOINT", "https://otlp.example.com")];
        assert_eq!(
            from(&generic).endpoint,
            "https://otlp.example.com/v1/metrics"
        );
        let slash = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318/otlp/")];
        assert_eq!(from(&slash).endpoint, "http://h:4318/otlp/v1/metrics");
        let both = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://generic:4318"),
            (
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                "http://m:9000/ingest",
            ),
        ];
        assert_eq!(from(&both).endpoint, "http://m:9000/ingest");
        // Empty is unset.
        let empty = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://generic:4318"),
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", ""),
        ];
        assert_eq!(from(&empty).endpoint, "http://generic:4318/v1/metrics");
    }

    #[test]
    fn headers_are_percent_decoded_and_the_metrics_list_replaces_the_generic_one() {
        let s = from(&[(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "api-key=a%20b%2Cc , x-team = latte,,",
        )]);
        assert_eq!(
            s.headers.0,
            [
                ("api-key".to_owned(), "a b,c".to_owned()),
                ("x-team".to_owned(), "latte".to_owned())
            ]
        );
        let s = from(&[
            ("OTEL_EXPORTER_OTLP_HEADERS", "a=1"),
            ("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "b=2"),
        ]);
        assert_eq!(s.headers.0, [("b".to_owned(), "2".to_owned())]);
        let bad = from(&[("OTEL_EXPORTER_OTLP_HEADERS", "a=1,secret-without-key")]);
        let error = bad.invalid.unwrap();
        assert_eq!(
            error,
            "OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value"
        );
    }

    #[test]
    fn compression_timeout_and_temporality_are_read_and_bad_values_named() {
        let s = from(&[
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "none"),
            ("OTEL_EXPORTER_OTLP_METRICS_COMPRESSION", "GZIP"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "1500"),
            (
                "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE",
                "LowMemory",
            ),
        ]);
        assert_eq!(s.invalid, None);
        assert_eq!(s.compression, Compression::Gzip);
        assert_eq!(s.timeout, Duration::from_millis(1500));
        assert_eq!(s.temporality, Temporality::LowMemory);
        for (name, value, says) in [
            (
                "OTEL_EXPORTER_OTLP_COMPRESSION",
                "zstd",
                "expected gzip or none",
            ),
            ("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "2s", "milliseconds"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "0", "above zero"),
            (
                "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE",
                "sometimes",
                "expected cumulative, delta or lowmemory",
            ),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "http/protobuf"),
            ("OTEL_EXPORTER_OTLP_CLIENT_KEY", "/k.pem", "mutual TLS"),
        ] {
            let error = from(&[(name, value)]).invalid.unwrap();
            assert!(error.starts_with(name), "{error}");
            assert!(error.contains(says), "{error}");
        }
    }

    #[test]
    fn the_certificate_names_its_variable() {
        let s = from(&[("OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE", "/etc/ca.pem")]);
        match s.ca {
            Some(Ca::File(path, Some(var))) => {
                assert_eq!(path, std::path::Path::new("/etc/ca.pem"));
                assert_eq!(var, "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE");
            }
            other => panic!("{other:?}"),
        }
    }
}
