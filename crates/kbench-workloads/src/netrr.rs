//! `netrr`: TCP request/response. A client sends a request of `--size` bytes and waits
//! for a response of the same size, `--transactions` times, each transaction timed;
//! the server answers each request with its own bytes (an echo).
//!
//! Over loopback the server is a process kbench forks, and a transaction is two
//! trips through the TCP stack, each raising `NET_RX` (the softirq of a received
//! packet) and waking the task that waits for it, with no device interrupt. With
//! `--peer HOST:PORT` the server is any TCP echo server on another machine, and the
//! transactions cross a real network device: its interrupts are counted too.
//!
//! Like sockperf's `ping-pong` and netperf's `TCP_RR`, with two differences to keep in
//! mind when setting them side by side: sockperf reports half a round trip as its
//! latency, kbench the whole transaction; and kbench sets `TCP_NODELAY` on both ends,
//! as both tools do.
use crate::clock::now_ns;
use crate::counters::RunCounters;
use crate::events::PerOp;
use crate::ipiaccount::SoftirqWindow;
use crate::latency::LatencyRecorder;
use crate::measure::{RegionEnd, TimedRegion};
use crate::perfopt::{OptKind, OptSpec, ParsedOptions};
use crate::shared::SharedStats;
use crate::workers::{self, Exit};
use crate::{Instruments, RunRecord, Workload, WorkloadError};
use kbench_record::PlacementRequest;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::Duration;

const DEFAULT_SIZE: i32 = 64;
const MAX_SIZE: i32 = 1 << 20;
const DEFAULT_TRANSACTIONS: i32 = 20_000;
const DEFAULT_WARMUP: i32 = 1_000;
const MAX_TRANSACTIONS: i32 = 100_000_000;
/// A peer that has not answered by then is not an echo server (or is gone).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);
/// The tasks' CPUs are sampled once per this many transactions.
const CPU_SAMPLE_EVERY: u64 = 64;
/// System calls per transaction by construction: the client's send and receive, and
/// over loopback the server's receive and send (more when a message arrives in parts).
const SYSCALLS_PER_TRANSACTION_LOOPBACK: f64 = 4.0;
const SYSCALLS_PER_TRANSACTION_PEER: f64 = 2.0;
const ROLES: [&str; 2] = ["client", "server"];

pub static OPTIONS: &[OptSpec] = &[
    OptSpec {
        short: None,
        long: "size",
        kind: OptKind::Int,
        help: "Bytes of each request and of each response (default 64)",
    },
    OptSpec {
        short: None,
        long: "transactions",
        kind: OptKind::Int,
        help: "Measured transactions per run (default 20000)",
    },
    OptSpec {
        short: None,
        long: "warmup",
        kind: OptKind::Int,
        help: "Transactions before the measured ones, discarded (default 1000)",
    },
    OptSpec {
        short: None,
        long: "peer",
        kind: OptKind::Str { argh: "HOST:PORT" },
        help: "A TCP echo server elsewhere, instead of a forked one over loopback",
    },
    crate::placement::OPTION,
];

pub static WORKLOAD: Workload = Workload {
    collection: "netrr",
    name: "netrr",
    summary: "TCP request/response latency and rate, over loopback or to a peer",
    usage: "kbench bench netrr <options>",
    options: OPTIONS,
    comm: "netrr",
    in_perf_all: false,
    check: crate::placement::check,
    validate,
    takes_counters: false,
    run: run_parsed,
};

/// The parameters of one run, defaults resolved and validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    pub size: u32,
    pub transactions: u32,
    pub warmup: u32,
    /// The echo server's address as given, `None` for a forked one over loopback.
    pub peer: Option<String>,
    pub placement: PlacementRequest,
}

impl Params {
    pub fn from_parsed(parsed: &ParsedOptions) -> Result<Self, WorkloadError> {
        let bounded = crate::wakeup::bounded;
        let peer = parsed.str("peer").flatten();
        let placement = crate::placement::requested(parsed);
        if peer.is_some() && placement != PlacementRequest::Free {
            return Err(WorkloadError::Usage(
                "--placement places the forked server and the client; with --peer the server runs elsewhere".into(),
            ));
        }
        Ok(Params {
            size: bounded(parsed, "size", DEFAULT_SIZE, 1, MAX_SIZE)?,
            transactions: bounded(
                parsed,
                "transactions",
                DEFAULT_TRANSACTIONS,
                1,
                MAX_TRANSACTIONS,
            )?,
            warmup: bounded(parsed, "warmup", DEFAULT_WARMUP, 0, MAX_TRANSACTIONS)?,
            peer,
            placement,
        })
    }

    fn params_map(&self) -> BTreeMap<String, serde_json::Value> {
        let mut map = BTreeMap::from([
            ("size".into(), self.size.into()),
            ("transactions".into(), self.transactions.into()),
            ("warmup".into(), self.warmup.into()),
        ]);
        map.extend(crate::placement::param(self.placement));
        if let Some(peer) = &self.peer {
            map.insert("peer".into(), peer.clone().into());
        }
        map
    }

    fn variant(&self) -> &'static str {
        if self.peer.is_some() {
            "peer"
        } else {
            "loopback"
        }
    }
}

fn validate(parsed: &ParsedOptions) -> Result<(), String> {
    Params::from_parsed(parsed)
        .map(drop)
        .map_err(|e| e.to_string())
}

fn run_parsed(parsed: &ParsedOptions, _: Instruments) -> Result<RunRecord, WorkloadError> {
    run(&Params::from_parsed(parsed)?)
}

/// Runs one netrr benchmark.
pub fn run(p: &Params) -> Result<RunRecord, WorkloadError> {
    let stats = SharedStats::new(2, 0).map_err(|e| WorkloadError::failed("mmap", e))?;
    let (end, softirqs, recorder) = match &p.peer {
        Some(peer) => {
            let stream = connect_to_peer(peer)?;
            let client = Client::new(p, stream, &stats)?;
            client.run(p)?
        }
        None => run_loopback(p, &stats)?,
    };
    Ok(record(p, end, softirqs, &recorder, &stats))
}

/// What a client's measured transactions leave: the region, the softirqs, the latencies.
type Measured = (
    RegionEnd,
    Vec<kbench_record::InterruptSource>,
    LatencyRecorder,
);

fn connect_to_peer(peer: &str) -> Result<TcpStream, WorkloadError> {
    let addresses: Vec<SocketAddr> = peer
        .to_socket_addrs()
        .map_err(|e| WorkloadError::Usage(format!("--peer {peer}: {e}")))?
        .collect();
    let mut last = None;
    for address in &addresses {
        match TcpStream::connect_timeout(address, ANSWER_TIMEOUT) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = Some(e),
        }
    }
    Err(WorkloadError::Failed(match last {
        Some(e) => format!("--peer {peer}: connecting: {e}"),
        None => format!("--peer {peer}: the name has no address"),
    }))
}

/// Forks the echo server, connects to it over loopback and runs the client here.
fn run_loopback(p: &Params, stats: &SharedStats) -> Result<Measured, WorkloadError> {
    let cpus = crate::placement::task_cpus(p.placement, "netrr")?;
    let listener = TcpListener::bind("127.0.0.1:0")
        .map_err(|e| WorkloadError::failed("listening on 127.0.0.1", e))?;
    let address = listener
        .local_addr()
        .map_err(|e| WorkloadError::failed("listening on 127.0.0.1", e))?;
    let _affinity = cpus.map(|_| crate::placement::AffinityGuard::save());
    workers::prepare(1).map_err(|e| WorkloadError::failed("preparing workers", e))?;
    workers::flush_stdio();
    let size = p.size as usize;
    let server = workers::fork_worker(|| {
        if let Some([_, server_cpu]) = cpus {
            if let Err(e) = crate::cpus::pin_current_thread(server_cpu) {
                crate::errln!("kbench: netrr server: {e}");
                return 1;
            }
        }
        match serve_one(&listener, size, stats) {
            Ok(()) => 0,
            Err(e) => {
                crate::errln!("kbench: netrr server: {e}");
                1
            }
        }
    })
    .map_err(|e| WorkloadError::failed("fork", e))?;
    drop(listener);
    let client = TcpStream::connect(address)
        .map_err(|e| WorkloadError::failed("connecting over loopback", e))
        .and_then(|stream| {
            if let Some([client_cpu, _]) = cpus {
                crate::cpus::pin_current_thread(client_cpu).map_err(WorkloadError::Failed)?;
            }
            Client::new(p, stream, stats)
        });
    let outcome = client.and_then(|c| c.run(p));
    // The client's end is closed now: the server reads end-of-file and exits.
    let exit = match &outcome {
        Ok(_) => workers::reap(server).map_err(|e| WorkloadError::failed("waitpid", e))?,
        Err(_) => {
            workers::kill_and_reap_all();
            Exit::Signal(libc::SIGKILL)
        }
    };
    let measured = outcome?;
    if exit != Exit::Code(0) {
        return Err(WorkloadError::Failed(format!("netrr server {exit}")));
    }
    Ok(measured)
}

/// The forked server: one connection, each request answered with its own bytes, until
/// the client closes.
fn serve_one(listener: &TcpListener, size: usize, stats: &SharedStats) -> Result<(), String> {
    let (mut stream, _) = listener.accept().map_err(|e| format!("accept: {e}"))?;
    stream
        .set_nodelay(true)
        .map_err(|e| format!("TCP_NODELAY: {e}"))?;
    let slot = stats.task(1);
    let mut message = vec![0u8; size];
    let mut served = 0u64;
    loop {
        if served.is_multiple_of(CPU_SAMPLE_EVERY) {
            slot.note_current_cpu();
        }
        match read_message(&mut stream, &mut message) {
            Ok(true) => {}
            Ok(false) => return Ok(()),
            Err(e) => return Err(format!("receiving: {e}")),
        }
        stream
            .write_all(&message)
            .map_err(|e| format!("answering: {e}"))?;
        served += 1;
    }
}

/// Reads one whole message; `Ok(false)` on end-of-file before its first byte.
fn read_message(stream: &mut TcpStream, message: &mut [u8]) -> std::io::Result<bool> {
    let mut filled = 0;
    while filled < message.len() {
        match stream.read(&mut message[filled..]) {
            Ok(0) if filled == 0 => return Ok(false),
            Ok(0) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the connection closed inside a message",
                ))
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// The client's end of the connection.
struct Client<'a> {
    stream: TcpStream,
    request: Vec<u8>,
    response: Vec<u8>,
    stats: &'a SharedStats,
}

impl<'a> Client<'a> {
    fn new(p: &Params, stream: TcpStream, stats: &'a SharedStats) -> Result<Self, WorkloadError> {
        let setup = |e| WorkloadError::failed("setting up the client's socket", e);
        stream.set_nodelay(true).map_err(setup)?;
        stream
            .set_read_timeout(Some(ANSWER_TIMEOUT))
            .map_err(setup)?;
        let request: Vec<u8> = (0..p.size).map(|i| (i % 251) as u8).collect();
        Ok(Client {
            stream,
            response: vec![0; request.len()],
            request,
            stats,
        })
    }

    /// The warm-up transactions, then the measured ones, timed; closes the connection.
    fn run(mut self, p: &Params) -> Result<Measured, WorkloadError> {
        let failed = |e: String| WorkloadError::Failed(format!("netrr: {e}"));
        self.transactions(u64::from(p.warmup), None)
            .map_err(failed)?;
        let mut recorder = LatencyRecorder::new().map_err(WorkloadError::Failed)?;
        let mut counters = RunCounters::none();
        let softirqs = SoftirqWindow::open();
        let region = TimedRegion::start(&mut counters);
        let result = self.transactions(u64::from(p.transactions), Some(&mut recorder));
        let end = region.stop();
        let softirqs = softirqs.close(u64::from(p.transactions));
        result.map_err(failed)?;
        Ok((end, softirqs, recorder))
    }

    fn transactions(
        &mut self,
        count: u64,
        mut recorder: Option<&mut LatencyRecorder>,
    ) -> Result<(), String> {
        let slot = self.stats.task(0);
        for i in 0..count {
            if i.is_multiple_of(CPU_SAMPLE_EVERY) {
                slot.note_current_cpu();
            }
            let t0 = now_ns();
            self.stream
                .write_all(&self.request)
                .map_err(|e| format!("sending a request: {e}"))?;
            match read_message(&mut self.stream, &mut self.response) {
                Ok(true) => {}
                Ok(false) => return Err("the server closed the connection".into()),
                Err(e) if is_timeout(&e) => {
                    return Err(format!(
                        "no answer within {ANSWER_TIMEOUT:?}: the server must send back each request's bytes"
                    ))
                }
                Err(e) => return Err(format!("receiving a response: {e}")),
            }
            let t1 = now_ns();
            if self.response != self.request {
                return Err(
                    "the response differs from the request: the server is not an echo server"
                        .into(),
                );
            }
            if let Some(recorder) = recorder.as_deref_mut() {
                recorder.record(t1.saturating_sub(t0));
            }
        }
        Ok(())
    }
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

fn record(
    p: &Params,
    end: RegionEnd,
    softirqs: Vec<kbench_record::InterruptSource>,
    recorder: &LatencyRecorder,
    stats: &SharedStats,
) -> RunRecord {
    let RegionEnd {
        elapsed,
        usage,
        interrupts,
    } = end;
    let transactions = u64::from(p.transactions);
    let (tasks, where_to) = match &p.peer {
        Some(peer) => (vec![stats.task_record(0, ROLES[0])], format!("to {peer}")),
        None => (
            vec![
                stats.task_record(0, ROLES[0]),
                stats.task_record(1, ROLES[1]),
            ],
            "over loopback".to_string(),
        ),
    };
    let mut rec = RunRecord {
        workload: WORKLOAD.key(),
        params: p.params_map(),
        variant: p.variant().into(),
        total_ns: elapsed.total_ns,
        bytes_transferred: Some(2 * transactions * u64::from(p.size)),
        rusage: usage,
        tasks,
        cpus_used: stats.all_cpus(),
        start_unix_ns: elapsed.start_unix_ns,
        end_unix_ns: elapsed.end_unix_ns,
        header_lines: vec![format!(
            "# {} TCP transactions of {} bytes each way {where_to}",
            p.transactions, p.size
        )],
        series: vec![recorder.summary(
            "rr_latency",
            "one transaction: the request sent, the whole response received",
        )],
        ..RunRecord::default()
    }
    .with_per_op(transactions);
    if p.peer.is_none() {
        rec.placement = stats.placement();
    }
    let per_op = PerOp {
        per: "transaction",
        ops: transactions,
        syscalls_per_op: if p.peer.is_some() {
            SYSCALLS_PER_TRANSACTION_PEER
        } else {
            SYSCALLS_PER_TRANSACTION_LOOPBACK
        },
    };
    let cpus = crate::cpus::online_cpus_with_role("any");
    crate::events::record_events(&mut rec, per_op, &interrupts, &cpus, Vec::new());
    rec.interrupt_sources = interrupts.device_sources(transactions);
    rec.interrupt_sources.extend(softirqs);
    rec.metrics = crate::metrics::io_latency(&rec, "transactions_per_sec", "tx/s");
    rec
}
