//! Shared by the client tests: locating (and if needed building) the example servers.

use std::path::PathBuf;
use std::sync::OnceLock;

/// Path of an `mcp-examples` binary, building the examples once if it is missing. The
/// binaries live next to this test's `deps/` directory, i.e. in
/// `$CARGO_TARGET_DIR/<profile>` (default `<workspace>/target/<profile>`).
pub(crate) fn example_bin(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    let dir = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.to_path_buf()))
        .unwrap_or_else(|| {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
            target.join(if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            })
        });
    let path = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if !path.exists() {
        BUILT.get_or_init(|| {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let mut build = std::process::Command::new(cargo);
            build.args(["build", "-p", "mcp-examples", "--bins"]);
            if !cfg!(debug_assertions) {
                build.arg("--release");
            }
            let status = build
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .expect("run cargo build");
            assert!(
                status.success(),
                "cargo build -p mcp-examples --bins failed"
            );
        });
    }
    assert!(path.exists(), "{} not found", path.display());
    path
}
