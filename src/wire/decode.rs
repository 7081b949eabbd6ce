//! Decoding entry points: [`Decoder::decode_frame`] (size prefix, direction, headers as Kafka
//! chooses them, release-aware body, ApiVersions fallback) and [`decode_message_at`] (one
//! message-shaped body anywhere, for internal-topic records). The interpreter itself is in
//! [`super::walk`].
//!
//! Diagnostic codes (stable; severity in brackets):
//! - `truncated` [error]: fewer bytes than a field needs.
//! - `negative-length` [error]: a length or count below -1 (compact: a uvarint ≥ 2^31).
//! - `null-not-allowed` [error]: null (-1 / 0) where the version is not nullable; shown as null.
//! - `count-exceeds-remaining` [error]: an array (or tagged-field count) claims more elements
//!   than bytes remain, rejected before anything is reserved (Kafka's own guard).
//! - `string-too-long` [error]: a string longer than 32767 bytes (Kafka's reader refuses it).
//! - `invalid-utf8` [warning]: a string that is not UTF-8 (Kafka replaces, so do the printers).
//! - `invalid-bool` [warning]: a bool byte other than 0/1 (read as true, as Kafka does).
//! - `null-marker` [warning]: a nullable-struct marker other than the -1/1 (int8) or 0/1
//!   (uvarint, in tags) Kafka writes; read as Kafka reads it.
//! - `varint-overlong` [warning]: a non-minimal unsigned varint (accepted by Kafka).
//! - `varint-overflow` [error]: a varint with a 6th byte; [warning] when the 5th byte sets bits
//!   above 2^32 (Kafka drops them).
//! - `tag-order` / `tag-duplicate` [error]: tagged fields not strictly ascending.
//! - `tag-size-mismatch` [error]: a known tag's content does not fill exactly its declared size.
//! - `depth-limit` [error]: nesting beyond `limits::MAX_DEPTH`; `node-limit` [error]: more than
//!   `limits::MAX_NODES_PER_TREE` nodes.
//! - Frame level: `unknown-api` / `unknown-version` [error] (the body becomes an `Error` node),
//!   `unstable-version` [warning], `trailing-bytes` [error] (an `Error` node `_trailing` after the
//!   body), `truncated` [error] also when the size prefix promises more bytes than the frame has,
//!   `size-mismatch` [error] when it promises fewer, `missing-hints` [error] (a response whose
//!   request's API and version are unknown), `apiversions-fallback` [info] (an ApiVersions
//!   response that only parses as v0), `frame-too-large` [error] (more than
//!   `limits::MAX_FRAME_SIZE`: kept undecoded, truncated to that size).
//!
//! `Error` nodes (printed `{"_error": code, "_data": base64}`, and put back byte for byte by the
//! encoder) take the name of the field that failed; an array whose count is bad, or a tagged
//! section whose framing is lost, is replaced whole (count included). Three names are not
//! schema fields: `_trailing` (root: bytes after the body), `_tagged_fields` (a struct's tagged
//! section) and `_excess` (bytes a known tag declared beyond its struct's content).

use super::cursor::Cursor;
use super::hook::NoNames;
pub use super::hook::{RecordsHook, RecordsOptions, TopicNames};
use super::plan::{Plan, PlanCache};
use super::tree::{Kind, NodeId, Span, Tree, Value};
use super::walk::{Seg, Walker};
use crate::diag::{Diagnostic, FieldPath};
use crate::limits::MAX_FRAME_SIZE;
use crate::pdu::{Direction, Hints, Pdu};
use crate::protocol::headers;
use crate::protocol::Protocol;
use crate::schema::model::MessageSpec;
use std::collections::HashMap;
use std::sync::Arc;

/// Decodes whole frames with one protocol, caching compiled plans; reuse one per input so the
/// tree arena and the caches stay warm (no allocation per field once warmed up).
pub struct Decoder {
    proto: &'static Protocol,
    plans: PlanCache,
    /// Everything the registry says about (direction, api key, version), looked up once.
    routes: Routes,
    /// What a walk over a frame needs (kept apart from `routes`, so that a route stays lent
    /// while the body is walked).
    walk: Walking,
}

/// The walker's reusable path and how `records` fields decode.
struct Walking {
    path: Vec<Seg>,
    records: RecordsOptions,
    /// What decodes `records` fields; `None`: they stay bytes.
    hook: Option<&'static dyn RecordsHook>,
}

/// Routes looked up once: by index for the keys and versions Kafka uses ([`route_slot`]), else
/// hashed. Lent out by reference, not by `Arc`: the atomic count taken and dropped per frame was
/// 5% of decoding a realistic mix (`perf annotate` on the decode benchmark's `--calls` mode).
#[derive(Default)]
struct Routes {
    /// By [`route_slot`]: 0 for none yet, else 1 + the route's index in `listed` (the table of
    /// 16-bit indexes and the routes side by side stay in cache better than boxes would).
    slots: Vec<u16>,
    listed: Vec<Route>,
    hashed: HashMap<(bool, i16, i16), Box<Route>>,
}

/// How frames of one (direction, api key, version) decode.
struct Route {
    header_version: i16,
    header: Option<Arc<Plan>>,
    body: Option<(Arc<Plan>, &'static str)>,
    api_name: Option<&'static str>,
    unstable: bool,
}

/// Hostile input can name any (key, version): keep the route cache bounded.
const MAX_ROUTES: usize = 4096;

/// Api keys and versions below these are looked up by index (a hashed lookup and three `Arc`
/// clones per frame were 7% of decoding a realistic mix, by instruction count).
const TABLE_KEYS: i16 = 128;
const TABLE_VERSIONS: i16 = 32;
const TABLE_SLOTS: usize = 2 * TABLE_KEYS as usize * TABLE_VERSIONS as usize;
const _: () = assert!(TABLE_SLOTS < u16::MAX as usize);

/// Where (direction, key, version) sits in the route table, when it does.
fn route_slot(request: bool, k: i16, v: i16) -> Option<usize> {
    ((0..TABLE_KEYS).contains(&k) && (0..TABLE_VERSIONS).contains(&v)).then(|| {
        ((request as usize * TABLE_KEYS as usize + k as usize) * TABLE_VERSIONS as usize)
            + v as usize
    })
}

impl Routes {
    /// The route of (direction, key, version), worked out on first use.
    fn get(
        &mut self,
        proto: &'static Protocol,
        plans: &mut PlanCache,
        dir: Direction,
        key: Option<i16>,
        ver: Option<i16>,
    ) -> &Route {
        let (k, v) = (key.unwrap_or(-1), ver.unwrap_or(-1));
        let request = dir == Direction::Request;
        let slot = match (key, ver) {
            (Some(k), Some(v)) => route_slot(request, k, v),
            _ => None,
        };
        if let Some(i) = slot {
            if self.slots.is_empty() {
                self.slots = vec![0; TABLE_SLOTS];
            }
            if let Some(e) = self.slots.get_mut(i) {
                if *e == 0 {
                    // At most TABLE_SLOTS routes are listed, one per slot: the index fits.
                    self.listed.push(Route::new(proto, plans, dir, key, ver));
                    *e = self.listed.len() as u16;
                }
                let at = usize::from(*e) - 1;
                if let Some(r) = self.listed.get(at) {
                    return r;
                }
            }
        }
        if self.hashed.len() >= MAX_ROUTES && !self.hashed.contains_key(&(request, k, v)) {
            self.hashed.clear();
        }
        self.hashed
            .entry((request, k, v))
            .or_insert_with(|| Box::new(Route::new(proto, plans, dir, key, ver)))
    }
}

impl Route {
    fn new(
        proto: &'static Protocol,
        plans: &mut PlanCache,
        dir: Direction,
        key: Option<i16>,
        ver: Option<i16>,
    ) -> Route {
        let (k, v) = (key.unwrap_or(-1), ver.unwrap_or(-1));
        let known = key.is_some() && ver.is_some();
        let hv = known
            .then(|| headers::header_version(proto, dir, k, v))
            .flatten();
        // Unknown API: still show what the header says (v1 request / v0 response).
        let hv = hv.unwrap_or(if dir == Direction::Request { 1 } else { 0 });
        let header = proto.header(dir, hv).map(|h| plans.get(h.spec, hv));
        let body = known
            .then(|| proto.message(k, v, dir))
            .flatten()
            .map(|r| (plans.get(r.spec, v), r.release));
        Route {
            header_version: hv,
            header,
            body,
            api_name: key.and_then(|k| proto.api_name(k)),
            unstable: known && proto.is_unstable(k, v),
        }
    }
}

impl Decoder {
    /// A decoder that keeps `records` fields as bytes: the wire layer knows nothing of record
    /// batches. `records::decoder` gives one that decodes them (named so, rather than `new`,
    /// because a decoder without batches is rarely what a caller wants).
    pub fn records_as_bytes(proto: &'static Protocol) -> Decoder {
        Decoder {
            proto,
            plans: PlanCache::default(),
            routes: Routes::default(),
            walk: Walking {
                path: Vec::new(),
                records: RecordsOptions::default(),
                hook: None,
            },
        }
    }

    /// A decoder that hands `records` fields to `hook` (`records::BATCHES`: batches, codecs,
    /// internal-topic records).
    pub fn with_records(proto: &'static Protocol, hook: &'static dyn RecordsHook) -> Decoder {
        let mut d = Decoder::records_as_bytes(proto);
        d.walk.hook = Some(hook);
        d
    }

    /// How `records` fields decode from now on (default: through the hook, if any).
    pub fn set_records(&mut self, opts: RecordsOptions) {
        self.walk.records = opts;
    }

    /// How `records` fields decode.
    pub fn records(&self) -> RecordsOptions {
        self.walk.records
    }

    pub fn protocol(&self) -> &'static Protocol {
        self.proto
    }

    /// Decodes one frame (with or without its 4-byte size prefix) into `out.tree` and fills
    /// `out`'s direction, api key/name/version, correlation id and release; `out.origin` is the
    /// caller's. Direction: from the hints, else a request when the frame starts with a request
    /// header of a known API and version and decodes cleanly, else a response when the hints
    /// name the request's API and version.
    pub fn decode_frame(&mut self, frame: &[u8], hints: &Hints, out: &mut Pdu) {
        self.decode_frame_with(frame, hints, out, &NoNames)
    }

    /// [`Decoder::decode_frame`], with `records` fields of topics known only by id read as
    /// `names` names them (so internal-topic records decode in Fetch v13+ too).
    pub fn decode_frame_with(
        &mut self,
        frame: &[u8],
        hints: &Hints,
        out: &mut Pdu,
        names: &dyn TopicNames,
    ) {
        // Names belong to the tree being replaced; the caller resolves the new one's.
        out.topic_names.clear();
        // Spans are u32 and a Kafka frame is at most MAX_FRAME_SIZE: keep memory bounded.
        let cap = MAX_FRAME_SIZE as usize + 4;
        if frame.len() > cap {
            out.tree.reset(frame.get(..cap).unwrap_or(frame));
            out.direction = hints.direction;
            (
                out.api_key,
                out.api_name,
                out.api_version,
                out.correlation_id,
                out.release,
            ) = (None, None, None, None, None);
            let root = out.tree.open("", Kind::Struct, 0, 0);
            let msg = format!(
                "a {}-byte frame is larger than any Kafka frame ({MAX_FRAME_SIZE} bytes); only the first {cap} bytes are kept, undecoded",
                frame.len()
            );
            let d = Diagnostic::error("frame-too-large", "", 0, msg);
            out.tree.error_node("body", 0, 0, cap as u32, d);
            out.tree.close(root, cap as u32);
            return;
        }
        let prefix = hints.has_size_prefix.unwrap_or_else(|| {
            frame.len() >= 4
                && frame.get(..4).is_some_and(|b| {
                    u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize == frame.len() - 4
                })
        });
        out.request_frame = hints.request_frame;
        out.latency_ns = hints.latency_ns;
        let has_hints = hints.api_key.is_some() && hints.api_version.is_some();
        let dir = match hints.direction {
            Some(d) => d,
            // API hints describe a response's request: try the response first, and a request
            // only if that fails and the bytes start like a known request.
            None if has_hints => {
                self.attempt(frame, hints, out, Direction::Response, prefix, None, names);
                if !out.tree.has_errors() || !self.looks_like_request(frame, prefix) {
                    return self.fallback(frame, hints, out, prefix, names);
                }
                self.attempt(frame, hints, out, Direction::Request, prefix, None, names);
                if !out.tree.has_errors() {
                    return;
                }
                Direction::Response
            }
            None => Direction::Request,
        };
        self.attempt(frame, hints, out, dir, prefix, None, names);
        if dir == Direction::Response {
            self.fallback(frame, hints, out, prefix, names);
        }
    }

    fn looks_like_request(&self, frame: &[u8], prefix: bool) -> bool {
        let mut c = Cursor::new(frame, if prefix { 4 } else { 0 }, frame.len());
        match (c.i16(), c.i16()) {
            (Ok(k), Ok(v)) => self.proto.message(k, v, Direction::Request).is_some(),
            _ => false,
        }
    }

    /// A broker answers an ApiVersions version it does not know with a v0 body: when the
    /// response at the request's version has errors, retry as v0 and keep that if it is clean.
    fn fallback(
        &mut self,
        frame: &[u8],
        hints: &Hints,
        out: &mut Pdu,
        prefix: bool,
        names: &dyn TopicNames,
    ) {
        let dir = Direction::Response;
        let asked = match hints.api_version {
            Some(v)
                if v != 0
                    && hints.api_key.is_some()
                    && hints.api_key == self.proto.known().api_versions =>
            {
                v
            }
            _ => return,
        };
        if !out.tree.has_errors() {
            return;
        }
        self.attempt(frame, hints, out, dir, prefix, Some(0), names);
        if out.tree.has_errors() {
            self.attempt(frame, hints, out, dir, prefix, None, names);
        } else {
            let msg = format!(
                "ApiVersions response to a v{asked} request did not parse as v{asked}; parsed as \
                 v0 (how a broker answers a version it does not support)"
            );
            let at = if prefix { 4 } else { 0 };
            out.tree
                .diags
                .push(Diagnostic::info("apiversions-fallback", "body", at, msg));
        }
    }

    /// One complete decoding of the frame in one direction (the tree is rebuilt from scratch).
    #[allow(clippy::too_many_arguments)]
    fn attempt(
        &mut self,
        frame: &[u8],
        hints: &Hints,
        out: &mut Pdu,
        dir: Direction,
        prefix: bool,
        version: Option<i16>,
        names: &dyn TopicNames,
    ) {
        out.tree.reset(frame);
        out.direction = Some(dir);
        out.api_key = None;
        out.api_name = None;
        out.api_version = None;
        out.correlation_id = None;
        out.release = None;
        let end = frame.len();
        let root = out.tree.open("", Kind::Struct, 0, 0);
        let mut p = 0;
        if prefix {
            p = 4.min(end);
            out.tree.node_mut(root).hdr = p as u16;
            match frame.get(..4) {
                Some(b) => {
                    let size = i32::from_be_bytes([b[0], b[1], b[2], b[3]]) as i64;
                    let have = end as i64 - 4;
                    if size > have {
                        out.tree.diags.push(Diagnostic::error("truncated", "", 0, format!("frame truncated: the size prefix says {size} bytes, {have} present")));
                    } else if size != have {
                        out.tree.diags.push(Diagnostic::error(
                            "size-mismatch",
                            "",
                            0,
                            format!("the size prefix says {size} bytes but the frame has {have}"),
                        ));
                    }
                }
                None => out.tree.diags.push(Diagnostic::error(
                    "truncated",
                    "",
                    0,
                    format!("expected a 4-byte size prefix, only {end} bytes"),
                )),
            }
        }
        if hints.sasl_token {
            let span = Span {
                start: p as u32,
                len: (end - p) as u32,
            };
            out.tree
                .leaf("token", Value::Bytes(span), 0, p as u32, span.len);
            out.tree.close(root, end as u32);
            return;
        }
        let (key, ver) = match dir {
            Direction::Request => {
                let mut c = Cursor::new(frame, p, end);
                (c.i16().ok(), c.i16().ok())
            }
            Direction::Response => (hints.api_key, version.or(hints.api_version)),
        };
        let route = self.routes.get(self.proto, &mut self.plans, dir, key, ver);
        let hv = route.header_version;
        let Some(hplan) = route.header.as_ref() else {
            let d = Diagnostic::error(
                "unknown-version",
                "header",
                p as u64,
                format!("no {} header v{hv} in this protocol", dir.as_str()),
            );
            out.tree
                .error_node("header", 0, p as u32, (end - p) as u32, d);
            out.tree.close(root, end as u32);
            return;
        };
        let hid = out.tree.nodes.len() as NodeId;
        p = Walker::new(
            &mut out.tree,
            frame,
            0,
            FieldPath::Text("header"),
            &mut self.walk.path,
        )
        .message(hplan, "header", p, end);
        out.correlation_id =
            int_child(&out.tree, hid, "CorrelationId").and_then(|v| i32::try_from(v).ok());
        if dir == Direction::Request {
            out.api_key =
                int_child(&out.tree, hid, "RequestApiKey").and_then(|v| i16::try_from(v).ok());
            out.api_version =
                int_child(&out.tree, hid, "RequestApiVersion").and_then(|v| i16::try_from(v).ok());
        } else {
            out.api_key = key;
            out.api_version = ver;
        }
        // A request's header says its API; it is the peeked one unless the header was cut.
        let route = if (out.api_key, out.api_version) == (key, ver) {
            route
        } else {
            self.routes.get(
                self.proto,
                &mut self.plans,
                dir,
                out.api_key,
                out.api_version,
            )
        };
        out.api_name = route.api_name;
        if p < end || !out.tree.has_errors() {
            p = self.walk.body(frame, out, dir, route, p, end, names);
        }
        if p < end {
            let d = Diagnostic::error(
                "trailing-bytes",
                "",
                p as u64,
                format!("{} bytes after the end of the message", end - p),
            );
            out.tree
                .error_node("_trailing", 0, p as u32, (end - p) as u32, d);
        }
        out.tree.close(root, end as u32);
    }
}

impl Walking {
    /// Decodes the body of a frame whose header is decoded, as `route` says; returns where it ended.
    #[allow(clippy::too_many_arguments)]
    fn body(
        &mut self,
        frame: &[u8],
        out: &mut Pdu,
        dir: Direction,
        route: &Route,
        p: usize,
        end: usize,
        names: &dyn TopicNames,
    ) -> usize {
        let (Some(k), Some(v)) = (out.api_key, out.api_version) else {
            let d = Diagnostic::error(
                "missing-hints",
                "body",
                p as u64,
                "a response alone needs its request's API key and version (--api, --api-version)",
            );
            out.tree
                .error_node("body", 0, p as u32, (end - p) as u32, d);
            return end;
        };
        let Some((plan, release)) = &route.body else {
            let (code, msg) = match route.api_name {
                None => (
                    "unknown-api",
                    format!("API key {k} is not defined by any built-in release"),
                ),
                Some(name) => (
                    "unknown-version",
                    format!(
                        "{name} has no {} version {v} in any built-in release",
                        dir.as_str()
                    ),
                ),
            };
            out.tree.error_node(
                "body",
                0,
                p as u32,
                (end - p) as u32,
                Diagnostic::error(code, "body", p as u64, msg),
            );
            return end;
        };
        out.release = Some(release);
        if route.unstable {
            let name = out.api_name.unwrap_or("?");
            out.tree.diags.push(Diagnostic::warning(
                "unstable-version",
                "body",
                p as u64,
                format!("{name} v{v} is an unstable (unreleased) version in {release}"),
            ));
        }
        let w = Walker::new(
            &mut out.tree,
            frame,
            0,
            FieldPath::Text("body"),
            &mut self.path,
        );
        let w = match self.hook {
            Some(hook) => w.with_records(hook, self.records, dir),
            None => w,
        };
        w.with_topic_names(names).message(plan, "body", p, end)
    }
}

fn int_child(tree: &Tree, id: NodeId, name: &str) -> Option<i64> {
    match tree.child(id, name).map(|c| tree.node(c).value) {
        Some(Value::Int(v)) => Some(v),
        _ => None,
    }
}

/// Decodes one message-shaped body (a KRaft metadata record, a coordinator key or value, a
/// control record value) at `version` over `[start, end)` of buffer `buf`, as a `Struct` node
/// called `name`, with diagnostics under `path`. Returns the end offset (where decoding stopped;
/// bytes left before `end` are the caller's to report). A version outside the spec's
/// `validVersions` becomes an `Error` node with `unknown-version`. Uses the process-wide plan
/// cache, so it is cheap to call per record.
#[allow(clippy::too_many_arguments)]
pub fn decode_message_at<'p>(
    tree: &mut Tree,
    spec: &'static MessageSpec,
    version: i16,
    buf: u16,
    start: u32,
    end: u32,
    name: &'static str,
    path: impl Into<FieldPath<'p>>,
) -> u32 {
    let path = path.into();
    // The walker reads the buffer while it pushes nodes: lend it out for the duration.
    let data = tree
        .bufs
        .get_mut(buf as usize)
        .map(std::mem::take)
        .unwrap_or_default();
    let end = (end as usize).min(data.len());
    let start = (start as usize).min(end);
    let r = if !spec.valid_versions.contains(version) {
        let d = Diagnostic::error(
            "unknown-version",
            path,
            start as u64,
            format!(
                "{} has no version {version} (valid: {})",
                spec.name, spec.valid_versions
            ),
        )
        .in_buf(buf);
        tree.error_node(name, buf, start as u32, (end - start) as u32, d);
        end
    } else {
        let plan = super::plan::shared(spec, version);
        let mut segs = Vec::new();
        let mut w = Walker::new(tree, &data, buf, path, &mut segs);
        w.message(&plan, name, start, end)
    };
    if let Some(b) = tree.bufs.get_mut(buf as usize) {
        *b = data;
    }
    r as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::builtin;

    /// A request frame with header v1 (no size prefix): key, version, correlation id 7, null
    /// client id, then `body`.
    fn request(key: i16, version: i16, body: &[u8]) -> Vec<u8> {
        let mut f = Vec::new();
        f.extend_from_slice(&key.to_be_bytes());
        f.extend_from_slice(&version.to_be_bytes());
        f.extend_from_slice(&7i32.to_be_bytes());
        f.extend_from_slice(&(-1i16).to_be_bytes());
        f.extend_from_slice(body);
        f
    }

    fn decode(d: &mut Decoder, frame: &[u8]) -> Pdu {
        let hints = Hints {
            direction: Some(Direction::Request),
            has_size_prefix: Some(false),
            ..Hints::default()
        };
        let mut pdu = Pdu::default();
        d.decode_frame(frame, &hints, &mut pdu);
        pdu
    }

    /// The route cache is bounded whatever keys and versions the input names, and a decoder
    /// that has seen every slot of its table and more than `MAX_ROUTES` hashed routes decodes a
    /// known frame exactly as a fresh one does.
    #[test]
    fn routes_stay_bounded_and_right_after_hostile_keys() {
        // ListOffsets v1: ReplicaId -1, one topic "t" with partition 0 at timestamp -1.
        let known = request(
            2,
            1,
            &[
                0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 1, 0, 0, 0, 0, 0xff, 0xff,
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            ],
        );
        let fresh = decode(&mut Decoder::records_as_bytes(builtin()), &known);
        assert_eq!(fresh.api_name, Some("ListOffsets"));
        assert!(
            !fresh.tree.has_errors(),
            "{:?}",
            fresh.tree.diags.iter().collect::<Vec<_>>()
        );

        let mut d = Decoder::records_as_bytes(builtin());
        assert_eq!(decode(&mut d, &known).tree.nodes, fresh.tree.nodes);
        for k in 0..TABLE_KEYS {
            for v in 0..TABLE_VERSIONS {
                let p = decode(&mut d, &request(k, v, &[]));
                assert_eq!((p.api_key, p.api_version), (Some(k), Some(v)));
            }
        }
        assert_eq!(
            d.routes.listed.len(),
            TABLE_SLOTS / 2,
            "one route per request slot"
        );
        for i in 0..(MAX_ROUTES as i16 + 100) {
            let p = decode(&mut d, &request(1000 + i, -5, &[]));
            assert_eq!(p.api_key, Some(1000 + i));
            assert!(p.tree.diags.iter().any(|x| x.code == "unknown-api"));
            assert!(d.routes.hashed.len() <= MAX_ROUTES);
        }
        let again = decode(&mut d, &known);
        assert_eq!(again.tree.nodes, fresh.tree.nodes);
        assert_eq!(again.api_name, Some("ListOffsets"));
        assert_eq!(again.correlation_id, Some(7));
    }
}
