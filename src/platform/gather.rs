//! Reading the platform facts from the machine. Every read is allowed to fail: a
//! missing file, key or leaf is an unknown fact. What only one OS can tell lives in
//! its own leaf file (`gather/linux.rs`, `windows.rs`, `macos.rs`); what the CPU tells
//! (CPUID) is read the same way everywhere.

use super::Facts;
use std::time::Instant;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
mod other;
#[cfg(windows)]
mod windows;

#[cfg(target_os = "linux")]
use linux as os;
#[cfg(target_os = "macos")]
use macos as os;
#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
use other as os;
#[cfg(windows)]
use windows as os;

pub(crate) use os::current_clocksource;

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
    let mut facts = Facts {
        arch: std::env::consts::ARCH.to_owned(),
        os: std::env::consts::OS.to_owned(),
        os_clock_read_ns: Some(time_per_call(|| {
            std::hint::black_box(Instant::now());
        })),
        ..Facts::default()
    };
    cpuid(&mut facts);
    os::read(&mut facts);
    // The hardware's own statement (CNTFRQ_EL0) wins over the OS's.
    facts.counter_hz = counter.hz.or(facts.counter_hz);
    facts.counter_read_ns = counter.read.map(|read| {
        time_per_call(|| {
            std::hint::black_box(read());
        })
    });
    facts
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

/// One CPUID leaf.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn cpuid_leaf(leaf: u32) -> core::arch::x86_64::CpuidResult {
    // `__cpuid` is unsafe in the minimum Rust version (1.88) and safe in later ones
    // (1.95 here), where the block is unused.
    #[allow(unused_unsafe)]
    // SAFETY: CPUID exists on every x86_64 processor and only reads identification
    // registers; the caller queries leaves up to the maximum CPUID reports.
    unsafe {
        core::arch::x86_64::__cpuid(leaf)
    }
}

#[cfg(target_arch = "x86_64")]
fn cpuid(facts: &mut Facts) {
    use cpuid_leaf as __cpuid;
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
    if extended >= 0x8000_0004 {
        // The brand string: 48 bytes in leaves 0x80000002..=0x80000004, NUL-padded.
        let bytes: Vec<u8> = (0x8000_0002..=0x8000_0004u32)
            .flat_map(|leaf| {
                let r = __cpuid(leaf);
                [r.eax, r.ebx, r.ecx, r.edx]
                    .into_iter()
                    .flat_map(u32::to_le_bytes)
            })
            .take_while(|&b| b != 0)
            .collect();
        let brand = String::from_utf8_lossy(&bytes).trim().to_owned();
        facts.cpu_model = (!brand.is_empty()).then_some(brand);
    }
    if extended >= 0x8000_0007 {
        facts.invariant_tsc = Some(__cpuid(0x8000_0007).edx & (1 << 8) != 0);
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid(_facts: &mut Facts) {}
