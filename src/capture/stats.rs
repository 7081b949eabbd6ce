//! Statistics of a decoded capture, in bounded memory: PDUs and bytes per API and version,
//! error codes by name, latency percentiles per API (exact while an API has at most
//! [`MAX_EXACT_LATENCIES`] latencies, from log-linear buckets 1/128 wide past that),
//! clients by client id, bytes per direction, diagnostics and notes by code, and what the
//! captures held besides Kafka (connections not recognised, with their bytes).

use super::CaptureSummary;
use crate::diag::{Diagnostic, Severity};
use crate::limits::{MAX_EXACT_LATENCIES, MAX_STATS_APIS};
use crate::pdu::{Direction, Origin, Pdu};
use crate::protocol::errors::error_name;
use crate::wire::tree::{Kind, Value};
use std::collections::BTreeMap;

/// Distinct client ids counted by name; the rest are counted together.
const MAX_CLIENT_IDS: usize = 10_000;
/// Linear sub-buckets per power of two in the latency histogram (2^7: a bucket's midpoint is
/// within 1/256 of every value in it).
const SUB_BITS: u32 = 7;

/// A latency histogram: exact count, min, max and sum; percentiles from the latencies
/// themselves while there are at most [`MAX_EXACT_LATENCIES`] of them, else from log-linear
/// buckets.
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    buckets: BTreeMap<u32, u64>,
    /// Every latency recorded, while `count` is at most [`MAX_EXACT_LATENCIES`] (then
    /// `exact.len() == count`); emptied for good past it.
    exact: Vec<i64>,
    pub count: u64,
    pub min_ns: i64,
    pub max_ns: i64,
    pub sum_ns: i128,
}

fn bucket(v: u64) -> u32 {
    if v < (1 << SUB_BITS) {
        return v as u32;
    }
    let exp = 63 - v.leading_zeros();
    let mantissa = (v >> (exp - SUB_BITS)) as u32 & ((1 << SUB_BITS) - 1);
    ((exp - SUB_BITS + 1) << SUB_BITS) | mantissa
}

/// The midpoint of a bucket's value range.
fn bucket_value(b: u32) -> u64 {
    if b < (1 << SUB_BITS) {
        return b as u64;
    }
    let exp = (b >> SUB_BITS) + SUB_BITS - 1;
    let mantissa = (b & ((1 << SUB_BITS) - 1)) as u64;
    let low = (1u64 << exp) | (mantissa << (exp - SUB_BITS));
    low + (1u64 << (exp - SUB_BITS)) / 2
}

impl Histogram {
    pub fn record(&mut self, ns: i64) {
        self.add(ns, true);
    }

    /// Counts a latency in the buckets only: from then on the percentiles are not exact. For
    /// the latencies of an API the protocol does not know, whose keys are not bounded by it.
    pub fn record_bucketed(&mut self, ns: i64) {
        self.add(ns, false);
    }

    fn add(&mut self, ns: i64, keep: bool) {
        let v = ns.max(0);
        if self.count == 0 {
            self.min_ns = v;
            self.max_ns = v;
        }
        self.min_ns = self.min_ns.min(v);
        self.max_ns = self.max_ns.max(v);
        self.sum_ns += v as i128;
        let exact = self.is_exact();
        self.count += 1;
        if keep && exact && self.exact.len() < MAX_EXACT_LATENCIES {
            self.exact.push(v);
        } else {
            self.exact = Vec::new();
        }
        *self.buckets.entry(bucket(v as u64)).or_default() += 1;
    }

    /// Whether every latency counted is kept, so that percentiles are exact.
    pub fn is_exact(&self) -> bool {
        self.exact.len() as u64 == self.count
    }

    /// Adds another histogram's samples (exactly: the buckets are the same).
    pub fn merge(&mut self, o: &Histogram) {
        if o.count == 0 {
            return;
        }
        if self.count == 0 {
            self.min_ns = o.min_ns;
            self.max_ns = o.max_ns;
        }
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
        self.sum_ns += o.sum_ns;
        let exact = self.is_exact() && o.is_exact();
        self.count += o.count;
        if exact && self.exact.len() + o.exact.len() <= MAX_EXACT_LATENCIES {
            self.exact.extend_from_slice(&o.exact);
        } else {
            self.exact = Vec::new();
        }
        for (&b, &n) in &o.buckets {
            *self.buckets.entry(b).or_default() += n;
        }
    }

    /// The `q` quantile (0..=1) by nearest rank: the latency at rank ⌈q·count⌉ (at least 1)
    /// in ascending order, as DuckDB's `quantile_disc` gives it. Exact while the latencies are
    /// kept ([`Histogram::is_exact`]); past that, the midpoint of the bucket holding that rank,
    /// clamped to the exact min and max.
    pub fn quantile(&self, q: f64) -> Option<i64> {
        if self.count == 0 {
            return None;
        }
        // q in millionths, so that 0.9 of 10 is rank 9, not the 10 that 0.9's binary value
        // times 10 can round up to.
        let q = (q.clamp(0.0, 1.0) * 1e6).round() as u128;
        let rank = ((q * u128::from(self.count)).div_ceil(1_000_000) as u64).max(1);
        // The extremes are known exactly; only inner ranks need the latencies or buckets.
        if rank >= self.count {
            return Some(self.max_ns);
        }
        if rank == 1 {
            return Some(self.min_ns);
        }
        if self.is_exact() {
            let mut v = self.exact.clone();
            let (_, nth, _) = v.select_nth_unstable((rank - 1) as usize);
            return Some(*nth);
        }
        let mut seen = 0;
        for (&b, &n) in &self.buckets {
            seen += n;
            if seen >= rank {
                let v = i64::try_from(bucket_value(b)).unwrap_or(i64::MAX);
                return Some(v.clamp(self.min_ns, self.max_ns));
            }
        }
        Some(self.max_ns)
    }
}

/// Said under a latency table when some API's percentiles come from buckets
/// ([`Histogram::is_exact`] false): by `stats` and the report alike.
pub fn bucketed_note() -> String {
    format!(
        "p50, p90 and p99 of an API with more than {MAX_EXACT_LATENCIES} latencies come from buckets: within 0.4%"
    )
}

/// The row of `stats` and the report that counts the PDUs of (API, version) pairs past
/// [`MAX_STATS_APIS`].
pub fn other_apis_label() -> String {
    format!("(past {MAX_STATS_APIS} API versions)")
}

/// Counts for one (API, version).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApiCounts {
    pub requests: u64,
    pub responses: u64,
    pub request_bytes: u64,
    pub response_bytes: u64,
}

impl ApiCounts {
    fn add(&mut self, o: &ApiCounts) {
        self.requests += o.requests;
        self.responses += o.responses;
        self.request_bytes += o.request_bytes;
        self.response_bytes += o.response_bytes;
    }
}

/// Counts for one client id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientCounts {
    pub requests: u64,
    pub request_bytes: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// (api key, version) → counts, for at most [`MAX_STATS_APIS`] pairs; API names beside them.
    pub apis: BTreeMap<(i16, i16), ApiCounts>,
    /// The PDUs of pairs past [`MAX_STATS_APIS`], counted together (no latency, no errors).
    pub other_apis: ApiCounts,
    pub api_names: BTreeMap<i16, &'static str>,
    /// (api key, error code) → occurrences of that code in `*ErrorCode` fields of responses.
    pub errors: BTreeMap<(i16, i16), u64>,
    pub latency: BTreeMap<i16, Histogram>,
    /// Client id (`None` for a null id) → counts.
    pub clients: BTreeMap<Option<String>, ClientCounts>,
    pub other_clients: ClientCounts,
    pub request_bytes: u64,
    pub response_bytes: u64,
    pub requests: u64,
    pub responses: u64,
    pub sasl_tokens: u64,
    /// PDUs whose API could not be told (a response whose request was not captured).
    pub unknown: u64,
    /// (code, severity) → count, over PDU diagnostics and capture notes.
    pub diagnostics: BTreeMap<(&'static str, Severity), u64>,
    /// Packets and TCP connections read, connections recognised as Kafka, and connections that
    /// carried data but were not recognised (with their bytes), over every capture added with
    /// [`Stats::capture`]. Exact, unlike a count of `not-kafka` notes (which stop after a
    /// hundred).
    pub packets: u64,
    pub connections: u64,
    pub kafka_connections: u64,
    pub not_kafka_connections: u64,
    pub not_kafka_bytes: u64,
}

impl Stats {
    pub fn new() -> Self {
        Stats::default()
    }

    /// Adds the counts of `o`, made from PDUs that came after this one's (a second thread's
    /// batch). Every count is a sum, so the result is what counting them all here gives, except
    /// which client ids past [`MAX_CLIENT_IDS`] and which API pairs past [`MAX_STATS_APIS`] are
    /// counted by name.
    pub fn merge(&mut self, o: Stats) {
        for (k, c) in o.apis {
            let m = if self.apis.contains_key(&k) || self.apis.len() < MAX_STATS_APIS {
                self.apis.entry(k).or_default()
            } else {
                &mut self.other_apis
            };
            m.add(&c);
        }
        self.other_apis.add(&o.other_apis);
        self.api_names.extend(o.api_names);
        // Latencies and errors of the API keys counted by name here (the others' PDUs went to
        // `other_apis`).
        for (k, n) in o.errors {
            if self.counts_key(k.0) {
                *self.errors.entry(k).or_default() += n;
            }
        }
        for (k, h) in &o.latency {
            if self.counts_key(*k) {
                self.latency.entry(*k).or_default().merge(h);
            }
        }
        for (id, c) in o.clients {
            let slot = if self.clients.contains_key(&id) || self.clients.len() < MAX_CLIENT_IDS {
                self.clients.entry(id).or_default()
            } else {
                &mut self.other_clients
            };
            slot.requests += c.requests;
            slot.request_bytes += c.request_bytes;
        }
        self.other_clients.requests += o.other_clients.requests;
        self.other_clients.request_bytes += o.other_clients.request_bytes;
        self.request_bytes += o.request_bytes;
        self.response_bytes += o.response_bytes;
        self.requests += o.requests;
        self.responses += o.responses;
        self.sasl_tokens += o.sasl_tokens;
        self.unknown += o.unknown;
        for (k, n) in o.diagnostics {
            *self.diagnostics.entry(k).or_default() += n;
        }
    }

    /// Whether some version of API `key` is counted by name.
    fn counts_key(&self, key: i16) -> bool {
        self.apis
            .range((key, i16::MIN)..=(key, i16::MAX))
            .next()
            .is_some()
    }

    pub fn note(&mut self, _origin: &Origin, d: &Diagnostic) {
        *self.diagnostics.entry((d.code, d.severity)).or_default() += 1;
    }

    /// Adds the totals of one capture read.
    pub fn capture(&mut self, s: &CaptureSummary) {
        self.packets += s.packets;
        self.connections += s.connections;
        self.kafka_connections += s.kafka_connections;
        self.not_kafka_connections += s.not_kafka_connections;
        self.not_kafka_bytes += s.not_kafka_bytes;
    }

    pub fn pdu(&mut self, pdu: &Pdu) {
        let len = pdu.tree.buf(0).len() as u64;
        for d in &pdu.tree.diags {
            *self.diagnostics.entry((d.code, d.severity)).or_default() += 1;
        }
        let dir = pdu.direction;
        match dir {
            Some(Direction::Request) => {
                self.request_bytes += len;
                self.requests += 1;
            }
            Some(Direction::Response) => {
                self.response_bytes += len;
                self.responses += 1;
            }
            None => {}
        }
        let is_token = pdu.tree.nodes.len() > 1 && pdu.tree.child(0, "token").is_some();
        if is_token {
            self.sasl_tokens += 1;
            return;
        }
        let (Some(key), Some(version)) = (pdu.api_key, pdu.api_version) else {
            self.unknown += 1;
            return;
        };
        // Pairs past the limit are counted together, without latency or errors.
        let named = self.apis.contains_key(&(key, version)) || self.apis.len() < MAX_STATS_APIS;
        let c = if named {
            if let Some(name) = pdu.api_name {
                self.api_names.insert(key, name);
            }
            self.apis.entry((key, version)).or_default()
        } else {
            &mut self.other_apis
        };
        match dir {
            Some(Direction::Request) => {
                c.requests += 1;
                c.request_bytes += len;
                self.count_client(pdu, len);
            }
            Some(Direction::Response) => {
                c.responses += 1;
                c.response_bytes += len;
                if !named {
                    return;
                }
                if let Some(l) = pdu.latency_ns {
                    let h = self.latency.entry(key).or_default();
                    // An API the protocol knows: their number is bounded by it.
                    if pdu.api_name.is_some() {
                        h.record(l);
                    } else {
                        h.record_bucketed(l);
                    }
                }
                self.count_errors(pdu, key);
            }
            None => {}
        }
    }

    fn count_client(&mut self, pdu: &Pdu, len: u64) {
        // Request header v0 has no client id.
        let Some(id) = client_id(pdu) else { return };
        let slot = if self.clients.contains_key(&id) || self.clients.len() < MAX_CLIENT_IDS {
            self.clients.entry(id).or_default()
        } else {
            &mut self.other_clients
        };
        slot.requests += 1;
        slot.request_bytes += len;
    }

    fn count_errors(&mut self, pdu: &Pdu, key: i16) {
        error_codes(pdu, |code| {
            *self.errors.entry((key, code)).or_default() += 1
        });
    }

    pub fn error_label(code: i16) -> String {
        match error_name(code) {
            Some(n) => n.to_string(),
            None => format!("UNKNOWN_CODE_{code}"),
        }
    }
}

/// A request's client id from its header: `Some(None)` for a null id, `None` when the header
/// has no client id field (request header v0) or the PDU is not a request.
pub fn client_id(pdu: &Pdu) -> Option<Option<String>> {
    let t = &pdu.tree;
    let h = (!t.nodes.is_empty())
        .then(|| t.child(0, "header"))
        .flatten()?;
    let n = *t.node(t.child(h, "ClientId")?);
    Some(match n.value {
        Value::Str(s) => Some(String::from_utf8_lossy(t.bytes(n.buf, s)).into_owned()),
        _ => None,
    })
}

/// Calls `f` with every non-zero code of the `*ErrorCode` fields of a PDU's body, in tree order
/// (record batches are skipped: they hold no error codes and most of a Fetch response's nodes).
pub fn error_codes(pdu: &Pdu, mut f: impl FnMut(i16)) {
    let t = &pdu.tree;
    let Some(body) = (!t.nodes.is_empty()).then(|| t.child(0, "body")).flatten() else {
        return;
    };
    let end = t.node(body).end as usize;
    let mut i = body as usize;
    while i < end {
        let Some(n) = t.nodes.get(i) else { break };
        if n.name == "Records" {
            i = (n.end as usize).max(i + 1);
            continue;
        }
        if n.kind == Kind::Scalar && n.name.ends_with("ErrorCode") {
            if let Value::Int(code) = n.value {
                if code != 0 {
                    f(i16::try_from(code).unwrap_or(i16::MIN));
                }
            }
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_tight() {
        let mut last = 0;
        for v in (0..100_000u64).chain((1..60).map(|s| 1u64 << s)) {
            let b = bucket(v);
            assert!(b >= last || v < 100_000, "bucket order");
            last = last.max(b);
            let mid = bucket_value(b) as f64;
            assert!(
                (mid - v as f64).abs() <= (v as f64) / 256.0 + 1.0,
                "value {v} bucket mid {mid}"
            );
        }
    }

    #[test]
    fn quantiles_of_a_known_sample() {
        let mut h = Histogram::default();
        for ms in 1..=100 {
            h.record(ms * 1_000_000);
        }
        // Nearest rank, as DuckDB's quantile_disc: of 1..=100 ms, p50 is 50 and p99 99.
        assert!(h.is_exact());
        assert_eq!(h.quantile(0.5), Some(50_000_000));
        assert_eq!(h.quantile(0.9), Some(90_000_000));
        assert_eq!(h.quantile(0.99), Some(99_000_000));
        assert_eq!(h.quantile(0.29), Some(29_000_000));
        assert_eq!(h.quantile(1.0), Some(100_000_000));
        assert_eq!(h.quantile(0.0), Some(1_000_000));
        assert_eq!(Histogram::default().quantile(0.5), None);
    }

    /// 0.07 × 100 is 7 in decimal, but 7.000000000000001 in binary, whose ceiling is 8: the
    /// rank must be 7, as DuckDB's (`select quantile_disc(x, 0.07) from range(1, 101) t(x)` is
    /// 7, and 0.28 of `range(1, 26)` is 7).
    #[test]
    fn a_rank_is_not_rounded_up_by_binary_fractions() {
        let mut h = Histogram::default();
        // Recorded out of order: the rank is of the sorted latencies.
        for v in (1..=100).rev() {
            h.record(v);
        }
        assert_eq!(h.quantile(0.07), Some(7));
        let mut h = Histogram::default();
        for v in [
            7, 3, 10, 1, 9, 2, 8, 4, 6, 5, 25, 11, 24, 12, 23, 13, 22, 14, 21, 15, 20, 16, 19, 17,
            18,
        ] {
            h.record(v);
        }
        assert_eq!(h.quantile(0.28), Some(7));
        assert_eq!(h.quantile(0.5), Some(13));
    }

    /// A tight spread (49 fetches of 101.8–103.5 ms, as in tansu-confluent-group.pcap) fell in
    /// two 3% buckets: p50, p90 and p99 all showed the max. Kept latencies give the median.
    #[test]
    fn a_tight_spread_has_its_own_median() {
        let mut h = Histogram::default();
        for i in 0..49 {
            h.record(101_800_000 + i * 35_000);
        }
        assert_eq!(h.quantile(0.5), Some(101_800_000 + 24 * 35_000));
        assert_ne!(h.quantile(0.5), Some(h.max_ns));
    }

    #[test]
    fn past_the_limit_quantiles_come_from_buckets_within_their_width() {
        let n = MAX_EXACT_LATENCIES as i64 + 1;
        let mut h = Histogram::default();
        // 1 µs, 2 µs, … : rank r holds r µs.
        for i in (1..=n).rev() {
            h.record(i * 1000);
        }
        assert!(!h.is_exact());
        assert!(h.exact.capacity() == 0, "the kept latencies are let go");
        for q in [0.5, 0.9, 0.99] {
            let rank = (q * n as f64).ceil();
            let got = h.quantile(q).unwrap() as f64;
            let want = rank * 1000.0;
            assert!(
                (got - want).abs() <= want / 256.0 + 1000.0,
                "q {q}: {got} vs {want}"
            );
        }
        assert_eq!(h.quantile(1.0), Some(n * 1000));
    }

    /// Two threads' histograms merged give what one thread counting them all gives: exact
    /// while the two together are within the limit, buckets past it.
    #[test]
    fn merged_halves_are_one_histogram() {
        for total in [
            100,
            MAX_EXACT_LATENCIES as i64,
            MAX_EXACT_LATENCIES as i64 + 50,
        ] {
            let [mut one, mut a, mut b] = [(); 3].map(|_| Histogram::default());
            for i in 0..total {
                let v = (i * 7919) % 100_003 * 1000;
                one.record(v);
                if i < total / 3 {
                    a.record(v)
                } else {
                    b.record(v)
                }
            }
            a.merge(&b);
            assert_eq!(a.is_exact(), total <= MAX_EXACT_LATENCIES as i64, "{total}");
            assert_eq!(a.is_exact(), one.is_exact());
            for q in [0.0, 0.25, 0.5, 0.9, 0.99, 1.0] {
                assert_eq!(a.quantile(q), one.quantile(q), "{total} q {q}");
            }
            assert_eq!(
                (a.count, a.min_ns, a.max_ns, a.sum_ns),
                (one.count, one.min_ns, one.max_ns, one.sum_ns)
            );
        }
    }

    fn pdu(key: i16, version: i16, dir: Direction, latency: Option<i64>, known: bool) -> Pdu {
        Pdu {
            direction: Some(dir),
            api_key: Some(key),
            api_version: Some(version),
            api_name: known.then_some("Known"),
            latency_ns: latency,
            ..Pdu::default()
        }
    }

    /// A capture naming more (API key, version) pairs than the limit (hostile or damaged
    /// traffic) is counted in full, the pairs past it together, with no latency or error map
    /// growing for them; so too when two threads' counts are merged.
    #[test]
    fn api_pairs_past_the_limit_are_counted_together() {
        let n = MAX_STATS_APIS + 10;
        let pairs: Vec<(i16, i16)> = (0..n)
            .map(|i| ((i / 100) as i16 + 1000, (i % 100) as i16))
            .collect();
        let feed = |st: &mut Stats, ps: &[(i16, i16)]| {
            for &(k, v) in ps {
                st.pdu(&pdu(k, v, Direction::Request, None, false));
                st.pdu(&pdu(k, v, Direction::Response, Some(1000), false));
            }
        };
        let mut one = Stats::new();
        feed(&mut one, &pairs);
        assert_eq!(one.apis.len(), MAX_STATS_APIS);
        assert_eq!(
            (one.other_apis.requests, one.other_apis.responses),
            (10, 10)
        );
        assert_eq!(one.requests, n as u64);
        let latencies: u64 = one.latency.values().map(|h| h.count).sum();
        assert_eq!(
            latencies, MAX_STATS_APIS as u64,
            "only the pairs counted by name"
        );
        assert!(one.latency.keys().all(|&k| one.counts_key(k)));
        // Two halves, each under the limit, merged: the same totals, the same bound.
        let (mut a, mut b) = (Stats::new(), Stats::new());
        feed(&mut a, &pairs[..n / 2]);
        feed(&mut b, &pairs[n / 2..]);
        a.merge(b);
        assert_eq!(a.apis.len(), MAX_STATS_APIS);
        assert_eq!(a.other_apis, one.other_apis);
        assert_eq!(a.apis, one.apis);
        assert!(a.latency.keys().all(|&k| a.counts_key(k)));
    }

    /// Latencies are kept one by one only for APIs the protocol knows: an unknown key's go to
    /// buckets, so hostile api keys cannot make each keep 4096 latencies.
    #[test]
    fn only_known_apis_keep_their_latencies() {
        let mut st = Stats::new();
        st.pdu(&pdu(3, 12, Direction::Response, Some(5), true));
        st.pdu(&pdu(999, 0, Direction::Response, Some(5), false));
        assert!(st.latency[&3].is_exact());
        assert!(!st.latency[&999].is_exact());
        assert_eq!(
            st.latency[&999].quantile(0.5),
            Some(5),
            "min and max are still exact"
        );
    }
}
