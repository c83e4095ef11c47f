//! Deterministic slices of one run for distributed execution (`--shard I/N`), and the
//! start barrier (`--start-at`). Pure: no clocks, no IO.
//!
//! The arrival plan is computed for the whole run from the seed; shard `I` of `N` takes
//! every measured sample `k` with `k mod N == I` at its original intended release offset
//! (k6's execution segments are the model). Warm-ups and the concurrency cap are split the
//! same way (`⌊c/N⌋`, plus one for the first `c mod N` shards), so the union of the shards
//! is the unsharded run: the same samples, the same intended times, the same total cap.

use std::fmt;

#[cfg(test)]
#[path = "shard_tests.rs"]
mod tests;

/// Shard `index` of `count` (0-based, `index < count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    /// This shard's position, `0..count`.
    pub index: usize,
    /// How many shards the run is split into (≥ 1).
    pub count: usize,
}

/// A `--shard` or `--start-at` value that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ShardError {
    /// Not `I/N` with integers `0 <= I < N`.
    #[error(
        "--shard {got:?} must be I/N with 0 <= I < N, e.g. 0/4 (Kubernetes: --shard \"$JOB_COMPLETION_INDEX/4\")"
    )]
    BadShard {
        /// The rejected text.
        got: String,
    },
    /// Not an RFC 3339 time or a Unix time in seconds.
    #[error(
        "--start-at {got:?} is neither an RFC 3339 time (e.g. 2026-12-02T15:00:00Z) nor unix seconds (e.g. 1796223600)"
    )]
    BadStartAt {
        /// The rejected text.
        got: String,
    },
    /// A barrier so far from now that the run would never be what was meant: an hour
    /// or more in the past (every release already late by that much) or more than a week
    /// ahead (the run would wait silently).
    #[error(
        "--start-at {got:?} is {how}; the barrier is when every shard starts, e.g. two minutes from now: $(date -u -d '+2 min' +%Y-%m-%dT%H:%M:%SZ)"
    )]
    StartAtOutOfRange {
        /// The time as given.
        got: String,
        /// How far off it is.
        how: String,
    },
    /// The cap leaves some shard no slot at all.
    #[error(
        "max_concurrency {cap} cannot be split over {count} shards (each shard needs at least 1); raise max_concurrency to >= {count} or use fewer shards"
    )]
    CapTooSmall {
        /// The total cap.
        cap: usize,
        /// The shard count.
        count: usize,
    },
}

impl Shard {
    /// The whole run (shard 0 of 1).
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Parse `I/N`.
    pub fn parse(s: &str) -> Result<Shard, ShardError> {
        let bad = || ShardError::BadShard { got: s.to_string() };
        let (i, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// The global indices (`0..total`) this shard owns: `k mod count == index`.
    pub fn indices(self, total: usize) -> Vec<usize> {
        (self.index..total).step_by(self.count.max(1)).collect()
    }

    /// This shard's part of a total split as evenly as possible (the first
    /// `total mod count` shards get one more); the parts sum to `total`.
    pub fn part(self, total: usize) -> usize {
        let n = self.count.max(1);
        total / n + usize::from(self.index < total % n)
    }

    /// This shard's concurrency cap; an error when some shard would get none.
    pub fn cap(self, total_cap: usize) -> Result<usize, ShardError> {
        if total_cap < self.count {
            return Err(ShardError::CapTooSmall {
                cap: total_cap,
                count: self.count,
            });
        }
        Ok(self.part(total_cap))
    }

    /// `(global index, offset)` of every measured sample of this shard, from the whole
    /// run's release offsets.
    pub fn slice(self, offsets_s: &[f64]) -> Vec<(usize, f64)> {
        self.indices(offsets_s.len())
            .into_iter()
            .map(|k| (k, offsets_s[k]))
            .collect()
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Parse a `--start-at` value: unix seconds (`1796223600`, `1796223600.5`) or RFC 3339
/// (`2026-12-02T15:00:00Z`, `2026-12-02T16:00:00.250+01:00`). Returns unix seconds.
pub fn parse_start_at(s: &str) -> Result<f64, ShardError> {
    let bad = || ShardError::BadStartAt { got: s.to_string() };
    let t = s.trim();
    if let Ok(x) = t.parse::<f64>() {
        return if x.is_finite() && x >= 0.0 {
            Ok(x)
        } else {
            Err(bad())
        };
    }
    rfc3339_unix_s(t).ok_or_else(bad)
}

/// The most a barrier may lie in the past (s): later than that, every release is late.
pub const MAX_START_AT_PAST_S: f64 = 3600.0;
/// The most a barrier may lie ahead (s).
pub const MAX_START_AT_AHEAD_S: f64 = 7.0 * 86_400.0;

/// `parse_start_at`, then the barrier `s` checked against `now_unix_s`: no more than
/// `MAX_START_AT_PAST_S` in the past and `MAX_START_AT_AHEAD_S` ahead.
pub fn start_at_from(s: &str, now_unix_s: f64) -> Result<f64, ShardError> {
    let at = parse_start_at(s)?;
    let how = if at < now_unix_s - MAX_START_AT_PAST_S {
        Some(format!(
            "{:.0} s in the past (more than {MAX_START_AT_PAST_S:.0} s)",
            now_unix_s - at
        ))
    } else if at > now_unix_s + MAX_START_AT_AHEAD_S {
        Some(format!("{:.0} s ahead (more than a week)", at - now_unix_s))
    } else {
        None
    };
    match how {
        Some(how) => Err(ShardError::StartAtOutOfRange {
            got: s.to_string(),
            how,
        }),
        None => Ok(at),
    }
}

/// `YYYY-MM-DD(T|t| )HH:MM:SS(.frac)?(Z|z|±HH:MM)` → unix seconds.
fn rfc3339_unix_s(t: &str) -> Option<f64> {
    let b = t.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    if !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = t.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut rest = &t[19..];
    let mut frac = 0.0;
    if let Some(r) = rest.strip_prefix('.') {
        let digits = r.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        frac = format!("0.{}", &r[..digits]).parse().ok()?;
        rest = &r[digits..];
    }
    let offset_s = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (oh, om) = rest[1..].split_once(':')?;
            if oh.len() != 2 || om.len() != 2 {
                return None;
            }
            let (oh, om): (i64, i64) = (oh.parse().ok()?, om.parse().ok()?);
            sign * (oh * 3600 + om * 60)
        }
    };
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_s;
    (secs >= 0).then_some(secs as f64 + frac)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}
