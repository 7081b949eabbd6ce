//! Live capture from a network interface through libpcap (cargo feature `live`), feeding the
//! same link/TCP/framing pipeline as capture files, so a live session prints exactly what
//! decoding its pcap would.

use super::pcap::Packet;
use super::{CaptureError, CaptureOptions, CaptureSummary, Counter, Event, Pipeline};

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

/// Captures until the packet limit (or an error), delivering events as `read_capture` does.
pub fn capture_live(
    live: &LiveOptions,
    opts: &CaptureOptions,
    sink: &mut dyn FnMut(Event<'_>),
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
    let mut summary = CaptureSummary::default();
    let mut pipeline = Pipeline::new(opts);
    let mut out = Counter {
        sink,
        summary: &mut summary,
        index: 0,
    };
    let mut frame = 0u64;
    loop {
        if live.packet_limit.is_some_and(|n| frame >= n) {
            break;
        }
        match cap.next_packet() {
            Ok(pkt) => {
                frame += 1;
                let ts_ns = (pkt.header.ts.tv_sec as i64)
                    .saturating_mul(1_000_000_000)
                    .saturating_add(pkt.header.ts.tv_usec as i64 * 1000);
                let p = Packet {
                    frame,
                    ts_ns,
                    linktype,
                    data: pkt.data,
                };
                pipeline.packet(&p, &mut out);
            }
            Err(pcap::Error::TimeoutExpired) => continue,
            Err(pcap::Error::NoMorePackets) => break,
            Err(e) => {
                pipeline.finish(&mut out);
                return Err(pcap_err("capture failed", e));
            }
        }
    }
    pipeline.finish(&mut out);
    Ok(summary)
}
