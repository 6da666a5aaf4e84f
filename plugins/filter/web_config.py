# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rules of gpuhpc.slurm.web_config's input, as one list of problems
(the preflight of every role that serves HTTP fails on it)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuhpc.slurm.plugins.plugin_utils.web_pki import (
    NO_BCRYPT, NO_CRYPTOGRAPHY, RENEW_BEFORE, check_user, have_bcrypt, have_cryptography)


def web_config_problems(settings):
    """Messages naming the variable and the fix; [] for good input (and when the switch is off).

    settings: the role's variables without the web_config_ prefix (enabled,
    username, password, pki_dir, ca_cert, ca_key, cert_days). The password
    is never part of a message."""
    s = settings
    if not s.get('enabled'):
        return []
    problems = check_user(s.get('username'), s.get('password'))
    if not str(s.get('pki_dir') or '').startswith('/'):
        problems.append("web_config_pki_dir '%s' is not an absolute path on the Ansible controller" % s.get('pki_dir'))
    cert, key = s.get('ca_cert') or '', s.get('ca_key') or ''
    if bool(cert) != bool(key):
        problems.append('web_config_ca_cert and web_config_ca_key go together: give both (the site CA) or neither '
                        '(a private CA made in web_config_pki_dir)')
    for name, path in (('web_config_ca_cert', cert), ('web_config_ca_key', key)):
        if path and not os.path.isfile(path):
            problems.append("%s '%s' is not a file on the Ansible controller" % (name, path))
    try:
        days = int(s.get('cert_days'))
    except (TypeError, ValueError):
        days = 0
    if days <= RENEW_BEFORE.days:
        problems.append("web_config_cert_days '%s' is not a number of days above %d: a certificate is made again %d "
                        'days before its end, so a shorter one would be made on every run'
                        % (s.get('cert_days'), RENEW_BEFORE.days, RENEW_BEFORE.days))
    if not have_bcrypt():
        problems.append(NO_BCRYPT)
    if not have_cryptography():
        problems.append(NO_CRYPTOGRAPHY)
    return problems


class FilterModule(object):
    def filters(self):
        return {'web_config_problems': web_config_problems}
