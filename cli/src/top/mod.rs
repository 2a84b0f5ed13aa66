//! `top ADDR`: a running program's latencies in the terminal, refreshed every second
//! from its live endpoint (`latte_prometheus::Live`).
//!
//! A fetching thread asks `GET /live` every second (2 s timeout) and hands the answer,
//! or the failure, to the drawing loop; the switch (`r`) is a `POST` on a thread of
//! its own. The loop redraws on every answer and key. A program that stops answering
//! is said to be gone, with the last figures kept on screen; when it answers again
//! (the same process or a new one on the address) the view goes on.
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | the arguments, the terminal, the fetching thread and the loop |
//! | `app.rs` | what is shown and how keys change it (no terminal: unit-tested); `app/tree.rs` the call tree's lines and folding |
//! | `draw.rs` | the screen, drawn with ratatui |

mod app;
mod draw;

use crate::outcome::{Failure, Outcome};
use app::{Action, App, Key};
use clap::Args;
use latte::exporter::Interval;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

/// How often the endpoint is asked.
const REFRESH: Duration = Duration::from_secs(1);
/// How long a request may take.
const TIMEOUT: Duration = Duration::from_secs(2);

#[derive(Args, Debug)]
pub struct TopArgs {
    /// The live endpoint of the program to watch, as HOST:PORT (or a URL), such as
    /// 127.0.0.1:9465.
    pub addr: String,
}

/// What the helper threads tell the loop.
enum News {
    Live(Box<Interval>),
    Failed(String),
    /// An answer this `top` does not read.
    Refused(String),
    Recording(Result<bool, String>),
}

pub fn run(args: &TopArgs) -> Result<Outcome, Failure> {
    let base = base_url(&args.addr)?;
    let (tx, rx) = mpsc::channel();
    let fetcher = tx.clone();
    let url = format!("{base}/live");
    std::thread::Builder::new()
        .name("top-fetch".into())
        .spawn(move || fetch_loop(&url, &fetcher))
        .map_err(|e| Failure(format!("cannot start the fetching thread: {e}")))?;
    let mut terminal = ratatui::try_init().map_err(|e| Failure(format!("not a terminal: {e}")))?;
    let result = event_loop(&mut terminal, App::new(args.addr.clone()), &rx, &tx, &base);
    ratatui::restore();
    result.map(|()| Outcome::Done)
}

/// `http://HOST:PORT` from what the user typed.
fn base_url(addr: &str) -> Result<String, Failure> {
    let addr = addr.trim_end_matches('/');
    let base = if addr.contains("://") {
        addr.to_owned()
    } else {
        format!("http://{addr}")
    };
    if !base.starts_with("http://") {
        return Err(Failure(format!(
            "`{addr}`: the live endpoint speaks plain HTTP; give HOST:PORT, such as 127.0.0.1:9465"
        )));
    }
    Ok(base)
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(TIMEOUT))
        .http_status_as_error(false)
        .build()
        .into()
}

/// Asks `url` every [`REFRESH`] until the loop is gone.
fn fetch_loop(url: &str, news: &Sender<News>) {
    let agent = agent();
    loop {
        let started = Instant::now();
        let answer = fetch(&agent, url);
        if news.send(answer).is_err() {
            return;
        }
        std::thread::sleep(REFRESH.saturating_sub(started.elapsed()));
    }
}

/// One request of `url`: the live view, a failure, or an answer refused.
fn fetch(agent: &ureq::Agent, url: &str) -> News {
    let answer = (|| {
        let mut response = agent.get(url).call().map_err(short_error)?;
        let status = response.status();
        let body = response
            .body_mut()
            .read_to_string()
            .map_err(|e| e.to_string())?;
        if !status.is_success() {
            return Err(format!("{status}: {}", body.trim()));
        }
        Ok(body)
    })();
    match answer.map(|body| live_view(&body)) {
        Ok(Ok(live)) => News::Live(Box::new(live)),
        Ok(Err(e)) => News::Refused(e),
        Err(e) => News::Failed(e),
    }
}

/// The interval in `body`, refused, with what is wrong, unless it is one this `top`
/// reads: of [`Interval::VERSION`], its tree's links fitting the list (depth first: a
/// root at depth 0, any other node under a node before it, one level deeper).
fn live_view(body: &str) -> Result<Interval, String> {
    let value: serde_json::Value =
        serde_json::from_str(body).map_err(|e| format!("not a latte live view: {e}"))?;
    match value.get("version").map(serde_json::Value::as_u64) {
        Some(Some(v)) if v == u64::from(Interval::VERSION) => {}
        Some(Some(v)) => {
            return Err(format!(
                "a live view of version {v}; this top reads version {}",
                Interval::VERSION
            ));
        }
        _ => return Err("not a latte live view: no `version`".into()),
    }
    let live: Interval =
        serde_json::from_value(value).map_err(|e| format!("not a latte live view: {e}"))?;
    let tree = &live.report.tree;
    for (i, node) in tree.iter().enumerate() {
        let fits = match node.parent {
            None => node.depth == 0,
            Some(p) => p < i && node.depth == tree[p].depth + 1,
        };
        if !fits {
            return Err(format!(
                "`tree[{i}]` (parent {:?}, depth {}) does not fit a tree of {} nodes listed \
                 depth first",
                node.parent,
                node.depth,
                tree.len()
            ));
        }
    }
    Ok(live)
}

/// A transport error as a few words (`connection refused`).
fn short_error(e: ureq::Error) -> String {
    match e {
        ureq::Error::Io(io) => io.kind().to_string(),
        other => other.to_string(),
    }
}

/// Posts the switch on a thread of its own; the answer comes as news.
fn switch(base: &str, on: bool, news: &Sender<News>) {
    let url = format!("{base}/recording/{}", if on { "on" } else { "off" });
    let news = news.clone();
    let _ = std::thread::Builder::new()
        .name("top-switch".into())
        .spawn(move || {
            let answer = (|| {
                let mut response = agent().post(&url).send_empty().map_err(short_error)?;
                let body = response
                    .body_mut()
                    .read_to_string()
                    .map_err(|e| e.to_string())?;
                if !response.status().is_success() {
                    return Err(body.trim().to_owned());
                }
                let state: serde_json::Value =
                    serde_json::from_str(&body).map_err(|e| e.to_string())?;
                state["on"]
                    .as_bool()
                    .ok_or_else(|| format!("unexpected answer {body}"))
            })();
            let _ = news.send(News::Recording(answer));
        });
}

fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    mut app: App,
    rx: &Receiver<News>,
    tx: &Sender<News>,
    base: &str,
) -> Result<(), Failure> {
    let failed = |e: std::io::Error| Failure(format!("the terminal failed: {e}"));
    loop {
        terminal.draw(|f| draw::draw(f, &app)).map_err(failed)?;
        if event::poll(Duration::from_millis(100)).map_err(failed)? {
            match key_of(event::read().map_err(failed)?) {
                None => {}
                Some(None) => return Ok(()),
                Some(Some(key)) => match app.key(key) {
                    Action::Quit => return Ok(()),
                    Action::Record(on) => switch(base, on, tx),
                    Action::None => {}
                },
            }
        }
        while let Ok(news) = rx.try_recv() {
            match news {
                News::Live(live) => app.received(*live),
                News::Failed(e) => app.failed(e, Instant::now()),
                News::Refused(e) => app.refused(e),
                News::Recording(Ok(on)) => app.recording_now(on),
                News::Recording(Err(e)) => app.say(format!("the switch failed: {e}")),
            }
        }
    }
}

/// The key an event is: `None` for an event `top` ignores, `Some(None)` for
/// `Ctrl-C`.
fn key_of(event: Event) -> Option<Option<Key>> {
    let Event::Key(k) = event else {
        return None;
    };
    if k.kind != KeyEventKind::Press {
        return None;
    }
    if k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('c') {
        return Some(None);
    }
    let key = match k.code {
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Tab => Key::Tab,
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::Left => Key::Left,
        KeyCode::Right => Key::Right,
        _ => return None,
    };
    Some(Some(key))
}

#[cfg(test)]
mod tests;
