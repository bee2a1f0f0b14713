//! A chart's SVG as a PNG image: rasterised by `resvg` at twice the SVG's size (sharp on a
//! high-density screen and in print), on white, with the text in DejaVu Sans, which this
//! crate embeds (`fonts/`, its licence beside it). No system font is looked up, so the
//! same SVG gives the same PNG bytes on every machine that runs the same build.

use std::sync::{Arc, OnceLock};

use resvg::tiny_skia::{Color, Pixmap, Transform};
use resvg::usvg::{fontdb, Options, Tree};

/// Pixels of the PNG per SVG user unit.
pub const PNG_SCALE: f32 = 2.0;

/// The embedded font; every generic family the SVG may name resolves to it.
const FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
const FONT_FAMILY: &str = "DejaVu Sans";

/// Largest PNG side drawn, in pixels: a chart is 820 × 400 units, so this bounds the memory
/// a malformed size could ask for.
const MAX_SIDE_PX: u32 = 8192;

fn fonts() -> Arc<fontdb::Database> {
    static FONTS: OnceLock<Arc<fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = fontdb::Database::new();
            db.load_font_source(fontdb::Source::Binary(Arc::new(FONT)));
            db.set_sans_serif_family(FONT_FAMILY);
            db.set_serif_family(FONT_FAMILY);
            db.set_monospace_family(FONT_FAMILY);
            db.set_cursive_family(FONT_FAMILY);
            db.set_fantasy_family(FONT_FAMILY);
            Arc::new(db)
        })
        .clone()
}

/// `svg` (one chart, as [`crate::html::render_svg`] writes it) as PNG bytes, or why it could
/// not be drawn.
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>, String> {
    let options = Options {
        font_family: FONT_FAMILY.to_string(),
        fontdb: fonts(),
        ..Options::default()
    };
    let tree = Tree::from_str(svg, &options).map_err(|e| format!("the SVG does not parse: {e}"))?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(PNG_SCALE)
        .filter(|s| s.width() <= MAX_SIDE_PX && s.height() <= MAX_SIDE_PX)
        .ok_or_else(|| {
            format!(
                "the SVG's size ({} × {}) is not one a PNG of at most {MAX_SIDE_PX} pixels a side can draw at {PNG_SCALE}×",
                tree.size().width(),
                tree.size().height()
            )
        })?;
    let mut pixmap = Pixmap::new(size.width(), size.height())
        .ok_or_else(|| "no image of that size can be made".to_string())?;
    pixmap.fill(Color::WHITE);
    resvg::render(
        &tree,
        Transform::from_scale(PNG_SCALE, PNG_SCALE),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| format!("the PNG could not be encoded: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Width and height from a PNG's IHDR chunk, after checking the signature.
    fn png_size(png: &[u8]) -> (u32, u32) {
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
        assert_eq!(&png[12..16], b"IHDR");
        let be = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
        (be(16), be(20))
    }

    const SVG: &str = r##"<svg width="120" height="50" viewBox="0 0 120 50" xmlns="http://www.w3.org/2000/svg"><rect x="0" y="0" width="120" height="50" fill="#FFFFFF"/><text x="10" y="30" font-family="sans-serif" font-size="14" fill="#333333">p99.9 – 5 µs</text></svg>"##;

    #[test]
    fn a_chart_is_drawn_at_twice_its_size_the_same_every_time() {
        let png = svg_to_png(SVG).unwrap();
        assert_eq!(png_size(&png), (240, 100));
        assert_eq!(png, svg_to_png(SVG).unwrap());
    }

    #[test]
    fn the_text_is_drawn_with_the_embedded_font() {
        let blank = SVG.replace("p99.9 – 5 µs", "");
        // A font that did not load leaves the text out: the page would be blank.
        assert_ne!(svg_to_png(SVG).unwrap(), svg_to_png(&blank).unwrap());
    }

    #[test]
    fn what_is_not_an_svg_is_refused_with_a_reason() {
        let e = svg_to_png("<html/>").unwrap_err();
        assert!(e.contains("does not parse"), "{e}");
    }

    #[test]
    fn a_titled_chart_draws_taller_by_its_title_band() {
        use crate::chart::{Axis, Chart, Series, Unit};
        let fig = crate::html::Figure::new(Chart {
            id: "c".into(),
            title: "A chart".into(),
            x: Axis::linear("x", Unit::Count),
            y: Axis::linear("y", Unit::Iops),
            series: vec![Series {
                name: "a".into(),
                points: vec![(1.0, 2.0), (2.0, 3.0)],
            }],
            band: None,
        });
        let png = svg_to_png(&crate::html::render_svg(&fig)).unwrap();
        let (w, h) = png_size(&png);
        assert_eq!((w, h), (1640, 860), "820 × 430 at {PNG_SCALE}×");
    }
}
