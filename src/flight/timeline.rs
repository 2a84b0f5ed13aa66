//! The flight recorder's timelines read into a [`Trace`]: every live thread's recent
//! scopes and the ones it holds open, on the run's one time axis.

use super::trace::{Lane, Span, Trace, Trigger, usable_ticks_per_ns};
use super::triggers::Hit;
use crate::analyze::calibration;
use crate::config;
use crate::record::registry::{self, ThreadShared};
use crate::record::{flight, id};
use crate::report::numbers;
use std::sync::atomic::Ordering::Relaxed;

/// Every live thread's timeline as of now: the scopes it closed within the flight
/// recorder's window ([`Builder::flight_recorder`](crate::Builder::flight_recorder);
/// at most its buffer's entries), and the scopes it holds open, drawn to now and marked
/// open. Empty with the flight recorder off. The trace's zero is the agent's start.
///
/// Reading costs the recording threads nothing: their buffers are read as they write
/// (an entry being overwritten during the read is left out, never torn), and the
/// trace says the span it really covers (later than the window's start where a busy
/// thread's buffer had already wrapped).
///
/// ```
/// use latte::{Id, Mode};
/// use std::time::Duration;
/// static REQUEST: Id = Id::new("doc_timeline_request");
/// static PARSE: Id = Id::new("doc_timeline_parse");
/// let guard = latte::builder()
///     .flight_recorder(Duration::from_secs(10))
///     .final_report(false)
///     .start()?;
/// std::thread::spawn(|| {
///     latte::start(&REQUEST, Mode::Fast);
///     latte::start(&PARSE, Mode::Fast);
///     latte::stop(&PARSE, Mode::Fast);
///     latte::stop(&REQUEST, Mode::Fast);
/// })
/// .join()
/// .unwrap();
/// let trace = latte::flight::timeline();
/// guard.stop()?;
/// // Exited threads keep no timeline: read while the threads live (the trigger
/// // dumps do). Here the main thread's lane is all there is, if it recorded.
/// assert!(trace.covers.0 <= trace.covers.1);
/// # Ok::<(), latte::Error>(())
/// ```
pub fn timeline() -> Trace {
    read(crate::clock::ticks(), None)
}

/// The timelines up to tick `end`, for `trigger` if a sample asked.
pub(crate) fn read(end: u64, trigger: Option<Trigger>) -> Trace {
    let ticks_per_ns = calibration().ticks_per_ns;
    let window = (config::flight_window_ns() as f64 * usable_ticks_per_ns(ticks_per_ns)) as u64;
    let names = id::names();
    let mut reach = Reach {
        from: end.saturating_sub(window),
        end,
        covers_from: end.saturating_sub(window),
    };
    let mut entries = Vec::new();
    let lanes: Vec<Lane> = registry::global()
        .view()
        .live
        .iter()
        .filter(|t| !t.internal())
        .filter_map(|t| lane(t, &names, &mut reach, &mut entries))
        .collect();
    let origin = match flight::ORIGIN.load(Relaxed) {
        0 => lanes
            .iter()
            .flat_map(|l| &l.spans)
            .map(|s| s.start)
            .min()
            .unwrap_or(reach.from),
        tick => tick,
    };
    // Nothing was kept before the agent started.
    Trace {
        origin,
        ticks_per_ns,
        covers: (reach.covers_from.max(origin).min(end), end),
        lanes,
        trigger,
    }
}

/// The ticks a read reaches: from the window's start to `end`, and from where every
/// thread's buffer still holds all it closed.
struct Reach {
    from: u64,
    end: u64,
    covers_from: u64,
}

/// Thread `t`'s lane: its scopes closed within `reach` and those it holds open (none:
/// no lane); raises `reach.covers_from` past the scopes its buffer no longer holds.
/// `entries` is scratch space.
fn lane(
    t: &ThreadShared,
    names: &[&str],
    reach: &mut Reach,
    entries: &mut Vec<flight::Entry>,
) -> Option<Lane> {
    let buffer = t.flight.as_ref()?;
    let name = |idx: u32| {
        names
            .get(idx as usize)
            .map_or_else(|| format!("#{idx}"), |n| (*n).to_owned())
    };
    entries.clear();
    let (first, _) = buffer.read(0, t.exited(), entries);
    if first > 0
        && let Some(oldest) = entries.first()
    {
        // Scopes that closed before the oldest kept one may be gone.
        reach.covers_from = reach.covers_from.max(oldest.end.min(reach.end));
    }
    let closed = entries
        .iter()
        .filter(|e| e.end >= reach.from && e.start <= reach.end)
        .map(|e| Span {
            name: name(e.idx),
            start: e.start,
            end: Some(e.end),
            depth: e.depth,
        });
    let open = t
        .open_stack()
        .into_iter()
        .filter(|f| f.start <= reach.end)
        .map(|f| Span {
            name: name(f.idx),
            start: f.start,
            end: None,
            depth: f.depth,
        });
    let spans: Vec<Span> = closed.chain(open).collect();
    (!spans.is_empty()).then(|| Lane {
        thread: t.name.clone(),
        tid: t.serial,
        spans,
    })
}

/// The timelines as of now, around `hit` if a sample triggered the read: its scope
/// (the newest closed scope of its id on its thread with its length) is the trace's
/// trigger, with the reason in words.
pub(crate) fn around(hit: Option<&Hit>) -> Trace {
    let end = crate::clock::ticks();
    let mut trace = read(end, None);
    let Some(hit) = hit else {
        return trace;
    };
    if let Some((number, at)) = hit.frame {
        frame_trigger(&mut trace, hit, number, at);
        return trace;
    }
    let name = id::names()
        .get(hit.idx as usize)
        .map_or_else(|| format!("#{}", hit.idx), |n| (*n).to_owned());
    let found = trace
        .lanes
        .iter()
        .filter(|l| l.tid == hit.serial)
        .flat_map(|l| &l.spans)
        .filter(|s| s.name == name && s.end.map(|e| e - s.start) == Some(hit.ticks))
        .filter_map(|s| s.end)
        .max();
    let time = |ticks: u64| numbers::time(trace.nanos(ticks as f64));
    let over = match hit.tail {
        Some(q) => format!(
            "over its running p{} of {}",
            quantile_name(q),
            time(hit.threshold)
        ),
        None => format!("over the threshold of {}", time(hit.threshold)),
    };
    let reason = match found {
        Some(_) => format!("{}, {over}", time(hit.ticks)),
        None => format!(
            "{}, {over}; the scope itself is no longer in its thread's timeline",
            time(hit.ticks)
        ),
    };
    trace.trigger = Some(Trigger {
        component: name,
        tid: hit.serial,
        at: found.unwrap_or(end),
        reason,
    });
    trace
}

/// `0.999` as `99.9`.
fn quantile_name(q: f64) -> String {
    let percent = format!("{:.4}", q * 100.0);
    percent
        .trim_end_matches('0')
        .trim_end_matches('.')
        .to_owned()
}

/// Makes frame `number` of `hit`'s thread, ended at tick `at`, the trace's trigger: a
/// scope `frame N` at depth 0 of the thread's lane, the scopes it overlaps one deeper
/// (a frame holds what ran in it), when it still lies in the trace.
fn frame_trigger(trace: &mut Trace, hit: &Hit, number: u64, at: u64) {
    let time = |ticks: u64| numbers::time(trace.nanos(ticks as f64));
    let name = format!("frame {}", numbers::count(number));
    let start = at.saturating_sub(hit.ticks);
    let mut reason = format!(
        "{} long, over the frame budget of {}",
        time(hit.ticks),
        time(hit.threshold)
    );
    if at < trace.covers.0 {
        reason.push_str("; the frame is no longer in its thread's timeline");
    } else {
        let lane = match trace.lanes.iter().position(|l| l.tid == hit.serial) {
            Some(i) => &mut trace.lanes[i],
            None => {
                trace.lanes.push(Lane {
                    thread: format!("thread {}", hit.serial),
                    tid: hit.serial,
                    spans: Vec::new(),
                });
                trace.lanes.last_mut().expect("just pushed")
            }
        };
        for s in &mut lane.spans {
            if s.start < at && s.end.is_none_or(|e| e > start) {
                s.depth += 1;
            }
        }
        lane.spans.push(Span {
            name: name.clone(),
            start,
            end: Some(at),
            depth: 0,
        });
    }
    trace.trigger = Some(Trigger {
        component: name,
        tid: hit.serial,
        at,
        reason,
    });
}
