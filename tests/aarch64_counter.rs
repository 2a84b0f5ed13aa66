//! Own binary: it forces the hardware clock, a choice made once for the whole process.
//!
//! aarch64: with the hardware clock forced, latte reads the virtual counter
//! `CNTVCT_EL0`, converts it with the frequency `CNTFRQ_EL0` states, and its report's
//! ENVIRONMENT block shows that frequency, the measured step, and whether the kernel
//! keeps time with the same counter (`arch_sys_counter`).
//!
//! The registers are read here with `MRS`, independently of latte. aarch64 only (the
//! file is empty elsewhere); CI runs it under qemu-user (`.ci/aarch64.sh`).
#![cfg(target_arch = "aarch64")]
#![allow(unsafe_code)] // MRS of CNTVCT_EL0 and CNTFRQ_EL0

mod common;
use latte::clock::{self, ClockChoice, Mode, Source};
use latte::{Cleaning, Data, Format, ReportOptions, Unit};

/// `CNTFRQ_EL0`, the counter frequency in Hz.
fn cntfrq_el0() -> u64 {
    let f: u64;
    // SAFETY: CNTFRQ_EL0 is readable at EL0 on Linux; reading it has no side effects.
    unsafe { core::arch::asm!("mrs {f}, cntfrq_el0", f = out(reg) f, options(nomem, nostack)) };
    f
}

/// `CNTVCT_EL0`, after the instructions before it (`ISB`).
fn cntvct_el0() -> u64 {
    let t: u64;
    // SAFETY: Linux lets EL0 read CNTVCT_EL0 (CNTKCTL_EL1.EL0VCTEN); ISB only waits
    // for earlier instructions.
    unsafe {
        core::arch::asm!("isb", "mrs {t}, cntvct_el0", t = out(reg) t, options(nomem, nostack))
    };
    t
}

/// Forces the hardware clock for this process, before anything reads a clock (every
/// test starts with this), with an agent running until the guard drops.
fn hardware_forced() -> common::Exclusive {
    let agent = common::exclusive_with(|b| b.clock(ClockChoice::Hardware));
    assert!(clock::decision().hardware, "{:?}", clock::decision());
    agent
}

#[test]
fn the_forced_hardware_clock_is_cntvct_el0() {
    let _hardware = hardware_forced();
    assert_eq!(clock::source(), Source::ArmGenericTimer);
    assert_eq!(clock::source().to_string(), "CNTVCT_EL0");
    // Every mode's read lies between two reads of CNTVCT_EL0 around it: the same counter.
    for mode in Mode::ALL {
        let before = cntvct_el0();
        let read = clock::read(mode);
        let after = cntvct_el0();
        assert!(
            before <= read.ticks && read.ticks <= after,
            "{mode}: {before} <= {} <= {after}",
            read.ticks
        );
        assert_eq!(read.cpu, clock::CPU_UNKNOWN, "{mode}: no CPU id on aarch64");
    }
}

#[test]
fn the_calibrated_frequency_is_cntfrq_el0() {
    let _hardware = hardware_forced();
    let hz = cntfrq_el0();
    assert!(hz > 0, "CNTFRQ_EL0 is set");
    let cal = latte::analyze::calibration();
    eprintln!(
        "CNTFRQ_EL0 {hz} Hz; calibrated {} ticks/ns (accuracy {:.1e}); step {} ticks",
        cal.ticks_per_ns, cal.accuracy, cal.resolution
    );
    // Calibration measures the frequency and keeps the stated one when they agree
    // to 1%: exactly CNTFRQ_EL0.
    assert_eq!(cal.ticks_per_ns, hz as f64 / 1e9);
}

#[test]
fn the_environment_block_shows_frequency_step_and_clocksource() {
    let _hardware = hardware_forced();
    let hz = cntfrq_el0();
    let cal = latte::analyze::calibration();
    let report = latte::Report::collect(&ReportOptions {
        unit: Unit::Time,
        data: Data::Calibrated,
        cleaning: Cleaning::OFF,
        ..ReportOptions::default()
    });
    let env = report.environment.clone().expect("an environment block");
    assert_eq!(env.clock, "CNTVCT_EL0");
    assert_eq!(env.counter_hz, Some(hz));
    assert_eq!(env.step_ticks, Some(cal.resolution));
    // What the kernel says, read here: under qemu-user it is the host's clocksource.
    let kernel =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .ok()
            .map(|s| s.trim().to_owned());
    assert_eq!(env.clocksource_at_start, kernel);
    let mut table = Vec::new();
    report.write(&mut table, Format::default()).unwrap();
    let table = String::from_utf8(table).unwrap();
    let on_counter = match kernel.as_deref() {
        Some("arch_sys_counter") => "yes".to_owned(),
        Some(other) => format!("no (`{other}`)"),
        None => "unknown".to_owned(),
    };
    let unwrapped = table.split_whitespace().collect::<Vec<_>>().join(" ");
    for expected in [
        format!(
            "counter: CNTFRQ_EL0 states {hz} Hz; measured step {} tick",
            cal.resolution
        ),
        format!("kernel clocksource is arch_sys_counter: {on_counter}"),
    ] {
        assert!(unwrapped.contains(&expected), "{expected:?} in\n{table}");
    }
    eprintln!(
        "{}",
        table
            .lines()
            .skip_while(|l| !l.contains("ENVIRONMENT"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
