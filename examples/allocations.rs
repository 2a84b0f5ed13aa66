//! Allocations per scope: an order gateway whose hot path should not allocate, and
//! one step that does.
//!
//! `cargo run --release --example allocations`
//!
//! `latte::alloc::Counting` wraps the system allocator, so the report's call tree has
//! ALLOCS/CALL and BYTES/CALL beside the times: `Gateway_Order` parses, checks risk and
//! matches without allocating, but `Audit_Line` formats a `String` for every order,
//! and the book's level list grows now and then (`Book_Insert`). `Risk_Check` is
//! declared allocation-free (`latte::alloc::forbid`); the example ends by checking that it
//! stayed so.

use latte::alloc::Counting;
use latte::{latte_scope, latte_start, latte_stop};
use std::alloc::System;
use std::hint::black_box;

#[global_allocator]
static ALLOCATOR: Counting<System> = Counting::new(System);

/// One order as it arrives: fixed fields in a fixed buffer.
#[derive(Clone, Copy)]
struct Order {
    id: u64,
    price: u32,
    quantity: u32,
    buy: bool,
}

/// Reads an order from its wire bytes, without allocating.
fn parse(wire: &[u8; 17]) -> Order {
    let _scope = latte_scope!("Parse");
    let word = |at: usize| u32::from_le_bytes(wire[at..at + 4].try_into().expect("4 bytes"));
    Order {
        id: u64::from_le_bytes(wire[..8].try_into().expect("8 bytes")),
        price: word(8),
        quantity: word(12),
        buy: wire[16] == 1,
    }
}

/// The limits an order must pass: arithmetic only.
fn risk_check(order: &Order, position: &mut i64) -> bool {
    let _scope = latte_scope!("Risk_Check");
    let signed = i64::from(order.quantity) * if order.buy { 1 } else { -1 };
    let ok = (*position + signed).abs() < 50_000 && order.price < 20_000;
    if ok {
        *position += signed;
    }
    ok
}

fn main() {
    latte::alloc::forbid(["Risk_Check"]);
    let guard = latte::init().expect("the agent starts");
    let mut book: Vec<(u32, u32)> = Vec::new();
    let mut audit: Vec<String> = Vec::with_capacity(1 << 16);
    let mut position = 0_i64;
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    for n in 0..50_000_u64 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut wire = [0_u8; 17];
        wire[..8].copy_from_slice(&n.to_le_bytes());
        wire[8..12].copy_from_slice(&(9_900 + (seed % 200) as u32).to_le_bytes());
        wire[12..16].copy_from_slice(&(1 + (seed >> 20) as u32 % 100).to_le_bytes());
        wire[16] = (seed >> 40) as u8 & 1;

        latte_start!("Gateway_Order");
        let order = parse(&wire);
        if risk_check(&order, &mut position) {
            let _scope = latte_scope!("Book_Insert");
            match book.binary_search_by_key(&order.price, |l| l.0) {
                Ok(at) => book[at].1 += order.quantity,
                Err(at) => book.insert(at, (order.price, order.quantity)),
            }
        }
        {
            // The deliberate allocation: a formatted line per order.
            let _scope = latte_scope!("Audit_Line");
            let side = if order.buy { "buy" } else { "sell" };
            let line = format!("{} {side} {}@{}", order.id, order.quantity, order.price);
            if audit.len() == audit.capacity() {
                audit.clear();
            }
            audit.push(line);
        }
        latte_stop!("Gateway_Order");
    }
    black_box((&book, &audit));
    // The allocation-free scope stayed so: this fails loudly, naming it, if it did not.
    latte::alloc::check_no_alloc().expect("Risk_Check does not allocate");
    // The final report, as the guard drops.
    drop(guard);
}
