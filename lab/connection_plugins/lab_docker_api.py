# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's connection: community.docker.docker_api, asking again when
`docker exec` answers with nothing.

Under load, `docker exec` in a lab container now and then answers a command
that always prints something (Ansible's temporary folder made with `echo`,
`id -u && id -g` before a file transfer, a module, which prints its result)
with no output at all. community.docker's docker_api connection then reports
the host UNREACHABLE or the module as failed, and Ansible retries neither.
This connection runs such a command again, up to 10 times a second apart,
with a warning each time; everything else is docker_api's own.
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
# Commands that always print something when they ran: Ansible's `echo ~` and
# temporary folder (`... && echo ansible-tmp-...=...`), the user and group ID
# before a file transfer, a module run by its interpreter. (Not, say, the
# `chmod` of a module file: it prints nothing.)
TALKERS = re.compile(rb"^/bin/sh -c '(echo |\( umask 77 && mkdir)|^id -u && id -g$|python[0-9.]* \S*/AnsiballZ_\w+\.py")


def expects_output(cmd, in_data):
    """Whether an empty answer to this command means the answer was lost."""
    return in_data is not None or TALKERS.search(to_bytes(cmd)) is not None


class Connection(DockerApiConnection):
    transport = 'lab_docker_api'

    def exec_command(self, cmd, in_data=None, sudoable=False):
        attempt = 1
        while True:
            rc, stdout, stderr = super(Connection, self).exec_command(cmd, in_data=in_data, sudoable=sudoable)
            if stdout or stderr or attempt == ATTEMPTS or not expects_output(cmd, in_data):
                return rc, stdout, stderr
            display.warning('%s: docker exec answered with nothing (exit code %s, attempt %d of %d); asking again'
                            % (self.get_option('remote_addr'), rc, attempt, ATTEMPTS))
            time.sleep(1)
            attempt += 1
