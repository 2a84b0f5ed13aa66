//! A fixed-step game loop at 500 Hz: physics, AI, render, a frame-to-frame pulse, and
//! a frame mark with a 2.2 ms budget. Every 150th frame the AI re-plans at length and
//! the frame runs over budget: the report's FRAMES block counts those frames and names
//! the AI as what ate them.
//!
//! `cargo run --release --example game_loop` (`-- --json FILE` writes the report as
//! JSON to FILE instead of a table on stdout)

use latte::{Data, Unit, latte_frame, latte_pulse, latte_scope, latte_start, latte_stop};
use std::hint::black_box;
use std::time::{Duration, Instant};

#[derive(Clone, Copy)]
struct Body {
    pos: [f32; 2],
    vel: [f32; 2],
}

fn physics(bodies: &mut [Body], dt: f32) {
    let _scope = latte_scope!("Physics");
    for b in bodies.iter_mut() {
        b.vel[1] -= 9.81 * dt;
        for k in 0..2 {
            b.pos[k] += b.vel[k] * dt;
        }
        if b.pos[1] < 0.0 {
            b.pos[1] = -b.pos[1];
            b.vel[1] = -b.vel[1] * 0.9;
        }
    }
    latte_start!("Physics_Collide", Mid);
    // Broad phase on a coarse grid: count bodies per cell.
    let mut grid = [0u16; 64];
    for b in bodies.iter() {
        let cell = ((b.pos[0].abs() as usize) % 8) * 8 + (b.pos[1].abs() as usize) % 8;
        grid[cell] = grid[cell].saturating_add(1);
    }
    black_box(grid);
    latte_stop!("Physics_Collide", Mid);
}

fn ai(bodies: &[Body], frame: u64) -> usize {
    let _scope = latte_scope!("AI");
    let nearest = |bodies: &[Body]| {
        bodies
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.pos[1].total_cmp(&b.1.pos[1]))
            .map_or(0, |(i, _)| i)
    };
    // Every 30th frame the agents re-plan: a heavier path; every 150th at length.
    if !frame.is_multiple_of(30) {
        return nearest(bodies);
    }
    let _replan = latte_scope!("AI_Replan");
    let passes = if frame.is_multiple_of(150) { 2_000 } else { 40 };
    (0..passes).fold(0, |_, _| nearest(black_box(bodies)))
}

fn render(bodies: &[Body], frame: &mut [u8]) {
    let _scope = latte_scope!("Render");
    frame.fill(0);
    for b in bodies {
        let x = (b.pos[0].abs() as usize) % 320;
        let y = (b.pos[1].abs() as usize) % 180;
        frame[y * 320 + x] = 255;
    }
    latte_start!("Render_Post");
    for px in frame.iter_mut() {
        *px = px.saturating_add(1) / 2; // a cheap "blur"
    }
    latte_stop!("Render_Post");
}

/// The command line: nothing, or `--json FILE`.
fn json_path() -> Option<String> {
    let mut args = std::env::args().skip(1);
    match (args.next().as_deref(), args.next(), args.next()) {
        (None, _, _) => None,
        (Some("--json"), Some(path), None) => Some(path),
        _ => {
            eprintln!("usage: game_loop [--json FILE]");
            std::process::exit(2);
        }
    }
}

fn main() {
    let json = json_path();
    let mut bodies: Vec<Body> = (0..2_000)
        .map(|i| Body {
            pos: [i as f32 * 0.37 % 320.0, (i * 7 % 180) as f32],
            vel: [((i % 11) as f32 - 5.0) * 0.3, 0.0],
        })
        .collect();
    let mut framebuffer = vec![0u8; 320 * 180];
    let step = Duration::from_micros(2_000); // 500 Hz fixed step
    let mut next = Instant::now();
    for frame in 0..600u64 {
        let _frame = latte_scope!("Frame");
        physics(&mut bodies, 0.002);
        black_box(ai(&bodies, frame));
        render(&bodies, &mut framebuffer);
        drop(_frame);
        latte_pulse!("Frame_Delta");
        latte_frame!();
        // Wait for the next step: sleep most of it, spin the rest.
        next += step;
        if let Some(left) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(left.saturating_sub(Duration::from_micros(200)));
            while Instant::now() < next {
                std::hint::spin_loop();
            }
        }
    }
    let options = latte::ReportOptions {
        unit: Unit::Time,
        data: Data::Calibrated,
        frame_budget: Some(Duration::from_micros(2_200)),
        ..Default::default()
    };
    let report = latte::Report::collect(&options);
    match json {
        Some(path) => std::fs::write(&path, report.to_json(latte::report::JsonStyle::Pretty))
            .expect("write the JSON report file"),
        None => report
            .write(&mut std::io::stdout().lock(), latte::Format::default())
            .expect("write report"),
    }
}
