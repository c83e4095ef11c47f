//! The metric expression parser: recursive descent over `+ - * /`, calls, numbers and
//! parentheses, bounded by [`MAX_DEPTH`] nesting, [`MAX_TERMS`] terms and [`MAX_LEN`]
//! bytes (so no input can exhaust the stack), typed as it goes, emitting postfix nodes.

use super::{Atom, Expr, ExprError, FORM, Kind, MAX_DEPTH, MAX_LEN, MAX_TERMS, Node};

const FUNCTIONS: [&str; 8] = [
    "first", "last", "mark", "count", "gaps", "lag", "repeats", "descents",
];
/// The functions that take an event and one of its fields.
const FIELD_FUNCTIONS: [&str; 3] = ["lag", "repeats", "descents"];

/// Parse and type-check `text`.
pub fn parse(text: &str) -> Result<(Expr, Kind), ExprError> {
    if text.len() > MAX_LEN {
        let mut at = MAX_LEN;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        return Err(ExprError {
            offset: at,
            msg: format!(
                "the expression is {} bytes long, more than the {MAX_LEN} allowed; declare one metric per quantity instead",
                text.len()
            ),
        });
    }
    let mut p = Parser {
        s: text,
        i: 0,
        depth: 0,
        terms: 0,
        out: Vec::new(),
    };
    let k = p.sum()?;
    p.ws();
    if p.i < text.len() {
        let rest: String = text[p.i..].chars().take(40).collect();
        return Err(p.err(format!("unexpected `{rest}`")));
    }
    if k == Kind::Time {
        return Err(ExprError {
            offset: 0,
            msg: "a timestamp alone is not a metric; subtract another moment, e.g. \"first(E) - mark(M)\"".into(),
        });
    }
    Ok((Expr { nodes: p.out }, k))
}

struct Parser<'a> {
    s: &'a str,
    i: usize,
    depth: usize,
    terms: usize,
    out: Vec<Node>,
}

impl Parser<'_> {
    fn err(&self, msg: String) -> ExprError {
        ExprError {
            offset: self.i,
            msg,
        }
    }

    fn ws(&mut self) {
        while let Some(c) = self.s[self.i..]
            .chars()
            .next()
            .filter(|c| c.is_whitespace())
        {
            self.i += c.len_utf8();
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.ws();
        self.s[self.i..].chars().next()
    }

    fn sum(&mut self) -> Result<Kind, ExprError> {
        let mut k = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            let at = self.i;
            self.i += 1;
            let rk = self.product()?;
            k = combine(k, op, rk).map_err(|msg| ExprError { offset: at, msg })?;
            self.out.push(Node::Op(op));
        }
        Ok(k)
    }

    fn product(&mut self) -> Result<Kind, ExprError> {
        let mut k = self.factor()?;
        while let Some(op @ ('*' | '/')) = self.peek() {
            let at = self.i;
            self.i += 1;
            let rk = self.factor()?;
            k = combine(k, op, rk).map_err(|msg| ExprError { offset: at, msg })?;
            self.out.push(Node::Op(op));
        }
        Ok(k)
    }

    fn factor(&mut self) -> Result<Kind, ExprError> {
        match self.peek() {
            Some('(') => {
                if self.depth == MAX_DEPTH {
                    return Err(self.err(format!(
                        "parentheses nest more than {MAX_DEPTH} deep; simplify the expression"
                    )));
                }
                self.depth += 1;
                self.i += 1;
                let inner = self.sum()?;
                if self.peek() != Some(')') {
                    return Err(self.err(format!("missing `)`; {FORM}")));
                }
                self.i += 1;
                self.depth -= 1;
                Ok(inner)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => {
                let start = self.term()?;
                while self.s[self.i..].starts_with(|c: char| c.is_ascii_digit() || c == '.') {
                    self.i += 1;
                }
                let n: f64 = self.s[start..self.i].parse().map_err(|_| ExprError {
                    offset: start,
                    msg: format!("bad number `{}`", &self.s[start..self.i]),
                })?;
                self.out.push(Node::Atom(Atom::Num(n), start));
                Ok(Kind::Number)
            }
            Some(c) if c.is_ascii_alphabetic() => self.call(),
            None => Err(self.err(format!("expression ends too early; {FORM}"))),
            Some(c) => Err(self.err(format!("unexpected `{c}`; {FORM}"))),
        }
    }

    /// Count one more term starting here; its offset.
    fn term(&mut self) -> Result<usize, ExprError> {
        if self.terms == MAX_TERMS {
            return Err(self.err(format!(
                "the expression has more than {MAX_TERMS} terms; declare one metric per quantity instead"
            )));
        }
        self.terms += 1;
        Ok(self.i)
    }

    fn call(&mut self) -> Result<Kind, ExprError> {
        let start = self.term()?;
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
        if !FUNCTIONS.contains(&func) {
            let hint = crate::util::template::closest(func, FUNCTIONS)
                .map(|c| format!("did you mean `{c}`? "))
                .unwrap_or_default();
            return Err(ExprError {
                offset: start,
                msg: format!(
                    "unknown function `{func}`; {hint}functions are first, last, mark, count, \
                     gaps, lag, repeats, descents"
                ),
            });
        }
        self.i += 1;
        self.ws();
        let name_at = self.i;
        let close = self.s[self.i..]
            .find(')')
            .ok_or_else(|| self.err("missing `)`".into()))?;
        let inside = &self.s[self.i..self.i + close];
        let two = FIELD_FUNCTIONS.contains(&func);
        let (name, field) = match inside.split_once(',') {
            Some((n, f)) if two => (n.trim_end().to_string(), Some(f.trim().to_string())),
            _ => (inside.trim_end().to_string(), None),
        };
        if two && !field.as_deref().is_some_and(is_field) {
            return Err(ExprError {
                offset: name_at,
                msg: format!(
                    "`{func}(E, F)` takes an event name and one of its numeric fields, e.g. \
                     `{func}(partial, audio_end_ms)` (got {inside:?})"
                ),
            });
        }
        if name.is_empty() || name.contains(['(', ',']) || name.contains(char::is_whitespace) {
            return Err(ExprError {
                offset: name_at,
                msg: format!("`{func}(...)` takes one event or mark name (got {name:?})"),
            });
        }
        self.i += close + 1;
        let field = field.unwrap_or_default();
        let (atom, kind) = match func {
            "first" => (Atom::First(name), Kind::Time),
            "last" => (Atom::Last(name), Kind::Time),
            "mark" => (Atom::Mark(name), Kind::Time),
            "count" => (Atom::Count(name), Kind::Number),
            "gaps" => (Atom::Gaps(name), Kind::Series),
            "lag" => (Atom::Lag(name, field), Kind::Series),
            "repeats" => (Atom::Repeats(name, field), Kind::Number),
            _ => (Atom::Descents(name, field), Kind::Number),
        };
        self.out.push(Node::Atom(atom, name_at));
        Ok(kind)
    }
}

/// Whether `f` can name a field: letters, digits, `_`, dots between parts.
fn is_field(f: &str) -> bool {
    !f.is_empty()
        && f.split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
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
