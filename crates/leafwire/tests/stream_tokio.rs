//! The Tokio stream adapters (feature `tokio`): `AsyncStreamWriter` writes the bytes of
//! `StreamWriter`, in the same writes; `AsyncStreamReader` reads what `StreamReader` reads,
//! with the same errors, whatever the read sizes, over sockets too.
#![cfg(feature = "tokio")]

use std::pin::Pin;
use std::task::{Context, Poll};

use leafwire::stream::{AsyncStreamReader, AsyncStreamWriter, SliceReader, StreamOptions, StreamReader, StreamWriter};
use leafwire::{Category, Value};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Tick {
    symbol: String,
    price: f64,
    size: u32,
    book: Vec<(f64, f64)>,
}

fn tick(i: usize) -> Tick {
    Tick {
        symbol: format!("S{}", i % 7),
        price: 100.0 + i as f64 / 8.0,
        size: i as u32 * 3,
        book: (0..i % 5).map(|k| (k as f64, -(k as f64))).collect(),
    }
}

/// A message of each kind the writers take.
enum Message {
    Serde(Tick),
    Number(f64),
    Integer(i64),
    Slice(Vec<f64>),
    Floats(Vec<f32>),
    Value(Value),
    Json(String),
    Reset,
}

fn messages() -> Vec<Message> {
    let mut m = Vec::new();
    for i in 0..120 {
        m.push(Message::Serde(tick(i)));
        m.push(Message::Number(i as f64 * 0.5));
        m.push(Message::Integer(-(i as i64) * 70_000));
        m.push(Message::Slice((0..i % 11).map(|j| j as f64).collect()));
        if i % 17 == 0 {
            // Long typed arrays: frames longer than any small buffer.
            m.push(Message::Slice((0..3000).map(|j| j as f64 * 0.25).collect()));
            m.push(Message::Floats((0..1000 + i).map(|j| j as f32).collect()));
        }
        if i % 5 == 0 {
            m.push(Message::Value(leafwire::decode(&leafwire::to_vec(&tick(i + 1000)).unwrap()).unwrap()));
            m.push(Message::Json(format!(r#"{{"k{i}":[1,"x",null,{{"c":true}}],"s":"{}"}}"#, "y".repeat(i))));
        }
        if i == 60 {
            m.push(Message::Reset);
        }
    }
    m
}

fn write_sync<W: std::io::Write>(sink: W, options: StreamOptions) -> W {
    let mut w = StreamWriter::with_options(sink, options).unwrap();
    for m in messages() {
        match m {
            Message::Serde(t) => w.write(&t),
            Message::Number(x) => w.write(&x),
            Message::Integer(x) => w.write(&x),
            Message::Slice(xs) => w.write_slice(&xs),
            Message::Floats(xs) => w.write(&xs),
            Message::Value(v) => w.write_value(&v),
            Message::Json(j) => w.write_json(j.as_bytes()),
            Message::Reset => w.reset_keys(),
        }
        .unwrap();
    }
    w.into_inner().unwrap()
}

async fn write_async<W: AsyncWrite + Unpin>(sink: W, options: StreamOptions) -> W {
    let mut w = AsyncStreamWriter::with_options(sink, options).unwrap();
    for m in messages() {
        match m {
            Message::Serde(t) => w.write(&t).await,
            Message::Number(x) => w.write(&x).await,
            Message::Integer(x) => w.write(&x).await,
            Message::Slice(xs) => w.write_slice(&xs).await,
            Message::Floats(xs) => w.write(&xs).await,
            Message::Value(v) => w.write_value(&v).await,
            Message::Json(j) => w.write_json(j.as_bytes()).await,
            Message::Reset => w.reset_keys().await,
        }
        .unwrap();
    }
    w.into_inner().await.unwrap()
}

fn options(buffer_size: usize, crc: bool) -> StreamOptions {
    StreamOptions { buffer_size, crc, ..StreamOptions::default() }
}

/// A sink that records every write, blocking or async.
#[derive(Default)]
struct Writes {
    bytes: Vec<u8>,
    sizes: Vec<usize>,
}

impl std::io::Write for Writes {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.bytes.extend_from_slice(b);
        self.sizes.push(b.len());
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl AsyncWrite for Writes {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, b: &[u8]) -> Poll<std::io::Result<usize>> {
        Poll::Ready(std::io::Write::write(self.get_mut(), b))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// An `AsyncRead` that hands out 1 to 7 bytes a read, and is not ready every third poll:
/// every refill boundary is crossed, and every wait.
struct Trickle<'a> {
    bytes: &'a [u8],
    polls: usize,
}

impl<'a> Trickle<'a> {
    fn new(bytes: &'a [u8]) -> Trickle<'a> {
        Trickle { bytes, polls: 0 }
    }
}

impl AsyncRead for Trickle<'_> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, out: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        self.polls += 1;
        if self.polls % 3 == 0 {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let n = (1 + self.polls % 7).min(out.remaining()).min(self.bytes.len());
        out.put_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Poll::Ready(Ok(()))
    }
}

fn slice_values(bytes: &[u8]) -> Vec<Value> {
    let mut r = SliceReader::new(bytes).unwrap();
    let mut out = Vec::new();
    while let Some(f) = r.next_frame() {
        out.push(f.unwrap().to_value().unwrap());
    }
    out
}

/// What a reader yields: each message's value, or its error's category, offset and text.
type Outcome = Result<Value, (Category, Option<u64>, String)>;

fn outcome(r: leafwire::Result<Value>) -> Outcome {
    r.map_err(|e| (e.category(), e.offset(), e.to_string()))
}

fn sync_outcomes(bytes: &[u8], options: StreamOptions) -> Vec<Outcome> {
    let mut r = StreamReader::with_options(bytes, options).unwrap();
    let mut out = Vec::new();
    while let Some(f) = r.next_frame() {
        out.push(outcome(f.and_then(|f| f.to_value())));
    }
    out
}

async fn async_outcomes<R: AsyncRead + Unpin>(source: R, options: StreamOptions) -> Vec<Outcome> {
    let mut r = AsyncStreamReader::with_options(source, options).await.unwrap();
    let mut out = Vec::new();
    while let Some(f) = r.next_frame().await {
        out.push(outcome(f.and_then(|f| f.to_value())));
    }
    out
}

#[tokio::test]
async fn the_async_writer_writes_the_sync_writers_bytes_in_the_same_writes() {
    for crc in [false, true] {
        for buffer_size in [16, 100, 1000, 64 << 10] {
            let sync = write_sync(Writes::default(), options(buffer_size, crc));
            let async_ = write_async(Writes::default(), options(buffer_size, crc)).await;
            assert!(sync.bytes == async_.bytes, "bytes differ: buffer {buffer_size}, crc {crc}");
            assert_eq!(sync.sizes, async_.sizes, "writes differ: buffer {buffer_size}, crc {crc}");
            assert_eq!(slice_values(&async_.bytes).len(), messages().len() - 1, "every message but the reset");
        }
    }
    // Any AsyncWrite: a Vec.
    let bytes = write_async(Vec::new(), options(16, false)).await;
    assert!(bytes == write_sync(Vec::new(), options(16, false)));
}

#[tokio::test]
async fn the_async_writer_counts_and_flushes_as_the_sync_writer() {
    let mut w = AsyncStreamWriter::with_options(Writes::default(), options(1000, false)).unwrap();
    w.write(&1.5f64).await.unwrap();
    assert_eq!(w.position(), 112 + 10);
    assert_eq!(w.buffered(), 122, "nothing goes out before the buffer fills");
    assert!(w.get_ref().bytes.is_empty());
    w.flush().await.unwrap();
    assert_eq!((w.buffered(), w.get_ref().bytes.len()), (0, 122));
    // A message the writer refuses is the sync writer's error, and sends nothing.
    let mut small =
        AsyncStreamWriter::with_options(Vec::new(), StreamOptions { max_frame: 100, ..options(16, false) }).unwrap();
    let e = small.write(&tick(3)).await.unwrap_err();
    assert_eq!(e.category(), Category::LimitExceeded);
    small.write(&2.5f64).await.unwrap();
    let bytes = small.into_inner().await.unwrap();
    assert_eq!(slice_values(&bytes), vec![Value::from(2.5f64)]);
}

#[tokio::test]
async fn the_async_reader_reads_what_the_sync_reader_reads_a_few_bytes_at_a_time() {
    for crc in [false, true] {
        let bytes = write_sync(Vec::new(), options(1000, crc));
        let want = sync_outcomes(&bytes, StreamOptions::default());
        assert!(want.iter().all(|o| o.is_ok()));
        for buffer_size in [16, 100, 64 << 10] {
            let got = async_outcomes(Trickle::new(&bytes), options(buffer_size, false)).await;
            assert!(got == want, "buffer {buffer_size}, crc {crc}");
        }
        // next_slice as well: the numbers in place, the other messages WrongType.
        let mut r = AsyncStreamReader::new(Trickle::new(&bytes)).await.unwrap();
        let mut s = SliceReader::new(&bytes).unwrap();
        loop {
            let (a, b) = (r.next_slice::<f64>().await, s.next_slice::<f64>());
            match (a, b) {
                (None, None) => break,
                (Some(Ok(a)), Some(Ok(b))) => assert_eq!(a, b),
                (Some(Err(a)), Some(Err(b))) => assert_eq!((a.category(), a.offset()), (b.category(), b.offset())),
                (a, b) => panic!("the readers differ: {:?} / {:?}", a.map(|r| r.err()), b.map(|r| r.err())),
            }
            assert_eq!(r.position(), s.position());
        }
    }
}

#[tokio::test]
async fn a_torn_last_frame_is_reported_after_every_complete_frame() {
    let bytes = write_sync(Vec::new(), options(1000, true));
    let cuts = (112..bytes.len()).filter(|&c| c < 1500 || c % 97 == 0 || c + 5 >= bytes.len());
    for cut in cuts {
        let torn = &bytes[..cut];
        let want = sync_outcomes(torn, options(100, false));
        let got = async_outcomes(Trickle::new(torn), options(100, false)).await;
        assert!(got == want, "cut {cut}");
        if let Some(Err((category, _, text))) = got.last() {
            assert_eq!(*category, Category::Malformed);
            assert!(text.contains("truncated"), "{text}");
        }
    }
    // A torn header.
    let e = AsyncStreamReader::new(Trickle::new(&bytes[..50])).await.err().unwrap();
    assert_eq!(e.category(), StreamReader::new(&bytes[..50]).err().unwrap().category());
}

#[tokio::test]
async fn hostile_lengths_are_refused_before_allocating() {
    let header = StreamWriter::new(Vec::new()).unwrap().into_inner().unwrap();
    let with = |frame: &[u8]| [&header[..], frame].concat();
    // A length near 2^63: allocating it would abort the test.
    let absurd = with(&[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0x05]);
    let got = async_outcomes(Trickle::new(&absurd), StreamOptions::default()).await;
    assert_eq!(got, sync_outcomes(&absurd, StreamOptions::default()));
    let Err((category, offset, _)) = &got[0] else { panic!("no error") };
    assert_eq!((*category, *offset), (Category::LimitExceeded, Some(112)));
    // 1 GiB announced, nothing after it: refused at the default 64 MiB bound, not awaited.
    let big = with(&[0x80, 0x80, 0x80, 0x80, 0x04]);
    let got = async_outcomes(&big[..], StreamOptions::default()).await;
    assert!(matches!(&got[..], [Err((Category::LimitExceeded, Some(112), _))]), "{got:?}");
}

#[tokio::test]
async fn max_frame_is_the_readers_bound() {
    let mut w = StreamWriter::new(Vec::new()).unwrap();
    w.write(&1.5f64).unwrap();
    w.write_slice(&[0.25f64; 3000]).unwrap();
    w.write(&2.5f64).unwrap();
    let bytes = w.into_inner().unwrap();
    let tight = StreamOptions { max_frame: 1000, ..StreamOptions::default() };
    let got = async_outcomes(Trickle::new(&bytes), tight.clone()).await;
    assert_eq!(got, sync_outcomes(&bytes, tight));
    assert_eq!(got.len(), 2, "the first message, then the error; nothing after it");
    assert!(matches!(&got[1], Err((Category::LimitExceeded, _, _))), "{got:?}");
    let roomy = StreamOptions { max_frame: 1 << 20, ..StreamOptions::default() };
    assert_eq!(async_outcomes(Trickle::new(&bytes), roomy).await.len(), 3);
}

#[tokio::test]
async fn a_damaged_frame_is_reported_and_skipped_as_the_sync_reader_does() {
    let mut w = StreamWriter::with_options(Vec::new(), options(1000, true)).unwrap();
    for i in 0..20 {
        w.write_slice(&[i as f64; 2]).unwrap();
    }
    let mut bytes = w.into_inner().unwrap();
    // Frame 5 (each is 2 + 16 + 4 bytes): flip a bit of its numbers.
    bytes[112 + 5 * 22 + 6] ^= 0x10;
    let mut r = AsyncStreamReader::new(Trickle::new(&bytes)).await.unwrap();
    let mut s = StreamReader::new(&bytes[..]).unwrap();
    let (mut seen, mut errors) = (Vec::new(), 0);
    loop {
        let (a, b) =
            (r.next_slice::<f64>().await.map(|x| x.map(|x| x[0])), s.next_slice::<f64>().map(|x| x.map(|x| x[0])));
        match (a, b) {
            (None, None) => break,
            (Some(Ok(a)), Some(Ok(b))) => {
                assert_eq!(a, b);
                seen.push(a);
            }
            (Some(Err(a)), Some(Err(b))) => {
                assert_eq!((a.category(), a.offset()), (b.category(), b.offset()));
                assert_eq!(a.offset(), Some(112 + 5 * 22));
                errors += 1;
                assert!(r.skip() && s.skip());
            }
            _ => panic!("the readers differ"),
        }
    }
    assert_eq!(errors, 1);
    assert_eq!(seen, (0..20).filter(|&i| i != 5).map(|i| i as f64).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_read_cancelled_while_waiting_loses_nothing() {
    let bytes = write_sync(Vec::new(), options(1000, false));
    // Room for the header and 3 bytes, so that they can be written before the reader reads.
    let (mut tx, rx) = tokio::io::duplex(4096);
    let (cut, rest) = bytes.split_at(112 + 3);
    tokio::io::AsyncWriteExt::write_all(&mut tx, cut).await.unwrap();
    let mut r = AsyncStreamReader::new(rx).await.unwrap();
    // The first frame is incomplete: the read waits, and is cancelled.
    tokio::select! {
        biased;
        _ = r.next_frame() => panic!("a frame from 3 bytes"),
        _ = std::future::ready(()) => {}
    }
    let writer = tokio::spawn({
        let rest = rest.to_vec();
        async move { tokio::io::AsyncWriteExt::write_all(&mut tx, &rest).await.unwrap() }
    });
    let mut got = Vec::new();
    while let Some(f) = r.next_frame().await {
        got.push(f.unwrap().to_value().unwrap());
    }
    writer.await.unwrap();
    assert_eq!(got, slice_values(&bytes));
}

/// Writes with the async writer on one task, reads with the async reader on another.
async fn across_tasks<W, R>(sink: W, source: R)
where
    W: AsyncWrite + Unpin + Send + 'static,
    R: AsyncRead + Unpin,
{
    let count = 3000;
    let writer = tokio::spawn(async move {
        let mut w = AsyncStreamWriter::with_options(sink, options(4096, true)).unwrap();
        for i in 0..count {
            w.write(&tick(i)).await.unwrap();
            w.write_slice(&[i as f64; 3]).await.unwrap();
        }
        let mut sink = w.into_inner().await.unwrap();
        tokio::io::AsyncWriteExt::shutdown(&mut sink).await.unwrap();
    });
    let mut r = AsyncStreamReader::new(source).await.unwrap();
    for i in 0..count {
        let t: Tick = r.next_frame().await.unwrap().unwrap().deserialize().unwrap();
        assert_eq!(t, tick(i));
        assert_eq!(r.next_slice::<f64>().await.unwrap().unwrap(), &[i as f64; 3]);
    }
    assert!(r.next_frame().await.is_none(), "the stream ends where the writer stopped");
    writer.await.unwrap();
}

#[cfg(unix)]
#[tokio::test]
async fn two_tasks_over_a_unix_socket_pair() {
    let (a, b) = tokio::net::UnixStream::pair().unwrap();
    across_tasks(a, b).await;
}

#[tokio::test]
async fn two_tasks_over_tcp_loopback() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let connect = tokio::net::TcpStream::connect(listener.local_addr().unwrap());
    let (sink, accepted) = tokio::join!(connect, listener.accept());
    across_tasks(sink.unwrap(), accepted.unwrap().0).await;
}
