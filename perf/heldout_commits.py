#!/usr/bin/env python3
"""A held-out set of commit tasks drawn from bare clones: for each repository,
up to 16 commits (seeded shuffle of the last 3,000 non-merge commits) whose
subject has three or more words and no release/docs/CI words, which modify
one to three non-test Python files and at most 12 files in all. Gold files are
those source files (modified, so they exist at the parent); the bench takes
each fix's hunks from the commit.

    python3 perf/heldout_commits.py --mirrors /work/.mirror --out /tmp/ho/tasks-heldout-commits.jsonl
    aic bench perf/heldout-commits.toml --clones /work/.mirror --data /tmp/ho --jobs 2 --no-speed

The set depends on the clones' HEAD: results name the commit of each clone.
It is for checking a rule fitted on the dev sets, not for tuning one.
"""
import argparse
import json
import random
import re
import subprocess
import sys

REPOS = [
    "marshmallow-code/marshmallow",
    "pydicom/pydicom",
    "pvlib/pvlib-python",
    "pylint-dev/astroid",
    "sqlfluff/sqlfluff",
]
PER_REPO = 16
TEST_PATH = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_test\.py$|conftest\.py$")
NOT_A_TASK = re.compile(
    r"(?i)\b(bump|release|merge|changelog|typo|docs?\b|readme|pre-commit|ci\b|version)\b"
)


def git(git_dir, *args):
    return subprocess.run(
        ["git", "--git-dir", git_dir, *args], capture_output=True, text=True, check=True
    ).stdout


def tasks_of(repo, git_dir):
    log = git(git_dir, "log", "--no-merges", "--format=%H%x00%s%x00%ad", "--date=short", "-n", "3000", "HEAD")
    commits = log.splitlines()
    random.shuffle(commits)
    picked = 0
    for line in commits:
        if picked >= PER_REPO:
            return
        commit, subject, date = line.split("\x00")
        if NOT_A_TASK.search(subject) or len(subject.split()) < 3:
            continue
        changes = git(git_dir, "diff", "--name-status", commit + "^", commit).splitlines()
        modified = [c.split("\t")[-1] for c in changes if c[0] == "M"]
        source = [
            f for f in modified
            if f.endswith(".py") and not TEST_PATH.search(f) and not f.startswith(("docs/", "doc/"))
        ]
        tests = [f for f in modified if TEST_PATH.search(f)]
        if not 1 <= len(source) <= 3 or len(changes) > 12:
            continue
        picked += 1
        yield {
            "id": repo.split("/")[1][:10] + "-" + commit[:10],
            "repo": repo,
            "base_commit": git(git_dir, "rev-parse", commit + "^").strip(),
            "intent": subject,
            "intent_long": None,
            "gold_files": source,
            "gold_test_files": tests,
            "language": "Python",
            "names_path": False,
            "source": "commit",
            "commit": commit,
            "date": date,
            "added_files": [c.split("\t")[-1] for c in changes if c[0] == "A"],
            "other_changed_files": [f for f in modified if f not in source and f not in tests],
        }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", default="/work/.mirror", help="bare clones as OWNER+NAME/repo")
    parser.add_argument("--out", required=True, help="the tasks file to write (JSON lines)")
    args = parser.parse_args()
    random.seed(7)
    count = 0
    with open(args.out, "w") as out:
        for repo in REPOS:
            git_dir = f"{args.mirrors}/{repo.replace('/', '+')}/repo"
            try:
                git(git_dir, "rev-parse", "HEAD")
            except subprocess.CalledProcessError:
                sys.exit(f"no bare clone of {repo} at {git_dir}: clone it there (git clone --bare) or pass --mirrors")
            for task in tasks_of(repo, git_dir):
                out.write(json.dumps(task) + "\n")
                count += 1
    print(f"{count} tasks written to {args.out}")


if __name__ == "__main__":
    main()
