//! Which side of a TCP connection is the Kafka client, decided from the bytes when neither a SYN
//! nor a known broker port says so.
//!
//! Port numbers are no evidence: clients connect from any port (a NAT, a container, a test
//! harness) and brokers listen on any port. What is evidence is the protocol itself: a request
//! starts with a size, a known (api key, version), a correlation id and a printable client id,
//! and its response, in the other direction, starts with a size and the same correlation id.
//! A response can also parse as a request (a small correlation id reads as api key 0 and a small
//! version), so one request-shaped segment alone is weak evidence; a request answered by its
//! correlation id is strong.
//!
//! Until the direction is decided the connection's segments are kept, in arrival order, so that
//! nothing before the decision is lost: the caller replays them through reassembly once it is
//! made. What is kept is bounded per connection (`MAX_DETECTION_BYTES`) and for all
//! connections together (`MAX_DETECTION_BYTES_TOTAL`); when a bound is hit the decision is made
//! from the evidence so far.

use super::conv::looks_like_request;
use super::framing::Plausible;
use super::CaptureOptions;
use crate::limits::MAX_FRAME_SIZE;
use crate::wire::cursor::be_i32_at as be32;

/// Request-shaped segments remembered per connection (their correlation ids are what a
/// response is matched against).
const MAX_CANDIDATES: usize = 32;

/// Segments without any request-shaped start after which a connection is judged not to be Kafka.
pub(crate) const GIVE_UP_SEGMENTS: u32 = 8;

/// A segment kept while the direction is undecided.
pub(crate) struct Pending {
    /// Index of the flow that carried it (0: a→b).
    pub fi: usize,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub wire_len: u32,
    pub data: Vec<u8>,
    pub frame: u64,
    pub ts_ns: i64,
}

/// What a kept segment counts against the detection bounds: its bytes plus the entry that
/// holds them, so a flood of 1-byte segments is bounded too.
pub(crate) fn pending_cost(payload: usize) -> usize {
    payload + 64
}

#[derive(Clone, Copy, Debug)]
struct Candidate {
    fi: usize,
    correlation_id: i32,
}

/// The verdict after one more segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Not enough evidence yet.
    Wait,
    /// The flow with this index carries the client's requests.
    ClientIs(usize),
    /// Not Kafka.
    NotKafka,
}

/// Evidence gathered on one connection.
#[derive(Default)]
pub(crate) struct Detector {
    candidates: Vec<Candidate>,
    segments: u32,
    pub pending: Vec<Pending>,
    /// `pending_cost` of everything in `pending`.
    pub bytes: usize,
}

impl Detector {
    /// Judges the payload of a segment of flow `fi` that starts at a segment boundary.
    pub(crate) fn offer(&mut self, fi: usize, payload: &[u8], opts: &CaptureOptions) -> Verdict {
        self.segments = self.segments.saturating_add(1);
        // A response to a request-shaped segment of the other flow settles it. Checked first:
        // a response may itself parse as a request.
        if let (Some(size), Some(corr)) = (be32(payload, 0), be32(payload, 4)) {
            let sane = size >= 4 && size as u32 <= MAX_FRAME_SIZE;
            if sane
                && self
                    .candidates
                    .iter()
                    .any(|c| c.fi != fi && c.correlation_id == corr)
            {
                return Verdict::ClientIs(1 - fi);
            }
        }
        if looks_like_request(payload, opts, true) == Plausible::Yes {
            if self.candidates.len() < MAX_CANDIDATES {
                if let Some(corr) = be32(payload, 8) {
                    self.candidates.push(Candidate {
                        fi,
                        correlation_id: corr,
                    });
                }
            }
        } else if self.candidates.is_empty() && self.segments >= GIVE_UP_SEGMENTS {
            return Verdict::NotKafka;
        }
        Verdict::Wait
    }

    /// The decision when no more evidence will come (the connection ended or a bound was hit):
    /// the flow that carried request-shaped segments, the earliest when both did.
    pub(crate) fn fallback(&self) -> Verdict {
        match self.candidates.first() {
            Some(c) => Verdict::ClientIs(c.fi),
            None => Verdict::NotKafka,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(key: i16, version: i16, corr: i32, client: &str) -> Vec<u8> {
        let mut f = vec![0; 4];
        f.extend_from_slice(&key.to_be_bytes());
        f.extend_from_slice(&version.to_be_bytes());
        f.extend_from_slice(&corr.to_be_bytes());
        f.extend_from_slice(&(client.len() as i16).to_be_bytes());
        f.extend_from_slice(client.as_bytes());
        f.extend_from_slice(&[0; 6]);
        let n = (f.len() - 4) as i32;
        f[..4].copy_from_slice(&n.to_be_bytes());
        f
    }

    /// A JoinGroup v7 response with correlation id 3 reads as a Produce v3 request with client
    /// id "": without its request it would turn the connection around.
    fn response_that_parses_as_a_request(corr: i32) -> Vec<u8> {
        let mut f = vec![0, 0, 0, 20];
        f.extend_from_slice(&corr.to_be_bytes());
        f.extend_from_slice(&[0; 16]);
        f
    }

    #[test]
    fn a_request_answered_by_its_correlation_id_decides_whichever_flow_speaks_first() {
        let o = CaptureOptions::default();
        let resp = response_that_parses_as_a_request(3);
        assert_eq!(looks_like_request(&resp, &o, true), Plausible::Yes);
        for client in [0, 1] {
            let mut d = Detector::default();
            assert_eq!(d.offer(client, &request(11, 7, 3, "c"), &o), Verdict::Wait);
            assert_eq!(d.offer(1 - client, &resp, &o), Verdict::ClientIs(client));
        }
    }

    #[test]
    fn a_stray_response_first_does_not_turn_the_connection_around() {
        let o = CaptureOptions::default();
        let mut d = Detector::default();
        // The capture starts with the broker (flow 1) answering correlation id 2.
        assert_eq!(
            d.offer(1, &response_that_parses_as_a_request(2), &o),
            Verdict::Wait
        );
        assert_eq!(d.offer(0, &request(14, 5, 3, "c"), &o), Verdict::Wait);
        assert_eq!(
            d.offer(1, &response_that_parses_as_a_request(3), &o),
            Verdict::ClientIs(0)
        );
    }

    #[test]
    fn without_an_answer_the_first_request_shape_decides_and_noise_gives_up() {
        let o = CaptureOptions::default();
        let mut d = Detector::default();
        assert_eq!(d.offer(1, &request(0, 9, 1, "p"), &o), Verdict::Wait);
        assert_eq!(d.fallback(), Verdict::ClientIs(1));
        let mut d = Detector::default();
        for i in 1..GIVE_UP_SEGMENTS {
            assert_eq!(d.offer(0, b"GET / HTTP/1.1\r\n", &o), Verdict::Wait, "{i}");
        }
        assert_eq!(d.offer(1, b"HTTP/1.1 200 OK\r\n", &o), Verdict::NotKafka);
        assert_eq!(d.fallback(), Verdict::NotKafka);
    }

    #[test]
    fn candidates_are_bounded() {
        let o = CaptureOptions::default();
        let mut d = Detector::default();
        for i in 0..1000 {
            d.offer(0, &request(3, 1, i, "c"), &o);
        }
        assert_eq!(d.candidates.len(), MAX_CANDIDATES);
    }
}
