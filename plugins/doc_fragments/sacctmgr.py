# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # What every sacctmgr module takes.
    DOCUMENTATION = r'''
options:
  cluster:
    description:
      - The cluster whose associations are managed. Defaults to the one cluster
        registered with slurmdbd; required when there are several.
    type: str
  timeout:
    description: Seconds one sacctmgr invocation may take.
    type: int
    default: 60
requirements:
  - sacctmgr on the target (run it on the controller), as root or a Slurm administrator.
'''

    # What the sacctmgr modules that write take.
    WRITE = r'''
options:
  purge:
    description:
      - Remove the entities of the kinds given that are not listed. Never removes
        the C(root) account, the C(root) user or the C(normal) QoS.
    type: bool
    default: false
  preserve_case_user:
    description:
      - Whether slurmdbd keeps the case of user names (slurmdbd.conf C(Parameters=PreserveCaseUser)).
        Without it Slurm lower-cases user names, and so does the module before it compares, so that
        C(Kenji.Sato) is the Slurm user C(kenji.sato).
      - Omitted, the module reads C(Parameters) from O(slurmdbd_conf) as slurmdbd does, and
        takes false when that file cannot be read.
    type: bool
  slurmdbd_conf:
    description: slurmdbd.conf on the target, read for O(preserve_case_user) when that is omitted.
    type: path
    default: /etc/slurm/slurmdbd.conf
notes:
  - "Names are compared as Slurm stores them: QoS and account names in lower case, user names too
    (see O(preserve_case_user)). Two listed names that Slurm would store as one are refused, and so
    are names with blanks, C(,), C(=), quotes or brackets, which sacctmgr splits or rewrites."
  - Descriptions and organizations are compared as sacctmgr stores them, in lower case, with quotes
    turned into backticks.
  - An empty list clears (C(flags=-1), C(qos=), C(preempt=)).
  - With O(purge=true), an account that is an ancestor of a listed account is never removed
    (Slurm removes an account with its subtree). When Slurm refuses a removal (jobs still running
    in an association, a user's default account) the module fails with the associations Slurm
    named and C(applied) and C(not_applied) commands; the refused command changed nothing.
  - Reads with C(sacctmgr -nP show ... format=...) (associations with C(WOPLimits), so
    inherited limits are not taken for own ones), at most six invocations whatever the
    number of entities; writes with C(sacctmgr -i), only the fields that differ, entities
    that need the same change in one command. stdin is closed and each invocation has a
    timeout.
  - "Values are normalised before comparing: TRES order and memory units (C(mem=65536M) is
    C(mem=64G)), durations (C(2-00:00:00) is C(48:00:00)), lists as sets, C(-1) as no limit.
    A TRES dict or string given replaces the limit: TRES not in it are cleared."
  - Values may not contain C(|) or a newline (sacctmgr's parsable output cannot show them).
  - Supports check mode (reports the changes and writes nothing) and diff mode (before and
    after per entity).
attributes:
  check_mode:
    support: full
    description: Reports exactly what would change; writes nothing.
  diff_mode:
    support: full
    description: Before and after of each changed entity.
'''

    # Limits and settings of an association (an account or a user in a cluster).
    ASSOC = r'''
options:
  fairshare:
    description: Fair-share shares of the association (a number, or C(parent)).
    type: raw
  qos:
    description: QoS the association may use.
    type: list
    elements: str
  default_qos:
    description: QoS of jobs that name none.
    type: str
  grp_tres:
    description: TRES limit of all jobs of the association together, e.g. C(gres/gpu=8,cpu=256) or the same as a dict.
    type: raw
  grp_jobs:
    description: Running jobs of the association together (-1 for no limit).
    type: int
  grp_submit_jobs:
    description: Running and pending jobs of the association together.
    type: int
  max_tres_per_job:
    description: TRES limit of each job.
    type: raw
  max_jobs:
    description: Running jobs per user of the association.
    type: int
  max_submit_jobs:
    description: Running and pending jobs per user of the association.
    type: int
  max_wall:
    description: Wall-clock limit of each job (minutes, C(HH:MM:SS) or C(D-HH:MM:SS); -1 for none).
    type: raw
'''
