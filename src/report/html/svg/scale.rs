//! Numbers and text for the SVG primitives: XML escaping, finite-checked coordinates,
//! number formatting and nice tick generation. No SVG elements here.

/// XML-escape `s` for use in text content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
            c => out.push(c),
        }
    }
    out
}

/// `s` cut to at most `max` characters with an ellipsis in the middle (the start and the
/// end of a name are what tell names apart), or `s` itself when it fits.
pub fn ellipsize_middle(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max || max < 3 {
        return s.to_string();
    }
    let keep = max - 1;
    let head = keep.div_ceil(2);
    let tail = keep - head;
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

/// Estimated width in SVG units of `s` at the 11–12 px chart font (generous, so a label
/// placed by it never overruns).
pub fn text_width(s: &str) -> f64 {
    s.chars().count() as f64 * 7.0
}

/// A `<text>` body: the label shortened to `max` characters, with the full text as a
/// `<title>` (hover) when it was shortened. Escaped.
pub fn label(s: &str, max: usize) -> String {
    let short = ellipsize_middle(s, max);
    if short == s {
        esc(s)
    } else {
        format!("<title>{}</title>{}", esc(s), esc(&short))
    }
}

/// A coordinate as text with two decimals, or `None` when `v` is not finite.
pub fn coord(v: f64) -> Option<String> {
    if !v.is_finite() {
        return None;
    }
    let r = (v * 100.0).round() / 100.0;
    // Normalise -0.00 so equal inputs always print the same bytes.
    let r = if r == 0.0 { 0.0 } else { r };
    Some(format!("{r:.2}"))
}

/// A human number: up to `decimals` decimals, trailing zeros trimmed; "–" if not finite.
pub fn fmt_num(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" { "0".into() } else { s }
}

/// "Nice" tick values (steps of 1, 2 or 5 × 10^k) covering `[lo, hi]` with at most about
/// `max_ticks` ticks. The first tick is ≤ `lo` and the last ≥ `hi`. Non-finite bounds give
/// no ticks, and so does a range that would need more than 1000 ticks (overflow); an
/// empty range is widened around its value without crossing zero (all zeros: `[0, 1]`,
/// never `[-1, 1]`), so an axis of non-negative values never shows negative ones.
pub fn nice_ticks(lo: f64, hi: f64, max_ticks: usize) -> Vec<f64> {
    if !lo.is_finite() || !hi.is_finite() {
        return Vec::new();
    }
    let (mut lo, mut hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
    if hi - lo < f64::EPSILON * hi.abs().max(1.0) {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        (lo, hi) = if lo > 0.0 || (lo == 0.0 && hi >= 0.0) {
            ((lo - pad).max(0.0), hi + pad)
        } else {
            (lo - pad, (hi + pad).min(0.0))
        };
    }
    let step = nice_step((hi - lo) / max_ticks.max(2) as f64);
    let first = (lo / step).floor();
    let last = (hi / step).ceil();
    let n = last - first;
    // Ranges too wide for f64 (e.g. ±1e308) or degenerate steps give no axis at all.
    if !n.is_finite() || !(0.0..=1000.0).contains(&n) {
        return Vec::new();
    }
    let n = n as usize;
    (0..=n)
        .map(|i| {
            let t = (first + i as f64) * step;
            // Snap float noise (0.30000000000000004) to the step's precision.
            let d = step_decimals(step) as i32;
            let m = 10f64.powi(d);
            let t = (t * m).round() / m;
            if t == 0.0 { 0.0 } else { t }
        })
        .collect()
}

/// Decimals needed to print ticks of `step` exactly.
pub fn step_decimals(step: f64) -> usize {
    if !step.is_finite() || step <= 0.0 || step >= 1.0 {
        return 0;
    }
    (-step.log10().floor()).clamp(0.0, 9.0) as usize
}

fn nice_step(raw: f64) -> f64 {
    if !raw.is_finite() || raw <= 0.0 {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}
