//! An object read on a thread of its own, so that a cancelled run stops the copy it feeds within a
//! moment, even while the store sends nothing.
//!
//! A read from a hosted store blocks until bytes arrive or the store's own timeout passes (two
//! minutes by default), and a server that is paused or cut off sends none: a copy reading on the
//! step's thread would keep a signalled run alive that long. Here the store is opened and read on a
//! helper thread that hands the bytes over in chunks, and the copy waits for each chunk a little at a
//! time, looking at the run's cancel flag in between. Once the run is cancelled the copy fails at
//! once and leaves the helper behind: it writes nothing anywhere (the copy on the caller's thread is
//! the only writer, and it is already gone), and it ends at its next chunk, or when the store's
//! timeout ends its read.
//!
//! A `file://` object (the local object store) is read on the caller's thread as it is: a local
//! file does not stall, and every task of a bundle run copies its artifacts, so a thread per file
//! would be a cost on the run's hot path for nothing.

use std::io::{self, Read};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::time::Duration;

use crate::run::cancel::Cancel;
use crate::stores::{ObjectStore, StoreError};

/// How long a wait for the next chunk lasts before the cancel flag is looked at again.
const LOOK_EVERY: Duration = Duration::from_millis(100);
/// The most bytes one chunk carries.
const CHUNK: usize = 64 * 1024;
/// How many chunks may wait for the copy (what the helper reads ahead).
const AHEAD: usize = 8;

/// What the helper hands over: whether the object opened, then its bytes.
enum Message {
    Opened(Result<(), StoreError>),
    /// Bytes; none at the end.
    Chunk(Vec<u8>),
    Failed(io::Error),
}

/// Why an object was not opened.
#[derive(Debug)]
pub enum NotOpened {
    /// The run was cancelled first.
    Cancelled,
    /// The store would not give it.
    Store(StoreError),
}

/// An object's bytes as the helper thread reads them (see the module's docs).
pub struct Stoppable<'a> {
    /// A local file's reader, read on the caller's thread (no helper, `from` never answers).
    direct: Option<crate::stores::ObjectReader>,
    from: Receiver<Message>,
    cancel: &'a Cancel,
    chunk: Vec<u8>,
    at: usize,
    ended: bool,
    /// The store's error of a read that failed, kept for the caller: the copy's own words for it
    /// name the destination, as if writing had failed.
    failed: Option<String>,
}

/// Opens `url` in `objects` on a helper thread, waiting for the store's answer until `cancel` is
/// set.
pub fn open<'a>(
    objects: &Arc<dyn ObjectStore>,
    url: &str,
    cancel: &'a Cancel,
) -> Result<Stoppable<'a>, NotOpened> {
    let (to, from) = mpsc::sync_channel(AHEAD);
    if url.starts_with("file://") {
        drop(to);
        return match objects.open(url) {
            Ok(reader) => Ok(Stoppable {
                direct: Some(reader),
                from,
                cancel,
                chunk: Vec::new(),
                at: 0,
                ended: false,
                failed: None,
            }),
            Err(e) => Err(NotOpened::Store(e)),
        };
    }
    let objects = Arc::clone(objects);
    let url_read = url.to_string();
    std::thread::Builder::new()
        .name("agent-env-object-read".into())
        .spawn(move || read_all(objects.as_ref(), &url_read, &to))
        .map_err(|e| {
            NotOpened::Store(StoreError::io(
                format!("can't start a thread to read {url}"),
                &e,
            ))
        })?;
    let mut stoppable = Stoppable {
        direct: None,
        from,
        cancel,
        chunk: Vec::new(),
        at: 0,
        ended: false,
        failed: None,
    };
    match stoppable.next() {
        Ok(Message::Opened(Ok(()))) => Ok(stoppable),
        Ok(Message::Opened(Err(e))) => Err(NotOpened::Store(e)),
        Ok(_) | Err(_) if cancel.is_cancelled() => Err(NotOpened::Cancelled),
        _ => Err(NotOpened::Store(helper_gone(url))),
    }
}

/// The error of a helper thread that ended without a word (it panicked).
fn helper_gone(url: &str) -> StoreError {
    StoreError::Internal(format!(
        "the thread reading {url} from the object store ended without an answer"
    ))
}

/// The helper thread: opens the object, then reads it into chunks until its end, a failure, or a
/// copy that no longer waits for them.
fn read_all(objects: &dyn ObjectStore, url: &str, to: &SyncSender<Message>) {
    let mut reader = match objects.open(url) {
        Ok(reader) => reader,
        Err(e) => {
            let _ = to.send(Message::Opened(Err(e)));
            return;
        }
    };
    if to.send(Message::Opened(Ok(()))).is_err() {
        return;
    }
    loop {
        let mut chunk = vec![0; CHUNK];
        let message = match reader.read(&mut chunk) {
            Ok(n) => {
                chunk.truncate(n);
                Message::Chunk(chunk)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => Message::Failed(e),
        };
        let last = !matches!(&message, Message::Chunk(c) if !c.is_empty());
        if to.send(message).is_err() || last {
            return;
        }
    }
}

impl Stoppable<'_> {
    /// The next message, waited for until the run is cancelled (`Err(true)`) or the helper is gone
    /// (`Err(false)`).
    fn next(&mut self) -> Result<Message, bool> {
        loop {
            if self.cancel.is_cancelled() {
                return Err(true);
            }
            match self.from.recv_timeout(LOOK_EVERY) {
                Ok(message) => return Ok(message),
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return Err(false),
            }
        }
    }

    /// The store's words for the read that failed, if one did.
    pub fn failure(&mut self) -> Option<String> {
        self.failed.take()
    }
}

/// The error a read gives once the run is cancelled.
fn cancelled() -> io::Error {
    io::Error::other("the run was cancelled")
}

impl Read for Stoppable<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if let Some(direct) = &mut self.direct {
            // A file of this machine answers at once, but a large one read whole (an object read
            // back before it is reused) would keep a Ctrl-C waiting for its last byte.
            if self.cancel.is_cancelled() {
                return Err(cancelled());
            }
            return match direct.read(buf) {
                Err(e) if e.kind() != io::ErrorKind::Interrupted => {
                    self.failed = Some(e.to_string());
                    Err(e)
                }
                other => other,
            };
        }
        loop {
            if self.at < self.chunk.len() {
                let n = buf.len().min(self.chunk.len() - self.at);
                buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
                self.at += n;
                return Ok(n);
            }
            if self.ended {
                return Ok(0);
            }
            match self.next() {
                Ok(Message::Chunk(chunk)) => {
                    self.ended = chunk.is_empty();
                    self.chunk = chunk;
                    self.at = 0;
                }
                Ok(Message::Failed(e)) => {
                    self.ended = true;
                    self.failed = Some(e.to_string());
                    return Err(e);
                }
                Ok(Message::Opened(_)) => continue,
                Err(true) => return Err(cancelled()),
                Err(false) => {
                    let gone = "the thread reading the object ended without an answer";
                    self.failed = Some(gone.to_string());
                    return Err(io::Error::other(gone));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stores::local::LocalFilesystemObjectStore;
    use std::time::Instant;

    /// An object store whose objects never send a byte (a paused server).
    struct Stalled;

    struct Never;

    impl Read for Never {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            std::thread::sleep(Duration::from_secs(3600));
            Ok(0)
        }
    }

    impl ObjectStore for Stalled {
        fn put(&self, _: &str, _: &[u8], _: &str, _: bool) -> crate::stores::StoreResult<String> {
            Err(StoreError::unimplemented("put"))
        }
        fn get(&self, _: &str) -> crate::stores::StoreResult<Vec<u8>> {
            Err(StoreError::unimplemented("get"))
        }
        fn open(&self, _: &str) -> crate::stores::StoreResult<crate::stores::ObjectReader> {
            Ok(Box::new(Never))
        }
    }

    #[test]
    fn a_cancel_stops_a_read_the_store_never_answers() {
        let objects: Arc<dyn ObjectStore> = Arc::new(Stalled);
        let cancel = Cancel::new();
        let mut reader = open(&objects, "s3://bucket/x", &cancel).unwrap();
        let stopper = Arc::clone(&cancel);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            stopper.cancel(15);
        });
        let began = Instant::now();
        let err = reader.read(&mut [0; 16]).unwrap_err();
        assert_eq!(err.to_string(), "the run was cancelled");
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "{:?}",
            began.elapsed()
        );
        assert_eq!(reader.failure(), None);
    }

    #[test]
    fn an_object_is_read_whole_through_the_helper() {
        let dir = tempfile::tempdir().unwrap();
        let local = LocalFilesystemObjectStore::new(dir.path().join("o"));
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let url = local
            .put("big.bin", &bytes, "application/octet-stream", false)
            .unwrap();
        let objects: Arc<dyn ObjectStore> = Arc::new(local);
        let cancel = Cancel::new();
        let mut read = Vec::new();
        open(&objects, &url, &cancel)
            .unwrap()
            .read_to_end(&mut read)
            .unwrap();
        assert_eq!(read, bytes);
        match open(&objects, &url.replace("big", "gone"), &cancel) {
            Err(NotOpened::Store(StoreError::NotFound(_))) => {}
            Err(other) => panic!("{other:?}"),
            Ok(_) => panic!("opened a missing object"),
        }
    }

    /// A file of this machine is read as it is, but a cancel still stops the read between two reads:
    /// a large object read back whole does not keep a Ctrl-C waiting for its end.
    #[test]
    fn a_cancel_stops_a_read_of_a_file_of_this_machine() {
        let dir = tempfile::tempdir().unwrap();
        let local = LocalFilesystemObjectStore::new(dir.path().join("o"));
        let url = local
            .put(
                "big.bin",
                &[7u8; 100_000],
                "application/octet-stream",
                false,
            )
            .unwrap();
        let objects: Arc<dyn ObjectStore> = Arc::new(local);
        let cancel = Cancel::new();
        let mut reader = open(&objects, &url, &cancel).unwrap();
        let mut first = [0u8; 16];
        assert_eq!(reader.read(&mut first).unwrap(), 16);
        cancel.cancel(2);
        let err = reader.read(&mut [0; 16]).unwrap_err();
        assert_eq!(err.to_string(), "the run was cancelled");
        assert_eq!(reader.failure(), None);
    }
}
