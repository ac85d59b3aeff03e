//! Gives the binary its git revision for `fenix --version` (`FENIX_GIT_REVISION`).
//!
//! The revision is `git rev-parse --short HEAD` of the checkout, or the
//! `FENIX_GIT_REVISION` variable when set (a Docker build, whose context has no
//! `.git`), else `unknown`. The script runs again only when HEAD or the branch
//! it points to moves, not on every edit.

use std::{path::PathBuf, process::Command};

fn main() {
    println!("cargo:rerun-if-env-changed=FENIX_GIT_REVISION");
    let revision = std::env::var("FENIX_GIT_REVISION")
        .ok()
        .filter(|r| !r.is_empty())
        .or_else(|| git(&["rev-parse", "--short", "HEAD"]))
        .unwrap_or_else(|| "unknown".into());
    if let Some(git_dir) = git(&["rev-parse", "--absolute-git-dir"]).map(PathBuf::from) {
        watch_head(&git_dir);
    }
    println!("cargo:rustc-env=FENIX_GIT_REVISION={revision}");
}

/// Re-runs this script when HEAD changes (a checkout) or its branch gets a
/// commit (the loose ref, or `packed-refs` once git has packed it).
fn watch_head(git_dir: &std::path::Path) {
    let head = git_dir.join("HEAD");
    println!("cargo:rerun-if-changed={}", head.display());
    let Ok(text) = std::fs::read_to_string(&head) else { return };
    if let Some(reference) = text.trim().strip_prefix("ref: ") {
        // A worktree keeps HEAD in its own directory and the refs in the common one.
        let common = git(&["rev-parse", "--path-format=absolute", "--git-common-dir"])
            .map(PathBuf::from)
            .unwrap_or_else(|| git_dir.into());
        // Only files that exist: cargo runs the script on every build for a missing one.
        let files = [git_dir.join(reference), common.join(reference), common.join("packed-refs")];
        for file in files.iter().filter(|f| f.exists()) {
            println!("cargo:rerun-if-changed={}", file.display());
        }
    }
}

/// The trimmed output of a successful `git` in this crate's directory.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}
