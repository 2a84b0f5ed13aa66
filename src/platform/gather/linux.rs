//! Linux: `/proc/cpuinfo` and `/sys` tell the CPU's flags, the kernel's clocksource,
//! the frequency governor and the isolated CPUs.

use crate::platform::Facts;

/// Adds what the kernel tells to the facts.
pub(in crate::platform) fn read(facts: &mut Facts) {
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
    // The kernel's name for the CPU where it has one ("Model" on ARM boards).
    if let Some(model) = field("model name").or_else(|| field("Model")) {
        facts.cpu_model = Some(model);
    }
    facts.constant_tsc = flag("constant_tsc");
    facts.nonstop_tsc = flag("nonstop_tsc");
    facts.kernel_clocksource = current_clocksource();
    facts.governor = sys("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    facts.isolated_cpus = sys("/sys/devices/system/cpu/isolated")
        .map(|s| if s.is_empty() { "none".into() } else { s });
}

/// The kernel's current clocksource, read afresh (it can change at run time).
pub(crate) fn current_clocksource() -> Option<String> {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .ok()
        .map(|s| s.trim().to_owned())
}
