//! Workers on other machines: a Slurm job or a host reached over SSH runs the same
//! `atto exec` worker, and its work travels back through git, never through a shared
//! directory (nodes of a cluster need not share a disk; when they do, nothing here relies
//! on it).
//!
//! Owns: the git transport of an attempt (`transport`: the coordinator publishes the
//! attempt's base as a `git bundle` written on the worker's stdin ahead of the protocol,
//! and fetches the task branch the worker returns, as a bundle in its last stream-json
//! event, into the attempt's local worktree), the worker's side of it (`checkout`: a clone
//! in node-local scratch, the worker run there, its work committed and sent back), and the
//! launchers (`launcher`: `srun` and `ssh` command lines built word by word). Does not own:
//! scheduling (Slurm's, or the coordinator's usual one), the quality pipeline or the
//! merge (the same as local worktree isolation).

pub mod attempt;
pub mod checkout;
pub mod launcher;
pub mod transport;
