//! Moving a stream between two processes: loopback TCP and a Unix socket. The harness
//! spawns itself once per socket transport as a receiver (`stream-recv`), which accepts
//! one connection per run. A run is: a header frame (which peer, which dataset, how many
//! messages, check or not), the peer's stream, and an acknowledgement frame back once the
//! receiver has decoded everything. Frames are a u32 length and JSON, read with
//! `read_exact` on the bare socket so no reader takes bytes of the stream with them.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::data::Spec;

/// A stuck run fails instead of hanging the benchmark.
const TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    Unix,
    File,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Unix => "unix",
            Transport::File => "file",
        }
    }
}

pub enum Socket {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Socket {
    pub fn connect(addr: &str) -> io::Result<Socket> {
        let s = if let Some(a) = addr.strip_prefix("tcp:") {
            let s = TcpStream::connect(a)?;
            // Every peer buffers 64 KiB itself; Nagle would only hold back the last
            // partial buffer until the receiver's delayed ACK.
            s.set_nodelay(true)?;
            Socket::Tcp(s)
        } else if let Some(p) = addr.strip_prefix("unix:") {
            Socket::Unix(UnixStream::connect(p)?)
        } else {
            return Err(io::Error::other(format!("bad address {addr}")));
        };
        s.set_read_timeout(Some(TIMEOUT))?;
        Ok(s)
    }

    pub fn try_clone(&self) -> io::Result<Socket> {
        Ok(match self {
            Socket::Tcp(s) => Socket::Tcp(s.try_clone()?),
            Socket::Unix(s) => Socket::Unix(s.try_clone()?),
        })
    }

    pub fn shutdown_write(&self) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.shutdown(Shutdown::Write),
            Socket::Unix(s) => s.shutdown(Shutdown::Write),
        }
    }

    fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.set_read_timeout(t),
            Socket::Unix(s) => s.set_read_timeout(t),
        }
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.read(buf),
            Socket::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.write(buf),
            Socket::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// What the sender announces before its stream.
#[derive(Serialize, Deserialize, Debug)]
pub struct Header {
    pub peer: String,
    pub spec: Spec,
    pub count: u64,
    /// Compare every message exactly with the one sent (the check run), not only the digest.
    pub check: bool,
}

/// The receiver's answer once it has read `count` messages (or failed to).
#[derive(Serialize, Deserialize, Debug, Default)]
pub struct Ack {
    pub count: u64,
    pub checksum: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrong: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

pub fn write_frame<T: Serialize>(w: &mut impl Write, value: &T) -> io::Result<()> {
    let body = serde_json::to_vec(value).map_err(io::Error::other)?;
    let mut frame = (body.len() as u32).to_le_bytes().to_vec();
    frame.extend_from_slice(&body);
    w.write_all(&frame)
}

pub fn read_frame<T: for<'de> Deserialize<'de>>(r: &mut impl Read) -> io::Result<T> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let mut body = vec![0u8; u32::from_le_bytes(len) as usize];
    r.read_exact(&mut body)?;
    serde_json::from_slice(&body).map_err(io::Error::other)
}

/// One receiving process, serving runs one connection at a time.
pub struct Receiver {
    child: Child,
    pub addr: String,
}

impl Receiver {
    /// `exe stream-recv tcp|unix:PATH --data DIR`; the child prints its address once it
    /// listens.
    pub fn spawn(exe: &Path, transport: Transport, socket_path: &Path, data_dir: &Path) -> io::Result<Receiver> {
        let listen = match transport {
            Transport::Tcp => "tcp".to_string(),
            Transport::Unix => format!("unix:{}", socket_path.display()),
            Transport::File => return Err(io::Error::other("a file has no receiver")),
        };
        let mut child = Command::new(exe)
            .arg(super::RECV_COMMAND)
            .arg(listen)
            .arg("--data")
            .arg(data_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()?;
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        BufReader::new(stdout).read_line(&mut line)?;
        let addr = line.trim().to_string();
        if addr.is_empty() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::other("the receiver exited before listening"));
        }
        Ok(Receiver { child, addr })
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let quit = Socket::connect(&self.addr).and_then(|mut s| write_frame(&mut s, &serde_json::json!("quit")));
        let deadline = Instant::now() + Duration::from_secs(5);
        while quit.is_ok() && Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // Our own child, by its handle.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The receiving process: `stream-recv tcp|unix:PATH --data DIR`. Runs until a "quit"
/// frame. Each connection is handed to `serve` with the socket, after its header.
pub fn recv_main(args: &[String], serve: impl Fn(&Header, Socket, &Path) -> Ack) {
    let (listen, data_dir) = match args {
        [listen, flag, data] if flag == "--data" => (listen.as_str(), PathBuf::from(data)),
        _ => {
            eprintln!("usage: {} tcp|unix:PATH --data DIR", super::RECV_COMMAND);
            std::process::exit(2)
        }
    };
    enum Listener {
        Tcp(TcpListener),
        Unix(UnixListener),
    }
    let (listener, addr) = if listen == "tcp" {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let a = format!("tcp:{}", l.local_addr().expect("bound address"));
        (Listener::Tcp(l), a)
    } else {
        let path = listen.strip_prefix("unix:").expect("tcp or unix:PATH");
        let _ = std::fs::remove_file(path);
        (Listener::Unix(UnixListener::bind(path).expect("bind the Unix socket")), listen.to_string())
    };
    println!("{addr}");
    let _ = io::stdout().flush();
    loop {
        let accepted = match &listener {
            Listener::Tcp(l) => l.accept().map(|(s, _)| {
                let _ = s.set_nodelay(true);
                Socket::Tcp(s)
            }),
            Listener::Unix(l) => l.accept().map(|(s, _)| Socket::Unix(s)),
        };
        let Ok(mut socket) = accepted else { continue };
        let _ = socket.set_read_timeout(Some(TIMEOUT));
        let header: serde_json::Value = match read_frame(&mut socket) {
            Ok(h) => h,
            Err(_) => continue,
        };
        if header == "quit" {
            break;
        }
        let ack = match serde_json::from_value::<Header>(header) {
            Ok(h) => match socket.try_clone() {
                Ok(source) => serve(&h, source, &data_dir),
                Err(e) => Ack { error: Some(e.to_string()), ..Ack::default() },
            },
            Err(e) => Ack { error: Some(format!("bad header: {e}")), ..Ack::default() },
        };
        let _ = write_frame(&mut socket, &ack);
        // Read to the sender's end of stream before closing: closing a TCP socket with
        // unread bytes (an end marker) resets the connection, which could lose the ack.
        let _ = io::copy(&mut socket, &mut io::sink());
    }
    if let Some(path) = listen.strip_prefix("unix:") {
        let _ = std::fs::remove_file(path);
    }
}
