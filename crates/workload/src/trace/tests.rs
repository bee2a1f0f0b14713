use std::io::Cursor;

use flashlab_engine::IoKind;
use proptest::prelude::*;

use super::formats::decimal_ns;
use super::sample::{self, SAMPLE_REQUESTS, SAMPLE_SEED};
use super::*;

/// `shared/reference` in an ancestor of the repository, when present.
pub(crate) fn reference_dir() -> Option<std::path::PathBuf> {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/reference"))
        .find(|p| p.is_dir())
}

fn read_all(format: TraceFormat, text: &str) -> Result<Vec<TraceRecord>, TraceError> {
    read_with(TraceOptions::new(format), text)
}

fn read_with(options: TraceOptions, text: &str) -> Result<Vec<TraceRecord>, TraceError> {
    TraceReader::new(Cursor::new(text.as_bytes()), "t", options)?.collect()
}

fn rec(line: u64, time_ns: u64, kind: IoKind, offset_bytes: u64, len_bytes: u64) -> TraceRecord {
    TraceRecord {
        line,
        time_ns,
        kind,
        offset_bytes,
        len_bytes,
    }
}

/// The line number and message of the error reading `text` gives.
fn error_at(format: TraceFormat, text: &str) -> (u64, String) {
    let e = read_all(format, text).expect_err("malformed input must fail");
    (e.line().expect("a malformed-line error"), e.to_string())
}

#[test]
fn disksim_reads_ns_times_sectors_and_the_read_flag() {
    let t = "938513000 4 264719034 16 0\n\n# note\n938828000 3 197570570 8 1\n";
    assert_eq!(
        read_all(TraceFormat::Disksim, t).unwrap(),
        vec![
            rec(1, 938_513_000, IoKind::Write, 264_719_034 * 512, 8192),
            rec(4, 938_828_000, IoKind::Read, 197_570_570 * 512, 4096),
        ]
    );
    // The original DiskSim writes milliseconds with a fraction.
    let mut o = TraceOptions::new(TraceFormat::Disksim);
    o.disksim_time_unit = TimeUnit::Ms;
    assert_eq!(
        read_with(o, "12.5005 0 8 8 1\n").unwrap(),
        vec![rec(1, 12_500_500, IoKind::Read, 4096, 4096)]
    );
}

#[test]
fn disksim_malformed_lines_name_their_line() {
    for (text, line, what) in [
        ("1 0 8 8 1\n1 0 8 8\n", 2, "5 columns"),
        ("x 0 8 8 1\n", 1, "arrival time"),
        ("1 0 -8 8 1\n", 1, "start sector"),
        ("1 0 8 8 1\n\n1 0 8 8 read\n", 3, "request type"),
        ("1 0 99999999999999999 8 1\n", 1, "below 2^64"),
    ] {
        let (at, msg) = error_at(TraceFormat::Disksim, text);
        assert_eq!(at, line, "{msg}");
        assert!(
            msg.contains(what) && msg.starts_with(&format!("t:{line}:")),
            "{msg}"
        );
    }
}

#[test]
fn msr_reads_filetime_ticks_and_byte_ranges() {
    let t = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n\
             128166372003061629,hm,1,Read,3154280448,4096,13535\n\
             128166372016382155,hm,0,write,3154280448,65536,3029\n";
    assert_eq!(
        read_all(TraceFormat::Msr, t).unwrap(),
        vec![
            rec(
                2,
                12_816_637_200_306_162_900,
                IoKind::Read,
                3_154_280_448,
                4096
            ),
            rec(
                3,
                12_816_637_201_638_215_500,
                IoKind::Write,
                3_154_280_448,
                65536
            ),
        ]
    );
    let (at, msg) = error_at(
        TraceFormat::Msr,
        "1,h,0,Read,0,4096,1\n1,h,0,Erase,0,4096,1\n",
    );
    assert_eq!(at, 2);
    assert!(msg.contains("Read or Write"), "{msg}");
    let (at, msg) = error_at(TraceFormat::Msr, "1,h,0,Read,0,4096\n");
    assert_eq!(at, 1);
    assert!(msg.contains("7 columns"), "{msg}");
    // Only the first line may be a header.
    let (at, _) = error_at(
        TraceFormat::Msr,
        "1,h,0,Read,0,4096,1\nTimestamp,a,b,c,d,e,f\n",
    );
    assert_eq!(at, 2);
}

#[test]
fn blkparse_takes_dispatches_by_default_and_stops_at_the_summary() {
    let t = "  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]\n\
               8,0    3        2     0.000001500   697  D   W 223490 + 8 [kjournald]\n\
               8,0    3        3     0.000300000   697  C   W 223490 + 8 [0]\n\
               8,0    1        4     1.250000000   12  D  RS 1000 + 16 [fio]\n\
               8,0    1        5     1.300000000   12  D  FWS [fio]\n\
               8,0    1        6     1.400000000   12  D  DS 2048 + 2048 [fio]\n\
             CPU3 (8,0):\n Reads Queued: 1\n";
    let recs = read_all(TraceFormat::Blkparse, t).unwrap();
    assert_eq!(
        recs,
        vec![
            rec(2, 1_500, IoKind::Write, 223_490 * 512, 4096),
            rec(4, 1_250_000_000, IoKind::Read, 512_000, 8192),
            rec(5, 1_300_000_000, IoKind::Flush, 0, 0),
            rec(6, 1_400_000_000, IoKind::Trim, 2048 * 512, 2048 * 512),
        ]
    );
    let mut o = TraceOptions::new(TraceFormat::Blkparse);
    o.blkparse_action = BlkparseAction::Queue;
    let queued = read_with(o, t).unwrap();
    assert_eq!(queued.len(), 1);
    assert_eq!(queued[0].time_ns, 0);
}

#[test]
fn blkparse_malformed_lines_name_their_line() {
    for (text, line, what) in [
        ("garbage here\n", 1, "maj,min"),
        ("8,0 0 1 0.1 5 D\n", 1, "maj,min"),
        ("8,0 0 1 0.1 5 D W 10 - 8 [x]\n", 1, "sector + count"),
        (
            "8,0 0 1 0.1 5 C W 1 + 8 [x]\n8,0 0 1 0.x 5 D W 10 + 8 [x]\n",
            2,
            "seconds",
        ),
        ("8,0 0 1 0.1 5 D W 10 + eight [x]\n", 1, "sector count"),
        ("8,0 0 1 0.1 5 D Z 10 + 8 [x]\n", 1, "RWBS"),
    ] {
        let (at, msg) = error_at(TraceFormat::Blkparse, text);
        assert_eq!(at, line, "{msg}");
        assert!(msg.contains(what), "{msg}");
    }
}

#[test]
fn fio_iolog_v3_uses_timestamps_and_v2_sums_waits() {
    let v3 = "fio version 3 iolog\n23 work/f.dat add\n134 work/f.dat open\n\
              138 work/f.dat read 3858432 4096\n531 work/f.dat write 30076928 4096\n\
              600 work/f.dat datasync\n1269 work/f.dat close\n";
    assert_eq!(
        read_all(TraceFormat::FioIolog, v3).unwrap(),
        vec![
            rec(4, 138_000, IoKind::Read, 3_858_432, 4096),
            rec(5, 531_000, IoKind::Write, 30_076_928, 4096),
            rec(6, 600_000, IoKind::Flush, 0, 0),
        ]
    );
    // fio 3.33's own write_iolog output, when the reference files are beside the repository.
    if let Some(dir) = reference_dir() {
        let text = std::fs::read_to_string(dir.join("fio-3.33/fio-iolog-v3.sample.log")).unwrap();
        let recs = read_all(TraceFormat::FioIolog, &text).unwrap();
        assert_eq!(recs.len(), 20);
        assert_eq!(recs[0], rec(4, 138_000, IoKind::Read, 3_858_432, 4096));
        assert_eq!(recs[19].time_ns, 1_193_000);
    }

    let v2 = "fio version 2 iolog\n/f add\n/f open\n/f read 0 4096\n/f wait 250 0\n\
              /f write 8192 8192\n/f sync\n/f trim 0 4096\n/f close\n";
    assert_eq!(
        read_all(TraceFormat::FioIolog, v2).unwrap(),
        vec![
            rec(4, 0, IoKind::Read, 0, 4096),
            rec(6, 250_000, IoKind::Write, 8192, 8192),
            rec(7, 250_000, IoKind::Flush, 0, 0),
            rec(8, 250_000, IoKind::Trim, 0, 4096),
        ]
    );
}

#[test]
fn fio_iolog_malformed_lines_name_their_line() {
    for (text, line, what) in [
        ("1 f read 0 4096\n", 1, "header"),
        ("fio version 3 iolog\nx f read 0 4096\n", 2, "µs"),
        ("fio version 3 iolog\n1 f read 0\n", 2, "offset and length"),
        (
            "fio version 3 iolog\n1 f read 0 4096 9\n",
            2,
            "offset and length",
        ),
        ("fio version 3 iolog\n1 f wait 10 0\n", 2, "an action"),
        ("fio version 2 iolog\nf frobnicate 0 1\n", 2, "an action"),
        ("fio version 2 iolog\nf\n", 2, "filename action"),
    ] {
        let (at, msg) = error_at(TraceFormat::FioIolog, text);
        assert_eq!(at, line, "{msg}");
        assert!(msg.contains(what), "{msg}");
    }
}

#[test]
fn alibaba_and_tencent_read_their_units() {
    let ali = "device_id,opcode,offset,length,timestamp\n0,R,126703644672,4096,1577808000000626\n\
               3,W,4096,8192,1577808000000700\n";
    assert_eq!(
        read_all(TraceFormat::Alibaba, ali).unwrap(),
        vec![
            rec(
                2,
                1_577_808_000_000_626_000,
                IoKind::Read,
                126_703_644_672,
                4096
            ),
            rec(3, 1_577_808_000_000_700_000, IoKind::Write, 4096, 8192),
        ]
    );
    let ten = "1538323199,105352008,584,1,1576\n1538323200,8,8,0,1576\n";
    assert_eq!(
        read_all(TraceFormat::Tencent, ten).unwrap(),
        vec![
            rec(
                1,
                1_538_323_199 * 1_000_000_000,
                IoKind::Write,
                105_352_008 * 512,
                584 * 512
            ),
            rec(2, 1_538_323_200 * 1_000_000_000, IoKind::Read, 4096, 4096),
        ]
    );
    for (format, text, line, what) in [
        (
            TraceFormat::Alibaba,
            "0,R,0,4096,1\n0,X,0,4096,1\n",
            2,
            "R or W",
        ),
        (TraceFormat::Alibaba, "0,R,0,4096\n", 1, "5 columns"),
        (TraceFormat::Alibaba, "0,R,0,4k,1\n", 1, "length in bytes"),
        (TraceFormat::Tencent, "1,8,8,2,1\n", 1, "IOType"),
        (TraceFormat::Tencent, "1,8,8,0,1,9\n", 1, "5 columns"),
        (
            TraceFormat::Tencent,
            "1,8,8,0,1\n1.5,8,8,0,1\n",
            2,
            "Timestamp",
        ),
    ] {
        let (at, msg) = error_at(format, text);
        assert_eq!(at, line, "{msg}");
        assert!(msg.contains(what), "{msg}");
    }
}

#[test]
fn skip_mode_counts_bad_lines_and_keeps_the_good_ones() {
    let mut o = TraceOptions::new(TraceFormat::Tencent);
    o.skip_bad_lines = true;
    let text = "1,8,8,0,1\nbad\n2,8,8,9,1\n3,16,8,1,1\n";
    let mut r = TraceReader::new(Cursor::new(text), "t", o).unwrap();
    let recs: Vec<_> = r.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[1].line, 4);
    let c = r.counts();
    assert_eq!((c.lines, c.requests, c.skipped_bad_lines), (4, 2, 2));
    assert_eq!(c.first_bad_line, Some(2));
}

#[test]
fn volume_filter_max_requests_and_zero_lengths() {
    let text = "1 0 8 8 1\n2 1 8 8 1\n3 0 16 0 1\n4 0 24 8 0\n5 0 32 8 0\n";
    let mut o = TraceOptions::new(TraceFormat::Disksim);
    o.volume = Some(0);
    let mut r = TraceReader::new(Cursor::new(text), "t", o.clone()).unwrap();
    let lines: Vec<u64> = r.by_ref().map(|x| x.unwrap().line).collect();
    assert_eq!(lines, vec![1, 4, 5]);
    assert_eq!((r.counts().filtered, r.counts().zero_length), (1, 1));
    o.max_requests = Some(2);
    assert_eq!(read_with(o, text).unwrap().len(), 2);
    // A volume filter on a format without volumes is refused up front.
    let mut o = TraceOptions::new(TraceFormat::Blkparse);
    o.volume = Some(1);
    let e = read_with(o, "").unwrap_err();
    assert!(e.to_string().contains("names no device"), "{e}");
}

#[test]
fn decimal_times_are_exact() {
    assert_eq!(decimal_ns("0.000000001", 1_000_000_000, "t").unwrap(), 1);
    assert_eq!(decimal_ns("1.5", 1_000, "t").unwrap(), 1_500);
    assert_eq!(decimal_ns("7", 1, "t").unwrap(), 7);
    assert_eq!(decimal_ns(".25", 1_000_000, "t").unwrap(), 250_000);
    // Digits below a nanosecond are dropped.
    assert_eq!(decimal_ns("1.0009", 1_000, "t").unwrap(), 1_000);
    for bad in ["", ".", "1e3", "-1", "1.2.3", "99999999999999999999"] {
        assert!(decimal_ns(bad, 1, "t").is_err(), "{bad}");
    }
}

fn io(line: u64, offset_bytes: u64, len_bytes: u64) -> TraceRecord {
    rec(line, 0, IoKind::Read, offset_bytes, len_bytes)
}

#[test]
fn remap_wraps_scales_clamps_and_refuses() {
    // 100 blocks of 4 KiB.
    let cap = 100 * 4096;
    let mut wrap = Remapper::new(Remap::Wrap, cap, 4096, 0).unwrap();
    assert_eq!(wrap.map(&io(1, 4096, 4096)).unwrap(), (4096, 4096));
    // Unaligned ranges grow outward to whole blocks.
    assert_eq!(wrap.map(&io(1, 4097, 4096)).unwrap(), (4096, 8192));
    assert_eq!(
        wrap.map(&io(1, 103 * 4096, 4096)).unwrap(),
        (3 * 4096, 4096)
    );
    // Crossing the end: clamped, not split.
    assert_eq!(
        wrap.map(&io(1, 98 * 4096, 4 * 4096)).unwrap(),
        (98 * 4096, 2 * 4096)
    );
    assert_eq!((wrap.moved, wrap.clamped), (1, 1));

    let mut scale = Remapper::new(Remap::Scale, cap, 4096, 400 * 4096).unwrap();
    assert_eq!(
        scale.map(&io(1, 200 * 4096, 4096)).unwrap(),
        (50 * 4096, 4096)
    );
    assert_eq!(
        scale.map(&io(1, 399 * 4096, 4096)).unwrap(),
        (99 * 4096, 4096)
    );
    // A trace that fits keeps its addresses.
    let mut fits = Remapper::new(Remap::Scale, cap, 4096, 50 * 4096).unwrap();
    assert_eq!(fits.map(&io(1, 7 * 4096, 4096)).unwrap(), (7 * 4096, 4096));

    let mut strict = Remapper::new(Remap::Error, cap, 4096, 0).unwrap();
    assert_eq!(
        strict.map(&io(1, 99 * 4096, 4096)).unwrap(),
        (99 * 4096, 4096)
    );
    let e = strict.map(&io(9, 99 * 4096, 8192)).unwrap_err();
    assert!(e.to_string().starts_with("line 9:"), "{e}");
    // Flushes carry no range.
    let flush = rec(1, 0, IoKind::Flush, 0, 0);
    assert_eq!(strict.map(&flush).unwrap(), (0, 0));
    assert!(Remapper::new(Remap::Wrap, 100, 4096, 0).is_err());
}

#[test]
fn samples_parse_back_in_every_format() {
    let reqs = sample::sample_requests(50, 3);
    for format in TraceFormat::ALL {
        let text = sample::render(format, &reqs);
        let recs = read_all(format, &text).unwrap_or_else(|e| panic!("{format}: {e}"));
        assert_eq!(recs.len(), reqs.len(), "{format}");
        for (r, s) in recs.iter().zip(&reqs) {
            assert_eq!(r.offset_bytes, s.sector * 512, "{format}");
            assert_eq!(r.len_bytes, s.sectors * 512, "{format}");
            assert_eq!(r.kind == IoKind::Read, s.read, "{format}");
        }
        let span = |v: &[TraceRecord]| v.last().unwrap().time_ns - v[0].time_ns;
        if format != TraceFormat::Tencent {
            // Every format but Tencent's (whole seconds) keeps µs spacing.
            assert_eq!(
                span(&recs) / 1_000,
                reqs.last().unwrap().time_us - reqs[0].time_us,
                "{format}"
            );
        }
    }
}

#[test]
fn committed_samples_match_the_generator() {
    let reqs = sample::sample_requests(SAMPLE_REQUESTS, SAMPLE_SEED);
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/traces");
    for format in TraceFormat::ALL {
        let path = format!("{dir}/{}", sample::sample_file_name(format));
        let want = sample::render(format, &reqs);
        if std::env::var_os("FLASHLAB_WRITE_SAMPLES").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{path}: {e} (FLASHLAB_WRITE_SAMPLES=1 writes it)"));
        assert!(
            have == want,
            "{path} differs from the generator (FLASHLAB_WRITE_SAMPLES=1 rewrites it)"
        );
    }
}

proptest! {
    #[test]
    fn no_line_panics(line in ".{0,120}", format in 0usize..6) {
        let format = TraceFormat::ALL[format];
        let mut o = TraceOptions::new(format);
        o.skip_bad_lines = false;
        let text = format!("{line}\n{line}\n");
        let _ = read_with(o, &text);
    }

    #[test]
    fn numeric_noise_never_panics(fields in proptest::collection::vec("[0-9RW.,+ -]{0,24}", 0..9)) {
        for format in TraceFormat::ALL {
            let line = fields.join(if matches!(format, TraceFormat::Disksim | TraceFormat::Blkparse | TraceFormat::FioIolog) { " " } else { "," });
            let _ = read_all(format, &format!("8,0 {line}\n{line}\n"));
        }
    }
}

/// One request whose range ends past 2^64 bytes, in each format that can state one, then a
/// good request.
fn overflowing_lines() -> Vec<(TraceFormat, String)> {
    let top = 18_446_744_073_709_547_520u64; // 2^64 - 4096
    let top_sector = top / 512;
    vec![
        (TraceFormat::Msr, format!("128166372003061629,h,0,Write,{top},1048576,0\n128166372003061630,h,0,Write,0,4096,0\n")),
        (TraceFormat::Disksim, format!("0 0 {top_sector} 2048 0\n1 0 0 8 0\n")),
        (TraceFormat::Blkparse, format!("8,0 0 1 0.000000001 1 D W {top_sector} + 2048 [fio]\n8,0 0 2 0.000000002 1 D W 0 + 8 [fio]\n")),
        (TraceFormat::FioIolog, format!("fio version 3 iolog\n0 f write {top} 1048576\n1 f write 0 4096\n")),
        (TraceFormat::Alibaba, format!("0,W,{top},1048576,0\n0,W,0,4096,1\n")),
        (TraceFormat::Tencent, format!("0,{top_sector},2048,1,0\n1,0,8,1,0\n")),
    ]
}

#[test]
fn ranges_past_2_pow_64_are_errors_naming_the_line_in_every_format() {
    for (format, text) in overflowing_lines() {
        let bad_line = if format == TraceFormat::FioIolog {
            2
        } else {
            1
        };
        let (line, msg) = error_at(format, &text);
        assert_eq!(line, bad_line, "{format}: {msg}");
        assert!(msg.contains("below 2^64"), "{format}: {msg}");
        // Skipped and counted instead with --skip-bad-lines; the good request stays.
        let mut o = TraceOptions::new(format);
        o.skip_bad_lines = true;
        let mut reader = TraceReader::new(Cursor::new(text.as_bytes()), "t", o).unwrap();
        let got: Vec<_> = reader.by_ref().collect::<Result<_, _>>().unwrap();
        assert_eq!(got.len(), 1, "{format}");
        assert_eq!(got[0].offset_bytes, 0, "{format}");
        assert_eq!(reader.counts().skipped_bad_lines, 1, "{format}");
        assert_eq!(reader.counts().first_bad_line, Some(bad_line), "{format}");
    }
}

#[test]
fn non_utf8_bytes_are_a_malformed_line_named_once_and_skippable() {
    let text = b"0 0 0 8 0\n1 0 \xff\xfe 8 0\n2 0 8 8 1\n";
    let reader = TraceReader::new(
        Cursor::new(&text[..]),
        "t",
        TraceOptions::new(TraceFormat::Disksim),
    )
    .unwrap();
    let e = reader.collect::<Result<Vec<_>, _>>().unwrap_err();
    assert_eq!(e.line(), Some(2), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("UTF-8"), "{msg}");
    assert_eq!(
        msg.matches("1 0 ").count(),
        1,
        "the line is shown once: {msg}"
    );
    let mut o = TraceOptions::new(TraceFormat::Disksim);
    o.skip_bad_lines = true;
    let mut reader = TraceReader::new(Cursor::new(&text[..]), "t", o).unwrap();
    assert_eq!(reader.by_ref().count(), 2);
    assert_eq!(reader.counts().skipped_bad_lines, 1);
}

#[test]
fn an_overlong_line_is_malformed_and_does_not_grow_the_buffer() {
    // A 1 MiB line with no newline in it, then a good line.
    let mut text = vec![b'7'; 1 << 20];
    text.extend_from_slice(b"\n2 0 8 8 1\n");
    let reader = TraceReader::new(
        Cursor::new(&text[..]),
        "t",
        TraceOptions::new(TraceFormat::Disksim),
    )
    .unwrap();
    let e = reader.collect::<Result<Vec<_>, _>>().unwrap_err();
    assert_eq!(e.line(), Some(1), "{e}");
    assert!(e.to_string().contains("at most 65536 bytes"), "{e}");
    assert!(
        e.to_string().len() < 400,
        "the message echoes an excerpt only"
    );
    let mut o = TraceOptions::new(TraceFormat::Disksim);
    o.skip_bad_lines = true;
    let mut reader = TraceReader::new(Cursor::new(&text[..]), "t", o).unwrap();
    let got: Vec<_> = reader.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(got, vec![rec(2, 2, IoKind::Read, 4096, 4096)]);
    assert!(reader.buf.capacity() <= 2 * MAX_TRACE_LINE_BYTES);
}
