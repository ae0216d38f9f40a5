//! Opaque, stateless `tools/list` cursors: epoch + offset + keyed check.
