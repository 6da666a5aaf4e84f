# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running sacctmgr (part of the sacctmgr modules' code).

Runner reads with ``sacctmgr -nP show ENTITY format=...`` and writes with
``sacctmgr -i``, each invocation through command.run() (stdin closed, a
timeout), and turns the error texts sacctmgr prints into codes with a fix.
apply() runs a plan's commands in order. SacctmgrError is the error of all
the sacctmgr parts: running, values, reading and planning.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuhpc.slurm.plugins.module_utils.command import CommandError, run

# Known sacctmgr error texts (as Slurm 22.05 and 24.11 print them) -> (code, fix).
ERRORS = (
    (r'Problem talking to the database|Connection refused|Unable to connect to database|'
     r'slurmdbd.*(not responding|unreachable)|Socket timed out|Connection lost',
     'slurmdbd_unreachable', 'check that slurmdbd runs and answers on the controller (systemctl status slurmdbd)'),
    (r"Cluster '.*' has not been added|This cluster '.*' doesn't exist",
     'cluster_not_registered', 'start slurmctld once (it registers the cluster) or run: sacctmgr add cluster <name>'),
    (r'Unknown QOS flag',
     'bad_qos_flag', "use flags that Slurm knows (the QOS FLAGS of the sacctmgr man page), or flags: [] to clear them"),
    (r'Job\(s\) active, cancel job\(s\) before remove',
     'jobs_running', 'wait until the jobs of the associations listed end (squeue --account=ACCOUNT), or cancel '
                     'them, then run again'),
    (r'can not remove the default account of a user',
     'default_account', "change the default_account of the users listed first, or remove those users as well"),
    (r"bad qos|(Unknown|Invalid) (QOS|qos)|[Qq][Oo][Ss] .*(doesn't exist|does not exist)",
     'unknown_qos', 'add the QoS first (sacctmgr_qos, or slurm_accounting_qos)'),
    (r"No parent account|[Pp]arent account .*(doesn't exist|does not exist)",
     'parent_missing', 'add the parent account first, or correct parent'),
    (r"No account \S+ on cluster|This account '.*' doesn't exist",
     'account_missing', 'add the account first (sacctmgr_account, or slurm_accounting_accounts)'),
    (r'no TRES known|[Uu]nknown TRES|[Ii]nvalid TRES',
     'unknown_tres', 'add the TRES to AccountingStorageTRES in slurm.conf (e.g. gres/gpu) and restart slurmctld'),
    (r'[Aa]ccess denied|[Pp]ermission denied|[Oo]nly (root|admins?)|[Nn]ot authorized',
     'access_denied', 'run as root or as a Slurm administrator (AdminLevel=Admin)'),
)

# What sacctmgr says on a line of its own, with exit status 1, when there was nothing to do.
NOTHING = re.compile(r'^\s*(Nothing (new )?(added|deleted|modified)\.?|Already existing .*)\s*$', re.I | re.M)

# command.run()'s error codes -> (code, fix)
RUN_ERRORS = dict(
    timeout=('timeout', 'check that slurmdbd answers (sacctmgr ping), or raise timeout'),
    cannot_run=('no_sacctmgr', 'run this on a host with the Slurm client commands (the controller)'),
)


class SacctmgrError(Exception):
    """What went wrong (code), in words that name the entity or command (message), and what to do (fix)."""

    def __init__(self, code, message, fix):
        super(SacctmgrError, self).__init__(message)
        self.code = code
        self.message = message
        self.fix = fix
        # set by apply() when a write fails half-way
        self.applied = []
        self.not_applied = []


class Runner:
    """Runs sacctmgr; counts invocations and keeps the commands run."""

    def __init__(self, binary='sacctmgr', timeout=60):
        self.binary = binary
        self.timeout = timeout
        self.calls = 0
        self.commands = []

    def _run(self, args):
        """(rc, stdout, stderr) of ``sacctmgr ARGS``; only a timeout or a binary
        that cannot run is an error here, read() and write() judge the rest."""
        self.calls += 1
        self.commands.append(' '.join(args))
        try:
            return run([self.binary] + args, self.timeout, 'sacctmgr ' + ' '.join(args))
        except CommandError as e:
            code, fix = RUN_ERRORS[e.code]
            raise SacctmgrError(code, e.message, fix)

    @staticmethod
    def classify(text):
        for pattern, code, fix in ERRORS:
            if re.search(pattern, text):
                return code, fix
        return None

    def read(self, entity, fields, where=(), options=()):
        """Rows of `sacctmgr -nP show ENTITY [where ...] format=... [options]` as lists of strings."""
        args = ['-nP', 'show', entity] + list(where) + ['format=' + ','.join(fields)] + list(options)
        rc, out, err = self._run(args)
        found = self.classify(err)
        if rc != 0 or found:
            code, fix = found or ('sacctmgr_failed', 'see the message')
            raise SacctmgrError(code, 'sacctmgr %s: %s' % (' '.join(args), (err or out).strip()), fix)
        rows = []
        for line in out.splitlines():
            if not line.strip():
                continue
            cells = line.split('|')
            # -P ends each line with '|' on some releases; keep exactly len(fields)
            rows.append((cells + [''] * len(fields))[:len(fields)])
        return rows

    def write(self, args):
        """`sacctmgr -i ARGS`. sacctmgr exits 1 both for errors and for 'nothing to
        do', and 0 for some refusals (running jobs, a default account) that it
        prints on stderr. Its stdout echoes the request (descriptions included),
        so stdout is read only after a non-zero exit."""
        rc, out, err = self._run(['-i'] + args)
        found = self.classify(err)
        if found is None and rc != 0:
            found = self.classify(out)
            if found is None and NOTHING.search(out):
                return out
            found = found or ('sacctmgr_failed', 'see the message')
        if found:
            raise SacctmgrError(found[0], 'sacctmgr %s: %s' % (' '.join(args), ' '.join((out + '\n' + err).split())),
                                found[1])
        return out


def apply(runner, plan):
    """Run the plan's commands in order; on a failure say what was applied and what was not."""
    done = []
    for index, (args, dummy) in enumerate(plan.steps):
        try:
            runner.write(args)
        except SacctmgrError as e:
            e.applied = done
            e.not_applied = [' '.join(a) for a, dummy in plan.steps[index:]]
            raise
        done.append(' '.join(args))
    return done
