//! The command line's output and messages, and what a closed pipe means.
//!
//! `print!` and `eprintln!` panic when the write fails ("failed printing to stdout: Broken
//! pipe", exit 101). A reader that goes away (`kinspect apis | head -3`) is not a failure: there
//! is no one left to tell anything, so the run ends quietly with exit code 0. Subcommands write
//! standard output through [`stdout`] with `write!`/`writeln!` (an `io::Result`, never a panic)
//! and turn the result into the exit code with [`finish`]; messages go through [`errln!`], which
//! drops a message standard error cannot take (closed, `/dev/full`) instead of panicking.
//! [`quiet_on_closed_pipes`] is the net for any `print!` left in a subcommand.

use super::{EXIT_FAILURE, EXIT_OK};
use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// `eprintln!` that never panics: a message standard error cannot take is dropped (the exit
/// code still tells what happened).
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::cli::io::errln_args(format_args!($($arg)*))
    };
}
pub(crate) use errln;

/// Standard output, buffered, locked for the rest of the run. Hand the result of the writes and
/// of the final `flush` to [`finish`]: dropping the writer unflushed would lose the error.
pub fn stdout() -> BufWriter<io::StdoutLock<'static>> {
    BufWriter::new(io::stdout().lock())
}

/// Whether `e` says the reader of our output closed its end.
pub fn is_closed_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// The exit code of a subcommand whose output was written with result `written`: `code` when
/// everything was written, [`EXIT_OK`] when the reader closed the pipe (a reader that stops
/// reading asked for no more; nothing is printed), and [`EXIT_FAILURE`] after a message naming
/// `who` for any other write failure (a full disk, a device error).
pub fn finish(written: io::Result<()>, who: &str, code: u8) -> u8 {
    match written {
        Ok(()) => code,
        Err(e) if is_closed_pipe(&e) => EXIT_OK,
        Err(e) => {
            errln!("{who}: writing the output: {e}");
            EXIT_FAILURE
        }
    }
}

/// `-o PATH` as every subcommand reads it: the file to write instead of standard output, or
/// `None` for standard output (no `-o`, or `-o -`).
pub fn output_path(output: Option<&PathBuf>) -> Option<&Path> {
    output
        .map(PathBuf::as_path)
        .filter(|p| p.as_os_str() != "-")
}

/// Creates the file `-o` names, or replaces the one there (see [`replace`]); the error names it.
pub fn create(path: &Path) -> Result<File, String> {
    match replace(path) {
        Some(f) => Ok(f),
        None => File::create(path).map_err(|e| format!("{}: {e}", path.display())),
    }
}

/// Files at least this large are replaced rather than truncated ([`replace`]).
const REPLACE_FROM: u64 = 16 << 20;

/// Replaces a large existing file with a new empty one: created beside it, given its
/// permissions, renamed over it; the old one is let go on a thread of its own. Truncating it
/// instead frees its blocks on the writing thread and, on ext4, forces the new data out to disk
/// as it is written (`auto_da_alloc`): JSON Lines of the benchmark capture written over the last
/// run's took 1.45 s, to a new file 0.86 s. `None` (truncate it) for anything else: a small
/// file, a symbolic link (written through), a file of several names (all of which see the new
/// content), of another owner or group, a device or pipe, a folder that takes no new file.
#[cfg(unix)]
fn replace(path: &Path) -> Option<File> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() < REPLACE_FROM || meta.nlink() != 1 {
        return None;
    }
    // Held open, the old file is freed when this closes, not when the rename unlinks it.
    let old = File::open(path).ok()?;
    let name = path.file_name()?.to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.kinspect-{}", std::process::id()));
    let new = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .ok()?;
    let replaced = new.set_permissions(meta.permissions()).is_ok()
        && new
            .metadata()
            .is_ok_and(|m| (m.uid(), m.gid()) == (meta.uid(), meta.gid()))
        && std::fs::rename(&tmp, path).is_ok();
    if !replaced {
        let _ = std::fs::remove_file(&tmp);
        return None;
    }
    // If no thread can be started, the old file is freed here, as truncating would have.
    let _ = std::thread::Builder::new()
        .name("kinspect-free".into())
        .spawn(move || drop(old));
    Some(new)
}

#[cfg(not(unix))]
fn replace(_: &Path) -> Option<File> {
    None
}

/// Where a subcommand writes its text output: the file `-o` names (see [`output_path`]), or
/// standard output; buffered. Hand the writes' and the final `flush`'s result to [`finish`].
pub fn writer(output: Option<&PathBuf>) -> Result<Box<dyn Write>, String> {
    Ok(match output_path(output) {
        Some(p) => Box::new(BufWriter::new(create(p)?)),
        None => Box::new(stdout()),
    })
}

/// Writes `bytes` where `-o` says (see [`writer`]) and flushes them.
pub fn write_all_to(output: Option<&PathBuf>, bytes: &[u8]) -> io::Result<()> {
    let mut out = writer(output).map_err(io::Error::other)?;
    out.write_all(bytes)?;
    out.flush()
}

/// Whether the output `-o` names is a terminal (for colour and hex-by-default): never a file.
pub fn output_is_terminal(output: Option<&PathBuf>) -> bool {
    output_path(output).is_none() && io::IsTerminal::is_terminal(&io::stdout())
}

/// The body of [`errln!`]: one line on standard error, dropped if it cannot be written.
pub fn errln_args(args: fmt::Arguments<'_>) {
    let mut e = io::stderr().lock();
    let _ = e.write_fmt(args).and_then(|()| e.write_all(b"\n"));
}

/// Installs a panic hook that ends the process quietly when a `print!`/`eprint!` family macro
/// failed: exit 0 for standard output closed by its reader, [`EXIT_FAILURE`] for any other
/// failed print (standard error closed or full, standard output full). Other panics keep the
/// default report and exit code 101. This covers every thread, and every subcommand that still
/// prints with the macros.
pub fn quiet_on_closed_pipes() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let p = info.payload();
        let msg = p
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| p.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") {
            // EPIPE: "Broken pipe (os error 32)"; anything else is a real failure.
            if msg.contains("os error 32") || msg.contains("Broken pipe") {
                std::process::exit(EXIT_OK.into());
            }
            errln!("kinspect: {msg}");
            std::process::exit(EXIT_FAILURE.into());
        }
        if msg.starts_with("failed printing to stderr") {
            std::process::exit(EXIT_FAILURE.into());
        }
        default(info);
    }));
}
