//! The fields of a PDU by name: what `--filter` tests and `-e` prints, and what the tables and
//! the report read (the per-PDU "facts"). [`Field::parse`] names one; [`Field::values`] gives
//! its values for a PDU, borrowed from it, without allocating.
//!
//! Where the values come from:
//! - PDU fields (`api`, `frame`, `time`, …): the PDU's origin and header; one value or none.
//! - Entity fields (`topic`, `group`, `producer_id`, `transactional_id`): every node of the
//!   body whose schema `entityType` says so, wherever it is (record batches excluded: their
//!   contents are not the message's own topics and groups). `topic` also gives the name the
//!   session resolved for a `TopicId` (`Pdu::topic_name`), or the id itself (base64url) when
//!   unresolved and its struct names no topic otherwise.
//! - `partition`: integers named `PartitionIndex`, `Partition`, `PartitionId` or `Index`
//!   (Produce), and elements of integer arrays named `Partitions` or `PartitionIndexes`, inside a struct that has a topic
//!   member (`topicName` entity or `TopicId`) or below one: the schema marks no partition entity,
//!   and this is where every API keeps a topic's partitions.
//! - `error`: every non-zero integer in a field whose name ends in `ErrorCode` (`ErrorCode`,
//!   `PartitionErrorCode`, …), anywhere in the body outside record batches.
//! - Body paths (`body.Topics[].Name`, `header.ClientId`): members by name, `[]` any element,
//!   `[N]` the N-th from 0; a name applied to an array applies to each element.
//!
//! Each value comes with its *element*: the innermost array element holding it (the root, 0,
//! for PDU fields and values outside arrays). The fields printer lines values up by it.

use crate::limits::MAX_DEPTH;
use crate::pdu::{Direction, Pdu};
use crate::wire::tree::{Entity, Kind, NodeId, Tree, Value as V};
use std::fmt;
use std::net::SocketAddr;

/// A value of a field, borrowed from its PDU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    Int(i64),
    Float(f64),
    Bool(bool),
    Null,
    /// A schema string, as its bytes (UTF-8 unless the decoder said otherwise).
    Str(&'a [u8]),
    /// Text kinspect knows (a client id from the session, a resolved topic name).
    Text(&'a str),
    /// A schema `bytes` field or record data (printed as base64).
    Bytes(&'a [u8]),
    /// A uuid (printed as Kafka does: 22 characters of base64url).
    Uuid([u8; 16]),
    Direction(Direction),
    /// An API: its key, and its name when known.
    Api(i16, Option<&'static str>),
    /// An error code (printed by name when Kafka defines it).
    Error(i16),
    Addr(SocketAddr),
    /// A label the decoder gave (a codec name).
    Label(&'static str),
    /// A struct (a path to one: present).
    Struct,
    /// An array of so many elements.
    Array(usize),
}

impl Value<'_> {
    /// The value as text bytes, when it is text (strings, names of APIs, errors, directions).
    pub fn text(&self) -> Option<&[u8]> {
        match self {
            Value::Str(s) => Some(s),
            Value::Text(s) => Some(s.as_bytes()),
            Value::Label(s) => Some(s.as_bytes()),
            Value::Direction(d) => Some(d.as_str().as_bytes()),
            Value::Api(_, Some(n)) => Some(n.as_bytes()),
            Value::Error(c) => crate::protocol::errors::error_name(*c).map(str::as_bytes),
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }
}

impl fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use base64::Engine as _;
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Null | Value::Struct => Ok(()),
            Value::Str(s) => f.write_str(&String::from_utf8_lossy(s)),
            Value::Text(s) => f.write_str(s),
            Value::Bytes(b) => f.write_str(&base64::engine::general_purpose::STANDARD.encode(b)),
            Value::Uuid(u) => {
                f.write_str(&base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(u))
            }
            Value::Direction(d) => f.write_str(d.as_str()),
            Value::Api(_, Some(n)) => f.write_str(n),
            Value::Api(k, None) => write!(f, "{k}"),
            Value::Error(c) => match crate::protocol::errors::error_name(*c) {
                Some(n) => f.write_str(n),
                None => write!(f, "{c}"),
            },
            Value::Addr(a) => write!(f, "{a}"),
            Value::Label(l) => f.write_str(l),
            Value::Array(n) => write!(f, "{n}"),
        }
    }
}

/// What kind of values a field has: decides which literals and operators make sense.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// Integers or seconds: compared as numbers.
    Number,
    /// Text.
    Text,
    /// An API: compared by key; names resolve to keys.
    Api,
    /// An error code: compared by code; names resolve to codes.
    Error,
    Direction,
    /// An address (`ip:port`), compared as text.
    Addr,
    /// A body path: whatever the schema says.
    Any,
}

/// A field a filter tests and `-e` prints, by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Field {
    /// The API name (`Produce`); compared by key.
    Api,
    ApiKey,
    /// The API version.
    Version,
    Direction,
    ClientId,
    CorrelationId,
    /// The capture frame holding the PDU's first byte.
    Frame,
    /// The capture frame holding its last byte (tshark's `frame.number` of the PDU).
    LastFrame,
    /// On a response: its request's frame.
    RequestFrame,
    /// Seconds since the first packet of the run.
    Time,
    /// The TCP connection, numbered as tshark's `tcp.stream`.
    Stream,
    /// Sender and receiver addresses.
    Src,
    Dst,
    /// On a response: microseconds since its request.
    LatencyUs,
    /// The frame's bytes, with its size prefix ([`Pdu::size`]).
    Size,
    /// Non-zero error codes, by name.
    Error,
    /// Non-zero error codes, by number.
    ErrorCode,
    Topic,
    Partition,
    Group,
    ProducerId,
    TransactionalId,
    /// The codes of the PDU's diagnostics, every severity, in the order reported (tshark's
    /// `_ws.expert`).
    Diagnostic,
    /// A path into the decoded tree (`body.Topics[].Name`).
    Path(Path),
}

/// Every named field: name, help.
pub const FIELDS: &[(&str, &str)] = &[
    ("api", "API name (compared by key: api == Produce)"),
    ("api_key", "API key"),
    ("version", "API version"),
    ("direction", "request or response"),
    ("client_id", "client id (a response's from its request)"),
    ("correlation_id", "correlation id"),
    ("frame", "capture frame of the PDU's first byte"),
    (
        "last_frame",
        "capture frame of its last byte (tshark's frame.number)",
    ),
    ("request_frame", "a response's request frame"),
    ("time", "seconds since the first packet"),
    ("stream", "TCP connection number (tshark's tcp.stream)"),
    ("src", "sender address"),
    ("dst", "receiver address"),
    ("latency_us", "a response's microseconds since its request"),
    ("size", "frame bytes, size prefix included (kafka.len + 4 when whole)"),
    ("error", "non-zero error codes, by name (or number)"),
    ("error_code", "non-zero error codes, by number"),
    ("topic", "topic names (entity topicName; TopicIds resolved)"),
    (
        "partition",
        "partition indexes inside a topic's struct (PartitionIndex, Partition, PartitionId, Index, Partitions[])",
    ),
    ("group", "group ids (entity groupId)"),
    ("producer_id", "producer ids (entity producerId)"),
    ("transactional_id", "transactional ids (entity transactionalId)"),
    (
        "diagnostic",
        "codes of the PDU's diagnostics, every severity (truncated, crc-mismatch, …)",
    ),
];

/// One step of a body path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A member by name (tagged members too); applied to an array, to each element.
    Name(String),
    /// `[]`: any element.
    Any,
    /// `[N]`: the N-th element, from 0.
    Index(usize),
}

/// A path into the decoded tree, from the root: `body.…` or `header.…`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    pub steps: Vec<Step>,
}

impl Path {
    /// Parses `body.Topics[].Partitions[0].ErrorCode`.
    pub fn parse(s: &str) -> Result<Path, String> {
        let mut steps = Vec::new();
        for part in s.split('.') {
            let (name, mut rest) = match part.find('[') {
                Some(i) => (&part[..i], &part[i..]),
                None => (part, ""),
            };
            if name.is_empty() {
                return Err(format!("`{s}`: a path step has no name"));
            }
            if !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
                return Err(format!("`{s}`: `{name}` is not a field name"));
            }
            steps.push(Step::Name(name.to_string()));
            while !rest.is_empty() {
                let Some(r) = rest.strip_prefix('[') else {
                    return Err(format!("`{s}`: expected `[` at `{rest}`"));
                };
                let Some((idx, after)) = r.split_once(']') else {
                    return Err(format!("`{s}`: `[` without `]`"));
                };
                if idx.is_empty() {
                    steps.push(Step::Any);
                } else {
                    let i = idx
                        .parse::<usize>()
                        .map_err(|_| format!("`{s}`: `[{idx}]` is not an index (`[]` or `[0]`)"))?;
                    steps.push(Step::Index(i));
                }
                rest = after;
            }
        }
        Ok(Path { steps })
    }

    fn last_name(&self) -> Option<&str> {
        self.steps.iter().rev().find_map(|s| match s {
            Step::Name(n) => Some(n.as_str()),
            _ => None,
        })
    }

    /// Whether the path goes into record batches (they must be decoded for it).
    pub fn reaches_records(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s, Step::Name(n) if n == "Records"))
    }
}

impl Field {
    /// The field called `name`: one of [`FIELDS`], or a path starting with `body` or `header`.
    pub fn parse(name: &str) -> Result<Field, String> {
        Ok(match name {
            "api" => Field::Api,
            "api_key" => Field::ApiKey,
            "version" | "api_version" => Field::Version,
            "direction" => Field::Direction,
            "client_id" => Field::ClientId,
            "correlation_id" => Field::CorrelationId,
            "frame" => Field::Frame,
            "last_frame" => Field::LastFrame,
            "request_frame" => Field::RequestFrame,
            "time" => Field::Time,
            "stream" => Field::Stream,
            "src" => Field::Src,
            "dst" => Field::Dst,
            "latency_us" => Field::LatencyUs,
            "size" => Field::Size,
            "error" => Field::Error,
            "error_code" => Field::ErrorCode,
            "topic" => Field::Topic,
            "partition" => Field::Partition,
            "group" => Field::Group,
            "producer_id" => Field::ProducerId,
            "transactional_id" => Field::TransactionalId,
            "diagnostic" | "diagnostics" => Field::Diagnostic,
            _ if name == "body"
                || name == "header"
                || name.starts_with("body.")
                || name.starts_with("body[")
                || name.starts_with("header.") =>
            {
                Field::Path(Path::parse(name)?)
            }
            _ => {
                let names: Vec<&str> = FIELDS.iter().map(|f| f.0).collect();
                let close = names
                    .iter()
                    .find(|n| n.contains(name) || name.contains(**n) || close_to(n, name));
                return Err(match close {
                    Some(c) => format!("unknown field `{name}` (did you mean `{c}`?)"),
                    None => format!(
                        "unknown field `{name}`: fields are {}, or a path such as body.Topics[].Name",
                        names.join(", ")
                    ),
                });
            }
        })
    }

    /// What its values are.
    pub fn kind(&self) -> FieldKind {
        match self {
            Field::Api => FieldKind::Api,
            Field::Error | Field::ErrorCode => FieldKind::Error,
            Field::Direction => FieldKind::Direction,
            Field::ClientId
            | Field::Topic
            | Field::Group
            | Field::TransactionalId
            | Field::Diagnostic => FieldKind::Text,
            Field::Src | Field::Dst => FieldKind::Addr,
            Field::Path(p) if p.last_name().is_some_and(|n| n.ends_with("ErrorCode")) => {
                FieldKind::Error
            }
            Field::Path(_) => FieldKind::Any,
            _ => FieldKind::Number,
        }
    }

    /// Calls `f` with every value of the field in `pdu`, in tree order.
    pub fn values<'p>(&self, pdu: &'p Pdu, mut f: impl FnMut(Value<'p>)) {
        self.visit(pdu, &mut |v, _| {
            f(v);
            true
        });
    }

    /// Calls `f` with every value and its element (the innermost array element holding it;
    /// 0, the root, for PDU fields and values outside arrays).
    pub fn values_at<'p>(&self, pdu: &'p Pdu, mut f: impl FnMut(Value<'p>, NodeId)) {
        self.visit(pdu, &mut |v, e| {
            f(v, e);
            true
        });
    }

    /// Whether some value satisfies `pred` (stops at the first).
    pub fn any<'p>(&self, pdu: &'p Pdu, mut pred: impl FnMut(&Value<'p>) -> bool) -> bool {
        !self.visit(pdu, &mut |v, _| !pred(&v))
    }

    /// The first value, if any.
    pub fn first<'p>(&self, pdu: &'p Pdu) -> Option<Value<'p>> {
        let mut out = None;
        self.visit(pdu, &mut |v, _| {
            out = Some(v);
            false
        });
        out
    }

    /// Hands values to `f` until it returns false; false when it did.
    fn visit<'p>(&self, pdu: &'p Pdu, f: &mut dyn FnMut(Value<'p>, NodeId) -> bool) -> bool {
        let o = &pdu.origin;
        let one = |v: Option<Value<'p>>, f: &mut dyn FnMut(Value<'p>, NodeId) -> bool| match v {
            Some(v) => f(v, 0),
            None => true,
        };
        let int = |v: Option<i64>| v.map(Value::Int);
        match self {
            Field::Api => one(pdu.api_key.map(|k| Value::Api(k, pdu.api_name)), f),
            Field::ApiKey => one(int(pdu.api_key.map(i64::from)), f),
            Field::Version => one(int(pdu.api_version.map(i64::from)), f),
            Field::Direction => one(pdu.direction.map(Value::Direction), f),
            Field::ClientId => one(client_id(pdu), f),
            Field::CorrelationId => one(int(pdu.correlation_id.map(i64::from)), f),
            Field::Frame => one(int(o.frame.map(|v| v as i64)), f),
            Field::LastFrame => one(int(o.last_frame.or(o.frame).map(|v| v as i64)), f),
            Field::RequestFrame => one(int(pdu.request_frame.map(|v| v as i64)), f),
            Field::Time => {
                let t = o
                    .ts_ns
                    .zip(o.first_ts_ns)
                    .map(|(t, z)| Value::Float(t.saturating_sub(z) as f64 / 1e9));
                one(t, f)
            }
            Field::Stream => one(int(o.conn.map(|c| i64::from(c.stream))), f),
            Field::Src | Field::Dst => {
                let a = o.conn.zip(pdu.direction).map(|(c, d)| {
                    let from_client = (d == Direction::Request) == (*self == Field::Src);
                    Value::Addr(if from_client { c.client } else { c.server })
                });
                one(a, f)
            }
            Field::LatencyUs => one(pdu.latency_ns.map(|n| Value::Float(n as f64 / 1e3)), f),
            Field::Size => one(Some(Value::Int(pdu.size() as i64)), f),
            Field::Diagnostic => pdu.tree.diags.iter().all(|d| f(Value::Label(d.code), 0)),
            Field::Path(p) => {
                if pdu.tree.nodes.is_empty() {
                    return true;
                }
                path(pdu, &p.steps, 0, 0, 0, f)
            }
            _ => {
                let t = &pdu.tree;
                let Some(b) = t.nodes.first().and_then(|_| t.child(0, "body")) else {
                    return true;
                };
                let in_topic = *self == Field::Partition && has_topic_member(t, b);
                walk(pdu, self, b, 0, in_topic, 0, f)
            }
        }
    }
}

/// Edit distance at most 2 between short names (for "did you mean").
fn close_to(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len().abs_diff(b.len()) > 2 || a.len() > 32 || b.len() > 32 {
        return false;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()] <= 2
}

/// A request's client id from its header, else the one the capture gave the PDU (a response's,
/// from its request).
fn client_id(pdu: &Pdu) -> Option<Value<'_>> {
    match &pdu.origin.client_id {
        Some(c) => Some(Value::Text(c)),
        None => pdu.header_client_id().map(Value::Str),
    }
}
fn has_topic_member(t: &Tree, id: NodeId) -> bool {
    t.children(id)
        .any(|c| matches!(t.node(c).entity, Entity::TopicName | Entity::TopicId))
}

fn has_topic_name(t: &Tree, id: NodeId) -> bool {
    t.children(id)
        .any(|c| t.node(c).entity == Entity::TopicName)
}

const PARTITION_NAMES: [&str; 4] = ["PartitionIndex", "Partition", "PartitionId", "Index"];
const PARTITION_ARRAYS: [&str; 2] = ["Partitions", "PartitionIndexes"];

/// The entity fields, error codes and partitions under `id`.
fn walk<'p>(
    pdu: &'p Pdu,
    want: &Field,
    id: NodeId,
    elem: NodeId,
    in_topic: bool,
    depth: usize,
    f: &mut dyn FnMut(Value<'p>, NodeId) -> bool,
) -> bool {
    if depth > 2 * MAX_DEPTH {
        return true;
    }
    let t = &pdu.tree;
    let parent = t.node(id);
    let is_array = parent.kind == Kind::Array;
    for c in t.children(id) {
        let n = t.node(c);
        let el = if is_array { c } else { elem };
        let go_on = match n.kind {
            Kind::Struct | Kind::TaggedSection => {
                let it = in_topic || (*want == Field::Partition && has_topic_member(t, c));
                walk(pdu, want, c, el, it, depth + 1, f)
            }
            // Record batches: their contents are not this message's topics, groups or errors.
            Kind::Array if n.name == "Records" => true,
            Kind::Array => walk(pdu, want, c, el, in_topic, depth + 1, f),
            Kind::Scalar => match scalar(pdu, want, id, parent.name, is_array, c, in_topic) {
                Some(v) => f(v, el),
                None => true,
            },
            _ => true,
        };
        if !go_on {
            return false;
        }
    }
    true
}

/// The value of scalar `c` (a member or element of `parent`) for the field `want`, if it is one.
fn scalar<'p>(
    pdu: &'p Pdu,
    want: &Field,
    parent: NodeId,
    parent_name: &str,
    in_array: bool,
    c: NodeId,
    in_topic: bool,
) -> Option<Value<'p>> {
    let t = &pdu.tree;
    let n = t.node(c);
    match (want, n.entity, n.value) {
        (Field::Topic, Entity::TopicName, V::Str(s)) => Some(Value::Str(t.bytes(n.buf, s))),
        (Field::Topic, Entity::TopicId, V::Uuid(u)) => match pdu.topic_name(c) {
            Some(name) => Some(Value::Text(name)),
            None if u != [0; 16] && !has_topic_name(t, parent) => Some(Value::Uuid(u)),
            None => None,
        },
        (Field::Group, Entity::GroupId, V::Str(s))
        | (Field::TransactionalId, Entity::TransactionalId, V::Str(s)) => {
            Some(Value::Str(t.bytes(n.buf, s)))
        }
        (Field::ProducerId, Entity::ProducerId, V::Int(v)) => Some(Value::Int(v)),
        (Field::Partition, _, V::Int(v))
            if in_topic
                && if in_array {
                    PARTITION_ARRAYS.contains(&parent_name)
                } else {
                    PARTITION_NAMES.contains(&n.name)
                } =>
        {
            Some(Value::Int(v))
        }
        (Field::Error | Field::ErrorCode, _, V::Int(e))
            if e != 0 && n.name.ends_with("ErrorCode") =>
        {
            let e = i16::try_from(e).ok()?;
            Some(if *want == Field::Error {
                Value::Error(e)
            } else {
                Value::Int(e.into())
            })
        }
        _ => None,
    }
}

/// A member by name, known tagged fields included.
fn member(t: &Tree, id: NodeId, name: &str) -> Option<NodeId> {
    t.child(id, name).or_else(|| {
        t.children(id)
            .filter(|&c| t.node(c).kind == Kind::TaggedSection)
            .find_map(|s| t.child(s, name))
    })
}

fn node_value(t: &Tree, id: NodeId) -> Option<Value<'_>> {
    let n = t.node(id);
    Some(match n.kind {
        Kind::Struct | Kind::TaggedSection => Value::Struct,
        Kind::Array => Value::Array(t.children(id).count()),
        Kind::Error => return None,
        Kind::Scalar | Kind::UnknownTag => match n.value {
            V::Null => Value::Null,
            V::Bool(b) => Value::Bool(b),
            V::Int(v) => Value::Int(v),
            V::Float(v) => Value::Float(v),
            V::Uuid(u) => Value::Uuid(u),
            V::Str(s) => Value::Str(t.bytes(n.buf, s)),
            V::Bytes(s) | V::Data(s) => Value::Bytes(t.bytes(n.buf, s)),
            V::Label(l) => Value::Label(l),
            V::None | V::Diag(_) => Value::Struct,
        },
    })
}

/// The values at the end of `steps` from `id`.
fn path<'p>(
    pdu: &'p Pdu,
    steps: &[Step],
    id: NodeId,
    elem: NodeId,
    depth: usize,
    f: &mut dyn FnMut(Value<'p>, NodeId) -> bool,
) -> bool {
    let t = &pdu.tree;
    let Some((step, rest)) = steps.split_first() else {
        return match node_value(t, id) {
            Some(v) => f(v, elem),
            None => true,
        };
    };
    if depth > 2 * MAX_DEPTH {
        return true;
    }
    let is_array = t.node(id).kind == Kind::Array;
    match step {
        Step::Name(_) if is_array => {
            for c in t.children(id) {
                if !path(pdu, steps, c, c, depth + 1, f) {
                    return false;
                }
            }
            true
        }
        Step::Name(name) => match member(t, id, name) {
            Some(c) => path(pdu, rest, c, elem, depth + 1, f),
            None => true,
        },
        Step::Any if is_array => {
            for c in t.children(id) {
                if !path(pdu, rest, c, c, depth + 1, f) {
                    return false;
                }
            }
            true
        }
        Step::Index(i) if is_array => match t.children(id).nth(*i) {
            Some(c) => path(pdu, rest, c, c, depth + 1, f),
            None => true,
        },
        Step::Any | Step::Index(_) => true,
    }
}
