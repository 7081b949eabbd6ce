//! Every record batch in the bundled captures (librdkafka/kcat, confluent-kafka, kafka-python,
//! kafkajs against librdkafka's mock cluster and tansu) decodes cleanly, and the records are the
//! ones tshark decoded from the same captures (tests/fixtures/records/tshark-records.tsv) or,
//! where tshark cannot decode the API version, the ones the producers sent.

use crate::common;
use crate::support;

use kinspect::diag::Severity;
use kinspect::records::RecordsContext;
use std::collections::{BTreeMap, BTreeSet};
use support::*;

fn capture_name(p: &std::path::Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

/// (capture, frame) → the batches found in that frame's PDUs, each as its decoded tree.
fn all_batches() -> BTreeMap<(String, u64), Vec<kinspect::wire::tree::Tree>> {
    let mut out: BTreeMap<(String, u64), Vec<_>> = BTreeMap::new();
    for cap in common::bundled_captures() {
        let name = capture_name(&cap);
        for p in pdus(&cap) {
            for (s, l) in scan_v2_batches(&p.bytes) {
                let t = decode(&p.bytes[s..s + l], &RecordsContext::default());
                out.entry((name.clone(), p.frame)).or_default().push(t);
            }
        }
    }
    out
}

#[test]
fn every_batch_in_every_capture_decodes_cleanly_with_its_crc_verified() {
    let mut codecs = BTreeMap::new();
    let mut n = 0;
    for ((cap, frame), trees) in all_batches() {
        for t in trees {
            n += 1;
            let bad: Vec<_> = t
                .diags
                .iter()
                .filter(|d| d.severity != Severity::Info)
                .collect();
            assert!(bad.is_empty(), "{cap} frame {frame}: {bad:?}");
            t.check_tiling(0)
                .unwrap_or_else(|e| panic!("{cap} frame {frame}: {e}"));
            let b = batches(&t)[0];
            assert_eq!(
                int(&t, b, "Crc"),
                int(&t, b, "CrcComputed"),
                "{cap} frame {frame}"
            );
            let rs = t.child(b, "Records").unwrap();
            let n_decl = i32::from_be_bytes(t.bytes(0, span_of(&t, rs, 4)).try_into().unwrap());
            assert_eq!(
                t.children(rs).count(),
                n_decl as usize,
                "{cap} frame {frame}: records count"
            );
            let codec = label(&t, t.child(b, "Attributes").unwrap(), "Compression");
            *codecs.entry(codec).or_insert(0) += 1;
        }
    }
    // The captures hold batches with every codec (kafka-python sent all five settings).
    assert_eq!(
        codecs.keys().copied().collect::<Vec<_>>(),
        vec!["gzip", "lz4", "none", "snappy", "zstd"],
        "{codecs:?}"
    );
    assert!(n >= 120, "only {n} batches found");
}

fn span_of(t: &kinspect::wire::tree::Tree, id: u32, len: u32) -> kinspect::wire::tree::Span {
    kinspect::wire::tree::Span {
        start: t.node(id).offset,
        len,
    }
}

/// tshark prints a null key or value as an empty string; compare accordingly.
fn tshark_form(b: &Option<Vec<u8>>) -> String {
    b.as_deref().map(hex).unwrap_or_default()
}

#[test]
fn records_match_what_tshark_decoded_from_the_same_frames() {
    let oracle =
        std::fs::read_to_string(common::repo().join("tests/fixtures/records/tshark-records.tsv"))
            .unwrap();
    let mut want: BTreeMap<(String, u64), Vec<Vec<String>>> = BTreeMap::new();
    for line in oracle.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let row = vec![
            f[4].to_string(),
            f[5].to_string(),
            f[6].to_string(),
            f[7].to_string(),
            f[8].to_string(),
        ];
        want.entry((f[0].to_string(), f[1].parse().unwrap()))
            .or_default()
            .push(row);
    }
    let got = all_batches();
    let mut compared = 0;
    for ((cap, frame), rows) in &want {
        let trees = got
            .get(&(cap.clone(), *frame))
            .unwrap_or_else(|| panic!("{cap} frame {frame}: no batches found"));
        let mut mine = Vec::new();
        for t in trees {
            let crc = format!("{:#010x}", int(t, batches(t)[0], "Crc"));
            for r in records(t) {
                let heads: Vec<String> = r
                    .headers
                    .iter()
                    .map(|(k, v)| format!("{k}={}", tshark_form(v)))
                    .collect();
                mine.push(vec![
                    crc.clone(),
                    r.offset.to_string(),
                    tshark_form(&r.key),
                    tshark_form(&r.value),
                    heads.join(";"),
                ]);
            }
        }
        assert_eq!(&mine, rows, "{cap} frame {frame}");
        compared += rows.len();
    }
    assert_eq!(compared, oracle.lines().count() - 1);
    assert!(compared >= 350, "{compared}");
}

#[test]
fn kcat_sent_24_keyless_lines_and_one_keyed_message_with_headers() {
    // kcat -P without -K produces null keys (librdkafka writes key length -1), one message per
    // input line: kcat-<codec>-<NNNN>-xxxx… for NNNN 0000-0023; then one message with key
    // hdr-key and the headers app=kinspect, trace=abc123 (as tshark shows in every kcat capture).
    for codec in ["none", "gzip", "snappy", "zstd"] {
        let cap = format!("mock-kcat-{codec}");
        let mut seen = BTreeSet::new();
        let mut keyed = 0;
        for p in pdus(&common::captures_dir().join(format!("{cap}.pcap")))
            .iter()
            .filter(|p| p.to_broker)
        {
            for (s, l) in scan_v2_batches(&p.bytes) {
                let t = decode(&p.bytes[s..s + l], &RecordsContext::default());
                let b = batches(&t)[0];
                let c = label(&t, t.child(b, "Attributes").unwrap(), "Compression");
                for r in records(&t) {
                    if r.key.is_some() {
                        assert_eq!(r.key.as_deref(), Some(&b"hdr-key"[..]));
                        assert_eq!(r.value.as_deref(), Some(&b"with headers"[..]));
                        let h = vec![
                            ("app".into(), Some(b"kinspect".to_vec())),
                            ("trace".into(), Some(b"abc123".to_vec())),
                        ];
                        assert_eq!(r.headers, h);
                        keyed += 1;
                        continue;
                    }
                    let v = String::from_utf8(r.value.unwrap()).unwrap();
                    let prefix = format!("kcat-{codec}-");
                    assert!(v.starts_with(&prefix), "{cap}: {v}");
                    let n: u32 = v[prefix.len()..prefix.len() + 4].parse().unwrap();
                    assert!(seen.insert(n), "{cap}: message {n} produced twice");
                    // librdkafka compresses a batch only when that pays off.
                    assert!(c == codec || c == "none", "{cap}: batch codec {c}");
                }
            }
        }
        assert_eq!(seen, (0..24).collect(), "{cap}");
        assert_eq!(keyed, 1, "{cap}");
    }
}

#[test]
fn kafka_python3_records_on_tansu_are_what_the_producer_sent() {
    // tshark 4.0 cannot decode Produce v9 / Fetch v12, so the oracle is the producer's own
    // pattern, as tshark showed it for kafka-python 2.0.2 in mock-kafkapython2-codecs: message i
    // has key k<i mod 4>, value "kafka-python <codec> message <i> " three times, and messages
    // 0 and 5 carry the header h=v<i>.
    let cap = common::captures_dir().join("tansu-kafkapython3-codecs.pcap");
    let mut seen = BTreeSet::new();
    for p in pdus(&cap).iter().filter(|p| p.to_broker) {
        for (s, l) in scan_v2_batches(&p.bytes) {
            let t = decode(&p.bytes[s..s + l], &RecordsContext::default());
            let b = batches(&t)[0];
            let c = label(&t, t.child(b, "Attributes").unwrap(), "Compression");
            let word = if c == "none" { "None" } else { c };
            for r in records(&t) {
                let v = String::from_utf8(r.value.clone().unwrap()).unwrap();
                let i: u32 = v.split(' ').nth(3).unwrap().parse().unwrap();
                assert_eq!(v, format!("kafka-python {word} message {i} ").repeat(3));
                assert_eq!(
                    r.key.as_deref(),
                    Some(format!("k{}", i % 4).as_bytes()),
                    "{v}"
                );
                let want_headers = if i % 5 == 0 {
                    vec![("h".to_string(), Some(format!("v{i}").into_bytes()))]
                } else {
                    vec![]
                };
                assert_eq!(r.headers, want_headers, "{v}");
                seen.insert((c, i));
            }
        }
    }
    for c in ["none", "gzip", "snappy", "lz4", "zstd"] {
        let got: BTreeSet<u32> = seen
            .iter()
            .filter(|(x, _)| *x == c)
            .map(|(_, i)| *i)
            .collect();
        assert_eq!(got, (0..6).collect(), "{c}");
    }
}
