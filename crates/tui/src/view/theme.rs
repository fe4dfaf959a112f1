//! Colours and emphasis for everything drawn, in one place, with a colourless variant for
//! `NO_COLOR` that keeps distinctions through bold, italic, reverse and underline.

use atto_protocol::{AgentMode, PermissionMode};
use ratatui::style::{Color, Modifier, Style};

/// The styles the view draws with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    color: bool,
}

impl Theme {
    /// The coloured theme.
    pub fn color() -> Theme {
        Theme { color: true }
    }

    /// The `NO_COLOR` theme: modifiers only.
    pub fn plain() -> Theme {
        Theme { color: false }
    }

    /// `plain` when `NO_COLOR` is set to anything non-empty (no-color.org), else `color`.
    pub fn from_env() -> Theme {
        match std::env::var_os("NO_COLOR") {
            Some(v) if !v.is_empty() => Theme::plain(),
            _ => Theme::color(),
        }
    }

    /// Whether colours are used.
    pub fn has_color(self) -> bool {
        self.color
    }

    fn pick(self, color: Style, plain: Style) -> Style {
        if self.color { color } else { plain }
    }

    fn fg(self, color: Color) -> Style {
        self.pick(Style::new().fg(color), Style::new())
    }

    /// Plain text.
    pub fn text(self) -> Style {
        Style::new()
    }
    /// Secondary text: hints, retries, folded counts.
    pub fn dim(self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }
    /// What the user typed.
    pub fn user(self) -> Style {
        self.pick(
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }
    /// Errors.
    pub fn error(self) -> Style {
        self.pick(
            Style::new().fg(Color::Red),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }
    /// Warnings.
    pub fn warn(self) -> Style {
        self.pick(
            Style::new().fg(Color::Yellow),
            Style::new().add_modifier(Modifier::ITALIC),
        )
    }
    /// Success marks.
    pub fn ok(self) -> Style {
        self.fg(Color::Green)
    }
    /// Headings in Markdown.
    pub fn heading(self) -> Style {
        self.pick(
            Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
        )
    }
    /// Inline code.
    pub fn code(self) -> Style {
        self.pick(
            Style::new().fg(Color::Yellow),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }
    /// Links.
    pub fn link(self) -> Style {
        self.fg(Color::Blue).add_modifier(Modifier::UNDERLINED)
    }
    /// Block-quote bars and list bullets.
    pub fn marker(self) -> Style {
        self.fg(Color::DarkGray)
    }
    /// Tool names on cards.
    pub fn tool(self) -> Style {
        self.pick(
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }
    /// Added diff lines.
    pub fn diff_add(self) -> Style {
        self.pick(
            Style::new().fg(Color::Green),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }
    /// Removed diff lines.
    pub fn diff_del(self) -> Style {
        self.pick(
            Style::new().fg(Color::Red),
            Style::new().add_modifier(Modifier::CROSSED_OUT),
        )
    }
    /// Diff hunk headers.
    pub fn diff_hunk(self) -> Style {
        self.pick(
            Style::new().fg(Color::Cyan),
            Style::new().add_modifier(Modifier::ITALIC),
        )
    }
    /// Keywords in code.
    pub fn keyword(self) -> Style {
        self.pick(
            Style::new().fg(Color::Magenta),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }
    /// String literals in code.
    pub fn string(self) -> Style {
        self.fg(Color::Green)
    }
    /// Comments in code.
    pub fn comment(self) -> Style {
        self.pick(
            Style::new().fg(Color::DarkGray),
            Style::new().add_modifier(Modifier::ITALIC),
        )
    }
    /// Numbers in code.
    pub fn number(self) -> Style {
        self.fg(Color::Cyan)
    }
    /// Thinking text.
    pub fn thinking(self) -> Style {
        Style::new().add_modifier(Modifier::DIM | Modifier::ITALIC)
    }
    /// Borders of overlays and panels.
    pub fn border(self) -> Style {
        self.fg(Color::DarkGray)
    }
    /// Keys in legends.
    pub fn key(self) -> Style {
        self.pick(
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
        )
    }
    /// The selected row of a menu.
    pub fn selected(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }

    /// The agent-mode badge: blue Plan as in the seeds; each mode its own colour, and YOLO
    /// (build with yolo permissions) red.
    pub fn mode_badge(self, mode: AgentMode, permission: PermissionMode) -> Style {
        let bg = match (mode, permission) {
            (AgentMode::Plan, _) => Color::Blue,
            (_, PermissionMode::Yolo) => Color::Red,
            (AgentMode::Build, _) => Color::Green,
            (AgentMode::Review, _) => Color::Magenta,
            (AgentMode::Debug, _) => Color::Yellow,
        };
        self.pick(
            Style::new()
                .fg(Color::Black)
                .bg(bg)
                .add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED),
        )
    }

    /// A risk label: green SAFE, yellow WARN, red BLOCK (and danger levels alike).
    pub fn risk(self, risk: &str) -> Style {
        let color = match risk.to_ascii_uppercase().as_str() {
            "SAFE" | "LOW" | "READ" => Color::Green,
            "BLOCK" | "HIGH" | "DANGEROUS" | "DESTRUCTIVE" => Color::Red,
            _ => Color::Yellow,
        };
        self.pick(
            Style::new()
                .fg(Color::Black)
                .bg(color)
                .add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED),
        )
    }
}
