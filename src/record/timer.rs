//! [`Timer`]: a scope measured without the thread's stack, which may close on another
//! thread.

use super::Id;
#[cfg(feature = "record")]
use super::{Sample, local, sample};
#[cfg_attr(not(feature = "record"), allow(unused_imports))]
use crate::clock::{self, Mode};

/// A scope measured without the thread's stack: it may close on another thread and
/// interleave freely with other scopes. It is the way to time a message from the
/// thread that produced it to the thread that handles it (and what an `async fn`
/// needs: its future can move between threads, and other tasks run on the same thread
/// between its polls).
///
/// The sample is recorded, under `id`, on the thread where the timer drops, with the
/// same (start mode, stop mode) kind as a stack scope, so calibration treats it alike.
/// Dropping it records; it measures wall time from creation to drop.
///
/// # Across threads
///
/// A `Timer<'static>` is `Send`, 32 bytes and plain data (moving it copies four words;
/// it allocates nothing and holds no lock), so it travels inside the message: start it
/// where the message is made, drop it where the message is handled. Starting it reads
/// the counter once and notes the thread (the address of a thread-local: one
/// instruction); dropping it reads the counter once and stores the delta in the
/// handling thread's ring, exactly as a `latte_stop!` does.
///
/// Two cores' counters may disagree (an unsynchronised TSC, a migrated virtual CPU):
/// a delta that appears to go backwards, or jumps past [`Sample::MAX_TICKS`], is
/// discarded and counted as `cross_core` in `collect::Anomalies`
/// when the timer closed on another thread than it started on (or both reads were
/// Mid/Hard and named two CPUs), and as `clock_anomalies` otherwise. The thread is
/// only compared for such a delta, so an ordinary drop costs nothing more. A thread
/// that starts after the timer's thread exited may reuse its mark: its implausible
/// deltas are then counted as clock anomalies.
///
/// ```
/// use latte::{Id, Mode, Timer};
/// static QUEUE: Id = Id::new("doc_timer_queue");
///
/// struct Order {
///     qty: u64,
///     timer: Timer<'static>, // from the producer's send to the consumer's handling
/// }
///
/// let (tx, rx) = std::sync::mpsc::channel::<Order>();
/// let consumer = std::thread::spawn(move || {
///     let mut filled = 0;
///     for order in rx {
///         filled += order.qty;
///         drop(order.timer); // recorded here, on the consumer thread
///     }
///     filled
/// });
/// for qty in 1..=100 {
///     let timer = Timer::start(&QUEUE, Mode::Fast, Mode::Fast);
///     tx.send(Order { qty, timer }).unwrap();
/// }
/// drop(tx);
/// assert_eq!(consumer.join().unwrap(), 5_050);
/// assert_eq!(latte::snapshot("doc_timer_queue").len(), 100);
/// ```
///
/// # Stopping early, cancelling
///
/// [`stop`](Timer::stop) records at once, as the drop would, and [`cancel`](Timer::cancel)
/// makes sure nothing is recorded; either way the timer stays where it is, spent, and
/// its drop records nothing. Both take `&mut self`, so a timer inside a message is
/// stopped in place and the message stays whole: `order.timer.stop()` followed by
/// `forward.send(order)` compiles, where `drop(order.timer)` moves the timer out of
/// the message and makes the next use of `order` an error (E0382, use of a partially
/// moved value). A cancel is not misuse: it is counted per id, on the thread that
/// cancels, as `collect::Unpaired::cancelled_timers`,
/// and the report lists it as information, not among the anomalies.
#[must_use = "the timer records when it drops (or at `stop`)"]
#[derive(Debug)]
pub struct Timer<'a> {
    id: &'a Id,
    /// The Start's tag (`local::tag`), with the stop mode at the sample's stop bits.
    tag: u64,
    start: u64,
    /// The starting thread's `local::thread_mark`, or [`SPENT`] once the timer has
    /// stopped or been cancelled (and always without the `record` feature).
    thread: usize,
}

/// The `thread` of a timer that records nothing more: a thread mark is the address of
/// a thread-local, never 0.
const SPENT: usize = 0;

impl<'a> Timer<'a> {
    /// Starts timing `id`; `stop_mode` is the mode of the read when it drops.
    ///
    /// ```
    /// use latte::{Id, Mode, Timer};
    /// static JOB: Id = Id::new("doc_timer");
    /// let timer = Timer::start(&JOB, Mode::Fast, Mode::Mid);
    /// std::thread::spawn(move || drop(timer)).join().unwrap(); // closes on another thread
    /// assert_eq!(latte::snapshot("doc_timer").len(), 1);
    /// ```
    #[inline(always)]
    pub fn start(id: &'a Id, start_mode: Mode, stop_mode: Mode) -> Timer<'a> {
        #[cfg(feature = "record")]
        let (tag, start, thread) = {
            let thread = thread_mark();
            let now = clock::read(start_mode);
            let stop = (stop_mode as u64) << sample::STOP_SHIFT;
            (
                sample::tag(id.index(), start_mode, now) | stop | super::switch::paused_bit(),
                now.ticks,
                thread,
            )
        };
        #[cfg(not(feature = "record"))]
        let (tag, start, thread) = {
            let _ = (start_mode, stop_mode);
            (0, 0, 0)
        };
        Timer {
            id,
            tag,
            start,
            thread,
        }
    }

    /// The timer's words, to keep it where a `Timer` cannot go (the `tracing` bridge
    /// keeps a span's lifetime in atomics); [`from_words`](Self::from_words) makes the
    /// same timer again. Nothing is recorded here.
    #[cfg(feature = "tracing")]
    pub(crate) fn into_words(self) -> (&'a Id, [u64; 3]) {
        let timer = core::mem::ManuallyDrop::new(self);
        (timer.id, [timer.tag, timer.start, timer.thread as u64])
    }

    /// The timer [`into_words`](Self::into_words) gave the words of.
    #[cfg(feature = "tracing")]
    pub(crate) fn from_words(id: &'a Id, [tag, start, thread]: [u64; 3]) -> Timer<'a> {
        Timer {
            id,
            tag,
            start,
            thread: thread as usize,
        }
    }

    /// Stops the timer now and records its sample, as dropping it would (on the
    /// calling thread); the timer stays where it is, spent: its drop records nothing.
    ///
    /// Returns the ticks it measured (raw counter ticks, stop read minus start read,
    /// before any overhead correction; the report's calibration converts them), or
    /// `None` when nothing was measured: the timer was already stopped or cancelled,
    /// the delta was implausible (discarded and counted, see above), or the `record`
    /// feature is off.
    ///
    /// ```
    /// use latte::{Id, Mode, Timer};
    /// static QUEUE: Id = Id::new("doc_timer_stop");
    ///
    /// struct Order {
    ///     qty: u64,
    ///     queued: Timer<'static>,
    /// }
    ///
    /// let (tx, rx) = std::sync::mpsc::channel::<Order>();
    /// tx.send(Order { qty: 5, queued: Timer::start(&QUEUE, Mode::Fast, Mode::Fast) }).unwrap();
    /// let (forward, forwarded) = std::sync::mpsc::channel::<Order>();
    /// let mut order = rx.recv().unwrap();
    /// let ticks = order.queued.stop(); // the queue wait ends here ...
    /// assert!(ticks.is_some());
    /// forward.send(order).unwrap(); // ... and the message is still whole
    /// let order = forwarded.recv().unwrap();
    /// assert_eq!(order.qty, 5);
    /// drop(order); // the spent timer records nothing more
    /// assert_eq!(latte::snapshot("doc_timer_stop").len(), 1);
    /// ```
    #[inline]
    pub fn stop(&mut self) -> Option<u64> {
        if self.thread == SPENT {
            return None;
        }
        let ticks = self.close();
        self.thread = SPENT;
        ticks
    }

    /// Cancels the timer: it records nothing, now or when it drops. The cancel is
    /// counted under the timer's id on the calling thread
    /// (`collect::Unpaired::cancelled_timers`),
    /// as information: a cancel is not misuse. Cancelling a timer already stopped or
    /// cancelled does nothing. Costs no counter read; the count is a cold path (the
    /// first cancel of an id on a thread allocates, later ones do not).
    ///
    /// ```
    /// use latte::{Id, Mode, Timer};
    /// static FETCH: Id = Id::new("doc_timer_cancel");
    /// let mut timer = Timer::start(&FETCH, Mode::Fast, Mode::Fast);
    /// let cache_hit = true;
    /// if cache_hit {
    ///     timer.cancel(); // a hit is not the latency being measured
    /// }
    /// drop(timer);
    /// assert!(latte::snapshot("doc_timer_cancel").is_empty());
    /// let capture = latte::capture();
    /// let me = capture.thread(std::thread::current().name().unwrap()).unwrap();
    /// assert_eq!(me.unpaired("doc_timer_cancel").cancelled_timers, 1);
    /// assert_eq!(me.anomalies.total(), 0);
    /// ```
    pub fn cancel(&mut self) {
        if self.thread == SPENT {
            return;
        }
        self.thread = SPENT;
        #[cfg(feature = "record")]
        {
            let idx = self.id.index();
            local::with(|l| l.cancelled(idx));
        }
    }

    /// Records the sample (the drop, or `stop`) and returns the delta when plausible.
    #[inline(always)]
    fn close(&self) -> Option<u64> {
        #[cfg(feature = "record")]
        {
            let mode = Mode::from_bits(self.tag >> sample::STOP_SHIFT);
            let now = clock::read(mode);
            let idx = self.id.index();
            let (tag, start, thread) = (self.tag, self.start, self.thread);
            let delta = now.ticks.wrapping_sub(start);
            local::with(
                #[inline(always)]
                |l| {
                    // The same test `store` makes: only an implausible delta asks
                    // which thread this is.
                    if delta > Sample::MAX_TICKS && thread != thread_mark() {
                        return l.implausible(true);
                    }
                    l.finish(idx, (tag, start), sample::TIMER, mode, now);
                },
            );
            (delta <= Sample::MAX_TICKS).then_some(delta)
        }
        #[cfg(not(feature = "record"))]
        None
    }
}

impl Drop for Timer<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        if self.thread != SPENT {
            self.close();
        }
    }
}

#[cfg(feature = "record")]
thread_local! {
    /// A byte whose address names the thread, for [`thread_mark`]. No destructor, so
    /// reading its address is one instruction on the usual targets.
    static MARK: u8 = const { 0 };
}

/// A number that differs between threads alive at the same time (the address of a
/// thread-local): how a `Timer` learns, when its delta is implausible, whether it
/// closed on another thread. A thread that starts after another exited may reuse it.
#[cfg(feature = "record")]
#[inline(always)]
pub(super) fn thread_mark() -> usize {
    MARK.with(|m| std::ptr::from_ref(m).addr())
}
