//! Finds librsswatch for the linker.
//!
//! Static (the default): librsswatch.a from, in this order, the directory in
//! $RSSWATCH_LIB_DIR; the repository's build directory when the crate is built inside
//! the rsswatch tree (../../build, where `make` puts it); the libdir that
//! `pkg-config --variable=libdir rsswatch` names (an installed rsswatch).
//!
//! With the `dynamic` feature: librsswatch.so from $RSSWATCH_LIB_DIR, else the flags of
//! `pkg-config --libs rsswatch`.
//!
//! No crate is used (the package has no dependencies): pkg-config is run as a program,
//! $PKG_CONFIG or `pkg-config` on the PATH.
use std::env;
use std::path::{Path, PathBuf};
use std::process::{exit, Command};

fn main() {
    for var in ["RSSWATCH_LIB_DIR", "PKG_CONFIG", "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    let dynamic = env::var_os("CARGO_FEATURE_DYNAMIC").is_some();
    let result = if dynamic { link_dynamic() } else { link_static() };
    if let Err(msg) = result {
        eprintln!("rsswatch: {msg}");
        exit(1);
    }
}

fn link_static() -> Result<(), String> {
    const FILE: &str = "librsswatch.a";
    let dir = if let Some(dir) = env::var_os("RSSWATCH_LIB_DIR") {
        let dir = PathBuf::from(dir);
        if !dir.join(FILE).is_file() {
            return Err(format!("no {FILE} in RSSWATCH_LIB_DIR ({})", dir.display()));
        }
        dir
    } else if let Some(dir) = tree_build_dir(FILE) {
        dir
    } else {
        let dir = PathBuf::from(pkg_config(&["--variable=libdir", "rsswatch"])?.trim());
        if !dir.join(FILE).is_file() {
            return Err(format!(
                "no {FILE} in {} (pkg-config's libdir of rsswatch): install rsswatch \
                 (make install) or set RSSWATCH_LIB_DIR",
                dir.display()
            ));
        }
        dir
    };
    println!("cargo:rerun-if-changed={}", dir.join(FILE).display());
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=static=rsswatch");
    // Libs.private of rsswatch.pc
    println!("cargo:rustc-link-lib=dylib=pthread");
    Ok(())
}

fn link_dynamic() -> Result<(), String> {
    if let Some(dir) = env::var_os("RSSWATCH_LIB_DIR") {
        let dir = PathBuf::from(dir);
        if !dir.join("librsswatch.so").exists() {
            return Err(format!("no librsswatch.so in RSSWATCH_LIB_DIR ({})", dir.display()));
        }
        println!("cargo:rerun-if-changed={}", dir.join("librsswatch.so").display());
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-lib=dylib=rsswatch");
        return Ok(());
    }
    let libs = pkg_config(&["--libs", "rsswatch"])?;
    let mut found = false;
    for flag in libs.split_whitespace() {
        if let Some(dir) = flag.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
        } else if let Some(lib) = flag.strip_prefix("-l") {
            found |= lib == "rsswatch";
            println!("cargo:rustc-link-lib=dylib={lib}");
        }
    }
    if !found {
        return Err(format!("pkg-config --libs rsswatch gave no -lrsswatch: {}", libs.trim()));
    }
    Ok(())
}

/// The repository's build directory, when this crate sits in the rsswatch tree
/// (bindings/rust) and `make` has built the library there.
fn tree_build_dir(file: &str) -> Option<PathBuf> {
    let crate_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR")?);
    let top = crate_dir.parent()?.parent()?;
    if !top.join("include/rsswatch.h").is_file() || !top.join("lib/rsswatch.c").is_file() {
        return None;
    }
    let dir = top.join("build");
    if dir.join(file).is_file() {
        Some(dir)
    } else {
        None
    }
}

fn pkg_config(args: &[&str]) -> Result<String, String> {
    let program = env::var_os("PKG_CONFIG").unwrap_or_else(|| "pkg-config".into());
    let shown = Path::new(&program).display().to_string();
    let out = Command::new(&program).args(args).output().map_err(|e| {
        format!(
            "cannot run {shown} to find librsswatch: {e} (install pkg-config, or set \
             RSSWATCH_LIB_DIR to the directory of librsswatch)"
        )
    })?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "{shown} {} failed: {} (install rsswatch, set PKG_CONFIG_PATH to the directory \
             of rsswatch.pc, or set RSSWATCH_LIB_DIR)",
            args.join(" "),
            why.trim()
        ));
    }
    String::from_utf8(out.stdout).map_err(|_| format!("{shown} printed something not UTF-8"))
}
