//! Reading the config file's text: a regular file (after following links) of at most
//! [`MAX_CONFIG_BYTES`], in UTF-8. Whatever else is at the path is refused with what it is, before
//! anything is read from it: a device such as `/dev/zero` would be read for ever, and a named pipe
//! would wait for ever for a writer.

use super::error::ConfigError;
use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The largest config file agent-env reads, in bytes (16 MiB). A config file holds settings, a few
/// kilobytes even for a large team; the bound only keeps a wrong path (a log, an image, a disk
/// image) from filling memory, so it is far above any real config.
pub const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;

/// The text of the config file at `path`, or why it cannot be the config.
pub fn read_config_text(path: &Path) -> Result<String, ConfigError> {
    let shown = path.display().to_string();
    let unreadable = |message: String| ConfigError::Unreadable {
        path: shown.clone(),
        message,
    };
    // Opened without waiting: a named pipe with no writer would block an ordinary open for ever.
    // The open file's own metadata is checked, so what is read is what was checked.
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| open_error(path, &shown, e))?;
    let meta = file.metadata().map_err(|e| unreadable(e.to_string()))?;
    if let Some(what) = not_a_regular_file(&meta) {
        return Err(unreadable(format!(
            "it is {what}, not a regular file; the config is a TOML file at that path"
        )));
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(unreadable(too_large(&format!("{} bytes", meta.len()))));
    }
    let bytes = read_at_most(&mut file, MAX_CONFIG_BYTES).map_err(|e| unreadable(e.to_string()))?;
    // The file grew after it was measured.
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(unreadable(too_large(&format!(
            "more than {MAX_CONFIG_BYTES} bytes"
        ))));
    }
    String::from_utf8(bytes).map_err(|e| ConfigError::NotUtf8 {
        path: shown.clone(),
        message: not_utf8_message(e.as_bytes(), e.utf8_error().valid_up_to()),
    })
}

/// What a failed open says: a link to nothing or a loop of links with what to do, the file gone
/// since discovery found it, else the system's reason.
fn open_error(path: &Path, shown: &str, e: std::io::Error) -> ConfigError {
    let unreadable = |message: String| ConfigError::Unreadable {
        path: shown.to_string(),
        message,
    };
    if e.raw_os_error() == Some(libc::ELOOP) {
        return unreadable(
            "it is a link in a loop of symbolic links that never reaches a file; point the link at the config file, or remove it"
                .to_string(),
        );
    }
    if e.kind() == std::io::ErrorKind::NotFound {
        return match std::fs::read_link(path) {
            Ok(target) => unreadable(format!(
                "it is a link to {}, which does not exist; restore that file, or remove the link",
                target.display()
            )),
            Err(_) => ConfigError::Vanished {
                path: shown.to_string(),
            },
        };
    }
    unreadable(e.to_string())
}

/// What `meta` describes when it is not a regular file: `a folder`, `a named pipe (FIFO)`, ….
fn not_a_regular_file(meta: &Metadata) -> Option<&'static str> {
    let kind = meta.file_type();
    if kind.is_file() {
        return None;
    }
    Some(if kind.is_dir() {
        "a folder"
    } else if kind.is_fifo() {
        "a named pipe (FIFO)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    })
}

/// `it is 52428800 bytes, over the 16777216 bytes (16 MiB) a config file may hold; …`.
fn too_large(size: &str) -> String {
    format!(
        "it is {size}, over the {MAX_CONFIG_BYTES} bytes ({} MiB) a config file may hold; check that the path names the config file (a config holds settings, not data)",
        MAX_CONFIG_BYTES / (1024 * 1024)
    )
}

/// At most `limit + 1` bytes of `file`: one more than the bound, so a file over it is seen to be.
fn read_at_most(file: &mut File, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// `can't decode byte 0xff at line 2, column 5 (byte 25 of the file); save the file as UTF-8`: the
/// place of the first byte that is not UTF-8, counted as an editor does (lines and characters from 1).
fn not_utf8_message(bytes: &[u8], valid_up_to: usize) -> String {
    let before = String::from_utf8_lossy(&bytes[..valid_up_to.min(bytes.len())]);
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(0, |last| last.chars().count())
        + 1;
    format!(
        "can't decode byte 0x{:02x} at line {line}, column {column} (byte {valid_up_to} of the file); save the file as UTF-8",
        bytes.get(valid_up_to).copied().unwrap_or(0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_that_is_not_utf8_is_placed_by_line_and_column() {
        let text = b"a = 1\nb = \"\xc3\xa9\xff\"\n";
        // `a = 1\n`, `b = "` and the two bytes of é come before it.
        assert_eq!(
            not_utf8_message(text, 13),
            "can't decode byte 0xff at line 2, column 7 (byte 13 of the file); save the file as UTF-8"
        );
    }
}
