//! Component ids in a column: escaped onto one line, shortened to the column's width,
//! and always distinct when the ids are.
//!
//! An id wider than its column is shown as a head, `~` and a tail, with the shortest
//! tail (the same for every shortened id) that keeps every shown text distinct. Ids
//! that differ only where neither head nor tail can reach are numbered instead
//! (`head~#3`) and listed in full in a legend. Distinctness is checked against every
//! text shown, so it is guaranteed, whatever the ids contain.

use std::collections::{HashMap, HashSet};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Marks where a shortened id was cut.
const CUT: &str = "~";

/// Display columns of `text`, as the table counts them.
pub(super) fn width(text: &str) -> usize {
    text.width()
}

/// `text` on one line: control characters, bidirectional controls and `\` are
/// escaped Rust-style (`\n`, `\u{202e}`, `\\`). Distinct texts stay distinct.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\\' || c.is_control() || is_bidi_control(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Characters that reorder the text around them on a terminal.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// The longest start of `text` at most `room` columns wide (whole graphemes).
fn head(text: &str, room: usize) -> &str {
    let mut end = 0;
    let mut used = 0;
    for (at, g) in text.grapheme_indices(true) {
        used += g.width();
        if used > room {
            break;
        }
        end = at + g.len();
    }
    &text[..end]
}

/// The longest end of `text` at most `room` columns wide (whole graphemes).
fn tail(text: &str, room: usize) -> &str {
    let mut start = text.len();
    let mut used = 0;
    for (at, g) in text.grapheme_indices(true).rev() {
        used += g.width();
        if used > room {
            break;
        }
        start = at;
    }
    &text[start..]
}

/// `text` cut to `width` columns keeping a tail `tail_room` columns wide.
fn cut(text: &str, width: usize, tail_room: usize) -> String {
    let end = tail(text, tail_room);
    let start = head(text, width - CUT.len() - end.width());
    format!("{start}{CUT}{end}")
}

/// The texts a column shows for its ids, and the legend of numbered ones.
#[derive(Debug, Default)]
pub(super) struct Names {
    shown: HashMap<String, String>,
    /// `(shown, full)` of each numbered id, in number order.
    pub(super) legend: Vec<(String, String)>,
}

impl Names {
    /// The text shown for `id` (escaped); `id` as escaped if it was not given to
    /// [`Names::fit`].
    pub(super) fn get(&self, id: &str) -> String {
        let id = escape(id);
        self.shown.get(&id).cloned().unwrap_or(id)
    }

    /// Fits the distinct `ids` (raw) into `width` columns (at least 8).
    pub(super) fn fit(ids: &[&str], width: usize) -> Names {
        let width = width.max(8);
        let mut ids: Vec<String> = ids.iter().map(|id| escape(id)).collect();
        ids.dedup(); // callers pass each id once; a repeat would count as a clash
        let (short, long): (Vec<String>, Vec<String>) =
            ids.into_iter().partition(|id| id.width() <= width);
        let mut names = Names::default();
        let mut taken: HashSet<String> = short.iter().cloned().collect();
        names
            .shown
            .extend(short.into_iter().map(|id| (id.clone(), id)));
        if long.is_empty() {
            return names;
        }
        let most = width - CUT.len() - 1; // keep at least one column of head
        let mut cuts = Vec::new();
        for room in 0..=most {
            cuts = long.iter().map(|id| cut(id, width, room)).collect();
            let distinct: HashSet<&String> = cuts.iter().collect();
            if distinct.len() == cuts.len() && !cuts.iter().any(|c| taken.contains(c)) {
                break;
            }
        }
        names.number_clashes(long, cuts, &mut taken, width);
        names
    }

    /// Shows each id as its cut unless the cut is shown for another id too; those are
    /// numbered `head~#n` with the first `n` whose text nothing else shows.
    fn number_clashes(
        &mut self,
        long: Vec<String>,
        cuts: Vec<String>,
        taken: &mut HashSet<String>,
        width: usize,
    ) {
        let mut count: HashMap<&str, usize> = HashMap::new();
        for c in &cuts {
            *count.entry(c).or_default() += 1;
        }
        let unique: Vec<bool> = cuts
            .iter()
            .map(|c| count[c.as_str()] == 1 && !taken.contains(c))
            .collect();
        for (c, _) in cuts.iter().zip(&unique).filter(|(_, u)| **u) {
            taken.insert(c.clone());
        }
        let mut n = 0usize;
        for ((id, c), unique) in long.into_iter().zip(cuts).zip(unique) {
            let text = if unique {
                c
            } else {
                loop {
                    n += 1;
                    let mark = format!("{CUT}#{n}");
                    let text = format!("{}{mark}", head(&id, width.saturating_sub(mark.len())));
                    if taken.insert(text.clone()) {
                        self.legend.push((text.clone(), id.clone()));
                        break text;
                    }
                }
            };
            self.shown.insert(id, text);
        }
    }
}
