//! Declared metrics: `ttft_ms = "first(transcription.delta) - mark(audio_start)"`.
//!
//! Grammar: `+ - * /` over `first(E)`, `last(E)`, `count(E)`, `gaps(E)`, `mark(M)`,
//! numbers and parentheses, where `E` is an event name (a declared `[workload.events]`
//! name, a named `await`, or else a message `type` value) and `M` a mark name. Each
//! expression is typed at load: a timestamp minus a timestamp is a duration in ms, a
//! duration over a duration a ratio, `count` a number, `gaps` the inter-arrival times of
//! an event (one value per gap); a bare timestamp is refused.
//!
//! Windows: an expression that uses `mark(M)` is measured once per time `M` was marked
//! (one value per turn of a `repeat`), looking only at events and marks from that moment
//! up to the next time `M` was marked (a metric's `per = "M"` sets the anchor explicitly,
//! e.g. for `gaps`); without a mark it looks at the whole session. An
//! event that never came makes the value absent, never zero (`count` is then 0).

use std::collections::BTreeMap;

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
    /// A literal.
    Num(f64),
}

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A leaf.
    Atom(Atom),
    /// `a op b` with op one of `+ - * /`.
    Bin(Box<Expr>, char, Box<Expr>),
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
pub const FORM: &str = "write e.g. \"first(transcription.delta) - mark(audio_start)\", \"count(E)\", \"gaps(E)\" or \"(last(E) - mark(M)) / 1000\"";

/// Parse and type-check `text`.
pub fn parse(text: &str) -> Result<(Expr, Kind), ExprError> {
    let mut p = Parser { s: text, i: 0 };
    let (e, k) = p.sum()?;
    p.ws();
    if p.i < text.len() {
        return Err(p.err(format!("unexpected `{}`", &text[p.i..])));
    }
    if k == Kind::Time {
        return Err(ExprError {
            offset: 0,
            msg: "a timestamp alone is not a metric; subtract another moment, e.g. \"first(E) - mark(M)\"".into(),
        });
    }
    Ok((e, k))
}

struct Parser<'a> {
    s: &'a str,
    i: usize,
}

impl Parser<'_> {
    fn err(&self, msg: String) -> ExprError {
        ExprError {
            offset: self.i,
            msg,
        }
    }
    fn ws(&mut self) {
        while self.s[self.i..].starts_with(char::is_whitespace) {
            self.i += 1;
        }
    }
    fn peek(&mut self) -> Option<char> {
        self.ws();
        self.s[self.i..].chars().next()
    }
    fn sum(&mut self) -> Result<(Expr, Kind), ExprError> {
        let (mut e, mut k) = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            let at = self.i;
            self.i += 1;
            let (r, rk) = self.product()?;
            k = combine(k, op, rk).map_err(|msg| ExprError { offset: at, msg })?;
            e = Expr::Bin(Box::new(e), op, Box::new(r));
        }
        Ok((e, k))
    }
    fn product(&mut self) -> Result<(Expr, Kind), ExprError> {
        let (mut e, mut k) = self.factor()?;
        while let Some(op @ ('*' | '/')) = self.peek() {
            let at = self.i;
            self.i += 1;
            let (r, rk) = self.factor()?;
            k = combine(k, op, rk).map_err(|msg| ExprError { offset: at, msg })?;
            e = Expr::Bin(Box::new(e), op, Box::new(r));
        }
        Ok((e, k))
    }
    fn factor(&mut self) -> Result<(Expr, Kind), ExprError> {
        match self.peek() {
            Some('(') => {
                self.i += 1;
                let inner = self.sum()?;
                if self.peek() != Some(')') {
                    return Err(self.err(format!("missing `)`; {FORM}")));
                }
                self.i += 1;
                Ok(inner)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => {
                let start = self.i;
                while self.s[self.i..].starts_with(|c: char| c.is_ascii_digit() || c == '.') {
                    self.i += 1;
                }
                let n: f64 = self.s[start..self.i].parse().map_err(|_| ExprError {
                    offset: start,
                    msg: format!("bad number `{}`", &self.s[start..self.i]),
                })?;
                Ok((Expr::Atom(Atom::Num(n)), Kind::Number))
            }
            Some(c) if c.is_ascii_alphabetic() => self.call(),
            None => Err(self.err(format!("expression ends too early; {FORM}"))),
            Some(c) => Err(self.err(format!("unexpected `{c}`; {FORM}"))),
        }
    }
    fn call(&mut self) -> Result<(Expr, Kind), ExprError> {
        let start = self.i;
        while self.s[self.i..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            self.i += 1;
        }
        let func = &self.s[start..self.i];
        if self.peek() != Some('(') {
            return Err(ExprError {
                offset: start,
                msg: format!("`{func}` must be called like `{func}(name)`; {FORM}"),
            });
        }
        self.i += 1;
        self.ws();
        let name_at = self.i;
        let close = self.s[self.i..]
            .find(')')
            .ok_or_else(|| self.err("missing `)`".into()))?;
        let name = self.s[self.i..self.i + close].trim().to_string();
        if name.is_empty() || name.contains(['(', ',', ' ']) {
            return Err(ExprError {
                offset: name_at,
                msg: format!("`{func}(...)` takes one event or mark name (got {name:?})"),
            });
        }
        self.i += close + 1;
        Ok(match func {
            "first" => (Expr::Atom(Atom::First(name)), Kind::Time),
            "last" => (Expr::Atom(Atom::Last(name)), Kind::Time),
            "mark" => (Expr::Atom(Atom::Mark(name)), Kind::Time),
            "count" => (Expr::Atom(Atom::Count(name)), Kind::Number),
            "gaps" => (Expr::Atom(Atom::Gaps(name)), Kind::Series),
            other => {
                let hint = crate::util::template::closest(
                    other,
                    ["first", "last", "mark", "count", "gaps"],
                )
                .map(|c| format!("did you mean `{c}`? "))
                .unwrap_or_default();
                return Err(ExprError {
                    offset: start,
                    msg: format!(
                        "unknown function `{other}`; {hint}functions are first, last, mark, count, gaps"
                    ),
                });
            }
        })
    }
}

fn combine(a: Kind, op: char, b: Kind) -> Result<Kind, String> {
    use Kind::*;
    let out = match (a, op, b) {
        (Time, '-', Time) => Some(Duration),
        (Time, '+' | '-', Duration) | (Duration, '+', Time) => Some(Time),
        (Duration, '+' | '-', Duration) => Some(Duration),
        (Number, '+' | '-' | '*' | '/', Number) => Some(Number),
        (Duration, '*' | '/', Number) | (Number, '*', Duration) => Some(Duration),
        (Duration, '/', Duration) => Some(Number),
        (Series, '*' | '/', Number) | (Number, '*', Series) => Some(Series),
        _ => None,
    };
    out.ok_or_else(|| {
        let name = |k: Kind| match k {
            Time => "a timestamp",
            Duration => "a duration",
            Number => "a number",
            Series => "gaps(...)",
        };
        format!("cannot compute {} {op} {}; {FORM}", name(a), name(b))
    })
}

/// What one session recorded: every mark and every matched event, in ms since the
/// session's start, in arrival order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Record {
    /// `(mark name, ms)` in the order marked.
    pub marks: Vec<(String, f64)>,
    /// Event name → arrival times (ms), ascending.
    pub events: BTreeMap<String, Vec<f64>>,
}

impl Expr {
    /// The first `mark(..)` in reading order: the window anchor.
    pub fn anchor(&self) -> Option<&str> {
        match self {
            Expr::Atom(Atom::Mark(m)) => Some(m),
            Expr::Atom(_) => None,
            Expr::Bin(a, _, b) => a.anchor().or_else(|| b.anchor()),
        }
    }

    /// Every event name the expression reads (marks excluded).
    pub fn events(&self) -> Vec<&str> {
        match self {
            Expr::Atom(Atom::First(e) | Atom::Last(e) | Atom::Count(e) | Atom::Gaps(e)) => vec![e],
            Expr::Atom(_) => Vec::new(),
            Expr::Bin(a, _, b) => {
                let mut v = a.events();
                v.extend(b.events());
                v
            }
        }
    }

    /// Every mark name the expression reads.
    pub fn marks(&self) -> Vec<&str> {
        match self {
            Expr::Atom(Atom::Mark(m)) => vec![m],
            Expr::Atom(_) => Vec::new(),
            Expr::Bin(a, _, b) => {
                let mut v = a.marks();
                v.extend(b.marks());
                v
            }
        }
    }

    /// The values of this expression for one session: one per window (several for
    /// `gaps`); windows where something is missing give nothing.
    pub fn eval(&self, rec: &Record) -> Vec<f64> {
        self.eval_per(rec, None)
    }

    /// [`Expr::eval`] with windows anchored on mark `per` instead of the expression's
    /// first mark (so `gaps(E)` can be measured per turn).
    pub fn eval_per(&self, rec: &Record, per: Option<&str>) -> Vec<f64> {
        let windows: Vec<(f64, f64)> = match per.or_else(|| self.anchor()) {
            None => vec![(f64::NEG_INFINITY, f64::INFINITY)],
            Some(m) => {
                let at: Vec<f64> = rec
                    .marks
                    .iter()
                    .filter(|(n, _)| n == m)
                    .map(|(_, t)| *t)
                    .collect();
                at.iter()
                    .enumerate()
                    .map(|(i, t)| (*t, at.get(i + 1).copied().unwrap_or(f64::INFINITY)))
                    .collect()
            }
        };
        let mut out = Vec::new();
        for w in windows {
            if let Some(v) = self.eval_in(rec, w) {
                out.extend(v.into_iter().filter(|x| x.is_finite()));
            }
        }
        out
    }

    fn eval_in(&self, rec: &Record, (lo, hi): (f64, f64)) -> Option<Vec<f64>> {
        let within = |name: &str| -> Vec<f64> {
            rec.events
                .get(name)
                .map(|v| v.iter().copied().filter(|t| *t >= lo && *t < hi).collect())
                .unwrap_or_default()
        };
        match self {
            Expr::Atom(a) => Some(match a {
                Atom::First(e) => vec![*within(e).first()?],
                Atom::Last(e) => vec![*within(e).last()?],
                Atom::Count(e) => vec![within(e).len() as f64],
                Atom::Gaps(e) => within(e).windows(2).map(|p| p[1] - p[0]).collect(),
                Atom::Mark(m) => vec![
                    rec.marks
                        .iter()
                        .find(|(n, t)| n == m && *t >= lo && *t < hi)?
                        .1,
                ],
                Atom::Num(n) => vec![*n],
            }),
            Expr::Bin(a, op, b) => {
                let (x, y) = (a.eval_in(rec, (lo, hi))?, b.eval_in(rec, (lo, hi))?);
                let apply = |l: f64, r: f64| match op {
                    '+' => l + r,
                    '-' => l - r,
                    '*' => l * r,
                    _ => l / r,
                };
                Some(match (x.as_slice(), y.as_slice()) {
                    ([l], [r]) => vec![apply(*l, *r)],
                    (ls, [r]) => ls.iter().map(|l| apply(*l, *r)).collect(),
                    ([l], rs) => rs.iter().map(|r| apply(*l, *r)).collect(),
                    _ => return None,
                })
            }
        }
    }
}

#[cfg(test)]
#[path = "metric_tests.rs"]
mod tests;
