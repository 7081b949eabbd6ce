//! kinspect's gzip reader against the JDK's `java.util.zip.GZIPInputStream`, built and read as
//! Kafka builds and reads it for a gzip batch (`tests/oracles/JavaGunzip.java`): the same
//! inputs, the same verdict (accepted with the same bytes, or refused). What Java makes of bytes
//! after a member depends on where its 8 KiB buffer ends, so members end on every side of
//! those boundaries, followed by every kind of tail: none, too few bytes to be looked at, bytes
//! that are not a header, a header and no member, a whole member, a broken one; then random
//! cuts and flipped bytes of those. Needs a JDK (`java` running a source file: JDK 11 or later).

use kinspect::records::codec::{decompress, output_cap, Codec};
use std::io::Write;
use std::process::{Command, Stdio};

/// A member of `data` stored (deflate level 0), so that its size is exact: a 10-byte header,
/// 5 bytes per stored block of at most 65535 bytes, the data, the 8-byte trailer.
fn stored(data: &[u8]) -> Vec<u8> {
    member(data, flate2::Compression::none())
}

fn member(data: &[u8], level: flate2::Compression) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), level);
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// The tails put after a first member.
fn tails(rng: &mut Rng) -> Vec<Vec<u8>> {
    let header = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    let mut t: Vec<Vec<u8>> = vec![Vec::new()];
    for n in [1, 8, 17, 18, 19, 20, 26, 27, 40] {
        t.push(vec![0; n]);
    }
    t.push(b"junk after the member".to_vec());
    t.push(header.clone());
    for junk in [8, 9, 12, 30] {
        let mut h = header.clone();
        h.extend(rng.bytes(junk));
        t.push(h);
    }
    let mut h = vec![0x1f, 0x8b, 8];
    h.extend([0; 16]);
    t.push(h);
    t.push(stored(b""));
    t.push(member(b"a second member", flate2::Compression::default()));
    t.push(stored(&rng.bytes(9000)));
    let mut bad_crc = member(b"a second member, broken", flate2::Compression::default());
    let at = bad_crc.len() - 6;
    bad_crc[at] ^= 1;
    t.push(bad_crc);
    let mut reserved = member(b"reserved flags", flate2::Compression::default());
    reserved[3] |= 0x40;
    t.push(reserved);
    // FHCRC set and wrong: Java cannot read this header (and says nothing).
    let mut hcrc = vec![0x1f, 0x8b, 8, 0x02, 0, 0, 0, 0, 0, 0xff, 0xde, 0xad];
    hcrc.extend(&stored(b"behind a bad header CRC")[10..]);
    t.push(hcrc);
    t
}

fn inputs() -> Vec<Vec<u8>> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let tails = tails(&mut rng);
    let mut firsts = Vec::new();
    // A stored member's deflate data ends at 15 + its length; Java's buffer, filled from byte
    // 10 (after the header it read itself), ends at 10 + 8192 k; the 4 KiB marks between are
    // where a smaller buffer would end.
    for boundary in [4096usize, 8192, 12288, 16384] {
        for d in (boundary - 40)..(boundary + 12) {
            firsts.push(stored(&rng.bytes(d - 5)));
        }
    }
    firsts.push(member(&rng.bytes(100), flate2::Compression::default()));
    let text: Vec<u8> = (0..20_000u32)
        .flat_map(|i| format!("record {i} value {}\n", i % 13).into_bytes())
        .collect();
    firsts.push(member(&text, flate2::Compression::best()));
    let mut out = Vec::new();
    for f in &firsts {
        for t in &tails {
            let mut z = f.clone();
            z.extend_from_slice(t);
            out.push(z);
        }
    }
    // Cuts and flipped bytes near the end of two-member inputs.
    for _ in 0..600 {
        let mut z = out[rng.below(out.len())].clone();
        match rng.below(3) {
            0 => {
                let keep = z.len().saturating_sub(rng.below(60));
                z.truncate(keep);
            }
            _ => {
                let back = 1 + rng.below(z.len().min(60));
                let at = z.len() - back;
                z[at] ^= 1 << rng.below(8);
            }
        }
        out.push(z);
    }
    out
}

/// kinspect's verdict, in the oracle's words.
fn kinspect_says(z: &[u8]) -> String {
    match decompress(Codec::Gzip, z, 2, output_cap(z.len(), 0)) {
        Ok(d) => format!("ok {} {:x}", d.data.len(), crc32fast::hash(&d.data)),
        Err(_) => "err".into(),
    }
}

#[test]
fn gzip_batches_are_accepted_and_refused_as_kafka_s_java_reader_does() {
    let test = "gzip_batches_are_accepted_and_refused_as_kafka_s_java_reader_does";
    let java = Command::new("java").arg("-version").output();
    if !java.is_ok_and(|o| o.status.success()) {
        eprintln!(
            "SKIPPED {test}: java is not installed (apt-get install openjdk-17-jdk-headless)"
        );
        return;
    }
    let inputs = inputs();
    let mut stdin = Vec::new();
    for z in &inputs {
        stdin.extend_from_slice(&(z.len() as u32).to_be_bytes());
        stdin.extend_from_slice(z);
    }
    let oracle = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oracles/JavaGunzip.java");
    let mut child = Command::new("timeout")
        .args(["120", "java", oracle])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("java runs");
    let mut pipe = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || pipe.write_all(&stdin));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let java: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(java.len(), inputs.len(), "a verdict per input");
    let (mut accepted, mut differ) = (0, Vec::new());
    for (i, (z, j)) in inputs.iter().zip(&java).enumerate() {
        let k = kinspect_says(z);
        let j_short = if j.starts_with("err") { "err" } else { j };
        accepted += usize::from(k.starts_with("ok"));
        if k != j_short {
            let tail: String = z[z.len().saturating_sub(40)..]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            differ.push(format!(
                "input {i} ({} bytes, ends {tail}): java {j}, kinspect {k}",
                z.len()
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} inputs judged otherwise than Java:\n{}",
        differ.len(),
        inputs.len(),
        differ[..differ.len().min(15)].join("\n")
    );
    // Both kinds of verdict were exercised.
    assert!(
        accepted > 100 && accepted < inputs.len() - 100,
        "{accepted}"
    );
    eprintln!(
        "{test}: {} inputs, {accepted} accepted, the same as Java",
        inputs.len()
    );
}
