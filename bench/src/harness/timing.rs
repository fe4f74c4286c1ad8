//! Interleaved timing: every case is calibrated and warmed up, then the cases
//! take turns (round-robin, rotating the starting case each round) so that
//! drift in clock speed or cache state hits every peer alike.
//!
//! A sample runs one case `n` times back to back; `n` is chosen so that a
//! sample lasts about `Plan::target_sample_us` once warm. A result is dropped inside the
//! clock (freeing a decoded tree is part of decoding it); inputs made by a
//! setup closure, and whatever the timed closure hands back, are dropped
//! outside it.

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde::Serialize;

/// How long to measure. `quick` is for smoke runs; `full` for published numbers.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Plan {
    pub name: &'static str,
    /// Warm-up time per case, after calibration.
    pub warmup_ms: u64,
    /// A sample (n back-to-back calls) aims to last this long.
    pub target_sample_us: u64,
    /// Measuring time per case; reps = budget / sample time, clamped.
    pub budget_ms: u64,
    pub min_reps: usize,
    pub max_reps: usize,
}

impl Plan {
    pub fn quick() -> Plan {
        Plan { name: "quick", warmup_ms: 10, target_sample_us: 1_000, budget_ms: 50, min_reps: 3, max_reps: 15 }
    }

    pub fn full() -> Plan {
        Plan { name: "full", warmup_ms: 100, target_sample_us: 5_000, budget_ms: 1_000, min_reps: 7, max_reps: 101 }
    }
}

/// Median, min and max of the per-call times over all samples, in nanoseconds.
#[derive(Clone, Debug, Serialize)]
pub struct Stats {
    pub median_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    /// Number of samples taken.
    pub reps: usize,
    /// Calls per sample.
    pub iters: u64,
}

impl Stats {
    pub fn from_samples(mut per_call_ns: Vec<f64>, iters: u64) -> Stats {
        per_call_ns.sort_by(f64::total_cmp);
        let n = per_call_ns.len();
        let median = if n % 2 == 1 { per_call_ns[n / 2] } else { (per_call_ns[n / 2 - 1] + per_call_ns[n / 2]) / 2.0 };
        Stats { median_ns: median, min_ns: per_call_ns[0], max_ns: per_call_ns[n - 1], reps: n, iters }
    }
}

type Sampler<'a> = Box<dyn FnMut(u64) -> Duration + 'a>;

/// One thing to time.
pub struct Case<'a> {
    sample: Sampler<'a>,
    max_batch: u64,
}

impl<'a> Case<'a> {
    /// Time `f`, including dropping its result.
    pub fn new<R: 'a>(mut f: impl FnMut() -> R + 'a) -> Case<'a> {
        let sample = move |n: u64| {
            let start = Instant::now();
            for _ in 0..n {
                drop(black_box(f()));
            }
            start.elapsed()
        };
        Case { sample: Box::new(sample), max_batch: u64::MAX }
    }

    /// Time `f` on inputs made by `setup` outside the clock (for operations
    /// that consume or mutate their input). What `f` returns is dropped
    /// outside the clock, so `f` can hand its input back.
    pub fn batched<I: 'a, R: 'a>(mut setup: impl FnMut() -> I + 'a, mut f: impl FnMut(I) -> R + 'a) -> Case<'a> {
        let sample = move |n: u64| {
            let inputs: Vec<I> = (0..n).map(|_| setup()).collect();
            let mut out = Vec::with_capacity(n as usize);
            let start = Instant::now();
            for input in inputs {
                out.push(black_box(f(black_box(input))));
            }
            let elapsed = start.elapsed();
            drop(out);
            elapsed
        };
        Case { sample: Box::new(sample), max_batch: u64::MAX }
    }

    /// Cap calls per sample (bounds the memory held by inputs and results).
    pub fn max_batch(mut self, n: u64) -> Case<'a> {
        self.max_batch = n.max(1);
        self
    }
}

/// Calls per sample so that one lasts about `target` ns, grown from a single call, each
/// try's time predicting the next (at most 100 times as many calls); the first try, cold,
/// only starts the search. A first call is no guide: cold caches and page faults made one
/// lookup of 107 ns take 135 µs (its samples were 37 calls, 4 µs, instead of 5 ms), and a
/// 1.3 ms encode take 3.5 ms (one call per sample instead of three).
fn calls_per_sample(case: &mut Case<'_>, target: f64) -> u64 {
    let cap = case.max_batch.min(10_000_000);
    let (mut n, mut cold) = (1u64, true);
    loop {
        let took = (case.sample)(n).as_nanos().max(1) as f64;
        let predicted = ((target * n as f64 / took).floor() as u64).clamp(1, cap);
        let long_enough = took >= target / 2.0 || n >= cap;
        if long_enough && !cold {
            return predicted;
        }
        cold = false;
        n = if long_enough { predicted } else { predicted.clamp(n + 1, n.saturating_mul(100)).min(cap) };
    }
}

/// Calibrate, warm up and measure all cases interleaved. Returns one
/// `Stats` per case, in order.
pub fn measure(cases: &mut [Case<'_>], plan: &Plan) -> Vec<Stats> {
    let target = plan.target_sample_us as f64 * 1e3;
    let mut iters = Vec::with_capacity(cases.len());
    let mut reps = Vec::with_capacity(cases.len());
    for case in cases.iter_mut() {
        let n = calls_per_sample(case, target);
        let warm_start = Instant::now();
        let per_call = loop {
            let per_call = (case.sample)(n).as_nanos() as f64 / n as f64;
            if warm_start.elapsed() >= Duration::from_millis(plan.warmup_ms) {
                break per_call;
            }
        };
        let sample_ns = per_call * n as f64;
        let wanted = (plan.budget_ms as f64 * 1e6 / sample_ns.max(1.0)) as usize;
        reps.push(wanted.clamp(plan.min_reps, plan.max_reps));
        iters.push(n);
    }
    let mut samples: Vec<Vec<f64>> = reps.iter().map(|&r| Vec::with_capacity(r)).collect();
    let count = cases.len();
    let mut round = 0;
    while samples.iter().zip(&reps).any(|(s, &r)| s.len() < r) {
        for k in 0..count {
            let i = (k + round) % count;
            if samples[i].len() < reps[i] {
                let t = (cases[i].sample)(iters[i]);
                samples[i].push(t.as_nanos() as f64 / iters[i] as f64);
            }
        }
        round += 1;
    }
    samples.into_iter().zip(iters).map(|(s, n)| Stats::from_samples(s, n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A case whose first call is slow (cold) and the rest take `warm` ns each.
    fn cold_then_warm(first: u64, warm: u64) -> Case<'static> {
        let mut calls = 0u64;
        let sample = move |n: u64| {
            let cold = if calls == 0 { first - warm } else { 0 };
            calls += n;
            Duration::from_nanos(cold + warm * n)
        };
        Case { sample: Box::new(sample), max_batch: u64::MAX }
    }

    #[test]
    fn a_slow_first_call_does_not_shorten_the_samples() {
        let target = 5e6;
        let n = calls_per_sample(&mut cold_then_warm(135_000, 107), target);
        let per_sample = n as f64 * 107.0;
        assert!((0.9 * target..=1.1 * target).contains(&per_sample), "{n} calls last {per_sample} ns");
        // A call longer than a sample is one call per sample.
        assert_eq!(calls_per_sample(&mut cold_then_warm(9_000_000, 8_000_000), target), 1);
        // A cold first call longer than half a sample is tried again warm.
        assert_eq!(calls_per_sample(&mut cold_then_warm(3_500_000, 1_300_000), target), 3);
    }

    #[test]
    fn calls_per_sample_respect_the_batch_cap() {
        let mut case = cold_then_warm(1_000, 10).max_batch(500);
        assert_eq!(calls_per_sample(&mut case, 5e6), 500);
    }
}
