//! The `leafwire` command: convert between JSON and Leafwire, query, validate, inspect and
//! measure Leafwire files.
//!
//! Every failure is one line on stderr, `leafwire: FILE: what (where)`, with a non-zero
//! exit status. Output files are written whole or not at all; text streamed to stdout may
//! stop partway when a document fails halfway (the exit status says so).

mod convert;
mod edit;
mod failure;
mod files;
mod interrupt;
mod pointer;
mod progress;
mod report;
mod stats;
mod stream;
mod tables;
mod typed;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use failure::Failure;

/// Deepest `--max-depth` accepted: the parser and validator recurse once per level, and
/// the worker thread's stack (below) is sized for this many.
const MAX_DEPTH_CEILING: u32 = 10_000;
/// The nesting the reading commands accept (`to-json`, `get`, `compact`, and `validate`
/// unless told less): the deepest `from-json --max-depth` allows, so that every file this
/// tool writes reads back with the defaults.
pub const READ_DEPTH: usize = MAX_DEPTH_CEILING as usize;
const WORKER_STACK_BYTES: usize = 256 << 20;

#[derive(Parser)]
#[command(name = "leafwire", version, about = "Convert, query, validate and inspect Leafwire files")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Packed mode (spec §13): large arrays and maps shredded into compressed columns.
#[derive(clap::Args, Clone, Copy)]
pub struct PackArgs {
    /// Write packed arrays and objects: every array of 64 scalars or more, and every object
    /// of 32 entries or more whose values hold 64 scalars (records by id), becomes
    /// compressed columns (smaller, still readable by element; not zero-copy, not editable
    /// in place); where zstd of their JSON text is smaller, they are kept whole as that,
    /// and so is a root object with much outside such groups (configuration, schemas).
    #[arg(long)]
    pub packed: bool,
    /// With --packed: compress with zstd at this level (1-22) where it pays: each page, or each stripe whole where that finds what columns repeat of one another. From level 10, pages hold 65,536 values instead of 4,096: smaller files, slower single-element reads.
    #[arg(long, requires = "packed", value_parser = clap::value_parser!(i32).range(1..=22))]
    pub zstd: Option<i32>,
    /// With --packed: store floats rounded to multiples of 2^T (lossy; T from -60 to 60,
    /// e.g. -12 keeps every value within 2^-13).
    #[arg(long, requires = "packed", allow_hyphen_values = true, value_parser = clap::value_parser!(i8).range(-60..=60))]
    pub lossy_float_step: Option<i8>,
    /// With --packed: keep every group in columns, never kept whole as compressed JSON
    /// text: larger on data that does not shred, but every field stays readable alone.
    #[arg(long, requires = "packed")]
    pub columns_only: bool,
}

impl PackArgs {
    fn options(self) -> Option<leafwire::PackOptions> {
        self.packed.then_some(leafwire::PackOptions {
            zstd_level: self.zstd,
            lossy_step: self.lossy_float_step,
            columns_only: self.columns_only,
        })
    }
}

#[derive(Subcommand)]
enum Command {
    /// Convert JSON text to a Leafwire file (written atomically).
    FromJson {
        /// JSON file to read, or `-` for stdin.
        input: PathBuf,
        /// Leafwire file to write, or `-` for stdout.
        #[arg(short, long)]
        output: PathBuf,
        /// Deepest nesting accepted.
        #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u32).range(1..=MAX_DEPTH_CEILING as i64))]
        max_depth: u32,
        /// What an object with a repeated key does.
        #[arg(long, value_enum, default_value_t = DuplicateKeys::Error)]
        duplicate_keys: DuplicateKeys,
        /// Write the canonical bytes alone, without page checksums (spec §2.3).
        #[arg(long)]
        no_checksums: bool,
        #[command(flatten)]
        pack: PackArgs,
    },
    /// Convert a Leafwire file to JSON text (compact unless --pretty).
    ///
    /// The text is streamed as it is written. To stdout, a document that turns out to be
    /// broken halfway leaves the text written so far there and the command fails (non-zero
    /// exit, the error on stderr), as jq does; with -o FILE nothing is left behind.
    ToJson {
        /// Leafwire file to read, or `-` for stdin.
        input: PathBuf,
        /// File to write instead of stdout (written atomically); `-` is stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Indent the JSON by two spaces.
        #[arg(long)]
        pretty: bool,
    },
    /// Print the value at a JSON Pointer (RFC 6901) as JSON, reading only its path.
    Get {
        /// Leafwire file to read, or `-` for stdin.
        input: PathBuf,
        /// JSON Pointer, e.g. `/statuses/0/user/name`; `""` is the root.
        #[arg(allow_hyphen_values = true)]
        pointer: String,
    },
    /// Check every rule of the format and print a one-line summary.
    Validate {
        /// Leafwire file to read, or `-` for stdin.
        input: PathBuf,
        /// Deepest nesting accepted (by default the deepest `from-json` writes).
        #[arg(long, default_value_t = MAX_DEPTH_CEILING, value_parser = clap::value_parser!(u32).range(1..=MAX_DEPTH_CEILING as i64))]
        max_depth: u32,
    },
    /// Set the value at a JSON Pointer to a JSON value, editing the file in place
    /// (atomically). A missing object key is added; `/-` appends to an array.
    Set {
        /// Leafwire file to edit, or `-` to edit stdin onto stdout.
        input: PathBuf,
        /// JSON Pointer of the value to set.
        #[arg(allow_hyphen_values = true)]
        pointer: String,
        /// The new value, as JSON text (`-7` is a value here, not an option).
        #[arg(allow_hyphen_values = true)]
        json: String,
        /// Skip validating the whole file before the edit (opening is then O(1)): for files
        /// this tool wrote. A damaged file still gives errors, never a crash.
        #[arg(long)]
        trusted: bool,
    },
    /// Delete the object key or array element at a JSON Pointer, in place (atomically).
    Delete {
        /// Leafwire file to edit, or `-` to edit stdin onto stdout.
        input: PathBuf,
        /// JSON Pointer of the value to remove.
        #[arg(allow_hyphen_values = true)]
        pointer: String,
        /// Skip validating the whole file before the edit (see `set --trusted`).
        #[arg(long)]
        trusted: bool,
    },
    /// Rewrite a file canonically, reclaiming the space edits left behind.
    Compact {
        /// Leafwire file to read, or `-` for stdin (then written to stdout).
        input: PathBuf,
        /// File to write instead of replacing INPUT (written atomically); `-` is stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Write the canonical bytes alone, without page checksums (spec §2.3).
        #[arg(long)]
        no_checksums: bool,
        #[command(flatten)]
        pack: PackArgs,
        /// Write packed arrays and objects out as ordinary containers (the default keeps a packed file
        /// packed and an ordinary one ordinary).
        #[arg(long, conflicts_with = "packed")]
        unpacked: bool,
    },
    /// Summarize a file: header, dictionary and the top level of the value.
    Inspect {
        /// Leafwire file to read, or `-` for stdin.
        input: PathBuf,
    },
    /// Convert JSON lines (NDJSON: one value per line) to a Leafwire stream (spec §14),
    /// reading and writing front to back (written atomically to a file).
    FromJsonl {
        /// JSON lines to read, or `-` for stdin.
        input: PathBuf,
        /// Stream to write, or `-` for stdout.
        #[arg(short, long)]
        output: PathBuf,
        /// End every frame with a CRC-32, so that a reader detects a damaged frame.
        #[arg(long)]
        crc: bool,
    },
    /// Convert a Leafwire stream to JSON lines, one message a line.
    ToJsonl {
        /// Stream to read, or `-` for stdin.
        input: PathBuf,
        /// File to write instead of stdout (written atomically); `-` is stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Print a Leafwire stream's messages as JSON lines (`to-jsonl` to stdout).
    Cat {
        /// Stream to read, or `-` for stdin.
        input: PathBuf,
    },
    /// Show where a file's bytes go: by section, by kind of value and by path.
    ///
    /// Sections (header, dictionary, structure, data, checksums, garbage, padding, past end)
    /// add up to the file's length. A path's bytes are the blocks its values own: a
    /// container's own block (header, tags, keys, padding, slots, hash index), a string's,
    /// bytes' or bignum's data block, a typed array's whole block (a typed array is one
    /// value); inline scalars own no bytes but are counted. The file is validated first.
    #[command(after_help = stats::PATH_NOTATION)]
    Stats {
        /// Leafwire file to read, or `-` for stdin.
        input: PathBuf,
        /// Paths listed, largest first, before a "(N more paths, X bytes)" line; 0 lists all.
        #[arg(long, default_value_t = 30)]
        top: usize,
        /// Print the report as JSON (same numbers, same --top).
        #[arg(long)]
        json: bool,
    },
    /// Convert a CSV file to a Leafwire table document (written atomically).
    ///
    /// The document's root is {"name": FILE's stem, "schema": its Frictionless Table Schema,
    /// "data": the table} (spec §15.4). The CSV is read record by record; errors name the
    /// line and column.
    #[command(after_help = tables::INFERENCE_RULES)]
    FromCsv {
        /// CSV file to read (with a header line), or `-` for stdin.
        input: PathBuf,
        /// Leafwire file to write, or `-` for stdout.
        #[arg(short, long)]
        output: PathBuf,
        /// Frictionless Table Schema (JSON) giving the columns' types instead of inferring them.
        #[arg(long)]
        schema: Option<PathBuf>,
    },
    /// Store a Frictionless Data Package as one document (spec §15.4): the descriptor, with
    /// each tabular resource's CSV as a table in its `data` (its `path` kept as `leafwire:path`).
    Pack {
        /// The package's datapackage.json.
        descriptor: PathBuf,
        /// Leafwire file to write, or `-` for stdout.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Write a packed data package (or a from-csv document) back out as datapackage.json and
    /// CSV files (or NAME.csv) under a directory.
    Unpack {
        /// Leafwire file to read, or `-` for stdin.
        input: PathBuf,
        /// Directory to write into (created if needed).
        #[arg(short = 'd', long = "dir")]
        dir: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum DuplicateKeys {
    /// Fail on the second occurrence of a key.
    Error,
    /// Keep the last value, as JavaScript does.
    Last,
}

fn trust(trusted: bool) -> leafwire::Trust {
    if trusted { leafwire::Trust::Trusted } else { leafwire::Trust::Untrusted }
}

fn run(command: Command) -> Result<(), Failure> {
    match command {
        Command::FromJson { input, output, max_depth, duplicate_keys, no_checksums, pack } => {
            let options = leafwire::json::JsonOptions {
                max_depth: max_depth as usize,
                duplicate_keys: match duplicate_keys {
                    DuplicateKeys::Error => leafwire::DuplicateKeys::Error,
                    DuplicateKeys::Last => leafwire::DuplicateKeys::Last,
                },
            };
            match pack.options() {
                Some(pack) => convert::from_json_packed(&input, &output, &options, &pack, !no_checksums),
                None => convert::from_json(&input, &output, &options, !no_checksums),
            }
        }
        Command::ToJson { input, output, pretty } => convert::to_json(&input, output.as_deref(), pretty),
        Command::Get { input, pointer } => convert::get(&input, &pointer),
        Command::Validate { input, max_depth } => report::validate(&input, max_depth as usize),
        Command::Set { input, pointer, json, trusted } => edit::set(&input, &pointer, &json, trust(trusted)),
        Command::Delete { input, pointer, trusted } => edit::delete(&input, &pointer, trust(trusted)),
        Command::Compact { input, output, no_checksums, pack, unpacked } => {
            let mode = match (pack.options(), unpacked) {
                (Some(options), _) => edit::PackMode::Pack(options),
                (None, true) => edit::PackMode::Unpack,
                (None, false) => edit::PackMode::Keep,
            };
            edit::compact(&input, output.as_deref(), !no_checksums, mode)
        }
        Command::FromJsonl { input, output, crc } => stream::from_jsonl(&input, &output, crc),
        Command::ToJsonl { input, output } => stream::to_jsonl(&input, output.as_deref()),
        Command::Cat { input } => stream::to_jsonl(&input, None),
        Command::Inspect { input } => report::inspect(&input),
        Command::Stats { input, top, json } => stats::run(&input, &stats::Options { top, json }),
        Command::FromCsv { input, output, schema } => tables::from_csv(&input, &output, schema.as_deref()),
        Command::Pack { descriptor, output } => tables::pack(&descriptor, &output),
        Command::Unpack { input, dir } => tables::unpack(&input, &dir),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A panic is a bug; keep its message and location, and report it below as one
    // line like every other failure.
    std::panic::set_hook(Box::new(|info| failure::record_panic(info.to_string())));
    // An interrupted conversion removes its temporary file before dying of the signal.
    interrupt::install();
    // Parsing and validation recurse once per nesting level: run on a stack sized for
    // the deepest `--max-depth` allowed, so deep input is an error, never a crash.
    let worker = std::thread::Builder::new().stack_size(WORKER_STACK_BYTES).spawn(move || run(cli.command));
    let outcome = match worker {
        Ok(handle) => handle.join().unwrap_or_else(|_| Err(Failure::panicked())),
        Err(e) => Err(Failure::internal(format!("cannot start a worker thread: {e}"))),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("{failure}");
            ExitCode::FAILURE
        }
    }
}
