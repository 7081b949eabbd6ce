//! Regression for the summary view's times (issue 11, item 14): they counted from the first
//! Kafka PDU, while tshark's `frame.time_relative` counts from the capture's first packet (frame
//! 6 of mock-kcat-none was 0.000062 in kinspect, 0.000239 in tshark). The reader now reports the
//! first packet's time before any event (`CaptureSink::first_packet`), and the printer shows
//! times in tshark's `-t` formats (`TimeFormat`). The oracle is tshark itself, on the bundled
//! captures.

use crate::common;

use kinspect::capture::{read_capture_to, CaptureOptions, CaptureSink, Event};
use kinspect::engine::decoded::DecodeLoop;
use kinspect::output::summary::State;
use kinspect::output::time::TimeFormat;
use kinspect::output::{Format, Options};
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

const FORMATS: [TimeFormat; 5] = [
    TimeFormat::Relative,
    TimeFormat::Absolute,
    TimeFormat::AbsoluteDate,
    TimeFormat::Delta,
    TimeFormat::Epoch,
];

/// Whether tshark runs here; prints a skip notice naming the test when it does not.
fn tshark_or_skip(test: &str) -> bool {
    let ok = Command::new("tshark")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED {test}: tshark is not installed (apt-get install tshark to run it)");
    }
    ok
}

/// tshark's fields for every frame of `path`, with every bundled broker port decoded as Kafka.
fn tshark(path: &Path, args: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(path);
    for port in [9092, 19092, 19093, 19094] {
        cmd.args(["-d", &format!("tcp.port=={port},kafka")]);
    }
    let out = cmd.args(["-T", "fields"]).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// `0.000239000` → `0.000239`: tshark prints nanoseconds, pcap times are microseconds.
fn micros(s: &str) -> String {
    let (whole, frac) = s.split_once('.').unwrap();
    format!("{whole}.{}", &frac[..6])
}

/// Decodes a capture as `kinspect decode -f summary` does and keeps, for every PDU, the frame
/// that completed it and its time column in every format.
struct Times {
    dl: DecodeLoop,
    states: Vec<State>,
    rows: Vec<(u64, Vec<String>)>,
}

impl CaptureSink for Times {
    fn first_packet(&mut self, ts_ns: i64) {
        for s in &mut self.states {
            s.clock(Some(ts_ns));
        }
    }

    fn event(&mut self, ev: Event<'_>) {
        let Event::Frame {
            origin,
            hints,
            data,
        } = ev
        else {
            return;
        };
        let pdu = self.dl.frame(origin, &hints, data);
        let o = Options {
            format: Format::Summary,
            annotate: false,
            color: false,
            show_secrets: false,
        };
        let mut cols = Vec::new();
        for (s, f) in self.states.iter_mut().zip(FORMATS) {
            let mut line = Vec::new();
            s.write_pdu(&mut line, pdu, &o).unwrap();
            let line = String::from_utf8(line).unwrap();
            // `frame time… src → dst …`; the absolute date format is two words.
            let words: Vec<&str> = line.split_whitespace().collect();
            let n = if f == TimeFormat::AbsoluteDate { 2 } else { 1 };
            cols.push(words[1..1 + n].join(" "));
        }
        self.rows.push((pdu.origin.last_frame.unwrap(), cols));
    }
}

fn kinspect_times(path: &Path) -> Vec<(u64, Vec<String>)> {
    let opts = CaptureOptions {
        protocol: Some(kinspect::protocol::builtin()),
        ..CaptureOptions::default()
    };
    let mut t = Times {
        dl: DecodeLoop::new(kinspect::protocol::builtin()),
        states: FORMATS
            .iter()
            .map(|f| State::with_time_format(*f))
            .collect(),
        rows: Vec::new(),
    };
    let bytes = std::fs::read(path).unwrap();
    read_capture_to(&bytes[..], &opts, &mut t).unwrap();
    t.rows
}

#[test]
fn summary_times_count_from_the_first_packet_as_tshark_does() {
    if !tshark_or_skip("summary_times_count_from_the_first_packet_as_tshark_does") {
        return;
    }
    for path in common::bundled_captures() {
        let fields = tshark(
            &path,
            &[
                "-e",
                "frame.number",
                "-e",
                "frame.time_relative",
                "-e",
                "frame.time_epoch",
            ],
        );
        let utc = tshark(
            &path,
            &["-t", "ud", "-e", "frame.number", "-e", "_ws.col.Time"],
        );
        let mut by_frame: HashMap<u64, (String, String, String)> = HashMap::new();
        for (f, u) in fields.iter().zip(&utc) {
            assert_eq!(f[0], u[0]);
            by_frame.insert(
                f[0].parse().unwrap(),
                (micros(&f[1]), micros(&f[2]), u[1].clone()),
            );
        }
        let rows = kinspect_times(&path);
        assert!(!rows.is_empty(), "{path:?}");
        for (frame, cols) in rows {
            let (rel, epoch, ud) = &by_frame[&frame];
            let name = path.file_name().unwrap().to_string_lossy();
            assert_eq!(&cols[0], rel, "{name} frame {frame}: relative");
            assert_eq!(&cols[2], ud, "{name} frame {frame}: UTC date and time");
            assert_eq!(
                ud.split_once(' ').unwrap().1,
                cols[1],
                "{name} frame {frame}"
            );
            assert_eq!(&cols[4], epoch, "{name} frame {frame}: epoch");
        }
    }
}

#[test]
fn summary_deltas_are_tsharks_delta_displayed_on_kafka_frames() {
    if !tshark_or_skip("summary_deltas_are_tsharks_delta_displayed_on_kafka_frames") {
        return;
    }
    // In this capture every Kafka PDU is alone in the frame that completes it, so the PDUs
    // kinspect shows are exactly the frames `-Y kafka` displays.
    let path = common::captures_dir().join("mock-kcat-none.pcap");
    let want: Vec<(u64, String, String)> = tshark(
        &path,
        &[
            "-Y",
            "kafka",
            "-e",
            "frame.number",
            "-e",
            "frame.time_relative",
            "-e",
            "frame.time_delta_displayed",
        ],
    )
    .into_iter()
    .map(|f| (f[0].parse().unwrap(), micros(&f[1]), micros(&f[2])))
    .collect();
    let got: Vec<(u64, String, String)> = kinspect_times(&path)
        .into_iter()
        .map(|(frame, cols)| (frame, cols[0].clone(), cols[3].clone()))
        .collect();
    assert_eq!(got.len(), 62);
    assert_eq!(got, want);
}
