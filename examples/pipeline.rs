//! A producer/consumer pipeline with per-stage latency: each order is built on the
//! `producer` thread, waits in a queue, and is handled on the `consumer` thread. Scopes
//! time the stages that run on one thread; a `Timer` carried inside the message times
//! what crosses threads (the queue wait, and the whole trip).
//!
//! `cargo run --release --example pipeline`

use latte::{Data, Id, Mode, Timer, Unit, latte_scope};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// From the producer's send to the consumer's receive.
static QUEUE_WAIT: Id = Id::new("queue_wait");
/// From the start of production to the end of handling.
static END_TO_END: Id = Id::new("end_to_end");

const ORDERS: u64 = 100_000;

/// An order, and the timers that travel with it (each is 32 bytes of plain data).
struct Order {
    id: u64,
    price: u64,
    qty: u64,
    end_to_end: Timer<'static>,
    queue_wait: Timer<'static>,
}

/// splitmix64: deterministic order flow without a dependency.
fn mix(x: u64) -> u64 {
    let x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn produce(id: u64) -> Order {
    let end_to_end = Timer::start(&END_TO_END, Mode::Fast, Mode::Mid);
    let (price, qty) = {
        let _scope = latte_scope!("produce");
        let seed = (0..64).fold(id, |acc, _| mix(acc));
        (10_000 + seed % 100, 1 + (seed >> 32) % 50)
    };
    Order {
        id,
        price,
        qty,
        end_to_end,
        queue_wait: Timer::start(&QUEUE_WAIT, Mode::Fast, Mode::Mid),
    }
}

/// Handles one order; returns its notional.
fn handle(order: Order) -> u64 {
    drop(order.queue_wait); // received: the queue wait ends here, on this thread
    let notional = {
        let _scope = latte_scope!("handle");
        let risk = (0..128).fold(order.id, |acc, _| mix(acc)) % 3;
        order.price * order.qty + risk
    };
    drop(order.end_to_end);
    notional
}

fn main() {
    let _latte = latte::builder()
        .unit(Unit::Time)
        .data(Data::Calibrated)
        .start()
        .expect("start the latte agent");
    let (tx, rx) = crossbeam_channel::bounded::<Order>(1024);
    let producer = std::thread::Builder::new()
        .name("producer".into())
        .spawn(move || {
            // An order every microsecond: the consumer keeps up, so the queue wait is
            // the hand-off between threads, not a backlog.
            let start = Instant::now();
            for id in 0..ORDERS {
                let due = start + Duration::from_micros(id);
                while Instant::now() < due {
                    std::hint::spin_loop();
                }
                tx.send(produce(id)).expect("the consumer is running");
            }
        })
        .expect("spawn the producer");
    let consumer = std::thread::Builder::new()
        .name("consumer".into())
        .spawn(move || rx.into_iter().map(handle).fold(0u64, u64::wrapping_add))
        .expect("spawn the consumer");
    producer.join().expect("producer");
    black_box(consumer.join().expect("consumer"));
    // The guard drops here: the final report, in time units on calibrated data.
}
