//! Procedural macros for `latte-telemetry`: `#[latte::timed]`.
//!
//! Users depend on `latte-telemetry` only, which re-exports what lives here; the
//! generated code names `::latte::__private`, so it needs the `latte` crate in scope
//! under that name. The crate is split in three: this entry point and its
//! documentation, argument parsing (`attr`) and code generation (`expand`).

mod attr;
mod expand;

use proc_macro::TokenStream;

/// Times every call of a function: each call records one sample, under the
/// function's name, of the ticks from entry to exit.
///
/// ```
/// #[latte::timed]
/// fn process_order(order: u64) -> Result<u64, String> {
///     if order == 0 {
///         return Err("empty order".into()); // early returns are timed too
///     }
///     Ok(order.rotate_left(7))
/// }
///
/// for order in 0..100 {
///     let _ = process_order(order);
/// }
/// assert_eq!(latte::snapshot("process_order").len(), 100);
/// ```
///
/// # Arguments
///
/// Comma-separated, in any order, each at most once:
///
/// | argument | meaning | default |
/// |---|---|---|
/// | `name = ...` | the component id: a string literal, or a `&'static str` constant (`name = ORDER_ID`, `name = concat!(...)`) | the function's name |
/// | `mode = Fast\|Mid\|Hard` | the timer mode of both reads | `Fast` |
/// | `start = Fast\|Mid\|Hard` | the mode of the Start read | `Fast` |
/// | `stop = Fast\|Mid\|Hard` | the mode of the Stop read | `Fast` |
///
/// `mode` cannot be combined with `start` or `stop`. The name must be known at compile
/// time: a parameter of the function, or a call of a function that is not `const`, is a
/// compile error. The default name is the bare
/// identifier, like C++'s `__func__`: a method `Book::insert` records as `insert`;
/// give a `name` to tell apart methods of different types.
///
/// ```
/// struct Book;
///
/// impl Book {
///     #[latte::timed(name = "Book::insert", mode = Mid)]
///     fn insert(&mut self, price: u64) { /* ... */ }
///
///     #[latte::timed(start = Fast, stop = Hard)]
///     fn match_orders<I: IntoIterator<Item = u64>>(&self, orders: I) -> u64 {
///         orders.into_iter().sum()
///     }
/// }
/// ```
///
/// # What it measures
///
/// A synchronous function opens a scope at the top of its body whose guard closes it
/// when the body is left, by a normal return, an early `return`, `?`, or a panic that
/// unwinds. Scopes nest on the thread's stack like `latte_start!`/`latte_stop!`, so
/// recursion records one sample per call. The function's statements are left as
/// written after that prelude, so they behave, and report errors, as before:
///
/// ```rust,ignore
/// fn process_order(order: u64) -> Result<u64, String> {
///     static __LATTE_TIMED_ID: ::latte::__private::Id =
///         ::latte::__private::Id::new("process_order");
///     let __latte_timed_scope = ::latte::__private::scope(
///         &__LATTE_TIMED_ID,
///         ::latte::__private::Mode::Fast,
///         ::latte::__private::Mode::Fast,
///     );
///     // ... the original body ...
/// }
/// ```
///
/// An `async fn` is timed with a `latte::Timer` instead of a stack scope, because its
/// future can move between threads and other tasks run on the same thread between
/// its polls. The sample is the wall time from the first poll to completion (or to
/// the drop of an unfinished future), awaits included, recorded on the thread that
/// finishes it. The timer is `Send`, so the future is `Send` whenever it was:
///
/// ```
/// #[latte::timed]
/// async fn fetch_quote(symbol: &str) -> u64 {
///     std::future::ready(()).await; // any awaits, on any executor
///     symbol.len() as u64
/// }
///
/// fn assert_send<T: Send>(_: &T) {}
/// let quote = fetch_quote("ACME");
/// assert_send(&quote);
/// # let waker = std::task::Waker::noop();
/// # let mut cx = std::task::Context::from_waker(waker);
/// # let mut quote = std::pin::pin!(quote);
/// assert!(quote.as_mut().poll(&mut cx).is_ready());
/// assert_eq!(latte::snapshot("fetch_quote").len(), 1);
/// ```
///
/// A function returning a future without being `async` (`fn f() -> impl Future`) is
/// synchronous here: only the creation of the future is timed.
///
/// # Supported items
///
/// Free functions, associated functions and methods (any `self` receiver), trait
/// methods with a default body, generic functions and `where` clauses, `unsafe fn`,
/// `extern "C" fn` with a body, functions returning `impl Trait`, `async fn`.
///
/// Rejected with a compile error: anything that is not a function, a `const fn` (it
/// may run at compile time, where there is no clock), and a function without a body
/// (a trait method declaration or a foreign function).
///
/// With `latte`'s `record` feature off, the guards do nothing and the function runs
/// unchanged.
#[proc_macro_attribute]
pub fn timed(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::timed(args.into(), item.into()).into()
}
