//! What the command line knows of its outputs: standard output as a plain file, how many
//! threads to decode with, and the progress bar on stderr.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Threads to decode with: `KINSPECT_THREADS` (1 or 2), else 2 when the machine has two cores
/// or more.
pub fn threads() -> usize {
    match std::env::var("KINSPECT_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get().min(2)),
    }
}

/// Standard output as a plain file (a duplicate of fd 1), where the platform allows.
pub fn stdout_file() -> Option<std::fs::File> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        return io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .map(std::fs::File::from);
    }
    #[allow(unreachable_code)]
    None
}

/// Whether stdout and stderr are the same file (the same terminal, say): a progress line on
/// stderr would then overwrite output lines.
fn same_output() -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::MetadataExt;
        let meta = |fd: std::os::fd::BorrowedFd<'_>| {
            fd.try_clone_to_owned()
                .ok()
                .map(std::fs::File::from)
                .and_then(|f| f.metadata().ok())
                .map(|m| (m.dev(), m.ino(), m.rdev()))
        };
        let (out, err) = (meta(io::stdout().as_fd()), meta(io::stderr().as_fd()));
        return out.is_some() && out == err;
    }
    #[allow(unreachable_code)]
    io::stdout().is_terminal()
}

/// Inputs at least this big show progress.
const PROGRESS_MIN_BYTES: u64 = 32 << 20;

/// A progress bar on stderr for each large input, drawn only when stderr is a terminal that
/// standard output is not written to.
pub struct Bar {
    bar: Mutex<Option<ProgressBar>>,
}

impl Bar {
    /// A bar for these inputs, or `None` when it would mix with the output (or not show).
    pub fn for_inputs(files: &[PathBuf]) -> Option<Arc<Bar>> {
        let stdin_only = files.is_empty() || files.iter().all(|f| f.as_os_str() == "-");
        if stdin_only || !io::stderr().is_terminal() || same_output() {
            return None;
        }
        Some(Arc::new(Bar {
            bar: Mutex::new(None),
        }))
    }

    /// Removes the bar from the terminal.
    pub fn clear(&self) {
        if let Some(b) = self.bar.lock().ok().and_then(|mut b| b.take()) {
            b.finish_and_clear();
        }
    }
}

impl kinspect::engine::Progress for Bar {
    fn start(&self, _name: &str, size: Option<u64>) {
        let Some(size) = size.filter(|&s| s >= PROGRESS_MIN_BYTES) else {
            return;
        };
        let b = ProgressBar::with_draw_target(Some(size), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{binary_bytes:>10} of {binary_total_bytes} ({percent}%) {wide_bar} {binary_bytes_per_sec}",
        ) {
            b.set_style(style);
        }
        if let Ok(mut slot) = self.bar.lock() {
            *slot = Some(b);
        }
    }

    fn read(&self, bytes: u64) {
        if let Ok(slot) = self.bar.lock() {
            if let Some(b) = slot.as_ref() {
                b.set_position(bytes);
            }
        }
    }

    fn end(&self) {
        self.clear();
    }
}
