//! Reading input with a stated bound: every file flashlab reads (job files and their
//! includes, drive and system TOML, traces) goes through here, so a hostile or mistaken
//! input (`/dev/zero`, a directory, a multi-gigabyte line) is refused with a message instead
//! of growing memory without limit. The limits are listed in `docs/limits.md`.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufRead, Read};
use std::path::Path;

/// Largest job file (each file of an `include` tree counts on its own).
pub const MAX_JOB_FILE_BYTES: u64 = 1 << 20;
/// Largest sum of the job files one parse reads (a file and everything it includes, or a
/// command line's job files): a file included many times counts every time.
pub const MAX_JOB_TOTAL_BYTES: u64 = 4 << 20;
/// Largest drive or storage-system description (TOML).
pub const MAX_CONFIG_FILE_BYTES: u64 = 1 << 20;
/// Longest line of a block trace; a longer line is malformed (and skippable).
pub const MAX_TRACE_LINE_BYTES: usize = 64 << 10;
/// Input echoed in a message (a key, a value, a line) is cut to this many characters.
pub const MAX_ECHO_CHARS: usize = 80;

/// Why an input file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// Transparent: the OS's reason is the message, not also its cause, so a chain prints
    /// it once.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("it is {kind}, not a regular file or a pipe")]
    NotAFile { kind: &'static str },
    #[error("it is larger than {limit_bytes} bytes, the limit for {what}")]
    TooLarge {
        limit_bytes: u64,
        what: &'static str,
    },
    #[error("line {line} is not UTF-8 text")]
    NotUtf8 { line: usize },
}

/// What kind of file system object `meta` is, when it is not one flashlab reads as input
/// (devices never end, directories are no text).
fn refused_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return None;
        }
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file")
}

/// Open `path` for reading input: a regular file or a pipe (links followed); anything else
/// is refused before a byte is read. A regular file larger than `limit_bytes` is refused
/// from its size.
pub fn open_input(path: &Path, limit_bytes: u64, what: &'static str) -> Result<File, InputError> {
    let file = open_without_waiting(path)?;
    let meta = file.metadata()?;
    if let Some(kind) = refused_kind(&meta) {
        return Err(InputError::NotAFile { kind });
    }
    if meta.is_file() && meta.len() > limit_bytes {
        return Err(InputError::TooLarge { limit_bytes, what });
    }
    Ok(file)
}

/// Longest wait for a FIFO's first data or writer (opening a FIFO otherwise blocks until a
/// writer comes, for ever when none does).
pub const FIFO_WAIT_MS: i32 = 5_000;

/// Opens `path` for reading; a FIFO is opened without waiting, then given
/// [`FIFO_WAIT_MS`] for a writer to send data or finish: one no process writes is refused
/// instead of waited on for ever (`include ff.fio`).
fn open_without_waiting(path: &Path) -> std::io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        use std::os::unix::io::AsRawFd;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)?;
        let fd = file.as_raw_fd();
        if file.metadata()?.file_type().is_fifo() {
            let mut poll = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd for a descriptor this function owns.
            let ready = unsafe { libc::poll(&mut poll, 1, FIFO_WAIT_MS) };
            if ready == 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "a FIFO no process wrote to within {} s",
                        FIFO_WAIT_MS / 1000
                    ),
                ));
            }
        }
        // Reads wait for data once open, as on any file.
        // SAFETY: fcntl on a descriptor this function owns; no memory is passed.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
            }
        }
        Ok(file)
    }
    #[cfg(not(unix))]
    File::open(path)
}

/// The text of `path`, at most `limit_bytes` long (`what` names the limit in the message).
/// A pipe is read up to the limit and refused beyond it, so memory never exceeds it.
pub fn read_text(path: &Path, limit_bytes: u64, what: &'static str) -> Result<String, InputError> {
    let file = open_input(path, limit_bytes, what)?;
    let mut bytes = Vec::new();
    file.take(limit_bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit_bytes {
        return Err(InputError::TooLarge { limit_bytes, what });
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count();
        InputError::NotUtf8 { line }
    })
}

/// How [`read_line_bounded`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRead {
    /// No more input (nothing was read).
    End,
    /// A whole line (without its `\n`) is in the buffer.
    Line,
    /// The line was longer than the limit: the buffer holds its first `max_bytes` bytes and
    /// the rest of the line was read and dropped.
    TooLong,
}

/// Read one line into `buf` (cleared first), keeping at most `max_bytes` of it: the buffer
/// never grows past the bound however long the line, and the line is consumed whole so the
/// next call starts at the next line.
pub fn read_line_bounded<R: BufRead + ?Sized>(
    input: &mut R,
    buf: &mut Vec<u8>,
    max_bytes: usize,
) -> std::io::Result<LineRead> {
    buf.clear();
    let mut read_any = false;
    let mut too_long = false;
    loop {
        let available = match input.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            break;
        }
        read_any = true;
        let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], i + 1, true),
            None => (available, available.len(), false),
        };
        let room = max_bytes - buf.len();
        if chunk.len() > room {
            too_long = true;
        }
        buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
        input.consume(used);
        if done {
            break;
        }
    }
    Ok(if too_long {
        LineRead::TooLong
    } else if read_any {
        LineRead::Line
    } else {
        LineRead::End
    })
}

/// `text` as a message shows it: control characters escaped (`\n`, `\t`, `\x1b`, `\u{9b}`),
/// so input never reaches a terminal as commands, and at most [`MAX_ECHO_CHARS`] characters,
/// cut ones ending in "…", so an error never prints back megabytes of input. Every message
/// that echoes what a user gave goes through here. Costs at most the characters it shows.
pub fn excerpt(text: &str) -> Cow<'_, str> {
    let plain = text
        .char_indices()
        .take(MAX_ECHO_CHARS + 1)
        .all(|(_, c)| !c.is_control());
    if plain {
        return match text.char_indices().nth(MAX_ECHO_CHARS) {
            None => Cow::Borrowed(text),
            Some((cut, _)) => Cow::Owned(format!("{}…", &text[..cut])),
        };
    }
    let mut out = String::new();
    let mut shown = 0;
    for c in text.chars() {
        let piece = match c {
            '\n' => "\\n".to_string(),
            '\t' => "\\t".to_string(),
            '\r' => "\\r".to_string(),
            c if (c as u32) < 0x80 && c.is_control() => format!("\\x{:02x}", c as u32),
            c if c.is_control() => format!("\\u{{{:x}}}", c as u32),
            c => c.to_string(),
        };
        let n = piece.chars().count();
        if shown + n > MAX_ECHO_CHARS {
            out.push('…');
            return Cow::Owned(out);
        }
        out.push_str(&piece);
        shown += n;
    }
    Cow::Owned(out)
}

/// Longest message of another library (a TOML or JSON parser) shown whole by [`tame`].
pub const MAX_FOREIGN_MESSAGE_CHARS: usize = 1000;

/// A message another library made, which may quote the user's input anywhere in it (a TOML
/// parser's "unknown variant `...`", a unit parser's value): control characters escaped,
/// each run of characters without a space cut to [`MAX_ECHO_CHARS`] (as [`excerpt`] cuts),
/// and the whole to [`MAX_FOREIGN_MESSAGE_CHARS`]. Words and spaces are kept, so a list of
/// valid values reads as written.
pub fn tame(message: &str) -> String {
    let mut out = String::new();
    let mut shown = 0;
    for (i, word) in message.split(' ').enumerate() {
        let piece = excerpt(word);
        let n = piece.chars().count() + usize::from(i > 0);
        if shown + n > MAX_FOREIGN_MESSAGE_CHARS {
            out.push_str(" …");
            break;
        }
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&piece);
        shown += n;
    }
    out
}

/// Most lines of a message [`message`] shows.
pub const MAX_MESSAGE_LINES: usize = 40;

/// A whole message as flashlab prints it (every error goes through here on its way out):
/// each line by [`tame`] (control characters escaped, runs without a space cut to
/// [`MAX_ECHO_CHARS`], the line to [`MAX_FOREIGN_MESSAGE_CHARS`]), at most
/// [`MAX_MESSAGE_LINES`] lines. Whatever path or name a user gave, and however an error
/// quoted it, the terminal gets no escape code and no more than a page.
pub fn message(text: &str) -> String {
    let mut lines = text.split('\n');
    let mut out: Vec<String> = lines.by_ref().take(MAX_MESSAGE_LINES).map(tame).collect();
    if lines.next().is_some() {
        out.push("…".to_string());
    }
    out.join("\n")
}

/// [`excerpt`] of a value in an owned `String`, for formatting arguments.
pub fn echo(text: &str) -> String {
    excerpt(text).into_owned()
}

/// Names longer than this get no suggestion: no valid name is nearly that long, and the
/// search costs the name's length times every valid name's.
const MAX_SUGGEST_CHARS: usize = 256;

/// The valid name a mistyped `name` most likely meant, for a "did you mean" (devices, suites,
/// options, fio's values): the shortest valid name `name` begins (`samsung-pm981` for
/// `samsung-pm981a-256gb`; at least 3 characters), else the nearest by edit distance within
/// a third of the name's length (at least 2 edits). Case is ignored; none when nothing is
/// near enough to be a typo.
pub fn nearest<'a>(name: &str, valid: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let chars = name.chars().count();
    if chars > MAX_SUGGEST_CHARS || chars == 0 {
        return None;
    }
    let name = name.to_lowercase();
    let valid: Vec<(&str, String)> = valid
        .into_iter()
        .map(|v| (v, v.to_lowercase()))
        .filter(|(_, lower)| *lower != name)
        .collect();
    let prefixed = valid
        .iter()
        .filter(|(_, lower)| chars >= 3 && lower.starts_with(&name))
        .min_by_key(|(v, _)| v.len());
    if let Some((v, _)) = prefixed {
        return Some(v);
    }
    let limit = (chars / 3).max(2);
    valid
        .iter()
        .map(|(v, lower)| (strsim::levenshtein(&name, lower), *v))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, v)| v)
}

/// ` (did you mean NAME?)` for [`nearest`], or nothing.
pub fn did_you_mean<'a>(name: &str, valid: impl IntoIterator<Item = &'a str>) -> String {
    nearest(name, valid)
        .map(|n| format!(" (did you mean {n}?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_mistyped_name_gets_the_name_it_begins_or_the_nearest() {
        let valid = [
            "four-corners",
            "qos",
            "samsung-pm981a-256gb",
            "randwrite",
            "randread",
        ];
        let near = |n| nearest(n, valid);
        assert_eq!(near("samsung-pm981"), Some("samsung-pm981a-256gb"));
        assert_eq!(near("Samsung-PM981a"), Some("samsung-pm981a-256gb"));
        assert_eq!(near("samsung-pm981a-265gb"), Some("samsung-pm981a-256gb"));
        assert_eq!(near("randwirte"), Some("randwrite"));
        assert_eq!(near("four-corner"), Some("four-corners"));
        assert_eq!(near("rand"), Some("randread"));
        // Within two edits of a short name; too far to be a typo; or not wrong at all.
        assert_eq!(near("q"), Some("qos"));
        assert_eq!(near("x"), None);
        assert_eq!(near("zzzzzzzz"), None);
        assert_eq!(near("qos"), None);
        assert_eq!(near(""), None);
        assert_eq!(near(&"x".repeat(10_000)), None);
        assert_eq!(
            did_you_mean("randwirte", valid),
            " (did you mean randwrite?)"
        );
        assert_eq!(did_you_mean("zzzzzzzz", valid), "");
    }

    use super::*;

    /// A TOML parser's message quoted a 120 KB `--set` value whole, and a terminal escape
    /// raw: each word is cut and escaped, the message kept readable.
    #[test]
    fn tame_cuts_every_word_and_escapes_control_characters() {
        let long = "9".repeat(120_000);
        let m = tame(&format!(
            "cannot read \"{long}us\" as a time; expected \"350us\""
        ));
        assert!(m.len() < 200, "{}", m.len());
        assert!(
            m.starts_with("cannot read \"999") && m.ends_with("expected \"350us\""),
            "{m}"
        );
        let m = tame("unknown variant `x\x1b[2J`, expected one of `slc`, `tlc`");
        assert_eq!(
            m,
            "unknown variant `x\\x1b[2J`, expected one of `slc`, `tlc`"
        );
        let m = tame(&"word ".repeat(10_000));
        assert!(
            m.chars().count() <= MAX_FOREIGN_MESSAGE_CHARS + 2,
            "{}",
            m.len()
        );
    }

    fn temp(name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("flashlab-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn devices_and_directories_are_refused_before_reading() {
        for (path, kind) in [
            ("/dev/zero", "a character device"),
            ("/dev/urandom", "a character device"),
            ("/", "a directory"),
        ] {
            let e = read_text(Path::new(path), 1 << 20, "a test").unwrap_err();
            assert!(
                matches!(e, InputError::NotAFile { kind: k } if k == kind),
                "{path}: {e}"
            );
        }
    }

    #[test]
    fn a_regular_file_over_the_limit_is_refused_and_one_at_it_is_read() {
        let path = temp("limit.txt", &[b'a'; 100]);
        assert_eq!(read_text(&path, 100, "a test").unwrap().len(), 100);
        let e = read_text(&path, 99, "a test").unwrap_err();
        assert!(e.to_string().contains("larger than 99 bytes"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_is_read_up_to_the_limit_only() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("flashlab-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("pipe");
        let _ = std::fs::remove_file(&fifo);
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let writer_path = fifo.clone();
        // The writer would write forever: only the reader's bound ends the read.
        let writer = std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(writer_path)
                .unwrap();
            let chunk = [b'x'; 4096];
            while f.write_all(&chunk).is_ok() {}
        });
        let e = read_text(&fifo, 64 << 10, "a test").unwrap_err();
        assert!(matches!(e, InputError::TooLarge { .. }), "{e}");
        writer.join().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `include ff.fio` of a FIFO no process writes waited for ever.
    #[cfg(unix)]
    #[test]
    fn a_fifo_without_a_writer_is_refused_after_a_bounded_wait() {
        let dir = std::env::temp_dir().join(format!("flashlab-lone-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("ff.fio");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let started = std::time::Instant::now();
        let e = read_text(&fifo, 1 << 20, "a test").unwrap_err();
        assert!(e.to_string().contains("no process wrote"), "{e}");
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn invalid_utf8_names_its_line() {
        let path = temp("utf8.txt", b"ok\nfine\nbad \xff here\n");
        let e = read_text(&path, 1 << 20, "a test").unwrap_err();
        assert!(matches!(e, InputError::NotUtf8 { line: 3 }), "{e}");
    }

    #[test]
    fn long_lines_are_cut_at_the_bound_and_consumed_whole() {
        let mut text = vec![b'y'; 10_000];
        text.extend_from_slice(b"\nshort\nlast");
        // A small buffer makes the long line arrive in many pieces.
        let mut input = std::io::BufReader::with_capacity(7, &text[..]);
        let mut buf = Vec::new();
        assert_eq!(
            read_line_bounded(&mut input, &mut buf, 100).unwrap(),
            LineRead::TooLong
        );
        assert_eq!(buf.len(), 100);
        assert!(
            buf.capacity() < 1000,
            "the buffer grew to {}",
            buf.capacity()
        );
        assert_eq!(
            read_line_bounded(&mut input, &mut buf, 100).unwrap(),
            LineRead::Line
        );
        assert_eq!(buf, b"short");
        assert_eq!(
            read_line_bounded(&mut input, &mut buf, 100).unwrap(),
            LineRead::Line
        );
        assert_eq!(buf, b"last");
        assert_eq!(
            read_line_bounded(&mut input, &mut buf, 100).unwrap(),
            LineRead::End
        );
    }

    #[test]
    fn a_message_keeps_its_lines_and_escapes_and_cuts_the_rest() {
        let name = format!("\x1b[31m{}", "n".repeat(5_000));
        let m = message(&format!("--save-state {name}: refused\nsecond line"));
        assert!(!m.contains('\x1b'), "{m}");
        assert!(m.len() < 200, "{}", m.len());
        assert!(
            m.ends_with("…: refused\nsecond line") || m.contains("… refused"),
            "{m}"
        );
        let many = "line\n".repeat(1_000);
        assert_eq!(message(&many).lines().count(), MAX_MESSAGE_LINES + 1);
    }

    #[test]
    fn excerpts_cut_long_text_only() {
        assert_eq!(excerpt("short"), "short");
        let long = "é".repeat(1000);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), MAX_ECHO_CHARS + 1);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn excerpts_escape_control_characters() {
        assert_eq!(excerpt("a\x1b[2Jb"), "a\\x1b[2Jb");
        assert_eq!(excerpt("t\u{9b}31m\n"), "t\\u{9b}31m\\n");
        let osc = format!("\x1b]0;title\x07{}", "x".repeat(200));
        let cut = excerpt(&osc);
        assert!(!cut.chars().any(char::is_control), "{cut}");
        assert!(cut.chars().count() <= MAX_ECHO_CHARS + 1, "{cut}");
        assert!(cut.ends_with('…'));
    }
}
