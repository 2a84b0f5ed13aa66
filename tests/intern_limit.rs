//! Own binary: it exhausts the process's interner (`Id::intern`) for good.
//!
//! `Id::intern` is bounded: past `Id::MAX_INTERNED` new texts it returns
//! `Error::InternLimit`, and everything interned before keeps working (filling the
//! interner takes about 6 MiB and a fraction of a second).

use latte::{Error, Id, Mode};

#[test]
fn new_texts_past_the_limit_are_refused_and_known_ones_still_resolve() {
    let first = Id::intern("intern_limit_0").unwrap();
    let mut accepted = 1;
    let refused = loop {
        match Id::intern(&format!("intern_limit_{accepted}")) {
            Ok(_) => accepted += 1,
            Err(e) => break e,
        }
        assert!(
            accepted <= Id::MAX_INTERNED,
            "no limit after {accepted} texts"
        );
    };
    assert_eq!(accepted, Id::MAX_INTERNED);
    assert_eq!(
        refused,
        Error::InternLimit {
            limit: Id::MAX_INTERNED
        }
    );
    assert!(
        refused.to_string().contains("Id::MAX_INTERNED"),
        "{refused}"
    );
    // Refused again, for any new text; nothing was leaked for the refusals.
    assert!(Id::intern("intern_limit_another").is_err());

    // Known texts still resolve to their ids, and record.
    assert!(std::ptr::eq(Id::intern("intern_limit_0").unwrap(), first));
    let last = Id::intern(&format!("intern_limit_{}", accepted - 1)).unwrap();
    latte::start(last, Mode::Fast);
    latte::stop(last, Mode::Fast);
    assert_eq!(latte::snapshot(last.name()).len(), 1);

    // Static ids do not count against the limit.
    static STATIC: Id = Id::new("intern_limit_static");
    latte::record(&STATIC, 7);
    assert_eq!(latte::snapshot("intern_limit_static"), [7]);
}
