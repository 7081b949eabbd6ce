//! Runs one case: `prlimit --as=… /usr/bin/time -f '%e %M' -o FILE timeout … kinspect ARGS` in
//! the case's folder, with the standard streams the case asks for, measuring wall time and peak
//! RSS, checking the JSON on stdout line by line as it streams, and looking for a panic on
//! stderr.
//!
//! Why GNU time in the chain: a process forked from this (large) harness inherits its resident
//! pages, and `exec` carries the high-water mark over, so `wait4` on our own child would report
//! the harness's RSS. `time` reports its child's rusage: `timeout`, forked from the small `time`,
//! and `timeout`'s waited-for child, kinspect.

use serde::de::IgnoredAny;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::io::FromRawFd;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// What stdout is connected to, and what must hold of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Out {
    /// JSON Lines: every non-empty line one JSON value.
    Jsonl,
    /// One or more JSON documents (`-f json`, `--format json`).
    JsonDoc,
    /// Read and discarded.
    Any,
    /// A pipe whose reading end is closed before the child starts (`kinspect … | true`).
    Closed,
    /// `/dev/full`: every write fails with ENOSPC.
    Full,
}

/// One generated case: its files (written into the case folder), the arguments, and how to run.
pub struct Case {
    /// Which sub-generator made it (shown with a failure).
    pub what: String,
    pub files: Vec<(String, Vec<u8>)>,
    /// Symbolic links made in the case folder: (name, target).
    pub links: Vec<(String, String)>,
    pub args: Vec<String>,
    pub env: Vec<(&'static str, String)>,
    /// A file of the case folder given as stdin (else /dev/null).
    pub stdin: Option<String>,
    pub out: Out,
    /// stderr is a pipe closed before the child starts.
    pub close_stderr: bool,
}

impl Case {
    pub fn new(what: impl Into<String>) -> Case {
        Case {
            what: what.into(),
            files: Vec::new(),
            links: Vec::new(),
            args: Vec::new(),
            env: Vec::new(),
            stdin: None,
            out: Out::Jsonl,
            close_stderr: false,
        }
    }
    pub fn file(&mut self, name: &str, data: Vec<u8>) -> &mut Self {
        self.files.push((name.to_string(), data));
        self
    }
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(&mut self, a: I) -> &mut Self {
        self.args.extend(a.into_iter().map(Into::into));
        self
    }
    pub fn input_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.1.len() as u64).sum()
    }
}

#[derive(Clone, Copy)]
pub struct Limits {
    /// Address-space limit (bytes) for the whole run.
    pub as_bytes: u64,
    /// Peak RSS over this is a failure.
    pub rss_kib: u64,
    /// Wall-clock limit (`timeout`) for an input under 2 MiB; larger inputs get more.
    pub secs: u64,
    /// CPU-time limit (`prlimit --cpu`, SIGXCPU) for an input under 2 MiB, all threads
    /// together: unlike wall time, it does not move with the load of a shared machine.
    pub cpu: u64,
}

impl Limits {
    /// Started 2 MiB blocks of input, at most six: the factor on both time limits.
    fn blocks(bytes: u64) -> u64 {
        bytes.div_ceil(2 << 20).clamp(1, 6)
    }
    pub fn secs_for(&self, bytes: u64) -> u64 {
        self.secs * Self::blocks(bytes)
    }
    pub fn cpu_for(&self, bytes: u64) -> u64 {
        self.cpu * Self::blocks(bytes)
    }
}

pub struct Outcome {
    pub secs: f64,
    /// User + system CPU seconds.
    pub cpu: f64,
    pub rss_kib: u64,
    /// Exit code, or 128 + signal.
    pub code: i32,
    pub failure: Option<String>,
    pub stderr_head: String,
}

/// The command line, as a shell line run from the case folder (what a reproducer runs).
pub fn command_line(bin: &Path, case: &Case, lim: &Limits) -> String {
    let mut s = String::new();
    for (k, v) in &case.env {
        s += &format!("{k}={} ", shell(v));
    }
    s += &format!(
        "prlimit --as={} --cpu={}:{} -- /usr/bin/time -o rusage.txt -f '%e s %U user %S sys %M KiB' timeout -k 2 {} {}",
        lim.as_bytes,
        lim.cpu_for(case.input_bytes()),
        lim.cpu_for(case.input_bytes()) + 1,
        lim.secs_for(case.input_bytes()),
        shell(&bin.display().to_string())
    );
    for a in &case.args {
        s.push(' ');
        s += &shell(a);
    }
    match &case.stdin {
        Some(f) => s += &format!(" < {}", shell(f)),
        None => s += " < /dev/null",
    }
    if case.close_stderr {
        // The harness gives a pipe whose reading end is closed (EPIPE); `2>&-` would be EBADF,
        // which Rust's stderr ignores. A reader that exits at once is bash's nearest match.
        s += " 2> >(:)";
    }
    match case.out {
        // The harness closes the pipe's reading end before the child starts; `| true` is
        // the shell's nearest equivalent.
        Out::Closed => s += " | true",
        Out::Full => s += " > /dev/full",
        _ => s += " > stdout.txt",
    }
    s
}

fn shell(a: &str) -> String {
    if !a.is_empty()
        && a.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=,:+@".contains(&b))
    {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}

/// A pipe whose reading end is already closed: writes fail with EPIPE.
fn closed_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: `pipe` fills two fresh descriptors; we own both and close the reading one.
    unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0, "pipe");
        libc::close(fds[0]);
        Stdio::from(File::from_raw_fd(fds[1]))
    }
}

/// `rusage` is where GNU time writes its figures (outside the case folder).
pub fn run(bin: &Path, dir: &Path, rusage: &Path, case: &Case, lim: &Limits) -> Outcome {
    let allowed = lim.secs_for(case.input_bytes());
    let cpu_allowed = lim.cpu_for(case.input_bytes());
    let _ = std::fs::remove_file(rusage);
    let mut cmd = Command::new("prlimit");
    cmd.arg(format!("--as={}", lim.as_bytes))
        .arg(format!("--cpu={cpu_allowed}:{}", cpu_allowed + 1))
        .arg("--")
        .args(["/usr/bin/time", "-f", "%e %U %S %M", "-o"])
        .arg(rusage)
        .args(["timeout", "-k", "2"])
        .arg(format!("{allowed}"))
        .arg(bin)
        .args(&case.args)
        .current_dir(dir)
        .env_remove("KINSPECT_THREADS")
        .env_remove("RUST_BACKTRACE")
        .env("NO_COLOR", "1");
    for (k, v) in &case.env {
        cmd.env(k, v);
    }
    cmd.stdin(match &case.stdin {
        Some(f) => Stdio::from(File::open(dir.join(f)).expect("stdin file")),
        None => Stdio::null(),
    });
    cmd.stdout(match case.out {
        Out::Closed => closed_pipe(),
        Out::Full => Stdio::from(File::create("/dev/full").expect("/dev/full")),
        _ => Stdio::piped(),
    });
    cmd.stderr(if case.close_stderr {
        closed_pipe()
    } else {
        Stdio::piped()
    });
    let start = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Outcome {
                secs: 0.0,
                cpu: 0.0,
                rss_kib: 0,
                code: -1,
                failure: Some(format!("cannot start prlimit: {e}")),
                stderr_head: String::new(),
            }
        }
    };
    let out_kind = case.out;
    let stdout = child.stdout.take().map(|s| {
        std::thread::spawn(move || match out_kind {
            Out::Jsonl => check_jsonl(s),
            Out::JsonDoc => check_json_docs(s),
            _ => drain(s),
        })
    });
    let stderr = child.stderr.take().map(|mut s| {
        std::thread::spawn(move || {
            let mut head = Vec::new();
            let mut buf = [0u8; 16384];
            let mut panic = None;
            let mut tail = Vec::new();
            loop {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if head.len() < 8192 {
                            head.extend_from_slice(&buf[..n.min(8192 - head.len())]);
                        }
                        // Look for the panic message across read boundaries.
                        tail.extend_from_slice(&buf[..n]);
                        if panic.is_none() {
                            if let Some(i) = find(&tail, b"panicked at") {
                                let end = tail[i..]
                                    .iter()
                                    .position(|&b| b == b'\n')
                                    .map_or(tail.len(), |e| i + e);
                                let line_start = tail[..i]
                                    .iter()
                                    .rposition(|&b| b == b'\n')
                                    .map_or(0, |p| p + 1);
                                let mut msg =
                                    String::from_utf8_lossy(&tail[line_start..end]).into_owned();
                                // The message proper is on the next line.
                                if let Some(next) = tail[end..].split(|&b| b == b'\n').nth(1) {
                                    msg += " / ";
                                    msg += &String::from_utf8_lossy(&next[..next.len().min(300)]);
                                }
                                panic = Some(msg);
                            }
                        }
                        if tail.len() > 4096 {
                            tail.drain(..tail.len() - 4096);
                        }
                    }
                }
            }
            (String::from_utf8_lossy(&head).into_owned(), panic)
        })
    });
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pid is our child, not reaped yet (std's Child is never waited on).
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            break;
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            panic!("wait4: {}", std::io::Error::last_os_error());
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        -1
    };
    let json = stdout.map(|t| t.join().expect("stdout reader"));
    let (stderr_head, panic) = stderr
        .map(|t| t.join().expect("stderr reader"))
        .unwrap_or_default();
    // The last line of time's file ("Command terminated by signal N" may come first).
    let timed = std::fs::read_to_string(rusage).ok().and_then(|t| {
        let f: Vec<f64> = t
            .lines()
            .last()?
            .split(' ')
            .filter_map(|x| x.parse().ok())
            .collect();
        (f.len() == 4).then(|| (f[1] + f[2], f[3] as u64))
    });
    let (cpu, rss_kib) = timed.unwrap_or((
        ru.ru_utime.tv_sec as f64 + ru.ru_stime.tv_sec as f64,
        ru.ru_maxrss as u64,
    ));
    let mut why = Vec::new();
    if let Some(p) = panic {
        why.push(format!("panic: {p}"));
    }
    match code {
        0..=2 => {}
        124 => why.push(format!("timeout: killed after {allowed} s wall")),
        137 => why.push(
            "killed by SIGKILL (the CPU hard limit, timeout -k, or the OOM killer)".to_string(),
        ),
        152 => why.push(format!(
            "CPU limit: killed by SIGXCPU after {cpu_allowed} CPU-s"
        )),
        c if c > 128 => why.push(format!("exit {c} (signal {})", c - 128)),
        c => why.push(format!("exit {c}")),
    }
    let killed = matches!(code, 124 | 137 | 152);
    if secs > allowed as f64 && !killed {
        why.push(format!("slow: {secs:.2} s > {allowed} s"));
    }
    if rss_kib > lim.rss_kib {
        why.push(format!("peak RSS {rss_kib} KiB > {} KiB", lim.rss_kib));
    }
    // Output cut by a kill is no finding of its own.
    if let Some(Err(e)) = json.filter(|_| !killed) {
        why.push(format!("invalid JSON on stdout: {e}"));
    }
    if why.is_empty() && stderr_head.contains("memory allocation of") {
        why.push("allocation failure reported on stderr".into());
    }
    Outcome {
        secs,
        cpu,
        rss_kib,
        code,
        failure: (!why.is_empty()).then(|| why.join("; ")),
        stderr_head,
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn drain<R: Read>(mut r: R) -> Result<(), String> {
    let _ = std::io::copy(&mut r, &mut std::io::sink());
    Ok(())
}

/// Every non-empty line must be one JSON value; keeps reading to the end either way, so that
/// the child never blocks on a full pipe.
fn check_jsonl<R: Read>(r: R) -> Result<(), String> {
    let mut r = BufReader::with_capacity(1 << 16, r);
    let mut line = Vec::new();
    let mut n = 0u64;
    let mut first_err = None;
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return Err(format!("reading stdout: {e}")),
        }
        n += 1;
        if first_err.is_some() {
            continue;
        }
        let complete = line.last() == Some(&b'\n');
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        if body.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let Err(e) = serde_json::from_slice::<IgnoredAny>(body) {
            let preview = String::from_utf8_lossy(&body[..body.len().min(120)]).into_owned();
            first_err = Some(format!(
                "line {n}{}: {e}: {preview}",
                if complete { "" } else { " (no newline)" }
            ));
        }
    }
    first_err.map_or(Ok(()), Err)
}

/// A sequence of JSON documents (one, for `-f json`).
fn check_json_docs<R: Read>(r: R) -> Result<(), String> {
    let mut br = BufReader::with_capacity(1 << 16, r);
    let res = {
        let de = serde_json::Deserializer::from_reader(&mut br);
        let mut res = Ok(());
        for v in de.into_iter::<IgnoredAny>() {
            if let Err(e) = v {
                res = Err(format!("{e}"));
                break;
            }
        }
        res
    };
    let _ = std::io::copy(&mut br, &mut std::io::sink());
    res
}
