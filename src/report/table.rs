//! Plain-text tables as the terminal prints them (the suite and sweep tables): one number
//! format per column, and columns aligned with two spaces between them.

/// One table column of metric values, formatted alike: whole numbers bare if every value
/// is whole, else 3 decimals if every value is below 1, else 2 decimals; `-` when missing.
pub(crate) fn fmt_column(values: &[Option<f64>]) -> Vec<String> {
    let finite = || values.iter().flatten().filter(|v| v.is_finite());
    let whole = finite().all(|v| v.fract() == 0.0 && v.abs() < 1e15);
    let small = finite().all(|v| v.abs() < 1.0);
    let cell = |v: f64| match () {
        _ if !v.is_finite() => format!("{v}"),
        _ if whole => format!("{v:.0}"),
        _ if small => format!("{v:.3}"),
        _ => format!("{v:.2}"),
    };
    values
        .iter()
        .map(|v| v.map_or_else(|| "-".into(), cell))
        .collect()
}

/// Lay out `rows` (first row = header) as aligned columns separated by two spaces; the
/// first column is left-aligned, the others right-aligned. No trailing spaces.
pub(crate) fn align(rows: &[Vec<String>], left: &[bool]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width = |c: usize| {
        rows.iter()
            .filter_map(|r| r.get(c))
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..cols).map(width).collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            if c > 0 {
                line.push_str("  ");
            }
            if left.get(c).copied().unwrap_or(false) {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
