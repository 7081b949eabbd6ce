//! Capture files: pcap (both byte orders, micro/nanosecond, the "modified" variant) and pcapng
//! (several sections and interfaces, enhanced and simple packet blocks), read as a stream through
//! `pcap-parser` with one bounded buffer. Owns frame numbering (1-based, every packet record
//! counts, as in Wireshark), timestamps in nanoseconds, and byte offsets for damage reports.

use super::CaptureError;
use crate::diag::Diagnostic;
use pcap_parser::pcapng::Block;
use pcap_parser::traits::PcapReaderIterator;
use pcap_parser::{LegacyPcapReader, PcapBlockOwned, PcapError, PcapNGReader};
use std::io::Read;

/// Largest record/block held at once. Loopback captures with segmentation offload reach 256 KiB
/// per packet; anything past this is reported as damage rather than buffered.
const BUFFER_CAPACITY: usize = 1 << 20;

/// One captured packet.
pub(crate) struct Packet<'a> {
    /// 1-based frame number.
    pub frame: u64,
    pub ts_ns: i64,
    pub linktype: i32,
    /// The captured bytes (possibly cut by the snap length).
    pub data: &'a [u8],
}

pub(crate) enum Item<'a> {
    Packet(Packet<'a>),
    /// A problem with the file, with the frame number it concerns when there is one.
    Note(Option<u64>, Diagnostic),
}

/// How much one read of the capture brings at most. The reader's buffer holds
/// [`BUFFER_CAPACITY`] (the largest record), but a piece of this size is still in the core's
/// cache when its packets are copied out of it, where a 1 MiB one is not (`check` of the
/// benchmark capture, which reads on one thread: 147 → 134 ms as pcap, 130 → 120 ms as pcapng;
/// `hyperfine -N -r 30`, alternated).
const READ_PIECE: usize = 256 << 10;

/// Makes every `read` fill the buffer, up to [`READ_PIECE`], unless the input ends:
/// pcap-parser takes a read of nothing for the input's end, and pipes (stdin) return short
/// reads routinely. A record larger than a piece is gathered over several reads.
struct FullRead<R>(R);

impl<R: Read> Read for FullRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let want = buf.len().min(READ_PIECE);
        let mut n = 0;
        while n < want {
            match self.0.read(&mut buf[n..want]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }
}

fn damaged(offset: u64, frame: u64, message: String) -> Item<'static> {
    Item::Note(
        Some(frame),
        Diagnostic::error("capture-damaged", "capture", offset, message),
    )
}

/// Reads the whole input, handing each packet (and each problem) to `f`. Returns the bytes
/// consumed. Damage after the header ends the read with a Note, not an error.
pub(crate) fn read_packets<R: Read>(
    reader: R,
    f: &mut dyn FnMut(Item<'_>),
) -> Result<u64, CaptureError> {
    let mut reader = FullRead(reader);
    let mut magic = [0u8; 4];
    let n = reader.read(&mut magic)?;
    let input = FullRead(std::io::Cursor::new(magic).take(n as u64).chain(reader.0));
    let m = u32::from_le_bytes(magic);
    if n == 4 && m == 0x0a0d_0d0a {
        read_pcapng(input, f)
    } else if n == 4
        && matches!(
            m,
            0xa1b2_c3d4 | 0xd4c3_b2a1 | 0xa1b2_3c4d | 0x4d3c_b2a1 | 0xa1b2_cd34 | 0x34cd_b2a1
        )
    {
        read_legacy(input, f)
    } else {
        Err(CaptureError::NotACapture { magic, len: n })
    }
}

fn header_error(e: PcapError<&[u8]>) -> CaptureError {
    match e {
        PcapError::ReadError => {
            CaptureError::Io(std::io::Error::other("read error in the capture header"))
        }
        PcapError::Incomplete(_) | PcapError::UnexpectedEof | PcapError::Eof => {
            CaptureError::BadHeader {
                offset: 0,
                message: "the file ends inside its header".into(),
            }
        }
        other => CaptureError::BadHeader {
            offset: 0,
            message: format!("the file header cannot be parsed ({other:?})"),
        },
    }
}

/// What the next() loop should do after an error from pcap-parser.
enum Next {
    Refill,
    Stop,
}

fn on_error(
    e: &PcapError<&[u8]>,
    offset: u64,
    frame: u64,
    what: &str,
    f: &mut dyn FnMut(Item<'_>),
) -> Next {
    match e {
        PcapError::Eof => Next::Stop,
        PcapError::Incomplete(_) => Next::Refill,
        PcapError::UnexpectedEof => {
            f(Item::Note(
                Some(frame),
                Diagnostic::error(
                    "capture-truncated",
                    "capture",
                    offset,
                    format!("the file ends inside {what} {frame}: the capture was cut short; everything before it was read"),
                ),
            ));
            Next::Stop
        }
        PcapError::BufferTooSmall => {
            f(damaged(
                offset,
                frame,
                format!("{what} {frame} declares a length above {BUFFER_CAPACITY} bytes: a damaged length field; reading stops here"),
            ));
            Next::Stop
        }
        PcapError::ReadError => {
            f(damaged(
                offset,
                frame,
                format!("read error in {what} {frame}"),
            ));
            Next::Stop
        }
        other => {
            f(damaged(
                offset,
                frame,
                format!("{what} {frame} cannot be parsed ({other}); reading stops here"),
            ));
            Next::Stop
        }
    }
}

fn read_legacy<R: Read>(input: R, f: &mut dyn FnMut(Item<'_>)) -> Result<u64, CaptureError> {
    let mut rdr = LegacyPcapReader::new(BUFFER_CAPACITY, input).map_err(|e| header_error(e))?;
    let mut frame: u64 = 0;
    let mut linktype = 1;
    let mut snaplen = u32::MAX;
    let mut nanos = false;
    loop {
        let offset = rdr.consumed() as u64;
        match rdr.next() {
            Ok((len, block)) => {
                match block {
                    PcapBlockOwned::LegacyHeader(h) => {
                        linktype = h.network.0;
                        snaplen = h.snaplen;
                        nanos = h.is_nanosecond_precision();
                    }
                    PcapBlockOwned::Legacy(b) => {
                        frame += 1;
                        if b.caplen > snaplen && snaplen != 0 {
                            f(Item::Note(
                                Some(frame),
                                Diagnostic::warning(
                                    "caplen-exceeds-snaplen",
                                    "capture",
                                    offset,
                                    format!("record {frame} holds {} bytes, more than the file's snap length {snaplen}", b.caplen),
                                ),
                            ));
                        }
                        let frac = if nanos {
                            b.ts_usec as i64
                        } else {
                            b.ts_usec as i64 * 1000
                        };
                        let ts_ns = (b.ts_sec as i64)
                            .saturating_mul(1_000_000_000)
                            .saturating_add(frac);
                        f(Item::Packet(Packet {
                            frame,
                            ts_ns,
                            linktype,
                            data: b.data,
                        }));
                    }
                    PcapBlockOwned::NG(_) => {}
                }
                // Not `consume`, which moves what is left of the buffer to its front each time
                // half of it has been read (a copy of half the file): `refill` moves only the
                // partial record left when the buffer runs out.
                rdr.consume_noshift(len);
            }
            Err(e) => match on_error(&e, offset, frame + 1, "record", f) {
                Next::Refill => {
                    if let Err(e) = rdr.refill() {
                        f(damaged(
                            offset,
                            frame + 1,
                            format!("cannot read record {}: {e}", frame + 1),
                        ));
                        break;
                    }
                }
                Next::Stop => break,
            },
        }
    }
    Ok(rdr.consumed() as u64)
}

struct Interface {
    linktype: i32,
    /// Units per second, and a whole-second offset.
    resolution: u64,
    offset_s: i64,
    /// 0 = no limit.
    snaplen: u32,
}

fn read_pcapng<R: Read>(input: R, f: &mut dyn FnMut(Item<'_>)) -> Result<u64, CaptureError> {
    let mut rdr = PcapNGReader::new(BUFFER_CAPACITY, input).map_err(|e| header_error(e))?;
    let mut frame: u64 = 0;
    let mut ifaces: Vec<Interface> = Vec::new();
    loop {
        let offset = rdr.consumed() as u64;
        match rdr.next() {
            Ok((len, block)) => {
                if let PcapBlockOwned::NG(b) = block {
                    match b {
                        // Interface ids are per section.
                        Block::SectionHeader(_) => ifaces.clear(),
                        Block::InterfaceDescription(idb) => {
                            let resolution = match idb.ts_resolution() {
                                Some(r) if r > 0 => r,
                                _ => {
                                    f(Item::Note(
                                        Some(frame + 1),
                                        Diagnostic::warning(
                                            "timestamp-resolution",
                                            "capture",
                                            offset,
                                            format!("interface {} declares an unusable time resolution (if_tsresol {:#x}); microseconds assumed", ifaces.len(), idb.if_tsresol),
                                        ),
                                    ));
                                    1_000_000
                                }
                            };
                            ifaces.push(Interface {
                                snaplen: idb.snaplen,
                                linktype: idb.linktype.0,
                                resolution,
                                offset_s: idb.if_tsoffset,
                            });
                        }
                        Block::EnhancedPacket(epb) => {
                            frame += 1;
                            match ifaces.get(epb.if_id as usize) {
                                Some(i) => {
                                    let raw = ((epb.ts_high as u64) << 32) | epb.ts_low as u64;
                                    let ts_ns = ticks_to_ns(raw, i.resolution, i.offset_s);
                                    let data = epb.data.get(..epb.caplen as usize).unwrap_or(epb.data);
                                    f(Item::Packet(Packet { frame, ts_ns, linktype: i.linktype, data}));
                                }
                                None => f(damaged(
                                    offset,
                                    frame,
                                    format!("packet block {frame} names interface {} but only {} were described; packet skipped", epb.if_id, ifaces.len()),
                                )),
                            }
                        }
                        Block::SimplePacket(spb) => {
                            frame += 1;
                            // A simple packet block belongs to interface 0 and has no timestamp.
                            match ifaces.first() {
                                Some(i) => {
                                    // A simple packet block has no captured length: it is the
                                    // original length cut to the snap length; the rest is padding.
                                    let snap = if i.snaplen == 0 { u32::MAX } else { i.snaplen };
                                    let cap = spb.data.len().min(spb.origlen.min(snap) as usize);
                                    f(Item::Packet(Packet { frame, ts_ns: 0, linktype: i.linktype, data: &spb.data[..cap]}));
                                }
                                None => f(damaged(offset, frame, format!("simple packet block {frame} appears before any interface description; skipped"))),
                            }
                        }
                        _ => {}
                    }
                }
                // Not `consume`, which moves what is left of the buffer to its front each time
                // half of it has been read (a copy of half the file): `refill` moves only the
                // partial record left when the buffer runs out.
                rdr.consume_noshift(len);
            }
            Err(e) => match on_error(&e, offset, frame + 1, "block of frame", f) {
                Next::Refill => {
                    if let Err(e) = rdr.refill() {
                        f(damaged(
                            offset,
                            frame + 1,
                            format!("cannot read the block of frame {}: {e}", frame + 1),
                        ));
                        break;
                    }
                }
                Next::Stop => break,
            },
        }
    }
    Ok(rdr.consumed() as u64)
}

/// Converts pcapng timestamp ticks at `resolution` units per second to nanoseconds since the
/// epoch, saturating rather than overflowing on absurd values.
fn ticks_to_ns(ticks: u64, resolution: u64, offset_s: i64) -> i64 {
    let secs = ticks / resolution;
    let frac = ticks % resolution;
    let frac_ns = (frac as u128 * 1_000_000_000u128 / resolution as u128) as i64;
    let secs = i64::try_from(secs)
        .unwrap_or(i64::MAX)
        .saturating_add(offset_s);
    secs.saturating_mul(1_000_000_000).saturating_add(frac_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcapng_ticks_at_common_resolutions() {
        assert_eq!(ticks_to_ns(1_500_000, 1_000_000, 0), 1_500_000_000);
        assert_eq!(ticks_to_ns(3_000_000_007, 1_000_000_000, 1), 4_000_000_007);
        // 2^-10 s resolution: 1024 ticks per second.
        assert_eq!(ticks_to_ns(1536, 1024, 0), 1_500_000_000);
        assert_eq!(ticks_to_ns(u64::MAX, 1, i64::MAX), i64::MAX);
    }

    #[test]
    fn not_a_capture_names_the_magic() {
        let err = read_packets(&b"GET / HTTP/1.1\r\n"[..], &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("47455420"), "{err}");
        let err = read_packets(&b"ab"[..], &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("only 2 byte"), "{err}");
    }
}
