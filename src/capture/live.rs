//! Live capture from a network interface through libpcap (cargo feature `live`), feeding the
//! same link/TCP/framing pipeline as capture files, so a live session prints exactly what
//! decoding its pcap would.

use super::pcap::Packet;
use super::{CaptureError, CaptureOptions, CaptureSink, CaptureSummary};

/// What to capture.
#[derive(Clone, Debug, Default)]
pub struct LiveOptions {
    /// Interface name (`lo`, `eth0`, `any`).
    pub interface: String,
    /// Stop after this many packets (None: until interrupted).
    pub packet_limit: Option<u64>,
    /// A BPF filter; when None, `tcp` (restricted to the Kafka ports given with `--port` when
    /// there are any, so a busy host does not flood the reassembly).
    pub filter: Option<String>,
}

/// Writes captured packets as a classic pcap stream (microseconds, little-endian), flushed per
/// packet so a reader on the other end of a pipe sees them at once.
pub struct PcapTap<W: std::io::Write> {
    w: W,
    header_written: bool,
}

impl<W: std::io::Write> PcapTap<W> {
    pub fn new(w: W) -> Self {
        PcapTap {
            w,
            header_written: false,
        }
    }

    fn packet(
        &mut self,
        linktype: i32,
        ts_ns: i64,
        data: &[u8],
        orig_len: u32,
    ) -> std::io::Result<()> {
        if !self.header_written {
            self.header_written = true;
            let mut h = Vec::with_capacity(24);
            h.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
            h.extend_from_slice(&2u16.to_le_bytes());
            h.extend_from_slice(&4u16.to_le_bytes());
            h.extend_from_slice(&[0; 8]);
            h.extend_from_slice(&262_144u32.to_le_bytes());
            h.extend_from_slice(&(linktype as u32).to_le_bytes());
            self.w.write_all(&h)?;
        }
        let mut r = Vec::with_capacity(16 + data.len());
        r.extend_from_slice(&(ts_ns.div_euclid(1_000_000_000) as u32).to_le_bytes());
        r.extend_from_slice(&((ts_ns.rem_euclid(1_000_000_000) / 1000) as u32).to_le_bytes());
        r.extend_from_slice(&(data.len() as u32).to_le_bytes());
        r.extend_from_slice(&orig_len.to_le_bytes());
        r.extend_from_slice(data);
        self.w.write_all(&r)?;
        self.w.flush()
    }
}

fn pcap_err(what: &str, e: pcap::Error) -> CaptureError {
    CaptureError::Io(std::io::Error::other(format!("{what}: {e}")))
}

/// The BPF filter for `opts`.
pub fn default_filter(opts: &CaptureOptions) -> String {
    if opts.ports.is_empty() {
        "tcp".to_string()
    } else {
        let ports: Vec<String> = opts.ports.iter().map(|p| format!("port {p}")).collect();
        format!("tcp and ({})", ports.join(" or "))
    }
}

/// Captures until the packet limit (or an error), delivering events as `read_capture` does;
/// with a `tap`, every packet is also written there as pcap.
pub fn capture_live(
    live: &LiveOptions,
    opts: &CaptureOptions,
    mut tap: Option<&mut PcapTap<&mut dyn std::io::Write>>,
    sink: &mut dyn CaptureSink,
) -> Result<CaptureSummary, CaptureError> {
    let inactive = pcap::Capture::from_device(live.interface.as_str())
        .map_err(|e| pcap_err(&format!("interface {}", live.interface), e))?;
    let mut cap = inactive
        .promisc(false)
        .snaplen(262_144)
        .immediate_mode(true)
        .timeout(500)
        .open()
        .map_err(|e| {
            pcap_err(
                &format!(
                    "cannot capture on {} (root or CAP_NET_RAW is needed)",
                    live.interface
                ),
                e,
            )
        })?;
    let filter = live.filter.clone().unwrap_or_else(|| default_filter(opts));
    cap.filter(&filter, true)
        .map_err(|e| pcap_err(&format!("filter {filter:?}"), e))?;
    let linktype = cap.get_datalink().0;
    super::run_pipeline(opts, sink, |pipeline, out| {
        let mut frame = 0u64;
        loop {
            if live.packet_limit.is_some_and(|n| frame >= n) {
                return Ok(());
            }
            match cap.next_packet() {
                Ok(pkt) => {
                    frame += 1;
                    // time_t and suseconds_t are 32-bit on some targets.
                    #[allow(clippy::useless_conversion)]
                    let ts_ns = i64::from(pkt.header.ts.tv_sec)
                        .saturating_mul(1_000_000_000)
                        .saturating_add(i64::from(pkt.header.ts.tv_usec) * 1000);
                    if let Some(t) = tap.as_mut() {
                        t.packet(linktype, ts_ns, pkt.data, pkt.header.len)?;
                    }
                    let p = Packet {
                        frame,
                        ts_ns,
                        linktype,
                        data: pkt.data,
                    };
                    pipeline.packet(&p, out);
                }
                Err(pcap::Error::TimeoutExpired) => continue,
                Err(pcap::Error::NoMorePackets) => return Ok(()),
                Err(e) => return Err(pcap_err("capture failed", e)),
            }
        }
    })
}
