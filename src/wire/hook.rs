//! The hooks through which the message decoder and encoder hand off what the message-spec JSON
//! does not describe. The wire layer defines them and knows nothing of what implements them:
//!
//! - [`RecordsHook`]: the content of a `records`-typed field (record batches, codecs,
//!   internal-topic records; the records module implements it as `records::BATCHES`). Without a
//!   hook a `records` field is kept as opaque bytes, as everywhere a hook is not wanted
//!   (message bodies inside records, headers, `--records raw`).
//! - [`TopicNames`]: topic names for topic ids, learnt from earlier PDUs (the capture's
//!   session), so records under a topic known only by id are read as that topic's.
//!
//! The options a records hook receives ([`RecordsOptions`], [`AsType`]) are defined here so
//! that the decoder can carry them without depending on their implementation.

use super::encode::EncodeError;
use super::tree::{Span, Tree};
use crate::diag::FieldPath;
use crate::pdu::Direction;
use serde_json::Value as J;

/// Topic names for topic ids, learnt from earlier PDUs (the capture's session).
pub trait TopicNames {
    fn topic_name(&self, id: [u8; 16]) -> Option<&str>;
}

/// No topic ids are known (a frame decoded on its own).
pub struct NoNames;

impl TopicNames for NoNames {
    fn topic_name(&self, _: [u8; 16]) -> Option<&str> {
        None
    }
}

/// How to interpret record keys and values beyond bytes: the internal topics whose records
/// kinspect knows (`--as TYPE`, or automatic from the topic name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsType {
    /// `__consumer_offsets`: coordinator keys and values of the group coordinator.
    ConsumerOffsets,
    /// `__transaction_state`.
    TransactionState,
    /// `__share_group_state`.
    ShareGroupState,
    /// `__cluster_metadata` (and snapshots): framed metadata records.
    ClusterMetadata,
    /// Keys and values as plain data even on an internal topic.
    Raw,
}

impl AsType {
    /// The names `--as` accepts, with what each selects.
    pub const NAMES: [(&'static str, AsType); 5] = [
        ("consumer-offsets", AsType::ConsumerOffsets),
        ("transaction-state", AsType::TransactionState),
        ("share-group-state", AsType::ShareGroupState),
        ("cluster-metadata", AsType::ClusterMetadata),
        ("raw", AsType::Raw),
    ];

    /// Parses an `--as` value; also accepts the topic names themselves.
    pub fn from_name(s: &str) -> Option<AsType> {
        AsType::NAMES
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, t)| *t)
            .or_else(|| AsType::for_topic(s))
    }

    /// The interpretation a topic gets automatically.
    pub fn for_topic(topic: &str) -> Option<AsType> {
        Some(match topic {
            "__consumer_offsets" => AsType::ConsumerOffsets,
            "__transaction_state" => AsType::TransactionState,
            "__share_group_state" => AsType::ShareGroupState,
            "__cluster_metadata" => AsType::ClusterMetadata,
            _ => return None,
        })
    }
}

/// How `records` fields decode: through the decoder's [`RecordsHook`] (the default), or kept
/// as opaque bytes (`--records raw`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecordsOptions {
    /// Keep every `records` field as `Value::Bytes`.
    pub raw: bool,
    /// `--as TYPE`: how record keys and values are read, whatever the topic.
    pub as_type: Option<AsType>,
    /// Batch headers and CRCs only (see `records::RecordsContext::headers_only`).
    pub headers_only: bool,
}

/// What the message decoder knows about one `records` field beyond its bytes.
#[derive(Clone, Copy, Debug)]
pub struct RecordsField<'a> {
    /// The topic of the records: the innermost enclosing struct's `topicName` entity, or its
    /// topic id as the caller's [`TopicNames`] names it.
    pub topic: Option<&'a str>,
    /// The message's direction (a response may end with a batch cut at the broker's limit).
    pub direction: Direction,
    pub options: RecordsOptions,
    /// The field's path, for diagnostics (`body.Responses[0].Partitions[0].Records`).
    pub path: FieldPath<'a>,
}

/// Decodes and encodes the content of `records` fields.
pub trait RecordsHook: Sync {
    /// Pushes the nodes for the `span` of buffer `buf` (the field's content, after its length
    /// prefix) as elements of the `Array` node the decoder has open for the field. Must not
    /// panic; what cannot be decoded becomes diagnostics and `Error` nodes.
    fn decode(&self, tree: &mut Tree, buf: u16, span: Span, field: &RecordsField);

    /// Appends the bytes of a `records` field shown as the JSON array `items` (the form
    /// [`RecordsHook::decode`] produces, as the printers render it).
    fn encode(&self, items: &[J], out: &mut Vec<u8>, path: &str) -> Result<(), EncodeError>;
}
