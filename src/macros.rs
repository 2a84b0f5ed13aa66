//! The recording macros. Each expands to a `static Id` for the call site plus one call
//! into `$crate::__private`, so the id's text is resolved once per call site.
//!
//! The id expression is first the value of an associated `const` of a local type, and
//! the `static` is made from that constant. A `static` initialiser would do the same
//! work, but an id known only at run time (a parameter, a `String`) then fails inside
//! the expansion, and rustc's help proposes to turn the macro's `static` into a `let`,
//! naming `__private`: advice the user cannot follow. Through the associated `const`,
//! the error is spanned on the user's expression and rustc's help points at the user's
//! own binding (`consider using `const` instead of `let``), which works when taken.
//! `macros/tests/ui/fail/*_id.rs` pin these messages.
//!
//! The `&expr` form (`latte_start!(&id)`) takes an [`Id`](crate::Id) the caller holds,
//! such as one [`Id::intern`](crate::Id::intern) made from a run-time name, and makes
//! no `static`. A local trait with `#[diagnostic::on_unimplemented]` checks its type:
//! `latte_start!(&name)` with a `String` or a `&str` is an error that names
//! `Id::intern` (`macros/tests/ui/fail/*_runtime_id.rs`).

/// Opens a scope: `latte_start!("id")` (Fast) or `latte_start!("id", Mid)`.
///
/// The id is a `&'static str` known at compile time: a literal, a `const` or
/// `static`, `concat!(...)`, a call of a `const fn`. Or it is `&` and an
/// [`Id`](crate::Id) (or an `&Id`): for a name known only at run time, make its id once
/// with [`Id::intern`](crate::Id::intern), outside the hot loop, and pass `&id`. A
/// text known only at run time itself (a parameter, a `String`) does not compile;
/// given by reference (`latte_start!(&name)`), its error names `Id::intern`.
/// The mode is one of `Fast`, `Mid`, `Hard`.
///
/// ```
/// use latte::{Id, latte_start, latte_stop};
/// latte_start!("Frame_Total");
/// latte_start!("Physics_Engine", Mid);
/// latte_stop!("Physics_Engine", Mid);
/// latte_stop!("Frame_Total");
/// assert_eq!(latte::snapshot("Physics_Engine").len(), 1);
///
/// let venue = String::from("XNAS"); // known only at run time
/// let id = Id::intern(&format!("Route_{venue}"))?;
/// latte_start!(&id);
/// latte_stop!(&id);
/// assert_eq!(latte::snapshot("Route_XNAS").len(), 1);
/// # Ok::<(), latte::Error>(())
/// ```
#[macro_export]
macro_rules! latte_start {
    (& $id:expr $(,)?) => {
        $crate::latte_start!(&$id, Fast)
    };
    (& $id:expr, $mode:ident $(,)?) => {{
        #[diagnostic::on_unimplemented(
            message = "`{Self}` is no latte id: a macro's id is a text known at compile time, or `&` an `Id`",
            label = "not an `Id`",
            note = "for a name known only at run time, intern it once, outside the hot loop: \
                    `let id = latte::Id::intern(&name)?;`, then `latte_start!(&id)`",
            note = "for a name known at compile time, give the text itself: `latte_start!(\"name\")` \
                    or a `const`"
        )]
        trait LatteId<'a> {
            fn id(self) -> &'a $crate::__private::Id;
        }
        impl<'a> LatteId<'a> for &'a $crate::__private::Id {
            fn id(self) -> &'a $crate::__private::Id {
                self
            }
        }
        impl<'a, 'b> LatteId<'b> for &'a &'b $crate::__private::Id {
            fn id(self) -> &'b $crate::__private::Id {
                *self
            }
        }
        $crate::__private::start(
            LatteId::id(&$id),
            const { $crate::__private::FastMidOrHard::$mode.into_timer_mode() },
        )
    }};
    ($id:expr $(,)?) => {
        $crate::latte_start!($id, Fast)
    };
    ($id:expr, $mode:ident $(,)?) => {{
        struct __LatteId;
        impl __LatteId {
            const NAME: &'static str = $id;
        }
        static __LATTE_ID: $crate::__private::Id = $crate::__private::Id::new(__LatteId::NAME);
        $crate::__private::start(
            &__LATTE_ID,
            const { $crate::__private::FastMidOrHard::$mode.into_timer_mode() },
        )
    }};
}

/// Closes a scope: `latte_stop!("id")` (Fast) or `latte_stop!("id", Hard)`.
///
/// The stop mode may differ from the start mode; the sample remembers both. The id is
/// given as to [`latte_start!`] (`latte_stop!(&id)` for an interned one).
/// See [`latte_start!`] and [`stop`](crate::stop) for what happens on misuse.
#[macro_export]
macro_rules! latte_stop {
    (& $id:expr $(,)?) => {
        $crate::latte_stop!(&$id, Fast)
    };
    (& $id:expr, $mode:ident $(,)?) => {{
        #[diagnostic::on_unimplemented(
            message = "`{Self}` is no latte id: a macro's id is a text known at compile time, or `&` an `Id`",
            label = "not an `Id`",
            note = "for a name known only at run time, intern it once, outside the hot loop: \
                    `let id = latte::Id::intern(&name)?;`, then `latte_stop!(&id)`",
            note = "for a name known at compile time, give the text itself: `latte_stop!(\"name\")` \
                    or a `const`"
        )]
        trait LatteId<'a> {
            fn id(self) -> &'a $crate::__private::Id;
        }
        impl<'a> LatteId<'a> for &'a $crate::__private::Id {
            fn id(self) -> &'a $crate::__private::Id {
                self
            }
        }
        impl<'a, 'b> LatteId<'b> for &'a &'b $crate::__private::Id {
            fn id(self) -> &'b $crate::__private::Id {
                *self
            }
        }
        $crate::__private::stop(
            LatteId::id(&$id),
            const { $crate::__private::FastMidOrHard::$mode.into_timer_mode() },
        )
    }};
    ($id:expr $(,)?) => {
        $crate::latte_stop!($id, Fast)
    };
    ($id:expr, $mode:ident $(,)?) => {{
        struct __LatteId;
        impl __LatteId {
            const NAME: &'static str = $id;
        }
        static __LATTE_ID: $crate::__private::Id = $crate::__private::Id::new(__LatteId::NAME);
        $crate::__private::stop(
            &__LATTE_ID,
            const { $crate::__private::FastMidOrHard::$mode.into_timer_mode() },
        )
    }};
}

/// Ends this thread's frame and begins the next: the report then gives, per
/// component, its time and calls per frame (median, p99, max, frames with no call
/// counted as 0), the frames' lengths, and with
/// [`Builder::frame_budget`](crate::Builder::frame_budget) the frames over budget and
/// what ate them. Call it once per iteration of the loop, where no scope is open (a
/// scope counts in the frame in which it closes). The first mark only begins the first
/// frame.
///
/// It costs Start and Stop nothing: each mark reads two running sums per call-tree
/// node of the thread (see `docs/design.md`).
///
/// ```
/// for _ in 0..4 {
///     latte::latte_start!("doc_frame_work");
///     latte::latte_stop!("doc_frame_work");
///     latte::latte_frame!();
/// }
/// let report = latte::Report::collect(&latte::ReportOptions::default());
/// let me = report.threads.iter().find(|t| t.per_frame.is_some()).unwrap();
/// let per_frame = me.per_frame.as_ref().unwrap();
/// assert_eq!(per_frame.frames, 3);
/// let work = per_frame.components.iter().find(|c| c.component == "doc_frame_work");
/// assert_eq!(work.unwrap().calls.p50, 1.0);
/// ```
#[macro_export]
macro_rules! latte_frame {
    () => {
        $crate::__private::frame_mark()
    };
}

/// Records the time since this thread's previous pulse of the same id. The id is a
/// `&'static str` known at compile time, or `&` an [`Id`](crate::Id), as for
/// [`latte_start!`].
///
/// ```
/// for _ in 0..3 {
///     latte::latte_pulse!("Poll_Loop_Delta");
/// }
/// assert_eq!(latte::snapshot("Poll_Loop_Delta").len(), 2);
/// ```
#[macro_export]
macro_rules! latte_pulse {
    (& $id:expr $(,)?) => {{
        #[diagnostic::on_unimplemented(
            message = "`{Self}` is no latte id: a macro's id is a text known at compile time, or `&` an `Id`",
            label = "not an `Id`",
            note = "for a name known only at run time, intern it once, outside the hot loop: \
                    `let id = latte::Id::intern(&name)?;`, then `latte_pulse!(&id)`",
            note = "for a name known at compile time, give the text itself: `latte_pulse!(\"name\")` \
                    or a `const`"
        )]
        trait LatteId<'a> {
            fn id(self) -> &'a $crate::__private::Id;
        }
        impl<'a> LatteId<'a> for &'a $crate::__private::Id {
            fn id(self) -> &'a $crate::__private::Id {
                self
            }
        }
        impl<'a, 'b> LatteId<'b> for &'a &'b $crate::__private::Id {
            fn id(self) -> &'b $crate::__private::Id {
                *self
            }
        }
        $crate::__private::pulse(LatteId::id(&$id))
    }};
    ($id:expr $(,)?) => {{
        struct __LatteId;
        impl __LatteId {
            const NAME: &'static str = $id;
        }
        static __LATTE_ID: $crate::__private::Id = $crate::__private::Id::new(__LatteId::NAME);
        $crate::__private::pulse(&__LATTE_ID)
    }};
}

/// Opens a scope that closes when the returned guard drops:
/// `latte_scope!("id")`, `latte_scope!("id", Mid)` (both ends Mid) or
/// `latte_scope!("id", Fast, Hard)` (start mode, stop mode). The id is a
/// `&'static str` known at compile time, or `&` an [`Id`](crate::Id), as for
/// [`latte_start!`].
///
/// ```
/// fn process_order() {
///     let _scope = latte::latte_scope!("ProcessOrder");
///     // ... early returns and `?` still close the scope ...
/// }
/// process_order();
/// assert_eq!(latte::snapshot("ProcessOrder").len(), 1);
/// ```
#[macro_export]
macro_rules! latte_scope {
    (& $id:expr $(,)?) => {
        $crate::latte_scope!(&$id, Fast, Fast)
    };
    (& $id:expr, $mode:ident $(,)?) => {
        $crate::latte_scope!(&$id, $mode, $mode)
    };
    (& $id:expr, $start:ident, $stop:ident $(,)?) => {{
        #[diagnostic::on_unimplemented(
            message = "`{Self}` is no latte id: a macro's id is a text known at compile time, or `&` an `Id`",
            label = "not an `Id`",
            note = "for a name known only at run time, intern it once, outside the hot loop: \
                    `let id = latte::Id::intern(&name)?;`, then `latte_scope!(&id)`",
            note = "for a name known at compile time, give the text itself: `latte_scope!(\"name\")` \
                    or a `const`"
        )]
        trait LatteId<'a> {
            fn id(self) -> &'a $crate::__private::Id;
        }
        impl<'a> LatteId<'a> for &'a $crate::__private::Id {
            fn id(self) -> &'a $crate::__private::Id {
                self
            }
        }
        impl<'a, 'b> LatteId<'b> for &'a &'b $crate::__private::Id {
            fn id(self) -> &'b $crate::__private::Id {
                *self
            }
        }
        $crate::__private::scope(
            LatteId::id(&$id),
            const { $crate::__private::FastMidOrHard::$start.into_timer_mode() },
            const { $crate::__private::FastMidOrHard::$stop.into_timer_mode() },
        )
    }};
    ($id:expr $(,)?) => {
        $crate::latte_scope!($id, Fast, Fast)
    };
    ($id:expr, $mode:ident $(,)?) => {
        $crate::latte_scope!($id, $mode, $mode)
    };
    ($id:expr, $start:ident, $stop:ident $(,)?) => {{
        struct __LatteId;
        impl __LatteId {
            const NAME: &'static str = $id;
        }
        static __LATTE_ID: $crate::__private::Id = $crate::__private::Id::new(__LatteId::NAME);
        $crate::__private::scope(
            &__LATTE_ID,
            const { $crate::__private::FastMidOrHard::$start.into_timer_mode() },
            const { $crate::__private::FastMidOrHard::$stop.into_timer_mode() },
        )
    }};
}
