# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running a Slurm client command, the one way the collection does it.

An argument list (no shell), stdin closed (a command that asks never waits),
stdout and stderr captured as text, and a timeout after which the command is
killed. run() hands back the exit status for the caller to judge (sacctmgr
exits 1 for "nothing to do"); check() takes any status but 0 as a failure.
Plain Python, no AnsibleModule: the benchmarks and the fixture captures run
the same code on a lab host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import subprocess


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
                              check=False, universal_newlines=True, errors='replace')
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
