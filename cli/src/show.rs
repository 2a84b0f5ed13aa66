//! `show`: a report's table, with the library's table options and focus.

use crate::load;
use crate::outcome::{self, Failure, Outcome};
use latte::Unit;
use latte::report::{Column, Focus, Sort, TableOptions};
use std::path::PathBuf;

/// Arguments of `show`.
#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    /// The JSON report (or the agent's one-report-per-line stream: the final report
    /// is shown).
    pub file: PathBuf,
    /// Show values in this unit.
    #[arg(long, value_enum)]
    pub unit: Option<UnitArg>,
    /// Table width in columns (default: COLUMNS, the terminal, or 100).
    #[arg(long)]
    pub width: Option<usize>,
    /// The columns after COMPONENT, comma-separated (e.g. samples,median,p99,p99.9).
    #[arg(long, value_delimiter = ',', value_parser = column)]
    pub columns: Option<Vec<Column>>,
    /// Every column and every id in full, however wide.
    #[arg(long)]
    pub wide: bool,
    /// As later periodic reports are: one table over all threads, its first 20 rows,
    /// no ENVIRONMENT or OVERHEAD blocks.
    #[arg(long)]
    pub compact: bool,
    /// With --compact: each thread's table too.
    #[arg(long, requires = "compact")]
    pub per_thread: bool,
    /// One row per id, as if no scope ran inside another, instead of the call tree.
    #[arg(long)]
    pub flat: bool,
    /// The C++ original's figures: SAMPLES to RANGE without the samples the cleaning
    /// rule flagged (the report carries both sets).
    #[arg(long)]
    pub cleaned: bool,
    /// Keep only the components whose id matches this glob (e.g. 'order_*').
    #[arg(long, value_name = "GLOB")]
    pub filter: Option<String>,
    /// Keep only the sections of threads whose name matches this glob.
    #[arg(long, value_name = "GLOB")]
    pub threads: Option<String>,
    /// Sort rows by this column, largest first (see --ascending).
    #[arg(long, value_parser = column)]
    pub sort: Option<Column>,
    /// With --sort: smallest first.
    #[arg(long, requires = "sort")]
    pub ascending: bool,
    /// Keep the first N rows of each section.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
}

/// A unit on the command line.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum UnitArg {
    /// Counter ticks.
    Cycles,
    /// ns, us, ms or s as the values need.
    Time,
}

/// A column by its header, case-insensitive, `-` or `_` for spaces (`max-all`).
pub fn column(text: &str) -> Result<Column, String> {
    let wanted = text.trim().to_ascii_uppercase().replace(['-', '_'], " ");
    Column::ALL
        .into_iter()
        .find(|c| c.header() == wanted || (wanted == "P999" && *c == Column::P999))
        .ok_or_else(|| {
            let names: Vec<String> = Column::ALL
                .iter()
                .map(|c| c.header().to_ascii_lowercase().replace(' ', "-"))
                .collect();
            format!("no column `{text}`; the columns are {}", names.join(", "))
        })
}

/// Runs `show`.
pub fn run(args: &ShowArgs) -> Result<Outcome, Failure> {
    let loaded = load::load(&args.file)?;
    let mut report = loaded.report;
    if let Some(unit) = args.unit {
        report = report.in_unit(match unit {
            UnitArg::Cycles => Unit::Cycles,
            UnitArg::Time => Unit::Time,
        });
    }
    let focus = Focus {
        ids: args.filter.clone(),
        threads: args.threads.clone(),
        sort: args.sort.map(|column| Sort {
            column,
            descending: !args.ascending,
        }),
        top: args.top,
    };
    let report = report.focus(&focus).map_err(|e| Failure(e.to_string()))?;
    let mut report = report;
    if args.cleaned {
        report.figures = latte::report::Figures::Cleaned;
    }
    let options = TableOptions {
        width: args.width,
        columns: args.columns.clone(),
        wide: args.wide,
        compact: args.compact,
        per_thread: args.per_thread,
        brief: args.compact,
        flat: args.flat,
    };
    let mut out = std::io::stdout().lock();
    match report.write(&mut out, latte::Format::Table(options.clone())) {
        Err(latte::Error::Sink(e)) => outcome::to_stdout(Err(std::io::Error::new(e.kind(), e)))?,
        written => written.map_err(|e| Failure(e.to_string()))?,
    }
    Ok(Outcome::Done)
}
