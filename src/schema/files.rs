//! Gathering spec files, for the validator and the loader (`--schemas`, bundles) alike: files as
//! given, folders searched recursively for `*.json` in path order, each folder once. What cannot
//! be read at all is an I/O failure (the caller exits 2), as are folders nested too deep or too
//! many; a file that is read but is not a spec file's text (too large, not UTF-8) is a
//! diagnostic, as are files past the limits on how many files and bytes one run reads.

use crate::limits::{MAX_SPEC_FILES, MAX_SPEC_FILE_BYTES, MAX_SPEC_INPUT_BYTES};
use crate::schema::diag::SchemaDiag;
use crate::schema::model::Pos;
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Deepest folder nesting followed.
const MAX_DIR_DEPTH: usize = 32;

/// The files read, diagnostics about unreadable contents, or the I/O failure that stopped it.
pub struct Inputs {
    /// (path as shown, text), in the order given, folders expanded in path order.
    pub files: Vec<(String, String)>,
    pub diags: Vec<SchemaDiag>,
    /// Files looked at but refused (too large, not UTF-8), each with its diagnostic; files past
    /// the limits on count and bytes are not counted.
    pub refused: usize,
}

/// Reads every path: a file is taken whatever its extension, a folder yields its `*.json`
/// files at any depth.
pub fn read_inputs(paths: &[PathBuf]) -> Result<Inputs, String> {
    // One more than the limit is looked for, to know that there are more.
    let mut found = Vec::new();
    let mut seen = HashSet::new();
    for p in paths {
        if found.len() > MAX_SPEC_FILES {
            break;
        }
        let meta = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        if meta.is_dir() {
            let mut v = Vec::new();
            walk(
                p,
                0,
                MAX_SPEC_FILES + 1 - found.len(),
                &mut seen,
                &mut 0,
                &mut v,
            )?;
            v.sort();
            found.extend(v);
        } else {
            found.push(p.clone());
        }
    }
    let mut inputs = Inputs {
        files: Vec::new(),
        diags: Vec::new(),
        refused: 0,
    };
    if found.len() > MAX_SPEC_FILES {
        let first = found[MAX_SPEC_FILES].display().to_string();
        inputs.diags.push(SchemaDiag::error(
            "too-many-files",
            &first.as_str().into(),
            Pos { line: 1, col: 1 },
            "",
            format!(
                "more than {MAX_SPEC_FILES} spec files given (Kafka's message folder holds 286); \
                 {MAX_SPEC_FILES} are read, this one and the rest are not"
            ),
        ));
        found.truncate(MAX_SPEC_FILES);
    }
    let mut total: u64 = 0;
    let count = found.len();
    for (n, p) in found.into_iter().enumerate() {
        let shown = p.display().to_string();
        let file: Arc<str> = shown.as_str().into();
        // Size first: a huge file (or a device) is refused before anything is read.
        let len = std::fs::metadata(&p)
            .map_err(|e| format!("{shown}: {e}"))?
            .len();
        if len > MAX_SPEC_FILE_BYTES as u64 {
            inputs.diags.push(too_large(&file, len));
            inputs.refused += 1;
            continue;
        }
        if total + len > MAX_SPEC_INPUT_BYTES {
            inputs.diags.push(SchemaDiag::error(
                "input-too-large",
                &file,
                Pos { line: 1, col: 1 },
                "",
                format!(
                    "the files before this one hold {total} bytes and this one {len}: more than \
                     the {MAX_SPEC_INPUT_BYTES} bytes of spec files read at once; this file and \
                     the {} after it are not read",
                    count - n - 1
                ),
            ));
            break;
        }
        let mut bytes = Vec::new();
        std::fs::File::open(&p)
            .and_then(|f| {
                f.take(MAX_SPEC_FILE_BYTES as u64 + 1)
                    .read_to_end(&mut bytes)
            })
            .map_err(|e| format!("{shown}: {e}"))?;
        if bytes.len() > MAX_SPEC_FILE_BYTES {
            inputs.diags.push(too_large(&file, bytes.len() as u64));
            inputs.refused += 1;
            continue;
        }
        total += bytes.len() as u64;
        match String::from_utf8(bytes) {
            Ok(text) => inputs.files.push((shown, text)),
            Err(e) => {
                let good = e.utf8_error().valid_up_to();
                let prefix = std::str::from_utf8(&e.as_bytes()[..good]).unwrap_or("");
                let line = prefix.matches('\n').count() as u32 + 1;
                let col = prefix.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u32 + 1;
                inputs.refused += 1;
                inputs.diags.push(SchemaDiag::error(
                    "invalid-utf8",
                    &file,
                    Pos { line, col },
                    "",
                    format!("invalid UTF-8 at byte offset {good}: spec files are UTF-8 (Jackson reads them so)"),
                ));
            }
        }
    }
    Ok(inputs)
}

fn too_large(file: &Arc<str>, len: u64) -> SchemaDiag {
    SchemaDiag::error(
        "file-too-large",
        file,
        Pos { line: 1, col: 1 },
        "",
        format!(
            "file is {len} bytes or more; spec files are limited to {MAX_SPEC_FILE_BYTES} bytes"
        ),
    )
}

/// Most spec files and folders held at once, over every folder being walked, to be sorted: a
/// folder whose listing comes past it takes the rest of its entries in the order the file system
/// lists them (none is skipped). Four times [`MAX_SPEC_FILES`]: a few MiB of paths.
const MAX_HELD_ENTRIES: usize = 4 * MAX_SPEC_FILES;

/// Most folders one set of paths is walked through; past it the walk fails (as past
/// [`MAX_DIR_DEPTH`]) rather than remember and read folders without end.
const MAX_FOLDERS: usize = 4 * MAX_SPEC_FILES;

/// Adds the `*.json` files under `dir` to `out`, in name order, stopping once it holds `room`.
/// A folder reached a second time (by a symbolic link to it or to a folder above it) is not read
/// again: three links to `.` in one folder were 3^32 folders to read before the depth limit
/// ended it. `held` counts the entries the folders being walked hold ([`MAX_HELD_ENTRIES`]).
fn walk(
    dir: &Path,
    depth: usize,
    room: usize,
    seen: &mut HashSet<PathBuf>,
    held: &mut usize,
    out: &mut Vec<PathBuf>,
) -> Result<(), String> {
    if depth > MAX_DIR_DEPTH {
        return Err(format!(
            "{}: folders nested deeper than {MAX_DIR_DEPTH} levels",
            dir.display()
        ));
    }
    let real = std::fs::canonicalize(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !seen.insert(real) {
        return Ok(());
    }
    if seen.len() > MAX_FOLDERS {
        return Err(format!(
            "{}: more than {MAX_FOLDERS} folders under the paths given",
            dir.display()
        ));
    }
    // A spec file or a folder to walk; anything else is passed over.
    let entry_of =
        |entry: std::io::Result<std::fs::DirEntry>| -> Result<Option<(PathBuf, bool)>, String> {
            let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
            let path = entry.path();
            let meta = std::fs::metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(if meta.is_dir() {
                Some((path, true))
            } else if path.extension().is_some_and(|x| x == "json") {
                Some((path, false))
            } else {
                None
            })
        };
    // Sorted before any is taken, so that the files read past the limit on files are the first
    // in name order, not the first the file system lists.
    let mut entries: Vec<(PathBuf, bool)> = Vec::new();
    let mut rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    while *held < MAX_HELD_ENTRIES {
        let Some(entry) = rd.next() else { break };
        if let Some(e) = entry_of(entry)? {
            entries.push(e);
            *held += 1;
        }
    }
    entries.sort_unstable();
    let n = entries.len();
    // One entry into `out`, or walked; false once `out` is full.
    let take = |(path, is_dir): (PathBuf, bool),
                seen: &mut HashSet<PathBuf>,
                held: &mut usize,
                out: &mut Vec<PathBuf>|
     -> Result<bool, String> {
        if out.len() >= room {
            return Ok(false);
        }
        if is_dir {
            walk(&path, depth + 1, room, seen, held, out)?;
        } else {
            out.push(path);
        }
        Ok(true)
    };
    let mut more = true;
    for e in entries {
        more = take(e, seen, held, out)?;
        if !more {
            break;
        }
    }
    *held -= n;
    // What is left of a listing too long to hold: as the file system lists it.
    while more {
        let Some(entry) = rd.next() else { break };
        if let Some(e) = entry_of(entry)? {
            more = take(e, seen, held, out)?;
        }
    }
    Ok(())
}
