//! Whole-document commands on the big files, each run a fresh process whose time and
//! peak RSS (wait4's `ru_maxrss`) are measured: Leafwire's CLI (`from-json`, `to-json`,
//! `compact`), and as the JSON baselines `jq -c .` and Python's `json.load` + `json.dump`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::harness::sys::{run_measured, Exited};
use crate::harness::timing::Stats;
use crate::harness::{Fail, PeerInfo, Row, Status};

pub const CLI: &str = "leafwire-cli";
pub const JQ: &str = "jq";
pub const PYTHON: &str = "python-json";

const PY_SCRIPT: &str =
    "import json, sys\nwith open(sys.argv[1], 'rb') as f: v = json.load(f)\nwith open(sys.argv[2], 'w') as f: json.dump(v, f, separators=(',', ':'))";

/// What an output must be to pass the check.
#[derive(Clone, Copy, PartialEq)]
pub enum Output {
    Json,
    Leafwire,
}

/// One command of the table; `program` is `Err(reason)` when it is not available here.
pub struct Tool {
    pub peer: &'static str,
    pub op: &'static str,
    program: Result<PathBuf, (Status, String)>,
    args: Vec<OsString>,
    /// The command writes its output to stdout (redirected to the output file).
    stdout: bool,
    pub output: Output,
}

/// The programs this machine has, found once per run.
pub struct Programs {
    cli: Result<PathBuf, (Status, String)>,
    jq: Result<PathBuf, (Status, String)>,
    python: Result<PathBuf, (Status, String)>,
    pub peers: Vec<PeerInfo>,
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(name)).find(|p| p.is_file())
}

fn version(program: &Path, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(if o.stdout.is_empty() { &o.stderr } else { &o.stdout }).trim().to_string())
        .unwrap_or_else(|| "?".into())
}

impl Programs {
    /// `cli`: the `leafwire` binary (bench/run builds it and passes its path), `None`
    /// when it did not build.
    pub fn find(cli: Option<PathBuf>, leafwire_built: bool) -> Programs {
        let cli = match cli {
            _ if !leafwire_built => Err((Status::DidNotBuild, crate::LEAFWIRE_MISSING.to_string())),
            None => Err((
                Status::DidNotBuild,
                "crates/leafwire-cli did not build (cargo build --release -p leafwire-cli)".to_string(),
            )),
            Some(p) if p.is_file() => Ok(p),
            Some(p) => Err((
                Status::DidNotBuild,
                format!("no binary at {} (bench/run builds it: cargo build --release -p leafwire-cli)", p.display()),
            )),
        };
        let jq = on_path("jq").ok_or((Status::Skipped, "jq is not installed on this machine".to_string()));
        // The interpreter itself, not a version manager's shim, so that its start and
        // peak RSS are Python's own.
        let python = on_path("python3")
            .and_then(|p| {
                let out = Command::new(p).args(["-c", "import sys; print(sys.executable)"]).output().ok()?;
                Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
            })
            .filter(|p| p.is_file())
            .ok_or((Status::Skipped, "python3 is not installed on this machine".to_string()));
        let mut peers = Vec::new();
        peers.push(PeerInfo::new(
            CLI,
            "`leafwire from-json IN -o OUT`, `leafwire to-json IN -o OUT`, `leafwire compact IN -o OUT`",
            "release build of crates/leafwire-cli from this checkout",
        ));
        let jq_note = match &jq {
            Ok(p) => version(p, &["--version"]),
            Err((_, why)) => why.clone(),
        };
        peers.push(PeerInfo::new(JQ, "`jq -c . IN > OUT`", &jq_note));
        let py_note = match &python {
            Ok(p) => format!("Python {}", version(p, &["-c", "import sys; print(sys.version.split()[0])"])),
            Err((_, why)) => why.clone(),
        };
        peers.push(PeerInfo::new(
            PYTHON,
            "`json.load` then `json.dump(v, f, separators=(',', ':'))` (compact, as jq -c)",
            &py_note,
        ));
        Programs { cli, jq, python, peers }
    }

    /// The commands on one dataset: `json` is the input text, `leafwire` the canonical file.
    pub fn tools(&self, json: &Path, leafwire: &Path) -> Vec<Tool> {
        let os = |s: &str| OsString::from(s);
        let cli = |op: &'static str, input: &Path, output: Output| Tool {
            peer: CLI,
            op,
            program: self.cli.clone(),
            args: vec![os(op), input.into(), os("-o")],
            stdout: false,
            output,
        };
        vec![
            cli("from-json", json, Output::Leafwire),
            cli("to-json", leafwire, Output::Json),
            cli("compact", leafwire, Output::Leafwire),
            Tool {
                peer: JQ,
                op: "json → json",
                program: self.jq.clone(),
                args: vec![os("-c"), os("."), json.into()],
                stdout: true,
                output: Output::Json,
            },
            Tool {
                peer: PYTHON,
                op: "json → json",
                program: self.python.clone(),
                args: vec![os("-c"), os(PY_SCRIPT), json.into()],
                stdout: false,
                output: Output::Json,
            },
        ]
    }
}

impl Tool {
    /// Runs once, writing `out`, through a `files-child` of this executable (see
    /// [`child_main`]).
    fn run(&self, exe: &Path, out: &Path) -> Result<Exited, Fail> {
        let program = self.program.as_ref().map_err(|(_, why)| Fail::Error(why.clone()))?;
        let mut cmd = Command::new(exe);
        cmd.arg(CHILD_COMMAND)
            .arg(if self.stdout { out.as_os_str() } else { "-".as_ref() })
            .arg(program)
            .args(&self.args);
        if !self.stdout {
            cmd.arg(out);
        }
        spawn(&mut cmd)
    }
}

pub const CHILD_COMMAND: &str = "files-child";

/// `files-child <stdout-file|-> <program> <args...>`: runs the program and prints one
/// JSON line with its time, peak RSS and outcome.
///
/// Why a child of its own: Linux seeds a process's `ru_maxrss` at exec with the peak RSS
/// of the memory image it replaces, and the standard library spawns with vfork, whose
/// image is the parent's. Spawned by the harness (which has held whole documents), every
/// command would report at least the harness's own peak. This small process spawns it
/// instead, so the floor is this process's few megabytes (reported as the empty run).
pub fn child_main(args: &[String]) {
    let out = match args {
        [stdout, program, rest @ ..] => {
            let mut cmd = Command::new(program);
            cmd.args(rest).stdin(Stdio::null());
            let redirected = if stdout == "-" {
                Ok(cmd.stdout(Stdio::null()))
            } else {
                std::fs::File::create(stdout).map(|f| cmd.stdout(f))
            };
            match redirected.and_then(|cmd| run_measured(cmd)) {
                Ok(e) => {
                    serde_json::json!({"ns": e.elapsed.as_nanos() as u64, "peak_rss": e.peak_rss, "success": e.success, "stderr": e.stderr})
                }
                Err(e) => serde_json::json!({"error": e.to_string()}),
            }
        }
        _ => serde_json::json!({"error": "usage: files-child <stdout-file|-> <program> <args...>"}),
    };
    println!("{out}");
}

fn spawn(cmd: &mut Command) -> Result<Exited, Fail> {
    let out = cmd.output().map_err(Fail::error)?;
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        Fail::Error(format!(
            "files-child exited with {}: {e}; stderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ))
    })?;
    if let Some(e) = line.get("error") {
        return Err(Fail::Error(e.as_str().unwrap_or("files-child failed").to_string()));
    }
    let num = |k: &str| {
        line.get(k)
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| Fail::Error(format!("files-child reported no {k}")))
    };
    let stderr = line.get("stderr").and_then(serde_json::Value::as_str).unwrap_or("").to_string();
    if line.get("success") != Some(&serde_json::Value::Bool(true)) {
        return Err(Fail::Error(format!("exited with failure: {}", crate::harness::check::shorten(stderr.trim()))));
    }
    Ok(Exited {
        success: true,
        elapsed: std::time::Duration::from_nanos(num("ns")?),
        peak_rss: num("peak_rss")?,
        stderr,
    })
}

/// Peak RSS that a run through `files-child` reports for `/bin/true`: the floor below
/// which no command's figure can go.
pub fn empty_run_peak_rss(exe: &Path) -> Option<u64> {
    spawn(Command::new(exe).args([CHILD_COMMAND, "-", "/bin/true"])).ok().map(|e| e.peak_rss)
}

/// What a dataset's command rows need besides the tools.
pub struct RunSpec<'a> {
    pub exe: &'a Path,
    pub work: &'a Path,
    pub reps: usize,
    /// Judges an output file of the given kind.
    pub check: &'a dyn Fn(Output, &Path) -> Result<(), Fail>,
    /// A reason not to run a tool at all (its projected memory), if any.
    pub skip: &'a dyn Fn(&Tool) -> Option<String>,
}

/// Checks each tool's output once (the untimed first run), then times `reps` runs of the
/// tools that passed, round-robin. Outputs are deleted after every run.
pub fn rows(ds: &str, tools: &[Tool], spec: &RunSpec) -> Vec<Row> {
    let RunSpec { exe, work, reps, check, skip } = *spec;
    let mut done = Vec::new();
    let mut todo: Vec<(usize, Row, Vec<Exited>)> = Vec::new();
    for (i, t) in tools.iter().enumerate() {
        let row = Row::new(ds, t.op, t.peer);
        if let Err((status, why)) = &t.program {
            done.push(row.status(*status, why.clone()));
            continue;
        }
        if let Some(why) = skip(t) {
            done.push(row.status(Status::Skipped, why));
            continue;
        }
        let out = output_path(work, t);
        let verdict = t.run(exe, &out).and_then(|_| check(t.output, &out));
        let _ = std::fs::remove_file(&out);
        match verdict {
            Ok(()) => todo.push((i, row, Vec::new())),
            Err(fail) => done.push(row.failed(fail)),
        }
    }
    for round in 0..reps {
        let count = todo.len();
        for k in 0..count {
            let (i, row, runs) = &mut todo[(k + round) % count];
            let out = output_path(work, &tools[*i]);
            match tools[*i].run(exe, &out) {
                Ok(mut e) => {
                    row.bytes = std::fs::metadata(&out).ok().map(|m| m.len());
                    e.stderr.clear();
                    runs.push(e);
                }
                Err(fail) => eprintln!("[files]   {} {}: {fail:?}", row.peer, row.op),
            }
            let _ = std::fs::remove_file(&out);
        }
    }
    for (_, mut row, runs) in todo {
        if runs.is_empty() {
            done.push(row.status(Status::Error, "every timed run failed"));
            continue;
        }
        let mut rss: Vec<u64> = runs.iter().map(|e| e.peak_rss).collect();
        rss.sort_unstable();
        row.peak_rss_bytes = Some(rss[rss.len() / 2]);
        row.time = Some(Stats::from_samples(runs.iter().map(|e| e.elapsed.as_nanos() as f64).collect(), 1));
        done.push(row);
    }
    done
}

fn output_path(work: &Path, t: &Tool) -> PathBuf {
    let ext = match t.output {
        Output::Json => "json",
        Output::Leafwire => "leafwire",
    };
    work.join(format!("out-{}-{}.{ext}", t.peer, t.op.replace(|c: char| !c.is_ascii_alphanumeric(), "_")))
}
