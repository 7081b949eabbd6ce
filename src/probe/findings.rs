//! Findings: what one exchange with the broker showed, with the bytes that show it. The JSON
//! form ([`Finding::to_json`]) is the stable `--format jsonl` contract; the codes are listed in
//! the [`super`] module documentation and in docs/probe.md.

use crate::diag::{Diagnostic, Severity};
use serde_json::{json, Value as J};

/// One finding. `api_key`/`api_version` are the request's (for negotiation findings too).
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub code: &'static str,
    pub severity: Severity,
    pub api_key: i16,
    pub api: Option<&'static str>,
    pub api_version: i16,
    /// Which generated request: `minimal`, `one`, `nulls`, `varied-N`, or `negotiate`/`setup`.
    pub variant: String,
    pub correlation_id: Option<i32>,
    pub request: Vec<u8>,
    pub response: Vec<u8>,
    /// The decoder's diagnostics on the response (all severities), when it was decoded.
    pub diagnostics: Vec<Diagnostic>,
    /// Non-zero error codes found in `*ErrorCode` fields of the response, by name.
    pub error_codes: Vec<String>,
    pub latency_us: Option<u64>,
    pub message: String,
}

/// Every code, with its severity and what it means (the table's legend and the docs' source).
pub const CODES: &[(&str, Severity, &str)] = &[
    ("clean", Severity::Info, "answered, and the answer decodes at the request's version without error diagnostics"),
    ("response-warning", Severity::Warning, "answered; the answer decodes but with warnings (non-minimal varints, invalid UTF-8, …)"),
    ("malformed-response", Severity::Error, "the answer does not decode at the request's version (every error diagnostic is listed, with code, offset and path)"),
    ("correlation-mismatch", Severity::Error, "the answer carries another correlation id than its request (the message says whether it repeats an earlier one)"),
    ("timeout", Severity::Error, "no answer within --timeout"),
    ("connection-closed", Severity::Error, "the broker closed the connection instead of answering a version it advertises"),
    ("bad-frame-size", Severity::Error, "the answer's size prefix is negative or larger than kinspect::limits::MAX_FRAME_SIZE"),
    ("unsupported-version", Severity::Error, "a version the broker advertises was answered with UNSUPPORTED_VERSION"),
    ("past-range-answered", Severity::Error, "a version past the advertised range was answered as if supported (no UNSUPPORTED_VERSION), instead of refused"),
    ("past-range-refused", Severity::Info, "a version past the advertised range was refused: UNSUPPORTED_VERSION, or the connection closed as Kafka does"),
    ("broker-down", Severity::Error, "a fresh connection to the broker could not be made; the sweep stopped"),
    ("unexpected-answer", Severity::Warning, "a Produce request with Acks 0 was answered: Kafka never answers those"),
    ("no-response-expected", Severity::Info, "a Produce request with Acks 0 was sent: Kafka does not answer those"),
    ("skipped-destructive", Severity::Info, "an API that destroys data or changes cluster state, not sent without --allow-destructive"),
    ("unknown-api", Severity::Info, "the broker advertises an API key kinspect's protocol does not define"),
    ("unknown-version", Severity::Info, "the broker advertises a version kinspect's protocol does not define (use --schemas)"),
    ("encode-failed", Severity::Warning, "kinspect could not encode its own generated request (a kinspect bug)"),
    ("accepted-corrupt-batch", Severity::Error, "fuzz: a Produce with a corrupt batch (bad CRC, unknown codec) was answered without error"),
    ("hung-connection", Severity::Error, "fuzz: a connection stayed open but stopped answering valid requests (a fresh connection is answered)"),
    ("broker-exited", Severity::Error, "fuzz: the --broker-pid process exited"),
    ("rss-growth", Severity::Warning, "fuzz: the --broker-pid process's resident memory grew four-fold and by more than 256 MiB"),
    ("limit-reached", Severity::Warning, "--max-requests or --deadline stopped the sweep; later APIs were not probed"),
];

/// The severity of a code (error for a code not in [`CODES`]).
pub fn severity(code: &str) -> Severity {
    CODES
        .iter()
        .find(|(c, _, _)| *c == code)
        .map_or(Severity::Error, |(_, s, _)| *s)
}

/// How bad a code is for the table's verdict: errors first, then warnings, then the others in
/// list order.
pub fn rank(code: &str) -> usize {
    let i = CODES.iter().position(|(c, _, _)| *c == code).unwrap_or(0);
    let s = match severity(code) {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Info => 2,
    };
    // `clean` is the mildest verdict of all.
    if code == "clean" {
        return usize::MAX;
    }
    s * 100 + i
}

pub fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    s
}

impl Finding {
    pub fn new(
        code: &'static str,
        api_key: i16,
        api: Option<&'static str>,
        api_version: i16,
    ) -> Finding {
        Finding {
            code,
            severity: severity(code),
            api_key,
            api,
            api_version,
            variant: String::new(),
            correlation_id: None,
            request: Vec::new(),
            response: Vec::new(),
            diagnostics: Vec::new(),
            error_codes: Vec::new(),
            latency_us: None,
            message: String::new(),
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The stable JSON Lines object.
    pub fn to_json(&self) -> J {
        let diags: Vec<J> = self
            .diagnostics
            .iter()
            .map(|d| {
                json!({
                    "severity": d.severity.as_str(),
                    "code": d.code,
                    "path": d.path,
                    "offset": d.offset,
                    "message": d.message,
                })
            })
            .collect();
        json!({
            "finding": self.code,
            "severity": self.severity.as_str(),
            "api_key": self.api_key,
            "api": self.api,
            "api_version": self.api_version,
            "variant": self.variant,
            "correlation_id": self.correlation_id,
            "request_hex": hex(&self.request),
            "response_hex": hex(&self.response),
            "diagnostics": diags,
            "error_codes": self.error_codes,
            "latency_us": self.latency_us,
            "message": self.message,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_unique_and_errors_outrank_the_rest() {
        for (i, (c, _, _)) in CODES.iter().enumerate() {
            assert!(!CODES[..i].iter().any(|(d, _, _)| d == c), "{c} twice");
        }
        assert!(rank("malformed-response") < rank("response-warning"));
        assert!(rank("response-warning") < rank("past-range-refused"));
        assert!(rank("past-range-refused") < rank("clean"));
        assert_eq!(severity("timeout"), Severity::Error);
    }

    #[test]
    fn json_has_the_contract_keys() {
        let mut f = Finding::new("timeout", 3, Some("Metadata"), 12);
        f.request = vec![0, 1, 0xab];
        let j = f.to_json();
        for k in [
            "finding",
            "severity",
            "api_key",
            "api",
            "api_version",
            "correlation_id",
            "request_hex",
            "response_hex",
            "diagnostics",
            "latency_us",
            "message",
        ] {
            assert!(j.get(k).is_some(), "{k}");
        }
        assert_eq!(j["request_hex"], "0001ab");
        assert_eq!(j["severity"], "error");
    }
}
