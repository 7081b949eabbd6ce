//! Sessions: requests and responses on one connection — a response nobody asked for, a
//! correlation id reused while in flight, a request at a version (or of an API) the broker did
//! not advertise, the same API and version again after UNSUPPORTED_VERSION. Owns the per
//! connection in-flight list, which also carries what other families need of a request when its
//! response comes (see `votes::Pending`).

use super::fields::{body, header, int, text};
use super::{frame_of, votes, CapHit, Finding, Findings, Followed, RuleId, Table};
use crate::limits::{
    MAX_CHECK_BROKERS, MAX_CHECK_CONNECTIONS, MAX_CHECK_INFLIGHT_PER_CONN,
    MAX_CHECK_UNSUPPORTED_PER_CONN,
};
use crate::pdu::{Conn, Pdu};
use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};

const PRODUCE: i16 = 0;
const API_VERSIONS: i16 = 18;
const UNSUPPORTED_VERSION: i64 = 35;

/// Who sent a request: the client's IP address and its `ClientId` (a client's connections to
/// several brokers come from one address and one id).
pub(super) type ClientKey = u64;

/// A request still waiting for its response.
#[derive(Clone, Copy, Debug)]
pub(super) struct Inflight {
    pub corr: i32,
    /// The request's version (an ApiVersions answer to an unknown version decodes as v0).
    pub version: i16,
    pub frame: u64,
    pub pending: votes::Pending,
}

#[derive(Default)]
struct ConnState {
    /// Requests seen on it (0 again after lost bytes): until then a response without request is
    /// only a capture that started mid-conversation.
    requests: u64,
    inflight: VecDeque<Inflight>,
    /// (api key, version, frame of the UNSUPPORTED_VERSION answer).
    unsupported: Vec<(i16, i16, u64)>,
    client: ClientKey,
}

pub(super) struct Sessions {
    conns: Table<Conn, ConnState>,
    /// API key → (min, max) per broker address.
    brokers: Table<Option<SocketAddr>, HashMap<i16, (i16, i16)>>,
    inflight_capped: CapHit,
}

fn client_key(ip: Option<IpAddr>, client_id: Option<&str>) -> ClientKey {
    let mut b = [0u8; 17];
    let n = match ip {
        Some(IpAddr::V4(a)) => {
            b[..4].copy_from_slice(&a.octets());
            4
        }
        Some(IpAddr::V6(a)) => {
            b[..16].copy_from_slice(&a.octets());
            16
        }
        None => 0,
    };
    b[16] = n as u8;
    super::fields::fnv(&b) ^ super::fields::fnv(client_id.unwrap_or("").as_bytes()).rotate_left(1)
}

impl Sessions {
    pub(super) fn new() -> Self {
        Sessions {
            conns: Table::new(
                MAX_CHECK_CONNECTIONS,
                "connections",
                "MAX_CHECK_CONNECTIONS",
            ),
            brokers: Table::new(
                MAX_CHECK_BROKERS,
                "brokers with ApiVersions",
                "MAX_CHECK_BROKERS",
            ),
            inflight_capped: CapHit::default(),
        }
    }

    /// Checks a request against its connection; returns who sent it.
    pub(super) fn request(&mut self, pdu: &Pdu, out: &mut Findings) -> ClientKey {
        let (Some(key), Some(version), corr) = (pdu.api_key, pdu.api_version, pdu.correlation_id)
        else {
            return 0;
        };
        let frame = frame_of(&pdu.origin);
        let client_id = header(&pdu.tree).and_then(|h| text(&pdu.tree, h, "ClientId"));
        let conn = pdu.origin.conn;
        let client = client_key(conn.map(|c| c.client.ip()), client_id);
        let server = conn.map(|c| c.server);
        if key != API_VERSIONS {
            if let Some(adv) = self.brokers.get(&server) {
                match adv.get(&key) {
                    Some(&(min, max)) if version < min || version > max => out.push(
                        Finding::new(
                            RuleId::VersionNotAdvertised,
                            vec![frame],
                            format!("{} request at version {version}, but the broker advertised versions {min}..={max} of API {key} in its ApiVersions response", pdu.api_name.unwrap_or("API")),
                        )
                        .expect(format!("version {min}..={max}"), format!("version {version}"))
                        .field("header.RequestApiVersion", 6)
                        .at(pdu),
                    ),
                    Some(_) => {}
                    None => out.push(
                        Finding::new(
                            RuleId::ApiNotAdvertised,
                            vec![frame],
                            format!("request for API {key}, which the broker's ApiVersions response did not list"),
                        )
                        .expect("an API the broker listed", format!("API {key}"))
                        .field("header.RequestApiKey", 4)
                        .at(pdu),
                    ),
                }
            }
        }
        let Some(c) = conn else {
            return client;
        };
        let Some(st) = self.conns.entry(c) else {
            return client;
        };
        st.requests += 1;
        st.client = client;
        if let Some(corr) = corr {
            if let Some(prev) = st.inflight.iter().find(|i| i.corr == corr) {
                out.push(
                    Finding::new(
                        RuleId::CorrelationIdReused,
                        vec![prev.frame, frame],
                        format!("correlation id {corr} reused while the request of frame {} with that id is unanswered", prev.frame),
                    )
                    .expect("a correlation id not in flight", format!("{corr}, in flight since frame {}", prev.frame))
                    .at(pdu),
                );
            }
        }
        if let Some(i) = st
            .unsupported
            .iter()
            .position(|&(k, v, _)| k == key && v == version)
        {
            let (_, _, at) = st.unsupported.swap_remove(i);
            out.push(
                Finding::new(
                    RuleId::RequestAfterUnsupported,
                    vec![at, frame],
                    format!("{} v{version} sent again on this connection after the broker answered UNSUPPORTED_VERSION to it in frame {at}", pdu.api_name.unwrap_or("request")),
                )
                .expect("another version, or none", format!("v{version} again"))
                .at(pdu),
            );
        }
        client
    }

    /// Remembers a request as in flight, with what the other families need at its response.
    pub(super) fn remember(&mut self, pdu: &Pdu, pending: votes::Pending) {
        let (Some(c), Some(corr)) = (pdu.origin.conn, pdu.correlation_id) else {
            return;
        };
        // acks=0 produce requests are never answered.
        if pdu.api_key == Some(PRODUCE)
            && body(&pdu.tree).and_then(|b| int(&pdu.tree, b, "Acks")) == Some(0)
        {
            return;
        }
        let frame = frame_of(&pdu.origin);
        let Some(st) = self.conns.get_mut(&c) else {
            return;
        };
        if st.inflight.len() >= MAX_CHECK_INFLIGHT_PER_CONN {
            st.inflight.pop_front();
            self.inflight_capped.hit(frame);
        }
        st.inflight.push_back(Inflight {
            corr,
            version: pdu.api_version.unwrap_or(-1),
            frame,
            pending,
        });
    }

    /// Pairs a response with its request; returns the request (when remembered) and the client.
    pub(super) fn response(
        &mut self,
        pdu: &Pdu,
        out: &mut Findings,
    ) -> (Option<Inflight>, ClientKey) {
        let frame = frame_of(&pdu.origin);
        let is_token = pdu.tree.nodes.len() > 1 && pdu.tree.child(0, "token").is_some();
        let Some(c) = pdu.origin.conn else {
            return (None, 0);
        };
        let server = Some(c.server);
        let Some(st) = self.conns.get_mut(&c) else {
            return (None, 0);
        };
        if pdu.request_frame.is_none() && !is_token && st.requests > 0 {
            out.push(
                Finding::new(
                    RuleId::ResponseWithoutRequest,
                    vec![frame],
                    format!(
                        "response with correlation id {} matches no request on this connection, which had {} request(s) before",
                        pdu.correlation_id.map_or("?".into(), |c| c.to_string()),
                        st.requests
                    ),
                )
                .expect("a request with this correlation id before it", "none")
                .at(pdu),
            );
        }
        let mut req = None;
        if let Some(corr) = pdu.correlation_id {
            if let Some(i) = st.inflight.iter().position(|r| r.corr == corr) {
                // Answers come in order: requests before it that got none never will.
                req = st.inflight.drain(..=i).next_back();
            }
        }
        let client = st.client;
        let (Some(key), Some(version), Some(b)) = (pdu.api_key, pdu.api_version, body(&pdu.tree))
        else {
            return (req, client);
        };
        let error = int(&pdu.tree, b, "ErrorCode");
        let version = req.map_or(version, |r| r.version);
        if error == Some(UNSUPPORTED_VERSION)
            && st.unsupported.len() < MAX_CHECK_UNSUPPORTED_PER_CONN
            && !st
                .unsupported
                .iter()
                .any(|&(k, v, _)| k == key && v == version)
        {
            st.unsupported.push((key, version, frame));
        }
        if key == API_VERSIONS && error == Some(0) {
            let mut adv = HashMap::new();
            for e in super::fields::elems(&pdu.tree, b, "ApiKeys") {
                let t = &pdu.tree;
                if let (Some(k), Some(min), Some(max)) = (
                    int(t, e, "ApiKey"),
                    int(t, e, "MinVersion"),
                    int(t, e, "MaxVersion"),
                ) {
                    adv.insert(k as i16, (min as i16, max as i16));
                }
            }
            if let Some(slot) = self.brokers.entry(server) {
                *slot = adv;
            }
        }
        (req, client)
    }

    /// Bytes of the connection were lost: forget what is in flight and start over.
    pub(super) fn lost_bytes(&mut self, c: Conn) {
        if let Some(st) = self.conns.get_mut(&c) {
            st.requests = 0;
            st.inflight.clear();
        }
    }

    /// Connections with a request seen, and brokers whose ApiVersions answer was seen.
    pub(super) fn followed(&self) -> [Followed; 2] {
        [
            self.conns.followed("sessions"),
            self.brokers.followed("sessions"),
        ]
    }

    pub(super) fn capped(&mut self, frame: u64, out: &mut Vec<Finding>) {
        out.extend(self.conns.capped(frame));
        out.extend(self.brokers.capped(frame));
        out.extend(self.inflight_capped.capped(
            MAX_CHECK_INFLIGHT_PER_CONN,
            "unanswered requests on a connection",
            "MAX_CHECK_INFLIGHT_PER_CONN",
            "the oldest are forgotten, their reuse and answers not checked",
        ));
    }
}
