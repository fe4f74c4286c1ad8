//! `from-jsonl`, `to-jsonl` and `cat`: JSON lines (NDJSON) to and from Leafwire streams
//! (spec §14). Both directions read their input front to back, so memory holds one message
//! and the buffers, whatever the input's length; a file output is written to a temporary
//! renamed on success.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;

use leafwire::stream::{StreamOptions, StreamReader, StreamWriter};

use crate::failure::Failure;
use crate::files::{is_std, refuse_binary_terminal, stream_stdout, write_atomically};
use crate::progress::Progress;

/// Lines of JSON (one value per line; blank lines are skipped) to a stream.
pub fn from_jsonl(input: &Path, output: &Path, crc: bool) -> Result<(), Failure> {
    let (source, len) = open(input)?;
    let progress = Progress::bar(len, "reading");
    let mut lines = BufReader::with_capacity(1 << 16, source);
    let mut convert = |w: &mut dyn Write| -> Result<(), Failure> {
        let mut writer = StreamWriter::with_options(w, StreamOptions { crc, ..StreamOptions::default() })
            .map_err(|e| Failure::leafwire(output, e))?;
        let (mut line, mut number, mut read) = (Vec::new(), 0usize, 0u64);
        loop {
            line.clear();
            let n = lines.read_until(b'\n', &mut line).map_err(|e| Failure::new(input, e))?;
            if n == 0 {
                break;
            }
            number += 1;
            read += n as u64;
            progress.set_position(read);
            let text = trim(&line);
            if text.is_empty() {
                continue;
            }
            writer.write_json(text).map_err(|e| match e.category() {
                leafwire::Category::Io => Failure::leafwire(output, e),
                _ => match e.position() {
                    // The parser counts within the line: say where in the file.
                    Some(leafwire::Position::LineColumn { column, .. }) => {
                        Failure::new(input, format!("line {number} column {column}: {}", e.message()))
                    }
                    _ => Failure::new(input, format!("line {number}: {e}")),
                },
            })?;
        }
        writer.into_inner().map(drop).map_err(|e| Failure::leafwire(output, e))
    };
    if is_std(output) {
        refuse_binary_terminal()?;
        return stream_stdout(convert);
    }
    write_atomically(output, Some(input), |w| convert(w))
}

/// A stream to JSON lines, one message a line. `cat` is this to stdout.
pub fn to_jsonl(input: &Path, output: Option<&Path>) -> Result<(), Failure> {
    let (source, len) = open(input)?;
    let progress = Progress::bar(len, "reading");
    let convert = |w: &mut dyn Write| -> Result<(), Failure> {
        let mut reader = StreamReader::new(source).map_err(|e| Failure::leafwire(input, e))?;
        while let Some(frame) = reader.next_frame() {
            let frame = frame.map_err(|e| Failure::leafwire(input, e))?;
            frame.write_json(&mut *w).map_err(|e| Failure::leafwire(input, e))?;
            w.write_all(b"\n").map_err(|e| Failure::new(Path::new("<output>"), e))?;
            progress.set_position(reader.position());
        }
        Ok(())
    };
    match output {
        Some(path) if !is_std(path) => write_atomically(path, Some(input), |w| convert(w)),
        _ => stream_stdout(convert),
    }
}

/// The input as a reader and its length when known (for the progress bar).
fn open(input: &Path) -> Result<(Box<dyn Read>, u64), Failure> {
    if is_std(input) {
        return Ok((Box::new(std::io::stdin().lock()), 0));
    }
    let file = std::fs::File::open(input).map_err(|e| Failure::new(input, e))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    Ok((Box::new(file), len))
}

/// A line without its line ending and surrounding blanks.
fn trim(line: &[u8]) -> &[u8] {
    let start = line.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(line.len());
    let end = line.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(start, |e| e + 1);
    &line[start..end]
}
