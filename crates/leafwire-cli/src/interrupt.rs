//! Interruption: on SIGINT, SIGTERM or SIGHUP, the temporary files being written are
//! removed before the command dies of the signal (so a shell still sees 130 or 143).
//!
//! The signal is taken by a thread (signal-hook's iterator), not in a handler, so the
//! clean-up is ordinary code. One lock orders it with the writer: a temporary file is
//! registered in the same critical section that creates it and forgotten in the one that
//! renames or removes it, so the clean-up never misses a file or removes a finished one.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The list of temporary files, locked; while it is held, no signal clean-up runs.
pub fn temporaries() -> MutexGuard<'static, Vec<PathBuf>> {
    TEMPORARIES.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Forgets `path` (renamed into place or removed by its writer).
pub fn forget(list: &mut Vec<PathBuf>, path: &Path) {
    list.retain(|p| p != path);
}

/// Starts the thread that cleans up on a terminating signal. Without it (if the signals
/// cannot be taken), the command simply dies as before.
pub fn install() {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        use signal_hook::iterator::Signals;
        let Ok(mut signals) = Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        let spawned = std::thread::Builder::new().name("signals".into()).spawn(move || {
            if let Some(signal) = signals.forever().next() {
                // Held until the process is gone: no writer creates or renames past it.
                let list = temporaries();
                for path in list.iter() {
                    let _ = fs::remove_file(path);
                }
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                std::process::exit(128 + signal);
            }
        });
        drop(spawned);
    }
}
