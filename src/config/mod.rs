//! Configuration: the scenario file and everything parsed from it. `scenario` (TOML →
//! validated `Scenario`), `schema` (its JSON Schema), `thresholds` and `sweep` (the
//! hand-parsed tables, with their evaluation), and `registry`, the composition root and
//! the only place outside `src/workload/` that names workload kinds.

mod collect;
pub mod registry;
pub mod scenario;
pub mod schema;
pub mod sweep;
pub mod thresholds;
