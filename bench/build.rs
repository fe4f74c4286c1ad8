//! Generates the Protocol Buffers types from proto/*.proto with a vendored
//! protoc (no system package needed), and records the compiler version.

use std::process::Command;

fn main() {
    let protoc = protoc_bin_vendored::protoc_bin_path().expect("vendored protoc for this platform");
    std::env::set_var("PROTOC", protoc);
    prost_build::Config::new()
        .btree_map(["."])
        .compile_protos(&["proto/workbook.proto", "proto/stream.proto"], &["proto"])
        .expect("compile proto/workbook.proto and proto/stream.proto");

    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc)
        .arg("-V")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=BENCH_RUSTC_VERSION={version}");
    println!("cargo:rustc-env=BENCH_PROFILE={}", std::env::var("PROFILE").unwrap_or_default());
    println!("cargo:rerun-if-changed=proto/workbook.proto");
    println!("cargo:rerun-if-changed=proto/stream.proto");
    println!("cargo:rerun-if-changed=build.rs");
}
