//! What a push needs to know besides the data: where to (the endpoint), with what
//! (headers, compression), trusting whom (TLS roots), within how long, and in which
//! temporality. Set in code ([`Otlp`]'s methods) or read from the OpenTelemetry
//! variables (`env.rs`); checked, and turned into a ready `ureq` agent, at start.

use crate::Otlp;
use crate::send::Sender;
use std::path::PathBuf;
use std::time::Duration;
use ureq::http::{HeaderName, HeaderValue, Uri};

/// How a push's body goes over the wire ([`Otlp::compression`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compression {
    /// As it is (the default, as OpenTelemetry's).
    #[default]
    None,
    /// gzip (`Content-Encoding: gzip`): a push's protobuf shrinks several times, which
    /// a hosted backend that bills or limits by bytes notices.
    Gzip,
}

/// Whether the points of a push cover the whole run or only what happened since the
/// last push the collector accepted ([`Otlp::temporality`]); the names and meanings of
/// `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Temporality {
    /// Every sum and histogram since the agent started (the default): a lost push
    /// costs nothing, the next one has it all. What Prometheus-like backends store.
    #[default]
    Cumulative,
    /// Every sum and histogram since the last push the collector accepted (the first
    /// since the agent started): what Datadog-like backends want. A push that fails is
    /// not lost: the next delta covers everything since the last accepted one.
    Delta,
    /// The latency histogram as [`Delta`](Temporality::Delta), the counters (samples
    /// seen and lost, anomalies, frames) as [`Cumulative`](Temporality::Cumulative):
    /// OpenTelemetry's `lowmemory` preference (delta for histograms, cumulative for
    /// observed counters).
    LowMemory,
}

impl Temporality {
    /// Whether the latency histogram goes out as deltas.
    pub(crate) fn histograms_delta(self) -> bool {
        self != Temporality::Cumulative
    }

    /// Whether the counters go out as deltas.
    pub(crate) fn sums_delta(self) -> bool {
        self == Temporality::Delta
    }
}

/// The CA that signs a private collector's certificate.
#[derive(Clone, Debug)]
// Read by `tls.rs`; without the `tls` feature a CA only makes the start fail.
#[cfg_attr(not(feature = "tls"), allow(dead_code))]
pub(crate) enum Ca {
    /// A PEM file, and the variable that named it, if one did.
    File(PathBuf, Option<&'static str>),
    /// PEM text.
    Pem(Vec<u8>),
}

/// Request headers, whose values (API keys) never show in a `Debug` or an error.
#[derive(Clone, Default)]
pub(crate) struct Headers(pub(crate) Vec<(String, String)>);

impl Headers {
    /// Sets `name` (a header of that name, in any case, is replaced).
    pub(crate) fn set(&mut self, name: String, value: String) {
        self.0.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
        self.0.push((name, value));
    }
}

impl std::fmt::Debug for Headers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = self.0.iter().map(|(n, _)| (n, "<redacted>"));
        f.debug_map().entries(names).finish()
    }
}

/// Everything a push is configured with.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) endpoint: String,
    pub(crate) headers: Headers,
    pub(crate) ca: Option<Ca>,
    pub(crate) compression: Compression,
    pub(crate) timeout: Duration,
    pub(crate) temporality: Temporality,
    /// What was wrong with the environment (`Otlp::from_env`): the start's error.
    pub(crate) invalid: Option<String>,
}

impl Settings {
    /// Settings for `endpoint`, the rest as latte's defaults.
    pub(crate) fn new(endpoint: String) -> Settings {
        Settings {
            endpoint,
            headers: Headers::default(),
            ca: None,
            compression: Compression::None,
            timeout: Otlp::TIMEOUT,
            temporality: Temporality::Cumulative,
            invalid: None,
        }
    }

    /// Checks every setting and makes the sender: a clear error for the first that
    /// is wrong.
    pub(crate) fn sender(&self) -> Result<Sender, String> {
        if let Some(invalid) = &self.invalid {
            return Err(invalid.clone());
        }
        let url = &self.endpoint;
        let uri: Uri = url
            .parse()
            .map_err(|e| format!("{url:?} is not a URL: {e}"))?;
        let scheme = uri.scheme_str().map(str::to_ascii_lowercase);
        if !matches!(scheme.as_deref(), Some("http" | "https")) {
            return Err(format!(
                "{url:?}: the endpoint must be an http:// or https:// URL"
            ));
        }
        if uri.host().is_none_or(str::is_empty) {
            return Err(format!("{url:?}: the endpoint has no host"));
        }
        if self.timeout.is_zero() {
            return Err("the push timeout must be above zero".into());
        }
        let mut headers = Vec::new();
        for (name, value) in &self.headers.0 {
            let n = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("{name:?} is not a valid HTTP header name"))?;
            // The value may be a secret: named, never shown.
            let v = HeaderValue::from_str(value).map_err(|_| {
                format!("the value of header {name:?} is not a valid HTTP header value")
            })?;
            headers.push((n, v));
        }
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(self.timeout))
            .http_status_as_error(false)
            // Auth headers are not carried to wherever a redirect points.
            .max_redirects(0);
        #[cfg(feature = "tls")]
        let config = config.tls_config(crate::tls::config(self.ca.as_ref())?);
        #[cfg(not(feature = "tls"))]
        {
            let without = "needs the `tls` feature of latte-telemetry-otlp (on by default)";
            match &self.ca {
                Some(Ca::File(path, var)) => {
                    let from = var.map_or("CA certificate file".into(), |v| format!("{v}="));
                    return Err(format!("{from}{}: a CA {without}", path.display()));
                }
                Some(Ca::Pem(_)) => return Err(format!("CA certificate (PEM): a CA {without}")),
                None if scheme.as_deref() == Some("https") => {
                    return Err(format!("{url:?}: https:// {without}"));
                }
                None => {}
            }
        }
        let config = config.build();
        Ok(Sender {
            agent: ureq::Agent::new_with_config(config),
            url: url.clone(),
            headers,
            compression: self.compression,
            timeout: self.timeout,
        })
    }
}

impl Otlp {
    /// The URL pushes go to, replacing the one given to [`new`](Otlp::new) or read by
    /// [`from_env`](Otlp::from_env): `http://` or `https://`, the full path
    /// (`/v1/metrics` for a collector).
    ///
    /// ```
    /// use std::time::Duration;
    /// let otlp = latte_otlp::Otlp::from_env(Duration::from_secs(10))
    ///     .endpoint("https://otlp.example.com/v1/metrics"); // the code wins
    /// # drop(otlp);
    /// ```
    pub fn endpoint(mut self, url: impl Into<String>) -> Otlp {
        self.settings.endpoint = url.into();
        self
    }

    /// A header sent with every push, such as a hosted backend's API key; one of the
    /// same name (in any case) is replaced, the environment's included. Its value
    /// shows in no `Debug` and no error. A name or value HTTP does not allow makes the
    /// agent's start fail ([`latte::Error::Exporter`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// let otlp = latte_otlp::Otlp::new("https://otlp.example.com/v1/metrics", Duration::from_secs(10))
    ///     .header("x-api-key", "secret");
    /// assert!(!format!("{otlp:?}").contains("secret"));
    /// ```
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Otlp {
        self.settings.headers.set(name.into(), value.into());
        self
    }

    /// Trusts the CA certificates in the PEM file at `path` (a private collector's)
    /// instead of the system's roots, as `OTEL_EXPORTER_OTLP_CERTIFICATE` does. The
    /// file is read at start: one that cannot be read, or holds no valid certificate,
    /// makes the agent's start fail ([`latte::Error::Exporter`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// let otlp = latte_otlp::Otlp::new("https://collector:4318/v1/metrics", Duration::from_secs(10))
    ///     .ca_certificate("/nonexistent/ca.pem");
    /// let err = latte::builder().exporter(otlp).start().unwrap_err();
    /// assert!(err.to_string().contains("/nonexistent/ca.pem"), "{err}");
    /// ```
    pub fn ca_certificate(mut self, path: impl Into<PathBuf>) -> Otlp {
        self.settings.ca = Some(Ca::File(path.into(), None));
        self
    }

    /// Trusts the CA certificates in `pem` (PEM text) instead of the system's roots:
    /// [`ca_certificate`](Otlp::ca_certificate) with the certificate in hand.
    ///
    /// ```
    /// use std::time::Duration;
    /// let otlp = latte_otlp::Otlp::new("https://collector:4318/v1/metrics", Duration::from_secs(10))
    ///     .ca_certificate_pem("not a certificate");
    /// let err = latte::builder().exporter(otlp).start().unwrap_err();
    /// // "CA certificate (PEM): no PEM certificate in it"
    /// assert!(err.to_string().contains("CA certificate (PEM): "), "{err}");
    /// ```
    pub fn ca_certificate_pem(mut self, pem: impl Into<Vec<u8>>) -> Otlp {
        self.settings.ca = Some(Ca::Pem(pem.into()));
        self
    }

    /// Compresses each push ([`Compression::Gzip`]) or not (the default).
    ///
    /// ```
    /// use latte_otlp::{Compression, Otlp};
    /// use std::time::Duration;
    /// let otlp = Otlp::new("http://127.0.0.1:4318/v1/metrics", Duration::from_secs(10))
    ///     .compression(Compression::Gzip);
    /// # drop(otlp);
    /// ```
    pub fn compression(mut self, compression: Compression) -> Otlp {
        self.settings.compression = compression;
        self
    }

    /// The longest one push may take, its retries included (default
    /// [`Otlp::TIMEOUT`]); the agent's stop waits for the last push at most this plus
    /// 0.5 s. Zero makes the agent's start fail.
    ///
    /// ```
    /// use std::time::Duration;
    /// let otlp = latte_otlp::Otlp::new("http://127.0.0.1:4318/v1/metrics", Duration::from_secs(10))
    ///     .timeout(Duration::from_secs(5));
    /// # drop(otlp);
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Otlp {
        self.settings.timeout = timeout;
        self
    }

    /// Cumulative points (the default), deltas since the last accepted push, or
    /// deltas for the histogram only ([`Temporality`]).
    ///
    /// ```
    /// use latte_otlp::{Otlp, Temporality};
    /// use std::time::Duration;
    /// let otlp = Otlp::new("http://127.0.0.1:4318/v1/metrics", Duration::from_secs(10))
    ///     .temporality(Temporality::Delta);
    /// # drop(otlp);
    /// ```
    pub fn temporality(mut self, temporality: Temporality) -> Otlp {
        self.settings.temporality = temporality;
        self
    }
}
