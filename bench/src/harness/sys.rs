//! Facts about the process and the machine, from /proc.

use serde::Serialize;

/// A field of /proc/self/status in bytes (e.g. "VmHWM", "VmRSS").
pub fn proc_status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field) && l[field.len()..].starts_with(':'))?;
    let kb: u64 = line[field.len() + 1..].trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb * 1024)
}

/// Peak resident set size of this process so far.
pub fn peak_rss() -> Option<u64> {
    proc_status_bytes("VmHWM")
}

#[derive(Serialize)]
pub struct Machine {
    pub cpu_model: String,
    pub logical_cpus: usize,
    pub memory_total_bytes: u64,
    pub kernel: String,
    pub rustc: String,
    pub target_cpu: &'static str,
    pub profile: &'static str,
}

pub fn machine() -> Machine {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let logical_cpus = cpuinfo.lines().filter(|l| l.starts_with("processor")).count();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory_total_bytes = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string();
    Machine {
        cpu_model,
        logical_cpus,
        memory_total_bytes,
        kernel,
        rustc: env!("BENCH_RUSTC_VERSION").to_string(),
        target_cpu: "native",
        profile: env!("BENCH_PROFILE"),
    }
}
