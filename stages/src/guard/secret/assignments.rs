//! The assignment reader: finds `(name, value)` pairs in a line by syntax,
//! so the keyword-anchored secret rules see every syntax the same way.
//!
//! It reads the operators of configuration files and code: `=`, `:=`,
//! `::=`, `:::=`, `?=`, `!=` (make), `.=` and `+=` (PHP, shell), `=>`
//! (logstash, PHP and Ruby hashes), `:` followed by a space or a quote (YAML,
//! JSON), a comma between two quoted strings (`setProperty("NAME", "…")`), XML
//! elements (`<name>…</name>`, also with the value alone on the next line)
//! and Dockerfile `ENV NAME value`. The name is the identifier just before
//! the operator; a type after it is skipped (`var name string = …`, `name:
//! String = …`, `String name = …`). The value is a quoted string up to its
//! closing quote, or an unquoted word up to a space, a delimiter or an
//! escaped line break (`\n` inside a JSON string that holds an ini file).
//!
//! The reader only says where names and values are; whether a value is a
//! secret is the rules' business. It leaves out what is not one statement on
//! one line: heredocs, values continued over lines, and names built at run
//! time.

use std::ops::Range;

use crate::guard::LineIndex;

/// One assignment: byte ranges into the scanned content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Assignment {
    /// The name, without sigils or quotes (`herokuToken` of `$herokuToken`).
    pub(super) name: Range<usize>,
    /// The value, without its quotes.
    pub(super) value: Range<usize>,
    /// Whether the value was quoted.
    pub(super) quoted: bool,
    /// The name the pair is read under when the text names it only by an
    /// option letter (`docker login -p …` passes a `password`).
    pub(super) label: Option<&'static str>,
}

/// Type names skipped between a name and its operator.
const TYPE_WORDS: &[&str] = &[
    "string",
    "str",
    "String",
    "var",
    "val",
    "let",
    "const",
    "final",
    "static",
    "private",
    "public",
    "protected",
    "readonly",
    "auto",
    "char",
    "byte",
    "any",
    "object",
    "Object",
    "text",
];

/// The longest line the reader looks at, in bytes: longer lines are data
/// (minified code, lock files), left to the rules' own regexes.
const MAX_LINE: usize = 4096;

/// Every assignment on one-based `line` of `content`.
pub(super) fn read(lines: &LineIndex<'_>, line: u32) -> Vec<Assignment> {
    let range = lines.line_range(line);
    let text = lines.line(line);
    let mut found = Vec::new();
    if text.len() > MAX_LINE {
        return found;
    }
    let bytes = text.as_bytes();
    let base = range.start;
    if let Some(assignment) = dockerfile_env(text) {
        found.push(shift(assignment, base));
    }
    let mut at = 0;
    while at < bytes.len() {
        let Some((operator, length)) = operator_at(bytes, at) else {
            at += 1;
            continue;
        };
        let after = at + length;
        if let Some(name) = name_before(text, at, operator)
            && let Some((value, quoted)) = value_after(text, after)
            && (operator != Operator::Comma || quoted)
        {
            found.push(Assignment {
                name: base + name.start..base + name.end,
                value: base + value.start..base + value.end,
                quoted,
                label: None,
            });
        }
        at = after;
    }
    if let Some(assignment) = xml_element(lines, line, text, base) {
        found.push(assignment);
    }
    for assignment in command_line(text) {
        if !found
            .iter()
            .any(|f| f.value.start == base + assignment.value.start)
        {
            found.push(shift(assignment, base));
        }
    }
    found
}

/// The pairs of a shell command line that the operators miss because a
/// command goes on after the value: environment assignments before the
/// command (`PGPASSWORD=… psql -h db`) and long options with their values
/// (`--password=…` or `--password …`, `--with-token …`), each value an
/// unquoted word.
fn command_line(text: &str) -> Vec<Assignment> {
    let mut found = Vec::new();
    // Words with their byte offsets.
    let mut words: Vec<(usize, &str)> = Vec::new();
    let mut at = 0;
    for word in text.split([' ', '\t']) {
        if !word.is_empty() {
            words.push((at, word));
        }
        at += word.len() + 1;
    }
    let mut index = 0;
    // `export`, `env` and `sudo` may come first; then `NAME=value` words.
    while let Some((_, word)) = words.get(index)
        && matches!(*word, "export" | "env" | "sudo")
    {
        index += 1;
    }
    while let Some(&(offset, word)) = words.get(index) {
        let Some((name, value)) = word.split_once('=') else {
            break;
        };
        let environment_name = !name.is_empty()
            && name
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_uppercase() || b == b'_')
            && name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        // Only before a command: a line of assignments alone is read by
        // the operators.
        if !environment_name || value.is_empty() || words.get(index + 1).is_none() {
            break;
        }
        if !value.starts_with(['"', '\'', '$', '`']) {
            found.push(Assignment {
                name: offset..offset + name.len(),
                value: offset + name.len() + 1..offset + word.len(),
                quoted: false,
                label: None,
            });
        }
        index += 1;
    }
    for (position, &(offset, word)) in words.iter().enumerate() {
        let Some(option) = word.strip_prefix("--") else {
            continue;
        };
        let name_start = offset + 2;
        let (name, value) = match option.split_once('=') {
            Some((name, _)) => (
                name_start..name_start + name.len(),
                name_start + name.len() + 1..offset + word.len(),
            ),
            None => match words.get(position + 1) {
                Some(&(next_offset, next)) if !next.starts_with('-') => (
                    name_start..offset + word.len(),
                    next_offset..next_offset + next.len(),
                ),
                _ => continue,
            },
        };
        let value_text = &text[value.clone()];
        if name.is_empty()
            || value.is_empty()
            || value_text.starts_with(['"', '\'', '$', '`', '<', '|', '>'])
            || !text[name.clone()]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            continue;
        }
        found.push(Assignment {
            name,
            value,
            quoted: false,
            label: None,
        });
    }
    found.extend(short_passwords(&words));
    found
}

/// Commands whose `-p` is a password whatever else the line says.
const PASSWORD_P_COMMANDS: &[&str] = &["sshpass"];

/// Commands that take a password glued to `-p` (`mysql -pS3cret`); a
/// separate word after their `-p` is a database name.
const GLUED_P_COMMANDS: &[&str] = &["mysql", "mysqldump", "mysqladmin", "mariadb"];

/// The passwords a command line passes by a short option: `-p <password>`
/// in a command that logs in (`docker login`, `oc login`) or names a user
/// (`-u <user>`, `-U <user>`, `--username <user>`), `sshpass -p`,
/// `redis-cli -a`, and mysql's `-p<password>`. Each is read as a pair named
/// `password`. A value that is a variable, a path or an option is none.
fn short_passwords(words: &[(usize, &str)]) -> Vec<Assignment> {
    let mut found = Vec::new();
    for segment in words.split(|(_, word)| matches!(*word, "|" | "||" | "&&" | ";")) {
        let Some(command) = segment
            .iter()
            .map(|(_, word)| *word)
            .find(|word| !matches!(*word, "sudo" | "env" | "exec") && !word.contains('='))
        else {
            continue;
        };
        let command = command.rsplit('/').next().unwrap_or(command);
        let takes_value = |index: usize| {
            segment
                .get(index + 1)
                .is_some_and(|(_, next)| !next.starts_with('-'))
        };
        let logs_in = segment.iter().any(|(_, word)| *word == "login");
        let names_user = segment.iter().enumerate().any(|(index, (_, word))| {
            (matches!(*word, "-u" | "-U" | "--username" | "--user") && takes_value(index))
                || word.starts_with("--username=")
        });
        for (index, &(offset, word)) in segment.iter().enumerate() {
            let value = match word {
                "-p" | "-P"
                    if (logs_in || names_user || PASSWORD_P_COMMANDS.contains(&command))
                        && !GLUED_P_COMMANDS.contains(&command) =>
                {
                    segment.get(index + 1).copied()
                }
                "-a" if command == "redis-cli" => segment.get(index + 1).copied(),
                _ if GLUED_P_COMMANDS.contains(&command)
                    && word.len() > 2
                    && word.starts_with("-p") =>
                {
                    Some((offset + 2, &word[2..]))
                }
                _ => None,
            };
            let Some((value_offset, value)) = value else {
                continue;
            };
            let (value_offset, value, quoted) = match value.as_bytes() {
                [first @ (b'"' | b'\''), .., last] if first == last && value.len() > 2 => {
                    (value_offset + 1, &value[1..value.len() - 1], true)
                }
                _ => (value_offset, value, false),
            };
            if value.is_empty()
                || value.starts_with(['-', '$', '<', '{', '"', '\'', '`', '>', '|'])
                || value.contains('/')
            {
                continue;
            }
            found.push(Assignment {
                name: offset..offset + word.len().min(2),
                value: value_offset..value_offset + value.len(),
                quoted,
                label: Some("password"),
            });
        }
    }
    found
}

fn shift(assignment: Assignment, base: usize) -> Assignment {
    let Assignment {
        name,
        value,
        quoted,
        label,
    } = assignment;
    Assignment {
        name: base + name.start..base + name.end,
        value: base + value.start..base + value.end,
        quoted,
        label,
    }
}

/// The kinds of operator, where they differ in what may come before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Operator {
    /// `=` and its compounds.
    Equals,
    /// `!=`: a make shell assignment, only as the statement's first name.
    Shell,
    /// `:` followed by a space or a quote.
    Colon,
    /// `,` between two quoted strings.
    Comma,
}

/// The operator starting at byte `at`, and its length.
fn operator_at(bytes: &[u8], at: usize) -> Option<(Operator, usize)> {
    let byte = *bytes.get(at)?;
    let next = bytes.get(at + 1).copied();
    let previous = at
        .checked_sub(1)
        .and_then(|before| bytes.get(before))
        .copied();
    match byte {
        b'=' => {
            if matches!(
                previous,
                Some(b'=' | b'!' | b'<' | b'>' | b':' | b'?' | b'.' | b'+')
            ) {
                return None;
            }
            match next {
                Some(b'=') => None,
                Some(b'>') => Some((Operator::Equals, 2)),
                _ => Some((Operator::Equals, 1)),
            }
        }
        b':' => {
            let colons = bytes[at..].iter().take_while(|&&b| b == b':').count();
            if colons <= 3 && bytes.get(at + colons) == Some(&b'=') {
                return (previous != Some(b':')).then_some((Operator::Equals, colons + 1));
            }
            if previous == Some(b':') || colons > 1 {
                return None;
            }
            matches!(next, None | Some(b' ' | b'\t' | b'"' | b'\'')).then_some((Operator::Colon, 1))
        }
        b'?' | b'.' | b'+' if next == Some(b'=') && bytes.get(at + 2) != Some(&b'=') => {
            Some((Operator::Equals, 2))
        }
        b'!' if next == Some(b'=') && bytes.get(at + 2) != Some(&b'=') => {
            Some((Operator::Shell, 2))
        }
        b',' => Some((Operator::Comma, 1)),
        _ => None,
    }
}

fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.')
}

/// The name before the operator at `at`: the identifier just before it (in
/// quotes or not), skipping a type written between the name and the
/// operator.
fn name_before(text: &str, at: usize, operator: Operator) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    let mut end = at;
    while end > 0 && matches!(bytes.get(end - 1), Some(b' ' | b'\t')) {
        end -= 1;
    }
    let quote = bytes.get(end.checked_sub(1)?).copied();
    if operator == Operator::Comma && !matches!(quote, Some(b'"' | b'\'')) {
        return None;
    }
    let mut word;
    if matches!(quote, Some(b'"' | b'\'' | b'`')) {
        // `"name": …`, `"name" => …`: the name is the quoted string.
        let inner_end = end - 1;
        let open = bytes[..inner_end].iter().rposition(|&b| Some(b) == quote)?;
        if inner_end - open > 128 {
            return None;
        }
        word = open + 1..inner_end;
    } else if let Some(found) = word_before(bytes, end) {
        word = found;
        if TYPE_WORDS.contains(&text.get(word.clone())?) || text.get(word.clone())? == "[]byte" {
            // `var name string = …`: the name is the word before the type.
            let mut before = word.start;
            while before > 0 && matches!(bytes.get(before - 1), Some(b' ' | b'\t' | b':')) {
                before -= 1;
            }
            word = word_before(bytes, before)?;
        } else {
            // `name: Type = …` (Kotlin, TypeScript): the word before the colon.
            let mut before = word.start;
            while before > 0 && matches!(bytes.get(before - 1), Some(b' ' | b'\t')) {
                before -= 1;
            }
            if before > 0
                && bytes.get(before - 1) == Some(&b':')
                && operator == Operator::Equals
                && bytes.get(word.start).is_some_and(u8::is_ascii_uppercase)
                && let Some(named) = word_before(bytes, before - 1)
            {
                word = named;
            }
        }
    } else {
        return None;
    }
    if operator == Operator::Shell && !text[..word.start].trim_start().is_empty() {
        return None;
    }
    // A PHP or shell sigil is not part of the name.
    while bytes
        .get(word.start)
        .is_some_and(|b| matches!(b, b'$' | b'@'))
    {
        word.start += 1;
    }
    (!word.is_empty()).then_some(word)
}

/// The identifier ending at byte `end` (`$` and `@` included).
fn word_before(bytes: &[u8], end: usize) -> Option<Range<usize>> {
    let mut start = end;
    while start > 0
        && bytes
            .get(start - 1)
            .is_some_and(|&b| is_name_byte(b) || matches!(b, b'$' | b'@' | b'[' | b']'))
    {
        start -= 1;
    }
    // `[]byte` keeps its brackets; a subscript (`a["k"]`) is no name.
    (start < end).then_some(start..end)
}

/// The value after an operator ending at `from`, and whether it was quoted.
fn value_after(text: &str, from: usize) -> Option<(Range<usize>, bool)> {
    let bytes = text.as_bytes();
    let mut start = from;
    while matches!(bytes.get(start), Some(b' ' | b'\t')) {
        start += 1;
    }
    let first = *bytes.get(start)?;
    if matches!(first, b'"' | b'\'' | b'`') {
        let mut end = start + 1;
        while let Some(&byte) = bytes.get(end) {
            if byte == b'\\' {
                if first != b'`' && matches!(bytes.get(end + 1), Some(b'n' | b'r' | b't')) {
                    // An escaped line break ends a value written inside a
                    // string (`"TOKEN=…\nNEXT=1"` is read by the `=`).
                    break;
                }
                end += 2;
                continue;
            }
            if byte == first {
                return Some((start + 1..end, true));
            }
            end += 1;
        }
        return None;
    }
    let mut end = start;
    while let Some(&byte) = bytes.get(end) {
        if byte.is_ascii_whitespace()
            || matches!(
                byte,
                b'"' | b'\''
                    | b'`'
                    | b';'
                    | b','
                    | b')'
                    | b'}'
                    | b']'
                    | b'<'
                    | b'#'
                    | b'['
                    | b'('
                    | b'{'
            )
            || (byte == b'\\' && matches!(bytes.get(end + 1), Some(b'n' | b'r' | b't')))
        {
            break;
        }
        end += 1;
    }
    (end > start && ends_unquoted(bytes, end)).then_some((start..end, false))
}

/// Whether an unquoted value ending at byte `end` is a whole literal: it
/// ends the line (but for spaces and a comment), an enclosing string or
/// list, or a statement; not an expression that goes on (`a[0]`, `f(x)`,
/// `a.b {`) or prose (`PASS: sha3 roundtrip`).
fn ends_unquoted(bytes: &[u8], end: usize) -> bool {
    match bytes.get(end) {
        Some(b' ' | b'\t' | b'\r') => {
            let rest = bytes.get(end..).unwrap_or_default();
            let rest = rest.trim_ascii_start();
            rest.is_empty() || rest.starts_with(b"#") || rest.starts_with(b"//")
        }
        None | Some(b'"' | b'\'' | b'`' | b';' | b',' | b')' | b'}' | b'\\') => true,
        _ => false,
    }
}

/// `ENV NAME value` (a Dockerfile's form without `=`).
fn dockerfile_env(text: &str) -> Option<Assignment> {
    let trimmed = text.trim_start();
    let rest = trimmed
        .strip_prefix("ENV ")
        .or_else(|| trimmed.strip_prefix("ENV\t"))?;
    let offset = text.len() - rest.len();
    let name_len = rest.bytes().take_while(|&b| is_name_byte(b)).count();
    let after = rest.get(name_len..)?;
    if !after.starts_with([' ', '\t']) {
        return None;
    }
    let (value, quoted) = value_after(text, offset + name_len)?;
    Some(Assignment {
        name: offset..offset + name_len,
        value,
        quoted,
        label: None,
    })
}

/// `<name>value</name>` on the line, or `<name>` ending the line with the
/// value alone on the next line and the closing tag on the line after.
fn xml_element(lines: &LineIndex<'_>, line: u32, text: &str, base: usize) -> Option<Assignment> {
    let trimmed = text.trim();
    let open = trimmed.strip_prefix('<')?.strip_suffix('>')?;
    if open.is_empty() || !open.bytes().all(|b| is_name_byte(b) || b == b':') {
        return None;
    }
    if line + 2 > lines.line_count() {
        return None;
    }
    let value_text = lines.line(line + 1);
    let close = lines.line(line + 2).trim();
    if close.strip_prefix("</")?.strip_suffix('>')? != open {
        return None;
    }
    let value = value_text.trim();
    if value.is_empty() || value.contains(char::is_whitespace) || value.contains('<') {
        return None;
    }
    let name_start = base + (text.len() - text.trim_start().len()) + 1;
    let value_base = lines.line_range(line + 1).start;
    let value_start = value_base + (value_text.len() - value_text.trim_start().len());
    Some(Assignment {
        name: name_start..name_start + open.len(),
        value: value_start..value_start + value.len(),
        quoted: false,
        label: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(content: &str) -> Vec<(String, String, bool)> {
        let lines = LineIndex::new(content);
        (1..=lines.line_count())
            .flat_map(|line| read(&lines, line))
            .map(|a| {
                (
                    content[a.name].to_owned(),
                    content[a.value].to_owned(),
                    a.quoted,
                )
            })
            .collect()
    }

    #[test]
    fn reads_each_syntax() {
        let expected = ("fooToken".to_owned(), "v4lue".to_owned());
        let has = |content: &str| {
            pairs(content)
                .into_iter()
                .any(|(name, value, _)| (name, value) == expected)
        };
        for line in [
            "fooToken=\"v4lue\"",
            "fooToken = v4lue",
            "\"fooToken\": \"v4lue\"",
            "fooToken: 'v4lue'",
            "string fooToken = \"v4lue\";",
            "var fooToken string = \"v4lue\"",
            "fooToken := `v4lue`",
            "var fooToken: String = \"v4lue\"",
            "$fooToken .= \"v4lue\"",
            "System.setProperty(\"fooToken\", \"v4lue\")",
            "  \"fooToken\" => \"v4lue\"",
            "fooToken ::= \"v4lue\"",
            "fooToken :::= \"v4lue\"",
            "fooToken ?= \"v4lue\"",
            "fooToken != \"v4lue\"",
            "{\"a.ini\": \"fooToken=v4lue\\nB=1\"}",
            "ENV fooToken v4lue",
            "<fooToken>\n  v4lue\n</fooToken>",
        ] {
            assert!(has(line), "{line}: {:?}", pairs(line));
        }
    }

    #[test]
    fn reads_environment_prefixes_and_long_options_of_a_command() {
        let has = |content: &str, name: &str, value: &str| {
            pairs(content)
                .into_iter()
                .any(|(n, v, quoted)| n == name && v == value && !quoted)
        };
        assert!(has(
            "PGPASSWORD=s3cr3tV4lue psql -h db",
            "PGPASSWORD",
            "s3cr3tV4lue"
        ));
        assert!(has(
            "env API_TOKEN=abc123XYZ ./deploy.sh",
            "API_TOKEN",
            "abc123XYZ"
        ));
        assert!(has(
            "mysql -u root --password=s3cr3tV4lue shop",
            "password",
            "s3cr3tV4lue"
        ));
        assert!(has(
            "mysql -u root --password s3cr3tV4lue shop",
            "password",
            "s3cr3tV4lue"
        ));
        assert!(has(
            "gh auth login --with-token abc123XYZ",
            "with-token",
            "abc123XYZ"
        ));
        // A variable, a quoted value (read by the operators) and a flag
        // followed by another flag are not command-line pairs.
        assert!(!has("PGPASSWORD=$PASS psql", "PGPASSWORD", "$PASS"));
        assert!(!has("run --verbose --password -", "password", "-"));
        assert!(pairs("cargo test --workspace").is_empty());
    }

    #[test]
    fn reads_passwords_passed_by_short_options() {
        let labelled = |content: &str| -> Vec<String> {
            let lines = LineIndex::new(content);
            read(&lines, 1)
                .into_iter()
                .filter(|a| a.label == Some("password"))
                .map(|a| content[a.value].to_owned())
                .collect()
        };
        assert_eq!(labelled("docker login -u ci -p v4lue9 reg.io"), ["v4lue9"]);
        assert_eq!(labelled("az login -p 'v4lue9' -u ci"), ["v4lue9"]);
        assert_eq!(labelled("psql -U app -P v4lue9"), ["v4lue9"]);
        assert_eq!(labelled("mysqldump -uroot -pv4lue9 shop"), ["v4lue9"]);
        assert_eq!(labelled("sudo sshpass -p v4lue9 scp a b"), ["v4lue9"]);
        assert_eq!(labelled("redis-cli -a v4lue9 info"), ["v4lue9"]);
        // Without a login or a user, `-p` is a port, a parent or a patch;
        // mysql's `-p` alone prompts; a variable or a path is no password.
        for line in [
            "mkdir -p a/b",
            "ssh -p 2222 host",
            "cp -u -p a.txt b/",
            "git add -p",
            "mysql -u root -p shop | tee out",
            "docker login -u ci -p $TOKEN reg.io",
            "docker login -u ci -p /run/secrets/pw reg.io",
        ] {
            assert_eq!(labelled(line), Vec::<String>::new(), "{line}");
        }
    }

    #[test]
    fn leaves_comparisons_and_urls() {
        assert_eq!(pairs("if a == b { }"), Vec::new());
        assert_eq!(pairs("see https://example.com/x"), Vec::new());
        assert_eq!(pairs("if (token != \"x\") {}"), Vec::new());
        // An unquoted value that goes on as an expression or as prose is no
        // literal.
        for line in [
            "f: Dict[Text, Callable[[CRFToken], Any]] = {",
            "key: crf_token.pos_tag[:2]",
            "PASS: sha3-256 roundtrip",
            "token = get_token(x)",
        ] {
            assert!(
                pairs(line)
                    .iter()
                    .all(|(name, _, _)| !name.to_lowercase().contains("token")
                        && !name.contains("PASS")
                        && name != "key"),
                "{line}: {:?}",
                pairs(line)
            );
        }
    }
}
