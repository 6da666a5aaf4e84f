# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action: one endpoint's TLS and basic auth (the web config), made on the controller, put on the host."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import posixpath

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.gpuhpc.slurm.plugins.module_utils.file_states import all_in_place
from ansible_collections.gpuhpc.slurm.plugins.plugin_utils import web_pki


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(('folder', 'group', 'state', 'username', 'password', 'pki_dir', 'ca_cert', 'ca_key',
                             'names', 'days', 'rounds', 'client'))

    def _update_module_args(self, module_name, module_args, task_vars, *args, **kwargs):
        # The files hold a private key and a password hash: the module must
        # not log its arguments on the host, and no diff shows them.
        super(ActionModule, self)._update_module_args(module_name, module_args, task_vars, *args, **kwargs)
        module_args['_ansible_no_log'] = True
        module_args['_ansible_diff'] = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        args = self._task.args
        state = args.get('state', 'present')
        if state not in ('present', 'absent', 'ca'):
            raise AnsibleActionFail("web_config: state is '%s', not present, absent or ca" % state)
        if state == 'ca':
            # a client on the controller's side only (Grafana's data source): the CA certificate, nothing written
            try:
                pki = web_pki.ca_only(args.get('pki_dir', ''), ca_cert_path=args.get('ca_cert', ''),
                                      ca_key_path=args.get('ca_key', ''), dry_run=bool(self._task.check_mode),
                                      days=int(args.get('days', 825)))
            except web_pki.PkiError as e:
                raise AnsibleActionFail(str(e))
            result.update(changed=False, ca=pki['ca'], made=pki['made'], path='', ca_file='', password_file='')
            return result
        folder = args.get('folder')
        if not isinstance(folder, str) or not posixpath.isabs(folder) or posixpath.normpath(folder) == '/':
            raise AnsibleActionFail("web_config: folder '%s' is not an absolute path of a folder of its own" % folder)
        paths = {name: posixpath.join(folder, name)
                 for name in ('ca.pem', 'cert.pem', 'key.pem', 'web-config.yml', 'client-password')}
        files, made = [{'path': folder, 'state': 'absent'}], []
        if state == 'present':
            files, made = self._files(args, task_vars, folder, paths)
        # No round trip where the run's file record shows the files in place
        # (plugin_utils/in_place.py); the record holds their hashes, never them.
        states = None if self._task.delegate_to else (task_vars.get('ansible_facts') or {}).get('file_states')
        if all_in_place(files, states):
            out = {'changed': False}
        else:
            out = self._execute_module('gpuhpc.slurm.config_files', module_args={'files': files}, task_vars=task_vars)
        out.pop('invocation', None)
        out.pop('diff', None)
        if out.get('failed'):
            result.update(failed=True, msg='web_config: writing %s failed: %s' % (folder, out.get('msg', '')))
            return result
        present = state == 'present'
        result.update(changed=bool(out.get('changed')), path=paths['web-config.yml'] if present else '',
                      ca_file=paths['ca.pem'] if present else '', made=made,
                      password_file=paths['client-password'] if present and args.get('client') else '')
        return result

    def _files(self, args, task_vars, folder, paths):
        group = args.get('group')
        if not isinstance(group, str) or not group:
            raise AnsibleActionFail('web_config: group (the group the service reads its key as) is required')
        username, password = args.get('username', 'prometheus'), args.get('password', '')
        problems = web_pki.check_user(username, password)
        if problems:
            raise AnsibleActionFail('; '.join(problems))
        names = args.get('names') or []
        if isinstance(names, str):
            names = [names]
        host = task_vars.get('inventory_hostname')
        try:
            pki = web_pki.ensure(args.get('pki_dir', ''), host, list(names) + [host], days=int(args.get('days', 825)),
                                 ca_cert_path=args.get('ca_cert', ''), ca_key_path=args.get('ca_key', ''),
                                 dry_run=bool(self._task.check_mode))
            digest = web_pki.bcrypt_hash(password, web_pki.bcrypt_salt(host, username),
                                         rounds=int(args.get('rounds', 10)))
        except web_pki.PkiError as e:
            raise AnsibleActionFail(str(e))
        doc = web_pki.document(paths['cert.pem'], paths['key.pem'], username, digest)
        return [
            {'path': folder, 'state': 'directory', 'owner': 'root', 'group': 'root', 'mode': '0755'},
            {'path': paths['ca.pem'], 'content': pki['ca'], 'owner': 'root', 'group': 'root', 'mode': '0644'},
            {'path': paths['cert.pem'], 'content': pki['cert'], 'owner': 'root', 'group': 'root', 'mode': '0644'},
            {'path': paths['key.pem'], 'content': pki['key'], 'owner': 'root', 'group': group, 'mode': '0640'},
            {'path': paths['web-config.yml'], 'content': doc, 'owner': 'root', 'group': group, 'mode': '0640'},
            # a client of the other endpoints (Prometheus) reads the password from here
            {'path': paths['client-password'], 'owner': 'root', 'group': group, 'mode': '0640',
             'content': password} if args.get('client') else {'path': paths['client-password'], 'state': 'absent'},
        ], pki['made']
