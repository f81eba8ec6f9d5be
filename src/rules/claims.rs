//! What an instruction claims about a subject with exclusive values: the
//! indentation, the quotes, semicolons, the package manager, the test
//! runner, the formatter, and "always X" / "never X".

use crate::rules::text::{content_words, normalize};

/// One claim of an instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Claim {
    /// What it is about (`indentation`, `package manager`, …).
    pub(super) subject: &'static str,
    /// The value it asks for (`tabs`, `4 spaces`, `pnpm`).
    pub(super) value: String,
    /// Whether it forbids the value rather than asks for it.
    pub(super) negative: bool,
}

impl Claim {
    /// Whether the two claims cannot both be followed: two different values
    /// asked for, or one value asked for and forbidden.
    pub(super) fn contradicts(&self, other: &Self) -> bool {
        if self.subject != other.subject {
            return false;
        }
        match (self.negative, other.negative) {
            // "Always X" beside "always Y" asks for both, which can be done.
            (false, false) if self.subject == ALWAYS_OR_NEVER => false,
            (false, false) => self.value != other.value,
            (true, true) => false,
            _ => self.value == other.value,
        }
    }

    /// The claim in words, for a message.
    pub(super) fn describe(&self) -> String {
        if self.negative {
            format!("not {}", self.value)
        } else {
            self.value.clone()
        }
    }
}

/// Tools of which a project uses one: naming two of a group is a
/// contradiction.
const GROUPS: &[(&str, &[&str])] = &[
    ("package manager", &["npm", "yarn", "pnpm", "bun"]),
    (
        "test runner",
        &[
            "jest", "vitest", "mocha", "ava", "pytest", "unittest", "nose",
        ],
    ),
    ("JavaScript formatter", &["prettier", "biome", "dprint"]),
    ("Python formatter", &["black", "yapf", "autopep8", "blue"]),
];

/// The subject of "always X" / "never X": only the same X asked for and
/// forbidden contradicts.
const ALWAYS_OR_NEVER: &str = "always or never";

/// Whether the words after a value forbid it: a verb and a negation
/// (`npm is not supported`, `yarn must never be used`, `bun isn't`), never
/// a bare `not` (`use npm, not yarn` asks for npm and forbids yarn).
fn forbidden_after(after: &[&str]) -> bool {
    match after {
        [first, ..] if matches!(*first, "isn" | "aren" | "wasn" | "shouldn" | "mustn") => true,
        [verb, negation, ..] => {
            matches!(
                *verb,
                "is" | "are" | "was" | "should" | "must" | "can" | "will" | "may"
            ) && matches!(*negation, "not" | "never" | "no")
        }
        _ => false,
    }
}

/// Words that forbid what follows within three words.
const NEGATIONS: &[&str] = &[
    "never", "not", "don", "dont", "avoid", "no", "without", "instead",
];

/// The claims of one instruction.
pub(super) fn claims_of(text: &str) -> Vec<Claim> {
    let normalized = normalize(text);
    let words: Vec<&str> = normalized.split(' ').collect();
    // "never npm", "not npm", and "npm is not supported", "npm isn't".
    let negated = |at: usize| {
        words[at.saturating_sub(3)..at]
            .iter()
            .any(|w| NEGATIONS.contains(w))
            || forbidden_after(&words[at + 1..])
    };
    let mut claims = Vec::new();
    for (subject, tools) in GROUPS {
        for (at, word) in words.iter().enumerate() {
            if tools.contains(word) {
                claims.push(Claim {
                    subject,
                    value: (*word).to_owned(),
                    negative: negated(at),
                });
            }
        }
    }
    let about_indentation = words.iter().any(|w| w.starts_with("indent"));
    for (at, word) in words.iter().enumerate() {
        if about_indentation && matches!(*word, "tab" | "tabs") {
            claims.push(Claim {
                subject: "indentation",
                value: "tabs".to_owned(),
                negative: negated(at),
            });
        }
        if about_indentation
            && matches!(*word, "space" | "spaces")
            && let Some(count) = at.checked_sub(1).and_then(|i| words[i].parse::<u32>().ok())
        {
            claims.push(Claim {
                subject: "indentation",
                value: format!("{count} spaces"),
                negative: negated(at - 1),
            });
        }
        if matches!(*word, "single" | "double")
            && words
                .get(at + 1)
                .is_some_and(|next| next.starts_with("quote"))
        {
            claims.push(Claim {
                subject: "quotes",
                value: format!("{word} quotes"),
                negative: negated(at),
            });
        }
        if word.starts_with("semicolon") {
            claims.push(Claim {
                subject: "semicolons",
                value: "semicolons".to_owned(),
                negative: negated(at),
            });
        }
    }
    if let Some((first, rest)) = normalized.split_once(' ')
        && matches!(first, "always" | "never")
    {
        claims.push(Claim {
            subject: ALWAYS_OR_NEVER,
            value: content_words(rest).join(" "),
            negative: first == "never",
        });
    }
    // One value per subject and polarity: "use pnpm (pnpm install)" is one
    // claim.
    claims.sort_by(|a, b| {
        a.subject
            .cmp(b.subject)
            .then(a.value.cmp(&b.value))
            .then(a.negative.cmp(&b.negative))
    });
    claims.dedup();
    claims
}
