//! Session objectives: one [`GoalBook`] serves both codewhale's `/goal` (a single current
//! objective with a token budget and pause / resume / complete / blocked / clear) and
//! attocode's `/goals` (a list: `/goals add "..."`, `/goals done N`). The
//! rules are on [`GoalBook`]; this module does no I/O and parses no commands.

use std::collections::BTreeSet;

use atto_protocol::{Goal, GoalStatus};

use super::now_ms;

/// Why a goal operation was refused. Every message is one line: what is wrong, that
/// nothing was changed, and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GoalError {
    /// There is no open goal to act on.
    #[error("there is no open goal; nothing was changed. Set a goal first.")]
    NoGoal,
    /// No open goal has this position.
    #[error("{}", no_such_goal(*position, *open))]
    NoSuchGoal {
        /// The position asked for.
        position: usize,
        /// How many open goals there are.
        open: usize,
    },
    /// The objective is empty.
    #[error("a goal needs an objective; no goal was set. Say what to achieve.")]
    EmptyObjective,
    /// The current goal's status does not allow the operation.
    #[error("{}", wrong_status(*status, action))]
    WrongStatus {
        /// Its status.
        status: GoalStatus,
        /// What was asked, as a past participle (`paused`, `resumed`, `blocked`).
        action: &'static str,
    },
    /// A budget-limited goal was resumed without room in its budget.
    #[error(
        "the current goal has used {used} tokens of its {budget}-token budget, so it was not \
         resumed. Raise its budget first."
    )]
    OverBudget {
        /// Tokens used.
        used: u64,
        /// Its budget.
        budget: u64,
    },
    /// Stored goals contradict each other.
    #[error(
        "the stored goals cannot be used: {0}; they were not loaded. Repair or delete those \
         rows with the sqlite3 tool, or start a new session."
    )]
    Stored(String),
}

fn no_such_goal(position: usize, open: usize) -> String {
    let range = match open {
        0 => "there are no open goals".to_owned(),
        1 => "there is only goal 1".to_owned(),
        n => format!("open goals are numbered 1 to {n}"),
    };
    format!(
        "there is no goal {position} ({range}); nothing was changed. List the goals to see \
         their numbers."
    )
}

fn wrong_status(status: GoalStatus, action: &str) -> String {
    let now = words(status);
    let already = matches!(
        (status, action),
        (GoalStatus::Active, "resumed")
            | (GoalStatus::Paused, "paused")
            | (GoalStatus::Blocked, "blocked")
    );
    if already {
        return format!("the current goal is {now} already; nothing was changed.");
    }
    let next = match status {
        GoalStatus::Active => "It is being pursued.",
        GoalStatus::Paused => "Resume it first.",
        GoalStatus::Blocked => "Resume it once it is unblocked.",
        GoalStatus::UsageLimited => "Resume it once the usage limit resets.",
        GoalStatus::BudgetLimited => "Raise its budget, then resume it.",
        GoalStatus::Complete => "Set a new goal.",
    };
    format!("the current goal is {now}, so it cannot be {action}; nothing was changed. {next}")
}

/// A status as a message says it.
fn words(status: GoalStatus) -> &'static str {
    match status {
        GoalStatus::UsageLimited => "usage-limited",
        GoalStatus::BudgetLimited => "budget-limited",
        other => other.as_str(),
    }
}

/// What to write to the store since the last [`GoalBook::take_changes`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GoalChanges {
    /// Goals added or changed, in creation order: save them.
    pub saved: Vec<Goal>,
    /// Ids of goals cleared: delete them.
    pub removed: Vec<String>,
}

/// A session's goals.
///
/// # Rules
///
/// - Goals are kept in the order they were created. The *open* goals (any status but
///   complete) form the `/goals` list, numbered 1, 2, 3 … in that order; `done N` completes
///   the N-th of them.
/// - The *current* goal is the newest open goal. `/goal pause|resume|complete|blocked|clear`
///   act on it; when it is completed or cleared, the next newest open goal becomes current.
/// - [`GoalBook::set`] (`/goal TEXT`) follows codewhale's single objective: the new goal is
///   active and every other active goal is paused — kept and listed, not lost, so `/goal
///   clear` or `/goal complete` on the new one leads back to it. [`GoalBook::add`]
///   (`/goals add`) adds an active goal beside the others, as attocode's list does.
/// - Usage is charged to every active goal: a goal's tokens and time are the work done
///   while it was being pursued. An active goal whose tokens reach its budget becomes
///   budget-limited, and resumes only once its budget is raised above what it used.
/// - Only an active goal can be paused; a paused, blocked, usage-limited or (within
///   budget) budget-limited goal can be resumed; any open goal can be blocked (unless it
///   is already), completed or cleared. Clearing removes the goal altogether.
#[derive(Debug, Clone, Default)]
pub struct GoalBook {
    /// In creation order, complete ones included.
    goals: Vec<Goal>,
    /// Ids changed since the last [`GoalBook::take_changes`].
    changed: BTreeSet<String>,
    /// Ids cleared since the last [`GoalBook::take_changes`].
    removed: Vec<String>,
}

impl GoalBook {
    /// An empty book.
    pub fn new() -> GoalBook {
        GoalBook::default()
    }

    /// Rebuilds the book from stored goals as the store returns them (newest first).
    /// Refuses an id used twice.
    pub fn from_goals(mut goals: Vec<Goal>) -> Result<GoalBook, GoalError> {
        // Newest first with ties newest first: reversed and sorted stably, creation order.
        goals.reverse();
        goals.sort_by_key(|g| g.created_at);
        let mut ids = BTreeSet::new();
        for g in &goals {
            if !ids.insert(g.id.as_str()) {
                return Err(GoalError::Stored(format!("id {} is used twice", g.id)));
            }
        }
        Ok(GoalBook {
            goals,
            ..GoalBook::default()
        })
    }

    /// Sets the objective (`/goal TEXT [--budget TOKENS]`): a new active goal that becomes
    /// current; every other active goal is paused.
    pub fn set(&mut self, objective: &str, token_budget: Option<u64>) -> Result<&Goal, GoalError> {
        let objective = checked(objective)?;
        let now = now_ms();
        for g in &mut self.goals {
            if g.status == GoalStatus::Active {
                g.status = GoalStatus::Paused;
                g.updated_at = now;
                self.changed.insert(g.id.clone());
            }
        }
        Ok(self.push(objective, token_budget, now))
    }

    /// Adds a goal to the list (`/goals add "..."`): active, beside the others, and current
    /// as the newest open goal.
    pub fn add(&mut self, objective: &str, token_budget: Option<u64>) -> Result<&Goal, GoalError> {
        let objective = checked(objective)?;
        Ok(self.push(objective, token_budget, now_ms()))
    }

    /// The goal `/goal` acts on: the newest open one.
    pub fn current(&self) -> Option<&Goal> {
        self.goals.iter().rev().find(|g| g.status.is_open())
    }

    /// The open goals in creation order (`/goals`); position N is `open()[N - 1]`.
    pub fn open(&self) -> Vec<&Goal> {
        self.goals.iter().filter(|g| g.status.is_open()).collect()
    }

    /// The goals being pursued, in creation order: what the model is shown as its work.
    pub fn active(&self) -> Vec<&Goal> {
        self.goals
            .iter()
            .filter(|g| g.status == GoalStatus::Active)
            .collect()
    }

    /// Every goal in creation order, complete ones included.
    pub fn list(&self) -> &[Goal] {
        &self.goals
    }

    /// Pauses the current goal (`/goal pause`); it must be active.
    pub fn pause(&mut self) -> Result<&Goal, GoalError> {
        let i = self.current_index()?;
        let status = self.goals[i].status;
        if status != GoalStatus::Active {
            return Err(GoalError::WrongStatus {
                status,
                action: "paused",
            });
        }
        Ok(self.set_status(i, GoalStatus::Paused))
    }

    /// Resumes the current goal (`/goal resume`). A budget-limited goal resumes only when
    /// its budget is above what it used.
    pub fn resume(&mut self) -> Result<&Goal, GoalError> {
        let i = self.current_index()?;
        let goal = &self.goals[i];
        match goal.status {
            GoalStatus::Paused | GoalStatus::Blocked | GoalStatus::UsageLimited => {}
            GoalStatus::BudgetLimited => {
                if let Some(budget) = goal.token_budget
                    && goal.tokens_used >= budget
                {
                    return Err(GoalError::OverBudget {
                        used: goal.tokens_used,
                        budget,
                    });
                }
            }
            status @ (GoalStatus::Active | GoalStatus::Complete) => {
                return Err(GoalError::WrongStatus {
                    status,
                    action: "resumed",
                });
            }
        }
        Ok(self.set_status(i, GoalStatus::Active))
    }

    /// Marks the current goal blocked (`/goal blocked`).
    pub fn block(&mut self) -> Result<&Goal, GoalError> {
        let i = self.current_index()?;
        let status = self.goals[i].status;
        if status == GoalStatus::Blocked {
            return Err(GoalError::WrongStatus {
                status,
                action: "blocked",
            });
        }
        Ok(self.set_status(i, GoalStatus::Blocked))
    }

    /// Marks the current goal complete (`/goal complete`); the next newest open goal
    /// becomes current.
    pub fn complete(&mut self) -> Result<&Goal, GoalError> {
        let i = self.current_index()?;
        Ok(self.set_status(i, GoalStatus::Complete))
    }

    /// Completes the open goal at 1-based `position` in [`GoalBook::open`]
    /// (`/goals done N`).
    pub fn done(&mut self, position: usize) -> Result<&Goal, GoalError> {
        let open: Vec<usize> = (0..self.goals.len())
            .filter(|&i| self.goals[i].status.is_open())
            .collect();
        let Some(&i) = position.checked_sub(1).and_then(|p| open.get(p)) else {
            return Err(GoalError::NoSuchGoal {
                position,
                open: open.len(),
            });
        };
        Ok(self.set_status(i, GoalStatus::Complete))
    }

    /// Removes the current goal altogether (`/goal clear`) and returns it.
    pub fn clear(&mut self) -> Result<Goal, GoalError> {
        let i = self.current_index()?;
        let goal = self.goals.remove(i);
        self.changed.remove(&goal.id);
        self.removed.push(goal.id.clone());
        Ok(goal)
    }

    /// Changes the current goal's token budget (`None`: no limit). An active goal that has
    /// already used the new budget becomes budget-limited; a budget-limited one stays so
    /// until resumed.
    pub fn set_budget(&mut self, token_budget: Option<u64>) -> Result<&Goal, GoalError> {
        let i = self.current_index()?;
        let goal = &mut self.goals[i];
        goal.token_budget = token_budget;
        goal.updated_at = now_ms();
        self.changed.insert(goal.id.clone());
        if goal.status == GoalStatus::Active && over(goal) {
            goal.status = GoalStatus::BudgetLimited;
        }
        Ok(&self.goals[i])
    }

    /// Charges a turn's tokens and time to every active goal. Returns the goals that reached
    /// their budget with it (now budget-limited).
    pub fn add_usage(&mut self, tokens: u64, time_ms: u64) -> Vec<&Goal> {
        let now = now_ms();
        let mut limited = Vec::new();
        for (i, g) in self.goals.iter_mut().enumerate() {
            if g.status != GoalStatus::Active {
                continue;
            }
            g.tokens_used = g.tokens_used.saturating_add(tokens);
            g.time_used_ms = g.time_used_ms.saturating_add(time_ms);
            g.updated_at = now;
            if over(g) {
                g.status = GoalStatus::BudgetLimited;
                limited.push(i);
            }
            self.changed.insert(g.id.clone());
        }
        limited.into_iter().map(|i| &self.goals[i]).collect()
    }

    /// Marks every active goal usage-limited: the provider's usage limit stops all work.
    /// Returns them.
    pub fn hit_usage_limit(&mut self) -> Vec<&Goal> {
        let active: Vec<usize> = (0..self.goals.len())
            .filter(|&i| self.goals[i].status == GoalStatus::Active)
            .collect();
        for &i in &active {
            self.set_status(i, GoalStatus::UsageLimited);
        }
        active.into_iter().map(|i| &self.goals[i]).collect()
    }

    /// What to write to the store since the last call.
    pub fn take_changes(&mut self) -> GoalChanges {
        let changed = std::mem::take(&mut self.changed);
        GoalChanges {
            saved: self
                .goals
                .iter()
                .filter(|g| changed.contains(&g.id))
                .cloned()
                .collect(),
            removed: std::mem::take(&mut self.removed),
        }
    }

    fn push(&mut self, objective: String, token_budget: Option<u64>, now: i64) -> &Goal {
        let goal = Goal {
            id: uuid::Uuid::now_v7().to_string(),
            objective,
            status: GoalStatus::Active,
            token_budget,
            tokens_used: 0,
            time_used_ms: 0,
            created_at: now,
            updated_at: now,
        };
        self.changed.insert(goal.id.clone());
        self.goals.push(goal);
        let last = self.goals.len() - 1;
        let goal = &mut self.goals[last];
        // A zero budget is spent before any work.
        if over(goal) {
            goal.status = GoalStatus::BudgetLimited;
        }
        &self.goals[last]
    }

    fn current_index(&self) -> Result<usize, GoalError> {
        self.goals
            .iter()
            .rposition(|g| g.status.is_open())
            .ok_or(GoalError::NoGoal)
    }

    fn set_status(&mut self, i: usize, status: GoalStatus) -> &Goal {
        let goal = &mut self.goals[i];
        goal.status = status;
        goal.updated_at = now_ms();
        self.changed.insert(goal.id.clone());
        &self.goals[i]
    }
}

/// Whether the goal has used its whole budget.
fn over(goal: &Goal) -> bool {
    goal.token_budget.is_some_and(|b| goal.tokens_used >= b)
}

fn checked(objective: &str) -> Result<String, GoalError> {
    let objective = objective.trim();
    if objective.is_empty() {
        return Err(GoalError::EmptyObjective);
    }
    Ok(objective.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    use GoalStatus::{Active, Blocked, BudgetLimited, Complete, Paused, UsageLimited};

    fn objectives(goals: &[&Goal]) -> Vec<String> {
        goals.iter().map(|g| g.objective.clone()).collect()
    }

    fn statuses(book: &GoalBook) -> Vec<GoalStatus> {
        book.list().iter().map(|g| g.status).collect()
    }

    #[test]
    fn setting_a_goal_pauses_the_active_one_and_keeps_it_listed() {
        let mut book = GoalBook::new();
        assert!(book.current().is_none());
        let first = book.set("  ship the parser ", Some(10_000)).unwrap();
        assert_eq!(
            (first.objective.as_str(), first.status),
            ("ship the parser", Active)
        );
        assert_eq!(first.token_budget, Some(10_000));
        book.set("fix the flaky test", None).unwrap();
        assert_eq!(statuses(&book), [Paused, Active]);
        assert_eq!(book.current().unwrap().objective, "fix the flaky test");
        assert_eq!(
            objectives(&book.open()),
            ["ship the parser", "fix the flaky test"]
        );
        assert_eq!(objectives(&book.active()), ["fix the flaky test"]);

        // Completing the new objective leads back to the paused one.
        book.complete().unwrap();
        assert_eq!(book.current().unwrap().objective, "ship the parser");
        assert_eq!(book.resume().unwrap().status, Active);
    }

    #[test]
    fn goals_added_to_the_list_stay_active_beside_each_other() {
        let mut book = GoalBook::new();
        for objective in ["docs", "tests", "release"] {
            book.add(objective, None).unwrap();
        }
        assert_eq!(objectives(&book.active()), ["docs", "tests", "release"]);
        assert_eq!(book.current().unwrap().objective, "release");
        // `/goals done 2` completes "tests"; positions close up.
        assert_eq!(book.done(2).unwrap().objective, "tests");
        assert_eq!(objectives(&book.open()), ["docs", "release"]);
        assert_eq!(book.done(2).unwrap().objective, "release");
        assert_eq!(book.current().unwrap().objective, "docs");
        assert_eq!(statuses(&book), [Active, Complete, Complete]);
        for position in [0, 2] {
            let err = book.done(position).unwrap_err();
            assert_eq!(err, GoalError::NoSuchGoal { position, open: 1 });
            assert!(err.to_string().contains("there is only goal 1"), "{err}");
        }
        book.done(1).unwrap();
        assert!(book.current().is_none());
        assert!(
            book.done(1)
                .unwrap_err()
                .to_string()
                .contains("there are no open goals")
        );
    }

    #[test]
    fn pause_resume_block_follow_the_status_rules() {
        let mut book = GoalBook::new();
        book.set("objective", None).unwrap();
        // (operation, status after, or the error's text)
        type Op = fn(&mut GoalBook) -> Result<GoalStatus, GoalError>;
        let pause: Op = |b| b.pause().map(|g| g.status);
        let resume: Op = |b| b.resume().map(|g| g.status);
        let block: Op = |b| b.block().map(|g| g.status);
        let steps: [(Op, Result<GoalStatus, &str>); 9] = [
            (
                resume,
                Err("the current goal is active already; nothing was changed."),
            ),
            (pause, Ok(Paused)),
            (
                pause,
                Err("the current goal is paused already; nothing was changed."),
            ),
            (resume, Ok(Active)),
            (block, Ok(Blocked)),
            (
                block,
                Err("the current goal is blocked already; nothing was changed."),
            ),
            (
                pause,
                Err(
                    "the current goal is blocked, so it cannot be paused; nothing was changed. \
                     Resume it once it is unblocked.",
                ),
            ),
            (resume, Ok(Active)),
            (pause, Ok(Paused)),
        ];
        for (i, (op, want)) in steps.into_iter().enumerate() {
            let got = op(&mut book).map_err(|e| e.to_string());
            assert_eq!(got, want.map_err(str::to_owned), "step {i}");
        }
        assert_eq!(
            book.block().unwrap().status,
            Blocked,
            "a paused goal can be blocked"
        );
        assert_eq!(book.complete().unwrap().status, Complete);
        for err in [
            book.pause().unwrap_err(),
            book.resume().unwrap_err(),
            book.block().unwrap_err(),
            book.complete().unwrap_err(),
            book.set_budget(None).unwrap_err(),
        ] {
            assert_eq!(err, GoalError::NoGoal);
        }
    }

    #[test]
    fn usage_is_charged_to_active_goals_until_the_budget_is_reached() {
        let mut book = GoalBook::new();
        book.add("paused one", None).unwrap();
        book.pause().unwrap();
        book.add("budgeted", Some(1000)).unwrap();
        book.add("unlimited", None).unwrap();
        assert!(book.add_usage(600, 2_000).is_empty());
        let limited = book.add_usage(400, 1_000);
        assert_eq!(objectives(&limited), ["budgeted"]);
        assert_eq!(statuses(&book), [Paused, BudgetLimited, Active]);
        let used: Vec<(u64, u64)> = book
            .list()
            .iter()
            .map(|g| (g.tokens_used, g.time_used_ms))
            .collect();
        assert_eq!(used, [(0, 0), (1000, 3_000), (1000, 3_000)]);
        // A budget-limited goal is no longer charged.
        book.add_usage(5, 5);
        assert_eq!(book.list()[1].tokens_used, 1000);
    }

    #[test]
    fn a_budget_limited_goal_resumes_only_with_room_in_its_budget() {
        let mut book = GoalBook::new();
        book.set("objective", Some(100)).unwrap();
        book.add_usage(150, 10);
        assert_eq!(book.current().unwrap().status, BudgetLimited);
        let err = book.resume().unwrap_err();
        assert_eq!(
            err,
            GoalError::OverBudget {
                used: 150,
                budget: 100
            }
        );
        assert!(
            err.to_string()
                .contains("used 150 tokens of its 100-token budget"),
            "{err}"
        );
        assert_eq!(book.set_budget(Some(150)).unwrap().status, BudgetLimited);
        assert!(book.resume().is_err(), "150 of 150 leaves no room");
        book.set_budget(Some(400)).unwrap();
        assert_eq!(book.resume().unwrap().status, Active);
        // Lowering the budget below what was used stops an active goal at once.
        assert_eq!(book.set_budget(Some(120)).unwrap().status, BudgetLimited);
        book.set_budget(None).unwrap();
        assert_eq!(book.resume().unwrap().status, Active);
        // A zero budget is spent from the start.
        assert_eq!(
            book.set("nothing to spend", Some(0)).unwrap().status,
            BudgetLimited
        );
    }

    #[test]
    fn a_usage_limit_stops_every_active_goal_until_resumed() {
        let mut book = GoalBook::new();
        book.add("one", None).unwrap();
        book.add("two", None).unwrap();
        book.pause().unwrap();
        assert_eq!(objectives(&book.hit_usage_limit()), ["one"]);
        assert_eq!(statuses(&book), [UsageLimited, Paused]);
        assert!(book.add_usage(10, 10).is_empty());
        assert_eq!(book.list()[0].tokens_used, 0);
        book.complete().unwrap();
        assert_eq!(book.resume().unwrap().status, Active);
    }

    #[test]
    fn clearing_removes_the_current_goal_and_changes_are_handed_out_once() {
        let mut book = GoalBook::new();
        book.set("keep", None).unwrap();
        let changes = book.take_changes();
        assert_eq!(
            objectives(&changes.saved.iter().collect::<Vec<_>>()),
            ["keep"]
        );
        assert!(book.take_changes().saved.is_empty());

        book.set("drop", None).unwrap();
        let dropped = book.clear().unwrap();
        assert_eq!(dropped.objective, "drop");
        assert_eq!(objectives(&book.open()), ["keep"]);
        let changes = book.take_changes();
        assert_eq!(changes.removed, [dropped.id]);
        let saved: Vec<(String, GoalStatus)> = changes
            .saved
            .iter()
            .map(|g| (g.objective.clone(), g.status))
            .collect();
        assert_eq!(
            saved,
            [("keep".to_owned(), Paused)],
            "the cleared goal is not saved"
        );
        book.clear().unwrap();
        assert_eq!(book.clear().unwrap_err(), GoalError::NoGoal);
        assert_eq!(
            book.set(" ", None).unwrap_err().to_string(),
            "a goal needs an objective; no goal was set. Say what to achieve."
        );
    }

    #[test]
    fn stored_goals_rebuild_the_same_book() {
        let mut book = GoalBook::new();
        book.add("first", None).unwrap();
        book.add("second", Some(50)).unwrap();
        book.done(1).unwrap();
        book.set("third", None).unwrap();
        // The store returns them newest first; equal times keep their saving order.
        let mut stored = book.list().to_vec();
        for g in &mut stored {
            g.created_at = 7;
        }
        let expected = stored.clone();
        stored.reverse();
        let back = GoalBook::from_goals(stored.clone()).unwrap();
        assert_eq!(back.list(), expected);
        assert_eq!(back.current().unwrap().objective, "third");

        stored.push(stored[0].clone());
        let err = GoalBook::from_goals(stored).unwrap_err();
        assert!(matches!(err, GoalError::Stored(_)), "{err:?}");
        assert!(err.to_string().contains("is used twice"), "{err}");
    }
}
