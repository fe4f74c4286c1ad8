#!/usr/bin/env python3
"""Why the stream workload's buffer is 64 KiB less 64 bytes: the kernel time of writes of
one size to loopback TCP, around two segments.

Linux bounds a TCP segment to half the largest window the peer offered (32,741 bytes on
the machine these numbers come from; TCP_MAXSEG says what it is here). A write just over
two segments leaves a third segment of a few bytes, sent at once (TCP_NODELAY), which the
receiver wakes up for. Writes from 64 KiB less a few hundred bytes to 64 KiB are then much
dearer per byte than writes just under two segments: a buffered writer whose buffer-sized
writes land there pays it, and whether they do depends on its message size.

Run: python3 bench/scripts/loopback_writes.py [--reps N] [--sizes a,b,...]
Prints, per write size, the median over rounds of the sender's system time per GB and the
throughput. Sender on CPU 0, receiver on CPU 1 (as in the workload), sizes interleaved.
"""

import argparse
import os
import random
import resource
import socket
import statistics
import time


CPUS = sorted(os.sched_getaffinity(0))


def one_run(size: int, writes: int) -> tuple[float, float]:
    """(sender system seconds, wall seconds) for `writes` sends of `size` bytes."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    pid = os.fork()
    if pid == 0:
        if len(CPUS) > 1:
            os.sched_setaffinity(0, {CPUS[-1]})
        conn, _ = server.accept()
        buf = memoryview(bytearray(256 << 10))
        while conn.recv_into(buf):
            pass
        os._exit(0)
    sock = socket.create_connection(server.getsockname())
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    data = memoryview(bytearray(size))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_stime
    start = time.perf_counter()
    for _ in range(writes):
        sock.sendall(data)
    sock.close()
    os.waitpid(pid, 0)
    wall = time.perf_counter() - start
    server.close()
    return resource.getrusage(resource.RUSAGE_SELF).ru_stime - before, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5, help="rounds (sizes shuffled in each)")
    ap.add_argument("--sizes", default="60000,65400,65472,65482,65483,65490,65520,65536")
    ap.add_argument("--bytes", type=int, default=1 << 30, help="bytes per run")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if len(CPUS) > 1:
        os.sched_setaffinity(0, {CPUS[0]})

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    probe.listen(1)
    client = socket.create_connection(probe.getsockname())
    print(f"TCP_MAXSEG on loopback: {client.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)} bytes")
    client.close()
    probe.close()

    results: dict[int, list[tuple[float, float]]] = {s: [] for s in sizes}
    rng = random.Random(13)
    for _ in range(args.reps):
        order = sizes[:]
        rng.shuffle(order)
        for size in order:
            results[size].append(one_run(size, max(1, args.bytes // size)))
    print(f"{'write bytes':>11}  {'sys s/GB':>8}  {'GB/s':>5}")
    for size in sizes:
        gb = max(1, args.bytes // size) * size / 1e9
        sys_per_gb = statistics.median(s for s, _ in results[size]) / gb
        rate = gb / statistics.median(w for _, w in results[size])
        print(f"{size:>11}  {sys_per_gb:>8.3f}  {rate:>5.2f}")


if __name__ == "__main__":
    main()
