//! One connection to an endpoint (`/metrics`, the live view): read the request head within limits, parse it with
//! `httparse` (method, path, `Accept`), write one response, close. Every step is bounded, so no client can hold
//! the connection's thread for long, and none can make it allocate what it asks for:
//!
//! - the head must arrive within [`HEAD_DEADLINE`] and fit in [`HEAD_LIMIT`] bytes
//!   (431 past it, 400 for what does not parse);
//! - a body is never read, whatever `Content-Length` says;
//! - the answer is written within [`WRITE_DEADLINE`], and says `Connection: close`,
//!   so a client that pipelines requests and never reads gets one answer, not a queue.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

/// Longest request head read (request line and headers).
pub(super) const HEAD_LIMIT: usize = 8 * 1024;
/// Time a client has to send the whole head, from the connection's acceptance.
pub(super) const HEAD_DEADLINE: Duration = Duration::from_secs(2);
/// Time the answer may take to write (a client that does not read loses it).
pub(super) const WRITE_DEADLINE: Duration = Duration::from_secs(2);
/// Headers a request may carry.
const MAX_HEADERS: usize = 64;

/// The part of a request the endpoint routes on.
pub(super) struct Request {
    /// Whether the method is `GET`.
    pub(super) get: bool,
    /// Whether the method is `POST`.
    pub(super) post: bool,
    /// The path, without a query.
    pub(super) path: String,
    /// The `Accept` header, if there is one (the first, if several).
    pub(super) accept: Option<String>,
}

/// An answer: status, content type, body.
pub(super) struct Response {
    status: u16,
    content_type: &'static str,
    body: Vec<u8>,
}

impl Response {
    /// A `200 OK` with `body` of type `content_type`.
    pub(super) fn ok(content_type: &'static str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status: 200,
            content_type,
            body: body.into(),
        }
    }

    /// An error status with a one-line plain-text explanation.
    pub(super) fn error(status: u16, text: &str) -> Response {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            body: format!("{text}\n").into_bytes(),
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let reason = match self.status {
            200 => "OK",
            400 => "Bad Request",
            403 => "Forbidden",
            404 => "Not Found",
            405 => "Method Not Allowed",
            431 => "Request Header Fields Too Large",
            _ => "Service Unavailable",
        };
        let mut out = format!(
            "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.status,
            self.content_type,
            self.body.len()
        )
        .into_bytes();
        out.extend_from_slice(&self.body);
        out
    }
}

/// Why no request came.
enum Head {
    /// The head did not fit in [`HEAD_LIMIT`] bytes or [`MAX_HEADERS`] headers.
    TooLarge,
    /// It is not HTTP.
    Malformed,
    /// The client closed, failed or ran out of time: nothing to answer.
    Gone,
}

/// Serves one connection: reads its request head, answers it with `route`, closes.
pub(super) fn serve(mut stream: TcpStream, route: impl FnOnce(&Request) -> Response) {
    let accepted = Instant::now();
    // An accepted socket is blocking on Linux whatever the listener is; make sure.
    if stream.set_nonblocking(false).is_err() {
        return;
    }
    let response = match read_head(&mut stream, accepted + HEAD_DEADLINE) {
        Ok(request) => route(&request),
        Err(Head::TooLarge) => Response::error(431, "request head too large"),
        Err(Head::Malformed) => Response::error(400, "not an HTTP request"),
        Err(Head::Gone) => return,
    };
    write_within(
        &mut stream,
        &response.bytes(),
        Instant::now() + WRITE_DEADLINE,
    );
    let _ = stream.shutdown(Shutdown::Write);
}

fn read_head(stream: &mut TcpStream, deadline: Instant) -> Result<Request, Head> {
    let mut buf = vec![0u8; HEAD_LIMIT];
    let mut len = 0;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return Err(Head::Gone);
        }
        match stream.read(&mut buf[len..]) {
            Ok(0) => return Err(Head::Gone),
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return Err(Head::Gone),
        }
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(&buf[..len]) {
            Ok(httparse::Status::Complete(_)) => {
                let path = request.path.unwrap_or("");
                let accept = request
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case("accept"))
                    .map(|h| String::from_utf8_lossy(h.value).into_owned());
                return Ok(Request {
                    get: request.method == Some("GET"),
                    post: request.method == Some("POST"),
                    path: path.split('?').next().unwrap_or("").to_owned(),
                    accept,
                });
            }
            Ok(httparse::Status::Partial) if len < HEAD_LIMIT => {}
            Ok(httparse::Status::Partial) | Err(httparse::Error::TooManyHeaders) => {
                return Err(Head::TooLarge);
            }
            Err(_) => return Err(Head::Malformed),
        }
    }
}

/// Writes `bytes` unless the deadline passes first (a client that reads slowly or not
/// at all loses the rest).
fn write_within(stream: &mut TcpStream, mut bytes: &[u8], deadline: Instant) {
    while !bytes.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_write_timeout(Some(left)).is_err() {
            return;
        }
        match stream.write(bytes) {
            Ok(0) => return,
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// Sends `request` to a connection served by [`serve`] (whose route answers 200
    /// with the path) and returns what came back.
    fn exchange(request: &[u8]) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        let served = std::thread::spawn(move || {
            serve(server, |r| {
                let accept = r.accept.as_deref().unwrap_or("-");
                Response::ok("text/plain", format!("{} {} {accept}", r.get, r.path))
            });
        });
        // The server may answer and close before all of a long request is sent.
        let _ = client.write_all(request);
        client
            .set_read_timeout(Some(HEAD_DEADLINE + Duration::from_secs(5)))
            .unwrap();
        let mut answer = Vec::new();
        let _ = client.read_to_end(&mut answer);
        served.join().unwrap();
        String::from_utf8_lossy(&answer).into_owned()
    }

    #[test]
    fn a_request_is_routed_by_method_and_path_and_answered_once() {
        let answer = exchange(b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n");
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        assert!(answer.contains("Connection: close\r\n"), "{answer}");
        assert!(answer.ends_with("\r\n\r\ntrue /metrics -"), "{answer}");
        let answer = exchange(b"POST /metrics HTTP/1.1\r\n\r\n");
        assert!(answer.ends_with("false /metrics -"), "{answer}");
        let answer = exchange(b"GET /metrics HTTP/1.1\r\naccept: text/plain\r\n\r\n");
        assert!(answer.ends_with("true /metrics text/plain"), "{answer}");
    }

    #[test]
    fn a_body_is_never_waited_for_whatever_its_length() {
        for length in ["100000", "100000000000000"] {
            let request = format!("GET /metrics HTTP/1.1\r\nContent-Length: {length}\r\n\r\n");
            let answer = exchange(request.as_bytes());
            assert!(answer.starts_with("HTTP/1.1 200 OK"), "{length}: {answer}");
        }
    }

    #[test]
    fn a_head_past_the_limit_is_431_and_garbage_is_400() {
        let mut huge = b"GET /metrics HTTP/1.1\r\nX-Huge: ".to_vec();
        huge.resize(HEAD_LIMIT + 1, b'a');
        assert!(exchange(&huge).starts_with("HTTP/1.1 431 "));
        let many: String = (0..MAX_HEADERS + 1)
            .map(|i| format!("X-{i}: 1\r\n"))
            .collect();
        let request = format!("GET /metrics HTTP/1.1\r\n{many}\r\n");
        assert!(exchange(request.as_bytes()).starts_with("HTTP/1.1 431 "));
        assert!(exchange(&[0, 255, 13, 10, 13, 10]).starts_with("HTTP/1.1 400 "));
    }

    #[test]
    fn a_client_that_sends_half_a_head_gets_nothing_after_the_deadline() {
        assert_eq!(exchange(b"GET /met"), "");
    }
}
