//! IntentClassifier, the first stage: assigns a [`TaskClass`] to
//! an intent from keyword tables, with a confidence and the subject tokens the
//! selector matches against paths.
//!
//! Keywords match whole stemmed words (so "fix" matches "fixes" and "fixed" but not
//! "prefix"), and multi-word keywords match consecutive words. Each keyword is
//! either a *verb* that names the kind of work ("fix", "refactor") and is removed
//! from the subject, or a *noun* that names the kind of work and can also be the
//! subject ("error", "build", "readme"), which stays a subject token.

use serde::Serialize;

use crate::select::intent_text::{IntentText, Mention, Section};
use crate::select::stack_trace::TraceFrame;
use crate::select::terms::{is_stopword, split_words, stem};

/// The kind of task an intent asks for.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum TaskClass {
    /// Restructure code without changing behaviour.
    Refactor,
    /// Fix a defect.
    Bugfix,
    /// Add new behaviour.
    Feature,
    /// Write or change documentation.
    Docs,
    /// Write or change tests.
    Test,
    /// Anything else, or no keyword matched.
    General,
}

impl TaskClass {
    /// All classes, in the order used for tables.
    pub const ALL: [Self; 6] = [
        Self::Refactor,
        Self::Bugfix,
        Self::Feature,
        Self::Docs,
        Self::Test,
        Self::General,
    ];

    /// The lower-case name (`refactor`, `bugfix`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Refactor => "refactor",
            Self::Bugfix => "bugfix",
            Self::Feature => "feature",
            Self::Docs => "docs",
            Self::Test => "test",
            Self::General => "general",
        }
    }

    /// Parses the lower-case name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|class| class.as_str() == name)
    }

    /// Tie-break priority when two classes match the same number of keywords:
    /// lower wins. Docs and test keywords are specific ("readme", "unit test");
    /// feature keywords ("add", "new") are the most generic.
    fn priority(self) -> u8 {
        match self {
            Self::Docs => 0,
            Self::Test => 1,
            Self::Bugfix => 2,
            Self::Refactor => 3,
            Self::Feature => 4,
            Self::General => 5,
        }
    }
}

impl std::fmt::Display for TaskClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Names the work only; never a subject token.
    Verb,
    /// Names the work and may be the subject; stays a subject token.
    Noun,
}

use Role::{Noun, Verb};

/// The keyword tables: (class, keyword as written, role). Multi-word keywords are
/// matched as consecutive stemmed words.
const KEYWORDS: &[(TaskClass, &str, Role)] = &[
    (TaskClass::Refactor, "refactor", Verb),
    (TaskClass::Refactor, "restructure", Verb),
    (TaskClass::Refactor, "reorganize", Verb),
    (TaskClass::Refactor, "reorganise", Verb),
    (TaskClass::Refactor, "clean up", Verb),
    (TaskClass::Refactor, "cleanup", Verb),
    (TaskClass::Refactor, "simplify", Verb),
    (TaskClass::Refactor, "migrate", Verb),
    (TaskClass::Refactor, "extract", Verb),
    (TaskClass::Refactor, "rename", Verb),
    (TaskClass::Refactor, "dedupe", Verb),
    (TaskClass::Refactor, "deduplicate", Verb),
    (TaskClass::Refactor, "consolidate", Verb),
    (TaskClass::Refactor, "decouple", Verb),
    (TaskClass::Refactor, "move", Verb),
    (TaskClass::Refactor, "split", Noun),
    (TaskClass::Refactor, "inline", Noun),
    (TaskClass::Bugfix, "fix", Verb),
    (TaskClass::Bugfix, "bug", Noun),
    (TaskClass::Bugfix, "bugfix", Verb),
    (TaskClass::Bugfix, "broken", Verb),
    (TaskClass::Bugfix, "crash", Noun),
    (TaskClass::Bugfix, "repair", Verb),
    (TaskClass::Bugfix, "wrong", Verb),
    (TaskClass::Bugfix, "fail", Verb),
    (TaskClass::Bugfix, "regression", Noun),
    (TaskClass::Bugfix, "error", Noun),
    (TaskClass::Bugfix, "exception", Noun),
    (TaskClass::Bugfix, "issue", Noun),
    (TaskClass::Bugfix, "panic", Noun),
    (TaskClass::Bugfix, "incorrect", Verb),
    (TaskClass::Bugfix, "resolve", Verb),
    (TaskClass::Bugfix, "patch", Noun),
    (TaskClass::Feature, "add", Verb),
    (TaskClass::Feature, "create", Verb),
    (TaskClass::Feature, "implement", Verb),
    (TaskClass::Feature, "introduce", Verb),
    (TaskClass::Feature, "extend", Verb),
    (TaskClass::Feature, "enable", Verb),
    (TaskClass::Feature, "allow", Verb),
    (TaskClass::Feature, "new", Verb),
    (TaskClass::Feature, "feature", Noun),
    (TaskClass::Feature, "support", Noun),
    (TaskClass::Feature, "integrate", Verb),
    (TaskClass::Docs, "document", Verb),
    (TaskClass::Docs, "documentation", Noun),
    (TaskClass::Docs, "docs", Noun),
    (TaskClass::Docs, "readme", Noun),
    (TaskClass::Docs, "docstring", Noun),
    (TaskClass::Docs, "jsdoc", Noun),
    (TaskClass::Docs, "changelog", Noun),
    (TaskClass::Docs, "comment", Noun),
    (TaskClass::Docs, "typo", Noun),
    (TaskClass::Test, "test", Noun),
    (TaskClass::Test, "unit test", Noun),
    (TaskClass::Test, "integration test", Noun),
    (TaskClass::Test, "e2e", Noun),
    (TaskClass::Test, "spec", Noun),
    (TaskClass::Test, "coverage", Noun),
    (TaskClass::Test, "mock", Noun),
    (TaskClass::Test, "fixture", Noun),
    (TaskClass::Test, "assert", Noun),
    (TaskClass::Test, "snapshot", Noun),
];

/// The outcome of classifying an intent.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskClassification {
    /// The class assigned.
    pub task_class: TaskClass,
    /// Confidence in `[0, 1]`; 0 for [`TaskClass::General`] with no keyword.
    #[serde(serialize_with = "crate::rounded::serialize")]
    pub confidence: f64,
    /// The keywords of the winning class found in the intent, as written in the
    /// table, in the order they first appear in the intent.
    pub matched_keywords: Vec<String>,
    /// Subject tokens: the intent's words less stop words and verb keywords,
    /// lower-cased and stemmed, deduplicated, in intent order.
    pub subject_tokens: Vec<String>,
    /// For a long intent ([`IntentText::is_long`]), the weight of each subject
    /// token (same order): the weight of the strongest section it was written
    /// in ([`Section::weight`]), raised a little when repeated. Empty for a
    /// short intent, whose tokens weigh the same.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subject_weights: Vec<f64>,
    /// Names written in code form ([`IntentText::mentions`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mentions: Vec<Mention>,
    /// Frames of pasted stack traces ([`IntentText::frames`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<TraceFrame>,
    /// A short intent that states a change in words no class keyword
    /// knows ([`states_a_change`]): "prevent automatic environment variables
    /// from containing dashes". Such a task is about behaviour, as a bug fix
    /// or a feature is; a topic ("shell completion zsh script") or a question
    /// is not.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub states_a_change: bool,
}

/// Verbs that open a statement of a change to the code's behaviour, besides
/// the class keywords: the usual first words of commit
/// subjects ("Handle empty commands list", "prevent …", "Use …",
/// "Improved …"). Compared by stem, so any inflection counts. Not here:
/// verbs that open requests for an explanation or for prose ("show",
/// "help", "explain", "clarify", "mention", "describe") and "bump" (a
/// release, not a behaviour).
pub const CHANGE_VERBS: &[&str] = &[
    "accept",
    "adjust",
    "annotate",
    "apply",
    "avoid",
    "catch",
    "change",
    "check",
    "convert",
    "correct",
    "defer",
    "deprecate",
    "detect",
    "disable",
    "drop",
    "emit",
    "ensure",
    "escape",
    "expose",
    "forward",
    "handle",
    "hide",
    "honor",
    "honour",
    "ignore",
    "improve",
    "include",
    "infer",
    "keep",
    "limit",
    "normalise",
    "normalize",
    "optimise",
    "optimize",
    "pass",
    "preserve",
    "prevent",
    "propagate",
    "raise",
    "reduce",
    "reject",
    "remove",
    "replace",
    "reset",
    "respect",
    "restore",
    "return",
    "reuse",
    "revert",
    "rework",
    "rewrite",
    "skip",
    "sort",
    "speed",
    "stop",
    "strip",
    "switch",
    "throw",
    "treat",
    "trim",
    "unify",
    "update",
    "use",
    "validate",
    "warn",
    "wrap",
];

/// Whether a short `intent` states a change: it is not a question
/// ([`is_question`]) and one of [`CHANGE_VERBS`], in any inflection, is its
/// first word (past a conventional-commit prefix such as `perf:` or
/// `fix(hmr):`, and adverbs such as `correctly`) or follows one of
/// [`MODALS`].
pub fn states_a_change(intent: &str) -> bool {
    if is_question(intent) {
        return false;
    }
    let intent = intent.trim();
    // `type:` or `type(scope):` before the subject.
    let subject = match intent.split_once(':') {
        Some((head, rest))
            if !head.is_empty()
                && head.len() <= 24
                && head.chars().all(|c| {
                    c.is_alphanumeric() || matches!(c, '(' | ')' | '-' | '_' | '!' | '/')
                }) =>
        {
            rest
        }
        _ => intent,
    };
    // Adverbs ("correctly", "always") and the `t` of "shouldn't" are read
    // past.
    let words: Vec<String> = split_words(subject)
        .into_iter()
        .filter(|word| {
            let adverb = word.len() > 4 && word.ends_with("ly");
            !(adverb || matches!(word.as_str(), "t" | "always" | "never"))
        })
        .collect();
    let is_verb = |word: &String| CHANGE_VERB_STEMS.contains(&stem(word));
    // "Handle …", or "the Email field should reject …".
    words.first().is_some_and(is_verb)
        || words
            .windows(2)
            .any(|pair| MODALS.contains(&pair[0].as_str()) && is_verb(&pair[1]))
}

/// Words after which a verb of change states what the code must do ("the
/// Email field should reject trailing whitespace").
pub const MODALS: &[&str] = &["must", "mustn", "should", "shouldn"];

/// [`CHANGE_VERBS`] stemmed, made once.
static CHANGE_VERB_STEMS: std::sync::LazyLock<Vec<String>> =
    std::sync::LazyLock::new(|| CHANGE_VERBS.iter().map(|verb| stem(verb)).collect());

/// Words that open a question: an intent that starts with one (or holds a
/// `?`) asks to understand, not to change.
pub const QUESTION_OPENERS: &[&str] = &[
    "are", "can", "could", "describe", "did", "do", "does", "explain", "how", "is", "should",
    "what", "when", "where", "which", "who", "why", "would",
];

/// Whether `intent` is a question: it holds a `?` ("how does it work? thanks")
/// or opens with one of [`QUESTION_OPENERS`].
pub fn is_question(intent: &str) -> bool {
    intent.contains('?')
        || split_words(intent)
            .first()
            .is_some_and(|first| QUESTION_OPENERS.binary_search(&first.as_str()).is_ok())
}

/// The most subject tokens kept from a long intent (the strongest by section
/// weight, then first written).
pub const MAX_SUBJECT_TOKENS: usize = 256;

/// Classifies intents with the keyword tables above.
#[derive(Clone, Copy, Debug, Default)]
pub struct IntentClassifier;

struct KeywordHit {
    class: TaskClass,
    keyword: &'static str,
    role: Role,
    /// Index of the first intent word of the match.
    position: usize,
    /// Number of intent words the keyword spans.
    width: usize,
    /// How much the hit counts, by where it was written (1 in a short intent).
    scale: f64,
}

impl IntentClassifier {
    /// Classifies one intent.
    ///
    /// The class with most distinct keyword hits wins; ties go to the more specific
    /// class (docs, test, bugfix, refactor, feature). Confidence is
    /// `1 − 0.5^hits`, raised by 0.25 when the intent opens with one of the class's
    /// keywords ("fix …", "refactor …"), scaled by the winner's share of all hits,
    /// and capped at 1.
    ///
    /// # Examples
    ///
    /// ```
    /// use aic_stages::select::intent::{IntentClassifier, TaskClass};
    /// let c = IntentClassifier.classify("fix null check in user service");
    /// assert_eq!(c.task_class, TaskClass::Bugfix);
    /// assert_eq!(c.matched_keywords, ["fix"]);
    /// assert_eq!(c.subject_tokens, ["null", "check", "user", "servic"]);
    /// ```
    pub fn classify(&self, intent: &str) -> TaskClassification {
        let text = IntentText::parse(intent);
        if !text.is_long() {
            let mut classification = Self::classify_words(intent, None);
            classification.mentions = text.mentions;
            classification.states_a_change = states_a_change(intent);
            return classification;
        }
        // A long intent: the class comes from the title and the prose only,
        // the title's keywords counting double; the subject comes from every
        // section, weighted by where it was written.
        let title_words = split_words(&text.title).len();
        let mut classification = Self::classify_words(&text.task_text(), Some(title_words));
        let (tokens, weights) = weighted_subject(&text);
        classification.subject_tokens = tokens;
        classification.subject_weights = weights;
        classification.mentions = text.mentions;
        classification.frames = text.frames;
        classification
    }

    /// Classifies a run of words. With `title_words`, the text is a long
    /// intent's title (that many words) and prose: keywords of the title count
    /// double, and test and docs nouns of the prose count as little as other
    /// nouns, since a report names tests and documents it is not about.
    fn classify_words(intent: &str, title_words: Option<usize>) -> TaskClassification {
        let words: Vec<String> = split_words(intent);
        let stems: Vec<String> = words.iter().map(|w| stem(w)).collect();
        let mut hits = find_keywords(&words, &stems);
        if let Some(title_words) = title_words {
            // A report that names tests or documents only in its prose ("run
            // pylint over the following test case") is not about them: those
            // nouns alone never make it a test or docs task.
            for class in [TaskClass::Test, TaskClass::Docs] {
                let asked = hits
                    .iter()
                    .any(|h| h.class == class && (h.position < title_words || h.role == Verb));
                if !asked {
                    hits.retain(|h| h.class != class);
                }
            }
            for hit in &mut hits {
                hit.scale = if hit.position < title_words {
                    2.0
                } else if hit.role == Noun && matches!(hit.class, TaskClass::Test | TaskClass::Docs)
                {
                    0.5
                } else {
                    1.0
                };
            }
        }

        // Score each class: the weights of its distinct keywords, plus 0.25 when the
        // intent opens with one of them ("fix …", "add …").
        let mut best: Option<(TaskClass, f64, f64, bool)> = None;
        let mut total_score = 0.0;
        for class in TaskClass::ALL {
            let weight = keyword_weight_sum(&hits, class);
            if weight == 0.0 {
                continue;
            }
            let opens = hits.iter().any(|h| h.class == class && h.position == 0);
            let score = weight + if opens { 0.25 } else { 0.0 };
            total_score += score;
            best = match best {
                Some(current)
                    if current
                        .1
                        .total_cmp(&score)
                        .then_with(|| class.priority().cmp(&current.0.priority()))
                        .is_gt() =>
                {
                    Some(current)
                }
                _ => Some((class, score, weight, opens)),
            };
        }

        let mut verb_positions = vec![false; words.len()];
        for hit in hits.iter().filter(|h| h.role == Verb) {
            for flag in &mut verb_positions[hit.position..hit.position + hit.width] {
                *flag = true;
            }
        }
        let mut subject_tokens: Vec<String> = Vec::new();
        for (index, (word, stemmed)) in words.iter().zip(&stems).enumerate() {
            if verb_positions[index] || word.chars().count() < 2 || is_stopword(word) {
                continue;
            }
            if !subject_tokens.contains(stemmed) {
                subject_tokens.push(stemmed.clone());
            }
        }

        let Some((task_class, score, weight, opens)) = best else {
            return TaskClassification {
                task_class: TaskClass::General,
                confidence: 0.0,
                matched_keywords: Vec::new(),
                subject_tokens,
                subject_weights: Vec::new(),
                mentions: Vec::new(),
                frames: Vec::new(),
                states_a_change: false,
            };
        };
        let mut matched_keywords: Vec<String> = Vec::new();
        for hit in hits.iter().filter(|h| h.class == task_class) {
            if !matched_keywords.iter().any(|k| k == hit.keyword) {
                matched_keywords.push(hit.keyword.to_owned());
            }
        }
        let mut confidence = 1.0 - 0.5f64.powf(weight);
        if opens {
            confidence += 0.25;
        }
        confidence *= score / total_score;
        let confidence = (confidence.min(1.0) * 100.0).round() / 100.0;
        TaskClassification {
            task_class,
            confidence,
            matched_keywords,
            subject_tokens,
            subject_weights: Vec::new(),
            mentions: Vec::new(),
            frames: Vec::new(),
            states_a_change: false,
        }
    }
}

/// Whether `word` is an agent noun built on `keyword` ("resolver" on "resolve",
/// "fixer" on "fix"): it names a thing, not the work, and must not match.
fn is_agent_noun_of(word: &str, keyword: &str) -> bool {
    let agent = |w: &str| {
        ["er", "ers", "or", "ors"]
            .iter()
            .any(|suffix| w.ends_with(suffix))
    };
    word != keyword && agent(word) && !agent(keyword)
}

fn find_keywords(words: &[String], stems: &[String]) -> Vec<KeywordHit> {
    let mut hits = Vec::new();
    for &(class, keyword, role) in KEYWORDS {
        let keyword_stems: Vec<String> = split_words(keyword).iter().map(|w| stem(w)).collect();
        let width = keyword_stems.len();
        if width == 0 || width > stems.len() {
            continue;
        }
        for position in 0..=stems.len() - width {
            if stems[position..position + width] == keyword_stems[..]
                && !(width == 1 && is_agent_noun_of(&words[position], keyword))
            {
                hits.push(KeywordHit {
                    class,
                    keyword,
                    role,
                    position,
                    width,
                    scale: 1.0,
                });
            }
        }
    }
    // A multi-word keyword ("unit test") subsumes its single-word parts ("test").
    let spans: Vec<(usize, usize)> = hits
        .iter()
        .filter(|h| h.width > 1)
        .map(|h| (h.position, h.width))
        .collect();
    hits.retain(|h| {
        h.width > 1
            || !spans
                .iter()
                .any(|&(p, w)| h.position >= p && h.position < p + w)
    });
    hits.sort_by_key(|h| (h.position, h.keyword));
    hits
}

/// The weight of a keyword hit: verbs that name the work weigh 1; generic
/// creation verbs ("add", "create") 0.75, because "add a test" or "add docs" is
/// about the object; test and docs nouns 1, other nouns ("error", "bug",
/// "support") 0.5, because they often name the subject rather than the work.
fn keyword_weight(hit: &KeywordHit) -> f64 {
    let weight = match (hit.role, hit.class) {
        (Verb, TaskClass::Feature) => 0.75,
        (Verb, _) | (Noun, TaskClass::Test | TaskClass::Docs) => 1.0,
        (Noun, _) => 0.5,
    };
    weight * hit.scale
}

/// Sum of the weights of a class's distinct keywords in the intent (a
/// keyword written more than once counts at its heaviest).
fn keyword_weight_sum(hits: &[KeywordHit], class: TaskClass) -> f64 {
    let mut best: Vec<(&str, f64)> = Vec::new();
    for hit in hits.iter().filter(|h| h.class == class) {
        let weight = keyword_weight(hit);
        match best.iter_mut().find(|(keyword, _)| *keyword == hit.keyword) {
            Some((_, seen)) => *seen = seen.max(weight),
            None => best.push((hit.keyword, weight)),
        }
    }
    best.iter().map(|(_, weight)| weight).sum()
}

/// The subject of a long intent: the words of every section but trace lines
/// and markdown headings, less stop words and the class verbs, stemmed, each
/// once with the weight of the strongest section it appears in, × 1.2 per
/// repetition up to three. Digits-only words count only in the title and in
/// inline code (elsewhere they are versions, line numbers and counts). At most
/// [`MAX_SUBJECT_TOKENS`], the heaviest first written kept.
fn weighted_subject(text: &IntentText) -> (Vec<String>, Vec<f64>) {
    let verbs: Vec<String> = KEYWORDS
        .iter()
        .filter(|(_, keyword, role)| *role == Verb && !keyword.contains(' '))
        .map(|(_, keyword, _)| stem(keyword))
        .collect();
    let mut tokens: Vec<String> = Vec::new();
    let mut weights: Vec<(f64, u32)> = Vec::new();
    let mut positions: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (section, run) in text.sections() {
        for word in split_words(&run) {
            if word.chars().count() < 2 || is_stopword(&word) {
                continue;
            }
            if word.chars().all(|c| c.is_ascii_digit())
                && !matches!(section, Section::Title | Section::InlineCode)
            {
                continue;
            }
            let stemmed = stem(&word);
            if verbs.contains(&stemmed) {
                continue;
            }
            if let Some(&at) = positions.get(&stemmed) {
                let (weight, count): &mut (f64, u32) = &mut weights[at];
                *weight = weight.max(section.weight());
                *count += 1;
            } else {
                positions.insert(stemmed.clone(), tokens.len());
                tokens.push(stemmed);
                weights.push((section.weight(), 1));
            }
        }
    }
    let mut weighted: Vec<(usize, f64)> = weights
        .iter()
        .enumerate()
        .map(|(index, (weight, count))| {
            (
                index,
                weight * 1.2f64.powi(i32::try_from((*count).min(4)).unwrap_or(4) - 1),
            )
        })
        .collect();
    if weighted.len() > MAX_SUBJECT_TOKENS {
        weighted.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        weighted.truncate(MAX_SUBJECT_TOKENS);
        weighted.sort_by_key(|(index, _)| *index);
    }
    weighted
        .into_iter()
        .map(|(index, weight)| (tokens[index].clone(), (weight * 1000.0).round() / 1000.0))
        .unzip()
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

    #[test_case("fix null check in user service", TaskClass::Bugfix)]
    #[test_case("Fixes the crash when the config is empty", TaskClass::Bugfix)]
    #[test_case("refactor auth module to use JWT", TaskClass::Refactor)]
    #[test_case("add pagination to the users endpoint", TaskClass::Feature)]
    #[test_case("document the rule pack format in the README", TaskClass::Docs)]
    #[test_case("write unit tests for the tokenizer", TaskClass::Test)]
    #[test_case("how does the selector score files", TaskClass::General)]
    #[test_case("", TaskClass::General)]
    #[test_case("prefix handling in debug output", TaskClass::General)]
    #[test_case("refactor the npm resolver cache", TaskClass::Refactor)]
    #[test_case("rename the resolver module", TaskClass::Refactor)]
    #[test_case(
        "add an option to the dev server to disable the error overlay",
        TaskClass::Feature
    )]
    #[test_case("add integration test for login", TaskClass::Test)]
    #[test_case("fix failing test in the parser", TaskClass::Bugfix)]
    #[test_case("fix typo in the README", TaskClass::Docs)]
    fn classifies(intent: &str, expected: TaskClass) {
        assert_eq!(IntentClassifier.classify(intent).task_class, expected);
    }

    #[test]
    fn a_statement_of_a_change_is_told_from_a_topic_a_question_and_a_request_for_prose() {
        // `is_question` searches the openers by bisection.
        assert!(QUESTION_OPENERS.is_sorted());
        for change in [
            "prevent automatic environment variables from containing dashes",
            "Handle empty commands list",
            "Improved handling of dos/windows arguments greatly",
            "perf: Use only one ps exec to find a Chromium browser",
            "fix(hmr): respect the ignore setting",
            "correctly annotate return type of @command(cls=XYZ)",
            "Email field should reject trailing whitespace",
            "the jinja templater shouldn't always ignore undefined variables",
        ] {
            assert!(states_a_change(change), "{change}");
        }
        for other in [
            "shell completion zsh script",
            "tsql merge statement",
            "how does the cache expire entries",
            "handle empty lists? thanks",
            "please explain how environment variables are read for options",
            "show me where the envvar prefix is applied to options",
            "help me understand how shell completion works",
            "clarify the envvar section of the options page",
            "mention the hotUpdate hook on the plugin api page",
            "wording in the config reference for server.proxy",
            "bump version to 8.2.2 for release",
            "the options page should explain envvars",
        ] {
            assert!(!states_a_change(other), "{other}");
        }
        assert!(
            IntentClassifier
                .classify("handle empty commands list")
                .states_a_change
        );
        // Only a short intent is read so: a report is about behaviour anyway.
        assert!(
            !IntentClassifier
                .classify("where are options parsed?")
                .states_a_change
        );
    }

    #[test]
    fn null_check_worked_example() {
        let c = IntentClassifier.classify("fix null check in user service");
        assert_eq!(c.task_class, TaskClass::Bugfix);
        assert_eq!(c.matched_keywords, vec!["fix"]);
        assert!((c.confidence - 0.75).abs() < 1e-9);
    }

    #[test]
    fn general_has_zero_confidence_and_keeps_subject() {
        let c = IntentClassifier.classify("how does the selector score files");
        assert!(c.confidence.abs() < f64::EPSILON);
        assert_eq!(c.subject_tokens, vec!["selector", "score", "file"]);
    }

    #[test]
    fn noun_keywords_stay_in_subject() {
        let c = IntentClassifier.classify("fix error handling in the parser");
        assert_eq!(c.task_class, TaskClass::Bugfix);
        assert_eq!(c.matched_keywords, vec!["fix", "error"]);
        assert!(c.subject_tokens.contains(&"error".to_owned()));
        assert!(!c.subject_tokens.contains(&"fix".to_owned()));
    }

    #[test]
    fn multi_word_keyword_subsumes_its_parts() {
        let c = IntentClassifier.classify("add integration test for login");
        assert_eq!(c.task_class, TaskClass::Test);
        assert_eq!(c.matched_keywords, vec!["integration test"]);
    }

    #[test]
    fn mixed_signals_lower_confidence() {
        let clean = IntentClassifier.classify("fix the login bug");
        let mixed = IntentClassifier.classify("fix the login bug and add a test");
        assert_eq!(mixed.task_class, TaskClass::Bugfix);
        assert!(mixed.confidence < clean.confidence);
    }

    #[test]
    fn whole_words_only() {
        let c = IntentClassifier.classify("prefix debugger");
        assert_eq!(c.task_class, TaskClass::General);
        assert!(c.matched_keywords.is_empty());
    }
}
