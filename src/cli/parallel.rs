//! JSON Lines from two cores.
//!
//! The reading thread reads, reassembles and frames. While the worker thread is idle, the
//! frames read are gathered into a batch for it (about [`BATCH_BYTES`], so that waking it is
//! worth it); while it is busy, the reading thread decodes and prints frames itself. The worker
//! decodes a batch, prints it into a buffer of its own and writes that to the output itself;
//! meanwhile the reading thread keeps what it prints in its own buffer until the worker has
//! written (waiting for it past [`MAX_WAITING_TEXT`]), so the output keeps the input's order.
//! Text goes out in pieces as it is printed ([`Spill`]): one PDU's text is never held whole. Each thread only ever writes memory of its
//! own (text written into memory the other core touched last costs a cache miss per line), and
//! one batch at most is at the worker, so memory stays flat.
//!
//! Only frames that cannot change the session go to the worker, with a snapshot of the session
//! (see [`Session::may_learn_from`]): the few responses the session learns from are decoded on
//! the reading thread, in order, so every frame is decoded against exactly the session a single
//! thread would have.

use super::decode::Filters;
use kinspect::capture::decoded::{decode_frame, DecodeLoop};
use kinspect::capture::session::Session;
use kinspect::output::json::{self, JsonOptions};
use kinspect::pdu::{Hints, Origin, Pdu};
use kinspect::protocol::Protocol;
use kinspect::wire::decode::RecordsOptions;
use std::io::{self, Write};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A batch for the worker is sent once its frames hold this many bytes (or
/// [`BATCH_FRAMES`] frames): waking a thread costs tens of microseconds here.
pub const BATCH_BYTES: usize = 64 << 10;
const BATCH_FRAMES: usize = 256;
/// The reading thread's own text is written once it holds this much (and the worker is idle).
const WRITE_BYTES: usize = 256 << 10;
/// While the worker is busy, the reading thread's text waits in its buffer; past this much, the
/// reading thread waits for the worker instead.
pub const MAX_WAITING_TEXT: usize = 8 << 20;

/// How a decoded PDU becomes a line: filters, then the JSON printer.
#[derive(Clone)]
pub struct Style {
    pub json: JsonOptions,
    pub filters: Filters,
}

impl Style {
    /// Prints `pdu` as a line into `text` if the filters show it; returns whether it is shown
    /// with an error diagnostic.
    pub fn pdu<W: Write>(&self, pdu: &Pdu, input: Option<&str>, text: &mut W) -> io::Result<bool> {
        let Some(errors) = self.filters.pdu_shown(pdu) else {
            return Ok(false);
        };
        json::write_pdu(text, pdu, input, &self.json)?;
        text.write_all(b"\n")?;
        Ok(errors)
    }

    /// Prints a capture note as a line (shown: the caller asked the filters).
    pub fn note<W: Write>(
        &self,
        origin: &Origin,
        d: &kinspect::diag::Diagnostic,
        input: Option<&str>,
        text: &mut W,
    ) -> io::Result<()> {
        json::write_note(text, origin, d, input)?;
        text.write_all(b"\n")
    }
}

/// Text on its way to the output. It is buffered and written in pieces of [`WRITE_BYTES`] as it
/// is printed when this thread may write, so that no PDU's text is ever held whole (a
/// decompressed record value of control bytes prints six times its size). The reading thread
/// may not write while the worker has a batch: past [`MAX_WAITING_TEXT`] it waits for the
/// worker to finish, keeps its answer in `arrived`, and writes from then on.
pub struct Spill<'a> {
    buf: &'a mut Vec<u8>,
    out: &'a mut std::fs::File,
    behind: Option<(&'a Receiver<Done>, &'a mut Option<Done>)>,
}

impl Write for Spill<'_> {
    #[inline]
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.write_all(b)?;
        Ok(b.len())
    }

    #[inline]
    fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        self.buf.extend_from_slice(b);
        let limit = if self.behind.is_some() {
            MAX_WAITING_TEXT
        } else {
            WRITE_BYTES
        };
        if self.buf.len() >= limit {
            self.spill()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Spill<'_> {
    #[cold]
    fn spill(&mut self) -> io::Result<()> {
        if let Some((done, arrived)) = self.behind.take() {
            // (A failure of the worker's is reported from `arrived`.)
            let d = done
                .recv()
                .map_err(|_| io::Error::other("the decoding thread stopped"))?;
            *arrived = Some(d);
        }
        self.out.write_all(self.buf)?;
        self.buf.clear();
        Ok(())
    }
}

/// Frames for the worker, back to back in `bytes`, with the session as it stands after the
/// frame before the first (no frame of a batch changes it).
#[derive(Default)]
struct Job {
    frames: Vec<(Origin, Hints, std::ops::Range<usize>)>,
    bytes: Vec<u8>,
    session: Option<Arc<Session>>,
    input: Option<Arc<str>>,
}

/// The worker has written a batch (or failed to).
struct Done {
    job: Job,
    /// Shown with an error diagnostic.
    errors: bool,
    written: io::Result<()>,
}

/// The reading thread's side.
pub struct Parallel {
    style: Style,
    out: std::fs::File,
    jobs: Option<SyncSender<Job>>,
    done: Receiver<Done>,
    worker: Option<JoinHandle<()>>,
    /// When a batch is sent: [`BATCH_BYTES`] and [`BATCH_FRAMES`] (smaller in tests).
    batch_bytes: usize,
    batch_frames: usize,
    /// A batch is at the worker: what is printed here waits in `mine`.
    busy: bool,
    mine: Vec<u8>,
    /// The batch being gathered (the worker is idle).
    batch: Job,
    /// Something shown carried an error diagnostic.
    pub errors: bool,
}

impl Parallel {
    /// Starts the worker. Both threads write to `out` (a file or pipe), never at once.
    pub fn new(
        style: Style,
        out: std::fs::File,
        proto: &'static Protocol,
        records: RecordsOptions,
    ) -> io::Result<Parallel> {
        let worker_out = out.try_clone()?;
        let (jobs, job_rx) = mpsc::sync_channel::<Job>(1);
        let (done_tx, done) = mpsc::channel::<Done>();
        let worker_style = style.clone();
        let worker = std::thread::Builder::new()
            .name("kinspect-decode".into())
            .spawn(move || work(proto, records, worker_style, worker_out, job_rx, done_tx))?;
        Ok(Parallel {
            style,
            out,
            jobs: Some(jobs),
            done,
            worker: Some(worker),
            batch_bytes: BATCH_BYTES,
            batch_frames: BATCH_FRAMES,
            busy: false,
            mine: Vec::with_capacity(WRITE_BYTES),
            batch: Job::default(),
            errors: false,
        })
    }

    /// Decodes and prints a frame: in the worker's next batch when it is idle and the frame
    /// cannot change the session, else here (through `dl`, which learns from it). Returns
    /// whether it was decoded here.
    pub fn frame(
        &mut self,
        dl: &mut DecodeLoop,
        origin: Origin,
        hints: Hints,
        data: &[u8],
        input: Option<&Arc<str>>,
    ) -> io::Result<()> {
        let (origin, hints) = if Session::may_learn_from(hints.direction, hints.api_key) {
            (origin, hints)
        } else {
            match self.offer(origin, hints, data, dl.shared_session(), input)? {
                None => return Ok(()),
                Some(back) => back,
            }
        };
        let pdu = dl.frame(origin, &hints, data);
        let input = input.map(|i| &**i);
        self.local(|style, text| style.pdu(pdu, input, text))
    }

    /// Takes a frame that cannot change the session into the worker's next batch if the
    /// worker is idle; otherwise gives the frame's origin and hints back for the caller to
    /// decode it here.
    fn offer(
        &mut self,
        origin: Origin,
        hints: Hints,
        data: &[u8],
        session: &Arc<Session>,
        input: Option<&Arc<str>>,
    ) -> io::Result<Option<(Origin, Hints)>> {
        self.poll(false)?;
        // A batch holds frames of one input decoded against one session (a new input starts
        // a new session).
        let same = |b: &Job| {
            b.session.as_ref().is_some_and(|s| Arc::ptr_eq(s, session))
                && b.input.as_deref() == input.map(|i| &**i)
        };
        if !self.batch.frames.is_empty() && !same(&self.batch) {
            self.send()?;
        }
        if self.busy || self.jobs.is_none() {
            return Ok(Some((origin, hints)));
        }
        if self.batch.frames.is_empty() {
            // Everything before the batch is written before the worker writes it.
            self.write_mine()?;
            self.batch.session = Some(Arc::clone(session));
            self.batch.input = input.cloned();
        }
        let start = self.batch.bytes.len();
        self.batch.bytes.extend_from_slice(data);
        self.batch
            .frames
            .push((origin, hints, start..self.batch.bytes.len()));
        if self.batch.bytes.len() >= self.batch_bytes
            || self.batch.frames.len() >= self.batch_frames
        {
            self.send()?;
        }
        Ok(None)
    }

    /// Sends the batch gathered so far to the worker.
    fn send(&mut self) -> io::Result<()> {
        if self.batch.frames.is_empty() {
            return Ok(());
        }
        let job = std::mem::take(&mut self.batch);
        let sent = match &self.jobs {
            Some(jobs) => jobs.send(job).is_ok(),
            None => false,
        };
        if !sent {
            self.jobs = None;
            return Err(io::Error::other("the decoding thread stopped"));
        }
        self.busy = true;
        Ok(())
    }

    /// Prints something here with `print` (which returns whether it carries errors), after
    /// everything handed over so far.
    pub fn local(
        &mut self,
        print: impl FnOnce(&Style, &mut Spill<'_>) -> io::Result<bool>,
    ) -> io::Result<()> {
        // What is printed here comes after the frames gathered so far.
        self.send()?;
        let mut arrived = None;
        let mut spill = Spill {
            buf: &mut self.mine,
            out: &mut self.out,
            behind: self.busy.then_some((&self.done, &mut arrived)),
        };
        let printed = print(&self.style, &mut spill);
        if let Some(d) = arrived {
            self.finished(d)?;
        }
        self.errors |= printed?;
        self.poll(false)?;
        if !self.busy && self.mine.len() >= WRITE_BYTES {
            self.write_mine()?;
        }
        Ok(())
    }

    /// Takes in the worker's answer, waiting for it when `wait`.
    fn poll(&mut self, wait: bool) -> io::Result<()> {
        if !self.busy {
            return Ok(());
        }
        let d = if wait {
            self.done.recv().ok()
        } else {
            match self.done.try_recv() {
                Ok(d) => Some(d),
                Err(mpsc::TryRecvError::Empty) => return Ok(()),
                Err(mpsc::TryRecvError::Disconnected) => None,
            }
        };
        let Some(d) = d else {
            self.busy = false;
            return Err(io::Error::other("the decoding thread stopped"));
        };
        self.finished(d)?;
        // What waited behind the worker's batch may go now.
        if self.mine.len() >= WRITE_BYTES {
            self.write_mine()?;
        }
        Ok(())
    }

    /// The worker's answer: it has written its batch (or failed to).
    fn finished(&mut self, d: Done) -> io::Result<()> {
        self.busy = false;
        self.errors |= d.errors;
        // The batch's buffers come back for the next one.
        let mut job = d.job;
        job.frames.clear();
        job.bytes.clear();
        job.session = None;
        job.input = None;
        self.batch = job;
        d.written
    }

    fn write_mine(&mut self) -> io::Result<()> {
        if !self.mine.is_empty() {
            self.out.write_all(&self.mine)?;
            self.mine.clear();
        }
        Ok(())
    }

    /// Waits for the worker and writes everything.
    pub fn finish(mut self) -> io::Result<bool> {
        self.send()?;
        self.poll(true)?;
        self.write_mine()?;
        self.jobs = None;
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
        self.out.flush()?;
        Ok(self.errors)
    }
}

/// The worker: decodes each frame against its session snapshot, prints it into its own buffer
/// and writes it.
fn work(
    proto: &'static Protocol,
    records: RecordsOptions,
    style: Style,
    mut out: std::fs::File,
    jobs: Receiver<Job>,
    done: Sender<Done>,
) {
    let mut decoder = kinspect::records::decoder(proto);
    decoder.set_records(records);
    let mut pdu = Pdu::default();
    let mut text = Vec::new();
    for job in jobs {
        let mut session = job.session.clone().unwrap_or_default();
        text.clear();
        let mut errors = false;
        let mut written = Ok(());
        // The batch's text goes out as it is printed: everything before the batch is written.
        let mut spill = Spill {
            buf: &mut text,
            out: &mut out,
            behind: None,
        };
        for (origin, hints, range) in &job.frames {
            let frame = job.bytes.get(range.clone()).unwrap_or_default();
            decode_frame(
                &mut decoder,
                &mut session,
                false,
                origin.clone(),
                hints,
                frame,
                &mut pdu,
            );
            match style.pdu(&pdu, job.input.as_deref(), &mut spill) {
                Ok(e) => errors |= e,
                Err(e) => {
                    written = Err(e);
                    break;
                }
            }
        }
        if written.is_ok() {
            written = out.write_all(&text);
        }
        let d = Done {
            job,
            errors,
            written,
        };
        if done.send(d).is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kinspect::capture::{read_capture, CaptureOptions, Event};
    use kinspect::output::{Format, Options, Printer};
    use std::path::PathBuf;

    fn captures() -> Vec<PathBuf> {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("captures");
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "pcap"))
            .collect();
        v.sort();
        assert!(v.len() >= 10, "the bundled captures are missing");
        v
    }

    fn opts() -> CaptureOptions {
        CaptureOptions {
            is_known_request: Some(kinspect::capture::decoded::builtin_known_request),
            ..CaptureOptions::default()
        }
    }

    /// What to do with each event of a replay: (decoder, event, input name).
    type OnEvent<'a> = dyn FnMut(&mut DecodeLoop, Event<'_>, Option<&Arc<str>>) + 'a;

    /// Reads each input in turn (a new session each) and hands every event to `on`.
    fn replay(inputs: &[(PathBuf, Option<Arc<str>>)], dl: &mut DecodeLoop, on: &mut OnEvent<'_>) {
        for (path, name) in inputs {
            dl.new_input();
            let f = std::fs::File::open(path).unwrap();
            read_capture(f, &opts(), &mut |ev| on(dl, ev, name.as_ref())).unwrap();
        }
    }

    /// The one-thread printer over the same inputs: the oracle.
    fn one_thread(inputs: &[(PathBuf, Option<Arc<str>>)]) -> (Vec<u8>, bool) {
        let o = Options {
            format: Format::Jsonl,
            annotate: false,
            color: false,
            show_secrets: false,
        };
        let mut p = Printer::new(Vec::new(), o);
        let mut dl = DecodeLoop::new(kinspect::protocol::builtin());
        let mut errors = false;
        replay(inputs, &mut dl, &mut |dl, ev, name| match ev {
            Event::Frame {
                origin,
                hints,
                data,
            } => {
                let pdu = dl.frame(origin, &hints, data);
                errors |= pdu.tree.has_errors();
                p.pdu(pdu, name.map(|n| &**n)).unwrap();
            }
            Event::Note { origin, diag } => {
                errors |= diag.is_error();
                p.note(&origin, &diag, name.map(|n| &**n)).unwrap();
            }
        });
        (p.finish().unwrap(), errors)
    }

    fn two_threads(
        inputs: &[(PathBuf, Option<Arc<str>>)],
        batch_frames: usize,
        batch_bytes: usize,
    ) -> (Vec<u8>, bool) {
        let out_path = std::env::temp_dir().join(format!(
            "kinspect-parallel-{}-{batch_frames}-{batch_bytes}-{}.jsonl",
            std::process::id(),
            inputs.len()
        ));
        let out = std::fs::File::create(&out_path).unwrap();
        let style = Style {
            json: JsonOptions::default(),
            filters: Filters::default(),
        };
        let proto = kinspect::protocol::builtin();
        let mut par = Parallel::new(style, out, proto, RecordsOptions::default()).unwrap();
        par.batch_frames = batch_frames;
        par.batch_bytes = batch_bytes;
        let mut dl = DecodeLoop::new(proto);
        replay(inputs, &mut dl, &mut |dl, ev, name| match ev {
            Event::Frame {
                origin,
                hints,
                data,
            } => par.frame(dl, origin, hints, data, name).unwrap(),
            Event::Note { origin, diag } => {
                let input = name.map(|n| &**n);
                par.local(|s, text| s.note(&origin, &diag, input, text).map(|_| diag.is_error()))
                    .unwrap()
            }
        });
        let errors = par.finish().unwrap();
        let text = std::fs::read(&out_path).unwrap();
        let _ = std::fs::remove_file(&out_path);
        (text, errors)
    }

    /// A PDU whose text is many times the bytes it was decoded from (a record value of NUL
    /// bytes prints as `\u0000`, six bytes each): it goes out in pieces as it is printed,
    /// and never stands whole in memory.
    #[test]
    fn a_huge_text_is_written_as_it_is_printed() {
        let value = vec![0u8; 3 << 20];
        let mut pdu = Pdu::default();
        pdu.tree.reset(&value);
        let root = pdu.tree.open("", kinspect::wire::tree::Kind::Struct, 0, 0);
        let span = kinspect::wire::tree::Span {
            start: 0,
            len: value.len() as u32,
        };
        pdu.tree.leaf(
            "body",
            kinspect::wire::tree::Value::Data(span),
            0,
            0,
            value.len() as u32,
        );
        pdu.tree.close(root, value.len() as u32);
        let out_path = std::env::temp_dir().join(format!("kinspect-spill-{}", std::process::id()));
        let style = Style {
            json: JsonOptions::default(),
            filters: Filters::default(),
        };
        let proto = kinspect::protocol::builtin();
        let out = std::fs::File::create(&out_path).unwrap();
        let mut par = Parallel::new(style.clone(), out, proto, RecordsOptions::default()).unwrap();
        par.local(|s, text| s.pdu(&pdu, None, text)).unwrap();
        let held = par.mine.capacity();
        par.finish().unwrap();
        let got = std::fs::read(&out_path).unwrap();
        let _ = std::fs::remove_file(&out_path);
        let mut want = Vec::new();
        style.pdu(&pdu, None, &mut want).unwrap();
        assert!(want.len() > 18 << 20, "the text is {} bytes", want.len());
        assert!(
            got == want,
            "the output differs from the text printed whole"
        );
        assert!(
            held <= 4 * WRITE_BYTES,
            "{held} bytes were held for one PDU"
        );
    }

    /// Every bundled capture alone, and all of them as successive inputs (a session each),
    /// with batches of 1, 2, 3 and 7 frames and of 4 KiB: two threads print exactly what one
    /// does, and agree on whether anything carried an error.
    #[test]
    fn two_threads_print_what_one_does() {
        let caps = captures();
        let mut runs: Vec<Vec<(PathBuf, Option<Arc<str>>)>> =
            caps.iter().map(|p| vec![(p.clone(), None)]).collect();
        runs.push(
            caps.iter()
                .map(|p| (p.clone(), Some(Arc::from(p.to_string_lossy().as_ref()))))
                .collect(),
        );
        for inputs in &runs {
            let (want, want_errors) = one_thread(inputs);
            assert!(!want.is_empty());
            for (frames, bytes) in [
                (1, BATCH_BYTES),
                (2, BATCH_BYTES),
                (3, 4096),
                (7, 4096),
                (BATCH_FRAMES, BATCH_BYTES),
            ] {
                let (got, errors) = two_threads(inputs, frames, bytes);
                assert!(
                    got == want,
                    "{:?} with batches of {frames} frames / {bytes} bytes: output differs",
                    inputs.iter().map(|i| &i.0).collect::<Vec<_>>()
                );
                assert_eq!(errors, want_errors);
            }
        }
    }
}
