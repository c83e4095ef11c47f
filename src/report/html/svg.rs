//! Small SVG chart primitives: linear and row axes with nice ticks, line series with
//! markers, curves, dots, horizontal spans, shaded bands and labelled reference lines.
//!
//! Pure string building. Every coordinate goes through [`coord`], so a non-finite value
//! never reaches the output (the element is skipped, never drawn at 0), and every piece of
//! text goes through [`esc`]. Data marks carry class `mark` (the layout self-check counts
//! them); axes, grid, bands and reference lines do not.

mod axis;
mod rows;
mod scale;

use std::fmt::Write as _;

pub use axis::{Axis, RowAxis};
pub use scale::{
    coord, ellipsize_middle, esc, fmt_num, label, nice_ticks, step_decimals, text_width,
};

/// Chart width in SVG user units (the figure scales it to the page).
pub const WIDTH: f64 = 720.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 28.0;
/// Row labels longer than this are shortened in the middle (full name on hover).
pub const ROW_LABEL_CHARS: usize = 24;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 42.0;

enum YAxis {
    Linear(Axis),
    Rows(RowAxis),
}

/// An SVG chart under construction: a frame with axes plus marks added in order.
pub struct Plot {
    left: f64,
    kind: String,
    title: String,
    height: f64,
    x: Axis,
    y: YAxis,
    /// Row labels sit this far below their row's middle (dot plots: level with the dots).
    row_label_dy: f64,
    body: String,
}

impl Plot {
    /// A chart with linear x and y axes; `kind` becomes `data-chart`.
    pub fn linear(kind: &str, title: &str, x: Axis, y: Axis) -> Plot {
        Plot::build(kind, title, 260.0, x, YAxis::Linear(y))
    }

    /// A chart with a linear x axis and one horizontal row of `row_px` units per label
    /// (timelines); the plot area is capped at 660 units, so many rows get thinner.
    pub fn rows(kind: &str, title: &str, x: Axis, rows: RowAxis, row_px: f64) -> Plot {
        let h = (rows.labels.len() as f64 * row_px).clamp(60.0, 660.0) + TOP + BOTTOM;
        Plot::build(kind, title, h, x, YAxis::Rows(rows))
    }

    /// A dot plot: one row per label, each with a strip for percentile-mark labels on
    /// top and its dots below (see [`Plot::row_dot`], [`Plot::row_mark`]); row labels
    /// line up with the dots.
    pub fn dot_rows(kind: &str, title: &str, x: Axis, rows: RowAxis) -> Plot {
        let mut p = Plot::rows(kind, title, x, rows, 84.0);
        p.row_label_dy = rows::MARK_STRIP / 2.0;
        p
    }

    fn build(kind: &str, title: &str, height: f64, x: Axis, y: YAxis) -> Plot {
        // Room for the row labels (shortened to ROW_LABEL_CHARS) left of the plot.
        let left = match &y {
            YAxis::Rows(r) => r
                .labels
                .iter()
                .map(|l| text_width(&ellipsize_middle(l, ROW_LABEL_CHARS)) + 30.0)
                .fold(LEFT, f64::max),
            YAxis::Linear(_) => LEFT,
        };
        Plot {
            left,
            kind: kind.to_string(),
            title: title.to_string(),
            height,
            x,
            y,
            row_label_dy: 0.0,
            body: String::new(),
        }
    }

    /// Where x value `v` lands, in SVG units from the chart's left edge (for laying out
    /// marks that must not overlap, such as dot-plot dots).
    pub fn x_px(&self, v: f64) -> f64 {
        self.sx(v)
    }

    fn sx(&self, v: f64) -> f64 {
        let span = self.x.hi - self.x.lo;
        self.left
            + (v - self.x.lo) / if span > 0.0 { span } else { 1.0 } * (WIDTH - self.left - RIGHT)
    }

    fn sy(&self, v: f64) -> f64 {
        let (lo, hi) = match &self.y {
            YAxis::Linear(a) => (a.lo, a.hi),
            YAxis::Rows(_) => (0.0, 1.0),
        };
        let span = hi - lo;
        self.height - BOTTOM - (v - lo) / if span > 0.0 { span } else { 1.0 } * self.plot_h()
    }

    fn plot_h(&self) -> f64 {
        self.height - TOP - BOTTOM
    }

    /// Top y and height of row `idx`'s band.
    fn row_band(&self, idx: usize) -> (f64, f64) {
        let n = match &self.y {
            YAxis::Rows(r) => r.labels.len().max(1),
            YAxis::Linear(_) => 1,
        };
        let h = self.plot_h() / n as f64;
        (TOP + idx as f64 * h, h)
    }

    /// A line through `points` with a marker per point; a non-finite point breaks the line
    /// (it is skipped, never drawn as 0). `series` picks the colour class `s<series % 8>`.
    pub fn line(&mut self, points: &[(f64, f64)], series: usize, name: &str) {
        let d = self.path_d(points);
        let dots = self.dots(points, name);
        if !d.is_empty() {
            let _ = write!(
                self.body,
                r#"<g class="s{}"><path class="mark line" d="{d}"/>{dots}</g>"#,
                series % 8
            );
        }
    }

    /// A line through `points` without markers (many points: a percentile curve, a long
    /// time series), dashed when `dashed`; non-finite points break it as in [`Plot::line`].
    pub fn curve(&mut self, points: &[(f64, f64)], series: usize, name: &str, dashed: bool) {
        let d = self.path_d(points);
        if !d.is_empty() {
            let _ = write!(
                self.body,
                r#"<g class="s{}"><path class="mark line{}" d="{d}"><title>{}</title></path></g>"#,
                series % 8,
                if dashed { " dash" } else { "" },
                esc(name)
            );
        }
    }

    /// A marker per finite point, no line (values too few to draw a curve through):
    /// each `(x, y, tooltip)`; `hollow` rings tell a second series of one colour apart
    /// (p99 beside p50).
    pub fn points(&mut self, points: &[(f64, f64, String)], series: usize, hollow: bool) {
        let mut dots = String::new();
        for (x, y, tip) in points {
            if let (Some(px), Some(py)) = (coord(self.sx(*x)), coord(self.sy(*y))) {
                let _ = write!(
                    dots,
                    r#"<circle class="mark dot{}" cx="{px}" cy="{py}" r="3.5"><title>{}</title></circle>"#,
                    if hollow { " hollow" } else { "" },
                    esc(tip)
                );
            }
        }
        if !dots.is_empty() {
            let _ = write!(self.body, r#"<g class="s{}">{dots}</g>"#, series % 8);
        }
    }

    /// SVG path data through the finite points, a new sub-path after each gap.
    fn path_d(&self, points: &[(f64, f64)]) -> String {
        let mut d = String::new();
        let mut pen_down = false;
        for &(x, y) in points {
            let (Some(px), Some(py)) = (coord(self.sx(x)), coord(self.sy(y))) else {
                pen_down = false;
                continue;
            };
            let _ = write!(d, "{}{px} {py} ", if pen_down { "L" } else { "M" });
            pen_down = true;
        }
        d.trim_end().to_string()
    }

    /// One `<circle class="mark dot">` per finite point, titled `name (x, y)`.
    fn dots(&self, points: &[(f64, f64)], name: &str) -> String {
        let mut dots = String::new();
        for &(x, y) in points {
            if let (Some(px), Some(py)) = (coord(self.sx(x)), coord(self.sy(y))) {
                let _ = write!(
                    dots,
                    r#"<circle class="mark dot" cx="{px}" cy="{py}" r="3"><title>{} ({}, {})</title></circle>"#,
                    esc(name),
                    fmt_num(x, 3),
                    fmt_num(y, 3)
                );
            }
        }
        dots
    }

    /// One highlighted marker at (`x`, `y`) with a tooltip (class `hl`).
    pub fn highlight(&mut self, x: f64, y: f64, tip: &str) {
        if let (Some(px), Some(py)) = (coord(self.sx(x)), coord(self.sy(y))) {
            let _ = write!(
                self.body,
                r#"<circle class="mark hl" cx="{px}" cy="{py}" r="7"><title>{}</title></circle>"#,
                esc(tip)
            );
        }
    }

    /// A ring marking a failed point at (`x`, `y`) with a tooltip (class `fail`).
    pub fn fail_marker(&mut self, x: f64, y: f64, tip: &str) {
        if let (Some(px), Some(py)) = (coord(self.sx(x)), coord(self.sy(y))) {
            let _ = write!(
                self.body,
                r#"<circle class="mark fail" cx="{px}" cy="{py}" r="5"><title>{}</title></circle>"#,
                esc(tip)
            );
        }
    }

    /// A dashed amber ring marking an inconclusive point (the generator bound it, or it
    /// never reached its load) at (`x`, `y`) with a tooltip (class `warn`).
    pub fn warn_marker(&mut self, x: f64, y: f64, tip: &str) {
        if let (Some(px), Some(py)) = (coord(self.sx(x)), coord(self.sy(y))) {
            let _ = write!(
                self.body,
                r#"<circle class="mark warn" cx="{px}" cy="{py}" r="6"><title>{}</title></circle>"#,
                esc(tip)
            );
        }
    }

    /// A small text label just above and right of the point (`x`, `y`) (not a mark);
    /// right-anchored near the chart's right edge so it stays inside.
    pub fn point_label(&mut self, x: f64, y: f64, text: &str) {
        let (Some(px), Some(py)) = (coord(self.sx(x)), coord(self.sy(y) - 7.0)) else {
            return;
        };
        let (dx, anchor) = if self.sx(x) + 8.0 + text_width(text) > WIDTH - 4.0 {
            (-6.0, "end")
        } else {
            (6.0, "start")
        };
        let _ = write!(
            self.body,
            r#"<text class="pt-label" x="{px}" y="{py}" dx="{dx}" text-anchor="{anchor}">{}</text>"#,
            esc(text)
        );
    }

    /// A vertical bar centred on `x`, `half` x units either side, from `y0` up to `y1`,
    /// styled by `class` (e.g. `s2`), with a tooltip; skipped when an edge is not finite
    /// or the bar is empty.
    pub fn bar(&mut self, x: f64, half: f64, (y0, y1): (f64, f64), class: &str, tip: &str) {
        let (a, b) = (self.sx(x - half), self.sx(x + half));
        let (top, bottom) = (self.sy(y1.max(y0)), self.sy(y0.min(y1)));
        let (Some(px), Some(w), Some(py), Some(h), true) = (
            coord(a),
            coord(b - a),
            coord(top),
            coord(bottom - top),
            bottom > top,
        ) else {
            return;
        };
        let _ = write!(
            self.body,
            r#"<rect class="mark bar {}" x="{px}" y="{py}" width="{w}" height="{h}"><title>{}</title></rect>"#,
            esc(class),
            esc(tip)
        );
    }

    /// A dashed horizontal reference line at `y` with a label (not a mark).
    pub fn hline(&mut self, y: f64, label: &str) {
        self.hline_class(y, label, "");
    }

    /// [`Plot::hline`] with `class` added to the line and label classes (e.g. `cap`).
    pub fn hline_class(&mut self, y: f64, label: &str, class: &str) {
        let Some(py) = coord(self.sy(y)) else { return };
        let cls = if class.is_empty() {
            String::new()
        } else {
            format!(" {}", esc(class))
        };
        let _ = write!(
            self.body,
            r#"<line class="ref{cls}" x1="{}" x2="{}" y1="{py}" y2="{py}"/><text class="ref-label{cls}" x="{}" y="{}" text-anchor="end">{}</text>"#,
            self.left,
            WIDTH - RIGHT,
            WIDTH - RIGHT - 4.0,
            coord((self.sy(y) - 4.0).max(TOP + 10.0)).unwrap_or_default(),
            self.fit_label(label, WIDTH - RIGHT - self.left - 8.0)
        );
    }

    /// A dashed vertical reference line at `x` with a label (not a mark); `class` is added
    /// to the line and label classes (e.g. `cap` for a capacity line).
    /// The label goes right of the line, or left of it when it would overrun the chart.
    pub fn vline(&mut self, x: f64, label: &str, class: &str) {
        let Some(px) = coord(self.sx(x)) else { return };
        let cls = esc(class);
        let at = self.sx(x);
        let right_room = WIDTH - 4.0 - (at + 4.0);
        let left_room = at - 4.0 - 4.0;
        let (lx, anchor, room) = if text_width(label) <= right_room || right_room >= left_room {
            (at + 4.0, "start", right_room)
        } else {
            (at - 4.0, "end", left_room)
        };
        let _ = write!(
            self.body,
            r#"<line class="ref {cls}" x1="{px}" x2="{px}" y1="{TOP}" y2="{}"/><text class="ref-label {cls}" x="{}" y="{}" text-anchor="{anchor}">{}</text>"#,
            coord(self.height - BOTTOM).unwrap_or_default(),
            coord(lx).unwrap_or_default(),
            TOP + 24.0,
            self.fit_label(label, room)
        );
    }

    /// `text` shortened in the middle to fit `room` units (full text on hover), escaped.
    fn fit_label(&self, text: &str, room: f64) -> String {
        label(text, (room / 7.0).max(3.0) as usize)
    }

    /// The finished `<svg class="chart">` element.
    pub fn finish(self) -> String {
        let mut s = String::new();
        let h = coord(self.height).unwrap_or_default();
        let _ = write!(
            s,
            r#"<svg class="chart" data-chart="{}" viewBox="0 0 {WIDTH} {h}" role="img" aria-label="{}" xmlns="http://www.w3.org/2000/svg">"#,
            esc(&self.kind),
            esc(&self.title)
        );
        s.push_str(&self.axes());
        s.push_str(&self.body);
        s.push_str("</svg>");
        s
    }

    fn axes(&self) -> String {
        let mut s = String::from(r#"<g class="axes">"#);
        let (y0, y1) = (TOP, self.height - BOTTOM);
        for (t, tick) in &self.x.ticks {
            let Some(px) = coord(self.sx(*t)) else {
                continue;
            };
            let _ = write!(
                s,
                r#"<line class="grid" x1="{px}" x2="{px}" y1="{y0}" y2="{}"/><text x="{px}" y="{}" text-anchor="middle">{}</text>"#,
                coord(y1).unwrap_or_default(),
                coord(y1 + 14.0).unwrap_or_default(),
                esc(tick)
            );
        }
        let _ = write!(
            s,
            r#"<text class="axis-title" x="{}" y="{}" text-anchor="middle">{}</text>"#,
            coord((self.left + WIDTH - RIGHT) / 2.0).unwrap_or_default(),
            coord(self.height - 6.0).unwrap_or_default(),
            self.fit_label(&self.x.title, WIDTH - self.left - RIGHT)
        );
        match &self.y {
            YAxis::Linear(a) => {
                for (t, tick) in &a.ticks {
                    let Some(py) = coord(self.sy(*t)) else {
                        continue;
                    };
                    let _ = write!(
                        s,
                        r#"<line class="grid" x1="{}" x2="{}" y1="{py}" y2="{py}"/><text x="{}" y="{py}" dy="0.32em" text-anchor="end">{}</text>"#,
                        self.left,
                        WIDTH - RIGHT,
                        self.left - 6.0,
                        esc(tick)
                    );
                }
                s.push_str(&y_title(&a.title, self.height, self.plot_h()));
            }
            YAxis::Rows(r) => {
                let step = (r.labels.len() / 40).max(1);
                for (i, label) in r.labels.iter().enumerate().filter(|(i, _)| i % step == 0) {
                    let (top, h) = self.row_band(i);
                    let _ = write!(
                        s,
                        r#"<text x="{}" y="{}" dy="0.32em" text-anchor="end">{}</text>"#,
                        self.left - 6.0,
                        coord(top + h / 2.0 + self.row_label_dy).unwrap_or_default(),
                        scale::label(label, ROW_LABEL_CHARS)
                    );
                }
                s.push_str(&y_title(&r.title, self.height, self.plot_h()));
            }
        }
        let _ = write!(
            s,
            r#"<path class="frame" d="M{} {TOP} V{} H{}"/></g>"#,
            self.left,
            coord(y1).unwrap_or_default(),
            WIDTH - RIGHT
        );
        s
    }
}

fn y_title(title: &str, height: f64, room: f64) -> String {
    if title.is_empty() {
        return String::new();
    }
    let cy = coord((TOP + height - BOTTOM) / 2.0).unwrap_or_default();
    format!(
        r#"<text class="axis-title" x="12" y="{cy}" text-anchor="middle" transform="rotate(-90 12 {cy})">{}</text>"#,
        label(title, ((room + BOTTOM) / 7.5) as usize)
    )
}

#[cfg(test)]
#[path = "svg_tests.rs"]
mod tests;
