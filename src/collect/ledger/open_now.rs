//! The scopes open on each live thread when a report is taken.

use super::Ledger;
use crate::diagnostics::OpenScopes;
use crate::record::{id, registry};

impl Ledger {
    /// Notes, in the whole run, the scopes each live thread has open now (exited
    /// threads have none): for a report about to be made, not at every fold, since
    /// only a report shows them.
    pub(in crate::collect) fn note_open_scopes(&mut self) {
        let view = registry::global().view();
        let open: Vec<(u64, Vec<(u32, u64)>)> = view
            .live
            .iter()
            .filter(|t| !t.internal())
            .map(|t| (t.serial, t.open_scopes()))
            .filter(|(_, open)| !open.is_empty())
            .collect();
        // Names after the reads: every index read is interned by now.
        let names = if open.is_empty() {
            Vec::new()
        } else {
            id::names()
        };
        for t in self.whole.threads.values_mut() {
            t.open.clear();
        }
        for (serial, scopes) in open {
            if let Some(t) = self.whole.threads.get_mut(&serial) {
                t.open = scopes
                    .into_iter()
                    .map(|(i, count)| OpenScopes {
                        component: names.get(i as usize).copied().unwrap_or("").to_owned(),
                        count,
                    })
                    .collect();
            }
        }
    }
}
