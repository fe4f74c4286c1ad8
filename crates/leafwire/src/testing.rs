//! Helpers shared by the unit tests.

/// A xorshift64 generator from `seed` (not zero): the same reproducible stream wherever a
/// test wants many varied inputs without a dependency.
pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}
