//! Two cores for any sink that can be split ([`Split`]).
//!
//! The reading thread reads, reassembles and frames. While a half of the sink is free (the
//! worker has fewer than [`IN_FLIGHT`] batches), the frames read are gathered into a batch for
//! it (about [`BATCH_BYTES`], so that waking it is worth it); otherwise the reading thread
//! decodes and hands frames to its own sink. The worker decodes its batches in order, each with
//! a [`Half`] of the sink; this side takes the halves back in input order
//! ([`Split::take_back`]): a printer's half has written its text to the output itself, in its
//! turn ([`Turn`]), while this side's text waited in its [`Shared`] writer (and went with the
//! next batch when there was one, to be written first: [`Shared::pass_to`]); a counting half's
//! counts are merged. Text goes out in pieces as it is printed: one PDU's text is never held
//! whole. Each thread only ever writes memory of its own (text written into memory the other
//! core touched last costs a cache miss per line).
//!
//! Frames are copied into a batch, but for those the TCP reassembly gathered from many segments
//! (`FrameBuf::Assembled`, 16 KiB and more): the batch takes the buffer they were gathered in
//! and the reassembly starts a new one, so the reading thread no longer copies a large frame a
//! second time. Once the worker is done with a batch, those buffers come back to the reading
//! thread and are kept for the reassembly's next large frames (`pdu::spare`), at most
//! `limits::SPARE_FRAME_BYTES` of them, the smallest let go first. A kept buffer goes only to a
//! frame whose size prefix says it needs that much room, and only once a sixteenth of the frame
//! is in hand, so it never waits in an idle connection, nor grows: memory stays flat as the input
//! grows (summary of the benchmark capture: 26–27 MiB once, 28–29 three and six times; 22–25
//! without), and the page faults of a new buffer for each large frame are gone (about 20
//! thousand → 6–8 thousand; summary 1.24× and `stats` 1.35× faster). Buffers kept by connection instead, each
//! growing to the largest frame it ever held, made the peak rise with the input. The worker's
//! tree still copies the frame (`Tree::reset`): a tree holding the buffer would share it with
//! the walks that read it while they push nodes, and that reference count (or the check for it
//! on every read of buffer 0) cost small frames more than the copy costs large ones (README,
//! *Performance*).
//!
//! Only frames that cannot change the session go to the worker, with a snapshot of the session
//! (see [`Session::may_learn_from`]): the few responses the session learns from are decoded on
//! the reading thread, in order, so every frame is decoded against exactly the session a single
//! thread would have.
//!
//! Memory: the two threads share one budget, [`BUDGET`]. The worker says what its decoded PDU
//! holds when the frame is [`HEAVY_FRAME`] bytes or more ([`Turn::worker_held`]); while that is
//! over half the budget this side waits for the worker before it decodes, and the text this side
//! keeps while the worker has the output may take what is left. A PDU that held more than
//! [`TOGETHER`] gives its memory back after it was shown. (Waiting before every heavy
//! frame, whatever the worker held, cost a tenth of the JSON Lines time on the benchmark
//! capture, whose fetch responses are all heavy.)
//!
//! Decoded trees, one bound for both threads: each thread's trees tell what they are about to
//! allocate (nodes, decompressed records: `wire::tree::growth`), counted per thread in the
//! [`Turn`]. When the reading thread's trees would hold more than [`TOGETHER`] while the worker
//! decodes, the reading thread waits for the worker's batch to end, so at most one thread decodes a
//! heavy frame at a time; on two threads each keeps a decoded PDU for reuse only while it holds
//! at most [`TOGETHER`] (ordinary PDUs hold far less: one thread's whole process peaks at 26 MiB
//! on the benchmark capture). The two together hold at most one heavy tree
//! (`limits::MAX_DECOMPRESSED_PER_TREE`, `limits::MAX_NODES_PER_TREE`) plus [`TOGETHER`], where
//! each used to hold one heavy tree (two Produce frames of snappy bombs peaked at twice one).
//! The worker never waits for the reading thread: while the reading thread holds more than
//! [`TOGETHER`] it sends no batch.

use super::decoded::{decode_frame, held_bytes, let_go_over, DecodeLoop};
use super::filter::Filters;
use super::sink::{Half, Split};
use super::Route;
use crate::capture::session::Session;
use crate::diag::Diagnostic;
use crate::pdu::{FrameBuf, Hints, Origin, Pdu};
use crate::protocol::Protocol;
use crate::wire::decode::RecordsOptions;
use crate::wire::tree::growth::{self, Growth};
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// A batch for the worker is sent once its frames hold this many bytes (or
/// [`BATCH_FRAMES`] frames): waking a thread costs tens of microseconds here.
pub const BATCH_BYTES: usize = 64 << 10;
pub const BATCH_FRAMES: usize = 256;
/// The batch for a sink that shows a line or less per PDU (summary, fields): its frames cost
/// little beyond reading them, and the reading thread sets the pace, so waking the worker a
/// quarter as often is worth more than handing it work sooner (summary of the benchmark
/// capture: 118 ms with 64 KiB batches, 106 ms with 256 KiB, 113 ms with 1 MiB; JSON Lines, whose
/// frames cost the worker much more, went from 309 to 353 ms with 256 KiB).
pub const LIGHT_BATCH_BYTES: usize = 256 << 10;
/// Text is written once this much is buffered (and the writer has the output).
pub const WRITE_BYTES: usize = 256 << 10;
/// What the two threads may hold together beyond their fixed buffers: the text waiting on the
/// reading thread while the worker has the output, and the decoded PDUs.
pub const BUDGET: usize = 8 << 20;
/// From this size on, the worker publishes what the frame's decoded PDU holds.
pub const HEAVY_FRAME: usize = 256 << 10;
/// Batches the worker may have at once: one it decodes and one waiting, so that it finds its
/// next batch ready when it ends one (with one, it waited while the reading thread gathered the
/// next, and the light formats kept 1.2 of the two cores busy). Sinks that cannot take a batch
/// while the worker has one ([`Split::queues`]) send one at a time.
pub const IN_FLIGHT: usize = 2;
/// The reading thread's decoded trees may grow past this much only while the worker is idle.
/// Ordinary frames stay far below it (a 1 MiB fetch response of the benchmark capture holds a
/// few MiB decoded), so only heavy ones serialize.
pub const TOGETHER: usize = 32 << 20;

/// Who has the output: the worker from when a batch is sent until it has written every batch
/// it was sent.
#[derive(Debug, Default)]
pub struct Turn {
    /// Batches sent to the worker and not yet written (at most [`IN_FLIGHT`]).
    pending: AtomicUsize,
    /// Bytes the worker's decoded PDU holds (published when large, cleared after a batch).
    held: AtomicUsize,
    /// Text this side printed while the worker had the output and handed over with the next
    /// batch ([`Shared::pass_to`]), not yet written by the worker.
    carried: AtomicUsize,
    lock: Mutex<()>,
    idle: Condvar,
    /// What each thread's decoded trees hold, by their growth accounting.
    reader_trees: AtomicUsize,
    worker_trees: AtomicUsize,
    /// The most both held together.
    peak: AtomicUsize,
}

impl Turn {
    /// Whether the worker has the output now.
    #[inline]
    pub fn busy(&self) -> bool {
        self.pending.load(Ordering::Acquire) > 0
    }

    /// What the worker's decoded PDU holds of the common [`BUDGET`].
    pub fn worker_held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// Room left in the budget for this side's waiting text: what the worker's PDU holds and
    /// the text handed to it with a batch that it has not written yet ([`Shared::pass_to`])
    /// count against it.
    pub fn room(&self) -> usize {
        BUDGET
            .saturating_sub(self.worker_held() + self.carried.load(Ordering::Relaxed))
            .max(WRITE_BYTES)
    }

    /// Waits until the worker has written every batch it was sent.
    pub fn wait_idle(&self) {
        let mut g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        while self.busy() {
            g = self.idle.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// The most the two threads' decoded trees held together, by their growth accounting
    /// (`wire::tree::growth`: nodes and decompressed records, as allocated).
    pub fn peak_trees(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// A thread's trees hold `bytes` (as a frame begins, or after one was shown).
    fn trees_hold(&self, reader: bool, bytes: usize) {
        let (mine, other) = self.trees(reader);
        mine.store(bytes, Ordering::Relaxed);
        self.peak
            .fetch_max(bytes + other.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    fn trees(&self, reader: bool) -> (&AtomicUsize, &AtomicUsize) {
        if reader {
            (&self.reader_trees, &self.worker_trees)
        } else {
            (&self.worker_trees, &self.reader_trees)
        }
    }

    /// A batch goes to the worker: the output is the worker's until it has written it.
    pub(crate) fn take(&self) {
        self.pending.fetch_add(1, Ordering::Release);
    }

    /// The worker has written a batch (and everything before it).
    pub(crate) fn give_back(&self) {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        // Saturating: a give-back without a take (never by the engine) leaves the turn free.
        let _ = self
            .pending
            .fetch_update(Ordering::Release, Ordering::Acquire, |n| n.checked_sub(1));
        self.idle.notify_all();
    }
}

/// Gives the output back when the worker's batch ends, also when it fails or panics.
struct GiveBack<'a>(&'a Turn);

impl Drop for GiveBack<'_> {
    fn drop(&mut self) {
        self.0.give_back();
    }
}

/// One thread's side of the tree accounting (installed as its `wire::tree::growth` hook).
struct Trees {
    turn: Arc<Turn>,
    reader: bool,
}

impl Growth for Trees {
    fn grow(&self, bytes: usize) {
        let t = &*self.turn;
        let (mine, other) = t.trees(self.reader);
        // Waits before counting: while it waits, this side does not hold what it is about to.
        if self.reader && mine.load(Ordering::Relaxed) + bytes > TOGETHER && t.busy() {
            t.wait_idle();
        }
        let now = mine.fetch_add(bytes, Ordering::Relaxed) + bytes;
        t.peak
            .fetch_max(now + other.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

/// What a PDU keeps for the next frame: its buffers past the frame's own go at the next reset.
fn kept_bytes(pdu: &Pdu) -> usize {
    let bufs: usize = pdu.tree.bufs.iter().skip(1).map(|b| b.capacity()).sum();
    held_bytes(pdu).saturating_sub(bufs)
}

/// Text on its way to a file or pipe that two threads write in turn (a plain buffered file when
/// there is no turn: one thread). It is written in pieces of [`WRITE_BYTES`] as it is printed
/// when this side has the output; while the worker has it, the text waits here, up to the room
/// the budget leaves, and past that this side waits for the worker.
#[derive(Debug)]
pub struct Shared {
    buf: Vec<u8>,
    out: std::fs::File,
    turn: Option<Arc<Turn>>,
    /// The buffer's length at which to look again whether to write.
    check_at: usize,
    /// A JSON array printed on two threads: each element goes out after `,\n`, and the first
    /// bytes to reach the file, whichever side printed them, become `[\n` (set once written).
    opening: Option<Arc<AtomicBool>>,
    /// The worker's side: the first bytes of `buf` are text the other side handed over with the
    /// batch ([`Shared::pass_to`]), counted in this turn's `carried` until written.
    carried: Option<(usize, Arc<Turn>)>,
}

impl Shared {
    pub fn new(out: std::fs::File) -> Shared {
        Shared {
            buf: Vec::with_capacity(WRITE_BYTES + (16 << 10)),
            out,
            turn: None,
            check_at: WRITE_BYTES,
            opening: None,
            carried: None,
        }
    }

    /// From now on the first bytes written to the file, by this side or the other holding the
    /// same `opened`, are a separator `,\n` that becomes `[\n` (see [`Shared::opening`]).
    pub fn open_array_on_first_write(&mut self, opened: Arc<AtomicBool>) {
        self.opening = Some(opened);
    }

    /// The same output for the worker's half: it writes only in its turn.
    pub fn worker_side(&self) -> io::Result<Shared> {
        Ok(Shared::new(self.out.try_clone()?))
    }

    /// From now on, this writer waits for the worker while the worker has the output.
    pub fn set_turn(&mut self, turn: Arc<Turn>) {
        self.turn = Some(turn);
    }

    /// Bytes waiting in the buffer.
    pub fn held(&self) -> usize {
        self.buf.len()
    }

    /// Writes what waits (the caller knows this side has the output).
    pub fn write_held(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            if let Some(o) = &self.opening {
                // In turn: no other write can come between the load and the store.
                if !o.load(Ordering::Acquire) && self.buf.starts_with(b",\n") {
                    self.buf[0] = b'[';
                    o.store(true, Ordering::Release);
                }
            }
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        if let Some((n, turn)) = self.carried.take() {
            turn.carried.fetch_sub(n, Ordering::Relaxed);
        }
        self.check_at = WRITE_BYTES;
        Ok(())
    }

    /// Before a batch goes to the half that writes to `next`: what waits here must come out
    /// before the batch. Written now when this side has the output; while the worker still has
    /// a batch of its own, handed to `next` with the batch, to be written first in the worker's
    /// turn (the buffers are swapped, nothing is copied).
    pub fn pass_to(&mut self, next: &mut Shared) -> io::Result<()> {
        let Some(turn) = self.turn.as_ref().filter(|t| t.busy()) else {
            return self.write_held();
        };
        if self.buf.is_empty() {
            return Ok(());
        }
        if !next.buf.is_empty() || next.carried.is_some() {
            // A half's text is all written when its batch ends; should it not be, the order
            // is kept by waiting.
            turn.wait_idle();
            return self.write_held();
        }
        std::mem::swap(&mut self.buf, &mut next.buf);
        let n = next.buf.len();
        turn.carried.fetch_add(n, Ordering::Relaxed);
        next.carried = Some((n, Arc::clone(turn)));
        next.check_at = WRITE_BYTES;
        self.check_at = WRITE_BYTES;
        Ok(())
    }

    #[cold]
    fn spill(&mut self) -> io::Result<()> {
        if let Some(turn) = &self.turn {
            if turn.busy() {
                if self.buf.len() < turn.room() {
                    self.check_at = self.buf.len() + (64 << 10);
                    return Ok(());
                }
                turn.wait_idle();
            }
        }
        self.write_held()
    }
}

impl Write for Shared {
    #[inline]
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.write_all(b)?;
        Ok(b.len())
    }

    #[inline]
    fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        self.buf.extend_from_slice(b);
        if self.buf.len() >= self.check_at {
            self.spill()?;
        }
        Ok(())
    }

    /// Writes what waits unless the worker has the output.
    fn flush(&mut self) -> io::Result<()> {
        if self.turn.as_ref().is_some_and(|t| t.busy()) {
            return Ok(());
        }
        self.write_held()?;
        self.out.flush()
    }
}

/// Frames for the worker: copied back to back into `bytes`, or, when the reassembly gathered
/// them, each in the buffer it was gathered in (`taken`); with the session as it stands after
/// the frame before the first (no frame of a batch changes it), and the sink's half.
struct Job<H> {
    frames: Vec<(Origin, Hints, Slot)>,
    bytes: Vec<u8>,
    taken: Vec<Vec<u8>>,
    /// Bytes of the frames, in `bytes` and `taken`.
    size: usize,
    session: Option<Arc<Session>>,
    input: Option<Arc<str>>,
    half: Option<H>,
}

/// Where a batch's frame is.
#[derive(Clone, Debug)]
enum Slot {
    Copied(std::ops::Range<usize>),
    Taken(usize),
}

impl<H> Default for Job<H> {
    fn default() -> Self {
        Job {
            frames: Vec::new(),
            bytes: Vec::new(),
            taken: Vec::new(),
            size: 0,
            session: None,
            input: None,
            half: None,
        }
    }
}

impl<H> Job<H> {
    /// Adds a frame: taken without a copy when the reassembly gathered it (the reassembly goes
    /// on in a new buffer; this one comes back to it through `pdu::spare` once the batch is
    /// done, see the module doc).
    fn push(&mut self, origin: Origin, hints: Hints, data: FrameBuf<'_>) {
        self.size += data.bytes().len();
        let slot = match data {
            FrameBuf::Assembled(_) => {
                let mut buf = Vec::new();
                data.take(&mut buf);
                self.taken.push(buf);
                Slot::Taken(self.taken.len() - 1)
            }
            FrameBuf::Borrowed(b) => {
                let start = self.bytes.len();
                self.bytes.extend_from_slice(b);
                Slot::Copied(start..self.bytes.len())
            }
        };
        self.frames.push((origin, hints, slot));
    }

    /// Empties the batch for the next one, keeping its buffer of copied frames; the taken
    /// ones go back to the reassembly (`pdu::spare`).
    fn clear(&mut self) {
        self.frames.clear();
        self.bytes.clear();
        self.size = 0;
        for buf in self.taken.drain(..) {
            crate::pdu::spare::give(buf);
        }
        self.session = None;
        self.input = None;
    }
}

/// The worker has handled a batch (or failed to).
struct Done<H> {
    job: Job<H>,
    /// Shown with an error diagnostic.
    errors: bool,
    written: io::Result<()>,
}

/// The reading thread's side: a [`Route`] to a split sink.
pub struct Parallel<'s, S: Split> {
    sink: &'s mut S,
    filters: Arc<Filters>,
    turn: Arc<Turn>,
    jobs: Option<SyncSender<Job<S::Half>>>,
    done: Receiver<Done<S::Half>>,
    worker: Option<JoinHandle<()>>,
    /// When a batch is sent: [`BATCH_BYTES`] and [`BATCH_FRAMES`] (smaller in tests).
    pub(crate) batch_bytes: usize,
    pub(crate) batch_frames: usize,
    /// Batches at the worker whose answers have not been taken in (at most [`IN_FLIGHT`]).
    in_flight: usize,
    /// The batch being gathered, with a half of the sink that is not at the worker; none while
    /// every half is (then frames are decoded here).
    batch: Job<S::Half>,
    /// The other free halves, with their batches' buffers.
    spare: Vec<Job<S::Half>>,
    /// Something shown carried an error diagnostic.
    errors: bool,
    /// This thread's tree accounting, while the worker runs.
    _trees: growth::Guard,
}

impl<'s, S: Split> Parallel<'s, S> {
    /// Starts the worker, or gives the sink back when it does not split (or no thread starts).
    pub fn new(
        sink: &'s mut S,
        filters: Arc<Filters>,
        proto: &'static Protocol,
        records: RecordsOptions,
    ) -> Result<Parallel<'s, S>, &'s mut S> {
        let turn = Arc::new(Turn::default());
        let Some(half) = sink.fork(&turn) else {
            return Err(sink);
        };
        let spare = match sink.queues() {
            true => (1..IN_FLIGHT)
                .map_while(|_| sink.fork(&turn))
                .map(|half| Job {
                    half: Some(half),
                    ..Job::default()
                })
                .collect(),
            false => Vec::new(),
        };
        let (jobs, job_rx) = mpsc::sync_channel::<Job<S::Half>>(IN_FLIGHT);
        let (done_tx, done) = mpsc::channel::<Done<S::Half>>();
        let (wf, wt) = (Arc::clone(&filters), Arc::clone(&turn));
        let spawned = std::thread::Builder::new()
            .name("kinspect-decode".into())
            .spawn(move || work(proto, records, &wf, wt, job_rx, done_tx));
        let Ok(worker) = spawned else {
            return Err(sink);
        };
        let trees = growth::watch(Arc::new(Trees {
            turn: Arc::clone(&turn),
            reader: true,
        }));
        let batch_bytes = sink.batch_bytes();
        Ok(Parallel {
            sink,
            filters,
            turn,
            jobs: Some(jobs),
            done,
            worker: Some(worker),
            batch_bytes,
            batch_frames: BATCH_FRAMES,
            in_flight: 0,
            batch: Job {
                half: Some(half),
                ..Job::default()
            },
            spare,
            errors: false,
            _trees: trees,
        })
    }

    /// Takes a frame that cannot change the session into the worker's next batch while a half
    /// of the sink is free (the worker is idle, or has fewer than [`IN_FLIGHT`] batches);
    /// otherwise gives the frame back for the caller to decode it here.
    fn offer<'d>(
        &mut self,
        origin: Origin,
        hints: Hints,
        data: FrameBuf<'d>,
        session: &Arc<Session>,
        input: Option<&Arc<str>>,
    ) -> io::Result<Option<(Origin, Hints, FrameBuf<'d>)>> {
        self.poll(false)?;
        // A batch holds frames of one input decoded against one session (a new input starts
        // a new session).
        let same = |b: &Job<S::Half>| {
            b.session.as_ref().is_some_and(|s| Arc::ptr_eq(s, session))
                && b.input.as_deref() == input.map(|i| &**i)
        };
        if !self.batch.frames.is_empty() && !same(&self.batch) {
            self.send()?;
        }
        if self.batch.half.is_none() || self.jobs.is_none() {
            return Ok(Some((origin, hints, data)));
        }
        if self.batch.frames.is_empty() {
            self.batch.session = Some(Arc::clone(session));
            self.batch.input = input.cloned();
        }
        self.batch.push(origin, hints, data);
        if self.batch.size >= self.batch_bytes || self.batch.frames.len() >= self.batch_frames {
            self.send()?;
        }
        Ok(None)
    }

    /// Sends the batch gathered so far to the worker.
    fn send(&mut self) -> io::Result<()> {
        if self.batch.frames.is_empty() {
            return Ok(());
        }
        let next = self.spare.pop().unwrap_or_default();
        let mut job = std::mem::replace(&mut self.batch, next);
        // Everything before the batch goes out before the worker writes it (or, while the
        // worker has a batch, goes with this one, to be written first).
        if let Some(half) = job.half.as_mut() {
            self.sink.hand_over(half)?;
        }
        self.turn.take();
        let sent = match &self.jobs {
            Some(jobs) => jobs.send(job).is_ok(),
            None => false,
        };
        if !sent {
            self.turn.give_back();
            self.jobs = None;
            return Err(io::Error::other("the decoding thread stopped"));
        }
        self.in_flight += 1;
        Ok(())
    }

    /// Takes in the worker's answers that have come, in order, after waiting for the first when
    /// `wait`.
    fn poll(&mut self, mut wait: bool) -> io::Result<()> {
        while self.in_flight > 0 {
            let d = if std::mem::take(&mut wait) {
                self.done.recv().ok()
            } else {
                match self.done.try_recv() {
                    Ok(d) => Some(d),
                    Err(mpsc::TryRecvError::Empty) => return Ok(()),
                    Err(mpsc::TryRecvError::Disconnected) => None,
                }
            };
            let Some(d) = d else {
                self.in_flight = 0;
                return Err(io::Error::other("the decoding thread stopped"));
            };
            self.in_flight -= 1;
            self.errors |= d.errors;
            // The batch's buffers and half come back for a next batch.
            let mut job = d.job;
            job.clear();
            if let Some(half) = job.half.as_mut() {
                self.sink.take_back(half)?;
            }
            if self.batch.half.is_none() {
                self.batch = job;
            } else {
                self.spare.push(job);
            }
            d.written?;
        }
        Ok(())
    }

    /// What is shown here comes after the frames gathered so far.
    fn before_local(&mut self) -> io::Result<()> {
        self.send()?;
        self.poll(false)
    }
}

impl<S: Split> Route for Parallel<'_, S> {
    type Sink = S;

    fn sink(&mut self) -> &mut S {
        self.sink
    }

    /// The frames gathered of the input before go to the worker first: a batch handed over is
    /// always of the input the sink heard of last.
    fn begin_input(&mut self, info: &super::InputInfo<'_>) -> io::Result<()> {
        self.send()?;
        self.sink.begin_input(info)
    }

    /// Decodes and shows a frame: in the worker's next batch when it is idle and the frame
    /// cannot change the session, else here (through `dl`, which learns from it).
    fn frame(
        &mut self,
        dl: &mut DecodeLoop,
        origin: Origin,
        hints: Hints,
        data: FrameBuf<'_>,
        input: Option<&Arc<str>>,
    ) -> io::Result<()> {
        let (origin, hints, data) = if Session::may_learn_from(hints.direction, hints.api_key) {
            (origin, hints, data)
        } else {
            match self.offer(origin, hints, data, dl.shared_session(), input)? {
                None => return Ok(()),
                Some(back) => back,
            }
        };
        self.before_local()?;
        // One budget for both threads: no two large frames decoded at once.
        if self.in_flight > 0 && self.turn.worker_held() > BUDGET / 2 {
            self.poll(true)?;
        }
        let pdu = dl.frame(origin, &hints, data.bytes());
        let shown = match self.filters.pdu_shown(pdu) {
            Some(errors) => {
                self.errors |= errors;
                self.sink.pdu(pdu, input.map(|i| &**i))
            }
            None => Ok(()),
        };
        let kept = kept_bytes(pdu);
        let kept = if dl.shrink(TOGETHER) == 0 { 0 } else { kept };
        self.turn.trees_hold(true, kept);
        shown
    }

    fn pdu(&mut self, pdu: &Pdu, input: Option<&str>) -> io::Result<()> {
        self.before_local()?;
        self.sink.pdu(pdu, input)
    }

    fn note(&mut self, origin: &Origin, d: &Diagnostic, input: Option<&str>) -> io::Result<()> {
        self.before_local()?;
        self.sink.note(origin, d, input)
    }

    /// Waits for the worker; the sink's own `finish` is the caller's.
    fn drain(&mut self) -> io::Result<bool> {
        let mut r = self.send();
        while r.is_ok() && self.in_flight > 0 {
            r = self.poll(true);
        }
        self.jobs = None;
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
        r.map(|_| self.errors)
    }
}

impl<S: Split> Drop for Parallel<'_, S> {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

/// The worker: decodes each frame against its session snapshot and hands what the filters show
/// to its half of the sink.
fn work<H: Half>(
    proto: &'static Protocol,
    records: RecordsOptions,
    filters: &Filters,
    turn: Arc<Turn>,
    jobs: Receiver<Job<H>>,
    done: Sender<Done<H>>,
) {
    let _trees = growth::watch(Arc::new(Trees {
        turn: Arc::clone(&turn),
        reader: false,
    }));
    let mut decoder = crate::records::decoder(proto);
    decoder.set_records(records);
    let mut pdu = Pdu::default();
    for mut job in jobs {
        let give_back = GiveBack(&turn);
        let mut session = job.session.clone().unwrap_or_default();
        let mut errors = false;
        let mut written = Ok(());
        let Some(half) = job.half.as_mut() else {
            break;
        };
        for (origin, hints, slot) in &job.frames {
            turn.trees_hold(false, kept_bytes(&pdu));
            let frame = match slot {
                Slot::Taken(i) => job.taken.get(*i).map(|b| &b[..]).unwrap_or_default(),
                Slot::Copied(r) => job.bytes.get(r.clone()).unwrap_or_default(),
            };
            decode_frame(
                &mut decoder,
                &mut session,
                false,
                origin.clone(),
                hints,
                frame,
                &mut pdu,
            );
            if frame.len() >= HEAVY_FRAME {
                turn.held.store(held_bytes(&pdu), Ordering::Relaxed);
            }
            if let Some(e) = filters.pdu_shown(&pdu) {
                errors |= e;
                if let Err(e) = half.pdu(&pdu, job.input.as_deref()) {
                    written = Err(e);
                    break;
                }
            }
        }
        if written.is_ok() {
            written = half.end_batch();
        }
        // Kept for the next batch only up to `TOGETHER`: a heavy PDU kept here would be held
        // while the reading thread decodes a heavy frame of its own.
        let kept = let_go_over(&mut pdu, TOGETHER);
        turn.held.store(0, Ordering::Relaxed);
        turn.trees_hold(false, kept);
        let d = Done {
            job,
            errors,
            written,
        };
        // The output goes back before the answer, so that the answer finds it free.
        drop(give_back);
        if done.send(d).is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdu::Assembled;

    /// A frame the batch took in the buffer it was gathered in goes back to the reassembly's
    /// kept buffers once the batch is done with (`pdu::spare`); a copied frame's bytes stay in
    /// the batch's own buffer.
    #[test]
    fn a_taken_frame_buffer_is_kept_for_the_next_frames() {
        crate::pdu::spare::let_go();
        let mut gathered = vec![9; 300 << 10];
        gathered.extend_from_slice(&[1, 2, 3]);
        let capacity = gathered.capacity();
        let mut a = Assembled::new(gathered, 300 << 10);
        let mut job = Job::<()>::default();
        job.push(
            Origin::default(),
            Hints::default(),
            FrameBuf::Assembled(&mut a),
        );
        job.push(
            Origin::default(),
            Hints::default(),
            FrameBuf::Borrowed(&[5; 10]),
        );
        assert_eq!(
            a.into_rest(),
            [1, 2, 3],
            "the reassembly keeps the bytes after the frame"
        );
        assert_eq!((job.taken.len(), job.size), (1, (300 << 10) + 10));
        assert_eq!(crate::pdu::spare::held(), 0);
        job.clear();
        assert_eq!(crate::pdu::spare::held(), capacity);
        assert!(job.taken.is_empty() && job.bytes.is_empty());
    }
}
