//! `mcp-httpload report`: the JSON lines of `load` and `idle` runs (several repetitions of
//! two servers) as markdown tables. Figures are medians over repetitions; ratios are the
//! median of the per-repetition ratios subject/baseline (runs of the same repetition ran
//! back to back, so drift of a shared machine lands on both).

use std::collections::BTreeMap;
use std::process::ExitCode;

use serde_json::Value;

/// `(mode order, mode, clients)`.
type LoadKey = (u8, String, u64);

#[derive(Default)]
struct Data {
    /// load rows: key → label → rep → row.
    load: BTreeMap<LoadKey, BTreeMap<String, BTreeMap<u64, Value>>>,
    /// idle rows: label → rep → row.
    idle: BTreeMap<String, BTreeMap<u64, Value>>,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn field(rows: Option<&BTreeMap<u64, Value>>, name: &str) -> Vec<f64> {
    rows.map(|r| r.values().filter_map(|v| v[name].as_f64()).collect())
        .unwrap_or_default()
}

/// Median of `subject[rep] / baseline[rep]` over the repetitions both have.
fn paired(
    subject: Option<&BTreeMap<u64, Value>>,
    baseline: Option<&BTreeMap<u64, Value>>,
    name: &str,
) -> Option<f64> {
    let (s, b) = (subject?, baseline?);
    let ratios = s
        .iter()
        .filter_map(|(rep, v)| {
            let x = v[name].as_f64()?;
            let y = b.get(rep)?[name].as_f64()?;
            (y != 0.0).then_some(x / y)
        })
        .collect();
    median(ratios)
}

fn fmt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.digits$}"))
}

fn ratio(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("**{x:.2}x**"))
}

fn sum_errors(rows: Option<&BTreeMap<u64, Value>>) -> u64 {
    rows.map(|r| r.values().filter_map(|v| v["errors"].as_u64()).sum())
        .unwrap_or(0)
}

fn spread(rows: Option<&BTreeMap<u64, Value>>, name: &str, scale: f64, digits: usize) -> String {
    let v = field(rows, name);
    if v.is_empty() {
        return "-".into();
    }
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min) * scale;
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max) * scale;
    format!("{lo:.digits$}..{hi:.digits$}")
}

fn read(files: &[String]) -> Result<Data, String> {
    let mut data = Data::default();
    for f in files {
        let text = std::fs::read_to_string(f).map_err(|e| format!("{f}: {e}"))?;
        for line in text.lines().filter(|l| l.trim_start().starts_with('{')) {
            let v: Value = serde_json::from_str(line).map_err(|e| format!("{f}: {e}: {line}"))?;
            let label = v["label"].as_str().unwrap_or("?").to_owned();
            let rep = v["rep"].as_u64().unwrap_or(0);
            match v["kind"].as_str() {
                Some("load") => {
                    let mode = v["mode"].as_str().unwrap_or("?").to_owned();
                    let order = u8::from(mode != "stateless");
                    let key = (order, mode, v["clients"].as_u64().unwrap_or(0));
                    data.load
                        .entry(key)
                        .or_default()
                        .entry(label)
                        .or_default()
                        .insert(rep, v);
                }
                Some("idle") => {
                    data.idle.entry(label).or_default().insert(rep, v);
                }
                _ => {}
            }
        }
    }
    Ok(data)
}

/// Prints the tables; exit 1 when any run had errors or nothing was read.
pub(crate) fn main(files: &[String], subject: &str, baseline: &str, floor: &str) -> ExitCode {
    let data = match read(files) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("mcp-httpload report: {e}");
            return ExitCode::from(2);
        }
    };
    if data.load.is_empty() && data.idle.is_empty() {
        eprintln!("mcp-httpload report: no load or idle lines in {files:?}");
        return ExitCode::FAILURE;
    }
    let (s, b) = (subject, baseline);
    let reps = data
        .load
        .values()
        .flat_map(|m| m.values().map(BTreeMap::len))
        .max()
        .unwrap_or(0);
    println!("Medians of {reps} repetition(s); ratios are medians of per-repetition {s}/{b}.\n");
    println!("| mode | clients | {s} calls/s | {b} calls/s | calls/s ratio | {s} p50 ms | {b} p50 ms | {s} p99 ms | {b} p99 ms | p99 ratio | {s} CPU µs/call | {b} CPU µs/call | CPU ratio |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut errors: BTreeMap<&str, u64> = BTreeMap::new();
    let mut targets = Vec::new();
    let mut bounds: Vec<String> = Vec::new();
    for ((_, mode, clients), by_label) in &data.load {
        let (rs, rb) = (by_label.get(s), by_label.get(b));
        let med = |rows, name| median(field(rows, name));
        let ms = |rows, name| med(rows, name).map(|us| us / 1000.0);
        println!(
            "| {mode} | {clients} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            fmt(med(rs, "calls_per_s"), 0),
            fmt(med(rb, "calls_per_s"), 0),
            ratio(paired(rs, rb, "calls_per_s")),
            fmt(ms(rs, "p50_us"), 2),
            fmt(ms(rb, "p50_us"), 2),
            fmt(ms(rs, "p99_us"), 2),
            fmt(ms(rb, "p99_us"), 2),
            ratio(paired(rs, rb, "p99_us")),
            fmt(med(rs, "server_cpu_us_per_call"), 1),
            fmt(med(rb, "server_cpu_us_per_call"), 1),
            ratio(paired(rs, rb, "server_cpu_us_per_call")),
        );
        *errors.entry(s).or_default() += sum_errors(rs);
        *errors.entry(b).or_default() += sum_errors(rb);
        if *clients == 1000 {
            targets.push((
                format!("{mode}: calls/s at 1,000 clients >= 5x {b}"),
                paired(rs, rb, "calls_per_s"),
                5.0,
                true,
            ));
            targets.push((
                format!("{mode}: p99 at 1,000 clients no worse than {b}"),
                paired(rs, rb, "p99_us"),
                1.0,
                false,
            ));
        }
    }
    println!("\nSpread (min..max over repetitions) and the load generator's own CPU:\n");
    println!("| mode | clients | {s} calls/s | {b} calls/s | {s} p99 ms | {b} p99 ms | client CPU µs/call ({s} / {b}) |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for ((_, mode, clients), by_label) in &data.load {
        let (rs, rb) = (by_label.get(s), by_label.get(b));
        println!(
            "| {mode} | {clients} | {} | {} | {} | {} | {} / {} |",
            spread(rs, "calls_per_s", 1.0, 0),
            spread(rb, "calls_per_s", 1.0, 0),
            spread(rs, "p99_us", 0.001, 2),
            spread(rb, "p99_us", 0.001, 2),
            fmt(median(field(rs, "client_cpu_us_per_call")), 1),
            fmt(median(field(rb, "client_cpu_us_per_call")), 1),
        );
    }
    // The floor: the same load against a server with no MCP implementation.
    let floored: Vec<_> = data
        .load
        .iter()
        .filter(|(_, by_label)| by_label.contains_key(floor))
        .collect();
    if !floored.is_empty() {
        println!("\nAgainst the floor ({floor}: hyper + serde_json, no MCP implementation; ratios are per-repetition medians):\n");
        println!("| mode | clients | {floor} calls/s | {floor} CPU µs/call | {s}/{floor} calls/s | {s}/{floor} CPU | {b}/{floor} calls/s | {b}/{floor} CPU |");
        println!("|---|---:|---:|---:|---:|---:|---:|---:|");
        for ((_, mode, clients), by_label) in floored {
            let (rs, rb, rf) = (by_label.get(s), by_label.get(b), by_label.get(floor));
            println!(
                "| {mode} | {clients} | {} | {} | {} | {} | {} | {} |",
                fmt(median(field(rf, "calls_per_s")), 0),
                fmt(median(field(rf, "server_cpu_us_per_call")), 1),
                ratio(paired(rs, rf, "calls_per_s")),
                ratio(paired(rs, rf, "server_cpu_us_per_call")),
                ratio(paired(rb, rf, "calls_per_s")),
                ratio(paired(rb, rf, "server_cpu_us_per_call")),
            );
            *errors.entry(floor).or_default() += sum_errors(rf);
            if *clients == 1000 {
                bounds.push(format!(
                    "bound ({mode}): at 1,000 clients the floor makes {}x {b}'s calls/s with {}x its CPU per call (no server on this stack and machine does better)",
                    fmt(paired(rf, rb, "calls_per_s"), 2),
                    fmt(paired(rf, rb, "server_cpu_us_per_call"), 2),
                ));
            }
        }
    }
    // Peak RSS of a run: VmHWM after its last (largest) client count.
    println!("\n| memory | {s} | {b} | ratio |");
    println!("|---|---:|---:|---:|");
    let mut last: BTreeMap<&str, &BTreeMap<String, BTreeMap<u64, Value>>> = BTreeMap::new();
    for ((_, mode, _), by_label) in &data.load {
        last.insert(mode.as_str(), by_label);
    }
    for (mode, by_label) in last.iter().rev() {
        let (rs, rb) = (by_label.get(s), by_label.get(b));
        let mib = |rows| median(field(rows, "server_peak_rss_kib")).map(|k| k / 1024.0);
        println!(
            "| peak RSS MiB, {mode} run | {} | {} | {} |",
            fmt(mib(rs), 1),
            fmt(mib(rb), 1),
            ratio(paired(rs, rb, "server_peak_rss_kib")),
        );
    }
    if !data.idle.is_empty() {
        let (rs, rb) = (data.idle.get(s), data.idle.get(b));
        let kib = |rows| median(field(rows, "bytes_per_session")).map(|x| x / 1024.0);
        let n = median(field(rs.or(rb), "sessions")).unwrap_or(0.0);
        let r = paired(rs, rb, "bytes_per_session");
        println!(
            "| KiB per idle legacy session ({n:.0} sessions) | {} | {} | {} |",
            fmt(kib(rs), 1),
            fmt(kib(rb), 1),
            ratio(r),
        );
        *errors.entry(s).or_default() += sum_errors(rs);
        *errors.entry(b).or_default() += sum_errors(rb);
        targets.push((
            format!("memory per idle session <= 1/4 of {b}'s"),
            r,
            0.25,
            false,
        ));
    }
    println!();
    for (what, value, bound, at_least) in &targets {
        let verdict = match value {
            Some(v) if (*at_least && v >= bound) || (!*at_least && v <= bound) => "MET",
            Some(_) => "MISSED",
            None => "NOT MEASURED",
        };
        println!("target {what}: {} ({verdict})", fmt(*value, 2));
    }
    for line in &bounds {
        println!("{line}");
    }
    let total: u64 = errors.values().sum();
    println!(
        "errors: {}",
        errors
            .iter()
            .map(|(l, n)| format!("{l} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if total > 0 {
        println!("WARNING: some calls failed; the rows with errors are suspect (see the JSON lines' error_kinds)");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_pairs() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(vec![]), None);
        let rows = |v: &[(u64, f64)]| -> BTreeMap<u64, Value> {
            v.iter()
                .map(|(r, x)| (*r, serde_json::json!({ "x": x })))
                .collect()
        };
        let s = rows(&[(0, 10.0), (1, 30.0), (2, 8.0)]);
        let b = rows(&[(0, 5.0), (1, 10.0)]);
        // Rep 2 has no baseline: ratios 2 and 3.
        assert_eq!(paired(Some(&s), Some(&b), "x"), Some(2.5));
    }
}
