//! Raw binary frames: one frame (with or without its size prefix), or size-prefixed frames one
//! after another (a dump of one direction of a connection).
//!
//! An input no larger than the largest frame is read whole and split only when the prefixes
//! tile it exactly; otherwise it is one frame and the decoder decides whether it starts with a
//! prefix. A larger input can only be a sequence of prefixed frames, and is streamed as one.

use crate::limits::MAX_FRAME_SIZE;
use std::io::{self, Read};

/// One frame and where it started in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawFrame {
    pub data: Vec<u8>,
    pub offset: u64,
    /// `Some(true)` when the frame was split off by its prefix; `None` for a whole input.
    pub has_size_prefix: Option<bool>,
}

pub struct RawReader<R: Read> {
    r: R,
    no_prefix: bool,
    /// Frames found in a small input, served in order.
    queue: std::collections::VecDeque<RawFrame>,
    started: bool,
    streaming: bool,
    /// Streaming: bytes read and not yet served start at `buf[pos]`, file offset `offset`.
    buf: Vec<u8>,
    pos: usize,
    offset: u64,
    /// Inputs up to this size are read whole (one frame at most is this big).
    whole_limit: u64,
}

impl<R: Read> RawReader<R> {
    /// `no_prefix`: the input is one frame without a size prefix (`--no-size-prefix`).
    pub fn new(r: R, no_prefix: bool) -> RawReader<R> {
        RawReader {
            r,
            no_prefix,
            queue: Default::default(),
            started: false,
            streaming: false,
            buf: Vec::new(),
            pos: 0,
            offset: 0,
            whole_limit: MAX_FRAME_SIZE as u64 + 4,
        }
    }

    pub fn next_frame(&mut self) -> io::Result<Option<RawFrame>> {
        if !self.started {
            self.started = true;
            let limit = self.whole_limit;
            let mut head = Vec::new();
            (&mut self.r).take(limit + 1).read_to_end(&mut head)?;
            if head.len() as u64 <= limit {
                self.small(head);
            } else if self.no_prefix {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("a frame without a size prefix cannot exceed {limit} bytes"),
                ));
            } else {
                // Too big for one frame: it must be prefixed frames. Serve what was read, then
                // stream the rest.
                self.streaming = true;
                self.buf = head;
            }
        }
        if self.streaming {
            return self.stream_one();
        }
        Ok(self.queue.pop_front())
    }

    fn small(&mut self, data: Vec<u8>) {
        if data.is_empty() {
            return;
        }
        if !self.no_prefix {
            if let Some(ranges) = super::split_prefixed(&data) {
                if ranges.len() > 1 {
                    for r in ranges {
                        let offset = r.start as u64;
                        self.queue.push_back(RawFrame {
                            data: data[r].to_vec(),
                            offset,
                            has_size_prefix: Some(true),
                        });
                    }
                    return;
                }
            }
        }
        let has_size_prefix = if self.no_prefix { Some(false) } else { None };
        self.queue.push_back(RawFrame {
            data,
            offset: 0,
            has_size_prefix,
        });
    }

    /// Makes at least `n` unread bytes available, unless the input ends first.
    fn fill(&mut self, n: usize) -> io::Result<usize> {
        let avail = self.buf.len() - self.pos;
        if avail < n {
            if self.pos > 0 {
                // Keep the buffer to about one frame: drop what was served.
                self.buf.drain(..self.pos);
                self.pos = 0;
            }
            let need = (n - avail) as u64;
            (&mut self.r).take(need).read_to_end(&mut self.buf)?;
        }
        Ok(self.buf.len() - self.pos)
    }

    /// The next prefixed frame of a stream; a short last one is served as it is, for the
    /// decoder to diagnose.
    fn stream_one(&mut self) -> io::Result<Option<RawFrame>> {
        let avail = self.fill(4)?;
        if avail == 0 {
            return Ok(None);
        }
        let mut take = avail;
        if avail >= 4 {
            let p = &self.buf[self.pos..self.pos + 4];
            let size = i32::from_be_bytes([p[0], p[1], p[2], p[3]]);
            let want = 4 + size.clamp(0, MAX_FRAME_SIZE as i32) as usize;
            take = want.min(self.fill(want)?);
        }
        let data = self.buf[self.pos..self.pos + take].to_vec();
        self.pos += take;
        let offset = self.offset;
        self.offset += take as u64;
        Ok(Some(RawFrame {
            data,
            offset,
            has_size_prefix: Some(true),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(data: &[u8], no_prefix: bool) -> Vec<RawFrame> {
        let mut r = RawReader::new(data, no_prefix);
        let mut v = Vec::new();
        while let Some(f) = r.next_frame().unwrap() {
            v.push(f);
        }
        v
    }

    #[test]
    fn one_frame_with_or_without_prefix() {
        let f = all(&[0, 0, 0, 4, 0, 0, 0, 7], false);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].has_size_prefix, None);
        let f = all(&[0, 0x12, 0, 3, 0, 0, 0, 1], false);
        assert_eq!((f.len(), f[0].data.len()), (1, 8));
        let f = all(&[0, 0, 0, 4, 0, 0, 0, 7, 0, 0, 0, 4, 1, 1, 1, 1], true);
        assert_eq!((f.len(), f[0].has_size_prefix), (1, Some(false)));
        assert!(all(&[], false).is_empty());
    }

    #[test]
    fn concatenated_frames_are_split_with_offsets() {
        let f = all(&[0, 0, 0, 4, 0, 0, 0, 7, 0, 0, 0, 5, 1, 1, 1, 1, 1], false);
        assert_eq!(
            f.iter()
                .map(|f| (f.offset, f.data.len()))
                .collect::<Vec<_>>(),
            vec![(0, 8), (8, 9)]
        );
    }

    #[test]
    fn a_long_stream_is_served_frame_by_frame() {
        let mut data = Vec::new();
        for i in 0..1000u32 {
            data.extend_from_slice(&(i % 7).to_be_bytes());
            data.extend(std::iter::repeat_n(i as u8, (i % 7) as usize));
        }
        let mut r = RawReader::new(&data[..], false);
        r.whole_limit = 16;
        let mut at = 0u64;
        for i in 0..1000u32 {
            let f = r.next_frame().unwrap().unwrap();
            assert_eq!((f.offset, f.data.len() as u32), (at, 4 + i % 7));
            assert!(f.data[4..].iter().all(|&b| b == i as u8));
            at += f.data.len() as u64;
        }
        assert!(r.next_frame().unwrap().is_none());
        assert!(
            r.buf.capacity() < 1024,
            "the buffer holds about one frame, not the stream"
        );
    }

    #[test]
    fn streaming_serves_a_short_last_frame() {
        let data = [0u8, 0, 0, 4, 1, 2, 3, 4, 0, 0, 0, 9, 5];
        let mut r = RawReader::new(&data[..], false);
        r.started = true;
        r.streaming = true;
        let a = r.next_frame().unwrap().unwrap();
        let b = r.next_frame().unwrap().unwrap();
        assert_eq!((a.data.len(), b.data.len(), b.offset), (8, 5, 8));
        assert!(r.next_frame().unwrap().is_none());
    }
}
