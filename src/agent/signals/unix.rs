//! latte's SIGTERM and SIGINT handler, and the `latte-signals` thread it wakes.
//!
//! The handler, in order:
//!
//! 1. If the signal had a handler when latte installed its own, that handler is called
//!    (as signal-hook's registry calls its predecessor) and nothing else happens: the
//!    program handles the signal.
//! 2. If latte's handler is no longer the installed one (`sigaction` with no new
//!    action reads the current one), a handler installed later called it as its
//!    predecessor (signal-hook's registry does, and so tokio): the program handles the
//!    signal, and latte does nothing.
//! 3. Otherwise, if a running agent asked for the report (`signals::claim`, a swap,
//!    so a second signal finds it gone) and this process has the listening thread, one
//!    byte to the thread's pipe wakes it; else the signal takes its default course at
//!    once (`emulate_default_handler`: default disposition, unblock, raise).
//!
//! It calls only `sigaction`, `getpid`, `write`, the chained handler and
//! `emulate_default_handler` (restoring the default disposition, `sigprocmask`,
//! `raise`), reads and swaps lock-free atomics, and saves and restores `errno`: no
//! allocation, no lock.
#![allow(unsafe_code)] // sigaction(2), write(2), errno, and calling the chained handler

use crate::agent::running;
use crate::error::Error;
use crate::record::fork::PerProcess;
use libc::{c_int, c_void, siginfo_t};
use std::io::Read;
use std::os::fd::IntoRawFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicUsize, Ordering};

/// The signals latte handles; `SLOTS[i]` is about `SIGNALS[i]`.
const SIGNALS: [c_int; 2] = [libc::SIGTERM, libc::SIGINT];

/// What latte knows of one signal's handling.
struct Slot {
    /// latte's handler is installed for the signal, in this process or the one it was
    /// forked from (a child inherits the disposition, and must not chain to itself).
    installed: AtomicBool,
    /// The handler latte's replaced (`sa_sigaction`): `SIG_DFL`, or the program's.
    prev: AtomicUsize,
    /// Whether that handler takes three arguments (`SA_SIGINFO`).
    prev_siginfo: AtomicBool,
}

impl Slot {
    const fn new() -> Slot {
        Slot {
            installed: AtomicBool::new(false),
            prev: AtomicUsize::new(libc::SIG_DFL),
            prev_siginfo: AtomicBool::new(false),
        }
    }

    fn remember(&self, prev: &libc::sigaction) {
        let siginfo = prev.sa_flags & libc::SA_SIGINFO != 0;
        self.prev_siginfo.store(siginfo, Ordering::Release);
        self.prev.store(prev.sa_sigaction, Ordering::Release);
    }
}

static SLOTS: [Slot; 2] = [Slot::new(), Slot::new()];

/// The process whose `latte-signals` thread listens (0: none). A forked child inherits
/// the handler but not the thread: its signals take their default course at once.
static LISTENER: AtomicU32 = AtomicU32::new(0);

/// The write end of the listening thread's pipe (non-blocking; -1: none).
static WAKE: AtomicI32 = AtomicI32::new(-1);

/// The handler installed, and the listener started, at most once per process (a
/// forked child starts its own listener), with the error it could not start with.
static STARTED: PerProcess<Result<(), Error>> = PerProcess::new(start);

/// Makes sure latte handles SIGTERM and SIGINT in this process.
pub(in crate::agent) fn listen() -> Result<(), Error> {
    STARTED.get().clone()
}

fn start() -> Result<(), Error> {
    let failed = |e| Error::Signals(Arc::new(e));
    let (mut read, write) = UnixStream::pair().map_err(failed)?;
    write.set_nonblocking(true).map_err(failed)?; // the handler never blocks
    spawn_deaf(move || {
        let mut signal = [0u8];
        // Nothing else writes to the pipe; a read error other than an interruption
        // leaves the signals to their default course.
        loop {
            match read.read(&mut signal) {
                Ok(1) => on_signal(c_int::from(signal[0])),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                _ => break,
            }
        }
        LISTENER.store(0, Ordering::Release);
    })
    .map_err(|e| Error::Spawn(Arc::new(e)))?;
    // The write end stays open for the life of the process.
    WAKE.store(write.into_raw_fd(), Ordering::Release);
    LISTENER.store(std::process::id(), Ordering::Release);
    for (slot, signal) in SLOTS.iter().zip(SIGNALS) {
        install(slot, signal).map_err(failed)?;
    }
    Ok(())
}

/// Starts the `latte-signals` thread with every signal blocked but those a fault raises
/// on the faulting thread: a signal sent to the process (a program's timer, its
/// `SIGUSR1`, SIGTERM itself) is delivered to one of the program's threads, never to
/// this one, which lives as long as the process and is woken through its pipe.
/// (`emulate_default_handler` unblocks the one signal it raises.)
fn spawn_deaf(listen: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    let (mut deaf, mut old) = (empty_action().sa_mask, empty_action().sa_mask);
    // SAFETY: `deaf` and `old` are valid, owned `sigset_t`s; pthread_sigmask(3) changes
    // the calling thread's mask only, and the new thread inherits it. The caller's mask
    // is restored below, whatever the spawn did: a signal for it meanwhile is pending,
    // and delivered then.
    unsafe {
        libc::sigfillset(&mut deaf);
        for fault in [
            libc::SIGSEGV,
            libc::SIGBUS,
            libc::SIGFPE,
            libc::SIGILL,
            libc::SIGTRAP,
        ] {
            libc::sigdelset(&mut deaf, fault);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &deaf, &mut old);
    }
    let spawned = std::thread::Builder::new()
        .name("latte-signals".into())
        .spawn(listen);
    // SAFETY: as above; `old` is the mask the caller had.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    spawned.map(drop)
}

/// On the `latte-signals` thread: the final report (bounded in time), then the
/// signal's default course.
fn on_signal(signal: c_int) {
    let timeout = super::report_timeout();
    // What the guard's drop would write; an error has nowhere to go.
    let _ = running::stop_within(timeout);
    emulate_default_handler(signal);
}

/// The value latte's handler has in `sa_sigaction`.
fn ours() -> usize {
    handler as extern "C" fn(c_int, *mut siginfo_t, *mut c_void) as usize
}

/// Installs latte's handler for `signal`, once per process image, unless the process
/// ignores the signal.
fn install(slot: &Slot, signal: c_int) -> std::io::Result<()> {
    if slot.installed.load(Ordering::Acquire) {
        return Ok(()); // by an earlier start, or in the process this one was forked from
    }
    let mut old = empty_action();
    // SAFETY: with no new action, sigaction(2) only writes the current one into `old`,
    // a valid, exclusively borrowed `libc::sigaction`.
    if unsafe { libc::sigaction(signal, std::ptr::null(), &mut old) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if old.sa_sigaction == libc::SIG_IGN {
        return Ok(()); // ignored, as `nohup` or a background job leave it: it stays so
    }
    // Remembered before latte's handler can run, which may call it.
    slot.remember(&old);
    let mut new = empty_action();
    new.sa_sigaction = ours();
    new.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
    let mut replaced = empty_action();
    // SAFETY: `new` is a valid action whose handler is async-signal-safe (see `handler`)
    // and `replaced` a valid place for the previous one; `sa_mask` is empty.
    if unsafe { libc::sigaction(signal, &new, &mut replaced) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // What was really replaced, had another thread changed it since the look.
    slot.remember(&replaced);
    slot.installed.store(true, Ordering::Release);
    Ok(())
}

/// A `libc::sigaction` with no handler, no flags and an empty mask.
fn empty_action() -> libc::sigaction {
    // SAFETY: `libc::sigaction` is a plain C struct for which all-zero bytes are valid
    // (SIG_DFL, no flags; an all-zero `sigset_t` is the empty set where it is not
    // emptied by `sigemptyset`).
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: `sa_mask` is a valid `sigset_t` owned by `action`.
    unsafe { libc::sigemptyset(&mut action.sa_mask) };
    action
}

/// The default course of `signal` (SIGTERM or SIGINT, whose default ends the process),
/// from inside its handler: the default disposition back, the signal unblocked (a
/// handler runs with it blocked), raised again. Only `sigaction`, `sigprocmask` and
/// `raise`, each async-signal-safe. Returns if the process survives the signal
/// (a disposition changed meanwhile by another thread).
fn emulate_default_handler(signal: c_int) {
    let action = empty_action();
    // SAFETY: `action` is a valid `sigaction` (SIG_DFL, no flags, empty mask) alive
    // for the call; a null old action is allowed.
    if unsafe { libc::sigaction(signal, &action, std::ptr::null_mut()) } != 0 {
        return;
    }
    let mut unblock = empty_action().sa_mask;
    // SAFETY: `unblock` is a valid, owned `sigset_t`; `sigaddset` writes only it, and
    // `sigprocmask` reads it and changes the calling thread's mask (a null old set is
    // allowed).
    unsafe {
        libc::sigaddset(&mut unblock, signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, &unblock, std::ptr::null_mut());
        libc::raise(signal);
    }
}

/// latte's handler for SIGTERM and SIGINT (see the module's documentation).
extern "C" fn handler(signal: c_int, info: *mut siginfo_t, context: *mut c_void) {
    let errno = errno::get();
    if let Some(slot) = SIGNALS.iter().position(|&s| s == signal).map(|i| &SLOTS[i]) {
        let prev = slot.prev.load(Ordering::Acquire);
        if prev != libc::SIG_DFL && prev != libc::SIG_IGN {
            let siginfo = slot.prev_siginfo.load(Ordering::Acquire);
            // SAFETY: `prev` is the handler sigaction(2) returned for this signal, with
            // its own `SA_SIGINFO` flag, called with the arguments this handler got: the
            // call the kernel would have made.
            unsafe { chain(prev, siginfo, signal, info, context) };
        } else if still_installed(signal) && !hand_over(signal) {
            // Nobody else handles the signal, and latte has no report to write or
            // nobody here to write it: the default course, now.
            emulate_default_handler(signal);
        }
    }
    errno::set(errno);
}

/// Calls the handler latte's replaced.
///
/// # Safety
///
/// `prev` is a handler (not `SIG_DFL` or `SIG_IGN`) that sigaction(2) returned, of the
/// kind `siginfo` says, and the other arguments are those the kernel passed.
unsafe fn chain(
    prev: usize,
    siginfo: bool,
    signal: c_int,
    info: *mut siginfo_t,
    context: *mut c_void,
) {
    let prev = prev as *const ();
    if siginfo {
        type Action = extern "C" fn(c_int, *mut siginfo_t, *mut c_void);
        // SAFETY: per this function's contract, a three-argument handler.
        let action = unsafe { std::mem::transmute::<*const (), Action>(prev) };
        action(signal, info, context);
    } else {
        type Handler = extern "C" fn(c_int);
        // SAFETY: per this function's contract, a one-argument handler.
        let handler = unsafe { std::mem::transmute::<*const (), Handler>(prev) };
        handler(signal);
    }
}

/// Whether latte's handler is still the one installed for `signal` (async-signal-safe:
/// sigaction(2) is on POSIX's list).
fn still_installed(signal: c_int) -> bool {
    // SAFETY: all-zero bytes are a valid `libc::sigaction` (see `empty_action`, which
    // is not used here only because `sigemptyset` is not on POSIX's list).
    let mut current: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: with no new action, sigaction(2) only writes the current one into
    // `current`, a valid local.
    let read = unsafe { libc::sigaction(signal, std::ptr::null(), &mut current) };
    read == 0 && current.sa_sigaction == ours()
}

/// Hands the signal to the listening thread if a running agent wants its report: claims
/// the report (a second signal finds it claimed, and takes the default course at once)
/// and wakes the thread. `false` if no report is wanted, one is under way, or there is
/// no listening thread in this process (a forked child).
fn hand_over(signal: c_int) -> bool {
    super::claim() && wake(signal)
}

/// Wakes this process's listening thread; `false` if there is none (a forked child).
fn wake(signal: c_int) -> bool {
    // getpid(2) is async-signal-safe.
    if LISTENER.load(Ordering::Acquire) != std::process::id() {
        return false;
    }
    let fd = WAKE.load(Ordering::Acquire);
    let byte = signal as u8; // SIGTERM and SIGINT fit
    // SAFETY: write(2) of one byte from a live local into the pipe's write end, which
    // stays open for the life of the process; it is non-blocking.
    let written = unsafe { libc::write(fd, (&raw const byte).cast(), 1) };
    written == 1
}

/// `errno`, saved and restored around the handler, which must not change it for the
/// code it interrupted. Where latte does not know the C library's accessor, it is left
/// as the handler's calls leave it: they fail only on misuse.
mod errno {
    use libc::c_int;

    /// The calling thread's `errno`, if latte knows where it lives here.
    #[allow(unreachable_code)] // the `None` after a target's own `return`
    fn location() -> Option<*mut c_int> {
        #[cfg(any(target_os = "linux", target_os = "dragonfly", target_os = "hurd"))]
        // SAFETY: returns the C library's thread-local errno; no precondition.
        return Some(unsafe { libc::__errno_location() });
        #[cfg(any(target_os = "android", target_os = "netbsd", target_os = "openbsd"))]
        // SAFETY: as above.
        return Some(unsafe { libc::__errno() });
        #[cfg(any(target_vendor = "apple", target_os = "freebsd"))]
        // SAFETY: as above.
        return Some(unsafe { libc::__error() });
        None
    }

    pub(super) fn get() -> c_int {
        // SAFETY: the pointer is the calling thread's errno, valid for its life.
        location().map_or(0, |errno| unsafe { *errno })
    }

    pub(super) fn set(value: c_int) {
        if let Some(errno) = location() {
            // SAFETY: as in `get`.
            unsafe { *errno = value };
        }
    }
}
