//! The secret rules, as data: one TOML file per provider family under
//! `stages/rules/secrets/`, embedded with `include_str!`, parsed and compiled
//! once per process on first use.
//!
//! A rule file is a list of `[[rule]]` tables with these fields:
//!
//! | field | meaning |
//! | --- | --- |
//! | `id` | the rule id, unique, kebab-case; it names the finding and the placeholder |
//! | `message` | the finding message, without the matched text |
//! | `keywords` | literal strings one of which any match contains or is near: the Aho-Corasick prefilter |
//! | `any_case` | match the keywords ignoring ASCII case (default `false`) |
//! | `context_lines` | lines on each side of a keyword's line that are candidates too (default 0) |
//! | `regex` | the pattern run on a candidate line; a `value` group, when present, is what is redacted |
//! | `value` | instead of `regex`: the shape of a value assigned to a name holding a keyword (`heroku_api_key = "…"`); the assignment around it is built in ([`keyed_regex`]) |
//! | `check` | the test a match must pass besides the regex (default `token`, see [`Check`]) |
//! | `classes` | character classes a `token` value must hold: `any` (default), `digit-and-letter`, `digit-lower-upper` |
//! | `entropy` | the lowest Shannon entropy of the value, in bits per character (default 0; 3.0 for `keyed` rules) |
//! | `filler_ok` | the value may hold a run of six identical characters (default `false`) |
//! | `allow` | regexes: a value that any of them matches is not a secret (published examples) |
//! | `rank` | which of two overlapping matches wins: the lower (default 0 for provider rules) |
//! | `files` | globs of the file names the rule applies to (default: every file) |
//! | `pasted` | the rule applies only to text pasted into a request (the intent), never to a file (default `false`) |
//! | `whole_file` | the regex itself finds the candidates in one pass over the text, for a keyword too common to filter by (`s.`); the keywords are documentation (default `false`) |
//! | `positive`, `negative`, `sample_name`, `sample_path`, `covers` | the rule's samples and the reference kinds it covers, for the coverage test (see `docs/guard.md`); not used at run time |

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use regex::Regex;
use serde::Deserialize;

/// The entropy floor of a keyed rule that sets none, in bits per character.
const KEYED_ENTROPY: f64 = 3.0;

/// The built-in rule files: (file name, text).
pub(super) const RULE_FILES: &[(&str, &str)] = &[
    (
        "cloud.toml",
        include_str!("../../../rules/secrets/cloud.toml"),
    ),
    (
        "code-hosting.toml",
        include_str!("../../../rules/secrets/code-hosting.toml"),
    ),
    ("ai.toml", include_str!("../../../rules/secrets/ai.toml")),
    (
        "messaging.toml",
        include_str!("../../../rules/secrets/messaging.toml"),
    ),
    (
        "payments.toml",
        include_str!("../../../rules/secrets/payments.toml"),
    ),
    (
        "devops.toml",
        include_str!("../../../rules/secrets/devops.toml"),
    ),
    (
        "saas.toml",
        include_str!("../../../rules/secrets/saas.toml"),
    ),
    (
        "keys.toml",
        include_str!("../../../rules/secrets/keys.toml"),
    ),
    (
        "generic.toml",
        include_str!("../../../rules/secrets/generic.toml"),
    ),
];

/// The extra test a regex match must pass before it is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Check {
    /// A provider token: not filler (see [`is_filler`](super::plausibility::is_filler)),
    /// holding the rule's classes and entropy, matched by no `allow` regex.
    Token,
    /// A value assigned to a name holding one of the keywords: a token that ends
    /// at a delimiter.
    Keyed,
    /// An Azure storage key: a token that is not a published emulator key.
    AzureKey,
    /// The regex is enough.
    None,
    /// [`plausible_api_key`](super::plausibility::plausible_api_key).
    ApiKeyAssignment,
    /// [`plausible_secret_assignment`](super::plausibility::plausible_secret_assignment).
    SecretAssignment,
    /// A password in a URL's user information (`scheme://user:password@host`).
    UrlCredentials,
    /// An `Authorization: Basic` value that decodes to `user:password`.
    BasicAuth,
    /// A PEM or PGP private key; the redacted span is the whole key block.
    PrivateKey,
    /// A PuTTY private key file; the redacted span runs to its `Private-MAC` line.
    PuttyKey,
    /// A Kubernetes `Secret` manifest; every value under `data:` and
    /// `stringData:` is redacted.
    KubernetesSecret,
    /// A value assigned to a secret-like name in an env file: any value that
    /// is not empty, a placeholder or a well-known example.
    EnvFileSecret,
    /// A secret written in prose (`the password is …`):
    /// [`plausible_prose_secret`](super::plausibility::plausible_prose_secret)
    /// after trailing sentence punctuation is dropped; with a `bare` group
    /// (a password's name and the value with nothing between,
    /// `pass … to the login function`),
    /// [`plausible_bare_password`](super::pasted::plausible_bare_password).
    ProseSecret,
    /// A token random enough to be a credential, a few words after a
    /// secret's name (`here is the key: …`):
    /// [`plausible_nearby_secret`](super::pasted::plausible_nearby_secret).
    NearSecretName,
    /// A long token random enough to be a credential, with no name:
    /// [`plausible_random_token`](super::pasted::plausible_random_token).
    RandomToken,
}

/// Character classes a token must hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Classes {
    /// Any.
    #[default]
    Any,
    /// A digit and an ASCII letter.
    DigitAndLetter,
    /// A digit, a lower-case and an upper-case ASCII letter.
    DigitLowerUpper,
}

/// A rule as written in its file.
#[derive(Debug, Deserialize)]
#[cfg_attr(
    not(test),
    expect(
        dead_code,
        reason = "the sample fields are read by the coverage test only"
    )
)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleSpec {
    pub(crate) id: String,
    pub(crate) message: String,
    pub(crate) keywords: Vec<String>,
    #[serde(default)]
    pub(crate) any_case: bool,
    #[serde(default)]
    pub(crate) context_lines: u32,
    #[serde(default)]
    pub(crate) regex: Option<String>,
    #[serde(default)]
    pub(crate) value: Option<String>,
    #[serde(default = "token_check")]
    pub(crate) check: Check,
    #[serde(default)]
    pub(crate) classes: Classes,
    #[serde(default)]
    pub(crate) entropy: f64,
    #[serde(default)]
    pub(crate) filler_ok: bool,
    #[serde(default)]
    pub(crate) allow: Vec<String>,
    #[serde(default)]
    pub(crate) rank: u8,
    /// Positive samples (templates, see the coverage test).
    #[serde(default)]
    pub(crate) positive: Vec<String>,
    /// Negative samples.
    #[serde(default)]
    pub(crate) negative: Vec<String>,
    /// The name the samples are assigned to.
    #[serde(default)]
    pub(crate) sample_name: Option<String>,
    /// The rule kinds of the reference scanner (gitleaks) this rule covers, for
    /// the coverage report; the rule's own id when empty.
    #[serde(default)]
    pub(crate) covers: Vec<String>,
    /// When set, the samples are whole files tested at this path only.
    #[serde(default)]
    pub(crate) sample_path: Option<String>,
    /// When set, the rule applies only to files whose name matches one of
    /// these globs (ASCII case ignored).
    #[serde(default)]
    pub(crate) files: Vec<String>,
    /// When set, the rule applies only to pasted text (the intent), never to
    /// a file.
    #[serde(default)]
    pub(crate) pasted: bool,
    /// When set, the regex finds the candidate lines itself, in one pass
    /// over the text, instead of the keyword prefilter.
    #[serde(default)]
    pub(crate) whole_file: bool,
}

fn token_check() -> Check {
    Check::Token
}

/// A rule file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleFile {
    pub(crate) rule: Vec<RuleSpec>,
}

/// A compiled rule.
#[derive(Debug)]
pub(crate) struct SecretRule {
    pub(crate) id: String,
    pub(crate) message: String,
    pub(crate) keywords: Vec<String>,
    pub(crate) any_case: bool,
    pub(crate) context_lines: u32,
    /// The regex's source; compiled on first use ([`SecretRule::regex`]), so
    /// a process compiles only the regexes of rules whose keywords it meets.
    source: String,
    compiled: OnceLock<Regex>,
    pub(crate) check: Check,
    pub(crate) classes: Classes,
    /// Bits per character.
    pub(crate) entropy: f64,
    pub(crate) filler_ok: bool,
    pub(crate) allow: Vec<Regex>,
    pub(crate) rank: u8,
    /// The file names the rule applies to; `None` for every file.
    pub(crate) files: Option<globset::GlobSet>,
    /// Whether the rule applies to pasted text only, never to a file.
    pub(crate) pasted: bool,
    /// Whether the regex finds the candidates itself (see `whole_file`).
    pub(crate) whole_file: bool,
}

impl SecretRule {
    /// The rule's regex, compiled on first use.
    ///
    /// # Panics
    ///
    /// Never in practice: every built-in regex is compiled by the unit tests
    /// ([`load`] with `eager`).
    pub(crate) fn regex(&self) -> &Regex {
        crate::work::once(&self.compiled, || {
            Regex::new(&self.source).expect("the built-in secret regexes compile (unit tested)")
        })
    }

    /// Whether the rule applies to a file named `file_name`.
    pub(crate) fn applies_to(&self, file_name: &str) -> bool {
        self.files
            .as_ref()
            .is_none_or(|files| files.is_match(file_name))
    }
}

/// A rule file or rule that does not load.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RuleError {
    /// The file is not valid TOML or does not have the rule fields.
    #[error("invalid secret rule file `{file}`")]
    Parse {
        file: String,
        #[source]
        source: toml::de::Error,
    },
    /// A regex does not compile.
    #[error("invalid regex in secret rule `{id}` of `{file}`")]
    Regex {
        file: String,
        id: String,
        #[source]
        source: regex::Error,
    },
    /// The rule breaks a rule of the format.
    #[error("secret rule `{id}` of `{file}`: {problem}")]
    Invalid {
        file: String,
        id: String,
        problem: &'static str,
    },
    /// The keyword automaton does not build.
    #[error("the secret keywords do not build an automaton")]
    Keywords(#[source] aho_corasick::BuildError),
    /// A `files` glob is invalid.
    #[error("invalid `files` glob in secret rule `{id}` of `{file}`")]
    Glob {
        file: String,
        id: String,
        #[source]
        source: globset::Error,
    },
}

/// The compiled rules and their prefilters.
pub(crate) struct RuleSet {
    pub(crate) rules: Vec<SecretRule>,
    /// The keywords of the rules for every file: one pass over a file finds
    /// those matched ignoring ASCII case and those matched exactly.
    pub(crate) everywhere: Prefilter,
    /// The keywords of the rules limited to some file names (`files`), run
    /// only on a file one of them applies to: their keywords may be as
    /// common as `=`.
    pub(crate) restricted: Prefilter,
    /// The keywords of the rules for pasted text (`pasted`), run only on it.
    pub(crate) pasted: Prefilter,
    /// The rules whose regex runs over the whole text (`whole_file`), by index.
    pub(crate) whole_file: Vec<usize>,
}

/// An Aho-Corasick automaton over keywords, ignoring ASCII case, and the
/// rule each keyword belongs to.
pub(crate) struct Prefilter {
    automaton: AhoCorasick,
    /// The rule of each keyword, by keyword index.
    owners: Vec<usize>,
    /// Each keyword, when it must match in its own case.
    exact: Vec<Option<Box<str>>>,
}

impl Prefilter {
    /// The automaton over the keywords of the rules `select` picks. A
    /// keyword matches ignoring ASCII case when its rule says `any_case` or
    /// when `every_case`, else only as written.
    fn new(
        rules: &[SecretRule],
        every_case: bool,
        select: impl Fn(&SecretRule) -> bool,
    ) -> Result<Self, RuleError> {
        let mut keywords = Vec::new();
        let mut owners = Vec::new();
        let mut exact = Vec::new();
        for (index, rule) in rules.iter().enumerate().filter(|(_, rule)| select(rule)) {
            for keyword in &rule.keywords {
                keywords.push(keyword.as_str());
                owners.push(index);
                exact.push((!every_case && !rule.any_case).then(|| keyword.as_str().into()));
            }
        }
        // A DFA: with a few hundred keywords the default would pick an NFA,
        // which runs at half the speed over every byte of every file.
        let automaton = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .build(keywords)
            .map_err(RuleError::Keywords)?;
        Ok(Self {
            automaton,
            owners,
            exact,
        })
    }

    /// Every keyword found in `content`, overlapping ones too, as (byte
    /// offset, rule index), in order of where each keyword ends.
    pub(crate) fn hits<'a>(
        &'a self,
        content: &'a str,
    ) -> impl Iterator<Item = (usize, usize)> + 'a {
        self.automaton
            .find_overlapping_iter(content)
            .filter_map(move |hit| {
                let keyword = hit.pattern().as_usize();
                if let Some(Some(exact)) = self.exact.get(keyword)
                    && content.as_bytes().get(hit.range()) != Some(exact.as_bytes())
                {
                    return None;
                }
                Some((hit.start(), *self.owners.get(keyword)?))
            })
    }
}

/// The built-in rules, compiled on first use.
///
/// # Panics
///
/// Never in practice: the rule files are constants, loaded by the unit tests.
pub(crate) fn rules() -> &'static RuleSet {
    static RULES: OnceLock<RuleSet> = OnceLock::new();
    crate::work::once(&RULES, || {
        load(RULE_FILES, false).expect("the built-in secret rules load (unit tested)")
    })
}

/// Parses the rule specs of `files` (name, text), in order.
pub(crate) fn parse(files: &[(&str, &str)]) -> Result<Vec<(String, RuleSpec)>, RuleError> {
    let mut specs = Vec::new();
    for (file, text) in files {
        let parsed: RuleFile = toml::from_str(text).map_err(|source| RuleError::Parse {
            file: (*file).to_owned(),
            source,
        })?;
        specs.extend(
            parsed
                .rule
                .into_iter()
                .map(|rule| ((*file).to_owned(), rule)),
        );
    }
    Ok(specs)
}

/// Parses and compiles the rules of `files`: the keyword automata and the
/// allow lists now, each rule's regex now when `eager`, else on first use.
pub(crate) fn load(files: &[(&str, &str)], eager: bool) -> Result<RuleSet, RuleError> {
    let mut rules = Vec::new();
    for (file, spec) in parse(files)? {
        rules.push(compile(&file, spec, eager)?);
    }
    let mut ids: Vec<&str> = rules.iter().map(|rule| rule.id.as_str()).collect();
    ids.sort_unstable();
    if let Some(pair) = ids.windows(2).find(|pair| pair[0] == pair[1]) {
        return Err(RuleError::Invalid {
            file: String::new(),
            id: pair[0].to_owned(),
            problem: "the id is used twice",
        });
    }
    let everywhere = |rule: &SecretRule| rule.files.is_none() && !rule.pasted && !rule.whole_file;
    let whole_file = rules
        .iter()
        .enumerate()
        .filter(|(_, rule)| rule.whole_file)
        .map(|(index, _)| index)
        .collect();
    Ok(RuleSet {
        everywhere: Prefilter::new(&rules, false, everywhere)?,
        restricted: Prefilter::new(&rules, true, |rule| {
            rule.files.is_some() && !rule.whole_file
        })?,
        pasted: Prefilter::new(&rules, true, |rule| rule.pasted && !rule.whole_file)?,
        whole_file,
        rules,
    })
}

fn compile(file: &str, spec: RuleSpec, eager: bool) -> Result<SecretRule, RuleError> {
    let invalid = |problem| RuleError::Invalid {
        file: file.to_owned(),
        id: spec.id.clone(),
        problem,
    };
    if spec.keywords.iter().all(String::is_empty) {
        return Err(invalid("a rule needs at least one keyword"));
    }
    let source = match (&spec.regex, &spec.value) {
        (Some(regex), None) => regex.clone(),
        (None, Some(value)) => keyed_regex(&spec.keywords, value),
        _ => return Err(invalid("a rule has either `regex` or `value`")),
    };
    if spec.value.is_some() && spec.check != Check::Keyed {
        return Err(invalid("a `value` rule has `check = \"keyed\"`"));
    }
    if spec.pasted && !spec.files.is_empty() {
        return Err(invalid(
            "a `pasted` rule applies to no file, so it has no `files`",
        ));
    }
    let regex_error = |source| RuleError::Regex {
        file: file.to_owned(),
        id: spec.id.clone(),
        source,
    };
    let compiled = OnceLock::new();
    if eager {
        let _ = compiled.set(Regex::new(&source).map_err(regex_error)?);
    }
    let allow = spec
        .allow
        .iter()
        .map(|allow| Regex::new(allow))
        .collect::<Result<Vec<_>, _>>()
        .map_err(regex_error)?;
    let files = if spec.files.is_empty() {
        None
    } else {
        let mut set = globset::GlobSetBuilder::new();
        for pattern in &spec.files {
            let glob = globset::GlobBuilder::new(pattern)
                .case_insensitive(true)
                .build()
                .map_err(|source| RuleError::Glob {
                    file: file.to_owned(),
                    id: spec.id.clone(),
                    source,
                })?;
            set.add(glob);
        }
        Some(set.build().map_err(|source| RuleError::Glob {
            file: file.to_owned(),
            id: spec.id.clone(),
            source,
        })?)
    };
    Ok(SecretRule {
        files,
        id: spec.id,
        message: spec.message,
        keywords: spec.keywords,
        any_case: spec.any_case || spec.check == Check::Keyed,
        context_lines: spec.context_lines,
        source,
        compiled,
        check: spec.check,
        classes: spec.classes,
        entropy: if spec.check == Check::Keyed && spec.entropy == 0.0 {
            KEYED_ENTROPY
        } else {
            spec.entropy
        },
        filler_ok: spec.filler_ok,
        allow,
        rank: spec.rank,
        pasted: spec.pasted,
        whole_file: spec.whole_file,
    })
}

/// The regex of a keyed rule: a name that holds one of `keywords` (any case,
/// with up to 24 more name characters after it), an assignment (`=`, `:`, `:=`,
/// `=>`, `?=`, `,` between quotes), optional quotes, then the `value` pattern
/// in any case as the redacted group, ended by a character that cannot
/// continue a token.
pub(crate) fn keyed_regex(keywords: &[String], value: &str) -> String {
    let names: Vec<String> = keywords.iter().map(|k| regex::escape(k)).collect();
    format!(
        r#"(?i:{})[A-Za-z0-9_.\-]{{0,24}}["'`]?[ \t]{{0,3}}(?::{{1,3}}=|=>|\?=|=|:|,)[ \t]{{0,5}}["'`]?(?P<value>(?i:{value}))(?:[^A-Za-z0-9_\-+/=.]|$)"#,
        names.join("|")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_rules_load() {
        let set = load(RULE_FILES, true).unwrap();
        assert!(set.rules.len() > 100, "{}", set.rules.len());
        assert!(!set.whole_file.is_empty());
        for rule in &set.rules {
            assert!(
                rule.id
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{}",
                rule.id
            );
            assert!(!rule.message.contains('`'), "{}", rule.id);
        }
    }

    #[test]
    fn a_bad_rule_names_its_file_and_id() {
        let error = load(
            &[(
                "x.toml",
                "[[rule]]\nid = \"a\"\nmessage = \"m\"\nkeywords = [\"k\"]\nregex = \"(\"\n",
            )],
            true,
        )
        .err()
        .unwrap();
        assert_eq!(
            error.to_string(),
            "invalid regex in secret rule `a` of `x.toml`"
        );
        let error = load(&[("y.toml", "[[rule]]\nid = \"a\"\n")], true)
            .err()
            .unwrap();
        assert_eq!(error.to_string(), "invalid secret rule file `y.toml`");
        let error = load(
            &[(
                "z.toml",
                "[[rule]]\nid = \"a\"\nmessage = \"m\"\nkeywords = []\nregex = \"a\"\n",
            )],
            true,
        )
        .err()
        .unwrap();
        assert!(
            error.to_string().contains("at least one keyword"),
            "{error}"
        );
    }
}
