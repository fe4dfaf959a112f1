//! The structured planner in the transcript: the "Task Plan Generated" block, revisions
//! as coloured diffs, short lines for approval, rejection and failed generation, step
//! progress as compact cards (updated in place like tool cards), and the closing summary
//! as a small table. What the plan *is now* lives in `App`; entries here are what was said
//! at the time.

use atto_protocol::{StepOutcome, StepStatus, TaskPlan, TaskPlanStatus};
use ratatui::text::{Line, Span};

use crate::highlight::diff_style;
use crate::status::tokens;
use crate::view::Theme;
use crate::view::steps;
use crate::view::text::{truncate, width as text_width, wrap};

/// Detail lines of a step card shown while folded.
const DETAIL_FOLD: usize = 3;

/// A planner entry of the transcript.
#[derive(Debug)]
pub(crate) enum PlanEntry {
    /// The plan as presented for confirmation (generated, or shown by `/show-plan`).
    Block {
        plan: Box<TaskPlan>,
        /// "Task Plan Generated" or "Task Plan".
        heading: &'static str,
        /// Model requests it took, when more than one.
        attempts: u32,
        /// Whether to say how to refine, approve or reject it.
        hint: bool,
    },
    /// A refinement: what was asked, by whom, and the diff of the step list.
    Revision { title: String, diff: Vec<String> },
    /// One short line: approved, rejected, generation failed or cancelled, settings.
    Note { text: String, tone: Tone },
    /// A step's progress.
    Step(StepCard),
    /// The run's end: each step's outcome.
    Summary {
        status: TaskPlanStatus,
        outcomes: Vec<StepOutcome>,
    },
}

/// How a note reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tone {
    Ok,
    Warn,
    Error,
    Quiet,
}

/// A plan step as a compact card, like a tool card: number, description, state, tokens.
#[derive(Debug, Clone)]
pub(crate) struct StepCard {
    pub number: u32,
    /// Steps in the plan, when known ("step 2/5").
    pub total: Option<usize>,
    pub description: String,
    pub status: StepStatus,
    pub checkpoint: Option<u32>,
    /// Tokens the step's turn used, and its budget, once it ended.
    pub tokens: Option<u64>,
    pub budget: Option<u64>,
    /// The model's summary, or why it failed or was skipped.
    pub detail: Vec<String>,
    /// "rolled back, plan stopped" and the like.
    pub note: Option<String>,
    pub expanded: bool,
}

impl StepCard {
    pub fn foldable(&self) -> bool {
        self.detail.len() > DETAIL_FOLD
    }
}

pub(super) fn render(entry: &PlanEntry, width: usize, theme: Theme, out: &mut Vec<Line<'static>>) {
    match entry {
        PlanEntry::Block {
            plan,
            heading,
            attempts,
            hint,
        } => block(plan, heading, *attempts, *hint, width, theme, out),
        PlanEntry::Revision { title, diff } => {
            let head = [Span::styled(format!("✎ {title}"), theme.heading())];
            out.extend(wrap(&head, width, &[], &[Span::raw("  ")]));
            for line in diff {
                let spans = [Span::styled(line.clone(), diff_style(line, theme))];
                out.extend(wrap(&spans, width, &[Span::raw("  ")], &[Span::raw("  ")]));
            }
        }
        PlanEntry::Note { text, tone } => {
            let style = match tone {
                Tone::Ok => theme.ok(),
                Tone::Warn => theme.warn(),
                Tone::Error => theme.error(),
                Tone::Quiet => theme.dim(),
            };
            let spans = [Span::styled(text.clone(), style)];
            out.extend(wrap(&spans, width, &[], &[Span::raw("  ")]));
        }
        PlanEntry::Step(card) => step(card, width, theme, out),
        PlanEntry::Summary { status, outcomes } => summary(*status, outcomes, width, theme, out),
    }
}

fn block(
    plan: &TaskPlan,
    heading: &str,
    attempts: u32,
    hint: bool,
    width: usize,
    theme: Theme,
    out: &mut Vec<Line<'static>>,
) {
    let mut head = vec![Span::styled(format!("◆ {heading}"), theme.heading())];
    if attempts > 1 {
        head.push(Span::styled(
            format!(" · after {attempts} model requests"),
            theme.dim(),
        ));
    }
    out.extend(wrap(&head, width, &[], &[Span::raw("  ")]));
    out.push(Line::from(Span::styled(
        "━".repeat(width.min(60)),
        theme.border(),
    )));
    let intent = [
        Span::styled("Intent: ", theme.dim()),
        Span::raw(plan.intent.clone()),
    ];
    out.extend(wrap(&intent, width, &[], &[Span::raw("  ")]));
    facts(plan, width, theme, out);
    out.push(Line::from(Span::styled("Steps:", theme.dim())));
    for s in &plan.steps {
        plan_step(plan, s, width, theme, out);
    }
    if hint {
        refine_hint(width, theme, out);
    }
}

/// The plan's risk, estimated time and the files its steps touch.
fn facts(plan: &TaskPlan, width: usize, theme: Theme, out: &mut Vec<Line<'static>>) {
    let mut files: Vec<&str> = plan
        .steps
        .iter()
        .flat_map(|s| s.files.iter().map(String::as_str))
        .collect();
    files.sort_unstable();
    files.dedup();
    let facts = [
        Span::styled("Risk: ", theme.dim()),
        Span::styled(
            format!(" {} ", steps::risk_label(plan.risk)),
            theme.risk(steps::risk_label(plan.risk)),
        ),
        Span::styled(" · Estimated ", theme.dim()),
        Span::raw(steps::seconds(plan.estimated_duration_secs)),
        Span::styled(" · Files affected: ", theme.dim()),
        Span::raw(files.len().to_string()),
    ];
    out.extend(wrap(&facts, width, &[], &[Span::raw("  ")]));
    if !files.is_empty() {
        let list = [Span::styled(files.join(", "), theme.code())];
        out.extend(wrap(&list, width, &[Span::raw("  ")], &[Span::raw("  ")]));
    }
}

/// One step of the plan: its status, description and facts, then its decision point with
/// the choice made, if any.
fn plan_step(
    plan: &TaskPlan,
    s: &atto_protocol::PlanStep,
    width: usize,
    theme: Theme,
    out: &mut Vec<Line<'static>>,
) {
    let number = format!("{}. ", s.number);
    let indent = " ".repeat(4 + text_width(&number));
    let mut spans = vec![
        Span::styled(
            format!("{} ", steps::glyph(s.status)),
            steps::style(s.status, theme),
        ),
        Span::styled(number, theme.user()),
        Span::styled(s.description.clone(), step_text(s.status, theme)),
    ];
    spans.extend(steps::facts(plan, s, theme));
    if s.status != StepStatus::Pending {
        spans.push(Span::styled(
            format!(" · {}", steps::word(s.status)),
            steps::style(s.status, theme),
        ));
    }
    out.extend(wrap(
        &spans,
        width,
        &[Span::raw("  ")],
        &[Span::raw(indent.clone())],
    ));
    if let Some(d) = &s.decision {
        let mut spans = vec![
            Span::styled("? ", theme.key()),
            Span::raw(format!("{} ", d.question)),
            Span::styled(format!("({})", d.options.join(" / ")), theme.dim()),
        ];
        if let Some(choice) = &d.choice {
            spans.push(Span::styled(format!(" → {choice}"), theme.ok()));
        }
        out.extend(wrap(
            &spans,
            width,
            &[Span::raw(indent.clone())],
            &[Span::raw(indent)],
        ));
    }
}

/// How a plan awaiting approval is refined, approved or rejected.
fn refine_hint(width: usize, theme: Theme, out: &mut Vec<Line<'static>>) {
    let spans = [
        Span::styled("Refine it in plain words (", theme.dim()),
        Span::styled("\"remove step 2\", \"merge 2 and 3\"", theme.code()),
        Span::styled("), then ", theme.dim()),
        Span::styled("/approve", theme.key()),
        Span::styled(" or ", theme.dim()),
        Span::styled("/reject", theme.key()),
        Span::styled(".", theme.dim()),
    ];
    out.extend(wrap(&spans, width, &[], &[]));
}

/// Description text: struck-through feel for skipped steps, plain otherwise.
fn step_text(status: StepStatus, theme: Theme) -> ratatui::style::Style {
    match status {
        StepStatus::Skipped => theme.dim(),
        _ => theme.text(),
    }
}

fn step(card: &StepCard, width: usize, theme: Theme, out: &mut Vec<Line<'static>>) {
    let state = steps::style(card.status, theme);
    let label = match card.total {
        Some(total) => format!("step {}/{total}", card.number),
        None => format!("step {}", card.number),
    };
    let mut head = vec![
        Span::styled(format!("{} ", steps::glyph(card.status)), state),
        Span::styled(label, theme.tool()),
        Span::raw(format!(" {}", card.description)),
        Span::styled(" · ", theme.dim()),
        Span::styled(
            match card.status {
                StepStatus::InProgress => "running…",
                other => steps::word(other),
            },
            state,
        ),
    ];
    if let Some(note) = &card.note {
        head.push(Span::styled(format!(" · {note}"), theme.warn()));
    }
    if let Some(used) = card.tokens {
        let budget = card
            .budget
            .map_or_else(String::new, |b| format!("/{}", tokens(b)));
        let over = card.budget.is_some_and(|b| used > b);
        head.push(Span::styled(
            format!(" · {}{budget} tokens", tokens(used)),
            if over { theme.warn() } else { theme.dim() },
        ));
    }
    // The checkpoint matters while the step runs and after it failed (`/restore N`).
    let restorable =
        matches!(card.status, StepStatus::InProgress | StepStatus::Failed) && card.note.is_none();
    if let Some(id) = card.checkpoint.filter(|_| restorable) {
        head.push(Span::styled(format!(" · checkpoint {id}"), theme.dim()));
    }
    out.extend(wrap(&head, width, &[], &[Span::raw("  ")]));
    let shown = if card.expanded {
        card.detail.len()
    } else {
        card.detail.len().min(DETAIL_FOLD)
    };
    let gutter = [Span::styled("  │ ", theme.marker())];
    for line in &card.detail[..shown] {
        let spans = [Span::styled(line.clone(), theme.dim())];
        out.extend(wrap(&spans, width, &gutter, &gutter));
    }
    let hidden = card.detail.len() - shown;
    if hidden > 0 {
        out.push(Line::from(Span::styled(
            format!("  … {hidden} more lines (Ctrl-O)"),
            theme.dim(),
        )));
    }
}

fn summary(
    status: TaskPlanStatus,
    outcomes: &[StepOutcome],
    width: usize,
    theme: Theme,
    out: &mut Vec<Line<'static>>,
) {
    let (word, style) = match status {
        TaskPlanStatus::Completed => ("completed", theme.ok()),
        TaskPlanStatus::Failed => ("failed", theme.error()),
        TaskPlanStatus::Cancelled => ("cancelled", theme.warn()),
        TaskPlanStatus::Rejected => ("rejected", theme.warn()),
        TaskPlanStatus::Running | TaskPlanStatus::AwaitingConfirmation => {
            ("unfinished", theme.warn())
        }
    };
    let count = |s: StepStatus| outcomes.iter().filter(|o| o.status == s).count();
    let mut head = vec![Span::styled(format!("■ plan {word}"), style)];
    for (status, label) in [
        (StepStatus::Completed, "done"),
        (StepStatus::Failed, "failed"),
        (StepStatus::Skipped, "skipped"),
        (StepStatus::Pending, "not run"),
    ] {
        let n = count(status);
        if n > 0 {
            head.push(Span::styled(format!(" · {n} {label}"), theme.dim()));
        }
    }
    out.extend(wrap(&head, width, &[], &[Span::raw("  ")]));
    let num_w = outcomes
        .iter()
        .map(|o| o.number.to_string().len())
        .max()
        .unwrap_or(1)
        .max(1);
    let row = |spans: Vec<Span<'static>>| clip(spans, width);
    out.push(row(vec![Span::styled(
        format!("  {:>num_w$}  {:<8} step", "#", "state"),
        theme.dim(),
    )]));
    for o in outcomes {
        let word = match o.status {
            StepStatus::Pending => "not run",
            other => steps::word(other),
        };
        let mut spans = vec![
            Span::raw(format!("  {:>num_w$}  ", o.number)),
            Span::styled(format!("{word:<8}"), steps::style(o.status, theme)),
            Span::raw(format!(" {}", o.description)),
        ];
        if let Some(result) = &o.result {
            let first = result.lines().next().unwrap_or("");
            spans.push(Span::styled(format!(" — {first}"), theme.dim()));
        }
        out.push(row(spans));
    }
}

/// One table row: spans cut to `width` columns, the last visible one ending with "…".
fn clip(spans: Vec<Span<'static>>, max: usize) -> Line<'static> {
    let mut used = 0;
    let mut kept = Vec::with_capacity(spans.len());
    for mut span in spans {
        let w = text_width(&span.content);
        if used + w <= max {
            used += w;
            kept.push(span);
            continue;
        }
        span.content = truncate(&span.content, max - used).into();
        kept.push(span);
        break;
    }
    Line::from(kept)
}
