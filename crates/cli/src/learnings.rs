//! `atto learnings`: the learnings of this workspace without a session — list, show,
//! validate, reject, archive, and export to or import from a JSON file a team can share.
//! `import` also reads Attocode's learnings database (`.attocode/*.db`, or any SQLite file
//! with a `learnings` table).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use atto_core::LearningSettings;
use atto_present::learning as present;
use atto_protocol::{Learning, LearningStatus};
use atto_store::{
    ImportReport, ImportedLearning, LearningFilter, LearningLimits, NewLearning, Store,
};
use clap::{Args, Subcommand};
use serde::{Deserialize, Serialize};

use crate::{ExitCode, Failure};

/// The name and version of the export format.
const FORMAT: &str = "atto.learnings";
const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Args)]
pub struct LearningsArgs {
    /// Workspace root (default: the enclosing git repository, else the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    #[command(subcommand)]
    pub action: Option<LearningsAction>,
}

#[derive(Debug, Subcommand)]
pub enum LearningsAction {
    /// List this workspace's learnings (and the user's), most confident first (the default).
    List {
        /// Only this status: proposed (pending), validated, rejected, archived or all
        /// (default: proposed and validated).
        #[arg(long, value_name = "STATUS")]
        status: Option<String>,
    },
    /// Show one learning whole.
    Show {
        /// Its number.
        id: i64,
    },
    /// Validate a proposed learning: it is recalled into prompts from now on.
    Validate {
        /// Its number.
        id: i64,
    },
    /// Reject a proposed learning: it is never recalled.
    Reject {
        /// Its number.
        id: i64,
    },
    /// Archive a validated or rejected learning: it is no longer recalled.
    Archive {
        /// Its number.
        id: i64,
    },
    /// Write learnings as JSON (to share with a team), to stdout or a file.
    Export {
        /// Only this status, or all (default: validated).
        #[arg(long, value_name = "STATUS")]
        status: Option<String>,
        /// Write here instead of stdout.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Read learnings from an export, or from Attocode's learnings database; ones already
    /// here are skipped.
    Import {
        /// A JSON export or a SQLite file with a `learnings` table.
        file: Option<PathBuf>,
        /// Import Attocode's learnings found under the workspace's `.attocode/`.
        #[arg(long, conflicts_with = "file")]
        attocode: bool,
    },
}

/// The export file.
#[derive(Debug, Serialize, Deserialize)]
struct Export {
    format: String,
    version: u32,
    learnings: Vec<Learning>,
}

pub fn run(
    args: LearningsArgs,
    workspace: &Path,
    settings: &LearningSettings,
) -> Result<ExitCode, Failure> {
    let store = crate::permissions::open_store().map_err(|e| Failure::usage(e.to_string()))?;
    let here = workspace.display().to_string();
    let failed = |e: atto_store::StoreError| Failure::usage(e.to_string());
    let mut out = std::io::stdout().lock();
    match args
        .action
        .unwrap_or(LearningsAction::List { status: None })
    {
        LearningsAction::List { status } => {
            let statuses = statuses(
                status.as_deref(),
                &[LearningStatus::Proposed, LearningStatus::Validated],
            )?;
            let learnings = list(&store, &here, statuses)?;
            for line in present::list_lines(&learnings, false) {
                let _ = writeln!(out, "{}", atto_present::clean::visible(&line));
            }
        }
        LearningsAction::Show { id } => {
            let learning = store.learning_blocking(id, &here).map_err(failed)?;
            for line in present::detail_lines(&learning) {
                let _ = writeln!(out, "{}", atto_present::clean::visible(&line));
            }
        }
        LearningsAction::Validate { id } => decide(&store, &here, id, LearningStatus::Validated)?,
        LearningsAction::Reject { id } => decide(&store, &here, id, LearningStatus::Rejected)?,
        LearningsAction::Archive { id } => decide(&store, &here, id, LearningStatus::Archived)?,
        LearningsAction::Export { status, output } => {
            export(&store, &here, status.as_deref(), output, &mut out)?;
        }
        LearningsAction::Import { file, attocode } => {
            import(&store, &here, workspace, file, attocode, settings)?;
        }
    }
    Ok(ExitCode::Ok)
}

/// `atto learnings export`: the learnings of `status` (validated by default) as JSON, to
/// `output` or to `out`.
fn export(
    store: &Store,
    here: &str,
    status: Option<&str>,
    output: Option<PathBuf>,
    out: &mut impl std::io::Write,
) -> Result<(), Failure> {
    let statuses = statuses(status, &[LearningStatus::Validated])?;
    let export = Export {
        format: FORMAT.to_owned(),
        version: FORMAT_VERSION,
        learnings: list(store, here, statuses)?,
    };
    let json = serde_json::to_string_pretty(&export)
        .map_err(|e| Failure::usage(format!("cannot write the learnings as JSON: {e}")))?;
    match output {
        Some(path) => {
            std::fs::write(&path, format!("{json}\n")).map_err(|e| {
                Failure::usage(format!(
                    "cannot write {}: {e}; nothing was exported",
                    path.display()
                ))
            })?;
            eprintln!(
                "exported {} learning(s) to {}",
                export.learnings.len(),
                path.display()
            );
        }
        None => {
            let _ = writeln!(out, "{json}");
        }
    }
    Ok(())
}

/// `atto learnings import`: reads `file`, or Attocode's databases under the workspace, and
/// adds the learnings not already here.
fn import(
    store: &Store,
    here: &str,
    workspace: &Path,
    file: Option<PathBuf>,
    attocode: bool,
    settings: &LearningSettings,
) -> Result<(), Failure> {
    let failed = |e: atto_store::StoreError| Failure::usage(e.to_string());
    let limits = LearningLimits {
        auto_validate_threshold: settings.auto_validate_threshold,
        max_learnings: settings.max_learnings,
    };
    let files = match (file, attocode) {
        (Some(file), _) => vec![file],
        (None, true) => {
            let found = atto_store::attocode_learning_dbs(workspace);
            if found.is_empty() {
                return Err(Failure::usage(format!(
                    "no Attocode learnings database under {}/.attocode (a SQLite \
                     file with a learnings table); nothing was imported. Name the \
                     file: atto learnings import PATH",
                    workspace.display()
                )));
            }
            found
        }
        (None, false) => {
            return Err(Failure::usage(
                "give a file to import (a JSON export or a SQLite learnings \
                 database), or --attocode to read .attocode/ in this workspace",
            ));
        }
    };
    for file in files {
        let items = read(&file, here)?;
        let report = store
            .import_learnings_blocking(items, limits)
            .map_err(failed)?;
        eprintln!("{}", imported_line(&file, report));
    }
    Ok(())
}

fn list(
    store: &Store,
    here: &str,
    statuses: Vec<LearningStatus>,
) -> Result<Vec<Learning>, Failure> {
    store
        .list_learnings_blocking(LearningFilter {
            project: Some(here.to_owned()),
            statuses,
        })
        .map_err(|e| Failure::usage(e.to_string()))
}

fn decide(store: &Store, here: &str, id: i64, to: LearningStatus) -> Result<(), Failure> {
    let learning = store
        .set_learning_status_blocking(id, here, to)
        .map_err(|e| Failure::usage(e.to_string()))?;
    println!(
        "{}",
        atto_present::clean::visible(&present::updated_line(&learning))
    );
    Ok(())
}

/// `--status` read: one status, `all` (every status), or `default` when not given.
fn statuses(
    text: Option<&str>,
    default: &[LearningStatus],
) -> Result<Vec<LearningStatus>, Failure> {
    match text {
        None => Ok(default.to_vec()),
        Some("all") => Ok(Vec::new()),
        Some(text) => LearningStatus::parse(text).map(|s| vec![s]).ok_or_else(|| {
            Failure::usage(format!(
                "unknown status '{text}' (expected proposed, validated, rejected, archived or \
                 all)"
            ))
        }),
    }
}

/// The learnings in `file`: Attocode's database when it is SQLite, else an export.
fn read(file: &Path, here: &str) -> Result<Vec<ImportedLearning>, Failure> {
    if atto_store::is_sqlite(file) {
        return atto_store::read_attocode_learnings(file, here)
            .map_err(|e| Failure::usage(e.to_string()));
    }
    let text = std::fs::read_to_string(file).map_err(|e| {
        Failure::usage(format!(
            "cannot read {}: {e}; nothing was imported",
            file.display()
        ))
    })?;
    let learnings = parse_export(&text).map_err(|why| {
        Failure::usage(format!(
            "{} is not a learnings export ({why}); nothing was imported. `atto learnings \
             export` writes one.",
            file.display()
        ))
    })?;
    let source = file.display().to_string();
    Ok(learnings
        .into_iter()
        .map(|l| ImportedLearning {
            new: NewLearning {
                kind: l.kind,
                description: l.description,
                details: l.details,
                keywords: l.keywords,
                actions: l.actions,
                categories: l.categories,
                confidence: l.confidence,
                scope: l.scope,
                project: here.to_owned(),
                source: atto_protocol::LearningSource::Import,
                source_ref: Some(format!("{source} #{}", l.id)),
                session_id: None,
            },
            status: l.status,
            created_at: Some(l.created_at),
            used: l.used,
            helpful: l.helpful,
        })
        .collect())
}

/// An export file, or a bare list of learnings.
fn parse_export(text: &str) -> Result<Vec<Learning>, String> {
    if let Ok(list) = serde_json::from_str::<Vec<Learning>>(text) {
        return Ok(list);
    }
    let export: Export = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if export.format != FORMAT || export.version > FORMAT_VERSION {
        return Err(format!(
            "format {} version {}, where {FORMAT} version {FORMAT_VERSION} or older is read",
            export.format, export.version
        ));
    }
    Ok(export.learnings)
}

fn imported_line(file: &Path, report: ImportReport) -> String {
    let mut line = format!(
        "imported {} learning(s) from {}",
        report.imported,
        file.display()
    );
    if report.duplicates > 0 {
        line.push_str(&format!(" ({} already here, skipped)", report.duplicates));
    }
    if report.evicted > 0 {
        line.push_str(&format!(
            "; {} older learning(s) evicted to stay within the cap",
            report.evicted
        ));
    }
    line
}
