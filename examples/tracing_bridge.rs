//! Existing `tracing` spans and `#[latte::timed]` functions in one latte report.
//!
//! `cargo run --release --example tracing_bridge`
//!
//! The async handler's span shows its busy time (`handle_request`: one sample per
//! request, the sum of its polls, on whichever worker polled them) next to its whole
//! life from creation to close (`handle_request (lifetime)`), which includes the time
//! it spent waiting. The `send` spans name their component at run time with a
//! `latte.id` field (`send to XNAS`, `send to XLON`, ...): one row per venue, as if each
//! had its own static name.

use latte::tracing::LatteLayer;
use latte::{Data, Unit};
use std::time::Duration;
use tracing_subscriber::layer::SubscriberExt;

#[latte::timed]
fn checksum(payload: &[u8]) -> u64 {
    payload.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

#[tracing::instrument(skip(payload))]
fn decode(payload: &[u8]) -> u64 {
    checksum(payload)
}

const VENUES: [&str; 3] = ["XNAS", "XLON", "XTKS"];

/// Sends to a venue known only at run time: its span is named by its `latte.id` field.
fn send(venue: &str, sum: u64) -> u64 {
    let _span = tracing::info_span!("send", latte.id = %format_args!("send to {venue}")).entered();
    std::hint::black_box(sum.rotate_left(venue.len() as u32))
}

#[tracing::instrument]
async fn handle_request(id: u64) -> u64 {
    let payload: Vec<u8> = (0..256).map(|i| (id + i) as u8).collect();
    let sum = send(VENUES[id as usize % VENUES.len()], decode(&payload));
    tokio::time::sleep(Duration::from_micros(200)).await; // a downstream call
    sum ^ decode(&payload[..128])
}

#[latte::timed(name = "batch", mode = Mid)]
async fn batch(start: u64) -> u64 {
    let mut acc = 0;
    for id in start..start + 10 {
        acc ^= handle_request(id).await;
    }
    acc
}

fn main() -> Result<(), latte::Error> {
    let _latte = latte::builder()
        .unit(Unit::Time)
        .data(Data::Calibrated)
        .start()?;
    // Lifetimes on: the request's whole life, waits included, beside its busy time.
    let layer = LatteLayer::new().span_lifetimes(true);
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
        .expect("no other global subscriber");

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("tokio-worker")
        .enable_time()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        let batches: Vec<_> = (0..20).map(|b| tokio::spawn(batch(b * 10))).collect();
        for b in batches {
            std::hint::black_box(b.await.expect("batch task"));
        }
    });
    Ok(())
}
