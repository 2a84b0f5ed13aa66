//! `latte-telemetry`: read latte's JSON reports after the run.
//!
//! * `show REPORT.json`: the report's table, with the library's options (width,
//!   columns, filter, sort, top N).
//! * `diff BASE.json NEW.json` or `diff --base A1 A2 A3 --new B1 B2 B3`: per
//!   component, the change in median, p99 and p99.9 with a confidence interval and
//!   a verdict against a noise threshold, and the same for each call-tree node with a
//!   parent, matched by path; the exit status is 1 when anything regressed, so CI
//!   can gate on it. `--markdown` prints the rows that changed as a table for a
//!   pull-request comment.
//! * `html REPORT.json [MORE.json ...] -o report.html`: one self-contained page with
//!   each report's call tree as an icicle chart, and each component's latency
//!   distribution (histogram and CDF on a log axis, p50, p99 and p99.9 marked),
//!   several reports overlaid.
//!
//! * `top HOST:PORT`: a running program's live endpoint in the terminal, refreshed
//!   every second: components by TOTAL with calls/s, p50, p99, p99.9 and the p99 of
//!   the last minute, the call tree, frames over budget, the recording switch.
//!
//! Exit status: 0 done, 1 `diff` found a regression (with `--strict`, or an
//! inconclusive interval), 2 bad input or usage.
//! `docs/cli.md` shows each subcommand's output and how the verdict is reached.
//!
//! | file | what it holds |
//! |---|---|
//! | `main.rs` | the arguments and the dispatch |
//! | `outcome.rs` | what a subcommand ends with: done, a regression, or a failure |
//! | `load.rs` | reading a report file, with errors that name the file and the problem; a component's distribution, decoded by the library ([`latte::report::Row::distribution`]) |
//! | `show.rs` | `show` |
//! | `diff/` | `diff`: the statistics (`stats.rs`), what is matched with what, rows by id and tree nodes by path (`matched.rs`), the comparison (`mod.rs`), the output (`render.rs`, and `markdown.rs` for a pull-request comment) |
//! | `top/` | `top`: the view's state and keys (`app.rs`), the screen (`draw.rs`), the terminal and the fetching (`mod.rs`) |
//! | `html/` | `html`: the plots (`plot.rs`), the call tree's icicle chart (`icicle.rs`) and the page around them (`page.rs`) |

mod diff;
mod html;
mod load;
mod outcome;
mod show;
mod top;

use clap::{Parser, Subcommand};
use outcome::Outcome;
use std::process::ExitCode;

/// Read latte's JSON reports: show one, compare runs, draw the distributions.
#[derive(Parser, Debug)]
#[command(name = "latte-telemetry", version, long_about = None)]
#[command(
    about = "Read latte's JSON reports: show one, compare runs, draw the distributions; watch a running program."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print a report's table.
    Show(show::ShowArgs),
    /// Compare runs: per component, and per call-tree node by path, the change in
    /// median, p99 and p99.9 with a confidence interval and a verdict. Exit status
    /// 1 when anything regressed.
    Diff(diff::DiffArgs),
    /// Write one self-contained HTML page with each report's call tree and each
    /// component's distribution.
    Html(html::HtmlArgs),
    /// Watch a running program's latencies live, from its live endpoint
    /// (`latte_prometheus::Live`): components and call tree of the last second, p99
    /// over the last minute, frames over budget, the recording switch.
    Top(top::TopArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Show(args) => show::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Html(args) => html::run(args),
        Command::Top(args) => top::run(args),
    };
    match result {
        Ok(Outcome::Done) => ExitCode::SUCCESS,
        Ok(Outcome::Regressed | Outcome::Inconclusive) => ExitCode::from(1),
        Err(failure) => {
            eprintln!("latte-telemetry: {failure}");
            ExitCode::from(2)
        }
    }
}
