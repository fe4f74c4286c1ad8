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

/// This process's I/O counters from /proc/self/io: `wchar` counts the bytes passed to
/// write system calls (pwrite included), `write_bytes` the bytes the process caused to
/// be sent to the storage layer (whole pages dirtied in the page cache).
#[derive(Clone, Copy, Debug, Default)]
pub struct ProcIo {
    pub wchar: u64,
    pub write_bytes: u64,
}

pub fn proc_io() -> Option<ProcIo> {
    let text = std::fs::read_to_string("/proc/self/io").ok()?;
    let field = |name: &str| -> Option<u64> {
        text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(':')?.trim().parse().ok())
    };
    Some(ProcIo { wchar: field("wchar")?, write_bytes: field("write_bytes")? })
}

/// A child process run to completion by [`run_measured`].
pub struct Exited {
    pub success: bool,
    /// From just before spawning to the moment the child was reaped.
    pub elapsed: std::time::Duration,
    /// The child's peak resident set size (`ru_maxrss` of wait4), in bytes.
    pub peak_rss: u64,
    pub stderr: String,
}

/// Runs `cmd` as a fresh process (stderr captured) and reaps it with wait4, which
/// returns the child's own resource usage: peak RSS for programs this harness does not
/// build (the columns workload's children report their VmHWM themselves instead).
pub fn run_measured(cmd: &mut std::process::Command) -> std::io::Result<Exited> {
    use std::io::Read;
    cmd.stderr(std::process::Stdio::piped());
    let start = std::time::Instant::now();
    let mut child = cmd.spawn()?;
    let mut stderr = Vec::new();
    if let Some(mut pipe) = child.stderr.take() {
        pipe.read_to_end(&mut stderr)?;
    }
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain old data; all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our own unreaped child; both pointers are valid for the call.
        // `child` is not waited on afterwards (dropping a `Child` does not wait).
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
    let elapsed = start.elapsed();
    drop(child);
    Ok(Exited {
        success: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        elapsed,
        // Linux reports ru_maxrss in kilobytes.
        peak_rss: usage.ru_maxrss.max(0) as u64 * 1024,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    })
}

/// The CPUs this process may run on (sched_getaffinity), in order.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the call fills it for this thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

/// Binds the calling thread (and the children it spawns later) to `cpus`. False if the
/// kernel refused.
pub fn pin_to(cpus: &[usize]) -> bool {
    // SAFETY: as above; the set is only read by the call.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}
