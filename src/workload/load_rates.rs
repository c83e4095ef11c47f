//! `[load]`'s arrival checks: the ramp-up (a strategy needs both bounds, never beside a
//! fixed rate), the plan's own refusals reported at the key or flag that caused them,
//! and every rate against its range.

use super::{
    ArrivalSpec, Ctx, LoadOverrides, MAX_RATE, MIN_RATE, Origin, PlanError, RampStrategy, RampUp,
    RawLoad,
};

/// The ramp-up, when a strategy is set (flag over file): it needs both bounds
/// (`start`, `end`).
pub(super) fn ramp_up(
    cx: &mut Ctx<'_>,
    ov: &LoadOverrides,
    raw: &RawLoad,
    start: Option<f64>,
    end: Option<f64>,
) -> Option<RampUp> {
    let strategy_origin;
    let strategy = match (&ov.ramp_up_strategy, raw.ramp_up_strategy.as_ref()) {
        (Some(s), _) => {
            strategy_origin = Origin::Flag("--ramp-up-strategy");
            Some(s.clone())
        }
        (None, Some(s)) => {
            strategy_origin = Origin::File(s.span());
            Some(s.get_ref().clone())
        }
        (None, None) => {
            strategy_origin = Origin::Flag("--ramp-up-strategy");
            None
        }
    };
    match strategy.as_deref() {
        None => None,
        Some(name) => {
            let strategy = match name {
                "linear" => Some(RampStrategy::Linear),
                "exponential" => Some(RampStrategy::Exponential),
                other => {
                    cx.err(strategy_origin.clone(), format!("unknown ramp-up strategy \"{other}\"; use \"linear\" or \"exponential\""));
                    None
                }
            };
            match (strategy, start, end) {
                (Some(strategy), Some(start_rps), Some(end_rps)) => Some(RampUp {
                    strategy,
                    start_rps,
                    end_rps,
                }),
                (Some(_), _, _) => {
                    cx.err(strategy_origin, "ramp-up needs both `ramp_up_start_rps` and `ramp_up_end_rps` (or --ramp-up-start-rps/--ramp-up-end-rps)".into());
                    None
                }
                _ => None,
            }
        }
    }
}

/// The arrival plan's own validation, each problem at the key (or flag) it is about.
pub(super) fn report_plan_errors(cx: &mut Ctx<'_>, ov: &LoadOverrides, arrival: &ArrivalSpec) {
    // Burstiness, fixed rate and ramp are checked on their own as well, so independent
    // problems are all listed, each at the key it is about.
    let parts = [
        arrival.clone(),
        ArrivalSpec {
            request_rate: None,
            ramp_up: None,
            ..arrival.clone()
        },
        ArrivalSpec {
            burstiness: 1.0,
            ramp_up: None,
            ..arrival.clone()
        },
        ArrivalSpec {
            burstiness: 1.0,
            request_rate: None,
            ..arrival.clone()
        },
    ];
    let mut plan_errors: Vec<PlanError> = Vec::new();
    for e in parts
        .iter()
        .filter_map(|p| crate::workload::plan::validate(p).err())
    {
        // By text: NaN values never compare equal.
        if !plan_errors.iter().any(|p| p.to_string() == e.to_string()) {
            plan_errors.push(e);
        }
    }
    for e in plan_errors {
        let (key, flag, from_flag) = match &e {
            PlanError::RateWithRampUp { .. } | PlanError::InvalidRate { .. } => {
                ("request_rate", "--request-rate", ov.request_rate.is_some())
            }
            PlanError::InvalidBurstiness { .. } => {
                ("burstiness", "--burstiness", ov.burstiness.is_some())
            }
            PlanError::InvalidRampBound {
                field: "start_rps", ..
            }
            | PlanError::RampStartAboveEnd { .. }
            | PlanError::ExponentialZeroStart { .. } => (
                "ramp_up_start_rps",
                "--ramp-up-start-rps",
                ov.ramp_up_start_rps.is_some(),
            ),
            _ => (
                "ramp_up_end_rps",
                "--ramp-up-end-rps",
                ov.ramp_up_end_rps.is_some(),
            ),
        };
        cx.at_key(key, flag, from_flag, e.to_string());
    }
}

/// Finite rates must lie in the supported range (`request_rate` at least
/// [`MIN_RATE`], ramp bounds at least 0; all at most [`MAX_RATE`]).
pub(super) fn check_rate_ranges(
    cx: &mut Ctx<'_>,
    ov: &LoadOverrides,
    request_rate: Option<f64>,
    start: Option<f64>,
    end: Option<f64>,
) {
    let rates = [
        (
            "request_rate",
            "--request-rate",
            ov.request_rate.is_some(),
            request_rate,
            MIN_RATE,
        ),
        (
            "ramp_up_start_rps",
            "--ramp-up-start-rps",
            ov.ramp_up_start_rps.is_some(),
            start,
            0.0,
        ),
        (
            "ramp_up_end_rps",
            "--ramp-up-end-rps",
            ov.ramp_up_end_rps.is_some(),
            end,
            0.0,
        ),
    ];
    for (key, flag, from_flag, v, lo) in rates {
        if let Some(v) = v.filter(|v| v.is_finite() && (*v > MAX_RATE || (*v > 0.0 && *v < lo))) {
            let range = if lo > 0.0 {
                format!("[{lo:e}, {MAX_RATE:e}] or \"inf\"")
            } else {
                format!("[0, {MAX_RATE:e}]")
            };
            cx.at_key(
                key,
                flag,
                from_flag,
                format!(
                    "{key} must be in {range} requests per second (got {})",
                    crate::util::textpos::num(v)
                ),
            );
        }
    }
}
