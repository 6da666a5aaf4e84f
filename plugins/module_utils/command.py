# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running a Slurm client command, the one way the collection does it.

An argument list (no shell), stdin closed (a command that asks never waits),
stdout and stderr captured as text, a fixed environment (the caller's, less
the variables through which Slurm's client commands change what they print:
SLURM_TIME_FORMAT, SQUEUE_FORMAT, SLURM_CLUSTERS, ...), and a timeout after
which the command is killed. run() hands back the exit status for the caller to judge (sacctmgr
exits 1 for "nothing to do"); check() takes any status but 0 as a failure.
Plain Python, no AnsibleModule: the benchmarks and the fixture captures run
the same code on a lab host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import subprocess

# Variables that change what Slurm's client commands print or ask (their
# output formats, time format, clusters, federation, partitions): none reaches
# a command the collection runs. SLURM_CONF (where slurm.conf is) is kept.
_SLURM_ENV = re.compile(r'^(SLURM_|SACCT|SQUEUE_|SINFO_|SCONTROL_|SREPORT_|SSHARE_|SPRIO_|SDIAG_|SBATCH_|'
                        r'SALLOC_|SRUN_|SCANCEL_|SSTAT_)')
_KEPT = ('SLURM_CONF',)


def environment(base=None):
    """``base`` (default: this process's environment) without the Slurm client variables."""
    base = os.environ if base is None else base
    return dict((k, v) for k, v in base.items() if k in _KEPT or not _SLURM_ENV.match(k))


class CommandError(Exception):
    """A command that could not be started (code ``cannot_run``), did not
    finish in time (``timeout``), or, for check(), exited non-zero (``failed``)."""

    def __init__(self, code, message, rc=None, stdout='', stderr=''):
        super(CommandError, self).__init__(message)
        self.code = code
        self.message = message
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr


def run(argv, timeout=None, what=None):
    """(rc, stdout, stderr) of ``argv``, killed after ``timeout`` seconds (None: no limit).

    ``what`` is how messages name the command (default: the arguments joined).
    Bytes that are not text in the locale's encoding come back replaced.
    """
    what = what or ' '.join(argv)
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                              check=False, universal_newlines=True, errors='replace', env=environment())
    except subprocess.TimeoutExpired:
        raise CommandError('timeout', '%s did not finish within %s s' % (what, timeout))
    except OSError as e:
        raise CommandError('cannot_run', 'cannot run %s: %s' % (argv[0], e))
    return proc.returncode, proc.stdout, proc.stderr


def check(argv, timeout=None, what=None):
    """stdout of ``argv``; a CommandError ``failed`` that names the exit status and
    says stderr (stdout when stderr is empty) when it exits non-zero."""
    what = what or ' '.join(argv)
    rc, out, err = run(argv, timeout, what)
    if rc != 0:
        raise CommandError('failed', '%s failed (rc %s): %s' % (what, rc, (err or out).strip()), rc, out, err)
    return out
