//! A result's run over time (`rtload.soak`, a soak's answer): the generator's RSS (at each
//! interval's end and the largest sampled within it) and CPU share per interval of the
//! live phase, then each stamped metric's p50 and p99 per interval of session age. Drawn
//! only when the run spans more than one interval; every point is a value of the JSON.

use serde_json::Value;

use super::super::svg::{Axis, Plot};
use super::{arr, figure, legend, num};

/// The soak figures of `doc` (empty when it has no `rtload.soak` spanning two intervals).
pub fn soak(doc: &Value) -> String {
    let Some(soak) = doc.pointer("/rtload/soak") else {
        return String::new();
    };
    let (res, ages) = (arr(soak, "resources"), arr(soak, "session_age"));
    if res.len() < 2 && ages.len() < 2 {
        return String::new();
    }
    let every = num(soak, "interval_s").unwrap_or(f64::NAN);
    let mut s = format!(
        "<h3>Over time</h3>\n<p class=\"note\">Every {} s: the generator over the live phase, then the stamped values by session age (<code>rtload.soak</code>).</p>\n",
        super::super::svg::fmt_num(every, 1)
    );
    if res.len() >= 2 {
        s.push_str(&resources(res));
    }
    for name in metric_names(ages) {
        s.push_str(&by_age(ages, &name));
    }
    s
}

/// `(x, y)` of each row whose `key` is a number.
fn points(rows: &[Value], x: &str, y: impl Fn(&Value) -> Option<f64>) -> Vec<(f64, f64)> {
    rows.iter()
        .filter_map(|r| Some((num(r, x)?, y(r)?)))
        .collect()
}

fn resources(res: &[Value]) -> String {
    let rss = points(res, "to_s", |r| num(r, "rss_mib"));
    let max = points(res, "to_s", |r| num(r, "rss_max_mib"));
    let cpu = points(res, "to_s", |r| Some(num(r, "core_share")? * 100.0));
    let x = || {
        Axis::fit(
            "live phase (s)",
            res.iter().filter_map(|r| num(r, "to_s")),
            false,
        )
    };
    let mem = x().zip(Axis::fit("MiB", rss.iter().chain(&max).map(|p| p.1), false));
    let mem = mem.map(|(x, y)| {
        let mut p = Plot::linear("soak-rss", "generator RSS", x, y);
        p.line(&rss, 0, "RSS at the interval's end");
        p.line(&max, 1, "largest RSS in the interval");
        p.finish()
    });
    let keys = [
        ("s0".to_string(), "RSS at the interval's end".to_string()),
        ("s1".to_string(), "largest RSS in the interval".to_string()),
    ];
    let mut s = figure(mem, "Generator RSS per interval (MiB)", &legend(&keys));
    let core = x().zip(Axis::fit("% of a core", cpu.iter().map(|p| p.1), false));
    let core = core.map(|(x, y)| {
        let mut p = Plot::linear("soak-cpu", "generator CPU", x, y);
        p.line(&cpu, 0, "CPU % of a core");
        p.finish()
    });
    s.push_str(&figure(
        core,
        "Generator CPU per interval (% of one core)",
        "",
    ));
    s
}

/// Every metric any age slice has statistics for, sorted.
fn metric_names(ages: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = ages
        .iter()
        .filter_map(|a| a.get("metrics")?.as_object())
        .flat_map(|m| m.keys().cloned())
        .collect();
    names.sort();
    names.dedup();
    names
}

fn by_age(ages: &[Value], name: &str) -> String {
    let stat = |k: &'static str| move |a: &Value| a.get("metrics")?.get(name)?.get(k)?.as_f64();
    let (p50, p99) = (
        points(ages, "from_s", stat("p50")),
        points(ages, "from_s", stat("p99")),
    );
    let x = Axis::fit(
        "session age (s)",
        ages.iter().filter_map(|a| num(a, "from_s")),
        false,
    );
    let y = Axis::fit(name, p50.iter().chain(&p99).map(|p| p.1), false);
    let svg = x.zip(y).map(|(x, y)| {
        let mut p = Plot::linear(&format!("soak-age-{name}"), name, x, y);
        p.line(&p50, 0, &format!("{name} p50"));
        p.line(&p99, 1, &format!("{name} p99"));
        p.finish()
    });
    let keys = [
        ("s0".to_string(), "p50".to_string()),
        ("s1".to_string(), "p99".to_string()),
    ];
    figure(
        svg,
        &format!("{name} by session age (interval start)"),
        &legend(&keys),
    )
}

#[cfg(test)]
#[path = "soak_tests.rs"]
mod tests;
