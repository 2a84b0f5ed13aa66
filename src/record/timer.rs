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
/// discarded and counted as `cross_core` in [`Anomalies`](crate::report::Anomalies)
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
#[must_use = "the timer records when it drops"]
#[derive(Debug)]
pub struct Timer<'a> {
    id: &'a Id,
    /// The Start's tag (`local::tag`), with the stop mode at the sample's stop bits.
    tag: u64,
    start: u64,
    /// The starting thread's [`local::thread_mark`].
    thread: usize,
}

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
            let thread = local::thread_mark();
            let now = clock::read(start_mode);
            let stop = (stop_mode as u64) << sample::STOP_SHIFT;
            (
                local::tag(id.index(), start_mode, now) | stop,
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
}

impl Drop for Timer<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(feature = "record")]
        {
            let mode = Mode::from_bits(self.tag >> sample::STOP_SHIFT);
            let now = clock::read(mode);
            let idx = self.id.index();
            let (tag, start, thread) = (self.tag, self.start, self.thread);
            local::with(
                #[inline(always)]
                |l| {
                    // The same test `store` makes: only an implausible delta asks
                    // which thread this is.
                    if now.ticks.wrapping_sub(start) > Sample::MAX_TICKS
                        && thread != local::thread_mark()
                    {
                        return l.implausible(true);
                    }
                    l.finish(idx, tag, start, mode, now);
                },
            );
        }
    }
}
