//! (being built: see the issue that owns this module)
