//! System calls per message of the writer. One run per (peer, n) is made by a child
//! (`stream-send`: this executable, sending to the Unix receiver) under `strace -c -f`,
//! so only the writer's calls are counted; the write-family rows (write, writev,
//! sendto, sendmsg, pwrite64) are its writes. The child also counts the write calls that
//! reach its socket through a counting `Write`: that count stands alone when strace is
//! missing or not permitted, and the report says which one it shows.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use super::data::{doubles, Dataset};
use super::driver::Conn;
use super::peer::StreamPeer;
use super::Entry;
use crate::harness::Fail;

pub const SEND_COMMAND: &str = "stream-send";
const WRITE_CALLS: [&str; 5] = ["write", "writev", "sendto", "sendmsg", "pwrite64"];

/// One unchecked-but-acknowledged run: (bytes, write calls) that reached the socket.
pub fn send_once<P: StreamPeer>(addr: &str, ds: &Dataset<P::Item>, count: u64) -> Result<(u64, u64), Fail> {
    let msgs: Vec<P::Msg> = ds.items.iter().map(P::message).collect();
    Conn::open(addr, P::NAME, ds, count, false)?.run::<P>(&msgs, None)
}

/// `stream-send ADDR PEER N COUNT`: prints {"bytes", "writes"} or {"error"}.
pub fn send_main(args: &[String], peers: &[Entry<Vec<f64>>]) {
    let out = match args {
        [addr, peer, n, count] => match (peers.iter().find(|e| e.name == peer), n.parse(), count.parse()) {
            (Some(e), Ok(n), Ok(count)) => match (e.send)(addr, &doubles(n), count) {
                Ok((bytes, writes)) => json!({"bytes": bytes, "writes": writes}),
                Err(fail) => json!({"error": format!("{fail:?}")}),
            },
            _ => json!({"error": format!("bad arguments {args:?}")}),
        },
        _ => json!({"error": format!("usage: {SEND_COMMAND} ADDR PEER N COUNT")}),
    };
    println!("{out}");
}

/// Calls per syscall name from `strace -c` output.
fn parse_strace(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // % time, seconds, usecs/call, calls, [errors,] syscall
            let name = *f.last()?;
            let calls = f.get(3)?.parse().ok()?;
            (f.len() >= 5 && name != "total").then(|| (name.to_string(), calls))
        })
        .collect()
}

fn strace_works() -> bool {
    Command::new("strace").args(["-c", "-o", "/dev/null", "true"]).output().is_ok_and(|o| o.status.success())
}

/// One row per (peer, n): write calls per message, by strace when it works.
pub fn measure(exe: &Path, work: &Path, addr: &str, peers: &[Entry<Vec<f64>>], ns: &[usize], payload: u64) -> Value {
    let strace = strace_works();
    let out = work.join("strace.txt");
    let mut rows = Vec::new();
    for &n in ns {
        let count = (payload / (8 * n as u64)).max(1);
        for e in peers {
            let mut cmd = if strace {
                let mut c = Command::new("strace");
                c.args(["-c", "-f", "-o"]).arg(&out).arg("--").arg(exe);
                c
            } else {
                Command::new(exe)
            };
            cmd.args([SEND_COMMAND, addr, e.name, &n.to_string(), &count.to_string()]);
            let result = cmd.output().map_err(|e| e.to_string()).and_then(|o| {
                let line: Value = serde_json::from_slice(&o.stdout).map_err(|e| format!("{e}: {}", o.status))?;
                match line.get("error") {
                    Some(err) => Err(err.to_string()),
                    None => Ok(line),
                }
            });
            let mut row = json!({"peer": e.name, "n": n, "messages": count});
            match result {
                Err(why) => row["error"] = json!(why),
                Ok(line) => {
                    let wrapper = line["writes"].as_u64().unwrap_or(0);
                    row["bytes"] = line["bytes"].clone();
                    row["wrapper_writes"] = json!(wrapper);
                    let counted =
                        strace.then(|| std::fs::read_to_string(&out).ok()).flatten().map(|t| parse_strace(&t));
                    let writes = match &counted {
                        Some(calls) => {
                            let w: u64 =
                                calls.iter().filter(|(s, _)| WRITE_CALLS.contains(&s.as_str())).map(|c| c.1).sum();
                            row["total_syscalls"] = json!(calls.iter().map(|c| c.1).sum::<u64>());
                            row["source"] = json!("strace -c -f");
                            w
                        }
                        None => {
                            row["source"] = json!("counting Write wrapper");
                            wrapper
                        }
                    };
                    row["write_syscalls"] = json!(writes);
                    row["writes_per_message"] = json!(writes as f64 / count as f64);
                }
            }
            rows.push(row);
        }
    }
    let _ = std::fs::remove_file(&out);
    json!({"strace": strace, "payload_bytes": payload, "rows": rows})
}

#[cfg(test)]
mod tests {
    #[test]
    fn strace_summary_rows() {
        let text = "% time     seconds  usecs/call     calls    errors syscall\n\
                    ------ ----------- ----------- --------- --------- ----------------\n\
                    \x20 90.00    0.000900           4       197           write\n\
                    \x20  0.00    0.000000           0         1         1 access\n\
                    ------ ----------- ----------- --------- --------- ----------------\n\
                    100.00    0.001000           5       198         1 total\n";
        assert_eq!(super::parse_strace(text), vec![("write".to_string(), 197), ("access".to_string(), 1)]);
    }
}
