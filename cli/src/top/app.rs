//! What `top` shows and how keys change it, apart from the terminal: the last
//! interval, each component's p99 over the last minute, the sort, the filter, the
//! folded tree nodes, the connection's state.

use latte::exporter::Interval;
use latte::report::{RecordingOff, Row, RowKind};
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::{Duration, Instant};

mod tree;

/// How far back the p99 sparklines reach, in seconds of intervals.
pub const HISTORY_SECONDS: f64 = 60.0;

/// What the components are sorted by (`s` goes to the next).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sort {
    Total,
    Calls,
    P50,
    P99,
    P999,
    Name,
}

impl Sort {
    pub fn next(self) -> Sort {
        match self {
            Sort::Total => Sort::Calls,
            Sort::Calls => Sort::P50,
            Sort::P50 => Sort::P99,
            Sort::P99 => Sort::P999,
            Sort::P999 => Sort::Name,
            Sort::Name => Sort::Total,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Sort::Total => "TOTAL",
            Sort::Calls => "CALLS/S",
            Sort::P50 => "P50",
            Sort::P99 => "P99",
            Sort::P999 => "P99.9",
            Sort::Name => "COMPONENT",
        }
    }
}

/// Which table fills the screen (`Tab` switches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    Components,
    Tree,
}

/// The endpoint as last seen.
#[derive(Clone, Debug, PartialEq)]
pub enum Link {
    /// No answer yet.
    Connecting,
    /// The last request was answered.
    Up,
    /// Requests fail since `since`: the program is gone (or not serving).
    Gone { since: Instant, error: String },
    /// The last answer was refused: not a live view this `top` reads (another
    /// version, a broken tree).
    Refused { error: String },
}

/// A key `top` acts on, apart from the terminal library's events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Enter,
    Esc,
    Backspace,
    Tab,
    Up,
    Down,
    Left,
    Right,
}

/// What a key asks of the caller beyond the view's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    None,
    Quit,
    /// Switch recording to this.
    Record(bool),
}

/// One table row as drawn: a thread (in per-thread mode) and a component's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Shown<'a> {
    pub thread: Option<String>,
    pub row: &'a Row,
}

pub struct App {
    pub addr: String,
    /// The interval on screen (kept while paused).
    pub view: Option<Interval>,
    /// The newest interval, shown when not paused.
    newest: Option<Interval>,
    /// Per component: (end of interval in seconds of intervals, p99).
    history: HashMap<String, VecDeque<(f64, f64)>>,
    /// Seconds of intervals seen so far.
    clock: f64,
    /// (pid, sequence) of the newest interval.
    seen: Option<(u32, u64)>,
    pub sort: Sort,
    pub filter: Option<String>,
    /// The filter being typed, after `/`.
    pub editing: Option<String>,
    pub paused: bool,
    pub per_thread: bool,
    pub pane: Pane,
    pub selected: usize,
    /// Tree nodes folded, by path.
    folded: BTreeSet<Vec<String>>,
    pub link: Link,
    /// A message for the status line, and when it was set.
    pub message: Option<(Instant, String)>,
}

impl App {
    pub fn new(addr: String) -> App {
        App {
            addr,
            view: None,
            newest: None,
            history: HashMap::new(),
            clock: 0.0,
            seen: None,
            sort: Sort::Total,
            filter: None,
            editing: None,
            paused: false,
            per_thread: false,
            pane: Pane::Components,
            selected: 0,
            folded: BTreeSet::new(),
            link: Link::Connecting,
            message: None,
        }
    }

    /// A new answer of the endpoint.
    pub fn received(&mut self, live: Interval) {
        let key = (live.pid, live.sequence);
        if matches!(self.link, Link::Gone { .. } | Link::Refused { .. }) {
            let again = if self.view.is_some() {
                "reconnected"
            } else {
                "connected"
            };
            self.say(format!("{again} to {} (pid {})", live.program, live.pid));
        }
        self.link = Link::Up;
        if self.seen.is_some_and(|(pid, _)| pid != live.pid) {
            // Another process: its history starts afresh.
            self.history.clear();
            self.clock = 0.0;
        }
        if self.seen != Some(key) {
            self.seen = Some(key);
            self.clock += live.seconds;
            for row in &live.report.all_threads {
                let points = self.history.entry(row.component.clone()).or_default();
                points.push_back((self.clock, row.stats.p99));
            }
            let oldest = self.clock - HISTORY_SECONDS;
            for points in self.history.values_mut() {
                while points.front().is_some_and(|&(t, _)| t <= oldest) {
                    points.pop_front();
                }
            }
            self.history.retain(|_, points| !points.is_empty());
        }
        if !self.paused || self.view.is_none() {
            self.view = Some(live.clone());
        }
        self.newest = Some(live);
    }

    /// A request that failed.
    pub fn failed(&mut self, error: String, now: Instant) {
        match &mut self.link {
            Link::Gone { error: e, .. } => *e = error,
            _ => self.link = Link::Gone { since: now, error },
        }
    }

    /// An answer refused: the view keeps the last figures it read.
    pub fn refused(&mut self, error: String) {
        self.link = Link::Refused { error };
    }

    pub fn say(&mut self, message: String) {
        self.message = Some((Instant::now(), message));
    }

    /// The status message, if still fresh.
    pub fn message(&self) -> Option<&str> {
        self.message
            .as_ref()
            .filter(|(at, _)| at.elapsed() < Duration::from_secs(5))
            .map(|(_, m)| m.as_str())
    }

    /// The p99s of `component` over the last minute, oldest first, each with its
    /// time (seconds before the newest interval's end).
    pub fn history(&self, component: &str) -> Vec<(f64, f64)> {
        self.history
            .get(component)
            .map(|p| p.iter().map(|&(t, v)| (self.clock - t, v)).collect())
            .unwrap_or_default()
    }

    fn matches(&self, component: &str) -> bool {
        let Some(filter) = &self.filter else {
            return true;
        };
        if filter.contains(['*', '?', '[']) {
            glob::Pattern::new(filter).is_ok_and(|p| p.matches(component))
        } else {
            component.to_lowercase().contains(&filter.to_lowercase())
        }
    }

    /// The component rows to draw: filtered, sorted, per thread or over all threads.
    pub fn rows(&self) -> Vec<Shown<'_>> {
        let Some(view) = &self.view else {
            return Vec::new();
        };
        let mut rows: Vec<Shown<'_>> = if self.per_thread {
            view.report
                .threads
                .iter()
                .flat_map(|t| {
                    let name = format!("{}#{}", t.name, t.serial);
                    t.rows.iter().map(move |row| Shown {
                        thread: Some(name.clone()),
                        row,
                    })
                })
                .collect()
        } else {
            view.report
                .all_threads
                .iter()
                .map(|row| Shown { thread: None, row })
                .collect()
        };
        rows.retain(|s| self.matches(&s.row.component));
        let key = |s: &Shown<'_>| match self.sort {
            Sort::Total => s.row.stats.total,
            Sort::Calls => s.row.stats.seen as f64,
            Sort::P50 => s.row.stats.median,
            Sort::P99 => s.row.stats.p99,
            Sort::P999 => s.row.stats.p999,
            Sort::Name => 0.0,
        };
        if self.sort == Sort::Name {
            rows.sort_by(|a, b| {
                a.row
                    .component
                    .cmp(&b.row.component)
                    .then(a.thread.cmp(&b.thread))
            });
        } else {
            // By TOTAL, pulses go last, as in the report's tables: a pulse's TOTAL is
            // the time between pulses, not work.
            let last = |s: &Shown<'_>| self.sort == Sort::Total && s.row.kind == RowKind::Pulse;
            rows.sort_by(|a, b| last(a).cmp(&last(b)).then(key(b).total_cmp(&key(a))));
        }
        rows
    }

    fn lines(&self) -> usize {
        match self.pane {
            Pane::Components => self.rows().len(),
            Pane::Tree => self.tree().len(),
        }
    }

    /// Acts on `key`.
    pub fn key(&mut self, key: Key) -> Action {
        if let Some(text) = &mut self.editing {
            match key {
                Key::Enter => {
                    let text = self.editing.take().unwrap_or_default();
                    self.filter = (!text.is_empty()).then_some(text);
                    self.selected = 0;
                }
                Key::Esc => self.editing = None,
                Key::Backspace => {
                    text.pop();
                }
                Key::Char(c) => text.push(c),
                _ => {}
            }
            return Action::None;
        }
        match key {
            Key::Char('q') | Key::Esc => return Action::Quit,
            Key::Char('s') => self.sort = self.sort.next(),
            Key::Char('/') => self.editing = Some(self.filter.clone().unwrap_or_default()),
            Key::Char('p') => {
                self.paused = !self.paused;
                if !self.paused {
                    self.view = self.newest.clone();
                }
            }
            Key::Char('t') => {
                self.per_thread = !self.per_thread;
                self.selected = 0;
            }
            Key::Tab => {
                self.pane = match self.pane {
                    Pane::Components => Pane::Tree,
                    Pane::Tree => Pane::Components,
                };
                self.selected = 0;
            }
            Key::Char('r') => return self.switch(),
            Key::Up => self.selected = self.selected.saturating_sub(1),
            Key::Down => self.selected = (self.selected + 1).min(self.lines().saturating_sub(1)),
            Key::Left if self.pane == Pane::Tree => self.fold(Some(true)),
            Key::Right if self.pane == Pane::Tree => self.fold(Some(false)),
            Key::Enter | Key::Char(' ') if self.pane == Pane::Tree => self.fold(None),
            _ => {}
        }
        Action::None
    }

    /// `r`: the switch, if the endpoint takes it.
    fn switch(&mut self) -> Action {
        match &self.newest {
            Some(live) if live.control => Action::Record(!live.recording()),
            Some(_) => {
                self.say("this endpoint is read-only: the program enables the switch with Live::control(true)".into());
                Action::None
            }
            None => Action::None,
        }
    }

    /// The switch's answer: recording is now `on`.
    pub fn recording_now(&mut self, on: bool) {
        for live in [&mut self.view, &mut self.newest].into_iter().flatten() {
            let off = &mut live.report.recording_off;
            off.get_or_insert_with(RecordingOff::default).now = !on;
        }
        self.say(format!(
            "recording switched {}",
            if on { "on" } else { "off" }
        ));
    }
}
