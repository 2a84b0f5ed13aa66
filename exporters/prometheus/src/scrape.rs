//! The `/metrics` route: answers from a fresh whole-run report (asked of the agent
//! through its [`Handle`] with a bounded wait, and cached briefly so a burst of scrapes
//! costs the drain thread one report), in the format the scraper asks for
//! ([`Format`](super::format::Format)).

use crate::format::Format;
use crate::http::{Request, Response};
use crate::serve::Route;
use latte::Report;
use latte::exporter::{Buckets, Handle, MetricSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a report serves scrapes before the agent is asked again.
const CACHE: Duration = Duration::from_millis(50);
/// The longest a scrape waits for the agent's report (then it is a 503).
pub(crate) const REPORT_WAIT: Duration = Duration::from_secs(2);

/// What the connections share: the way to the agent and the cached report.
struct Endpoint {
    agent: Handle,
    buckets: Buckets,
    by_thread: bool,
    cached: Option<(Instant, Arc<Report>)>,
}

/// The route of `/metrics`, from the reports `agent` gives.
pub(crate) fn route(agent: Handle, buckets: Buckets, by_thread: bool) -> Route {
    let endpoint = Mutex::new(Endpoint {
        agent,
        buckets,
        by_thread,
        cached: None,
    });
    Arc::new(move |request| answer(&endpoint, request))
}

fn answer(endpoint: &Mutex<Endpoint>, request: &Request) -> Response {
    match (request.get, request.path.as_str()) {
        (true, "/metrics") => {
            // A panic elsewhere cannot leave the cache half-written: use it anyway.
            let mut endpoint = endpoint.lock().unwrap_or_else(|e| e.into_inner());
            let format = Format::negotiate(request.accept.as_deref());
            match endpoint.body(format) {
                Some(body) => Response::ok(format.content_type(), body),
                None => Response::error(503, "latte: the agent did not answer"),
            }
        }
        (false, "/metrics") => Response::error(405, "GET only"),
        _ => Response::error(404, "latte serves /metrics only"),
    }
}

impl Endpoint {
    /// The current metrics in `format`, `None` if the agent did not answer in time.
    fn body(&mut self, format: Format) -> Option<Vec<u8>> {
        let report = match &self.cached {
            Some((at, report)) if at.elapsed() < CACHE => report.clone(),
            _ => {
                let report = self.agent.whole_run(REPORT_WAIT)?;
                self.cached = Some((Instant::now(), report.clone()));
                report
            }
        };
        let set = MetricSet::of(&report, &self.buckets, self.by_thread);
        Some(format.encode(&set))
    }
}
