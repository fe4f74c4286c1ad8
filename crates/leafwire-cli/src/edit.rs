//! `set`, `delete` and `compact`: changing a Leafwire file in place. Edits go through
//! `leafwire::Editor` and one atomic commit (spec §8.4): a crash leaves the old document
//! or the new one, never a torn file. `compact` rewrites canonically through a temporary
//! file renamed over the target.

use std::path::Path;

use leafwire::{Editor, Trust};

use crate::failure::Failure;
use crate::files::{is_std, read_input, refuse_read_only, write_output};
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
/// or over `input` itself (to stdout when either is `-`).
pub fn compact(input: &Path, output: Option<&Path>) -> Result<(), Failure> {
    // Refuse a read-only file before the work, not after.
    if output.is_none() && !is_std(input) {
        if let Ok(meta) = std::fs::metadata(input) {
            refuse_read_only(input, &meta)?;
        }
    }
    let bytes = read_input(input)?;
    leafwire::validate(&bytes).map_err(|e| Failure::leafwire(input, e))?;
    let value = leafwire::decode(&bytes).map_err(|e| Failure::leafwire(input, e))?;
    let canonical = leafwire::encode(&value).map_err(|e| Failure::leafwire(input, e))?;
    // Stdin in, with no output named, goes to stdout.
    write_output(output.unwrap_or(input), Some(input), &canonical, true)
}
