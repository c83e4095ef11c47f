//! Charts as data: what a workload wants drawn, declared next to its metric families and
//! carried in every result as `rtload.charts`, so the HTML report draws any workload's
//! result without knowing the workload.
//!
//! Three kinds of chart, each reading one generic block of the result:
//!
//! * [`Draw::Distribution`]: a percentile (or dot) plot of a declared distribution,
//!   its raw values from `rtload.distributions`, with an optional reference line at
//!   another metric's value (`rtload.metrics`, e.g. a deadline);
//! * [`Draw::SessionSeries`]: one line per session from the rows of
//!   `rtload.session_series` ([`SeriesRow`]) that name the chart's series, with an
//!   optional horizontal reference at a metric's value and a shaded band;
//! * [`Draw::Timeline`]: one row per session from `rtload.timeline` ([`TimelineRow`]):
//!   its extent (red when it failed) and its spans, each kind on its declared lane.
//!
//! A catalogue plots every distribution by default ([`default_charts`]); a workload
//! declares the others, and any distribution chart it wants drawn differently.

use serde::{Deserialize, Serialize};

/// The key (under `rtload`) of the chart declarations.
pub const CHARTS_KEY: &str = "charts";
/// The key (under `rtload`) of the per-session series rows ([`SeriesRow`]).
pub const SESSION_SERIES_KEY: &str = "session_series";
/// The key (under `rtload`) of the session timeline rows ([`TimelineRow`]).
pub const TIMELINE_KEY: &str = "timeline";

/// One chart a result asks to be drawn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chart {
    /// Names the chart across results (the comparison overlays charts of one id).
    pub id: String,
    /// What it shows, for people (the caption opens with it).
    pub title: String,
    /// What is drawn, from which block.
    #[serde(flatten)]
    pub draw: Draw,
}

/// What a [`Chart`] draws.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Draw {
    /// The values of distribution `distribution` (`rtload.distributions`).
    Distribution {
        /// The distribution's name (a catalogue family of [`super::Merge::Distribution`]).
        distribution: String,
        /// A labelled vertical line at a metric's value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reference: Option<Reference>,
    },
    /// One line per session: the `rtload.session_series` rows whose `series` is this.
    SessionSeries {
        /// The series name the rows carry.
        series: String,
        /// The x axis.
        x: Scale,
        /// The y axis.
        y: Scale,
        /// A labelled horizontal line at a metric's value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reference: Option<Reference>,
        /// The label of the shaded band from the left edge to a row's `band_to_x` (e.g.
        /// warm-up points left out of the steady state).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        band: Option<String>,
    },
    /// The session timeline: `rtload.timeline` rows.
    Timeline {
        /// Lane names, top to bottom; each row's extent fills lane 0.
        lanes: Vec<String>,
        /// The span kinds, in drawing order (later ones on top) and legend order.
        kinds: Vec<SpanKind>,
    },
}

/// A reference line at the value of metric `metric` (`rtload.metrics`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// The flat metric whose value is drawn.
    pub metric: String,
    /// Its label on the chart (`deadline`).
    pub label: String,
}

/// An axis of a [`Draw::SessionSeries`] chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scale {
    /// What the axis measures.
    pub label: String,
    /// Unit (`""` for none).
    #[serde(default)]
    pub unit: String,
    /// Whole numbers only (an index).
    #[serde(default)]
    pub integer: bool,
}

/// One span kind of a [`Draw::Timeline`] chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpanKind {
    /// The `kind` spans carry.
    pub kind: String,
    /// The legend label.
    pub label: String,
    /// The lane (index into the chart's lanes).
    pub lane: usize,
}

/// One session's line of a [`Draw::SessionSeries`] chart (a row of
/// `rtload.session_series`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesRow {
    /// The series (chart) it belongs to.
    pub series: String,
    /// The run-wide session number.
    pub session: usize,
    /// `[x, y]` points in x order.
    pub points: Vec<(f64, f64)>,
    /// The chart's band reaches this x, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band_to_x: Option<f64>,
}

/// One row of the session timeline (`rtload.timeline`), times in seconds since the run
/// started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineRow {
    /// The run-wide session number ("session N").
    pub session: Option<usize>,
    /// A further name shown after the number (a case name), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Connect start.
    pub start_s: f64,
    /// The session's end.
    pub end_s: f64,
    /// The failure message, when the session failed.
    pub error: Option<String>,
    /// The spans inside (or before) the extent.
    pub spans: Vec<Span>,
}

/// A span of a [`TimelineRow`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Span {
    /// Its kind (a [`SpanKind::kind`] of the chart).
    pub kind: String,
    /// What it is, for the tooltip.
    pub label: String,
    /// Start, seconds since the run started.
    pub start_s: f64,
    /// End (not before the start).
    pub end_s: f64,
}

impl Span {
    /// A span of `kind` from `start_s` to `end_s` (an end before the start is the start).
    pub fn new(kind: &str, label: &str, start_s: f64, end_s: f64) -> Self {
        Self {
            kind: kind.into(),
            label: label.into(),
            start_s,
            end_s: end_s.max(start_s),
        }
    }
}

/// The kind of the span [`queue_span`] makes.
pub const QUEUE_KIND: &str = "queue";

/// The [`SpanKind`] of [`queue_span`] on `lane`.
pub fn queue_kind(lane: usize) -> SpanKind {
    SpanKind {
        kind: QUEUE_KIND.into(),
        label: "queue wait (released → started)".into(),
        lane,
    }
}

/// The generator's part of a sample's timeline: the wait for a slot, from its release
/// by the arrival plan to its connect start.
pub fn queue_span<O>(s: &crate::workload::SampleRecord<O>) -> Span {
    Span::new(
        QUEUE_KIND,
        &format!("queue wait {:.3} ms", s.queue_wait_s * 1000.0),
        s.scheduled_s,
        s.started_s,
    )
}

/// The timeline row of measured sample `s` with `spans` (its session number, connect
/// start to end, and its failure message if it failed).
pub fn timeline_row<O>(s: &crate::workload::SampleRecord<O>, spans: Vec<Span>) -> TimelineRow {
    TimelineRow {
        session: s.session,
        label: None,
        start_s: s.started_s,
        end_s: s.ended_s,
        error: s.outcome.as_ref().err().map(|f| f.message.clone()),
        spans,
    }
}

/// The one chart of a kind whose metrics are declared at run time (scripted, replay)
/// besides a plot of each: the session timeline (each session's queue wait and extent,
/// failures in red).
pub fn session_timeline() -> Vec<Chart> {
    vec![timeline(
        "Session timeline: one row per measured session",
        &["session"],
        Vec::new(),
    )]
}

/// A timeline chart with lane 0 the session and the queue wait before it, and `kinds`
/// on `lanes` below.
pub fn timeline(title: &str, lanes: &[&str], kinds: Vec<SpanKind>) -> Chart {
    let mut all = vec![queue_kind(0)];
    all.extend(kinds);
    Chart {
        id: TIMELINE_KEY.into(),
        title: title.into(),
        draw: Draw::Timeline {
            lanes: lanes.iter().map(|l| (*l).to_string()).collect(),
            kinds: all,
        },
    }
}

/// A distribution chart of `name` (id `name`, titled by it).
pub fn distribution(name: &str, reference: Option<Reference>) -> Chart {
    Chart {
        id: name.into(),
        title: name.into(),
        draw: Draw::Distribution {
            distribution: name.into(),
            reference,
        },
    }
}

/// `declared`, then a distribution chart for each of `distributions` no declared chart
/// plots: every distribution is drawn by default.
pub fn default_charts(declared: &[Chart], distributions: &[String]) -> Vec<Chart> {
    let mut out = declared.to_vec();
    for d in distributions {
        let plotted = declared.iter().any(
            |c| matches!(&c.draw, Draw::Distribution { distribution, .. } if distribution == d),
        );
        if !plotted {
            out.push(distribution(d, None));
        }
    }
    out
}

impl super::Catalogue {
    /// Declare the workload's charts: drawn in this order, followed by a distribution
    /// plot of every distribution none of them plots.
    pub fn with_charts(mut self, charts: Vec<Chart>) -> Self {
        self.charts = Some(charts);
        self
    }

    /// Every chart a result of this catalogue gets: the declared ones, then a
    /// distribution plot of each other distribution (written as `rtload.charts`).
    pub fn charts(&self) -> Vec<Chart> {
        default_charts(self.charts.as_deref().unwrap_or(&[]), &self.distributions())
    }

    /// Whether charts were declared (or read from a result's `rtload.charts`).
    pub fn declares_charts(&self) -> bool {
        self.charts.is_some()
    }
}

/// The charts a result document declares (`rtload.charts`; a merged result's repeats
/// of one id read once, a chart this version cannot read left out), `None` when it has
/// no such block.
pub fn of_result(doc: &serde_json::Value) -> Option<Vec<Chart>> {
    let list = doc.get("rtload")?.get(CHARTS_KEY)?.as_array()?;
    let mut out: Vec<Chart> = Vec::new();
    for c in list {
        let Ok(c) = serde_json::from_value::<Chart>(c.clone()) else {
            continue;
        };
        if !out.iter().any(|o| o.id == c.id) {
            out.push(c);
        }
    }
    Some(out)
}

#[cfg(test)]
#[path = "chart_tests.rs"]
mod tests;
