//! Gives this crate pyo3's `Py_3_N` / `PyPy` cfgs, so that code reading CPython's string
//! objects directly (dumps_fast.rs) is compiled only for the versions whose layout it knows.
fn main() {
    pyo3_build_config::use_pyo3_cfgs();
    pyo3_build_config::print_expected_cfgs();
}
