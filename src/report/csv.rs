//! CSV export of raw samples (placeholder until the exporter lands).

use crate::{Calibration, Capture};

/// Writes every retained sample as one CSV row.
pub fn write_csv(capture: &Capture, calibration: &Calibration, out: impl std::io::Write) -> Result<(), csv::Error> {
    let _ = (capture, calibration, out);
    Ok(())
}
