//! atto's full-screen terminal interface. A front end only: it holds an `AgentHandle`,
//! renders `Event`s and sends `Op`s (DESIGN.md §1), and shares the slash-command parser
//! with the line session.
//!
//! Layers: `app` folds events into state; `view` (with `transcript`, `markdown`,
//! `highlight`, `status`, `dialog`, `panels`) draws that state and never mutates it;
//! `composer` edits the input; `keys` maps key presses to actions; `run` owns the
//! terminal and the event loop.

pub mod app;
pub mod composer;
pub mod dialog;
pub mod highlight;
pub mod keys;
pub mod markdown;
pub mod panels;
pub mod picker;
mod run;
pub mod status;
mod term;
pub mod transcript;
pub mod view;

pub use run::{PLACEHOLDER, SwarmLauncher, TuiError, TuiOptions, run};
