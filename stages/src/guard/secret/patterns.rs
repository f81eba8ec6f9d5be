//! The secret patterns: per pattern, its id, message, prefilter keywords,
//! regex, the plausibility check a match must pass, and its rank when matches
//! overlap. One table, so a new provider is one entry.

/// One secret pattern: its id, the finding message, the literal keywords that any
/// match is near (the prefilter), and the regex run on the candidate lines.
pub(super) struct SecretPattern {
    pub(super) id: &'static str,
    pub(super) message: &'static str,
    pub(super) keywords: &'static [&'static str],
    /// Whether the keywords are matched ignoring ASCII case.
    pub(super) keywords_any_case: bool,
    /// Lines on each side of a keyword's line that are candidates too (0: the
    /// keyword's line only).
    pub(super) context_lines: u32,
    /// The regex; a `value` group, when present, is the part that is redacted.
    pub(super) regex: &'static str,
    pub(super) check: Check,
    /// Which of two overlapping matches wins: the lower rank (provider tokens are
    /// 0, the generic assignments 1 and 2).
    pub(super) rank: u8,
}

/// The extra test a regex match must pass before it is reported.
#[derive(Clone, Copy)]
pub(super) enum Check {
    /// A provider token: not filler (see [`is_filler`](super::plausibility::is_filler)) and holding the classes.
    Token(Classes),
    /// An Azure storage key: a token that is not a published emulator key.
    AzureKey,
    /// The regex is enough.
    None,
    /// [`plausible_api_key`](super::plausibility::plausible_api_key).
    GenericApiKey,
    /// [`plausible_secret_assignment`](super::plausibility::plausible_secret_assignment).
    SecretAssignment,
    /// [`plausible_private_key`]; the redacted span is the whole key block.
    PrivateKey,
}

/// Character classes a token must hold.
#[derive(Clone, Copy)]
pub(super) enum Classes {
    /// Any.
    Any,
    /// A digit and an ASCII letter.
    DigitAndLetter,
    /// A digit, a lower-case and an upper-case ASCII letter.
    DigitLowerUpper,
}

/// Rank of provider-specific patterns.
pub(super) const PROVIDER: u8 = 0;

/// The secret patterns: the classic six (cloud keys, tokens, private keys,
/// assignments), tightened, plus the provider tokens listed on
/// [`SecretScanner`](super::SecretScanner).
pub(super) const SECRET_PATTERNS: &[SecretPattern] = &[
    SecretPattern {
        id: "aws-access-key",
        message: "Possible AWS access key",
        keywords: &["AKIA", "ASIA", "ABIA", "ACCA"],
        keywords_any_case: false,
        context_lines: 0,
        regex: r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?-u:\b)",
        check: Check::Token(Classes::Any),
        rank: PROVIDER,
    },
    SecretPattern {
        id: "github-token",
        message: "Possible GitHub token",
        keywords: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        keywords_any_case: false,
        context_lines: 0,
        regex: r"(?-u:\b)gh[pousr]_[A-Za-z0-9]{36,}",
        check: Check::Token(Classes::Any),
        rank: PROVIDER,
    },
    SecretPattern {
        id: "github-fine-grained-token",
        message: "Possible GitHub fine-grained token",
        keywords: &["github_pat_"],
        keywords_any_case: false,
        context_lines: 0,
        regex: r"(?-u:\b)github_pat_[A-Za-z0-9_]{60,}",
        check: Check::Token(Classes::Any),
        rank: PROVIDER,
    },
    SecretPattern {
        id: "gitlab-token",
        message: "Possible GitLab personal access token",
        keywords: &["glpat-"],
        keywords_any_case: false,
        context_lines: 0,
        regex: r"(?-u:\b)glpat-[A-Za-z0-9_\-]{20,}",
        check: Check::Token(Classes::Any),
        rank: PROVIDER,
    },
    SecretPattern {
        id: "slack-token",
        message: "Possible Slack token",
        keywords: &["xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-"],
        keywords_any_case: false,
        context_lines: 0,
        regex: r"(?-u:\b)xox[baprs]-[0-9]+-[0-9A-Za-z\-]{20,}",
        check: Check::Token(Classes::Any),
        rank: PROVIDER,
    },
    SecretPattern {
        id: "slack-webhook",
        message: "Possible Slack webhook URL",
        keywords: &["hooks.slack.com/"],
        keywords_any_case: false,
        context_lines: 0,
        regex: r"(?-u:\b)hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+\-]{30,}",
        check: Check::Token(Classes::Any),
        rank: PROVIDER,
    },
    SecretPattern {
        id: "google-api-key",
        message: "Possible Google API key",
        keywords: &["AIza"],
        keywords_any_case: false,
        context_lines: 0,
        regex: r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}",
        check: Check::Token(Classes::Any),
        rank: PROVIDER,
    },
    SecretPattern {
        id: "openai-api-key",
        message: "Possible OpenAI API key",
        keywords: &["sk-"],
        keywords_any_case: false,
        context_lines: 0,
        regex: r"(?-u:\b)sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}|[A-Za-z0-9]{48}(?-u:\b))",
        check: Check::Token(Classes::DigitLowerUpper),
        rank: PROVIDER,
    },
    SecretPattern {
        id: "anthropic-api-key",
        message: "Possible Anthropic API key",
        keywords: &["sk-ant-"],
        keywords_any_case: false,
        context_lines: 0,
        regex: r"(?-u:\b)sk-ant-[a-z]{3,8}[0-9]{2}-[A-Za-z0-9_\-]{40,}",
        check: Check::Token(Classes::Any),
        rank: PROVIDER,
    },
    SecretPattern {
        id: "npm-token",
        message: "Possible npm access token",
        keywords: &["npm_"],
        keywords_any_case: false,
        context_lines: 0,
        regex: r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)",
        check: Check::Token(Classes::DigitAndLetter),
        rank: PROVIDER,
    },
    SecretPattern {
        id: "pypi-token",
        message: "Possible PyPI API token",
        keywords: &["pypi-AgE"],
        keywords_any_case: false,
        context_lines: 0,
        regex: r"(?-u:\b)pypi-AgE[A-Za-z0-9_\-]{50,}",
        check: Check::Token(Classes::Any),
        rank: PROVIDER,
    },
    SecretPattern {
        id: "stripe-secret-key",
        message: "Possible Stripe secret key",
        keywords: &["sk_live_", "sk_test_", "rk_live_", "rk_test_"],
        keywords_any_case: false,
        context_lines: 0,
        regex: r"(?-u:\b)[sr]k_(?:live|test)_[0-9a-zA-Z]{24,}",
        check: Check::Token(Classes::Any),
        rank: PROVIDER,
    },
    SecretPattern {
        id: "twilio-key",
        message: "Possible Twilio API key or account SID",
        keywords: &["twilio"],
        keywords_any_case: true,
        context_lines: 2,
        regex: r"(?-u:\b)(?:SK|AC)[0-9a-fA-F]{32}(?-u:\b)",
        check: Check::Token(Classes::DigitAndLetter),
        rank: PROVIDER,
    },
    SecretPattern {
        id: "sendgrid-api-key",
        message: "Possible SendGrid API key",
        keywords: &["SG."],
        keywords_any_case: false,
        context_lines: 0,
        regex: r"(?-u:\b)SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
        check: Check::Token(Classes::Any),
        rank: PROVIDER,
    },
    SecretPattern {
        id: "azure-storage-key",
        message: "Possible Azure storage account key",
        keywords: &["AccountKey="],
        keywords_any_case: false,
        context_lines: 0,
        regex: r"AccountKey=(?P<value>[A-Za-z0-9+/]{86}==)",
        check: Check::AzureKey,
        rank: PROVIDER,
    },
    SecretPattern {
        id: "jwt",
        message: "Possible JSON Web Token",
        keywords: &["eyJ"],
        keywords_any_case: false,
        context_lines: 0,
        regex: r"eyJ[A-Za-z0-9\-_=]+\.eyJ[A-Za-z0-9\-_=]+\.[A-Za-z0-9\-_.+/=]+",
        check: Check::None,
        rank: PROVIDER,
    },
    SecretPattern {
        id: "private-key",
        message: "Possible private key",
        keywords: &["PRIVATE KEY"],
        keywords_any_case: false,
        context_lines: 0,
        regex: r"-----BEGIN [A-Z0-9 ]{0,24}PRIVATE KEY(?: BLOCK)?-----",
        check: Check::PrivateKey,
        rank: PROVIDER,
    },
    SecretPattern {
        id: "generic-api-key",
        message: "Possible API key assignment",
        keywords: &["api_key", "apikey", "api-key"],
        keywords_any_case: true,
        context_lines: 0,
        regex: r#"(?i)api[_-]?key["'`]?\s*(?::=|=>|[:=])\s*(?P<quote>["'`]?)(?P<value>[A-Za-z0-9_\-]{20,})"#,
        check: Check::GenericApiKey,
        rank: 1,
    },
    SecretPattern {
        id: "secret-assignment",
        message: "Possible secret assigned to an environment-style name",
        keywords: &[
            "SECRET",
            "TOKEN",
            "PASS",
            "PWD",
            "KEY",
            "CREDENTIAL",
            "AUTH",
        ],
        keywords_any_case: false,
        context_lines: 0,
        regex: r#"(?-u:\b)(?P<name>[A-Z][A-Z0-9_]*)["'`]?[ \t]*(?::=|=>|[:=])[ \t]*(?P<quote>["'`]?)(?P<value>[A-Za-z0-9+/=_\-.!@#%^&*~]{20,})"#,
        check: Check::SecretAssignment,
        rank: 2,
    },
];
