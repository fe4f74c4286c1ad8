//! No Rust panic reaches Python. pyo3 would raise a panic as `PanicException`, a
//! `BaseException` that `except Exception` does not catch; a panic is a bug, so every entry
//! point turns one into `DecodeError` ("internal error", with the panic's message and
//! `category == "internal"`), which callers already handle. This is defence in depth: the
//! readers return errors for malformed bytes and do not panic.
//!
//! Entry points are guarded by declaring them inside `guarded!`, which wraps the body of
//! each function (free `#[pyfunction]`s, or every method of a `#[pymethods]` block) in
//! `guard`. Guarded functions return `PyResult`. tests/python/test_errors.py checks that
//! every `#[pyfunction]` and `#[pymethods]` of the crate is declared inside `guarded!`.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::prelude::*;

use crate::errors::DecodeError;

/// Runs `body`, turning a panic into `DecodeError`. Costs nothing unless it panics.
#[inline(always)]
pub fn guard<T>(body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch(body)?
}

/// Runs `body`, returning a panic as `Err(DecodeError)`: for callers that must clean up
/// after one (the editor closes).
#[inline(always)]
pub fn catch<T>(body: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(body)).map_err(internal_error)
}

/// The `DecodeError` for a caught panic.
#[cold]
#[inline(never)]
pub fn internal_error(payload: Box<dyn Any + Send>) -> PyErr {
    let message = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    };
    let err = DecodeError::new_err(format!("internal error in leafwire (a bug, please report it): {message}"));
    // Entry points run with the GIL held, so this only looks it up.
    Python::attach(|py| {
        let _ = err.value(py).setattr("category", "internal");
    });
    err
}

/// Declares functions whose bodies run in `guard`: either free functions
/// (`#[pyfunction] fn f(..) -> PyResult<_> { .. }`, any number) or one impl block
/// (`#[pymethods] impl T { .. }`, every method). The tokens are passed through unchanged
/// except that each body `{ .. }` becomes `{ guard(|| { .. }) }`: every brace group at the
/// top level of the input (or of the impl block) is a function body.
macro_rules! guarded {
    ($(#[$($attr:tt)*])* impl $ty:ident { $($items:tt)* }) => {
        $crate::guard::guarded!(@munch [$(#[$($attr)*])* impl $ty] [] [] $($items)*);
    };
    // All consumed: emit the functions, inside the impl block if there is one.
    (@munch [] [$($done:tt)*] []) => { $($done)* };
    (@munch [$($head:tt)+] [$($done:tt)*] []) => { $($head)+ { $($done)* } };
    // A brace group ends a function's signature: it is the body.
    (@munch $head:tt [$($done:tt)*] [$($sig:tt)*] { $($body:tt)* } $($rest:tt)*) => {
        $crate::guard::guarded!(@munch $head [$($done)* $($sig)* { $crate::guard::guard(|| { $($body)* }) }] [] $($rest)*);
    };
    (@munch $head:tt $done:tt [$($sig:tt)*] $next:tt $($rest:tt)*) => {
        $crate::guard::guarded!(@munch $head $done [$($sig)* $next] $($rest)*);
    };
    ($($items:tt)+) => {
        $crate::guard::guarded!(@munch [] [] [] $($items)+);
    };
}
pub(crate) use guarded;

guarded! {
    /// Panics with `message`: how the tests check that a panic becomes `DecodeError`.
    #[pyfunction]
    #[pyo3(signature = (message = "deliberate panic for a test"))]
    pub fn _panic_for_test(message: &str) -> PyResult<()> {
        panic!("{message}")
    }
}
