//! `kinspect corpus` against tshark's view of a bundled capture (captures/*.summary.tsv): one
//! decode/ seed per Kafka PDU tshark saw (minus byte-identical frames), one stream/ seed per TCP
//! stream, the capture itself as the pcap/ seed, and records/ seeds only where there are
//! records; every seed passes through its fuzz target.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

fn files(dir: &Path) -> Vec<Vec<u8>> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| std::fs::read(e.ok()?.path()).ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn corpus_cuts_one_seed_per_pdu_and_stream_as_tshark_counts_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cap = root.join("captures/mock-kcat-gzip.pcap");
    let rows = crate::common::tshark_summary(&cap);
    let streams: BTreeSet<&str> = rows.iter().map(|r| &*r[6]).collect();
    let out = std::env::temp_dir().join(format!("kinspect-corpus-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let st = Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .arg("corpus")
        .arg(&cap)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let decode = files(&out.join("decode"));
    // Byte-identical frames share a name, so tshark's PDUs bound the count from above, and PDUs
    // that differ in API, direction or correlation id (bytes of the frame) from below.
    let distinct: BTreeSet<(&str, &str, &str)> =
        rows.iter().map(|r| (&*r[1], &*r[2], &*r[5])).collect();
    assert!(
        decode.len() <= rows.len() && decode.len() >= distinct.len(),
        "{} decode seeds for {} PDUs ({} distinct)",
        decode.len(),
        rows.len(),
        distinct.len()
    );
    let keys: BTreeSet<i16> = decode
        .iter()
        .map(|s| {
            let (hints, frame) = kinspect::fuzzing::decode_input(s);
            kinspect::fuzzing::decode(s);
            hints
                .api_key
                .unwrap_or_else(|| i16::from_be_bytes([frame[4], frame[5]]))
        })
        .collect();
    let want: BTreeSet<i16> = rows.iter().map(|r| r[2].parse().unwrap()).collect();
    assert_eq!(keys, want, "API keys of the seeds vs tshark's");
    assert_eq!(files(&out.join("stream")).len(), streams.len());
    assert_eq!(files(&out.join("pcap")), vec![std::fs::read(&cap).unwrap()]);
    let records = files(&out.join("records"));
    assert!(!records.is_empty(), "a gzip produce capture has records");
    for r in &records {
        kinspect::fuzzing::records(r);
    }
    for s in files(&out.join("stream")) {
        kinspect::fuzzing::stream(&s);
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// An input that is no capture is named, with the command, as every other subcommand names its
/// failures (`corpus` said `kinspect:` where its other messages said `kinspect corpus:`).
#[test]
fn corpus_names_itself_and_the_input_it_cannot_read() {
    let out = std::env::temp_dir().join(format!("kinspect-corpus-bad-{}", std::process::id()));
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let st = Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .arg("corpus")
        .arg(&readme)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&out);
    assert_eq!(st.status.code(), Some(2));
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(
        err.starts_with(&format!(
            "kinspect corpus: {}: at byte 0: expected a pcap magic",
            readme.display()
        )),
        "{err}"
    );
}
