//! Declared metrics: `ttft_ms = "first(transcription.delta) - mark(audio_start)"`.
//!
//! Grammar: `+ - * /` over `first(E)`, `last(E)`, `count(E)`, `gaps(E)`, `mark(M)`,
//! `lag(E, F)`, `repeats(E, F)`, `descents(E, F)`, numbers and parentheses, where `E` is
//! an event name (a declared `[workload.events]` name, a named `await`, or a message
//! `type` the scenario mentions), `F` a numeric field of that event (dotted for nested
//! ones) and `M` a mark name.
//!
//! Fields: `lag(E, F)` is, for each `E`, the audio the session had streamed when it
//! arrived (its audio cursor, ms) minus the audio time `F` says the result covers up to
//! (its transcript cursor, ms) — streaming lag as Deepgram and argmax OpenBench define it,
//! one value per event (a series, like `gaps`). `repeats(E, F)` counts the `E` whose `F`
//! an earlier `E` already had (e.g. two finals for one segment id); `descents(E, F)` the
//! `E` whose `F` is below the previous one's (ids out of order); `seen(E, F, G)` the `E`
//! whose `F` an earlier `G` had (a partial after its segment's final). An event without a
//! numeric `F` is not counted.
//! Each expression is typed at load: a timestamp minus a timestamp is a duration in ms, a
//! duration over a duration a ratio, `count` a number, `gaps` the inter-arrival times of
//! an event (one value per gap); a bare timestamp is refused. Parentheses nest at most
//! [`MAX_DEPTH`] deep, an expression has at most [`MAX_TERMS`] terms and [`MAX_LEN`]
//! bytes; it is kept in postfix order and evaluated with a value stack (no recursion).
//!
//! Windows: an expression that uses `mark(M)` is measured once per time `M` was marked
//! (one value per turn of a `repeat`), looking only at what was recorded after that mark,
//! up to the next time `M` was marked or the end of the mark's turn (its `repeat`
//! iteration), whichever comes first; "after" is the order things happened in the
//! session (a [`Record`]'s sequence numbers), so an event that ended the previous turn in
//! the same instant the mark was taken is not in the mark's window. A metric's `per = "M"`
//! sets the anchor explicitly (e.g. for `gaps`); without a mark the window is the whole
//! session. An event that never came makes the value absent, never zero (`count` is 0).

use std::collections::BTreeMap;

mod parse;
pub use parse::parse;

/// Deepest parenthesis nesting an expression may have.
pub const MAX_DEPTH: usize = 64;
/// Most terms (`first(E)`, `mark(M)`, numbers, ...) an expression may have.
pub const MAX_TERMS: usize = 1_000;
/// Longest expression, bytes.
pub const MAX_LEN: usize = 16 * 1024;

/// What an expression (or sub-expression) yields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A moment (ms since session start).
    Time,
    /// A duration in ms.
    Duration,
    /// A plain number (count, ratio).
    Number,
    /// Several durations per window (`gaps`).
    Series,
}

/// A leaf of an expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Atom {
    /// `first(E)`.
    First(String),
    /// `last(E)`.
    Last(String),
    /// `count(E)`.
    Count(String),
    /// `gaps(E)`.
    Gaps(String),
    /// `mark(M)`.
    Mark(String),
    /// `lag(E, F)`: audio cursor minus field `F`, per event.
    Lag(String, String),
    /// `repeats(E, F)`: events whose `F` an earlier one had.
    Repeats(String, String),
    /// `descents(E, F)`: events whose `F` is below the previous one's.
    Descents(String, String),
    /// `seen(E, F, G)`: events `e` whose `F` an earlier `g` had (`g_at`: the byte
    /// offset of `g` in the expression).
    Seen {
        /// The counted event.
        e: String,
        /// The field.
        f: String,
        /// The earlier event.
        g: String,
        /// Byte offset of `g`.
        g_at: usize,
    },
    /// A literal.
    Num(f64),
}

/// One postfix node: a leaf (with the byte offset of its name or number in the
/// expression text) or an operator applied to the two values before it.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A leaf at a byte offset.
    Atom(Atom, usize),
    /// One of `+ - * /`.
    Op(char),
}

/// A parsed expression, in postfix order (leaves keep their reading order).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Expr {
    /// The nodes.
    pub nodes: Vec<Node>,
}

/// A name an expression reads, where it is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameRef<'a> {
    /// The event or mark name.
    pub name: &'a str,
    /// Byte offset in the expression text.
    pub offset: usize,
    /// True for `mark(M)`, false for an event.
    pub mark: bool,
}

/// A syntax or type error at byte `offset` of the expression.
#[derive(Debug, Clone, PartialEq)]
pub struct ExprError {
    /// Byte offset in the expression text.
    pub offset: usize,
    /// What is wrong and the fix.
    pub msg: String,
}

/// The accepted form, quoted in errors.
pub const FORM: &str = "write e.g. \"first(transcription.delta) - mark(audio_start)\", \"count(E)\", \"gaps(E)\", \"lag(E, audio_end_ms)\" or \"(last(E) - mark(M)) / 1000\"";

/// One recorded mark: when (ms since the session opened), its place in the session's
/// order, and where its turn ended (`until`: the first sequence number after the turn;
/// `u64::MAX` while open or outside any `repeat`).
#[derive(Debug, Clone, PartialEq)]
pub struct MarkAt {
    /// The mark's name.
    pub name: String,
    /// Ms since the session opened.
    pub ms: f64,
    /// Sequence number.
    pub seq: u64,
    /// Sequence number at which the mark's turn ended.
    pub until: u64,
}

/// One recorded event: its sequence number and ms since the session opened.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Sequence number (the order messages and marks happened in).
    pub seq: u64,
    /// Ms since the session opened.
    pub ms: f64,
}

/// One numeric field of one recorded event, with the session's audio cursor when the
/// event arrived.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// The event's sequence number.
    pub seq: u64,
    /// The field's value.
    pub value: f64,
    /// Ms of audio the session had streamed when the event arrived.
    pub audio_ms: f64,
}

/// What one session recorded: every mark and every matched event, with ms since the
/// session opened and one sequence number per inbound message or mark.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Record {
    /// Marks in the order taken.
    pub marks: Vec<MarkAt>,
    /// Event name → hits, by sequence number.
    pub events: BTreeMap<String, Vec<Hit>>,
    /// (event name, field) → the field's values, by sequence number.
    pub readings: BTreeMap<(String, String), Vec<Reading>>,
}

impl Record {
    /// Record event `name` (kept in sequence order: a hit replayed late slots in).
    pub fn push_event(&mut self, name: &str, seq: u64, ms: f64) {
        let hits = match self.events.get_mut(name) {
            Some(h) => h,
            None => self.events.entry(name.to_string()).or_default(),
        };
        let at = hits.partition_point(|h| h.seq < seq);
        hits.insert(at, Hit { seq, ms });
    }

    /// Record field `field` of event `name` (arrivals come in sequence order).
    pub fn push_reading(&mut self, name: &str, field: &str, reading: Reading) {
        let key = (name.to_string(), field.to_string());
        self.readings.entry(key).or_default().push(reading);
    }

    /// Record mark `name`; returns its index for [`Record::end_turn`].
    pub fn push_mark(&mut self, name: &str, seq: u64, ms: f64) -> usize {
        self.marks.push(MarkAt {
            name: name.to_string(),
            ms,
            seq,
            until: u64::MAX,
        });
        self.marks.len() - 1
    }

    /// The turn of mark `idx` ended before sequence number `seq`.
    pub fn end_turn(&mut self, idx: usize, seq: u64) {
        if let Some(m) = self.marks.get_mut(idx) {
            m.until = m.until.min(seq);
        }
    }

    fn windows(&self, anchor: Option<&str>) -> Vec<(u64, u64)> {
        let Some(a) = anchor else {
            return vec![(0, u64::MAX)];
        };
        let at: Vec<&MarkAt> = self.marks.iter().filter(|m| m.name == a).collect();
        at.iter()
            .enumerate()
            .map(|(i, m)| {
                let next = at.get(i + 1).map_or(u64::MAX, |n| n.seq);
                (m.seq, next.min(m.until))
            })
            .collect()
    }
}

/// One expression's values for one session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Values {
    /// Every value, window by window (several per window for `gaps`).
    pub values: Vec<f64>,
    /// Windows (times the anchor mark was taken; 1 without an anchor).
    pub windows: usize,
    /// Windows that gave at least one value.
    pub measured: usize,
}

impl Expr {
    /// The first `mark(..)` in reading order: the window anchor.
    pub fn anchor(&self) -> Option<&str> {
        self.refs().into_iter().find(|r| r.mark).map(|r| r.name)
    }

    /// Every name the expression reads, in reading order.
    pub fn refs(&self) -> Vec<NameRef<'_>> {
        let mut out = Vec::new();
        for n in &self.nodes {
            if let Node::Atom(Atom::Seen { e, g, g_at, .. }, offset) = n {
                out.push(NameRef {
                    name: e,
                    offset: *offset,
                    mark: false,
                });
                out.push(NameRef {
                    name: g,
                    offset: *g_at,
                    mark: false,
                });
            }
            out.extend(Self::ref_of(n));
        }
        out
    }

    /// The name a leaf other than `seen` reads, if any.
    fn ref_of(n: &Node) -> Option<NameRef<'_>> {
        let (name, mark) = match n {
            Node::Atom(Atom::Mark(m), _) => (m, true),
            Node::Atom(
                Atom::First(e)
                | Atom::Last(e)
                | Atom::Count(e)
                | Atom::Gaps(e)
                | Atom::Lag(e, _)
                | Atom::Repeats(e, _)
                | Atom::Descents(e, _),
                _,
            ) => (e, false),
            _ => return None,
        };
        let Node::Atom(_, offset) = n else {
            return None;
        };
        Some(NameRef {
            name,
            offset: *offset,
            mark,
        })
    }

    /// Every event name the expression reads (marks excluded).
    pub fn events(&self) -> Vec<&str> {
        self.refs()
            .into_iter()
            .filter(|r| !r.mark)
            .map(|r| r.name)
            .collect()
    }

    /// Every (event, field) pair the expression reads values of.
    pub fn fields(&self) -> Vec<(&str, &str)> {
        self.nodes
            .iter()
            .filter_map(|n| match n {
                Node::Atom(Atom::Lag(e, f) | Atom::Repeats(e, f) | Atom::Descents(e, f), _) => {
                    Some(vec![(e.as_str(), f.as_str())])
                }
                Node::Atom(Atom::Seen { e, f, g, .. }, _) => {
                    Some(vec![(e.as_str(), f.as_str()), (g.as_str(), f.as_str())])
                }
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// The values of this expression for one session: one per window (several for
    /// `gaps`); windows where something is missing give nothing.
    #[cfg(test)]
    pub fn eval(&self, rec: &Record) -> Vec<f64> {
        self.eval_per(rec, None).values
    }

    /// [`Expr::eval`] with windows anchored on mark `per` instead of the expression's
    /// first mark (so `gaps(E)` can be measured per turn), with the window counts.
    pub fn eval_per(&self, rec: &Record, per: Option<&str>) -> Values {
        let windows = rec.windows(per.or_else(|| self.anchor()));
        let mut out = Values {
            windows: windows.len(),
            ..Values::default()
        };
        for w in windows {
            if let Some(v) = self.eval_in(rec, w) {
                let before = out.values.len();
                out.values.extend(v.into_iter().filter(|x| x.is_finite()));
                out.measured += usize::from(out.values.len() > before);
            }
        }
        out
    }

    fn eval_in(&self, rec: &Record, (lo, hi): (u64, u64)) -> Option<Vec<f64>> {
        let within = |name: &str| -> &[Hit] {
            let hits = rec.events.get(name).map_or(&[][..], Vec::as_slice);
            let a = hits.partition_point(|h| h.seq < lo);
            let b = hits.partition_point(|h| h.seq < hi);
            &hits[a..b]
        };
        let read = |e: &String, f: &String| -> &[Reading] {
            let key = (e.clone(), f.clone());
            let all = rec.readings.get(&key).map_or(&[][..], Vec::as_slice);
            let a = all.partition_point(|r| r.seq < lo);
            let b = all.partition_point(|r| r.seq < hi);
            &all[a..b]
        };
        let mut stack: Vec<Vec<f64>> = Vec::new();
        for node in &self.nodes {
            let v = match node {
                Node::Atom(a, _) => match a {
                    Atom::First(e) => vec![within(e).first()?.ms],
                    Atom::Last(e) => vec![within(e).last()?.ms],
                    Atom::Count(e) => vec![within(e).len() as f64],
                    Atom::Gaps(e) => within(e).windows(2).map(|p| p[1].ms - p[0].ms).collect(),
                    Atom::Mark(m) => vec![
                        rec.marks
                            .iter()
                            .find(|x| x.name == *m && x.seq >= lo && x.seq < hi)?
                            .ms,
                    ],
                    Atom::Num(n) => vec![*n],
                    Atom::Lag(e, f) => read(e, f).iter().map(|r| r.audio_ms - r.value).collect(),
                    Atom::Repeats(e, f) => vec![repeats(read(e, f))],
                    Atom::Descents(e, f) => {
                        let r = read(e, f);
                        vec![r.windows(2).filter(|p| p[1].value < p[0].value).count() as f64]
                    }
                    Atom::Seen { e, f, g, .. } => vec![seen(read(e, f), read(g, f))],
                },
                Node::Op(op) => {
                    let y = stack.pop()?;
                    let x = stack.pop()?;
                    apply(*op, &x, &y)?
                }
            };
            stack.push(v);
        }
        stack.pop()
    }
}

/// How many readings repeat an earlier reading's value.
fn repeats(r: &[Reading]) -> f64 {
    let mut seen = std::collections::BTreeSet::new();
    r.iter().filter(|x| !seen.insert(x.value.to_bits())).count() as f64
}

/// How many readings of `e` have a value one of `g` had at an earlier sequence number.
fn seen(e: &[Reading], g: &[Reading]) -> f64 {
    let mut had = std::collections::BTreeSet::new();
    let mut gi = 0;
    let mut n = 0;
    for r in e {
        while let Some(x) = g.get(gi).filter(|x| x.seq < r.seq) {
            had.insert(x.value.to_bits());
            gi += 1;
        }
        n += usize::from(had.contains(&r.value.to_bits()));
    }
    n as f64
}

fn apply(op: char, x: &[f64], y: &[f64]) -> Option<Vec<f64>> {
    let f = |l: f64, r: f64| match op {
        '+' => l + r,
        '-' => l - r,
        '*' => l * r,
        _ => l / r,
    };
    Some(match (x, y) {
        ([l], [r]) => vec![f(*l, *r)],
        (ls, [r]) => ls.iter().map(|l| f(*l, *r)).collect(),
        ([l], rs) => rs.iter().map(|r| f(*l, *r)).collect(),
        _ => return None,
    })
}

#[cfg(test)]
#[path = "metric_tests.rs"]
mod tests;
