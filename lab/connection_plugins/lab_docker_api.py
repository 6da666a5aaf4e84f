# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's connection: community.docker.docker_api, asking again when
`docker exec` loses an answer.

While systemd in a lab container is busy (booting, after dbus was
installed), `docker exec` now and then answers with nothing, or with the
first line only (seen: `id -u && id -g` answering b'0\\n'). community.docker's
docker_api connection then reports the host UNREACHABLE, and Ansible retries
no unreachable host. This connection runs Ansible's own short commands
(`echo ~`, the temporary folder, the user and group ID) again, up to 10 times
a second apart, with a warning, until the answer is whole; modules and
everything else are docker_api's own.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: lab_docker_api
short_description: community.docker.docker_api for the gpuhpc.slurm lab, retrying an empty answer
description:
  - The connection of the lab's containers (inventory/lab). It is community.docker.docker_api, except that the
    user and group ID it needs before a file transfer are asked again when C(docker exec) answers with nothing.
author:
  - gpuhpc.slurm maintainers (@gpuhpc)
extends_documentation_fragment:
  - community.docker.docker.api_documentation
  - community.docker.docker.var_names
  - ansible.builtin.connection_pipelining
options:
  remote_user:
    type: str
    description:
      - The user to execute as inside the container.
    vars:
      - name: ansible_user
      - name: ansible_docker_user
    ini:
      - section: defaults
        key: remote_user
    env:
      - name: ANSIBLE_REMOTE_USER
    cli:
      - name: user
    keyword:
      - name: remote_user
  remote_addr:
    type: str
    description:
      - The name of the container you want to access.
    default: inventory_hostname
    vars:
      - name: inventory_hostname
      - name: ansible_host
      - name: ansible_docker_host
  container_timeout:
    default: 10
    description:
      - Controls how long we can wait to access reading output from the container once execution started.
    env:
      - name: ANSIBLE_TIMEOUT
      - name: ANSIBLE_DOCKER_TIMEOUT
        version_added: 2.2.0
    ini:
      - key: timeout
        section: defaults
      - key: timeout
        section: docker_connection
        version_added: 2.2.0
    vars:
      - name: ansible_docker_timeout
        version_added: 2.2.0
    cli:
      - name: timeout
    type: integer
  extra_env:
    description:
      - Provide extra environment variables to set when running commands in the Docker container.
      - This option can currently only be provided as Ansible variables due to limitations of ansible-core's configuration
        manager.
    vars:
      - name: ansible_docker_extra_env
    type: dict
    version_added: 3.12.0
  working_dir:
    description:
      - The directory inside the container to run commands in.
      - Requires Docker API version 1.35 or later.
    env:
      - name: ANSIBLE_DOCKER_WORKING_DIR
    ini:
      - key: working_dir
        section: docker_connection
    vars:
      - name: ansible_docker_working_dir
    type: string
    version_added: 3.12.0
  privileged:
    description:
      - Whether commands should be run with extended privileges.
      - B(Note) that this allows command to potentially break out of the container. Use with care!
    env:
      - name: ANSIBLE_DOCKER_PRIVILEGED
    ini:
      - key: privileged
        section: docker_connection
    vars:
      - name: ansible_docker_privileged
    type: boolean
    default: false
    version_added: 3.12.0
"""

import re
import time

from ansible.module_utils.common.text.converters import to_bytes
from ansible.utils.display import Display
from ansible_collections.community.docker.plugins.connection.docker_api import Connection as DockerApiConnection

display = Display()

ATTEMPTS = 10
# Ansible's own short commands, safe to run again, and what a whole answer to
# each looks like: `echo ~` and the temporary folder (`... && echo
# ansible-tmp-...=...`) end with a newline; the user and group ID before a
# file transfer are two numbers. Modules are never run twice.
ECHO = re.compile(rb"^/bin/sh -c '(echo |\( umask 77 && mkdir)")
IDS = b'id -u && id -g'


def whole(cmd, stdout):
    """False when the answer to one of Ansible's short commands came back
    empty or cut short (docker exec loses output now and then); True for
    every other command."""
    cmd = to_bytes(cmd)
    if cmd.strip() == IDS:
        return re.match(rb'^[0-9]+\n[0-9]+\n?$', stdout) is not None
    if ECHO.search(cmd):
        return stdout.endswith(b'\n')
    return True


def again(cmd):
    """The command to ask again. The lost answer may come from a run that did
    its work: the temporary folder was made, and a second plain mkdir of it
    would fail, so the second mkdir asks with -p (the folder's name is new
    for each task, so -p takes nothing that was there before)."""
    if isinstance(cmd, bytes):
        return cmd.replace(b'&& mkdir "', b'&& mkdir -p "', 1)
    return cmd.replace('&& mkdir "', '&& mkdir -p "', 1)


class Connection(DockerApiConnection):
    transport = 'lab_docker_api'

    def exec_command(self, cmd, in_data=None, sudoable=False):
        attempt = 1
        while True:
            rc, stdout, stderr = super(Connection, self).exec_command(cmd, in_data=in_data, sudoable=sudoable)
            if in_data is not None or stderr or attempt == ATTEMPTS or whole(cmd, stdout):
                return rc, stdout, stderr
            display.warning('%s: docker exec answered %r to %r (exit code %s, attempt %d of %d); asking again'
                            % (self.get_option('remote_addr'), stdout, to_bytes(cmd)[:40], rc, attempt, ATTEMPTS))
            time.sleep(1)
            cmd = again(cmd)
            attempt += 1
