//! One TCP connection to the broker: connect and read with timeouts, frames read with Kafka's
//! 4-byte size prefix (bounded by `limits::MAX_FRAME_SIZE`), and every byte that crossed it kept
//! in a [`Transcript`] with its time, so the session can be written as a pcap.

use crate::limits::MAX_FRAME_SIZE;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Nanoseconds since the Unix epoch, now.
pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// Bytes one side sent, and when.
#[derive(Clone, Debug)]
pub struct Chunk {
    pub ts_ns: i64,
    pub from_client: bool,
    pub bytes: Vec<u8>,
}

/// One connection of the session as it happened.
#[derive(Clone, Debug)]
pub struct ConnRecord {
    pub client: SocketAddr,
    pub server: SocketAddr,
    pub opened_ns: i64,
    pub closed_ns: Option<i64>,
    pub chunks: Vec<Chunk>,
}

/// The whole session, connection by connection (they never overlap: the probe keeps one open).
#[derive(Clone, Debug, Default)]
pub struct Transcript {
    pub conns: Vec<ConnRecord>,
}

/// Why a frame could not be read.
#[derive(Debug)]
pub enum ReadFail {
    /// Nothing (or only part of a frame) within the timeout.
    Timeout { partial: Vec<u8> },
    /// The peer closed (or reset) the connection; `partial` holds what came before.
    Closed { partial: Vec<u8>, why: String },
    /// A size prefix that no Kafka frame has.
    BadSize { prefix: [u8; 4] },
}

pub struct Conn {
    stream: TcpStream,
    /// Index of this connection's record in the transcript.
    record: usize,
}

impl Conn {
    pub fn connect(addr: SocketAddr, timeout: Duration, t: &mut Transcript) -> io::Result<Conn> {
        let stream = TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_nodelay(true)?;
        stream.set_write_timeout(Some(timeout))?;
        let client = stream.local_addr()?;
        t.conns.push(ConnRecord {
            client,
            server: addr,
            opened_ns: now_ns(),
            closed_ns: None,
            chunks: Vec::new(),
        });
        Ok(Conn {
            stream,
            record: t.conns.len() - 1,
        })
    }

    pub fn send(&mut self, frame: &[u8], t: &mut Transcript) -> io::Result<()> {
        self.stream.write_all(frame)?;
        if let Some(r) = t.conns.get_mut(self.record) {
            r.chunks.push(Chunk {
                ts_ns: now_ns(),
                from_client: true,
                bytes: frame.to_vec(),
            });
        }
        Ok(())
    }

    /// Reads one size-prefixed frame (prefix included) within `timeout`.
    pub fn read_frame(
        &mut self,
        timeout: Duration,
        t: &mut Transcript,
    ) -> Result<Vec<u8>, ReadFail> {
        let deadline = Instant::now() + timeout;
        let mut buf = Vec::new();
        let r = self.read_until(&mut buf, 4, deadline);
        let result = r.and_then(|()| {
            let prefix = [buf[0], buf[1], buf[2], buf[3]];
            let size = i32::from_be_bytes(prefix);
            if size < 0 || size as u32 > MAX_FRAME_SIZE {
                return Err(ReadFail::BadSize { prefix });
            }
            self.read_until(&mut buf, 4 + size as usize, deadline)
        });
        if !buf.is_empty() {
            if let Some(r) = t.conns.get_mut(self.record) {
                r.chunks.push(Chunk {
                    ts_ns: now_ns(),
                    from_client: false,
                    bytes: buf.clone(),
                });
            }
        }
        result.map(|()| buf)
    }

    fn read_until(
        &mut self,
        buf: &mut Vec<u8>,
        want: usize,
        deadline: Instant,
    ) -> Result<(), ReadFail> {
        let mut tmp = [0u8; 64 * 1024];
        while buf.len() < want {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ReadFail::Timeout {
                    partial: buf.clone(),
                });
            }
            // Never read past the frame: the next frame's bytes stay in the socket.
            let n = (want - buf.len()).min(tmp.len());
            let _ = self.stream.set_read_timeout(Some(left));
            match self.stream.read(&mut tmp[..n]) {
                Ok(0) => {
                    return Err(ReadFail::Closed {
                        partial: buf.clone(),
                        why: "end of stream".into(),
                    })
                }
                Ok(k) => buf.extend_from_slice(&tmp[..k]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(ReadFail::Timeout {
                        partial: buf.clone(),
                    })
                }
                Err(e) => {
                    return Err(ReadFail::Closed {
                        partial: buf.clone(),
                        why: e.to_string(),
                    })
                }
            }
        }
        Ok(())
    }

    pub fn close(self, t: &mut Transcript) {
        let _ = self.stream.shutdown(Shutdown::Both);
        if let Some(r) = t.conns.get_mut(self.record) {
            r.closed_ns = Some(now_ns());
        }
    }
}
