//! The recording paths make no syscall: Start and Stop, a pulse, a frame mark, and a
//! span's whole life through `LatteLayer`, each after a warm-up.
//!
//! A child process (this test binary, re-run on one ignored test) warms the paths up
//! on a thread of its own, then gives that thread a seccomp filter that lets only
//! `write` and `exit` through and kills the process (SIGSYS) on any other syscall,
//! and runs each path [`MEASURED`] times; then it writes `done` to a pipe and ends,
//! and the main thread, which has no filter, checks that every measured call was
//! recorded. Before each path the thread writes the path's name to stderr, so a killed
//! child names the path that made the syscall. A control case makes a `getpid` in a
//! measured loop and must be killed: the method does not pass by catching nothing.
//!
//! A filter, not seccomp's strict mode: strict mode also turns `RDTSC` off for the
//! thread (a SIGSEGV at the first Start). Linux on x86_64 and aarch64; not under
//! qemu-user, which refuses seccomp (`.ci/aarch64.sh`).

#![allow(unsafe_code)] // write, prctl, pthread_join and syscall around the measured thread

use crate::common;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::os::unix::thread::JoinHandleExt;
use tracing_subscriber::layer::SubscriberExt;

/// Calls of each path before the measured ones: first uses (a thread's recorder, an
/// id's ring, the bridge's pools and tables) allocate and register, and a ring grows
/// until it holds its capacity (2^16 samples by default), so more than that.
const WARM_UP: u64 = 70_000;
/// Calls of each path in a second warm-up, with every node of the paths made.
const WARM_UP_AGAIN: u64 = 100;
/// Calls of each path under seccomp.
const MEASURED: u64 = 10_000;

/// Writes `text` with the one syscall the measured thread may make to talk.
fn say(text: &str) {
    // SAFETY: writes `text.len()` bytes from a live `&str` to stderr, which stays open.
    let _ = unsafe { libc::write(2, text.as_ptr().cast(), text.len()) };
}

/// The filter's architecture word (`AUDIT_ARCH_*` of `linux/audit.h`): a syscall made
/// through another ABI (x86_64's x32 or i386 entry) is killed too.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xc000_003e;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xc000_00b7;

/// Kills the process on any syscall of this thread (and threads it starts) but `write`
/// and `exit`.
fn allow_only_write_and_exit() {
    let op = |code: u32, k: u32, jt: u8, jf: u8| libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    let (load, equal, ret) = (
        libc::BPF_LD | libc::BPF_W | libc::BPF_ABS,
        libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K,
        libc::BPF_RET | libc::BPF_K,
    );
    // `struct seccomp_data`: the syscall number at offset 0, the architecture at 4.
    let mut program = [
        op(load, 4, 0, 0),
        op(equal, AUDIT_ARCH, 0, 3), // another ABI: kill
        op(load, 0, 0, 0),
        op(equal, libc::SYS_write as u32, 2, 0),
        op(equal, libc::SYS_exit as u32, 1, 0),
        op(ret, libc::SECCOMP_RET_KILL_PROCESS, 0, 0),
        op(ret, libc::SECCOMP_RET_ALLOW, 0, 0),
    ];
    let fprog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_mut_ptr(),
    };
    // SAFETY: PR_SET_NO_NEW_PRIVS takes plain integers; it lets an unprivileged thread
    // install a filter.
    let no_new_privs = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    assert_eq!(no_new_privs, 0, "PR_SET_NO_NEW_PRIVS refused");
    // SAFETY: `fprog` points at `program`, both alive for the call; the kernel copies
    // the program.
    let filtered = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &raw const fprog,
            0,
            0,
        )
    };
    assert_eq!(filtered, 0, "the seccomp filter was refused");
}

/// Every recording path, `n` times each; `say`s each path's name first when `tell`.
fn paths(n: u64, tell: bool, control: bool) {
    let tell = |line: &str| {
        if tell {
            say(line);
        }
    };
    tell("path start+stop\n");
    for _ in 0..n {
        latte::latte_start!("syscalls_start_stop");
        latte::latte_stop!("syscalls_start_stop");
    }
    tell("path pulse\n");
    for _ in 0..n {
        latte::latte_pulse!("syscalls_pulse");
    }
    tell("path frame mark\n");
    for _ in 0..n {
        latte::latte_start!("syscalls_frame");
        latte::latte_stop!("syscalls_frame");
        latte::latte_frame!();
    }
    tell("path span life (LatteLayer)\n");
    for _ in 0..n {
        let _entered = tracing::info_span!("syscalls_span").entered();
    }
    if control {
        tell("path control: getpid\n");
        for _ in 0..n {
            // SAFETY: getpid takes no arguments and cannot fail.
            std::hint::black_box(unsafe { libc::syscall(libc::SYS_getpid) });
        }
    }
}

/// The child's side: warm up, then run the paths under seccomp on a thread of its own.
/// Ignored, so it runs only when the parent asks for it by name.
#[test]
#[ignore = "run by the other tests, in a child process"]
fn child() {
    let control = std::env::var("LATTE_SYSCALLS_CASE").as_deref() == Ok("control");
    let (mut reader, writer) = std::io::pipe().unwrap();
    let done = writer.as_raw_fd();
    let thread = std::thread::Builder::new()
        .name("syscalls-measured".into())
        .spawn(move || {
            // Lifetimes on: a span's timer is a recording path too.
            let layer = latte::tracing::LatteLayer::new().span_lifetimes(true);
            let layer = tracing_subscriber::registry().with(layer);
            let dispatch = tracing::Dispatch::new(layer);
            tracing::dispatcher::with_default(&dispatch, || {
                paths(WARM_UP, false, false);
                // Once more, briefly: the first pass made the span's nodes after its
                // frame marks, whose buffers grow to the thread's node count.
                paths(WARM_UP_AGAIN, false, false);
                allow_only_write_and_exit();
                paths(MEASURED, true, control);
                // SAFETY: as in `say`, to the pipe's write end, which `writer` keeps open
                // until this thread has ended.
                let _ = unsafe { libc::write(done, b"done".as_ptr().cast(), 4) };
                // `exit` of this thread alone: unwinding out of the closure or
                // returning from the thread would make syscalls the filter forbids.
                // SAFETY: ends this thread; nothing it owns is used after.
                unsafe { libc::syscall(libc::SYS_exit, 0) };
            });
        })
        .unwrap();
    // The thread ends by the `exit` syscall, without its teardown, so the handle's own
    // join (which reads the result the thread would have left) cannot be used: the
    // thread is joined by its id (the kernel clears it at the exit), and the handle
    // forgotten.
    let native = thread.as_pthread_t();
    std::mem::forget(thread);
    // SAFETY: `native` is a joinable thread of this process, joined once, here.
    let joined = unsafe { libc::pthread_join(native, std::ptr::null_mut()) };
    assert_eq!(joined, 0);
    drop(writer);
    let mut said = String::new();
    reader.read_to_string(&mut said).unwrap();
    assert_eq!(said, "done", "the measured thread ended before it finished");
    // The measured calls did record: every path's samples were counted.
    let capture = latte::capture();
    let me = capture
        .thread("syscalls-measured")
        .expect("the thread recorded");
    for name in [
        "syscalls_start_stop",
        "syscalls_pulse",
        "syscalls_frame",
        "syscalls_span",
        "syscalls_span (lifetime)",
    ] {
        let seen: u64 = me
            .components
            .iter()
            .filter(|c| c.name == name)
            .map(|c| c.seen)
            .sum();
        // A pulse records the time since the previous one: the first records nothing.
        let first_pulse = u64::from(name == "syscalls_pulse");
        assert_eq!(
            seen,
            WARM_UP + WARM_UP_AGAIN + MEASURED - first_pulse,
            "{name}"
        );
    }
    say("checked\n");
}

/// Runs the child; its exit status and stderr.
fn run(case: &str) -> (std::process::ExitStatus, String) {
    let out = common::this_test_binary()
        .args(["--ignored", "--exact", "--nocapture", "--test-threads=1"])
        .arg(common::test_name(module_path!(), "child"))
        .env("LATTE_SYSCALLS_CASE", case)
        .output()
        .unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The last path the measured thread began, by its `path` line.
fn last_path(stderr: &str) -> Option<&str> {
    stderr.lines().rfind(|l| l.starts_with("path "))
}

#[test]
fn start_stop_pulse_frame_mark_and_a_span_s_life_make_no_syscall() {
    let (status, stderr) = run("paths");
    assert!(
        status.success(),
        "{status}: a syscall in {:?}?\n{stderr}",
        last_path(&stderr)
    );
    assert_eq!(last_path(&stderr), Some("path span life (LatteLayer)"));
    assert!(stderr.contains("checked\n"), "{stderr}");
}

#[test]
fn a_syscall_in_a_measured_loop_kills_the_child() {
    let (status, stderr) = run("control");
    assert_eq!(status.signal(), Some(libc::SIGSYS), "{stderr}");
    assert_eq!(last_path(&stderr), Some("path control: getpid"), "{stderr}");
}
