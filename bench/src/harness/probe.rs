//! The machine's state while a workload ran: three fixed loops timed at its start and end.
//!
//! These machines are shared, and their speed has moved by up to 2× within an hour, not
//! evenly: code that misses the caches slowed more than code that computes. Peers are
//! interleaved, so drift hits them alike, but a run taken while a neighbour thrashes the
//! caches still favours the peers that miss less. The probes make that visible in the
//! results: the same loops on a quiet machine give the same figures, so a run whose
//! probes are far above another run's was taken under contention, and its ratios are
//! not the machine's quiet ones.

use std::hint::black_box;
use std::time::Instant;

use serde::Serialize;

use super::rng::Rng;

/// Nanoseconds per step of each probe, the median of a few repetitions.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Probe {
    /// A dependent chain of integer multiply-xorshift steps: the core alone.
    pub compute_ns: f64,
    /// A random pointer chase over 1 MiB: second-level cache latency.
    pub cache_ns: f64,
    /// A random pointer chase over 64 MiB: memory latency, where neighbours contend.
    pub memory_ns: f64,
}

const REPETITIONS: usize = 5;
const COMPUTE_STEPS: u64 = 4_000_000;
const CHASE_STEPS: usize = 1_000_000;

/// Times the three loops (about half a second in all).
pub fn probe() -> Probe {
    let small = cycle(1 << 20);
    let large = cycle(64 << 20);
    Probe {
        compute_ns: median(|| per_step(COMPUTE_STEPS as usize, || compute(COMPUTE_STEPS))),
        cache_ns: median(|| per_step(CHASE_STEPS, || chase(&small, CHASE_STEPS))),
        memory_ns: median(|| per_step(CHASE_STEPS, || chase(&large, CHASE_STEPS))),
    }
}

fn median(mut sample: impl FnMut() -> f64) -> f64 {
    let mut xs: Vec<f64> = (0..REPETITIONS).map(|_| sample()).collect();
    xs.sort_by(f64::total_cmp);
    xs[REPETITIONS / 2]
}

fn per_step(steps: usize, f: impl FnOnce() -> u64) -> f64 {
    let start = Instant::now();
    black_box(f());
    start.elapsed().as_nanos() as f64 / steps as f64
}

fn compute(steps: u64) -> u64 {
    let mut x = black_box(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..steps {
        x = x.wrapping_mul(0xD6E8_FEB8_6659_FD93);
        x ^= x >> 32;
    }
    x
}

/// The slots of `bytes / 8` words in a random order, linked into one ring: a chase visits
/// every slot before it repeats, and no prefetcher can guess the next.
fn cycle(bytes: usize) -> Vec<usize> {
    let n = bytes / std::mem::size_of::<usize>();
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = Rng::new(0x5EED);
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    let mut next = vec![0usize; n];
    for k in 0..n {
        next[order[k]] = order[(k + 1) % n];
    }
    next
}

fn chase(next: &[usize], steps: usize) -> u64 {
    let mut at = 0usize;
    for _ in 0..steps {
        at = next[at];
    }
    at as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chase_visits_every_slot_before_it_repeats() {
        let next = cycle(8 * 1000);
        let (mut at, mut seen) = (0usize, vec![false; next.len()]);
        for _ in 0..next.len() {
            assert!(!seen[at], "slot {at} visited twice");
            seen[at] = true;
            at = next[at];
        }
        assert_eq!(at, 0);
    }
}
