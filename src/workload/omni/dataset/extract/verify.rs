//! Archive integrity and extraction bounds: the tar stream (gunzipped when it starts with
//! the gzip magic) is read through a counting reader that stops at the configured limits
//! (decompressed bytes, compression ratio), members are counted and their names checked
//! for duplicates, the stream must end with its end-of-archive marker, and the gzip
//! trailer (CRC-32 and length) is verified by reading the stream to its end.

use std::cell::Cell;
use std::collections::HashSet;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::super::DatasetError;

/// Bounds on extracting one archive. Defaults are generous for the real 1–10 GB
/// OmniInteract archive; each can be set with its environment variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveLimits {
    /// Most decompressed tar bytes read (`RTLOAD_ARCHIVE_MAX_BYTES`, default 64 GiB).
    pub max_total_bytes: u64,
    /// Most members (`RTLOAD_ARCHIVE_MAX_MEMBERS`, default 1,000,000).
    pub max_members: u64,
    /// Most decompressed/compressed ratio of a gzip archive once past 256 MiB
    /// decompressed (`RTLOAD_ARCHIVE_MAX_RATIO`, default 200; video barely compresses).
    pub max_ratio: u64,
    /// Decompressed bytes below which the ratio is not checked
    /// ([`RATIO_FLOOR_BYTES`]).
    pub ratio_floor_bytes: u64,
}

/// Environment variable of [`ArchiveLimits::max_total_bytes`].
pub const ENV_MAX_BYTES: &str = "RTLOAD_ARCHIVE_MAX_BYTES";
/// Environment variable of [`ArchiveLimits::max_members`].
pub const ENV_MAX_MEMBERS: &str = "RTLOAD_ARCHIVE_MAX_MEMBERS";
/// Environment variable of [`ArchiveLimits::max_ratio`].
pub const ENV_MAX_RATIO: &str = "RTLOAD_ARCHIVE_MAX_RATIO";

/// Decompressed bytes below which the ratio is not checked (small archives of JSON and
/// synthetic frames compress far better than video, harmlessly).
pub const RATIO_FLOOR_BYTES: u64 = 256 << 20;

impl Default for ArchiveLimits {
    fn default() -> Self {
        ArchiveLimits {
            max_total_bytes: 64 << 30,
            max_members: 1_000_000,
            max_ratio: 200,
            ratio_floor_bytes: RATIO_FLOOR_BYTES,
        }
    }
}

impl ArchiveLimits {
    /// The defaults, overridden by the environment variables that are set.
    pub fn from_env() -> Result<Self, DatasetError> {
        let d = ArchiveLimits::default();
        let get = |name: &str, default: u64| -> Result<u64, DatasetError> {
            match std::env::var(name) {
                Err(_) => Ok(default),
                Ok(v) => v
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| DatasetError::Archive {
                        path: PathBuf::from(name),
                        source: io::Error::other(format!(
                            "{name}={v:?} is not a positive whole number; unset it or set \
                             e.g. {name}={default}"
                        )),
                    }),
            }
        };
        Ok(ArchiveLimits {
            max_total_bytes: get(ENV_MAX_BYTES, d.max_total_bytes)?,
            max_members: get(ENV_MAX_MEMBERS, d.max_members)?,
            max_ratio: get(ENV_MAX_RATIO, d.max_ratio)?,
            ..d
        })
    }
}

/// What a full validation pass saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArchiveStats {
    /// Members (files, directories, skipped metadata).
    pub members: u64,
    /// Sum of regular files' sizes.
    pub file_bytes: u64,
}

/// Which limit a [`Counted`] reader hit.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Hit {
    Bytes(u64),
    Ratio(u64),
}

#[derive(Debug, Default)]
struct Counter {
    pos: Cell<u64>,
    hit: Cell<Option<Hit>>,
}

/// A reader that counts decompressed bytes and fails once a limit is passed.
pub struct Counted {
    inner: Box<dyn Read>,
    counter: Rc<Counter>,
    limits: ArchiveLimits,
    /// Compressed size when the stream is gzip.
    compressed: Option<u64>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let pos = self.counter.pos.get() + n as u64;
        self.counter.pos.set(pos);
        let hit = if pos > self.limits.max_total_bytes {
            Some(Hit::Bytes(pos))
        } else {
            self.compressed
                .filter(|c| {
                    pos > self.limits.ratio_floor_bytes && pos / (*c).max(1) > self.limits.max_ratio
                })
                .map(|c| Hit::Ratio(pos / c.max(1)))
        };
        if let Some(hit) = hit {
            self.counter.hit.set(Some(hit));
            return Err(io::Error::other("archive extraction limit reached"));
        }
        Ok(n)
    }
}

/// An archive opened for one pass: the tar reader and its checks.
pub struct Opened {
    /// The tar reader over the (gunzipped) stream.
    pub tar: tar::Archive<Counted>,
    /// What the pass checks as it goes.
    pub check: Check,
}

/// The running checks of one pass: byte counter, members seen, where the data ends.
pub struct Check {
    counter: Rc<Counter>,
    limits: ArchiveLimits,
    path: PathBuf,
    names: HashSet<PathBuf>,
    members: u64,
    file_bytes: u64,
    /// End of the last member's data (padded to 512), in stream bytes.
    end: u64,
}

/// Open `source` (named `path` in errors; `len` bytes) for one pass.
pub fn open_reader(source: Box<dyn Read>, len: u64, path: &Path, limits: ArchiveLimits) -> Opened {
    let mut file = BufReader::new(source);
    let gz = matches!(io::BufRead::fill_buf(&mut file), Ok(b) if b.starts_with(&[0x1f, 0x8b]));
    let inner: Box<dyn Read> = if gz {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let counter = Rc::new(Counter::default());
    let counted = Counted {
        inner,
        counter: Rc::clone(&counter),
        limits,
        compressed: gz.then_some(len),
    };
    Opened {
        tar: tar::Archive::new(counted),
        check: Check {
            counter,
            limits,
            path: path.to_path_buf(),
            names: HashSet::new(),
            members: 0,
            file_bytes: 0,
            end: 0,
        },
    }
}

impl Check {
    /// The error for a failed read: a limit when one was hit, else the read error.
    pub fn read_err(&self, source: io::Error) -> DatasetError {
        limit_err(&self.counter, self.limits, &self.path, source)
    }

    /// Account for one member: count it, note where its data ends, and reject a second
    /// member writing the same file (`rel`, when it writes one).
    pub fn member(
        &mut self,
        header: &tar::Header,
        data_pos: u64,
        file: Option<&Path>,
        name: &str,
    ) -> Result<(), DatasetError> {
        self.members += 1;
        if self.members > self.limits.max_members {
            return Err(DatasetError::ArchiveLimit {
                path: self.path.clone(),
                what: format!("more than {} members", self.limits.max_members),
                limit: self.limits.max_members,
                env: ENV_MAX_MEMBERS,
            });
        }
        let size = header.entry_size().unwrap_or(0);
        self.end = data_pos.saturating_add(size.div_ceil(512).saturating_mul(512));
        if let Some(rel) = file {
            self.file_bytes = self.file_bytes.saturating_add(size);
            if !self.names.insert(rel.to_path_buf()) {
                return Err(DatasetError::DuplicateArchiveMember(name.to_owned()));
            }
        }
        Ok(())
    }

    /// After the last member: the end-of-archive marker (two zero blocks) must follow, and
    /// the rest of the stream is read so the gzip trailer (CRC-32, length) is checked.
    pub fn finish(self, tar: tar::Archive<Counted>) -> Result<ArchiveStats, DatasetError> {
        let Check {
            counter,
            path,
            members,
            file_bytes,
            end,
            limits,
            names: _,
        } = self;
        // tar stops after reading the first zero block; at EOF it stops at `end`.
        let after_first = counter.pos.get();
        let mut rest = tar.into_inner();
        let err = |e| limit_err(&counter, limits, &path, e);
        let mut second = [0u8; 512];
        let mut got = 0;
        while got < 512 {
            match rest.read(&mut second[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) => return Err(err(e)),
            }
        }
        if after_first < end + 512 || got < 512 || second.iter().any(|b| *b != 0) {
            return Err(DatasetError::TruncatedArchive(path));
        }
        io::copy(&mut rest, &mut io::sink()).map_err(err)?;
        Ok(ArchiveStats {
            members,
            file_bytes,
        })
    }
}

fn limit_err(
    counter: &Counter,
    limits: ArchiveLimits,
    path: &Path,
    source: io::Error,
) -> DatasetError {
    let path = path.to_path_buf();
    match counter.hit.get() {
        Some(Hit::Bytes(n)) => DatasetError::ArchiveLimit {
            path,
            what: format!("more than {n} decompressed bytes"),
            limit: limits.max_total_bytes,
            env: ENV_MAX_BYTES,
        },
        Some(Hit::Ratio(r)) => DatasetError::ArchiveLimit {
            path,
            what: format!("compression ratio {r}:1 (a gzip bomb?)"),
            limit: limits.max_ratio,
            env: ENV_MAX_RATIO,
        },
        None => DatasetError::Archive { path, source },
    }
}
