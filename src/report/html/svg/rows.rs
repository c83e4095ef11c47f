//! Marks placed by region rather than at an (x, y) point: timeline spans in rows, the
//! dots and percentile marks of a dot plot (one row per series), and shaded x bands.

use std::fmt::Write as _;

use super::{Plot, TOP, WIDTH, coord, esc};

/// Height of the label strip at the top of a dot-plot row: one line per percentile mark.
pub const MARK_STRIP: f64 = 40.0;
/// Vertical distance between stacked dots of a dot plot.
pub const LANE_PX: f64 = 7.0;

impl Plot {
    /// A horizontal span `[x0, x1]` in row `row`, in lane `lane` of `lanes` stacked lanes,
    /// styled by `class`, with an optional tooltip. Zero-length spans get 1 unit of width so
    /// they stay visible; spans with a non-finite end are skipped.
    #[allow(clippy::too_many_arguments)]
    pub fn span(
        &mut self,
        row: usize,
        lane: usize,
        lanes: usize,
        x0: f64,
        x1: f64,
        class: &str,
        tip: &str,
    ) {
        let (top, h) = self.row_band(row);
        let lanes = lanes.max(1);
        let lane_h = h * 0.8 / lanes as f64;
        let y = top + h * 0.1 + lane.min(lanes - 1) as f64 * lane_h;
        let (a, b) = (self.sx(x0.min(x1)), self.sx(x0.max(x1)));
        let (Some(px), Some(w), Some(py), Some(ph)) = (
            coord(a),
            coord((b - a).max(1.0)),
            coord(y),
            coord((lane_h - 1.0).max(1.0)),
        ) else {
            return;
        };
        let _ = write!(
            self.body,
            r#"<rect class="mark span {}" x="{px}" y="{py}" width="{w}" height="{ph}"><title>{}</title></rect>"#,
            esc(class),
            esc(tip)
        );
    }

    /// A shaded background band over `[x0, x1]` with a label at its top (not a mark).
    pub fn band(&mut self, x0: f64, x1: f64, label: &str) {
        let (a, b) = (self.sx(x0.max(self.x.lo)), self.sx(x1.min(self.x.hi)));
        if let (Some(px), Some(w), Some(h), true) =
            (coord(a), coord(b - a), coord(self.plot_h()), b > a)
        {
            let _ = write!(
                self.body,
                r#"<rect class="band" x="{px}" y="{TOP}" width="{w}" height="{h}"/><text class="band-label" x="{}" y="{}">{}</text>"#,
                coord(a + 4.0).unwrap_or_default(),
                coord(TOP + self.plot_h() / 2.0).unwrap_or_default(),
                self.fit_label(label, WIDTH - 4.0 - (a + 4.0))
            );
        }
    }

    /// One dot of a dot plot ([`Plot::dot_rows`]) at `x` in row `row`, stacked in `lane`
    /// (0 on the row's centre line, then alternately above and below it, `LANE_PX`
    /// apart, kept inside the row), in colour `series`, with a tooltip.
    pub fn row_dot(&mut self, row: usize, x: f64, lane: usize, series: usize, tip: &str) {
        let (top, h) = self.row_band(row);
        let (lo, hi) = (top + MARK_STRIP + 4.0, top + h - 4.0);
        // The row's middle shifted by half the strip: where `dot_rows` puts the label.
        let centre = top + h / 2.0 + MARK_STRIP / 2.0;
        let step = lane.div_ceil(2) as f64 * LANE_PX;
        let y = if lane % 2 == 1 {
            centre - step
        } else {
            centre + step
        };
        let (Some(px), Some(py)) = (coord(self.sx(x)), coord(y.clamp(lo, hi))) else {
            return;
        };
        let _ = write!(
            self.body,
            r#"<circle class="mark dot s{}" cx="{px}" cy="{py}" r="3.5"><title>{}</title></circle>"#,
            series % 8,
            esc(tip)
        );
    }

    /// A percentile mark of a dot plot: a tick across row `row`'s dots at `x`, and
    /// `label` centred above it on text line `level` of the row's label strip (so marks
    /// close together never overwrite each other's labels), `tip` on hover. Not a data
    /// mark.
    pub fn row_mark(&mut self, row: usize, x: f64, level: usize, label: &str, tip: &str) {
        let (top, h) = self.row_band(row);
        let Some(px) = coord(self.sx(x)) else { return };
        let text_y = top + 11.0 + level.min(2) as f64 * 12.0;
        let _ = write!(
            self.body,
            r#"<line class="pmark" x1="{px}" x2="{px}" y1="{}" y2="{}"><title>{}</title></line><text class="pmark-label" x="{px}" y="{}" text-anchor="middle"><title>{}</title>{}</text>"#,
            coord(text_y + 3.0).unwrap_or_default(),
            coord(top + h - 2.0).unwrap_or_default(),
            esc(tip),
            coord(text_y).unwrap_or_default(),
            esc(tip),
            esc(label)
        );
    }
}
