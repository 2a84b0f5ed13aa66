//! `latte-telemetry top` as a person uses it, in a real terminal (tmux): the live
//! service example runs, `top` watches it, and the test reads the screen
//! (`capture-pane`) and types (`send-keys`): the example's components with numbers,
//! the recording state and every key at 80 columns, a sort, a filter, the call tree
//! folded, the recording switch (the program's next report says the pause), the
//! program killed under the view (its whole sentence at 140 columns) and started again
//! (the reconnect), and `q` (a clean exit).
//!
//! Not part of `cargo test --workspace` (`test = false`): `.ci/run` runs it in a stage
//! of its own (`cargo test --workspace --all-features --test cli_top`), after building
//! the example; by hand, `cargo test -p latte-telemetry-cli --test cli_top`. Without tmux it says it skipped, unless `LATTE_REQUIRE_TMUX=1` (set by
//! `.ci/run`, which installs Debian's `tmux`).

use regex::Regex;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the screen may take to show what a step waits for.
const WAIT: Duration = Duration::from_secs(30);

fn tmux_present() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The example: `LATTE_WATCHED_SERVICE` if set (`.ci/run` builds it with the other
/// examples), else built in release (as a user runs it) by the cargo running this test.
fn example() -> PathBuf {
    if let Some(path) = std::env::var_os("LATTE_WATCHED_SERVICE") {
        return PathBuf::from(path);
    }
    let status = Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "-q",
            "-p",
            "latte-telemetry-prometheus",
        ])
        .args(["--example", "watched_service"])
        .status()
        .expect("run cargo");
    assert!(
        status.success(),
        "building the watched_service example failed"
    );
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("release/examples/watched_service")
}

/// The example serving on `port`, writing its reports to `reports`.
struct Service(Child);

impl Service {
    fn start(binary: &Path, port: u16, reports: &Path) -> Service {
        let child = Command::new(binary)
            .arg("300")
            .env("LATTE_LIVE_ADDR", format!("127.0.0.1:{port}"))
            .env("LATTE_LIVE_REPORTS", reports)
            .stderr(Stdio::null())
            .spawn()
            .expect("start the example");
        Service(child)
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }

    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A tmux server of the test's own (its own socket), killed at the end.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn command(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket]);
        c
    }

    fn start(socket: String, shell_command: &str) -> Tmux {
        let tmux = Tmux { socket };
        let status = tmux
            .command()
            .args(["new-session", "-d", "-s", "top", "-x", "132", "-y", "32"])
            .arg(shell_command)
            .status()
            .expect("run tmux");
        assert!(status.success(), "tmux new-session failed");
        tmux
    }

    /// The screen as text; `escapes`: with its colours (for a picture).
    fn screen(&self, escapes: bool) -> String {
        let mut c = self.command();
        c.args(["capture-pane", "-p", "-t", "top"]);
        if escapes {
            c.arg("-e");
        }
        let out = c.output().expect("run tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let status = self
            .command()
            .args(["send-keys", "-t", "top"])
            .args(keys)
            .status()
            .expect("run tmux send-keys");
        assert!(status.success());
    }

    /// Waits until the screen satisfies `ok` (within [`WAIT`]), and returns it.
    fn until(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let screen = self.screen(false);
            if ok(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "the screen never showed {what}; it shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Makes the window `columns` wide (32 rows high).
    fn resize(&self, columns: u16) {
        let status = self
            .command()
            .args([
                "resize-window",
                "-t",
                "top",
                "-x",
                &columns.to_string(),
                "-y",
                "32",
            ])
            .status()
            .expect("run tmux resize-window");
        assert!(status.success(), "tmux resize-window failed");
    }

    fn alive(&self) -> bool {
        self.command()
            .args(["has-session", "-t", "top"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self
            .command()
            .arg("kill-server")
            .stderr(Stdio::null())
            .status();
    }
}

/// The rows of the components table, top to bottom: (component, calls/s cell).
fn rows(screen: &str) -> Vec<(String, String)> {
    let row = Regex::new(
        r"│(?:\S+#\d+\s+)?([a-z_]+)(?: \(pulse\))?\s+([\d.]+(?: k)?)\s+[\d.]+ [mun]?s\s",
    )
    .unwrap();
    screen
        .lines()
        .filter_map(|l| row.captures(l))
        .map(|c| (c[1].to_owned(), c[2].to_owned()))
        .collect()
}

fn rate(cell: &str) -> f64 {
    match cell.strip_suffix(" k") {
        Some(k) => k.parse::<f64>().unwrap() * 1e3,
        None => cell.parse().unwrap(),
    }
}

/// The screen's words, one space between them: a sentence wrapped over lines reads as
/// one.
fn words(screen: &str) -> String {
    screen.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether no line of `screen` is wider than `columns`: the pane is that wide.
fn within(screen: &str, columns: usize) -> bool {
    screen.lines().all(|l| l.chars().count() <= columns)
}

/// The key line, over all threads, sorted by TOTAL.
const KEYS: &str = "q quit s sort (TOTAL) / filter p pause view r recording on/off \
                    t per thread Tab tree up/down select";

/// Waits until `path` holds `text`.
fn file_shows(path: &Path, text: &str) {
    let deadline = Instant::now() + WAIT;
    while !std::fs::read_to_string(path).is_ok_and(|s| s.contains(text)) {
        assert!(
            Instant::now() < deadline,
            "{} never said {text:?}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn top_shows_sorts_filters_switches_and_survives_its_program() {
    if !tmux_present() {
        assert!(
            std::env::var_os("LATTE_REQUIRE_TMUX").is_none(),
            "LATTE_REQUIRE_TMUX is set and tmux is not installed"
        );
        eprintln!("skipped: no tmux (Debian's `tmux`; .ci/run installs it)");
        return;
    }
    let binary = example();
    let dir = std::env::temp_dir().join(format!("latte-top-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let reports = dir.join("reports.txt");
    let exit = dir.join("exit");
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let mut service = Service::start(&binary, port, &reports);
    let top = format!(
        "{} top 127.0.0.1:{port}; echo $? > {}",
        env!("CARGO_BIN_EXE_latte-telemetry"),
        exit.display()
    );
    let tmux = Tmux::start(format!("latte-top-{}", std::process::id()), &top);

    // The example's components, with numbers, by TOTAL.
    let screen = tmux.until("the example's components with numbers", |s| {
        let names: Vec<String> = rows(s).into_iter().map(|r| r.0).collect();
        ["on_order", "db_write", "risk_check", "render", "tick"]
            .iter()
            .all(|c| names.iter().any(|n| n == c))
    });
    assert!(
        screen.contains(&format!("watched_service (pid {})", service.pid())),
        "{screen}"
    );
    assert!(screen.contains("TOTAL v"), "{screen}");
    assert!(
        screen.contains("tick (pulse)"),
        "a pulse is said to be one:\n{screen}"
    );
    assert!(
        Regex::new(r"frames render#\d+: [\d.]+/s")
            .unwrap()
            .is_match(&screen),
        "{screen}"
    );
    if std::env::var_os("LATTE_TOP_CAPTURE").is_some() {
        // For docs/img/top.png: the screen with its colours.
        std::fs::write(dir.join("top.ansi"), tmux.screen(true)).unwrap();
        eprintln!("captured {}", dir.join("top.ansi").display());
    }

    // At 80 columns: the recording state and every key still show; back to 132.
    tmux.resize(80);
    tmux.until("the state and every key at 80 columns", |s| {
        let on = s
            .lines()
            .any(|l| l.trim_end().ends_with(" RECORDING") || l.contains(" RECORDING "));
        within(s, 80) && on && !s.contains("RECORDING OFF") && words(s).contains(KEYS)
    });
    tmux.resize(132);
    tmux.until("the screen at 132 columns", |s| {
        s.lines().any(|l| l.chars().count() > 100) && rows(s).len() >= 5
    });

    // `s`: sorted by calls per second, largest first.
    tmux.keys(&["s"]);
    let screen = tmux.until("the calls/s sort", |s| {
        s.contains("CALLS/S v") && rows(s).len() >= 5
    });
    let rates: Vec<f64> = rows(&screen).iter().map(|r| rate(&r.1)).collect();
    assert!(
        rates.windows(2).all(|w| w[0] >= w[1]),
        "{rates:?}\n{screen}"
    );

    // `/db` Enter: only db_write.
    tmux.keys(&["/", "db", "Enter"]);
    let screen = tmux.until("the filter", |s| s.contains("matching 'db'"));
    let names: Vec<String> = rows(&screen).into_iter().map(|r| r.0).collect();
    assert_eq!(names, ["db_write"], "{screen}");

    // Tab: the call tree, db_write under on_order; folding on_order hides it.
    tmux.keys(&["/", "BSpace", "BSpace", "Enter", "Tab"]);
    let screen = tmux.until("the call tree", |s| {
        s.contains("CALL TREE") && s.contains("    db_write")
    });
    let lines: Vec<&str> = screen
        .lines()
        .skip_while(|l| !l.contains("CALL TREE"))
        .skip(1)
        .collect();
    let at = lines
        .iter()
        .position(|l| l.contains("- on_order"))
        .expect("on_order in the tree");
    for _ in 0..at {
        tmux.keys(&["Down"]);
    }
    tmux.keys(&["Left"]);
    let screen = tmux.until("on_order folded", |s| s.contains("+ on_order"));
    assert!(!screen.contains("db_write"), "{screen}");
    tmux.keys(&["Right", "Tab"]);
    tmux.until("the components again", |s| s.contains("P99, LAST 60 S"));

    // `r`: recording off, said on screen and in the program's next report; on again.
    tmux.keys(&["r"]);
    tmux.until("recording off", |s| s.contains("RECORDING OFF"));
    file_shows(&reports, "it is off now");
    tmux.until("an interval with nothing recorded", |s| {
        s.contains("components: none, recording is off")
    });
    tmux.keys(&["r"]);
    tmux.until("recording on again", |s| {
        s.contains(" RECORDING ") && !s.contains("RECORDING OFF")
    });
    file_shows(&reports, "(1 pause with latte::set_recording):");
    // An interval cut after recording came back has figures again.
    tmux.until("figures again", |s| rows(s).len() >= 5);

    // The program killed under the view, at 140 columns: said in a whole sentence, the
    // last figures kept; started again on the same address: the view goes on with the
    // new process.
    tmux.resize(140);
    service.kill();
    let screen = tmux.until("the program gone, in a whole sentence", |s| {
        let said = words(s);
        within(s, 140)
            && said.contains(&format!("no answer from 127.0.0.1:{port} for "))
            && said.contains(
                "(connection refused): the program is gone or not serving; retrying every \
                 second, the figures are its last",
            )
    });
    assert!(
        !rows(&screen).is_empty(),
        "the last figures stay on screen:\n{screen}"
    );
    let service = Service::start(&binary, port, &reports);
    let screen = tmux.until("the reconnect", |s| {
        s.contains(&format!("(pid {})", service.pid()))
    });
    assert!(!screen.contains("no answer from"), "{screen}");

    // `q`: a clean exit.
    tmux.keys(&["q"]);
    let deadline = Instant::now() + WAIT;
    while !std::fs::read_to_string(&exit).is_ok_and(|s| !s.is_empty()) {
        assert!(Instant::now() < deadline, "top did not quit");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(std::fs::read_to_string(&exit).unwrap().trim(), "0");
    let _ = tmux.alive();
    let _ = std::fs::remove_dir_all(&dir);
}
