//! Reports over finished runs and result files: `compare` (two results, regressions),
//! `html` (the self-contained SVG page), `merge` (shards of a distributed run), `resultfile` (reads results back, vllm's bare
//! `NaN` included) and `suite` (the suite table and JUnit XML).

pub mod compare;
pub mod html;
pub mod merge;
pub mod resultfile;
pub mod suite;
