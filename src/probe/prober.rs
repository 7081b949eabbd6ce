//! The prober: one connection to the broker, negotiation, discovery, and the sweep's requests
//! and the judging of every answer ([`super::run`] drives it; the fuzzer reuses its negotiation
//! and discovery through [`super::discover`]).

use super::conn::{Conn, ReadFail};
use super::generate::Entities;
use super::{
    check_loopback, findings, generate, Config, Finding, ProbeError, Transcript,
    UNSUPPORTED_VERSION,
};
use crate::output::value::pdu_json;
use crate::pdu::{Direction, Hints, Pdu};
use crate::protocol::errors::error_name;
use crate::wire::decode::Decoder;
use crate::wire::tree::{Kind, Value};
use serde_json::Value as J;
use std::collections::HashSet;
use std::time::Instant;

/// What a request expects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// A version the broker advertises.
    Supported,
    /// The first version past the advertised range: must be refused.
    PastRange,
    /// ApiVersions before the range is known: either answer is fine.
    Negotiation,
}

pub(super) struct Prober<'c> {
    cfg: &'c Config,
    pub(super) conn: Option<Conn>,
    pub(super) transcript: Transcript,
    decoder: Decoder,
    /// ApiVersions' key, looked up by name in the protocol.
    api_versions: i16,
    next_corr: i32,
    /// Correlation ids sent so far (bounded by `max_requests`).
    sent: HashSet<i32>,
    pub(super) findings: Vec<Finding>,
    pub(super) requests: usize,
    started: Instant,
    stopped: bool,
    /// Requests Kafka does not answer (Produce with Acks 0), by correlation id: their request
    /// finding's index, so that an answer that comes anyway is reported against them.
    silent: Vec<(i32, usize)>,
}

impl<'c> Prober<'c> {
    /// A prober connected to `cfg.addr` (loopback only), before negotiation.
    pub(super) fn connect(cfg: &'c Config) -> Result<Prober<'c>, ProbeError> {
        check_loopback(&cfg.addr)?;
        let api_versions = cfg.protocol.known().api_versions.ok_or_else(|| {
            ProbeError::Negotiate("the protocol has no ApiVersions API to negotiate with".into())
        })?;
        let mut p = Prober {
            cfg,
            conn: None,
            transcript: Transcript::default(),
            decoder: crate::records::decoder(cfg.protocol),
            api_versions,
            next_corr: 1,
            sent: HashSet::new(),
            findings: Vec::new(),
            requests: 0,
            started: Instant::now(),
            stopped: false,
            silent: Vec::new(),
        };
        let conn = Conn::connect(cfg.addr, cfg.timeout, &mut p.transcript)
            .map_err(|e| ProbeError::Connect(format!("cannot connect to {}: {e}", cfg.addr)))?;
        p.conn = Some(conn);
        Ok(p)
    }

    fn api(&self, key: i16) -> Option<&'static str> {
        self.cfg.protocol.api_name(key)
    }

    pub(super) fn drop_conn(&mut self) {
        if let Some(c) = self.conn.take() {
            c.close(&mut self.transcript);
        }
    }

    /// Sends one request and judges its answer; returns the decoded answer when there was one.
    fn exchange(
        &mut self,
        key: i16,
        version: i16,
        variant: &str,
        body: &J,
        expect: Expect,
    ) -> Option<Pdu> {
        if self.stopped {
            return None;
        }
        let api = self.api(key);
        if self.requests >= self.cfg.max_requests || self.started.elapsed() >= self.cfg.deadline {
            self.stopped = true;
            let mut f = Finding::new("limit-reached", key, api, version);
            f.message = format!(
                "stopped after {} requests and {:.1} s (limits: {} requests, {:.0} s)",
                self.requests,
                self.started.elapsed().as_secs_f64(),
                self.cfg.max_requests,
                self.cfg.deadline.as_secs_f64()
            );
            self.findings.push(f);
            return None;
        }
        let corr = self.next_corr;
        self.next_corr = self.next_corr.wrapping_add(1);
        let proto = self.cfg.protocol;
        let mut base = Finding::new("clean", key, api, version);
        base.variant = variant.to_string();
        base.correlation_id = Some(corr);
        let frame =
            match generate::encode_request(proto, key, version, corr, &self.cfg.client_id, body) {
                Ok(f) => f,
                Err(e) => {
                    let mut f = base;
                    f.code = "encode-failed";
                    f.severity = findings::severity(f.code);
                    f.message = format!("cannot encode the generated request: {e}");
                    self.findings.push(f);
                    return None;
                }
            };
        base.request = frame.clone();
        self.requests += 1;
        self.sent.insert(corr);
        // A connection the previous request broke is only noticed when writing: reconnect once.
        let mut sent = false;
        for _ in 0..2 {
            if self.conn.is_none() {
                match Conn::connect(self.cfg.addr, self.cfg.timeout, &mut self.transcript) {
                    Ok(c) => self.conn = Some(c),
                    Err(e) => {
                        let mut f = base.clone();
                        f.code = "broker-down";
                        f.severity = findings::severity(f.code);
                        f.message = format!(
                            "cannot reconnect to {}: {e}; the sweep stops",
                            self.cfg.addr
                        );
                        self.findings.push(f);
                        self.stopped = true;
                        return None;
                    }
                }
            }
            let Some(c) = self.conn.as_mut() else { break };
            if c.send(&frame, &mut self.transcript).is_ok() {
                sent = true;
                break;
            }
            self.drop_conn();
        }
        if !sent {
            let mut f = base;
            f.code = "connection-closed";
            f.severity = findings::severity(f.code);
            f.message = "the request could not be written on a fresh connection".into();
            self.findings.push(f);
            return None;
        }
        if api == Some("Produce") && body.get("Acks").and_then(J::as_i64) == Some(0) {
            let mut f = base;
            f.code = "no-response-expected";
            f.severity = findings::severity(f.code);
            f.message = "Acks 0: Kafka sends no answer".into();
            self.silent.push((corr, self.findings.len()));
            self.findings.push(f);
            return None;
        }
        let t0 = Instant::now();
        let (read, latency) = loop {
            let read = match self.conn.as_mut() {
                Some(c) => c.read_frame(self.cfg.timeout, &mut self.transcript),
                None => return None,
            };
            let latency = t0.elapsed().as_micros() as u64;
            // An answer to a request Kafka never answers: report it there, read on.
            if let Ok(fr) = &read {
                let got = fr
                    .get(4..8)
                    .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
                if let Some(i) = self
                    .silent
                    .iter()
                    .position(|(c, _)| Some(*c) != Some(corr) && Some(*c) == got)
                {
                    let (c, at) = self.silent.remove(i);
                    if let Some(earlier) = self.findings.get(at).cloned() {
                        let mut f = earlier;
                        f.code = "unexpected-answer";
                        f.severity = findings::severity(f.code);
                        f.response = fr.clone();
                        f.message = format!(
                            "request {c} (Produce with Acks 0) was answered; Kafka never answers those (ProduceRequest.json: \"0 for no acknowledgments\")"
                        );
                        self.findings.push(f);
                    }
                    continue;
                }
            }
            break (read, latency);
        };
        let frame = match read {
            Ok(f) => f,
            Err(fail) => {
                self.drop_conn();
                let mut f = base;
                match fail {
                    ReadFail::Timeout { partial } => {
                        f.code = "timeout";
                        f.message = format!(
                            "no answer within {} ms ({} bytes of an answer arrived)",
                            self.cfg.timeout.as_millis(),
                            partial.len()
                        );
                        f.response = partial;
                    }
                    ReadFail::Closed { partial, why } => {
                        f.code = if expect == Expect::PastRange && partial.is_empty() {
                            "past-range-refused"
                        } else {
                            "connection-closed"
                        };
                        f.message = format!(
                            "the broker closed the connection ({why}) after {} bytes of an answer",
                            partial.len()
                        );
                        f.response = partial;
                    }
                    ReadFail::BadSize { prefix } => {
                        f.code = "bad-frame-size";
                        f.message = format!(
                            "size prefix {} (0x{}) is not a Kafka frame size",
                            i32::from_be_bytes(prefix),
                            findings::hex(&prefix)
                        );
                        f.response = prefix.to_vec();
                    }
                }
                f.severity = findings::severity(f.code);
                f.latency_us = Some(latency);
                self.findings.push(f);
                return None;
            }
        };
        let hints = Hints {
            direction: Some(Direction::Response),
            api_key: Some(key),
            api_version: Some(version),
            has_size_prefix: Some(true),
            ..Hints::default()
        };
        let mut pdu = Pdu::default();
        self.decoder.decode_frame(&frame, &hints, &mut pdu);
        base.response = frame;
        base.latency_us = Some(latency);
        base.diagnostics = pdu.tree.diags.to_vec();
        base.error_codes = error_codes(&pdu);
        let out = self.judge(base, &pdu, corr, expect);
        self.findings.extend(out);
        Some(pdu)
    }

    fn judge(&mut self, base: Finding, pdu: &Pdu, corr: i32, expect: Expect) -> Vec<Finding> {
        let mut out = Vec::new();
        let mk = |code: &'static str, message: String| {
            let mut f = base.clone();
            f.code = code;
            f.severity = findings::severity(code);
            f.message = message;
            f
        };
        let v = base.api_version;
        if pdu.correlation_id != Some(corr) {
            let got = pdu.correlation_id;
            let repeated = got.is_some_and(|g| g != corr && self.sent.contains(&g));
            out.push(mk(
                "correlation-mismatch",
                format!(
                    "sent correlation id {corr}, the answer has {}{}",
                    got.map_or("none".into(), |g| g.to_string()),
                    if repeated {
                        " (an earlier request's: repeated)"
                    } else {
                        ""
                    }
                ),
            ));
            self.drop_conn();
        }
        let refused = base
            .error_codes
            .iter()
            .any(|n| Some(n.as_str()) == error_name(UNSUPPORTED_VERSION));
        let errors: Vec<_> = pdu.tree.errors().collect();
        if !errors.is_empty() {
            let first = errors[0];
            let mut msg = format!(
                "{} error diagnostic(s); first: {} at byte {}{}: {}",
                errors.len(),
                first.code,
                first.offset,
                if first.path.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", first.path)
                },
                first.message
            );
            if base.api_key == self.api_versions && v != 0 && unsupported_at_start(&base.response) {
                msg = format!(
                    "an UNSUPPORTED_VERSION answer to ApiVersions v{v} that is valid neither as v{v} nor as the v0 fallback (ErrorCode, int32 ApiKeys count, entries); {msg}"
                );
            }
            out.push(mk("malformed-response", msg));
        }
        match expect {
            Expect::PastRange | Expect::Negotiation if refused => out.push(mk(
                "past-range-refused",
                format!("v{v} is past the broker's range; refused with UNSUPPORTED_VERSION"),
            )),
            Expect::PastRange => {
                let how = if errors.is_empty() {
                    "with a body that decodes at that version"
                } else {
                    "with a body that does not decode at that version"
                };
                out.push(mk(
                    "past-range-answered",
                    format!("v{v} is past the advertised range, yet the broker answered it {how}, without UNSUPPORTED_VERSION"),
                ))
            }
            Expect::Supported if refused => out.push(mk(
                "unsupported-version",
                format!("v{v} is advertised, yet answered with UNSUPPORTED_VERSION"),
            )),
            _ => {}
        }
        if out.is_empty() {
            let warnings = pdu
                .tree
                .diags
                .iter()
                .filter(|d| d.severity == crate::diag::Severity::Warning)
                .count();
            let codes = if base.error_codes.is_empty() {
                String::new()
            } else {
                format!("; error codes: {}", base.error_codes.join(", "))
            };
            out.push(if warnings > 0 {
                mk("response-warning", format!("{warnings} warning(s){codes}"))
            } else {
                mk("clean", format!("decodes cleanly{codes}"))
            });
        }
        out
    }

    /// ApiVersions, highest version first; returns (key, min, max) as advertised.
    pub(super) fn negotiate(&mut self) -> Result<Vec<(i16, i16, i16)>, ProbeError> {
        let proto = self.cfg.protocol;
        let top = proto
            .api_versions(self.api_versions)
            .iter()
            .map(|a| a.valid.hi)
            .max()
            .unwrap_or(0);
        let mut v = top;
        let mut tried = Vec::new();
        while !tried.contains(&v) && tried.len() < 4 {
            tried.push(v);
            let Some(spec) = generate::request_spec(proto, self.api_versions, v) else {
                v = 0;
                continue;
            };
            let mut body = crate::wire::sample::minimal(&crate::wire::plan::shared(spec, v));
            name_client_software(&mut body);
            let Some(pdu) = self.exchange(
                self.api_versions,
                v,
                "negotiate",
                &body,
                Expect::Negotiation,
            ) else {
                v = 0;
                continue;
            };
            if pdu.tree.has_errors() {
                v = 0;
                continue;
            }
            let j = pdu_json(&pdu);
            let keys: Vec<(i16, i16, i16)> = j["body"]["ApiKeys"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|e| {
                            let n = |k: &str| e.get(k).and_then(J::as_i64).map(|x| x as i16);
                            Some((n("ApiKey")?, n("MinVersion")?, n("MaxVersion")?))
                        })
                        .collect()
                })
                .unwrap_or_default();
            match j["body"]["ErrorCode"].as_i64() {
                Some(0) => return Ok(keys),
                Some(35) => {
                    // The broker's own ApiVersions range, when it gave one.
                    v = keys
                        .iter()
                        .find(|k| k.0 == self.api_versions)
                        .map_or(0, |k| k.2.min(v - 1).max(0));
                }
                _ => v = 0,
            }
        }
        Err(ProbeError::Negotiate(format!(
            "{}: no ApiVersions answer could be read (tried versions {tried:?})",
            self.cfg.addr
        )))
    }

    /// Topics, brokers and groups the broker reports, for entity fields.
    pub(super) fn learn(&mut self, adv: &[(i16, i16, i16)]) -> Entities {
        let proto = self.cfg.protocol;
        let mut ents = Entities::default();
        let top = |key: i16| {
            let (_, lo, hi) = *adv.iter().find(|a| a.0 == key)?;
            (lo..=hi)
                .rev()
                .find(|&v| generate::request_spec(proto, key, v).is_some())
        };
        if let Some(key) = proto.api_key("Metadata") {
            if let Some(v) = top(key) {
                let spec = generate::request_spec(proto, key, v);
                let mut body = spec
                    .map(|s| crate::wire::sample::minimal(&crate::wire::plan::shared(s, v)))
                    .unwrap_or_default();
                if v >= 1 {
                    // Null asks for every topic (v0: the empty list does).
                    body["Topics"] = J::Null;
                }
                if let Some(pdu) = self.exchange(key, v, "setup", &body, Expect::Supported) {
                    let j = pdu_json(&pdu);
                    for t in j["body"]["Topics"].as_array().into_iter().flatten() {
                        if let Some(n) = t["Name"].as_str() {
                            if !n.starts_with("__") && !ents.topics.iter().any(|x| x == n) {
                                ents.topics.push(n.to_string());
                            }
                        }
                    }
                    for b in j["body"]["Brokers"].as_array().into_iter().flatten() {
                        if let Some(id) = b["NodeId"].as_i64() {
                            ents.brokers.push(id as i32);
                        }
                    }
                }
            }
        }
        if let Some(key) = proto.api_key("ListGroups") {
            if let Some(v) = top(key) {
                let spec = generate::request_spec(proto, key, v);
                let body = spec
                    .map(|s| crate::wire::sample::minimal(&crate::wire::plan::shared(s, v)))
                    .unwrap_or_default();
                if let Some(pdu) = self.exchange(key, v, "setup", &body, Expect::Supported) {
                    let j = pdu_json(&pdu);
                    for g in j["body"]["Groups"].as_array().into_iter().flatten() {
                        if let Some(n) = g["GroupId"].as_str() {
                            ents.groups.push(n.to_string());
                        }
                    }
                }
            }
        }
        ents.topics.sort();
        ents.groups.sort();
        ents
    }

    pub(super) fn sweep(&mut self, adv: &[(i16, i16, i16)], ents: &Entities) {
        let proto = self.cfg.protocol;
        let mut adv = adv.to_vec();
        adv.sort();
        let mut targets = Vec::new();
        for &(key, lo, hi) in &adv {
            let api = self.api(key);
            let Some(name) = api else {
                let mut f = Finding::new("unknown-api", key, None, hi);
                f.message =
                    format!("API key {key} (versions {lo}-{hi}) is not in kinspect's protocol");
                self.findings.push(f);
                continue;
            };
            if !self.cfg.apis.asked(name) {
                continue;
            }
            if !self.cfg.apis.allows(name) {
                let mut f = Finding::new("skipped-destructive", key, api, hi);
                f.message = format!("{name} (versions {lo}-{hi}) changes or destroys state: not sent without --allow-destructive");
                self.findings.push(f);
                continue;
            }
            for v in lo.max(0)..=hi.saturating_add(1) {
                let past = v > hi;
                let Some(spec) = generate::request_spec(proto, key, v) else {
                    if !past {
                        let mut f = Finding::new("unknown-version", key, api, v);
                        f.message = format!("{name} v{v} is advertised but not in kinspect's protocol (--schemas adds versions)");
                        self.findings.push(f);
                    }
                    continue;
                };
                let expect = if past {
                    Expect::PastRange
                } else {
                    Expect::Supported
                };
                targets.push((key, v, spec, expect));
            }
        }
        // The deterministic requests of every API first, the varied ones after: a broker that
        // dies on a hostile value has still been swept with well-formed plain requests.
        for pass in [false, true] {
            for &(key, v, spec, expect) in &targets {
                for b in generate::bodies(spec, v, self.cfg.variants, self.cfg.seed, ents) {
                    if b.variant.starts_with("varied") != pass {
                        continue;
                    }
                    let mut body = b.json;
                    if key == self.api_versions && !pass && b.variant != "nulls" {
                        name_client_software(&mut body);
                    }
                    self.exchange(key, v, &b.variant, &body, expect);
                    if self.stopped {
                        return;
                    }
                }
            }
        }
    }
}

/// Whether a response frame's body starts with ErrorCode 35 (size, correlation id, then int16).
/// An ApiVersions body (v3+) names its client: kinspect and its version.
fn name_client_software(body: &mut J) {
    if let Some(o) = body.as_object_mut() {
        if o.contains_key("ClientSoftwareName") {
            o.insert("ClientSoftwareName".into(), "kinspect".into());
            o.insert(
                "ClientSoftwareVersion".into(),
                env!("CARGO_PKG_VERSION").into(),
            );
        }
    }
}

fn unsupported_at_start(frame: &[u8]) -> bool {
    frame.get(8..10) == Some(&UNSUPPORTED_VERSION.to_be_bytes()[..])
}

/// Non-zero values of `*ErrorCode` fields, by name (`UNKNOWN(n)` for a code Kafka does not
/// define), each once, in the order first met.
fn error_codes(pdu: &Pdu) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in &pdu.tree.nodes {
        if n.kind != Kind::Scalar || !n.name.ends_with("ErrorCode") {
            continue;
        }
        if let Value::Int(e) = n.value {
            if e == 0 {
                continue;
            }
            let name = i16::try_from(e)
                .ok()
                .and_then(error_name)
                .map_or_else(|| format!("UNKNOWN({e})"), str::to_string);
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}
