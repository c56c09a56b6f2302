//! The end-to-end coordinator tables and the scale-curve plot from the
//! `commit-bench` lines of `coordinator-e2e run` (Rust) and the Java harness's `commit-bench`:
//!
//! ```text
//! coordinator-report --e2e FILE --scale FILE [--svg OUT.svg]
//! ```
//!
//! Each line is `commit-bench impl=I kind=K payloads=P files=F iterations=N median_ns=T
//! min_ns=T max_ns=T vmhwm_kb=R load=L1/L5/L15` (`scripts/bench` appends the load average
//! read right after the process ended). Prints two Markdown tables: the end-to-end rows of
//! `--e2e` with the ratio of Java's median to paimon-wire's for the same workload, and the
//! scale curve of `--scale` (paimon-wire's commit forms, `paimon-wire` one-shot and
//! `paimon-wire-staged`, and Java side by side where they ran, with the JVM's heap; a
//! `commit-bench-failed` line is a run that did not finish, shown with its reason), then each
//! form's projection to 10^7 files and the scale targets it met or missed. With `--svg`, also
//! draws the scale curve (time and peak RSS against files, both axes logarithmic) as a
//! self-contained SVG.

use std::fmt::Write as _;

type Error = Box<dyn std::error::Error>;

/// One `commit-bench` line.
#[derive(Debug, Clone)]
struct Row {
    implementation: String,
    kind: String,
    payloads: u64,
    files: u64,
    iterations: u64,
    median_s: f64,
    min_s: f64,
    max_s: f64,
    peak_rss_mb: f64,
    /// The heap the JVM could grow to (`max_heap_mb=`, Java lines only).
    max_heap_mb: Option<u64>,
    load: String,
}

/// One `commit-bench-failed` line: a run that did not finish (Java out of heap, say), which
/// `scripts/bench` writes with `impl=I kind=K files=F max_heap_mb=H reason=...` (the reason
/// to the end of the line).
#[derive(Debug, Clone)]
struct Failure {
    implementation: String,
    files: u64,
    max_heap_mb: Option<u64>,
    reason: String,
}

/// Field `key` of a `commit-bench` line's `fields`, or an error naming the key and the line.
fn required_field<'a>(
    fields: &std::collections::BTreeMap<&'a str, &'a str>,
    key: &str,
    line: &str,
) -> Result<&'a str, String> {
    fields
        .get(key)
        .copied()
        .ok_or_else(|| format!("no {key}= in {line:?}"))
}

fn parse_failures(text: &str) -> Result<Vec<Failure>, Error> {
    let mut failures = Vec::new();
    for line in text
        .lines()
        .filter(|l| l.starts_with("commit-bench-failed "))
    {
        let (head, reason) = line.split_once(" reason=").unwrap_or((line, "unknown"));
        let fields = paimon_wire_bench::key_value_fields(head);
        let get = |k: &str| required_field(&fields, k, line);
        failures.push(Failure {
            implementation: get("impl")?.to_string(),
            files: get("files")?.parse()?,
            max_heap_mb: fields.get("max_heap_mb").and_then(|v| v.parse().ok()),
            reason: reason.to_string(),
        });
    }
    Ok(failures)
}

/// One line of a plot: its name, its colour and its (x, y) points.
type Series<'a> = (&'a str, &'a str, Vec<(f64, f64)>);

fn parse_rows(text: &str) -> Result<Vec<Row>, Error> {
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("commit-bench ")) {
        let fields = paimon_wire_bench::key_value_fields(line);
        let get = |k: &str| required_field(&fields, k, line);
        let number = |k: &str| -> Result<u64, Error> { Ok(get(k)?.parse()?) };
        let seconds = |k: &str| -> Result<f64, Error> { Ok(number(k)? as f64 / 1e9) };
        rows.push(Row {
            implementation: get("impl")?.to_string(),
            kind: get("kind")?.to_string(),
            payloads: number("payloads")?,
            files: number("files")?,
            iterations: number("iterations")?,
            median_s: seconds("median_ns")?,
            min_s: seconds("min_ns")?,
            max_s: seconds("max_ns")?,
            // VmHWM is in KiB; MB = 10^6 bytes as in the rest of BENCHMARKS.md.
            peak_rss_mb: number("vmhwm_kb")? as f64 * 1024.0 / 1e6,
            max_heap_mb: fields.get("max_heap_mb").and_then(|v| v.parse().ok()),
            load: fields.get("load").unwrap_or(&"?").replace('/', " / "),
        });
    }
    Ok(rows)
}

fn workload_name(kind: &str) -> &str {
    match kind {
        "append" => "W3 (append)",
        "pk" => "PK (16 buckets)",
        other => other,
    }
}

/// Whether `row` is one of paimon-wire's commit forms (`paimon-wire` for the one-shot commit,
/// `paimon-wire-staged` for the staged one), not Java's.
fn is_ours(row: &Row) -> bool {
    row.implementation.starts_with("paimon-wire")
}

/// The speed-up column of `row`: Java's median over paimon-wire's on paimon-wire's rows, `1×` on
/// Java's, `—` without a Java row to compare with.
fn speed_up_cell(row: &Row, java: Option<&Row>) -> String {
    match java {
        Some(java) if is_ours(row) => {
            format!("{:.2}×", java.median_s / row.median_s)
        }
        Some(_) => "1×".to_string(),
        None => "—".to_string(),
    }
}

fn e2e_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| workload | implementation | payloads | data files | iterations | median s | min s | max s | peak RSS MB | paimon-wire speed-up vs Java | load average |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for row in rows {
        let java = rows.iter().find(|r| {
            r.kind == row.kind && r.files == row.files && r.implementation.starts_with("java")
        });
        let ratio = speed_up_cell(row, java);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {:.0} | {ratio} | {} |",
            workload_name(&row.kind),
            row.implementation,
            row.payloads,
            row.files,
            row.iterations,
            row.median_s,
            row.min_s,
            row.max_s,
            row.peak_rss_mb,
            row.load
        );
    }
    out
}

fn scale_table(rows: &[Row], failures: &[Failure]) -> String {
    let mut out = String::from(
        "| data files | payloads | implementation | iterations | median s | min s | max s | µs per file | peak RSS MB | KB per file | JVM heap (-Xmx) MB | paimon-wire speed-up vs Java | load average |\n\
         |---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    let heap = |mb: Option<u64>| mb.map_or_else(|| "—".to_string(), |mb| mb.to_string());
    let mut sizes: Vec<u64> = rows
        .iter()
        .map(|r| r.files)
        .chain(failures.iter().map(|f| f.files))
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    for files in sizes {
        let java = rows
            .iter()
            .find(|r| r.files == files && r.implementation.starts_with("java"));
        for row in rows.iter().filter(|r| r.files == files) {
            let ratio = speed_up_cell(row, java);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {:.1} | {:.0} | {:.2} | {} | {ratio} | {} |",
                row.files,
                row.payloads,
                row.implementation,
                row.iterations,
                row.median_s,
                row.min_s,
                row.max_s,
                row.median_s * 1e6 / row.files as f64,
                row.peak_rss_mb,
                row.peak_rss_mb * 1e3 / row.files as f64,
                heap(row.max_heap_mb),
                row.load
            );
        }
        for failure in failures.iter().filter(|f| f.files == files) {
            let _ = writeln!(
                out,
                "| {} | {} | {} | — | **failed**: {} | — | — | — | — | — | {} | — | — |",
                failure.files,
                failure.files / 100,
                failure.implementation,
                failure.reason.replace('|', "/"),
                heap(failure.max_heap_mb),
            );
        }
    }
    out
}

/// The scale targets of paimon-wire's coordinator: 10^6 files in at most this many seconds…
const TARGET_SECONDS_AT_1M: f64 = 6.0;
/// …and this peak RSS in MB.
const TARGET_MB_AT_1M: f64 = 1024.0;
/// Within this fraction from 10^6 to the largest size: time per file (linear) and peak memory
/// (flat).
const TARGET_LINEARITY: f64 = 0.10;

/// [`projection_of`] each of paimon-wire's commit forms on the scale curve, in the order
/// they first appear.
fn projections(rows: &[Row]) -> String {
    let mut forms: Vec<&str> = Vec::new();
    for row in rows.iter().filter(|r| is_ours(r)) {
        if !forms.contains(&row.implementation.as_str()) {
            forms.push(&row.implementation);
        }
    }
    forms
        .iter()
        .map(|form| projection_of(form, rows))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The projection of the scale curve of paimon-wire's commit form `form` to 10^7 files, and
/// the scale targets met or missed: time and peak RSS are fitted as `fixed + per_file × files`
/// through the two largest sizes it ran; the targets are checked on the 10^6 row and, above
/// it, on the largest size (time per file against 10^6's, peak memory against 10^6's). Empty
/// without two sizes.
fn projection_of(form: &str, rows: &[Row]) -> String {
    let mut ours: Vec<&Row> = rows.iter().filter(|r| r.implementation == form).collect();
    ours.sort_by_key(|r| r.files);
    let [.., small, large] = ours.as_slice() else {
        return String::new();
    };
    let fit = |y: fn(&Row) -> f64| {
        let per_file = (y(large) - y(small)) / (large.files - small.files) as f64;
        (y(large) - per_file * large.files as f64, per_file)
    };
    let (time_fixed, time_per_file) = fit(|r| r.median_s);
    let (mb_fixed, mb_per_file) = fit(|r| r.peak_rss_mb);
    let ten_million = 1e7;
    let mut out = format!(
        "`{form}`: projection to 10^7 files (a line through the {} and {} file runs): \
         **{:.1} s and {:.1} GB** (time {:.2} µs and memory {:.2} KB per file, plus {:.2} s and \
         {:.0} MB fixed).\n\n",
        small.files,
        large.files,
        time_fixed + time_per_file * ten_million,
        (mb_fixed + mb_per_file * ten_million) / 1024.0,
        time_per_file * 1e6,
        mb_per_file * 1e3,
        time_fixed,
        mb_fixed,
    );
    let met = |ok: bool| if ok { "met" } else { "**missed**" };
    if let Some(million) = ours.iter().find(|r| r.files == 1_000_000) {
        let _ = writeln!(
            out,
            "- 10^6 files in at most {TARGET_SECONDS_AT_1M} s and {TARGET_MB_AT_1M} MB: {:.2} s \
             ({}) and {:.0} MB ({}).",
            million.median_s,
            met(million.median_s <= TARGET_SECONDS_AT_1M),
            million.peak_rss_mb,
            met(million.peak_rss_mb <= TARGET_MB_AT_1M),
        );
        if large.files > million.files {
            let time_change = (large.median_s / large.files as f64)
                / (million.median_s / million.files as f64)
                - 1.0;
            let mb_change = large.peak_rss_mb / million.peak_rss_mb - 1.0;
            let _ = writeln!(
                out,
                "- {} files, time linear within {:.0} %: time per file {:+.1} % against 10^6 \
                 ({}); memory flat (the peak of 10^6 within {:.0} %): peak {:+.1} % ({}).",
                large.files,
                TARGET_LINEARITY * 100.0,
                time_change * 100.0,
                met(time_change.abs() <= TARGET_LINEARITY),
                TARGET_LINEARITY * 100.0,
                mb_change * 100.0,
                met(mb_change.abs() <= TARGET_LINEARITY),
            );
        }
    }
    out
}

/// A log-log panel of `series` (name, colour, points) at (`x0`, `y0`) of `w` × `h` pixels.
fn panel(
    svg: &mut String,
    (x0, y0, w, h): (f64, f64, f64, f64),
    title: &str,
    unit: &str,
    series: &[Series],
) {
    let points = series.iter().flat_map(|s| s.2.iter());
    let (mut x_min, mut x_max, mut y_min, mut y_max) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in points {
        x_min = x_min.min(x);
        x_max = x_max.max(x);
        y_min = y_min.min(y);
        y_max = y_max.max(y);
    }
    if x_min > x_max {
        return;
    }
    // Whole decades around the data.
    let (lx0, lx1) = (
        x_min.log10().floor(),
        x_max.log10().ceil().max(x_min.log10().floor() + 1.0),
    );
    let (ly0, ly1) = (
        y_min.log10().floor(),
        y_max.log10().ceil().max(y_min.log10().floor() + 1.0),
    );
    let px = |x: f64| x0 + (x.log10() - lx0) / (lx1 - lx0) * w;
    let py = |y: f64| y0 + h - (y.log10() - ly0) / (ly1 - ly0) * h;
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" font-size="14" text-anchor="middle">{title}</text>"#,
        x0 + w / 2.0,
        y0 - 10.0
    );
    let _ = writeln!(
        svg,
        r##"<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" stroke="#444"/>"##
    );
    let mut decade = lx0;
    while decade <= lx1 {
        let x = px(10f64.powf(decade));
        let _ = writeln!(
            svg,
            r##"<line x1="{x}" y1="{y0}" x2="{x}" y2="{}" stroke="#ddd"/><text x="{x}" y="{}" font-size="11" text-anchor="middle">10^{decade}</text>"##,
            y0 + h,
            y0 + h + 15.0
        );
        decade += 1.0;
    }
    let mut decade = ly0;
    while decade <= ly1 {
        let y = py(10f64.powf(decade));
        let label = format_decade(decade);
        let _ = writeln!(
            svg,
            r##"<line x1="{x0}" y1="{y}" x2="{}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" font-size="11" text-anchor="end">{label}</text>"##,
            x0 + w,
            x0 - 5.0,
            y + 4.0
        );
        decade += 1.0;
    }
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" font-size="12" text-anchor="middle">data files committed</text>"#,
        x0 + w / 2.0,
        y0 + h + 32.0
    );
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" font-size="12" text-anchor="middle" transform="rotate(-90 {} {})">{unit}</text>"#,
        x0 - 45.0,
        y0 + h / 2.0,
        x0 - 45.0,
        y0 + h / 2.0
    );
    for (i, (name, colour, points)) in series.iter().enumerate() {
        let path: Vec<String> = points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = writeln!(
            svg,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
            path.join(" ")
        );
        for &(x, y) in points {
            let _ = writeln!(
                svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{colour}"/>"#,
                px(x),
                py(y)
            );
        }
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{}" font-size="11" fill="{colour}">{name}</text>"#,
            x0 + 8.0,
            y0 + 16.0 + 14.0 * i as f64
        );
    }
}

fn format_decade(decade: f64) -> String {
    let value = 10f64.powf(decade);
    if (0.0..4.0).contains(&decade) {
        format!("{value:.0}")
    } else if decade < 0.0 {
        format!("{value}")
    } else {
        format!("10^{decade}")
    }
}

fn scale_svg(rows: &[Row], caption: &str) -> String {
    let mut implementations: Vec<&str> = rows.iter().map(|r| r.implementation.as_str()).collect();
    implementations.sort_unstable();
    implementations.dedup();
    let colours = ["#1f77b4", "#d62728", "#2ca02c"];
    let series = |value: fn(&Row) -> f64| -> Vec<Series> {
        implementations
            .iter()
            .zip(colours.iter().cycle())
            .map(|(name, colour)| {
                let points = rows
                    .iter()
                    .filter(|r| r.implementation == *name)
                    .map(|r| (r.files as f64, value(r)))
                    .collect();
                (*name, *colour, points)
            })
            .collect()
    };
    let mut svg = String::from(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="900" height="420" font-family="sans-serif">
<rect width="900" height="420" fill="white"/>
"#,
    );
    panel(
        &mut svg,
        (80.0, 40.0, 330.0, 290.0),
        "coordinator time (decode, validate, merge, commit)",
        "seconds (median)",
        &series(|r| r.median_s),
    );
    panel(
        &mut svg,
        (530.0, 40.0, 330.0, 290.0),
        "peak resident memory",
        "MB (VmHWM)",
        &series(|r| r.peak_rss_mb),
    );
    let _ = writeln!(
        svg,
        r#"<text x="450" y="405" font-size="11" text-anchor="middle">{}</text>"#,
        caption.replace('&', "&amp;").replace('<', "&lt;")
    );
    svg.push_str("</svg>\n");
    svg
}

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let (mut e2e, mut scale, mut svg) = (None, None, None);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or("a flag without its value")?;
        match flag.as_str() {
            "--e2e" => e2e = Some(value),
            "--scale" => scale = Some(value),
            "--svg" => svg = Some(value),
            _ => {
                return Err("usage: coordinator-report --e2e FILE --scale FILE [--svg OUT]".into())
            }
        }
    }
    if let Some(path) = e2e {
        let rows = parse_rows(&std::fs::read_to_string(path)?)?;
        println!("### The coordinator end to end\n");
        println!("{}", e2e_table(&rows));
    }
    if let Some(path) = scale {
        let text = std::fs::read_to_string(path)?;
        let rows = parse_rows(&text)?;
        let failures = parse_failures(&text)?;
        println!("### Scale curve (append table, 100 files per payload)\n");
        println!("{}", scale_table(&rows, &failures));
        println!("{}", projections(&rows));
        if let Some(out) = svg {
            let loads: Vec<&str> = rows.iter().map(|r| r.load.as_str()).collect();
            let caption = format!(
                "the coordinator, fresh local table per run; load averages during the runs: {}",
                loads.join("; ")
            );
            std::fs::write(&out, scale_svg(&rows, &caption))?;
            println!("Plot: `{out}`\n");
        }
    }
    Ok(())
}
