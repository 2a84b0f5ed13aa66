//! macOS: `sysctl` tells the CPU's name (`machdep.cpu.brand_string`) and, on x86_64,
//! the TSC frequency the kernel measured at boot (`machdep.tsc.frequency`). macOS does
//! not name the counter behind its clock (`mach_absolute_time`) as Linux names its
//! clocksource, nor expose a governor or isolated CPUs: those facts stay unknown.
#![allow(unsafe_code)]

use crate::platform::Facts;
use std::ffi::CStr;

/// Adds what `sysctl` tells to the facts.
pub(in crate::platform) fn read(facts: &mut Facts) {
    if let Some(brand) = sysctl_string(c"machdep.cpu.brand_string") {
        facts.cpu_model = Some(brand);
    }
    if cfg!(target_arch = "x86_64") {
        facts.counter_hz = sysctl_u64(c"machdep.tsc.frequency").filter(|&hz| hz > 0);
    }
}

/// macOS names no kernel clocksource.
pub(crate) fn current_clocksource() -> Option<String> {
    None
}

fn sysctl_u64(name: &CStr) -> Option<u64> {
    let mut value = 0u64;
    let mut len = std::mem::size_of::<u64>();
    // SAFETY: `name` is NUL-terminated; `value` is writable for `len` bytes and `len`
    // says so; no new value is set (null, 0).
    let rc = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            (&raw mut value).cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    (rc == 0 && len == std::mem::size_of::<u64>()).then_some(value)
}

fn sysctl_string(name: &CStr) -> Option<String> {
    let mut buf = [0u8; 256];
    let mut len = buf.len();
    // SAFETY: as in `sysctl_u64`, with `buf` writable for `len` bytes.
    let rc = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        return None;
    }
    let text = CStr::from_bytes_until_nul(&buf[..len.min(buf.len())]).ok()?;
    let text = text.to_string_lossy().trim().to_owned();
    (!text.is_empty()).then_some(text)
}
