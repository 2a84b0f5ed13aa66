//! The timer modes as the `macro_rules!` macros name them, `FastMidOrHard::$mode`.
//!
//! It is [`Mode`] without the trait impls, so a misspelt mode
//! (`latte_start!("id", mid)`) draws only rustc's suggestion of the variant with a
//! similar name (`Mid`), not a method of `Ord` (`min`) that would not compile either;
//! and its name, unique in the crate, is the error's advice:
//! "no variant named `Slow` found for enum `FastMidOrHard`".
//! `macros/tests/ui/fail/unknown_mode.stderr` pins the message.

use super::Mode;

/// A timer mode named in a macro call. Not public API.
pub enum FastMidOrHard {
    /// [`Mode::Fast`].
    Fast,
    /// [`Mode::Mid`].
    Mid,
    /// [`Mode::Hard`].
    Hard,
}

impl FastMidOrHard {
    /// The timer mode; the macros evaluate it in a `const` block.
    pub const fn into_timer_mode(self) -> Mode {
        match self {
            FastMidOrHard::Fast => Mode::Fast,
            FastMidOrHard::Mid => Mode::Mid,
            FastMidOrHard::Hard => Mode::Hard,
        }
    }
}
