//! The tree view says what a length prefix is: a `records` field's size and a record's length
//! are byte lengths, not counts, and their rows say so (`Records [1] (195 bytes)`,
//! `[0] (322 bytes)`). Checked on every bundled capture against the prefix bytes the row itself
//! shows, read here by this test's own int32 and varint readers, and, for a records field,
//! against a second field: the batches it holds, each `BatchLength` + 12 bytes, add up to it.

use crate::common;

/// One row of the tree: its prefix bytes (first row of the bytes column), indent and text.
struct Row {
    hex: Vec<u8>,
    depth: usize,
    text: String,
}

fn rows(tree: &str) -> Vec<Row> {
    tree.lines()
        .filter(|l| l.len() > 36 && !l.starts_with("         |") && l.get(8..11) == Some(" | "))
        .filter_map(|l| {
            let hex = l.get(11..34)?;
            let rest = l.get(34..)?.strip_prefix(" | ")?;
            let text = rest.trim_start();
            Some(Row {
                hex: hex
                    .split_whitespace()
                    .map(|b| u8::from_str_radix(b, 16).unwrap())
                    .collect(),
                depth: rest.len() - text.len(),
                text: text.to_string(),
            })
        })
        .collect()
}

/// An unsigned varint that uses every byte of `b`.
fn uvarint(b: &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for (i, &x) in b.iter().enumerate() {
        v |= u64::from(x & 0x7f) << (7 * i);
        if x & 0x80 == 0 {
            return (i + 1 == b.len()).then_some(v);
        }
    }
    None
}

/// `(N bytes)` at the end of a label, if there.
fn bytes_label(text: &str) -> Option<u64> {
    let inner = text
        .strip_suffix(" bytes)")
        .or_else(|| text.strip_suffix(" byte)"))?;
    inner.rsplit_once(" (")?.1.parse().ok()
}

#[test]
fn records_fields_and_records_say_their_prefix_is_a_byte_length() {
    let (mut records, mut fields, mut compact, mut summed) = (0, 0, 0, 0);
    for pcap in common::bundled_captures() {
        let name = pcap.file_name().unwrap().to_string_lossy().into_owned();
        let out = common::kinspect(&["decode", "-f", "tree", pcap.to_str().unwrap()]);
        let tree = common::stdout(&out);
        let rows = rows(&tree);
        let says = |r: &Row, want: Option<u64>, what: &str| {
            let got = bytes_label(&r.text);
            assert_eq!(got, want, "{name}: {what} ({:02x?}): {}", r.hex, r.text);
        };
        for (i, r) in rows.iter().enumerate() {
            let is_element = r.text.starts_with('[')
                && r.text[1..]
                    .split(']')
                    .next()
                    .is_some_and(|d| d.parse::<u32>().is_ok());
            if is_element && !r.text.contains(" = ") && !r.hex.is_empty() {
                // A struct element with bytes of its own: only a record has them (its length).
                let u = uvarint(&r.hex).unwrap_or_else(|| panic!("{name}: {}", r.text));
                let len = (u >> 1) as i64 ^ -((u & 1) as i64);
                says(r, Some(len as u64), "a record's row names its length");
                records += 1;
            }
            let Some(label) = r.text.strip_prefix("Records [") else {
                continue;
            };
            let count: u64 = label.split(']').next().unwrap().parse().unwrap();
            let prefix = match r.hex.len() {
                4 => i64::from(i32::from_be_bytes(r.hex[..].try_into().unwrap())),
                _ => uvarint(&r.hex).unwrap() as i64 - 1,
            };
            if prefix == count as i64 {
                // A batch's own count of records (or an empty field, 0 bytes and 0 batches).
                says(r, None, "a count is not a length");
                continue;
            }
            says(
                r,
                Some(prefix as u64),
                "a records field's row names its size",
            );
            fields += 1;
            compact += usize::from(r.hex.len() != 4);
            // The batches below it, up to the next row as shallow as it.
            let below: Vec<&Row> = rows[i + 1..]
                .iter()
                .take_while(|b| b.depth > r.depth)
                .collect();
            let clean = below.iter().all(|b| !b.text.contains("error["))
                && below
                    .iter()
                    .filter(|b| b.text.starts_with("Magic = "))
                    .all(|b| b.text == "Magic = 2");
            if clean {
                let sum: u64 = below
                    .iter()
                    .filter(|b| b.depth == r.depth + 4)
                    .filter_map(|b| b.text.strip_prefix("BatchLength = "))
                    .map(|n| n.parse::<u64>().unwrap() + 12)
                    .sum();
                assert_eq!(sum, prefix as u64, "{name}: the batches of {}", r.text);
                summed += 1;
            }
        }
    }
    eprintln!("{records} records, {fields} records fields ({compact} compact, {summed} summed)");
    assert!(records > 100 && fields > 50 && compact > 10 && summed > 50);
}
