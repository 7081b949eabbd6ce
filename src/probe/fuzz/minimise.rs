//! Minimising a failing sequence while it still fails: fewer cases first (Zeller's delta
//! debugging, ddmin: drop chunks, then keep single chunks, halving the chunk size), then smaller
//! cases (each one cut at its field boundaries, shortest first). `fails` re-runs a candidate
//! against the broker; it is called at most `budget` times, and the smallest failing sequence
//! found so far is kept whatever happens.

use super::cases::Case;
use super::layout::Layout;
use super::mutate::fix_size;
use crate::protocol::Protocol;

/// Reduces `seq` (which fails) with at most `budget` calls of `fails`. `hint`: the index of the
/// case most likely to blame, tried alone first.
pub fn minimise(
    seq: &[Case],
    hint: Option<usize>,
    budget: usize,
    fails: &mut dyn FnMut(&[Case]) -> bool,
) -> Vec<Case> {
    let mut calls = 0usize;
    let mut test = |s: &[Case]| {
        if calls >= budget {
            return false;
        }
        calls += 1;
        fails(s)
    };
    if let Some(h) = hint.filter(|&h| h < seq.len()) {
        if seq.len() > 1 && test(&seq[h..=h]) {
            return seq[h..=h].to_vec();
        }
    }
    ddmin(seq.to_vec(), &mut test)
}

fn ddmin(mut cur: Vec<Case>, test: &mut dyn FnMut(&[Case]) -> bool) -> Vec<Case> {
    let mut n = 2usize;
    while cur.len() >= 2 {
        let parts = n;
        let chunk = cur.len().div_ceil(parts);
        let mut reduced = false;
        // Each chunk alone.
        for i in 0..parts {
            let lo = i * chunk;
            if lo >= cur.len() {
                break;
            }
            let hi = (lo + chunk).min(cur.len());
            if hi - lo < cur.len() && test(&cur[lo..hi]) {
                cur = cur[lo..hi].to_vec();
                n = 2;
                reduced = true;
                break;
            }
        }
        if reduced {
            continue;
        }
        // Each complement.
        for i in 0..parts {
            let lo = i * chunk;
            if lo >= cur.len() {
                break;
            }
            let hi = (lo + chunk).min(cur.len());
            let mut c = cur[..lo].to_vec();
            c.extend_from_slice(&cur[hi..]);
            if !c.is_empty() && test(&c) {
                cur = c;
                n = (n - 1).max(2);
                reduced = true;
                break;
            }
        }
        if reduced {
            continue;
        }
        if n >= cur.len() {
            break;
        }
        n = (n * 2).min(cur.len());
    }
    cur
}

/// Makes each case smaller while `fails` still holds: the case cut at each of its field
/// boundaries, shortest first, at most `per_case` tries each.
pub fn shrink_cases(
    proto: &'static Protocol,
    seq: Vec<Case>,
    per_case: usize,
    fails: &mut dyn FnMut(&[Case]) -> bool,
) -> Vec<Case> {
    let mut cur = seq;
    let mut decoder = crate::records::decoder(proto);
    for i in 0..cur.len() {
        let c = &cur[i];
        let layout = Layout::of(proto, &mut decoder, &c.bytes, c.api_key, c.api_version);
        let mut cuts: Vec<usize> = layout
            .slots
            .iter()
            .flat_map(|s| [s.offset, s.offset + s.len])
            .filter(|&x| x >= 12 && x < c.bytes.len())
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        for &at in cuts.iter().take(per_case) {
            let mut smaller = cur[i].clone();
            smaller.bytes.truncate(at);
            fix_size(&mut smaller.bytes);
            smaller.note = format!("{} (shrunk to {at} bytes)", smaller.note);
            let mut cand = cur.clone();
            cand[i] = smaller;
            if fails(&cand) {
                cur = cand;
                break;
            }
        }
    }
    cur
}
