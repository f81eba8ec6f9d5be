//! SVG charts of a bench run (plotters' SVG backend: plain SVG elements, no
//! script, so they render in a browser and on GitHub).

use anyhow::anyhow;
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;

use crate::bench::report::{GroupSummary, RepoSpeed};

/// Chart size in pixels.
const SIZE: (u32, u32) = (760, 440);

fn color(index: usize) -> RGBColor {
    const COLORS: [RGBColor; 8] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
    ];
    COLORS[index % COLORS.len()]
}

/// Turns a plotters error into an [`anyhow::Error`].
fn plot_error(error: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("Failed to draw a chart: {error}")
}

/// Draws one chart on a new white SVG canvas of [`SIZE`]; returns the SVG text.
fn canvas(
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> anyhow::Result<()>,
) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        draw(&root)?;
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

/// Draws the series' legend in a framed box at `position`.
fn legend<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    position: SeriesLabelPosition,
) -> anyhow::Result<()> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(plot_error)
}

/// Mean recall@k for k = 1..=10, one line per method.
///
/// # Errors
///
/// When plotters fails to lay the chart out.
pub fn recall_curves(
    title: &str,
    group: &GroupSummary,
    methods: &[String],
) -> anyhow::Result<String> {
    canvas(|root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(48)
            .build_cartesian_2d(1f64..10f64, 0f64..1f64)
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .x_desc("k")
            .y_desc("recall@k")
            .x_labels(10)
            .x_label_formatter(&|k| format!("{k:.0}"))
            .draw()
            .map_err(plot_error)?;
        for (index, method) in methods.iter().enumerate() {
            let Some(curve) = group.recall_curve.get(method) else {
                continue;
            };
            let style = color(index).stroke_width(2);
            chart
                .draw_series(LineSeries::new(
                    curve.iter().enumerate().map(|(k, v)| ((k + 1) as f64, *v)),
                    style,
                ))
                .map_err(plot_error)?
                .label(method.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)
    })
}

/// Share of tasks with every gold file's body in aic's prompt, per budget,
/// one line per group.
///
/// # Errors
///
/// When plotters fails to lay the chart out.
pub fn gold_body_by_budget(
    title: &str,
    groups: &[GroupSummary],
    budgets: &[String],
) -> anyhow::Result<String> {
    canvas(|root| {
        let last = budgets.len().saturating_sub(1).max(1) as f64;
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(48)
            .build_cartesian_2d(-0.2f64..last + 0.2, 0f64..1f64)
            .map_err(plot_error)?;
        let label = |x: &f64| {
            let index = x.round();
            if (x - index).abs() < 1e-6 && index >= 0.0 {
                budgets.get(index as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .x_desc("budget (tokens)")
            .y_desc("gold body present")
            .x_labels(budgets.len().max(2))
            .x_label_formatter(&label)
            .draw()
            .map_err(plot_error)?;
        for (index, group) in groups.iter().enumerate() {
            let style = color(index).stroke_width(2);
            let points: Vec<(f64, f64)> = group
                .budgets
                .iter()
                .enumerate()
                .map(|(i, b)| (i as f64, b.gold_body))
                .collect();
            chart
                .draw_series(LineSeries::new(points.clone(), style))
                .map_err(plot_error)?
                .label(group.name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
            chart
                .draw_series(
                    points
                        .into_iter()
                        .map(|p| Circle::new(p, 3, style.filled())),
                )
                .map_err(plot_error)?;
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)
    })
}

/// Median wall time per measurement (aic's and the peers'), one bar per
/// repository, on a log scale.
///
/// # Errors
///
/// When plotters fails to lay the chart out.
pub fn latency(speed: &[RepoSpeed]) -> anyhow::Result<String> {
    let mut names: Vec<&str> = Vec::new();
    for repo in speed {
        for (name, _) in &repo.measurements {
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
    }
    let values = speed
        .iter()
        .flat_map(|r| r.measurements.iter().filter_map(|(_, s)| s.median_ms));
    let max = values.fold(1.0f64, f64::max);
    canvas(|root| {
        let columns = names.len().max(1) as f64;
        let mut chart = ChartBuilder::on(root)
            .caption("Median wall time per measurement", ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d(-0.5f64..columns - 0.5, (0.5f64..max * 2.0).log_scale())
            .map_err(plot_error)?;
        let label = |x: &f64| {
            let index = x.round();
            if (x - index).abs() < 1e-6 && index >= 0.0 {
                names
                    .get(index as usize)
                    .map(|n| (*n).to_owned())
                    .unwrap_or_default()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_desc("ms (log)")
            .x_labels(names.len().max(2))
            .x_label_formatter(&label)
            .draw()
            .map_err(plot_error)?;
        let width = 0.8 / speed.len().max(1) as f64;
        for (index, repo) in speed.iter().enumerate() {
            let style = color(index).filled();
            let bars: Vec<Rectangle<(f64, f64)>> = repo
                .measurements
                .iter()
                .filter_map(|(name, stats)| {
                    let column = names.iter().position(|n| n == name)? as f64;
                    let left = column - 0.4 + width * index as f64;
                    Some(Rectangle::new(
                        [(left, 0.5), (left + width * 0.9, stats.median_ms?.max(0.5))],
                        style,
                    ))
                })
                .collect();
            chart
                .draw_series(bars)
                .map_err(plot_error)?
                .label(repo.repo.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], style));
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}
