//! The recording macros. Each expands to a `static Id` for the call site plus one call
//! into `$crate::__private`, so the id's text is resolved once per call site.

/// Opens a scope: `latte_start!("id")` (Fast) or `latte_start!("id", Mid)`.
///
/// The id must be a constant `&'static str` (a literal, a `const`, `concat!`, ...).
/// The mode is one of `Fast`, `Mid`, `Hard`.
///
/// ```
/// use latte::{latte_start, latte_stop};
/// latte_start!("Frame_Total");
/// latte_start!("Physics_Engine", Mid);
/// latte_stop!("Physics_Engine", Mid);
/// latte_stop!("Frame_Total");
/// assert_eq!(latte::snapshot("Physics_Engine").len(), 1);
/// ```
#[macro_export]
macro_rules! latte_start {
    ($id:expr $(,)?) => {
        $crate::latte_start!($id, Fast)
    };
    ($id:expr, $mode:ident $(,)?) => {{
        static __LATTE_ID: $crate::__private::Id = $crate::__private::Id::new($id);
        $crate::__private::start(&__LATTE_ID, $crate::__private::Mode::$mode)
    }};
}

/// Closes a scope: `latte_stop!("id")` (Fast) or `latte_stop!("id", Hard)`.
///
/// The stop mode may differ from the start mode; the sample remembers both.
/// See [`latte_start!`] and [`stop`](crate::stop) for what happens on misuse.
#[macro_export]
macro_rules! latte_stop {
    ($id:expr $(,)?) => {
        $crate::latte_stop!($id, Fast)
    };
    ($id:expr, $mode:ident $(,)?) => {{
        static __LATTE_ID: $crate::__private::Id = $crate::__private::Id::new($id);
        $crate::__private::stop(&__LATTE_ID, $crate::__private::Mode::$mode)
    }};
}

/// Records the time since this thread's previous pulse of the same id.
///
/// ```
/// for _ in 0..3 {
///     latte::latte_pulse!("Poll_Loop_Delta");
/// }
/// assert_eq!(latte::snapshot("Poll_Loop_Delta").len(), 2);
/// ```
#[macro_export]
macro_rules! latte_pulse {
    ($id:expr $(,)?) => {{
        static __LATTE_ID: $crate::__private::Id = $crate::__private::Id::new($id);
        $crate::__private::pulse(&__LATTE_ID)
    }};
}

/// Opens a scope that closes when the returned guard drops:
/// `latte_scope!("id")`, `latte_scope!("id", Mid)` (both ends Mid) or
/// `latte_scope!("id", Fast, Hard)` (start mode, stop mode).
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
    ($id:expr $(,)?) => {
        $crate::latte_scope!($id, Fast, Fast)
    };
    ($id:expr, $mode:ident $(,)?) => {
        $crate::latte_scope!($id, $mode, $mode)
    };
    ($id:expr, $start:ident, $stop:ident $(,)?) => {{
        static __LATTE_ID: $crate::__private::Id = $crate::__private::Id::new($id);
        $crate::__private::scope(
            &__LATTE_ID,
            $crate::__private::Mode::$start,
            $crate::__private::Mode::$stop,
        )
    }};
}
