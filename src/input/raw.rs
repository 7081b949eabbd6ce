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
    offset: u64,
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
            offset: 0,
        }
    }

    pub fn next_frame(&mut self) -> io::Result<Option<RawFrame>> {
        if !self.started {
            self.started = true;
            let limit = MAX_FRAME_SIZE as u64 + 4;
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
                self.stream_from(head)?;
            }
        } else if self.streaming && self.queue.is_empty() {
            self.stream_from(Vec::new())?;
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

    /// Takes whole prefixed frames from `pending` + the reader until one frame is queued or
    /// the input ends (a short last frame is passed on for the decoder to diagnose).
    fn stream_from(&mut self, mut pending: Vec<u8>) -> io::Result<()> {
        loop {
            if pending.len() >= 4 {
                let size = i32::from_be_bytes([pending[0], pending[1], pending[2], pending[3]]);
                let want = 4 + (size.clamp(0, MAX_FRAME_SIZE as i32) as usize);
                if pending.len() < want {
                    let need = (want - pending.len()) as u64;
                    (&mut self.r).take(need).read_to_end(&mut pending)?;
                }
                let take = want.min(pending.len());
                let rest = pending.split_off(take);
                let frame = std::mem::replace(&mut pending, rest);
                let offset = self.offset;
                self.offset += frame.len() as u64;
                self.queue.push_back(RawFrame {
                    data: frame,
                    offset,
                    has_size_prefix: Some(true),
                });
                if !pending.is_empty() {
                    continue;
                }
                return Ok(());
            }
            let before = pending.len();
            (&mut self.r)
                .take((4 - before) as u64)
                .read_to_end(&mut pending)?;
            if pending.len() == before {
                if !pending.is_empty() {
                    let offset = self.offset;
                    self.offset += pending.len() as u64;
                    self.queue.push_back(RawFrame {
                        data: pending,
                        offset,
                        has_size_prefix: Some(true),
                    });
                }
                return Ok(());
            }
        }
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
    fn streaming_serves_a_short_last_frame() {
        let mut r = RawReader {
            r: &[0u8, 0, 0, 4, 1, 2, 3, 4, 0, 0, 0, 9, 5][..],
            no_prefix: false,
            queue: Default::default(),
            started: true,
            streaming: true,
            offset: 0,
        };
        let a = r.next_frame().unwrap().unwrap();
        let b = r.next_frame().unwrap().unwrap();
        assert_eq!((a.data.len(), b.data.len(), b.offset), (8, 5, 8));
        assert!(r.next_frame().unwrap().is_none());
    }
}
