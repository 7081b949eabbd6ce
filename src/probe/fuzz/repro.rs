//! Reproducers on disk: one folder per finding under `--out`, holding `reproducer.json` (the
//! finding in probe's JSON contract, the minimised sequence with every case's hex, how it is
//! replayed), `case.hex` (the case to blame: the sequence's last), `sequence.hex` (one case per
//! line) and `session.pcap` (the bytes of the run that last reproduced it).

use super::cases::Case;
use crate::probe::findings::{hex, Finding, CODES};
use serde_json::{json, Value as J};
use std::path::{Path, PathBuf};

/// What `--replay` needs to re-run a finding and judge it.
#[derive(Clone, Debug, PartialEq)]
pub struct Reproducer {
    /// The finding code (one of `findings::CODES`).
    pub code: &'static str,
    pub api_key: i16,
    pub api_version: i16,
    /// Cases per round (connection) when it was found.
    pub round: usize,
    pub sequence: Vec<Case>,
    /// Cases since the last liveness check, before minimising.
    pub original_len: usize,
    /// The minimised sequence reproduced the finding at least once.
    pub minimised: bool,
    pub seed: u64,
    /// The finding as the JSON contract writes it.
    pub finding: J,
}

pub fn unhex(s: &str) -> Option<Vec<u8>> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

impl Reproducer {
    pub fn to_json(&self) -> J {
        let seq: Vec<J> = self
            .sequence
            .iter()
            .map(|c| {
                json!({
                    "api_key": c.api_key,
                    "api_version": c.api_version,
                    "mutator": c.mutator,
                    "note": c.note,
                    "hex": hex(&c.bytes),
                })
            })
            .collect();
        json!({
            "kinspect_fuzz_reproducer": 1,
            "finding": self.finding,
            "code": self.code,
            "api_key": self.api_key,
            "api_version": self.api_version,
            "round": self.round,
            "seed": self.seed,
            "original_len": self.original_len,
            "minimised": self.minimised,
            "sequence": seq,
        })
    }

    pub fn from_json(j: &J) -> Result<Reproducer, String> {
        if j["kinspect_fuzz_reproducer"].as_i64() != Some(1) {
            return Err("not a kinspect fuzz reproducer (kinspect_fuzz_reproducer: 1)".into());
        }
        let code_s = j["code"].as_str().ok_or("no code")?;
        let code = CODES
            .iter()
            .find(|(c, _, _)| *c == code_s)
            .map(|(c, _, _)| *c)
            .ok_or_else(|| format!("unknown finding code {code_s:?}"))?;
        let int = |v: &J, k: &str| v[k].as_i64().ok_or_else(|| format!("no {k}"));
        let mut sequence = Vec::new();
        for c in j["sequence"].as_array().ok_or("no sequence")? {
            sequence.push(Case {
                api_key: int(c, "api_key")? as i16,
                api_version: int(c, "api_version")? as i16,
                mutator: c["mutator"].as_str().unwrap_or("").to_string(),
                note: c["note"].as_str().unwrap_or("").to_string(),
                bytes: unhex(c["hex"].as_str().ok_or("a case without hex")?)
                    .ok_or("a case whose hex does not parse")?,
            });
        }
        Ok(Reproducer {
            code,
            api_key: int(j, "api_key")? as i16,
            api_version: int(j, "api_version")? as i16,
            round: (int(j, "round")? as usize).max(1),
            sequence,
            original_len: int(j, "original_len").unwrap_or(0) as usize,
            minimised: j["minimised"].as_bool().unwrap_or(false),
            seed: int(j, "seed").unwrap_or(0) as u64,
            finding: j["finding"].clone(),
        })
    }

    /// A reproducer file, or a folder holding `reproducer.json`.
    pub fn load(path: &Path) -> Result<Reproducer, String> {
        let p = if path.is_dir() {
            path.join("reproducer.json")
        } else {
            path.to_path_buf()
        };
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let j: J = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}:{}:{}: {}",
                p.display(),
                e.line(),
                e.column(),
                crate::diag::json_error_message(&e)
            )
        })?;
        Reproducer::from_json(&j).map_err(|e| format!("{}: {e}", p.display()))
    }

    /// Writes the folder `out/NNN-code-api-vV` and returns its path.
    pub fn save(&self, out: &Path, n: usize, f: &Finding, pcap: &[u8]) -> std::io::Result<PathBuf> {
        let dir = out.join(format!(
            "{n:03}-{}-{}-v{}",
            self.code,
            f.api.unwrap_or("unknown"),
            self.api_version
        ));
        std::fs::create_dir_all(&dir)?;
        let mut text = serde_json::to_string_pretty(&self.to_json()).unwrap_or_default();
        text.push('\n');
        std::fs::write(dir.join("reproducer.json"), text)?;
        let last = self
            .sequence
            .last()
            .map(|c| hex(&c.bytes))
            .unwrap_or_default();
        std::fs::write(dir.join("case.hex"), format!("{last}\n"))?;
        let seq: String = self
            .sequence
            .iter()
            .map(|c| format!("{}\n", hex(&c.bytes)))
            .collect();
        std::fs::write(dir.join("sequence.hex"), seq)?;
        std::fs::write(dir.join("session.pcap"), pcap)?;
        Ok(dir)
    }
}

#[cfg(test)]
mod load_tests {
    /// A reproducer that is not JSON is named by file, line and column, the place said once.
    #[test]
    fn bad_json_is_named_by_file_line_and_column() {
        let dir = std::env::temp_dir().join(format!("kinspect-repro-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("reproducer.json");
        std::fs::write(&p, "{\n  \"cases\": [,]\n}\n").unwrap();
        let e = super::Reproducer::load(&dir).err().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(e, format!("{}:2:13: expected value", p.display()));
    }
}
