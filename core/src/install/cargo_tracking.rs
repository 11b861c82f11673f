//! The record `cargo install --root` keeps of what it installed (`.crates.toml` and `.crates2.json` in
//! the root): when `plugin remove` deletes a crate plugin's executable, its line goes too, so the
//! record does not list an executable that is gone.

use std::path::{Path, PathBuf};

use agent_env_store::whole_file::write_whole;
use agent_env_store::StoreError;
use serde_json::Value;

/// The record's two files, as cargo names them.
const TOML_RECORD: &str = ".crates.toml";
const JSON_RECORD: &str = ".crates2.json";

/// Takes the executable `bin` out of the install record in `cargo_root`: out of its package's list of
/// executables, and the package's entry out when that was its last. A record that is missing is left
/// so; one that cannot be read or written is an error (the executable itself is gone either way).
pub fn forget_executable(cargo_root: &Path, bin: &str) -> Result<(), CargoRecordError> {
    let toml_path = cargo_root.join(TOML_RECORD);
    if let Some(text) = read(&toml_path)? {
        let mut record: toml::Table = text.parse().map_err(|source| CargoRecordError::NotToml {
            path: toml_path.clone(),
            source,
        })?;
        if let Some(toml::Value::Table(packages)) = record.get_mut("v1") {
            packages.retain(|_, bins| match bins {
                toml::Value::Array(list) => {
                    list.retain(|b| b.as_str() != Some(bin));
                    !list.is_empty()
                }
                _ => true,
            });
        }
        write(&toml_path, &record.to_string())?;
    }
    let json_path = cargo_root.join(JSON_RECORD);
    if let Some(text) = read(&json_path)? {
        let mut record: Value =
            serde_json::from_str(&text).map_err(|source| CargoRecordError::NotJson {
                path: json_path.clone(),
                source,
            })?;
        if let Some(Value::Object(installs)) = record.get_mut("installs") {
            installs.retain(|_, install| match install.get_mut("bins") {
                Some(Value::Array(list)) => {
                    list.retain(|b| b.as_str() != Some(bin));
                    !list.is_empty()
                }
                _ => true,
            });
        }
        let text =
            serde_json::to_string(&record).map_err(|source| CargoRecordError::Unserializable {
                path: json_path.clone(),
                source,
            })?;
        write(&json_path, &text)?;
    }
    Ok(())
}

/// Why cargo's install record could not be brought in step.
#[derive(Debug, thiserror::Error)]
pub enum CargoRecordError {
    /// A record file is there but cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `.crates.toml` is not TOML.
    #[error("cannot read {}: {source}", path.display())]
    NotToml {
        path: PathBuf,
        source: toml::de::Error,
    },
    /// `.crates2.json` is not JSON.
    #[error("cannot read {}: {source}", path.display())]
    NotJson {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// The changed `.crates2.json` could not be written out as JSON.
    #[error("cannot write {}: {source}", path.display())]
    Unserializable {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// A changed record could not be written (its message names the file).
    #[error(transparent)]
    Unwritable(StoreError),
}

fn read(path: &Path) -> Result<Option<String>, CargoRecordError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(CargoRecordError::Unreadable {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Writes beside and renames over ([`write_whole`]), so a reader never sees half a record.
fn write(path: &Path, text: &str) -> Result<(), CargoRecordError> {
    write_whole(&mut text.as_bytes(), path).map_err(CargoRecordError::Unwritable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_removed_executable_leaves_both_records_and_the_others_stay() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(TOML_RECORD),
            "[v1]\n\"agentenv-a 0.1.0 (path+file:///src/a)\" = [\"agentenv-a\"]\n\"tools 1.0.0 (path+file:///src/t)\" = [\"agentenv-b\", \"helper\"]\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join(JSON_RECORD),
            r#"{"installs":{"agentenv-a 0.1.0 (path+file:///src/a)":{"bins":["agentenv-a"],"profile":"release"},"tools 1.0.0 (path+file:///src/t)":{"bins":["agentenv-b","helper"]}}}"#,
        )
        .unwrap();
        forget_executable(dir.path(), "agentenv-a").unwrap();
        forget_executable(dir.path(), "agentenv-b").unwrap();
        let toml_text = std::fs::read_to_string(dir.path().join(TOML_RECORD)).unwrap();
        assert!(!toml_text.contains("agentenv-a"), "{toml_text}");
        assert!(
            toml_text.contains("\"tools 1.0.0 (path+file:///src/t)\" = [\"helper\"]"),
            "{toml_text}"
        );
        let json: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(JSON_RECORD)).unwrap())
                .unwrap();
        assert_eq!(
            json,
            serde_json::json!({"installs": {"tools 1.0.0 (path+file:///src/t)": {"bins": ["helper"]}}})
        );
    }

    #[test]
    fn no_record_is_no_error_and_a_broken_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        forget_executable(dir.path(), "x").unwrap();
        std::fs::write(dir.path().join(TOML_RECORD), "[v1\n").unwrap();
        let e = forget_executable(dir.path(), "x").unwrap_err().to_string();
        assert!(e.starts_with("cannot read "), "{e}");
        assert!(e.contains(".crates.toml"), "{e}");
    }
}
