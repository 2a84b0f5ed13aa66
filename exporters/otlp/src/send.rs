//! One push over the wire: the body (gzip if asked) POSTed with the headers, retried
//! on the answers OTLP/HTTP calls retryable (429, 502, 503, 504) after the wait the
//! collector asks for (`Retry-After`, seconds or an HTTP date) or an exponential
//! backoff with jitter, every attempt and wait within one deadline per push: a push
//! never takes longer than its timeout, so the agent's stop never waits past it. A
//! refused connection or a timeout is not retried: the next push carries the data.

use crate::config::Compression;
use flate2::Compression as Level;
use flate2::write::GzEncoder;
use std::hash::{BuildHasher, RandomState};
use std::io::Write;
use std::time::{Duration, Instant, SystemTime};
use ureq::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};

/// The first backoff without `Retry-After`; each retry doubles it, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// Where and how pushes go: made by `Settings::sender` at start.
#[derive(Debug)]
pub(crate) struct Sender {
    pub(crate) agent: ureq::Agent,
    pub(crate) url: String,
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    pub(crate) compression: Compression,
    /// One push's deadline, its retries included.
    pub(crate) timeout: Duration,
}

/// How a push ended, and how many times it was retried.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Sent { retries: u32 },
    Failed { retries: u32, error: String },
}

/// The answers worth a retry (the OTLP/HTTP specification's list).
fn retryable(status: StatusCode) -> bool {
    matches!(status.as_u16(), 429 | 502 | 503 | 504)
}

impl Sender {
    /// POSTs `body` (protobuf), retrying within the push's deadline.
    pub(crate) fn send(&self, body: &[u8]) -> Outcome {
        let deadline = Instant::now() + self.timeout;
        let compressed;
        let body = match self.compression {
            Compression::None => body,
            Compression::Gzip => match gzip(body) {
                Ok(gz) => {
                    compressed = gz;
                    &compressed[..]
                }
                Err(e) => {
                    let error = format!("gzip: {e}");
                    return Outcome::Failed { retries: 0, error };
                }
            },
        };
        self.attempts(body, deadline)
    }

    /// Sends `body` (as it goes over the wire) until it is accepted, fails for good,
    /// or `deadline` would pass.
    fn attempts(&self, body: &[u8], deadline: Instant) -> Outcome {
        let mut retries = 0;
        // What the last answer was, for a retry that then fails another way.
        let mut before = String::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let failed = |error: String| Outcome::Failed { retries, error };
            if left.is_zero() {
                let error = format!("{}: no answer within {:?}", self.url, self.timeout);
                return failed(error + &before);
            }
            let mut request = self
                .agent
                .post(&self.url)
                .config()
                .timeout_global(Some(left))
                .build()
                .header("Content-Type", "application/x-protobuf");
            if self.compression == Compression::Gzip {
                request = request.header("Content-Encoding", "gzip");
            }
            for (name, value) in &self.headers {
                request = request.header(name, value);
            }
            let mut response = match request.send(body) {
                Ok(response) => response,
                Err(e) => return failed(format!("{}: {e}", self.url) + &before),
            };
            let status = response.status();
            // Read to the end, so the connection can be used again.
            let text = response
                .body_mut()
                .with_config()
                .limit(64 * 1024)
                .read_to_string()
                .unwrap_or_default();
            if status.is_success() {
                return Outcome::Sent { retries };
            }
            let error = status_error(&self.url, status, &text, retries);
            if !retryable(status) {
                return failed(error);
            }
            let wait = retry_after(response.headers(), SystemTime::now())
                .unwrap_or_else(|| backoff(retries));
            if Instant::now() + wait >= deadline {
                return failed(format!(
                    "{error}; the next try ({wait:?} later) would pass the push's deadline ({:?})",
                    self.timeout
                ));
            }
            std::thread::sleep(wait);
            before = format!(" (on retry {}; before it, {error})", retries + 1);
            retries += 1;
        }
    }
}

/// A failure's text: the URL, the status, and the start of what the collector said.
fn status_error(url: &str, status: StatusCode, text: &str, retries: u32) -> String {
    let mut error = format!("{url}: status {status}");
    let said: String = text.trim().chars().take(200).collect();
    if !said.is_empty() {
        error += &format!(" ({said})");
    }
    if retries > 0 {
        error += &format!(" after {retries} retries");
    }
    error
}

/// `body` gzipped.
fn gzip(body: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut encoder = GzEncoder::new(Vec::with_capacity(body.len() / 4), Level::default());
    encoder.write_all(body)?;
    encoder.finish()
}

/// The wait `Retry-After` asks for, in seconds or as an HTTP date (`now` the clock's
/// time): `None` without one or with one that does not parse.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get("retry-after")?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The wait before retry `n + 1` (from 0): 100 ms doubling up to 2 s, each drawn
/// between half and all of it, so a fleet that lost its collector at once does not
/// come back in step.
fn backoff(n: u32) -> Duration {
    let full = FIRST_BACKOFF
        .saturating_mul(1 << n.min(16))
        .min(MAX_BACKOFF);
    // A random number from the standard library's per-process hash keys.
    let random = RandomState::new().hash_one(Instant::now()) % 1_000;
    full / 2 + full / 2 * u32::try_from(random).unwrap_or(0) / 1_000
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(value: &str) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.insert("retry-after", HeaderValue::from_str(value).unwrap());
        map
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(
            retry_after(&headers("3"), now),
            Some(Duration::from_secs(3))
        );
        let date = httpdate::fmt_http_date(now + Duration::from_secs(7));
        assert_eq!(
            retry_after(&headers(&date), now),
            Some(Duration::from_secs(7))
        );
        // A date already past: retry now.
        let past = httpdate::fmt_http_date(now - Duration::from_secs(7));
        assert_eq!(retry_after(&headers(&past), now), Some(Duration::ZERO));
        assert_eq!(retry_after(&headers("soon"), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn backoff_doubles_within_bounds() {
        for n in 0..40 {
            let full = FIRST_BACKOFF
                .saturating_mul(1 << n.min(16))
                .min(MAX_BACKOFF);
            let wait = backoff(n);
            assert!(wait >= full / 2 && wait <= full, "{n}: {wait:?}");
        }
    }

    #[test]
    fn only_the_specifications_statuses_are_retried() {
        let retried: Vec<u16> = (100..600)
            .filter(|&s| retryable(StatusCode::from_u16(s).unwrap()))
            .collect();
        assert_eq!(retried, [429, 502, 503, 504]);
    }

    #[test]
    fn gzip_round_trips() {
        use std::io::Read;
        let body = vec![7u8; 10_000];
        let gz = gzip(&body).unwrap();
        assert!(gz.len() < 200);
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, body);
    }
}
