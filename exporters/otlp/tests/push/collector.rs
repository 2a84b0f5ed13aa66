//! A scripted collector on 127.0.0.1, over plain HTTP or over TLS (rustls, with a CA
//! and a server certificate made at test time by rcgen): it reads each request with
//! httparse, answers what the script says for the n-th request, and hands over what
//! it received (headers, the body gunzipped if it was gzip, decoded).

use crossbeam_channel::{Receiver, Sender, unbounded};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::metrics::v1::metric::Data as MetricData;
use prost::Message;
#[cfg(feature = "tls")]
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
#[cfg(feature = "tls")]
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// What the collector answers: a status and headers.
pub(super) struct Answer {
    pub(super) status: u16,
    pub(super) headers: Vec<(&'static str, String)>,
}

impl Answer {
    pub(super) fn status(status: u16) -> Answer {
        Answer {
            status,
            headers: Vec::new(),
        }
    }
}

/// One request as the collector read it.
#[derive(Debug)]
pub(super) struct Received {
    pub(super) at: Instant,
    pub(super) path: String,
    /// Names in lower case.
    pub(super) headers: Vec<(String, String)>,
    /// The body as sent (gzip if it was).
    pub(super) raw: Vec<u8>,
    pub(super) request: ExportMetricsServiceRequest,
    /// What the collector answered.
    pub(super) status: u16,
}

impl Received {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        let found = self.headers.iter().find(|(n, _)| n == name);
        found.map(|(_, v)| v.as_str())
    }
}

/// The script: the answer to request `n` (from 0).
pub(super) type Script = Arc<dyn Fn(usize) -> Answer + Send + Sync>;

/// A test CA and a server certificate it signed for 127.0.0.1 and localhost.
#[cfg(feature = "tls")]
pub(super) struct Pki {
    pub(super) ca_pem: String,
    pub(super) server: Arc<rustls::ServerConfig>,
}

#[cfg(feature = "tls")]
impl Pki {
    pub(super) fn new() -> Pki {
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().unwrap()).unwrap();
        let key = KeyPair::generate().unwrap();
        let names = vec!["127.0.0.1".to_owned(), "localhost".to_owned()];
        let cert = CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, &ca)
            .unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], key)
            .unwrap();
        Pki {
            ca_pem: ca.pem(),
            server: Arc::new(server),
        }
    }
}

/// Starts a collector (over TLS with `tls`) answering by `script`; returns its URL
/// (`https://127.0.0.1:PORT/v1/metrics` or `http://...`) and what it receives.
pub(super) fn start(
    tls: Option<Arc<rustls::ServerConfig>>,
    script: Script,
) -> (String, Receiver<Received>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let scheme = if tls.is_some() { "https" } else { "http" };
    let url = format!("{scheme}://{}/v1/metrics", listener.local_addr().unwrap());
    let (tx, rx) = unbounded();
    let count = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (tx, script, count, tls) = (tx.clone(), script.clone(), count.clone(), tls.clone());
            std::thread::spawn(move || match tls {
                Some(config) => {
                    let Ok(conn) = rustls::ServerConnection::new(config) else {
                        return;
                    };
                    serve(rustls::StreamOwned::new(conn, stream), &script, &count, &tx);
                }
                None => serve::<TcpStream>(stream, &script, &count, &tx),
            });
        }
    });
    (url, rx)
}

/// A request's path, headers and body.
type Request = (String, Vec<(String, String)>, Vec<u8>);

/// A request's path, headers (names in lower case) and body, read from `stream`
/// (`buf` holds what was read past the previous one); `None` once it closes.
fn read_request<S: Read>(stream: &mut S, buf: &mut Vec<u8>) -> Option<Request> {
    let mut chunk = [0u8; 16 * 1024];
    let mut more = |stream: &mut S, buf: &mut Vec<u8>| match stream.read(&mut chunk) {
        Ok(0) | Err(_) => None,
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            Some(())
        }
    };
    let (len, path, headers) = loop {
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(buf).ok()? {
            httparse::Status::Complete(len) => {
                let path = request.path.unwrap_or_default().to_owned();
                let headers: Vec<(String, String)> = request
                    .headers
                    .iter()
                    .map(|h| {
                        let value = String::from_utf8_lossy(h.value).into_owned();
                        (h.name.to_ascii_lowercase(), value)
                    })
                    .collect();
                break (len, path, headers);
            }
            httparse::Status::Partial => more(stream, buf)?,
        }
    };
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < len + length {
        more(stream, buf)?;
    }
    let raw = buf.drain(..len + length).skip(len).collect();
    Some((path, headers, raw))
}

/// Answers the requests of one connection until it closes (or fails: a client that
/// does not trust the certificate ends the handshake).
fn serve<S: Read + Write>(
    mut stream: S,
    script: &Script,
    count: &AtomicUsize,
    tx: &Sender<Received>,
) {
    let mut buf = Vec::new();
    while let Some((path, headers, raw)) = read_request(&mut stream, &mut buf) {
        let at = Instant::now();
        let gzip = headers
            .iter()
            .any(|(n, v)| n == "content-encoding" && v == "gzip");
        let body = match gzip {
            true => gunzip(&raw),
            false => raw.clone(),
        };
        let request = ExportMetricsServiceRequest::decode(body.as_slice()).unwrap_or_default();
        let answer = script(count.fetch_add(1, Ordering::SeqCst));
        let mut response = format!(
            "HTTP/1.1 {} Scripted\r\ncontent-length: 0\r\n",
            answer.status
        );
        for (name, value) in &answer.headers {
            response += &format!("{name}: {value}\r\n");
        }
        response += "\r\n";
        let status = answer.status;
        let _ = tx.send(Received {
            at,
            path,
            headers,
            raw,
            request,
            status,
        });
        if stream
            .write_all(response.as_bytes())
            .and_then(|()| stream.flush())
            .is_err()
        {
            return;
        }
    }
}

pub(super) fn gunzip(gz: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_end(&mut body)
        .unwrap();
    body
}

/// The next thing received within 20 s.
pub(super) fn next(rx: &Receiver<Received>) -> Received {
    rx.recv_timeout(Duration::from_secs(20))
        .expect("the collector received a push within 20 s")
}

/// Waits (at most 20 s) until `done` holds.
pub(super) fn wait_until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "waited 20 s for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `component`'s latency point in a push: (count, zero count plus the buckets' counts,
/// temporality, start, time), exponential or explicit.
pub(super) fn latency(
    request: &ExportMetricsServiceRequest,
    component: &str,
) -> Option<(u64, u64, i32, u64, u64)> {
    let scope = request.resource_metrics.first()?.scope_metrics.first()?;
    let metric = scope.metrics.iter().find(|m| m.name == "latte.latency")?;
    let mine = |attributes: &[opentelemetry_proto::tonic::common::v1::KeyValue]| {
        attributes.iter().any(|kv| {
            kv.key == "component"
                && kv.value.as_ref().and_then(|v| v.value.as_ref())
                    == Some(
                        &opentelemetry_proto::tonic::common::v1::any_value::Value::StringValue(
                            component.into(),
                        ),
                    )
        })
    };
    match metric.data.as_ref()? {
        MetricData::ExponentialHistogram(h) => {
            let p = h.data_points.iter().find(|p| mine(&p.attributes))?;
            let buckets: u64 = p
                .positive
                .as_ref()
                .map_or(0, |b| b.bucket_counts.iter().sum());
            let t = h.aggregation_temporality;
            Some((
                p.count,
                p.zero_count + buckets,
                t,
                p.start_time_unix_nano,
                p.time_unix_nano,
            ))
        }
        MetricData::Histogram(h) => {
            let p = h.data_points.iter().find(|p| mine(&p.attributes))?;
            let t = h.aggregation_temporality;
            let total = p.bucket_counts.iter().sum();
            Some((p.count, total, t, p.start_time_unix_nano, p.time_unix_nano))
        }
        _ => None,
    }
}
