//! The manifests that steer import resolution, as the binary reads them:
//! `tsconfig.json`/`jsconfig.json` path mappings, JavaScript workspace
//! packages, Go modules and Rust crates.

/// `paths`/`baseUrl` of one `tsconfig.json` or `jsconfig.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TsConfig {
    /// Directory of the config file (`""` at the root).
    pub directory: String,
    /// `compilerOptions.baseUrl`, relative to `directory`.
    pub base_url: Option<String>,
    /// `compilerOptions.paths`: pattern (one `*` at most) → replacement patterns.
    pub paths: Vec<(String, Vec<String>)>,
}

/// A JavaScript workspace package (`package.json` with a `name`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JsPackage {
    /// The package name (`@acme/ui`).
    pub name: String,
    /// Its directory.
    pub directory: String,
    /// Entry points named by `source`, `types`, `module` or `main`, relative to
    /// the directory, in that order of preference.
    pub entries: Vec<String>,
}

/// A Rust crate of the workspace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RustCrate {
    /// The crate name with `-` turned into `_`, as `use` paths write it.
    pub name: String,
    /// The directory of its `Cargo.toml`.
    pub directory: String,
}

/// The manifests that steer resolution, read by the binary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProjectLayout {
    /// TypeScript/JavaScript configs.
    pub ts_configs: Vec<TsConfig>,
    /// Workspace packages.
    pub js_packages: Vec<JsPackage>,
    /// Go modules: (module path, directory of `go.mod`).
    pub go_modules: Vec<(String, String)>,
    /// Rust crates.
    pub rust_crates: Vec<RustCrate>,
}
