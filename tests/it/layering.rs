//! The layering written in the crate documentation (src/lib.rs, "Layers"), checked from the
//! source: every `crate::MODULE` a library file names must be of a lower layer than its own
//! module (or of the same layer), and no library file names the command line, which is a
//! module of the binary only.

use crate::common;
use std::path::{Path, PathBuf};

/// Lowest first. A module may use the modules of its own layer and of the layers before it.
const LAYERS: &[&[&str]] = &[
    &["limits", "choice", "diag"],
    &["schema"],
    &["protocol"],
    &["wire", "pdu"],
    &["records"],
    &["input", "capture"],
    &["check"],
    &["engine", "query"],
    &["output"],
    &["fuzzing", "probe"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("src/ is readable").flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a line, without a `//` comment (doc comments included). Good enough for this
/// source: no string literal here holds `//` before a `crate::` path.
fn code(line: &str) -> &str {
    line.find("//").map_or(line, |i| &line[..i])
}

/// Every `crate::NAME` in `text`, with its 1-based line.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut in_use_group = false;
    for (n, line) in text.lines().enumerate() {
        let c = code(line);
        let mut rest = c;
        while let Some(i) = rest.find("crate::") {
            let before = rest[..i].chars().last();
            rest = &rest[i + "crate::".len()..];
            if before.is_some_and(|b| b.is_alphanumeric() || b == '_') {
                continue; // `kinspect::crate::`-like text, or an identifier ending in "crate"
            }
            if let Some(group) = rest.strip_prefix('{') {
                // `use crate::{a::X, b};`: each member names a module.
                in_use_group = !group.contains('}');
                for m in group.split(',') {
                    push_module(m, n + 1, &mut found);
                }
                continue;
            }
            push_module(rest, n + 1, &mut found);
        }
        if in_use_group && !c.contains("crate::") {
            in_use_group = !c.contains('}');
            for m in c.split(',') {
                push_module(m, n + 1, &mut found);
            }
        }
    }
    found
}

fn push_module(text: &str, line: usize, found: &mut Vec<(usize, String)>) {
    let name: String = text
        .trim()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if !name.is_empty() && name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
        found.push((line, name));
    }
}

/// The library's violations: `file:line: a -> b (why)`.
fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut bad = Vec::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap_or(&f);
        let first = rel
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().to_string());
        let Some(first) = first else { continue };
        let module = first.trim_end_matches(".rs").to_string();
        if module == "main" || module == "cli" || module == "lib" {
            continue; // the binary, and the crate root that declares the modules
        }
        let text = std::fs::read_to_string(&f).expect("source is UTF-8");
        let Some(own) = layer(&module) else {
            bad.push(format!(
                "{}: module `{module}` is in no layer of LAYERS",
                rel.display()
            ));
            continue;
        };
        for (line, used) in crate_paths(&text) {
            if used == module {
                continue;
            }
            let why = match layer(&used) {
                _ if used == "cli" => "the library must not use the command line".to_string(),
                None => format!("`{used}` is in no layer"),
                Some(l) if l > own => format!("`{used}` is a higher layer than `{module}`"),
                Some(_) => continue,
            };
            bad.push(format!(
                "src/{}:{line}: {module} -> {used}: {why}",
                rel.display()
            ));
        }
    }
    bad
}

#[test]
fn library_modules_use_only_lower_layers() {
    let bad = violations(&common::repo().join("src"));
    assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
}

#[test]
fn the_checker_sees_use_lines_groups_and_paths() {
    let text = "use crate::wire::tree::Tree;\nuse crate::{records::X, output};\nuse crate::{\n    capture::Y,\n    limits,\n};\nlet x = crate::engine::run(); // crate::cli is a comment\n";
    let names: Vec<String> = crate_paths(text).into_iter().map(|(_, m)| m).collect();
    assert_eq!(
        names,
        ["wire", "records", "output", "capture", "limits", "engine"]
    );
}

#[test]
fn a_forbidden_edge_is_reported_with_its_place() {
    let dir = std::env::temp_dir().join(format!("kinspect-layering-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("wire")).unwrap();
    std::fs::write(
        dir.join("wire/walk.rs"),
        "use crate::records::decode;\nuse crate::limits;\n",
    )
    .unwrap();
    std::fs::write(dir.join("limits.rs"), "fn f() { crate::cli::run() }\n").unwrap();
    let bad = violations(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(
        bad[0].starts_with("src/limits.rs:1: limits -> cli"),
        "{bad:?}"
    );
    assert!(
        bad[1].starts_with("src/wire/walk.rs:1: wire -> records"),
        "{bad:?}"
    );
}
