//! The counter's step found from readings: a grid, a clock scaled from a coarse
//! counter, a step a fraction of a tick off a whole number, no step.

use super::*;

/// Readings `start + k * step` at pseudo-random `k` steps apart, rounded down.
fn readings(step: f64, start: f64) -> Vec<u64> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut at = start;
    (0..2_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            at += step * (2 + state % 6) as f64;
            at as u64
        })
        .collect()
}

#[test]
fn a_counter_on_a_grid_of_26_ticks() {
    let r = readings(26.0, 14.0);
    assert_eq!(grid_step(&r), 26);
    assert_eq!(delta_step(&r), 26);
}

#[test]
fn a_clock_scaled_from_a_coarse_counter_is_on_no_grid_but_steps_by_10() {
    // The OS clock on the reference guest: 26 TSC ticks at 2.596 GHz.
    let r = readings(26.0 / 2.596, 0.3);
    assert_eq!(grid_step(&r), 1, "its readings take every remainder");
    assert_eq!(delta_step(&r), 10);
}

#[test]
fn a_step_a_fraction_of_a_tick_off_a_whole_number_is_found() {
    // qemu-user's emulated counter: 62.5 MHz ticks on a 1 us host clock, with the
    // reads up to 7 steps apart (a debug build's spacing).
    let r = readings(62.5, 3.0);
    assert_eq!(grid_step(&r), 1);
    assert_eq!(delta_step(&r), 63);
    // Whole-number steps are still found as before.
    assert_eq!(delta_step(&readings(26.0, 14.0)), 26);
}

#[test]
fn a_counter_that_moves_every_tick_has_no_step() {
    let r = readings(1.37, 0.0);
    assert_eq!(grid_step(&r), 1);
    assert_eq!(delta_step(&r), 1);
}
