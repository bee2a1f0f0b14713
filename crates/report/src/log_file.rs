//! Writing one of a run's log files.

use std::io::Write;
use std::path::Path;

/// Write `text` to `name` under `dir`; as fio, no directory is created. An error names
/// the file.
pub(crate) fn write_file(dir: &Path, name: &str, text: &str) -> std::io::Result<()> {
    let path = dir.join(name);
    let write = || {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path)?);
        f.write_all(text.as_bytes())?;
        f.flush()
    };
    write().map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}
