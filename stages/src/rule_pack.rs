//! RulePackResolver (`docs/rule-packs.md`): built-in packs embedded as JSON data files
//! (`stages/rule_packs/*.json`), project packs from `aic-rules/`, and the merge.
//!
//! Merge rules: arrays (`constraints`, `includePatterns`, `excludePatterns`,
//! `heuristic.boostPatterns`, `heuristic.penalizePatterns`) are concatenated and
//! deduplicated keeping first occurrence; scalars (`name`, `version`,
//! `description`, `budgetOverride`) are last-wins. The layer order is: the
//! packs listed in config `rulePacks`, with `built-in:<taskClass>` placed right
//! after `built-in:default`, then the project pack `aic-rules/<taskClass>.json`.
//! A missing or invalid pack is a warning and is skipped.
//!
//! Reading project packs is I/O: [`RulePackResolver::plan`] names the packs to
//! load, the binary reads the project ones, and [`RulePackResolver::resolve`]
//! merges what was loaded.

use serde::{Deserialize, Serialize};

use crate::fit::tokens::TokenCount;
use crate::select::intent::TaskClass;

/// A rule pack as written in JSON.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RulePack {
    /// Pack name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Pack format version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// What the pack is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Constraints injected into the prompt.
    #[serde(default)]
    pub constraints: Vec<String>,
    /// When non-empty, only files matching one of these globs are candidates.
    #[serde(default)]
    pub include_patterns: Vec<String>,
    /// Files matching any of these globs are never candidates.
    #[serde(default)]
    pub exclude_patterns: Vec<String>,
    /// Base token budget for this task class, overriding config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_override: Option<u32>,
    /// Score modifiers.
    #[serde(default)]
    pub heuristic: HeuristicPatterns,
}

/// `heuristic` of a rule pack: ±0.2 score modifiers per matching glob.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HeuristicPatterns {
    /// Each matching glob adds 0.2.
    #[serde(default)]
    pub boost_patterns: Vec<String>,
    /// Each matching glob subtracts 0.2.
    #[serde(default)]
    pub penalize_patterns: Vec<String>,
}

impl RulePack {
    /// The merged pack's budget override as a token count.
    pub fn budget_override_tokens(&self) -> Option<TokenCount> {
        self.budget_override.map(TokenCount)
    }

    fn merge(&mut self, overlay: Self) {
        fn extend(target: &mut Vec<String>, items: Vec<String>) {
            for item in items {
                if !target.contains(&item) {
                    target.push(item);
                }
            }
        }
        if overlay.name.is_some() {
            self.name = overlay.name;
        }
        if overlay.version.is_some() {
            self.version = overlay.version;
        }
        if overlay.description.is_some() {
            self.description = overlay.description;
        }
        if overlay.budget_override.is_some() {
            self.budget_override = overlay.budget_override;
        }
        extend(&mut self.constraints, overlay.constraints);
        extend(&mut self.include_patterns, overlay.include_patterns);
        extend(&mut self.exclude_patterns, overlay.exclude_patterns);
        extend(
            &mut self.heuristic.boost_patterns,
            overlay.heuristic.boost_patterns,
        );
        extend(
            &mut self.heuristic.penalize_patterns,
            overlay.heuristic.penalize_patterns,
        );
    }
}

/// Where a pack comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PackRef {
    /// An embedded pack, by name (`default`, `bugfix`, …); written `built-in:<name>`.
    BuiltIn(String),
    /// A pack file, by path relative to the project root.
    Project(String),
}

impl PackRef {
    /// The name shown in traces: `built-in:<name>` or the relative path.
    pub fn label(&self) -> String {
        match self {
            Self::BuiltIn(name) => format!("built-in:{name}"),
            Self::Project(path) => path.clone(),
        }
    }
}

/// The outcome of loading one project pack file.
#[derive(Clone, Debug)]
pub enum PackSource {
    /// The file's text.
    Text(String),
    /// The file does not exist.
    Missing,
    /// The file exists but could not be read; the message says why.
    Unreadable(String),
}

/// A merged rule pack with the record of how it was made.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolvedRulePack {
    /// The merged pack.
    pub pack: RulePack,
    /// Labels of the packs merged, in order.
    pub applied: Vec<String>,
    /// One line per pack skipped, saying which and why.
    pub warnings: Vec<String>,
}

/// Resolves and merges rule packs.
#[derive(Clone, Copy, Debug, Default)]
pub struct RulePackResolver;

const BUILT_IN: &[(&str, &str)] = &[
    ("default", include_str!("../rule_packs/default.json")),
    ("refactor", include_str!("../rule_packs/refactor.json")),
    ("bugfix", include_str!("../rule_packs/bugfix.json")),
    ("feature", include_str!("../rule_packs/feature.json")),
    ("docs", include_str!("../rule_packs/docs.json")),
    ("test", include_str!("../rule_packs/test.json")),
    ("general", include_str!("../rule_packs/general.json")),
];

/// The constraints of one built-in pack (`default`, `bugfix`, …), in its
/// order; empty for an unknown name. The `default` pack's are in every
/// prompt; a task class's only in that class's prompts.
pub fn built_in_pack_constraints(name: &str) -> Vec<String> {
    BUILT_IN
        .iter()
        .filter(|(pack, _)| *pack == name)
        .filter_map(|(_, text)| serde_json::from_str::<RulePack>(text).ok())
        .flat_map(|pack| pack.constraints)
        .collect()
}

/// The conventional project pack path for a task class.
pub fn project_pack_path(task_class: TaskClass) -> String {
    format!("aic-rules/{}.json", task_class.as_str())
}

impl RulePackResolver {
    /// The packs to merge for a task class, in order (see the module docs).
    ///
    /// `configured` is config `rulePacks`: entries `built-in:<name>` name embedded
    /// packs, anything else is a path relative to the project root.
    pub fn plan(&self, task_class: TaskClass, configured: &[String]) -> Vec<PackRef> {
        let class_pack = PackRef::BuiltIn(task_class.as_str().to_owned());
        let mut plan: Vec<PackRef> = Vec::new();
        for entry in configured {
            let pack = match entry.strip_prefix("built-in:") {
                Some(name) => PackRef::BuiltIn(name.to_owned()),
                None => PackRef::Project(entry.trim_start_matches("./").to_owned()),
            };
            let is_default = pack == PackRef::BuiltIn("default".to_owned());
            if !plan.contains(&pack) {
                plan.push(pack);
            }
            if is_default && !plan.contains(&class_pack) {
                plan.push(class_pack.clone());
            }
        }
        if !plan.contains(&class_pack) {
            plan.push(class_pack);
        }
        let project = PackRef::Project(project_pack_path(task_class));
        if !plan.contains(&project) {
            plan.push(project);
        }
        plan
    }

    /// Merges the planned packs. `load` is called for each [`PackRef::Project`] and
    /// returns its file's content.
    ///
    /// A project pack that is missing is skipped silently when it is the
    /// conventional `aic-rules/<taskClass>.json` (most projects have none) and with
    /// a warning when config names it; an unreadable or invalid pack, and an
    /// unknown built-in name, are skipped with a warning.
    pub fn resolve(
        &self,
        task_class: TaskClass,
        plan: &[PackRef],
        mut load: impl FnMut(&str) -> PackSource,
    ) -> ResolvedRulePack {
        let conventional = project_pack_path(task_class);
        let mut resolved = ResolvedRulePack::default();
        for pack_ref in plan {
            let label = pack_ref.label();
            let parsed = match pack_ref {
                PackRef::BuiltIn(name) => match BUILT_IN.iter().find(|(n, _)| n == name) {
                    Some((_, text)) => parse_rule_pack(text),
                    None => Err(format!(
                        "unknown built-in pack; built-ins are {}",
                        BUILT_IN
                            .iter()
                            .map(|(n, _)| format!("built-in:{n}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                },
                PackRef::Project(path) => match load(path) {
                    PackSource::Text(text) => parse_rule_pack(&text),
                    PackSource::Missing if *path == conventional => continue,
                    PackSource::Missing => Err("file not found".to_owned()),
                    PackSource::Unreadable(why) => Err(why),
                },
            };
            match parsed {
                Ok(pack) => {
                    resolved.pack.merge(pack);
                    resolved.applied.push(label);
                }
                Err(why) => resolved
                    .warnings
                    .push(format!("Rule pack `{label}` skipped: {why}")),
            }
        }
        resolved
    }
}

/// Parses and validates one rule pack.
///
/// # Errors
///
/// A one-line description naming the JSON error or the first invalid glob.
pub fn parse_rule_pack(text: &str) -> Result<RulePack, String> {
    let pack: RulePack = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let lists = [
        ("includePatterns", &pack.include_patterns),
        ("excludePatterns", &pack.exclude_patterns),
        ("heuristic.boostPatterns", &pack.heuristic.boost_patterns),
        (
            "heuristic.penalizePatterns",
            &pack.heuristic.penalize_patterns,
        ),
    ];
    for (field, patterns) in lists {
        for (index, pattern) in patterns.iter().enumerate() {
            if let Err(error) = globset::Glob::new(pattern) {
                return Err(format!(
                    "{field}[{index}]: invalid glob `{pattern}`: {}",
                    error.kind()
                ));
            }
        }
    }
    Ok(pack)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_pack_parses() {
        for (name, text) in BUILT_IN {
            let pack = parse_rule_pack(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(pack.name.as_deref(), Some(*name));
        }
        for class in TaskClass::ALL {
            assert!(BUILT_IN.iter().any(|(n, _)| *n == class.as_str()));
        }
    }

    #[test]
    fn plan_places_class_pack_after_default_and_project_pack_last() {
        let plan = RulePackResolver.plan(
            TaskClass::Refactor,
            &[
                "built-in:default".to_owned(),
                "./aic-rules/team.json".to_owned(),
            ],
        );
        let labels: Vec<String> = plan.iter().map(PackRef::label).collect();
        assert_eq!(
            labels,
            [
                "built-in:default",
                "built-in:refactor",
                "aic-rules/team.json",
                "aic-rules/refactor.json"
            ]
        );
    }

    #[test]
    fn merge_concatenates_arrays_and_last_scalar_wins() {
        let plan = RulePackResolver.plan(TaskClass::Bugfix, &["built-in:default".to_owned()]);
        let resolved = RulePackResolver.resolve(TaskClass::Bugfix, &plan, |path| {
            assert_eq!(path, "aic-rules/bugfix.json");
            PackSource::Text(
                r#"{"constraints": ["Fix the root cause rather than masking the symptom", "Log the fix"],
                    "budgetOverride": 9000, "heuristic": {"boostPatterns": ["src/core/**"]}}"#
                    .to_owned(),
            )
        });
        let pack = &resolved.pack;
        assert_eq!(resolved.applied.len(), 3);
        assert_eq!(pack.budget_override, Some(9000));
        let root_cause = pack
            .constraints
            .iter()
            .filter(|c| c.starts_with("Fix the root cause"))
            .count();
        assert_eq!(root_cause, 1, "duplicates are removed");
        assert_eq!(
            pack.constraints.last().map(String::as_str),
            Some("Log the fix")
        );
        assert!(
            pack.heuristic
                .boost_patterns
                .contains(&"src/core/**".to_owned())
        );
        assert!(!pack.heuristic.penalize_patterns.is_empty());
    }

    #[test]
    fn missing_conventional_pack_is_silent_but_bad_packs_warn() {
        let plan = RulePackResolver.plan(
            TaskClass::Docs,
            &[
                "built-in:default".to_owned(),
                "built-in:nope".to_owned(),
                "team.json".to_owned(),
            ],
        );
        let resolved = RulePackResolver.resolve(TaskClass::Docs, &plan, |path| match path {
            "team.json" => PackSource::Text(r#"{"includePatterns": ["src/[x"]}"#.to_owned()),
            _ => PackSource::Missing,
        });
        assert_eq!(resolved.applied, ["built-in:default", "built-in:docs"]);
        assert_eq!(resolved.warnings.len(), 2);
        assert!(resolved.warnings[0].contains("built-in:nope"));
        assert!(resolved.warnings[1].contains("includePatterns[0]"));
    }

    #[test]
    fn unknown_fields_make_a_pack_invalid() {
        let err = parse_rule_pack(r#"{"constraint": ["typo"]}"#).unwrap_err();
        assert!(err.contains("unknown field `constraint`"), "{err}");
    }
}
