//! Reports over finished runs and result files: `capacity` (`rtload capacity`'s search,
//! verdicts and output), `compare` (two results, regressions),
//! `html` (the self-contained SVG page), `merge` (shards of a distributed run), `resultfile` (reads results back, vllm's bare
//! `NaN` included), `suite` (the suite table and JUnit XML), `sweep` (a finished sweep's
//! capacity, table and JSON), `table` (aligned text columns both tables use) and
//! `verdict` (the verdict block every result carries).

pub mod capacity;
pub mod compare;
pub mod html;
pub mod merge;
pub mod resultfile;
pub mod suite;
pub mod sweep;
pub mod table;
pub mod verdict;
