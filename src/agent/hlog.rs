//! The agent's HdrHistogram interval log (`.hlog`): per periodic report, one histogram
//! per id, tagged with the id's name, flushed at once.

use hdrhistogram::Histogram;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// An open interval log.
pub(super) struct Hlog {
    file: File,
    /// The log's base time: interval start stamps are seconds after it.
    base: SystemTime,
    serializer: V2DeflateSerializer,
}

impl Hlog {
    /// Creates (or truncates) the log at `path` and writes its header.
    pub(super) fn create(path: &Path, base: SystemTime) -> io::Result<Hlog> {
        let mut file = File::create(path)?;
        let mut serializer = V2DeflateSerializer::new();
        let mut header = Vec::new();
        IntervalLogWriterBuilder::new()
            .add_comment(
                "latte interval log: one histogram per id per period, values in counter ticks",
            )
            .with_start_time(base)
            .with_base_time(base)
            .begin_log_with(&mut header, &mut serializer)?;
        file.write_all(&header)?;
        file.flush()?;
        Ok(Hlog {
            file,
            base,
            serializer,
        })
    }

    /// Appends one interval: `histograms` per id, covering `start .. start + length`.
    pub(super) fn write(
        &mut self,
        histograms: &[(&str, Histogram<u64>)],
        start: SystemTime,
        length: Duration,
    ) -> io::Result<()> {
        let since_base = start.duration_since(self.base).unwrap_or_default();
        let mut text = Vec::new();
        {
            let mut log =
                IntervalLogWriterBuilder::new().begin_log_with(&mut text, &mut self.serializer)?;
            for (name, hist) in histograms {
                let tag = tag(name);
                log.write_histogram(hist, since_base, length, Tag::new(&tag))
                    .map_err(|e| io::Error::other(e.to_string()))?;
            }
        }
        self.file.write_all(&text)?;
        self.file.flush()
    }
}

/// An id's name as an `.hlog` tag: the characters tags may not hold become `_`.
fn tag(name: &str) -> String {
    name.chars()
        .map(|c| {
            if matches!(c, ',' | ' ' | '\r' | '\n') {
                '_'
            } else {
                c
            }
        })
        .collect()
}
