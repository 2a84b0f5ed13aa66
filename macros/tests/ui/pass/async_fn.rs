//! `async fn` in its forms: free, generic, methods, trait impls; the futures stay
//! `Send` and record when they complete.
#![deny(warnings)]

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

fn assert_send<T: Send>(_: &T) {}

/// Polls `future` to completion (it must not wait on anything external).
fn run<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

/// Pending once, then ready: an await point the timer must survive.
async fn yield_once() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
    .await
}

#[latte::timed]
async fn fetch(symbol: &str) -> usize {
    yield_once().await;
    symbol.len()
}

#[latte::timed(name = "async generic", mode = Mid)]
async fn generic<T>(value: T) -> Option<T>
where
    T: Send + Clone,
{
    yield_once().await;
    Some(value.clone())
}

#[latte::timed]
async fn fallible(x: &str) -> Result<u32, std::num::ParseIntError> {
    yield_once().await;
    let v: u32 = x.parse()?;
    Ok(v)
}

struct Client;

impl Client {
    #[latte::timed]
    async fn request(&self, n: u32) -> u32 {
        yield_once().await;
        n + 1
    }

    #[latte::timed]
    async fn close(self) {}
}

trait Service {
    fn call(&self) -> impl Future<Output = u8> + Send;
}

impl Service for Client {
    #[latte::timed]
    async fn call(&self) -> u8 {
        yield_once().await;
        9
    }
}

fn main() {
    assert_send(&fetch("x"));
    assert_send(&generic(1u8));
    assert_send(&Client.request(1));
    assert_send(&Client.call());

    assert_eq!(run(fetch("abc")), 3);
    assert_eq!(run(generic("g")), Some("g"));
    assert!(run(fallible("nope")).is_err());
    assert_eq!(run(fallible("5")), Ok(5));
    assert_eq!(run(Client.request(1)), 2);
    assert_eq!(run(Client.call()), 9);
    run(Client.close());

    for (id, n) in [
        ("fetch", 1),
        ("async generic", 1),
        ("fallible", 2),
        ("request", 1),
        ("call", 1),
        ("close", 1),
    ] {
        assert_eq!(latte::snapshot(id).len(), n, "{id}");
    }
    assert_eq!(latte::capture().threads[0].anomalies.total(), 0);
}
