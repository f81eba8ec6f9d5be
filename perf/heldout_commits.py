#!/usr/bin/env python3
"""A held-out set of commit tasks drawn from bare clones: for each repository,
up to 16 commits (seeded shuffle of the last 3,000 non-merge commits) whose
subject has three or more words and no release/docs/CI words, which modify
one to three non-test Python files and at most 12 files in all. Gold files are
those source files; the bench takes each fix's hunks from the commit.

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

parser = argparse.ArgumentParser()
parser.add_argument('--mirrors', default='/work/.mirror')
parser.add_argument('--out', required=True)
args = parser.parse_args()
random.seed(7)
repos={'marshmallow-code/marshmallow':'Python','pydicom/pydicom':'Python','pvlib/pvlib-python':'Python','pylint-dev/astroid':'Python','sqlfluff/sqlfluff':'Python'}
out=open(args.out, 'w')
testpat=re.compile(r'(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_test\.py$|conftest\.py$')
n=0
for repo,lang in repos.items():
  gd=f"{args.mirrors}/{repo.replace('/','+')}/repo"
  log=subprocess.run(['git','--git-dir',gd,'log','--no-merges','--format=%H%x00%s%x00%ad','--date=short','-n','3000','HEAD'],capture_output=True,text=True).stdout.splitlines()
  random.shuffle(log)
  picked=0
  for line in log:
    if picked>=16: break
    h,subj,date=line.split('\x00')
    if re.search(r'(?i)\b(bump|release|merge|changelog|typo|docs?\b|readme|pre-commit|ci\b|version)\b',subj) or len(subj.split())<3: continue
    files=subprocess.run(['git','--git-dir',gd,'diff','--name-status',h+'^',h],capture_output=True,text=True).stdout.splitlines()
    mod=[l.split('\t')[-1] for l in files if l[0]=='M']
    src=[f for f in mod if f.endswith('.py') and not testpat.search(f) and not f.startswith(('docs/','doc/'))]
    tests=[f for f in mod if testpat.search(f)]
    added=[l.split('\t')[-1] for l in files if l[0]=='A']
    if not (1<=len(src)<=3) or len(files)>12: continue
    # gold must exist at parent
    t={'id':repo.split('/')[1][:10]+'-'+h[:10],'repo':repo,'base_commit':h+'^','intent':subj,'intent_long':None,'gold_files':src,'gold_test_files':tests,'language':lang,'names_path':False,'source':'commit','commit':h,'date':date,'added_files':added,'other_changed_files':[f for f in mod if f not in src and f not in tests]}
    base=subprocess.run(['git','--git-dir',gd,'rev-parse',h+'^'],capture_output=True,text=True).stdout.strip()
    t['base_commit']=base
    out.write(json.dumps(t)+'\n'); picked+=1; n+=1
print(n)
