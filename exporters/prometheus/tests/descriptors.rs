//! A binary of its own: the test lowers its process's descriptor limit, so it runs in
//! a child process (the test binary again, with only the ignored `child_process` test).
//!
//! Running out of file descriptors does not end `/metrics`: an accept that fails for
//! want of one is retried, and once descriptors are free again a scrape answers. (A
//! first version, on `tiny_http`, panicked its accept thread here and refused every
//! later connection.)
#![cfg(target_os = "linux")]
#![allow(unsafe_code)] // setrlimit

use latte_prometheus::Prometheus;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

const CHILD: &str = "LATTE_TEST_FLEET_DESCRIPTORS_CHILD";

/// One scrape: the status line, or the error.
fn scrape(addr: SocketAddr) -> Result<String, std::io::Error> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")?;
    let mut text = String::new();
    stream.read_to_string(&mut text)?;
    Ok(text.lines().next().unwrap_or("").to_owned())
}

/// Scrapes until one is answered `200 OK`, failing after `limit`.
fn answered_within(addr: SocketAddr, limit: Duration) -> String {
    let deadline = Instant::now() + limit;
    loop {
        match scrape(addr) {
            Ok(status) if status == "HTTP/1.1 200 OK" => break status,
            other => assert!(
                Instant::now() < deadline,
                "no scrape answered within {limit:?}: {other:?}"
            ),
        }
        std::thread::yield_now();
    }
}

#[test]
#[ignore = "run by the_endpoint_survives_running_out_of_descriptors, in a process of its own"]
fn child_process() {
    assert_eq!(std::env::var(CHILD).as_deref(), Ok("1"), "not the child");
    let limit = libc::rlimit {
        rlim_cur: 64,
        rlim_max: 64,
    };
    // SAFETY: setrlimit with a valid pointer to an initialised `rlimit`.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
    let endpoint = Prometheus::bind("127.0.0.1:0").unwrap();
    let addr = endpoint.local_addr();
    let guard = latte::builder()
        .exporter(endpoint)
        .final_report(false)
        .sink(std::io::sink())
        .start()
        .unwrap();
    // The first report waits for the start-up calibration, which runs at the lowest
    // priority: on a loaded machine a scrape may answer 503 until it is done.
    answered_within(addr, Duration::from_secs(30));
    // Connections held open until connecting fails: each costs a descriptor on this
    // side, and each the server accepts costs another on its side.
    let mut held = Vec::new();
    let exhausted = loop {
        match TcpStream::connect(addr) {
            Ok(stream) => held.push(stream),
            Err(e) => break e,
        }
        assert!(held.len() < 1_000, "the descriptor limit did not hold");
    };
    println!(
        "descriptors ran out after {} connections: {exhausted}",
        held.len()
    );
    drop(held);
    // The accepting thread retries every 10 ms; give it up to 30 s on a busy machine.
    let answer = answered_within(addr, Duration::from_secs(30));
    println!("after: {answer}");
    guard.stop().unwrap();
}

#[test]
fn the_endpoint_survives_running_out_of_descriptors() {
    let out = this_test_binary()
        .args(["child_process", "--exact", "--ignored", "--nocapture"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "the child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("after: HTTP/1.1 200 OK"), "{stdout}");
}

/// This test binary, run as cargo ran it: under the target's runner if there is one
/// (`CARGO_TARGET_<TRIPLE>_RUNNER`, the emulator of a cross-built test).
fn this_test_binary() -> std::process::Command {
    let exe = std::env::current_exe().unwrap();
    let prefix = format!(
        "CARGO_TARGET_{}_",
        std::env::consts::ARCH.to_ascii_uppercase()
    );
    let runner = std::env::vars()
        .find(|(k, v)| k.starts_with(&prefix) && k.ends_with("_RUNNER") && !v.trim().is_empty())
        .map(|(_, v)| v);
    let Some(runner) = runner else {
        return std::process::Command::new(exe);
    };
    let mut words = runner.split_whitespace();
    let mut command = std::process::Command::new(words.next().expect("a non-empty runner"));
    command.args(words).arg(exe);
    command
}
