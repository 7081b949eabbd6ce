//! The report's plots as inline SVG, drawn here (no plotting library, no script): stacked bars
//! over time, and latency percentiles per API on a log scale. Every label goes through
//! [`super::html::esc`]; a bar's exact value is in its `<title>` (the browser's tooltip).

use super::html::esc;
use std::fmt::Write as _;

/// Series colours (Tableau 10, told apart by most colour-blind readers); the last is "other".
pub const COLORS: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

const W: f64 = 1000.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 10.0;
const TOP: f64 = 10.0;

/// One stacked series: its label and one count per bucket.
pub struct Stack<'a> {
    pub label: String,
    pub values: &'a [u64],
}

/// Where the buckets are: the first bucket's start (nanoseconds since the Unix epoch) and the
/// width, in nanoseconds.
#[derive(Clone, Copy)]
pub struct Axis {
    pub start_ns: i128,
    pub width_ns: i128,
    pub buckets: usize,
}

/// A UTC time of day, to the millisecond when the buckets are narrower than a second. Bucket
/// starts are multiples of the width, so the labels come out round.
fn time_of_day(ns: i128, width_ns: i128) -> String {
    let t = crate::output::time::rfc3339_nanos(ns.clamp(i64::MIN.into(), i64::MAX.into()) as i64);
    let end = if width_ns < 1_000_000_000 { 23 } else { 19 };
    t.get(11..end).unwrap_or(&t).to_string()
}

/// A "nice" upper bound for an axis: 1, 2 or 5 times a power of ten, at least `max`.
fn nice(max: f64) -> f64 {
    if max <= 0.0 {
        return 1.0;
    }
    let p = 10f64.powf(max.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|&v| v >= max)
        .unwrap_or(10.0 * p)
}

/// Seconds as a short axis label.
fn seconds(ns: f64) -> String {
    let s = ns / 1e9;
    if s.abs() >= 100.0 {
        format!("{s:.0}s")
    } else if s.abs() >= 1.0 {
        format!("{s:.1}s")
    } else {
        format!("{:.0}ms", s * 1e3)
    }
}

/// Stacked bars, one per bucket, with a legend; `fmt` writes a value for the axis and tooltips.
pub fn stacked_bars(stacks: &[Stack<'_>], axis: Axis, fmt: fn(f64) -> String) -> String {
    let h = 240.0;
    let bottom = 40.0;
    let plot_h = h - TOP - bottom;
    let plot_w = W - LEFT - RIGHT;
    let n = axis.buckets.max(1);
    let totals: Vec<u64> = (0..n)
        .map(|i| {
            stacks
                .iter()
                .map(|s| s.values.get(i).copied().unwrap_or(0))
                .sum()
        })
        .collect();
    let top = nice(totals.iter().copied().max().unwrap_or(0) as f64);
    let mut s = String::new();
    let legend_rows = stacks.len().div_ceil(5);
    let total_h = h + 8.0 + 18.0 * legend_rows as f64;
    let _ = write!(
        s,
        r#"<svg class="plot" viewBox="0 0 {W} {total_h}" width="100%" role="img" xmlns="http://www.w3.org/2000/svg">"#
    );
    // Grid and y axis.
    for k in 0..=4 {
        let v = top * k as f64 / 4.0;
        let y = TOP + plot_h - plot_h * k as f64 / 4.0;
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end" class="tick">{}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            esc(&fmt(v))
        );
    }
    let bw = plot_w / n as f64;
    for i in 0..n {
        let x = LEFT + bw * i as f64;
        let mut y = TOP + plot_h;
        let t0 = axis.start_ns + axis.width_ns * i as i128;
        for (j, st) in stacks.iter().enumerate() {
            let v = st.values.get(i).copied().unwrap_or(0);
            if v == 0 {
                continue;
            }
            let bh = plot_h * v as f64 / top;
            y -= bh;
            let _ = write!(
                s,
                r#"<rect x="{:.2}" y="{y:.2}" width="{:.2}" height="{bh:.2}" fill="{}"><title>{} at {}: {}</title></rect>"#,
                x + bw * 0.1,
                (bw * 0.8).max(0.5),
                color(j, stacks.len()),
                esc(&st.label),
                esc(&time_of_day(t0, axis.width_ns)),
                esc(&fmt(v as f64))
            );
        }
    }
    // X axis: about six labels.
    let step = n.div_ceil(6).max(1);
    for i in (0..=n).step_by(step) {
        let x = LEFT + bw * i as f64;
        let t = axis.start_ns + axis.width_ns * i as i128;
        let _ = write!(
            s,
            r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#888"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" class="tick">{}</text>"##,
            TOP + plot_h,
            TOP + plot_h + 5.0,
            TOP + plot_h + 18.0,
            esc(&time_of_day(t, axis.width_ns))
        );
    }
    let _ = write!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" class="tick">UTC time (one bar: {})</text>"#,
        LEFT + plot_w / 2.0,
        TOP + plot_h + 34.0,
        esc(&seconds(axis.width_ns as f64))
    );
    legend(&mut s, stacks.iter().map(|st| st.label.as_str()), h + 8.0);
    s.push_str("</svg>");
    s
}

fn color(j: usize, n: usize) -> &'static str {
    if j + 1 == n && n == COLORS.len() {
        COLORS[COLORS.len() - 1]
    } else {
        COLORS[j % (COLORS.len() - 1)]
    }
}

fn legend<'a>(s: &mut String, labels: impl ExactSizeIterator<Item = &'a str>, y0: f64) {
    let n = labels.len();
    for (j, label) in labels.enumerate() {
        let x = LEFT + (j % 5) as f64 * 180.0;
        let y = y0 + (j / 5) as f64 * 18.0;
        let _ = write!(
            s,
            r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{y:.1}" class="legend">{}</text>"#,
            y - 10.0,
            color(j, n),
            x + 16.0,
            esc(label)
        );
    }
}

/// Latency percentiles, one row per API: bars to p50, p90 and p99 (darker to lighter) and a
/// tick at the maximum, on a log scale in milliseconds.
pub fn latency(rows: &[(String, [f64; 4])]) -> String {
    let row_h = 22.0;
    let left = 190.0;
    let bottom = 48.0;
    let h = TOP + row_h * rows.len() as f64 + bottom;
    let plot_w = W - left - RIGHT;
    let floor = 1e-3;
    let lo = rows
        .iter()
        .map(|r| r.1[0].max(floor))
        .fold(f64::INFINITY, f64::min);
    let hi = rows.iter().map(|r| r.1[3].max(floor)).fold(floor, f64::max);
    let lo_exp = if lo.is_finite() {
        lo.log10().floor()
    } else {
        -3.0
    };
    let hi_exp = hi.log10().ceil().max(lo_exp + 1.0);
    let x_of = |ms: f64| left + plot_w * (ms.max(floor).log10() - lo_exp) / (hi_exp - lo_exp);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="plot" viewBox="0 0 {W} {h:.0}" width="100%" role="img" xmlns="http://www.w3.org/2000/svg">"#
    );
    let plot_bottom = TOP + row_h * rows.len() as f64;
    let mut e = lo_exp;
    while e <= hi_exp {
        let ms = 10f64.powf(e);
        let x = x_of(ms);
        let label = if ms >= 1.0 {
            format!("{ms:.0} ms")
        } else {
            format!("{ms} ms")
        };
        let _ = write!(
            s,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{plot_bottom:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" class="tick">{}</text>"##,
            plot_bottom + 14.0,
            esc(&label)
        );
        e += 1.0;
    }
    let names = ["p50", "p90", "p99", "max"];
    for (i, (label, q)) in rows.iter().enumerate() {
        let y = TOP + row_h * i as f64;
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end" class="tick">{}</text>"#,
            left - 6.0,
            y + 15.0,
            esc(label)
        );
        // Widest first, so the narrower bars are drawn over them.
        for k in (0..3).rev() {
            let _ = write!(
                s,
                r#"<rect x="{left}" y="{:.1}" width="{:.2}" height="14" fill="{}"><title>{} {}: {:.3} ms</title></rect>"#,
                y + 4.0,
                (x_of(q[k]) - left).max(1.0),
                COLORS[k],
                esc(label),
                names[k],
                q[k]
            );
        }
        let xm = x_of(q[3]);
        let _ = write!(
            s,
            r##"<line x1="{xm:.1}" y1="{:.1}" x2="{xm:.1}" y2="{:.1}" stroke="#333" stroke-width="2"><title>{} max: {:.3} ms</title></line>"##,
            y + 2.0,
            y + 20.0,
            esc(label),
            q[3]
        );
    }
    let _ = write!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" class="tick">request to response, milliseconds (log scale)</text>"#,
        left + plot_w / 2.0,
        plot_bottom + 30.0
    );
    let ly = plot_bottom + 44.0;
    for (k, name) in names.iter().enumerate() {
        let x = left + k as f64 * 90.0;
        let fill = if k == 3 { "#333" } else { COLORS[k] };
        let _ = write!(
            s,
            r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{fill}"/><text x="{:.1}" y="{ly:.1}" class="legend">{name}</text>"#,
            ly - 10.0,
            x + 16.0
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped_in_plots() {
        let v = [1u64, 2];
        let svg = stacked_bars(
            &[Stack {
                label: "<script>x</script>".into(),
                values: &v,
            }],
            Axis {
                start_ns: 0,
                width_ns: 1_000_000,
                buckets: 2,
            },
            |v| format!("{v}"),
        );
        assert!(!svg.contains("<script>"), "{svg}");
        assert!(svg.contains("&lt;script&gt;"));
        let svg = latency(&[("<b>".into(), [0.0, 1.0, 2.0, 3.0])]);
        assert!(!svg.contains("<b>") && svg.contains("&lt;b&gt;"));
    }

    #[test]
    fn nice_bounds() {
        assert_eq!(nice(0.0), 1.0);
        assert_eq!(nice(7.0), 10.0);
        assert_eq!(nice(120.0), 200.0);
        assert_eq!(nice(5.0), 5.0);
    }
}
