//! `kinspect corpus FILE.pcap... -o DIR`: cuts fuzz seeds from captures. Each Kafka frame
//! becomes a `decode/` seed (with the hints the capture gave it), each non-empty records field a
//! `records/` seed, each connection's two directions a `stream/` seed, and each capture (its
//! first `--max-pcap-bytes`) a `pcap/` seed. Files are named by a hash of their content, so
//! running it twice or over overlapping captures adds nothing twice. The seed layouts are the
//! fuzz targets' (`kinspect::fuzzing`).

use super::io::{self, errln};
use super::{Global, EXIT_FAILURE, EXIT_OK};
use kinspect::capture::{read_capture, CaptureOptions, Event};
use kinspect::fuzzing::records::RECORDS_PARTIAL_OK;
use kinspect::fuzzing::{decode_seed, traffic::stream_seed};
use kinspect::pdu::{Direction, Pdu};
use kinspect::wire::tree::Value;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Captures (pcap or pcapng) to cut seeds from.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Folder to write into (subfolders decode/, records/, stream/, pcap/ are created).
    #[arg(short = 'o', long = "output", alias = "out", value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub port: super::Ports,
    /// Largest pcap seed: a bigger capture is cut there (the reader reports the cut).
    #[arg(long, default_value_t = 64 * 1024, value_name = "BYTES")]
    pub max_pcap_bytes: usize,
    /// Most bytes per direction in a stream seed (whole frames only; at least one frame).
    #[arg(long, default_value_t = 16 * 1024, value_name = "BYTES")]
    pub max_stream_bytes: usize,
    /// Most decode/ seeds per (direction, API key, version), to keep a corpus small yet
    /// varied; 0 keeps every frame.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub max_per_api: usize,
}

/// What a frame is, for `--max-per-api`: direction, API key, version.
type ApiKind = (Option<Direction>, Option<i16>, Option<i16>);

/// Seeds written per subfolder (new files only).
#[derive(Debug, Default)]
struct Counts(BTreeMap<&'static str, (usize, usize)>);

pub fn run(args: &Args, g: &Global) -> u8 {
    let Some(proto) = super::protocol_or_report(g, "kinspect corpus") else {
        return EXIT_FAILURE;
    };
    let opts = CaptureOptions {
        ports: args.port.ports.clone(),
        protocol: Some(kinspect::protocol::builtin()),
        ..CaptureOptions::default()
    };
    let mut counts = Counts::default();
    let mut dec = kinspect::records::decoder(proto);
    // Record-batch seeds are the `records` fields' bytes: keep them undecoded.
    dec.set_records(kinspect::wire::decode::RecordsOptions {
        raw: true,
        ..Default::default()
    });
    let mut pdu = Pdu::default();
    let mut per_api: HashMap<ApiKind, usize> = HashMap::new();
    for file in &args.files {
        let name = file.display();
        let data = match std::fs::read(file) {
            Ok(d) => d,
            Err(e) => {
                errln!("kinspect corpus: {name}: {e}");
                return EXIT_FAILURE;
            }
        };
        let mut seeds: Vec<(&'static str, Vec<u8>)> = Vec::new();
        // Per connection: (client bytes, server bytes), whole frames up to the limit.
        let mut streams: BTreeMap<u32, (Vec<u8>, Vec<u8>)> = BTreeMap::new();
        let result = read_capture(&data[..], &opts, &mut |ev| {
            let Event::Frame {
                origin,
                hints,
                data,
            } = ev
            else {
                return;
            };
            dec.decode_frame(data, &hints, &mut pdu);
            let seen = per_api
                .entry((pdu.direction, pdu.api_key, pdu.api_version))
                .or_default();
            *seen += 1;
            let keep = args.max_per_api == 0 || *seen <= args.max_per_api;
            if keep {
                seeds.push(("decode", decode_seed(&hints, data)));
            }
            for n in &pdu.tree.nodes {
                if let (Value::Bytes(s), "Records") = (n.value, n.name) {
                    let bytes = pdu.tree.bytes(n.buf, s);
                    if !bytes.is_empty() {
                        let mut seed = vec![RECORDS_PARTIAL_OK];
                        seed.extend_from_slice(bytes);
                        seeds.push(("records", seed));
                    }
                }
            }
            let conn = origin.conn.map_or(u32::MAX, |c| c.stream);
            let (client, server) = streams.entry(conn).or_default();
            let side = match pdu.direction.or(hints.direction) {
                Some(Direction::Response) => server,
                _ => client,
            };
            if side.is_empty() || side.len() + data.len() <= args.max_stream_bytes {
                side.extend_from_slice(data);
            }
        });
        if let Err(e) = result {
            errln!("kinspect corpus: {name}: {e}");
            return EXIT_FAILURE;
        }
        for (client, server) in streams.values() {
            seeds.push(("stream", stream_seed(client, server)));
        }
        seeds.push(("pcap", data[..data.len().min(args.max_pcap_bytes)].to_vec()));
        for (target, seed) in seeds {
            if let Err(e) = counts.write(&args.out, target, &seed) {
                errln!("kinspect corpus: {}: {e}", args.out.join(target).display());
                return EXIT_FAILURE;
            }
        }
    }
    let mut out = io::stdout();
    let written = counts
        .0
        .iter()
        .try_for_each(|(target, (new, total))| {
            writeln!(out, "{target}: {new} new seed(s) of {total} cut")
        })
        .and_then(|()| out.flush());
    io::finish(written, "kinspect corpus", EXIT_OK)
}

impl Counts {
    fn write(&mut self, out: &Path, target: &'static str, seed: &[u8]) -> std::io::Result<()> {
        let dir = out.join(target);
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{:016x}", fnv1a64(seed)));
        let c = self.0.entry(target).or_default();
        c.1 += 1;
        if !path.exists() {
            std::fs::write(path, seed)?;
            c.0 += 1;
        }
        Ok(())
    }
}

/// FNV-1a, 64 bits: a stable content name (not a security property; collisions among a few
/// thousand seeds are vanishingly unlikely and would only drop a seed).
fn fnv1a64(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::fnv1a64;

    #[test]
    fn fnv1a64_matches_the_published_test_vectors() {
        // From the FNV reference test suite.
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }
}
