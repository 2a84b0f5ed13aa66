//! The `&Id` form of the macros, the advice of `tests/ui/fail/*_runtime_id.rs`
//! taken: an id interned from a name known at run time, and a static `Id`.
#![deny(warnings, missing_docs, unused_qualifications, unreachable_pub, unused_results)]

use latte::{Id, latte_pulse, latte_scope, latte_start, latte_stop};

/// A static id.
static STATIC_ID: Id = Id::new("interned/static");

fn main() {
    let venue = String::from("XNAS");
    let id = Id::intern(&format!("interned/{venue}")).unwrap();
    latte_start!(&id);
    latte_stop!(&id, Mid);
    {
        let _scope = latte_scope!(&id, Fast, Hard);
    }
    latte_start!(&STATIC_ID, Mid);
    latte_stop!(&STATIC_ID);
    let scope = latte_scope!(&Id::intern("interned/temporary").unwrap());
    drop(scope);
    for _ in 0..3 {
        latte_pulse!(&id);
    }
    // Two scopes and two pulses under the interned name, one under the static one.
    assert_eq!(latte::snapshot("interned/XNAS").len(), 4);
    assert_eq!(latte::snapshot("interned/static").len(), 1);
    assert_eq!(latte::snapshot("interned/temporary").len(), 1);
}
