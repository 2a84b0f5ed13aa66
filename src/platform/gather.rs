//! Reading the platform facts from the machine. Every read is allowed to fail: a
//! missing file or leaf is an unknown fact.

use super::Facts;
use std::time::Instant;

/// What the caller (the clock) knows of the hardware counter: how to read it, if the
/// target has one, and the frequency the hardware states, if it does.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Counter {
    /// A Fast read of the hardware counter.
    pub(crate) read: Option<fn() -> u64>,
    /// The stated frequency in Hz (aarch64 `CNTFRQ_EL0`).
    pub(crate) hz: Option<u64>,
}

/// Reads the facts of this machine (a few milliseconds: it times counter reads).
pub(crate) fn gather(counter: Counter) -> Facts {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").ok();
    let field = |name: &str| -> Option<String> {
        cpuinfo.as_deref()?.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name).then(|| v.trim().to_owned())
        })
    };
    let flags = field("flags");
    let flag = |f: &str| {
        flags
            .as_deref()
            .map(|all| all.split_whitespace().any(|x| x == f))
    };
    let sys = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .map(|s| s.trim().to_owned())
    };
    let mut facts = Facts {
        arch: std::env::consts::ARCH.to_owned(),
        cpu_model: field("model name").or_else(|| field("Model")),
        constant_tsc: flag("constant_tsc"),
        nonstop_tsc: flag("nonstop_tsc"),
        kernel_clocksource: current_clocksource(),
        governor: sys("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        isolated_cpus: sys("/sys/devices/system/cpu/isolated")
            .map(|s| if s.is_empty() { "none".into() } else { s }),
        os_clock_read_ns: Some(time_per_call(|| {
            std::hint::black_box(Instant::now());
        })),
        ..Facts::default()
    };
    cpuid(&mut facts);
    facts.counter_hz = counter.hz;
    facts.counter_read_ns = counter.read.map(|read| {
        time_per_call(|| {
            std::hint::black_box(read());
        })
    });
    facts
}

/// The kernel's current clocksource, read afresh (it can change at run time).
pub(crate) fn current_clocksource() -> Option<String> {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .ok()
        .map(|s| s.trim().to_owned())
}

/// Median over 5 rounds of the time per call of `f`, in ns.
fn time_per_call(mut f: impl FnMut()) -> f64 {
    const CALLS: u32 = 2_000;
    let mut rounds: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..CALLS {
                f();
            }
            t.elapsed().as_nanos() as f64 / f64::from(CALLS)
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    rounds[2]
}

#[cfg(target_arch = "x86_64")]
fn cpuid(facts: &mut Facts) {
    use core::arch::x86_64::__cpuid;
    // Leaves above the reported maximum are not queried.
    let (basic, extended) = (__cpuid(0).eax, __cpuid(0x8000_0000).eax);
    if basic >= 1 {
        let leaf1 = __cpuid(1);
        facts.tsc = Some(leaf1.edx & (1 << 4) != 0);
        facts.hypervisor = Some(leaf1.ecx & (1 << 31) != 0);
    }
    if extended >= 0x8000_0001 {
        facts.rdtscp = Some(__cpuid(0x8000_0001).edx & (1 << 27) != 0);
    }
    if extended >= 0x8000_0007 {
        facts.invariant_tsc = Some(__cpuid(0x8000_0007).edx & (1 << 8) != 0);
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid(_facts: &mut Facts) {}
