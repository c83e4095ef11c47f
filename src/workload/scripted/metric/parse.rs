//! The metric expression parser: recursive descent over `+ - * /`, calls, numbers and
//! parentheses, bounded by [`MAX_DEPTH`] nesting, [`MAX_TERMS`] terms and [`MAX_LEN`]
//! bytes (so no input can exhaust the stack), typed as it goes, emitting postfix nodes.

use super::{Atom, Expr, ExprError, FORM, Kind, MAX_DEPTH, MAX_LEN, MAX_TERMS, Node};

const FUNCTIONS: [&str; 9] = [
    "first", "last", "mark", "count", "gaps", "lag", "repeats", "descents", "seen",
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
                     gaps, lag, repeats, descents, seen"
                ),
            });
        }
        self.i += 1;
        self.ws();
        let name_at = self.i;
        let Args { name, field, then } = self.args(func)?;
        let field = field.unwrap_or_default();
        let (atom, kind) = match func {
            "first" => (Atom::First(name), Kind::Time),
            "last" => (Atom::Last(name), Kind::Time),
            "mark" => (Atom::Mark(name), Kind::Time),
            "count" => (Atom::Count(name), Kind::Number),
            "gaps" => (Atom::Gaps(name), Kind::Series),
            "lag" => (Atom::Lag(name, field), Kind::Series),
            "repeats" => (Atom::Repeats(name, field), Kind::Number),
            "descents" => (Atom::Descents(name, field), Kind::Number),
            _ => {
                let (g, g_at) = then.unwrap_or_default();
                (
                    Atom::Seen {
                        e: name,
                        f: field,
                        g,
                        g_at,
                    },
                    Kind::Number,
                )
            }
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

/// A call's arguments: the event or mark name, a field, and (for `seen`) the second
/// event with its offset.
struct Args {
    name: String,
    field: Option<String>,
    then: Option<(String, usize)>,
}

impl Parser<'_> {
    /// The arguments of `func(...)`, the `(` consumed; leaves `i` after the `)`.
    fn args(&mut self, func: &str) -> Result<Args, ExprError> {
        let name_at = self.i;
        let close = self.s[self.i..]
            .find(')')
            .ok_or_else(|| self.err("missing `)`".into()))?;
        let inside = &self.s[self.i..self.i + close];
        let arity = match func {
            "seen" => 3,
            f if FIELD_FUNCTIONS.contains(&f) => 2,
            _ => 1,
        };
        let parts: Vec<&str> = if arity == 1 {
            vec![inside]
        } else {
            inside.split(',').collect()
        };
        let bad_name =
            |n: &str| n.is_empty() || n.contains(['(', ',']) || n.contains(char::is_whitespace);
        if arity > 1
            && (parts.len() != arity
                || !is_field(parts[1].trim())
                || parts.iter().skip(2).any(|g| bad_name(g.trim())))
        {
            let form = if arity == 3 {
                format!(
                    "`{func}(E, F, G)` takes two event names around a numeric field, e.g. `seen(partial, segment_id, final)`"
                )
            } else {
                format!(
                    "`{func}(E, F)` takes an event name and one of its numeric fields, e.g. `{func}(partial, audio_end_ms)`"
                )
            };
            return Err(ExprError {
                offset: name_at,
                msg: format!("{form} (got {inside:?})"),
            });
        }
        let name = parts[0].trim_end().to_string();
        if bad_name(&name) {
            return Err(ExprError {
                offset: name_at,
                msg: format!("`{func}(...)` takes one event or mark name (got {name:?})"),
            });
        }
        let then = (arity == 3).then(|| {
            let before: usize = parts[..2].iter().map(|p| p.len() + 1).sum();
            let g = parts[2];
            let lead = g.len() - g.trim_start().len();
            (g.trim().to_string(), name_at + before + lead)
        });
        self.i += close + 1;
        Ok(Args {
            name,
            field: (arity > 1).then(|| parts[1].trim().to_string()),
            then,
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
