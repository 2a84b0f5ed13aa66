//! Can the hardware counter be trusted? Platform facts, and a pure decision over them.
//!
//! [`decide`] is a pure function of [`Facts`], so every case is a table row in the
//! tests; `gather` reads them from the machine (CPUID, `/proc/cpuinfo`, the kernel's
//! clocksource, the cost of a counter read). A missing fact is `None` and is shown as
//! "unknown", never an error.
//!
//! A leaf: the clock module hands in what only it can measure (how to read the
//! hardware counter, its stated frequency), so nothing here calls back into it.

mod frequency;
mod gather;

#[cfg(feature = "agent")]
use serde::Serialize;

/// What latte knows about the machine's clocks. `None` means unknown.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "agent", derive(Serialize))]
pub struct Facts {
    /// The target's architecture (`x86_64`, `aarch64`, ...).
    pub arch: String,
    /// The target's OS (`linux`, `windows`, `macos`, ...; empty: unknown).
    pub os: String,
    /// CPU model name.
    pub cpu_model: Option<String>,
    /// `CPUID.1:EDX.TSC`: the CPU has a time-stamp counter.
    pub tsc: Option<bool>,
    /// `CPUID.80000001H:EDX.RDTSCP`.
    pub rdtscp: Option<bool>,
    /// `CPUID.80000007H:EDX[8]`: the TSC runs at a constant rate in every P-, C- and
    /// T-state (`None` when the CPU does not have that leaf).
    pub invariant_tsc: Option<bool>,
    /// The kernel's `constant_tsc` flag.
    pub constant_tsc: Option<bool>,
    /// The kernel's `nonstop_tsc` flag.
    pub nonstop_tsc: Option<bool>,
    /// `CPUID.1:ECX[31]`: running under a hypervisor.
    pub hypervisor: Option<bool>,
    /// The kernel's current clocksource (`tsc`, `kvm-clock`, `hpet`, ...): Linux
    /// only; Windows and macOS name none.
    pub kernel_clocksource: Option<String>,
    /// The hardware counter's frequency in Hz as the platform states it: aarch64
    /// `CNTFRQ_EL0`, or on x86_64 macOS `sysctl machdep.tsc.frequency` (see
    /// [`frequency`]).
    pub counter_hz: Option<u64>,
    /// Nanoseconds one hardware counter read takes, measured.
    pub counter_read_ns: Option<f64>,
    /// Nanoseconds one `Instant::now()` takes, measured.
    pub os_clock_read_ns: Option<f64>,
    /// The CPU frequency governor of CPU 0.
    pub governor: Option<String>,
    /// The kernel's isolated CPUs (`isolcpus`), as the kernel lists them.
    pub isolated_cpus: Option<String>,
}

/// Which clock to use: decided from the facts (`Auto`) or forced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "agent", derive(Serialize))]
pub enum ClockChoice {
    /// Let latte decide from the platform facts (see `docs/reliability.md`).
    #[default]
    Auto,
    /// The hardware counter (TSC / `CNTVCT_EL0`), if the target has one.
    Hardware,
    /// The OS monotonic clock.
    Os,
}

/// The clock latte reads, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "agent", derive(Serialize))]
pub struct Decision {
    /// `true`: the hardware counter; `false`: the OS monotonic clock.
    pub hardware: bool,
    /// Why, in a sentence a performance engineer can check.
    pub reason: String,
}

/// A counter read slower than this is trapped or emulated (a hypervisor that does
/// not pass the TSC through): the OS clock is then no slower and is trustworthy.
pub const TRAPPED_READ_NS: f64 = 500.0;

/// Clocksources with which the kernel has given up on the TSC: it marks the TSC
/// unstable and falls back to one of these.
const DISTRUSTING: [&str; 3] = ["hpet", "acpi_pm", "jiffies"];

/// Picks the clock from the facts. Pure: the same facts always give the same answer
/// (`detection_table` in `platform::tests` holds a row per kind of host).
pub fn decide(f: &Facts, choice: ClockChoice) -> Decision {
    let has_counter = matches!(f.arch.as_str(), "x86_64" | "aarch64");
    match choice {
        ClockChoice::Os => return os("forced by configuration".into()),
        ClockChoice::Hardware if has_counter => return hw("forced by configuration"),
        ClockChoice::Hardware => {
            return os(format!(
                "hardware counter forced, but {} has none latte can read",
                f.arch
            ));
        }
        ClockChoice::Auto => {}
    }
    if !has_counter {
        return os(format!("no hardware counter latte can read on {}", f.arch));
    }
    if let Some(ns) = f.counter_read_ns
        && ns > TRAPPED_READ_NS
    {
        return os(format!(
            "a counter read takes {ns:.0} ns: it is trapped or emulated (the OS clock takes {})",
            f.os_clock_read_ns
                .map_or("an unknown time".into(), |o| format!("{o:.0} ns"))
        ));
    }
    if f.arch == "aarch64" {
        return match f.counter_hz {
            Some(0) => os("CNTFRQ_EL0 reads 0: the counter frequency is not set".into()),
            _ => hw("the ARM generic timer runs at a fixed frequency by architecture"),
        };
    }
    decide_x86_64(f)
}

/// The x86_64 part of [`decide`]: is the TSC there, and does the kernel trust it?
fn decide_x86_64(f: &Facts) -> Decision {
    if f.tsc == Some(false) {
        return os("the CPU has no TSC".into());
    }
    if f.rdtscp == Some(false) {
        return os("the CPU has no RDTSCP, which Mid and Hard modes need".into());
    }
    let invariant = f.invariant_tsc == Some(true)
        || (f.constant_tsc == Some(true) && f.nonstop_tsc == Some(true));
    match f.kernel_clocksource.as_deref() {
        Some("tsc") => hw("the kernel itself keeps time with the TSC"),
        Some(cs) if DISTRUSTING.contains(&cs) => os(format!(
            "the kernel keeps time with {cs}: it has marked the TSC unstable"
        )),
        Some(cs) if invariant => hw(&format!(
            "the TSC is invariant (the kernel uses {cs}, as usual under a hypervisor)"
        )),
        Some(cs) => os(format!(
            "the kernel uses {cs} and the CPU does not report an invariant TSC"
        )),
        None if invariant => hw(&format!("the TSC is invariant ({})", no_clocksource(f))),
        None => os(format!(
            "no evidence the TSC is invariant ({})",
            no_clocksource(f)
        )),
    }
}

/// Why the kernel's clocksource is unknown: Windows and macOS name none; on Linux
/// `/sys` could not be read.
fn no_clocksource(f: &Facts) -> String {
    match os_name(&f.os) {
        Some(os) => format!("{os} names no kernel clocksource to check it against"),
        None => "the kernel clocksource is unknown".into(),
    }
}

/// The OS's name in a sentence, where it names no kernel clocksource.
fn os_name(os: &str) -> Option<&'static str> {
    match os {
        "windows" => Some("Windows"),
        "macos" => Some("macOS"),
        _ => None,
    }
}

fn hw(reason: &str) -> Decision {
    Decision {
        hardware: true,
        reason: reason.to_owned(),
    }
}

fn os(reason: String) -> Decision {
    Decision {
        hardware: false,
        reason,
    }
}

// The agent reads the clocksource again for the report.
pub use frequency::{Frequency, frequency};
#[cfg_attr(not(feature = "agent"), allow(unused_imports))]
pub(crate) use gather::{Counter, current_clocksource, gather};

#[cfg(test)]
mod tests;
