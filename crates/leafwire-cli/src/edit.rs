//! `set`, `delete` and `compact`: changing a Leafwire file in place. Edits go through
//! `leafwire::Editor` and one atomic commit (spec §8.4): a crash leaves the old document
//! or the new one, never a torn file. `compact` rewrites canonically through a temporary
//! file renamed over the target, with memory bounded by the document's structure.

use std::path::Path;

use std::io::Write;

use leafwire::{Category, Editor, Trust};

use crate::failure::Failure;
use crate::files::{with_checksums, is_std, open_mapped, read_input, refuse_binary_terminal, refuse_read_only, stream_stdout, write_atomically, write_output};
use crate::progress::Progress;
use crate::{pointer, typed};

/// Sets the value at `pointer` (replacing it, adding an object key, or appending with `/-`)
/// to the JSON text `json`.
pub fn set(input: &Path, pointer: &str, json: &str, trust: Trust) -> Result<(), Failure> {
    let value = leafwire::json::parse(json.as_bytes()).map_err(|e| Failure::json(Path::new("<JSON argument>"), e))?;
    edit(input, trust, |editor| {
        let tokens = pointer::tokens(input, pointer)?;
        let mut into_typed = None;
        if let Some(last) = tokens.last() {
            // The parent must exist; the last token may name a new key or the array's end.
            let doc = editor.document().map_err(|e| Failure::leafwire(input, e))?;
            let parent = pointer::resolve_first(&doc, input, pointer, &tokens, tokens.len() - 1)?;
            if !pointer::settable(&parent, last) {
                return Err(pointer::missing(input, &parent, pointer, &tokens, tokens.len() - 1));
            }
            into_typed = typed::inside(&doc, pointer, &tokens);
        }
        match into_typed {
            Some(at) => typed::set(editor, input, &at, &value),
            None => editor.set(pointer, &value).map_err(|e| Failure::leafwire(input, e)),
        }
    })
}

/// Removes the object key or array element at `pointer`.
pub fn delete(input: &Path, pointer: &str, trust: Trust) -> Result<(), Failure> {
    edit(input, trust, |editor| {
        let tokens = pointer::tokens(input, pointer)?;
        let doc = editor.document().map_err(|e| Failure::leafwire(input, e))?;
        pointer::resolve(&doc, input, pointer)?;
        match typed::inside(&doc, pointer, &tokens) {
            Some(at) => typed::delete(editor, input, &at),
            None => editor.delete(pointer).map_err(|e| Failure::leafwire(input, e)),
        }
    })
}

/// Opens `input` for editing (mapped: only the pages the edit touches are read), makes
/// the change and commits it; `-` edits stdin and writes the result to stdout.
fn edit(input: &Path, trust: Trust, change: impl FnOnce(&mut Editor) -> Result<(), Failure>) -> Result<(), Failure> {
    if is_std(input) {
        let mut editor = Editor::new_with(read_input(input)?, trust).map_err(|e| Failure::leafwire(input, e))?;
        change(&mut editor)?;
        return write_output(input, None, editor.as_bytes(), true);
    }
    if let Ok(meta) = std::fs::metadata(input) {
        refuse_read_only(input, &meta)?;
    }
    // SAFETY: like every command here, `set` asks that no other program change the file
    // while it runs (README, spec §9.1).
    let mut editor = unsafe { Editor::map_file(input, trust) }.map_err(|e| Failure::leafwire(input, e))?;
    change(&mut editor)?;
    editor.commit().map_err(|e| Failure::leafwire(input, e))
}

/// Rewrites a document canonically, dropping garbage and spare capacity: into `output`,
/// or over `input` itself (to stdout when either is `-`). The file is mapped, validated,
/// given back to the system, and walked into the encoder; the output streams into its
/// temporary file. Memory holds the document's structure once, never a decoded copy.
/// What `compact` does with packed arrays (spec §13).
pub enum PackMode {
    /// A packed file stays packed (repacked with the default options), an ordinary one ordinary.
    Keep,
    Pack(leafwire::PackOptions),
    Unpack,
}

pub fn compact(input: &Path, output: Option<&Path>, checksums: bool, mode: PackMode) -> Result<(), Failure> {
    // Refuse a read-only file before the work, not after.
    if output.is_none() && !is_std(input) {
        if let Ok(meta) = std::fs::metadata(input) {
            refuse_read_only(input, &meta)?;
        }
    }
    let file = open_mapped(input)?;
    let progress = Progress::counter(file.as_bytes().len() as u64, "compacting");
    let options = leafwire::ValidateOptions { max_depth: crate::READ_DEPTH };
    leafwire::validate_with(file.as_bytes(), &options).map_err(|e| Failure::leafwire(input, e))?;
    // Validation read every page; the walk below reads only the live ones.
    file.release();
    let doc = file.document().map_err(|e| Failure::leafwire(input, e))?;
    // Stdin in, with no output named, goes to stdout.
    let output = output.unwrap_or(input);
    let was_packed = leafwire::is_packed_document(file.as_bytes());
    let pack = match mode {
        PackMode::Pack(options) => Some(options),
        PackMode::Keep if was_packed => Some(leafwire::PackOptions::default()),
        PackMode::Keep | PackMode::Unpack => None,
    };
    if let Some(pack) = pack {
        // Packing needs every element of a group at once: through the document's borrowed
        // tree (`pack` decodes an already packed one).
        let packed = leafwire::pack_with(file.as_bytes(), crate::READ_DEPTH, &pack).map_err(|e| Failure::leafwire(input, e))?;
        return crate::convert::write_document(&packed, output, Some(input), checksums);
    }
    let recode = |w: &mut dyn Write| {
        with_checksums(w, checksums, output, |w| {
            // The walk reads each live page about once: give them back now and then.
            let release = &mut |_| file.release();
            let written = leafwire::recode_to_writer(&doc, crate::READ_DEPTH, &mut progress.writer(w), RELEASE_EVERY, release);
            written.map(drop).map_err(|e| match e.category() {
                Category::Io => Failure::leafwire(output, e),
                _ => Failure::leafwire(input, e),
            })
        })
    };
    if is_std(output) {
        refuse_binary_terminal()?;
        return stream_stdout(recode);
    }
    write_atomically(output, Some(input), |w| recode(w))
}

/// How many values `compact` reads between giving the mapped pages back.
const RELEASE_EVERY: u64 = 1 << 18;
