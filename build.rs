//! Records the host target triple for the end-to-end tests, which ask
//! `cargo metadata` for this platform's packages only.

fn main() {
    let host = std::env::var("HOST").unwrap_or_default();
    println!("cargo:rustc-env=AIC_TEST_HOST={host}");
    println!("cargo:rerun-if-changed=build.rs");
}
