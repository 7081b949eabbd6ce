//! `kinspect report`: the page built from a real bundled capture (plus a synthetic one whose
//! client id, client software and topic name are HTML/script injections) loads in headless
//! Chromium with no console error and no network request (a proxy that records every
//! connection; a control page proves it and the console check see what they should), the
//! script ran to its end (a marker it sets, read back with `--dump-dom`), no injected markup
//! became an element, and a screenshot (in the target dir) is a PNG that is not one colour.
//! The page's numbers are compared with `kinspect stats --format json` (a separate sink over
//! a separate run) and the PDU count with tshark's Kafka frames.

use crate::common;
use kinspect::capture::testgen::{self, Conversation, Link};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const HOSTILE_CLIENT: &str = "<script>alert(1)</script>";
const HOSTILE_SOFTWARE: &str = "\"><img src=x onerror=alert(2)>";
const HOSTILE_TOPIC: &str = "</pre></details><script>alert(3)</script>";
/// A capture tshark decodes every Kafka frame of, with one PDU per frame.
const CAPTURE: &str = "captures/mock-kafkajs.pcap";

fn out_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report_html");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn str16(b: &mut Vec<u8>, s: &str) {
    b.extend_from_slice(&(s.len() as i16).to_be_bytes());
    b.extend_from_slice(s.as_bytes());
}

fn framed(body: Vec<u8>) -> Vec<u8> {
    let mut f = (body.len() as u32).to_be_bytes().to_vec();
    f.extend(body);
    f
}

/// ApiVersions v3 (client software) and Metadata v1 (a topic) from a client whose id, software
/// and topic are markup, and the broker's answers (the topic UNKNOWN_TOPIC_OR_PARTITION).
fn hostile_pcap() -> Vec<u8> {
    let mut c = Conversation::new(
        "127.0.0.1:40001".parse().unwrap(),
        "127.0.0.1:9092".parse().unwrap(),
    );
    // Between the bundled capture's two halves (2026-11-30T01:45:30Z), so the plots stay one
    // timeline.
    c.ts_ns = 1_796_003_130_000_000_000;
    c.handshake();
    // ApiVersions v3 request: header v2 (client id, no tags), compact strings, no tags.
    let mut req = vec![0, 18, 0, 3, 0, 0, 0, 1];
    str16(&mut req, HOSTILE_CLIENT);
    req.push(0);
    req.push(HOSTILE_SOFTWARE.len() as u8 + 1);
    req.extend_from_slice(HOSTILE_SOFTWARE.as_bytes());
    req.push(4);
    req.extend_from_slice(b"1.0");
    req.push(0);
    c.send(true, &framed(req));
    // ApiVersions v3 response: header v0; error 0, ApiKeys [Metadata 0..12], throttle, tags.
    let resp = vec![0, 0, 0, 1, 0, 0, 2, 0, 3, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0];
    c.send(false, &framed(resp));
    // Metadata v1 request: header v1, Topics [name].
    let mut req = vec![0, 3, 0, 1, 0, 0, 0, 2];
    str16(&mut req, HOSTILE_CLIENT);
    req.extend_from_slice(&1i32.to_be_bytes());
    str16(&mut req, HOSTILE_TOPIC);
    c.send(true, &framed(req));
    // Three seconds later, the slowest answer: its tree (with the topic) is on the page.
    c.ts_ns += 3_000_000_000;
    // Metadata v1 response: no brokers, controller 1, the topic with error 3.
    let mut resp = vec![0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 3];
    str16(&mut resp, HOSTILE_TOPIC);
    resp.push(0);
    resp.extend_from_slice(&0i32.to_be_bytes());
    c.send(false, &framed(resp));
    c.close();
    testgen::pcap(
        1,
        &testgen::records(&Link::Ethernet, &c.packets, usize::MAX),
        false,
        false,
        65535,
    )
}

/// `kinspect report ARGS -o OUT` (exit 0 or 1: the capture may hold diagnostics).
fn report(files: &[&Path], out: &Path) -> String {
    let mut args: Vec<&str> = vec!["report"];
    args.extend(files.iter().map(|p| p.to_str().unwrap()));
    args.extend(["-o", out.to_str().unwrap()]);
    let o = common::kinspect(&args);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "report: {:?}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::read_to_string(out).unwrap()
}

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

fn chromium_or_skip(test: &str) -> Option<&'static str> {
    let c = chromium();
    if c.is_none() {
        eprintln!("SKIPPED {test}: chromium is not installed (apt-get install chromium to run it)");
    }
    c
}

/// A proxy that answers nothing and records the first line of every request sent to it.
struct Proxy {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    fn start() -> Proxy {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = Arc::clone(&seen);
        std::thread::spawn(move || {
            for conn in l.incoming().flatten() {
                let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
                let mut line = String::new();
                let _ = BufReader::new(&conn).read_line(&mut line);
                s.lock()
                    .unwrap()
                    .push(format!("connection: {}", line.trim()));
            }
        });
        Proxy { port, seen }
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

/// Runs headless Chromium on `page` with `extra` flags; its stdout and stderr. Every request
/// goes to `proxy` (loopback too), and a run is killed after a minute.
fn run_chromium(bin: &str, page: &Path, proxy: &Proxy, extra: &[String]) -> (String, String) {
    let profile = out_dir().join(format!(
        "profile-{}-{}",
        std::process::id(),
        page.file_stem().unwrap().to_string_lossy()
    ));
    let _ = std::fs::remove_dir_all(&profile);
    let mut cmd = Command::new(bin);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-extensions",
        "--no-pings",
        "--disable-domain-reliability",
        "--disable-client-side-phishing-detection",
        "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,PreconnectToSearch",
        // Console messages are logged at verbosity 1 (`INFO:CONSOLE`).
        "--enable-logging=stderr",
        "--v=1",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg(format!("--proxy-server=http://127.0.0.1:{}", proxy.port))
    .arg("--proxy-bypass-list=<-loopback>")
    .args(extra)
    .arg(format!("file://{}", page.canonicalize().unwrap().display()))
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start chromium");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish in 60 s on {}", page.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = std::fs::remove_dir_all(&profile);
    (t_out.join().unwrap(), t_err.join().unwrap())
}

/// Lines of Chromium's log that report a page's console message (uncaught exceptions and
/// CSP violations among them).
fn console_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

/// Hosts Chromium itself calls whatever the page (component updates, sign-in), despite the
/// flags that turn most of its background traffic off. Exact names: a page fetching a web
/// font from fonts.googleapis.com is still caught.
const BROWSER_HOSTS: &[&str] = &[
    "update.googleapis.com",
    "accounts.google.com",
    "clients1.google.com",
    "clients2.google.com",
    "redirector.gvt1.com",
    "optimizationguide-pa.googleapis.com",
    "content-autofill.googleapis.com",
    // Chromium 148 (Debian, December 2026) connects here on a blank local page through the same
    // proxy and flags, five times, or once with PreconnectToSearch off.
    "www.google.com",
];

/// The requests the proxy saw that the browser did not make for itself.
fn page_requests(seen: &[String]) -> Vec<String> {
    seen.iter()
        .filter(|l| {
            let target = l.split_whitespace().nth(2).unwrap_or("");
            let host = target
                .trim_start_matches("http://")
                .trim_start_matches("https://")
                .split(['/', ':'])
                .next()
                .unwrap_or("");
            !BROWSER_HOSTS.contains(&host)
        })
        .cloned()
        .collect()
}

/// Width, height and the number of distinct colours of an 8-bit RGB(A) or grey PNG.
fn png_facts(data: &[u8]) -> (u32, u32, usize) {
    assert_eq!(&data[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let (mut w, mut h, mut ct, mut idat) = (0, 0, 0, Vec::new());
    let mut at = 8;
    while at + 8 <= data.len() {
        let len = u32::from_be_bytes(data[at..at + 4].try_into().unwrap()) as usize;
        let kind = &data[at + 4..at + 8];
        let body = &data[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                w = u32::from_be_bytes(body[0..4].try_into().unwrap());
                h = u32::from_be_bytes(body[4..8].try_into().unwrap());
                assert_eq!(body[8], 8, "bit depth");
                ct = body[9];
                assert_eq!(body[12], 0, "interlaced");
            }
            b"IDAT" => idat.extend_from_slice(body),
            b"IEND" => break,
            _ => {}
        }
        at += 12 + len;
    }
    let bpp = match ct {
        0 => 1,
        2 => 3,
        4 => 2,
        6 => 4,
        _ => panic!("colour type {ct}"),
    };
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut raw)
        .unwrap();
    let stride = w as usize * bpp;
    assert_eq!(raw.len(), (stride + 1) * h as usize, "image data size");
    let mut prev = vec![0u8; stride];
    let mut colours = std::collections::HashSet::new();
    for row in raw.chunks(stride + 1) {
        let (f, line) = (row[0], &row[1..]);
        let mut cur = vec![0u8; stride];
        for i in 0..stride {
            let a = if i >= bpp { cur[i - bpp] as i16 } else { 0 };
            let b = prev[i] as i16;
            let c = if i >= bpp { prev[i - bpp] as i16 } else { 0 };
            let pred = match f {
                0 => 0,
                1 => a,
                2 => b,
                3 => (a + b) / 2,
                4 => {
                    let p = a + b - c;
                    let (pa, pb, pc) = ((p - a).abs(), (p - b).abs(), (p - c).abs());
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                _ => panic!("filter {f}"),
            };
            cur[i] = line[i].wrapping_add(pred as u8);
        }
        for px in cur.chunks(bpp) {
            if colours.len() < 10_000 {
                colours.insert(px.to_vec());
            }
        }
        prev = cur;
    }
    (w, h, colours.len())
}

#[test]
fn the_report_loads_offline_without_errors_and_escapes_the_capture() {
    let dir = out_dir();
    let hostile = dir.join("hostile.pcap");
    std::fs::write(&hostile, hostile_pcap()).unwrap();
    let page = dir.join("report.html");
    let capture = common::repo().join(CAPTURE);
    let html = report(&[&capture, &hostile], &page);

    // Escaped in the file: no injected markup, and the strings are there as text.
    for bad in [HOSTILE_CLIENT, HOSTILE_SOFTWARE, HOSTILE_TOPIC, "<img"] {
        assert!(!html.contains(bad), "unescaped {bad:?} in the page");
    }
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"));
    assert!(html.contains("&lt;/pre&gt;&lt;/details&gt;&lt;script&gt;alert(3)"));
    assert_eq!(html.matches("<script").count(), 1, "one script: the page's");
    // Self-contained: no URL but SVG's namespace name; fetching is forbidden by its CSP.
    assert_eq!(
        html.matches("://").count(),
        html.matches("http://www.w3.org/2000/svg").count()
    );
    assert!(html.contains("default-src 'none'"));

    let Some(bin) =
        chromium_or_skip("the_report_loads_offline_without_errors_and_escapes_the_capture")
    else {
        return;
    };

    // The control: a page that requests an image and throws must be seen doing both, or the
    // checks below prove nothing.
    let control = dir.join("control.html");
    std::fs::write(
        &control,
        "<!DOCTYPE html><html><body><img src=\"http://kinspect-control.invalid/x.png\">\
         <script>console.error('control error'); no_such_function();</script></body></html>",
    )
    .unwrap();
    let proxy = Proxy::start();
    let (_, err) = run_chromium(bin, &control, &proxy, &["--dump-dom".into()]);
    assert!(
        !console_lines(&err).is_empty(),
        "the control page's console error was not seen in Chromium's log:\n{err}"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        page_requests(&proxy.seen())
            .iter()
            .any(|l| l.contains("kinspect-control.invalid")),
        "the control page's request did not reach the proxy: {:?}",
        proxy.seen()
    );

    let proxy = Proxy::start();
    let (dom, err) = run_chromium(bin, &page, &proxy, &["--dump-dom".into()]);
    let console = console_lines(&err);
    assert!(console.is_empty(), "console messages: {console:#?}");
    assert!(
        dom.contains("data-report-ready=\"1\""),
        "the page's script did not run to its end:\n{}",
        &dom[..dom.len().min(2000)]
    );
    assert_eq!(
        dom.matches("<script").count(),
        1,
        "an injected script became an element"
    );
    assert!(!dom.contains("<img"), "an injected image became an element");
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));

    let shot = dir.join("report.png");
    let _ = std::fs::remove_file(&shot);
    let (_, err) = run_chromium(
        bin,
        &page,
        &proxy,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,2000".into(),
            "--hide-scrollbars".into(),
        ],
    );
    let console = console_lines(&err);
    assert!(console.is_empty(), "console messages: {console:#?}");
    std::thread::sleep(Duration::from_millis(300));
    let requests = page_requests(&proxy.seen());
    assert!(
        requests.is_empty(),
        "the page made network requests: {requests:?}"
    );
    let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("{}: {e}\n{err}", shot.display()));
    let (w, h, colours) = png_facts(&png);
    assert_eq!((w, h), (1280, 2000), "screenshot size");
    // Text, tables and the plots' series colours: far more than one colour.
    assert!(
        colours >= 16,
        "the screenshot has {colours} colours: blank?"
    );
    eprintln!(
        "screenshot: {} ({w}x{h}, {colours}+ colours)",
        shot.display()
    );
}

/// The text of each cell of each row of the first table after `anchor`.
fn table_after(html: &str, anchor: &str) -> Vec<Vec<String>> {
    let at = html.find(anchor).unwrap_or_else(|| panic!("no {anchor}"));
    let t = &html[at..];
    let t = &t[t.find("<tbody>").unwrap()..t.find("</tbody>").unwrap()];
    t.split("<tr>")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|c| {
                    let c = &c[c.find('>').unwrap() + 1..];
                    c[..c.find("</td>").unwrap()]
                        .replace("&quot;", "\"")
                        .replace("&lt;", "<")
                        .replace("&gt;", ">")
                        .replace("&#39;", "'")
                        .replace("&amp;", "&")
                })
                .collect()
        })
        .collect()
}

#[test]
fn the_reports_numbers_match_stats_and_tshark() {
    let capture = common::repo().join(CAPTURE);
    let page = out_dir().join("numbers.html");
    let html = report(&[&capture], &page);
    let o = common::kinspect(&["stats", "--format", "json", CAPTURE]);
    let stats: Value = serde_json::from_slice(&o.stdout).unwrap();

    let overview: std::collections::BTreeMap<String, String> =
        table_after(&html, "id=\"overview\"")
            .into_iter()
            .map(|r| (r[0].clone(), r[1].clone()))
            .collect();
    let pdus = stats["pdus"].as_u64().unwrap();
    assert_eq!(
        overview["PDUs"],
        format!(
            "{pdus} ({} requests, {} responses)",
            stats["requests"], stats["responses"]
        )
    );
    assert_eq!(overview["Packets"], stats["packets"].to_string());
    assert_eq!(
        overview["Bytes"],
        format!(
            "{} requests, {} responses",
            stats["bytes"]["request"], stats["bytes"]["response"]
        )
    );
    assert!(overview["TCP connections"].starts_with(&format!(
        "{} ({} Kafka",
        stats["tcp_connections"], stats["kafka_connections"]
    )));

    // PDUs per API and version.
    let apis = table_after(&html, "id=\"s-apis\"");
    let theirs: Vec<Vec<String>> = stats["apis"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            [
                "api",
                "api_key",
                "api_version",
                "requests",
                "responses",
                "request_bytes",
                "response_bytes",
            ]
            .iter()
            .map(|k| {
                a[k].as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| a[k].to_string())
            })
            .collect()
        })
        .collect();
    assert_eq!(apis, theirs);

    // Latency percentiles per API.
    let lat = table_after(&html, "id=\"s-latency\"");
    let obj = stats["latency"].as_object().unwrap();
    assert_eq!(lat.len(), obj.len());
    for row in &lat {
        let l = &obj[&row[0]];
        assert_eq!(row[1], l["count"].to_string(), "{row:?}");
        for (i, k) in ["p50_ms", "p90_ms", "p99_ms", "max_ms"].iter().enumerate() {
            let ours: f64 = row[2 + i].parse().unwrap();
            let theirs = l[k].as_f64().unwrap();
            assert!((ours - theirs).abs() < 0.0015, "{row:?} {k} {theirs}");
        }
    }

    // What the rules followed: every PDU `stats` counted, and the rows `check` prints.
    let followed = table_after(&html, "What the rules followed");
    assert_eq!(
        followed[0],
        ["PDUs".to_string(), String::new(), pdus.to_string()]
    );
    let (printed, text) = check_section(CAPTURE, "what the rules followed");
    assert_eq!(followed, printed, "{text}");
    assert_eq!(followed.len(), 11, "{text}");
    // It saw every byte as a decoded PDU, so there is nothing it could not see.
    assert!(!html.contains("What the rules could not see"));
    assert!(!text.contains("could not see"), "{text}");

    // Clients by client id.
    let clients = table_after(&html, "Clients by client id");
    let theirs: Vec<(String, String)> = stats["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let id = match c["client_id"].as_str() {
                Some(s) => format!("{s:?}"),
                None => "null".into(),
            };
            (id, c["requests"].to_string())
        })
        .collect();
    let ours: Vec<(String, String)> = clients
        .iter()
        .map(|r| (r[0].clone(), r[2].clone()))
        .collect();
    assert_eq!(ours, theirs);

    // tshark: one Kafka PDU per frame in this capture, every one decoded.
    if Command::new("tshark").arg("-v").output().is_err() {
        eprintln!("SKIPPED the tshark half of the_reports_numbers_match_stats_and_tshark: tshark is not installed");
        return;
    }
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(&capture);
    for port in [9092, 19092, 19093, 19094] {
        cmd.args(["-d", &format!("tcp.port=={port},kafka")]);
    }
    let out = cmd
        .args(["-Y", "kafka", "-T", "fields", "-e", "frame.number"])
        .output()
        .unwrap();
    let frames = String::from_utf8_lossy(&out.stdout).lines().count() as u64;
    assert_eq!(pdus, frames, "PDUs in the report vs tshark's Kafka frames");

    // Topics: the PDUs naming "kjs" are the frames tshark finds the name in (it decodes every
    // version this capture uses).
    let topics = table_after(&html, "id=\"s-topics\"");
    assert_eq!(topics.len(), 1, "{topics:?}");
    assert_eq!(topics[0][0], "\"kjs\"");
    let ours: u64 = topics[0][1].parse::<u64>().unwrap() + topics[0][2].parse::<u64>().unwrap();
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(&capture);
    for port in [19092, 19093, 19094] {
        cmd.args(["-d", &format!("tcp.port=={port},kafka")]);
    }
    let out = cmd
        .args([
            "-Y",
            "kafka.topic_name == \"kjs\"",
            "-T",
            "fields",
            "-e",
            "frame.number",
        ])
        .output()
        .unwrap();
    let theirs = String::from_utf8_lossy(&out.stdout).lines().count() as u64;
    assert_eq!(ours, theirs, "PDUs naming kjs vs tshark's frames with it");
}

/// A capture where the rules miss something: the ApiVersions answers of librdkafka's mock that
/// tshark also calls malformed. The report lists what the rules could not see as `check` does.
#[test]
fn the_report_says_what_the_rules_could_not_see() {
    const NONE: &str = "captures/mock-kcat-none.pcap";
    let capture = common::repo().join(NONE);
    let page = out_dir().join("unseen.html");
    let html = report(&[&capture], &page);
    let tsv = std::fs::read_to_string(capture.with_extension("summary.tsv")).unwrap();
    let malformed = tsv
        .lines()
        .skip(1)
        .filter(|l| l.split('\t').nth(11) == Some("yes"))
        .count();
    let unseen = table_after(&html, "What the rules could not see");
    assert_eq!(
        unseen,
        [[
            "PDUs with decoding errors".to_string(),
            "error".to_string(),
            malformed.to_string()
        ]]
    );
    let (printed, text) = check_section(NONE, "what the rules could not see");
    assert_eq!(unseen, printed, "{text}");
}

/// The rows of a section of `kinspect check CAPTURE`'s text (three columns: what, family or
/// severity, count), up to the next blank line or the closing hint; and the whole text.
fn check_section(capture: &str, heading: &str) -> (Vec<Vec<String>>, String) {
    let o = common::kinspect(&["check", capture]);
    let text = String::from_utf8(o.stdout).unwrap();
    let rows = text
        .lines()
        .skip_while(|l| *l != heading)
        .skip(1)
        .take_while(|l| !l.is_empty() && !l.starts_with("  ("))
        .map(|l| {
            [&l[2..36], &l[37..46], &l[46..]]
                .iter()
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    (rows, text)
}
