//! Platform detection: a table of platform facts and the clock latte must choose for
//! each. `decide` is pure, so every case is a row. Where the counter's frequency comes
//! from, per OS and architecture. (This machine's facts: the clock's tests.)

use super::{ClockChoice, Facts, Frequency, decide, frequency};

/// A modern x86_64 host: TSC, RDTSCP, invariant, kernel on `tsc`, cheap reads.
fn x86() -> Facts {
    Facts {
        arch: "x86_64".into(),
        tsc: Some(true),
        rdtscp: Some(true),
        invariant_tsc: Some(true),
        constant_tsc: Some(true),
        nonstop_tsc: Some(true),
        hypervisor: Some(false),
        kernel_clocksource: Some("tsc".into()),
        counter_read_ns: Some(8.0),
        os_clock_read_ns: Some(20.0),
        ..Facts::default()
    }
}

fn aarch64() -> Facts {
    Facts {
        arch: "aarch64".into(),
        counter_hz: Some(24_000_000),
        counter_read_ns: Some(6.0),
        kernel_clocksource: Some("arch_sys_counter".into()),
        ..Facts::default()
    }
}

/// (fixture name, facts, choice, expected: hardware?, words the reason must contain)
type Fixture = (&'static str, Facts, ClockChoice, bool, &'static str);

fn fixtures() -> Vec<Fixture> {
    [
        x86_hosts(),
        x86_kernel_against_cpuid(),
        clocksource_unknown(),
        x86_counter_faults(),
        windows_and_macos(),
        other_architectures(),
        forced(),
    ]
    .concat()
}

/// x86_64 hosts on Linux: bare metal and guests, by clocksource and by what CPUID passes through.
fn x86_hosts() -> Vec<Fixture> {
    use ClockChoice::*;
    vec![
        (
            "bare metal, kernel on tsc",
            x86(),
            Auto,
            true,
            "kernel itself",
        ),
        (
            "KVM guest, kernel on tsc (this machine)",
            Facts {
                hypervisor: Some(true),
                ..x86()
            },
            Auto,
            true,
            "kernel itself",
        ),
        (
            "KVM guest on kvm-clock, invariant TSC passed through",
            Facts {
                hypervisor: Some(true),
                kernel_clocksource: Some("kvm-clock".into()),
                ..x86()
            },
            Auto,
            true,
            "invariant",
        ),
        (
            "KVM guest on kvm-clock, no invariant bit, no flags",
            Facts {
                hypervisor: Some(true),
                kernel_clocksource: Some("kvm-clock".into()),
                invariant_tsc: Some(false),
                constant_tsc: Some(false),
                nonstop_tsc: Some(false),
                ..x86()
            },
            Auto,
            false,
            "kvm-clock",
        ),
        (
            "Hyper-V TSC page, invariant bit hidden but constant+nonstop flags",
            Facts {
                hypervisor: Some(true),
                kernel_clocksource: Some("hyperv_clocksource_tsc_page".into()),
                invariant_tsc: Some(false),
                ..x86()
            },
            Auto,
            true,
            "invariant",
        ),
    ]
}

/// x86_64 where the invariant bit is missing, or the kernel does not keep time with the TSC.
fn x86_kernel_against_cpuid() -> Vec<Fixture> {
    use ClockChoice::*;
    vec![
        (
            "TSC without the invariant bit (old CPU), kernel on hpet",
            Facts {
                invariant_tsc: Some(false),
                constant_tsc: Some(false),
                nonstop_tsc: Some(false),
                kernel_clocksource: Some("hpet".into()),
                ..x86()
            },
            Auto,
            false,
            "unstable",
        ),
        (
            "invariant TSC but the kernel marked it unstable (acpi_pm)",
            Facts {
                kernel_clocksource: Some("acpi_pm".into()),
                ..x86()
            },
            Auto,
            false,
            "acpi_pm",
        ),
        (
            "missing CPUID leaf 0x80000007, kernel on tsc",
            Facts {
                invariant_tsc: None,
                constant_tsc: None,
                nonstop_tsc: None,
                ..x86()
            },
            Auto,
            true,
            "kernel itself",
        ),
    ]
}

/// Where the kernel's clocksource is unknown (not Linux): CPUID alone decides.
fn clocksource_unknown() -> Vec<Fixture> {
    use ClockChoice::*;
    vec![
        (
            "missing CPUID leaf 0x80000007, clocksource unknown (not Linux)",
            Facts {
                invariant_tsc: None,
                constant_tsc: None,
                nonstop_tsc: None,
                kernel_clocksource: None,
                ..x86()
            },
            Auto,
            false,
            "no evidence",
        ),
        (
            "invariant TSC, clocksource unknown (not Linux)",
            Facts {
                kernel_clocksource: None,
                ..x86()
            },
            Auto,
            true,
            "invariant",
        ),
        (
            "nothing known at all (x86_64)",
            Facts {
                arch: "x86_64".into(),
                ..Facts::default()
            },
            Auto,
            false,
            "no evidence",
        ),
    ]
}

/// Windows and macOS name no kernel clocksource: CPUID's invariant bit decides, as on
/// Linux when `/sys` cannot be read, and the reason says what is not known.
fn windows_and_macos() -> Vec<Fixture> {
    use ClockChoice::*;
    let on = |os: &str, facts: Facts| Facts {
        os: os.into(),
        kernel_clocksource: None,
        constant_tsc: None,
        nonstop_tsc: None,
        governor: None,
        ..facts
    };
    vec![
        (
            "Windows, invariant TSC",
            on("windows", x86()),
            Auto,
            true,
            "invariant (Windows names no kernel clocksource",
        ),
        (
            "Windows, no invariant bit (an old CPU, or a hypervisor hiding it)",
            on(
                "windows",
                Facts {
                    invariant_tsc: Some(false),
                    ..x86()
                },
            ),
            Auto,
            false,
            "no evidence the TSC is invariant (Windows names",
        ),
        (
            "Windows guest whose hypervisor traps RDTSC",
            on(
                "windows",
                Facts {
                    hypervisor: Some(true),
                    counter_read_ns: Some(900.0),
                    ..x86()
                },
            ),
            Auto,
            false,
            "trapped",
        ),
        (
            "macOS on Intel, invariant TSC",
            on("macos", x86()),
            Auto,
            true,
            "invariant (macOS names no kernel clocksource",
        ),
        (
            "macOS on Apple silicon (CNTVCT_EL0 at 24 MHz)",
            on("macos", aarch64()),
            Auto,
            true,
            "fixed frequency",
        ),
    ]
}

/// x86_64 counters latte cannot use: trapped, without RDTSCP, absent.
fn x86_counter_faults() -> Vec<Fixture> {
    use ClockChoice::*;
    vec![
        (
            "slow RDTSC: trapped by the hypervisor",
            Facts {
                hypervisor: Some(true),
                counter_read_ns: Some(1_200.0),
                ..x86()
            },
            Auto,
            false,
            "trapped",
        ),
        (
            "no RDTSCP",
            Facts {
                rdtscp: Some(false),
                ..x86()
            },
            Auto,
            false,
            "RDTSCP",
        ),
        (
            "no TSC at all",
            Facts {
                tsc: Some(false),
                ..x86()
            },
            Auto,
            false,
            "no TSC",
        ),
    ]
}

/// aarch64's generic timer, with and without its frequency; riscv64.
fn other_architectures() -> Vec<Fixture> {
    use ClockChoice::*;
    vec![
        (
            "aarch64 generic timer",
            aarch64(),
            Auto,
            true,
            "fixed frequency",
        ),
        (
            "aarch64 with CNTFRQ_EL0 unset",
            Facts {
                counter_hz: Some(0),
                ..aarch64()
            },
            Auto,
            false,
            "CNTFRQ_EL0",
        ),
        (
            "riscv64: no counter latte reads",
            Facts {
                arch: "riscv64".into(),
                ..Facts::default()
            },
            Auto,
            false,
            "no hardware counter",
        ),
    ]
}

/// A choice forced by `LATTE_CLOCK` or the builder.
fn forced() -> Vec<Fixture> {
    use ClockChoice::*;
    vec![
        (
            "forced OS clock on a perfect TSC",
            x86(),
            Os,
            false,
            "forced",
        ),
        (
            "forced hardware counter despite no invariant bit",
            Facts {
                invariant_tsc: Some(false),
                constant_tsc: Some(false),
                kernel_clocksource: Some("hpet".into()),
                ..x86()
            },
            Hardware,
            true,
            "forced",
        ),
        (
            "forced hardware counter on riscv64",
            Facts {
                arch: "riscv64".into(),
                ..Facts::default()
            },
            Hardware,
            false,
            "none latte can read",
        ),
    ]
}

#[test]
fn detection_table() {
    let mut failures = Vec::new();
    let table = fixtures();
    assert!(table.len() >= 12);
    for (name, facts, choice, hardware, reason) in &table {
        let d = decide(facts, *choice);
        println!(
            "{:<66} -> {:<8} {}",
            name,
            if d.hardware { "hardware" } else { "OS" },
            d.reason
        );
        if d.hardware != *hardware || !d.reason.contains(reason) {
            failures.push(format!(
                "{name}: got {d:?}, expected hardware={hardware} with reason containing {reason:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn decide_is_pure() {
    for (_, facts, choice, _, _) in fixtures() {
        assert_eq!(decide(&facts, choice), decide(&facts.clone(), choice));
    }
}

/// Where the hardware counter's frequency comes from, per OS and architecture.
#[test]
fn frequency_source_table() {
    let facts = |arch: &str, os: &str, hz: Option<u64>| Facts {
        arch: arch.into(),
        os: os.into(),
        counter_hz: hz,
        ..Facts::default()
    };
    let measured = |against| Frequency::Measured { against };
    let stated = |hz, by| Frequency::Stated { hz, by };
    let rows = [
        // (arch, os, stated Hz, expected)
        ("x86_64", "linux", None, measured("CLOCK_MONOTONIC")),
        (
            "x86_64",
            "windows",
            None,
            measured("QueryPerformanceCounter"),
        ),
        // A frequency stated on Windows or Linux x86_64 is not a source latte knows.
        (
            "x86_64",
            "windows",
            Some(3_000_000_000),
            measured("QueryPerformanceCounter"),
        ),
        (
            "x86_64",
            "macos",
            Some(2_600_000_000),
            stated(2_600_000_000, "sysctl machdep.tsc.frequency"),
        ),
        // Without machdep.tsc.frequency, calibration measures it.
        ("x86_64", "macos", None, measured("mach_absolute_time")),
        (
            "aarch64",
            "macos",
            Some(24_000_000),
            stated(24_000_000, "CNTFRQ_EL0"),
        ),
        (
            "aarch64",
            "linux",
            Some(62_500_000),
            stated(62_500_000, "CNTFRQ_EL0"),
        ),
        // CNTFRQ_EL0 unset: nothing stated (and decide picks the OS clock).
        ("aarch64", "linux", Some(0), measured("CLOCK_MONOTONIC")),
        (
            "x86_64",
            "freebsd",
            None,
            measured("the OS monotonic clock"),
        ),
    ];
    for (arch, os, hz, expected) in rows {
        assert_eq!(
            frequency(&facts(arch, os, hz)),
            expected,
            "{arch} {os} {hz:?}"
        );
    }
}

#[test]
fn a_stated_frequency_reads_as_a_sentence() {
    let stated = Frequency::Stated {
        hz: 24_000_000,
        by: "CNTFRQ_EL0",
    };
    assert_eq!(stated.to_string(), "CNTFRQ_EL0 states 24000000 Hz");
}
