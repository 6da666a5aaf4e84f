# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's connection: community.docker.docker_api, with one retry added.

Under load, `docker exec` of a short command in a lab container now and then
answers with no output at all. community.docker's docker_api connection asks
`id -u && id -g` before every file transfer and reports the host UNREACHABLE
when that answer is empty, and Ansible retries no unreachable host. This
connection asks again (up to 10 times, a second apart) before giving up;
everything else is docker_api's own.
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

import time

from ansible.errors import AnsibleConnectionFailure
from ansible_collections.community.docker.plugins.connection.docker_api import Connection as DockerApiConnection

ATTEMPTS = 10


class Connection(DockerApiConnection):
    transport = 'lab_docker_api'

    def put_file(self, in_path, out_path):
        if self.actual_user not in self.ids:
            answer = b''
            for attempt in range(ATTEMPTS):
                dummy, answer, dummy = self.exec_command(b'id -u && id -g')
                lines = answer.split()
                if len(lines) == 2 and all(line.isdigit() for line in lines):
                    self.ids[self.actual_user] = int(lines[0]), int(lines[1])
                    break
                time.sleep(1)
            else:
                raise AnsibleConnectionFailure('no user and group ID from container "%s" after %d attempts: got %r'
                                               % (self.get_option('remote_addr'), ATTEMPTS, answer))
        return super(Connection, self).put_file(in_path, out_path)
