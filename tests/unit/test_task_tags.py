"""Every task of every role carries one of its role's tags, <role>_install, <role>_configure or <role>_run,
so that `--tags slurmd_configure` runs what it names and what it needs; or `always` alone (its preflight,
the facts and settings the others read), so that `--skip-tags slurmd_run` keeps it (docs/operations.md:
Tags)."""
import glob
import os
import re

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROLES = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, 'roles', '*')))
KINDS = ('install', 'configure', 'run')


def tasks_of(role):
    """(file, task, tags) for every task of the role, a block's tags given to what it holds."""
    found = []

    def walk(items, path, inherited):
        for task in items or []:
            tags = set(task.get('tags') or []) | inherited
            if 'block' in task:
                for key in ('block', 'rescue', 'always'):
                    walk(task.get(key), path, tags)
            else:
                found.append((path, task, tags))

    for path in sorted(glob.glob(os.path.join(ROOT, 'roles', role, 'tasks', '*.yml'))):
        with open(path) as f:
            walk(yaml.safe_load(f), os.path.relpath(path, ROOT), set())
    return found


def module(task):
    return next(((k, v) for k, v in task.items() if k.startswith(('ansible.builtin.', 'gpuhpc.slurm.'))),
                (None, None))


def reads(task, name, role_vars=None):
    """Whether the task reads `name` without a default or an `is defined` guard, itself or through the
    role's vars/main.yml entries it reads (two levels deep)."""
    text = yaml.safe_dump({k: v for k, v in task.items() if k not in ('register', 'name')})
    for dummy in range(2):
        text += ''.join(yaml.safe_dump(v) for k, v in (role_vars or {}).items()
                        if re.search(r'\b%s\b' % re.escape(k), text))
    return (re.search(r'\b%s\b(?!\s*\|\s*default)' % re.escape(name), text) is not None
            and '%s is defined' % name not in text)


@pytest.mark.parametrize('role', ROLES)
def test_every_task_has_a_tag_of_its_role(role):
    own = set('%s_%s' % (role, kind) for kind in KINDS)
    untagged = ['%s: %s' % (path, task.get('name')) for path, task, tags in tasks_of(role)
                if not tags & (own | {'always'})]
    assert untagged == [], 'tag these with %s or always: %s' % (' or '.join(sorted(own)), untagged)


@pytest.mark.parametrize('role', ROLES)
def test_a_task_tagged_always_carries_no_other_tag(role):
    # --skip-tags X skips a task tagged X even where it is tagged always too: `--skip-tags <role>_run`
    # would then skip the preflight and the facts every other task reads
    mixed = ['%s: %s' % (path, task.get('name')) for path, task, tags in tasks_of(role)
             if 'always' in tags and tags != {'always'}]
    assert mixed == [], 'tag these [always] only: %s' % mixed


@pytest.mark.parametrize('role', ROLES)
def test_an_included_role_runs_under_the_callers_tags(role):
    # include_role is dynamic: the included tasks carry the caller's tags only through `apply`
    wrong = []
    for path, task, tags in tasks_of(role):
        name, args = module(task)
        if name == 'ansible.builtin.include_role' and args.get('tasks_from') != 'preflight':
            applied = set((args.get('apply') or {}).get('tags') or [])
            if not set(task.get('tags') or []) <= applied:
                wrong.append('%s: %s' % (path, task.get('name')))
    assert wrong == [], 'give these `apply: {tags: <the same tags>}`: %s' % wrong


@pytest.mark.parametrize('role', ROLES)
def test_no_task_reads_a_result_that_its_tags_may_skip(role):
    # a result registered (or a fact set) only under other tags is undefined under --tags <this one>
    tasks = tasks_of(role)
    with open(os.path.join(ROOT, 'roles', role, 'vars', 'main.yml')) if os.path.exists(
            os.path.join(ROOT, 'roles', role, 'vars', 'main.yml')) else open(os.devnull) as f:
        role_vars = yaml.safe_load(f) or {}
    defaults = set(role_vars)
    made = {}
    for path, task, tags in tasks:
        names = [task['register']] if 'register' in task else []
        name, args = module(task)
        if name == 'ansible.builtin.set_fact' and isinstance(args, dict):
            names += list(args)
        for n in names:
            made.setdefault(n, set()).update(tags)
    handlers = []
    hpath = os.path.join(ROOT, 'roles', role, 'handlers', 'main.yml')
    if os.path.exists(hpath):
        with open(hpath) as f:
            handlers = [('handlers/main.yml', h, None) for h in yaml.safe_load(f) or []]
    wrong = []
    for path, task, tags in tasks + handlers:
        for n, made_under in made.items():
            if n in defaults or 'always' in made_under or not reads(task, n, role_vars):
                continue
            # a handler runs after any task that notifies it, and a task tagged always under any tags: what
            # they read must be there under any tags
            if tags is None or 'always' in tags or not made_under & tags:
                wrong.append('%s: %r reads %s (set under %s)' % (path, task.get('name'), n, sorted(made_under)))
    assert wrong == [], wrong
