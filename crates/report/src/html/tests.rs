use super::*;
use crate::chart::{Axis, Series, Unit};

fn chart(series: Vec<Series>) -> Chart {
    Chart {
        id: "c".into(),
        title: "A chart".into(),
        x: Axis::linear("round", Unit::Count),
        y: Axis::linear("write", Unit::Iops),
        series,
        band: None,
    }
}

fn series(name: &str, points: &[(f64, f64)]) -> Series {
    Series {
        name: name.into(),
        points: points.to_vec(),
    }
}

/// The value of attribute `name` on the SVG root.
fn root_attr(svg: &str, name: &str) -> String {
    let root = &svg[svg.find("<svg").unwrap()..];
    let root = &root[..root.find('>').unwrap()];
    let at = root.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
    root[at..at + root[at..].find('"').unwrap()].to_string()
}

/// Centres of the drawn markers.
fn circles(svg: &str) -> Vec<(i32, i32)> {
    svg.match_indices("<circle")
        .map(|(i, _)| {
            let tag = &svg[i..i + svg[i..].find("/>").unwrap()];
            let attr = |n: &str| {
                let a = tag.find(&format!(" {n}=\"")).unwrap() + n.len() + 3;
                tag[a..a + tag[a..].find('"').unwrap()]
                    .parse::<i32>()
                    .unwrap()
            };
            (attr("cx"), attr("cy"))
        })
        .collect()
}

#[test]
fn every_point_is_one_marker_and_counted_on_the_root() {
    let f = Figure::new(chart(vec![
        series("a", &[(1.0, 10.0), (2.0, 20.0), (3.0, 15.0)]),
        series("b", &[(1.0, 5.0), (3.0, 7.0)]),
    ]));
    let svg = render_svg(&f);
    assert_eq!(root_attr(&svg, "data-chart-id"), "c");
    assert_eq!(root_attr(&svg, "data-points"), "5");
    assert_eq!(root_attr(&svg, "data-series"), "2");
    let c = circles(&svg);
    assert_eq!(c.len(), 5);
    // Larger values sit higher (smaller y); x grows to the right.
    assert!(c[1].1 < c[0].1 && c[0].0 < c[1].0);
    assert_eq!(svg.matches("<svg").count(), 1);
}

#[test]
fn nan_and_infinite_values_are_skipped_and_break_the_line() {
    let f = Figure::new(chart(vec![series(
        "gappy",
        &[
            (1.0, 1.0),
            (2.0, 2.0),
            (3.0, f64::NAN),
            (4.0, 4.0),
            (5.0, 5.0),
            (f64::INFINITY, 6.0),
        ],
    )]));
    let svg = render_svg(&f);
    assert_eq!(root_attr(&svg, "data-points"), "4");
    assert_eq!(circles(&svg).len(), 4);
    assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    // Two runs of two points: two lines for the data, one for the legend's sample.
    let lines = svg
        .matches("<polyline")
        .zip(svg.split("<polyline").skip(1))
        .filter(|(_, rest)| {
            rest.contains("stroke-width=\"2\" points")
                && rest.find("/>") > rest.find("stroke-width=\"2\"")
        })
        .count();
    assert_eq!(lines, 3, "{svg}");
}

#[test]
fn log_axis_spaces_decades_evenly_and_skips_non_positive_values() {
    let mut c = chart(vec![series(
        "lat",
        &[(1.0, 1e3), (2.0, 1e4), (3.0, 1e5), (4.0, 0.0), (5.0, -3.0)],
    )]);
    c.y = Axis::log("latency", Unit::Ns);
    let svg = render_svg(&Figure::new(c));
    assert_eq!(root_attr(&svg, "data-points"), "3");
    let p = circles(&svg);
    assert_eq!(p.len(), 3);
    let (d1, d2) = (p[0].1 - p[1].1, p[1].1 - p[2].1);
    assert!(d1 > 20 && (d1 - d2).abs() <= 1, "{p:?}");
    // Ticks in µs at each decade, the axis titled with the unit.
    assert!(svg.contains("latency (µs)"), "{svg}");
    for label in [">\n1\n<", ">\n10\n<", ">\n100\n<"] {
        assert!(svg.contains(label), "{label}: {svg}");
    }
}

#[test]
fn band_is_shaded_and_named_in_the_legend() {
    let mut c = chart(vec![series(
        "write IOPS",
        &[(1.0, 9.0), (2.0, 5.0), (3.0, 5.0), (4.0, 5.0)],
    )]);
    let plain = render_svg(&Figure::new(c.clone()));
    c.band = Some((2.0, 4.0));
    let f = Figure::new(c);
    assert_eq!(f.bands[0].label, "round 2–4");
    let svg = render_svg(&f);
    // One translucent rectangle over the plot and one swatch in the legend.
    let shaded = |s: &str| s.matches("<rect").filter(|_| true).count();
    assert_eq!(shaded(&svg), shaded(&plain) + 2, "{svg}");
    assert!(svg.contains("opacity=\"0.14\""), "{svg}");
    assert!(svg.contains("round 2–4"));
}

#[test]
fn names_are_escaped_everywhere() {
    let nasty = "a<b & \"c\"";
    let mut c = chart(vec![series(nasty, &[(1.0, 1.0), (2.0, 2.0)])]);
    c.id = nasty.into();
    c.title = nasty.into();
    let page = Page {
        title: nasty.into(),
        intro: vec![nasty.into()],
        sections: vec![Section {
            heading: nasty.into(),
            blocks: vec![
                Block::Heading(nasty.into()),
                Block::Paragraph(nasty.into()),
                Block::Table(Table {
                    header: vec![nasty.into()],
                    rows: vec![vec![nasty.into(), nasty.into()]],
                }),
                Block::Figure(Figure::new(c)),
            ],
        }],
        footer: Some(nasty.into()),
    };
    let html = render_page(&page);
    assert!(!html.contains(nasty), "raw name in the page");
    assert!(!html.contains("a<b"), "raw name in the page");
    assert!(html.contains("a&lt;b &amp; &quot;c&quot;"));
    assert!(html.contains("data-chart-id=\"a&lt;b &amp; &quot;c&quot;\""));
}

#[test]
fn empty_series_and_empty_charts_draw_axes_and_no_points() {
    let f = Figure::new(chart(vec![
        series("none", &[]),
        series("one", &[(3.0, 7.0)]),
    ]));
    let svg = render_svg(&f);
    assert_eq!(root_attr(&svg, "data-points"), "1");
    assert_eq!(circles(&svg).len(), 1);
    assert!(svg.contains("none (no data)"));

    let mut empty = chart(vec![series("none", &[(1.0, f64::NAN)])]);
    empty.x.log = true;
    empty.y.log = true;
    let svg = render_svg(&Figure::new(empty));
    assert_eq!(root_attr(&svg, "data-points"), "0");
    assert!(circles(&svg).is_empty());
    let svg = render_svg(&Figure::new(chart(Vec::new())));
    assert_eq!(root_attr(&svg, "data-points"), "0");
}

#[test]
fn page_is_self_contained_and_deterministic() {
    let page = Page {
        title: "t".into(),
        intro: Vec::new(),
        sections: vec![Section {
            heading: "h".into(),
            blocks: vec![Block::Figure(Figure::new(chart(vec![series(
                "a",
                &[(1.0, 2.0), (2.0, 3.0)],
            )])))],
        }],
        footer: None,
    };
    let html = render_page(&page);
    assert_eq!(html, render_page(&page));
    // No external resources: the only URL is the SVG namespace, which is never fetched.
    let urls: Vec<_> = html
        .match_indices("http")
        .map(|(i, _)| &html[i..i + 26])
        .collect();
    assert!(
        urls.iter()
            .all(|u| u.starts_with("http://www.w3.org/2000/svg") || u.starts_with("http-equiv")),
        "{urls:?}"
    );
    for banned in ["<link", "src=", "@import", "url("] {
        assert!(!html.contains(banned), "{banned}");
    }
    assert!(html.contains("<output id=\"chart-check\" hidden>"));
}

#[test]
fn many_series_keep_distinct_colours_then_go_hollow() {
    let many: Vec<Series> = (0..12)
        .map(|i| series(&format!("s{i}"), &[(1.0, f64::from(i)), (2.0, 1.0)]))
        .collect();
    let svg = render_svg(&Figure::new(chart(many)));
    assert_eq!(root_attr(&svg, "data-points"), "24");
    // Past the ten-colour palette, markers are outlines.
    assert_eq!(svg.matches("<circle").count(), 24);
    let hollow = svg
        .split("<circle")
        .skip(1)
        .filter(|tag| tag[..tag.find("/>").unwrap()].contains("fill=\"none\""))
        .count();
    assert_eq!(hollow, 4, "{svg}");
}

#[test]
fn bars_stand_side_by_side_at_their_category_with_labels() {
    let mut f = Figure::new(chart(vec![
        series("a", &[(0.0, 100.0), (1.0, 50.0)]),
        series("b", &[(0.0, 80.0), (1.0, 60.0)]),
    ]));
    f.kind = FigureKind::Bars;
    f.x_ticks = vec![(0.0, "read".into()), (1.0, "write".into())];
    f.labels = vec![
        vec!["100".into(), "50".into()],
        vec!["80".into(), "60".into()],
    ];
    f.secondary = vec![1];
    let svg = render_svg(&f);
    assert_eq!(root_attr(&svg, "data-points"), "4");
    let c = circles(&svg);
    assert_eq!(c.len(), 4);
    // Series a's bars, then b's: b's bar stands right of a's in the same category, and
    // both of a category's bars lie left of the next category's.
    assert!(
        c[0].0 < c[2].0 && c[2].0 < c[1].0 && c[1].0 < c[3].0,
        "{c:?}"
    );
    // The taller value reaches higher.
    assert!(c[0].1 < c[2].1);
    for text in ["read", "write", "100", "60"] {
        assert!(
            svg.contains(&format!(">\n{text}\n</text>")),
            "{text} missing"
        );
    }
    // A filled bar per measured point, an outlined one per secondary point.
    assert!(svg.matches("<rect").count() >= 4);
}

#[test]
fn named_ticks_replace_the_axis_and_secondary_lines_are_dashed() {
    let mut f = Figure::new(chart(vec![
        series("mean", &[(0.0, 1.0), (1.0, 2.0), (2.0, 4.0)]),
        series("p99", &[(0.0, 3.0), (1.0, 6.0), (2.0, 9.0)]),
    ]));
    f.x_ticks = vec![(0.0, "0".into()), (1.0, "90".into()), (2.0, "99".into())];
    f.secondary = vec![1];
    f.colours = vec![0, 0];
    f.labels = vec![vec!["QD1".into(), "QD8".into(), "QD32".into()]];
    let svg = render_svg(&f);
    assert_eq!(root_attr(&svg, "data-points"), "6");
    for text in ["90", "99", "QD1", "QD32"] {
        assert!(
            svg.contains(&format!(">\n{text}\n</text>")),
            "{text} missing"
        );
    }
    // The secondary series draws short dashes: more line segments than the solid one.
    let plain = {
        let mut g = f.clone();
        g.secondary.clear();
        render_svg(&g)
    };
    assert!(svg.matches("<polyline").count() > plain.matches("<polyline").count());
}

#[test]
fn a_standalone_chart_carries_its_title_and_still_draws() {
    let f = Figure::new(chart(vec![series("a", &[(1.0, 10.0), (2.0, 20.0)])]));
    let svg = render_svg(&f);
    assert!(svg.contains(">A chart</text>"), "{svg}");
    assert_eq!(root_attr(&svg, "data-points"), "2");
    assert_eq!(root_attr(&svg, "height"), "430");
    assert_eq!(svg.matches("<svg").count(), 1);
    assert_eq!(svg.matches("</svg>").count(), 1);
    // The page's inline chart has the page's heading instead.
    let page = render_page(&Page {
        title: "p".into(),
        intro: Vec::new(),
        sections: vec![Section {
            heading: "s".into(),
            blocks: vec![Block::Figure(f.clone())],
        }],
        footer: None,
    });
    assert!(!page.contains(">A chart</text>"));
}

#[test]
fn two_series_bands_take_lanes_and_never_blend() {
    let mut f = Figure::new(chart(vec![
        series("a", &[(1.0, 9.0), (5.0, 5.0)]),
        series("b", &[(1.0, 8.0), (5.0, 4.0)]),
    ]));
    for (i, (from, to)) in [(2.0, 4.0), (3.0, 5.0)].into_iter().enumerate() {
        f.bands.push(Band {
            from,
            to,
            label: format!("steady {i}"),
            series: Some(i),
        });
    }
    let svg = render_svg(&f);
    // (y, height) of each shade drawn over the plot.
    let shades: Vec<(i32, i32)> = svg
        .match_indices("<rect")
        .map(|(i, _)| &svg[i..i + svg[i..].find("/>").unwrap()])
        .filter(|t| t.contains("opacity=\"0.14\""))
        .map(|t| {
            let attr = |n: &str| {
                let a = t.find(&format!(" {n}=\"")).unwrap() + n.len() + 3;
                t[a..a + t[a..].find('"').unwrap()].parse::<i32>().unwrap()
            };
            (attr("y"), attr("height"))
        })
        .collect();
    assert_eq!(shades.len(), 2, "{svg}");
    let (upper, lower) = if shades[0].0 < shades[1].0 {
        (shades[0], shades[1])
    } else {
        (shades[1], shades[0])
    };
    // Overlapping in x, the two shades share no pixel row.
    assert!(upper.0 + upper.1 <= lower.0 + 1, "{shades:?}");
}

#[test]
fn point_labels_at_one_place_do_not_overprint() {
    let mut f = Figure::new(chart(vec![
        series("a", &[(1.0, 10.0), (4.0, 20.0)]),
        series("b", &[(1.0, 10.0), (4.0, 30.0)]),
    ]));
    f.labels = vec![
        vec!["QD1".into(), "QD8".into()],
        vec!["QD1".into(), "QD8".into()],
    ];
    let svg = render_svg(&f);
    // (x, y) of each "QD1" text.
    let at: Vec<(i32, i32)> = svg
        .match_indices(">\nQD1\n</text>")
        .map(|(i, _)| {
            let t = &svg[svg[..i].rfind("<text").unwrap()..i];
            let attr = |n: &str| {
                let a = t.find(&format!(" {n}=\"")).unwrap() + n.len() + 3;
                t[a..a + t[a..].find('"').unwrap()].parse::<i32>().unwrap()
            };
            (attr("x"), attr("y"))
        })
        .collect();
    assert_eq!(at.len(), 2, "{svg}");
    let apart_x = (at[0].0 - at[1].0).abs() >= 3 * 7;
    let apart_y = (at[0].1 - at[1].1).abs() >= 12;
    assert!(apart_x || apart_y, "{at:?}");
}
