//! Credentials in file content: cloud keys, provider tokens, private keys,
//! credentials in URLs and headers, and secret-looking assignments, and their
//! redaction. The rules are data: `stages/rules/secrets/*.toml` (see
//! the `patterns` module for the format).

mod assignments;
#[cfg(test)]
mod corpus;
#[cfg(test)]
mod coverage;
mod detectors;
mod pasted;
pub(crate) mod patterns;
mod plausibility;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::sync::OnceLock;

use regex::Regex;

use crate::config::SecretAction;
use crate::guard::{GuardFinding, GuardFindingType, GuardScanner, GuardSeverity, LineIndex};
use crate::language::Language;
use crate::relative_path::RelativePath;

use assignments::Assignment;
use patterns::{Check, Classes, Prefilter, SecretRule, rules};
use plausibility::{
    PUBLIC_EMULATOR_KEYS, base64_lines_len, is_placeholder, plausible_api_key,
    plausible_prose_secret, plausible_secret_assignment, plausible_token, shannon_entropy,
};

/// The dashes around a PEM header or footer, which no assigned value contains.
const PEM_BOUNDARY: &str = "-----";

/// Base64 characters in a private key body line.
const BASE64_RUN: usize = 24;

/// How far after a private key header the footer is looked for, in bytes.
const PRIVATE_KEY_SPAN: usize = 64 * 1024;

/// Finds credentials in file content and redacts them.
///
/// ## What it does
///
/// Reports one [`GuardFindingType::Secret`] finding per line and rule that
/// matches one of the secret rules. The rules are data, one TOML file per
/// provider family under `stages/rules/secrets/` (the format is documented in the `patterns` module), about
/// 200 of them:
///
/// - provider token formats (cloud, code hosting and registries, AI providers,
///   messaging, payments, monitoring, SaaS), by their fixed prefixes (`ghp_`,
///   `xoxb-`, `sk_live_`, `hf_`, `whsec_`, `AGE-SECRET-KEY-1`, …) or, for formats
///   without one, as a value of the provider's shape assigned to a name that
///   holds the provider's name (`heroku_api_key = "<uuid>"`);
/// - private keys: PEM and PGP blocks in any container (also JSON strings with
///   `\n` escapes), PuTTY key files, age identities;
/// - credentials that are not one provider's: passwords in URLs of any scheme
///   (`postgres://user:pass@host`), `Authorization` headers, bearer tokens,
///   basic-auth values, `curl -u user:pass`, registry tokens in `.npmrc`, Docker
///   config `auth` values, Kubernetes `Secret` data;
/// - in text pasted into a request (the intent, [`redact_secrets`](crate::guard::redact_secrets))
///   only: a secret written in prose, `the password is …`, `my api key: …`,
///   `token=… in the deploy job`, `pass … to the login function` (rule
///   `prose-secret`); a token random enough to be a credential a few words
///   after a secret's name, `here is the key: …` (rule `prose-secret-nearby`);
///   a long random token with no name (rule `random-token`);
/// - assignments to secret-like names in any case and syntax (`=`, `:`, `:=`,
///   `=>`, JSON, YAML, TOML, INI, properties, env files, Dockerfile `ENV`/`ARG`,
///   XML elements, NuGet `<add key=… value=…>`): the name is split on `_`, `-`,
///   `.`, case changes and digits (`GITHUB_TOKEN2`, `ACCESSTOKEN`, `clientSecret`,
///   `db-password`), and the value must look random (length, classes, entropy).
///   Besides each rule's own regex, the assignment reader (the `assignments`
///   module) reads every candidate line by syntax (Go `var x string = …`,
///   PHP `.=`, make's `!=`/`::=`, a comma between arguments, an XML element
///   with its value on the next line, an ini inside a JSON string, …) and
///   runs the line's rules again over each pair written as `name = "value"`,
///   so every rule reads every syntax the reader knows.
///
/// A finding carries the rule id and the one-based line, never the matched text.
///
/// Detection works as gitleaks does: Aho-Corasick automata over every rule's
/// literal keywords (case-sensitive for token prefixes, ASCII case-insensitive
/// for names) find the candidate lines in one pass over the file, and only
/// those lines (and, for rules that ask for it, a few lines around them) are
/// run through the rule's regex. A file without a keyword costs one scan; the
/// cost stays linear in the file size.
///
/// When two matches overlap, the one of lower rank wins (provider rules 0,
/// headers and URLs 1, assignments 2, password assignments 3), then the earlier
/// and longer one, so each secret is reported once.
///
/// ## Why
///
/// A credential that reaches a prompt leaves the machine: it is sent to a model
/// provider and may be echoed back into code, logs or commits.
///
/// ## Example
///
/// ```text
/// # settings.yaml: finding `generic-api-key` on line 2
/// service:
///   api_key: 0123456789abcdefFAKE4567
/// ```
///
/// With `guard.secretAction: "redact"` (the default) the file stays and line 2
/// reads `  api_key: [REDACTED generic-api-key #1]`; with `"block"` the file
/// leaves the context.
///
/// Use instead: read the key from the environment or a secret manager, and commit a
/// placeholder (`api_key: ${API_KEY}`).
///
/// ## Options
///
/// `guard.secretAction` ([`SecretAction`]): [`SecretScanner::with_action`].
///
/// ## Known problems
///
/// To keep ordinary code from being flagged, the rules are tighter than their
/// textbook forms:
///
/// - Provider tokens made of filler (a run of six or more identical characters, as
///   in `ghp_xxxxxx…`) are documentation placeholders and are not reported, unless
///   the format itself has such a run (Dropbox, Twitter bearer tokens). Rules
///   set the character classes and the entropy a value needs, and an allow list.
/// - Keyed rules (a provider's name, then a value) need the name in the
///   assigned name, and a value of at least 3 bits of entropy per character.
/// - `azure-storage-key` and the assignments skip the published Azurite
///   emulator key.
/// - `generic-api-key`: an unquoted value must contain both a letter and a
///   digit and must not continue as an expression; in code files other than
///   shell scripts an unquoted value is an identifier, never a literal
///   (`api_key = get_api_key_from_env()`). A quoted value must end at its
///   closing quote or a token character, and a quoted value without digits made
///   of `_`/`-`-separated words is a name (`"OPENAI_API_KEY_FOR_PRODUCTION"`).
/// - `secret-assignment` and `password-assignment`: the name needs a word such
///   as `secret`, `token`, `password`, `passwd`, `pwd`, `credential`, `auth`
///   (or `pass` as its last word, or `key` after `api`, `private`, `access`, …,
///   or any `KEY` in an upper-case environment-style name) and none such as
///   `public`, `id`, `url`, `path`, `file`, `hash`, `test`, `example` or `max`.
///   A token value has 16 or more characters with a letter and a digit and at
///   least 3.3 bits of entropy per character; a password value 8 or more with a
///   letter and a digit or symbol, and is not a well-known example
///   (`password123`, `P4$$word`, `changeit`, `foobar`). Neither is a path, a
///   URL, a slug of words and numbers (`v2-user-profile-2024`), a version
///   (`npm:^1.0.0`), an expression (`a.b.c`, a call), an interpolation
///   (`${…}`, `{{…}}`, `%(…)s`, `{name}`) or base64 of an example
///   (`username:password`). In code files other than shell scripts only quoted
///   literals count, and an unquoted value must end its line (`PASS: sha3-256
///   roundtrip` is prose).
/// - `url-credentials`, `basic-auth`, `curl-auth-user`: the password has six
///   or more characters of two classes or more and is not an example
///   (`user:pass@`, `foo:bar@`, `${DB_PASSWORD}`, `%s`).
/// - Placeholders are not secrets: one repeated character, a value containing
///   `xxxx`, `****`, `your`, `placeholder`, `changeme`, `replace_me`,
///   `redacted`, `dummy`, `insert`, `<`, `${` or `{{`, or a value holding
///   `example` as a word of its own (`my-example-token`, `exampleToken`,
///   `…7EXAMPLE`) or ending in `EXAMPLE`/`EXAMPLEKEY` as AWS's documented keys
///   do. `example` glued inside a random value does not make it a placeholder.
/// - A `private-key` header is a key only when a base64 run of 24 or more
///   characters follows it before its footer: in a code file, a header that ends a
///   string literal (`"-----BEGIN RSA PRIVATE KEY-----"`, optionally after a `\n`
///   escape) is a constant of a PEM parser. The redacted span runs from the header
///   to the matching `-----END …-----` footer (or, without one, through the base64
///   lines that follow), so a redacted file has fewer lines.
/// - A Kubernetes `Secret` is recognised in YAML (`kind: Secret`), not in JSON;
///   a `data:` value whose base64 decodes to a placeholder or a well-known
///   example password is left alone.
/// - Tokens that name themselves are found under any name or none. Where the
///   prefix is too short to say much, the rest must: a Twilio API key sid is
///   `SK` and 32 lower-case hex digits, not a counting run (`0123456789abcdef`);
///   a legacy Vault token is `s.` and exactly 24 letters and digits of both
///   cases with a digit and at least 3.5 bits of entropy per character, not
///   followed by `.`, `-` or `(` (a dotted name or a call); a Facebook app
///   access token is a 15- or 16-digit app id, `|` (or `%7C`) and 27 to 40
///   name characters with at least 3.5 bits per character.
/// - `prose-secret` runs on pasted text only: in a repository, `the password
///   is …` is documentation far more often than a leak. It needs the name
///   (`password`, `passwd`, `passphrase`, `pwd`, `secret`, `token`, `api key`,
///   `access key`, …, alone or as the last word of a longer name, `for`/`of`
///   and up to three words after it), then `is`, `was`, `=` or `:`, then a value
///   that looks like one: 8 characters or more once trailing sentence
///   punctuation is dropped, a letter with a digit or a symbol (or upper- and
///   lower-case letters with high entropy), and none of a placeholder, a
///   well-known example password, a slug of words (`case-sensitive`,
///   `OPENAI_API_KEY`), a path, a URL, a variable (`$TOKEN`) or code. So "the
///   password field is empty" and "reset the password" are left alone. A
///   password's name followed by the value with nothing between (`pass … to
///   the login function`) asks more of the value: three letters, a symbol
///   other than `_`, `-`, `.` or letters and digits that change class often,
///   and not a keyword argument (`dtype=float32`), a dotted name
///   (`np.float64`), a path, an e-mail address, a hex number or a key chord
///   (`Ctrl+Shift+P`).
/// - `prose-secret-nearby` and `random-token` (pasted text only) judge a token
///   of the base64 alphabets by its shape: 24 characters or more (40 with no
///   name), upper- and lower-case letters and digits, not hex (commit ids,
///   hashes, UUIDs), not a slug, a snake-case name, filler, a placeholder, a
///   hash in SRI form (`sha512-…`) or base64 of ordinary text, an entropy
///   floor, and a randomness score: letters and digits that change class
///   often, few runs that read as words. A random value of 24 characters
///   fails the score about once in 30, of 40 about once in 100; camel-case
///   names fail it. The token must stand apart: not in a dotted name, a file
///   name, a path after a host, an e-mail address, a URL (except a query
///   value named as a secret, `?access_token=…`, for `prose-secret-nearby`),
///   after a hash's algorithm (`SHA256:…`, `h1:…`), after `ssh-ed25519` or in
///   a certificate. `prose-secret-nearby` needs a secret's name (`key`,
///   `secret`, `token`, `password`, `pass`, `pwd`, `credential`, …) at most
///   six words before, in the same sentence, with no hash's name between
///   (`hash`, `fingerprint`, `commit`) and not named as something else
///   (`public key`, `cache key`, `primary key`, `KeyError`, `key_id`).
///
/// The coverage of the rules is measured by their samples; see `docs/guard.md`.
pub struct SecretScanner {
    action: SecretAction,
}

/// A base64 run long enough to be a key body line.
fn key_body() -> &'static Regex {
    static KEY_BODY: OnceLock<Regex> = OnceLock::new();
    crate::work::once(&KEY_BODY, || {
        Regex::new(&format!("[A-Za-z0-9+/]{{{BASE64_RUN},}}"))
            .expect("the key body pattern is a valid regex")
    })
}

/// One secret found in a file: never its text, only where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SecretMatch {
    /// Index of the rule in [`rules`].
    pattern: usize,
    /// One-based line of the start of the match.
    line: u32,
    /// Byte range of the redacted part (the value of an assignment, the whole
    /// block of a private key).
    span: Range<usize>,
}

/// What [`SecretScanner::scan_and_redact`] found in one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SecretScan {
    /// One finding per line and pattern, sorted.
    pub findings: Vec<GuardFinding>,
    /// For [`SecretAction::Redact`], the content with every secret replaced by its
    /// placeholder; `None` when nothing was found or the action is
    /// [`SecretAction::Block`].
    pub redacted: Option<String>,
}

impl SecretScanner {
    /// Compiles the prefilters and the patterns, with [`SecretAction::Block`]: the
    /// findings block the file. Use [`SecretScanner::with_action`] for redaction.
    ///
    /// # Panics
    ///
    /// Never in practice: the rules are constants, compiled by the unit tests on
    /// first use.
    pub fn new() -> Self {
        Self::with_action(SecretAction::Block)
    }

    /// Compiles the scanner for `guard.secretAction`: with
    /// [`SecretAction::Redact`] the findings are [`GuardSeverity::Warn`] (the file
    /// stays, redacted), with [`SecretAction::Block`] they are
    /// [`GuardSeverity::Block`].
    ///
    /// # Panics
    ///
    /// Never in practice: the rules are constants, compiled by the unit tests on
    /// first use.
    pub fn with_action(action: SecretAction) -> Self {
        Self { action }
    }

    /// The action this scanner was built for.
    pub fn action(&self) -> SecretAction {
        self.action
    }

    /// Scans `content` and, for [`SecretAction::Redact`], redacts it.
    ///
    /// Each secret is replaced by `[REDACTED <pattern id> #<n>]`, where `n` numbers
    /// the distinct secret values of the file from 1 in order of first appearance:
    /// the same value twice gets the same number, whatever pattern found it. Only
    /// the matched value is replaced (for an assignment, the value after `=`; for a
    /// private key, the block from header to footer); every other byte is kept. In
    /// redact mode each finding's message names its placeholders.
    ///
    /// Scanning the redacted text again finds nothing, except where a redacted
    /// multi-line private key brings text from both of its sides onto one line.
    ///
    /// # Examples
    ///
    /// ```
    /// use aic_stages::config::SecretAction;
    /// use aic_stages::guard::SecretScanner;
    /// use aic_stages::language::Language;
    /// use aic_stages::relative_path::RelativePath;
    ///
    /// let scanner = SecretScanner::with_action(SecretAction::Redact);
    /// let path = RelativePath::new("deploy.sh").unwrap();
    /// let key = ["AKIA", "IOSFODNN7", "FAKE123"].concat();
    /// let scan = scanner.scan_and_redact(&path, Language::Shell, &format!("export A={key} B={key}\n"));
    /// assert_eq!(
    ///     scan.redacted.as_deref(),
    ///     Some("export A=[REDACTED aws-access-key #1] B=[REDACTED aws-access-key #1]\n")
    /// );
    /// assert_eq!(scan.findings[0].line, Some(1));
    /// ```
    pub fn scan_and_redact(
        &self,
        path: &RelativePath,
        language: Language,
        content: &str,
    ) -> SecretScan {
        self.scan_and_redact_from(path, language, content, Origin::File)
    }

    /// [`SecretScanner::scan_and_redact`] for text pasted into a request (an
    /// intent) rather than read from a file, under the pseudo path `path`: the
    /// rules for pasted text (`prose-secret`) run too.
    pub(crate) fn scan_and_redact_pasted(&self, path: &RelativePath, text: &str) -> SecretScan {
        self.scan_and_redact_from(path, Language::Unknown, text, Origin::Pasted)
    }

    fn scan_and_redact_from(
        &self,
        path: &RelativePath,
        language: Language,
        content: &str,
        origin: Origin,
    ) -> SecretScan {
        let matches = Self::find(path, language, content, origin);
        if matches.is_empty() {
            return SecretScan::default();
        }
        let (redacted, numbers) = redact(content, &matches);
        let (severity, redacted) = match self.action {
            SecretAction::Redact => (GuardSeverity::Warn, Some(redacted)),
            SecretAction::Block => (GuardSeverity::Block, None),
        };
        let mut by_line: BTreeMap<(u32, usize), BTreeSet<usize>> = BTreeMap::new();
        for (found, number) in matches.iter().zip(&numbers) {
            by_line
                .entry((found.line, found.pattern))
                .or_default()
                .insert(*number);
        }
        let findings = by_line
            .into_iter()
            .filter_map(|((line, index), numbers)| {
                let pattern = rules().rules.get(index)?;
                let message = match self.action {
                    SecretAction::Block => pattern.message.clone(),
                    SecretAction::Redact => {
                        let placeholders: Vec<String> = numbers
                            .iter()
                            .map(|number| format!("`{}`", placeholder(&pattern.id, *number)))
                            .collect();
                        format!(
                            "{}, replaced by {}",
                            pattern.message,
                            placeholders.join(", ")
                        )
                    }
                };
                Some(GuardFinding {
                    severity,
                    finding_type: GuardFindingType::Secret,
                    file: path.clone(),
                    line: Some(line),
                    message,
                    pattern: Some(pattern.id.clone()),
                })
            })
            .collect();
        SecretScan { findings, redacted }
    }

    /// Every secret in `content`, without overlaps, in order of position.
    fn find(
        path: &RelativePath,
        language: Language,
        content: &str,
        origin: Origin,
    ) -> Vec<SecretMatch> {
        let set = rules();
        let file_name = path.file_name();
        let pasted = origin == Origin::Pasted;
        let applies: Vec<bool> = set
            .rules
            .iter()
            .map(|rule| rule.applies_to(file_name) && (pasted || !rule.pasted))
            .collect();
        // A keyword inside a placeholder of an earlier redaction
        // (`[REDACTED twilio-key #1]`) is not evidence of a secret.
        let in_placeholder = |start: usize| {
            content
                .get(..start)
                .is_some_and(|before| before.ends_with(PLACEHOLDER_OPENING))
        };
        let restricted = set
            .rules
            .iter()
            .zip(&applies)
            .any(|(rule, applies)| rule.files.is_some() && *applies);
        let mut prefilters: Vec<&Prefilter> = vec![&set.everywhere];
        if restricted {
            prefilters.push(&set.restricted);
        }
        if pasted {
            prefilters.push(&set.pasted);
        }
        // Rules whose keyword is too common to filter by (`s.`) find their
        // candidates with their own regex, in one pass over the text.
        let scanned = set.whole_file.iter().flat_map(|&index| {
            let applies = applies.get(index).copied().unwrap_or(false);
            set.rules
                .get(index)
                .filter(|_| applies)
                .into_iter()
                .flat_map(|rule| rule.regex().find_iter(content))
                .map(move |found| (found.start(), index))
        });
        let mut hits = prefilters
            .iter()
            .flat_map(|prefilter| prefilter.hits(content))
            .chain(scanned)
            .filter(|&(start, _)| !in_placeholder(start))
            .filter(|&(_, index)| applies.get(index).copied().unwrap_or(false))
            .peekable();
        if hits.peek().is_none() {
            return Vec::new();
        }
        let lines = LineIndex::new(content);
        let last_line = lines.line_count();
        let mut candidates: BTreeSet<(u32, usize)> = BTreeSet::new();
        for (offset, index) in hits {
            let line = lines.line_number(offset);
            let spread = set.rules.get(index).map_or(0, |rule| rule.context_lines);
            let first = line.saturating_sub(spread).max(1);
            let last = line.saturating_add(spread).min(last_line);
            for candidate in first..=last {
                candidates.insert((candidate, index));
            }
        }
        let mut found = Vec::new();
        for &(line, index) in &candidates {
            Self::find_on_line(content, &lines, line, index, language, &mut found);
        }
        // The same rules again over the line's assignments, each written as
        // `name = "value"`: a rule written for one syntax reads them all.
        let mut read: BTreeMap<u32, Vec<Assignment>> = BTreeMap::new();
        for &(line, index) in &candidates {
            if !set.rules.get(index).is_some_and(reads_assignments) {
                continue;
            }
            // In code only a quoted value counts, so a line without a quote
            // has nothing to read.
            let pairs = read.entry(line).or_insert_with(|| {
                let quoted = lines.line(line).contains(['"', '\'', '`']);
                if quoted || plausibility::literal_allowed(language) {
                    assignments::read(&lines, line)
                } else {
                    Vec::new()
                }
            });
            for pair in pairs.iter() {
                let Some(rule) = set.rules.get(index) else {
                    continue;
                };
                let value = pair.value.clone();
                // A value the line's own match already covers, or a pair
                // without the rule's keyword, has nothing new to say.
                let covered = found.iter().any(|m| {
                    m.pattern == index && m.span.start < value.end && value.start < m.span.end
                });
                // In code an unquoted value is an identifier or an
                // expression, never a literal.
                let literal = pair.quoted || plausibility::literal_allowed(language);
                if value.len() >= MIN_ASSIGNED
                    && literal
                    && !covered
                    && names_keyword(rule, content, pair)
                {
                    Self::find_in_assignment(content, &lines, index, language, pair, &mut found);
                }
            }
        }
        resolve_overlaps(found)
    }

    /// Appends the matches of rule `index` in one assignment, written as
    /// `name = "value"` (or `name = value` when it was not quoted); only a
    /// match inside the value counts.
    fn find_in_assignment(
        content: &str,
        lines: &LineIndex<'_>,
        index: usize,
        language: Language,
        pair: &Assignment,
        found: &mut Vec<SecretMatch>,
    ) {
        let (Some(name), Some(value)) = (
            pair.label.or_else(|| content.get(pair.name.clone())),
            content.get(pair.value.clone()),
        ) else {
            return;
        };
        let quote = if pair.quoted { "\"" } else { "" };
        let text = format!("{name} = {quote}{value}{quote}");
        let offset = name.len() + 3 + quote.len();
        let place = |span: Range<usize>| {
            (span.start >= offset && span.end <= offset + value.len()).then(|| {
                pair.value.start + span.start - offset..pair.value.start + span.end - offset
            })
        };
        Self::find_in_text(content, lines, index, language, &text, &place, found);
    }

    /// Appends the matches of rule `index` on one-based `line` that pass its
    /// check.
    fn find_on_line(
        content: &str,
        lines: &LineIndex<'_>,
        line: u32,
        index: usize,
        language: Language,
        found: &mut Vec<SecretMatch>,
    ) {
        let range = lines.line_range(line);
        let text = lines.line(line);
        let place = |span: Range<usize>| Some(range.start + span.start..range.start + span.end);
        Self::find_in_text(content, lines, index, language, text, &place, found);
    }

    /// Appends the matches of rule `index` in `text` that pass its check;
    /// `place` maps a range of `text` to its range in `content` (`None` when
    /// the text there is not the file's, as in a normalised assignment).
    fn find_in_text(
        content: &str,
        lines: &LineIndex<'_>,
        index: usize,
        language: Language,
        text: &str,
        place: &dyn Fn(Range<usize>) -> Option<Range<usize>>,
        found: &mut Vec<SecretMatch>,
    ) {
        let Some(rule) = rules().rules.get(index) else {
            return;
        };
        let mut from = 0;
        while let Some(captures) = rule.regex().captures_at(text, from) {
            let Some(whole) = captures.get(0) else {
                break;
            };
            let value = captures.name("value").unwrap_or(whole);
            // After a match, go on past it; after a rejected assignment, go on
            // from its value, so that in `db: password = …` the rejected
            // `db: password` does not hide `password = …`.
            from = whole.end().max(from + 1);
            let Some(mut span) = place(value.range()) else {
                continue;
            };
            let line = lines.line_number(span.start);
            let next = text.get(value.end()..).and_then(|rest| rest.chars().next());
            let assignment = matches!(
                rule.check,
                Check::ApiKeyAssignment | Check::SecretAssignment | Check::Keyed
            );
            if assignment && value.start() > whole.start() {
                from = value.start();
            }
            if assignment && value.as_str().contains(PEM_BOUNDARY) {
                // A value that runs into a PEM header or footer is not one token.
                continue;
            }
            let passes = match rule.check {
                Check::None => true,
                Check::Token => token_passes(rule, value.as_str()),
                Check::Keyed => {
                    token_passes(rule, value.as_str())
                        && !is_placeholder(value.as_str())
                        && names_the_provider(text, whole.start(), &rule.keywords)
                }
                Check::AzureKey => {
                    plausible_token(value.as_str(), Classes::Any)
                        && !PUBLIC_EMULATOR_KEYS.contains(&value.as_str())
                }
                Check::ApiKeyAssignment => captures.name("quote").is_some_and(|quote| {
                    plausible_api_key(value.as_str(), !quote.as_str().is_empty(), next, language)
                }),
                Check::SecretAssignment => {
                    let after = text.get(value.end()..).unwrap_or_default();
                    plausible_secret_assignment(&captures, after, language)
                }
                Check::UrlCredentials => detectors::plausible_url_password(value.as_str()),
                Check::ProseSecret => {
                    let kept = value
                        .as_str()
                        .trim_end_matches(['.', ',', ';', ':', '?', ')', ']', '}']);
                    span.end = span.start + kept.len();
                    if captures.name("bare").is_some() {
                        pasted::plausible_bare_password(kept)
                    } else {
                        plausible_prose_secret(kept)
                    }
                }
                Check::NearSecretName => pasted::plausible_nearby_secret(content, span.clone()),
                Check::RandomToken => pasted::plausible_random_token(content, span.clone()),
                Check::EnvFileSecret => captures.name("name").is_some_and(|name| {
                    plausibility::plausible_env_secret(name.as_str(), value.as_str())
                }),
                Check::BasicAuth => detectors::is_basic_credentials(value.as_str()),
                Check::PrivateKey => {
                    match Self::private_key_block(content, span.clone(), language) {
                        Some(block) => {
                            span = block;
                            true
                        }
                        None => false,
                    }
                }
                Check::PuttyKey => match detectors::putty_block(content, span.start) {
                    Some(block) => {
                        span = block;
                        true
                    }
                    None => false,
                },
                Check::KubernetesSecret => {
                    let values = if whole.as_str().starts_with('"') {
                        detectors::kubernetes_json_secret_values(content, span.start)
                    } else {
                        detectors::kubernetes_secret_values(content, lines.line_range(line).start)
                    };
                    for value in values {
                        found.push(SecretMatch {
                            pattern: index,
                            line: lines.line_number(value.start),
                            span: value,
                        });
                    }
                    false
                }
            };
            if passes {
                found.push(SecretMatch {
                    pattern: index,
                    line,
                    span,
                });
                from = whole.end().max(from);
            }
            if from > text.len() {
                break;
            }
        }
    }

    /// The byte range of the private key block whose header is at `header`, or
    /// `None` when the header is not followed by key material (see
    /// [`SecretScanner`], "Known problems").
    fn private_key_block(
        content: &str,
        header: Range<usize>,
        language: Language,
    ) -> Option<Range<usize>> {
        let after = content.get(header.end..)?;
        let unescaped = after
            .trim_start_matches("\\r")
            .trim_start_matches("\\n")
            .trim_start_matches("\\r")
            .trim_start_matches("\\n");
        if language.is_code() && unescaped.starts_with(['"', '\'', '`']) {
            return None;
        }
        let window = after.get(..after.floor_char_boundary(PRIVATE_KEY_SPAN))?;
        let footer = window.find("-----END ").and_then(|start| {
            let rest = window.get(start + "-----END ".len()..)?;
            let close = rest.get(..rest.floor_char_boundary(64))?.find("-----")?;
            Some((start, start + "-----END ".len() + close + "-----".len()))
        });
        let body_end = footer.map_or(window.len(), |(start, _)| start);
        let body = window.get(..window.floor_char_boundary(body_end.min(512)))?;
        if !key_body().is_match(body) {
            return None;
        }
        let end = match footer {
            Some((_, end)) => header.end + end,
            None => header.end + base64_lines_len(after),
        };
        Some(header.start..end)
    }
}

impl Default for SecretScanner {
    fn default() -> Self {
        Self::new()
    }
}

impl GuardScanner for SecretScanner {
    fn name(&self) -> &'static str {
        "SecretScanner"
    }

    /// The findings of [`SecretScanner::scan_and_redact`]; the redacted text is
    /// dropped.
    fn scan(&self, path: &RelativePath, language: Language, content: &str) -> Vec<GuardFinding> {
        self.scan_and_redact(path, language, content).findings
    }
}

/// Where scanned text comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// A repository file.
    File,
    /// Text pasted into a request: the intent.
    Pasted,
}

/// How every placeholder starts.
const PLACEHOLDER_OPENING: &str = "[REDACTED ";

/// The placeholder that replaces secret number `number` found by pattern `id`.
fn placeholder(id: &str, number: usize) -> String {
    format!("{PLACEHOLDER_OPENING}{id} #{number}]")
}

/// Drops every match that overlaps a match of lower rank, or an earlier or longer
/// one of the same rank; returns the rest sorted by position.
fn resolve_overlaps(mut found: Vec<SecretMatch>) -> Vec<SecretMatch> {
    let rank = |found: &SecretMatch| rules().rules.get(found.pattern).map_or(u8::MAX, |p| p.rank);
    found.sort_by(|a, b| {
        rank(a)
            .cmp(&rank(b))
            .then(a.span.start.cmp(&b.span.start))
            .then(b.span.end.cmp(&a.span.end))
            .then(a.pattern.cmp(&b.pattern))
    });
    // Accepted spans by start; they never overlap one another.
    let mut accepted: BTreeMap<usize, SecretMatch> = BTreeMap::new();
    for candidate in found {
        let Range { start, end } = candidate.span;
        let before = accepted
            .range(..=start)
            .next_back()
            .is_some_and(|(_, kept)| kept.span.end > start);
        let after = accepted.range(start..end).next().is_some();
        if !before && !after && start < end {
            accepted.insert(start, candidate);
        }
    }
    accepted.into_values().collect()
}

/// Replaces each match (sorted, not overlapping) by its placeholder; returns the
/// text and each match's number.
fn redact(content: &str, matches: &[SecretMatch]) -> (String, Vec<usize>) {
    let mut numbers_by_value: BTreeMap<&str, usize> = BTreeMap::new();
    let mut numbers = Vec::with_capacity(matches.len());
    let mut redacted = String::with_capacity(content.len());
    let mut copied = 0;
    for found in matches {
        let value = content.get(found.span.clone()).unwrap_or_default();
        let next = numbers_by_value.len() + 1;
        let number = *numbers_by_value.entry(value).or_insert(next);
        numbers.push(number);
        let id = rules()
            .rules
            .get(found.pattern)
            .map_or("secret", |p| p.id.as_str());
        redacted.push_str(content.get(copied..found.span.start).unwrap_or_default());
        redacted.push_str(&placeholder(id, number));
        copied = found.span.end;
    }
    redacted.push_str(content.get(copied..).unwrap_or_default());
    (redacted, numbers)
}

/// The shortest value the assignment pass looks at, in bytes: no rule's
/// value is shorter.
const MIN_ASSIGNED: usize = 6;

/// Whether an assignment holds one of the rule's keywords: in its name for
/// a rule that ignores case (a name-anchored rule), in its value for a rule
/// whose keywords are token prefixes. A pair the reader named itself
/// (`docker login -p …` is a `password`) is read by every rule.
fn names_keyword(rule: &SecretRule, content: &str, pair: &Assignment) -> bool {
    if pair.label.is_some() {
        return true;
    }
    let parts = if rule.any_case {
        [pair.name.clone(), 0..0]
    } else {
        [pair.value.clone(), 0..0]
    };
    parts
        .into_iter()
        .filter_map(|part| content.get(part))
        .any(|text| {
            rule.keywords.iter().any(|keyword| {
                if keyword.is_empty() {
                    false
                } else if rule.any_case {
                    text.as_bytes()
                        .windows(keyword.len())
                        .any(|window| window.eq_ignore_ascii_case(keyword.as_bytes()))
                } else {
                    text.contains(keyword.as_str())
                }
            })
        })
}

/// Whether a rule also runs over the assignments the reader finds: every
/// rule for files except those that judge the text around a match (keys,
/// manifests) rather than a value.
fn reads_assignments(rule: &SecretRule) -> bool {
    !rule.pasted
        && !matches!(
            rule.check,
            Check::PrivateKey
                | Check::PuttyKey
                | Check::KubernetesSecret
                | Check::ProseSecret
                | Check::NearSecretName
                | Check::RandomToken
                | Check::EnvFileSecret
        )
}

/// Whether a provider token passes its rule: not filler (unless the rule allows
/// it), holding the rule's classes and entropy, matched by no `allow` regex.
///
/// A value made only of digits is held to at most [`DIGITS_ENTROPY`], one
/// of hex digits to at most [`HEX_ENTROPY`]: ten or sixteen symbols give
/// less entropy than a rule's floor for letters and digits (random 16-digit
/// ids fall under 2.8 bits one time in three, 16 hex digits under 3.0 one
/// time in seven).
fn token_passes(rule: &SecretRule, value: &str) -> bool {
    let digits = value.bytes().all(|byte| byte.is_ascii_digit());
    let hex = value
        .bytes()
        .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
        || value
            .bytes()
            .all(|byte| byte.is_ascii_digit() || (b'A'..=b'F').contains(&byte));
    let floor = if value.is_empty() {
        rule.entropy
    } else if digits {
        rule.entropy.min(DIGITS_ENTROPY)
    } else if hex {
        rule.entropy.min(HEX_ENTROPY)
    } else {
        rule.entropy
    };
    (rule.filler_ok || !plausibility::is_filler(value))
        && plausibility::has_classes(value, rule.classes)
        && (floor <= 0.0 || shannon_entropy(value) >= floor)
        && !rule.allow.iter().any(|allow| allow.is_match(value))
}

/// The entropy floor of a value made only of digits, in bits per character:
/// fewer than 1 in 300 random ids of 16 digits fall under it.
const DIGITS_ENTROPY: f64 = 2.2;

/// The entropy floor of a value made only of hex digits, in bits per
/// character: 1 in 30 random values of 16 hex digits and fewer than 1 in
/// 1,000 of 24 fall under it.
const HEX_ENTROPY: f64 = 2.8;

/// Whether the name keyword of a keyed match, at byte `at` of `text`, is
/// the provider's name in the assigned name rather than letters of other
/// words: it begins a word (at the name's start, after a character that is
/// not a letter, or at a change of case: `herokuKey`, `my_heroku`,
/// `APIHeroku`), so `SetSysctl` holds no `etsy` and `CameraKit` no `meraki`;
/// and where it spans a change of case it ends one too (`MessageBirdKey`
/// holds `messagebird`, `sumOfValues` no `sumo`).
fn names_the_provider(text: &str, at: usize, keywords: &[String]) -> bool {
    let bytes = text.as_bytes();
    let letter = |index: usize| bytes.get(index).copied().unwrap_or_default();
    let begins = match at.checked_sub(1) {
        None => true,
        Some(before) => {
            let before = letter(before);
            !before.is_ascii_alphabetic()
                || (before.is_ascii_lowercase() && letter(at).is_ascii_uppercase())
                || (before.is_ascii_uppercase()
                    && letter(at).is_ascii_uppercase()
                    && letter(at + 1).is_ascii_lowercase())
        }
    };
    let length = keywords
        .iter()
        .filter(|keyword| {
            bytes
                .get(at..at + keyword.len())
                .is_some_and(|found| found.eq_ignore_ascii_case(keyword.as_bytes()))
        })
        .map(String::len)
        .max()
        .unwrap_or(0);
    let found = bytes.get(at..at + length).unwrap_or_default();
    let spans_a_case_change = found
        .windows(2)
        .any(|pair| pair[0].is_ascii_lowercase() && pair[1].is_ascii_uppercase());
    let ends = length == 0
        || !letter(at + length).is_ascii_alphabetic()
        || (letter(at + length - 1).is_ascii_lowercase()
            && letter(at + length).is_ascii_uppercase());
    begins && (!spans_a_case_change || ends)
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::plausibility::{is_filler, shannon_entropy};
    use super::*;

    fn scan(path: &str, language: Language, content: &str) -> Vec<GuardFinding> {
        SecretScanner::new().scan(&RelativePath::new(path).unwrap(), language, content)
    }

    fn redact_with(path: &str, content: &str) -> SecretScan {
        let path = RelativePath::new(path).unwrap();
        SecretScanner::with_action(SecretAction::Redact).scan_and_redact(
            &path,
            Language::detect(&path),
            content,
        )
    }

    fn ids(findings: &[GuardFinding]) -> Vec<&str> {
        findings
            .iter()
            .filter_map(|finding| finding.pattern.as_deref())
            .collect()
    }

    /// The lines are put together from parts, so this file holds no
    /// secret-shaped text when aic scans itself.
    #[test_case("config.py", "# db: password = \"{SECRET}\"\n", "Kd83jfQ2x")]
    #[test_case("notes.txt", "fix main: password = \"{SECRET}\" fails\n", "Kd83jfQ2x")]
    #[test_case(
        "urls.py",
        "A = \"postgres://app:{SECRET}@db/maindb\"\n",
        "S3cr3tPassw0rdQ"
    )]
    #[test_case("settings.py", "password_c = \"{SECRET}\"\n", "Qz8Passw0rd")]
    fn a_secret_after_a_rejected_assignment_or_holding_a_common_word_is_redacted(
        path: &str,
        template: &str,
        secret: &str,
    ) {
        let scan = redact_with(path, &template.replace("{SECRET}", secret));
        let redacted = scan.redacted.expect("redacted");
        assert!(!redacted.contains(secret), "{redacted}");
    }

    /// `example` inside a random value is no placeholder; as a word of its
    /// own it is. The values are put together from parts.
    #[test]
    fn example_inside_a_random_value_is_still_a_secret() {
        let random = ["Zq8vR2mK9pL", "4xW7nB3cDf"];
        let secret = random.join("example");
        let scan = redact_with("deploy/app.yaml", &format!("client_secret: \"{secret}\"\n"));
        assert_eq!(
            scan.redacted.as_deref(),
            Some("client_secret: \"[REDACTED secret-assignment #1]\"\n")
        );
        let placeholder = random.join("-example-");
        let scan = redact_with(
            "deploy/app.yaml",
            &format!("client_secret: \"{placeholder}\"\n"),
        );
        assert_eq!(scan, SecretScan::default());
    }

    /// The secret a pattern matched on a line (the value, for an assignment), to
    /// check it never leaks.
    fn matched_text(id: &str, line: &str) -> String {
        let pattern = rules()
            .rules
            .iter()
            .find(|pattern| pattern.id == id)
            .unwrap();
        let captures = pattern.regex().captures(line).unwrap();
        captures
            .name("value")
            .or_else(|| captures.get(0))
            .unwrap()
            .as_str()
            .to_owned()
    }

    #[test]
    fn patterns_and_keywords_compile() {
        let set = rules();
        for pattern in &set.rules {
            assert!(!pattern.keywords.is_empty(), "{}", pattern.id);
        }
        let ids: BTreeSet<&str> = set
            .rules
            .iter()
            .map(|pattern| pattern.id.as_str())
            .collect();
        assert_eq!(ids.len(), set.rules.len(), "pattern ids are unique");
    }

    #[test_case("aws-access-key", "settings.py", Language::Python, include_str!("../../tests/fixtures/guard/python/aws_access_key.py"), 4)]
    #[test_case("github-token", "release.sh", Language::Shell, include_str!("../../tests/fixtures/guard/shell/github_token.sh"), 4)]
    #[test_case("stripe-secret-key", "billing.ts", Language::TypeScript, include_str!("../../tests/fixtures/guard/typescript/stripe_secret_key.ts"), 4)]
    #[test_case("generic-api-key", "service.yaml", Language::Yaml, include_str!("../../tests/fixtures/guard/yaml/generic_api_key.yaml"), 5)]
    #[test_case("jwt", "session.json", Language::Json, include_str!("../../tests/fixtures/guard/json/jwt.json"), 4)]
    #[test_case("private-key", "notes/deploy.txt", Language::Unknown, include_str!("../../tests/fixtures/guard/text/private_key.txt"), 3)]
    #[test_case("secret-assignment", "app/settings.py", Language::Python, include_str!("../../tests/fixtures/guard/python/django_settings.py"), 6)]
    #[test_case("twilio-key", "sms/notify.js", Language::JavaScript, include_str!("../../tests/fixtures/guard/javascript/twilio_client.js"), 5)]
    fn detects_each_secret_kind_on_its_line(
        id: &str,
        path: &str,
        language: Language,
        content: &str,
        line: u32,
    ) {
        let findings = scan(path, language, content);
        assert_eq!(findings.len(), 1, "{findings:?}");
        let finding = &findings[0];
        assert_eq!(finding.pattern.as_deref(), Some(id));
        assert_eq!(finding.line, Some(line));
        assert_eq!(finding.severity, GuardSeverity::Block);
        assert_eq!(finding.finding_type, GuardFindingType::Secret);
        assert!(finding.message.starts_with("Possible "));

        let secret = matched_text(id, content.lines().nth(line as usize - 1).unwrap());
        let debug = format!("{findings:?}");
        let json = serde_json::to_string(&findings).unwrap();
        for rendered in [&debug, &json, &finding.message] {
            assert!(!rendered.contains(&secret), "the secret leaked: {rendered}");
        }
    }

    /// `text/secret_kinds.txt` holds one fake secret of each kind per line, in
    /// this order.
    const KINDS: &[&str] = &[
        "aws-access-key",
        "aws-access-key",
        "github-token",
        "github-token",
        "github-fine-grained-token",
        "gitlab-token",
        "slack-token",
        "slack-token",
        "slack-webhook",
        "google-api-key",
        "openai-api-key",
        "openai-api-key",
        "anthropic-api-key",
        "npm-token",
        "pypi-token",
        "stripe-secret-key",
        "stripe-secret-key",
        "twilio-key",
        "sendgrid-api-key",
        "azure-storage-key",
        "jwt",
        "private-key",
        "private-key",
        "private-key",
        "private-key",
        "private-key",
        "private-key",
        "private-key",
        "generic-api-key",
        "secret-assignment",
        "secret-assignment",
        "secret-assignment",
    ];

    #[test]
    fn detects_every_kind() {
        let content = include_str!("../../tests/fixtures/guard/text/secret_kinds.txt");
        assert_eq!(content.lines().count(), KINDS.len());
        for (number, line) in content.lines().enumerate() {
            let findings = scan("notes/kinds.txt", Language::Unknown, line);
            assert_eq!(
                ids(&findings),
                vec![KINDS[number]],
                "line {}: {line}",
                number + 1
            );
        }
        let findings = scan("notes/kinds.txt", Language::Unknown, content);
        let lines: Vec<u32> = findings.iter().filter_map(|f| f.line).collect();
        assert_eq!(lines, (1..=KINDS.len() as u32).collect::<Vec<_>>());
    }

    #[test]
    fn redaction_replaces_only_the_values() {
        let content = include_str!("../../tests/fixtures/guard/text/secret_kinds.txt");
        let expected = include_str!("../../tests/fixtures/guard/text/secret_kinds.redacted.txt");
        let scan = redact_with("notes/kinds.txt", content);
        assert_eq!(scan.redacted.as_deref(), Some(expected));
        assert_eq!(scan.findings.len(), KINDS.len());
        assert!(
            scan.findings
                .iter()
                .all(|finding| finding.severity == GuardSeverity::Warn)
        );
    }

    #[test]
    fn redaction_numbers_values_in_order_of_appearance() {
        let content = include_str!("../../tests/fixtures/guard/text/repeated_secrets.txt");
        let expected =
            include_str!("../../tests/fixtures/guard/text/repeated_secrets.redacted.txt");
        let scan = redact_with("notes.txt", content);
        assert_eq!(scan.redacted.as_deref(), Some(expected));
        let messages: Vec<&str> = scan.findings.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(
            messages,
            vec![
                "Possible AWS access key, replaced by `[REDACTED aws-access-key #1]`",
                "Possible GitHub token, replaced by `[REDACTED github-token #2]`",
                "Possible AWS access key, replaced by `[REDACTED aws-access-key #1]`, \
                 `[REDACTED aws-access-key #3]`",
            ]
        );
    }

    #[test]
    fn redaction_is_stable_and_idempotent() {
        let content = include_str!("../../tests/fixtures/guard/text/secret_kinds.txt");
        let first = redact_with("notes/kinds.txt", content);
        let second = redact_with("notes/kinds.txt", content);
        assert_eq!(first, second);
        let again = redact_with("notes/kinds.txt", first.redacted.as_deref().unwrap());
        assert_eq!(again, SecretScan::default());
    }

    #[test]
    fn redacted_text_and_findings_hold_no_secret() {
        let content = include_str!("../../tests/fixtures/guard/text/secret_kinds.txt");
        let scan = redact_with("notes/kinds.txt", content);
        let redacted = scan.redacted.as_deref().unwrap();
        let rendered = format!("{scan:?}{}", serde_json::to_string(&scan.findings).unwrap());
        for (line, id) in content.lines().zip(KINDS) {
            if *id == "private-key" {
                continue;
            }
            let secret = matched_text(id, line);
            assert!(!redacted.contains(&secret), "{id} left in the text");
            assert!(!rendered.contains(&secret), "{id} leaked into findings");
        }
        assert!(!redacted.contains("PRIVATE KEY"));
    }

    #[test]
    fn block_action_keeps_no_text() {
        let content = include_str!("../../tests/fixtures/guard/text/secret_kinds.txt");
        let path = RelativePath::new("notes/kinds.txt").unwrap();
        let scan = SecretScanner::with_action(SecretAction::Block).scan_and_redact(
            &path,
            Language::Unknown,
            content,
        );
        assert_eq!(scan.redacted, None);
        assert!(
            scan.findings
                .iter()
                .all(|f| f.severity == GuardSeverity::Block)
        );
    }

    #[test]
    fn private_key_block_is_redacted_whole() {
        let content = include_str!("../../tests/fixtures/guard/text/private_key.txt");
        let scan = redact_with("notes/deploy.txt", content);
        assert_eq!(
            scan.redacted.as_deref(),
            Some(
                "Fake key material for aic guard tests; not a real key.\n\n[REDACTED private-key #1]\n"
            )
        );
        let content = include_str!("../../tests/fixtures/guard/rust/embedded_test_key.rs");
        let scan = redact_with("tests/tls.rs", content);
        assert_eq!(ids(&scan.findings), vec!["private-key", "private-key"]);
        let redacted = scan.redacted.unwrap();
        assert!(redacted.contains("const KEY_PEM: &str = \"[REDACTED private-key #1]\\n\";"));
        assert!(redacted.contains("r#\"\n[REDACTED private-key #2]\n\"#"));
        assert!(redacted.contains("-----BEGIN CERTIFICATE-----"));
    }

    #[test]
    fn provider_match_wins_over_assignments() {
        let content = include_str!("../../tests/fixtures/guard/shell/github_token.sh");
        let scan = redact_with("release.sh", content);
        assert_eq!(ids(&scan.findings), vec!["github-token"]);
        assert!(
            scan.redacted
                .unwrap()
                .contains("export GITHUB_TOKEN=[REDACTED github-token #1]\n")
        );
    }

    #[test]
    fn line_numbers_count_crlf_and_repeated_hits_once() {
        let content = include_str!("../../tests/fixtures/guard/text/repeated_secrets.txt");
        let findings = scan(
            "notes.txt",
            Language::Unknown,
            &content.replace('\n', "\r\n"),
        );
        let lines: Vec<_> = findings
            .iter()
            .map(|f| (f.line, f.pattern.as_deref()))
            .collect();
        assert_eq!(
            lines,
            vec![
                (Some(3), Some("aws-access-key")),
                (Some(5), Some("github-token")),
                (Some(6), Some("aws-access-key")),
            ]
        );
    }

    /// AWS's credentials CSV and a pasted pair name the secret by its key id
    /// alone. The parts are put together here, so this file holds no pair.
    #[test]
    fn aws_secret_after_its_key_id_is_redacted() {
        let id = ["AKIA", "Q7ZJ4K2M", "X9TB3WHN"].concat();
        let secret = ["q8Vn2+Lr5Tz", "/Hk3Wm9Yp1Cd", "7Fs4Gx6Jb0Nv", "aE2uR"].concat();
        assert_eq!(secret.len(), 40);
        let csv = format!("Access key ID,Secret access key\n{id},{secret}\n");
        let redaction = redact_with("accessKeys.csv", &csv);
        let redacted = redaction.redacted.as_deref().unwrap();
        assert!(
            !redacted.contains(&secret) && !redacted.contains(&id),
            "{redacted}"
        );
        assert_eq!(
            ids(&redaction.findings),
            vec!["aws-access-key", "aws-key-pair-secret"]
        );
        let pasted = format!("creds: {id} / {secret} for the deploy");
        let intent = crate::guard::redact_secrets(&pasted).unwrap();
        assert!(!intent.contains(&secret), "{intent}");
        // The documented example pair is left alone.
        let example = [
            "AKIAIOSFODNN7",
            "EXAMPLE,",
            "wJalrXUtnFEMI/K7MDENG/",
            "bPxRfiCY",
            "EXAMPLEKEY",
        ]
        .concat();
        let findings = scan("accessKeys.csv", Language::Unknown, &example);
        assert!(!ids(&findings).contains(&"aws-key-pair-secret"));
    }

    /// Tables write the key as `{KEY}` and pass the value apart, so this file holds
    /// no secret-shaped assignment and is not flagged when aic scans itself.
    #[test_case(
        "config.ts",
        Language::TypeScript,
        r#"const config = { apiKey: "{KEY}" };"#,
        "0123456789abcdefABCDEF0123"
    )]
    #[test_case(
        "config.json",
        Language::Json,
        r#"{ "api_key": "{KEY}" }"#,
        "0123456789abcdefABCDEF0123"
    )]
    #[test_case(
        "main.go",
        Language::Go,
        r#"apiKey := "{KEY}""#,
        "0123456789abcdefABCDEF0123"
    )]
    #[test_case(
        "config.rb",
        Language::Ruby,
        "{ api_key => '{KEY}' }",
        "0123456789abcdefABCDEF0123"
    )]
    #[test_case(
        ".env.example",
        Language::Unknown,
        "OPENAI_API_KEY={KEY}",
        "0123456789abcdefABCDEF0123"
    )]
    #[test_case(
        "deploy.sh",
        Language::Shell,
        "export API_KEY={KEY}",
        "0123456789abcdefABCDEF0123"
    )]
    #[test_case(
        "client.py",
        Language::Python,
        r#"API_KEY = "{KEY}""#,
        "ThisIsARealLookingKeyWithoutDigits"
    )]
    fn detects_generic_api_keys(path: &str, language: Language, template: &str, key: &str) {
        let line = template.replace("{KEY}", key);
        let findings = scan(path, language, &line);
        assert_eq!(ids(&findings), vec!["generic-api-key"], "{line}");
    }

    #[test_case("client.py", Language::Python, "api_key = get_api_key_from_env()")]
    #[test_case("client.py", Language::Python, "api_key = settings_v2_api_key_value")]
    #[test_case("client.ts", Language::TypeScript, "apiKey: process.env.API_KEY,")]
    #[test_case(
        "client.ts",
        Language::TypeScript,
        "const apiKey = config.credentials.apiKeyForTheService;"
    )]
    #[test_case(
        "config.yaml",
        Language::Yaml,
        r#"api_key: "xxxxxxxxxxxxxxxxxxxxxxxx""#
    )]
    #[test_case("config.yaml", Language::Yaml, "api_key: your_api_key_here_0123456789")]
    #[test_case("config.yaml", Language::Yaml, "api_key: <your-api-key-goes-here-123>")]
    #[test_case(
        "config.yaml",
        Language::Yaml,
        "api_key: ${API_KEY_FROM_THE_ENVIRONMENT_1}"
    )]
    #[test_case(
        "config.yaml",
        Language::Yaml,
        r#"api_key: "${API_KEY_FROM_THE_ENVIRONMENT_1}""#
    )]
    #[test_case(
        "config.yaml",
        Language::Yaml,
        "api_key: DEFAULT_API_KEY_FROM_SETTINGS"
    )]
    #[test_case(".env", Language::Unknown, "API_KEY=aaaaaaaaaaaaaaaaaaaaaaaaaaaa")]
    #[test_case(".env", Language::Unknown, "API_KEY=0000000000000000000000000")]
    #[test_case(
        "config.py",
        Language::Python,
        r#"API_KEY_ENV = "OPENAI_API_KEY_FOR_PRODUCTION""#
    )]
    #[test_case(
        "config.py",
        Language::Python,
        r#"api_key = "OPENAI_API_KEY_FOR_PRODUCTION""#
    )]
    #[test_case(
        "client.js",
        Language::JavaScript,
        "const url = `${base}?api_key=${encodeURIComponent(apiKeyValue0123)}`;"
    )]
    #[test_case(
        "config.py",
        Language::Python,
        r#"api_key = "REPLACE_ME_WITH_A_REAL_KEY_1""#
    )]
    #[test_case(
        "docs.md",
        Language::Markdown,
        "Set `api_key` to the key from your dashboard."
    )]
    // Base64 of `username:password`, as spring-framework's HtmlUnit tests write it.
    #[test_case(
        "src/test/java/RequestBuilderTests.java",
        Language::Java,
        r#"String base64Credentials = "dXNlcm5hbWU6cGFzc3dvcmQ=";"#
    )]
    fn ignores_api_key_lookalikes(path: &str, language: Language, line: &str) {
        assert_eq!(scan(path, language, line), Vec::new(), "{line}");
    }

    #[test]
    fn ignores_token_lookalikes() {
        let content = include_str!("../../tests/fixtures/guard/text/token_lookalikes.txt");
        for line in content.lines() {
            assert_eq!(
                scan("notes.txt", Language::Unknown, line),
                Vec::new(),
                "{line}"
            );
        }
        let content = include_str!("../../tests/fixtures/guard/python/token_lookalikes.py");
        assert_eq!(
            scan("app/constants.py", Language::Python, content),
            Vec::new()
        );
    }

    #[test]
    fn twilio_ids_need_the_word_nearby() {
        let content = include_str!("../../tests/fixtures/guard/javascript/twilio_client.js");
        let without = content.replace("twilio", "sms").replace("TWILIO", "SMS");
        assert_eq!(
            scan("sms/notify.js", Language::JavaScript, &without),
            Vec::new()
        );
    }

    #[test]
    fn private_key_header_constant_in_code_is_not_a_key() {
        let header = ["-----BEGIN RSA ", "PRIVATE KEY-----"].concat();
        for line in [
            format!(r#"const RSA_HEADER: &str = "{header}";"#),
            format!(r#"const RSA_HEADER: &str = "{header}\n";"#),
            format!(r#"if line == "{header}" {{ return Ok(()); }}"#),
        ] {
            assert_eq!(scan("pem.rs", Language::Rust, &line), Vec::new(), "{line}");
        }
        let embedded = format!(r#"KEY = "{header}\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC""#);
        assert_eq!(scan("keys.py", Language::Python, &embedded).len(), 1);
        let empty = format!("{header}\n-----END RSA PRIVATE KEY-----\n");
        assert_eq!(scan("keys.txt", Language::Unknown, &empty), Vec::new());
    }

    #[test_case("rust/api_key_fields.rs", Language::Rust, include_str!("../../tests/fixtures/guard/rust/api_key_fields.rs"))]
    #[test_case("typescript/template_literals.ts", Language::TypeScript, include_str!("../../tests/fixtures/guard/typescript/template_literals.ts"))]
    #[test_case("python/annotations_and_fstrings.py", Language::Python, include_str!("../../tests/fixtures/guard/python/annotations_and_fstrings.py"))]
    #[test_case("shell/pipes_and_substitutions.sh", Language::Shell, include_str!("../../tests/fixtures/guard/shell/pipes_and_substitutions.sh"))]
    #[test_case(".github/workflows/ci.yaml", Language::Yaml, include_str!("../../tests/fixtures/guard/yaml/ci_workflow.yaml"))]
    #[test_case("docker-compose.yaml", Language::Yaml, include_str!("../../tests/fixtures/guard/yaml/docker_compose.yaml"))]
    fn ordinary_files_have_no_secrets(path: &str, language: Language, content: &str) {
        assert_eq!(scan(path, language, content), Vec::new());
    }

    #[test]
    fn empty_content_has_no_secrets() {
        assert_eq!(scan("empty.txt", Language::Unknown, ""), Vec::new());
        assert_eq!(redact_with("empty.txt", ""), SecretScan::default());
    }

    /// A seeded fake from a coverage template (`{an:24}`, `{d:16}`): the
    /// text and its secret parts, the same on every run.
    fn fake(seed: &str, template: &str) -> String {
        coverage::expand(template, &mut coverage::Fakes::new(seed)).0
    }

    /// Whether the guard leaves `secret` whole in `content` at `path`.
    fn leaves(path: &str, content: &str, secret: &str) -> bool {
        redact_with(path, content)
            .redacted
            .is_none_or(|redacted| redacted.contains(secret))
    }

    #[test]
    fn a_keyed_name_holds_its_keyword_as_a_word() {
        let etsy = fake("keyed-word", "{an:24}");
        let sumo = fake("keyed-word", "su{an:12}");
        for (name, value) in [
            ("etsy_api_key", &etsy),
            ("myEtsyKey", &etsy),
            ("APP_ETSY_TOKEN", &etsy),
            ("ETSYKey", &etsy),
            ("SumoLogicAccessId", &sumo),
            ("sumo_access_id", &sumo),
        ] {
            let content = format!("{name} = \"{value}\"\n");
            assert!(!leaves("config/app.ini", &content, value), "{name}");
        }
        // `etsy` glued inside other words, or `sumo` across two, is no
        // provider's name.
        for (name, value) in [
            ("budgetSync", &etsy),
            ("offsetsync", &etsy),
            ("sumOfValues", &sumo),
        ] {
            let content = format!("{name} = \"{value}\"\n");
            assert_eq!(
                scan("config/app.ini", Language::Unknown, &content),
                Vec::new(),
                "{name}"
            );
        }
    }

    #[test]
    fn a_keyed_value_matches_in_either_case() {
        // Plaid ids are lower-case hex; a mixed-case value of the same length
        // under a Plaid name is a credential too.
        let value = fake("keyed-case", "{an:24}");
        assert!(value.bytes().any(|b| b.is_ascii_uppercase()));
        let content = format!("plaid_client_id: \"{value}\"\n");
        assert!(!leaves("config/app.yaml", &content, &value));
    }

    /// Seeded draws of `template` until one has an entropy in `range`.
    fn fake_with_entropy(seed: &str, template: &str, range: Range<f64>) -> String {
        let mut fakes = coverage::Fakes::new(seed);
        std::iter::repeat_with(|| coverage::expand(template, &mut fakes).0)
            .find(|value| range.contains(&shannon_entropy(value)) && !is_filler(value))
            .unwrap()
    }

    #[test]
    fn ids_of_digits_or_hex_need_less_entropy_than_letters() {
        // A 16-digit id with 2.3 to 2.7 bits per digit, under the Asana
        // rule's 2.8 floor for letters and digits.
        let value = fake_with_entropy("digits-entropy", "{d:16}", 2.3..2.7);
        let content = format!("asana_client_id = \"{value}\"\n");
        assert!(!leaves("config/app.ini", &content, &value));
        let content = "asana_client_id = \"1111222211112222\"\n";
        assert_eq!(
            scan("config/app.ini", Language::Unknown, content),
            Vec::new()
        );
        // 16 hex digits with 2.8 to 3.0 bits, under a keyed rule's 3.0.
        let value = fake_with_entropy("hex-entropy", "{h:16}", 2.8..3.0);
        let content = format!("braintree_key = \"{value}\"\n");
        assert!(!leaves("config/app.ini", &content, &value));
    }

    #[test]
    fn an_api_key_of_filler_is_a_placeholder() {
        let filler = ["Zk9", &"q".repeat(30)].concat();
        let content = format!("apiKey: \"{filler}\"\n");
        assert_eq!(
            scan("src/config.ts", Language::TypeScript, &content),
            Vec::new()
        );
    }

    /// Short options that pass a password: the reader names the value
    /// `password`, so the password rules judge it.
    #[test]
    fn passwords_in_short_options_are_redacted() {
        let password = fake("short-options", "{an:14}");
        for line in [
            "docker login -u ci-bot -p {p} registry.acme.io",
            "echo ok && podman login quay.io -p '{p}' -u ci",
            "oc login https://api.cluster:6443 -u admin -p {p}",
            "mysql -u root -p{p} shop",
            "sshpass -p {p} ssh deploy@build-01",
            "redis-cli -h cache -a {p} ping",
        ] {
            let content = format!("{}\n", line.replace("{p}", &password));
            for path in ["scripts/deploy.sh", "docs/setup.md"] {
                assert!(!leaves(path, &content, &password), "{path}: {line}");
            }
        }
        for line in [
            "mkdir -p build/out",
            "docker run -u 1000 -p 8080:80 nginx",
            "cp -u -p notes.txt backup/",
            "docker login -u ci -p \"$REGISTRY_TOKEN\" registry.acme.io",
            "mysql -u root -p shop",
            "ssh -p 2222 deploy@build-01",
        ] {
            let content = format!("{line}\n");
            assert_eq!(
                scan("scripts/deploy.sh", Language::Shell, &content),
                Vec::new(),
                "{line}"
            );
        }
    }

    #[test]
    fn entropy_and_filler() {
        assert!(shannon_entropy("aaaaaaaaaaaaaaaaaaaa") < 0.1);
        assert!(shannon_entropy("8f3kQ9zL2mX7vB4nR6tW") > 4.0);
        assert!(is_filler("ghp_aaaaaaBBB"));
        assert!(is_filler("AKIAXXXXXXXXXXXXXXXX"));
        assert!(!is_filler("ghp_FAKEfakeFAKEfake0123456789"));
    }
}
