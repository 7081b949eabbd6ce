//! Counts over time in a fixed number of buckets ([`MAX_REPORT_TIME_BUCKETS`]): the buckets
//! start 1 ms wide and double in width (two neighbours merged into one) whenever the span seen
//! no longer fits, so memory and the plot's size do not depend on how long the capture is.

use crate::limits::{MAX_REPORT_SERIES, MAX_REPORT_TIME_BUCKETS};
use std::collections::BTreeMap;

const N: usize = MAX_REPORT_TIME_BUCKETS;
/// The first bucket width: 1 ms.
const FIRST_WIDTH_NS: i128 = 1_000_000;

/// One family of series (per API, per error code) over the shared buckets. `None` is "other":
/// the keys past [`MAX_REPORT_SERIES`].
pub type Series = BTreeMap<Option<i16>, Vec<u64>>;

/// Buckets of `width` nanoseconds from `start`, shared by every series.
#[derive(Debug, Default)]
pub struct Timeline {
    /// Aligned to `width`; `width == 0` until the first timestamp.
    start: i128,
    width: i128,
    lo: i128,
    hi: i128,
    /// PDUs per API key.
    pub pdus: Series,
    /// Bytes per API key.
    pub bytes: Series,
    /// Non-zero error codes in responses, per code.
    pub errors: Series,
}

impl Timeline {
    /// The bucket index of `ts`, re-bucketing first if it falls outside the current span.
    pub fn slot(&mut self, ts: i64) -> usize {
        let ts = i128::from(ts);
        if self.width == 0 {
            self.width = FIRST_WIDTH_NS;
            self.start = ts.div_euclid(self.width) * self.width;
            self.lo = ts;
            self.hi = ts;
        }
        if ts < self.lo || ts > self.hi {
            self.lo = self.lo.min(ts);
            self.hi = self.hi.max(ts);
            self.refit();
        }
        ((ts - self.start) / self.width).clamp(0, N as i128 - 1) as usize
    }

    /// The smallest width (the current one times a power of two) at which `lo..=hi` fits in
    /// `N` buckets, and every series moved onto it. Old buckets nest in new ones exactly: both
    /// starts are multiples of the old width, and the new width is a multiple of it.
    fn refit(&mut self) {
        let mut w = self.width;
        while self.hi.div_euclid(w) - self.lo.div_euclid(w) >= N as i128 {
            w *= 2;
        }
        let start = self.lo.div_euclid(w) * w;
        if w == self.width && start == self.start {
            return;
        }
        let (old_start, old_w) = (self.start, self.width);
        let map = |i: usize| {
            let t = old_start + i as i128 * old_w;
            ((t - start) / w).clamp(0, N as i128 - 1) as usize
        };
        for series in [&mut self.pdus, &mut self.bytes, &mut self.errors] {
            for v in series.values_mut() {
                let mut moved = vec![0u64; N];
                for (i, n) in v.iter().enumerate() {
                    moved[map(i)] += n;
                }
                *v = moved;
            }
        }
        self.start = start;
        self.width = w;
    }

    /// Adds `n` to the series `key` of `family` at bucket `slot`.
    pub fn add(family: &mut Series, key: i16, slot: usize, n: u64) {
        let key = if family.contains_key(&Some(key)) || family.len() < MAX_REPORT_SERIES {
            Some(key)
        } else {
            None
        };
        family.entry(key).or_insert_with(|| vec![0; N])[slot] += n;
    }

    /// The first bucket's start and the bucket width, in nanoseconds (`None` before any
    /// timestamp).
    pub fn geometry(&self) -> Option<(i128, i128)> {
        (self.width > 0).then_some((self.start, self.width))
    }

    /// Buckets up to the last one holding anything (at least one).
    pub fn used(&self) -> usize {
        if self.width == 0 {
            return 0;
        }
        (((self.hi - self.start) / self.width) as usize + 1).min(N)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebucketing_keeps_every_count_and_the_bucket_count_fixed() {
        let mut t = Timeline::default();
        let mut total = 0;
        // A week of traffic, one PDU every 37 minutes, out of order at the start.
        let times: Vec<i64> = [5_000_000_000i64, 1_000]
            .into_iter()
            .chain((0..300).map(|i| i * 37 * 60 * 1_000_000_000))
            .collect();
        for ts in times {
            let s = t.slot(ts);
            Timeline::add(&mut t.pdus, 3, s, 1);
            total += 1;
            let (start, w) = t.geometry().unwrap();
            assert!(i128::from(ts) >= start && i128::from(ts) < start + w * N as i128);
            assert_eq!(t.pdus[&Some(3)].len(), N);
        }
        assert_eq!(t.pdus[&Some(3)].iter().sum::<u64>(), total);
        assert!(t.used() <= N);
    }

    #[test]
    fn hostile_timestamps_do_not_overflow() {
        let mut t = Timeline::default();
        for ts in [i64::MAX, i64::MIN, 0, -1, i64::MAX] {
            let s = t.slot(ts);
            Timeline::add(&mut t.errors, -1, s, 1);
        }
        assert_eq!(t.errors[&Some(-1)].iter().sum::<u64>(), 5);
    }

    #[test]
    fn keys_past_the_cap_are_other() {
        let mut t = Timeline::default();
        let s = t.slot(0);
        for k in 0..200 {
            Timeline::add(&mut t.pdus, k, s, 1);
        }
        assert_eq!(t.pdus.len(), MAX_REPORT_SERIES + 1);
        assert_eq!(t.pdus[&None][s], 200 - MAX_REPORT_SERIES as u64);
    }
}
