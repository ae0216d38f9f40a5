//! Placeholder: see the issue tracker. The adapter lands in its own issue.
#![no_std]
