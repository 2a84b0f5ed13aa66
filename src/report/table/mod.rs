//! The table renderer. A report passes through it once, in order:
//!
//! 1. `model.rs`: everything the report prints, every cell formatted once (in its
//!    own unit, by `report::numbers`), the words from `text.rs`;
//! 2. `layout.rs`: the columns that fit the width, their widths, the ids as they fit
//!    (`ids.rs`);
//! 3. `write.rs`: the lines.
//!
//! ```text
//! ====================================================================================
//! LATTE TELEMETRY [TIME][CAL] final
//! clock TSC @ 2.596 GHz (±1.0 ppm), resolution 10.01 ns
//! flagged, and kept in every figure: far (BYPASS) > max(10x median, median + 2000 ns), ...
//!
//! THREAD main (#1)
//! COMPONENT      SAMPLES      AVG   MEDIAN  STD DEV      MIN      MAX      P99 ...
//! -------------------------------------------------------------------------------
//! Sim_Tick_Total   4,997 226.8 ns 220.4 ns 76.04 ns 110.2 ns 821.6 ns 640.2 ns ...
//! ====================================================================================
//! ```
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | `write`: the three steps |
//! | `options.rs` | [`TableOptions`], [`Column`], which columns at which width |
//! | `model.rs` | the report as title, head lines and blocks of text and cells |
//! | `tree.rs` | a call tree's rows, and the lines under a parent that divide its time |
//! | `text.rs` | the words: header lines, ENVIRONMENT, overhead, notices |
//! | `layout.rs` | the columns that fit, their widths, the ids' texts |
//! | `ids.rs` | ids escaped onto one line and shortened, always distinct |
//! | `write.rs` | padding, wrapping, the footer |

mod frames;
mod ids;
mod layout;
mod model;
mod notices;
mod options;
mod text;
mod tree;
mod write;

pub use options::{Column, SEED_WIDTH, TableOptions};

use super::Report;
use std::io::{self, Write};

/// Writes `report` as a table laid out by `options`.
pub(super) fn write(
    report: &Report,
    out: &mut dyn Write,
    options: &TableOptions,
) -> io::Result<()> {
    let doc = model::Doc::of(report, options);
    let layout = layout::fit(&doc, options, options.resolved_width());
    write::write(&doc, &layout, out)
}
