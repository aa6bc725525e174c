//! The Pareto front of a sweep (simulated device-program cycles against peak memory per tile,
//! both lower is better) and its plot, an SVG written by hand: every point a dot with its
//! parameters as a tooltip, the front's points in red joined by a staircase.

use std::fmt::Write as _;

/// One point of the plot.
pub struct Sample {
    /// Peak bytes per tile.
    pub memory: f64,
    /// Simulated device-program cycles.
    pub cycles: f64,
    /// Tooltip text.
    pub label: String,
}

/// Indices of the samples no other sample beats in both coordinates (one of equal twins),
/// in increasing memory.
pub fn front(samples: &[(f64, f64)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..samples.len()).collect();
    order.sort_by(|&a, &b| {
        let (xa, ya) = samples[a];
        let (xb, yb) = samples[b];
        xa.total_cmp(&xb).then(ya.total_cmp(&yb)).then(a.cmp(&b))
    });
    let mut best = f64::INFINITY;
    let mut on_front = Vec::new();
    for index in order {
        let (_, y) = samples[index];
        if y < best {
            best = y;
            on_front.push(index);
        }
    }
    on_front
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Round tick values covering `[low, high]`.
fn ticks(low: f64, high: f64) -> Vec<f64> {
    let span = (high - low).max(1.0);
    let raw = span / 8.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude);
    let mut value = (low / step).floor() * step;
    let mut out = Vec::new();
    while value <= high + step * 1e-9 {
        if value >= low - step * 1e-9 {
            out.push(value);
        }
        value += step;
    }
    out
}

/// A plot range with a margin, never empty.
fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
        (l.min(v), h.max(v))
    });
    if !low.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((high - low) * 0.08).max(high.abs() * 0.02).max(1.0);
    ((low - pad).max(0.0), high + pad)
}

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 500.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 60.0;

/// The SVG document of `samples` titled `title`.
pub fn svg(title: &str, samples: &[Sample]) -> String {
    let coords: Vec<(f64, f64)> = samples.iter().map(|s| (s.memory, s.cycles)).collect();
    let on_front = front(&coords);
    let (x0, x1) = range(coords.iter().map(|c| c.0));
    let (y0, y1) = range(coords.iter().map(|c| c.1));
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let px = |x: f64| LEFT + (x - x0) / (x1 - x0) * plot_w;
    let py = |y: f64| TOP + plot_h - (y - y0) / (y1 - y0) * plot_h;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="15">{}</text>"#,
        WIDTH / 2.0,
        escape(title)
    );
    for kib in ticks(x0 / 1024.0, x1 / 1024.0) {
        let x = kib * 1024.0;
        let _ = writeln!(
            out,
            r##"<line x1="{0:.1}" y1="{1}" x2="{0:.1}" y2="{2}" stroke="#ddd"/><text x="{0:.1}" y="{3}" text-anchor="middle">{4}</text>"##,
            px(x),
            TOP,
            TOP + plot_h,
            TOP + plot_h + 18.0,
            kib
        );
    }
    for y in ticks(y0, y1) {
        let _ = writeln!(
            out,
            r##"<line x1="{1}" y1="{0:.1}" x2="{2}" y2="{0:.1}" stroke="#ddd"/><text x="{3}" y="{4:.1}" text-anchor="end">{5}</text>"##,
            py(y),
            LEFT,
            LEFT + plot_w,
            LEFT - 6.0,
            py(y) + 4.0,
            y
        );
    }
    let _ = writeln!(
        out,
        r#"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="black"/>"#
    );
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">peak memory per tile (KiB)</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 14.0
    );
    let _ = writeln!(
        out,
        r#"<text x="20" y="{0}" text-anchor="middle" transform="rotate(-90 20 {0})">simulated device-program cycles</text>"#,
        TOP + plot_h / 2.0
    );
    write_front(&mut out, &on_front, &coords, &px, &py);
    for (index, sample) in samples.iter().enumerate() {
        let (fill, radius) = if on_front.contains(&index) {
            ("#d62728", 5.0)
        } else {
            ("#1f77b4", 3.5)
        };
        let _ = writeln!(
            out,
            r#"<circle class="{}" cx="{:.1}" cy="{:.1}" r="{radius}" fill="{fill}" fill-opacity="0.8"><title>{}</title></circle>"#,
            if on_front.contains(&index) {
                "front"
            } else {
                "point"
            },
            px(sample.memory),
            py(sample.cycles),
            escape(&sample.label)
        );
    }
    let _ = writeln!(
        out,
        r##"<circle cx="{0}" cy="{1}" r="5" fill="#d62728"/><text x="{2}" y="{3}">Pareto front ({4} of {5} points)</text>"##,
        LEFT + plot_w - 190.0,
        TOP + 14.0,
        LEFT + plot_w - 180.0,
        TOP + 18.0,
        on_front.len(),
        samples.len()
    );
    out.push_str("</svg>\n");
    out
}

/// The front's staircase: from each front point across to the next one's memory, then down.
fn write_front(
    out: &mut String,
    on_front: &[usize],
    coords: &[(f64, f64)],
    px: &dyn Fn(f64) -> f64,
    py: &dyn Fn(f64) -> f64,
) {
    if on_front.len() < 2 {
        return;
    }
    let mut path = Vec::new();
    for (step, &index) in on_front.iter().enumerate() {
        let (x, y) = coords[index];
        if step > 0 {
            let (_, previous_y) = coords[on_front[step - 1]];
            path.push(format!("{:.1},{:.1}", px(x), py(previous_y)));
        }
        path.push(format!("{:.1},{:.1}", px(x), py(y)));
    }
    let _ = writeln!(
        out,
        r##"<polyline class="front-line" points="{}" fill="none" stroke="#d62728" stroke-width="1.5"/>"##,
        path.join(" ")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_keeps_points_nothing_beats() {
        let samples = [
            (10.0, 100.0),
            (20.0, 50.0),
            (15.0, 120.0),
            (30.0, 50.0),
            (5.0, 200.0),
        ];
        assert_eq!(front(&samples), vec![4, 0, 1]);
    }

    #[test]
    fn front_of_twins_and_of_nothing() {
        assert_eq!(front(&[(1.0, 1.0), (1.0, 1.0)]), vec![0]);
        assert!(front(&[]).is_empty());
        assert_eq!(front(&[(3.0, 3.0)]), vec![0]);
    }

    #[test]
    fn svg_marks_the_front() {
        let samples: Vec<Sample> = [(1024.0, 900.0), (2048.0, 400.0), (4096.0, 800.0)]
            .iter()
            .enumerate()
            .map(|(i, &(memory, cycles))| Sample {
                memory,
                cycles,
                label: format!("p{i} <a&b>"),
            })
            .collect();
        let text = svg("sweep", &samples);
        assert!(text.starts_with("<svg"));
        assert!(text.trim_end().ends_with("</svg>"));
        assert_eq!(text.matches(r#"class="front""#).count(), 2);
        assert_eq!(text.matches(r#"class="point""#).count(), 1);
        assert!(text.contains("p0 &lt;a&amp;b&gt;"));
        assert!(text.contains("front-line"));
    }

    #[test]
    fn ticks_are_round_and_in_range() {
        let t = ticks(0.0, 1000.0);
        assert_eq!(t.first(), Some(&0.0));
        assert!(t.iter().all(|v| (v / 200.0).fract() == 0.0));
        assert!(t.len() >= 5 && t.len() <= 11);
    }
}
