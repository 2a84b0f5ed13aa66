//! `html`: one self-contained page with each flight-recorder dump's timeline
//! ([`timeline`]), each report's call tree (an icicle chart, [`icicle`]) and every
//! component's distribution, several reports overlaid.

pub mod icicle;
mod page;
mod plot;
pub mod timeline;

use crate::load::{self, Loaded};
use crate::outcome::{Failure, Outcome};
use std::path::PathBuf;

/// Arguments of `html`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  latte-telemetry html base.json new.json -o latency.html\n  latte-telemetry html latte-dumps/dump-4711-1-on_order.json -o stall.html"
)]
pub struct HtmlArgs {
    /// One or more JSON reports, overlaid in distinct colours, and flight-recorder
    /// dumps (`dump-*.json`), each drawn as a timeline.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Draw only the components whose id matches this glob (e.g. 'Sim_*'); the call
    /// tree and the timelines are drawn whole.
    #[arg(long, value_name = "GLOB")]
    pub filter: Option<String>,
    /// The page to write.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
}

/// Runs `html`.
pub fn run(args: &HtmlArgs) -> Result<Outcome, Failure> {
    let mut reports = Vec::new();
    let mut dumps = Vec::new();
    for path in &args.files {
        match load::input(path)? {
            load::Input::Report(loaded) => reports.push(*loaded),
            load::Input::Dump(dump) => dumps.push(dump),
        }
    }
    load::comparable(&reports.iter().collect::<Vec<_>>())?;
    let filter = load::filter(args.filter.as_deref())?;
    let mut components = components(&reports)?;
    if let Some(pattern) = &filter {
        components.retain(|(name, _)| pattern.matches(name));
    }
    if components.is_empty() && dumps.is_empty() {
        return Err(Failure(match &args.filter {
            Some(pattern) => {
                format!("--filter '{pattern}' matches no component with samples: nothing to draw")
            }
            None => "no component of these reports has samples: nothing to draw".into(),
        }));
    }
    let page = page::page(&dumps, &reports, &components);
    std::fs::write(&args.output, page).map_err(|e| {
        Failure(format!(
            "{}: cannot write the page: {e}",
            args.output.display()
        ))
    })?;
    Ok(Outcome::Done)
}

/// Every component with values, in order of first appearance, with each report's
/// distribution of it.
fn components(reports: &[Loaded]) -> Result<Vec<page::Component>, Failure> {
    let mut out: Vec<page::Component> = Vec::new();
    for (i, loaded) in reports.iter().enumerate() {
        for row in loaded
            .report
            .all_threads
            .iter()
            .filter(|r| r.stats.samples > 0)
        {
            let Some(dist) = load::distribution(loaded, &row.component).cloned() else {
                continue;
            };
            match out.iter_mut().find(|(name, _)| *name == row.component) {
                Some((_, dists)) => dists.push((i, dist)),
                None => out.push((row.component.clone(), vec![(i, dist)])),
            }
        }
    }
    Ok(out)
}
